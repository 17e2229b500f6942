//! Execution: DataFusion plans made once, results streamed, EXPLAIN
//! ANALYZE read from the plan.

use super::*;

/// A DataFusion statement prepared once is planned once (`SHOW
/// tessera.logical_plans` counts the node's logical plans) and runs in
/// whatever transaction the session is in at Execute; results stream: rows
/// computed before an error late in the result reach the client before the
/// error, as in PostgreSQL, and the error fails the transaction.
pub(crate) async fn plans_once_and_streams(cluster: &TestCluster) {
    use tests::wire::{Reply, WireClient};
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS stream_t; CREATE TABLE stream_t (id bigint PRIMARY KEY, v int) WITH (partitions = 3)",
    )
    .await
    .unwrap();
    for chunk in 0..60 {
        let values: Vec<String> = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                format!("({id}, {})", id % 7)
            })
            .collect();
        c.batch_execute(&format!(
            "INSERT INTO stream_t VALUES {}",
            values.join(", ")
        ))
        .await
        .unwrap();
    }
    async fn logical_plans(c: &tokio_postgres::Client) -> u64 {
        let rows = c.simple_query("SHOW tessera.logical_plans").await.unwrap();
        rows.iter()
            .find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0)?.parse().ok(),
                _ => None,
            })
            .expect("a count")
    }
    // GROUP BY over every partition: the DataFusion path.
    let before = logical_plans(&c).await;
    let q = c
        .prepare("SELECT v, count(*) AS n FROM stream_t WHERE id >= $1 GROUP BY v ORDER BY v")
        .await
        .unwrap();
    let after_prepare = logical_plans(&c).await;
    assert_eq!(after_prepare, before + 1, "Parse makes one logical plan");
    for _ in 0..5 {
        let rows = c.query(&q, &[&0i64]).await.unwrap();
        assert_eq!(rows.len(), 7);
        let total: i64 = rows.iter().map(|r| r.get::<_, i64>(1)).sum();
        assert_eq!(total, 60_000);
    }
    // The plan made in autocommit reads the transaction's own write.
    c.batch_execute("BEGIN; INSERT INTO stream_t VALUES (100000, 3)")
        .await
        .unwrap();
    let rows = c.query(&q, &[&0i64]).await.unwrap();
    let total: i64 = rows.iter().map(|r| r.get::<_, i64>(1)).sum();
    assert_eq!(total, 60_001, "the prepared plan sees the open transaction");
    c.batch_execute("ROLLBACK").await.unwrap();
    let rows = c.query(&q, &[&59_990i64]).await.unwrap();
    let total: i64 = rows.iter().map(|r| r.get::<_, i64>(1)).sum();
    assert_eq!(total, 10);
    assert_eq!(
        logical_plans(&c).await,
        after_prepare,
        "executions make no logical plan"
    );

    // Streaming (three partitions, one per shard): 1 / (id - 59999) fails
    // at the last row of its partition
    // (each partition is read in key order, ~20,000 rows in batches of
    // 8192), so the rows of earlier batches reach the client first; a
    // collected result would send none.
    let n = &cluster.role("compute")[0];
    let mut w = WireClient::connect(n.port, &n.user, &n.password)
        .await
        .unwrap();
    let replies = w
        .query("SELECT id, 1 / (id - 59999) FROM stream_t")
        .await
        .unwrap();
    let rows_before_error = replies
        .iter()
        .take_while(|r| !matches!(r, Reply::Error(_)))
        .filter(|r| **r == Reply::Row)
        .count();
    assert!(
        rows_before_error > 0,
        "rows before the error: {rows_before_error} ({:?})",
        replies.iter().rev().take(3).collect::<Vec<_>>()
    );
    assert!(
        replies.contains(&Reply::Error("22012".into())),
        "{:?}",
        replies.iter().rev().take(3).collect::<Vec<_>>()
    );
    // In a transaction block the error fails it; the session keeps working.
    let replies = w
        .query("BEGIN; SELECT id, 1 / (id - 59999) FROM stream_t")
        .await
        .unwrap();
    assert!(replies.contains(&Reply::Error("22012".into())));
    let replies = w.query("SELECT 1").await.unwrap();
    assert!(
        replies.contains(&Reply::Error("25P02".into())),
        "{replies:?}"
    );
    let replies = w.query("ROLLBACK").await.unwrap();
    assert!(!replies.iter().any(|r| matches!(r, Reply::Error(_))));
    // A streamed statement in a transaction, then another in the same
    // simple query: the first is collected before the second runs.
    let replies = w
        .query("BEGIN; SELECT id, v / 1 FROM stream_t WHERE v = 1; SELECT count(*) FROM stream_t; COMMIT")
        .await
        .unwrap();
    assert!(
        !replies.iter().any(|r| matches!(r, Reply::Error(_))),
        "{replies:?}"
    );
    assert_eq!(
        replies.iter().filter(|r| **r == Reply::Row).count(),
        8572 + 1
    );
    // EXPLAIN ANALYZE reads each shard scan's rows, bytes and time from
    // the plan's ShardScanExec metrics.
    let lines: Vec<String> = c
        .simple_query("EXPLAIN ANALYZE SELECT id, v / 1 FROM stream_t WHERE v = 1")
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("ShardScanExec")),
        "{lines:#?}"
    );
    let scanned: usize = lines
        .iter()
        .skip_while(|l| !l.starts_with("shard_scans"))
        .filter_map(|l| {
            l.split("[rows=")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert_eq!(scanned, 8572, "{lines:#?}");
    c.batch_execute("DROP TABLE stream_t").await.unwrap();
}

/// The node's sessions share one compiled statement per text (`SHOW
/// tessera.statement_cache`): a second session's Parse of a text the
/// first prepared is a hit; a simple-protocol statement of a cached shape
/// (other literals) is one too; DDL makes the next Parse a miss, and the
/// plan made again answers for the new table.
pub(crate) async fn statements_compiled_once_per_node(cluster: &TestCluster) {
    async fn stats(c: &tokio_postgres::Client) -> (u64, u64) {
        let rows = c
            .simple_query("SHOW tessera.statement_cache")
            .await
            .unwrap();
        let text = rows
            .iter()
            .find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .expect("a row");
        let field = |name: &str| -> u64 {
            text.split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in {text}"))
        };
        (field("hits"), field("misses"))
    }
    let a = cluster.connect(1).await;
    let b = cluster.connect(1).await;
    a.batch_execute(
        "DROP TABLE IF EXISTS cache_t; CREATE TABLE cache_t (id int PRIMARY KEY, v text);\
         INSERT INTO cache_t VALUES (1, 'one'), (2, 'two')",
    )
    .await
    .unwrap();
    let sql = "SELECT v FROM cache_t WHERE id = $1";
    let (h0, m0) = stats(&a).await;
    let qa = a.prepare(sql).await.unwrap();
    let (h1, m1) = stats(&a).await;
    assert_eq!((h1, m1), (h0, m0 + 1), "the first Parse compiles");
    let qb = b.prepare(sql).await.unwrap();
    let (h2, m2) = stats(&b).await;
    assert_eq!((h2, m2), (h1 + 1, m1), "another session's Parse is a hit");
    let v: String = b.query_one(&qb, &[&2i32]).await.unwrap().get(0);
    assert_eq!(v, "two");
    let v: String = a.query_one(&qa, &[&1i32]).await.unwrap().get(0);
    assert_eq!(v, "one");

    // Simple protocol: the shape is compiled once, other literals hit it.
    async fn one(c: &tokio_postgres::Client, id: i32) -> String {
        let rows = c
            .simple_query(&format!("SELECT v FROM cache_t WHERE id = {id}"))
            .await
            .unwrap();
        rows.iter()
            .find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .unwrap_or_default()
    }
    assert_eq!(one(&a, 1).await, "one");
    let (h3, _) = stats(&a).await;
    assert_eq!(one(&b, 2).await, "two");
    let (h4, _) = stats(&b).await;
    assert_eq!(h4, h3 + 1, "another literal of a cached shape is a hit");

    // DDL: the cached plan is of another catalog version.
    a.batch_execute(
        "DROP TABLE cache_t; CREATE TABLE cache_t (id int PRIMARY KEY, v text);\
         INSERT INTO cache_t VALUES (1, 'new')",
    )
    .await
    .unwrap();
    let (h5, m5) = stats(&b).await;
    let qc = b.prepare(sql).await.unwrap();
    let (h6, m6) = stats(&b).await;
    assert_eq!((h6, m6), (h5, m5 + 1), "after DDL the Parse compiles again");
    let v: String = b.query_one(&qc, &[&1i32]).await.unwrap().get(0);
    assert_eq!(v, "new");
    a.batch_execute("DROP TABLE cache_t").await.unwrap();
}

/// Shards on the compute node's host are reached over their Unix sockets
/// (`storage_adapter::local_socket`): after statements that reach every
/// shard, each shard sees the cluster's account connected from
/// `localhost` (a socket), not only from `127.0.0.1` (TCP).
pub(crate) async fn shards_over_local_sockets(cluster: &TestCluster) {
    use mysql_async::prelude::Queryable;
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS sock_t; CREATE TABLE sock_t (id int PRIMARY KEY, v int);
         INSERT INTO sock_t SELECT g AS id, g AS v FROM generate_series(1, 60) g",
    )
    .await
    .unwrap();
    // The switch happens in the background at the node's start; give a
    // slow machine time for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    for shard in 1..=3 {
        let mut conn = cluster.shard_conn(shard).await;
        loop {
            let n: i64 = c
                .query_one("SELECT count(*) FROM sock_t", &[])
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 60);
            let local: Option<i64> = conn
                .query_first(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
                     WHERE USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1) AND HOST = 'localhost'",
                )
                .await
                .unwrap();
            if local.unwrap_or(0) > 0 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "shard {shard} has no connection over its Unix socket"
            );
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
    }
    c.batch_execute("DROP TABLE sock_t").await.unwrap();
}
