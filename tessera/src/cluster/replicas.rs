//! Replicas of a local cluster's shards and meta (`cluster up --replicas
//! N`): at every `cluster up`, each server set to the role meta gives it
//! (the primary writable and waiting for a replica's acknowledgement;
//! replicas read-only and following it), and each old primary a failover
//! left behind made a replica again: reconciled and rewound
//! (`super::rewind`), or rebuilt from its primary (`super::rebuild`). The
//! servers' replication options and the failover account are
//! `super::mariadb`'s. Design: docs/rfcs/2026-12-04-replicas-and-failover.md.

use super::process::root_conn;
use super::*;
use mysql_async::prelude::*;

/// Sets meta's servers to their roles and answers the primary's login:
/// the server whose own record names it at the highest epoch (the first
/// one made, in a new cluster) is writable with semi-synchronous commits;
/// the others are read-only and follow it, but for an old primary (it
/// names itself at an older epoch), which is left alone.
pub(super) async fn configure_meta(cf: &ClusterFile, nodes: &[Node]) -> AnyResult<MysqlEndpoint> {
    let servers = cf.meta_servers();
    let claims =
        meta::replication::meta_claims(&servers, "tessera_meta", std::time::Duration::from_secs(2))
            .await;
    let (primary, epoch) = meta::replication::primary_of(&claims, false)
        .unwrap_or_else(|| (cf.endpoint(Role::Meta, cf.meta_port()), 0));
    let metas: Vec<&Node> = nodes.iter().filter(|n| n.kind() == Role::Meta).collect();
    for n in metas.iter().filter(|n| n.port != primary.port) {
        if refused(n) && rejoin_enabled(n) {
            rebuild(cf, Role::Meta, n, primary.port, nodes).await?;
        }
    }
    // Replicas first: the primary's commits wait for one of them.
    for n in metas.iter().filter(|n| n.port != primary.port && !down(n)) {
        let old_primary = claims
            .iter()
            .find(|c| c.server.port == n.port)
            .and_then(|c| c.own_epoch())
            .is_some_and(|e| e < epoch);
        let mut conn = root_conn(n).await?;
        let mut sql = vec![
            "SET GLOBAL rpl_semi_sync_master_enabled = OFF".to_string(),
            "SET GLOBAL read_only = ON".to_string(),
        ];
        if old_primary {
            run_all(&mut conn, n, &sql).await?;
            if rejoin_enabled(n) {
                rejoin(cf, Role::Meta, n, primary.port, nodes, &mut conn).await?;
            }
            continue;
        } else {
            let following: Vec<mysql_async::Row> = conn
                .query("SHOW SLAVE STATUS")
                .await
                .map_err(|e| format!("{}: {e}", n.name))?;
            if following.is_empty() {
                sql.push(change_master(cf, Role::Meta, primary.port));
                sql.push("START SLAVE".into());
            }
        }
        run_all(&mut conn, n, &sql).await?;
    }
    if let Some(n) = metas.iter().find(|n| n.port == primary.port) {
        let mut conn = root_conn(n).await?;
        run_all(&mut conn, n, &primary_statements()).await?;
    }
    Ok(primary)
}

/// Whether `cluster up` makes old primaries follow their successors: on
/// unless `TESSERA_REJOIN_OLD_PRIMARIES=0` (an operator who wants to look
/// at an old primary first; the failover scenario, to set one up).
fn rejoin_enabled(n: &Node) -> bool {
    let off = std::env::var("TESSERA_REJOIN_OLD_PRIMARIES").is_ok_and(|v| v == "0");
    if off {
        println!(
            "{} was a primary before a failover: it stays read-only and out of the cluster (TESSERA_REJOIN_OLD_PRIMARIES=0)",
            n.name
        );
    }
    !off
}

/// Whether a server's last start ended in MariaDB refusing to truncate
/// its binary log at crash recovery (`--init-rpl-role=SLAVE` with an `XA
/// COMMIT` or `XA ROLLBACK` past the tail no replica acknowledged).
pub(super) fn recovery_refused(n: &Node) -> bool {
    super::process::last_start_log(n)
        .is_some_and(|log| log.contains("Cannot truncate the binary log"))
}

/// Whether a server is down because MariaDB's crash recovery refused it.
fn refused(n: &Node) -> bool {
    !super::process::port_answers(n.port) && recovery_refused(n)
}

/// Whether a server is down (not answering on its port): one that could
/// not start is left out of the roles set at `cluster up`.
fn down(n: &Node) -> bool {
    if super::process::port_answers(n.port) {
        return false;
    }
    println!("{} is down: left out", n.name);
    true
}

async fn run_all(conn: &mut mysql_async::Conn, n: &Node, sql: &[String]) -> AnyResult<()> {
    for stmt in sql {
        conn.query_drop(stmt)
            .await
            .map_err(|e| format!("{}: {stmt}: {e}", n.name))?;
    }
    Ok(())
}

fn primary_statements() -> Vec<String> {
    vec![
        "SET GLOBAL rpl_semi_sync_master_enabled = ON".into(),
        "SET GLOBAL read_only = OFF".into(),
    ]
}

/// Records the replicas in meta and sets every shard server to its role:
/// the primary meta names writable with semi-synchronous commits, each
/// replica read-only and replicating from it (set up once; a replica
/// remembers its primary across restarts), a failed-over old primary
/// read-only and left alone.
pub(super) async fn configure(cf: &ClusterFile, nodes: &[Node]) -> AnyResult<()> {
    let store = cf.meta_store().await?;
    for n in nodes
        .iter()
        .filter(|n| n.role == Role::Replica && n.shard > 0)
    {
        store
            .register_replica(ShardId(n.shard), "127.0.0.1", n.port)
            .await
            .map_err(|e| e.to_string())?;
    }
    let catalog = store.load_catalog().await.map_err(|e| e.to_string())?;
    let states = store.shard_replicas().await.map_err(|e| e.to_string())?;
    store.disconnect().await;
    for n in nodes.iter().filter(|n| n.kind() == Role::Shard) {
        let failed = states.iter().any(|r| {
            r.shard.0 == n.shard && r.port == n.port && r.state == meta::ReplicaState::Failed
        });
        let primary = catalog
            .placement
            .server(ShardId(n.shard))
            .map_err(|e| e.to_string())?
            .port;
        if failed && refused(n) && rejoin_enabled(n) {
            if rebuild(cf, Role::Shard, n, primary, nodes).await? {
                set_replica(cf, n).await?;
            }
            continue;
        }
        if failed && down(n) {
            continue;
        }
        let mut conn = root_conn(n).await?;
        let state = states
            .iter()
            .find(|r| r.shard.0 == n.shard && r.port == n.port)
            .map(|r| r.state);
        let sql = role_statements(cf, n, primary, state, &mut conn).await?;
        run_all(&mut conn, n, &sql).await?;
        if state == Some(meta::ReplicaState::Failed)
            && rejoin_enabled(n)
            && rejoin(cf, Role::Shard, n, primary, nodes, &mut conn).await?
        {
            set_replica(cf, n).await?;
        }
        let _ = conn.disconnect().await;
    }
    Ok(())
}

/// Records a shard server that follows its primary again as a replica.
async fn set_replica(cf: &ClusterFile, n: &Node) -> AnyResult<()> {
    let store = cf.meta_store().await?;
    store
        .set_replica_state(ShardId(n.shard), n.port, meta::ReplicaState::Replica)
        .await
        .map_err(|e| e.to_string())?;
    store.disconnect().await;
    Ok(())
}

/// Sets every server of a running cluster to its role again
/// (`configure_meta`, then `configure`).
pub(super) fn reconfigure(cf: &ClusterFile, nodes: &[Node]) -> AnyResult<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(configure_meta(cf, nodes))?;
    rt.block_on(configure(cf, nodes))
}

/// What sets one shard server to its role.
async fn role_statements(
    cf: &ClusterFile,
    n: &Node,
    primary: u16,
    state: Option<meta::ReplicaState>,
    conn: &mut mysql_async::Conn,
) -> AnyResult<Vec<String>> {
    if n.port == primary {
        return Ok(primary_statements());
    }
    let mut sql = vec![
        "SET GLOBAL rpl_semi_sync_master_enabled = OFF".to_string(),
        "SET GLOBAL read_only = ON".to_string(),
    ];
    match state {
        Some(meta::ReplicaState::Replica) => {
            let following: Vec<mysql_async::Row> = conn
                .query("SHOW SLAVE STATUS")
                .await
                .map_err(|e| format!("{}: {e}", n.name))?;
            if following.is_empty() {
                sql.push(change_master(cf, Role::Shard, primary));
                sql.push("START SLAVE".into());
            }
        }
        Some(meta::ReplicaState::Failed) | None => {}
    }
    Ok(sql)
}

/// An old primary follows the new one: reconciled and rewound
/// (`super::rewind`) where it stands, or, when its history diverged (it
/// wrote past the promotion, or its applier stops on an error), rebuilt as
/// a copy of the primary (`super::rebuild`). Answers whether it follows
/// and caught up.
async fn rejoin(
    cf: &ClusterFile,
    kind: Role,
    n: &Node,
    primary: u16,
    nodes: &[Node],
    conn: &mut mysql_async::Conn,
) -> AnyResult<bool> {
    let _ = conn.query_drop("STOP SLAVE").await;
    let source = nodes
        .iter()
        .find(|p| p.port == primary)
        .ok_or_else(|| format!("no server of this cluster has port {primary}"))?;
    if let Some(start) = super::rewind::start_position(cf, kind, n, source, conn).await? {
        follow(cf, kind, n, primary, conn, start).await?;
        match caught_up(n, conn).await? {
            Following::CaughtUp => return Ok(true),
            Following::Lagging => return Ok(false),
            Following::Diverged(why) => {
                let _ = conn.query_drop("STOP SLAVE").await;
                println!(
                    "{} was a primary before a failover and its history diverged from the new primary's ({why})",
                    n.name
                );
            }
        }
    }
    rebuild(cf, kind, n, primary, nodes).await
}

/// Rebuilds `n` from the primary on port `primary` and makes it follow.
async fn rebuild(
    cf: &ClusterFile,
    kind: Role,
    n: &Node,
    primary: u16,
    nodes: &[Node],
) -> AnyResult<bool> {
    let source = nodes
        .iter()
        .find(|p| p.port == primary)
        .ok_or_else(|| format!("no server of this cluster has port {primary}"))?;
    println!("{} is rebuilt from {}", n.name, source.name);
    // Starting a server runs its own runtime: not on this one's thread.
    let gtid = std::thread::scope(|s| s.spawn(|| super::rebuild::copy_from(cf, n, source)).join())
        .map_err(|_| format!("rebuilding {} panicked", n.name))??;
    let mut conn = root_conn(n).await?;
    // Checked by `copy_from`: digits, dashes and commas only.
    follow(
        cf,
        kind,
        n,
        primary,
        &mut conn,
        format!("SET GLOBAL gtid_slave_pos = '{gtid}'"),
    )
    .await?;
    match caught_up(n, &mut conn).await? {
        Following::CaughtUp => Ok(true),
        Following::Lagging => Ok(false),
        Following::Diverged(why) => {
            Err(format!("{} was rebuilt but does not follow: {why}", n.name))
        }
    }
}

/// Points a server at its primary from `start` (the statement that sets
/// its GTID position) under a new server id (`process::next_server_id`).
async fn follow(
    cf: &ClusterFile,
    kind: Role,
    n: &Node,
    primary: u16,
    conn: &mut mysql_async::Conn,
    start: String,
) -> AnyResult<()> {
    let current: Option<u32> = conn
        .query_first("SELECT @@GLOBAL.server_id")
        .await
        .map_err(|e| format!("{}: {e}", n.name))?;
    let id = super::process::next_server_id(n, current.unwrap_or(u32::from(n.port)))?;
    let sql = [
        "SET GLOBAL rpl_semi_sync_master_enabled = OFF".to_string(),
        "SET GLOBAL read_only = ON".to_string(),
        start,
        format!("SET GLOBAL server_id = {id}"),
        change_master(cf, kind, primary),
        "START SLAVE".into(),
    ];
    run_all(conn, n, &sql).await
}

enum Following {
    CaughtUp,
    /// Still applying after 60 s.
    Lagging,
    /// Its applier stopped on an error (the error).
    Diverged(String),
}

/// Waits until a server that follows its primary is at most 1 s behind.
async fn caught_up(n: &Node, conn: &mut mysql_async::Conn) -> AnyResult<Following> {
    // Under load a restarted server applies, one transaction at a time,
    // everything written since the failover.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let status: Option<mysql_async::Row> = conn
            .query_first("SHOW SLAVE STATUS")
            .await
            .map_err(|e| format!("{}: {e}", n.name))?;
        let get = |k: &str| -> String {
            status
                .as_ref()
                .and_then(|r| r.get_opt::<String, _>(k))
                .and_then(|v| v.ok())
                .unwrap_or_default()
        };
        if get("Last_IO_Errno") != "0" || get("Last_SQL_Errno") != "0" {
            return Ok(Following::Diverged(format!(
                "{}{}",
                get("Last_IO_Error"),
                get("Last_SQL_Error")
            )));
        }
        let running = get("Slave_IO_Running") == "Yes" && get("Slave_SQL_Running") == "Yes";
        let behind = get("Seconds_Behind_Master").parse::<u64>().ok();
        if running && behind.is_some_and(|b| b <= 1) {
            println!("{} follows its primary now", n.name);
            return Ok(Following::CaughtUp);
        }
        if std::time::Instant::now() > deadline {
            // It goes on applying, but is no candidate for a promotion (a
            // promotion waits for every replica to apply what it received)
            // until a later `cluster up` finds it caught up.
            println!("{} is still catching up with its primary after 60 s: it goes on following, out of the cluster until a later cluster up finds it caught up", n.name);
            return Ok(Following::Lagging);
        }
    }
}

/// Points a replica at a primary on this host, from the GTID position it
/// has applied.
fn change_master(cf: &ClusterFile, kind: Role, primary: u16) -> String {
    format!(
        "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {primary}, MASTER_USER = '{}', \
         MASTER_PASSWORD = '{}', MASTER_USE_GTID = slave_pos",
        cf.mysql_user.replace('\'', "''"),
        cf.password_of(kind).replace('\'', "''")
    )
}

/// What each shard server is now, by port: `primary`, `replica` or
/// `failed`, as meta records it (empty when meta does not answer).
pub(super) fn server_states(cf: &ClusterFile) -> std::collections::HashMap<u16, &'static str> {
    let mut states = std::collections::HashMap::new();
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return states;
    };
    rt.block_on(async {
        let Ok(store) = cf.meta_store().await else {
            return;
        };
        let claims = meta::replication::meta_claims(
            &cf.meta_servers(),
            "tessera_meta",
            std::time::Duration::from_secs(1),
        )
        .await;
        let top = meta::replication::primary_of(&claims, false).map(|(_, e)| e);
        for c in &claims {
            // An old primary names itself at an older epoch.
            let old = c.own_epoch().is_some_and(|e| Some(e) < top);
            states.insert(c.server.port, if old { "failed" } else { "replica" });
        }
        states.insert(store.server().port, "primary");
        let asked = async {
            let catalog = store.load_catalog().await.ok()?;
            let replicas = store.shard_replicas().await.ok()?;
            Some((catalog, replicas))
        };
        if let Ok(Some((catalog, replicas))) =
            tokio::time::timeout(std::time::Duration::from_secs(3), asked).await
        {
            for (_, server) in catalog.placement.servers() {
                states.insert(server.port, "primary");
            }
            for r in replicas {
                states.insert(r.port, r.state.as_str());
            }
        }
        store.disconnect().await;
    });
    states
}
