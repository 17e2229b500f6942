//! Partial aggregates per shard merged by DataFusion, split as
//! `dist::merge::Partial` defines them (a float AVG as SUM
//! and COUNT), and per-shard top-n.

use super::exprs::{aggregate_arg_sql, aggregate_sql, simple_aggregate};
use super::fragment::{Dist, Frag};
use super::provider::scan_plan;
use super::sql::{fields_of, group_by_ordinals, QualifiedFields};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::Column;
use datafusion::logical_expr::{
    cast, Aggregate, Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, Operator, Sort,
};

use crate::dist::merge::Partial;
use crate::sql::expr_sql::render;
use crate::sql::{sql_type_of, ShardSql};

pub(super) fn push_top_n(s: &Sort, f: Frag) -> datafusion::error::Result<Option<LogicalPlan>> {
    let (Some(n), Dist::Hash { .. }) = (s.fetch, &f.dist) else {
        return Ok(None);
    };
    let input = s.input.schema();
    let mut tail = ShardSql::new();
    for (i, e) in s.expr.iter().enumerate() {
        let Some(x) = render(&e.expr, input, &f.cols) else {
            return Ok(None);
        };
        // MariaDB puts NULLs first ascending, last descending; spell the
        // requested placement out.
        tail.keyword(if i == 0 { " ORDER BY (" } else { ", (" })
            .push(&x)
            .keyword(if e.nulls_first {
                " IS NULL) DESC, "
            } else {
                " IS NULL) ASC, "
            })
            .append(x)
            .keyword(if e.asc { " ASC" } else { " DESC" });
    }
    tail.keyword(" LIMIT ").int(n as u64);
    let none = ShardSql::new();
    let scan = scan_plan(&f, &f.cols, &none, &tail, &fields_of(input))?;
    Ok(Some(LogicalPlan::Sort(Sort {
        expr: s.expr.clone(),
        input: Arc::new(scan),
        fetch: s.fetch,
    })))
}

/// An aggregate split in two: partial aggregates per group in the shards,
/// merged by a final aggregate in DataFusion that reproduces the original
/// output (names, qualifiers and types).
pub(super) fn push_aggregate(
    a: &Aggregate,
    f: Frag,
) -> datafusion::error::Result<Option<LogicalPlan>> {
    use datafusion::functions::expr_fn::coalesce;
    let input = a.input.schema();
    let out_fields = fields_of(&a.schema);
    // The shard query: group columns keep their output names, partial
    // aggregates are named __p<i>.
    let mut select = vec![];
    let mut fields: QualifiedFields = vec![];
    let mut groups = vec![];
    for (g, (q, fl)) in a.group_expr.iter().zip(&out_fields) {
        let Some(sql) = render(g, input, &f.cols) else {
            return Ok(None);
        };
        select.push(sql);
        fields.push((q.clone(), fl.clone()));
        groups.push(Expr::Column(Column::new(q.clone(), fl.name())));
    }
    let mut out: Vec<Expr> = groups
        .iter()
        .zip(&out_fields)
        .map(|(g, (q, fl))| g.clone().alias_qualified(q.clone(), fl.name()))
        .collect();
    // The final aggregates, named __a<i>.
    let mut finals: Vec<Expr> = vec![];
    for (e, (q, fl)) in a.aggr_expr.iter().zip(&out_fields[groups.len()..]) {
        let Some((name, arg)) = simple_aggregate(e) else {
            return Ok(None);
        };
        let Ok(arg_type) = arg.get_type(input) else {
            return Ok(None);
        };
        let Some(arg_sql) = aggregate_arg_sql(&name, arg, input, &f.cols) else {
            return Ok(None);
        };
        let mut partial = |sql: ShardSql, ty: DataType| {
            let name = format!("__p{}", select.len());
            select.push(sql);
            fields.push((None, Arc::new(Field::new(&name, ty, true))));
            Expr::Column(Column::new_unqualified(name))
        };
        let mut merged = |e: Expr| {
            let name = format!("__a{}", finals.len());
            finals.push(e.alias(&name));
            Expr::Column(Column::new_unqualified(name))
        };
        // One partial per shard and its fold, as `dist::merge::Partial`
        // defines them (the fast path folds the same split over rows).
        let mut split = |p: Partial, ty: DataType| {
            let column = partial(aggregate_sql(p.shard_function(), &arg_sql), ty);
            let (fold, identity) = p.merge_expr(column);
            let folded = merged(fold);
            match identity {
                Some(none) => coalesce(vec![folded, none]),
                None => folded,
            }
        };
        let sum_type = match &arg_type {
            t if t.is_integer() => Some(DataType::Int64),
            DataType::Float32 | DataType::Float64 => Some(DataType::Float64),
            DataType::Decimal128(_, s) => Some(DataType::Decimal128(38, *s)),
            _ => None,
        };
        let result = match (Partial::of_name(&name), sum_type) {
            (Some(p @ Partial::Sum), Some(t)) => split(p, t),
            (Some(p @ Partial::Count), _) => split(p, DataType::Int64),
            (Some(p @ (Partial::Min | Partial::Max)), _)
                if sql_type_of(&arg_type).is_some() && !arg_type.is_floating() =>
            {
                split(p, arg_type)
            }
            // Float avg only: the compute node rewrites numeric avg into
            // sum and count before this rule runs.
            (None, Some(t)) if name == "avg" && arg_type.is_floating() => {
                let s = split(Partial::Sum, t);
                let c = split(Partial::Count, DataType::Int64);
                Expr::BinaryExpr(datafusion::logical_expr::BinaryExpr::new(
                    Box::new(cast(s, DataType::Float64)),
                    Operator::Divide,
                    Box::new(cast(c, DataType::Float64)),
                ))
            }
            _ => return Ok(None),
        };
        out.push(cast(result, fl.data_type().clone()).alias_qualified(q.clone(), fl.name()));
    }
    let scan = scan_plan(
        &f,
        &select,
        &group_by_ordinals(groups.len()),
        &ShardSql::new(),
        &fields,
    )?;
    LogicalPlanBuilder::from(scan)
        .aggregate(groups, finals)?
        .project(out)?
        .build()
        .map(Some)
}
