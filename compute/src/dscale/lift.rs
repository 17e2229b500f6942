//! Quotients' scales across DISTINCT, out of scalar subqueries and
//! through the aggregates that keep one value's scale; and the scale of
//! `lead`/`lag`'s default, which is its own.
//!
//! * DISTINCT over a quotient: rows equal in value are one row whatever
//!   scales they print with (`0.8000000000000000`, from `1.2 / 1.5`, and
//!   `0.80000000000000000000`, from `4 / 5`, are equal in PostgreSQL), so
//!   the companions are not part of the row: DISTINCT becomes a grouping
//!   by the other columns, each companion its group's first, as
//!   PostgreSQL prints whichever of the equal values it met first.
//! * A scalar subquery whose value is a quotient, in a select list: it
//!   answers a pair (value, scale), computed once, in a projection below
//!   the select list; the select list reads the value as a column with a
//!   companion.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::Column;
use datafusion::error::{DataFusionError, Result};
use datafusion::functions::core::expr_fn::{get_field, named_struct};
use datafusion::functions_aggregate::expr_fn::{first_value, max};
use datafusion::logical_expr::expr::AggregateFunctionParams;
use datafusion::logical_expr::{lit, Aggregate, Expr, LogicalPlan, Projection, Subquery};

use datafusion::arrow::datatypes::DataType;
use datafusion::common::DFSchema;

use super::exprs::{
    decimal_scale, dynamic, literal_scale, output_columns, refuse, scale_of, unfolded, Companions,
};

/// A scalar subquery whose value prints with a per-row scale: the plan
/// its users see (`plain`, its value alone), and the one that still has
/// the value's scale (`inner`, with `value` and `scale` over its output).
pub(super) struct QuotientSubquery {
    pub plain: Arc<LogicalPlan>,
    pub inner: Arc<LogicalPlan>,
    pub value: Expr,
    pub scale: Expr,
}

/// `SELECT DISTINCT` over `input`, whose columns `comps` maps to their
/// companions (columns of `input` too); see the module documentation.
pub(super) fn distinct(
    input: Arc<LogicalPlan>,
    comps: Companions,
) -> Result<(LogicalPlan, Companions)> {
    let mut companion_columns = vec![];
    for c in comps.values() {
        match c {
            Expr::Column(k) => companion_columns.push(k.clone()),
            _ => return Err(super::exprs::refuse("Distinct: a computed scale")),
        }
    }
    let mut group = vec![];
    let mut aggr = vec![];
    for (q, f) in input.schema().iter() {
        let col = Column::new(q.cloned(), f.name());
        if companion_columns.contains(&col) {
            // The first row's, as PostgreSQL's hashed DISTINCT keeps it.
            aggr.push(first_value(Expr::Column(col), vec![]).alias(f.name()));
        } else {
            group.push(Expr::Column(col));
        }
    }
    let comps = comps
        .into_iter()
        .map(|(k, v)| {
            let Expr::Column(c) = v else {
                return (k, v);
            };
            (k, Expr::Column(Column::new_unqualified(c.name)))
        })
        .collect();
    let node = Aggregate::try_new(input, group, aggr)?;
    Ok((LogicalPlan::Aggregate(node), comps))
}

/// Whether `e` reads one of `found`.
pub(super) fn reads_quotient_subquery(e: &Expr, found: &[QuotientSubquery]) -> Result<bool> {
    let mut hit = false;
    e.apply(|x| {
        if let Expr::ScalarSubquery(sq) = x {
            hit |= found.iter().any(|q| Arc::ptr_eq(&q.plain, &sq.subquery));
        }
        Ok(if hit {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    Ok(hit)
}

/// `p` with each of `found` it reads lifted into projections below it:
/// the pair once (`__pg_sq_pair_<n>`), then its value and scale as columns,
/// the scale the value's companion (added to `comps`).
pub(super) fn lift_subqueries(
    p: Projection,
    found: &[QuotientSubquery],
    name: &mut dyn FnMut() -> String,
    comps: &mut Companions,
) -> Result<Projection> {
    let mut lifted: Vec<(usize, String)> = vec![];
    for e in &p.expr {
        e.apply(|x| {
            if let Expr::ScalarSubquery(sq) = x {
                if let Some(i) = found
                    .iter()
                    .position(|q| Arc::ptr_eq(&q.plain, &sq.subquery))
                {
                    if !lifted.iter().any(|(j, _)| *j == i) {
                        lifted.push((i, name()));
                    }
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    let input = p.input.clone();
    let mut pairs = output_columns(input.schema());
    let mut fields = output_columns(input.schema());
    for (i, n) in &lifted {
        let q = &found[*i];
        let outer = outer_ref_columns(&p, q)?;
        let pair = named_struct(vec![lit("v"), q.value.clone(), lit("s"), q.scale.clone()]);
        let sub = Projection::try_new(vec![pair.alias("pair")], q.inner.clone())?;
        let sub = Subquery {
            subquery: Arc::new(LogicalPlan::Projection(sub)),
            outer_ref_columns: outer,
            spans: Default::default(),
        };
        let pair_name = format!("{n}_pair");
        pairs.push(Expr::ScalarSubquery(sub).alias(&pair_name));
        let col = Expr::Column(Column::new_unqualified(&pair_name));
        fields.push(get_field(col.clone(), "v").alias(format!("{n}_value")));
        fields.push(get_field(col, "s").alias(format!("{n}_scale")));
        comps.insert(
            Column::new_unqualified(format!("{n}_value")),
            Expr::Column(Column::new_unqualified(format!("{n}_scale"))),
        );
    }
    let below = LogicalPlan::Projection(Projection::try_new(pairs, input)?);
    let below = LogicalPlan::Projection(Projection::try_new(fields, Arc::new(below))?);
    let exprs = p
        .expr
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let t = e.clone().transform_up(|x| {
                let Expr::ScalarSubquery(sq) = &x else {
                    return Ok(Transformed::no(x));
                };
                let Some((_, n)) = lifted
                    .iter()
                    .find(|(i, _)| Arc::ptr_eq(&found[*i].plain, &sq.subquery))
                else {
                    return Ok(Transformed::no(x));
                };
                Ok(Transformed::yes(Expr::Column(Column::new_unqualified(
                    format!("{n}_value"),
                ))))
            })?;
            Ok(if t.transformed && !matches!(t.data, Expr::Alias(_)) {
                let (q, f) = p.schema.qualified_field(k);
                t.data.alias_qualified(q.cloned(), f.name())
            } else {
                t.data
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Projection::try_new(exprs, Arc::new(below))
}

/// The outer columns the subquery `q` reads, as `p`'s expressions list them.
fn outer_ref_columns(p: &Projection, q: &QuotientSubquery) -> Result<Vec<Expr>> {
    let mut outer = None;
    for e in &p.expr {
        e.apply(|x| {
            if let Expr::ScalarSubquery(sq) = x {
                if Arc::ptr_eq(&q.plain, &sq.subquery) {
                    outer = Some(sq.outer_ref_columns.clone());
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    outer.ok_or_else(|| DataFusionError::Internal("lifted subquery not found".into()))
}

/// The companion of aggregate `name` over a value with a per-row scale,
/// `None` for an aggregate that does not keep one: `sum` prints with the
/// largest scale summed (a NULL's does not count), `pg_one_row` (a scalar
/// subquery's one value) with its value's, `max` and `min` with the scale
/// of the value they choose (of one of them, when equal values differ in
/// scale: PostgreSQL keeps whichever it met last).
pub(super) fn companion_aggregate(
    name: &str,
    params: &AggregateFunctionParams,
    schema: &DFSchema,
    comps: &Companions,
) -> Result<Option<Expr>> {
    let [arg] = params.args.as_slice() else {
        return Ok(None);
    };
    if !matches!(name, "sum" | "pg_one_row" | "max" | "min") || !dynamic(arg, schema, comps) {
        return Ok(None);
    }
    let Some(scale) = scale_of(arg, schema, comps)? else {
        return Err(refuse(&format!("the aggregate {name}")));
    };
    let mut m = match name {
        "max" | "min" => {
            // The chosen value's row first (NULLs last: they choose none).
            first_value(scale, vec![arg.clone().sort(name == "min", false)])
        }
        _ => max(datafusion::logical_expr::when(arg.clone().is_not_null(), scale).end()?),
    };
    if let Expr::AggregateFunction(f) = &mut m {
        f.params.distinct = params.distinct && name == "sum";
        f.params.filter = params.filter.clone();
    }
    Ok(Some(m))
}

/// `lead(x, n, default)` or `lag(...)` over numerics whose rows and
/// default print with different scales (`lead(amount, 1, 0)` over a
/// numeric(12,2) prints `0` past the partition's end): the same call of
/// a constant (NULL exactly past the end), and the scales of the rows'
/// values and of the default.
pub(super) struct LeadDefault {
    /// The call's output column.
    pub column: Column,
    pub marker: Expr,
    pub value_scale: i8,
    pub default_scale: i8,
}

pub(super) fn lead_default(
    wf: &datafusion::logical_expr::expr::WindowFunction,
    column: Column,
    schema: &DFSchema,
) -> Result<Option<LeadDefault>> {
    use datafusion::logical_expr::{ExprSchemable, WindowFunctionDefinition};
    let WindowFunctionDefinition::WindowUDF(f) = &wf.fun else {
        return Ok(None);
    };
    let [x, n, default] = wf.params.args.as_slice() else {
        return Ok(None);
    };
    if !matches!(f.name(), "lead" | "lag") {
        return Ok(None);
    }
    let xt = x.get_type(schema)?;
    let wider = matches!(
        unfolded(default).get_type(schema)?,
        DataType::Decimal128(..) | DataType::Float32 | DataType::Float64
    );
    if xt.is_integer() && wider {
        // PostgreSQL's result is numeric; DataFusion's the integer, the
        // default cut to it (`lead(qty, 1, 0.5)` gave 0).
        return Err(DataFusionError::External(Box::new(
            common::Error::unsupported(format!(
                "{} of an integer with a default that is not one",
                f.name()
            )),
        )));
    }
    if !matches!(xt, DataType::Decimal128(..)) {
        return Ok(None);
    }
    let (Some(value_scale), Some(default_scale)) =
        (own_scale(x, schema), own_scale(default, schema))
    else {
        return Ok(None);
    };
    if value_scale == default_scale {
        return Ok(None);
    }
    let mut marker = wf.clone();
    marker.params.args = vec![lit(1i32), n.clone()];
    Ok(Some(LeadDefault {
        column,
        marker: Expr::WindowFunction(Box::new(marker)),
        value_scale,
        default_scale,
    }))
}

/// A projection over a window node that gives each [`LeadDefault`] its
/// companion (named by `name`) and drops the markers (named `markers`).
pub(super) fn lead_companions(
    window: LogicalPlan,
    leads: &[LeadDefault],
    markers: &[String],
    name: &mut dyn FnMut() -> String,
    comps: &mut Companions,
) -> Result<LogicalPlan> {
    let schema = window.schema().clone();
    let mut exprs: Vec<Expr> = schema
        .iter()
        .filter(|(q, f)| !(q.is_none() && markers.iter().any(|m| m == f.name())))
        .map(|(q, f)| Expr::Column(Column::new(q.cloned(), f.name())))
        .collect();
    for (l, marker) in leads.iter().zip(markers) {
        let scale = datafusion::logical_expr::when(
            Expr::Column(Column::new_unqualified(marker)).is_null(),
            lit(l.default_scale as i32),
        )
        .otherwise(lit(l.value_scale as i32))?;
        let cname = name();
        exprs.push(scale.alias(&cname));
        comps.insert(
            l.column.clone(),
            Expr::Column(Column::new_unqualified(cname)),
        );
    }
    Ok(LogicalPlan::Projection(Projection::try_new(
        exprs,
        Arc::new(window),
    )?))
}

/// The companion a union's column keeps through the projection type
/// coercion puts over a union that is itself an input of another (`SELECT
/// 1.5 UNION ALL SELECT 2.25 UNION ALL SELECT 3`): a cast of the column to
/// a decimal of no smaller scale changes no value. (A client's cast
/// cannot sit directly on a union: a subquery's alias comes between.)
pub(super) fn coerced_companion(e: &Expr, schema: &DFSchema, comps: &Companions) -> Option<Expr> {
    use datafusion::logical_expr::ExprSchemable;
    let inner = match e {
        Expr::Alias(a) => a.expr.as_ref(),
        e => e,
    };
    let Expr::Cast(c) = inner else {
        return None;
    };
    let Expr::Column(col) = c.expr.as_ref() else {
        return None;
    };
    let comp = comps.get(col)?;
    let from = decimal_scale(&c.expr.get_type(schema).ok()?)?;
    let to = decimal_scale(c.field.data_type())?;
    (to >= from).then(|| comp.clone())
}

/// A VALUES list whose decimal column holds values of different scales
/// (`VALUES (1.5), (2.25), (3)` prints `1.5`, `2.25`, `3`): each row gets
/// its value's own scale as one more column, the column's companion.
pub(super) fn values(
    v: datafusion::logical_expr::Values,
    name: &mut dyn FnMut() -> String,
) -> Result<(LogicalPlan, Companions)> {
    use datafusion::arrow::datatypes::Field;
    let empty = DFSchema::empty();
    let mut comps = Companions::new();
    let mut fields: Vec<_> = v
        .schema
        .iter()
        .map(|(q, f)| (q.cloned(), f.clone()))
        .collect();
    let mut rows = v.values.clone();
    for (k, (q, f)) in v.schema.iter().enumerate() {
        let Some(type_scale) = decimal_scale(f.data_type())
            .filter(|_| matches!(f.data_type(), DataType::Decimal128(..)))
        else {
            continue;
        };
        let scales: Vec<Option<i8>> = v
            .values
            .iter()
            .map(|r| r.get(k).and_then(|e| own_scale(e, &empty)))
            .collect();
        if scales.iter().flatten().all(|s| *s == type_scale) {
            continue;
        }
        let cname = name();
        for (row, s) in rows.iter_mut().zip(&scales) {
            row.push(lit(s.unwrap_or(type_scale) as i32));
        }
        fields.push((None, Arc::new(Field::new(&cname, DataType::Int32, false))));
        comps.insert(
            Column::new(q.cloned(), f.name()),
            Expr::Column(Column::new_unqualified(cname)),
        );
    }
    if comps.is_empty() {
        return Ok((LogicalPlan::Values(v), comps));
    }
    let schema = DFSchema::new_with_metadata(fields, v.schema.metadata().clone())?;
    let node = datafusion::logical_expr::Values {
        schema: Arc::new(schema),
        values: rows,
    };
    Ok((LogicalPlan::Values(node), comps))
}

/// Whether `plan` is a DISTINCT [`distinct`] made: a union's, when the
/// projection type coercion puts over it keeps its companions too.
pub(super) fn is_companion_distinct(plan: &LogicalPlan) -> bool {
    let LogicalPlan::Aggregate(a) = plan else {
        return false;
    };
    !a.aggr_expr.is_empty()
        && a.aggr_expr
            .iter()
            .all(|e| e.schema_name().to_string().starts_with(super::COMPANION))
}

/// The scale `e` prints with as written, below the casts type coercion
/// put on it: a number literal's own, else its type's (`None`: a NULL or
/// not a number).
fn own_scale(e: &Expr, schema: &DFSchema) -> Option<i8> {
    use datafusion::logical_expr::ExprSchemable;
    match literal_scale(e) {
        Some(s) => s,
        None => unfolded(e)
            .get_type(schema)
            .ok()
            .and_then(|t| decimal_scale(&t)),
    }
}
