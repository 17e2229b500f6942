//! Held reads (RFC 2026-12-03-oltp-round-trips, lever 4): a short plain
//! read of several shards runs its statements under the barrier's
//! exclusive hold instead of opening a snapshot on each shard first; one
//! that does not answer within its limit gives the barrier back (its
//! statements killed) and reads through snapshots, so it never keeps a
//! distributed commit waiting for long. The totals such reads give while
//! money moves are checked by `consistent_reads` (its fast-path ways).

use super::*;

/// `Com_begin` of every shard (a snapshot's opening is one
/// `START TRANSACTION`).
async fn begins(cluster: &TestCluster) -> u64 {
    let mut n = 0;
    for s in 1..=3 {
        let mut c = cluster.shard_conn(s).await;
        let v: Option<(String, u64)> = c
            .query_first("SHOW GLOBAL STATUS LIKE 'Com\\_begin'")
            .await
            .unwrap();
        n += v.map_or(0, |v| v.1);
    }
    n
}

/// A fast-path read of every partition (a `sum()` cast to bigint would be
/// DataFusion's).
async fn total(c: &tokio_postgres::Client) -> i64 {
    c.query_one("SELECT count(*) FROM held_acct WHERE balance = 1000", &[])
        .await
        .unwrap()
        .get(0)
}

pub(crate) async fn held_reads(cluster: &TestCluster) {
    let a = cluster.connect(0).await;
    a.batch_execute(
        "DROP TABLE IF EXISTS held_acct, held_pair;
         CREATE TABLE held_acct (id int PRIMARY KEY, balance bigint NOT NULL);
         INSERT INTO held_acct SELECT g, 1000 FROM generate_series(1, 60) g;
         CREATE TABLE held_pair (id int PRIMARY KEY, v int NOT NULL);
         INSERT INTO held_pair SELECT g, 0 FROM generate_series(1, 60) g",
    )
    .await
    .unwrap();
    assert_eq!(total(&a).await, 60);
    // Short reads of all three shards open no snapshot.
    let before = begins(cluster).await;
    for _ in 0..30 {
        assert_eq!(total(&a).await, 60);
    }
    let opened = begins(cluster).await - before;
    assert!(
        opened < 10,
        "30 reads of three shards opened {opened} snapshots: not held reads"
    );

    // A read stalled on one shard (its tables locked there) gives the
    // barrier back: a distributed commit meanwhile is not kept waiting.
    let mut shard1 = cluster.shard_conn(1).await;
    let tables: Vec<String> = shard1
        .query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'tsr_public' AND table_name LIKE 'held\\_acct\\_%'",
        )
        .await
        .unwrap();
    assert!(!tables.is_empty(), "held_acct has no partition on shard 1");
    let list: Vec<String> = tables
        .iter()
        .map(|t| format!("`tsr_public`.`{t}` WRITE"))
        .collect();
    shard1
        .query_drop(format!("LOCK TABLES {}", list.join(", ")))
        .await
        .unwrap();
    let reader = tokio::spawn(async move { total(&a).await });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!reader.is_finished(), "the read did not wait for the lock");
    let b = cluster.connect(1).await;
    let started = std::time::Instant::now();
    // Rows of the 60 on at least two shards: a distributed commit.
    b.batch_execute("BEGIN; UPDATE held_pair SET v = v + 1 WHERE id BETWEEN 1 AND 20; COMMIT")
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(3),
        "a distributed commit waited {took:?} for a stalled read"
    );
    tokio::time::sleep(std::time::Duration::from_secs(3).saturating_sub(took)).await;
    assert!(!reader.is_finished(), "the read did not wait for the lock");
    shard1.query_drop("UNLOCK TABLES").await.unwrap();
    let t = tokio::time::timeout(std::time::Duration::from_secs(20), reader)
        .await
        .expect("the stalled read never answered")
        .unwrap();
    assert_eq!(t, 60);
    let b_sum: i64 = b
        .query_one("SELECT sum(v)::bigint FROM held_pair", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(b_sum, 20);
    b.batch_execute("DROP TABLE held_acct, held_pair")
        .await
        .unwrap();
}
