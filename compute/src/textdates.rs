//! `pg_date_in(text)` and `pg_timestamp_in(text)`: a text column cast to
//! date or timestamp read by PostgreSQL's input (`common::pgdatetime`
//! through `Datum::parse`), where Arrow's cast reads only ISO text.
//! Constant text is read at planning instead (`crate::pgzone`).

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

static DATE_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(udf(false)));
static TIMESTAMP_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(udf(true)));

/// The call reading text `e` as `to` (a date or a timestamp without time
/// zone), `None` for other types.
pub fn call(e: Expr, to: &DataType) -> Option<Expr> {
    let f = match to {
        DataType::Date32 => DATE_IN.clone(),
        DataType::Timestamp(_, None) => TIMESTAMP_IN.clone(),
        _ => return None,
    };
    Some(Expr::ScalarFunction(ScalarFunction::new_udf(f, vec![e])))
}
