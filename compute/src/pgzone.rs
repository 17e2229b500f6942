//! The session's time zone on the DataFusion path. Timestamptz values are
//! instants and print in the session's zone (`common::tz`), but what
//! PostgreSQL computes from their local time (the day they fall on, their
//! hour, `date_trunc`, `to_char`, casts to and from `timestamp` and
//! `date`, text without an offset read as one) depends on the zone, and
//! DataFusion computes it in UTC. In a session whose zone is not UTC those
//! expressions are refused (0A000) before they run, never answered in UTC.

use common::tz::session_zone;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::expr::{Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, Operator};

/// Functions whose answer for a timestamptz depends on the time zone.
const ZONED_FUNCTIONS: &[&str] = &[
    "date_trunc",
    "date_part",
    "extract",
    "to_char",
    "date_bin",
    "to_date",
    "make_date",
];

fn refused(what: &str) -> DataFusionError {
    DataFusionError::External(Box::new(common::Error::unsupported(format!(
        "{what} in a session time zone other than UTC on the distributed path"
    ))))
}

fn is_tz(t: &DataType) -> bool {
    matches!(t, DataType::Timestamp(_, Some(_)))
}

/// Refuses `e` if its answer depends on a session zone that is not UTC.
pub fn check(e: &Expr, schema: &DFSchema) -> Result<()> {
    match e {
        Expr::ScalarFunction(ScalarFunction { func, args })
            if ZONED_FUNCTIONS.contains(&func.name()) =>
        {
            for a in args {
                if is_tz(&a.get_type(schema)?) && !session_zone().is_utc() {
                    return Err(refused(&format!(
                        "{} of a timestamp with time zone",
                        func.name()
                    )));
                }
            }
            Ok(())
        }
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            let from = expr.get_type(schema)?;
            let to = field.data_type();
            let zoned = match (is_tz(&from), is_tz(to)) {
                // To text: `pg_timestamptz_text` prints in the zone.
                (true, false) => !matches!(to, DataType::Utf8 | DataType::Utf8View),
                // Text with an explicit offset means one instant anywhere.
                (false, true) => !offset_literal(expr),
                _ => false,
            };
            if zoned && !session_zone().is_utc() {
                return Err(refused(&format!(
                    "a cast from {} to {}",
                    pg_name(&from),
                    pg_name(to)
                )));
            }
            Ok(())
        }
        // Days and months are calendar units in local time (a day across
        // a daylight-saving change is 23 or 25 hours).
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Plus | Operator::Minus,
            right,
        }) if !session_zone().is_utc() => {
            let (l, r) = (left.get_type(schema)?, right.get_type(schema)?);
            let calendar = |e: &Expr, t: &DataType| {
                matches!(t, DataType::Interval(_))
                    && !matches!(
                        e,
                        Expr::Literal(ScalarValue::IntervalMonthDayNano(Some(v)), _)
                            if v.months == 0 && v.days == 0
                    )
                    && !matches!(
                        e,
                        Expr::Literal(ScalarValue::IntervalDayTime(Some(v)), _) if v.days == 0
                    )
            };
            if (is_tz(&l) && calendar(right, &r)) || (is_tz(&r) && calendar(left, &l)) {
                return Err(refused(
                    "adding days or months to a timestamp with time zone",
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A string literal that names its UTC offset (`'... 12:00+02'`).
fn offset_literal(e: &Expr) -> bool {
    match e {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        ) => {
            let t = s.trim();
            t.ends_with(['Z', 'z'])
                || t.find([' ', 'T'])
                    .is_some_and(|i| t[i..].contains(['+', '-']))
        }
        _ => false,
    }
}

/// A type as PostgreSQL names it, in messages.
fn pg_name(t: &DataType) -> String {
    match t {
        DataType::Timestamp(_, Some(_)) => "timestamp with time zone".into(),
        DataType::Timestamp(_, None) => "timestamp without time zone".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Time64(_) | DataType::Time32(_) => "time without time zone".into(),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => "text".into(),
        other => other.to_string(),
    }
}

/// A string constant cast to a timestamp (`timestamptz '2024-01-01
/// 12:00+02'`, `'2024-01-01 12:00'::timestamp`), read as PostgreSQL reads
/// it when the statement is planned: with PostgreSQL's input forms (Arrow
/// wants seconds and a two-part offset) and, without an offset, as local
/// time in the session's zone.
pub fn timestamp_literal(e: &Expr) -> Result<Option<Expr>> {
    let (Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field })) = e else {
        return Ok(None);
    };
    if field.data_type() == &DataType::Date32 {
        return date_literal(expr);
    }
    let DataType::Timestamp(unit, tz) = field.data_type() else {
        return Ok(None);
    };
    let Expr::Literal(
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)),
        _,
    ) = &**expr
    else {
        return Ok(None);
    };
    let ty = if tz.is_some() {
        common::SqlType::TimestampTz
    } else {
        common::SqlType::Timestamp
    };
    let micros = match common::Datum::parse(s, &ty).map_err(bad_datetime)? {
        common::Datum::TimestampTz(t) => t.timestamp_micros(),
        common::Datum::Timestamp(t) => t.and_utc().timestamp_micros(),
        _ => return Ok(None),
    };
    // `timestamp(0)` and `(3)`: rounded to the precision, halves away
    // from zero, as PostgreSQL's typmod rounds (a cast would truncate).
    let round = |per: i64| {
        let half = if micros < 0 { -per / 2 } else { per / 2 };
        (micros + half) / per
    };
    use datafusion::arrow::datatypes::TimeUnit;
    let v = match unit {
        TimeUnit::Second => ScalarValue::TimestampSecond(Some(round(1_000_000)), tz.clone()),
        TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(Some(round(1_000)), tz.clone()),
        TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(Some(micros), tz.clone()),
        TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(
            micros.checked_mul(1_000).map(Some).ok_or_else(|| {
                bad_datetime(common::Error::Sql {
                    state: common::SqlState("22008"),
                    message: format!("timestamp out of range: \"{s}\""),
                })
            })?,
            tz.clone(),
        ),
    };
    Ok(Some(Expr::Literal(v, None)))
}

/// Bad datetime text is 22007 in PostgreSQL; an error that already has
/// its SQLSTATE (a field out of range, 22008) keeps it.
fn bad_datetime(e: common::Error) -> DataFusionError {
    let e = match e {
        e @ common::Error::Sql { .. } => e,
        e => common::Error::Sql {
            state: common::SqlState("22007"),
            message: e.to_string(),
        },
    };
    DataFusionError::External(Box::new(e))
}

/// `'2024-01-02'::date` read as PostgreSQL reads a date (year 0 is
/// 22008, which Arrow's cast accepts).
fn date_literal(expr: &Expr) -> Result<Option<Expr>> {
    let Expr::Literal(
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)),
        _,
    ) = expr
    else {
        return Ok(None);
    };
    // Text PostgreSQL reads but this parser does not (`Jan 2 2024`) is
    // left to Arrow's cast.
    match common::Datum::parse(s, &common::SqlType::Date) {
        Ok(common::Datum::Date(d)) => Ok(Some(Expr::Literal(
            ScalarValue::Date32(Some(common::value::days_since_epoch(d) as i32)),
            None,
        ))),
        Err(e @ common::Error::Sql { .. }) => Err(bad_datetime(e)),
        _ => Ok(None),
    }
}
