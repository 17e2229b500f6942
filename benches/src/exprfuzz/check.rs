//! Evaluating one expression on both servers and judging the answers. An
//! expression runs in up to four forms: as a constant (`SELECT <expr>`
//! with the row's values as typed literals), over one stored row
//! (`WHERE id = k`: Tessera's fast path, one partition, rendered for
//! MariaDB), over all rows (`ORDER BY id`: the DataFusion path), and the
//! last again with `tessera.pushdown = off`. Values compare as text,
//! errors by SQLSTATE; column names are not compared.

use std::time::Duration;

use super::table::{constant, Row};
use crate::answer::Answer;
use crate::pgregress::run::Side;
use crate::pgregress::script::Item;

/// One way of evaluating an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Form {
    Const,
    Point,
    Scan,
    ScanNoPushdown,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Const => "constant",
            Form::Point => "point",
            Form::Scan => "scan",
            Form::ScanNoPushdown => "scan-no-pushdown",
        }
    }

    /// The statement that evaluates `expr` this way.
    pub fn sql(self, expr: &str, row: &Row) -> String {
        match self {
            Form::Const => format!("SELECT {}", constant(expr, row)),
            Form::Point => format!("SELECT id, {expr} FROM fz WHERE id = {}", row.id),
            Form::Scan | Form::ScanNoPushdown => {
                format!("SELECT id, {expr} FROM fz ORDER BY id")
            }
        }
    }
}

/// How the two answers of one form compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Agree,
    /// Tessera answered 0A000 (not supported) and PostgreSQL did not.
    Refused,
    Differ,
}

/// One form's answers and verdict.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub form: Form,
    pub postgres: Answer,
    pub tessera: Answer,
    pub verdict: Verdict,
}

impl Outcome {
    /// What kind of difference this is: each side's answer class (`rows`
    /// or the SQLSTATE). The shrinker keeps it while it minimizes.
    pub fn signature(&self) -> (String, String) {
        (class(&self.postgres), class(&self.tessera))
    }

    /// Both answers on one line each: the first row that differs when
    /// both have rows, else each answer in short.
    pub fn answers(&self) -> (String, String) {
        if let (Some(p), Some(t)) = (rows(&self.postgres), rows(&self.tessera)) {
            let show = |r: Option<&Vec<Option<String>>>| match r {
                Some(r) => {
                    let v: Vec<&str> = r.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
                    format!("({})", v.join(", "))
                }
                None => "no row".into(),
            };
            let i = (0..p.len().max(t.len()))
                .find(|i| p.get(*i) != t.get(*i))
                .unwrap_or(0);
            return (show(p.get(i)), show(t.get(i)));
        }
        (self.postgres.short(), self.tessera.short())
    }
}

pub fn class(a: &Answer) -> String {
    a.code().unwrap_or("rows").to_string()
}

/// A session on each server.
pub struct Sides {
    pub postgres: Side,
    pub tessera: Side,
    limit: Duration,
}

fn item(sql: String) -> Item {
    Item::Sql { text: sql, line: 0 }
}

impl Sides {
    pub async fn open(postgres: &str, tessera: &str, limit: Duration) -> Result<Sides, String> {
        Ok(Sides {
            postgres: Side::open(postgres, limit).await?,
            tessera: Side::open(tessera, limit).await?,
            limit,
        })
    }

    /// The same statement on both servers, at once. `Side::run` stops a
    /// statement at its limit; this outer limit also bounds its recovery
    /// (cancel, reconnect) when a node hangs.
    pub async fn both(&mut self, sql: &str) -> (Answer, Answer) {
        let it = item(sql.to_string());
        let limit = self.limit + Duration::from_secs(15);
        let bounded = |a: Result<Answer, _>| {
            a.unwrap_or_else(|_| Answer::Error {
                code: "timeout".into(),
                message: format!("no answer in {} s", limit.as_secs()),
            })
        };
        let (p, t) = tokio::join!(
            tokio::time::timeout(limit, self.postgres.run(&it)),
            tokio::time::timeout(limit, self.tessera.run(&it))
        );
        (bounded(p), bounded(t))
    }

    async fn set_pushdown(&mut self, value: &str) {
        let it = item(format!("SET tessera.pushdown = {value}"));
        let _ = tokio::time::timeout(self.limit, self.tessera.run(&it)).await;
    }

    /// One form of `expr` on both servers, judged.
    pub async fn evaluate(&mut self, form: Form, expr: &str, row: &Row) -> Outcome {
        let sql = form.sql(expr, row);
        let off = form == Form::ScanNoPushdown;
        if off {
            self.set_pushdown("off").await;
        }
        let (postgres, tessera) = self.both(&sql).await;
        if off {
            self.set_pushdown("on").await;
        }
        let verdict = judge(form, &postgres, &tessera);
        Outcome {
            form,
            postgres,
            tessera,
            verdict,
        }
    }
}

fn rows(a: &Answer) -> Option<&Vec<Vec<Option<String>>>> {
    match a {
        Answer::Rows { rows, .. } => Some(rows),
        Answer::Error { .. } => None,
    }
}

/// Same values, or same SQLSTATE. Over many rows, two errors agree
/// whatever their codes: which row fails first is up to the order of
/// evaluation, which SQL leaves open.
pub fn judge(form: Form, postgres: &Answer, tessera: &Answer) -> Verdict {
    let same = match (rows(postgres), rows(tessera)) {
        (Some(p), Some(t)) => p == t,
        (None, None) => {
            postgres.code() == tessera.code() || matches!(form, Form::Scan | Form::ScanNoPushdown)
        }
        _ => false,
    };
    if same {
        Verdict::Agree
    } else if tessera.code() == Some("0A000") {
        Verdict::Refused
    } else {
        Verdict::Differ
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(v: &str) -> Answer {
        Answer::Rows {
            columns: vec!["x".into()],
            rows: vec![vec![Some(v.into())]],
            affected: None,
        }
    }

    #[test]
    fn values_and_codes_decide_not_names() {
        let mut named = val("1");
        if let Answer::Rows { columns, .. } = &mut named {
            columns[0] = "other".into();
        }
        assert_eq!(judge(Form::Point, &val("1"), &named), Verdict::Agree);
        assert_eq!(judge(Form::Point, &val("1"), &val("1.0")), Verdict::Differ);
        let (a, b) = (Answer::error("22012"), Answer::error("22003"));
        assert_eq!(judge(Form::Point, &a, &b), Verdict::Differ);
        assert_eq!(judge(Form::Scan, &a, &b), Verdict::Agree);
        assert_eq!(
            judge(Form::Const, &val("1"), &Answer::error("0A000")),
            Verdict::Refused
        );
    }
}
