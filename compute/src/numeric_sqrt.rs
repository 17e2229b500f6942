//! PostgreSQL's `sqrt` of a numeric: numeric, not float8, at a scale that
//! depends on the argument's magnitude (`numeric_sqrt`: at least 16
//! significant digits, at least the argument's display scale), rounded
//! half away from zero at that scale (`sqrt_var` computes the root one
//! digit further, truncated, then rounds: the same as rounding the exact
//! root, [`rounded_root`], which numeric stddev shares). So `sqrt(2.0)` is `1.414213562373095` and `sqrt(16.00)`
//! `4.000000000000000`.
//!
//! * `sqrt` itself ([`PgSqrt`], over the domain-checked float `sqrt`) is
//!   typed numeric for a numeric argument, stored as quotients are
//!   (`Decimal128(38, 20)`, [`crate::numeric::STORED_SCALE`]);
//! * `dscale` rewrites it into `pg_numeric_root(x, dscale_x)` and gives it
//!   `pg_numeric_root_scale(...)` as its companion, as it does division.
//!
//! A root with more than 20 places that are not all zeros (the root of a
//! number below 10^-8) is refused (0A000), as a quotient is.

use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{Array, AsArray, Decimal128Builder, Int32Builder};
use datafusion::arrow::datatypes::{i256, DataType, Decimal128Type, Int32Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::numeric::{first_digit, unsupported, MIN_SIG_DIGITS, STORED_SCALE};

/// PostgreSQL's result scale of `sqrt(v)` (`v` at type scale `t`, display
/// scale `dscale`).
pub fn sqrt_scale(v: i128, t: i8, dscale: i32) -> i32 {
    let (weight, _) = first_digit(v, t);
    let sweight = (weight + 1) * 4 / 2 - 1;
    (MIN_SIG_DIGITS - sweight).max(dscale).clamp(0, 1000)
}

fn negative() -> DataFusionError {
    DataFusionError::External(Box::new(common::Error::Sql {
        state: common::SqlState("2201F"),
        message: "cannot take square root of a negative number".into(),
    }))
}

/// The root of `v` (type scale `t`) rounded half away from zero at
/// `rscale`, stored at [`STORED_SCALE`].
pub fn sqrt_stored(v: i128, t: i8, rscale: i32) -> Result<i128> {
    if v < 0 {
        return Err(negative());
    }
    let too_wide = || {
        unsupported(format!(
            "a numeric square root of {rscale} decimal places (at most {STORED_SCALE}) \
             or of more than 18 integer digits"
        ))
    };
    let ten = |n: i32| {
        i256::from_i128(10)
            .checked_pow(n.unsigned_abs())
            .ok_or_else(too_wide)
    };
    // root(v / 10^t) * 10^rscale = root(v * 10^(2 rscale - t)), exactly:
    // past the argument's display scale its digits are zeros, and
    // rscale is at least that scale.
    let e = 2 * rscale - t as i32;
    let m = if e >= 0 {
        i256::from_i128(v)
            .checked_mul(ten(e)?)
            .ok_or_else(too_wide)?
    } else {
        i256::from_i128(v).wrapping_div(ten(-e)?)
    };
    // rounded_root's range (its root and 4m within i256).
    if m >= ten(74)? {
        return Err(too_wide());
    }
    let root = rounded_root(m);
    let gap = STORED_SCALE as i32 - rscale;
    let stored = if gap >= 0 {
        root.checked_mul(ten(gap)?).ok_or_else(too_wide)?
    } else {
        let m = ten(-gap)?;
        if root.wrapping_rem(m) != i256::ZERO {
            return Err(too_wide());
        }
        root.wrapping_div(m)
    };
    match stored.to_i128() {
        Some(s) if s.unsigned_abs() < 10u128.pow(38) => Ok(s),
        _ => Err(too_wide()),
    }
}

/// round(sqrt(m)) for m >= 0, exactly: Newton's integer square root from
/// above (a float's estimate holds 16 digits, the root up to 29), then
/// up when 4m >= (2r + 1)^2 (never equal: the left side is even).
pub(crate) fn rounded_root(m: i256) -> i256 {
    if m <= i256::ZERO {
        return i256::ZERO;
    }
    let two = i256::from_i128(2);
    // Above the root: a float's estimate with margin.
    let estimate = m.to_string().parse::<f64>().unwrap_or(f64::MAX).sqrt();
    let mut r = i256::from_i128((estimate * (1.0 + 1e-9)).ceil() as i128)
        .wrapping_add(two)
        .max(i256::ONE);
    loop {
        let next = r.wrapping_add(m.wrapping_div(r)).wrapping_div(two);
        if next >= r {
            break;
        }
        r = next;
    }
    let above = r.wrapping_mul(two).wrapping_add(i256::ONE);
    if m.wrapping_mul(i256::from_i128(4)) >= above.wrapping_mul(above) {
        r.wrapping_add(i256::ONE)
    } else {
        r
    }
}

/// Runs `f(v, t, rscale)` over the rows of a numeric argument and its
/// display scales (`None`: the type's).
fn each_root(
    x: &ColumnarValue,
    dscale: Option<&ColumnarValue>,
    n: usize,
    mut f: impl FnMut(Option<(i128, i8, i32)>) -> Result<()>,
) -> Result<()> {
    let x = x.to_array(n)?;
    let DataType::Decimal128(_, t) = *x.data_type() else {
        return Err(DataFusionError::Internal(format!(
            "numeric sqrt of {}",
            x.data_type()
        )));
    };
    let d = dscale.map(|d| d.to_array(n)).transpose()?;
    let d = d.as_ref().map(|d| d.as_primitive::<Int32Type>());
    let x = x.as_primitive::<Decimal128Type>();
    for i in 0..x.len() {
        if x.is_null(i) {
            f(None)?;
            continue;
        }
        let v = x.value(i);
        let ds = match d {
            Some(d) if d.is_valid(i) => d.value(i),
            _ => t as i32,
        };
        f(Some((v, t, sqrt_scale(v, t, ds))))?;
    }
    Ok(())
}

fn roots(x: &ColumnarValue, dscale: Option<&ColumnarValue>, n: usize) -> Result<ColumnarValue> {
    let mut out = Decimal128Builder::with_capacity(n);
    each_root(x, dscale, n, |r| {
        out.append_option(r.map(|(v, t, rs)| sqrt_stored(v, t, rs)).transpose()?);
        Ok(())
    })?;
    let a = out
        .finish()
        .with_precision_and_scale(38, STORED_SCALE)
        .map_err(|e| DataFusionError::ArrowError(Box::new(e), None))?;
    Ok(ColumnarValue::Array(Arc::new(a)))
}

/// `sqrt`: PostgreSQL's numeric root for a numeric argument, `inner` (the
/// domain-checked float root) for any other.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PgSqrt {
    inner: Arc<ScalarUDF>,
    signature: Signature,
}

impl PgSqrt {
    pub fn new(inner: Arc<ScalarUDF>) -> PgSqrt {
        PgSqrt {
            inner,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for PgSqrt {
    fn name(&self) -> &str {
        "sqrt"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [DataType::Decimal128(..)] => Ok(args.to_vec()),
            [_] => Ok(vec![DataType::Float64]),
            _ => Err(DataFusionError::Plan(
                "function sqrt takes one argument".into(),
            )),
        }
    }
    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(match args {
            [DataType::Decimal128(..)] => DataType::Decimal128(38, STORED_SCALE),
            _ => DataType::Float64,
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match args.args.as_slice() {
            [x] if matches!(x.data_type(), DataType::Decimal128(..)) => {
                roots(x, None, args.number_rows)
            }
            _ => self.inner.invoke_with_args(args),
        }
    }
}

/// `pg_numeric_root(x, dscale)` and `pg_numeric_root_scale(x, dscale)`:
/// `sqrt` of a numeric whose display scale is `dscale`, and the root's.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RootUdf {
    signature: Signature,
    scale: bool,
}

impl ScalarUDFImpl for RootUdf {
    fn name(&self) -> &str {
        if self.scale {
            "pg_numeric_root_scale"
        } else {
            "pg_numeric_root"
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(if self.scale {
            DataType::Int32
        } else {
            DataType::Decimal128(38, STORED_SCALE)
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let [x, d] = args.args.as_slice() else {
            return Err(DataFusionError::Internal(
                "pg_numeric_root takes two arguments".into(),
            ));
        };
        if !self.scale {
            return roots(x, Some(d), n);
        }
        let mut out = Int32Builder::with_capacity(n);
        each_root(x, Some(d), n, |r| {
            out.append_option(r.map(|(.., rs)| rs));
            Ok(())
        })?;
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

fn root_udf(scale: bool) -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(RootUdf {
        signature: Signature::any(2, Volatility::Immutable),
        scale,
    }))
}

pub fn root_value_udf() -> Arc<ScalarUDF> {
    static U: OnceLock<Arc<ScalarUDF>> = OnceLock::new();
    U.get_or_init(|| root_udf(false)).clone()
}

pub fn root_scale_udf() -> Arc<ScalarUDF> {
    static U: OnceLock<Arc<ScalarUDF>> = OnceLock::new();
    U.get_or_init(|| root_udf(true)).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: i128, t: i8) -> String {
        let rs = sqrt_scale(v, t, t as i32);
        crate::numeric::stored_text(sqrt_stored(v, t, rs).expect("root"), rs)
    }

    #[test]
    fn roots_print_as_postgresql() {
        // Each checked against PostgreSQL 15.
        assert_eq!(text(20, 1), "1.414213562373095");
        assert_eq!(text(1600, 2), "4.000000000000000");
        assert_eq!(text(0, 2), "0.000000000000000");
        assert_eq!(text(10000, 0), "100.0000000000000");
        assert_eq!(text(2, 0), "1.414213562373095");
        assert_eq!(text(12345678901234, 2), "351364.18288200634");
        assert_eq!(text(1, 4), "0.01000000000000000");
        assert_eq!(text(1, 10), "0.000010000000000000000");
        assert_eq!(text(1, 7), "0.0003162277660168379");
        assert_eq!(text(9999999999, 2), "9999.9999995000000");
        assert!(sqrt_stored(-1, 0, 15).is_err());
    }
}
