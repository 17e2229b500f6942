//! Consistent reads across shards: totals read while money moves between
//! accounts on different shards are always right (and are not with the
//! barrier off, so the test can fail).

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const ACCOUNTS: i32 = 60;

/// How a reader reads the total.
#[derive(Clone, Copy, Debug)]
enum Way {
    /// `sum()` in one statement, simple protocol.
    Simple,
    /// The same, prepared (extended protocol).
    Prepared,
    /// Through DataFusion's scans (`tessera.pushdown = off`).
    DataFusion,
    /// A REPEATABLE READ transaction reading the accounts one by one.
    RepeatableRead,
    /// `INSERT ... SELECT sum() ... RETURNING` in autocommit: the read
    /// side of a write.
    InsertSelect,
    /// A READ COMMITTED transaction that has written on one shard, then
    /// sums: that shard is read through its branch, the others through
    /// the cut.
    AfterWrite,
    /// `COPY snap_acct (balance) TO STDOUT`, summed by the client.
    CopyTo,
}

const READS: [Way; 7] = [
    Way::Simple,
    Way::Prepared,
    Way::DataFusion,
    Way::RepeatableRead,
    Way::InsertSelect,
    Way::AfterWrite,
    Way::CopyTo,
];

async fn total(c: &tokio_postgres::Client, how: Way, n: u64) -> Result<i64, tokio_postgres::Error> {
    match how {
        Way::AfterWrite => {
            let r = async {
                c.batch_execute(&format!(
                    "BEGIN; INSERT INTO snap_sums VALUES ({}, 0)",
                    1_000_000_000 + n
                ))
                .await?;
                c.query_one("SELECT sum(balance)::bigint FROM snap_acct", &[])
                    .await
            }
            .await;
            c.batch_execute("ROLLBACK").await?;
            Ok(r?.get(0))
        }
        Way::CopyTo => {
            use futures::StreamExt;
            let stream = c
                .copy_out("COPY snap_acct (balance) TO STDOUT")
                .await?;
            futures::pin_mut!(stream);
            let mut text = Vec::new();
            while let Some(chunk) = stream.next().await {
                text.extend_from_slice(&chunk?);
            }
            Ok(String::from_utf8_lossy(&text)
                .lines()
                .map(|l| l.trim().parse::<i64>().unwrap_or(i64::MIN / 4))
                .sum())
        }
        Way::InsertSelect => Ok(c
            .query_one(
                "INSERT INTO snap_sums SELECT $1::bigint, sum(balance)::bigint FROM snap_acct RETURNING total",
                &[&(n as i64)],
            )
            .await?
            .get(0)),
        Way::Simple | Way::DataFusion => {
            let rows = c
                .simple_query("SELECT sum(balance)::bigint FROM snap_acct")
                .await?;
            Ok(rows
                .iter()
                .find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => {
                        r.get(0).and_then(|v| v.parse().ok())
                    }
                    _ => None,
                })
                .unwrap_or(-1))
        }
        Way::Prepared => Ok(c
            .query_one(
                "SELECT sum(balance)::bigint FROM snap_acct WHERE balance > $1",
                &[&-1_000_000i64],
            )
            .await?
            .get(0)),
        Way::RepeatableRead => {
            c.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                .await?;
            let st = c
                .prepare("SELECT balance FROM snap_acct WHERE id = $1")
                .await?;
            let mut sum = 0i64;
            for id in 0..ACCOUNTS {
                let r = c.query_one(&st, &[&id]).await;
                match r {
                    Ok(r) => sum += r.get::<_, i64>(0),
                    Err(e) => {
                        let _ = c.batch_execute("ROLLBACK").await;
                        return Err(e);
                    }
                }
            }
            c.batch_execute("COMMIT").await?;
            Ok(sum)
        }
    }
}

/// Transfers between accounts on every shard (two partitions on each, so
/// some single-shard commits change two partitions a read reads
/// separately) from six clients while one
/// reader per way of reading sums the balances. Returns (reads, wrong
/// totals) per way. With `consistent` off the readers run with
/// `tessera.consistent_reads = off` and read until they have seen a wrong
/// total (or `max` has passed).
async fn bank_with_readers(
    cluster: &TestCluster,
    readers_on: bool,
    consistent: bool,
    max: std::time::Duration,
) -> Vec<(Way, u64, u64)> {
    let setup = cluster.connect(0).await;
    setup
        .batch_execute(
            "DROP TABLE IF EXISTS snap_acct, snap_sums;
             CREATE TABLE snap_sums (n bigint PRIMARY KEY, total bigint);
             CREATE TABLE snap_acct (id int PRIMARY KEY, balance bigint NOT NULL)
                 WITH (partitions = 6)",
        )
        .await
        .unwrap();
    let values: Vec<String> = (0..ACCOUNTS).map(|i| format!("({i}, 1000)")).collect();
    setup
        .batch_execute(&format!(
            "INSERT INTO snap_acct VALUES {}",
            values.join(",")
        ))
        .await
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = vec![];
    for w in 0..6u64 {
        let stop = stop.clone();
        let c = cluster.connect(w as usize % 3).await;
        writers.push(tokio::spawn(async move {
            let mut rng = faults::Rng(0x2545_F491_4F6C_DD1D ^ ((w + 1) * 104_729));
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let src = rng.next(ACCOUNTS as u64) as i32;
                let dst = (src + 1 + rng.next(ACCOUNTS as u64 - 1) as i32) % ACCOUNTS;
                // Rows locked in id order: no deadlock across shards (those
                // wait out the lock timeout).
                let amount = 1 + rng.next(50) as i32;
                let (a, b, da) = if src < dst {
                    (src, dst, -amount)
                } else {
                    (dst, src, amount)
                };
                let r = c
                    .batch_execute(&format!(
                        "BEGIN;
                         UPDATE snap_acct SET balance = balance + ({da}) WHERE id = {a};
                         UPDATE snap_acct SET balance = balance - ({da}) WHERE id = {b};
                         COMMIT"
                    ))
                    .await;
                match r {
                    Ok(()) => n += 1,
                    Err(_) => {
                        let _ = c.batch_execute("ROLLBACK").await;
                    }
                }
            }
            n
        }));
    }
    let found_wrong = Arc::new(AtomicBool::new(false));
    let mut readers = vec![];
    let ways: &[Way] = if readers_on { &READS } else { &[] };
    for (i, &how) in ways.iter().enumerate() {
        let stop = stop.clone();
        let found_wrong = found_wrong.clone();
        let c = cluster.connect(i % 3).await;
        if !consistent {
            c.batch_execute("SET tessera.consistent_reads = off")
                .await
                .unwrap();
        }
        if matches!(how, Way::DataFusion) {
            c.batch_execute("SET tessera.pushdown = off").await.unwrap();
        }
        readers.push(tokio::spawn(async move {
            let (mut reads, mut wrong, mut errors) = (0u64, 0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                match total(&c, how, reads + errors).await {
                    Ok(t) => {
                        reads += 1;
                        if t != ACCOUNTS as i64 * 1000 {
                            wrong += 1;
                            found_wrong.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        assert!(errors < 100, "{how:?} reads keep failing: {e}");
                    }
                }
            }
            (how, reads, wrong)
        }));
    }
    let start = std::time::Instant::now();
    // TESSERA_SNAPSHOT_SECS lengthens the consistent runs (CI: 6 s).
    let min = std::time::Duration::from_secs(
        std::env::var("TESSERA_SNAPSHOT_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(6),
    );
    while start.elapsed() < max
        && (start.elapsed() < min || (!consistent && !found_wrong.load(Ordering::Relaxed)))
    {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut transfers = 0;
    for w in writers {
        transfers += w.await.unwrap();
    }
    let mut out = vec![];
    for r in readers {
        out.push(r.await.unwrap());
    }
    let t: i64 = setup
        .query_one("SELECT sum(balance)::bigint FROM snap_acct", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(t, ACCOUNTS as i64 * 1000, "money created or destroyed");
    println!(
        "readers={readers_on} consistent_reads={consistent}: {transfers} transfers in {:.1} s ({:.0}/s); reads (way, reads, wrong): {out:?}",
        start.elapsed().as_secs_f64(),
        transfers as f64 / start.elapsed().as_secs_f64()
    );
    assert!(transfers > 50, "too few transfers went through");
    setup
        .batch_execute("DROP TABLE snap_acct, snap_sums")
        .await
        .ok();
    out
}

/// Two reads of one shard in one statement of a REPEATABLE READ
/// transaction share its branch's connection: a hash join whose probe
/// side (streaming) holds the connection while the join waits for its
/// build side of the same shard must not wait for ever (the probe side
/// reads its rest off the connection and lets it go: `shard_router::txn`).
async fn two_reads_of_one_branch(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS snap_big, snap_small;
         CREATE TABLE snap_big (id int PRIMARY KEY, v int);
         CREATE TABLE snap_small (id int PRIMARY KEY, v int);
         INSERT INTO snap_big SELECT g AS id, g AS v FROM generate_series(1, 90000) g;
         INSERT INTO snap_small SELECT g AS id, g AS v FROM generate_series(1, 1000) g;
         SET tessera.pushdown = off; SET statement_timeout = '60s'",
    )
    .await
    .unwrap();
    for level in ["REPEATABLE READ", "SERIALIZABLE", "READ COMMITTED"] {
        c.batch_execute(&format!("BEGIN ISOLATION LEVEL {level}"))
            .await
            .unwrap();
        if level == "READ COMMITTED" {
            // A branch on every shard (written), read through.
            c.batch_execute("UPDATE snap_small SET v = v WHERE id IN (1, 2, 3, 4, 5, 6)")
                .await
                .unwrap();
        }
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM snap_big b JOIN (SELECT * FROM snap_small ORDER BY id LIMIT 10) s ON b.v = s.v",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{level}: {e}"))
            .get(0);
        assert_eq!(n, 10, "{level}");
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM snap_big b JOIN snap_big b2 ON b.v = b2.id WHERE b.id % 7 = 0",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{level}: {e}"))
            .get(0);
        assert_eq!(n, 90000 / 7, "{level}");
        c.batch_execute("COMMIT").await.unwrap();
    }
    c.batch_execute(
        "DROP TABLE snap_big, snap_small; RESET tessera.pushdown; RESET statement_timeout",
    )
    .await
    .unwrap();
}

/// A read abandoned while its shard statement runs (the probe side of a
/// hash join whose build side is empty, a LIMIT met) has that statement
/// killed; the connection, which the next read of the shard takes (a
/// cut's, a branch's), must answer that read and not the rest of the
/// abandoned one's reply. Dropped midway, a query left the connection one
/// reply behind: a later SELECT read an OK packet as an empty result and a
/// shard's rows went missing without an error.
pub(crate) async fn abandoned_reads(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS snap_probe, snap_none;
         CREATE TABLE snap_probe (id int PRIMARY KEY, v int);
         CREATE TABLE snap_none (id int PRIMARY KEY);
         INSERT INTO snap_probe SELECT g AS id, g AS v FROM generate_series(1, 3000) g;
         SET tessera.pushdown = off",
    )
    .await
    .unwrap();
    for begin in ["", "BEGIN ISOLATION LEVEL REPEATABLE READ"] {
        c.batch_execute(begin).await.unwrap();
        for i in 0..60 {
            let abandon = if i % 2 == 0 {
                "SELECT p.id FROM snap_none n JOIN snap_probe p ON p.id = n.id"
            } else {
                "SELECT id FROM snap_probe LIMIT 1"
            };
            c.query(abandon, &[]).await.unwrap();
            let n: i64 = c
                .query_one(
                    "SELECT count(*) FROM snap_probe p LEFT JOIN snap_none n ON n.id = p.id WHERE n.id IS NULL",
                    &[],
                )
                .await
                .unwrap_or_else(|e| panic!("{begin:?} round {i}: {e}"))
                .get(0);
            assert_eq!(
                n, 3000,
                "{begin:?} round {i}: rows missing after an abandoned read"
            );
        }
        if !begin.is_empty() {
            c.batch_execute("COMMIT").await.unwrap();
        }
    }
    c.batch_execute("DROP TABLE snap_probe, snap_none; RESET tessera.pushdown")
        .await
        .unwrap();
}

/// A cut's shard connections are kept inside their snapshots for the next
/// cut (`shard_router::txn::reserve`): each new cut still sees every write
/// committed before it, no pooled connection is left inside an old snapshot
/// (a point select sees the row just written), and a DDL right after a cut
/// does not wait on the kept snapshots' metadata locks for long.
pub(crate) async fn kept_snapshots(cluster: &TestCluster) {
    let a = cluster.connect(0).await;
    let b = cluster.connect(0).await;
    a.batch_execute(
        "DROP TABLE IF EXISTS snap_kept;
         CREATE TABLE snap_kept (id int PRIMARY KEY, v int);
         INSERT INTO snap_kept SELECT g AS id, g AS v FROM generate_series(1, 30) g",
    )
    .await
    .unwrap();
    for i in 0..60i32 {
        let n: i64 = a
            .query_one("SELECT count(*) FROM snap_kept", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 30 + i as i64, "round {i}: a cut missed a committed row");
        b.execute("INSERT INTO snap_kept VALUES ($1, $2)", &[&(100 + i), &i])
            .await
            .unwrap();
        b.execute("UPDATE snap_kept SET v = $1 WHERE id = 1", &[&i])
            .await
            .unwrap();
        let v: Option<i32> = a
            .query_opt("SELECT v FROM snap_kept WHERE id = $1", &[&(100 + i)])
            .await
            .unwrap()
            .map(|r| r.get(0));
        assert_eq!(
            v,
            Some(i),
            "round {i}: a point select missed the row just written"
        );
        let v1: i32 = a
            .query_one("SELECT v FROM snap_kept WHERE id = 1", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(v1, i, "round {i}: a point select read an old version");
    }
    a.query_one("SELECT count(*) FROM snap_kept", &[])
        .await
        .unwrap();
    let ddl = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        b.batch_execute("ALTER TABLE snap_kept ADD COLUMN w int; DROP TABLE snap_kept"),
    )
    .await
    .expect("a DDL after a cut waited for the kept snapshots");
    ddl.unwrap();
}

/// More distributed commits at once on one node than its meta pool has
/// connections: each holds the barrier on a connection of its own pool
/// while it records its decision through the other (from one pool, 64
/// commits holding the barrier waited for ever for a 65th connection).
/// The barrier is held exclusively for 3 s first, so the commits queue
/// for it and then go on together.
async fn many_committers(cluster: &TestCluster) {
    use mysql_async::prelude::Queryable;
    const CLIENTS: i32 = 150;
    let setup = cluster.connect(0).await;
    setup
        .batch_execute(&format!(
            "DROP TABLE IF EXISTS snap_many;
             CREATE TABLE snap_many (id int PRIMARY KEY, n int NOT NULL);
             INSERT INTO snap_many SELECT g AS id, 0 AS n FROM generate_series(0, {}) g",
            2 * CLIENTS - 1
        ))
        .await
        .unwrap();
    let mut clients = vec![];
    for _ in 0..CLIENTS {
        clients.push(cluster.connect(0).await);
    }
    let mut meta = cluster.meta_conn().await;
    meta.query_drop("START TRANSACTION; SELECT id FROM snapshot_barrier WHERE id = 1 FOR UPDATE")
        .await
        .unwrap();
    let mut tasks = vec![];
    for (i, c) in (0..CLIENTS).zip(clients) {
        tasks.push(tokio::spawn(async move {
            for _ in 0..5 {
                c.batch_execute(&format!(
                    "BEGIN;
                     UPDATE snap_many SET n = n + 1 WHERE id = {};
                     UPDATE snap_many SET n = n + 1 WHERE id = {};
                     COMMIT",
                    2 * i,
                    2 * i + 1
                ))
                .await
                .unwrap();
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    meta.query_drop("ROLLBACK").await.unwrap();
    let all = futures::future::join_all(tasks);
    let done = tokio::time::timeout(std::time::Duration::from_secs(180), all)
        .await
        .expect("distributed commits of 150 clients of one node did not finish");
    for d in done {
        d.unwrap();
    }
    let n: i64 = setup
        .query_one("SELECT sum(n)::bigint FROM snap_many", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2 * 5 * CLIENTS as i64);
    setup.batch_execute("DROP TABLE snap_many").await.unwrap();
}

/// Zero wrong totals with consistent reads (the default), on every way of
/// reading; wrong totals found with them off.
pub(crate) async fn consistent_reads(cluster: &TestCluster) {
    many_committers(cluster).await;
    two_reads_of_one_branch(cluster).await;
    // The commit rate without readers, for the cost of the barrier.
    bank_with_readers(cluster, false, true, std::time::Duration::from_secs(6)).await;
    let on = bank_with_readers(cluster, true, true, std::time::Duration::from_secs(3600)).await;
    for (how, reads, wrong) in &on {
        assert!(*reads > 5, "{how:?}: too few reads ({reads})");
        assert_eq!(*wrong, 0, "{how:?}: {wrong} wrong totals of {reads}");
    }
    let off = bank_with_readers(cluster, true, false, std::time::Duration::from_secs(40)).await;
    let wrong: u64 = off.iter().map(|r| r.2).sum();
    assert!(
        wrong > 0,
        "with consistent reads off no wrong total was seen: the test cannot tell"
    );
}
