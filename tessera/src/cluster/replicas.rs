//! Replicas of a local cluster's shards (`cluster up --replicas N`): the
//! servers' replication options, the administrative account the compute
//! nodes fail over with, and, at every `cluster up`, each shard server set
//! to the role meta gives it (the primary writable and waiting for a
//! replica's acknowledgement; replicas read-only and following it).
//! Design: docs/rfcs/2026-12-04-replicas-and-failover.md.

use super::*;
use mysql_async::prelude::*;

/// The account the compute nodes' failover watcher uses on shard servers:
/// replication control, read-only switches and KILL, no data privileges.
pub const ADMIN_USER: &str = "tessera_admin";

/// How long a commit waits for a replica's acknowledgement before the
/// primary would fall back to asynchronous replication (MariaDB's
/// largest): never, in practice. A primary whose replicas are all gone
/// makes its commits wait, and `Rpl_semi_sync_master_status` says why.
const SEMI_SYNC_TIMEOUT_MS: u64 = 4_294_967_295;

/// Options of every server of a replicated shard (primary or replica):
/// any of them can be promoted, so all log the changes they apply and
/// start read-only; `configure` opens the primary for writes.
pub(super) fn server_options() -> Vec<String> {
    vec![
        "--log-slave-updates=ON".into(),
        "--read-only=ON".into(),
        "--rpl-semi-sync-slave-enabled=ON".into(),
        "--rpl-semi-sync-master-wait-point=AFTER_SYNC".into(),
        format!("--rpl-semi-sync-master-timeout={SEMI_SYNC_TIMEOUT_MS}"),
        // Crash recovery removes the binary log's tail no replica
        // acknowledged (it was never acknowledged to a client either), so
        // an old primary restarted after a crash can follow the new one.
        "--init-rpl-role=SLAVE".into(),
        // Replicated XA PREPAREs and the rows of each transaction applied
        // in order, one at a time: a promoted replica is its primary's
        // history exactly.
        "--slave-parallel-threads=0".into(),
    ]
}

/// The administrative account on a shard server (idempotent statements).
pub(super) fn admin_account(cf: &ClusterFile) -> Vec<String> {
    let pw = cf.admin_password.replace('\'', "''");
    vec![
        format!("CREATE USER IF NOT EXISTS '{ADMIN_USER}'@'%' IDENTIFIED BY '{pw}'"),
        format!(
            "GRANT REPLICATION SLAVE ADMIN, SLAVE MONITOR, REPLICATION MASTER ADMIN, BINLOG MONITOR, \
             READ_ONLY ADMIN, CONNECTION ADMIN, PROCESS, RELOAD ON *.* TO '{ADMIN_USER}'@'%'"
        ),
    ]
}

async fn root_conn(node: &Node) -> AnyResult<mysql_async::Conn> {
    let sock = node.dir.join("mysqld.sock");
    let opts = mysql_async::OptsBuilder::default()
        .socket(Some(sock.to_string_lossy().to_string()))
        .user(Some("root"));
    mysql_async::Conn::new(opts)
        .await
        .map_err(|e| format!("{}: {e}", node.name))
}

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
                rejoin(cf, Role::Meta, n, primary.port, &mut conn).await?;
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

/// Whether `cluster up` makes old primaries follow their successors.
/// Off unless `TESSERA_REJOIN_OLD_PRIMARIES=1`: a rejoined old primary was
/// seen (session 27, failover scenario) to hold other rows than its
/// primary after catching up, with no replication error, and a replica
/// that diverged silently could later be promoted. Until that is
/// understood an old primary stays failed, read-only and out.
fn rejoin_enabled(n: &Node) -> bool {
    let on = std::env::var("TESSERA_REJOIN_OLD_PRIMARIES").is_ok_and(|v| v == "1");
    if !on {
        println!(
            "{} was a primary before a failover: it stays read-only and out of the cluster (rejoining old primaries is off: TESSERA_REJOIN_OLD_PRIMARIES=1 turns it on)",
            n.name
        );
    }
    on
}

/// Whether a server's last start ended in MariaDB refusing to truncate
/// its binary log at crash recovery (`--init-rpl-role=SLAVE` with an `XA
/// COMMIT` or `XA ROLLBACK` past the tail no replica acknowledged).
pub(super) fn recovery_refused(n: &Node) -> bool {
    std::fs::read_to_string(n.dir.join("node.log")).is_ok_and(|log| {
        let last_start = log
            .rfind("Starting MariaDB")
            .map_or(log.as_str(), |i| &log[i..]);
        last_start.contains("Cannot truncate the binary log")
    })
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
        if failed && down(n) {
            continue;
        }
        let primary = catalog
            .placement
            .server(ShardId(n.shard))
            .map_err(|e| e.to_string())?
            .port;
        let mut conn = root_conn(n).await?;
        let state = states
            .iter()
            .find(|r| r.shard.0 == n.shard && r.port == n.port)
            .map(|r| r.state);
        let sql = role_statements(cf, n, primary, state, &mut conn).await?;
        run_all(&mut conn, n, &sql).await?;
        if state == Some(meta::ReplicaState::Failed)
            && rejoin_enabled(n)
            && rejoin(cf, Role::Shard, n, primary, &mut conn).await?
        {
            let store = cf.meta_store().await?;
            store
                .set_replica_state(ShardId(n.shard), n.port, meta::ReplicaState::Replica)
                .await
                .map_err(|e| e.to_string())?;
            store.disconnect().await;
        }
        let _ = conn.disconnect().await;
    }
    Ok(())
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

/// Where an old primary starts following its successor (the statement
/// that sets it): the end of its own binary log, or, when it holds
/// branches it prepared that no replica received, the promotion's
/// position once they are rolled back (`super::rewind`). None: it diverged.
async fn rewind(
    cf: &ClusterFile,
    kind: Role,
    n: &Node,
    conn: &mut mysql_async::Conn,
) -> AnyResult<Option<String>> {
    let own = "SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos".to_string();
    let shard = ShardId(if kind == Role::Meta { 0 } else { n.shard });
    let promoted = match cf.meta_store().await {
        Ok(store) => {
            let p = store.promoted_at(shard, n.port).await;
            store.disconnect().await;
            p.ok().flatten()
        }
        Err(_) => None,
    };
    let Some(promoted) = promoted.filter(|p| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b',')
    }) else {
        return Ok(Some(own));
    };
    let (binlog_pos, server_id): (Option<String>, Option<u32>) = conn
        .query_first("SELECT @@GLOBAL.gtid_binlog_pos, @@GLOBAL.server_id")
        .await
        .map_err(|e| format!("{}: {e}", n.name))?
        .unwrap_or((None, None));
    let data = n.dir.join("data");
    let tail = super::rewind::tail(
        &data,
        &binlog_pos.unwrap_or_default(),
        &promoted,
        server_id.unwrap_or_default(),
    )?;
    match tail {
        super::rewind::Tail::Empty => Ok(Some(own)),
        super::rewind::Tail::Prepared(xids, resolved) => {
            let rewound = super::rewind::roll_back(conn, &xids, &resolved)
                .await
                .map_err(|e| format!("{}: {e}", n.name))?;
            if !rewound {
                println!(
                    "{} was a primary before a failover and finished a branch after its successor's promotion at {promoted}: it stays read-only and out of the cluster until it is rebuilt",
                    n.name
                );
                return Ok(None);
            }
            println!(
                "{} was a primary before a failover: rolled back {} branch(es) it prepared that no replica received, dropped {} unacknowledged end(s) of branches still prepared, and follows from {promoted}",
                n.name,
                xids.len(),
                resolved.len()
            );
            // Checked above: digits, dashes and commas only.
            Ok(Some(format!("SET GLOBAL gtid_slave_pos = '{promoted}'")))
        }
        super::rewind::Tail::Diverged(gtid) => {
            println!(
                "{} was a primary before a failover and committed {gtid} after its successor's promotion at {promoted}: it stays read-only and out of the cluster until it is rebuilt",
                n.name
            );
            Ok(None)
        }
    }
}

/// An old primary follows the new one from the end of its own binary log
/// (its unacknowledged tail was removed at its restart). Answers whether
/// it follows without error; one whose history diverged (it holds a
/// transaction the primary does not) stops following and stays out.
async fn rejoin(
    cf: &ClusterFile,
    kind: Role,
    n: &Node,
    primary: u16,
    conn: &mut mysql_async::Conn,
) -> AnyResult<bool> {
    let _ = conn.query_drop("STOP SLAVE").await;
    let Some(start) = rewind(cf, kind, n, conn).await? else {
        return Ok(false);
    };
    let sql = [
        start,
        change_master(cf, kind, primary),
        "START SLAVE".into(),
    ];
    run_all(conn, n, &sql).await?;
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
            let _ = conn.query_drop("STOP SLAVE").await;
            println!(
                "{} was a primary before a failover and its history diverged from the new primary's ({}{}): it stays read-only and out of the cluster until it is rebuilt",
                n.name,
                get("Last_IO_Error"),
                get("Last_SQL_Error")
            );
            return Ok(false);
        }
        let running = get("Slave_IO_Running") == "Yes" && get("Slave_SQL_Running") == "Yes";
        let behind = get("Seconds_Behind_Master").parse::<u64>().ok();
        if running && behind.is_some_and(|b| b <= 1) {
            println!(
                "{} was a primary before a failover: it follows the new primary now",
                n.name
            );
            return Ok(true);
        }
        if std::time::Instant::now() > deadline {
            // It goes on applying, but is no candidate for a promotion (a
            // promotion waits for every replica to apply what it received)
            // until a later `cluster up` finds it caught up.
            println!("{} was a primary before a failover and is still catching up with the new one after 60 s: it goes on following, out of the cluster until a later cluster up finds it caught up", n.name);
            return Ok(false);
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
