//! `pg_date_in(text)`, `pg_timestamp_in(text)` and
//! `pg_timestamptz_in(text)`: a text column cast to date, timestamp or
//! timestamptz read by PostgreSQL's input (`common::pgdatetime` through
//! `Datum::parse`), where Arrow's cast reads only ISO text. Constant text
//! is read at planning instead (`crate::pgzone`), and a cast to
//! timestamptz outside UTC is refused there (the session's zone is not
//! where the plan runs).

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, AsArray, Date32Builder, TimestampMicrosecondBuilder};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{create_udf, ColumnarValue, Expr, ScalarUDF, Volatility};

use common::{Datum, SqlType};

fn read(s: &str, ty: &SqlType) -> Result<Datum> {
    Datum::parse(s, ty).map_err(|e| DataFusionError::External(Box::new(e)))
}

fn udf(timestamp: bool) -> ScalarUDF {
    let f = Arc::new(move |args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let texts = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let texts = texts.as_string::<i32>();
        if timestamp {
            let mut out = TimestampMicrosecondBuilder::with_capacity(texts.len());
            for i in 0..texts.len() {
                match texts.is_null(i) {
                    true => out.append_null(),
                    false => match read(texts.value(i), &SqlType::Timestamp)? {
                        Datum::Timestamp(t) => out.append_value(t.and_utc().timestamp_micros()),
                        _ => out.append_null(),
                    },
                }
            }
            return Ok(ColumnarValue::Array(Arc::new(out.finish())));
        }
        let mut out = Date32Builder::with_capacity(texts.len());
        for i in 0..texts.len() {
            match texts.is_null(i) {
                true => out.append_null(),
                false => match read(texts.value(i), &SqlType::Date)? {
                    Datum::Date(d) => out.append_value(common::value::days_since_epoch(d) as i32),
                    _ => out.append_null(),
                },
            }
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    });
    let (name, ty) = if timestamp {
        (
            "pg_timestamp_in",
            DataType::Timestamp(TimeUnit::Microsecond, None),
        )
    } else {
        ("pg_date_in", DataType::Date32)
    };
    create_udf(name, vec![DataType::Utf8], ty, Volatility::Stable, f)
}

/// `pg_timestamptz_in`, typed `to`.
fn timestamptz_udf(to: DataType) -> ScalarUDF {
    let f = Arc::new(move |args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let texts = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let texts = texts.as_string::<i32>();
        let mut out = TimestampMicrosecondBuilder::with_capacity(texts.len());
        for i in 0..texts.len() {
            match texts.is_null(i) {
                true => out.append_null(),
                false => match read(texts.value(i), &SqlType::TimestampTz)? {
                    Datum::TimestampTz(t) => out.append_value(t.timestamp_micros()),
                    _ => out.append_null(),
                },
            }
        }
        Ok(ColumnarValue::Array(Arc::new(
            out.finish().with_timezone_opt(TZ_NAME.clone()),
        )))
    });
    create_udf(
        "pg_timestamptz_in",
        vec![DataType::Utf8],
        to,
        Volatility::Stable,
        f,
    )
}

static TZ_NAME: LazyLock<Option<Arc<str>>> = LazyLock::new(|| Some("+00:00".into()));

static DATE_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(udf(false)));
static TIMESTAMP_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(udf(true)));
static TIMESTAMPTZ_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    Arc::new(timestamptz_udf(DataType::Timestamp(
        TimeUnit::Microsecond,
        TZ_NAME.clone(),
    )))
});

/// The call reading text `e` as `to` (a date or a timestamp with or
/// without time zone), `None` for other types.
pub fn call(e: Expr, to: &DataType) -> Option<Expr> {
    let f = match to {
        DataType::Date32 => DATE_IN.clone(),
        DataType::Timestamp(_, None) => TIMESTAMP_IN.clone(),
        DataType::Timestamp(_, Some(_)) => TIMESTAMPTZ_IN.clone(),
        _ => return None,
    };
    Some(Expr::ScalarFunction(ScalarFunction::new_udf(f, vec![e])))
}
