//! `rebalance-under-load`: sysbench oltp_read_write through haproxy on a
//! Tessera cluster for the whole of `tessera cluster add-shard` and
//! `tessera cluster rebalance` (issue 33). Prints, per phase (before,
//! during, after the rebalance), TPS, the worst per-second p99, errors
//! and reconnects; per move, its fence, copy rate and the p99 of the
//! seconds around its cutover; and the time to rebalance. The baseline is
//! the same cluster's own seconds before the rebalance, in the same run.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use benches::servers::{Durability, Tessera};
use benches::sysbench::sysbench;
use clap::Parser;

#[derive(Parser)]
#[command(
    about = "sysbench oltp_read_write through haproxy while a shard is added and the cluster rebalanced"
)]
struct Args {
    #[arg(long, default_value = "target/release/tessera")]
    tessera: PathBuf,
    #[arg(long, default_value = "/tmp/tessera-rebalance")]
    work: PathBuf,
    #[arg(long, default_value_t = 25600)]
    base_port: u16,
    #[arg(long, default_value_t = 8)]
    tables: u32,
    #[arg(long, default_value_t = 100_000)]
    table_size: u32,
    #[arg(long, default_value_t = 16)]
    threads: u32,
    /// Seconds of load before add-shard.
    #[arg(long, default_value_t = 20)]
    warmup: u64,
    /// Seconds of load after the rebalance ends.
    #[arg(long, default_value_t = 15)]
    tail: u64,
    /// The mover's share of time spent copying (`rebalance --duty`).
    #[arg(long)]
    duty: Option<f64>,
    #[arg(long, value_enum, default_value = "relaxed")]
    durability: Durability,
    /// Where the JSON summary and the raw logs go.
    #[arg(long, default_value = "benches/results/rebalance")]
    out: PathBuf,
}

/// Lines of a child's stdout with the seconds since `t0` they arrived at.
type Lines = Arc<Mutex<Vec<(f64, String)>>>;

fn collect(child: &mut std::process::Child, t0: Instant) -> (Lines, std::thread::JoinHandle<()>) {
    let lines: Lines = Arc::default();
    let sink = lines.clone();
    let out = child.stdout.take();
    let h = std::thread::spawn(move || {
        let Some(out) = out else { return };
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if let Ok(mut v) = sink.lock() {
                v.push((t0.elapsed().as_secs_f64(), l));
            }
        }
    });
    (lines, h)
}

/// One sysbench interval report: (tps, p99 ms, err/s, reconn/s).
type Interval = (f64, f64, f64, f64);

fn interval(line: &str) -> Option<Interval> {
    let after = |key: &str| -> Option<f64> {
        let i = line.find(key)? + key.len();
        line[i..].split_whitespace().next()?.parse().ok()
    };
    Some((
        after("tps:")?,
        after("lat (ms,99%):")?,
        after("err/s:")?,
        after("reconn/s:")?,
    ))
}

/// A number after `key` in a mover's report line.
fn field(line: &str, key: &str, unit: &str) -> Option<f64> {
    let i = line.find(key)? + key.len();
    let rest = &line[i..];
    rest[..rest.find(unit)?].trim().parse().ok()
}

#[derive(Default, serde::Serialize)]
struct Phase {
    seconds: usize,
    tps: f64,
    worst_p99_ms: f64,
    errors: f64,
    reconnects: f64,
}

fn phase(samples: &[(f64, Interval)], from: f64, to: f64) -> Phase {
    let s: Vec<_> = samples
        .iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .map(|(_, v)| *v)
        .collect();
    let n = s.len().max(1) as f64;
    Phase {
        seconds: s.len(),
        tps: s.iter().map(|v| v.0).sum::<f64>() / n,
        worst_p99_ms: s.iter().map(|v| v.1).fold(0.0, f64::max),
        errors: s.iter().map(|v| v.2).sum(),
        reconnects: s.iter().map(|v| v.3).sum(),
    }
}

fn run_tessera(
    a: &Args,
    dir: &std::path::Path,
    cmd: &str,
    t0: Instant,
) -> (bool, Vec<(f64, String)>) {
    let mut c = Command::new(&a.tessera);
    c.args(["cluster", cmd, "--data-dir"]).arg(dir);
    if let (Some(d), "rebalance") = (a.duty, cmd) {
        c.args(["--duty", &d.to_string()]);
    }
    let Ok(mut child) = c.stdout(Stdio::piped()).spawn() else {
        return (false, vec![]);
    };
    let (lines, h) = collect(&mut child, t0);
    let ok = child.wait().is_ok_and(|s| s.success());
    let _ = h.join();
    let v = lines.lock().map(|v| v.clone()).unwrap_or_default();
    for (t, l) in &v {
        eprintln!("[{t:7.2}s] {l}");
    }
    (ok, v)
}

fn main() -> Result<(), String> {
    let a = Args::parse();
    let _ = std::fs::remove_dir_all(&a.work);
    std::fs::create_dir_all(&a.out).map_err(|e| e.to_string())?;
    let dir = a.work.join("tessera");
    let (_cluster, ep) = Tessera::start(&a.tessera, &dir, a.base_port, "hash", a.durability, &[])?;
    let common = vec![
        format!("--tables={}", a.tables),
        format!("--table-size={}", a.table_size),
        "--rand-type=uniform".to_string(),
    ];
    let mut prep = common.clone();
    prep.push(format!("--threads={}", a.tables.min(8)));
    eprintln!("prepare {} tables x {} rows", a.tables, a.table_size);
    let (ok, out) = sysbench(&ep, "oltp_common", "prepare", &prep);
    if !ok {
        return Err(format!("sysbench prepare failed:\n{out}"));
    }
    let t0 = Instant::now();
    let mut load = Command::new("sysbench");
    load.arg("oltp_read_write")
        .args(ep.sysbench_args())
        .args(&common)
        .args([
            format!("--threads={}", a.threads),
            "--time=36000".into(),
            "--report-interval=1".into(),
            "--percentile=99".into(),
            "--db-ps-mode=auto".into(),
        ])
        .arg("run")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut load = load.spawn().map_err(|e| e.to_string())?;
    let (sb_lines, sb_thread) = collect(&mut load, t0);
    std::thread::sleep(Duration::from_secs(a.warmup));
    let t_add = t0.elapsed().as_secs_f64();
    let (added, _) = run_tessera(&a, &dir, "add-shard", t0);
    let t_rebalance = t0.elapsed().as_secs_f64();
    let (rebalanced, mover) = run_tessera(&a, &dir, "rebalance", t0);
    let t_done = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(a.tail));
    let still_running = load.try_wait().ok().flatten().is_none();
    let _ = Command::new("kill").arg(load.id().to_string()).output();
    let stderr = load.stderr.take();
    let _ = load.wait();
    let _ = sb_thread.join();
    let mut sb_err = String::new();
    if let Some(mut e) = stderr {
        let _ = std::io::Read::read_to_string(&mut e, &mut sb_err);
    }
    let sb = sb_lines.lock().map(|v| v.clone()).unwrap_or_default();
    let samples: Vec<(f64, Interval)> = sb
        .iter()
        .filter_map(|(t, l)| interval(l).map(|v| (*t, v)))
        .collect();
    let p99_near = |t: f64| {
        samples
            .iter()
            .filter(|(s, _)| *s >= t - 0.5 && *s < t + 1.5)
            .map(|(_, v)| v.1)
            .fold(0.0, f64::max)
    };
    let moves: Vec<serde_json::Value> = mover
        .iter()
        .filter(|(_, l)| l.starts_with("move ") && l.contains(" done:"))
        .map(|(t, l)| {
            serde_json::json!({
                "at_s": t,
                "fence_ms": field(l, "fence ", " ms"),
                "fence_parts_ms": l
                    .split_once(" ms (")
                    .and_then(|(_, r)| r.split_once(')'))
                    .map(|(p, _)| p),
                "copy_mb_s": field(l, " at ", " MB/s"),
                "copied_mb": field(l, " rows (", " MB)"),
                "p99_ms_at_cutover": p99_near(*t),
                "verified": l.ends_with("verified"),
                "line": l,
            })
        })
        .collect();
    let summary = serde_json::json!({
        "tables": a.tables,
        "table_size": a.table_size,
        "threads": a.threads,
        "add_shard_ok": added,
        "rebalance_ok": rebalanced,
        "sysbench_ran_throughout": still_running,
        "add_shard_s": t_rebalance - t_add,
        "rebalance_s": t_done - t_rebalance,
        "before": phase(&samples, 5.0, t_add),
        "during": phase(&samples, t_add, t_done),
        "after": phase(&samples, t_done, f64::MAX),
        "moves": moves,
    });
    let text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
    println!("{text}");
    let log: String = sb
        .iter()
        .map(|(t, l)| format!("[{t:7.2}s] {l}\n"))
        .collect();
    let mover_log: String = mover
        .iter()
        .map(|(t, l)| format!("[{t:7.2}s] {l}\n"))
        .collect();
    for (name, body) in [
        ("rebalance.json", text),
        ("sysbench.log", format!("{log}{sb_err}")),
        ("mover.log", mover_log),
    ] {
        let _ = std::fs::write(a.out.join(name), body);
    }
    if !(added && rebalanced && still_running) {
        return Err(format!(
            "add-shard ok: {added}, rebalance ok: {rebalanced}, sysbench ran throughout: {still_running}\n{sb_err}"
        ));
    }
    Ok(())
}
