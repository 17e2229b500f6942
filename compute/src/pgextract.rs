//! `extract` as PostgreSQL answers it where DataFusion's `date_part`
//! differs (part of the `semantics` analyzer rules, called from
//! `pgcasts::rewrite`).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    create_udf, Cast, ColumnarValue, Expr, ExprSchemable, ScalarUDF, Volatility,
};

/// `extract(second | milliseconds from ts)` keeps the fraction, as
/// PostgreSQL's numeric answer does (`44.289012`, `44289.012`); DataFusion
/// answers whole seconds (milliseconds). Both are the microseconds field
/// (seconds and fraction, in microseconds) read with 6 or 3 places.
pub(crate) fn fractional_seconds(f: &ScalarFunction, schema: &DFSchema) -> Result<Option<Expr>> {
    let part = match &f.args[0] {
        Expr::Literal(ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)), _) => {
            p.to_ascii_lowercase()
        }
        _ => return Ok(None),
    };
    let scale = match part.as_str() {
        "second" | "seconds" => 6,
        "millisecond" | "milliseconds" => 3,
        _ => return Ok(None),
    };
    if !matches!(
        f.args[1].get_type(schema)?,
        DataType::Timestamp(..) | DataType::Time64(_)
    ) {
        return Ok(None);
    }
    let micros = Expr::ScalarFunction(ScalarFunction::new_udf(
        f.func.clone(),
        vec![
            Expr::Literal(ScalarValue::Utf8(Some("microsecond".into())), None),
            f.args[1].clone(),
        ],
    ));
    let udf = if scale == 6 { &SECONDS } else { &MILLISECONDS };
    Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(
        (*udf).clone(),
        vec![Expr::Cast(Cast::new(Box::new(micros), DataType::Int64))],
    ))))
}

/// `pg_micros_as_seconds(us)` (`scale` 6) or `pg_micros_as_millis(us)` (3):
/// a count of microseconds as the numeric it is at that scale.
fn micros_scaled_udf(scale: i8) -> ScalarUDF {
    use datafusion::arrow::array::{Decimal128Array, Int64Array};
    let f = Arc::new(move |args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let a = arrays[0]
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| DataFusionError::Internal("microseconds of a non-bigint".into()))?;
        let out: Decimal128Array = a.iter().map(|v| v.map(i128::from)).collect();
        Ok(ColumnarValue::Array(Arc::new(
            out.with_precision_and_scale(38, scale)?,
        )))
    });
    create_udf(
        if scale == 6 {
            "pg_micros_as_seconds"
        } else {
            "pg_micros_as_millis"
        },
        vec![DataType::Int64],
        DataType::Decimal128(38, scale),
        Volatility::Immutable,
        f,
    )
}

static SECONDS: std::sync::LazyLock<Arc<ScalarUDF>> =
    std::sync::LazyLock::new(|| Arc::new(micros_scaled_udf(6)));
static MILLISECONDS: std::sync::LazyLock<Arc<ScalarUDF>> =
    std::sync::LazyLock::new(|| Arc::new(micros_scaled_udf(3)));
