//! PostgreSQL functions DataFusion does not have, as scalar UDFs that
//! compute PostgreSQL's answer: `div`, `width_bucket`, `scale`,
//! `quote_literal` and `format` (`%s`, `%I`, `%L`, `%%`); `upper` and
//! `lower` one character at a time; and DataFusion's `sqrt`, `ln`, `log`,
//! `asin`, `acos`, `atanh`, `acosh`, `chr` and `substr` wrapped with
//! PostgreSQL's domain errors. Errors carry PostgreSQL's SQLSTATEs (22012
//! division by zero, 2201G a bad width_bucket count or bounds, 22003
//! overflow or an argument out of range, 2201F/2201E/22023/22011 a value
//! outside a function's domain).

use crate::pgzone::AtTimeZone;
use std::sync::Arc;

use common::{Error, SqlState};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Builder, Int32Builder, StringBuilder,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Decimal128Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// Registers the functions in `ctx`.
pub fn register(ctx: &SessionContext) {
    use datafusion::functions::{math, string, unicode};
    for (inner, check) in [
        (math::sqrt(), Check::Sqrt),
        (math::asin(), Check::UnitRange),
        (math::acos(), Check::UnitRange),
        (math::atanh(), Check::UnitRange),
        (math::acosh(), Check::AtLeastOne),
        (math::ln(), Check::Log),
        (math::log10(), Check::Log),
        (math::log2(), Check::Log),
        (math::log(), Check::Log),
        (string::chr(), Check::Chr),
        (unicode::substr(), Check::SubstrLength),
        (unicode::lpad(), Check::Length),
        (unicode::rpad(), Check::Length),
        (string::repeat(), Check::Length),
    ] {
        let checked = ScalarUDF::new_from_impl(Checked { inner, check });
        if check == Check::Sqrt {
            // Numeric for a numeric argument.
            let root = crate::numeric_sqrt::PgSqrt::new(Arc::new(checked));
            ctx.register_udf(ScalarUDF::new_from_impl(root));
        } else {
            ctx.register_udf(checked);
        }
    }
    for upper in [true, false] {
        ctx.register_udf(ScalarUDF::new_from_impl(CaseMap {
            upper,
            signature: Signature::string(1, Volatility::Immutable),
        }));
    }
    crate::pgmath::register(ctx);
    ctx.register_udf(ScalarUDF::new_from_impl(AtTimeZone::default()));
    ctx.register_udf(ScalarUDF::new_from_impl(
        crate::pgextract::PgExtract::default(),
    ));
    ctx.register_udf(ScalarUDF::new_from_impl(
        crate::pgtypeof::PgTypeof::default(),
    ));
    ctx.register_udf(crate::pginterval::udf::INTERVAL_IN.as_ref().clone());
    for f in [
        Func::Div,
        Func::WidthBucket,
        Func::Scale,
        Func::QuoteLiteral,
        Func::Format,
    ] {
        ctx.register_udf(ScalarUDF::new_from_impl(PgFunc::new(f)));
    }
}

/// What a [`Checked`] function refuses, as PostgreSQL does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Check {
    /// A negative argument: 2201F.
    Sqrt,
    /// A zero or negative argument: 2201E.
    Log,
    /// `asin`, `acos`, `atanh`: an argument outside [-1, 1] (22003, "input
    /// is out of range"; DataFusion answers NaN). NaN stays NaN.
    UnitRange,
    /// `acosh`: an argument below 1 (22003).
    AtLeastOne,
    /// A code point that is not positive (22023), zero (54000) or past
    /// Unicode (54000).
    Chr,
    /// A negative length (third argument): 22011.
    SubstrLength,
    /// `lpad`, `rpad`, `repeat`: a length (second argument) past
    /// PostgreSQL's 1 GB limit is 54000; a negative one is 0, as in
    /// PostgreSQL (DataFusion's pad panicked on it).
    Length,
}

impl Check {
    fn value(self, v: f64) -> Option<Error> {
        let e = |state: &'static str, m: &str| {
            Some(Error::Sql {
                state: SqlState(state),
                message: m.to_string(),
            })
        };
        match self {
            Check::Sqrt if v < 0.0 => e("2201F", "cannot take square root of a negative number"),
            Check::Log if v == 0.0 => e("2201E", "cannot take logarithm of zero"),
            Check::Log if v < 0.0 => e("2201E", "cannot take logarithm of a negative number"),
            Check::UnitRange if !(-1.0..=1.0).contains(&v) && !v.is_nan() => {
                e("22003", "input is out of range")
            }
            Check::AtLeastOne if v < 1.0 => e("22003", "input is out of range"),
            Check::Chr if v < 0.0 => e("22023", "character number must be positive"),
            Check::Chr if v == 0.0 => e("54000", "null character not permitted"),
            Check::Chr if v > 1_114_111.0 => e(
                "54000",
                &format!("requested character too large for encoding: {v}"),
            ),
            Check::SubstrLength if v < 0.0 => e("22011", "negative substring length not allowed"),
            Check::Length if v > 1_073_741_823.0 => e("54000", "requested length too large"),
            _ => None,
        }
    }
}

/// A DataFusion function with PostgreSQL's domain errors where
/// DataFusion returns NaN, -Infinity or an untyped error.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Checked {
    inner: Arc<ScalarUDF>,
    check: Check,
}

impl ScalarUDFImpl for Checked {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn signature(&self) -> &Signature {
        self.inner.signature()
    }
    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(args)
    }
    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        self.inner.return_type(args)
    }
    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<datafusion::arrow::datatypes::FieldRef> {
        self.inner.return_field_from_args(args)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let checked: &[ColumnarValue] = match self.check {
            Check::SubstrLength => args.args.get(2..).unwrap_or(&[]),
            Check::Length => args.args.get(1..2).unwrap_or(&[]),
            Check::Log | Check::Sqrt | Check::Chr | Check::UnitRange | Check::AtLeastOne => {
                &args.args
            }
        };
        for a in ColumnarValue::values_to_arrays(checked)? {
            if !(a.data_type().is_numeric()) {
                continue;
            }
            let f = cast(&a, &DataType::Float64)?;
            let f = f.as_primitive::<datafusion::arrow::datatypes::Float64Type>();
            for v in f.iter().flatten() {
                if let Some(e) = self.check.value(v) {
                    return Err(fail(e));
                }
            }
        }
        let mut args = args;
        if self.check == Check::Length {
            if let Some(n) = args.args.get_mut(1) {
                *n = not_negative(n)?;
            }
        }
        self.inner.invoke_with_args(args)
    }
}

/// An integer argument with negative values as 0.
fn not_negative(v: &ColumnarValue) -> Result<ColumnarValue> {
    use datafusion::common::ScalarValue;
    Ok(match v {
        ColumnarValue::Scalar(ScalarValue::Int64(Some(n))) if *n < 0 => {
            ColumnarValue::Scalar(ScalarValue::Int64(Some(0)))
        }
        ColumnarValue::Scalar(ScalarValue::Int32(Some(n))) if *n < 0 => {
            ColumnarValue::Scalar(ScalarValue::Int32(Some(0)))
        }
        ColumnarValue::Array(a) if matches!(a.data_type(), DataType::Int64 | DataType::Int32) => {
            let wide = cast(a, &DataType::Int64)?;
            let clamped: datafusion::arrow::array::Int64Array = wide
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .iter()
                .map(|x| x.map(|x| x.max(0)))
                .collect();
            ColumnarValue::Array(cast(&clamped, a.data_type())?)
        }
        other => other.clone(),
    })
}

/// `upper` and `lower` as PostgreSQL's libc locales compute them: one
/// character at a time, a character whose mapping is several characters
/// (`ß`) kept as it is (`upper('straße')` is `STRAßE`).
#[derive(Debug, PartialEq, Eq, Hash)]
struct CaseMap {
    upper: bool,
    signature: Signature,
}

fn map_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut m: Vec<char> = if upper {
                c.to_uppercase().collect()
            } else {
                c.to_lowercase().collect()
            };
            if m.len() == 1 {
                m.pop().unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

impl ScalarUDFImpl for CaseMap {
    fn name(&self) -> &str {
        if self.upper {
            "upper"
        } else {
            "lower"
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let mut b = StringBuilder::new();
        for v in text_column(&arrays[0])? {
            b.append_option(v.map(|v| map_case(&v, self.upper)));
        }
        Ok(ColumnarValue::Array(Arc::new(b.finish())))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Func {
    Div,
    WidthBucket,
    Scale,
    QuoteLiteral,
    Format,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct PgFunc {
    f: Func,
    signature: Signature,
}

impl PgFunc {
    fn new(f: Func) -> Self {
        let signature = match f {
            Func::Format => Signature::variadic_any(Volatility::Immutable),
            _ => Signature::user_defined(Volatility::Immutable),
        };
        PgFunc { f, signature }
    }
}

fn fail(e: Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

fn no_function(name: &str, args: &[DataType]) -> DataFusionError {
    DataFusionError::Plan(format!(
        "No function matches the given name and argument types '{name}({})'.",
        args.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// A numeric argument as a decimal: integers at scale 0, decimals as
/// they are.
fn numeric_arg(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            Some(DataType::Decimal128(20, 0))
        }
        DataType::Decimal128(..) | DataType::Null => Some(match t {
            DataType::Null => DataType::Decimal128(20, 0),
            _ => t.clone(),
        }),
        _ => None,
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    )
}

/// Decimal arrays of the arguments, all at one scale (the largest).
fn common_decimals(args: &[ColumnarValue], n: usize) -> Result<(Vec<Vec<Option<i128>>>, i8)> {
    let arrays = ColumnarValue::values_to_arrays(args)?;
    let scale = arrays
        .iter()
        .map(|a| match a.data_type() {
            DataType::Decimal128(_, s) => *s,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let mut out = vec![];
    for a in arrays {
        let s = match a.data_type() {
            DataType::Decimal128(_, s) => *s,
            _ => 0,
        };
        let Some(d) = a.as_primitive_opt::<Decimal128Type>() else {
            return Err(DataFusionError::Internal(
                "decimal argument expected".into(),
            ));
        };
        let factor = 10i128.pow((scale - s).max(0) as u32);
        let mut col = Vec::with_capacity(n);
        for i in 0..d.len() {
            col.push(if d.is_null(i) {
                None
            } else {
                Some(d.value(i).checked_mul(factor).ok_or_else(overflow)?)
            });
        }
        out.push(col);
    }
    Ok((out, scale))
}

fn overflow() -> DataFusionError {
    fail(Error::NumericOutOfRange {
        message: "value overflows numeric format".into(),
    })
}

/// PostgreSQL's `width_bucket(operand, low, high, count)` on exact values.
fn width_bucket(x: i128, lo: i128, hi: i128, n: i128) -> Result<i32> {
    let bad = |m: &str| {
        fail(Error::Sql {
            state: SqlState("2201G"),
            message: m.into(),
        })
    };
    if n <= 0 {
        return Err(bad("count must be greater than zero"));
    }
    if lo == hi {
        return Err(bad("lower bound cannot equal upper bound"));
    }
    let (below, above, num, den) = if lo < hi {
        (x < lo, x >= hi, x - lo, hi - lo)
    } else {
        (x > lo, x <= hi, lo - x, lo - hi)
    };
    let bucket = if below {
        0
    } else if above {
        n.checked_add(1).ok_or_else(overflow)?
    } else {
        num.checked_mul(n).ok_or_else(overflow)? / den + 1
    };
    i32::try_from(bucket).map_err(|_| {
        fail(Error::NumericOutOfRange {
            message: "integer out of range".into(),
        })
    })
}

/// PostgreSQL's `quote_literal`: `'it''s'`, and `E'a\\b'` when the text
/// holds a backslash.
pub fn quote_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// PostgreSQL's `quote_ident` for names `format('%I')` prints: quoted
/// unless lower-case letters, digits and underscores not starting with a
/// digit (reserved words are quoted too by PostgreSQL; Tessera quotes
/// those it cannot tell apart only by their shape, so `%I` of a keyword
/// differs).
fn quote_ident(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        return s.to_string();
    }
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// `format(fmt, args...)` of one row.
fn format_row(fmt: &str, args: &[Option<String>]) -> Result<String> {
    let mut out = String::new();
    let mut next = 0usize;
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let conv = chars.next();
        if conv == Some('%') {
            out.push('%');
            continue;
        }
        let arg = args.get(next).ok_or_else(|| {
            fail(Error::Sql {
                state: SqlState("22023"),
                message: "too few arguments for format()".into(),
            })
        })?;
        next += 1;
        match (conv, arg) {
            (Some('s'), Some(v)) => out.push_str(v),
            (Some('s'), None) => {}
            (Some('I'), Some(v)) => out.push_str(&quote_ident(v)),
            (Some('I'), None) => {
                return Err(fail(Error::Sql {
                    state: SqlState("22004"),
                    message: "null values cannot be formatted as an SQL identifier".into(),
                }))
            }
            (Some('L'), Some(v)) => out.push_str(&quote_literal(v)),
            (Some('L'), None) => out.push_str("NULL"),
            (Some(other), _) => {
                return Err(fail(Error::unsupported(format!(
                    "format() conversion or option '{other}'"
                ))))
            }
            (None, _) => {
                return Err(fail(Error::Sql {
                    state: SqlState("22023"),
                    message: "unterminated format() type specifier".into(),
                }))
            }
        }
    }
    Ok(out)
}

fn text_column(a: &ArrayRef) -> Result<Vec<Option<String>>> {
    let a = cast(a, &DataType::Utf8)?;
    let s = a.as_string::<i32>();
    Ok((0..s.len())
        .map(|i| (!s.is_null(i)).then(|| s.value(i).to_string()))
        .collect())
}

impl ScalarUDFImpl for PgFunc {
    fn name(&self) -> &str {
        match self.f {
            Func::Div => "div",
            Func::WidthBucket => "width_bucket",
            Func::Scale => "scale",
            Func::QuoteLiteral => "quote_literal",
            Func::Format => "format",
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        let arity = match self.f {
            Func::Div => 2,
            Func::WidthBucket => 4,
            Func::Scale | Func::QuoteLiteral => 1,
            Func::Format => return Ok(args.to_vec()),
        };
        let coerced: Option<Vec<DataType>> = (args.len() == arity)
            .then(|| {
                args.iter()
                    .enumerate()
                    .map(|(i, t)| match self.f {
                        Func::QuoteLiteral => is_text(t).then_some(DataType::Utf8),
                        Func::WidthBucket if i == 3 => matches!(
                            t,
                            DataType::Int16
                                | DataType::Int32
                                | DataType::Int64
                                | DataType::Decimal128(_, 0)
                        )
                        .then_some(DataType::Decimal128(20, 0)),
                        _ => numeric_arg(t),
                    })
                    .collect()
            })
            .flatten();
        coerced.ok_or_else(|| no_function(self.name(), args))
    }
    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.f {
            Func::Div => DataType::Decimal128(38, 0),
            Func::WidthBucket | Func::Scale => DataType::Int32,
            Func::QuoteLiteral | Func::Format => DataType::Utf8,
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let out: ArrayRef = match self.f {
            Func::Div => {
                let (cols, _) = common_decimals(&args.args, n)?;
                let mut b = Decimal128Builder::with_capacity(n);
                for i in 0..n {
                    match (
                        cols[0].get(i).copied().flatten(),
                        cols[1].get(i).copied().flatten(),
                    ) {
                        (Some(_), Some(0)) => return Err(fail(Error::DivisionByZero)),
                        (Some(a), Some(d)) => b.append_value(a / d),
                        _ => b.append_null(),
                    }
                }
                Arc::new(b.finish().with_precision_and_scale(38, 0)?)
            }
            Func::WidthBucket => {
                let (cols, scale) = common_decimals(&args.args, n)?;
                let unit = 10i128.pow(scale.max(0) as u32);
                let mut b = Int32Builder::with_capacity(n);
                for i in 0..n {
                    let v: Option<Vec<i128>> =
                        cols.iter().map(|c| c.get(i).copied().flatten()).collect();
                    match v.as_deref() {
                        Some([x, lo, hi, count]) => {
                            b.append_value(width_bucket(*x, *lo, *hi, count / unit)?)
                        }
                        _ => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }
            Func::Scale => {
                let arrays = ColumnarValue::values_to_arrays(&args.args)?;
                let s = match arrays[0].data_type() {
                    DataType::Decimal128(_, s) => *s as i32,
                    _ => 0,
                };
                let mut b = Int32Builder::with_capacity(n);
                for i in 0..arrays[0].len() {
                    b.append_option((!arrays[0].is_null(i)).then_some(s));
                }
                Arc::new(b.finish())
            }
            Func::QuoteLiteral => {
                let arrays = ColumnarValue::values_to_arrays(&args.args)?;
                let mut b = StringBuilder::new();
                for v in text_column(&arrays[0])? {
                    b.append_option(v.map(|v| quote_literal(&v)));
                }
                Arc::new(b.finish())
            }
            Func::Format => {
                let arrays = ColumnarValue::values_to_arrays(&args.args)?;
                let Some((fmt, rest)) = arrays.split_first() else {
                    return Err(no_function("format", &[]));
                };
                let fmt = text_column(fmt)?;
                let rows = fmt.len();
                let texts: Vec<Vec<Option<String>>> = rest
                    .iter()
                    .map(|a| {
                        (0..a.len())
                            .map(|i| crate::pgtypes::arrow_text(a, i))
                            .collect()
                    })
                    .collect();
                let mut b = StringBuilder::new();
                for (i, f) in fmt.iter().enumerate().take(rows) {
                    let Some(f) = f else {
                        b.append_null();
                        continue;
                    };
                    let row: Vec<Option<String>> =
                        texts.iter().map(|c| c.get(i).cloned().flatten()).collect();
                    b.append_value(format_row(f, &row)?);
                }
                Arc::new(b.finish())
            }
        };
        Ok(ColumnarValue::Array(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_maps_one_character_at_a_time() {
        assert_eq!(map_case("straße", true), "STRAßE");
        assert_eq!(map_case("ǆé", true), "ǄÉ");
        assert_eq!(map_case("ÉǄ", false), "éǆ");
        assert_eq!(
            Check::Chr.value(-1.0).map(|e| e.sqlstate().code()),
            Some("22023")
        );
        assert!(Check::Log.value(1.0).is_none());
        let code = |c: Check, v: f64| c.value(v).map(|e| e.sqlstate().code());
        assert_eq!(code(Check::UnitRange, 1.5), Some("22003"));
        assert_eq!(code(Check::UnitRange, f64::NEG_INFINITY), Some("22003"));
        assert_eq!(code(Check::UnitRange, -1.0), None);
        assert_eq!(code(Check::UnitRange, f64::NAN), None);
        assert_eq!(code(Check::AtLeastOne, 0.5), Some("22003"));
        assert_eq!(code(Check::AtLeastOne, 1.0), None);
    }

    #[test]
    fn width_bucket_follows_postgres() {
        let wb = |x, lo, hi, n| width_bucket(x, lo, hi, n).unwrap();
        assert_eq!(wb(1000, 0, 5000, 5), 2);
        assert_eq!(wb(999, 0, 5000, 5), 1);
        assert_eq!(wb(-1, 0, 5000, 5), 0);
        assert_eq!(wb(5000, 0, 5000, 5), 6);
        assert_eq!(wb(4000, 5000, 0, 5), 2);
        assert!(width_bucket(1, 0, 0, 5).is_err());
        assert!(width_bucket(1, 0, 5, 0).is_err());
    }

    #[test]
    fn quoting_and_format_follow_postgres() {
        assert_eq!(quote_literal("it's"), "'it''s'");
        assert_eq!(quote_literal("a\\b"), "E'a\\\\b'");
        let f = |fmt: &str, a: &[Option<&str>]| {
            format_row(
                fmt,
                &a.iter().map(|x| x.map(String::from)).collect::<Vec<_>>(),
            )
        };
        assert_eq!(f("%s-%s", &[Some("a"), None]).unwrap(), "a-");
        assert_eq!(
            f("%I.%L %%", &[Some("My t"), None]).unwrap(),
            "\"My t\".NULL %"
        );
        assert!(f("%s %s", &[Some("a")]).is_err());
    }
}
