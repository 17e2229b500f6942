//! Growing and shrinking a running local cluster: `tessera cluster
//! add-shard`, `remove-shard`, `rebalance`, `move` and `moves`. The moves
//! themselves are `shard_router::placement::mover`'s; this process runs them
//! with a router of its own (node id 0), as a compute node would.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::ShardId;
use meta::{MoveRecord, ShardInfo};
use shard_router::placement::mover::{
    self, plan::PlannedMove, rebalance::rebalance, recover::recover_moves, undo, MoveOptions,
    MoveRequest, MoveStatus,
};
use shard_router::Router;

use super::mariadb::start_mariadb;
use super::process::{existing, port_answers};
use super::{write_private, ClusterFile, ExistingServer, Node, Role};

type AnyResult<T> = std::result::Result<T, String>;

/// How a rebalance or move runs (the command line's options).
pub struct MoveArgs {
    pub duty: f64,
    pub max_slowdown: f64,
    pub keep_source_secs: u64,
}

fn runtime() -> AnyResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

async fn router_of(cf: &ClusterFile) -> AnyResult<Arc<Router>> {
    let meta = cf.meta_store().await?;
    Router::new(meta, 0, 16, 1, cf.password_of(Role::Shard).to_string())
        .await
        .map_err(|e| e.to_string())
}

/// The cluster's router, after recovering the moves a dead mover left
/// (printed).
async fn recovered_router(cf: &ClusterFile) -> AnyResult<Arc<Router>> {
    let router = router_of(cf).await?;
    for line in recover_moves(&router).await.map_err(|e| e.to_string())? {
        println!("{line}");
    }
    Ok(router)
}

/// The cluster file of a cluster whose partitions can move: its shards
/// write the binary log a move catches up from.
fn movable(dir: &Path) -> AnyResult<ClusterFile> {
    let cf = existing(dir)?;
    if !cf.shard_binlog {
        return Err(
            "this cluster's shards write no binary log (made with --no-shard-binlog); partition moves catch up from it".into(),
        );
    }
    Ok(cf)
}

fn save(dir: &Path, cf: &ClusterFile) -> AnyResult<()> {
    write_private(
        &dir.join("cluster.toml"),
        &toml::to_string_pretty(cf).map_err(|e| e.to_string())?,
    )
}

/// Starts a new MariaDB shard (or, `server` given, takes an existing one)
/// and registers it: every compute node opens a pool to it at its next
/// catalog poll. It holds nothing until a rebalance moves partitions to
/// it.
pub fn add_shard(dir: &Path, server: Option<ExistingServer>) -> AnyResult<()> {
    let mut cf = existing(dir)?;
    let i = cf.shards + 1;
    if let Some(server) = server {
        runtime()?.block_on(super::existing::join(&cf, i, &server))?;
        cf.shards = i;
        cf.external_shards.push(super::existing::ExternalShard {
            number: i,
            host: server.host.clone(),
            port: server.port,
        });
        save(dir, &cf)?;
        println!(
            "shard{i} added ({}:{}, an existing server: the cluster never starts or stops it); it holds no partitions yet: run `tessera cluster rebalance`",
            server.host, server.port
        );
        return Ok(());
    }
    let node = Node {
        role: Role::Shard,
        shard: i,
        name: format!("shard{i}"),
        port: cf.shard_port(i),
        dir: dir.join(format!("shard{i}")),
    };
    if port_answers(node.port) {
        return Err(format!("port {} (for {}) is in use", node.port, node.name));
    }
    let replicas = cf.replica_nodes(dir, i);
    for n in std::iter::once(&node).chain(&replicas) {
        if n.port != node.port && port_answers(n.port) {
            return Err(format!("port {} (for {}) is in use", n.port, n.name));
        }
        println!("starting {} on port {}", n.name, n.port);
        start_mariadb(&cf, n)?;
    }
    cf.shards = i;
    save(dir, &cf)?;
    let port = node.port;
    let rt = runtime()?;
    rt.block_on(async {
        let store = cf.meta_store().await?;
        let mut ddl = store
            .begin_ddl(0, &format!("-- add shard {i}"))
            .await
            .map_err(|e| e.to_string())?;
        ddl.add_shard(&ShardInfo {
            id: ShardId(i),
            endpoint: cf.endpoint(Role::Shard, node.port),
        })
        .await
        .map_err(|e| e.to_string())?;
        ddl.commit().await.map_err(|e| e.to_string())?;
        store.disconnect().await;
        if !replicas.is_empty() {
            let mut servers = vec![node];
            servers.extend(replicas);
            super::replicas::configure(&cf, &servers).await?;
        }
        Ok::<_, String>(())
    })?;
    println!(
        "shard{i} added (port {}); it holds no partitions yet: run `tessera cluster rebalance`",
        port
    );
    Ok(())
}

fn options(args: &MoveArgs) -> MoveOptions {
    let progress: mover::ProgressFn = Arc::new(|s: &MoveStatus| {
        println!(
            "  move {}: {} ({} rows, {:.1} MB copied, {} keys caught up, {} waiting{})",
            s.id,
            s.phase.as_str(),
            s.progress.rows_copied,
            s.progress.bytes as f64 / 1e6,
            s.progress.keys_caught_up,
            s.progress.lag_events,
            s.eta_secs
                .map(|e| format!(", copy ETA {e:.0} s"))
                .unwrap_or_default()
        );
    });
    MoveOptions {
        duty: args.duty,
        max_slowdown: args.max_slowdown,
        keep_source: Duration::from_secs(args.keep_source_secs),
        progress: Some(progress),
        ..MoveOptions::default()
    }
}

fn print_report(r: &mover::MoveReport) {
    println!(
        "move {} done: slot {} shard{} -> shard{}, {} tables, {} rows ({:.1} MB) copied in {:.2} s at {:.1} MB/s (share of time down to {:.2}), {} keys caught up in {} passes, fence {} ms (lock wait {}, last pass {}, verify {}, switch {}), {:.2} s in all; verified",
        r.id,
        r.slot,
        r.from.0,
        r.to.0,
        r.tables,
        r.rows,
        r.bytes as f64 / 1e6,
        r.copy_secs,
        if r.copy_secs > 0.0 { r.bytes as f64 / 1e6 / r.copy_secs } else { 0.0 },
        r.lowest_duty,
        r.keys_caught_up,
        r.passes,
        r.fence_ms,
        r.fence_parts[0],
        r.fence_parts[1],
        r.fence_parts[2],
        r.fence_parts[3],
        r.total_secs
    );
}

/// Moves partitions until every shard (but `drain`) holds an even share.
pub fn rebalance_cluster(dir: &Path, args: &MoveArgs, drain: Option<u32>) -> AnyResult<()> {
    let cf = movable(dir)?;
    let rt = runtime()?;
    rt.block_on(async {
        let router = recovered_router(&cf).await?;
        let onto: Vec<ShardId> = router
            .shard_ids()
            .into_iter()
            .filter(|s| Some(s.0) != drain)
            .collect();
        let started = std::time::Instant::now();
        let moving = |m: &PlannedMove, names: &[String]| {
            println!(
                "moving slot {} of {} from shard{} to shard{}",
                m.slot,
                names.join(", "),
                m.from.0,
                m.to.0
            );
        };
        let done = rebalance(&router, &onto, &options(args), &moving, &print_report)
            .await
            .map_err(|e| e.to_string())?;
        for t in &done.mirrors_extended {
            println!("mirror table {t} copied to every shard");
        }
        println!(
            "rebalanced: {} moves, {} mirror tables extended, {:.1} s",
            done.moves.len(),
            done.mirrors_extended.len(),
            started.elapsed().as_secs_f64()
        );
        Ok(())
    })
}

/// How long a removed shard's server stays up after every node stopped
/// routing to it.
const REMOVE_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Drains a shard (its partitions moved to the others, mirror copies
/// dropped with it) and retires it: unregistered, its MariaDB stopped.
pub fn remove_shard(dir: &Path, shard: u32, args: &MoveArgs) -> AnyResult<()> {
    rebalance_cluster(dir, args, Some(shard))?;
    let mut cf = existing(dir)?;
    let rt = runtime()?;
    rt.block_on(async {
        let router = router_of(&cf).await?;
        let mut ddl = router
            .meta
            .begin_ddl(0, &format!("-- remove shard {shard}"))
            .await
            .map_err(|e| e.to_string())?;
        ddl.remove_shard(ShardId(shard))
            .await
            .map_err(|e| e.to_string())?;
        ddl.commit().await.map_err(|e| e.to_string())?;
        Ok::<_, String>(())
    })?;
    // Every node stops routing to the shard within two catalog polls; a
    // transaction that met a moved slot's old table there still has a
    // (failed, empty) branch on it until it ends: give those a moment
    // before the server goes.
    std::thread::sleep(2 * shard_router::CATALOG_POLL + REMOVE_GRACE);
    if !cf.local_shard(shard) && !cf.removed_shards.contains(&shard) {
        cf.removed_shards.push(shard);
        save(dir, &cf)?;
        println!("shard{shard} drained and unregistered (an existing server: it keeps running, with the cluster's account and empty databases)");
        return Ok(());
    }
    let node = Node {
        role: Role::Shard,
        shard,
        name: format!("shard{shard}"),
        port: cf.shard_port(shard),
        dir: dir.join(format!("shard{shard}")),
    };
    super::stop_node(&node);
    for replica in cf.replica_nodes(dir, shard) {
        super::stop_node(&replica);
    }
    if !cf.removed_shards.contains(&shard) {
        cf.removed_shards.push(shard);
    }
    save(dir, &cf)?;
    println!("shard{shard} drained, unregistered and stopped");
    Ok(())
}

/// Moves one slot (with its co-location group) to a shard.
pub fn move_one(dir: &Path, table: &str, slot: u32, to: u32, args: &MoveArgs) -> AnyResult<()> {
    let cf = movable(dir)?;
    let rt = runtime()?;
    rt.block_on(async {
        let router = recovered_router(&cf).await?;
        let catalog = router.catalog();
        let (schema, name) = table.split_once('.').unwrap_or(("public", table));
        let def = catalog
            .table(schema, name)
            .ok_or_else(|| format!("no table {schema}.{name}"))?;
        let tables = mover::group_of(&catalog, def).map_err(|e| e.to_string())?;
        let req = MoveRequest {
            tables,
            slot,
            to: ShardId(to),
        };
        let r = mover::move_slot(&router, &req, &options(args))
            .await
            .map_err(|e| e.to_string())?;
        print_report(&r);
        Ok(())
    })
}

/// Undoes a switched move (`mover::undo`).
pub fn undo_move(dir: &Path, id: u64, args: &MoveArgs) -> AnyResult<()> {
    let cf = movable(dir)?;
    let rt = runtime()?;
    rt.block_on(async {
        let router = recovered_router(&cf).await?;
        let u = undo::undo_move(&router, id, &options(args), "undone by the operator")
            .await
            .map_err(|e| e.to_string())?;
        println!(
            "move {}: undone; the partition is back on shard{} ({} keys changed since the switch carried back, fence {} ms)",
            u.id, u.shard.0, u.keys_caught_up, u.fence_ms
        );
        Ok(())
    })
}

/// Every move meta recorded, newest last.
pub fn moves(dir: &Path, json: bool) -> AnyResult<()> {
    let cf = existing(dir)?;
    let all = read_moves(&cf, false)?;
    if json {
        let rows: Vec<serde_json::Value> = all.iter().map(move_json).collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        print_moves(&all);
    }
    Ok(())
}

/// `cluster status`: the moves not finished, if any (nothing when meta
/// is not running).
pub fn print_open_moves(dir: &Path) -> AnyResult<()> {
    let cf = existing(dir)?;
    if !cf.meta_servers().iter().any(|s| port_answers(s.port)) {
        return Ok(());
    }
    match read_moves(&cf, true) {
        Ok(open) if open.is_empty() => {}
        Ok(open) => {
            println!("\npartition moves in progress:");
            print_moves(&open);
        }
        Err(e) => println!("\npartition moves: meta did not answer ({e})"),
    }
    Ok(())
}

fn read_moves(cf: &ClusterFile, open_only: bool) -> AnyResult<Vec<MoveRecord>> {
    runtime()?.block_on(async {
        let store = cf.meta_store().await?;
        let all = store.moves(open_only).await.map_err(|e| e.to_string());
        store.disconnect().await;
        all
    })
}

fn move_json(m: &MoveRecord) -> serde_json::Value {
    serde_json::json!({
        "id": m.id,
        "tables": m.tables.iter().map(|t| t.0).collect::<Vec<_>>(),
        "slot": m.partition,
        "from": m.from.0,
        "to": m.to.0,
        "phase": m.phase.as_str(),
        "rows_copied": m.progress.rows_copied,
        "bytes": m.progress.bytes,
        "keys_caught_up": m.progress.keys_caught_up,
        "waiting_keys": m.progress.lag_events,
        "fence_ms": m.fence_ms,
        "age_secs": m.age_secs,
        "rows_total": m.rows_total,
        "eta_secs": m.eta_secs(),
        "detail": m.detail,
    })
}

fn print_moves(all: &[MoveRecord]) {
    println!(
        "{:>4} {:<12} {:>5} {:>9} {:>10} {:>9} {:>8} {:>8} {:>6}  detail",
        "id", "phase", "slot", "from->to", "rows", "keys", "fence", "age s", "eta s"
    );
    for m in all {
        println!(
            "{:>4} {:<12} {:>5} {:>9} {:>10} {:>9} {:>8} {:>8.1} {:>6}  {}",
            m.id,
            m.phase.as_str(),
            m.partition,
            format!("{}->{}", m.from.0, m.to.0),
            m.progress.rows_copied,
            m.progress.keys_caught_up,
            m.fence_ms.map(|f| format!("{f} ms")).unwrap_or("-".into()),
            m.age_secs,
            m.eta_secs()
                .map(|e| format!("{e:.0}"))
                .unwrap_or("-".into()),
            m.detail.as_deref().unwrap_or("")
        );
    }
}
