//! The one merger of partial answers: what each shard computes for a
//! statement that several partitions answer, and how the compute node
//! folds those answers into one.
//!
//! [`Partial`] is the split of an aggregate, defined once: the function
//! each shard runs ([`Partial::shard_function`]), the value of no rows
//! ([`Partial::identity`]) and the fold of two partials, given twice over
//! the same definition: on decoded rows ([`Partial::combine`], the fast
//! path, which must not pay for a DataFusion plan) and as a DataFusion
//! aggregate over Arrow batches ([`Partial::merge_expr`], the pushed-down
//! plans). [`Merge`] is the whole merge of a fast-path statement: its
//! partial aggregates, or DISTINCT, ORDER BY and LIMIT redone over the
//! union of the partitions' rows ([`merge_rows`]).

use std::cmp::Ordering;

use common::{Datum, Error, Result, SqlType};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Expr;

/// One aggregate split into a partial per shard and a fold of partials.
/// `avg` is not one: it is split into `Sum` and `Count` by its planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partial {
    Count,
    Sum,
    Min,
    Max,
}

impl Partial {
    /// The split of the aggregate function `name` (lower case), if it has
    /// one.
    pub fn of_name(name: &str) -> Option<Partial> {
        Some(match name {
            "count" => Partial::Count,
            "sum" => Partial::Sum,
            "min" => Partial::Min,
            "max" => Partial::Max,
            _ => return None,
        })
    }

    /// The function each shard computes (MariaDB SQL).
    pub fn shard_function(self) -> &'static str {
        match self {
            Partial::Count => "COUNT",
            Partial::Sum => "SUM",
            Partial::Min => "MIN",
            Partial::Max => "MAX",
        }
    }

    /// The answer over no partials: a count of nothing is 0, the others
    /// are NULL (PostgreSQL's `sum` of no rows is NULL).
    pub fn identity(self) -> Datum {
        match self {
            Partial::Count => Datum::Int(0),
            _ => Datum::Null,
        }
    }

    /// Folds one partial `v` into the running value `acc` (of result type
    /// `ty`, named in an overflow error as PostgreSQL does). NULL partials
    /// (a shard with no rows, or only NULL values) change nothing.
    pub fn combine(self, ty: Option<&SqlType>, acc: Datum, v: Datum) -> Result<Datum> {
        if v.is_null() {
            return Ok(acc);
        }
        if acc.is_null() {
            return Ok(v);
        }
        let out_of_range = || Error::NumericOutOfRange {
            message: format!(
                "{} out of range",
                ty.map(|t| t.to_string()).unwrap_or_else(|| "value".into())
            ),
        };
        Ok(match (self, acc, v) {
            (Partial::Count | Partial::Sum, Datum::Int(a), Datum::Int(b)) => {
                Datum::Int(a.checked_add(b).ok_or_else(out_of_range)?)
            }
            (Partial::Sum, Datum::Decimal(a), Datum::Decimal(b)) => {
                Datum::Decimal(a.checked_add(b).ok_or_else(out_of_range)?)
            }
            (Partial::Min, a, b) => {
                if b.sort_cmp(&a) == Ordering::Less {
                    b
                } else {
                    a
                }
            }
            (Partial::Max, a, b) => {
                if b.sort_cmp(&a) == Ordering::Greater {
                    b
                } else {
                    a
                }
            }
            (p, a, b) => {
                return Err(Error::internal(format!(
                    "cannot merge {p:?} of {a:?} and {b:?}"
                )))
            }
        })
    }

    /// The same fold as a DataFusion aggregate of the partials in
    /// `partials` (a column of the shards' answers), for the pushed-down
    /// plans. Returns the aggregate (to be named and grouped by the
    /// caller) and whether its answer over no rows must be replaced by
    /// [`Partial::identity`] (`COALESCE(SUM(count), 0)`).
    pub fn merge_expr(self, partials: Expr) -> (Expr, Option<Expr>) {
        use datafusion::functions_aggregate::expr_fn::{max, min, sum};
        match self {
            Partial::Count => (
                sum(partials),
                Some(Expr::Literal(ScalarValue::Int64(Some(0)), None)),
            ),
            Partial::Sum => (sum(partials), None),
            Partial::Min => (min(partials), None),
            Partial::Max => (max(partials), None),
        }
    }
}

/// How the answers of several partitions to one fast-path SELECT combine.
/// Every partition runs the same rendered statement (with its own
/// DISTINCT, ORDER BY and LIMIT); the merge redoes those over the union.
#[derive(Debug, Clone)]
pub enum Merge {
    Rows {
        /// Result column index and descending flag of each ORDER BY key.
        order: Vec<(usize, bool)>,
        distinct: bool,
        limit: Option<LimitValue>,
    },
    /// One row of aggregates, no GROUP BY: partials combined per column.
    Aggregates(Vec<Partial>),
}

/// A LIMIT known at planning, or given by a parameter at execution.
#[derive(Debug, Clone, Copy)]
pub enum LimitValue {
    Const(u64),
    Param(usize),
}

impl LimitValue {
    /// The row count this LIMIT allows, with the statement's `params`
    /// (`LIMIT NULL` is no limit, a negative count none, as in
    /// PostgreSQL).
    fn rows(self, params: &[Datum]) -> Result<u64> {
        let i = match self {
            LimitValue::Const(n) => return Ok(n),
            LimitValue::Param(i) => i,
        };
        match params.get(i) {
            Some(Datum::Int(n)) => Ok((*n).max(0) as u64),
            Some(Datum::Null) => Ok(u64::MAX),
            Some(Datum::Text(s)) => Ok(s
                .trim()
                .parse::<i64>()
                .map_err(|_| Error::InvalidText {
                    ty: "bigint".into(),
                    value: s.clone(),
                })?
                .max(0) as u64),
            _ => Err(Error::InvalidParameter {
                message: format!("LIMIT parameter ${} is not an integer", i + 1),
            }),
        }
    }
}

/// Combines the answers of several partitions (`answers`, one list of
/// rows each, columns of catalog types `types`) as `merge` says.
pub fn merge_rows(
    merge: &Merge,
    types: &[SqlType],
    answers: Vec<Vec<Vec<Datum>>>,
    params: &[Datum],
) -> Result<Vec<Vec<Datum>>> {
    match merge {
        Merge::Aggregates(partials) => {
            let mut acc: Vec<Datum> = partials.iter().map(|p| p.identity()).collect();
            for row in answers.into_iter().flatten() {
                for (i, v) in row.into_iter().enumerate() {
                    let (Some(p), Some(slot)) = (partials.get(i), acc.get_mut(i)) else {
                        return Err(Error::internal("aggregate row wider than planned"));
                    };
                    let prev = std::mem::replace(slot, Datum::Null);
                    *slot = p.combine(types.get(i), prev, v)?;
                }
            }
            Ok(vec![acc])
        }
        Merge::Rows {
            order,
            distinct,
            limit,
        } => {
            let mut rows: Vec<Vec<Datum>> = answers.into_iter().flatten().collect();
            sort_rows(&mut rows, order, *distinct)?;
            if let Some(l) = limit {
                rows.truncate(usize::try_from(l.rows(params)?).unwrap_or(usize::MAX));
            }
            Ok(rows)
        }
    }
}

/// Sorts `rows` by the ORDER BY keys `order`; with `distinct`, also drops
/// repeated rows (equal rows have equal keys, so they end up adjacent).
fn sort_rows(rows: &mut Vec<Vec<Datum>>, order: &[(usize, bool)], distinct: bool) -> Result<()> {
    let width = order.iter().map(|(i, _)| i + 1).max().unwrap_or(0);
    if rows.iter().any(|r| r.len() < width) {
        return Err(Error::internal("ORDER BY key beyond a shard's row"));
    }
    let by_order = |a: &Vec<Datum>, b: &Vec<Datum>| {
        for (i, desc) in order {
            let o = a[*i].sort_cmp(&b[*i]);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    };
    let whole = |a: &Vec<Datum>, b: &Vec<Datum>| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.sort_cmp(y))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    };
    if distinct {
        rows.sort_by(|a, b| by_order(a, b).then_with(|| whole(a, b)));
        rows.dedup_by(|a, b| whole(a, b) == Ordering::Equal);
    } else if !order.is_empty() {
        rows.sort_by(by_order);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Datum {
        Datum::Int(i)
    }

    #[test]
    fn partial_aggregates_fold_as_one_aggregate() {
        let merge = Merge::Aggregates(vec![
            Partial::Count,
            Partial::Sum,
            Partial::Min,
            Partial::Max,
        ]);
        let types = [SqlType::BigInt; 4];
        let answers = vec![
            vec![vec![int(2), int(5), int(1), int(4)]],
            vec![vec![int(0), Datum::Null, Datum::Null, Datum::Null]],
            vec![vec![int(3), int(-1), int(-7), int(9)]],
        ];
        assert_eq!(
            merge_rows(&merge, &types, answers, &[]).unwrap(),
            vec![vec![int(5), int(4), int(-7), int(9)]]
        );
        // No partition answered: count 0, the rest NULL.
        assert_eq!(
            merge_rows(&merge, &types, vec![], &[]).unwrap(),
            vec![vec![int(0), Datum::Null, Datum::Null, Datum::Null]]
        );
    }

    #[test]
    fn sum_overflow_is_an_error() {
        let e = Partial::Sum
            .combine(Some(&SqlType::BigInt), int(i64::MAX), int(1))
            .unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
    }

    #[test]
    fn rows_are_sorted_deduplicated_and_limited() {
        let merge = Merge::Rows {
            order: vec![(0, true)],
            distinct: true,
            limit: Some(LimitValue::Param(0)),
        };
        let answers = vec![
            vec![vec![int(1), int(10)], vec![int(3), int(30)]],
            vec![vec![int(3), int(30)], vec![int(2), int(20)]],
        ];
        let got = merge_rows(&merge, &[SqlType::BigInt; 2], answers, &[int(2)]).unwrap();
        assert_eq!(got, vec![vec![int(3), int(30)], vec![int(2), int(20)]]);
    }

    #[test]
    fn limit_parameters_read_as_postgresql_does() {
        let p = LimitValue::Param(0);
        assert_eq!(p.rows(&[Datum::Null]).unwrap(), u64::MAX);
        assert_eq!(p.rows(&[int(-3)]).unwrap(), 0);
        assert_eq!(p.rows(&[Datum::Text(" 7 ".into())]).unwrap(), 7);
        assert!(p.rows(&[Datum::Text("x".into())]).is_err());
        assert!(p.rows(&[]).is_err());
    }
}
