//! A shard without replicas restarted after a crash gets back the XA
//! branches its binary log holds but its engine lost (issue 34's
//! reconciliation, `cluster/rewind.rs`): a branch is prepared and logged,
//! then rolled back unlogged (the state a kill leaves when the engine had
//! not made its prepare durable), the server is killed and `cluster up`
//! restarts it; the branch must be prepared again, and commit.

use mysql_async::prelude::*;
use tests::TestCluster;

const XID: &str = "'fo-crash'";

async fn root(cluster: &TestCluster, node: &str) -> mysql_async::Conn {
    let sock = cluster.dir.join(node).join("mysqld.sock");
    let opts = mysql_async::OptsBuilder::default()
        .socket(Some(sock.to_string_lossy().to_string()))
        .user(Some("root"));
    mysql_async::Conn::new(opts)
        .await
        .expect("root on the socket")
}

async fn run(c: &mut mysql_async::Conn, sql: &[String]) {
    for s in sql {
        c.query_drop(s).await.expect(s);
    }
}

pub(crate) async fn lost_prepare_after_crash(cluster: &TestCluster) {
    let mut c = root(cluster, "shard1").await;
    run(
        &mut c,
        &[
            "CREATE DATABASE IF NOT EXISTS fo_crash".into(),
            "CREATE TABLE IF NOT EXISTS fo_crash.t (id int PRIMARY KEY) ENGINE=InnoDB".into(),
            format!("XA START {XID}"),
            "INSERT INTO fo_crash.t VALUES (1)".into(),
            format!("XA END {XID}"),
            format!("XA PREPARE {XID}"),
        ],
    )
    .await;
    drop(c);
    let mut c = root(cluster, "shard1").await;
    run(
        &mut c,
        &[
            "SET SESSION sql_log_bin = 0".into(),
            format!("XA ROLLBACK {XID}"),
            // A rollback is not flushed by itself: a commit makes it
            // durable before the kill.
            "INSERT INTO fo_crash.t VALUES (2)".into(),
        ],
    )
    .await;
    drop(c);
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
    let mut c = root(cluster, "shard1").await;
    let prepared: Vec<mysql_async::Row> = c.query("XA RECOVER").await.expect("XA RECOVER");
    assert!(
        prepared
            .iter()
            .any(|r| r.get::<String, _>("data").as_deref() == Some("fo-crash")),
        "the branch is not prepared again after the restart"
    );
    run(&mut c, &[format!("XA COMMIT {XID}")]).await;
    let rows: Vec<i32> = c
        .query("SELECT id FROM fo_crash.t WHERE id = 1")
        .await
        .expect("rows");
    assert_eq!(rows, vec![1], "the branch's row after its commit");
    run(&mut c, &["DROP DATABASE fo_crash".into()]).await;
}
