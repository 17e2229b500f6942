//! Growing the cluster online (issue 33): a fourth shard added and the
//! cluster rebalanced, one shard drained and removed, and single moves
//! with the mover killed at each step, all while transfers between
//! accounts run and readers check the total.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use mysql_async::prelude::*;
use tests::TestCluster;

use super::external::{ExternalServer, ADMIN_PASSWORD, ADMIN_USER};

const ACCOUNTS: i64 = 3000;
const TOTAL: i64 = ACCOUNTS * 1000;

struct Load {
    stop: Arc<AtomicBool>,
    acknowledged: Arc<std::sync::Mutex<HashSet<i64>>>,
    wrong_reads: Arc<AtomicU64>,
    reads: Arc<AtomicU64>,
    retries: Arc<AtomicU64>,
    /// Set while a mover killed between its rename and its switch leaves
    /// a slot without its table until the next mover recovers it: 42P01
    /// is then the expected answer, counted in `unavailable`.
    outage: Arc<AtomicBool>,
    unavailable: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Transfers (each a transaction over two accounts and a log row) from
/// two writers per compute node, and one reader of the total per node.
async fn start_load(cluster: &TestCluster) -> Load {
    let load = Load {
        stop: Arc::new(AtomicBool::new(false)),
        acknowledged: Default::default(),
        wrong_reads: Default::default(),
        reads: Default::default(),
        retries: Default::default(),
        outage: Default::default(),
        unavailable: Default::default(),
        tasks: vec![],
    };
    let next = Arc::new(AtomicU64::new(1));
    let mut tasks = vec![];
    for node in 0..cluster.role("compute").len() {
        for w in 0..2u64 {
            let c = cluster.connect(node).await;
            let (stop, ack, next, retries) = (
                load.stop.clone(),
                load.acknowledged.clone(),
                next.clone(),
                load.retries.clone(),
            );
            let (outage, unavailable) = (load.outage.clone(), load.unavailable.clone());
            tasks.push(tokio::spawn(async move {
                let mut x = 7 + w * 13 + node as u64 * 101;
                while !stop.load(Ordering::Relaxed) {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let (a, b) = (
                        (x >> 20) as i64 % ACCOUNTS + 1,
                        (x >> 40) as i64 % ACCOUNTS + 1,
                    );
                    let id = next.fetch_add(1, Ordering::Relaxed) as i64;
                    let sql = format!(
                        "BEGIN; UPDATE grow_acct SET balance = balance - 3 WHERE id = {a}; \
                         UPDATE grow_acct SET balance = balance + 3 WHERE id = {b}; \
                         INSERT INTO grow_log VALUES ({id}, {a}, {b}); COMMIT"
                    );
                    match c.batch_execute(&sql).await {
                        Ok(()) => {
                            ack.lock().expect("ack").insert(id);
                        }
                        Err(e) => {
                            let _ = c.batch_execute("ROLLBACK").await;
                            let code = e.code().map(|c| c.code().to_string()).unwrap_or_default();
                            if code == "42P01" && outage.load(Ordering::Relaxed) {
                                unavailable.fetch_add(1, Ordering::Relaxed);
                                continue;
                            }
                            assert!(
                                code == "40001" || code == "40P01",
                                "a transfer failed with {code}: {e:?}"
                            );
                            retries.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }));
        }
        let c = cluster.connect(node).await;
        let (stop, wrong, reads) = (
            load.stop.clone(),
            load.wrong_reads.clone(),
            load.reads.clone(),
        );
        let (outage, unavailable) = (load.outage.clone(), load.unavailable.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                match c
                    .query_one("SELECT sum(balance)::bigint FROM grow_acct", &[])
                    .await
                {
                    Ok(r) => {
                        reads.fetch_add(1, Ordering::Relaxed);
                        if r.get::<_, i64>(0) != TOTAL {
                            wrong.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(e)
                        if outage.load(Ordering::Relaxed)
                            && e.code().is_some_and(|c| c.code() == "42P01") =>
                    {
                        unavailable.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => panic!("a read of the total failed: {e:?}"),
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }));
    }
    Load { tasks, ..load }
}

async fn stop_load(load: Load) -> (HashSet<i64>, u64, u64, u64) {
    load.stop.store(true, Ordering::Relaxed);
    for t in load.tasks {
        t.await.expect("a load task panicked");
    }
    let ack = load.acknowledged.lock().expect("ack").clone();
    (
        ack,
        load.reads.load(Ordering::Relaxed),
        load.wrong_reads.load(Ordering::Relaxed),
        load.retries.load(Ordering::Relaxed),
    )
}

/// Every slot of `grow_acct` by shard, from meta.
async fn slots_by_shard(cluster: &TestCluster) -> Vec<(u32, u64)> {
    let mut meta = cluster.meta_conn().await;
    meta.query(
        "SELECT p.shard_id, COUNT(*) FROM cat_partitions p JOIN cat_tables t ON t.table_id = p.table_id \
         WHERE t.table_name = 'grow_acct' GROUP BY p.shard_id ORDER BY p.shard_id",
    )
    .await
    .expect("slots by shard")
}

pub(crate) async fn online_growth(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS grow_acct; DROP TABLE IF EXISTS grow_log; DROP TABLE IF EXISTS grow_kind; DROP TABLE IF EXISTS grow_new;
         CREATE TABLE grow_acct (id bigint PRIMARY KEY, balance bigint NOT NULL) WITH (partitions = 12);
         CREATE TABLE grow_log (id bigint PRIMARY KEY, src bigint NOT NULL, dst bigint NOT NULL);
         CREATE TABLE grow_kind (k int PRIMARY KEY, name text) WITH (distribution = mirror);
         INSERT INTO grow_kind VALUES (1, 'checking'), (2, 'savings');",
    )
    .await
    .expect("create");
    c.batch_execute(&format!(
        "INSERT INTO grow_acct SELECT g, 1000 FROM generate_series(1, {ACCOUNTS}) g"
    ))
    .await
    .expect("load accounts");
    let load = start_load(cluster).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let run = |args: &'static [&'static str]| super::undo::run_cli(cluster, args, &[]);
    let (ok, _) = run(&["add-shard"]).await;
    assert!(ok, "add-shard failed");
    let (ok, out) = run(&["rebalance"]).await;
    assert!(ok, "rebalance failed: {out}");
    assert!(out.contains("verified"), "{out}");
    assert_eq!(
        slots_by_shard(cluster).await,
        vec![(1, 3), (2, 3), (3, 3), (4, 3)]
    );
    new_tables_join_their_group(cluster, &c).await;
    // The mover killed at each step, then the next mover's recovery.
    for (step, slot) in [
        ("copied", "0"),
        ("fenced", "1"),
        ("renamed", "2"),
        ("switched", "4"),
    ] {
        load.outage.store(step == "renamed", Ordering::Relaxed);
        let (ok, _) = super::undo::run_cli(
            cluster,
            &[
                "move",
                "--table",
                "grow_acct",
                "--partition",
                slot,
                "--to",
                "4",
            ],
            &[("TESSERA_MOVE_CRASH", step)],
        )
        .await;
        assert!(!ok, "the move did not stop at {step}");
        let (ok, out) = run(&["moves"]).await;
        assert!(ok, "{out}");
        let (ok, out) = run(&["rebalance"]).await;
        assert!(ok, "recovery after a crash at {step} failed: {out}");
        if step == "renamed" {
            // A statement that found the slot's table gone waits up to 2 s
            // for a new map before it answers 42P01 (none comes: the
            // recovery gave the source its names back).
            tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        }
        load.outage.store(false, Ordering::Relaxed);
    }
    super::undo::undo_moves(cluster).await;
    let (ok, out) = run(&["remove-shard", "3"]).await;
    assert!(ok, "remove-shard failed: {out}");
    // An existing server (started by its operator, not the cluster) joins
    // as shard 5, takes its share, and is drained again.
    let ext = ExternalServer::start(&cluster.dir.join("existing-server")).await;
    let port = ext.port.to_string();
    let (ok, out) = super::undo::run_cli(
        cluster,
        &["add-shard", "--port", &port, "--admin-user", ADMIN_USER],
        &[("TESSERA_ADMIN_PASSWORD", ADMIN_PASSWORD)],
    )
    .await;
    assert!(ok, "add-shard of an existing server failed: {out}");
    let (ok, out) = run(&["rebalance"]).await;
    assert!(ok, "rebalance onto the existing server failed: {out}");
    assert_eq!(
        slots_by_shard(cluster).await,
        vec![(1, 3), (2, 3), (4, 3), (5, 3)]
    );
    let (ok, out) = run(&["remove-shard", "5"]).await;
    assert!(ok, "remove-shard of the existing server failed: {out}");
    assert!(out.contains("keeps running"), "{out}");
    drop(ext);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let unavailable = load.unavailable.clone();
    let (ack, reads, wrong, retries) = stop_load(load).await;
    let by_shard = slots_by_shard(cluster).await;
    assert_eq!(
        by_shard,
        vec![(1, 4), (2, 4), (4, 4)],
        "not even after remove-shard"
    );
    check_ledger(cluster, &ack).await;
    let mut meta = cluster.meta_conn().await;
    let open: Vec<(u64, String)> = meta
        .query(
            "SELECT move_id, phase FROM partition_moves WHERE phase NOT IN ('done', 'rolled_back', 'reversed')",
        )
        .await
        .expect("moves");
    assert!(open.is_empty(), "moves left open: {open:?}");
    assert_eq!(wrong, 0, "{wrong} of {reads} reads saw a wrong total");
    println!(
        "online growth: {} transfers acknowledged, {retries} retried (40001/40P01), {reads} reads of the total, all right; {} statements found a slot unavailable while a killed mover awaited recovery",
        ack.len(),
        unavailable.load(Ordering::Relaxed)
    );
    let c = cluster.connect(1).await;
    let kinds = c
        .query(
            "SELECT count(*) FROM grow_acct a JOIN grow_kind k ON k.k = 1 + a.id % 2",
            &[],
        )
        .await
        .expect("join with a mirror");
    assert_eq!(kinds[0].get::<_, i64>(0), ACCOUNTS);
    c.batch_execute("DROP TABLE grow_acct, grow_log, grow_kind, grow_new")
        .await
        .expect("drop");
}

/// After a rebalance: a table made without a partition count joins the
/// biggest co-location group (12 partitions, as `grow_log` got by default
/// on 3 shards, not four per shard of the 4 there are now), so it stays
/// co-located with it; `tessera_moves` shows the moves done.
async fn new_tables_join_their_group(cluster: &TestCluster, c: &tokio_postgres::Client) {
    c.batch_execute("CREATE TABLE grow_new (id bigint PRIMARY KEY)")
        .await
        .expect("create after the rebalance");
    let mut meta = cluster.meta_conn().await;
    let layouts: Vec<(String, String)> = meta
        .query(
            "SELECT t.table_name, GROUP_CONCAT(p.shard_id ORDER BY p.partition_no) \
             FROM cat_partitions p JOIN cat_tables t ON t.table_id = p.table_id \
             WHERE t.table_name IN ('grow_acct', 'grow_log', 'grow_new') \
             GROUP BY t.table_name ORDER BY t.table_name",
        )
        .await
        .expect("layouts");
    assert_eq!(layouts.len(), 3, "{layouts:?}");
    assert!(
        layouts.iter().all(|l| l.1 == layouts[0].1),
        "tables of one partition count in different layouts: {layouts:?}"
    );
    assert_eq!(layouts[0].1.split(',').count(), 12, "{layouts:?}");
    let done = c
        .query(
            "SELECT tables, rows_copied FROM tessera_moves WHERE phase = 'done' ORDER BY move_id",
            &[],
        )
        .await
        .expect("tessera_moves");
    assert!(
        done.iter()
            .any(|r| r.get::<_, String>(0).contains("public.grow_acct")),
        "no move of grow_acct in tessera_moves"
    );
}

/// The total holds, every acknowledged transfer is logged, and no XA
/// branch is left prepared on any shard.
async fn check_ledger(cluster: &TestCluster, ack: &HashSet<i64>) {
    let c = cluster.connect(2).await;
    let total: i64 = c
        .query_one("SELECT sum(balance)::bigint FROM grow_acct", &[])
        .await
        .expect("total")
        .get(0);
    assert_eq!(total, TOTAL);
    let logged: HashSet<i64> = c
        .query("SELECT id FROM grow_log", &[])
        .await
        .expect("log")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let lost: Vec<&i64> = ack.iter().filter(|id| !logged.contains(id)).collect();
    assert!(lost.is_empty(), "acknowledged transfers lost: {lost:?}");
    let status = cluster.status();
    for n in status.iter().filter(|n| n.role == "shard") {
        let mut conn = tests::mysql_conn(n).await;
        let mut left = usize::MAX;
        for _ in 0..50 {
            let rows: Vec<mysql_async::Row> = conn.query("XA RECOVER").await.expect("xa recover");
            left = rows.len();
            if left == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(left, 0, "{}: XA branches left prepared", n.name);
    }
}
