//! `Datum`: one SQL value as it travels between the wire, the router and the
//! shards.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use rust_decimal::Decimal;

#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Decimal(Decimal),
    Text(String),
    Bytes(Vec<u8>),
    Date(NaiveDate),
    Timestamp(NaiveDateTime),
    TimestampTz(DateTime<Utc>),
}

pub fn days_since_epoch(d: NaiveDate) -> i64 {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    (d - epoch).num_days()
}

impl Datum {
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// Sort order of two values of one column as a shard orders them
    /// (numbers by value, text and bytes by bytes, which is the order of
    /// `utf8mb4_nopad_bin`), with NULL last and equal to NULL, as
    /// PostgreSQL's DISTINCT and ascending ORDER BY treat it. Values of
    /// different kinds (never in one column) order by kind.
    pub fn sort_cmp(&self, other: &Datum) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        use Datum::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Greater,
            (_, Null) => Ordering::Less,
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (Float(a), Float(b)) => a.partial_cmp(b).unwrap_or_else(|| a.total_cmp(b)),
            (Decimal(a), Decimal(b)) => a.cmp(b),
            (Text(a), Text(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Timestamp(a), Timestamp(b)) => a.cmp(b),
            (TimestampTz(a), TimestampTz(b)) => a.cmp(b),
            (a, b) => a.kind_rank().cmp(&b.kind_rank()),
        }
    }

    fn kind_rank(&self) -> u8 {
        match self {
            Datum::Null => 0,
            Datum::Bool(_) => 1,
            Datum::Int(_) => 2,
            Datum::Float(_) => 3,
            Datum::Decimal(_) => 4,
            Datum::Text(_) => 5,
            Datum::Bytes(_) => 6,
            Datum::Date(_) => 7,
            Datum::Timestamp(_) => 8,
            Datum::TimestampTz(_) => 9,
        }
    }
}

use crate::error::{Error, Result};
use crate::types::SqlType;
use std::str::FromStr;

fn invalid(ty: &SqlType, s: &str) -> Error {
    Error::InvalidText {
        ty: ty.to_string(),
        value: s.to_string(),
    }
}

/// PostgreSQL's boolean input spellings.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "on" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Parses a bytea in hex (`\x0a0b`) or escape format.
pub fn parse_bytea(s: &str) -> Option<Vec<u8>> {
    if let Some(hex) = s.strip_prefix("\\x") {
        // Pairs of hex digits, whitespace allowed between pairs (as
        // PostgreSQL reads them); bytes, not chars, so a multi-byte
        // character is simply not a digit.
        fn digit(b: u8) -> Option<u8> {
            (b as char).to_digit(16).map(|d| d as u8)
        }
        let mut out = Vec::with_capacity(hex.len() / 2);
        let mut it = hex.bytes();
        while let Some(hi) = it.next() {
            if hi.is_ascii_whitespace() {
                continue;
            }
            let lo = it.next()?;
            out.push((digit(hi)? << 4) | digit(lo)?);
        }
        Some(out)
    } else {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' {
                if b.get(i + 1) == Some(&b'\\') {
                    out.push(b'\\');
                    i += 2;
                } else {
                    let oct = std::str::from_utf8(b.get(i + 1..i + 4)?).ok()?;
                    out.push(u8::from_str_radix(oct, 8).ok()?);
                    i += 4;
                }
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        Some(out)
    }
}

/// A double rounded to an integer type, 22003 when it is NaN, infinite or
/// out of the type's range (PostgreSQL's float8 -> int8 cast).
pub fn float_to_int(f: f64, ty: &SqlType) -> Result<i64> {
    let r = f.round_ties_even();
    // i64::MIN is exactly representable; i64::MAX + 1 is the first double
    // past the range.
    if !r.is_finite() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
        return Err(Error::NumericOutOfRange {
            message: format!("{ty} out of range"),
        });
    }
    check_int(r as i64, ty)
}

/// Whether float text `t` (trimmed), read as `f`, is out of range for a
/// real (`single`) or a double precision as PostgreSQL's float4in and
/// float8in see it: too large (and not written as infinity), or nonzero
/// digits that read as zero (a denormal is accepted).
pub fn float_text_out_of_range(t: &str, f: f64, single: bool) -> bool {
    let (inf, zero) = if single {
        ((f as f32).is_infinite(), (f as f32) == 0.0)
    } else {
        (f.is_infinite(), f == 0.0)
    };
    let written_inf = t
        .trim_start_matches(['+', '-'])
        .get(..3)
        .is_some_and(|p| p.eq_ignore_ascii_case("inf"));
    let mantissa = t.split(['e', 'E']).next().unwrap_or("");
    let nonzero = mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    (inf && !written_inf) || (zero && nonzero)
}

/// Whether `t` (trimmed) is an optionally signed run of digits: text an
/// integer type reads when it is in range (PostgreSQL's int2in, int4in and
/// int8in say "out of range" for such text, not "invalid syntax").
pub fn is_integer_text(t: &str) -> bool {
    let digits = t.trim_start_matches(['+', '-']);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A float read from text, 22003 when it is out of range for `ty`
/// ([`float_text_out_of_range`]).
fn float_in_range(f: f64, t: &str, ty: &SqlType) -> Result<f64> {
    if float_text_out_of_range(t, f, *ty == SqlType::Real) {
        return Err(Error::NumericOutOfRange {
            message: format!("\"{t}\" is out of range for type {ty}"),
        });
    }
    Ok(f)
}

/// A double as a real (PostgreSQL's float8 -> float4): 22003 when it is
/// finite but too large for a real, or nonzero but too small.
fn float4_of(f: f64) -> Result<f64> {
    let r = f as f32;
    let why = if f.is_finite() && r.is_infinite() {
        "overflow"
    } else if f != 0.0 && r == 0.0 {
        "underflow"
    } else {
        return Ok(f);
    };
    Err(Error::NumericOutOfRange {
        message: format!("value out of range: {why}"),
    })
}

fn check_int(v: i64, ty: &SqlType) -> Result<i64> {
    let ok = match ty {
        SqlType::SmallInt => i16::try_from(v).is_ok(),
        SqlType::Integer => i32::try_from(v).is_ok(),
        _ => true,
    };
    if ok {
        Ok(v)
    } else {
        Err(Error::NumericOutOfRange {
            message: format!("{ty} out of range"),
        })
    }
}

impl Datum {
    /// Parses PostgreSQL text input for a column type.
    pub fn parse(s: &str, ty: &SqlType) -> Result<Datum> {
        let t = s.trim();
        Ok(match ty {
            SqlType::SmallInt | SqlType::Integer | SqlType::BigInt => {
                // Digits that do not fit say so, as int2in/int4in/int8in do.
                let out_of_range = || Error::NumericOutOfRange {
                    message: format!("value \"{s}\" is out of range for type {ty}"),
                };
                let v = t.parse::<i64>().map_err(|_| {
                    if is_integer_text(t) {
                        out_of_range()
                    } else {
                        invalid(ty, s)
                    }
                })?;
                Datum::Int(check_int(v, ty).map_err(|_| out_of_range())?)
            }
            SqlType::Numeric { .. } => Datum::Decimal(
                Decimal::from_str(t)
                    .or_else(|_| Decimal::from_scientific(t))
                    .map_err(|_| invalid(ty, s))?,
            ),
            SqlType::Real | SqlType::Double => {
                Datum::Float(match t.to_ascii_lowercase().as_str() {
                    "nan" => f64::NAN,
                    "infinity" | "inf" | "+infinity" | "+inf" => f64::INFINITY,
                    "-infinity" | "-inf" => f64::NEG_INFINITY,
                    _ => float_in_range(t.parse::<f64>().map_err(|_| invalid(ty, s))?, t, ty)?,
                })
            }
            SqlType::Boolean => Datum::Bool(parse_bool(t).ok_or_else(|| invalid(ty, s))?),
            SqlType::Char(_) | SqlType::Varchar(_) | SqlType::Text => Datum::Text(s.to_string()),
            SqlType::Bytea => Datum::Bytes(parse_bytea(s).ok_or_else(|| invalid(ty, s))?),
            SqlType::Date => Datum::Date(crate::pgdatetime::date_value(s)?),
            SqlType::Timestamp => Datum::Timestamp(crate::pgdatetime::timestamp_value(s)?),
            SqlType::TimestampTz => Datum::TimestampTz(crate::pgdatetime::timestamptz_value(s)?),
        })
    }

    /// Converts a value to a column type (assignment or comparison cast).
    pub fn coerce(self, ty: &SqlType) -> Result<Datum> {
        let mismatch = |d: &Datum| Error::TypeMismatch {
            message: format!("value {d:?} cannot be used as type {ty}"),
        };
        Ok(match (self, ty) {
            (Datum::Null, _) => Datum::Null,
            (Datum::Text(s), _) => Datum::parse(&s, ty)?,
            (Datum::Int(i), SqlType::SmallInt | SqlType::Integer | SqlType::BigInt) => {
                Datum::Int(check_int(i, ty)?)
            }
            (Datum::Int(i), SqlType::Numeric { .. }) => Datum::Decimal(Decimal::from(i)),
            (Datum::Int(i), SqlType::Real | SqlType::Double) => Datum::Float(i as f64),
            (Datum::Decimal(d), SqlType::Numeric { .. }) => Datum::Decimal(d),
            (Datum::Decimal(d), SqlType::Real | SqlType::Double) => {
                Datum::Float(d.to_string().parse::<f64>().unwrap_or(f64::NAN))
            }
            (Datum::Decimal(d), SqlType::SmallInt | SqlType::Integer | SqlType::BigInt) => {
                let r = d.round_dp_with_strategy(
                    0,
                    rust_decimal::RoundingStrategy::MidpointAwayFromZero,
                );
                let i = i64::try_from(r).map_err(|_| Error::NumericOutOfRange {
                    message: format!("{ty} out of range"),
                })?;
                Datum::Int(check_int(i, ty)?)
            }
            (Datum::Float(f), SqlType::Real) => Datum::Float(float4_of(f)?),
            (Datum::Float(f), SqlType::Double) => Datum::Float(f),
            (Datum::Float(f), SqlType::Numeric { .. }) => Datum::Decimal(
                Decimal::from_str(&f.to_string()).map_err(|_| mismatch(&Datum::Float(f)))?,
            ),
            (Datum::Float(f), SqlType::SmallInt | SqlType::Integer | SqlType::BigInt) => {
                Datum::Int(float_to_int(f, ty)?)
            }
            (Datum::Bool(b), SqlType::Boolean) => Datum::Bool(b),
            (Datum::Bytes(b), SqlType::Bytea) => Datum::Bytes(b),
            (Datum::Date(d), SqlType::Date) => Datum::Date(d),
            (Datum::Date(d), SqlType::Timestamp) => {
                Datum::Timestamp(d.and_hms_opt(0, 0, 0).unwrap_or_default())
            }
            (Datum::Timestamp(t), SqlType::Timestamp) => Datum::Timestamp(t),
            // Local time in the session's zone, as PostgreSQL converts.
            (Datum::Timestamp(t), SqlType::TimestampTz) => {
                Datum::TimestampTz(crate::tz::session_zone().to_utc(&t).and_utc())
            }
            (Datum::Timestamp(t), SqlType::Date) => Datum::Date(t.date()),
            (Datum::TimestampTz(t), SqlType::TimestampTz) => Datum::TimestampTz(t),
            (Datum::TimestampTz(t), SqlType::Timestamp) => {
                Datum::Timestamp(crate::tz::to_session_local(&t.naive_utc()).0)
            }
            (d, _) => return Err(mismatch(&d)),
        })
    }
}

#[cfg(test)]
mod bytea_tests {
    use super::parse_bytea;
    use proptest::prelude::*;

    #[test]
    fn numbers_out_of_range_say_so() {
        use crate::{Datum, SqlType};
        let err = |s: &str, ty: SqlType| {
            Datum::parse(s, &ty)
                .map(|_| ("ok", String::new()))
                .unwrap_or_else(|e| (e.sqlstate().code(), e.to_string()))
        };
        assert_eq!(
            err("3000000000", SqlType::Integer),
            (
                "22003",
                "value \"3000000000\" is out of range for type integer".into()
            )
        );
        assert_eq!(err("-9223372036854775809", SqlType::BigInt).0, "22003");
        assert_eq!(err("12x", SqlType::BigInt).0, "22P02");
        assert_eq!(
            err("10e-70", SqlType::Real),
            ("22003", "\"10e-70\" is out of range for type real".into())
        );
        assert_eq!(err("1e400", SqlType::Double).0, "22003");
        assert_eq!(err("0e-400", SqlType::Double).0, "ok");
        assert_eq!(err("1e-320", SqlType::Double).0, "ok");
        assert_eq!(err("-Infinity", SqlType::Real).0, "ok");
        let to_real = |f: f64| {
            Datum::Float(f)
                .coerce(&SqlType::Real)
                .map(|_| "ok".to_string())
                .unwrap_or_else(|e| e.to_string())
        };
        assert_eq!(to_real(1e-69), "value out of range: underflow");
        assert_eq!(to_real(1e300), "value out of range: overflow");
        assert_eq!(to_real(1.5), "ok");
    }

    #[test]
    fn years_postgres_rejects_are_rejected() {
        use crate::{Datum, SqlType};
        let code = |s: &str, ty: SqlType| {
            Datum::parse(s, &ty)
                .map(|_| "ok")
                .unwrap_or_else(|e| e.sqlstate().code())
        };
        assert_eq!(code("0000-06-15", SqlType::Date), "22008");
        assert_eq!(code("-0044-03-15", SqlType::Date), "22009");
        assert_eq!(code("0044-03-15 BC", SqlType::Date), "0A000");
        assert_eq!(code("0001-01-01", SqlType::Date), "ok");
        assert_eq!(code("0000-01-01 10:00:00", SqlType::Timestamp), "22008");
    }

    #[test]
    fn float_to_int_overflow_is_22003() {
        use crate::{Datum, SqlType};
        for f in [f64::NAN, f64::INFINITY, 1e300, -1e300, 9.3e18] {
            let e = Datum::Float(f).coerce(&SqlType::BigInt).unwrap_err();
            assert_eq!(e.sqlstate().code(), "22003", "{f}");
        }
        let d = Datum::Float(i64::MIN as f64)
            .coerce(&SqlType::BigInt)
            .unwrap();
        assert!(matches!(d, Datum::Int(i64::MIN)));
        assert!(matches!(
            Datum::Float(2.5).coerce(&SqlType::Integer).unwrap(),
            Datum::Int(2)
        ));
        assert!(Datum::Float(40000.0).coerce(&SqlType::SmallInt).is_err());
    }

    #[test]
    fn hex_and_escape_formats() {
        assert_eq!(parse_bytea("\\x6869"), Some(b"hi".to_vec()));
        assert_eq!(parse_bytea("\\x68 69"), Some(b"hi".to_vec()));
        assert_eq!(parse_bytea("\\x6 869"), None);
        assert_eq!(parse_bytea("\\xa\u{e9}0"), None);
        assert_eq!(parse_bytea("a\\\\b\\001"), Some(b"a\\b\x01".to_vec()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]
        /// Any text, any prefix: an answer, never a panic; and every byte
        /// string read back from its hex form.
        #[test]
        fn never_panics(s in any::<String>()) {
            let _ = parse_bytea(&s);
            let _ = parse_bytea(&format!("\\x{s}"));
            let _ = parse_bytea(&format!("\\{s}"));
        }

        #[test]
        fn hex_round_trips(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            prop_assert_eq!(parse_bytea(&format!("\\x{hex}")), Some(b));
        }
    }
}

#[cfg(test)]
mod timestamptz_tests {
    use super::*;

    #[test]
    fn fractions_round_to_microseconds_as_postgresql() {
        let frac = |s: &str| match Datum::parse(s, &SqlType::Timestamp) {
            Ok(Datum::Timestamp(t)) => t.and_utc().timestamp_subsec_micros(),
            other => panic!("{other:?}"),
        };
        assert_eq!(frac("2024-01-02 10:11:12.123456789"), 123457);
        assert_eq!(frac("2024-01-02 10:11:12.1234565"), 123456);
        assert_eq!(frac("2024-01-02 10:11:12.9999996"), 0);
        assert_eq!(frac("2024-01-02 10:11:12.5"), 500000);
        let day = |s: &str| match Datum::parse(s, &SqlType::Date) {
            Ok(Datum::Date(d)) => d.to_string(),
            other => panic!("{other:?}"),
        };
        // DateStyle ISO, MDY (PostgreSQL's default).
        assert_eq!(day("01-08-99"), "1999-01-08");
        assert_eq!(day("1-8-08"), "2008-01-08");
        assert_eq!(day("12-31-1999"), "1999-12-31");
        assert_eq!(day("0099-01-08"), "0099-01-08");
        let e = Datum::parse("99-01-08", &SqlType::Date).unwrap_err();
        assert!(
            matches!(&e, Error::Sql { state, .. } if state.0 == "22008"),
            "{e:?}"
        );
        let e = Datum::parse("0000-06-15", &SqlType::Date).unwrap_err();
        assert!(matches!(e, Error::Sql { .. }), "{e:?}");
    }

    #[test]
    fn offsets_are_read_as_postgres_reads_them() {
        let p = |s: &str| match Datum::parse(s, &SqlType::TimestampTz) {
            Ok(Datum::TimestampTz(t)) => t.naive_utc().to_string(),
            other => format!("{other:?}"),
        };
        assert_eq!(p("2024-01-15 12:00+00"), "2024-01-15 12:00:00");
        assert_eq!(p("2024-01-15 12:00:00+01"), "2024-01-15 11:00:00");
        assert_eq!(p("2024-01-15 12:00:00.5-05:30"), "2024-01-15 17:30:00.500");
        assert_eq!(p("2024-01-15T12:00:00Z"), "2024-01-15 12:00:00");
        assert_eq!(p("2024-01-15 12:00:00 +0200"), "2024-01-15 10:00:00");
        assert_eq!(p("1890-01-01 12:00:00+00:53:28"), "1890-01-01 11:06:32");
        // No offset: the session's zone, UTC outside a session.
        assert_eq!(p("2024-01-15 12:00"), "2024-01-15 12:00:00");
        assert_eq!(p("2024-01-15"), "2024-01-15 00:00:00");
        assert!(Datum::parse("2024-01-15 12:00+99", &SqlType::TimestampTz).is_err());
    }
}
