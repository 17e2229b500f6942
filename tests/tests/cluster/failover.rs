//! Failover of replicated shards and meta (issue 34): a cluster whose
//! shards and meta have two semi-synchronous replicas each runs transfers
//! between accounts (and readers of the total, and inserts drawing a
//! sequence) while two shard primaries and then meta's primary are killed
//! with SIGKILL, and a third shard's primary (and first meta's, unless
//! `TESSERA_FAILOVER_META_STOP=0`) is stopped (SIGSTOP: alive but silent)
//! and later resumed. The compute
//! nodes promote a replica each time; clients see
//! only retryable errors, the total holds at every read, every
//! acknowledged transfer is in the ledger, no sequence value repeats, no XA
//! branch is left, and an XA branch prepared on a killed primary is found
//! prepared on the new one.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql_async::prelude::*;
use tests::TestCluster;

use crate::rejoin::{
    commit_listed_branch, meta_conn, old_primaries_rejoin, primary_of, try_root_conn,
};

const ACCOUNTS: i64 = 2000;
const TOTAL: i64 = ACCOUNTS * 1000;

/// What a client may see while a shard fails over: the connection to the
/// shard failed, or the transaction must be retried.
const RETRYABLE: &[&str] = &["08006", "40001", "40P01", "40003"];

#[derive(Default)]
struct Counters {
    stop: AtomicBool,
    reads: AtomicU64,
    wrong_reads: AtomicU64,
    retryable: AtomicU64,
    transfers: AtomicU64,
    serials: std::sync::Mutex<Vec<i64>>,
}

pub(crate) async fn failover() {
    let cluster = TestCluster::start_with(3, 3, 2);
    let c = cluster.connect(0).await;
    c.batch_execute(&format!(
        "CREATE TABLE fo_acct (id int PRIMARY KEY, balance bigint NOT NULL); \
         CREATE TABLE fo_log (id bigint PRIMARY KEY, a int, b int); \
         CREATE TABLE fo_rto (id int PRIMARY KEY, n int); \
         CREATE TABLE fo_seq (id serial PRIMARY KEY, note text); \
         INSERT INTO fo_acct SELECT g, 1000 FROM generate_series(1, {ACCOUNTS}) g; \
         INSERT INTO fo_rto SELECT g, 0 FROM generate_series(1, 60) g"
    ))
    .await
    .expect("bank tables");
    let counters = Arc::new(Counters::default());
    let acknowledged = Arc::new(std::sync::Mutex::new(HashSet::new()));
    let tasks = start_load(&cluster, &counters, &acknowledged).await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    // A branch prepared on shard 2's primary outside Tessera's 2PC (its
    // xid is not Tessera's, so recovery leaves it): it must be prepared on
    // the promoted replica.
    let foreign_xid = prepare_foreign_branch(&cluster, 2).await;
    let mut rtos = vec![];
    // Meta (shard 0 here) stopped, then rejoined (the promotion needs
    // every other meta server to answer: two failures of meta at once are
    // not covered), when asked; shards 2 and 1 killed, shard 3 stopped,
    // then meta's primary killed.
    let mut stopped = None;
    let (mut killed_nodes, mut stopped_nodes) = (vec![], vec![]);
    // Meta's primary is stopped too unless TESSERA_FAILOVER_META_STOP=0.
    let meta_stop = std::env::var("TESSERA_FAILOVER_META_STOP").map_or(true, |v| v != "0");
    let events = [
        (0u32, libc::SIGSTOP),
        (2, libc::SIGKILL),
        (1, libc::SIGKILL),
        (3, libc::SIGSTOP),
        (0, libc::SIGKILL),
    ];
    for (shard, signal) in events
        .into_iter()
        .filter(|e| meta_stop || *e != (0, libc::SIGSTOP))
    {
        let before = transfers_now(&counters);
        if shard == 1 {
            crate::rejoin::seed_xa_cases(&cluster, &primary_of(&cluster, 1).await.1).await;
        }
        let (killed, pid) = signal_primary(&cluster, shard, signal).await;
        let rto = first_write_after(&cluster).await;
        println!(
            "failover of shard{shard} ({killed} sent signal {signal}): first write after {rto:?} (at {:?})",
            std::time::SystemTime::now()
        );
        rtos.push(rto);
        wait_failover_recorded(&cluster, shard, &killed).await;
        if signal == libc::SIGSTOP {
            stopped = Some((pid, killed.clone()));
            stopped_nodes.push(killed.clone());
        } else {
            killed_nodes.push(killed.clone());
        }
        // The load carries on: transfers commit again.
        let deadline = Instant::now() + Duration::from_secs(30);
        while transfers_now(&counters) < before + 20 {
            assert!(
                Instant::now() < deadline,
                "no transfer committed after the failover"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        if let Some((pid, node)) = stopped.take() {
            // Resumed, the old primary is fenced: read-only, its clients'
            // connections killed.
            unsafe { libc::kill(pid, libc::SIGCONT) };
            assert!(
                wait_fenced(&cluster, &node).await,
                "{node} was not fenced after it resumed"
            );
            if shard == 0 {
                // Meta's three servers again before the next meta failover.
                print!("{}", cluster.restart_missing_with(&[]));
            }
        }
    }
    counters.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.expect("a load task panicked");
    }
    let ack = acknowledged.lock().expect("ack").clone();
    println!(
        "failover: {} transfers acknowledged, {} serials, {} reads of the total, {} retryable errors, RTOs {rtos:?}",
        ack.len(),
        counters.serials.lock().expect("serials").len(),
        counters.reads.load(Ordering::Relaxed),
        counters.retryable.load(Ordering::Relaxed)
    );
    assert_eq!(
        counters.wrong_reads.load(Ordering::Relaxed),
        0,
        "a read saw a wrong total"
    );
    assert!(counters.reads.load(Ordering::Relaxed) > 0);
    let mut serials = counters.serials.lock().expect("serials").clone();
    let drawn = serials.len();
    serials.sort_unstable();
    serials.dedup();
    assert_eq!(
        serials.len(),
        drawn,
        "a sequence value was handed out twice"
    );
    check_after(&cluster, &ack).await;
    check_foreign_branch(&cluster, 2, &foreign_xid).await;
    old_primaries_rejoin(&cluster, &killed_nodes, &stopped_nodes).await;
}

fn transfers_now(c: &Counters) -> u64 {
    c.transfers.load(Ordering::Relaxed)
}

/// Two writers and one reader per compute node.
async fn start_load(
    cluster: &TestCluster,
    counters: &Arc<Counters>,
    ack: &Arc<std::sync::Mutex<HashSet<i64>>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let next = Arc::new(AtomicU64::new(1));
    let mut tasks = vec![];
    for node in 0..3 {
        for w in 0..2u64 {
            let url = cluster.pg_url(node);
            let (counters, ack, next) = (counters.clone(), ack.clone(), next.clone());
            tasks.push(tokio::spawn(async move {
                let mut c = connect(&url).await;
                let mut x = 11 + w * 17 + node as u64 * 101;
                while !counters.stop.load(Ordering::Relaxed) {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let (a, b) = (
                        (x >> 20) as i64 % ACCOUNTS + 1,
                        (x >> 40) as i64 % ACCOUNTS + 1,
                    );
                    let id = next.fetch_add(1, Ordering::Relaxed) as i64;
                    let sql = format!(
                        "BEGIN; UPDATE fo_acct SET balance = balance - 3 WHERE id = {a}; \
                         UPDATE fo_acct SET balance = balance + 3 WHERE id = {b}; \
                         INSERT INTO fo_log VALUES ({id}, {a}, {b}); COMMIT"
                    );
                    match c.batch_execute(&sql).await {
                        Ok(()) => {
                            ack.lock().expect("ack").insert(id);
                            counters.transfers.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            retryable(&e, "a transfer");
                            counters.retryable.fetch_add(1, Ordering::Relaxed);
                            if c.batch_execute("ROLLBACK").await.is_err() {
                                c = connect(&url).await;
                            }
                        }
                    }
                }
            }));
        }
        let url = cluster.pg_url(node);
        let c2 = counters.clone();
        tasks.push(tokio::spawn(async move {
            let c = connect(&url).await;
            while !c2.stop.load(Ordering::Relaxed) {
                match c
                    .query_one("INSERT INTO fo_seq (note) VALUES ('x') RETURNING id", &[])
                    .await
                {
                    Ok(r) => c2
                        .serials
                        .lock()
                        .expect("serials")
                        .push(r.get::<_, i32>(0) as i64),
                    Err(e) => retryable(&e, "an insert drawing a sequence"),
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
        let url = cluster.pg_url(node);
        let counters = counters.clone();
        tasks.push(tokio::spawn(async move {
            let c = connect(&url).await;
            while !counters.stop.load(Ordering::Relaxed) {
                match c
                    .query_one("SELECT sum(balance)::bigint FROM fo_acct", &[])
                    .await
                {
                    Ok(r) => {
                        counters.reads.fetch_add(1, Ordering::Relaxed);
                        let total = r.get::<_, i64>(0);
                        if total != TOTAL {
                            counters.wrong_reads.fetch_add(1, Ordering::Relaxed);
                            println!(
                                "a read on compute node {node} saw a total of {total} (at {:?})",
                                std::time::SystemTime::now()
                            );
                        }
                    }
                    Err(e) => {
                        retryable(&e, "a read of the total");
                        counters.retryable.fetch_add(1, Ordering::Relaxed);
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    tasks
}

fn retryable(e: &tokio_postgres::Error, what: &str) {
    let code = e.code().map(|c| c.code().to_string()).unwrap_or_default();
    assert!(
        RETRYABLE.contains(&code.as_str()),
        "{what} failed with {code}: {e:?}"
    );
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to a compute node");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

async fn server_conn(cluster: &TestCluster, port: u16) -> mysql_async::Conn {
    let login = &cluster.role("shard")[0];
    let node = tests::NodeInfo {
        port,
        ..login.clone()
    };
    tests::mysql_conn(&node).await
}

/// Sends `signal` to shard's primary (meta's for 0); answers its node
/// name and pid.
async fn signal_primary(cluster: &TestCluster, shard: u32, signal: i32) -> (String, i32) {
    let (_, node) = primary_of(cluster, shard).await;
    let pid: i32 = std::fs::read_to_string(cluster.dir.join(&node).join("node.pid"))
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid");
    unsafe { libc::kill(pid, signal) };
    (node, pid)
}

/// Waits (30 s at most) until a resumed old primary is read-only; answers
/// whether it is.
async fn wait_fenced(cluster: &TestCluster, node: &str) -> bool {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(30);
    loop {
        // The fence kills connections, a login under way too: retried.
        // Bounded: a login waits for ever on a server whose thread pool is
        // held by commits waiting for an acknowledgement.
        let ro: Option<u8> = match tokio::time::timeout(
            Duration::from_secs(2),
            try_root_conn(cluster, node),
        )
        .await
        {
            Ok(Ok(mut s)) => s.query_first("SELECT @@read_only").await.unwrap_or(None),
            _ => None,
        };
        if ro == Some(1) {
            println!("{node} read-only {:?} after it resumed", start.elapsed());
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// How long after now until a write that touches every shard commits.
async fn first_write_after(cluster: &TestCluster) -> Duration {
    let start = Instant::now();
    // A login during meta's failover may fail with 08006 (the credentials
    // live in meta): a client connects again.
    let c = loop {
        match tokio_postgres::connect(&cluster.pg_url(1), tokio_postgres::NoTls).await {
            Ok((c, conn)) => {
                tokio::spawn(async move {
                    let _ = conn.await;
                });
                break c;
            }
            Err(e) => {
                retryable(&e, "the RTO probe's login");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    loop {
        match c.execute("UPDATE fo_rto SET n = n + 1", &[]).await {
            Ok(_) => return start.elapsed(),
            Err(e) => retryable(&e, "the RTO probe's write"),
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no write for 60 s after the kill"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_failover_recorded(cluster: &TestCluster, shard: u32, killed: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, node) = primary_of(cluster, shard).await;
        if node != killed && shard == 0 {
            return;
        }
        if node != killed {
            let mut meta = meta_conn(cluster).await;
            let state: Option<String> = meta
                .exec_first(
                    "SELECT state FROM shard_replicas WHERE shard_id = ? AND port = ?",
                    (
                        shard,
                        cluster
                            .nodes
                            .iter()
                            .find(|n| n.name == killed)
                            .map(|n| n.port),
                    ),
                )
                .await
                .expect("replica state");
            assert_eq!(
                state.as_deref(),
                Some("failed"),
                "the old primary is recorded failed"
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "shard{shard} was not failed over"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn prepare_foreign_branch(cluster: &TestCluster, shard: u32) -> String {
    let (port, _) = primary_of(cluster, shard).await;
    let mut c = server_conn(cluster, port).await;
    let xid = "fo-foreign-1".to_string();
    for sql in [
        "CREATE DATABASE IF NOT EXISTS tsr_fo_check".to_string(),
        "CREATE TABLE IF NOT EXISTS tsr_fo_check.t (id INT PRIMARY KEY)".into(),
        format!("XA START '{xid}'"),
        "INSERT INTO tsr_fo_check.t VALUES (1)".into(),
        format!("XA END '{xid}'"),
        format!("XA PREPARE '{xid}'"),
    ] {
        c.query_drop(&sql).await.expect("foreign branch");
    }
    // The connection stays open until the kill, holding the branch.
    std::mem::forget(c);
    xid
}

async fn check_foreign_branch(cluster: &TestCluster, shard: u32, xid: &str) {
    let (port, _) = primary_of(cluster, shard).await;
    let mut c = server_conn(cluster, port).await;
    commit_listed_branch(
        &mut c,
        xid,
        &format!("'{xid}'"),
        "the branch prepared on the killed primary is not prepared on the new one",
    )
    .await;
    let n: Option<u64> = c
        .query_first("SELECT COUNT(*) FROM tsr_fo_check.t")
        .await
        .expect("count");
    assert_eq!(n, Some(1), "the committed branch's row");
}

/// The total and the ledger after the load; no Tessera branch left
/// prepared on any primary; each primary's remaining replica has its
/// rows.
async fn check_after(cluster: &TestCluster, ack: &HashSet<i64>) {
    let c = cluster.connect(0).await;
    let total: i64 = c
        .query_one("SELECT sum(balance)::bigint FROM fo_acct", &[])
        .await
        .expect("total")
        .get(0);
    assert_eq!(total, TOTAL, "the total after the failovers");
    let logged: HashSet<i64> = c
        .query("SELECT id FROM fo_log", &[])
        .await
        .expect("ledger")
        .iter()
        .map(|r| r.get::<_, i64>(0))
        .collect();
    let lost: Vec<&i64> = ack.iter().filter(|id| !logged.contains(id)).collect();
    assert!(
        lost.is_empty(),
        "acknowledged transfers lost: {:?}",
        &lost[..lost.len().min(20)]
    );
    // Recovery finishes branches left by the kills within a few rounds.
    let deadline = Instant::now() + Duration::from_secs(30);
    for shard in 1..=3u32 {
        loop {
            let (port, _) = primary_of(cluster, shard).await;
            let mut s = server_conn(cluster, port).await;
            let left: Vec<mysql_async::Row> = s.query("XA RECOVER").await.expect("XA RECOVER");
            let tessera_left = left
                .iter()
                .filter_map(|r| r.get::<String, _>("data"))
                .filter(|d| d.starts_with("tsr-"))
                .count();
            if tessera_left == 0 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "shard{shard}: {tessera_left} XA branches left"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}
