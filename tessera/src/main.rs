//! `tessera`: cluster management and the compute node process.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

mod cluster;

use clap::{Parser, Subcommand};
use common::config::{ComputeConfig, DefaultDistribution};

/// mimalloc instead of glibc malloc: a compute node allocates per statement
/// on many threads, and glibc kept the peak of a bulk load (2.3 GB per node
/// after 15 s of sysbench bulk_insert at 64 threads) as resident memory
/// long after it was freed.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "tessera",
    version,
    about = "Tessera: a sharded SQL database speaking PostgreSQL"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Manage a local cluster (meta + shards + compute nodes on loopback).
    Cluster {
        #[command(subcommand)]
        cmd: ClusterCmd,
    },
    /// Run one compute node.
    Compute {
        #[arg(long, env = "TESSERA_CONFIG")]
        config: PathBuf,
    },
}

/// How partition moves run.
#[derive(clap::Args)]
struct MoveOpts {
    /// Share of the time the copy may take (0 < duty <= 1); the rest is
    /// left to the cluster's clients.
    #[arg(long, default_value_t = 0.5)]
    duty: f64,
    /// The latency guard: the copy slows while the source's or target's
    /// response to a probe takes more than this many times what it took
    /// before the copy (plus 1 ms); 0 turns the guard off.
    #[arg(long, default_value_t = 1.5, env = "TESSERA_MOVE_MAX_SLOWDOWN")]
    max_slowdown: f64,
    /// Seconds the source's retired copy is kept after a move (until then
    /// it can be inspected; it is dropped after).
    #[arg(long, default_value_t = 0)]
    keep_source_secs: u64,
}

impl MoveOpts {
    fn args(&self) -> cluster::MoveArgs {
        cluster::MoveArgs {
            duty: self.duty.clamp(0.01, 1.0),
            max_slowdown: self.max_slowdown.max(0.0),
            keep_source_secs: self.keep_source_secs,
        }
    }
}

#[derive(Subcommand)]
enum ClusterCmd {
    /// Initialise (first time) and start the cluster.
    Up {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        #[arg(long, default_value_t = 3)]
        shards: u32,
        #[arg(long, default_value_t = 3)]
        compute: u32,
        #[arg(long, default_value_t = 15432)]
        base_port: u16,
        /// Placement of tables without a distribution clause: hash (on the
        /// primary key's leading column), hash-primary-key (on the whole
        /// primary key) or single.
        #[arg(long, default_value = "hash")]
        default_distribution: String,
        /// Also run haproxy (TCP, round robin, health checks) in front of the
        /// compute nodes, on base port + 20.
        #[arg(long)]
        haproxy: bool,
        /// durable (default: commits flushed and fsynced) or relaxed (the
        /// benchmark reports' settings; kept for later starts).
        #[arg(long)]
        durability: Option<cluster::Durability>,
        /// Partitions of a hash table created without a `partitions`
        /// option (0, the default: four per shard at creation, so a table
        /// can later spread over four times as many shards).
        #[arg(long, default_value_t = 0)]
        default_partitions: u32,
        /// Shards write no binary log (only to measure its cost: partition
        /// moves need it, and rebalance, move and remove-shard refuse).
        #[arg(long)]
        no_shard_binlog: bool,
        /// Replicas of every shard (semi-synchronous GTID replication; a
        /// compute node promotes one when its primary stops answering).
        /// Fixed when the cluster is made; 2 for production.
        #[arg(long)]
        replicas: Option<u32>,
    },
    /// Show every node, its role, pid, address and login.
    Status {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Stop every process the cluster started.
    Down {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
    },
    /// Start one more MariaDB shard and make it known to every compute
    /// node (it holds nothing until `rebalance`). With `--port`, take an
    /// existing MariaDB server instead (checked, given the cluster's
    /// account with the login `--admin-user` and TESSERA_ADMIN_PASSWORD).
    AddShard {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        /// An existing server's host.
        #[arg(long, default_value = "127.0.0.1", requires = "port")]
        host: String,
        /// An existing server's port.
        #[arg(long)]
        port: Option<u16>,
        /// A login on the existing server that may create accounts and
        /// grant privileges (its password: TESSERA_ADMIN_PASSWORD).
        #[arg(long, default_value = "root")]
        admin_user: String,
    },
    /// Move partitions online until every shard holds an even share
    /// (mirror tables copied to every shard first); each move verified.
    Rebalance {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        #[command(flatten)]
        opts: MoveOpts,
    },
    /// Drain a shard (its partitions moved to the others) and retire it.
    RemoveShard {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        /// The shard's number (shardN).
        shard: u32,
        #[command(flatten)]
        opts: MoveOpts,
    },
    /// Move one partition (with the partitions co-located with it) online.
    Move {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        /// The table ([schema.]name).
        #[arg(long)]
        table: String,
        /// The partition number (0-based).
        #[arg(long)]
        partition: u32,
        /// The shard to move it to (its number).
        #[arg(long)]
        to: u32,
        #[command(flatten)]
        opts: MoveOpts,
    },
    /// Undo a switched move whose retired copy is still kept (a move left
    /// `unverified`, or within `--keep-source-secs`): the partition goes
    /// back to its source with every change made since the switch.
    UndoMove {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        /// The move's id (`tessera cluster moves`).
        id: u64,
        #[command(flatten)]
        opts: MoveOpts,
    },
    /// Every partition move: phase, rows copied, keys caught up, fence.
    Moves {
        #[arg(long, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
        data_dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

fn main() {
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Cluster { cmd } => match cmd {
            ClusterCmd::Up {
                data_dir,
                shards,
                compute,
                base_port,
                default_distribution,
                haproxy,
                durability,
                default_partitions,
                no_shard_binlog,
                replicas,
            } => {
                let dd = match default_distribution.as_str() {
                    "hash" => DefaultDistribution::Hash,
                    "hash-primary-key" => DefaultDistribution::HashPrimaryKey,
                    "single" => DefaultDistribution::Single,
                    other => {
                        eprintln!(
                            "error: --default-distribution must be hash, hash-primary-key or single, not {other}"
                        );
                        std::process::exit(2);
                    }
                };
                if shards == 0 || compute == 0 {
                    eprintln!("error: --shards and --compute must be at least 1");
                    std::process::exit(2);
                }
                cluster::up(cluster::UpArgs {
                    data_dir,
                    shards,
                    compute,
                    base_port,
                    default_distribution: dd,
                    haproxy,
                    durability,
                    default_partitions,
                    shard_binlog: !no_shard_binlog,
                    replicas,
                })
            }
            ClusterCmd::Status { data_dir, json } => {
                cluster::status(&data_dir, json).and_then(|_| {
                    if json {
                        Ok(())
                    } else {
                        cluster::print_open_moves(&data_dir)
                    }
                })
            }
            ClusterCmd::Down { data_dir } => cluster::down(&data_dir),
            ClusterCmd::AddShard {
                data_dir,
                host,
                port,
                admin_user,
            } => cluster::add_shard(
                &data_dir,
                port.map(|port| cluster::ExistingServer {
                    host,
                    port,
                    admin_user,
                    admin_password: std::env::var("TESSERA_ADMIN_PASSWORD").unwrap_or_default(),
                }),
            ),
            ClusterCmd::Rebalance { data_dir, opts } => {
                cluster::rebalance_cluster(&data_dir, &opts.args(), None)
            }
            ClusterCmd::RemoveShard {
                data_dir,
                shard,
                opts,
            } => cluster::remove_shard(&data_dir, shard, &opts.args()),
            ClusterCmd::Move {
                data_dir,
                table,
                partition,
                to,
                opts,
            } => cluster::move_one(&data_dir, &table, partition, to, &opts.args()),
            ClusterCmd::UndoMove { data_dir, id, opts } => {
                cluster::undo_move(&data_dir, id, &opts.args())
            }
            ClusterCmd::Moves { data_dir, json } => cluster::moves(&data_dir, json),
        },
        Cmd::Compute { config } => run_compute(config),
    };
    if let Err(e) = res {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run_compute(path: PathBuf) -> Result<(), String> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TESSERA_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .init();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cfg = ComputeConfig::from_toml(&text).map_err(|e| e.to_string())?;
    compute::QUERY_MEMORY_MB.store(cfg.query_memory_mb, Ordering::Relaxed);
    compute::MAX_CONNECTIONS.store(cfg.max_connections.max(1), Ordering::Relaxed);
    shard_router::txn::ORPHAN_TIMEOUT_MS
        .store(cfg.xa_orphan_timeout_secs.max(1) * 1000, Ordering::Relaxed);
    compute::DEFAULT_STATEMENT_TIMEOUT_MS.store(cfg.statement_timeout_ms, Ordering::Relaxed);
    compute::DEFAULT_IDLE_TXN_TIMEOUT_MS.store(
        cfg.idle_in_transaction_session_timeout_ms,
        Ordering::Relaxed,
    );
    compute::set_default_distribution(cfg.default_distribution);
    compute::set_default_partitions(cfg.default_partitions);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if cfg.worker_threads > 0 {
        builder.worker_threads(cfg.worker_threads);
    }
    let rt = builder
        .enable_all()
        // Planning walks statements recursively, up to
        // `limits::MAX_EXPR_DEPTH` levels deep; the default 2 MiB did not
        // hold 500 levels in a debug build. Reserved, not committed: pages
        // are only used as deep as a statement goes.
        .thread_stack_size(compute::limits::WORKER_STACK_BYTES)
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let mut servers = vec![cfg.meta.clone()];
        for r in &cfg.meta_replicas {
            let (host, port) = r
                .rsplit_once(':')
                .and_then(|(h, p)| Some((h.to_string(), p.parse().ok()?)))
                .ok_or_else(|| format!("meta_replicas: {r} is not host:port"))?;
            servers.push(common::config::MysqlEndpoint {
                host,
                port,
                ..cfg.meta.clone()
            });
        }
        let store = meta::MetaStore::connect_servers(servers, &cfg.meta_database)
            .map_err(|e| e.to_string())?;
        // Meta's primary may have moved since this node's config was written.
        let _ = store.follow_primary(true).await;
        let router = shard_router::Router::new(
            store,
            cfg.node_id,
            cfg.shard_pool_max,
            cfg.sequence_cache,
            cfg.shard_password.clone(),
        )
        .await
        .map_err(|e| e.to_string())?;
        let port = cfg
            .listen
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        router
            .meta
            .register_node(cfg.node_id, "127.0.0.1", port, std::process::id())
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(router.clone().poll_catalog());
        tokio::spawn(shard_router::txn::recovery_loop(
            router.clone(),
            std::time::Duration::from_millis(cfg.recovery_interval_ms.max(100)),
            std::time::Duration::from_secs(cfg.xa_orphan_timeout_secs),
        ));
        tokio::spawn(shard_router::failover::watch(
            router.clone(),
            cfg.shard_admin_password.clone(),
        ));
        let hb = router.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                let _ = hb.meta.heartbeat(hb.node_id).await;
            }
        });
        let unix_dir = (!cfg.unix_socket_directory.is_empty())
            .then(|| std::path::Path::new(&cfg.unix_socket_directory));
        compute::wire::serve(router, &cfg.listen, unix_dir)
            .await
            .map_err(|e| e.to_string())
    })
}
