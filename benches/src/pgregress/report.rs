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

type Key = (String, String);

/// `known-differences.txt`: `file: statement` per line for a statement
/// that differs (it must keep differing until fixed, then be removed);
/// `unstable file: statement` for one whose answer varies from run to run
/// on Tessera (it may differ or agree); `#` comments.
#[derive(Debug, Clone, Default)]
pub struct Known {
    header: String,
    listed: BTreeSet<Key>,
    unstable: BTreeSet<Key>,
}

impl Known {
    pub fn parse(text: &str) -> Known {
        let mut k = Known {
            header: text
                .lines()
                .take_while(|l| l.starts_with('#') || l.trim().is_empty())
                .map(|l| format!("{l}\n"))
                .collect(),
            ..Known::default()
        };
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (set, entry) = match line.strip_prefix("unstable ") {
                Some(rest) => (&mut k.unstable, rest),
                None => (&mut k.listed, line),
            };
            if let Some((f, s)) = entry.split_once(": ") {
                set.insert((f.trim().to_string(), s.trim().to_string()));
            }
        }
        k
    }

    /// Whether a difference on this statement is expected.
    pub fn contains(&self, key: &Key) -> bool {
        self.listed.contains(key) || self.unstable.contains(key)
    }

    /// Listed statements of the files that ran which no longer differ.
    pub fn stale(&self, ran: &[String], diffs: &[Difference]) -> Vec<String> {
        let differing: HashSet<Key> = diffs
            .iter()
            .map(|d| (d.file.clone(), d.statement.clone()))
            .collect();
        self.listed
            .iter()
            .filter(|k| ran.contains(&k.0) && !differing.contains(*k))
            .map(|(f, s)| format!("{f}: {s}"))
            .collect()
    }

    /// The list after a run: for the files that ran, this run's
    /// differences (unstable ones stay marked so); other files' entries
    /// as they were.
    pub fn rewritten(&self, ran: &[String], diffs: &[Difference]) -> String {
        let mut listed: BTreeSet<Key> = self
            .listed
            .iter()
            .filter(|k| !ran.contains(&k.0))
            .cloned()
            .collect();
        listed.extend(
            diffs
                .iter()
                .map(|d| (d.file.clone(), d.statement.clone()))
                .filter(|k| !self.unstable.contains(k)),
        );
        let mut out = self.header.clone();
        for (f, s) in &listed {
            out.push_str(&format!("{f}: {s}\n"));
        }
        for (f, s) in &self.unstable {
            out.push_str(&format!("unstable {f}: {s}\n"));
        }
        out
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(file: &str, statement: &str) -> Difference {
        Difference {
            file: file.into(),
            line: 1,
            statement: statement.into(),
            postgres: String::new(),
            tessera: String::new(),
            first_difference: None,
            listed: true,
        }
    }

    #[test]
    fn the_list_only_shrinks_and_unstable_entries_may_go_either_way() {
        let k = Known::parse(
            "# head\nint4: SELECT 1\nint4: SELECT 2\nunstable int4: SELECT 3\ndate: SELECT 4\n",
        );
        let key = |s: &str| ("int4".to_string(), s.to_string());
        assert!(k.contains(&key("SELECT 3")));
        let ran = vec!["int4".to_string()];
        let diffs = vec![diff("int4", "SELECT 1"), diff("int4", "SELECT 3")];
        assert_eq!(k.stale(&ran, &diffs), vec!["int4: SELECT 2".to_string()]);
        assert_eq!(
            k.rewritten(&ran, &diffs),
            "# head\ndate: SELECT 4\nint4: SELECT 1\nunstable int4: SELECT 3\n"
        );
    }
}
