//! `failover`: the RTO of a replicated cluster as a distribution (issue
//! 34). A cluster made with `--replicas 2` (3 shards, 3 compute nodes,
//! haproxy) runs bank transfers between accounts through haproxy; round
//! after round, the primary of one shard (or of meta, every fourth round)
//! is killed with SIGKILL (or, with `--signal stop`, stopped with SIGSTOP:
//! alive but silent, as a server cut off from the network), the time from
//! the signal to the first committed write that touches every shard is
//! measured, and `tessera cluster up` brings the old primary back, which
//! follows the new one as a replica (a stopped one is resumed first, fenced
//! by the cluster, and rebuilt from its primary if it committed what its
//! killed clients wrote).
//! At the end: the total of the accounts, every acknowledged transfer in
//! the ledger, and the RTO distribution (JSON in `--out`).

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use benches::servers::{Durability, Endpoint, Tessera};
use clap::Parser;

#[derive(Parser)]
#[command(about = "RTO of shard and meta failovers under bank transfers, as a distribution")]
struct Args {
    #[arg(long, default_value = "target/release/tessera")]
    tessera: PathBuf,
    #[arg(long, default_value = "/tmp/tessera-failover")]
    work: PathBuf,
    #[arg(long, default_value_t = 27000)]
    base_port: u16,
    /// Failovers to measure.
    #[arg(long, default_value_t = 12)]
    rounds: u32,
    /// Transfer clients.
    #[arg(long, default_value_t = 8)]
    clients: u32,
    #[arg(long, value_enum, default_value = "relaxed")]
    durability: Durability,
    /// kill (SIGKILL) or stop (SIGSTOP, then SIGCONT once measured).
    #[arg(long, default_value = "kill")]
    signal: String,
    #[arg(long, default_value = "benches/results/failover.json")]
    out: PathBuf,
}

const ACCOUNTS: i64 = 1000;

#[derive(Default)]
struct Load {
    stop: AtomicBool,
    acknowledged: Mutex<HashSet<i64>>,
    errors: AtomicU64,
    next: AtomicU64,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let a = Args::parse();
    let dir = a.work.join("cluster");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&a.work).expect("work folder");
    let extra = vec!["--replicas".to_string(), "2".to_string()];
    let (cluster, ep) = Tessera::start(&a.tessera, &dir, a.base_port, "hash", a.durability, &extra)
        .expect("cluster up --replicas 2");
    let c = connect(&ep).await;
    c.batch_execute(&format!(
        "CREATE TABLE fo_acct (id int PRIMARY KEY, balance bigint NOT NULL); \
         CREATE TABLE fo_log (id bigint PRIMARY KEY, a int, b int); \
         CREATE TABLE fo_rto (id int PRIMARY KEY, n int); \
         INSERT INTO fo_acct SELECT g, 1000 FROM generate_series(1, {ACCOUNTS}) g; \
         INSERT INTO fo_rto SELECT g, 0 FROM generate_series(1, 60) g"
    ))
    .await
    .expect("bank tables");
    let load = Arc::new(Load::default());
    let tasks: Vec<_> = (0..a.clients)
        .map(|i| tokio::spawn(transfers(ep.clone(), load.clone(), i as u64)))
        .collect();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut rtos = vec![];
    for round in 0..a.rounds {
        let target = if round % 4 == 3 {
            "meta".to_string()
        } else {
            format!("shard{}", round % 4 + 1)
        };
        let Some((node, pid)) = primary_of(&cluster, &target) else {
            eprintln!("round {round}: no primary of {target} in cluster status");
            continue;
        };
        let stop = a.signal == "stop";
        // SAFETY: kill(2) on a pid read from the cluster's status.
        unsafe { libc::kill(pid, if stop { libc::SIGSTOP } else { libc::SIGKILL }) };
        let rto = first_write(&ep).await;
        println!(
            "round {round}: {target}'s primary {node} {}: first write after {:.3} s",
            if stop { "stopped" } else { "killed" },
            rto.as_secs_f64()
        );
        if stop {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
        rtos.push((target, rto.as_secs_f64()));
        tokio::time::sleep(Duration::from_secs(2)).await;
        // The old primary back, as a replica of the new one.
        let up = Command::new(&a.tessera)
            .args(["cluster", "up", "--data-dir"])
            .arg(&dir)
            .output()
            .expect("cluster up");
        print!(
            "{}",
            String::from_utf8_lossy(&up.stdout)
                .lines()
                .filter(|l| l.contains("primary") || l.contains("rebuilt") || l.contains("copy"))
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        );
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    load.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    let (total, lost) = check(&ep, &load).await;
    // Every old primary is a replica again.
    let failed: Vec<String> = cluster
        .status()
        .ok()
        .and_then(|s| s.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter(|n| n["state"] == "failed")
        .filter_map(|n| n["name"].as_str().map(str::to_string))
        .collect();
    println!("servers still failed at the end: {failed:?}");
    let mut secs: Vec<f64> = rtos.iter().map(|(_, s)| *s).collect();
    secs.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        secs.get(((secs.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let acked = load.acknowledged.lock().map(|s| s.len()).unwrap_or(0);
    println!(
        "RTO over {} failovers: min {:.2} s, median {:.2} s, p90 {:.2} s, max {:.2} s; {} transfers acknowledged, {} retryable errors, total {} (expected {}), {} acknowledged transfers missing",
        secs.len(),
        pick(0.0),
        pick(0.5),
        pick(0.9),
        pick(1.0),
        acked,
        load.errors.load(Ordering::Relaxed),
        total,
        ACCOUNTS * 1000,
        lost
    );
    let json = serde_json::json!({
        "rounds": rtos.iter().map(|(t, s)| serde_json::json!({"target": t, "rto_secs": s})).collect::<Vec<_>>(),
        "rto_min": pick(0.0), "rto_median": pick(0.5), "rto_p90": pick(0.9), "rto_max": pick(1.0),
        "acknowledged": acked, "errors": load.errors.load(Ordering::Relaxed),
        "total_ok": total == ACCOUNTS * 1000, "lost": lost, "failed_at_end": failed,
    });
    let _ = std::fs::write(
        &a.out,
        serde_json::to_string_pretty(&json).unwrap_or_default(),
    );
    drop(cluster);
    if total != ACCOUNTS * 1000 || lost > 0 {
        std::process::exit(1);
    }
}

/// A session through haproxy, retried for a minute (while meta fails
/// over, logins answer 08006).
async fn connect(ep: &Endpoint) -> tokio_postgres::Client {
    let start = Instant::now();
    loop {
        match tokio_postgres::connect(&ep.url(), tokio_postgres::NoTls).await {
            Ok((client, conn)) => {
                tokio::spawn(async move {
                    let _ = conn.await;
                });
                return client;
            }
            Err(e) if start.elapsed() > Duration::from_secs(60) => {
                panic!("connect through haproxy: {e}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

async fn transfers(ep: Endpoint, load: Arc<Load>, seed: u64) {
    let mut c = connect(&ep).await;
    let mut x = 7 + seed * 7919;
    while !load.stop.load(Ordering::Relaxed) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (from, to) = (
            (x >> 20) as i64 % ACCOUNTS + 1,
            (x >> 40) as i64 % ACCOUNTS + 1,
        );
        let id = load.next.fetch_add(1, Ordering::Relaxed) as i64;
        let sql = format!(
            "BEGIN; UPDATE fo_acct SET balance = balance - 1 WHERE id = {from}; \
             UPDATE fo_acct SET balance = balance + 1 WHERE id = {to}; \
             INSERT INTO fo_log VALUES ({id}, {from}, {to}); COMMIT"
        );
        match c.batch_execute(&sql).await {
            Ok(()) => {
                if let Ok(mut s) = load.acknowledged.lock() {
                    s.insert(id);
                }
            }
            Err(_) => {
                load.errors.fetch_add(1, Ordering::Relaxed);
                if c.batch_execute("ROLLBACK").await.is_err() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    c = connect(&ep).await;
                }
            }
        }
    }
}

/// The node serving `target` (`shardN` or `meta`) now and its pid.
fn primary_of(cluster: &Tessera, target: &str) -> Option<(String, i32)> {
    let status = cluster.status().ok()?;
    status.as_array()?.iter().find_map(|n| {
        let name = n["name"].as_str()?;
        let mine = name == target
            || name
                .strip_prefix(target)
                .is_some_and(|r| r.starts_with('r'));
        (mine && n["state"] == "primary")
            .then(|| Some((name.to_string(), n["pid"].as_i64()? as i32)))?
    })
}

async fn first_write(ep: &Endpoint) -> Duration {
    let start = Instant::now();
    let mut c = connect(ep).await;
    loop {
        match c.execute("UPDATE fo_rto SET n = n + 1", &[]).await {
            Ok(_) => return start.elapsed(),
            Err(e) if e.is_closed() => c = connect(ep).await,
            Err(_) => {}
        }
        if start.elapsed() > Duration::from_secs(120) {
            return start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The total of the accounts and how many acknowledged transfers are not
/// in the ledger.
async fn check(ep: &Endpoint, load: &Load) -> (i64, usize) {
    let c = connect(ep).await;
    let total: i64 = c
        .query_one("SELECT sum(balance)::bigint FROM fo_acct", &[])
        .await
        .map(|r| r.get(0))
        .unwrap_or(-1);
    let logged: HashSet<i64> = c
        .query("SELECT id FROM fo_log", &[])
        .await
        .map(|rows| rows.iter().map(|r| r.get::<_, i64>(0)).collect())
        .unwrap_or_default();
    let lost = load
        .acknowledged
        .lock()
        .map(|s| s.iter().filter(|id| !logged.contains(id)).count())
        .unwrap_or(usize::MAX);
    (total, lost)
}
