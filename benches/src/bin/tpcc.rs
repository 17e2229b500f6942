//! TPC-C over the PostgreSQL wire protocol (tokio-postgres, prepared
//! statements, the path users take) and, for the MariaDB baseline, over
//! the MySQL protocol with the same transaction logic: loads the initial
//! database (COPY / LOAD DATA), runs the five transactions with the
//! specification's mix and keying from terminals bound to warehouses (no
//! think time unless `--think`), then checks consistency conditions 1-4
//! (TPC-C 3.3.2). Prints tpmC, tpmTotal, per-transaction latency
//! percentiles and errors by SQLSTATE; writes JSON, TSV and an SVG chart.
//!
//! `tpcc --tessera target/release/tessera --postgres --mariadb
//! --warehouses 10 --terminals 32 --time 300` starts a 3-shard cluster
//! (through haproxy), one PostgreSQL 15 and one MariaDB under `--work`, with
//! the same durability, and runs each in turn with the same settings;
//! `--cluster-args "--replicas 2"` passes options to `cluster up`;
//! `--also-cluster name=options` runs a second cluster of the same binary
//! after the first; `--mariadb-replicas 1` adds one MariaDB with a
//! semi-synchronous replica. Each server is started, run and stopped in
//! turn. `--target name=url` runs against a server already up (a target named
//! `tessera*` gets the warehouse-partitioned schema, a `mysql://` url the
//! MySQL protocol). `--faults` kills a compute node and then a shard of the
//! started cluster with SIGKILL during the run and restarts them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use benches::ledger::{Ledger, Watch};
use benches::tpcc::db::{Db, My, Pg};
use benches::tpcc::report::{chart, percentile, print_table, tsv, Report};
use benches::tpcc::txn::{delivery, new_order, order_status, payment, stock_level, Done};
use benches::tpcc::{self, Flavor, Rng};
use clap::Parser;

#[derive(Parser, Debug)]
struct Args {
    /// name=postgres-url of a server already up, repeated.
    #[arg(long = "target")]
    targets: Vec<String>,
    /// Start a Tessera cluster with this `tessera` binary and run on it.
    #[arg(long)]
    tessera: Option<std::path::PathBuf>,
    /// `tessera cluster up` options of the started cluster, e.g.
    /// `--replicas 2` (split on spaces).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    cluster_args: String,
    /// One more cluster of the same binary, started after the first has
    /// run and stopped: `name=options` (target `tessera-<name>`), e.g.
    /// `replicas2=--replicas 2`; repeated.
    #[arg(long = "also-cluster", allow_hyphen_values = true)]
    also_clusters: Vec<String>,
    /// Start one PostgreSQL 15 and run on it.
    #[arg(long)]
    postgres: bool,
    /// Start one MariaDB (the shards' settings) and run on it.
    #[arg(long)]
    mariadb: bool,
    /// Also run on one MariaDB with this many semi-synchronous replicas
    /// (target `mariadb-semisync`).
    #[arg(long, default_value_t = 0)]
    mariadb_replicas: u16,
    /// Kill a compute node (at 10 s) and then a shard (at 30 s) of the
    /// started cluster with SIGKILL, restarting each 10 s later.
    #[arg(long)]
    faults: bool,
    /// 10 s into the run, add a shard to the started cluster and
    /// rebalance; prints the time it took and tpmC before and during.
    #[arg(long)]
    rebalance: bool,
    /// The specification's keying and think times (5.2.5.4), not none.
    #[arg(long)]
    think: bool,
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
    /// The schema as BenchmarkSQL's kit makes it: no Tessera clause (the
    /// default placement) and its ten foreign keys, added after the load
    /// (on every target alike).
    #[arg(long)]
    kit: bool,
    /// Use the database as loaded before (no schema, no load).
    #[arg(long)]
    no_load: bool,
    /// Write the results as JSON here.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Write the results as TSV here.
    #[arg(long)]
    tsv: Option<std::path::PathBuf>,
    /// Write a chart (SVG) of tpmC and tpmTotal here.
    #[arg(long)]
    chart: Option<std::path::PathBuf>,
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

/// TPC-C 5.2.5: keying time before and think time after each
/// transaction kind (seconds; think times are negative exponential with
/// this mean, cut at ten times it).
const KEYING: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
const THINK: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

async fn pause(secs: f64, stop: &AtomicBool) {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(200).min(end - Instant::now())).await;
    }
}

/// One terminal: its home warehouse, transactions by the mix until `stop`.
async fn terminal<D: Db + 'static>(
    url: String,
    id: u32,
    w: i32,
    ws: u32,
    think: bool,
    measuring: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> Result<Stats, String> {
    let mut c = D::connect(&url, true).await?;
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
        if think {
            pause(KEYING[kind], &stop).await;
        }
        let t = Instant::now();
        h_seq += 1;
        let r = match kind {
            0 => new_order(&mut c, &mut rng, w, ws).await,
            1 => {
                let h = ((id as i64 + 1) << 40) + h_seq;
                payment(&mut c, &mut rng, w, ws, h).await
            }
            2 => order_status(&mut c, &mut rng, w).await,
            3 => delivery(&mut c, &mut rng, w).await,
            _ => stock_level(&mut c, &mut rng, w).await,
        };
        let measured = measuring.load(Ordering::Relaxed);
        match r {
            Ok(done) if measured => {
                if kind == 0 {
                    NEW_ORDERS.fetch_add(1, Ordering::Relaxed);
                }
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
                let _ = c.batch("ROLLBACK").await;
                if measured {
                    *stats.errors.entry(e.sqlstate).or_default() += 1;
                }
                // A node that died: connect again (through haproxy, to a
                // live one) for up to a minute, as an application would.
                if c.is_closed() {
                    stats.reconnects += 1;
                    let since = Instant::now();
                    loop {
                        match D::connect(&url, true).await {
                            Ok(n) => {
                                c = n;
                                break;
                            }
                            Err(_) if since.elapsed() < Duration::from_secs(60) => {}
                            Err(e) => return Err(format!("terminal {id}: connection lost: {e}")),
                        }
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                }
            }
        }
        if think {
            let r = (rng.int(1, 1_000_000) as f64 / 1_000_000.0).ln();
            pause((-r * THINK[kind]).min(10.0 * THINK[kind]), &stop).await;
        }
    }
    Ok(stats)
}

/// New-order transactions measured so far, over every terminal.
static NEW_ORDERS: AtomicU64 = AtomicU64::new(0);

struct Target {
    name: String,
    url: String,
    flavor: Flavor,
}

/// The fault schedule of `--faults` on the started cluster: a compute
/// node killed at 10 s, a shard at 30 s, each restarted 10 s later.
async fn faults(bin: std::path::PathBuf, dir: std::path::PathBuf) {
    for (at, role) in [(10, "compute"), (30, "shard")] {
        let (b, d) = (bin.clone(), dir.clone());
        tokio::time::sleep(Duration::from_secs(if role == "compute" { at } else { 10 })).await;
        let r = tokio::task::spawn_blocking(move || tpcc::faults::kill(&b, &d, role, 1)).await;
        eprintln!("  fault: SIGKILL {role}: {r:?}");
        tokio::time::sleep(Duration::from_secs(10)).await;
        let (b, d) = (bin.clone(), dir.clone());
        let r = tokio::task::spawn_blocking(move || tpcc::faults::restart(&b, &d)).await;
        eprintln!("  fault: cluster up: {r:?}");
    }
}

async fn run_target<D: Db + 'static>(
    a: &Args,
    t: &Target,
    cluster: Option<&benches::servers::Tessera>,
    watch: &Watch,
) -> Result<Report, String> {
    let (name, url) = (t.name.as_str(), t.url.as_str());
    if !a.no_load {
        eprintln!("[{name}] loading {} warehouses", a.warehouses);
        tpcc::setup::load::<D>(url, t.flavor, a.warehouses, a.kit).await?;
    }
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = vec![];
    for t in 0..a.terminals {
        let w = (t % a.warehouses) as i32 + 1;
        handles.push(tokio::spawn(terminal::<D>(
            url.to_string(),
            t,
            w,
            a.warehouses,
            a.think,
            measuring.clone(),
            stop.clone(),
        )));
    }
    tokio::time::sleep(Duration::from_secs(a.warmup)).await;
    let before = watch.start();
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    let fault_task = match cluster {
        Some(c) if a.faults => Some(tokio::spawn(faults(c.bin.clone(), c.dir.clone()))),
        _ => None,
    };
    let grow_task = match cluster {
        Some(c) if a.rebalance => Some(tokio::spawn(tpcc::faults::grow(
            c.bin.clone(),
            c.dir.clone(),
            Duration::from_secs(10),
            start,
        ))),
        _ => None,
    };
    // New orders so far, sampled until the run's time is over and a
    // rebalance, if any, has ended (its "during" needs samples to its end).
    let sample = || {
        (
            start.elapsed().as_secs_f64(),
            NEW_ORDERS.load(Ordering::Relaxed),
        )
    };
    let mut samples = vec![sample()];
    while start.elapsed() < Duration::from_secs(a.time)
        || grow_task.as_ref().is_some_and(|g| !g.is_finished())
    {
        tokio::time::sleep(Duration::from_millis(500)).await;
        samples.push(sample());
    }
    if let Some(g) = grow_task {
        let (asked, added, done) = g.await.map_err(|e| e.to_string())??;
        let rate = |f, t| tpcc::faults::rate_between(&samples, f, t);
        let end = samples.last().map_or(0.0, |s| s.0);
        eprintln!(
            "[{name}] rebalance: add-shard {:.1} s, rebalance {:.1} s; tpmC before {:.0}, during {:.0}, after {:.0}",
            added - asked,
            done - added,
            rate(0.0, asked),
            rate(added, done),
            rate(done, end)
        );
    }
    measuring.store(false, Ordering::Relaxed);
    let secs = start.elapsed().as_secs_f64();
    let after = watch.stop();
    stop.store(true, Ordering::Relaxed);
    if let Some(f) = fault_task {
        let _ = f.await;
    }
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
    // In-doubt branches are resolved by the compute nodes' recovery; none
    // may be left prepared.
    let prepared_left = match cluster {
        Some(c) => {
            Some(tpcc::faults::prepared_left(&c.bin, &c.dir, Duration::from_secs(60)).await?)
        }
        None => None,
    };
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
        prepared_left,
        consistency_failures: tpcc::setup::consistency::<D>(url).await?,
        ledger: Ledger::between(&before, &after, total),
    };
    for (k, v) in all.latencies.iter_mut() {
        r.p50_ms.insert(k.clone(), percentile(v, 0.50));
        r.p95_ms.insert(k.clone(), percentile(v, 0.95));
        r.p99_ms.insert(k.clone(), percentile(v, 0.99));
    }
    Ok(r)
}

fn flavor_of(name: &str, url: &str) -> Flavor {
    if url.starts_with("mysql://") {
        Flavor::Mariadb
    } else if name.starts_with("tessera") {
        Flavor::Tessera
    } else {
        Flavor::Postgres
    }
}

/// A server this invocation starts, kept up while its target runs.
enum Started {
    Tessera(benches::servers::Tessera),
    Postgres(benches::servers::Postgres),
    Mariadb(benches::servers::Mariadb),
}

impl Started {
    /// The cost ledger of the servers started here; the client is this
    /// process.
    fn watch(&self) -> Watch {
        match self {
            Started::Tessera(c) => c.watch(false),
            Started::Postgres(p) => p.watch(false),
            Started::Mariadb(m) => m.watch(false),
        }
    }
}

/// What one target runs on: a server already up (`--target`) or one to
/// start, in the order of the arguments.
enum Plan {
    Given(Target),
    Tessera {
        name: String,
        args: String,
        port: u16,
    },
    Postgres,
    Mariadb {
        replicas: u16,
    },
}

fn plans(a: &Args) -> Vec<Plan> {
    let mut v = vec![];
    for t in &a.targets {
        let Some((name, url)) = t.split_once('=') else {
            eprintln!("--target wants name=url: {t}");
            std::process::exit(2);
        };
        v.push(Plan::Given(Target {
            name: name.into(),
            url: url.into(),
            flavor: flavor_of(name, url),
        }));
    }
    if a.tessera.is_some() {
        v.push(Plan::Tessera {
            name: "tessera".into(),
            args: a.cluster_args.clone(),
            port: a.base_port,
        });
        for (k, c) in a.also_clusters.iter().enumerate() {
            let (name, args) = c.split_once('=').unwrap_or((c.as_str(), ""));
            v.push(Plan::Tessera {
                name: format!("tessera-{name}"),
                args: args.into(),
                port: a.base_port + 1000 * (k as u16 + 1),
            });
        }
    }
    if a.postgres {
        v.push(Plan::Postgres);
    }
    if a.mariadb {
        v.push(Plan::Mariadb { replicas: 0 });
    }
    if a.mariadb_replicas > 0 {
        v.push(Plan::Mariadb {
            replicas: a.mariadb_replicas,
        });
    }
    v
}

/// Starts a plan's server (none for a given target).
fn start(a: &Args, plan: Plan) -> Result<(Target, Option<Started>), String> {
    use benches::servers::{Mariadb, Postgres, Tessera};
    let mysql = |ep: &benches::servers::Endpoint| {
        format!(
            "mysql://{}:{}@127.0.0.1:{}/{}",
            ep.user, ep.password, ep.port, ep.db
        )
    };
    let target = |name: &str, url: String, flavor| Target {
        name: name.into(),
        url,
        flavor,
    };
    match plan {
        Plan::Given(t) => Ok((t, None)),
        Plan::Tessera { name, args, port } => {
            let bin = a.tessera.clone().unwrap_or_default();
            let dir = a.work.join(&name);
            let extra: Vec<String> = args.split_whitespace().map(String::from).collect();
            let (t, ep) = Tessera::start(&bin, &dir, port, "hash", a.durability, &extra)
                .map_err(|e| format!("{name} did not start: {e}"))?;
            let t2 = target(&name, ep.url(), Flavor::Tessera);
            Ok((t2, Some(Started::Tessera(t))))
        }
        Plan::Postgres => {
            let (p, ep) =
                Postgres::start(&a.work.join("postgres"), a.base_port + 300, a.durability)
                    .map_err(|e| format!("postgres baseline did not start: {e}"))?;
            Ok((
                target("postgres", ep.url(), Flavor::Postgres),
                Some(Started::Postgres(p)),
            ))
        }
        Plan::Mariadb { replicas } => {
            let dir = a.work.join(if replicas > 0 {
                "mariadb-semisync"
            } else {
                "mariadb"
            });
            let port = a.base_port + if replicas > 0 { 450 } else { 400 };
            let (m, ep) = Mariadb::start_replicated(&dir, port, a.durability, replicas)
                .map_err(|e| format!("mariadb baseline did not start: {e}"))?;
            Ok((
                target(&ep.name, mysql(&ep), Flavor::Mariadb),
                Some(Started::Mariadb(m)),
            ))
        }
    }
}

#[tokio::main]
async fn main() {
    let a = Args::parse();
    let mut reports = vec![];
    let mut failed = false;
    let plans = plans(&a);
    if plans.is_empty() {
        eprintln!("nothing to run: give --tessera, --postgres, --mariadb or --target");
        std::process::exit(2);
    }
    let _ = std::fs::create_dir_all(&a.work);
    // Each server is started, run on and stopped before the next starts.
    for plan in plans {
        let (t, server) = match start(&a, plan) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{e}");
                failed = true;
                continue;
            }
        };
        let watch = server.as_ref().map(Started::watch).unwrap_or_default();
        let cluster = match &server {
            Some(Started::Tessera(c)) => Some(c),
            _ => None,
        };
        let r = match t.flavor {
            Flavor::Mariadb => run_target::<My>(&a, &t, None, &watch).await,
            _ => run_target::<Pg>(&a, &t, cluster, &watch).await,
        };
        if let Some(Started::Mariadb(m)) = &server {
            eprintln!(
                "[{}] transactions acknowledged by a replica, and not: {:?}",
                t.name,
                m.semi_sync_counts()
            );
        }
        match r {
            Ok(r) => {
                failed |= !r.consistency_failures.is_empty() || r.prepared_left.unwrap_or(0) > 0;
                reports.push(r);
            }
            Err(e) => {
                eprintln!("[{}] failed: {e}", t.name);
                failed = true;
            }
        }
        drop(server);
    }
    print_table(&reports);
    if let Some(p) = &a.out {
        let _ = std::fs::write(
            p,
            serde_json::to_string_pretty(&reports).unwrap_or_default(),
        );
    }
    if let Some(p) = &a.tsv {
        let _ = std::fs::write(p, tsv(&reports));
    }
    if let Some(p) = &a.chart {
        let title = format!(
            "TPC-C, {} warehouses, {} terminals, {} s ({})",
            a.warehouses,
            a.terminals,
            a.time,
            a.durability.name()
        );
        let _ = std::fs::write(p, chart(&title, &reports));
    }
    if failed {
        std::process::exit(1);
    }
}
