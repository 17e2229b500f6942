//! `extract` and `date_part` as PostgreSQL 15 answers them: one scalar
//! UDF, `pg_extract(unit, value [, as_date_part])`, which the SQL
//! spellings plan `EXTRACT(unit FROM value)` and `date_part('unit',
//! value)` as (`plan::pgsyntax::spellings`).
//!
//! `extract` is numeric: its scale is fixed by the unit and the value's
//! type (`second` and `epoch` of a timestamp, time or interval 6 places,
//! `milliseconds` 3, every other unit and every unit of a date 0), so the
//! UDF answers `Decimal128(38, scale)`. `date_part` is float8 in PostgreSQL
//! and reads a date as the timestamp at its midnight (its SQL definition
//! casts it): the spelling casts the answer to double precision and passes
//! `as_date_part`. Units are PostgreSQL's spellings (`DecodeUnits`: the
//! first 10 characters of the lowercased name, with its aliases); a unit
//! the value's type has no field for is 0A000 and an unknown one 22023,
//! with PostgreSQL's messages, raised when a row reaches it. `julian` of a
//! timestamp is a quotient whose scale depends on the value (PostgreSQL
//! divides by microseconds per day) and is refused (0A000).

use std::sync::Arc;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike};
use common::{Error, SqlState};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Date32Type, DurationMicrosecondType, Field, FieldRef, IntervalMonthDayNanoType,
    IntervalUnit, Time64MicrosecondType, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};

/// The UDF's name, as the spellings call it.
pub const NAME: &str = "pg_extract";

/// A field PostgreSQL's `extract` knows (`DTK_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    IsoYear,
    Dow,
    IsoDow,
    Doy,
    Julian,
    Epoch,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
}

/// PostgreSQL's `DecodeUnits` then `DecodeSpecial` of a lowercased unit:
/// both tables compare the first 10 characters (`TOKMAXLEN`).
fn decode_unit(lower: &str) -> Option<Unit> {
    use Unit::*;
    let key: String = lower.chars().take(10).collect();
    Some(match key.as_str() {
        "us" | "usec" | "usecs" | "useconds" | "microsecon" => Microseconds,
        "ms" | "msec" | "msecs" | "mseconds" | "millisecon" => Milliseconds,
        "s" | "sec" | "secs" | "second" | "seconds" => Second,
        "m" | "min" | "mins" | "minute" | "minutes" => Minute,
        "h" | "hr" | "hrs" | "hour" | "hours" => Hour,
        "d" | "day" | "days" => Day,
        "w" | "week" | "weeks" => Week,
        "mon" | "mons" | "month" | "months" => Month,
        "qtr" | "quarter" => Quarter,
        "y" | "yr" | "yrs" | "year" | "years" => Year,
        "dec" | "decs" | "decade" | "decades" => Decade,
        "c" | "cent" | "century" | "centuries" => Century,
        "mil" | "mils" | "millennia" | "millennium" => Millennium,
        "isoyear" => IsoYear,
        "dow" => Dow,
        "isodow" => IsoDow,
        "doy" => Doy,
        "j" | "jd" | "julian" => Julian,
        "epoch" => Epoch,
        "timezone" => Timezone,
        "timezone_h" => TimezoneHour,
        "timezone_m" => TimezoneMinute,
        _ => return None,
    })
}

/// The kinds of value `extract` reads, by PostgreSQL's type name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Date,
    Timestamp,
    TimestampTz,
    Time,
    Interval,
}

impl Kind {
    fn of(t: &DataType) -> Option<Kind> {
        Some(match t {
            DataType::Date32 | DataType::Date64 => Kind::Date,
            DataType::Timestamp(_, None) => Kind::Timestamp,
            DataType::Timestamp(_, Some(_)) => Kind::TimestampTz,
            DataType::Time32(_) | DataType::Time64(_) => Kind::Time,
            // `timestamp - timestamp` is a duration in DataFusion, an
            // interval of days and time in PostgreSQL.
            DataType::Interval(_) | DataType::Duration(_) => Kind::Interval,
            _ => return None,
        })
    }

    fn pg_name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::Timestamp => "timestamp without time zone",
            Kind::TimestampTz => "timestamp with time zone",
            Kind::Time => "time without time zone",
            Kind::Interval => "interval",
        }
    }

    /// Whether values of this kind have the field.
    fn has(self, u: Unit) -> bool {
        use Unit::*;
        match self {
            Kind::Date => !matches!(
                u,
                Microseconds
                    | Milliseconds
                    | Second
                    | Minute
                    | Hour
                    | Timezone
                    | TimezoneHour
                    | TimezoneMinute
            ),
            Kind::Timestamp => !matches!(u, Timezone | TimezoneHour | TimezoneMinute),
            Kind::TimestampTz => true,
            Kind::Time => matches!(
                u,
                Microseconds | Milliseconds | Second | Minute | Hour | Epoch
            ),
            Kind::Interval => !matches!(
                u,
                Week | IsoYear
                    | Dow
                    | IsoDow
                    | Doy
                    | Julian
                    | Timezone
                    | TimezoneHour
                    | TimezoneMinute
            ),
        }
    }
}

/// The places of the answer: the seconds field and the epoch keep
/// microseconds, milliseconds three places; a date's fields are whole.
fn scale(kind: Kind, u: Unit) -> i8 {
    match (kind, u) {
        (Kind::Date, _) => 0,
        (_, Unit::Second | Unit::Epoch) => 6,
        (_, Unit::Milliseconds) => 3,
        _ => 0,
    }
}

/// What a call answers for the unit text and the value's kind: its scale,
/// or the error a row raises.
fn plan(unit: &str, kind: Kind) -> std::result::Result<(Unit, i8), Error> {
    let lower = unit.to_lowercase();
    let Some(u) = decode_unit(&lower) else {
        return Err(Error::Sql {
            state: SqlState::INVALID_PARAMETER_VALUE,
            message: format!(
                "unit \"{lower}\" not recognized for type {}",
                kind.pg_name()
            ),
        });
    };
    if !kind.has(u) {
        return Err(Error::Sql {
            state: SqlState::FEATURE_NOT_SUPPORTED,
            message: format!("unit \"{lower}\" not supported for type {}", kind.pg_name()),
        });
    }
    if u == Unit::Julian && kind != Kind::Date {
        return Err(Error::unsupported(format!(
            "extract(julian) of a {}: its scale depends on the value",
            kind.pg_name()
        )));
    }
    Ok((u, scale(kind, u)))
}

fn fail(e: Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// PostgreSQL's year of an astronomical year (year 0 is 1 BC, -1).
fn pg_year(y: i64) -> i64 {
    if y > 0 {
        y
    } else {
        y - 1
    }
}

/// Julian day number of a date (`date2j`): 0001-01-01 is 1721426.
fn julian(d: NaiveDate) -> i64 {
    d.num_days_from_ce() as i64 + 1_721_425
}

/// A calendar field of the day `d` (any field a date has).
fn date_field(d: NaiveDate, u: Unit) -> i64 {
    let y = d.year() as i64;
    match u {
        Unit::Day => d.day() as i64,
        Unit::Month => d.month() as i64,
        Unit::Quarter => (d.month0() as i64) / 3 + 1,
        Unit::Week => d.iso_week().week() as i64,
        Unit::Year => pg_year(y),
        Unit::Decade if y > 0 => y / 10,
        Unit::Decade => -((8 - (y - 1)) / 10),
        Unit::Century if y > 0 => (y + 99) / 100,
        Unit::Century => -((99 - (y - 1)) / 100),
        Unit::Millennium if y > 0 => (y + 999) / 1000,
        Unit::Millennium => -((999 - (y - 1)) / 1000),
        Unit::IsoYear => {
            let iy = d.iso_week().year() as i64;
            if iy <= 0 {
                iy - 1
            } else {
                iy
            }
        }
        Unit::Dow => d.weekday().num_days_from_sunday() as i64,
        Unit::IsoDow => d.weekday().number_from_monday() as i64,
        Unit::Doy => d.ordinal() as i64,
        Unit::Julian => julian(d),
        Unit::Epoch => (d - epoch_day()).num_days() * 86_400,
        _ => 0,
    }
}

fn epoch_day() -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()
}

/// Microseconds of the minute (seconds and fraction): the unscaled value
/// of `microseconds`, `milliseconds` (3 places) and `second` (6).
fn seconds_field(us_of_day: i64) -> i128 {
    (us_of_day % 60_000_000) as i128
}

/// A field of a timestamp (microseconds since 1970, read as local time).
fn timestamp_field(us: i64, u: Unit) -> Option<i128> {
    let ts: NaiveDateTime = DateTime::from_timestamp_micros(us)?.naive_utc();
    let of_day = ts.num_seconds_from_midnight() as i64 * 1_000_000
        + (ts.nanosecond() / 1000).min(999_999) as i64;
    Some(match u {
        Unit::Microseconds | Unit::Milliseconds | Unit::Second => seconds_field(of_day),
        Unit::Minute => ts.minute() as i128,
        Unit::Hour => ts.hour() as i128,
        Unit::Epoch => us as i128,
        Unit::Timezone | Unit::TimezoneHour | Unit::TimezoneMinute => 0,
        other => date_field(ts.date(), other) as i128,
    })
}

fn time_field(us: i64, u: Unit) -> i128 {
    match u {
        Unit::Microseconds | Unit::Milliseconds | Unit::Second => seconds_field(us),
        Unit::Minute => (us / 60_000_000 % 60) as i128,
        Unit::Hour => (us / 3_600_000_000) as i128,
        _ => us as i128,
    }
}

/// A field of an interval, as PostgreSQL's `interval2itm` splits it (no
/// carry between months, days and time; C's truncating division).
fn interval_field(months: i32, days: i32, nanos: i64, u: Unit) -> i128 {
    let time = nanos / 1000;
    let hours = time / 3_600_000_000;
    let minutes = (time - hours * 3_600_000_000) / 60_000_000;
    let secs = time - hours * 3_600_000_000 - minutes * 60_000_000;
    let (years, mon) = ((months / 12) as i128, (months % 12) as i128);
    match u {
        Unit::Microseconds | Unit::Milliseconds | Unit::Second => secs as i128,
        Unit::Minute => minutes as i128,
        Unit::Hour => hours as i128,
        Unit::Day => days as i128,
        Unit::Month => mon,
        Unit::Quarter => mon / 3 + 1,
        Unit::Year => years,
        Unit::Decade => years / 10,
        Unit::Century => years / 100,
        Unit::Millennium => years / 1000,
        // 365.25 days a year and 30 a month, in quarter days.
        _ => {
            let quarter_days = 1461 * years + 120 * mon + 4 * days as i128;
            time as i128 + quarter_days * 21_600 * 1_000_000
        }
    }
}

/// The UDF; see the module documentation.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PgExtract {
    signature: Signature,
}

impl Default for PgExtract {
    fn default() -> Self {
        PgExtract {
            signature: Signature::one_of(
                vec![TypeSignature::Any(2), TypeSignature::Any(3)],
                Volatility::Immutable,
            ),
        }
    }
}

fn unit_text(v: &ScalarValue) -> Option<&str> {
    v.try_as_str().flatten()
}

/// The kind a call reads: a date read by `date_part` is a timestamp.
fn kind_of(t: &DataType, as_date_part: bool) -> Result<Kind> {
    let name = if as_date_part {
        "date_part"
    } else {
        "pg_catalog.extract"
    };
    match Kind::of(t) {
        Some(Kind::Date) if as_date_part => Ok(Kind::Timestamp),
        Some(k) => Ok(k),
        // An untyped constant (text or NULL) fits several of PostgreSQL's
        // candidates.
        None if matches!(
            t,
            DataType::Null | DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
        ) =>
        {
            Err(fail(Error::Sql {
                state: SqlState("42725"),
                message: format!("function {name}(unknown, unknown) is not unique"),
            }))
        }
        None => Err(fail(Error::Sql {
            state: SqlState::UNDEFINED_FUNCTION,
            message: format!("function {name}(unknown, {t}) does not exist"),
        })),
    }
}

fn flag(v: Option<&ScalarValue>) -> bool {
    matches!(v, Some(ScalarValue::Boolean(Some(true))))
}

impl ScalarUDFImpl for PgExtract {
    fn name(&self) -> &str {
        NAME
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Err(DataFusionError::Internal(
            "pg_extract is typed from its arguments".into(),
        ))
    }
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let unit = args
            .scalar_arguments
            .first()
            .copied()
            .flatten()
            .ok_or_else(|| {
                fail(Error::unsupported(
                    "extract of a unit that is not a constant",
                ))
            })?;
        let as_date_part = flag(args.scalar_arguments.get(2).copied().flatten());
        let value = args
            .arg_fields
            .get(1)
            .ok_or_else(|| DataFusionError::Internal("pg_extract of nothing".into()))?;
        let kind = kind_of(value.data_type(), as_date_part)?;
        // A unit the type lacks fails when a row reaches it; the column is
        // typed whole meanwhile.
        let scale = unit_text(unit)
            .and_then(|u| plan(u, kind).ok())
            .map_or(0, |(_, s)| s);
        Ok(Arc::new(Field::new(
            NAME,
            DataType::Decimal128(38, scale),
            true,
        )))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let unit = match args.args.first() {
            Some(ColumnarValue::Scalar(s)) => unit_text(s).map(str::to_string),
            _ => {
                return Err(fail(Error::unsupported(
                    "extract of a unit that is not a constant",
                )))
            }
        };
        let as_date_part = flag(match args.args.get(2) {
            Some(ColumnarValue::Scalar(s)) => Some(s),
            _ => None,
        });
        let values = args
            .args
            .get(1)
            .ok_or_else(|| DataFusionError::Internal("pg_extract of nothing".into()))?
            .to_array(n)?;
        let kind = kind_of(values.data_type(), as_date_part)?;
        // A NULL unit: NULL at the scale `return_field_from_args` gave it.
        let out = match unit {
            None => Decimal128Array::new_null(n).with_precision_and_scale(38, 0)?,
            Some(u) => extract_all(&values, &u, kind)?,
        };
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

/// The field of every value (NULL for NULL); the unit's error if a
/// non-null value reaches a unit its type lacks.
fn extract_all(values: &ArrayRef, unit: &str, kind: Kind) -> Result<Decimal128Array> {
    let planned = plan(unit, kind);
    if values.null_count() == values.len() {
        let s = planned.map_or(0, |(_, s)| s);
        return Ok(Decimal128Array::new_null(values.len()).with_precision_and_scale(38, s)?);
    }
    let (u, scale) = planned.map_err(fail)?;
    let out: Decimal128Array = match kind {
        Kind::Date => {
            let days = cast(values, &DataType::Date32)?;
            days.as_primitive::<Date32Type>()
                .iter()
                .map(|d| {
                    d.and_then(|d| epoch_day().checked_add_signed(chrono::Duration::days(d as i64)))
                        .map(|d| date_field(d, u) as i128)
                })
                .collect()
        }
        Kind::Timestamp | Kind::TimestampTz => {
            let zone = match values.data_type() {
                DataType::Timestamp(_, z) => z.clone(),
                _ => None,
            };
            // A date read by `date_part` is its midnight.
            cast(values, &DataType::Timestamp(TimeUnit::Microsecond, zone))?
                .as_primitive::<TimestampMicrosecondType>()
                .iter()
                .map(|v| v.and_then(|v| timestamp_field(v, u)))
                .collect()
        }
        Kind::Time => cast(values, &DataType::Time64(TimeUnit::Microsecond))?
            .as_primitive::<Time64MicrosecondType>()
            .iter()
            .map(|v| v.map(|v| time_field(v, u)))
            .collect(),
        Kind::Interval if matches!(values.data_type(), DataType::Duration(_)) => {
            cast(values, &DataType::Duration(TimeUnit::Microsecond))?
                .as_primitive::<DurationMicrosecondType>()
                .iter()
                .map(|v| {
                    v.map(|us| {
                        // PostgreSQL's `timestamp_mi` justifies hours into
                        // days (both truncated toward zero).
                        let (days, time) = (us / 86_400_000_000, us % 86_400_000_000);
                        interval_field(0, days as i32, time * 1000, u)
                    })
                })
                .collect()
        }
        Kind::Interval => cast(values, &DataType::Interval(IntervalUnit::MonthDayNano))?
            .as_primitive::<IntervalMonthDayNanoType>()
            .iter()
            .map(|v| v.map(|v| interval_field(v.months, v.days, v.nanoseconds, u)))
            .collect(),
    };
    Ok(out.with_precision_and_scale(38, scale)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn units_decode_as_postgres_spells_them() {
        assert_eq!(decode_unit("microseconds"), Some(Unit::Microseconds));
        assert_eq!(decode_unit("millisecondsxyz"), Some(Unit::Milliseconds));
        assert_eq!(decode_unit("timezone_hour"), Some(Unit::TimezoneHour));
        assert_eq!(decode_unit("centuries"), Some(Unit::Century));
        assert_eq!(decode_unit("foo"), None);
        let e = plan("HOUR", Kind::Date).unwrap_err();
        assert_eq!(e.sqlstate().code(), "0A000");
        assert_eq!(e.to_string(), "unit \"hour\" not supported for type date");
        let e = plan("Foo", Kind::Interval).unwrap_err();
        assert_eq!(e.sqlstate().code(), "22023");
        assert_eq!(plan("epoch", Kind::Timestamp).unwrap().1, 6);
        assert_eq!(plan("epoch", Kind::Date).unwrap().1, 0);
        assert_eq!(plan("ms", Kind::Time).unwrap().1, 3);
    }

    #[test]
    fn date_fields_match_postgres() {
        // Answers of PostgreSQL 15.
        let d = date(2020, 8, 11);
        assert_eq!(date_field(d, Unit::Julian), 2_459_073);
        assert_eq!(date_field(d, Unit::Epoch), 1_597_104_000);
        assert_eq!(date_field(d, Unit::Doy), 224);
        assert_eq!(date_field(d, Unit::Week), 33);
        assert_eq!(date_field(d, Unit::Dow), 2);
        assert_eq!(date_field(date(1900, 12, 31), Unit::Century), 19);
        assert_eq!(date_field(date(2001, 1, 1), Unit::Century), 21);
        assert_eq!(date_field(date(1994, 12, 25), Unit::Decade), 199);
        // 1 BC is year 0 here, -1 in PostgreSQL.
        assert_eq!(date_field(date(0, 1, 1), Unit::Year), -1);
        assert_eq!(date_field(date(0, 12, 31), Unit::Century), -1);
        assert_eq!(date_field(date(-10, 1, 1), Unit::Decade), -1);
        assert_eq!(date_field(date(0, 1, 1), Unit::Millennium), -1);
        assert_eq!(date_field(date(0, 1, 1), Unit::IsoYear), -2);
        assert_eq!(date_field(date(0, 1, 1), Unit::Week), 52);
    }

    #[test]
    fn time_and_interval_fields_match_postgres() {
        let us = ((13 * 60 + 14) * 60 + 15) * 1_000_000 + 500_000;
        assert_eq!(time_field(us, Unit::Second), 15_500_000);
        assert_eq!(time_field(us, Unit::Epoch), 47_655_500_000);
        assert_eq!(time_field(us, Unit::Hour), 13);
        // interval '1 year 2 mons 3 days 04:05:06.7'
        let nanos = (((4 * 60 + 5) * 60 + 6) * 1_000_000 + 700_000) * 1000;
        assert_eq!(
            interval_field(14, 3, nanos, Unit::Epoch),
            37_015_506_700_000
        );
        assert_eq!(interval_field(14, 3, nanos, Unit::Quarter), 1);
        assert_eq!(interval_field(14, 3, nanos, Unit::Milliseconds), 6_700_000);
        assert_eq!(interval_field(1, 0, 0, Unit::Epoch), 2_592_000_000_000);
        assert_eq!(
            interval_field(0, 0, -1_500_000_000, Unit::Epoch),
            -1_500_000
        );
    }
}
