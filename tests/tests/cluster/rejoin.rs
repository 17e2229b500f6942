//! Old primaries rejoining as replicas after the failover scenario (issue
//! 34), as root on the servers' sockets: a rejoined old primary holds the
//! same rows and the same prepared XA branches as its shard's primary, and
//! goes on applying what the primary writes.
//!
//! Two states a kill can leave by chance are also made on purpose, on one
//! old primary, between its restart and its rejoin: a branch its binary log
//! commits but its engine holds prepared (an `XA COMMIT` acknowledged but
//! not yet committed in the engine at the kill), and a branch its binary
//! log leaves prepared but its engine lost. The rejoin must make both what
//! the log says.

use std::time::{Duration, Instant};

use mysql_async::prelude::*;
use tests::TestCluster;

/// MariaDB's root on a node's socket (the fence of an old primary kills
/// every other account's connections, the cluster account's too).
pub async fn root_conn(cluster: &TestCluster, node: &str) -> mysql_async::Conn {
    try_root_conn(cluster, node)
        .await
        .expect("root on the socket")
}

pub async fn try_root_conn(
    cluster: &TestCluster,
    node: &str,
) -> Result<mysql_async::Conn, mysql_async::Error> {
    let sock = cluster.dir.join(node).join("mysqld.sock");
    let opts = mysql_async::OptsBuilder::default()
        .socket(Some(sock.to_string_lossy().to_string()))
        .user(Some("root"));
    mysql_async::Conn::new(opts).await
}

/// The branch committed in the log that the engine will hold prepared.
const COMMITTED: &str = "'fo-xa-committed'";
/// The branch prepared in the log that the engine will lose.
const PREPARED: &str = "'fo-xa-prepared'";

/// Runs statements in order as root on a node's socket, on one connection.
pub async fn run_as_root(cluster: &TestCluster, node: &str, sql: &[String]) {
    let mut c = root_conn(cluster, node).await;
    for s in sql {
        c.query_drop(s).await.expect(s);
    }
    let _ = c.disconnect().await;
}

/// Commits the branch `xid` (its SQL form), which `XA RECOVER` on `c`
/// must list with data `data` (`what` says which branch, in the failure).
pub async fn commit_listed_branch(c: &mut mysql_async::Conn, data: &str, xid: &str, what: &str) {
    let prepared: Vec<mysql_async::Row> = c.query("XA RECOVER").await.expect("XA RECOVER");
    let names: Vec<String> = prepared
        .iter()
        .filter_map(|r| r.get::<String, _>("data"))
        .collect();
    assert!(names.iter().any(|n| n == data), "{what}: {names:?}");
    c.query_drop(format!("XA COMMIT {xid}"))
        .await
        .expect("XA COMMIT");
}

/// The statements of an XA branch `xid` that runs `insert` and is left
/// prepared.
pub fn prepared_branch(xid: &str, insert: &str) -> Vec<String> {
    vec![
        format!("XA START {xid}"),
        insert.to_string(),
        format!("XA END {xid}"),
        format!("XA PREPARE {xid}"),
    ]
}

/// `fo_xa.t`, a table outside Tessera's catalog.
fn xa_table() -> Vec<String> {
    vec![
        "CREATE DATABASE IF NOT EXISTS fo_xa".into(),
        "CREATE TABLE IF NOT EXISTS fo_xa.t (id int PRIMARY KEY) ENGINE=InnoDB".into(),
    ]
}

/// On a shard's primary, before it is killed (written to its binary log
/// and acknowledged): a table outside Tessera's catalog, a branch that
/// inserts row 1 and commits, a branch that inserts row 2 and stays
/// prepared (its xid is not Tessera's: recovery leaves it).
pub async fn seed_xa_cases(cluster: &TestCluster, primary: &str) {
    let mut sql = xa_table();
    sql.extend(prepared_branch(COMMITTED, "INSERT INTO fo_xa.t VALUES (1)"));
    sql.push(format!("XA COMMIT {COMMITTED}"));
    sql.extend(prepared_branch(PREPARED, "INSERT INTO fo_xa.t VALUES (2)"));
    run_as_root(cluster, primary, &sql).await;
}

/// On the old primary, restarted but not rejoined: the committed branch
/// prepared again in the engine (its row deleted), the prepared one rolled
/// back, both unlogged, as a kill at the wrong moment leaves them.
pub async fn break_xa_cases(cluster: &TestCluster, old: &str) {
    let mut sql = vec![
        "SET SESSION sql_log_bin = 0".to_string(),
        format!("XA ROLLBACK {PREPARED}"),
        "DELETE FROM fo_xa.t WHERE id = 1".into(),
    ];
    sql.extend(prepared_branch(COMMITTED, "INSERT INTO fo_xa.t VALUES (1)"));
    run_as_root(cluster, old, &sql).await;
}

/// The branch prepared on the stopped old primary's successor before the
/// old primary is rebuilt as a copy of it.
const COPIED: &str = "'fo-xa-copied'";

/// On a primary an old primary will be copied from: a branch that inserts
/// row 3 and stays prepared (the copy must hold it prepared).
pub async fn prepare_before_copy(cluster: &TestCluster, primary: &str) {
    let mut sql = xa_table();
    sql.extend(prepared_branch(COPIED, "INSERT INTO fo_xa.t VALUES (3)"));
    run_as_root(cluster, primary, &sql).await;
}

/// After the copy: the branch committed on the primary is applied on the
/// copy without error.
pub async fn check_copied_branch(cluster: &TestCluster, primary: &str, copy: &str) {
    let mut p = root_conn(cluster, primary).await;
    p.query_drop(format!("XA COMMIT {COPIED}"))
        .await
        .expect("XA COMMIT of the copied branch on the primary");
    wait_caught_up(&mut p, &mut root_conn(cluster, copy).await, copy).await;
    let mut o = root_conn(cluster, copy).await;
    let rows: Vec<i32> = o
        .query("SELECT id FROM fo_xa.t WHERE id = 3")
        .await
        .expect("rows");
    assert_eq!(rows, vec![3], "{copy}: the copied branch's row");
}

/// After the rejoin: the branch left prepared is committed on the primary;
/// the old primary, which must hold it prepared again, applies the commit
/// without error and has both rows.
pub async fn check_xa_cases(cluster: &TestCluster, primary: &str, old: &str) {
    let mut p = root_conn(cluster, primary).await;
    p.query_drop(format!("XA COMMIT {PREPARED}"))
        .await
        .expect("XA COMMIT of the prepared branch on the primary");
    wait_caught_up(&mut p, &mut root_conn(cluster, old).await, old).await;
    let mut o = root_conn(cluster, old).await;
    let rows: Vec<i32> = o
        .query("SELECT id FROM fo_xa.t ORDER BY id")
        .await
        .expect("rows");
    assert_eq!(rows, vec![1, 2], "{old}: the XA branches' rows");
}

/// Waits until `old` applied everything `primary` wrote, without error.
async fn wait_caught_up(primary: &mut mysql_async::Conn, old: &mut mysql_async::Conn, name: &str) {
    let pos: Option<String> = primary
        .query_first("SELECT @@GLOBAL.gtid_binlog_pos")
        .await
        .expect("primary position");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status: Option<mysql_async::Row> =
            old.query_first("SHOW SLAVE STATUS").await.expect("status");
        let get = |k: &str| {
            status
                .as_ref()
                .and_then(|r| r.get::<Option<String>, _>(k).flatten())
                .unwrap_or_default()
        };
        assert_eq!(
            (get("Last_SQL_Errno"), get("Last_IO_Errno")),
            ("0".to_string(), "0".to_string()),
            "{name} stopped replicating: {}{}",
            get("Last_SQL_Error"),
            get("Last_IO_Error")
        );
        let waited: Option<i64> = old
            .exec_first(
                "SELECT MASTER_GTID_WAIT(?, 1)",
                (pos.clone().unwrap_or_default(),),
            )
            .await
            .expect("wait");
        if waited == Some(0) {
            return;
        }
        assert!(Instant::now() < deadline, "{name} did not catch up");
    }
}

/// A rejoined old primary, once it applied all its primary wrote, holds
/// the same rows (`CHECKSUM TABLE` of every table of the shard's data) and
/// the same prepared XA branches.
pub async fn same_rows_as_primary(cluster: &TestCluster, primary: &str, name: &str) {
    let mut p = root_conn(cluster, primary).await;
    let mut old = root_conn(cluster, name).await;
    wait_caught_up(&mut p, &mut old, name).await;
    let tables: Vec<String> = p
        .query(
            "SELECT CONCAT(table_schema, '.', table_name) FROM information_schema.tables \
             WHERE table_schema LIKE 'tsr\\_%' OR table_schema = 'fo_xa' ORDER BY 1",
        )
        .await
        .expect("tables");
    assert!(!tables.is_empty(), "no tables on {primary}");
    for t in tables {
        let sql = format!("CHECKSUM TABLE {t}");
        let a: Option<(String, Option<i64>)> = p.query_first(&sql).await.expect("checksum");
        let b: Option<(String, Option<i64>)> = old.query_first(&sql).await.expect("checksum");
        assert_eq!(a, b, "{t}: {name} holds other rows than {primary}");
    }
    assert_eq!(
        prepared(&mut old).await,
        prepared(&mut p).await,
        "{name} holds other prepared XA branches than {primary}"
    );
}

async fn prepared(c: &mut mysql_async::Conn) -> Vec<String> {
    let rows: Vec<mysql_async::Row> = c.query("XA RECOVER").await.expect("XA RECOVER");
    let mut xids: Vec<String> = rows
        .iter()
        .filter_map(|r| r.get::<String, _>("data"))
        .collect();
    xids.sort();
    xids
}

/// Whether a server replicates (both threads running).
pub async fn replicates(c: &mut mysql_async::Conn) -> bool {
    let status: Option<mysql_async::Row> =
        c.query_first("SHOW SLAVE STATUS").await.expect("status");
    let get = |k: &str| {
        status
            .as_ref()
            .and_then(|r| r.get::<Option<String>, _>(k).flatten())
            .unwrap_or_default()
    };
    get("Slave_SQL_Running") == "Yes" && get("Slave_IO_Running") == "Yes"
}

/// A connection to meta's primary (the writable one of its servers).
pub async fn meta_conn(cluster: &TestCluster) -> mysql_async::Conn {
    let login = &cluster.role("meta")[0];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        for n in cluster.nodes.iter().filter(|n| n.name.starts_with("meta")) {
            let opts = tests::meta_opts(login, n.port);
            // Bounded: a stopped server accepts the connection and never
            // answers.
            let writable = async {
                let mut c = mysql_async::Conn::new(opts).await.ok()?;
                let ro = c.query_first::<u8, _>("SELECT @@read_only").await.ok()?;
                (ro == Some(0)).then_some(c)
            };
            if let Ok(Some(c)) = tokio::time::timeout(Duration::from_secs(1), writable).await {
                return c;
            }
        }
        assert!(Instant::now() < deadline, "no writable meta server");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The server serving `shard` now (meta's primary for 0): (port, node).
pub async fn primary_of(cluster: &TestCluster, shard: u32) -> (u16, String) {
    let mut meta = meta_conn(cluster).await;
    let port: u16 = if shard == 0 {
        meta.query_first("SELECT port FROM meta_primary WHERE id = 1")
            .await
            .expect("meta primary")
            .expect("meta_primary row")
    } else {
        meta.exec_first("SELECT port FROM shards WHERE shard_id = ?", (shard,))
            .await
            .expect("primary")
            .expect("shard in meta")
    };
    let node = cluster
        .nodes
        .iter()
        .find(|n| n.port == port)
        .expect("primary's node")
        .name
        .clone();
    (port, node)
}

/// The old primaries, restarted (the killed ones) or resumed (the stopped
/// ones), shards' and meta's: first with rejoining off, read-only and
/// failed (shard 1's then given the XA states a kill can leave); then
/// rejoined: every one follows its successor as a replica, a shard's with
/// the same rows and prepared branches (shard 1's reconciled, not rebuilt);
/// the cluster keeps answering.
pub async fn old_primaries_rejoin(cluster: &TestCluster, killed: &[String], stopped: &[String]) {
    print!(
        "{}",
        cluster.restart_missing_with(&[("TESSERA_REJOIN_OLD_PRIMARIES", "0")])
    );
    let port_of = |name: &str| {
        cluster
            .nodes
            .iter()
            .find(|n| n.name == name)
            .expect("node")
            .port
    };
    let shard_of = |name: &str| -> u32 {
        name.trim_start_matches("shard")
            .split('r')
            .next()
            .and_then(|d| d.parse().ok())
            .expect("shard number")
    };
    let is_shard = |n: &&String| n.starts_with("shard");
    let mut up = vec![];
    for name in killed.iter().filter(is_shard) {
        assert_eq!(state_of(cluster, port_of(name)).await, "failed", "{name}");
        let Ok(mut s) = try_root_conn(cluster, name).await else {
            let log =
                std::fs::read_to_string(cluster.dir.join(name).join("node.log")).expect("node log");
            assert!(
                log.contains("Cannot truncate the binary log"),
                "{name}, killed, is down and was not refused by its recovery"
            );
            println!("{name} is down: MariaDB's recovery refused it");
            continue;
        };
        assert!(!replicates(&mut s).await, "{name} is failed but replicates");
        up.push(name.to_string());
    }
    let xa_old = up.iter().find(|n| shard_of(n) == 1).cloned();
    if let Some(old) = &xa_old {
        break_xa_cases(cluster, old).await;
    }
    let stopped_shard = stopped.iter().find(is_shard).expect("a stopped shard");
    let stopped_primary = primary_of(cluster, shard_of(stopped_shard)).await.1;
    prepare_before_copy(cluster, &stopped_primary).await;
    let out = cluster.restart_missing_with(&[]);
    print!("{out}");
    // Every old primary follows its successor: the killed ones reconciled
    // and rewound (or rebuilt, when MariaDB's recovery refused them), a
    // stopped one, which kept what its killed clients' commits wrote,
    // rebuilt from its primary.
    for name in killed.iter().chain(stopped).filter(is_shard) {
        assert_eq!(
            state_of(cluster, port_of(name)).await,
            "replica",
            "{name} did not rejoin: {out}"
        );
        let primary = primary_of(cluster, shard_of(name)).await.1;
        same_rows_as_primary(cluster, &primary, name).await;
    }
    if let Some(old) = &xa_old {
        assert!(
            out.contains(&format!(
                "{old} was a primary before a failover: its XA branches made"
            )) && !out.contains(&format!("{old} is rebuilt")),
            "{old} was not reconciled: {out}"
        );
        let primary = primary_of(cluster, 1).await.1;
        check_xa_cases(cluster, &primary, old).await;
    }
    if out.contains(&format!("{stopped_shard} is rebuilt")) {
        check_copied_branch(cluster, &stopped_primary, stopped_shard).await;
    }
    for name in killed.iter().chain(stopped) {
        let mut s = root_conn(cluster, name).await;
        let ro: Option<u8> = s
            .query_first("SELECT @@read_only")
            .await
            .expect("read_only");
        assert_eq!(ro, Some(1), "{name}, an old primary, came back writable");
        assert!(
            replicates(&mut s).await,
            "{name}, an old primary, does not follow its successor: {out}"
        );
    }
    let c = cluster.connect(2).await;
    c.execute("UPDATE fo_rto SET n = n + 1", &[])
        .await
        .expect("a write after the old primaries came back");
}

/// A shard server's state as meta records it.
async fn state_of(cluster: &TestCluster, port: u16) -> String {
    let mut meta = meta_conn(cluster).await;
    meta.exec_first("SELECT state FROM shard_replicas WHERE port = ?", (port,))
        .await
        .expect("replica state")
        .unwrap_or_default()
}
