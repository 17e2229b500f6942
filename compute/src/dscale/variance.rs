//! `var_pop`, `var_samp`, `stddev_pop` and `stddev_samp` of integers and
//! numerics as PostgreSQL computes them (`numeric_stddev_internal`):
//! exactly, from the count N, the sum Sx and the sum of squares Sxx
//! (which the shards compute, like any sum and count), as the quotient
//! `(N * Sxx - Sx * Sx) / (N * N)` (`N * (N - 1)` for a sample) rounded
//! at PostgreSQL's division scale, and its square root rounded at that
//! same scale. A numerator that is not positive is `0` (scale 0); a
//! sample of fewer than two rows, or no rows, is NULL. The answer does
//! not depend on the order rows arrive in, so it is PostgreSQL's to the
//! last digit. Floats keep DataFusion's algorithm (PostgreSQL's
//! Youngs-Cramer sums can differ in the last bit).

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, Decimal128Array};
use datafusion::arrow::datatypes::{i256, DataType, Decimal128Type, Int32Type};
use datafusion::error::Result;
use datafusion::functions_aggregate::expr_fn::sum;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    cast, lit, when, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};

use crate::numeric::{div_scale_udf, div_udf, unsupported, STORED_SCALE};
use crate::numeric_sqrt::rounded_root;

/// Which statistic a call computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Statistic {
    /// Divides by N - 1 (and is NULL below two rows).
    pub sample: bool,
    /// The square root of the variance.
    pub sqrt: bool,
}

/// The four aggregates (`crate::pgvariance` registers them; `variance`
/// and `stddev` are spelled as the sample forms before planning).
pub(crate) const STATISTICS: [(&str, Statistic); 4] = [
    (
        "var_pop",
        Statistic {
            sample: false,
            sqrt: false,
        },
    ),
    (
        "var_samp",
        Statistic {
            sample: true,
            sqrt: false,
        },
    ),
    (
        "stddev_pop",
        Statistic {
            sample: false,
            sqrt: true,
        },
    ),
    (
        "stddev_samp",
        Statistic {
            sample: true,
            sqrt: true,
        },
    ),
];

/// The statistic the aggregate `name` computes, if it is one.
pub(super) fn statistic(name: &str) -> Option<Statistic> {
    STATISTICS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, stat)| *stat)
}

/// `sum(x * x)`, exact: an integer is widened to numeric first.
pub(super) fn sum_of_squares(x: &Expr, t: &DataType) -> Expr {
    let x = if t.is_integer() {
        cast(x.clone(), DataType::Decimal128(38, 0))
    } else {
        x.clone()
    };
    sum(x.clone() * x)
}

/// The statistic's value and display scale over the columns `n` (count),
/// `sx` (sum) and `sxx` (sum of squares) of values of scale `scale`.
pub(super) fn finish(
    count: Expr,
    sx: Expr,
    sxx: Expr,
    scale: i8,
    s: Statistic,
) -> Result<(Expr, Expr)> {
    let dec = |x: Expr, scale: i8| cast(x, DataType::Decimal128(38, scale));
    let n = dec(count.clone(), 0);
    let square = (2 * scale as i32).min(38) as i8;
    let sx = dec(sx, scale);
    let num = dec(n.clone() * dec(sxx, square) - sx.clone() * sx, square);
    let den = if s.sample {
        dec(n.clone() * dec(count.clone() - lit(1i64), 0), 0)
    } else {
        dec(n.clone() * n.clone(), 0)
    };
    let args = vec![num.clone(), den, lit(square as i32), lit(0i32)];
    let quotient = Expr::ScalarFunction(ScalarFunction::new_udf(div_udf(), args.clone()));
    let rscale = Expr::ScalarFunction(ScalarFunction::new_udf(div_scale_udf(), args));
    let value = if s.sqrt {
        Expr::ScalarFunction(ScalarFunction::new_udf(
            sqrt_udf(),
            vec![quotient, rscale.clone()],
        ))
    } else {
        quotient
    };
    let too_few = if s.sample {
        count.lt_eq(lit(1i64))
    } else {
        count.eq(lit(0i64))
    };
    let not_positive = num.lt_eq(dec(lit(0i64), square));
    let stored = DataType::Decimal128(38, STORED_SCALE);
    let value = when(
        too_few.clone(),
        cast(lit(datafusion::common::ScalarValue::Null), stored.clone()),
    )
    .when(not_positive.clone(), cast(lit(0i64), stored))
    .otherwise(value)?;
    let scale = when(not_positive, lit(0i32)).otherwise(rscale)?;
    Ok((value, scale))
}

fn sqrt_udf() -> Arc<ScalarUDF> {
    static UDF: std::sync::LazyLock<Arc<ScalarUDF>> = std::sync::LazyLock::new(|| {
        Arc::new(ScalarUDF::new_from_impl(NumericSqrt {
            signature: Signature::new(
                TypeSignature::Exact(vec![
                    DataType::Decimal128(38, STORED_SCALE),
                    DataType::Int32,
                ]),
                Volatility::Immutable,
            ),
        }))
    });
    UDF.clone()
}

fn ten(n: u32) -> i256 {
    i256::from_i128(10).wrapping_pow(n)
}

/// The square root of `q` (stored at [`STORED_SCALE`], already rounded at
/// `rscale`), rounded at `rscale` (PostgreSQL's `sqrt_var`), stored.
fn sqrt_stored(q: i128, rscale: i32) -> Result<i128> {
    let stored = STORED_SCALE as i32;
    if !(0..=stored).contains(&rscale) || q < 0 {
        return Err(unsupported(format!(
            "the square root of a numeric variance at {rscale} decimal places"
        )));
    }
    // q at its own scale, then at twice it: its root is at `rscale`.
    let at_scale = i256::from_i128(q).wrapping_div(ten((stored - rscale) as u32));
    let m = at_scale.wrapping_mul(ten(rscale as u32));
    let r = rounded_root(m);
    r.wrapping_mul(ten((stored - rscale) as u32))
        .to_i128()
        .ok_or_else(|| unsupported("a numeric square root of more than 18 integer digits".into()))
}

/// `pg_numeric_sqrt(q, rscale)`: see [`sqrt_stored`].
#[derive(Debug, PartialEq, Eq, Hash)]
struct NumericSqrt {
    signature: Signature,
}

impl ScalarUDFImpl for NumericSqrt {
    fn name(&self) -> &str {
        "pg_numeric_sqrt"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Decimal128(38, STORED_SCALE))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let q = arrays[0].as_primitive::<Decimal128Type>();
        let s = arrays[1].as_primitive::<Int32Type>();
        let mut out = Vec::with_capacity(q.len());
        for i in 0..q.len() {
            out.push(if q.is_null(i) || s.is_null(i) {
                None
            } else {
                Some(sqrt_stored(q.value(i), s.value(i))?)
            });
        }
        let out: Decimal128Array = out.into_iter().collect();
        Ok(ColumnarValue::Array(Arc::new(
            out.with_precision_and_scale(38, STORED_SCALE)?,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(v: &str) -> i128 {
        let (i, f) = v.split_once('.').unwrap_or((v, ""));
        let f = format!("{f:0<20}");
        format!("{i}{f}").parse().unwrap()
    }

    #[test]
    fn square_roots_round_at_the_scale() {
        // stddev_samp of 1, 2, 4 in PostgreSQL: variance 2.3333333333333333
        // (16 places), root 1.5275252316519467.
        let q = stored("2.3333333333333333");
        assert_eq!(sqrt_stored(q, 16).unwrap(), stored("1.5275252316519467"));
        assert_eq!(sqrt_stored(stored("4"), 0).unwrap(), stored("2"));
        assert_eq!(sqrt_stored(stored("2"), 0).unwrap(), stored("1"));
        assert_eq!(sqrt_stored(stored("2.25"), 2).unwrap(), stored("1.5"));
        assert_eq!(sqrt_stored(0, 20).unwrap(), 0);
        // Past a float's 16 digits (exact roots from Python's isqrt).
        let q = stored("2.33333333333333333333");
        assert_eq!(sqrt_stored(q, 20).unwrap(), 152752523165194666886);
        assert_eq!(sqrt_stored(stored("2"), 20).unwrap(), 141421356237309504880);
        assert!(sqrt_stored(-1, 2).is_err());
    }
}
