//! The scale each input of a UNION prints a column with.

use datafusion::common::Column;
use datafusion::error::Result;
use datafusion::logical_expr::{lit, Expr, LogicalPlan};

use super::exprs::{decimal_scale, literal_scale, unfolded, Companions};

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
