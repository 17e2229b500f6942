//! Interval comparisons as PostgreSQL's: two intervals compare by their
//! span, a month counted as 30 days and a day as 24 hours
//! (`interval '30 days' = interval '1 month'` is true, as are
//! `interval '1 day' = interval '24 hours'`), where Arrow compares the
//! months, days and nanoseconds field by field. Each side of a comparison
//! of two intervals is replaced by its span in nanoseconds, a
//! `numeric(38,0)`.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, AsArray, Decimal128Builder};
use datafusion::arrow::datatypes::{DataType, IntervalMonthDayNanoType, IntervalUnit};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::DFSchema;
use datafusion::error::Result;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    create_udf, BinaryExpr, ColumnarValue, Expr, ExprSchemable, ScalarUDF, Volatility,
};

const NANOS_PER_DAY: i128 = 86_400_000_000_000;

/// The span PostgreSQL compares: `(months * 30 + days)` days and the time.
pub fn span(months: i32, days: i32, nanos: i64) -> i128 {
    (i128::from(months) * 30 + i128::from(days)) * NANOS_PER_DAY + i128::from(nanos)
}

fn span_udf() -> ScalarUDF {
    let f = Arc::new(|args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let a = arrays[0].as_primitive::<IntervalMonthDayNanoType>();
        let mut out = Decimal128Builder::with_capacity(a.len());
        for i in 0..a.len() {
            if a.is_null(i) {
                out.append_null();
            } else {
                let v = a.value(i);
                out.append_value(span(v.months, v.days, v.nanoseconds));
            }
        }
        Ok(ColumnarValue::Array(Arc::new(
            out.finish().with_precision_and_scale(38, 0)?,
        )))
    });
    create_udf(
        "pg_interval_span",
        vec![DataType::Interval(IntervalUnit::MonthDayNano)],
        DataType::Decimal128(38, 0),
        Volatility::Immutable,
        f,
    )
}

static SPAN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(span_udf()));

fn is_interval(e: &Expr, schema: &DFSchema) -> bool {
    matches!(
        e.get_type(schema),
        Ok(DataType::Interval(IntervalUnit::MonthDayNano))
    )
}

fn spanned(e: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(SPAN.clone(), vec![e]))
}

/// Rewrites each comparison of two intervals (`=`, `<>`, `<`, `<=`, `>`,
/// `>=`, `IS [NOT] DISTINCT FROM`, `BETWEEN`) into one of their spans.
pub fn rewrite(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    e.transform_up(|e| match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if shard_router::sql::is_comparison(&op)
                && is_interval(&left, schema)
                && is_interval(&right, schema) =>
        {
            Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(spanned(*left)),
                op,
                Box::new(spanned(*right)),
            ))))
        }
        Expr::Between(mut b)
            if is_interval(&b.expr, schema)
                && is_interval(&b.low, schema)
                && is_interval(&b.high, schema) =>
        {
            b.expr = Box::new(spanned(*b.expr));
            b.low = Box::new(spanned(*b.low));
            b.high = Box::new(spanned(*b.high));
            Ok(Transformed::yes(Expr::Between(b)))
        }
        other => Ok(Transformed::no(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::span;

    #[test]
    fn a_month_spans_thirty_days() {
        assert_eq!(span(1, 0, 0), span(0, 30, 0));
        assert_eq!(span(0, 1, 0), span(0, 0, 86_400_000_000_000));
        assert!(span(0, 31, 0) > span(1, 0, 0));
        assert!(span(-1, 0, 1) < span(0, -29, 0));
    }
}
