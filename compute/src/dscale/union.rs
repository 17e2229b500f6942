//! UNION [ALL] of numerics printed at different scales: the scale each
//! input prints a column with, and the union that carries it.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::Column;
use datafusion::error::Result;
use datafusion::logical_expr::{cast, lit, Expr, LogicalPlan, Projection, Union};

use super::exprs::{decimal_scale, literal_scale, output_columns, unfolded, Companions};

/// One input's scale of one column.
pub(super) enum Scale {
    /// The same for every row (a NULL literal: `None`, no value to print).
    Fixed(Option<i8>),
    /// The input's companion.
    PerRow(Expr),
}

impl Scale {
    pub(super) fn expr(&self) -> Expr {
        match self {
            Scale::Fixed(s) => lit(s.unwrap_or(0) as i32),
            Scale::PerRow(e) => e.clone(),
        }
    }
}

/// Whether the inputs' scales of a column can differ between rows.
pub(super) fn differ<'a>(mut scales: impl Iterator<Item = &'a Scale>) -> bool {
    let mut fixed = None;
    scales.any(|s| match s {
        Scale::PerRow(_) => true,
        Scale::Fixed(None) => false,
        Scale::Fixed(Some(x)) => *fixed.get_or_insert(*x) != *x,
    })
}

/// The scale of each output column of a union's input.
pub(super) fn input_scales(input: &LogicalPlan, comps: &Companions) -> Result<Vec<Scale>> {
    let schema = input.schema();
    Ok(schema
        .iter()
        .enumerate()
        .map(|(k, (q, f))| {
            if let Some(c) = comps.get(&Column::new(q.cloned(), f.name())) {
                return Scale::PerRow(c.clone());
            }
            if let Some(s) = literal_of(input, k) {
                return Scale::Fixed(s);
            }
            Scale::Fixed(Some(decimal_scale(f.data_type()).unwrap_or(0)))
        })
        .collect())
}

/// The scale of the number literal that output column `k` of `plan` is,
/// through the projections type coercion puts over a union's inputs.
fn literal_of(plan: &LogicalPlan, k: usize) -> Option<Option<i8>> {
    let LogicalPlan::Projection(p) = plan else {
        return None;
    };
    let e = p.expr.get(k)?;
    let e = match e {
        Expr::Alias(a) => a.expr.as_ref(),
        e => e,
    };
    if let Some(s) = literal_scale(e) {
        return Some(s);
    }
    let Expr::Column(c) = unfolded(e) else {
        return None;
    };
    let below = p.input.schema().index_of_column(c).ok()?;
    literal_of(&p.input, below)
}

/// A UNION [ALL] whose inputs print a column with different scales
/// (a companion, or number literals of different scales: `SELECT 1
/// UNION ALL SELECT 1.5` prints `1` and `1.5`): each input gets the
/// column's scale as one more column, the union's companion.
pub(super) fn union(
    u: Union,
    below: &[Companions],
    name: &mut dyn FnMut() -> String,
) -> Result<(LogicalPlan, Companions)> {
    let width = u.schema.fields().len();
    let scales = u
        .inputs
        .iter()
        .zip(below.iter().chain(std::iter::repeat(&Companions::new())))
        .map(|(input, comps)| input_scales(input, comps))
        .collect::<Result<Vec<_>>>()?;
    let need: Vec<usize> = (0..width)
        .filter(|&k| {
            matches!(u.schema.field(k).data_type(), DataType::Decimal128(..))
                && differ(scales.iter().map(|v| &v[k]))
        })
        .collect();
    if need.is_empty() && u.inputs.iter().all(|i| i.schema().fields().len() == width) {
        return Ok((LogicalPlan::Union(u), Companions::new()));
    }
    let names: Vec<String> = need.iter().map(|_| name()).collect();
    let inputs = u
        .inputs
        .iter()
        .zip(&scales)
        .map(|(input, v)| {
            let mut exprs = output_columns(input.schema());
            exprs.truncate(width);
            for (&k, name) in need.iter().zip(&names) {
                exprs.push(cast(v[k].expr(), DataType::Int32).alias(name));
            }
            Ok(Arc::new(LogicalPlan::Projection(Projection::try_new(
                exprs,
                input.clone(),
            )?)))
        })
        .collect::<Result<Vec<_>>>()?;
    let node = Union::try_new_with_loose_types(inputs)?;
    let mut comps = Companions::new();
    for (j, &k) in need.iter().enumerate() {
        let (q, f) = node.schema.qualified_field(k);
        let (cq, cf) = node.schema.qualified_field(width + j);
        comps.insert(
            Column::new(q.cloned(), f.name()),
            Expr::Column(Column::new(cq.cloned(), cf.name())),
        );
    }
    Ok((LogicalPlan::Union(node), comps))
}
