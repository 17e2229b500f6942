//! `sysbench-compare`: the same sysbench workloads, in one invocation,
//! against a Tessera cluster through haproxy (hash-distributed and/or
//! whole-table placement), one MariaDB and one PostgreSQL 15. Prints TPS,
//! QPS, p95 and the ratios Tessera/MariaDB and Tessera/PostgreSQL; writes
//! JSON, TSV and an SVG chart.

use std::path::PathBuf;

use benches::ledger::{Ledger, Watch};
use benches::servers::{Durability, Endpoint, Mariadb, Postgres, Tessera};
use benches::sysbench::{run_result, sysbench};
use benches::{svg, RunResult};
use clap::Parser;

const ALL: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
];

#[derive(Parser)]
#[command(about = "sysbench: Tessera vs one MariaDB vs one PostgreSQL, side by side")]
struct Args {
    /// The tessera binary (a release build for real figures).
    #[arg(long, default_value = "target/release/tessera")]
    tessera: PathBuf,
    /// A second tessera binary (the build before a change), run as the
    /// target `tessera-<placement>-before` right after the first in the
    /// same invocation, for before/after figures.
    #[arg(long)]
    before_tessera: Option<PathBuf>,
    /// With --before-tessera: both builds' clusters run side by side and
    /// take turns, N rounds in ABBA order (round 1 this build first, round
    /// 2 the before build first, ...), each run's target named
    /// `<target>@<round>`. Run one after the other, the first target of an
    /// invocation did 10-20 % better on a shared machine (BENCHMARKS.md,
    /// session 22). 0: one target after the other. `--per-shard-reads`
    /// runs only in that mode.
    #[arg(long, default_value_t = 0)]
    rounds: u32,
    /// Work folder for the clusters and servers.
    #[arg(long, default_value = "/tmp/tessera-bench")]
    work: PathBuf,
    #[arg(long, default_value_t = 8)]
    tables: u32,
    #[arg(long, default_value_t = 100_000)]
    table_size: u32,
    /// Comma-separated thread counts.
    #[arg(long, default_value = "16,64,256")]
    threads: String,
    /// Seconds per run.
    #[arg(long, default_value_t = 30)]
    time: u32,
    /// Comma-separated workloads (default: all the workloads).
    #[arg(long)]
    workloads: Option<String>,
    /// Comma-separated: auto, disable.
    #[arg(long, default_value = "auto")]
    ps_modes: String,
    /// Comma-separated Tessera placements: hash, single.
    #[arg(long, default_value = "hash,single")]
    distributions: String,
    /// Also run every workload on each cluster with
    /// `tessera.consistent_reads = off` (target `<name>-per-shard-reads`),
    /// after the default consistent reads.
    #[arg(long)]
    per_shard_reads: bool,
    /// Also run a MariaDB baseline with this many semi-synchronous
    /// replicas (target `mariadb-semisync`, after `mariadb`): the cost of
    /// replication on one server, beside Tessera's `--replicas N`.
    #[arg(long, default_value_t = 0)]
    mariadb_replicas: u16,
    /// Skip the MariaDB and PostgreSQL baselines.
    #[arg(long)]
    no_baselines: bool,
    /// Also run `prepare` with --auto_inc=off (explicit ids).
    #[arg(long)]
    auto_inc_off: bool,
    /// More `tessera cluster up` options for this build's cluster, e.g.
    /// `--default-partitions 3` (split on spaces).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    cluster_args: String,
    /// The same for the --before-tessera build's cluster (the same binary
    /// twice with different options compares the options).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    before_cluster_args: String,
    /// Where results go.
    #[arg(long, default_value = "benches/results")]
    out: PathBuf,
    #[arg(long, default_value_t = 25000)]
    base_port: u16,
    /// Commit flushing on every server alike: relaxed (the reports'
    /// settings) or durable.
    #[arg(long, value_enum, default_value = "relaxed")]
    durability: Durability,
}

/// One invocation: its arguments, the lists parsed from them, and what
/// it has measured so far.
struct Bench {
    a: Args,
    threads: Vec<u32>,
    workloads: Vec<String>,
    ps_modes: Vec<String>,
    results: Vec<RunResult>,
    targets: Vec<String>,
}

impl Bench {
    fn new(a: Args) -> Bench {
        let threads = a
            .threads
            .split(',')
            .filter_map(|t| t.trim().parse().ok())
            .collect();
        let workloads = match &a.workloads {
            Some(w) => w.split(',').map(|s| s.trim().to_string()).collect(),
            None => ALL.iter().map(|s| s.to_string()).collect(),
        };
        let ps_modes = a
            .ps_modes
            .split(',')
            .map(|s| s.trim().to_string())
            .collect();
        Bench {
            a,
            threads,
            workloads,
            ps_modes,
            results: vec![],
            targets: vec![],
        }
    }

    /// sysbench's options for one run.
    fn common(&self, t: u32, ps: &str) -> Vec<String> {
        let a = &self.a;
        let mut v = vec![
            format!("--tables={}", a.tables),
            format!("--table-size={}", a.table_size),
            "--rand-type=uniform".into(),
            format!("--threads={t}"),
            format!("--time={}", a.time),
            format!("--db-ps-mode={ps}"),
            "--report-interval=0".into(),
        ];
        // oltp_insert must know the ids are explicit, or it leaves
        // `id` out of its INSERTs.
        if a.auto_inc_off {
            v.push("--auto_inc=off".into());
        }
        v
    }

    fn oltp(&self) -> Vec<String> {
        self.workloads
            .iter()
            .filter(|w| *w != "bulk_insert")
            .cloned()
            .collect()
    }

    /// One sysbench run, measured: the ledger's readings close around it.
    fn measured(
        &mut self,
        ep: &Endpoint,
        watch: &Watch,
        w: &str,
        ps: &str,
        t: u32,
        args: &[String],
    ) {
        let before = watch.start();
        let (ok, out) = sysbench(ep, w, "run", args);
        let after = watch.stop();
        let mut r = run_result(ep, w, ps, t, ok, &out);
        r.ledger = Ledger::between(&before, &after, r.ledger.transactions);
        eprintln!(
            "[{}] {w} ps={ps} threads={t}: tps {:.1} qps {:.1} p95 {:.2} ms errors {} {}\n    {}",
            ep.name,
            r.tps,
            r.qps,
            r.p95_ms,
            r.errors,
            r.note,
            r.ledger.line()
        );
        self.results.push(r);
    }

    /// Tables for the OLTP workloads; false (and a failed run recorded, so
    /// the invocation fails) when sysbench could not make them.
    fn prepare(&mut self, ep: &Endpoint) -> bool {
        let tables = self.a.tables.min(8);
        eprintln!(
            "[{}] prepare {} tables x {} rows",
            ep.name, self.a.tables, self.a.table_size
        );
        let (_, _) = sysbench(ep, "oltp_common", "cleanup", &self.common(1, "disable"));
        let (ok, out) = sysbench(
            ep,
            "oltp_common",
            "prepare",
            &self.common(tables, "disable"),
        );
        if !ok {
            eprintln!("[{}] prepare failed:\n{out}", ep.name);
            let r = run_result(ep, "prepare", "disable", tables, false, &out);
            self.results.push(r);
        }
        ok
    }

    fn cleanup(&self, ep: &Endpoint) {
        let c = self.common(self.a.tables.min(8), "disable");
        let _ = sysbench(ep, "oltp_common", "cleanup", &c);
    }

    /// Every workload on one target, one after the other.
    fn run_target(&mut self, ep: &Endpoint, watch: &Watch) {
        self.targets.push(ep.name.clone());
        let oltp = self.oltp();
        if !oltp.is_empty() && self.prepare(ep) {
            for ps in self.ps_modes.clone() {
                for w in &oltp {
                    for t in self.threads.clone() {
                        let c = self.common(t, &ps);
                        self.measured(ep, watch, w, &ps, t, &c);
                    }
                }
            }
            self.cleanup(ep);
        }
        if self.workloads.iter().any(|w| w == "bulk_insert") {
            for ps in self.ps_modes.clone() {
                for t in self.threads.clone() {
                    // bulk_insert.lua has no --auto_inc option.
                    let c: Vec<String> = self
                        .common(t, &ps)
                        .into_iter()
                        .filter(|o| !o.starts_with("--auto_inc"))
                        .collect();
                    let _ = sysbench(ep, "bulk_insert", "cleanup", &c);
                    let _ = sysbench(ep, "bulk_insert", "prepare", &c);
                    self.measured(ep, watch, "bulk_insert", &ps, t, &c);
                    let _ = sysbench(ep, "bulk_insert", "cleanup", &c);
                }
            }
        }
    }

    /// The OLTP workloads on two targets up side by side, taking turns:
    /// `rounds` rounds in ABBA order, each run named `<target>@<round>`.
    fn run_rounds(&mut self, pair: &[(Endpoint, Watch); 2]) {
        if !pair.iter().all(|(ep, _)| self.prepare(ep)) {
            return;
        }
        let rounds = self.a.rounds;
        for round in 1..=rounds {
            for (ep, _) in order(pair, round) {
                self.targets.push(format!("{}@{round}", ep.name));
            }
        }
        for ps in self.ps_modes.clone() {
            for w in self.oltp() {
                for t in self.threads.clone() {
                    let c = self.common(t, &ps);
                    for round in 1..=rounds {
                        for (ep, watch) in order(pair, round) {
                            let mut named = ep.clone();
                            named.name = format!("{}@{round}", ep.name);
                            self.measured(&named, watch, &w, &ps, t, &c);
                        }
                    }
                }
            }
        }
        for (ep, _) in pair {
            self.cleanup(ep);
        }
    }

    /// The Tessera targets: each placement, this build and the one before.
    fn run_tessera(&mut self) {
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let mut builds = vec![(self.a.tessera.clone(), "", words(&self.a.cluster_args))];
        if let Some(b) = &self.a.before_tessera {
            builds.push((b.clone(), "-before", words(&self.a.before_cluster_args)));
        }
        let dists: Vec<String> = self
            .a
            .distributions
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let side_by_side = self.a.rounds > 0 && builds.len() == 2;
        for (i, dist) in dists.iter().enumerate() {
            let mut up = vec![];
            for (j, (bin, suffix, extra)) in builds.iter().enumerate() {
                let dir = self.a.work.join(format!("tessera-{dist}{suffix}"));
                let _ = std::fs::remove_dir_all(&dir);
                // Side by side, the second cluster takes ports 50 higher.
                let port = self.a.base_port + 100 * i as u16 + 50 * j as u16;
                match Tessera::start(bin, &dir, port, dist, self.a.durability, extra) {
                    Ok((cluster, mut ep)) => {
                        ep.name.push_str(suffix);
                        let watch = cluster.watch(true);
                        if side_by_side {
                            up.push((cluster, ep, watch));
                            continue;
                        }
                        self.run_target(&ep, &watch);
                        if self.a.per_shard_reads {
                            let mut relaxed = ep.clone();
                            relaxed.name = format!("{}-per-shard-reads", ep.name);
                            relaxed.options = Some("-c tessera.consistent_reads=off".into());
                            self.run_target(&relaxed, &watch);
                        }
                    }
                    Err(e) => {
                        eprintln!("tessera ({dist}{suffix}) did not start: {e}");
                        self.results.push(RunResult {
                            target: format!("tessera-{dist}{suffix}"),
                            workload: "start".into(),
                            note: e,
                            ..Default::default()
                        });
                    }
                }
            }
            let mut up = up.into_iter();
            if let (Some((c1, ep1, w1)), Some((c2, ep2, w2))) = (up.next(), up.next()) {
                self.run_rounds(&[(ep1, w1), (ep2, w2)]);
                drop((c1, c2));
            }
        }
    }
}

/// Round 1, 3, ...: the pair as given; round 2, 4, ...: the other way.
fn order<T>(pair: &[T; 2], round: u32) -> [&T; 2] {
    if round % 2 == 1 {
        [&pair[0], &pair[1]]
    } else {
        [&pair[1], &pair[0]]
    }
}

fn main() {
    let mut b = Bench::new(Args::parse());
    let _ = std::fs::create_dir_all(&b.a.work);
    let _ = std::fs::create_dir_all(&b.a.out);
    b.run_tessera();
    if !b.a.no_baselines {
        let (work, port, durability) = (b.a.work.clone(), b.a.base_port, b.a.durability);
        match Mariadb::start(&work.join("mariadb"), port + 300, durability) {
            Ok((m, ep)) => {
                b.run_target(&ep, &m.watch(true));
                drop(m);
            }
            Err(e) => eprintln!("mariadb baseline did not start: {e}"),
        }
        if b.a.mariadb_replicas > 0 {
            let replicas = b.a.mariadb_replicas;
            match Mariadb::start_replicated(
                &work.join("mariadb-semisync"),
                port + 310,
                durability,
                replicas,
            ) {
                Ok((m, ep)) => {
                    b.run_target(&ep, &m.watch(true));
                    eprintln!(
                        "[mariadb-semisync] transactions acknowledged by a replica, and not: {:?}",
                        m.semi_sync_counts()
                    );
                    drop(m);
                }
                Err(e) => eprintln!("mariadb-semisync baseline did not start: {e}"),
            }
        }
        match Postgres::start(&work.join("postgres"), port + 301, durability) {
            Ok((p, ep)) => {
                b.run_target(&ep, &p.watch(true));
                drop(p);
            }
            Err(e) => eprintln!("postgres baseline did not start: {e}"),
        }
    }
    let plan = Plan {
        workloads: &b.workloads,
        ps_modes: &b.ps_modes,
        threads: &b.threads,
        targets: &b.targets,
    };
    report(&b.a, &plan, &b.results);
    // A failed run or a reconnect fails the invocation. Ignored errors are
    // sysbench's retries of deadlocks and duplicate keys (40P01/23505), which
    // small tables produce on any server; they are reported, not fatal.
    let failed = b
        .results
        .iter()
        .filter(|r| !r.ok || (r.target.starts_with("tessera") && r.reconnects > 0))
        .count();
    eprintln!(
        "results in {}; {} runs, {failed} failed or with Tessera reconnects",
        b.a.out.display(),
        b.results.len()
    );
    if failed > 0 {
        std::process::exit(1);
    }
}

/// What one invocation ran, in the order its tables list it.
struct Plan<'a> {
    workloads: &'a [String],
    ps_modes: &'a [String],
    threads: &'a [u32],
    targets: &'a [String],
}

/// The TPS table and the cost ledger, printed and written (TSV, JSON, SVG).
fn report(a: &Args, plan: &Plan, results: &[RunResult]) {
    // The table: one row per workload x ps mode x threads.
    let find = |t: &str, w: &str, ps: &str, th: u32| {
        results
            .iter()
            .find(|r| r.target == t && r.workload == w && r.ps_mode == ps && r.threads == th)
    };
    let mut tsv = String::from("workload\tps_mode\tthreads\ttarget\ttps\tqps\tp95_ms\terrors\treconnects\tok\tvs_mariadb\tvs_postgres\n");
    println!(
        "{:<22} {:<7} {:>7} {:<28} {:>10} {:>10} {:>9} {:>6} {:>9} {:>9}",
        "workload",
        "ps",
        "threads",
        "target",
        "tps",
        "qps",
        "p95 ms",
        "errors",
        "vs maria",
        "vs pg"
    );
    for w in plan.workloads {
        for ps in plan.ps_modes {
            for th in plan.threads {
                for t in plan.targets {
                    let Some(r) = find(t, w, ps, *th) else {
                        continue;
                    };
                    let ratio = |base: &str| {
                        find(base, w, ps, *th)
                            .filter(|b| b.tps > 0.0 && r.ok)
                            .map(|b| r.tps / b.tps)
                    };
                    let (vm, vp) = if t.starts_with("tessera") {
                        (ratio("mariadb"), ratio("postgres"))
                    } else {
                        (None, None)
                    };
                    let fmt = |x: Option<f64>| {
                        x.map(|v| format!("{v:.2}x")).unwrap_or_else(|| "-".into())
                    };
                    println!(
                        "{:<22} {:<7} {:>7} {:<28} {:>10.1} {:>10.1} {:>9.2} {:>6} {:>9} {:>9}{}",
                        w,
                        ps,
                        th,
                        t,
                        r.tps,
                        r.qps,
                        r.p95_ms,
                        r.errors,
                        fmt(vm),
                        fmt(vp),
                        if r.ok {
                            String::new()
                        } else {
                            format!("  FAILED {}", r.note)
                        }
                    );
                    tsv.push_str(&format!(
                        "{w}\t{ps}\t{th}\t{t}\t{:.2}\t{:.2}\t{:.2}\t{}\t{}\t{}\t{}\t{}\n",
                        r.tps,
                        r.qps,
                        r.p95_ms,
                        r.errors,
                        r.reconnects,
                        r.ok,
                        fmt(vm),
                        fmt(vp)
                    ));
                }
            }
        }
    }
    let _ = std::fs::write(a.out.join("sysbench.tsv"), tsv);
    let _ = std::fs::write(
        a.out.join("sysbench.json"),
        serde_json::to_string_pretty(&results).unwrap_or_default(),
    );
    // Chart: TPS per workload at the highest thread count, first ps mode.
    if let (Some(th), Some(ps)) = (plan.threads.iter().max(), plan.ps_modes.first()) {
        let series: Vec<svg::Series> = plan
            .targets
            .iter()
            .map(|t| svg::Series {
                name: t.clone(),
                values: plan
                    .workloads
                    .iter()
                    .map(|w| find(t, w, ps, *th).map(|r| r.tps).unwrap_or(0.0))
                    .collect(),
            })
            .collect();
        let chart = svg::bar_chart(
            &format!(
                "sysbench TPS, {th} threads, ps-mode {ps}, {} tables x {} rows",
                a.tables, a.table_size
            ),
            "transactions per second",
            plan.workloads,
            &series,
        );
        let _ = std::fs::write(a.out.join("sysbench.svg"), chart);
    }
    print_ledger(plan, results);
}

/// The cost ledger: CPU per transaction of each process class, and the
/// statements the MariaDB servers received per transaction; for a Tessera
/// target, its servers' CPU against the MariaDB baseline's.
fn print_ledger(plan: &Plan, results: &[RunResult]) {
    println!("\ncost ledger (CPU us per transaction by process; statements per transaction)");
    for w in plan.workloads {
        for ps in plan.ps_modes {
            for th in plan.threads {
                let find = |t: &str| {
                    results.iter().find(|r| {
                        r.target == t && r.workload == *w && r.ps_mode == *ps && r.threads == *th
                    })
                };
                let base = find("mariadb").and_then(|b| b.ledger.cpu_us.get("servers").copied());
                for t in plan.targets {
                    let Some(r) = find(t).filter(|r| r.ok) else {
                        continue;
                    };
                    let vs = match (
                        t.starts_with("tessera"),
                        base,
                        r.ledger.cpu_us.get("servers"),
                    ) {
                        (true, Some(b), Some(s)) if b > 0.0 => {
                            format!(" ({:.2}x MariaDB's CPU)", s / b)
                        }
                        _ => String::new(),
                    };
                    println!("{w:<22} {ps:<7} {th:>7} {t:<28} {}{vs}", r.ledger.line());
                }
            }
        }
    }
}
