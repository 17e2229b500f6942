//! Float arithmetic as PostgreSQL's `float4`/`float8` operators do it
//! (part of the `semantics` analyzer rule):
//!
//! * `+ - * /` of finite values whose answer is infinite is 22003 ("value
//!   out of range: overflow"), a product or quotient of nonzero values
//!   that is zero is 22003 ("underflow"), and a division by zero is 22012
//!   (DataFusion answers inf, 0 and inf);
//! * `real` with an integer or numeric operand is computed in double
//!   precision, as PostgreSQL resolves the operator (`1.5::real * 2` is
//!   double precision; DataFusion computed a `real`).

use std::sync::Arc;

use common::Error;
use datafusion::arrow::array::{ArrayRef, AsArray, PrimitiveArray};
use datafusion::arrow::datatypes::{ArrowPrimitiveType, DataType, Float32Type, Float64Type};
use datafusion::common::DFSchema;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    create_udf, Cast, ColumnarValue, Expr, ExprSchemable, Operator, ScalarUDF, Volatility,
};

fn range(what: &str) -> DataFusionError {
    DataFusionError::External(Box::new(Error::NumericOutOfRange {
        message: format!("value out of range: {what}"),
    }))
}

/// PostgreSQL's check of `a op b = r` (`float.h`: `float8_pl` ...).
fn check(op: Operator, a: f64, b: f64, r: f64) -> Result<()> {
    match op {
        Operator::Divide if b == 0.0 && !a.is_nan() => {
            Err(DataFusionError::External(Box::new(Error::DivisionByZero)))
        }
        Operator::Divide if r.is_infinite() && !a.is_infinite() => Err(range("overflow")),
        Operator::Divide if r == 0.0 && a != 0.0 && !b.is_infinite() => Err(range("underflow")),
        Operator::Divide => Ok(()),
        _ if r.is_infinite() && !a.is_infinite() && !b.is_infinite() => Err(range("overflow")),
        Operator::Multiply if r == 0.0 && a != 0.0 && b != 0.0 => Err(range("underflow")),
        _ => Ok(()),
    }
}

fn apply(op: Operator, a: f64, b: f64) -> f64 {
    match op {
        Operator::Plus => a + b,
        Operator::Minus => a - b,
        Operator::Multiply => a * b,
        _ => a / b,
    }
}

fn op_name(op: Operator) -> &'static str {
    match op {
        Operator::Plus => "add",
        Operator::Minus => "sub",
        Operator::Multiply => "mul",
        _ => "div",
    }
}

/// `f` over the rows where neither operand is NULL.
fn each<T: ArrowPrimitiveType>(
    a: &ArrayRef,
    b: &ArrayRef,
    f: impl Fn(T::Native, T::Native) -> Result<T::Native>,
) -> Result<ArrayRef> {
    let out = a
        .as_primitive::<T>()
        .iter()
        .zip(b.as_primitive::<T>().iter())
        .map(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => f(x, y).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(out.into_iter().collect::<PrimitiveArray<T>>()))
}

/// The checked operation on two columns of one float type. A `real`
/// operation is computed in double precision and rounded once to `real`:
/// for `+ - * /` that is the correctly rounded `real` answer.
fn checked_udf(op: Operator, t: &DataType) -> ScalarUDF {
    let wide = *t == DataType::Float64;
    let f = Arc::new(move |args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let (a, b) = (&arrays[0], &arrays[1]);
        let out = if wide {
            each::<Float64Type>(a, b, |x, y| {
                let r = apply(op, x, y);
                check(op, x, y, r).map(|_| r)
            })?
        } else {
            each::<Float32Type>(a, b, |x, y| {
                let (x, y) = (x as f64, y as f64);
                let r = apply(op, x, y) as f32;
                check(op, x, y, r as f64).map(|_| r)
            })?
        };
        Ok(ColumnarValue::Array(out))
    });
    create_udf(
        &format!("pg_float_{}_{}", op_name(op), if wide { 8 } else { 4 }),
        vec![t.clone(), t.clone()],
        t.clone(),
        Volatility::Immutable,
        f,
    )
}

#[allow(clippy::type_complexity)]
static CHECKED: std::sync::LazyLock<Vec<((Operator, bool), Arc<ScalarUDF>)>> =
    std::sync::LazyLock::new(|| {
        let mut v = vec![];
        for op in [
            Operator::Plus,
            Operator::Minus,
            Operator::Multiply,
            Operator::Divide,
        ] {
            for t in [DataType::Float32, DataType::Float64] {
                v.push(((op, t == DataType::Float64), Arc::new(checked_udf(op, &t))));
            }
        }
        v
    });

fn checked(op: Operator, wide: bool) -> Option<Arc<ScalarUDF>> {
    CHECKED
        .iter()
        .find(|((o, w), _)| *o == op && *w == wide)
        .map(|(_, u)| u.clone())
}

/// `x`, a `real` operand that type coercion made of an integer constant
/// or column (`CAST(2 AS Float32)`): PostgreSQL computes `real` with an
/// integer in double precision. A client's own cast of an integer
/// constant to `real` is spelled from text (`spellings`), and a cast of
/// any other expression (`CAST(length(s) AS real)`) is taken for the
/// client's, whose product stays `real`.
fn widened_from_exact(x: &Expr, schema: &DFSchema) -> bool {
    match x {
        Expr::Cast(Cast { expr, field }) if *field.data_type() == DataType::Float32 => {
            matches!(expr.as_ref(), Expr::Column(_) | Expr::Literal(..))
                && matches!(expr.get_type(schema), Ok(t) if t.is_integer())
        }
        _ => false,
    }
}

/// A NULL constant (under casts): a strict operator of it is NULL, and
/// PostgreSQL folds it so before evaluating the other operand.
fn null_constant(x: &Expr) -> bool {
    match x {
        Expr::Cast(Cast { expr, .. }) => null_constant(expr),
        Expr::Literal(v, _) => v.is_null(),
        _ => false,
    }
}

fn unwrap_cast(x: &Expr) -> Expr {
    match x {
        Expr::Cast(Cast { expr, .. }) => (**expr).clone(),
        other => other.clone(),
    }
}

/// The PostgreSQL version of float `left op right`, if it is one.
pub(crate) fn arithmetic(
    left: &Expr,
    op: Operator,
    right: &Expr,
    schema: &DFSchema,
) -> Option<Expr> {
    if !matches!(
        op,
        Operator::Plus | Operator::Minus | Operator::Multiply | Operator::Divide
    ) {
        return None;
    }
    let (lt, rt) = (left.get_type(schema).ok()?, right.get_type(schema).ok()?);
    if lt != rt || !matches!(lt, DataType::Float32 | DataType::Float64) {
        return None;
    }
    if null_constant(left) || null_constant(right) {
        return datafusion::common::ScalarValue::try_from(&lt)
            .ok()
            .map(|v| Expr::Literal(v, None));
    }
    // Exactly one side made of an integer: `2::real * 3::real` stays real.
    if lt == DataType::Float32
        && (widened_from_exact(left, schema) != widened_from_exact(right, schema))
    {
        let wide = |x: &Expr| {
            let inner = if widened_from_exact(x, schema) {
                unwrap_cast(x)
            } else {
                x.clone()
            };
            Expr::Cast(Cast::new(Box::new(inner), DataType::Float64))
        };
        return arithmetic(&wide(left), op, &wide(right), schema);
    }
    let udf = checked(op, lt == DataType::Float64)?;
    Some(Expr::ScalarFunction(ScalarFunction::new_udf(
        udf,
        vec![left.clone(), right.clone()],
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_are_postgres() {
        let code = |r: Result<()>| match r {
            Err(DataFusionError::External(e)) => e
                .downcast_ref::<Error>()
                .map(|e| e.sqlstate().code().to_string()),
            _ => None,
        };
        assert_eq!(
            code(check(Operator::Multiply, 1e308, 10.0, f64::INFINITY)),
            Some("22003".into())
        );
        assert_eq!(
            code(check(Operator::Multiply, 1e-300, 1e-300, 0.0)),
            Some("22003".into())
        );
        assert_eq!(
            code(check(Operator::Divide, 1.0, 0.0, f64::INFINITY)),
            Some("22012".into())
        );
        assert!(check(Operator::Divide, f64::NAN, 0.0, f64::NAN).is_ok());
        assert!(check(Operator::Plus, f64::INFINITY, 1.0, f64::INFINITY).is_ok());
        assert!(check(Operator::Divide, 1.0, f64::INFINITY, 0.0).is_ok());
        assert!(check(Operator::Multiply, 0.0, 5.0, 0.0).is_ok());
    }
}
