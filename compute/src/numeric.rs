//! PostgreSQL's numeric division, which DataFusion's fixed-scale decimals
//! cannot express alone: the scale of a quotient depends on the operands'
//! values (PostgreSQL's `select_div_scale`: at least 16 significant
//! digits, and at least the scale of either operand), and the quotient is
//! rounded half away from zero at that scale. So `1.0 / 3` is
//! `0.33333333333333333333` and `2548.81 / 3` is `849.6033333333333333`.
//!
//! A quotient is carried as `Decimal128(38, 20)` ([`STORED_SCALE`]),
//! already rounded at its own scale, so comparisons and further arithmetic
//! see PostgreSQL's value; its scale is computed beside it by
//! [`div_scale_udf`] (see `dscale`) and the wire prints each value with it.
//! A quotient with more than 20 places is kept when the places beyond the
//! 20th are zeros (`0 / 123456.78` has 24); otherwise, and with more than
//! 18 integer digits, it is refused (0A000) rather than rounded
//! differently.
//!
//! `avg` of integers and numerics is PostgreSQL's too: numeric, computed
//! as `sum / count` with the same rule. [`PgAvg`] replaces DataFusion's
//! `avg` so the planner types it as PostgreSQL does; `dscale` rewrites
//! every such call into `sum` and `count` (which the shards compute) and
//! this division.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Builder, Int32Builder};
use datafusion::arrow::datatypes::{i256, DataType, Decimal128Type, FieldRef, Int32Type};
use datafusion::common::types::{logical_float64, NativeType};
use datafusion::error::{DataFusionError, Result};
use datafusion::functions_aggregate::average::Avg;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    cast, Accumulator, AggregateUDFImpl, Coercion, ColumnarValue, Expr, GroupsAccumulator,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature, TypeSignatureClass,
    Volatility,
};

/// The scale quotients are stored at (values are rounded at their own,
/// smaller or equal, scale first).
pub const STORED_SCALE: i8 = 20;
/// PostgreSQL's `NUMERIC_MIN_SIG_DIGITS`.
pub(crate) const MIN_SIG_DIGITS: i32 = 16;

/// The weight and value of the first nonzero base-10000 digit of `v`
/// (an integer with `scale` implied places), as PostgreSQL's NumericVar
/// holds it: weight 0 is the group left of the decimal point. Zero is
/// (0, 0), as in `select_div_scale`.
pub(crate) fn first_digit(v: i128, scale: i8) -> (i32, u32) {
    let m = v.unsigned_abs();
    if m == 0 {
        return (0, 0);
    }
    let digits = m.to_string();
    let len = digits.len() as i32;
    // Position of the leading digit: 0 for units, -1 for tenths.
    let lead = len - 1 - scale as i32;
    let weight = lead.div_euclid(4);
    let mut value = 0u32;
    for p in (4 * weight..4 * weight + 4).rev() {
        let i = len - 1 - scale as i32 - p;
        let d = if (0..len).contains(&i) {
            (digits.as_bytes()[i as usize] - b'0') as u32
        } else {
            0
        };
        value = value * 10 + d;
    }
    (weight, value)
}

/// PostgreSQL's result scale of `a / b` (values with type scales `ta`,
/// `tb`; display scales `da`, `db`).
pub fn div_scale(a: i128, ta: i8, da: i32, b: i128, tb: i8, db: i32) -> i32 {
    let (w1, f1) = first_digit(a, ta);
    let (w2, f2) = first_digit(b, tb);
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    (MIN_SIG_DIGITS - qweight * 4)
        .max(da)
        .max(db)
        .clamp(0, 1000)
}

/// 0A000 naming `what`.
pub(crate) fn unsupported(what: String) -> DataFusionError {
    DataFusionError::External(Box::new(common::Error::Unsupported { feature: what }))
}

/// `a / b` rounded half away from zero at `rscale`, as stored (scale
/// [`STORED_SCALE`]). A quotient with more places is stored when the
/// places beyond [`STORED_SCALE`] are zeros (`0 / 123456.78` has 24);
/// otherwise, and beyond 18 integer digits, it is refused.
pub fn div_stored(a: i128, ta: i8, b: i128, tb: i8, rscale: i32) -> Result<i128> {
    if b == 0 {
        return Err(DataFusionError::External(Box::new(
            common::Error::DivisionByZero,
        )));
    }
    let too_wide = || {
        unsupported(format!(
            "a numeric quotient of {rscale} decimal places (at most {STORED_SCALE}) \
             or of more than 18 integer digits"
        ))
    };
    let ten = |n: i32| {
        i256::from_i128(10)
            .checked_pow(n as u32)
            .ok_or_else(too_wide)
    };
    // a / 10^ta / (b / 10^tb) * 10^rscale = a * 10^(rscale - ta + tb) / b
    let e = rscale - ta as i32 + tb as i32;
    let (n, d) = if e >= 0 {
        let n = i256::from_i128(a)
            .checked_mul(ten(e)?)
            .ok_or_else(too_wide)?;
        (n, i256::from_i128(b))
    } else {
        let d = i256::from_i128(b)
            .checked_mul(ten(-e)?)
            .ok_or_else(too_wide)?;
        (i256::from_i128(a), d)
    };
    let (q, r) = (n.wrapping_div(d), n.wrapping_rem(d));
    let q = if r.wrapping_mul(i256::from_i128(2)).wrapping_abs() >= d.wrapping_abs() {
        let away = if (n < i256::ZERO) != (d < i256::ZERO) {
            i256::MINUS_ONE
        } else {
            i256::ONE
        };
        q.wrapping_add(away)
    } else {
        q
    };
    let gap = STORED_SCALE as i32 - rscale;
    let stored = if gap >= 0 {
        q.checked_mul(ten(gap)?).ok_or_else(too_wide)?
    } else {
        let m = ten(-gap)?;
        if q.wrapping_rem(m) != i256::ZERO {
            return Err(too_wide());
        }
        q.wrapping_div(m)
    };
    match stored.to_i128() {
        Some(v) if stored.wrapping_abs() < ten(38)? => Ok(v),
        _ => Err(too_wide()),
    }
}

/// Decimal arguments of the division UDFs: a, b (any Decimal128), and
/// the display scales of a and b (Int32).
fn div_args(args: &[ColumnarValue]) -> Result<(Vec<ArrayRef>, i8, i8)> {
    let arrays = ColumnarValue::values_to_arrays(args)?;
    let scale = |a: &ArrayRef| match a.data_type() {
        DataType::Decimal128(_, s) => Ok(*s),
        t => Err(DataFusionError::Internal(format!(
            "numeric division of {t}"
        ))),
    };
    let (ta, tb) = (scale(&arrays[0])?, scale(&arrays[1])?);
    if arrays[2].data_type() != &DataType::Int32 || arrays[3].data_type() != &DataType::Int32 {
        return Err(DataFusionError::Internal(
            "numeric division scales must be int4".into(),
        ));
    }
    Ok((arrays, ta, tb))
}

/// Runs `f(a, b, rscale)` over the rows where neither operand is NULL.
fn each_quotient(
    args: &[ColumnarValue],
    mut f: impl FnMut(Option<(i128, i8, i128, i8, i32)>) -> Result<()>,
) -> Result<()> {
    let (arrays, ta, tb) = div_args(args)?;
    let a = arrays[0].as_primitive::<Decimal128Type>();
    let b = arrays[1].as_primitive::<Decimal128Type>();
    let da = arrays[2].as_primitive::<Int32Type>();
    let db = arrays[3].as_primitive::<Int32Type>();
    for i in 0..a.len() {
        if a.is_null(i) || b.is_null(i) {
            f(None)?;
            continue;
        }
        let (va, vb) = (a.value(i), b.value(i));
        let rs = div_scale(
            va,
            ta,
            if da.is_null(i) {
                ta as i32
            } else {
                da.value(i)
            },
            vb,
            tb,
            if db.is_null(i) {
                tb as i32
            } else {
                db.value(i)
            },
        );
        f(Some((va, ta, vb, tb, rs)))?;
    }
    Ok(())
}

/// `pg_numeric_div(a, b, scale_a, scale_b)`, PostgreSQL's quotient, and
/// `pg_numeric_div_scale(...)` (same arguments), its display scale: one
/// implementation, two outputs.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct QuotientUdf {
    signature: Signature,
    /// The display scale rather than the value.
    scale: bool,
}

impl ScalarUDFImpl for QuotientUdf {
    fn name(&self) -> &str {
        if self.scale {
            "pg_numeric_div_scale"
        } else {
            "pg_numeric_div"
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
        if self.scale {
            let mut out = Int32Builder::with_capacity(n);
            each_quotient(&args.args, |q| {
                out.append_option(q.map(|(.., rs)| rs));
                Ok(())
            })?;
            return Ok(ColumnarValue::Array(Arc::new(out.finish())));
        }
        let mut out = Decimal128Builder::with_capacity(n);
        each_quotient(&args.args, |q| {
            out.append_option(
                q.map(|(a, ta, b, tb, rs)| div_stored(a, ta, b, tb, rs))
                    .transpose()?,
            );
            Ok(())
        })?;
        let a = out
            .finish()
            .with_precision_and_scale(38, STORED_SCALE)
            .map_err(|e| DataFusionError::ArrowError(Box::new(e), None))?;
        Ok(ColumnarValue::Array(Arc::new(a)))
    }
}

fn quotient_udf(scale: bool) -> ScalarUDF {
    ScalarUDF::new_from_impl(QuotientUdf {
        signature: Signature::any(4, Volatility::Immutable),
        scale,
    })
}

pub fn div_udf() -> Arc<ScalarUDF> {
    static U: std::sync::OnceLock<Arc<ScalarUDF>> = std::sync::OnceLock::new();
    U.get_or_init(|| Arc::new(quotient_udf(false))).clone()
}

pub fn div_scale_udf() -> Arc<ScalarUDF> {
    static U: std::sync::OnceLock<Arc<ScalarUDF>> = std::sync::OnceLock::new();
    U.get_or_init(|| Arc::new(quotient_udf(true))).clone()
}

/// The text of a stored quotient at its display scale.
pub fn stored_text(v: i128, dscale: i32) -> String {
    scaled_text(v, STORED_SCALE, dscale)
}

/// A decimal stored at `stored` places printed at `dscale`: the places
/// beyond the stored ones are zeros (`div_stored`), and those cut off are
/// zeros or were rounded already (a value chosen by CASE or COALESCE, or a
/// sum of them, is stored at the widest scale of its choices).
pub fn scaled_text(v: i128, stored: i8, dscale: i32) -> String {
    let stored = stored.max(0) as i32;
    if dscale > stored {
        let zeros = "0".repeat((dscale - stored) as usize);
        let dot = if stored == 0 { "." } else { "" };
        return crate::pgtypes::decimal_text(v, stored as u32) + dot + &zeros;
    }
    let dscale = dscale.max(0) as u32;
    let v = v / 10i128.pow(stored as u32 - dscale);
    crate::pgtypes::decimal_text(v, dscale)
}

/// PostgreSQL's `avg`: numeric for integer and numeric input, double for
/// floats, interval for intervals. The numeric forms are always rewritten
/// into `sum / count` (see the module documentation); the others run
/// DataFusion's accumulators.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PgAvg {
    signature: Signature,
}

impl Default for PgAvg {
    fn default() -> Self {
        PgAvg {
            signature: Signature::one_of(
                vec![
                    TypeSignature::Coercible(vec![Coercion::new_exact(
                        TypeSignatureClass::Decimal,
                    )]),
                    TypeSignature::Coercible(vec![Coercion::new_exact(
                        TypeSignatureClass::Integer,
                    )]),
                    TypeSignature::Coercible(vec![Coercion::new_exact(
                        TypeSignatureClass::Duration,
                    )]),
                    TypeSignature::Coercible(vec![Coercion::new_implicit(
                        TypeSignatureClass::Native(logical_float64()),
                        vec![TypeSignatureClass::Float],
                        NativeType::Float64,
                    )]),
                ],
                Volatility::Immutable,
            ),
        }
    }
}

/// Whether `avg` of `t` is PostgreSQL's numeric average.
pub fn numeric_avg(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Decimal128(..))
}

fn rewritten() -> DataFusionError {
    DataFusionError::Internal("numeric avg is rewritten into sum and count before it runs".into())
}

impl AggregateUDFImpl for PgAvg {
    fn name(&self) -> &str {
        "avg"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types.first() {
            Some(t) if numeric_avg(t) => Ok(DataType::Decimal128(38, STORED_SCALE)),
            Some(DataType::Decimal256(..) | DataType::Decimal32(..) | DataType::Decimal64(..)) => {
                Err(unsupported("avg of this numeric width".into()))
            }
            _ => Avg::new().return_type(arg_types),
        }
    }
    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if numeric_avg(args.expr_fields[0].data_type()) {
            return Err(rewritten());
        }
        Avg::new().accumulator(args)
    }
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        if numeric_avg(args.input_fields[0].data_type()) {
            return Err(rewritten());
        }
        Avg::new().state_fields(args)
    }
    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        !numeric_avg(args.expr_fields[0].data_type())
            && Avg::new().groups_accumulator_supported(args)
    }
    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Avg::new().create_groups_accumulator(args)
    }
}

/// `round(x, s)` as PostgreSQL types it: an integer `x` is rounded as
/// numeric, and the answer's scale is `s` (at least 0) whatever `x`'s
/// was: `round(7, 2)` is `7.00`, `round(7.0::numeric, 2)` `7.00`. The
/// argument is widened to that scale first (exact: zeros appended), so the
/// rewrite applies once. `None` where nothing changes; 0A000 past the
/// 38 digits a stored numeric has here.
pub fn round_scaled_arg(x: &Expr, s: i64, t: &DataType) -> Result<Option<Expr>> {
    let (p, q) = match t {
        DataType::Int8 | DataType::UInt8 => (3, 0),
        DataType::Int16 | DataType::UInt16 => (5, 0),
        DataType::Int32 | DataType::UInt32 => (10, 0),
        DataType::Int64 | DataType::UInt64 => (20, 0),
        DataType::Decimal128(p, q) if i64::from(*q) < s => (i64::from(*p), i64::from(*q)),
        _ => return Ok(None),
    };
    let scale = s.max(0);
    let precision = p - q + scale;
    if precision > 38 || scale > 38 {
        return Err(unsupported(format!(
            "round to {s} decimal places of a numeric of {p} digits (at most 38 in all)"
        )));
    }
    Ok(Some(cast(
        x.clone(),
        DataType::Decimal128(precision as u8, scale as i8),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn div(a: i128, ta: i8, b: i128, tb: i8) -> String {
        let rs = div_scale(a, ta, ta as i32, b, tb, tb as i32);
        stored_text(div_stored(a, ta, b, tb, rs).unwrap(), rs)
    }

    #[test]
    fn quotients_have_postgres_scale_and_rounding() {
        // Each expected text is PostgreSQL 15's.
        assert_eq!(div(35, 1, 3, 0), "1.16666666666666666667");
        assert_eq!(div(70, 1, 6, 0), "1.1666666666666667");
        assert_eq!(div(10, 1, 3, 0), "0.33333333333333333333");
        assert_eq!(div(254881, 2, 3, 0), "849.6033333333333333");
        assert_eq!(div(-34867, 2, 3, 0), "-116.2233333333333333");
        assert_eq!(div(0, 0, 3, 0), "0.00000000000000000000");
        assert_eq!(div(110, 1, 2, 0), "5.5000000000000000");
        assert_eq!(div(-5, 0, 2, 0), "-2.5000000000000000");
        // PostgreSQL: 0.000033333333333333333333, 24 places: refused.
        let rs = div_scale(1, 0, 0, 30000, 0, 0);
        assert_eq!(rs, 24);
        assert!(div_stored(1, 0, 30000, 0, rs).is_err());
        // 24 places that are zeros beyond the 20th are stored.
        assert_eq!(div(0, 2, 12345678, 2), "0.000000000000000000000000");
        assert_eq!(div(1, 0, 40000, 0), "0.000025000000000000000000");
        assert!(div_stored(1, 0, 0, 0, 16).is_err());
    }
}
