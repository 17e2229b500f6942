//! `tessera cluster up|down|status`: the embedded deployment. One data folder
//! holds a meta MariaDB, N shard MariaDBs and M compute nodes, each with its
//! own data, config, log and pid files; `cluster.toml` at the top records the
//! layout and the credentials.

mod binlog;
mod existing;
pub use existing::ExistingServer;
mod grow;
mod mariadb;
mod process;
mod rebuild;
mod replicas;
mod rewind;

pub use grow::{
    add_shard, move_one, moves, print_open_moves, rebalance_cluster, remove_shard, undo_move,
    MoveArgs,
};
mod services;

use std::path::{Path, PathBuf};

use common::config::{DefaultDistribution, MysqlEndpoint};
use common::ShardId;
use meta::MetaStore;
use serde::{Deserialize, Serialize};

type AnyResult<T> = std::result::Result<T, String>;

use mariadb::{mysql_connections, start_mariadb_with};
use process::*;
use services::{start_compute, start_haproxy};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterFile {
    pub cluster_id: String,
    pub base_port: u16,
    pub shards: u32,
    pub compute: u32,
    pub mysql_user: String,
    /// The cluster account's password on meta.
    pub mysql_password: String,
    /// The cluster account's password on the shards (its own secret: a
    /// meta login does not open the shards). Empty in clusters made before
    /// it existed, whose shards use `mysql_password`.
    #[serde(default)]
    pub shard_password: String,
    pub pg_user: String,
    pub pg_password: String,
    #[serde(default)]
    pub default_distribution: DefaultDistribution,
    /// Whether a haproxy (round robin over the compute nodes) runs too.
    #[serde(default)]
    pub haproxy: bool,
    /// `durable` (the default: every commit flushed and fsynced on meta and
    /// shards) or `relaxed` (the benchmark reports' settings, on every side
    /// of a comparison alike).
    #[serde(default)]
    pub durability: Durability,
    /// Shards drained and retired by `remove-shard` (their numbers are
    /// never reused).
    #[serde(default)]
    pub removed_shards: Vec<u32>,
    /// Partitions of a hash table created without a `partitions` option
    /// (0: four per shard at creation).
    #[serde(default)]
    pub default_partitions: u32,
    /// Whether shards write a row-based binary log (the default; partition
    /// moves catch up from it). Off only to measure what it costs:
    /// `rebalance`, `move` and `remove-shard` then refuse.
    #[serde(default = "yes")]
    pub shard_binlog: bool,
    /// Replicas of every shard (0: none). Each follows its primary over
    /// GTID replication, semi-synchronously (a commit is acknowledged only
    /// once a replica has it), and the compute nodes promote one when the
    /// primary stops answering (`shard_router::failover`).
    #[serde(default)]
    pub replicas: u32,
    /// The password of the shards' administrative account
    /// (`tessera_admin`: replication control and read-only switches for
    /// failover, no data privileges). Empty in clusters made before it.
    #[serde(default)]
    pub admin_password: String,
    /// Shards on servers the cluster did not start (`add-shard --host`):
    /// never started, stopped or rebuilt by it.
    #[serde(default)]
    pub external_shards: Vec<existing::ExternalShard>,
}

fn yes() -> bool {
    true
}

/// How MariaDB nodes flush at commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// `innodb_flush_log_at_trx_commit=1`, `sync_binlog=1`: an acknowledged
    /// commit (and a prepared XA branch) survives an OS crash.
    #[default]
    Durable,
    /// `innodb_flush_log_at_trx_commit=2`, `sync_binlog=0`: survives a
    /// process crash, not an OS crash. Meta stays durable: it holds the
    /// commit decisions.
    Relaxed,
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "durable" => Ok(Durability::Durable),
            "relaxed" => Ok(Durability::Relaxed),
            other => Err(format!(
                "--durability must be durable or relaxed, not {other}"
            )),
        }
    }
}

/// Writes a file only its owner can read (it holds passwords).
pub(super) fn write_private(path: &Path, text: &str) -> AnyResult<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // An existing file keeps its mode on open: set it.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    f.write_all(text.as_bytes()).map_err(|e| e.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Meta,
    Shard,
    /// A replica of a shard (`Node::shard` says which).
    Replica,
    Compute,
    Haproxy,
}

impl Role {
    fn name(&self) -> &'static str {
        match self {
            Role::Meta => "meta",
            Role::Shard => "shard",
            Role::Replica => "replica",
            Role::Compute => "compute",
            Role::Haproxy => "haproxy",
        }
    }
}

pub struct Node {
    pub role: Role,
    /// The shard a shard server or replica serves (0 for other roles).
    pub shard: u32,
    pub name: String,
    pub port: u16,
    pub dir: PathBuf,
}

impl Node {
    /// What the server is configured as: a replica as the server it
    /// replicates (meta's or a shard's).
    pub fn kind(&self) -> Role {
        match self.role {
            Role::Replica if self.shard == 0 => Role::Meta,
            Role::Replica => Role::Shard,
            r => r,
        }
    }
}

impl ClusterFile {
    pub fn meta_port(&self) -> u16 {
        self.base_port + 10
    }
    /// Shards 1 to 9 next to meta; shards added later (`add-shard`) from
    /// base + 30 on (base + 20 is haproxy's).
    pub fn shard_port(&self, i: u32) -> u16 {
        if i <= 9 {
            self.base_port + 10 + i as u16
        } else {
            self.base_port + 20 + i as u16
        }
    }
    /// Replica `r` (from 1) of shard `i` (of meta for `i` = 0):
    /// base + 100 + 10 i + r.
    pub fn replica_port(&self, i: u32, r: u32) -> u16 {
        self.base_port + 100 + (10 * i + r) as u16
    }
    pub fn compute_port(&self, i: u32) -> u16 {
        self.base_port + i as u16 - 1
    }
    pub fn haproxy_port(&self) -> u16 {
        self.base_port + 20
    }

    pub fn nodes(&self, dir: &Path) -> Vec<Node> {
        let mut v = vec![Node {
            role: Role::Meta,
            shard: 0,
            name: "meta".into(),
            port: self.meta_port(),
            dir: dir.join("meta"),
        }];
        v.extend(self.replica_nodes(dir, 0));
        for i in (1..=self.shards).filter(|i| self.local_shard(*i)) {
            v.push(Node {
                role: Role::Shard,
                shard: i,
                name: format!("shard{i}"),
                port: self.shard_port(i),
                dir: dir.join(format!("shard{i}")),
            });
            v.extend(self.replica_nodes(dir, i));
        }
        for i in 1..=self.compute {
            v.push(Node {
                role: Role::Compute,
                shard: 0,
                name: format!("compute{i}"),
                port: self.compute_port(i),
                dir: dir.join(format!("compute{i}")),
            });
        }
        if self.haproxy {
            v.push(Node {
                role: Role::Haproxy,
                shard: 0,
                name: "haproxy".into(),
                port: self.haproxy_port(),
                dir: dir.join("haproxy"),
            });
        }
        v
    }

    /// The replicas of shard `i` (of meta for 0).
    pub fn replica_nodes(&self, dir: &Path, i: u32) -> Vec<Node> {
        (1..=self.replicas)
            .map(|r| {
                let name = if i == 0 {
                    format!("metar{r}")
                } else {
                    format!("shard{i}r{r}")
                };
                Node {
                    role: Role::Replica,
                    shard: i,
                    port: self.replica_port(i, r),
                    dir: dir.join(&name),
                    name,
                }
            })
            .collect()
    }

    /// The cluster account's password on a node of this role.
    /// Shard `i` is one this cluster started and still has.
    pub fn local_shard(&self, i: u32) -> bool {
        !self.removed_shards.contains(&i) && !self.external_shards.iter().any(|x| x.number == i)
    }

    pub fn password_of(&self, role: Role) -> &str {
        match role {
            Role::Shard if !self.shard_password.is_empty() => &self.shard_password,
            _ => &self.mysql_password,
        }
    }

    /// How the cluster account reaches a MariaDB node of this role.
    pub fn endpoint(&self, role: Role, port: u16) -> MysqlEndpoint {
        MysqlEndpoint {
            host: "127.0.0.1".into(),
            port,
            user: self.mysql_user.clone(),
            password: self.password_of(role).to_string(),
        }
    }

    /// Every meta server: the first one made, then its replicas.
    pub fn meta_servers(&self) -> Vec<MysqlEndpoint> {
        std::iter::once(self.meta_port())
            .chain((1..=self.replicas).map(|r| self.replica_port(0, r)))
            .map(|p| self.endpoint(Role::Meta, p))
            .collect()
    }

    /// A store on meta's primary (when meta is replicated, the server
    /// its servers name).
    pub async fn meta_store(&self) -> AnyResult<MetaStore> {
        let store = MetaStore::connect_servers(self.meta_servers(), "tessera_meta")
            .map_err(|e| e.to_string())?;
        if let Err(e) = store.follow_primary(false).await {
            tracing::debug!("asking meta's servers: {e}");
        }
        Ok(store)
    }

    pub fn psql_url(&self, port: u16) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{port}/tessera",
            self.pg_user, self.pg_password
        )
    }
}

pub struct UpArgs {
    pub data_dir: PathBuf,
    pub shards: u32,
    pub compute: u32,
    pub base_port: u16,
    pub default_distribution: DefaultDistribution,
    pub haproxy: bool,
    /// `None`: keep the cluster's setting (durable for a new cluster).
    pub durability: Option<Durability>,
    pub default_partitions: u32,
    pub shard_binlog: bool,
    /// `None`: keep the cluster's setting (0 for a new cluster).
    pub replicas: Option<u32>,
}

/// Starts the MariaDB servers that are not running. An old primary whose
/// crash recovery MariaDB refuses is left down, the others must start.
fn start_servers(cf: &ClusterFile, nodes: &[Node], running: &[bool]) -> AnyResult<()> {
    for (n, r) in nodes.iter().zip(running) {
        if *r || n.role == Role::Compute || n.role == Role::Haproxy {
            continue;
        }
        println!("starting {} on port {}", n.name, n.port);
        // A shard without replicas that crashed starts read-only until its
        // XA branches are reconciled: 2PC recovery must not finish a branch
        // meanwhile (nor conclude one is gone).
        let crashed = cf.replicas == 0 && n.kind() == Role::Shard && rewind::crashed_last_run(n);
        let extra: &[&str] = if crashed { &["--read-only=ON"] } else { &[] };
        match start_mariadb_with(cf, n, extra) {
            Ok(()) if crashed => rewind::reconcile_after_crash(n)?,
            Ok(()) => {}
            Err(e) if cf.replicas == 0 || !replicas::recovery_refused(n) => return Err(e),
            // An old primary whose unacknowledged tail MariaDB cannot
            // remove: the cluster has its successor and goes on without it.
            Err(e) => println!(
                "{} did not start: its crash recovery cannot remove the binary log's unacknowledged tail (an XA COMMIT or ROLLBACK follows it); it is rebuilt from its primary unless TESSERA_REJOIN_OLD_PRIMARIES=0 ({e})",
                n.name
            ),
        }
    }
    Ok(())
}

pub fn up(args: UpArgs) -> AnyResult<()> {
    let dir = &args.data_dir;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let cf = match load(&dir)? {
        Some(cf) => cf,
        None => {
            let cf = ClusterFile {
                cluster_id: random_token(12),
                base_port: args.base_port,
                shards: args.shards,
                compute: args.compute,
                mysql_user: "tessera".into(),
                mysql_password: random_token(16),
                shard_password: random_token(16),
                pg_user: "tessera".into(),
                pg_password: random_token(12),
                default_distribution: args.default_distribution,
                haproxy: args.haproxy,
                durability: args.durability.unwrap_or_default(),
                removed_shards: vec![],
                default_partitions: args.default_partitions,
                shard_binlog: args.shard_binlog,
                replicas: args.replicas.unwrap_or(0),
                admin_password: random_token(16),
                external_shards: vec![],
            };
            if cf.replicas > 0 && !cf.shard_binlog {
                return Err("replicas follow the shards' binary log: --replicas needs it".into());
            }
            write_private(
                &dir.join("cluster.toml"),
                &toml::to_string_pretty(&cf).map_err(|e| e.to_string())?,
            )?;
            cf
        }
    };
    let mut cf = cf;
    if args.replicas.is_some_and(|r| r != cf.replicas) {
        return Err(format!(
            "this cluster has {} replicas per shard; changing it after the cluster was made is not supported yet",
            cf.replicas
        ));
    }
    let durability = args.durability.unwrap_or(cf.durability);
    if (args.haproxy && !cf.haproxy) || durability != cf.durability {
        cf.haproxy |= args.haproxy;
        cf.durability = durability;
    }
    // Rewritten every time: also tightens the mode of older files.
    write_private(
        &dir.join("cluster.toml"),
        &toml::to_string_pretty(&cf).map_err(|e| e.to_string())?,
    )?;
    let nodes = cf.nodes(&dir);
    let running: Vec<bool> = nodes.iter().map(|n| node_pid(n).is_some()).collect();
    if running.iter().all(|r| *r) {
        if cf.replicas > 0 {
            // Every server set to its role again: an old primary a
            // failover left failed rejoins as a replica (issue 34).
            replicas::reconfigure(&cf, &nodes)?;
        }
        println!(
            "The cluster in {} is already running; nothing started.",
            dir.display()
        );
        print_connect(&cf);
        return Ok(());
    }
    for (n, r) in nodes.iter().zip(&running) {
        if !*r && port_answers(n.port) {
            return Err(format!(
                "port {} (for {}) is already in use by another program; stop it or choose another --base-port",
                n.port, n.name
            ));
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    start_servers(&cf, &nodes, &running)?;
    // Meta schema, shard map and the SQL user (idempotent).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let meta_primary = if cf.replicas > 0 {
        rt.block_on(replicas::configure_meta(&cf, &nodes))?
    } else {
        cf.endpoint(Role::Meta, cf.meta_port())
    };
    rt.block_on(async {
        let shards = existing::shard_infos(&cf);
        MetaStore::bootstrap(&meta_primary, "tessera_meta", &cf.cluster_id, &shards)
            .await
            .map_err(|e| e.to_string())?;
        let store = MetaStore::connect(&meta_primary, "tessera_meta").map_err(|e| e.to_string())?;
        if store
            .user_credentials(&cf.pg_user)
            .await
            .map_err(|e| e.to_string())?
            .is_none()
        {
            compute::scram::create_user(&store, &cf.pg_user, &cf.pg_password)
                .await
                .map_err(|e| e.to_string())?;
        }
        store.disconnect().await;
        Ok::<_, String>(())
    })?;
    if cf.replicas > 0 {
        rt.block_on(replicas::configure(&cf, &nodes))?;
    }
    for (n, r) in nodes.iter().zip(&running) {
        if *r || n.role != Role::Compute {
            continue;
        }
        // computeN is node N (shards added or removed shift nothing).
        let index: u32 = n.name.trim_start_matches("compute").parse().unwrap_or(1);
        println!("starting {} on port {}", n.name, n.port);
        start_compute(&cf, n, index, &exe)?;
    }
    for (n, r) in nodes.iter().zip(&running) {
        if !*r && n.role == Role::Haproxy {
            println!("starting haproxy on port {}", n.port);
            start_haproxy(n, &nodes)?;
        }
    }
    println!(
        "Tessera cluster is up ({} shards, {} compute nodes) in {}",
        cf.shards,
        cf.compute,
        dir.display()
    );
    print_connect(&cf);
    Ok(())
}

fn print_connect(cf: &ClusterFile) {
    println!("Connect with:");
    if cf.haproxy {
        println!("  psql \"{}\"    (haproxy)", cf.psql_url(cf.haproxy_port()));
    }
    for i in 1..=cf.compute {
        println!("  psql \"{}\"", cf.psql_url(cf.compute_port(i)));
    }
}
pub fn status(dir: &Path, json: bool) -> AnyResult<()> {
    let cf = existing(dir)?;
    let states = if cf.replicas > 0 {
        replicas::server_states(&cf)
    } else {
        Default::default()
    };
    let mut out = vec![];
    for n in cf.nodes(dir) {
        let pid = node_pid(&n);
        let answers = pid.is_some() && port_answers(n.port);
        let mut obj = serde_json::json!({
            "name": n.name,
            "role": n.role.name(),
            "host": "127.0.0.1",
            "port": n.port,
            "pid": pid,
            "running": pid.is_some(),
            "answers": answers,
        });
        if let Some(state) = states.get(&n.port) {
            // What the server is now: its shard's primary, a replica, or
            // an old primary that was failed over.
            obj["state"] = (*state).into();
        }
        if n.role == Role::Compute || n.role == Role::Haproxy {
            obj["user"] = cf.pg_user.clone().into();
            obj["password"] = cf.pg_password.clone().into();
        } else {
            obj["user"] = cf.mysql_user.clone().into();
            obj["password"] = cf.password_of(n.kind()).into();
            // Pool use as the shard sees it: connections open to it (from
            // every compute node) and how many are running a statement.
            if answers {
                if let Some((open, busy)) = mysql_connections(&cf.endpoint(n.kind(), n.port)) {
                    obj["connections"] = open.into();
                    obj["running_statements"] = busy.into();
                }
            }
        }
        out.push(obj);
    }
    out.extend(existing::status_rows(&cf));
    if json {
        println!("{}", serde_json::Value::Array(out));
    } else {
        println!(
            "{:<10} {:<8} {:>8} {:<16} {:<8} {:<8} {:<12} login",
            "node", "role", "pid", "address", "running", "answers", "conns/busy"
        );
        for o in &out {
            let conns = match (o["connections"].as_u64(), o["running_statements"].as_u64()) {
                (Some(c), Some(b)) => format!("{c}/{b}"),
                _ => "-".to_string(),
            };
            println!(
                "{:<10} {:<8} {:>8} {:<16} {:<8} {:<8} {:<12} {}/{}",
                o["name"].as_str().unwrap_or(""),
                o["state"].as_str().or(o["role"].as_str()).unwrap_or(""),
                o["pid"]
                    .as_i64()
                    .map(|p| p.to_string())
                    .unwrap_or("-".into()),
                format!("127.0.0.1:{}", o["port"]),
                o["running"],
                o["answers"],
                conns,
                o["user"].as_str().unwrap_or(""),
                o["password"].as_str().unwrap_or(""),
            );
        }
    }
    Ok(())
}

pub fn down(dir: &Path) -> AnyResult<()> {
    let cf = existing(dir)?;
    let mut nodes = cf.nodes(dir);
    // Compute nodes first, then shards, meta last.
    nodes.reverse();
    for n in &nodes {
        stop_node(n);
    }
    println!("cluster in {} stopped", dir.display());
    Ok(())
}
