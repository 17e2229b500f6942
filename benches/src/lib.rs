//! Benchmark drivers: the programs that produce every figure in
//! `BENCHMARKS.md`, each running Tessera side by side with its baselines in
//! one invocation. They talk to Tessera only through the `tessera` binary
//! and the PostgreSQL wire (via the benchmark tools themselves). See
//! `ARCHITECTURE.md`.
//!
//! * `sysbench-compare`: Debian's sysbench against a Tessera cluster through
//!   haproxy, one MariaDB and one PostgreSQL 15, printing TPS, QPS, p95 and
//!   ratios, writing JSON/TSV and an SVG chart.
//! * `tpcc`: TPC-C over the PostgreSQL wire (schema and loader in
//!   [`tpcc`]), tpmC, latencies and the consistency conditions per target.
//! * `pgdiff` and `pgregress`: answers compared with PostgreSQL 15's
//!   ([`answer`]); `pgregress` runs PostgreSQL's own regression files
//!   ([`pgregress`]).
//! * `tpcds`: TPC-DS's 99 queries ([`tpcds`]), every answer judged against
//!   PostgreSQL 15's on the same rows, timed side by side.
//! * `exprfuzz`: random typed expressions on both, answers compared
//!   ([`exprfuzz`]).

pub mod answer;
pub mod copyload;
pub mod exprfuzz;
pub mod ledger;
pub mod pgbinary;
pub mod pgregress;
pub mod servers;
pub mod svg;
pub mod sysbench;
pub mod tpcc;
pub mod tpcds;

/// One sysbench run's figures.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RunResult {
    pub target: String,
    pub workload: String,
    pub ps_mode: String,
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    pub p95_ms: f64,
    pub errors: u64,
    pub reconnects: u64,
    pub ok: bool,
    pub note: String,
    /// CPU per transaction by process class and each server's statements
    /// per transaction, over this run.
    pub ledger: ledger::Ledger,
}

/// Parses sysbench 1.0's report.
pub fn parse_sysbench(out: &str) -> Option<(f64, f64, f64, u64, u64)> {
    let (tps, qps, p95, errors, reconnects, _) = parse_sysbench_counts(out)?;
    Some((tps, qps, p95, errors, reconnects))
}

/// [`parse_sysbench`] and the number of transactions the run made.
pub fn parse_sysbench_counts(out: &str) -> Option<(f64, f64, f64, u64, u64, u64)> {
    fn per_sec(line: &str) -> Option<f64> {
        let open = line.find('(')?;
        line[open + 1..].split_whitespace().next()?.parse().ok()
    }
    fn count(line: &str) -> Option<u64> {
        line.split(':')
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }
    let mut tps = None;
    let mut transactions = None;
    let mut qps = None;
    let mut p95 = None;
    let mut errors = 0;
    let mut reconnects = 0;
    for l in out.lines() {
        let t = l.trim();
        if t.starts_with("transactions:") {
            tps = per_sec(t);
            transactions = count(t);
        } else if t.starts_with("queries:") {
            qps = per_sec(t);
        } else if t.starts_with("95th percentile:") {
            p95 = t.split(':').nth(1).and_then(|v| v.trim().parse().ok());
        } else if t.starts_with("ignored errors:") {
            errors = count(t).unwrap_or(0);
        } else if t.starts_with("reconnects:") {
            reconnects = count(t).unwrap_or(0);
        }
    }
    Some((tps?, qps?, p95?, errors, reconnects, transactions?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_a_report() {
        let out = "SQL statistics:\n    queries performed:\n    transactions:                        5740   (1146.68 per sec.)\n    queries:                             5740   (1146.68 per sec.)\n    ignored errors:                      3      (0.00 per sec.)\n    reconnects:                          0      (0.00 per sec.)\nLatency (ms):\n         95th percentile:                        4.91\n";
        let (tps, qps, p95, e, r) = super::parse_sysbench(out).unwrap();
        assert_eq!((tps, qps, p95, e, r), (1146.68, 1146.68, 4.91, 3, 0));
    }
}
