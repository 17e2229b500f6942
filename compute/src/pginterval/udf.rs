//! `pg_interval_in(text, fields)`: PostgreSQL's interval input as a
//! function of the plan, for what the planner cannot read at planning
//! (a cast of a text column to interval, where Arrow's parser reads
//! otherwise) and for literals with fields (`INTERVAL '1:30' MINUTE TO
//! SECOND`), folded like any constant call.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, AsArray, IntervalMonthDayNanoBuilder};
use datafusion::arrow::datatypes::{DataType, IntervalUnit};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};

use super::{interval_in_fields, Fields};

pub const NAME: &str = "pg_interval_in";

/// The fields of an interval type by their SQL spelling (`day`, `hour to
/// second`; `""` for none).
pub fn fields_named(name: &str) -> Option<Fields> {
    let words: Vec<String> = name
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    Some(match words.as_slice() {
        [] => Fields::All,
        ["year"] => Fields::Year,
        ["month"] => Fields::Month,
        ["day"] => Fields::Day,
        ["hour"] => Fields::Hour,
        ["minute"] => Fields::Minute,
        ["second"] => Fields::Second,
        ["year", "to", "month"] => Fields::YearToMonth,
        ["day", "to", "hour"] => Fields::DayToHour,
        ["day", "to", "minute"] => Fields::DayToMinute,
        ["day", "to", "second"] => Fields::DayToSecond,
        ["hour", "to", "minute"] => Fields::HourToMinute,
        ["hour", "to", "second"] => Fields::HourToSecond,
        ["minute", "to", "second"] => Fields::MinuteToSecond,
        _ => return None,
    })
}

fn error(e: common::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

fn interval_in_udf() -> ScalarUDF {
    let f = Arc::new(|args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let texts = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let texts = texts.as_string::<i32>();
        let names = datafusion::arrow::compute::cast(&arrays[1], &DataType::Utf8)?;
        let names = names.as_string::<i32>();
        let mut out = IntervalMonthDayNanoBuilder::with_capacity(texts.len());
        for i in 0..texts.len() {
            if texts.is_null(i) {
                out.append_null();
                continue;
            }
            let name = if names.is_null(i) { "" } else { names.value(i) };
            let fields = fields_named(name)
                .ok_or_else(|| error(common::Error::internal(format!("interval fields {name}"))))?;
            let v = interval_in_fields(texts.value(i), fields)
                .and_then(|v| v.to_arrow())
                .map_err(error)?;
            out.append_value(v);
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    });
    create_udf(
        NAME,
        vec![DataType::Utf8, DataType::Utf8],
        DataType::Interval(IntervalUnit::MonthDayNano),
        Volatility::Immutable,
        f,
    )
}

/// The function, for plans and the session's registry.
pub static INTERVAL_IN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(interval_in_udf()));

/// `pg_interval_in(e, '')`: the text `e` read as an interval.
pub fn call(e: datafusion::logical_expr::Expr) -> datafusion::logical_expr::Expr {
    use datafusion::logical_expr::expr::ScalarFunction;
    use datafusion::scalar::ScalarValue;
    let none =
        datafusion::logical_expr::Expr::Literal(ScalarValue::Utf8(Some(String::new())), None);
    datafusion::logical_expr::Expr::ScalarFunction(ScalarFunction::new_udf(
        INTERVAL_IN.clone(),
        vec![e, none],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_by_their_sql_names() {
        assert_eq!(fields_named(""), Some(Fields::All));
        assert_eq!(fields_named("DAY"), Some(Fields::Day));
        assert_eq!(fields_named("hour  TO second"), Some(Fields::HourToSecond));
        assert_eq!(fields_named("fortnight"), None);
    }
}
