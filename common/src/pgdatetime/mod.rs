//! PostgreSQL 15's `date` and `timestamp` (without time zone) input
//! (`date_in`, `timestamp_in`) for DateStyle `ISO, MDY`: `1999-01-08`,
//! `January 8, 1999`, `1/8/1999`, `19990108 040506`, `1999.008`,
//! `J2451187`, `epoch`, `infinity`, `2000-01-01 04:05:06.789 BC` and the
//! rest become PostgreSQL's days or microseconds since 2000-01-01, with
//! its SQLSTATEs and messages for text it refuses.
//!
//! The reading has PostgreSQL's passes: `tokens` splits the text into
//! fields (`ParseDateTime`), `decode` reads them left to right
//! (`DecodeDateTime`) with `fields` reading each kind of field
//! (`DecodeDate`, `DecodeNumber`, `DecodeTime`...), and `calendar` checks
//! and counts the days (`ValidateDate`, `date2j`). A time zone in the
//! text is checked and then ignored, as PostgreSQL ignores it for these
//! two types.
//!
//! `today`, `tomorrow`, `yesterday` and `now` depend on the current
//! time: [`date_in`] and [`timestamp_in`] refuse text that uses them
//! with 0A000 (after every check PostgreSQL makes), and [`date_in_at`] and
//! [`timestamp_in_at`] read them against a given local time.

mod calendar;
mod decode;
mod fields;
mod keywords;
mod mask;
pub mod tokens;
mod values;
mod zone_abbrevs;
mod zoned;

pub use fields::{fraction, strtoint, strtol};
pub use values::{date_value, timestamp_value, timestamptz_value};
pub use zoned::{abbrev_east_at, timestamptz_in_at, zone_abbreviation, ZoneAbbrev};

#[cfg(test)]
mod tests;

use crate::{Error, SqlState};

/// A date as PostgreSQL keeps it: days since 2000-01-01, or an infinity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgDate {
    Days(i32),
    Infinity,
    NegInfinity,
}

/// A timestamp without time zone: microseconds since 2000-01-01
/// 00:00:00, or an infinity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgTimestamp {
    Micros(i64),
    Infinity,
    NegInfinity,
}

/// PostgreSQL's date input: `'<s>'::date`. Text using `today`, `now`...
/// is refused with 0A000 (see [`date_in_at`]).
pub fn date_in(s: &str) -> Result<PgDate, Error> {
    date_in_at(s, None)
}

/// PostgreSQL's timestamp input: `'<s>'::timestamp`. Text using
/// `today`, `now`... is refused with 0A000 (see [`timestamp_in_at`]).
pub fn timestamp_in(s: &str) -> Result<PgTimestamp, Error> {
    timestamp_in_at(s, None)
}

/// [`date_in`], reading `today`, `now`... against `now`: the current
/// transaction's start as a local timestamp (microseconds since
/// 2000-01-01 in the session's zone); with `None` such text is refused.
pub fn date_in_at(s: &str, now: Option<i64>) -> Result<PgDate, Error> {
    let s = s.split('\0').next().unwrap_or_default();
    let d = decode::decode(s, DATE_BUF_LEN, now).map_err(|e| e.into_error(s, "date"))?;
    let tm = match d.kind {
        Kind::Date => d.tm,
        Kind::Epoch => Tm::epoch(),
        Kind::Infinity => return Ok(PgDate::Infinity),
        Kind::NegInfinity => return Ok(PgDate::NegInfinity),
    };
    let out_of_range = || Error::Sql {
        state: SqlState("22008"),
        message: format!("date out of range: \"{s}\""),
    };
    if !calendar::is_valid_julian(tm.year, tm.mon, tm.mday) {
        return Err(out_of_range());
    }
    let days = calendar::date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    if !(-POSTGRES_EPOCH_JDATE..DATE_END_JULIAN - POSTGRES_EPOCH_JDATE).contains(&days) {
        return Err(out_of_range());
    }
    d.check_relative(s)?;
    Ok(PgDate::Days(days))
}

/// [`timestamp_in`], reading `today`, `now`... against `now` (see
/// [`date_in_at`]).
pub fn timestamp_in_at(s: &str, now: Option<i64>) -> Result<PgTimestamp, Error> {
    let s = s.split('\0').next().unwrap_or_default();
    let d = decode::decode(s, TIMESTAMP_BUF_LEN, now).map_err(|e| e.into_error(s, "timestamp"))?;
    let micros = match d.kind {
        Kind::Date => d.tm.to_timestamp().ok_or_else(|| Error::Sql {
            state: SqlState("22008"),
            message: format!("timestamp out of range: \"{s}\""),
        })?,
        Kind::Epoch => -(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) as i64 * USECS_PER_DAY,
        Kind::Infinity => return Ok(PgTimestamp::Infinity),
        Kind::NegInfinity => return Ok(PgTimestamp::NegInfinity),
    };
    d.check_relative(s)?;
    Ok(PgTimestamp::Micros(micros))
}

/// `date_in` splits into a buffer of 129 bytes, `timestamp_in` into one
/// of 153 (PostgreSQL's `MAXDATELEN + 1` and `MAXDATELEN + MAXDATEFIELDS`).
const DATE_BUF_LEN: usize = 129;
const TIMESTAMP_BUF_LEN: usize = 153;

const POSTGRES_EPOCH_JDATE: i32 = 2_451_545;
const UNIX_EPOCH_JDATE: i32 = 2_440_588;
/// The first Julian day past the last date (5874898-01-01).
const DATE_END_JULIAN: i32 = 2_147_483_494;
const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;
/// Timestamps run from 4714-11-24 BC to before 294277-01-01.
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// Why decoding gave up (PostgreSQL's `DTERR_*`, and the unknown zone
/// name it reports at once).
#[derive(Debug, Clone, PartialEq, Eq)]
enum DtErr {
    BadFormat,
    FieldOverflow,
    /// A month or day out of range: perhaps the wrong DateStyle.
    MdFieldOverflow,
    TzDispOverflow,
    UnknownZone(String),
}

impl DtErr {
    fn into_error(self, text: &str, type_name: &str) -> Error {
        let (state, message) = match self {
            DtErr::BadFormat => (
                SqlState::INVALID_DATETIME_FORMAT,
                format!("invalid input syntax for type {type_name}: \"{text}\""),
            ),
            DtErr::FieldOverflow | DtErr::MdFieldOverflow => (
                SqlState("22008"),
                format!("date/time field value out of range: \"{text}\""),
            ),
            DtErr::TzDispOverflow => (
                SqlState("22009"),
                format!("time zone displacement out of range: \"{text}\""),
            ),
            DtErr::UnknownZone(zone) => (
                SqlState("22023"),
                format!("time zone \"{zone}\" not recognized"),
            ),
        };
        Error::Sql { state, message }
    }
}

/// What the text denotes (PostgreSQL's `dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Date,
    Epoch,
    Infinity,
    NegInfinity,
}

/// The broken-down date and time read so far (PostgreSQL's `pg_tm` and
/// `fsec`): a year of 0 is 1 BC. Arithmetic wraps as PostgreSQL's does
/// (it is built with `-fwrapv`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tm {
    year: i32,
    mon: i32,
    mday: i32,
    yday: i32,
    hour: i32,
    min: i32,
    sec: i32,
    /// Microseconds, 0..=1,000,000.
    fsec: i32,
}

impl Tm {
    fn epoch() -> Tm {
        Tm {
            year: 1970,
            mon: 1,
            mday: 1,
            ..Tm::default()
        }
    }

    /// PostgreSQL's `tm2timestamp` without a zone: `None` out of range.
    fn to_timestamp(self) -> Option<i64> {
        if !calendar::is_valid_julian(self.year, self.mon, self.mday) {
            return None;
        }
        let date =
            i64::from(calendar::date2j(self.year, self.mon, self.mday) - POSTGRES_EPOCH_JDATE);
        let secs = self
            .hour
            .wrapping_mul(60)
            .wrapping_add(self.min)
            .wrapping_mul(60)
            .wrapping_add(self.sec);
        let time = i64::from(secs)
            .wrapping_mul(USECS_PER_SEC)
            .wrapping_add(i64::from(self.fsec));
        let result = date.wrapping_mul(USECS_PER_DAY).wrapping_add(time);
        if result.wrapping_sub(time) / USECS_PER_DAY != date
            || (result < 0 && date > 0)
            || (result > 0 && date < -1)
        {
            return None;
        }
        (MIN_TIMESTAMP..END_TIMESTAMP)
            .contains(&result)
            .then_some(result)
    }
}

/// The zone the text gives its time in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ZoneSpec {
    /// None: the session's.
    Session,
    /// A fixed offset, seconds west of UTC (a number or an abbreviation).
    Offset(i32),
    /// A zone name (lowercase).
    Named(String),
    /// A dynamic abbreviation (as written) and the zone it is read in.
    Abbrev(String, &'static str),
}

/// The decoded text.
#[derive(Debug, Clone)]
struct Decoded {
    kind: Kind,
    tm: Tm,
    /// A word meaning the current time was read without one given.
    relative: bool,
    /// Read only by `timestamptz` input; `date` and `timestamp` ignore it.
    zone: ZoneSpec,
}

impl Decoded {
    fn check_relative(&self, text: &str) -> Result<(), Error> {
        if !self.relative {
            return Ok(());
        }
        Err(Error::Sql {
            state: SqlState("0A000"),
            message: format!(
                "date/time input \"{text}\" depends on the current time (now, today, tomorrow, yesterday)"
            ),
        })
    }
}
