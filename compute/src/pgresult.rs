//! Result columns PostgreSQL prints in ways one Arrow type per column
//! cannot (part of the `semantics` rule): a char(n) column's width, read
//! from its field metadata; `greatest`/`least`/`nullif` choosing between
//! numerics of different scales (and the `coalesce`/CASE that `dscale`
//! cannot follow), and set operations mixing char(n) with other text,
//! which are refused (0A000).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::DFSchema;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};

use crate::dscale::decimal_scale;

/// The width of a char(n) column (`scan::BPCHAR_WIDTH`), if `e` is one.
pub fn bpchar_width(e: &Expr, schema: &DFSchema) -> Option<i64> {
    let Expr::Column(c) = e else {
        return None;
    };
    let f = datafusion::common::ExprSchema::field_from_column(schema, c).ok()?;
    f.metadata()
        .get(shard_router::sql::BPCHAR_WIDTH)?
        .parse()
        .ok()
}

/// A result column PostgreSQL prints at a scale per value that DataFusion
/// gives one scale: `greatest`, `least` or `nullif` over numerics of
/// different scales (`greatest(balance, 1000)` is `1000`, not `1000.00`,
/// where the other value wins), or a `coalesce` or CASE one of whose
/// values is a column or expression under a cast that changes its scale
/// (type coercion's or the client's: the plan cannot tell them apart).
/// Refused. A `coalesce` or CASE over number literals and values of their
/// own types prints each value at its scale (`crate::dscale`).
pub fn check_mixed_scales(e: &Expr, schema: &DFSchema) -> Result<()> {
    let e = match e {
        Expr::Alias(a) => a.expr.as_ref(),
        other => other,
    };
    let args: Vec<&Expr> = match e {
        Expr::ScalarFunction(f)
            if matches!(f.func.name(), "greatest" | "least" | "coalesce" | "nullif") =>
        {
            f.args.iter().collect()
        }
        Expr::Case(c) => c
            .when_then_expr
            .iter()
            .map(|(_, t)| t.as_ref())
            .chain(c.else_expr.as_deref())
            .collect(),
        _ => return Ok(()),
    };
    let Ok(t @ DataType::Decimal128(_, s)) = e.get_type(schema) else {
        return Ok(());
    };
    if matches!(e, Expr::Case(_))
        || matches!(e, Expr::ScalarFunction(f) if f.func.name() == "coalesce")
    {
        return check_choice(&args, &t, schema);
    }
    let scale_of = |a: &Expr| -> Option<i8> {
        let inner = match a {
            Expr::Cast(c) => c.expr.as_ref(),
            other => other,
        };
        match inner.get_type(schema).ok()? {
            DataType::Decimal128(_, s) => Some(s),
            t if t.is_integer() => Some(0),
            DataType::Null => None,
            _ => Some(s),
        }
    };
    if args.iter().filter_map(|a| scale_of(a)).any(|x| x != s) {
        return Err(DataFusionError::External(Box::new(common::Error::unsupported(
            "a result column choosing between numerics of different scales (greatest, least, nullif, or coalesce and CASE over a cast that changes a scale)",
        ))));
    }
    Ok(())
}

/// The values of a decimal `coalesce` or CASE (of type `t`): refused when
/// one was retyped after type coercion gave every value `t` (an
/// unconstrained numeric's text cast takes its text's scale; DataFusion
/// cannot choose between values of two decimal types), or is a value
/// other than a constant under a cast that changes its scale.
fn check_choice(args: &[&Expr], t: &DataType, schema: &DFSchema) -> Result<()> {
    // A NULL (`NULL::numeric`) has no value to retype.
    let null = |a: &Expr| {
        let mut e = a;
        while let Expr::Cast(c) = e {
            e = c.expr.as_ref();
        }
        matches!(e, Expr::Literal(v, _) if v.is_null())
    };
    let retyped = |a: &Expr| {
        !null(a)
            && a.get_type(schema)
                .is_ok_and(|at| at != *t && matches!(at, DataType::Decimal128(..)))
    };
    if args.iter().any(|a| retyped(a)) {
        return Err(DataFusionError::External(Box::new(
            common::Error::unsupported(
                "a coalesce or CASE choosing between numerics of different types",
            ),
        )));
    }
    let changes_scale = |a: &Expr| match a {
        Expr::Cast(c) if !matches!(c.expr.as_ref(), Expr::Literal(..)) => {
            let scale = |x: &Expr| x.get_type(schema).ok().map(|t| decimal_scale(&t));
            matches!((scale(&c.expr), scale(a)), (Some(from), Some(to)) if from != to)
        }
        _ => false,
    };
    if args.iter().any(|a| changes_scale(a)) {
        return Err(DataFusionError::External(Box::new(common::Error::unsupported(
            "a result column choosing between numerics of different scales (greatest, least, nullif, or coalesce and CASE over a cast that changes a scale)",
        ))));
    }
    Ok(())
}

/// A set operation whose column is char(n) in one branch and other text
/// in another: PostgreSQL's result is text (the blanks gone), DataFusion's
/// keeps the width of one branch for all. Refused.
pub fn check_union_widths(u: &datafusion::logical_expr::Union) -> Result<()> {
    // Type coercion projects every branch onto the union's fields,
    // metadata included: the width is read below those projections.
    let width = |p: &LogicalPlan, i: usize| {
        if let LogicalPlan::Projection(proj) = p {
            let mut e = proj.expr.get(i)?;
            while let Expr::Alias(a) = e {
                e = a.expr.as_ref();
            }
            return bpchar_width(e, proj.input.schema()).map(|w| w.to_string());
        }
        p.schema()
            .fields()
            .get(i)
            .and_then(|f| f.metadata().get(shard_router::sql::BPCHAR_WIDTH).cloned())
    };
    for (i, f) in u.schema.fields().iter().enumerate() {
        let own = f.metadata().get(shard_router::sql::BPCHAR_WIDTH).cloned();
        let mut widths = u.inputs.iter().map(|p| width(p, i));
        if widths.any(|w| w != own) {
            return Err(DataFusionError::External(Box::new(
                common::Error::unsupported("a set operation over char(n) and other text"),
            )));
        }
    }
    Ok(())
}
