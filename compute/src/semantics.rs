//! PostgreSQL semantics on the DataFusion path, where DataFusion's differ:
//! an analyzer rule that runs after DataFusion's type coercion and before
//! any optimization (so constant folding evaluates the PostgreSQL
//! version too) and rewrites what DataFusion would compute differently:
//!
//! * integer `+ - *` overflow is an error (22003), not a wrapped value:
//!   Arrow's checked kernels instead of DataFusion's wrapping ones;
//! * a cast of a numeric to an integer rounds half away from zero and of a
//!   float to an integer rounds half to even, as PostgreSQL's casts do
//!   (DataFusion truncates);
//! * `floor` and `ceil` of a numeric have scale 0 (`2548`, not `2548.00`).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Float64Array};
use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::DFSchema;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    create_udf, BinaryExpr, Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator,
    ScalarUDF, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

/// The rule; see the module documentation.
#[derive(Debug, Default)]
pub struct PgSemantics;

fn is_int(t: &DataType) -> bool {
    matches!(t, DataType::Int16 | DataType::Int32 | DataType::Int64)
}

/// A checked integer operation on two same-typed integer columns.
fn checked_udf(op: Operator, t: &DataType) -> ScalarUDF {
    let name = format!(
        "pg_checked_{}_{}",
        match op {
            Operator::Plus => "add",
            Operator::Minus => "sub",
            _ => "mul",
        },
        t
    );
    let f = Arc::new(move |args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let (a, b): (&ArrayRef, &ArrayRef) = (&arrays[0], &arrays[1]);
        let r = match op {
            Operator::Plus => numeric::add(a, b),
            Operator::Minus => numeric::sub(a, b),
            _ => numeric::mul(a, b),
        };
        let r = r.map_err(|e| match e {
            datafusion::arrow::error::ArrowError::ArithmeticOverflow(_) => {
                DataFusionError::External(Box::new(common::Error::NumericOutOfRange {
                    message: "integer out of range".into(),
                }))
            }
            other => DataFusionError::ArrowError(Box::new(other), None),
        })?;
        Ok(ColumnarValue::Array(r))
    });
    create_udf(
        &name,
        vec![t.clone(), t.clone()],
        t.clone(),
        Volatility::Immutable,
        f,
    )
}

/// Round half to even, as PostgreSQL's float-to-integer casts (`rint`).
fn rint_udf() -> ScalarUDF {
    let f = Arc::new(|args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let a = arrays[0]
            .as_any()
            .downcast_ref::<Float64Array>()
            .ok_or_else(|| DataFusionError::Internal("pg_rint of a non-float".into()))?;
        let out: Float64Array = a.iter().map(|v| v.map(f64::round_ties_even)).collect();
        Ok(ColumnarValue::Array(Arc::new(out) as ArrayRef))
    });
    create_udf(
        "pg_rint",
        vec![DataType::Float64],
        DataType::Float64,
        Volatility::Immutable,
        f,
    )
}

fn is_call(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.func.name() == name)
}

/// The rewrite of one expression over `schema` (its node's inputs).
fn rewrite(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    e.transform_up(|e| match &e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply) =>
        {
            let (Ok(lt), Ok(rt)) = (left.get_type(schema), right.get_type(schema)) else {
                return Ok(Transformed::no(e));
            };
            if is_int(&lt) && lt == rt {
                let udf = Arc::new(checked_udf(*op, &lt));
                let args = vec![(**left).clone(), (**right).clone()];
                return Ok(Transformed::yes(Expr::ScalarFunction(
                    ScalarFunction::new_udf(udf, args),
                )));
            }
            Ok(Transformed::no(e))
        }
        Expr::Cast(Cast { expr, field }) if is_int(field.data_type()) => {
            if is_call(expr, "pg_rint") || is_call(expr, "round") {
                return Ok(Transformed::no(e));
            }
            let Ok(from) = expr.get_type(schema) else {
                return Ok(Transformed::no(e));
            };
            let rounded = match from {
                DataType::Decimal128(..) | DataType::Decimal256(..) => {
                    datafusion::functions::math::expr_fn::round(vec![(**expr).clone()])
                }
                DataType::Float64 | DataType::Float32 => {
                    Expr::ScalarFunction(ScalarFunction::new_udf(
                        Arc::new(rint_udf()),
                        vec![Expr::Cast(Cast::new(expr.clone(), DataType::Float64))],
                    ))
                }
                _ => return Ok(Transformed::no(e)),
            };
            Ok(Transformed::yes(Expr::Cast(Cast::new_from_field(
                Box::new(rounded),
                field.clone(),
            ))))
        }
        Expr::ScalarFunction(f)
            if matches!(f.func.name(), "floor" | "ceil") && f.args.len() == 1 =>
        {
            match f.args[0].get_type(schema) {
                Ok(DataType::Decimal128(p, s)) if s > 0 => Ok(Transformed::yes(Expr::Cast(
                    Cast::new(Box::new(e.clone()), DataType::Decimal128(p, 0)),
                ))),
                _ => Ok(Transformed::no(e)),
            }
        }
        _ => Ok(Transformed::no(e)),
    })
}

impl AnalyzerRule for PgSemantics {
    fn name(&self) -> &str {
        "tessera_pg_semantics"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            // Only nodes whose expressions are evaluated over one input.
            if !matches!(
                node,
                LogicalPlan::Projection(_) | LogicalPlan::Filter(_) | LogicalPlan::Aggregate(_)
            ) {
                return Ok(Transformed::no(node));
            }
            let inputs = node.inputs();
            let [input] = inputs.as_slice() else {
                return Ok(Transformed::no(node));
            };
            let schema = input.schema().clone();
            let names = NamePreserver::new(&node);
            let node = node.map_expressions(|e| {
                let saved = names.save(&e);
                let r = rewrite(e, &schema)?;
                Ok(r.update_data(|e| saved.restore(e)))
            })?;
            if node.transformed {
                // Schemas of rewritten nodes are recomputed from their
                // (name-preserved) expressions.
                node.map_data(|p| p.recompute_schema())
            } else {
                Ok(node)
            }
        })
        .map(|t| t.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;

    async fn run(sql: &str) -> std::result::Result<Vec<String>, String> {
        let ctx = SessionContext::new();
        ctx.add_analyzer_rule(Arc::new(PgSemantics));
        let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
        let batches = df.collect().await.map_err(|e| e.to_string())?;
        let mut out = vec![];
        for b in &batches {
            for r in 0..b.num_rows() {
                let cells: Vec<String> = b
                    .columns()
                    .iter()
                    .map(|c| {
                        datafusion::arrow::util::display::array_value_to_string(c, r)
                            .unwrap_or_default()
                    })
                    .collect();
                out.push(cells.join(","));
            }
        }
        Ok(out)
    }

    #[tokio::test]
    async fn integer_overflow_is_an_error() {
        let e = run("SELECT CAST(9223372036854775807 AS BIGINT) + CAST(1 AS BIGINT)")
            .await
            .unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = run("SELECT x * x FROM (VALUES (CAST(200 AS SMALLINT))) t(x)")
            .await
            .unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        assert_eq!(
            run("SELECT x + 1 FROM (VALUES (CAST(41 AS BIGINT))) t(x)")
                .await
                .unwrap(),
            ["42"]
        );
    }

    #[tokio::test]
    async fn floor_and_ceil_of_numerics_have_scale_zero() {
        assert_eq!(
            run("SELECT floor(x), ceil(x) FROM (VALUES (CAST(2548.25 AS DECIMAL(12,2)))) t(x)")
                .await
                .unwrap(),
            ["2548,2549"]
        );
    }

    #[tokio::test]
    async fn casts_to_integers_round_as_postgres() {
        assert_eq!(
            run("SELECT CAST(CAST(12.5 AS DECIMAL(4,1)) AS INT), CAST(CAST(-12.5 AS DECIMAL(4,1)) AS INT)")
                .await
                .unwrap(),
            ["13,-13"]
        );
        assert_eq!(
            run("SELECT CAST(CAST(2.5 AS DOUBLE) AS INT), CAST(CAST(3.5 AS DOUBLE) AS INT)")
                .await
                .unwrap(),
            ["2,4"]
        );
    }
}
