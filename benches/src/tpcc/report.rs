//! A TPC-C run's report: the table printed, TSV and the chart.

use std::collections::BTreeMap;

pub fn percentile(v: &mut [u64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    v[i] as f64 / 1000.0
}

#[derive(serde::Serialize)]
pub struct Report {
    pub target: String,
    pub warehouses: u32,
    pub terminals: u32,
    pub seconds: u64,
    pub tpmc: f64,
    pub tpm_total: f64,
    pub p50_ms: BTreeMap<String, f64>,
    pub p95_ms: BTreeMap<String, f64>,
    pub p99_ms: BTreeMap<String, f64>,
    pub rollbacks: u64,
    /// Share of committed transactions that touched another warehouse.
    pub remote_share: f64,
    pub reconnects: u64,
    pub errors: BTreeMap<String, u64>,
    /// XA branches still prepared on the shards after the run (a started
    /// cluster only).
    pub prepared_left: Option<u64>,
    pub consistency_failures: Vec<String>,
    /// CPU per TPC-C transaction (any kind) by process class, and each
    /// server class's statements per transaction.
    pub ledger: crate::ledger::Ledger,
}

pub fn print_table(reports: &[Report]) {
    println!(
        "{:<12} {:>10} {:>10} {:>9} {:>9} {:>9} {:>7} {:>7}  consistency",
        "target", "tpmC", "tpmTotal", "NO p50", "NO p95", "NO p99", "errors", "remote"
    );
    for r in reports {
        let errors: u64 = r.errors.values().sum();
        let mut verdict = if r.consistency_failures.is_empty() {
            "CC1-CC4 ok".to_string()
        } else {
            r.consistency_failures.join("; ")
        };
        if let Some(n) = r.prepared_left {
            verdict.push_str(&format!(", {n} XA branches left prepared"));
        }
        println!(
            "{:<12} {:>10.1} {:>10.1} {:>9.2} {:>9.2} {:>9.2} {:>7} {:>6.1}%  {verdict}",
            r.target,
            r.tpmc,
            r.tpm_total,
            r.p50_ms.get("new_order").copied().unwrap_or(0.0),
            r.p95_ms.get("new_order").copied().unwrap_or(0.0),
            r.p99_ms.get("new_order").copied().unwrap_or(0.0),
            errors,
            r.remote_share * 100.0,
        );
        if !r.errors.is_empty() || r.reconnects > 0 {
            println!(
                "  errors by SQLSTATE: {:?}; reconnects: {}",
                r.errors, r.reconnects
            );
        }
    }
    for r in reports.iter().filter(|r| r.target.starts_with("tessera")) {
        for base in reports.iter().filter(|r| !r.target.starts_with("tessera")) {
            println!(
                "{} / {}: tpmC ratio {:.2}",
                r.target,
                base.target,
                r.tpmc / base.tpmc.max(f64::MIN_POSITIVE)
            );
        }
    }
    println!("cost ledger (CPU us per TPC-C transaction by process; statements per transaction)");
    for r in reports.iter().filter(|r| !r.ledger.cpu_us.is_empty()) {
        println!("{:<12} {}", r.target, r.ledger.line());
    }
}

pub fn tsv(reports: &[Report]) -> String {
    let mut out = String::from(
        "target\twarehouses\tterminals\tseconds\ttpmC\ttpmTotal\tno_p50_ms\tno_p95_ms\tno_p99_ms\terrors\tremote_share\tconsistency\n",
    );
    for r in reports {
        let p = |m: &BTreeMap<String, f64>| m.get("new_order").copied().unwrap_or(0.0);
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{:.1}\t{:.1}\t{:.2}\t{:.2}\t{:.2}\t{}\t{:.4}\t{}\n",
            r.target,
            r.warehouses,
            r.terminals,
            r.seconds,
            r.tpmc,
            r.tpm_total,
            p(&r.p50_ms),
            p(&r.p95_ms),
            p(&r.p99_ms),
            r.errors.values().sum::<u64>(),
            r.remote_share,
            if r.consistency_failures.is_empty() && r.prepared_left.unwrap_or(0) == 0 {
                "ok"
            } else {
                "FAILED"
            }
        ));
    }
    out
}

pub fn chart(title: &str, reports: &[Report]) -> String {
    let series: Vec<crate::svg::Series> = reports
        .iter()
        .map(|r| crate::svg::Series {
            name: r.target.clone(),
            values: vec![r.tpmc, r.tpm_total],
        })
        .collect();
    crate::svg::bar_chart(
        title,
        "transactions per minute",
        &["tpmC".to_string(), "tpmTotal".to_string()],
        &series,
    )
}
