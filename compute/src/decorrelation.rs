//! A guard against a wrong answer of DataFusion 55's subquery
//! decorrelation: a correlated subquery comparing two outer columns with
//! two inner columns of the same name (`WHERE b.k = a.x AND c.k = a.y`)
//! is joined on one of the inner columns twice, so it matches the wrong
//! rows and the statement answers NULL where PostgreSQL answers a value.
//! Such a plan is refused with 0A000 instead.

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

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
