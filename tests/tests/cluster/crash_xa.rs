//! A shard without replicas restarted after a crash gets back the XA
//! branches its binary log holds but its engine lost (issue 34's
//! reconciliation, `cluster/rewind.rs`): a branch is prepared and logged,
//! then rolled back unlogged (the state a kill leaves when the engine had
//! not made its prepare durable), the server is killed and `cluster up`
//! restarts it; the branch must be prepared again, and commit.

use mysql_async::prelude::*;
use tests::TestCluster;

use crate::rejoin::{commit_listed_branch, prepared_branch, root_conn, run_as_root};

const XID: &str = "'fo-crash'";

pub(crate) async fn lost_prepare_after_crash(cluster: &TestCluster) {
    let mut sql = vec![
        "CREATE DATABASE IF NOT EXISTS fo_crash".to_string(),
        "CREATE TABLE IF NOT EXISTS fo_crash.t (id int PRIMARY KEY) ENGINE=InnoDB".into(),
    ];
    sql.extend(prepared_branch(XID, "INSERT INTO fo_crash.t VALUES (1)"));
    run_as_root(cluster, "shard1", &sql).await;
    run_as_root(
        cluster,
        "shard1",
        &[
            "SET SESSION sql_log_bin = 0".into(),
            format!("XA ROLLBACK {XID}"),
            // A rollback is not flushed by itself: a commit makes it
            // durable before the kill.
            "INSERT INTO fo_crash.t VALUES (2)".into(),
        ],
    )
    .await;
    let pid: i32 = std::fs::read_to_string(cluster.dir.join("shard1").join("node.pid"))
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid");
    unsafe { libc::kill(pid, libc::SIGKILL) };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let out = cluster.restart_missing_with(&[]);
    assert!(
        out.contains("shard1: after its crash, its XA branches made what its binary log says"),
        "the lost prepare was not reconciled: {out}"
    );
    let mut c = root_conn(cluster, "shard1").await;
    commit_listed_branch(
        &mut c,
        "fo-crash",
        XID,
        "the branch is not prepared again after the restart",
    )
    .await;
    let rows: Vec<i32> = c
        .query("SELECT id FROM fo_crash.t WHERE id = 1")
        .await
        .expect("rows");
    assert_eq!(rows, vec![1], "the branch's row after its commit");
    c.query_drop("DROP DATABASE fo_crash")
        .await
        .expect("DROP DATABASE");
}

/// A transaction whose only writing branch is on one shard is prepared,
/// then committed, both steps in the shard's binary log under its XID
/// (`shard_router::txn::Participant::commit_alone`): MariaDB logs an
/// `XA COMMIT ... ONE PHASE` as an ordinary transaction, and after a crash
/// leaves its engine branch prepared with nothing in the log to say it
/// committed; Tessera's recovery then rolled back an acknowledged commit.
pub(crate) async fn single_writer_commit_is_logged(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS one_writer; CREATE TABLE one_writer (id int PRIMARY KEY, v int)",
    )
    .await
    .expect("table");
    let mut shards = vec![];
    for i in 1..=3 {
        let name = format!("shard{i}");
        let mut conn = root_conn(cluster, &name).await;
        let status: Option<mysql_async::Row> = conn
            .query_first("SHOW MASTER STATUS")
            .await
            .expect("status");
        let status = status.expect("the shard has a binary log");
        let file: String = status.get(0).expect("file");
        let pos: u64 = status.get(1).expect("position");
        shards.push((conn, file, pos));
    }
    c.batch_execute("BEGIN; INSERT INTO one_writer VALUES (1, 1); UPDATE one_writer SET v = 2 WHERE id = 1; COMMIT")
        .await
        .expect("a one-shard transaction");
    let mut statements = vec![];
    for (conn, file, pos) in &mut shards {
        let rows: Vec<mysql_async::Row> = conn
            .query(format!("SHOW BINLOG EVENTS IN '{file}' FROM {pos}"))
            .await
            .expect("events");
        statements.extend(rows.iter().filter_map(|r| r.get::<String, _>("Info")));
    }
    let starts = |p: &str| statements.iter().any(|s| s.starts_with(p));
    assert!(
        starts("XA PREPARE") && starts("XA COMMIT"),
        "the single writer was not prepared and committed as logged XA steps: {statements:?}"
    );
    assert!(
        !statements.iter().any(|s| s.contains("ONE PHASE")),
        "{statements:?}"
    );
    c.batch_execute("DROP TABLE one_writer")
        .await
        .expect("drop");
}
