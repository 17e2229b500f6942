//! `pg_date_in(text)`, `pg_timestamp_in(text)` and
//! `pg_timestamptz_in(text)`: a text column cast to date, timestamp or
//! timestamptz read by PostgreSQL's input (`common::pgdatetime` through
//! `Datum::parse`), where Arrow's cast reads only ISO text. Constant text
//! is read at planning instead (`crate::pgzone`), and a cast to
//! timestamptz outside UTC is refused there (the session's zone is not
//! where the plan runs).

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray, PrimitiveBuilder};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, TimeUnit, TimestampMicrosecondType,
};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{create_udf, ColumnarValue, Expr, ScalarUDF, Volatility};

use common::{Datum, SqlType};

/// The text argument read as `ty`, each value made `T`'s by `native`.
fn read_texts<T: ArrowPrimitiveType>(
    args: &[ColumnarValue],
    ty: &SqlType,
    native: impl Fn(Datum) -> Option<T::Native>,
) -> Result<PrimitiveArray<T>> {
    let arrays = ColumnarValue::values_to_arrays(args)?;
    let texts = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
    let texts = texts.as_string::<i32>();
    let mut out = PrimitiveBuilder::<T>::with_capacity(texts.len());
    for i in 0..texts.len() {
        if texts.is_null(i) {
            out.append_null();
            continue;
        }
        let d =
            Datum::parse(texts.value(i), ty).map_err(|e| DataFusionError::External(Box::new(e)))?;
        out.append_option(native(d));
    }
    Ok(out.finish())
}

fn udf(
    name: &str,
    to: DataType,
    read: impl Fn(&[ColumnarValue]) -> Result<ArrayRef> + Send + Sync + 'static,
) -> Arc<ScalarUDF> {
    let f = Arc::new(move |args: &[ColumnarValue]| Ok(ColumnarValue::Array(read(args)?)));
    Arc::new(create_udf(
        name,
        vec![DataType::Utf8],
        to,
        Volatility::Stable,
        f,
    ))
}

static TZ_NAME: LazyLock<Option<Arc<str>>> = LazyLock::new(|| Some("+00:00".into()));

static DATE_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    udf("pg_date_in", DataType::Date32, |args| {
        let out = read_texts::<Date32Type>(args, &SqlType::Date, |d| match d {
            Datum::Date(d) => Some(common::value::days_since_epoch(d) as i32),
            _ => None,
        })?;
        Ok(Arc::new(out))
    })
});
static TIMESTAMP_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    let to = DataType::Timestamp(TimeUnit::Microsecond, None);
    udf("pg_timestamp_in", to, |args| {
        let out = read_texts::<TimestampMicrosecondType>(args, &SqlType::Timestamp, |d| match d {
            Datum::Timestamp(t) => Some(t.and_utc().timestamp_micros()),
            _ => None,
        })?;
        Ok(Arc::new(out))
    })
});
static TIMESTAMPTZ_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    let to = DataType::Timestamp(TimeUnit::Microsecond, TZ_NAME.clone());
    udf("pg_timestamptz_in", to, |args| {
        let out =
            read_texts::<TimestampMicrosecondType>(args, &SqlType::TimestampTz, |d| match d {
                Datum::TimestampTz(t) => Some(t.timestamp_micros()),
                _ => None,
            })?;
        Ok(Arc::new(out.with_timezone_opt(TZ_NAME.clone())))
    })
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
