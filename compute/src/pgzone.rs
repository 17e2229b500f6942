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
    crate::pgextract::NAME,
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

/// The zone `AT TIME ZONE` names, as PostgreSQL's `timestamp_zone` reads
/// it: an abbreviation of the `Default` set first (`MSK`, `PST`), then a
/// zone name or a number.
enum AtZone {
    Zone(common::tz::Zone),
    /// A dynamic abbreviation and the zone it is read in.
    Dynamic(String, &'static str),
}

fn at_zone(z: &str) -> common::Result<AtZone> {
    use common::pgdatetime::{zone_abbreviation, ZoneAbbrev};
    match zone_abbreviation(z) {
        Some(ZoneAbbrev::Fixed(east)) => return Ok(AtZone::Zone(common::tz::Zone::Fixed(east))),
        Some(ZoneAbbrev::Dynamic(name)) => return Ok(AtZone::Dynamic(z.to_string(), name)),
        None => {}
    }
    common::tz::Zone::parse(z)
        .map(AtZone::Zone)
        .map_err(|e| match e {
            common::Error::InvalidParameter { .. } => common::Error::Sql {
                state: common::SqlState("22023"),
                message: format!("time zone \"{z}\" not recognized"),
            },
            e => e,
        })
}

/// `pg_at_time_zone(ts, zone)`, PostgreSQL's `ts AT TIME ZONE zone`: a
/// timestamptz becomes its local time in `zone` (a timestamp), a timestamp
/// the instant it is in `zone` (a timestamptz). `zone` is a constant: a
/// zone abbreviation, an IANA name or a number of hours ([`at_zone`]).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct AtTimeZone {
    signature: datafusion::logical_expr::Signature,
}

impl Default for AtTimeZone {
    fn default() -> Self {
        AtTimeZone {
            signature: datafusion::logical_expr::Signature::any(
                2,
                datafusion::logical_expr::Volatility::Immutable,
            ),
        }
    }
}

impl datafusion::logical_expr::ScalarUDFImpl for AtTimeZone {
    fn name(&self) -> &str {
        "pg_at_time_zone"
    }
    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }
    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        use datafusion::arrow::datatypes::TimeUnit;
        match args.first() {
            Some(DataType::Timestamp(_, Some(_))) => {
                Ok(DataType::Timestamp(TimeUnit::Microsecond, None))
            }
            Some(DataType::Timestamp(_, None)) => Ok(DataType::Timestamp(
                TimeUnit::Microsecond,
                Some("+00:00".into()),
            )),
            other => Err(DataFusionError::External(Box::new(common::Error::Sql {
                state: common::SqlState("42883"),
                message: format!(
                    "function timezone(text, {}) does not exist",
                    other.map(pg_name).unwrap_or_default()
                ),
            }))),
        }
    }
    fn invoke_with_args(
        &self,
        args: datafusion::logical_expr::ScalarFunctionArgs,
    ) -> Result<datafusion::logical_expr::ColumnarValue> {
        use datafusion::arrow::array::{Array, AsArray, TimestampMicrosecondArray};
        use datafusion::arrow::datatypes::{TimeUnit, TimestampMicrosecondType};
        use datafusion::logical_expr::ColumnarValue;
        let zone = match args.args.get(1) {
            Some(ColumnarValue::Scalar(
                ScalarValue::Utf8(Some(z))
                | ScalarValue::Utf8View(Some(z))
                | ScalarValue::LargeUtf8(Some(z)),
            )) => at_zone(z),
            _ => Err(common::Error::unsupported(
                "AT TIME ZONE with a zone that is not a constant",
            )),
        }
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let arrays = ColumnarValue::values_to_arrays(&args.args[..1])?;
        let to_local = is_tz(arrays[0].data_type());
        let micros = datafusion::arrow::compute::cast(
            &arrays[0],
            &DataType::Timestamp(TimeUnit::Microsecond, None),
        )?;
        let micros = micros.as_primitive::<TimestampMicrosecondType>();
        let out: TimestampMicrosecondArray = (0..micros.len())
            .map(|i| {
                if micros.is_null(i) {
                    return None;
                }
                let t = chrono::DateTime::from_timestamp_micros(micros.value(i))?.naive_utc();
                let shifted = match &zone {
                    AtZone::Zone(zone) if to_local => {
                        t + chrono::Duration::seconds(zone.offset_at(&t) as i64)
                    }
                    AtZone::Zone(zone) => zone.to_utc(&t),
                    AtZone::Dynamic(abbr, name) => {
                        let in_zone = common::tz::Zone::named(name)?;
                        // The instant the abbreviation is read at.
                        let utc = if to_local { t } else { in_zone.to_utc(&t) };
                        let east = common::pgdatetime::abbrev_east_at(abbr, name, &utc)
                            .unwrap_or_else(|| in_zone.offset_at(&utc));
                        let east = chrono::Duration::seconds(east as i64);
                        if to_local {
                            t + east
                        } else {
                            t - east
                        }
                    }
                };
                Some(shifted.and_utc().timestamp_micros())
            })
            .collect();
        Ok(ColumnarValue::Array(std::sync::Arc::new(if to_local {
            out
        } else {
            out.with_timezone("+00:00")
        })))
    }
}
