//! Guards against wrong answers of DataFusion 55's subquery
//! decorrelation.
//!
//! * [`SameNameCorrelation`]: a correlated subquery comparing two outer
//!   columns with two inner columns of the same name (`WHERE b.k = a.x AND
//!   c.k = a.y`) is joined on one of the inner columns twice, so it matches
//!   the wrong rows and the statement answers NULL where PostgreSQL answers
//!   a value. Such a plan is refused with 0A000 instead.
//! * [`SetComparisons`]: `x > ANY (SELECT x FROM t ...)` over the same
//!   unaliased table outside and inside compares the inner column with
//!   itself once the outer references are stripped (0 rows, or every row
//!   for `= ANY`; apache/datafusion#25258); and a correlated `NOT IN`
//!   ignores NULLs in the subquery (apache/datafusion#25347). The first is
//!   mended by renaming the subquery's output (a `SubqueryAlias` of its
//!   own), the second by planning `x NOT IN (q)` as `NOT (x = ANY (q))`,
//!   which keeps PostgreSQL's three-valued answer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::expr::{InSubquery, SetComparison, SetQuantifier};
use datafusion::logical_expr::{Expr, LogicalPlan, Operator, SubqueryAlias};
use datafusion::optimizer::{AnalyzerRule, OptimizerConfig, OptimizerRule};

#[derive(Debug, Default)]
pub struct SameNameCorrelation;

/// Whether a join's right side is a decorrelated subquery.
fn is_decorrelated(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::SubqueryAlias(a)
        if a.alias.table().starts_with("__scalar_sq") || a.alias.table().starts_with("__correlated_sq"))
}

/// Whether `on` meets one right column with two different left ones.
fn joins_one_column_twice(on: &[(Expr, Expr)]) -> bool {
    on.iter().enumerate().any(|(i, (l1, r1))| {
        on[i + 1..]
            .iter()
            .any(|(l2, r2)| r1 == r2 && l1 != l2 && matches!(r1, Expr::Column(_)))
    })
}

impl OptimizerRule for SameNameCorrelation {
    fn name(&self) -> &str {
        "tessera_same_name_correlation"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> datafusion::error::Result<Transformed<LogicalPlan>> {
        plan.apply(|node| {
            if let LogicalPlan::Join(j) = node {
                if is_decorrelated(&j.right) && joins_one_column_twice(&j.on) {
                    return Err(DataFusionError::External(Box::new(
                        common::Error::unsupported(
                            "a correlated subquery comparing outer columns with two inner columns of the same name (alias one of them in a derived table)",
                        ),
                    )));
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(Transformed::no(plan))
    }
}

/// See the module documentation.
#[derive(Debug, Default)]
pub struct SetComparisons;

impl AnalyzerRule for SetComparisons {
    fn name(&self) -> &str {
        "tessera_set_comparisons"
    }

    fn analyze(
        &self,
        plan: LogicalPlan,
        _config: &ConfigOptions,
    ) -> datafusion::error::Result<LogicalPlan> {
        let n = AtomicUsize::new(0);
        plan.transform_up_with_subqueries(|node| {
            node.map_expressions(|e| e.transform_up(|e| set_comparison(e, &n)))
        })
        .map(|t| t.data)
    }
}

fn set_comparison(e: Expr, n: &AtomicUsize) -> datafusion::error::Result<Transformed<Expr>> {
    let (negated, mut s) = match e {
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated: true,
        }) if !subquery.outer_ref_columns.is_empty() => (
            true,
            SetComparison::new(expr, subquery, Operator::Eq, SetQuantifier::Any),
        ),
        Expr::SetComparison(s) if !renamed(&s.subquery.subquery) => (false, s),
        e => return Ok(Transformed::no(e)),
    };
    if s.subquery.outer_ref_columns.is_empty() {
        let alias = format!("{RENAMED}{}", n.fetch_add(1, Ordering::Relaxed));
        s.subquery.subquery = Arc::new(LogicalPlan::SubqueryAlias(SubqueryAlias::try_new(
            s.subquery.subquery.clone(),
            alias,
        )?));
    } else if shares_a_table_name(&s.expr, &s.subquery.subquery)? {
        // A correlated subquery cannot be renamed (its decorrelation then
        // fails); refused rather than answered wrongly.
        return Err(DataFusionError::External(Box::new(
            common::Error::unsupported(
                "a correlated ANY, ALL or NOT IN subquery over a table the outer query names the same way (alias one of them)",
            ),
        )));
    }
    let e = Expr::SetComparison(s);
    Ok(Transformed::yes(if negated {
        Expr::Not(Box::new(e))
    } else {
        e
    }))
}

/// Whether a column of `expr` is qualified by a name that also qualifies
/// columns inside `plan`.
fn shares_a_table_name(expr: &Expr, plan: &LogicalPlan) -> datafusion::error::Result<bool> {
    let outer: Vec<_> = expr
        .column_refs()
        .into_iter()
        .filter_map(|c| c.relation.as_ref().map(|r| r.table().to_string()))
        .collect();
    if outer.is_empty() {
        return Ok(false);
    }
    let mut shared = false;
    plan.apply_with_subqueries(|p| {
        // The names the subquery's columns are qualified by: a table's
        // unless an alias renames it (what is under an alias is not seen).
        let (name, next) = match p {
            LogicalPlan::TableScan(t) => (Some(t.table_name.table()), TreeNodeRecursion::Continue),
            LogicalPlan::SubqueryAlias(a) => (Some(a.alias.table()), TreeNodeRecursion::Jump),
            _ => (None, TreeNodeRecursion::Continue),
        };
        if name.is_some_and(|n| outer.iter().any(|o| o == n)) {
            shared = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(next)
    })?;
    Ok(shared)
}

/// The prefix of the alias a set comparison's subquery is renamed to.
const RENAMED: &str = "__tsr_set_sq_";

fn renamed(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::SubqueryAlias(a) if a.alias.table().starts_with(RENAMED))
}
