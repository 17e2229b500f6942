//! The datums Tessera keeps for PostgreSQL's date and timestamp input:
//! chrono's dates and times, years 1 to 9999 (what the shards store).
//! Relative words (`today`, `now`) read against the current time in the
//! session's zone; the infinities and years BC are refused (0A000).

use chrono::{Datelike, NaiveDate, NaiveDateTime};

use super::{date_in_at, timestamp_in_at, timestamptz_in_at, PgDate, PgTimestamp, USECS_PER_DAY};
use crate::{Error, Result};

/// 2000-01-01, PostgreSQL's epoch.
fn pg_epoch() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2000, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .unwrap_or_default()
}

/// Now in the session's zone, in microseconds since 2000-01-01.
fn local_now() -> i64 {
    let utc = chrono::Utc::now().naive_utc();
    let (local, _) = crate::tz::to_session_local(&utc);
    (local - pg_epoch()).num_microseconds().unwrap_or(0)
}

fn supported_year(year: i32) -> Result<()> {
    if year < 1 {
        return Err(Error::unsupported("dates before 0001-01-01 (BC)"));
    }
    if year > 9999 {
        return Err(Error::unsupported("dates after 9999-12-31"));
    }
    Ok(())
}

/// Digits at `b[at..at + n]` as a number.
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let d = b.get(at..at + n)?;
    d.iter()
        .all(u8::is_ascii_digit)
        .then(|| d.iter().fold(0, |v, c| v * 10 + u32::from(c - b'0')))
}

/// `YYYY-MM-DD` of a year from 1, read directly: the text bulk loads
/// carry, which PostgreSQL's reading would answer the same.
fn iso_date(b: &[u8]) -> Option<NaiveDate> {
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let y = digits(b, 0, 4)?;
    let d = NaiveDate::from_ymd_opt(y as i32, digits(b, 5, 2)?, digits(b, 8, 2)?)?;
    (y >= 1).then_some(d)
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` (or a `T`), read directly as
/// [`iso_date`]; other text (a 7th fractional digit, `24:00:00`, a zone)
/// takes PostgreSQL's whole reading.
fn iso_timestamp(b: &[u8]) -> Option<NaiveDateTime> {
    if b.len() < 19 || !matches!(b[10], b' ' | b'T') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let date = iso_date(&b[..10])?;
    let micros = match &b[19..] {
        [] => 0,
        [b'.', f @ ..] if (1..=6).contains(&f.len()) => {
            digits(f, 0, f.len())? * 10u32.pow(6 - f.len() as u32)
        }
        _ => return None,
    };
    let time = chrono::NaiveTime::from_hms_micro_opt(
        digits(b, 11, 2)?,
        digits(b, 14, 2)?,
        digits(b, 17, 2)?,
        micros,
    )?;
    Some(date.and_time(time))
}

/// `'<s>'::date` as PostgreSQL reads it.
pub fn date_value(s: &str) -> Result<NaiveDate> {
    if let Some(d) = iso_date(s.as_bytes()).filter(|_| s.len() == 10) {
        return Ok(d);
    }
    let days = match date_in_at(s, Some(local_now()))? {
        PgDate::Days(d) => d,
        PgDate::Infinity | PgDate::NegInfinity => {
            return Err(Error::unsupported("the dates infinity and -infinity"))
        }
    };
    // Past chrono's years (262,142) only far beyond the shards' anyway.
    let d = pg_epoch()
        .date()
        .checked_add_signed(chrono::Duration::days(days.into()))
        .ok_or_else(|| match days < 0 {
            true => Error::unsupported("dates before 0001-01-01 (BC)"),
            false => Error::unsupported("dates after 9999-12-31"),
        })?;
    supported_year(d.year())?;
    Ok(d)
}

/// `'<s>'::timestamp` as PostgreSQL reads it.
pub fn timestamp_value(s: &str) -> Result<NaiveDateTime> {
    if let Some(t) = iso_timestamp(s.as_bytes()) {
        return Ok(t);
    }
    let micros = match timestamp_in_at(s, Some(local_now()))? {
        PgTimestamp::Micros(m) => m,
        PgTimestamp::Infinity | PgTimestamp::NegInfinity => {
            return Err(Error::unsupported("the timestamps infinity and -infinity"))
        }
    };
    // Past chrono's range only beyond years 262,000: out of the shards' anyway.
    let days = micros.div_euclid(USECS_PER_DAY);
    if days.abs() > 100_000_000 {
        return Err(Error::unsupported("dates after 9999-12-31"));
    }
    let t = pg_epoch() + chrono::Duration::microseconds(micros);
    supported_year(t.year())?;
    Ok(t)
}

/// `[+-]HH[:MM]` at the end of ISO text after its seconds: where it
/// starts, and the offset in seconds east.
fn iso_offset(b: &[u8]) -> Option<(usize, i32)> {
    let n = b.len();
    let (at, h, m) = if n >= 6 && b[n - 3] == b':' {
        (n - 6, digits(b, n - 5, 2)?, digits(b, n - 2, 2)?)
    } else {
        (n.checked_sub(3)?, digits(b, n.checked_sub(2)?, 2)?, 0)
    };
    let sign = match b.get(at)? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    if h > 15 || m > 59 {
        return None;
    }
    Some((at, sign * (h * 3600 + m * 60) as i32))
}

/// `'<s>'::timestamptz` as PostgreSQL reads it, in the session's zone
/// (ISO text with or without a numeric offset is read directly).
pub fn timestamptz_value(s: &str) -> Result<chrono::DateTime<chrono::Utc>> {
    let b = s.as_bytes();
    let direct = match iso_offset(b) {
        Some((at, east)) => {
            iso_timestamp(&b[..at]).map(|t| t - chrono::Duration::seconds(east.into()))
        }
        None => iso_timestamp(b).map(|t| crate::tz::session_zone().to_utc(&t)),
    };
    let utc = match direct {
        Some(t) => t,
        None => {
            let zone = crate::tz::session_zone();
            let micros = match timestamptz_in_at(s, Some(local_now()), &zone)? {
                PgTimestamp::Micros(m) => m,
                PgTimestamp::Infinity | PgTimestamp::NegInfinity => {
                    return Err(Error::unsupported("the timestamps infinity and -infinity"))
                }
            };
            if micros.div_euclid(USECS_PER_DAY).abs() > 100_000_000 {
                return Err(Error::unsupported("dates after 9999-12-31"));
            }
            pg_epoch() + chrono::Duration::microseconds(micros)
        }
    };
    supported_year(utc.year())?;
    Ok(utc.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_timestamps_become_chrono_values() {
        assert_eq!(
            date_value("January 8, 1999").unwrap().to_string(),
            "1999-01-08"
        );
        assert_eq!(
            timestamp_value("1999-01-08 04:05:06.7894567")
                .unwrap()
                .to_string(),
            "1999-01-08 04:05:06.789457"
        );
        assert_eq!(
            date_value("0055-08-10 BC").unwrap_err().sqlstate().code(),
            "0A000"
        );
        assert_eq!(
            date_value("infinity").unwrap_err().sqlstate().code(),
            "0A000"
        );
        assert_eq!(
            date_value("1997-02-29").unwrap_err().sqlstate().code(),
            "22008"
        );
        assert_eq!(
            date_value("0000-06-15").unwrap_err().sqlstate().code(),
            "22008"
        );
        assert!(date_value("today").is_ok());
        // PostgreSQL's last date is past chrono's: refused, never a panic.
        for s in ["5874897-12-31", "4714-11-24 BC", "J2147483493"] {
            assert_eq!(date_value(s).unwrap_err().sqlstate().code(), "0A000", "{s}");
        }
        for s in ["294276-12-31 23:59:59", "4714-11-24 00:00:00 BC"] {
            assert_eq!(
                timestamp_value(s).unwrap_err().sqlstate().code(),
                "0A000",
                "{s}"
            );
            assert_eq!(
                timestamptz_value(s).unwrap_err().sqlstate().code(),
                "0A000",
                "{s}"
            );
        }
    }

    #[test]
    fn iso_text_reads_directly_as_postgres_reads_it() {
        for s in ["1999-01-08", "0001-01-01", "2024-02-29", "9999-12-31"] {
            assert_eq!(iso_date(s.as_bytes()), Some(date_value(s).unwrap()), "{s}");
        }
        for s in ["0000-06-15", "1997-02-29", "1999-13-01", "99-01-08"] {
            assert_eq!(iso_date(s.as_bytes()), None, "{s}");
        }
        for s in [
            "1999-01-08 04:05:06",
            "1999-01-08T04:05:06.5",
            "1999-01-08 23:59:59.999999",
        ] {
            let t = iso_timestamp(s.as_bytes()).unwrap();
            let micros = match super::super::timestamp_in(s).unwrap() {
                PgTimestamp::Micros(m) => m,
                _ => unreachable!(),
            };
            assert_eq!((t - pg_epoch()).num_microseconds(), Some(micros), "{s}");
        }
        for s in [
            "1999-01-08 24:00:00",
            "1999-01-08 04:05:06.1234567",
            "1999-01-08 04:05:06+02",
            "1999-01-08 04:05",
        ] {
            assert_eq!(iso_timestamp(s.as_bytes()), None, "{s}");
        }
    }
}
