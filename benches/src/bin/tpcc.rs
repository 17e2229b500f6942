//! TPC-C over the PostgreSQL wire protocol (tokio-postgres, prepared
//! statements, the path users take): loads the initial database through
//! COPY, runs the five transactions with the specification's mix and
//! keying from terminals bound to warehouses (no think time), then checks
//! consistency conditions 1-4 (TPC-C 3.3.2). Prints tpmC, tpmTotal,
//! per-transaction latency percentiles and errors by SQLSTATE.
//!
//! `tpcc --tessera target/release/tessera --postgres --warehouses 10
//! --terminals 32 --time 300` starts a 3-shard cluster (through haproxy)
//! and one PostgreSQL 15 under `--work`, with the same durability, and runs
//! each in turn with the same settings; `--target name=url` runs against a
//! server already up (a target named `tessera*` gets the
//! warehouse-partitioned schema). MariaDB as a baseline is not done yet.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use benches::tpcc::txn::{delivery, new_order, order_status, payment, prepare, stock_level, Done};
use benches::tpcc::{self, Rng};
use clap::Parser;
use tokio_postgres::{Client, NoTls};

#[derive(Parser, Debug)]
struct Args {
    /// name=postgres-url of a server already up, repeated.
    #[arg(long = "target")]
    targets: Vec<String>,
    /// Start a Tessera cluster with this `tessera` binary and run on it.
    #[arg(long)]
    tessera: Option<std::path::PathBuf>,
    /// Start one PostgreSQL 15 and run on it.
    #[arg(long)]
    postgres: bool,
    /// Where started servers keep their files.
    #[arg(long, default_value = "/tmp/tessera-tpcc")]
    work: std::path::PathBuf,
    #[arg(long, default_value_t = 26000)]
    base_port: u16,
    /// Commit flushing on every started server alike.
    #[arg(long, value_enum, default_value = "relaxed")]
    durability: benches::servers::Durability,
    #[arg(long, default_value_t = 1)]
    warehouses: u32,
    #[arg(long, default_value_t = 4)]
    terminals: u32,
    /// Seconds of the measured run.
    #[arg(long, default_value_t = 30)]
    time: u64,
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    /// Use the database as loaded before (no schema, no load).
    #[arg(long)]
    no_load: bool,
    /// Write the results as JSON here.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

const KINDS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

#[derive(Default, Clone, serde::Serialize)]
struct Stats {
    /// Latencies (µs) per transaction kind.
    latencies: BTreeMap<String, Vec<u64>>,
    /// New-orders rolled back by the specification's 1 % invalid item.
    rollbacks: u64,
    /// Committed transactions that touched another warehouse.
    remote: u64,
    /// Connections made again after a node died.
    reconnects: u64,
    /// Errors by SQLSTATE (the transaction retried).
    errors: BTreeMap<String, u64>,
}

async fn connect(url: &str) -> Result<Client, String> {
    let (c, conn) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(c)
}

/// Schema and initial database, through COPY.
async fn load(url: &str, tessera: bool, warehouses: u32) -> Result<(), String> {
    let c = connect(url).await?;
    for t in tpcc::TABLES {
        c.batch_execute(&format!("DROP TABLE IF EXISTS {t}"))
            .await
            .map_err(|e| e.to_string())?;
    }
    for ddl in tpcc::schema(tessera) {
        c.batch_execute(&ddl)
            .await
            .map_err(|e| format!("{ddl}: {e}"))?;
    }
    let now = chrono::Utc::now()
        .naive_utc()
        .format("%Y-%m-%d %H:%M:%S")
        .to_string();
    let mut rng = Rng::new(42);
    let mut chunks = vec![tpcc::items(&mut rng)];
    let start = Instant::now();
    for w in 1..=warehouses {
        chunks.extend(tpcc::warehouse(w, &mut rng, &now));
        for ch in chunks.drain(..) {
            copy(&c, &ch).await?;
        }
        eprintln!(
            "  loaded warehouse {w}/{warehouses} ({:.1} s)",
            start.elapsed().as_secs_f64()
        );
    }
    c.batch_execute("ANALYZE").await.ok();
    Ok(())
}

async fn copy(c: &Client, ch: &tpcc::CopyText) -> Result<(), String> {
    use futures::SinkExt;
    let sink = c
        .copy_in(&format!("COPY {} FROM STDIN", ch.table))
        .await
        .map_err(|e| format!("COPY {}: {e}", ch.table))?;
    futures::pin_mut!(sink);
    // In pieces of about 1 MiB, at line ends.
    let bytes = ch.buf.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let mut end = (at + (1 << 20)).min(bytes.len());
        while end < bytes.len() && bytes[end - 1] != b'\n' {
            end += 1;
        }
        sink.send(bytes::Bytes::copy_from_slice(&bytes[at..end]))
            .await
            .map_err(|e| format!("COPY {}: {e}", ch.table))?;
        at = end;
    }
    sink.finish()
        .await
        .map_err(|e| format!("COPY {}: {e}", ch.table))?;
    Ok(())
}

fn sqlstate(e: &tokio_postgres::Error) -> String {
    e.code()
        .map(|c| c.code().to_string())
        .unwrap_or_else(|| "connection".into())
}

/// One terminal: its home warehouse, transactions by the mix until `stop`.
async fn terminal(
    url: String,
    id: u32,
    w: i32,
    ws: u32,
    measuring: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> Result<Stats, String> {
    let mut c = connect(&url).await?;
    let mut st = prepare(&c).await?;
    let mut rng = Rng::new(1000 + id as u64);
    let mut stats = Stats::default();
    let mut h_seq: i64 = 0;
    while !stop.load(Ordering::Relaxed) {
        let roll = rng.int(1, 100);
        let kind = match roll {
            1..=45 => 0,
            46..=88 => 1,
            89..=92 => 2,
            93..=96 => 3,
            _ => 4,
        };
        let t = Instant::now();
        h_seq += 1;
        let r = match kind {
            0 => new_order(&c, &st, &mut rng, w, ws).await,
            1 => {
                let h = ((id as i64 + 1) << 40) + h_seq;
                payment(&c, &st, &mut rng, w, ws, h).await
            }
            2 => order_status(&c, &st, &mut rng, w).await,
            3 => delivery(&c, &st, &mut rng, w).await,
            _ => stock_level(&c, &st, &mut rng, w).await,
        };
        let measured = measuring.load(Ordering::Relaxed);
        match r {
            Ok(done) if measured => {
                stats
                    .latencies
                    .entry(KINDS[kind].to_string())
                    .or_default()
                    .push(t.elapsed().as_micros() as u64);
                match done {
                    Done::RolledBack if kind == 0 => stats.rollbacks += 1,
                    Done::Committed { remote: true } => stats.remote += 1,
                    _ => {}
                }
            }
            Ok(_) => {}
            Err(e) => {
                let _ = c.batch_execute("ROLLBACK").await;
                if measured {
                    *stats.errors.entry(sqlstate(&e)).or_default() += 1;
                }
                // A node that died: connect again (through haproxy, to a
                // live one) for up to a minute, as an application would.
                if c.is_closed() {
                    stats.reconnects += 1;
                    let since = Instant::now();
                    loop {
                        match connect(&url).await {
                            Ok(n) => match prepare(&n).await {
                                Ok(p) => {
                                    c = n;
                                    st = p;
                                    break;
                                }
                                Err(_) if since.elapsed() < Duration::from_secs(60) => {}
                                Err(e) => return Err(format!("terminal {id}: {e}")),
                            },
                            Err(_) if since.elapsed() < Duration::from_secs(60) => {}
                            Err(e) => return Err(format!("terminal {id}: connection lost: {e}")),
                        }
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                }
            }
        }
    }
    Ok(stats)
}

/// TPC-C 3.3.2.1-4 on the database as it is; the failures, if any.
async fn consistency(url: &str) -> Result<Vec<String>, String> {
    let c = connect(url).await?;
    let checks = [
        ("CC1 w_ytd = sum(d_ytd)", "SELECT count(*) FROM warehouse w WHERE w.w_ytd <> (SELECT sum(d_ytd) FROM district d WHERE d.d_w_id = w.w_id)"),
        ("CC2 d_next_o_id - 1 = max(o_id)", "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT max(o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id)"),
        ("CC2 d_next_o_id - 1 = max(no_o_id)", "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT max(no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id)"),
        ("CC3 new_order ids contiguous", "SELECT count(*) FROM (SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1 - count(*) AS gap FROM new_order GROUP BY no_w_id, no_d_id) x WHERE gap <> 0"),
        ("CC4 sum(o_ol_cnt) = count(order_line)", "SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS n FROM orders GROUP BY o_w_id, o_d_id) o JOIN (SELECT ol_w_id, ol_d_id, count(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE o.n <> l.n"),
    ];
    let mut failed = vec![];
    for (name, sql) in checks {
        let bad: i64 = c
            .query_one(sql, &[])
            .await
            .map_err(|e| format!("{name}: {e}"))?
            .get(0);
        if bad != 0 {
            failed.push(format!("{name}: {bad} districts or warehouses fail"));
        }
    }
    Ok(failed)
}

fn percentile(v: &mut [u64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    v[i] as f64 / 1000.0
}

#[derive(serde::Serialize)]
struct Report {
    target: String,
    warehouses: u32,
    terminals: u32,
    seconds: u64,
    tpmc: f64,
    tpm_total: f64,
    p50_ms: BTreeMap<String, f64>,
    p95_ms: BTreeMap<String, f64>,
    p99_ms: BTreeMap<String, f64>,
    rollbacks: u64,
    /// Share of committed transactions that touched another warehouse.
    remote_share: f64,
    reconnects: u64,
    errors: BTreeMap<String, u64>,
    consistency_failures: Vec<String>,
}

async fn run_target(a: &Args, name: &str, url: &str) -> Result<Report, String> {
    if !a.no_load {
        eprintln!("[{name}] loading {} warehouses", a.warehouses);
        load(url, name.starts_with("tessera"), a.warehouses).await?;
    }
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = vec![];
    for t in 0..a.terminals {
        let w = (t % a.warehouses) as i32 + 1;
        handles.push(tokio::spawn(terminal(
            url.to_string(),
            t,
            w,
            a.warehouses,
            measuring.clone(),
            stop.clone(),
        )));
    }
    tokio::time::sleep(Duration::from_secs(a.warmup)).await;
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs(a.time)).await;
    measuring.store(false, Ordering::Relaxed);
    let secs = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let mut all = Stats::default();
    for h in handles {
        let s = h.await.map_err(|e| e.to_string())??;
        for (k, mut v) in s.latencies {
            all.latencies.entry(k).or_default().append(&mut v);
        }
        all.rollbacks += s.rollbacks;
        all.remote += s.remote;
        all.reconnects += s.reconnects;
        for (k, n) in s.errors {
            *all.errors.entry(k).or_default() += n;
        }
    }
    let minutes = secs / 60.0;
    let count = |k: &str| all.latencies.get(k).map(|v| v.len()).unwrap_or(0) as f64;
    let total: f64 = KINDS.iter().map(|k| count(k)).sum();
    let mut r = Report {
        target: name.into(),
        warehouses: a.warehouses,
        terminals: a.terminals,
        seconds: a.time,
        tpmc: count("new_order") / minutes,
        tpm_total: total / minutes,
        p50_ms: BTreeMap::new(),
        p95_ms: BTreeMap::new(),
        p99_ms: BTreeMap::new(),
        rollbacks: all.rollbacks,
        remote_share: all.remote as f64 / total.max(1.0),
        reconnects: all.reconnects,
        errors: all.errors,
        consistency_failures: consistency(url).await?,
    };
    for (k, v) in all.latencies.iter_mut() {
        r.p50_ms.insert(k.clone(), percentile(v, 0.50));
        r.p95_ms.insert(k.clone(), percentile(v, 0.95));
        r.p99_ms.insert(k.clone(), percentile(v, 0.99));
    }
    Ok(r)
}

fn url(ep: &benches::servers::Endpoint) -> String {
    format!(
        "host=127.0.0.1 port={} user={} password={} dbname={}",
        ep.port, ep.user, ep.password, ep.db
    )
}

#[tokio::main]
async fn main() {
    let a = Args::parse();
    let mut reports = vec![];
    let mut failed = false;
    let mut targets: Vec<(String, String)> = vec![];
    for t in &a.targets {
        let Some((name, url)) = t.split_once('=') else {
            eprintln!("--target wants name=url: {t}");
            std::process::exit(2);
        };
        targets.push((name.into(), url.into()));
    }
    // Servers started here stay up until the end of main.
    let mut _tessera = None;
    let mut _postgres = None;
    if let Some(bin) = &a.tessera {
        let dir = a.work.join("tessera");
        let _ = std::fs::create_dir_all(&a.work);
        match benches::servers::Tessera::start(bin, &dir, a.base_port, "hash", a.durability) {
            Ok((t, ep)) => {
                targets.push(("tessera".into(), url(&ep)));
                _tessera = Some(t);
            }
            Err(e) => {
                eprintln!("tessera did not start: {e}");
                std::process::exit(1);
            }
        }
    }
    if a.postgres {
        match benches::servers::Postgres::start(
            &a.work.join("postgres"),
            a.base_port + 300,
            a.durability,
        ) {
            Ok((p, ep)) => {
                targets.push(("postgres".into(), url(&ep)));
                _postgres = Some(p);
            }
            Err(e) => eprintln!("postgres baseline did not start: {e}"),
        }
    }
    if targets.is_empty() {
        eprintln!("nothing to run: give --tessera, --postgres or --target");
        std::process::exit(2);
    }
    for (name, url) in &targets {
        let (name, url) = (name.as_str(), url.as_str());
        match run_target(&a, name, url).await {
            Ok(r) => {
                failed |= !r.consistency_failures.is_empty();
                reports.push(r);
            }
            Err(e) => {
                eprintln!("[{name}] failed: {e}");
                failed = true;
            }
        }
    }
    println!(
        "{:<12} {:>10} {:>10} {:>9} {:>9} {:>9} {:>7} {:>7}  consistency",
        "target", "tpmC", "tpmTotal", "NO p50", "NO p95", "NO p99", "errors", "remote"
    );
    for r in &reports {
        let errors: u64 = r.errors.values().sum();
        println!(
            "{:<12} {:>10.1} {:>10.1} {:>9.2} {:>9.2} {:>9.2} {:>7} {:>6.1}%  {}",
            r.target,
            r.tpmc,
            r.tpm_total,
            r.p50_ms.get("new_order").copied().unwrap_or(0.0),
            r.p95_ms.get("new_order").copied().unwrap_or(0.0),
            r.p99_ms.get("new_order").copied().unwrap_or(0.0),
            errors,
            r.remote_share * 100.0,
            if r.consistency_failures.is_empty() {
                "CC1-CC4 ok".to_string()
            } else {
                r.consistency_failures.join("; ")
            }
        );
        if !r.errors.is_empty() || r.reconnects > 0 {
            println!(
                "  errors by SQLSTATE: {:?}; reconnects: {}",
                r.errors, r.reconnects
            );
        }
    }
    if let Some(base) = reports.iter().find(|r| !r.target.starts_with("tessera")) {
        for r in reports.iter().filter(|r| r.target.starts_with("tessera")) {
            println!(
                "{} / {}: tpmC ratio {:.2}",
                r.target,
                base.target,
                r.tpmc / base.tpmc.max(f64::MIN_POSITIVE)
            );
        }
    }
    if let Some(p) = &a.out {
        let _ = std::fs::write(
            p,
            serde_json::to_string_pretty(&reports).unwrap_or_default(),
        );
    }
    if failed {
        std::process::exit(1);
    }
}
