//! PostgreSQL spellings DataFusion plans differently or not at all,
//! rewritten in the copy of a statement that DataFusion plans (never in
//! SQL sent to a shard, which is rendered from Tessera's own plan):
//!
//! * `mod(a, b)` is `a % b`, `sign(x)` is DataFusion's `signum(x)`;
//! * `~x` (bitwise not) is `x # -1`;
//! * `FETCH FIRST n ROWS ONLY` is `LIMIT n`;
//! * result columns and set-returning functions in FROM get the names
//!   PostgreSQL gives them (`colnames`).

use std::ops::ControlFlow;

use common::{Error, SqlState};
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, LimitClause,
    ObjectName, ObjectNamePart, Query, SetExpr, SetOperator, SetQuantifier, Statement,
    UnaryOperator, Value, Visit, VisitMut, Visitor, VisitorMut,
};

use super::colnames;

/// PostgreSQL's errors for statements sqlparser accepts and DataFusion
/// or a shard would answer differently, raised before planning:
/// a subscript right after an `ARRAY[...]` constructor (PostgreSQL's
/// grammar requires `(ARRAY[1, 2])[1]`, 42601), a negative LIMIT (2201W)
/// or OFFSET (2201X) constant; and what Tessera refuses (0A000) because
/// DataFusion answers it wrongly: comparisons with `ALL (subquery)`,
/// `INTERSECT ALL` and `EXCEPT ALL`.
pub fn check(stmt: &Statement) -> common::Result<()> {
    struct Checker(Option<Error>);
    impl Checker {
        fn stop(&mut self, e: Error) -> ControlFlow<()> {
            self.0 = Some(e);
            ControlFlow::Break(())
        }
    }
    impl Visitor for Checker {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            if let Some(LimitClause::LimitOffset { limit, offset, .. }) = &q.limit_clause {
                if limit.as_ref().is_some_and(negative) {
                    return self.stop(Error::Sql {
                        state: SqlState("2201W"),
                        message: "LIMIT must not be negative".into(),
                    });
                }
                if offset.as_ref().is_some_and(|o| negative(&o.value)) {
                    return self.stop(Error::Sql {
                        state: SqlState("2201X"),
                        message: "OFFSET must not be negative".into(),
                    });
                }
            }
            if multiset(&q.body) {
                return self.stop(Error::unsupported("INTERSECT ALL and EXCEPT ALL"));
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::CompoundFieldAccess { root, .. }
                    if matches!(root.as_ref(), Expr::Array(_)) =>
                {
                    self.stop(Error::Syntax {
                        message: "syntax error at or near \"[\"".into(),
                        position: None,
                    })
                }
                Expr::AllOp { right, .. } if matches!(right.as_ref(), Expr::Subquery(_)) => {
                    self.stop(Error::unsupported("a comparison with ALL (subquery)"))
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    let mut c = Checker(None);
    let _ = stmt.visit(&mut c);
    c.0.map_or(Ok(()), Err)
}

/// Whether a query body holds an `INTERSECT ALL` or `EXCEPT ALL`.
fn multiset(body: &SetExpr) -> bool {
    match body {
        SetExpr::SetOperation {
            op,
            set_quantifier,
            left,
            right,
        } => {
            (matches!(op, SetOperator::Intersect | SetOperator::Except)
                && *set_quantifier == SetQuantifier::All)
                || multiset(left)
                || multiset(right)
        }
        _ => false,
    }
}

/// A negative number constant (`-1`).
fn negative(e: &Expr) -> bool {
    match e {
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => {
            matches!(expr.as_ref(), Expr::Value(v) if matches!(&v.value, Value::Number(n, _) if n.parse::<f64>().is_ok_and(|n| n > 0.0)))
        }
        Expr::Value(v) => matches!(&v.value, Value::Number(n, _) if n.starts_with('-')),
        Expr::Nested(x) => negative(x),
        _ => false,
    }
}

/// The statement DataFusion should plan for `stmt`, when it differs.
pub fn for_datafusion(stmt: &Statement) -> Option<Statement> {
    let (mut st, mut changed) = match colnames::with_unique_names(stmt) {
        Some(s) => (s, true),
        None => (stmt.clone(), false),
    };
    changed |= colnames::name_table_functions(&mut st);
    let mut r = Rewriter(false, vec![]);
    let _ = VisitMut::visit(&mut st, &mut r);
    (changed || r.0).then_some(st)
}

/// Whether anything changed, and the subqueries of `ANY`/`ALL`/`IN`
/// comparisons seen (by address while the tree is visited): those are
/// not scalar subqueries.
struct Rewriter(bool, Vec<*const Query>);

/// The unnamed arguments of a call, if all of them are plain expressions.
fn plain_args(args: &FunctionArguments) -> Option<Vec<Expr>> {
    let FunctionArguments::List(list) = args else {
        return None;
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return None;
    }
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// Aggregates a select item may call (a subquery calling one already
/// returns one row).
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "array_agg",
    "string_agg",
    "bool_and",
    "bool_or",
    "every",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "corr",
    "covar_pop",
    "covar_samp",
    "bit_and",
    "bit_or",
    "bit_xor",
    "percentile_cont",
    "percentile_disc",
    "mode",
    "median",
    "approx_distinct",
    "first_value",
    "last_value",
];

/// The select item of a scalar subquery that returns its rows unaggregated
/// (one plain SELECT with FROM, one item, no GROUP BY, HAVING, DISTINCT,
/// ORDER BY, LIMIT, window or aggregate call): where `pg_one_row` goes.
fn unaggregated_item(q: &mut Query) -> Option<&mut Expr> {
    if q.with.is_some() || q.order_by.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return None;
    }
    let SetExpr::Select(sel) = q.body.as_mut() else {
        return None;
    };
    let grouped = !matches!(&sel.group_by, datafusion::sql::sqlparser::ast::GroupByExpr::Expressions(g, _) if g.is_empty());
    if sel.from.is_empty()
        || grouped
        || sel.having.is_some()
        || sel.distinct.is_some()
        || sel.projection.len() != 1
        || !sel.named_window.is_empty()
        || sel.qualify.is_some()
    {
        return None;
    }
    let item = match &mut sel.projection[0] {
        datafusion::sql::sqlparser::ast::SelectItem::UnnamedExpr(e) => e,
        datafusion::sql::sqlparser::ast::SelectItem::ExprWithAlias { expr, .. } => expr,
        _ => return None,
    };
    let aggregates = datafusion::sql::sqlparser::ast::visit_expressions(&*item, |x| match x {
        Expr::Function(f) => {
            let name = crate::plan::object_parts(&f.name);
            let agg = f.over.is_some()
                || name
                    .last()
                    .is_some_and(|n| AGGREGATES.contains(&n.as_str()) || n == crate::onerow::NAME);
            if agg {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => {
            ControlFlow::Continue(())
        }
        _ => ControlFlow::Continue(()),
    });
    (!aggregates.is_break()).then_some(item)
}

fn call(name: &str, args: Vec<Expr>) -> Expr {
    use datafusion::sql::sqlparser::ast::{Function, FunctionArgumentList};
    Expr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a)))
                .collect(),
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::Nested(Box::new(Expr::BinaryOp {
        left: Box::new(Expr::Nested(Box::new(left))),
        op,
        right: Box::new(Expr::Nested(Box::new(right))),
    }))
}

impl VisitorMut for Rewriter {
    type Break = ();

    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let Some(fetch) = q.fetch.as_ref() else {
            return ControlFlow::Continue(());
        };
        if fetch.with_ties || fetch.percent {
            return ControlFlow::Continue(());
        }
        let n = fetch
            .quantity
            .clone()
            .unwrap_or_else(|| Expr::value(Value::Number("1".into(), false)));
        match &mut q.limit_clause {
            None => {
                q.limit_clause = Some(LimitClause::LimitOffset {
                    limit: Some(n),
                    offset: None,
                    limit_by: vec![],
                })
            }
            Some(LimitClause::LimitOffset {
                limit: l @ None, ..
            }) => *l = Some(n),
            // LIMIT and FETCH together: left for DataFusion to refuse.
            Some(_) => return ControlFlow::Continue(()),
        }
        q.fetch = None;
        self.0 = true;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::AnyOp { right, .. } | Expr::AllOp { right, .. } = e {
            if let Expr::Subquery(q) = right.as_ref() {
                self.1.push(q.as_ref() as *const Query);
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        match e {
            Expr::Subquery(q) if !self.1.contains(&(q.as_ref() as *const Query)) => {
                if let Some(item) = unaggregated_item(q) {
                    let x = std::mem::replace(item, Expr::value(Value::Null));
                    *item = call(crate::onerow::NAME, vec![x]);
                    self.0 = true;
                }
            }
            // DataFusion plans SUBSTRING(...) with its own substr, not the
            // session's (which has PostgreSQL's errors).
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let from = substring_from
                    .take()
                    .map(|b| *b)
                    .unwrap_or_else(|| Expr::value(Value::Number("1".into(), false)));
                let mut args = vec![
                    std::mem::replace(expr.as_mut(), Expr::value(Value::Null)),
                    from,
                ];
                if let Some(n) = substring_for.take() {
                    args.push(*n);
                }
                *e = call("substr", args);
                self.0 = true;
            }
            Expr::Function(f) if f.over.is_none() && f.filter.is_none() => {
                let name = crate::plan::object_parts(&f.name);
                let unqualified = match name.as_slice() {
                    [n] => Some(n.as_str()),
                    [s, n] if s == "pg_catalog" => Some(n.as_str()),
                    _ => None,
                };
                match (unqualified, plain_args(&f.args)) {
                    (Some("mod"), Some(args)) if args.len() == 2 => {
                        let mut it = args.into_iter();
                        if let (Some(a), Some(b)) = (it.next(), it.next()) {
                            *e = binary(a, BinaryOperator::Modulo, b);
                            self.0 = true;
                        }
                    }
                    (Some("sign"), Some(args)) if args.len() == 1 => {
                        f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("signum"))]);
                        self.0 = true;
                    }
                    _ => {}
                }
            }
            Expr::UnaryOp {
                op: UnaryOperator::BitwiseNot,
                expr,
            } => {
                let x = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
                let minus_one = Expr::UnaryOp {
                    op: UnaryOperator::Minus,
                    expr: Box::new(Expr::value(Value::Number("1".into(), false))),
                };
                *e = binary(x, BinaryOperator::PGBitwiseXor, minus_one);
                self.0 = true;
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let stmt = crate::parse::parse_sql(sql).unwrap().pop().unwrap();
        for_datafusion(&stmt)
            .map(|s| s.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn postgres_spellings_become_datafusion_ones() {
        assert_eq!(
            rewritten("SELECT mod(a, 7), sign(b), ~c FROM t"),
            "SELECT ((a) % (7)) AS \"?column 1?\", signum(b) AS \"?column 2?\", ((c) # (-1)) AS \"?column 3?\" FROM t"
        );
        assert_eq!(
            rewritten("SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY"),
            "SELECT a FROM t ORDER BY a LIMIT 3"
        );
        assert_eq!(
            rewritten("SELECT * FROM generate_series(1, 3)"),
            "SELECT * FROM generate_series(1, 3) AS \"generate_series\" (\"generate_series\")"
        );
        assert_eq!(rewritten("SELECT a FROM t"), "");
    }
}
