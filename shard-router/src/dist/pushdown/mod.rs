//! Deep pushdown: a DataFusion optimizer rule that hands whole plan
//! fragments to the shards. It runs after DataFusion's own rules, finds the
//! largest subtrees every shard can evaluate on its own partitions and
//! replaces them with a scan of one MySQL query per partition:
//!
//! * select-project-join fragments: filters and projections, inner joins
//!   between co-located hash tables (same partition count and placement,
//!   joined on the whole partition key) and with mirror tables, and
//!   semi/anti joins (`IN (SELECT ...)`, `EXISTS` / `NOT EXISTS`) under the same rule;
//! * aggregates over such a fragment, split in two: each shard computes
//!   partial aggregates (SUM, COUNT, MIN, MAX, AVG as SUM + COUNT) per group,
//!   DataFusion merges them;
//! * `ORDER BY ... LIMIT n` over a fragment as a per-shard top-n, which
//!   DataFusion merges with the same sort.
//!
//! Only expressions MariaDB evaluates exactly like PostgreSQL are rendered
//! (see [`crate::sql::expr_sql::render`]); anything else leaves the subtree
//! to DataFusion, so pushdown changes where work happens, never the answer.
//!
//! The SQL comes from the one renderer of shard SQL, `crate::sql`: each
//! column, condition and aggregate is a `ShardSql` fragment from its
//! DataFusion front-end, and the queries (select lists, FROM items and
//! joins, EXISTS, GROUP BY ordinals, ORDER BY/LIMIT tails) are composed
//! from those fragments and fixed keywords (`sql.rs`); they become text
//! only where a scan hands them to the shards (`provider.rs`).

mod aggregate;
mod exprs;
mod fragment;
mod provider;
mod sql;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{Expr, JoinType, LogicalPlan, LogicalPlanBuilder};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

use aggregate::*;
use fragment::*;
use provider::*;
use sql::*;

/// The optimizer rule; see the module documentation.
#[derive(Debug, Default)]
pub struct ShardPushdown;

impl OptimizerRule for ShardPushdown {
    fn name(&self) -> &str {
        "tessera_shard_pushdown"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> datafusion::error::Result<Transformed<LogicalPlan>> {
        let plan = plan.transform_up(|node| {
            Ok(match rotate(&node)? {
                Some(new) => Transformed::yes(new),
                None => Transformed::no(node),
            })
        })?;
        let rotated = plan.transformed;
        let mut plan = plan.data.transform_down(|node| {
            Ok(match push(&node)? {
                Some(new) => Transformed::new(new, true, TreeNodeRecursion::Jump),
                None => Transformed::no(node),
            })
        })?;
        plan.transformed |= rotated;
        if !plan.transformed {
            return Ok(plan);
        }
        // Parents of replaced subtrees still carry their old schemas (the
        // nullability of a column can differ): recompute them.
        plan.data
            .transform_up(|p| p.recompute_schema().map(Transformed::yes))
            .map(|p| Transformed::yes(p.data))
    }
}

/// Regroups `(X JOIN Y) JOIN C` so that C meets the input it can be joined
/// with inside the shards: `X JOIN (Y JOIN C)` when the upper join's keys on
/// the left are all Y's and Y, C are co-located (likewise with X). Inner
/// joins without extra filters only (they are associative); a projection
/// restores the original column order.
fn rotate(node: &LogicalPlan) -> datafusion::error::Result<Option<LogicalPlan>> {
    let LogicalPlan::Join(top) = node else {
        return Ok(None);
    };
    if top.join_type != JoinType::Inner || top.filter.is_some() {
        return Ok(None);
    }
    let lower = match top.left.as_ref() {
        LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {
            p.input.as_ref()
        }
        other => other,
    };
    let LogicalPlan::Join(j2) = lower else {
        return Ok(None);
    };
    if j2.join_type != JoinType::Inner || j2.filter.is_some() {
        return Ok(None);
    }
    let c = top.right.as_ref();
    let (x, y) = (j2.left.as_ref(), j2.right.as_ref());
    let mut comp = Compiler { next_alias: 0 };
    // Already pushable as it is, or nothing to gain.
    if comp.compile(lower).is_some() {
        return Ok(None);
    }
    let only_in = |side: &LogicalPlan| {
        top.on.iter().all(|(l, _)| {
            l.column_refs()
                .iter()
                .all(|col| side.schema().has_column(col))
        })
    };
    let colocated = |side: &LogicalPlan, comp: &mut Compiler| -> bool {
        let (Some(a), Some(b)) = (comp.compile(side), comp.compile(c)) else {
            return false;
        };
        let pairs: Vec<(usize, usize)> = top
            .on
            .iter()
            .filter_map(|(l, r)| match (l, r) {
                (Expr::Column(l), Expr::Column(r)) => Some((
                    side.schema().index_of_column(l).ok()?,
                    c.schema().index_of_column(r).ok()?,
                )),
                _ => None,
            })
            .collect();
        colocate(&a, &b, &pairs, false).is_some()
    };
    let (left_keys, right_keys): (Vec<Expr>, Vec<Expr>) = top.on.iter().cloned().unzip();
    let (l2, r2): (Vec<Expr>, Vec<Expr>) = j2.on.iter().cloned().unzip();
    let joined = if only_in(y) && colocated(y, &mut comp) {
        // X JOIN (Y JOIN C)
        let yc = LogicalPlanBuilder::from(y.clone())
            .join_with_expr_keys(c.clone(), JoinType::Inner, (left_keys, right_keys), None)?
            .build()?;
        LogicalPlanBuilder::from(x.clone())
            .join_with_expr_keys(yc, JoinType::Inner, (l2, r2), None)?
            .build()?
    } else if only_in(x) && colocated(x, &mut comp) {
        // (X JOIN C) JOIN Y
        let xc = LogicalPlanBuilder::from(x.clone())
            .join_with_expr_keys(c.clone(), JoinType::Inner, (left_keys, right_keys), None)?
            .build()?;
        LogicalPlanBuilder::from(xc)
            .join_with_expr_keys(y.clone(), JoinType::Inner, (l2, r2), None)?
            .build()?
    } else {
        return Ok(None);
    };
    let cols: Vec<Expr> = node
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    LogicalPlanBuilder::from(joined)
        .project(cols)?
        .build()
        .map(Some)
}

fn push(node: &LogicalPlan) -> datafusion::error::Result<Option<LogicalPlan>> {
    let mut c = Compiler { next_alias: 0 };
    match node {
        LogicalPlan::Aggregate(a) => {
            let Some(f) = c.compile(&a.input) else {
                return Ok(None);
            };
            // Groups within partitions: the whole aggregate runs in the shards.
            match c.local_aggregate(a, f.clone()) {
                Some(whole_agg) => whole(node, whole_agg).map(Some),
                None => push_aggregate(a, f),
            }
        }
        LogicalPlan::Sort(s) if s.fetch.is_some() => {
            let Some(f) = c.compile(&s.input) else {
                return Ok(None);
            };
            push_top_n(s, f)
        }
        _ => {
            let Some(f) = c.compile(node) else {
                return Ok(None);
            };
            if f.is_single_table() {
                return Ok(None);
            }
            whole(node, f).map(Some)
        }
    }
}

/// `node` (compiled to `f`) replaced by a scan of its shard queries.
fn whole(node: &LogicalPlan, f: Frag) -> datafusion::error::Result<LogicalPlan> {
    let none = crate::sql::ShardSql::new();
    scan_plan(&f, &f.cols, &none, &none, &fields_of(node.schema()))
}
