//! The datums Tessera keeps for PostgreSQL's date and timestamp input:
//! chrono's dates and times, years 1 to 9999 (what the shards store).
//! Relative words (`today`, `now`) read against the current time in the
//! session's zone; the infinities and years BC are refused (0A000).

use chrono::{Datelike, NaiveDate, NaiveDateTime};

use super::{date_in_at, timestamp_in_at, PgDate, PgTimestamp, USECS_PER_DAY};
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

/// `'<s>'::date` as PostgreSQL reads it.
pub fn date_value(s: &str) -> Result<NaiveDate> {
    let days = match date_in_at(s, Some(local_now()))? {
        PgDate::Days(d) => d,
        PgDate::Infinity | PgDate::NegInfinity => {
            return Err(Error::unsupported("the dates infinity and -infinity"))
        }
    };
    let d = pg_epoch().date() + chrono::Duration::days(days.into());
    supported_year(d.year())?;
    Ok(d)
}

/// `'<s>'::timestamp` as PostgreSQL reads it.
pub fn timestamp_value(s: &str) -> Result<NaiveDateTime> {
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
    }
}
