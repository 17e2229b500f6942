//! The run's report: counts per file and in total, the differing
//! statements, and the check against `known-differences.txt` (a listed
//! statement must still differ, an unlisted one must not).

use std::collections::{BTreeSet, HashSet};

use serde::Serialize;

use super::verdict::Verdict;

/// Counts for one file.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub statements: usize,
    pub same: usize,
    pub error_both: usize,
    pub refused: usize,
    pub cascade: usize,
    pub plans: usize,
    pub differ: usize,
    /// Differing and not in the known list: these fail the run.
    pub unlisted: usize,
    /// Meta-commands skipped (`\d`, `\pset`, ...).
    pub meta: usize,
    /// Statements on which either side ran out of time.
    pub timeouts: usize,
    pub seconds: f64,
}

impl Counts {
    pub fn count(&mut self, v: Verdict) {
        self.statements += 1;
        match v {
            Verdict::Same => self.same += 1,
            Verdict::ErrorBoth => self.error_both += 1,
            Verdict::Refused => self.refused += 1,
            Verdict::Cascade => self.cascade += 1,
            Verdict::Plan => self.plans += 1,
            Verdict::Differ => self.differ += 1,
        }
    }

    pub fn add(&mut self, o: &Counts) {
        self.statements += o.statements;
        self.same += o.same;
        self.error_both += o.error_both;
        self.refused += o.refused;
        self.cascade += o.cascade;
        self.plans += o.plans;
        self.differ += o.differ;
        self.unlisted += o.unlisted;
        self.meta += o.meta;
        self.timeouts += o.timeouts;
        self.seconds += o.seconds;
    }
}

/// One differing statement.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub file: String,
    pub line: usize,
    /// The statement on one line, as the known list has it.
    pub statement: String,
    pub postgres: String,
    pub tessera: String,
    /// Where the rows part (postgres / tessera), for row answers.
    pub first_difference: Option<String>,
    pub listed: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FileReport {
    pub file: String,
    pub counts: Counts,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub files: Vec<FileReport>,
    pub total: Counts,
    pub seconds: f64,
    pub differences: Vec<Difference>,
    /// Listed in the known list but no longer differing.
    pub stale: Vec<String>,
    /// Cascaded statements per cause, most first.
    pub cascade_causes: Vec<(String, usize)>,
}

/// `known-differences.txt`: `file: statement` per line, `#` comments.
pub fn parse_known(text: &str) -> HashSet<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(": "))
        .map(|(f, s)| (f.trim().to_string(), s.trim().to_string()))
        .collect()
}

/// The known list's entries, written back as `file: statement` lines.
pub fn known_lines(diffs: &[Difference]) -> String {
    let set: BTreeSet<(String, String)> = diffs
        .iter()
        .map(|d| (d.file.clone(), d.statement.clone()))
        .collect();
    let mut out = String::new();
    for (f, s) in set {
        out.push_str(&format!("{f}: {s}\n"));
    }
    out
}

impl Report {
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<14} {:>6} {:>6} {:>6} {:>7} {:>7} {:>5} {:>6} {:>8} {:>4} {:>6}\n",
            "file",
            "stmts",
            "same",
            "errors",
            "refused",
            "cascade",
            "plans",
            "differ",
            "unlisted",
            "meta",
            "secs"
        );
        let row = |name: &str, c: &Counts| {
            format!(
                "{name:<14} {:>6} {:>6} {:>6} {:>7} {:>7} {:>5} {:>6} {:>8} {:>4} {:>6.1}\n",
                c.statements,
                c.same,
                c.error_both,
                c.refused,
                c.cascade,
                c.plans,
                c.differ,
                c.unlisted,
                c.meta,
                c.seconds
            )
        };
        for f in &self.files {
            out.push_str(&row(&f.file, &f.counts));
        }
        out.push_str(&row("total", &self.total));
        let t = &self.total;
        let compared = t.statements - t.plans;
        out.push_str(&format!(
            "{compared} statements compared: {:.1} % agree (same or same error), {:.1} % refused, {:.1} % cascade, {:.1} % differ; {} timeouts; {:.1} s in all\n",
            100.0 * (t.same + t.error_both) as f64 / compared.max(1) as f64,
            100.0 * t.refused as f64 / compared.max(1) as f64,
            100.0 * t.cascade as f64 / compared.max(1) as f64,
            100.0 * t.differ as f64 / compared.max(1) as f64,
            t.timeouts,
            self.seconds
        ));
        if !self.cascade_causes.is_empty() {
            out.push_str("cascades by cause (most first):\n");
        }
        for (cause, n) in self.cascade_causes.iter().take(20) {
            out.push_str(&format!("  {n:>5}  {cause}\n"));
        }
        out
    }
}
