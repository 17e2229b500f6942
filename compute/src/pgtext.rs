//! PostgreSQL's output functions for the values Tessera computes itself:
//! floats (`float8out`, `float4out`) and intervals (`interval_out` in the
//! `postgres` style), used by the wire encoder and COPY TO.

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::{DataType, TimeUnit};

tokio::task_local! {
    /// The connection's `extra_float_digits`.
    static EXTRA_FLOAT_DIGITS: std::cell::Cell<i32>;
}

/// Runs `f` (a client connection) with an `extra_float_digits` of its own
/// (1 at first, PostgreSQL's default).
pub async fn with_float_digits<F: std::future::Future>(f: F) -> F::Output {
    EXTRA_FLOAT_DIGITS.scope(std::cell::Cell::new(1), f).await
}

/// Sets the running connection's `extra_float_digits` (already checked to
/// be in -15..=3); nothing outside a connection.
pub fn set_extra_float_digits(n: i32) {
    let _ = EXTRA_FLOAT_DIGITS.try_with(|c| c.set(n));
}

/// PostgreSQL's text of a float (`float8out` / `float4out`): with
/// `extra_float_digits` above 0 (the default 1) the shortest digits that
/// read back as the same value, in fixed notation for decimal exponents
/// from -4 up to 14 (float4: 5), else as `1.5e-10` / `1e+300`; at 0 or
/// below, C's `%.*g` with 15 (float4: 6) plus `extra_float_digits`
/// significant digits, at least 1. `NaN`, `Infinity`, `-Infinity`.
/// `single`: the value is a float4. Read in the connection's task (the
/// wire's encoders); elsewhere the default.
pub fn float_text(v: f64, single: bool) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let extra = EXTRA_FLOAT_DIGITS.try_with(|c| c.get()).unwrap_or(1);
    if extra <= 0 {
        let digits = if single { 6 } else { 15 } + extra;
        return c_g_format(
            if single { v as f32 as f64 } else { v },
            digits.max(1) as usize,
        );
    }
    // Rust's `{:e}` is the shortest round-trip form: "1.024e3", "-5e-7".
    let sci = if single {
        format!("{:e}", v as f32)
    } else {
        format!("{v:e}")
    };
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mant) = match mant.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mant),
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let max_fixed = if single { 6 } else { 15 };
    if exp < -4 || exp >= max_fixed {
        let mut out = format!("{sign}{}", &digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        out.push_str(&format!("e{esign}{:02}", exp.abs()));
        return out;
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// C's `printf("%.*g", precision, v)` for a finite `v`: `precision`
/// significant digits, in exponent form (`1.5e+20`, two exponent digits at
/// least) when the exponent is below -4 or not below the precision, trailing
/// zeros (and a trailing point) removed.
fn c_g_format(v: f64, precision: usize) -> String {
    let sci = format!("{:.*e}", precision - 1, v);
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |m: &str| -> String {
        if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m.to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{}e{esign}{:02}", trim(mant), exp.abs());
    }
    let decimals = (precision as i32 - 1 - exp).max(0) as usize;
    trim(&format!("{v:.decimals$}"))
}

/// PostgreSQL's text of an interval of `months`, `days` and `micros`
/// (`IntervalStyle = postgres`): `1 year 2 mons 3 days 04:05:06.5`,
/// `-1 days +02:00:00`, `00:00:00` for zero.
pub fn interval_text(months: i64, days: i64, micros: i64) -> String {
    let mut out = String::new();
    // A field after a negative one carries its own sign (`-2 mons +1 day`).
    let mut after_negative = false;
    for (n, one, many) in [
        (months / 12, "year", "years"),
        (months % 12, "mon", "mons"),
        (days, "day", "days"),
    ] {
        if n == 0 {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        if after_negative && n > 0 {
            out.push('+');
        }
        out.push_str(&format!("{n} {}", if n == 1 { one } else { many }));
        after_negative = n < 0;
    }
    if micros != 0 || out.is_empty() {
        let m = micros.unsigned_abs();
        let (h, rest) = (m / 3_600_000_000, m % 3_600_000_000);
        let (min, rest) = (rest / 60_000_000, rest % 60_000_000);
        let (s, frac) = (rest / 1_000_000, rest % 1_000_000);
        if !out.is_empty() {
            out.push(' ');
        }
        if micros < 0 {
            out.push('-');
        } else if after_negative {
            out.push('+');
        }
        out.push_str(&format!("{h:02}:{min:02}:{s:02}"));
        if frac != 0 {
            let f = format!("{frac:06}");
            out.push('.');
            out.push_str(f.trim_end_matches('0'));
        }
    }
    out
}

/// The PostgreSQL text of an Arrow interval or duration value, if `col`
/// is one.
pub fn interval_of(col: &ArrayRef, row: usize) -> Option<String> {
    let (months, days, micros) = interval_parts(col, row)?;
    Some(interval_text(months as i64, days as i64, micros))
}

/// An Arrow interval or duration value as PostgreSQL's interval fields:
/// months, days and microseconds (a duration, timestamp - timestamp, is
/// days and a time of day).
pub fn interval_parts(col: &ArrayRef, row: usize) -> Option<(i32, i32, i64)> {
    use datafusion::arrow::array::{
        DurationMicrosecondArray, DurationNanosecondArray, IntervalDayTimeArray,
        IntervalMonthDayNanoArray, IntervalYearMonthArray,
    };
    use datafusion::arrow::datatypes::IntervalUnit;
    let from_micros = |us: i64| {
        let days = i32::try_from(us / 86_400_000_000).ok()?;
        Some((0, days, us % 86_400_000_000))
    };
    match col.data_type() {
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = col
                .as_any()
                .downcast_ref::<IntervalMonthDayNanoArray>()?
                .value(row);
            Some((v.months, v.days, v.nanoseconds / 1000))
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let v = col
                .as_any()
                .downcast_ref::<IntervalDayTimeArray>()?
                .value(row);
            Some((0, v.days, v.milliseconds as i64 * 1000))
        }
        DataType::Interval(IntervalUnit::YearMonth) => {
            let v = col
                .as_any()
                .downcast_ref::<IntervalYearMonthArray>()?
                .value(row);
            Some((v, 0, 0))
        }
        DataType::Duration(TimeUnit::Microsecond) => from_micros(
            col.as_any()
                .downcast_ref::<DurationMicrosecondArray>()?
                .value(row),
        ),
        DataType::Duration(TimeUnit::Nanosecond) => from_micros(
            col.as_any()
                .downcast_ref::<DurationNanosecondArray>()?
                .value(row)
                / 1000,
        ),
        _ => None,
    }
}

/// The text of the decimal `v * 10^-scale`, all places kept.
pub fn decimal_text(v: i128, scale: u32) -> String {
    let digits = v.unsigned_abs().to_string();
    let sign = if v < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_print_as_postgres_prints_them() {
        assert_eq!(interval_text(0, 361, 20_002_000_000), "361 days 05:33:22");
        assert_eq!(interval_text(0, 2, 0), "2 days");
        assert_eq!(interval_text(14, 1, 0), "1 year 2 mons 1 day");
        assert_eq!(interval_text(0, 0, 0), "00:00:00");
        assert_eq!(interval_text(0, 0, 1_500_000), "00:00:01.5");
        assert_eq!(interval_text(0, -1, 7_200_000_000), "-1 days +02:00:00");
        assert_eq!(interval_text(0, 0, -3_600_000_000), "-01:00:00");
        assert_eq!(interval_text(-2, 1, 0), "-2 mons +1 day");
        assert_eq!(
            interval_text(-10, 1, 85_512_340_000),
            "-10 mons +1 day 23:45:12.34"
        );
        assert_eq!(
            interval_text(-14, -3, 1),
            "-1 years -2 mons -3 days +00:00:00.000001"
        );
    }

    #[test]
    fn floats_print_as_postgres_prints_them() {
        for (v, single, want) in [
            (1024.0, false, "1024"),
            (4.0, false, "4"),
            (0.1 + 0.2, false, "0.30000000000000004"),
            (1e300, false, "1e+300"),
            (1.5e-10, false, "1.5e-10"),
            (0.0001, false, "0.0001"),
            (0.00001, false, "1e-05"),
            (123456789012345.0, false, "123456789012345"),
            (1234567890123456.0, false, "1.234567890123456e+15"),
            (-2.5, false, "-2.5"),
            (0.0, false, "0"),
            (-0.0, false, "-0"),
            (1234567.0, true, "1.234567e+06"),
            (123456.0, true, "123456"),
            (0.1, true, "0.1"),
            (f64::NAN, false, "NaN"),
            (f64::NEG_INFINITY, false, "-Infinity"),
        ] {
            assert_eq!(float_text(v, single), want, "{v}");
        }
    }

    #[test]
    fn fewer_float_digits_print_as_c_printf_g() {
        for (v, precision, want) in [
            (1.5430806348152437, 15, "1.54308063481524"),
            (0.1 + 0.2, 15, "0.3"),
            (1e300, 15, "1e+300"),
            (123456789012345678.0, 15, "1.23456789012346e+17"),
            (0.00001234, 15, "1.234e-05"),
            (0.0001234, 15, "0.0001234"),
            (100.0, 1, "1e+02"),
            (2.5, 1, "2"),
            (-0.0, 15, "-0"),
            (9.99999999999999999, 15, "10"),
            (1.2345679e20_f32 as f64, 6, "1.23457e+20"),
        ] {
            assert_eq!(c_g_format(v, precision), want, "{v}");
        }
    }
}

/// PostgreSQL's text of an array (`array_out`): `{1,2,NULL}`, an element
/// double-quoted when it is empty, reads as NULL, or holds a space or one
/// of `{},"\` (with `"` and `\` escaped). `quote` is false for elements
/// that are arrays themselves (`{{1,2},{3,4}}`).
pub fn array_text(elems: impl Iterator<Item = Option<String>>, quote: bool) -> String {
    let mut out = String::from("{");
    for (i, e) in elems.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let Some(e) = e else {
            out.push_str("NULL");
            continue;
        };
        let needs = quote
            && (e.is_empty()
                || e.eq_ignore_ascii_case("NULL")
                || e.chars()
                    .any(|c| "{},\"\\".contains(c) || c.is_ascii_whitespace() || c == '\x0b'));
        if !needs {
            out.push_str(&e);
            continue;
        }
        out.push('"');
        for c in e.chars() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push('}');
    out
}

#[cfg(test)]
mod array_tests {
    use super::array_text;

    #[test]
    fn arrays_print_as_postgres() {
        let t = |v: &[Option<&str>]| array_text(v.iter().map(|e| e.map(String::from)), true);
        assert_eq!(t(&[Some("1"), Some("2"), None]), "{1,2,NULL}");
        assert_eq!(t(&[Some("a"), Some(""), Some("null")]), "{a,\"\",\"null\"}");
        assert_eq!(
            t(&[Some("a b"), Some("x,y"), Some("q\"\\")]),
            "{\"a b\",\"x,y\",\"q\\\"\\\\\"}"
        );
        assert_eq!(t(&[]), "{}");
        assert_eq!(
            array_text(
                ["{1,2}", "{3,4}"].iter().map(|e| Some(e.to_string())),
                false
            ),
            "{{1,2},{3,4}}"
        );
    }
}

/// The elements of a one-dimensional array's text (`{1,2,NULL}`,
/// `{"a b","c\"d"}`, `{}`), as PostgreSQL's `array_in` reads them:
/// blanks around elements skipped, double quotes and backslashes
/// escaping, an unquoted `NULL` (any case) a NULL. `None` when it is not
/// such a text (22P02 for the caller); several dimensions are 0A000.
pub fn array_elements(s: &str) -> Result<Option<Vec<Option<String>>>, common::Error> {
    let t = s.trim();
    let Some(inner) = t.strip_prefix('{').and_then(|r| r.strip_suffix('}')) else {
        return Ok(None);
    };
    if inner.trim_start().starts_with('{') {
        return Err(common::Error::unsupported(
            "multidimensional array parameters",
        ));
    }
    if inner.trim().is_empty() {
        return Ok(Some(vec![]));
    }
    let mut out = vec![];
    let mut chars = inner.chars();
    let (mut elem, mut blanks) = (String::new(), String::new());
    let (mut in_quotes, mut was_quoted) = (false, false);
    loop {
        let c = chars.next();
        match c {
            Some('"') => {
                elem.push_str(&std::mem::take(&mut blanks));
                in_quotes = !in_quotes;
                was_quoted = true;
            }
            Some('\\') => {
                let Some(e) = chars.next() else {
                    return Ok(None);
                };
                elem.push_str(&std::mem::take(&mut blanks));
                elem.push(e);
            }
            Some(',') | None if !in_quotes => {
                if !was_quoted && elem.is_empty() {
                    return Ok(None);
                }
                let null = !was_quoted && elem.eq_ignore_ascii_case("null");
                out.push((!null).then(|| std::mem::take(&mut elem)));
                elem.clear();
                blanks.clear();
                was_quoted = false;
                if c.is_none() {
                    return Ok(Some(out));
                }
            }
            None => return Ok(None),
            Some('{' | '}') if !in_quotes => return Ok(None),
            Some(c) if !in_quotes && c.is_whitespace() => {
                if !elem.is_empty() || was_quoted {
                    blanks.push(c);
                }
            }
            Some(c) => {
                elem.push_str(&std::mem::take(&mut blanks));
                elem.push(c);
            }
        }
    }
}

#[cfg(test)]
mod array_in_tests {
    use super::array_elements;

    fn els(s: &str) -> Option<Vec<Option<String>>> {
        array_elements(s).unwrap()
    }

    #[test]
    fn array_text_reads_as_array_in() {
        let v = |x: &[Option<&str>]| Some(x.iter().map(|e| e.map(String::from)).collect());
        assert_eq!(els("{1,2,3}"), v(&[Some("1"), Some("2"), Some("3")]));
        assert_eq!(els(" { 1 , NULL ,null} "), v(&[Some("1"), None, None]));
        assert_eq!(
            els(r#"{"a b","c\"d","NULL",e f}"#),
            v(&[Some("a b"), Some("c\"d"), Some("NULL"), Some("e f")])
        );
        assert_eq!(els("{}"), v(&[]));
        assert_eq!(els(r#"{""}"#), v(&[Some("")]));
        assert_eq!(els("{1,,2}"), None);
        assert_eq!(els("1,2"), None);
        assert_eq!(els(r#"{"a}"#), None);
        assert!(array_elements("{{1,2},{3,4}}").is_err());
    }
}
