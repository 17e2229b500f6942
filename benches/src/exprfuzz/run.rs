//! The fuzzing loop: each expression in every form (`super::check`), the
//! first differing form shrunk (`super::shrink`) and written to the
//! corpus, counts kept for the report, findings grouped by the shape of
//! their minimized expression and the kind of their difference.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::check::{Form, Outcome, Sides, Verdict};
use super::corpus::{append, one_line, Known};
use super::expr::Expr;
use super::shrink::shrink;
use super::table::Row;
use crate::answer::Answer;

/// A differing expression.
pub struct Finding {
    pub expr: String,
    /// The first differing form's outcome for `expr`.
    pub found: Outcome,
    pub minimized: String,
    /// The grouping key: the minimized expression's shape and the answers'
    /// classes.
    pub group: String,
    pub row: usize,
    /// The outcome for `minimized`.
    pub outcome: Outcome,
}

#[derive(Default)]
pub struct Stats {
    pub tried: usize,
    pub agreed: usize,
    pub refused: usize,
    pub differ: usize,
    /// Differing forms (an expression can differ in several).
    pub by_form: BTreeMap<Form, usize>,
    /// Tessera's 0A000 messages (cut), by count.
    pub refusals: BTreeMap<String, usize>,
}

pub struct Fuzzer {
    pub sides: Sides,
    pub rows: Vec<Row>,
    pub shrink: bool,
    pub findings_file: Option<PathBuf>,
    pub verbose: bool,
    pub stats: Stats,
    pub findings: Vec<Finding>,
    /// Findings listed here are not shrunk (the CI run's known ones).
    pub known: Known,
}

impl Fuzzer {
    fn row(&self, id: usize) -> Row {
        self.rows
            .iter()
            .find(|r| r.id == id)
            .or(self.rows.first())
            .cloned()
            .unwrap_or(Row { id, values: vec![] })
    }

    /// Evaluates `sql` in every form (a difference in one form does not
    /// hide another's); the verdict and the first differing outcome.
    async fn forms(&mut self, sql: &str, row: &Row, forms: &[Form]) -> (Verdict, Option<Outcome>) {
        let mut verdict = Verdict::Agree;
        let mut first = None;
        for f in forms {
            let o = self.sides.evaluate(*f, sql, row).await;
            match o.verdict {
                Verdict::Agree => {}
                Verdict::Refused => {
                    if self.verbose {
                        println!("refused [{}] {sql}: {}", f.name(), o.tessera.short());
                    }
                    let msg = match &o.tessera {
                        Answer::Error { message, .. } => message.chars().take(70).collect(),
                        Answer::Rows { .. } => String::new(),
                    };
                    *self.stats.refusals.entry(msg).or_default() += 1;
                    if verdict == Verdict::Agree {
                        verdict = Verdict::Refused;
                    }
                }
                Verdict::Differ => {
                    *self.stats.by_form.entry(o.form).or_default() += 1;
                    verdict = Verdict::Differ;
                    first.get_or_insert(o);
                }
            }
        }
        (verdict, first)
    }

    fn count(&mut self, v: Verdict) {
        self.stats.tried += 1;
        match v {
            Verdict::Agree => self.stats.agreed += 1,
            Verdict::Refused => self.stats.refused += 1,
            Verdict::Differ => self.stats.differ += 1,
        }
    }

    /// One generated expression; true when it differs.
    pub async fn case(
        &mut self,
        expr: &Expr,
        row_id: usize,
        forms: &[Form],
    ) -> Result<bool, String> {
        let row = self.row(row_id);
        let sql = expr.sql();
        let (v, o) = self.forms(&sql, &row, forms).await;
        self.count(v);
        let Some(o) = o else { return Ok(false) };
        let (min, mo) = if self.shrink && !self.known.contains(&sql) {
            shrink(&mut self.sides, expr, &row, &o).await
        } else {
            (expr.clone(), o.clone())
        };
        let (pc, tc) = o.signature();
        let group = format!("{}  [postgres {pc}, tessera {tc}]", min.shape());
        let f = Finding {
            expr: sql,
            found: o,
            minimized: min.sql(),
            group,
            row: row.id,
            outcome: mo,
        };
        self.report(&f)?;
        self.findings.push(f);
        Ok(true)
    }

    /// An expression from the corpus: every form, its difference printed.
    pub async fn replay(&mut self, sql: &str, row_id: usize) -> bool {
        let row = self.row(row_id);
        let all = [Form::Const, Form::Point, Form::Scan, Form::ScanNoPushdown];
        let (v, o) = self.forms(sql, &row, &all).await;
        self.count(v);
        match o {
            Some(o) => {
                println!("STILL DIFFERS [{} row {}] {sql}", o.form.name(), row.id);
                let (p, t) = o.answers();
                println!(
                    "    postgres: {}\n    tessera:  {}",
                    one_line(&p),
                    one_line(&t)
                );
                true
            }
            None => {
                println!(
                    "{} {sql}",
                    if v == Verdict::Refused {
                        "refused"
                    } else {
                        "agrees "
                    }
                );
                false
            }
        }
    }

    fn report(&self, f: &Finding) -> Result<(), String> {
        let line = |o: &Outcome| {
            let (p, t) = o.answers();
            format!("postgres: {} | tessera: {}", one_line(&p), one_line(&t))
        };
        let o = &f.found;
        println!(
            "FINDING [{} row {}] {}\n    {}",
            o.form.name(),
            f.row,
            f.expr,
            line(o)
        );
        if f.minimized != f.expr {
            println!("    minimized: {}\n    {}", f.minimized, line(&f.outcome));
        }
        if let Some(path) = &self.findings_file {
            let comment = format!("{} row {} | {}", o.form.name(), f.row, line(&f.outcome));
            append(path, &comment, &f.minimized)?;
        }
        Ok(())
    }

    /// The summary: counts, then the findings grouped, largest group first.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        let mut out = format!(
            "{} expressions: {} agreed, {} refused by Tessera (0A000), {} findings\n",
            s.tried, s.agreed, s.refused, s.differ
        );
        let forms: Vec<String> = s
            .by_form
            .iter()
            .map(|(f, n)| format!("{} {n}", f.name()))
            .collect();
        if !forms.is_empty() {
            out.push_str(&format!("differing forms: {}\n", forms.join(", ")));
        }
        let mut refusals: Vec<_> = s.refusals.iter().collect();
        refusals.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (m, n) in refusals.iter().take(15) {
            out.push_str(&format!("{n:>4}  refused: {m}\n"));
        }
        let mut groups: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
        for f in &self.findings {
            groups.entry(&f.group).or_default().push(f);
        }
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        for (g, fs) in groups {
            let ex = fs[0];
            let (p, t) = ex.outcome.answers();
            out.push_str(&format!(
                "{:>4}  {g}\n      e.g. [{} row {}] {}\n      postgres {} | tessera {}\n",
                fs.len(),
                ex.outcome.form.name(),
                ex.row,
                ex.minimized,
                one_line(&p),
                one_line(&t)
            ));
        }
        out
    }
}
