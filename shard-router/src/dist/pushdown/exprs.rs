//! Expression helpers shared by the fragment compiler and the split
//! aggregate: what a plain aggregate is, its SQL argument and call, and which
//! output columns a key column survives as.

use datafusion::common::DFSchema;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::Expr;

use crate::sql::expr_sql::render;
use crate::sql::ShardSql;

/// The function name and argument of a plain one-argument aggregate (no
/// DISTINCT, FILTER or ORDER BY).
pub(super) fn simple_aggregate(e: &Expr) -> Option<(String, &Expr)> {
    let Expr::AggregateFunction(AggregateFunction { func, params }) = unaliased(e) else {
        return None;
    };
    if params.distinct
        || params.filter.is_some()
        || !params.order_by.is_empty()
        || params.args.len() != 1
    {
        return None;
    }
    Some((func.name().to_ascii_lowercase(), &params.args[0]))
}

/// The SQL argument of an aggregate: `*` for COUNT of a constant.
pub(super) fn aggregate_arg_sql(
    name: &str,
    arg: &Expr,
    input: &DFSchema,
    cols: &[ShardSql],
) -> Option<ShardSql> {
    if name == "count" && matches!(arg, Expr::Literal(v, _) if !v.is_null()) {
        let mut out = ShardSql::new();
        out.keyword("*");
        Some(out)
    } else {
        render(arg, input, cols)
    }
}

/// `FUNC(arg)`: an aggregate call (`SUM`, `COUNT`, `MIN`, `MAX`).
pub(super) fn aggregate_sql(func: &'static str, arg: &ShardSql) -> ShardSql {
    let mut out = ShardSql::new();
    out.keyword(func).keyword("(").push(arg).keyword(")");
    out
}

/// The expression under any aliases.
pub(super) fn unaliased(e: &Expr) -> &Expr {
    match e {
        Expr::Alias(a) => unaliased(&a.expr),
        e => e,
    }
}

/// Positions (in a new output) whose source column is one of `at`.
pub(super) fn surviving(at: &[usize], sources: &[Option<usize>]) -> Vec<usize> {
    sources
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_some_and(|s| at.contains(&s)))
        .map(|(j, _)| j)
        .collect()
}
