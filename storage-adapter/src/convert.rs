//! Conversions between [`Datum`] and MySQL protocol values.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use common::{Datum, Error, Result, SqlType};
use mysql_async::Value;
use rust_decimal::Decimal;
use std::str::FromStr;

/// Datum -> parameter of a MySQL prepared statement.
pub fn to_mysql(d: &Datum) -> Value {
    match d {
        Datum::Null => Value::NULL,
        Datum::Bool(b) => Value::Int(*b as i64),
        Datum::Int(i) => Value::Int(*i),
        Datum::Float(f) => Value::Double(*f),
        Datum::Decimal(d) => Value::Bytes(d.to_string().into_bytes()),
        Datum::Text(s) => Value::Bytes(s.clone().into_bytes()),
        Datum::Bytes(b) => Value::Bytes(b.clone()),
        Datum::Date(d) => Value::Date(
            d.year_ce().1 as u16,
            d.month0() as u8 + 1,
            d.day0() as u8 + 1,
            0,
            0,
            0,
            0,
        ),
        Datum::Timestamp(ts) => ts_value(ts),
        Datum::TimestampTz(ts) => ts_value(&ts.naive_utc()),
    }
}

use chrono::{Datelike, Timelike};

/// Datum -> SQL literal for a shard session (ANSI_QUOTES,
/// NO_BACKSLASH_ESCAPES, time zone +00:00), for statements sent as text
/// instead of prepared. `None` for values a literal cannot carry exactly
/// (non-finite floats, NUL characters, dates outside years 1-9999); callers
/// then bind them as parameters.
pub fn to_sql_literal(d: &Datum) -> Option<String> {
    use std::fmt::Write;
    Some(match d {
        Datum::Null => "NULL".into(),
        Datum::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        Datum::Int(i) => i.to_string(),
        // Shortest digits that read back as the same double, in
        // exponent form so MariaDB parses an approximate value.
        Datum::Float(f) if f.is_finite() => format!("{f:e}"),
        Datum::Float(_) => return None,
        Datum::Decimal(d) => d.to_string(),
        Datum::Text(s) if s.contains('\0') => return None,
        Datum::Text(s) => crate::quote_str(s),
        Datum::Bytes(b) => {
            let mut out = String::with_capacity(b.len() * 2 + 3);
            out.push_str("X'");
            for byte in b {
                let _ = write!(out, "{byte:02X}");
            }
            out.push('\'');
            out
        }
        Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_) => {
            format!("'{}'", temporal_text(d)?)
        }
    })
}

/// The text MariaDB reads as this DATE or DATETIME value (a timestamptz as
/// its UTC time, as shards store it); `None` for other values and for years
/// outside MariaDB's 1..9999.
pub fn temporal_text(d: &Datum) -> Option<String> {
    Some(match d {
        Datum::Date(d) if (1..=9999).contains(&d.year()) => d.format("%Y-%m-%d").to_string(),
        Datum::Timestamp(ts) if (1..=9999).contains(&ts.year()) => {
            ts.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
        }
        Datum::TimestampTz(ts) if (1..=9999).contains(&ts.year()) => {
            ts.naive_utc().format("%Y-%m-%d %H:%M:%S%.6f").to_string()
        }
        _ => return None,
    })
}

fn ts_value(ts: &NaiveDateTime) -> Value {
    Value::Date(
        ts.year() as u16,
        ts.month() as u8,
        ts.day() as u8,
        ts.hour() as u8,
        ts.minute() as u8,
        ts.second() as u8,
        ts.nanosecond() / 1000,
    )
}

fn bad(ty: &SqlType, v: &Value) -> Error {
    Error::Execution {
        message: format!("shard returned a value that is not a valid {ty}: {v:?}"),
    }
}

fn text(v: &Value) -> Option<&str> {
    match v {
        Value::Bytes(b) => std::str::from_utf8(b).ok(),
        _ => None,
    }
}

/// MySQL value from a shard -> Datum of the column's SQL type.
pub fn from_mysql(v: Value, ty: &SqlType) -> Result<Datum> {
    if let Value::NULL = v {
        return Ok(Datum::Null);
    }
    let d = match ty {
        SqlType::SmallInt | SqlType::Integer | SqlType::BigInt => match &v {
            Value::Int(i) => Datum::Int(*i),
            Value::UInt(u) => Datum::Int(i64::try_from(*u).map_err(|_| bad(ty, &v))?),
            Value::Double(f) => Datum::Int(*f as i64),
            Value::Bytes(_) => {
                let s = text(&v).ok_or_else(|| bad(ty, &v))?;
                match s.parse::<i64>() {
                    Ok(i) => Datum::Int(i),
                    Err(_) => {
                        let d = Decimal::from_str(s).map_err(|_| bad(ty, &v))?;
                        Datum::Int(i64::try_from(d.round()).map_err(|_| bad(ty, &v))?)
                    }
                }
            }
            _ => return Err(bad(ty, &v)),
        },
        SqlType::Boolean => match &v {
            Value::Int(i) => Datum::Bool(*i != 0),
            Value::UInt(u) => Datum::Bool(*u != 0),
            Value::Bytes(b) => Datum::Bool(b.as_slice() != b"0"),
            _ => return Err(bad(ty, &v)),
        },
        SqlType::Numeric { .. } => match &v {
            Value::Int(i) => Datum::Decimal(Decimal::from(*i)),
            Value::UInt(u) => Datum::Decimal(Decimal::from(*u)),
            Value::Double(f) => {
                Datum::Decimal(Decimal::from_str(&f.to_string()).map_err(|_| bad(ty, &v))?)
            }
            Value::Bytes(_) => {
                let s = text(&v).ok_or_else(|| bad(ty, &v))?;
                // A DECIMAL(65,30) column pads every value to 30 places;
                // the zeros carry no digits, and 96-bit decimals hold only
                // 28 places, so they go before parsing. A value with more
                // digits than that is refused, never rounded.
                // The column's scale is kept whenever it fits.
                let trimmed = if s.contains('.') {
                    s.trim_end_matches('0').trim_end_matches('.')
                } else {
                    s
                };
                let d = Decimal::from_str_exact(s)
                    .or_else(|_| Decimal::from_str_exact(trimmed))
                    .map_err(|_| Error::NumericOutOfRange {
                        message: format!(
                            "numeric value {s} has more than 28 significant decimal digits"
                        ),
                    })?;
                Datum::Decimal(d)
            }
            _ => return Err(bad(ty, &v)),
        },
        SqlType::Real | SqlType::Double => match &v {
            Value::Float(f) => Datum::Float(*f as f64),
            Value::Double(f) => Datum::Float(*f),
            Value::Int(i) => Datum::Float(*i as f64),
            Value::UInt(u) => Datum::Float(*u as f64),
            Value::Bytes(_) => Datum::Float(
                text(&v)
                    .and_then(|s| s.parse::<f64>().ok())
                    .ok_or_else(|| bad(ty, &v))?,
            ),
            _ => return Err(bad(ty, &v)),
        },
        SqlType::Char(_) | SqlType::Varchar(_) | SqlType::Text => match v {
            Value::Bytes(b) => {
                let mut s = String::from_utf8(b).map_err(|e| Error::Execution {
                    message: format!("shard returned invalid UTF-8: {e}"),
                })?;
                // MariaDB strips CHAR(n)'s trailing blanks; PostgreSQL pads.
                if let SqlType::Char(n) = ty {
                    let len = s.chars().count();
                    if len < *n as usize {
                        s.extend(std::iter::repeat_n(' ', *n as usize - len));
                    }
                }
                Datum::Text(s)
            }
            Value::Int(i) => Datum::Text(i.to_string()),
            Value::UInt(u) => Datum::Text(u.to_string()),
            Value::Double(f) => Datum::Text(f.to_string()),
            Value::Float(f) => Datum::Text(f.to_string()),
            other => return Err(bad(ty, &other)),
        },
        SqlType::Bytea => match v {
            Value::Bytes(b) => Datum::Bytes(b),
            other => return Err(bad(ty, &other)),
        },
        SqlType::Date => match &v {
            Value::Date(y, m, d, ..) => Datum::Date(
                NaiveDate::from_ymd_opt(*y as i32, *m as u32, *d as u32)
                    .ok_or_else(|| bad(ty, &v))?,
            ),
            Value::Bytes(_) => Datum::Date(
                text(&v)
                    .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
                    .ok_or_else(|| bad(ty, &v))?,
            ),
            _ => return Err(bad(ty, &v)),
        },
        SqlType::Timestamp | SqlType::TimestampTz => {
            let naive = match &v {
                Value::Date(y, mo, d, h, mi, s, us) => {
                    NaiveDate::from_ymd_opt(*y as i32, *mo as u32, *d as u32)
                        .and_then(|date| {
                            NaiveTime::from_hms_micro_opt(*h as u32, *mi as u32, *s as u32, *us)
                                .map(|t| date.and_time(t))
                        })
                        .ok_or_else(|| bad(ty, &v))?
                }
                Value::Bytes(_) => text(&v)
                    .and_then(|s| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").ok())
                    .ok_or_else(|| bad(ty, &v))?,
                _ => return Err(bad(ty, &v)),
            };
            if matches!(ty, SqlType::TimestampTz) {
                Datum::TimestampTz(Utc.from_utc_datetime(&naive))
            } else {
                Datum::Timestamp(naive)
            }
        }
    };
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let d = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        assert_eq!(
            from_mysql(to_mysql(&Datum::Date(d)), &SqlType::Date).unwrap(),
            Datum::Date(d)
        );
        let dec = Datum::Decimal(Decimal::from_str("-12.50").unwrap());
        assert_eq!(
            from_mysql(
                to_mysql(&dec),
                &SqlType::Numeric {
                    precision: 10,
                    scale: 2
                }
            )
            .unwrap(),
            dec
        );
        assert_eq!(
            from_mysql(Value::Bytes(b"42".to_vec()), &SqlType::BigInt).unwrap(),
            Datum::Int(42)
        );
    }

    #[test]
    fn literals() {
        let lit = |d: Datum| to_sql_literal(&d);
        assert_eq!(lit(Datum::Text("it's \\n".into())).unwrap(), "'it''s \\n'");
        assert_eq!(lit(Datum::Float(0.1)).unwrap(), "1e-1");
        assert_eq!(lit(Datum::Float(-1.5e300)).unwrap(), "-1.5e300");
        assert_eq!(lit(Datum::Float(f64::NAN)), None);
        assert_eq!(lit(Datum::Text("a\0b".into())), None);
        assert_eq!(lit(Datum::Bytes(vec![0, 255])).unwrap(), "X'00FF'");
        assert_eq!(lit(Datum::Int(-7)).unwrap(), "-7");
        assert_eq!(lit(Datum::Null).unwrap(), "NULL");
        let ts = NaiveDate::from_ymd_opt(2024, 2, 29)
            .unwrap()
            .and_hms_micro_opt(1, 2, 3, 4)
            .unwrap();
        assert_eq!(
            lit(Datum::Timestamp(ts)).unwrap(),
            "'2024-02-29 01:02:03.000004'"
        );
        let dec = Decimal::from_str("-12.50").unwrap();
        assert_eq!(lit(Datum::Decimal(dec)).unwrap(), "-12.50");
    }
}
