//! PostgreSQL 15's interval input (`interval_in`), for IntervalStyle
//! `postgres`: text such as `1 day 02:03`, `-1-2`, `3 hours ago`,
//! `P1Y2M` or `P0001-02-03T04:05:06` becomes months, days and
//! microseconds exactly as PostgreSQL computes them, with its SQLSTATEs
//! and messages for text it refuses.
//!
//! The reading has PostgreSQL's two passes: `tokens` splits the text
//! into fields (`ParseDateTime`), `decode` reads the fields right to
//! left (`DecodeInterval`); text that is not in that format is then tried
//! as ISO 8601 (`iso8601`). Fractions spill into smaller units through
//! the same double arithmetic PostgreSQL uses, so rounding agrees to the
//! microsecond.

pub mod compare;
mod decode;
mod iso8601;
mod tokens;
pub mod udf;

#[cfg(test)]
mod tests;

use common::{Error, SqlState};

/// An interval as PostgreSQL keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgInterval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

/// The fields an interval type admits (`INTERVAL DAY`, `INTERVAL HOUR TO
/// SECOND`...): they decide the unit of a trailing bare number and which
/// low-order parts are dropped afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fields {
    #[default]
    All,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    YearToMonth,
    DayToHour,
    DayToMinute,
    DayToSecond,
    HourToMinute,
    HourToSecond,
    MinuteToSecond,
}

impl PgInterval {
    /// The interval as Arrow keeps it (nanoseconds): a time part beyond
    /// ±2,562,047 hours, which PostgreSQL's microseconds hold and Arrow's
    /// nanoseconds do not, is refused (0A000) rather than wrapped.
    pub fn to_arrow(self) -> Result<datafusion::arrow::datatypes::IntervalMonthDayNano, Error> {
        let nanoseconds = self.micros.checked_mul(1000).ok_or_else(|| {
            Error::unsupported("an interval with a time part beyond 2562047 hours")
        })?;
        Ok(datafusion::arrow::datatypes::IntervalMonthDayNano {
            months: self.months,
            days: self.days,
            nanoseconds,
        })
    }
}

/// PostgreSQL's interval input: `'<s>'::interval`.
pub fn interval_in(s: &str) -> Result<PgInterval, Error> {
    interval_in_fields(s, Fields::All)
}

/// `'<s>'::interval <fields>`, e.g. `INTERVAL '1:30' MINUTE TO SECOND`.
pub fn interval_in_fields(s: &str, range: Fields) -> Result<PgInterval, Error> {
    // PostgreSQL sees a C string: nothing after a NUL exists for it.
    let s = s.split('\0').next().unwrap_or_default();
    let parsed = match tokens::split_fields(s.as_bytes()) {
        Ok(fields) => decode::decode_fields(&fields, range),
        Err(e) => Err(e),
    };
    let parts = match parsed {
        Err(DtErr::BadFormat) => iso8601::decode_iso8601(s.as_bytes()),
        other => other,
    }
    .map_err(|e| e.into_error(s))?;
    let interval = parts.into_interval().ok_or_else(|| Error::Sql {
        state: SqlState("22008"),
        message: "interval out of range".into(),
    })?;
    Ok(restrict(interval, range))
}

/// Why a decoder gave up: PostgreSQL's `DTERR_BAD_FORMAT` and
/// `DTERR_FIELD_OVERFLOW`, the only two interval input meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DtErr {
    BadFormat,
    FieldOverflow,
}

impl DtErr {
    /// The error PostgreSQL reports for `text` (an overflowing field of an
    /// interval is 22015, not the date/time 22008).
    fn into_error(self, text: &str) -> Error {
        match self {
            DtErr::BadFormat => Error::Sql {
                state: SqlState::INVALID_DATETIME_FORMAT,
                message: format!("invalid input syntax for type interval: \"{text}\""),
            },
            DtErr::FieldOverflow => Error::Sql {
                state: SqlState("22015"),
                message: format!("interval field value out of range: \"{text}\""),
            },
        }
    }
}

type Step = Result<(), DtErr>;

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;
const USECS_PER_DAY: i64 = 24 * USECS_PER_HOUR;
const DAYS_PER_MONTH: i32 = 30;
const MONTHS_PER_YEAR: i32 = 12;

/// The parts read so far (PostgreSQL's `pg_itm_in`): years are kept
/// apart from months until the end, each part overflowing on its own.
#[derive(Debug, Clone, Copy, Default)]
struct Parts {
    years: i32,
    months: i32,
    days: i32,
    micros: i64,
}

fn overflow_if(failed: bool) -> Step {
    if failed {
        Err(DtErr::FieldOverflow)
    } else {
        Ok(())
    }
}

/// `val` as an `i32`, or the field overflows.
fn to_i32(val: i64) -> Result<i32, DtErr> {
    i32::try_from(val).map_err(|_| DtErr::FieldOverflow)
}

impl Parts {
    /// Adds `(val + frac) * scale` microseconds.
    fn add_micros(&mut self, val: i64, frac: f64, scale: i64) -> Step {
        self.micros = val
            .checked_mul(scale)
            .and_then(|v| v.checked_add(self.micros))
            .ok_or(DtErr::FieldOverflow)?;
        self.add_fract_micros(frac, scale)
    }

    /// Adds `frac * scale` microseconds, rounding off a fraction of a
    /// microsecond beyond one half (away from zero), as PostgreSQL does.
    fn add_fract_micros(&mut self, frac: f64, scale: i64) -> Step {
        if frac == 0.0 {
            return Ok(());
        }
        let scaled = frac * scale as f64;
        let mut usec = scaled as i64;
        let rest = scaled - usec as f64;
        if rest > 0.5 {
            usec += 1;
        } else if rest < -0.5 {
            usec -= 1;
        }
        self.micros = self.micros.checked_add(usec).ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    /// Adds `frac * scale` days: whole days to the days, the rest as time.
    fn add_fract_days(&mut self, frac: f64, scale: i32) -> Step {
        if frac == 0.0 {
            return Ok(());
        }
        let scaled = frac * f64::from(scale);
        let whole = scaled as i32;
        self.days = self.days.checked_add(whole).ok_or(DtErr::FieldOverflow)?;
        self.add_fract_micros(scaled - f64::from(whole), USECS_PER_DAY)
    }

    /// Adds `frac * scale` years as months, rounded half to even; anything
    /// smaller than a month is dropped.
    fn add_fract_years(&mut self, frac: f64, scale: i32) -> Step {
        let months = (frac * f64::from(scale) * f64::from(MONTHS_PER_YEAR)).round_ties_even();
        self.months = self
            .months
            .checked_add(months as i32)
            .ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    fn add_days(&mut self, val: i64, scale: i32) -> Step {
        let days = to_i32(val)?.checked_mul(scale);
        self.days = days
            .and_then(|d| d.checked_add(self.days))
            .ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    fn add_months(&mut self, val: i64) -> Step {
        self.months = to_i32(val)?
            .checked_add(self.months)
            .ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    fn add_years(&mut self, val: i64, scale: i32) -> Step {
        let years = to_i32(val)?.checked_mul(scale);
        self.years = years
            .and_then(|y| y.checked_add(self.years))
            .ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    /// `ago`: every part changes sign.
    fn negate(&mut self) -> Step {
        self.micros = self.micros.checked_neg().ok_or(DtErr::FieldOverflow)?;
        self.days = self.days.checked_neg().ok_or(DtErr::FieldOverflow)?;
        self.months = self.months.checked_neg().ok_or(DtErr::FieldOverflow)?;
        self.years = self.years.checked_neg().ok_or(DtErr::FieldOverflow)?;
        Ok(())
    }

    /// The interval, or `None` when years and months together leave the
    /// `i32` months (PostgreSQL's 22008 `interval out of range`).
    fn into_interval(self) -> Option<PgInterval> {
        let months = i64::from(self.years) * i64::from(MONTHS_PER_YEAR) + i64::from(self.months);
        Some(PgInterval {
            months: i32::try_from(months).ok()?,
            days: self.days,
            micros: self.micros,
        })
    }
}

/// Drops the parts below the last of `range`'s fields (PostgreSQL's
/// `AdjustIntervalForTypmod` without a seconds precision).
fn restrict(mut i: PgInterval, range: Fields) -> PgInterval {
    let truncate = |micros: i64, per: i64| micros / per * per;
    match range {
        Fields::Year => {
            i.months = i.months / MONTHS_PER_YEAR * MONTHS_PER_YEAR;
            i.days = 0;
            i.micros = 0;
        }
        Fields::Month | Fields::YearToMonth => {
            i.days = 0;
            i.micros = 0;
        }
        Fields::Day => i.micros = 0,
        Fields::Hour | Fields::DayToHour => i.micros = truncate(i.micros, USECS_PER_HOUR),
        Fields::Minute | Fields::DayToMinute | Fields::HourToMinute => {
            i.micros = truncate(i.micros, USECS_PER_MINUTE)
        }
        Fields::All
        | Fields::Second
        | Fields::DayToSecond
        | Fields::HourToSecond
        | Fields::MinuteToSecond => {}
    }
    i
}
