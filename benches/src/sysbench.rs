//! Running Debian's sysbench against an endpoint and reading its report.

use std::process::Command;

use crate::servers::Endpoint;
use crate::{parse_sysbench_counts, RunResult};

/// Runs `sysbench <workload> <extra..> <cmd>`: whether it succeeded, and
/// its output.
pub fn sysbench(ep: &Endpoint, workload: &str, cmd: &str, extra: &[String]) -> (bool, String) {
    let mut c = Command::new("sysbench");
    if let Some(o) = &ep.options {
        c.env("PGOPTIONS", o);
    }
    c.arg(workload)
        .args(ep.sysbench_args())
        .args(extra)
        .arg(cmd);
    match c.output() {
        Ok(o) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            (o.status.success(), text)
        }
        Err(e) => (false, e.to_string()),
    }
}

/// One run's result from sysbench's exit status and report.
pub fn run_result(
    ep: &Endpoint,
    workload: &str,
    ps: &str,
    threads: u32,
    ok: bool,
    out: &str,
) -> RunResult {
    let mut r = RunResult {
        target: ep.name.clone(),
        workload: workload.to_string(),
        ps_mode: ps.to_string(),
        threads,
        ok,
        ..Default::default()
    };
    match parse_sysbench_counts(out) {
        Some((tps, qps, p95, errors, reconnects, transactions)) if ok => {
            r.ledger.transactions = transactions as f64;
            r.tps = tps;
            r.qps = qps;
            r.p95_ms = p95;
            r.errors = errors;
            r.reconnects = reconnects;
        }
        _ => {
            r.ok = false;
            r.note = out
                .lines()
                .filter(|l| l.contains("FATAL") || l.contains("error"))
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ");
        }
    }
    r
}
