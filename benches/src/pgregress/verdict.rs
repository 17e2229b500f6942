//! One statement's verdict: its two answers compared the way the
//! regression files mean them (in order only under a top-level ORDER BY).
//! Whether a difference is a cascade is `super::cascade`'s call.

use crate::answer::Answer;

/// How a statement's answers compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Same columns, values and command count.
    Same,
    /// Both failed with the same SQLSTATE.
    ErrorBoth,
    /// Tessera answered 0A000 (feature not supported).
    Refused,
    /// The difference follows from an earlier one (`super::cascade`).
    Cascade,
    /// EXPLAIN: a plan is not an answer; run on both, not compared.
    Plan,
    Differ,
}

/// What the statement's top level says about comparing its rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// The items of a top-level ORDER BY: rows compare in their order
    /// (`super::order`).
    pub order_by: Option<Vec<String>>,
    /// LIMIT, OFFSET or FETCH without ORDER BY: which rows come back is up
    /// to the plan, so only the columns and the row count compare.
    pub limited: bool,
    pub explain: bool,
}

/// The lowercase words outside string literals and quoted identifiers
/// (both skipped), each with its depth in parentheses.
pub fn words(sql: &str) -> Vec<(String, u32)> {
    let chars: Vec<char> = sql.chars().collect();
    let mut words = vec![];
    let mut depth = 0u32;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' | '"' => {
                let escapes = c == '\''
                    && i > 0
                    && matches!(chars[i - 1], 'E' | 'e')
                    && !(i > 1 && chars[i - 2].is_alphanumeric());
                i += 1;
                while i < chars.len() {
                    if escapes && chars[i] == '\\' {
                        i += 2;
                        continue;
                    }
                    if chars[i] == c {
                        if chars.get(i + 1) == Some(&c) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            '$' if chars.get(i + 1).is_some_and(|n| !n.is_ascii_digit()) => {
                let len = chars[i + 1..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_')
                    .count();
                if chars.get(i + 1 + len) == Some(&'$') {
                    let tag: Vec<char> = chars[i..i + 2 + len].to_vec();
                    i += tag.len();
                    while i < chars.len() && !chars[i..].starts_with(&tag) {
                        i += 1;
                    }
                    i += tag.len() - 1;
                }
            }
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if c.is_alphabetic() || c == '_' => {
                let len = chars[i..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '$')
                    .count();
                words.push((
                    chars[i..i + len].iter().collect::<String>().to_lowercase(),
                    depth,
                ));
                i += len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    words
}

pub fn shape(sql: &str) -> Shape {
    let words: Vec<String> = words(sql)
        .into_iter()
        .filter(|(_, depth)| *depth == 0)
        .map(|(w, _)| w)
        .collect();
    let order_by = super::order::order_by_items(sql);
    let limited = order_by.is_none()
        && words
            .iter()
            .any(|w| matches!(w.as_str(), "limit" | "offset" | "fetch"));
    Shape {
        order_by,
        limited,
        explain: words.first().is_some_and(|w| w == "explain"),
    }
}

/// The verdict from the answers alone (no cascade).
pub fn compare(pg: &Answer, ts: &Answer, shape: &Shape) -> Verdict {
    if shape.explain {
        return Verdict::Plan;
    }
    match (pg, ts) {
        (Answer::Error { code: p, .. }, Answer::Error { code: t, .. }) if p == t => {
            Verdict::ErrorBoth
        }
        (_, Answer::Error { code, .. }) if code == "0A000" => Verdict::Refused,
        (
            Answer::Rows {
                columns: pc,
                rows: pr,
                affected: pa,
            },
            Answer::Rows {
                columns: tc,
                rows: tr,
                affected: ta,
            },
        ) if shape.limited => {
            if pc == tc && pr.len() == tr.len() && pa == ta {
                Verdict::Same
            } else {
                Verdict::Differ
            }
        }
        (
            Answer::Rows {
                columns: pc,
                rows: pr,
                affected: pa,
            },
            Answer::Rows {
                columns: tc,
                rows: tr,
                affected: ta,
            },
        ) if shape.order_by.is_some() => {
            let items = shape.order_by.as_deref().unwrap_or_default();
            let rows_agree = match super::order::key_columns(items, pc) {
                Some(keys) => super::order::same_order(pr, tr, &keys),
                None => pr == tr,
            };
            if pc == tc && pa == ta && rows_agree {
                Verdict::Same
            } else {
                Verdict::Differ
            }
        }
        _ if pg.sorted() == ts.sorted() => Verdict::Same,
        _ => Verdict::Differ,
    }
}

/// Where two row answers part: the columns, the command count or the
/// first differing row (in the order compared); None for errors.
pub fn first_difference(pg: &Answer, ts: &Answer, shape: &Shape) -> Option<String> {
    let (pg, ts) = if shape.order_by.is_some() {
        (pg.clone(), ts.clone())
    } else {
        (pg.sorted(), ts.sorted())
    };
    let (
        Answer::Rows {
            columns: pc,
            rows: pr,
            affected: pa,
        },
        Answer::Rows {
            columns: tc,
            rows: tr,
            affected: ta,
        },
    ) = (&pg, &ts)
    else {
        return None;
    };
    if pc != tc {
        return Some(format!("columns {pc:?} / {tc:?}"));
    }
    let show = |r: Option<&Vec<Option<String>>>| match r {
        None => "none".to_string(),
        Some(r) => {
            let v: Vec<&str> = r.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
            format!("({})", v.join(", "))
        }
    };
    if let Some(i) = (0..pr.len().max(tr.len())).find(|i| pr.get(*i) != tr.get(*i)) {
        return Some(format!(
            "row {i} of {}/{}: {} / {}",
            pr.len(),
            tr.len(),
            show(pr.get(i)),
            show(tr.get(i))
        ));
    }
    (pa != ta).then(|| format!("count {pa:?} / {ta:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&str]) -> Answer {
        Answer::Rows {
            columns: vec!["a".into()],
            rows: r.iter().map(|v| vec![Some(v.to_string())]).collect(),
            affected: Some(r.len() as u64),
        }
    }

    #[test]
    fn only_a_top_level_order_by_orders() {
        assert!(shape("SELECT a FROM t ORDER BY a").order_by.is_some());
        assert!(shape("SELECT * FROM (SELECT a FROM t ORDER BY a) s")
            .order_by
            .is_none());
        assert!(shape("SELECT sum(a) OVER (ORDER BY a), 'order by' FROM t")
            .order_by
            .is_none());
        assert!(shape("SELECT a FROM t LIMIT 3").limited);
        assert!(!shape("SELECT a FROM t ORDER BY a LIMIT 3").limited);
        assert!(shape("explain (costs off) select 1").explain);
        assert!(shape("SELECT $$ ORDER BY $$").order_by.is_none());
    }

    #[test]
    fn answers_compare_as_multisets_unless_ordered() {
        let unordered = Shape::default();
        let ordered = Shape {
            order_by: Some(vec!["x".into()]),
            ..Shape::default()
        };
        assert_eq!(
            compare(&rows(&["1", "2"]), &rows(&["2", "1"]), &unordered),
            Verdict::Same
        );
        assert_eq!(
            compare(&rows(&["1", "2"]), &rows(&["2", "1"]), &ordered),
            Verdict::Differ
        );
        assert_eq!(
            compare(&Answer::error("22003"), &Answer::error("22003"), &ordered),
            Verdict::ErrorBoth
        );
        assert_eq!(
            compare(&rows(&["1"]), &Answer::error("0A000"), &ordered),
            Verdict::Refused
        );
        assert_eq!(
            compare(&Answer::error("22012"), &rows(&["1"]), &ordered),
            Verdict::Differ
        );
    }
}
