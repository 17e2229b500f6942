//! One TPC-DS query's answer on Tessera judged against PostgreSQL 15's on
//! the same rows. PostgreSQL is the oracle: the same columns and the same
//! text of every value. Two allowances, each reported as such: rows whose
//! ORDER BY keys tie may come in another order, and a float8 value (17
//! significant digits or an exponent) may differ in its last digits, since
//! the order in which a sum of floats is added is not defined.

use crate::answer::Answer;

/// How a query's answer compares.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Verdict {
    /// The same columns and rows, in the same order.
    Same,
    /// The same rows, some in another order (ties of the sort keys).
    SameRowsOtherOrder,
    /// The same up to the last digits of float8 values.
    SameFloatRounding,
    /// Tessera refused it with 0A000 (a feature it names).
    Refused(String),
    /// Tessera ran past the statement timeout (57014) where PostgreSQL
    /// answered.
    TimedOut,
    /// Another answer or an error PostgreSQL did not raise.
    Different(String),
}

impl Verdict {
    /// Whether the answer is PostgreSQL's (within the two allowances).
    pub fn correct(&self) -> bool {
        matches!(
            self,
            Verdict::Same | Verdict::SameRowsOtherOrder | Verdict::SameFloatRounding
        )
    }

    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::SameRowsOtherOrder => "same (ties reordered)",
            Verdict::SameFloatRounding => "same (float rounding)",
            Verdict::Refused(_) => "refused",
            Verdict::TimedOut => "timed out",
            Verdict::Different(_) => "DIFFERENT",
        }
    }

    pub fn note(&self) -> &str {
        match self {
            Verdict::Refused(n) | Verdict::Different(n) => n,
            _ => "",
        }
    }
}

/// Judges Tessera's answer against PostgreSQL's.
pub fn judge(pg: &Answer, ts: &Answer) -> Verdict {
    let (pg, ts) = (pg.clone().without_count(), ts.clone().without_count());
    if pg == ts {
        return Verdict::Same;
    }
    if let Answer::Error { code, message } = &ts {
        if code == "0A000" {
            return Verdict::Refused(message.clone());
        }
        if code == "57014" && matches!(pg, Answer::Rows { .. }) {
            return Verdict::TimedOut;
        }
    }
    let (
        Answer::Rows {
            columns: pc,
            rows: pr,
            ..
        },
        Answer::Rows {
            columns: tc,
            rows: tr,
            ..
        },
    ) = (&pg, &ts)
    else {
        return Verdict::Different(format!("postgres {}; tessera {}", pg.short(), ts.short()));
    };
    if pc != tc {
        return Verdict::Different(format!("columns {tc:?}, postgres {pc:?}"));
    }
    if pg.sorted() == ts.sorted() {
        return Verdict::SameRowsOtherOrder;
    }
    let (mut ps, mut tsr) = (pr.clone(), tr.clone());
    if rows_close(pr, tr) {
        return Verdict::SameFloatRounding;
    }
    ps.sort();
    tsr.sort();
    if rows_close(&ps, &tsr) {
        return Verdict::SameFloatRounding;
    }
    Verdict::Different(first_difference(pr, tr))
}

fn rows_close(a: &[Vec<Option<String>>], b: &[Vec<Option<String>>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(u, v)| value_close(u, v)))
}

/// Equal text, or two float8 texts within a relative 1e-12.
fn value_close(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) if x != y => {
            let float_like = |t: &str| {
                t.contains(['e', 'E']) || t.chars().filter(char::is_ascii_digit).count() >= 15
            };
            match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(p), Ok(q)) if float_like(x) || float_like(y) => {
                    (p - q).abs() <= 1e-12 * p.abs().max(q.abs())
                }
                _ => false,
            }
        }
        _ => a == b,
    }
}

fn first_difference(pg: &[Vec<Option<String>>], ts: &[Vec<Option<String>>]) -> String {
    let shown = |r: Option<&Vec<Option<String>>>| match r {
        None => "none".to_string(),
        Some(r) => {
            let v: Vec<&str> = r.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
            format!("({})", v.join(", "))
        }
    };
    let i = (0..pg.len().max(ts.len()))
        .find(|&i| pg.get(i) != ts.get(i))
        .unwrap_or(0);
    format!(
        "{} rows, postgres {}; row {i}: tessera {}, postgres {}",
        ts.len(),
        pg.len(),
        shown(ts.get(i)),
        shown(pg.get(i))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[&[&str]]) -> Answer {
        Answer::Rows {
            columns: vec!["a".into(), "b".into()],
            rows: v
                .iter()
                .map(|r| r.iter().map(|s| Some(s.to_string())).collect())
                .collect(),
            affected: None,
        }
    }

    #[test]
    fn verdicts() {
        let pg = rows(&[&["1", "x"], &["2", "y"]]);
        assert_eq!(judge(&pg, &pg), Verdict::Same);
        let swapped = rows(&[&["2", "y"], &["1", "x"]]);
        assert_eq!(judge(&pg, &swapped), Verdict::SameRowsOtherOrder);
        let other = rows(&[&["1", "x"], &["2", "z"]]);
        assert!(matches!(judge(&pg, &other), Verdict::Different(_)));
        let refused = Answer::Error {
            code: "0A000".into(),
            message: "ROLLUP".into(),
        };
        assert_eq!(judge(&pg, &refused), Verdict::Refused("ROLLUP".into()));
    }

    #[test]
    fn only_floats_may_differ_in_last_digits() {
        let pg = rows(&[&["1.2345678901234567", "x"]]);
        let ts = rows(&[&["1.2345678901234569", "x"]]);
        assert_eq!(judge(&pg, &ts), Verdict::SameFloatRounding);
        // numeric text is exact: 1.50 is not 1.5
        let pg = rows(&[&["1.50", "x"]]);
        let ts = rows(&[&["1.5", "x"]]);
        assert!(matches!(judge(&pg, &ts), Verdict::Different(_)));
    }
}
