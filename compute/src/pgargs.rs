//! String functions called with arguments PostgreSQL does not take as
//! text: PostgreSQL has no implicit cast from numbers, booleans or dates
//! to `text`, so `length(42)` is 42883 "function length(integer) does not
//! exist", where DataFusion casts the number and answers 2. An analyzer
//! rule run before DataFusion's type coercion refuses such calls with
//! PostgreSQL's error. Only the arguments PostgreSQL types `text` are
//! checked (`repeat('a', 3)`'s count is an integer); string constants,
//! NULL, text and bytea pass.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};

/// The function's arguments PostgreSQL types `text`, by position.
fn text_positions(name: &str) -> &'static [usize] {
    match name {
        "character_length" | "char_length" | "length" | "octet_length" | "bit_length" | "upper"
        | "lower" | "initcap" | "reverse" | "md5" | "ascii" => &[0],
        "btrim" | "ltrim" | "rtrim" | "strpos" | "starts_with" => &[0, 1],
        "replace" | "translate" => &[0, 1, 2],
        "left" | "right" | "repeat" | "lpad" | "rpad" | "substr" => &[0],
        "split_part" => &[0, 1],
        _ => &[],
    }
}

/// Whether PostgreSQL would take a value of `t` as text here.
fn takes_as_text(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8
            | DataType::Utf8View
            | DataType::LargeUtf8
            | DataType::Null
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::Dictionary(..)
    )
}

/// PostgreSQL's name of an argument's type, as its messages print it.
fn pg_name(e: &Expr, t: &DataType) -> String {
    match (e, t) {
        // A small integer constant is PostgreSQL's `integer`.
        (Expr::Literal(ScalarValue::Int64(Some(v)), _), _) if i32::try_from(*v).is_ok() => {
            "integer".into()
        }
        (_, DataType::Int16) => "smallint".into(),
        (_, DataType::Int32) => "integer".into(),
        (_, DataType::Int64) => "bigint".into(),
        (_, DataType::Float32) => "real".into(),
        (_, DataType::Float64) => "double precision".into(),
        (_, DataType::Decimal128(..)) => "numeric".into(),
        (_, DataType::Boolean) => "boolean".into(),
        (_, DataType::Date32) => "date".into(),
        (_, DataType::Timestamp(_, Some(_))) => "timestamp with time zone".into(),
        (_, DataType::Timestamp(_, None)) => "timestamp without time zone".into(),
        (_, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8) => "text".into(),
        (_, other) => other.to_string(),
    }
}

/// 42883 for the first call of `plan` (its expressions and subqueries')
/// that passes a non-text value where PostgreSQL wants text.
pub fn check(plan: &LogicalPlan) -> Result<()> {
    plan.apply_with_subqueries(|node| {
        let schema = match node.inputs().as_slice() {
            [one] => one.schema().clone(),
            _ => node.schema().clone(),
        };
        node.apply_expressions(|e| {
            e.apply(|x| {
                let Expr::ScalarFunction(f) = x else {
                    return Ok(TreeNodeRecursion::Continue);
                };
                let name = f.func.name();
                let positions = text_positions(name);
                if positions.is_empty() {
                    return Ok(TreeNodeRecursion::Continue);
                }
                let types: Vec<DataType> = match f
                    .args
                    .iter()
                    .map(|a| a.get_type(&schema))
                    .collect::<Result<_>>()
                {
                    Ok(t) => t,
                    // Not typeable here: DataFusion's own checks decide.
                    Err(_) => return Ok(TreeNodeRecursion::Continue),
                };
                let wrong = positions
                    .iter()
                    .any(|&i| types.get(i).is_some_and(|t| !takes_as_text(t)));
                if !wrong {
                    return Ok(TreeNodeRecursion::Continue);
                }
                let shown = if name == "character_length" {
                    "length"
                } else {
                    name
                };
                let args: Vec<String> = f
                    .args
                    .iter()
                    .zip(&types)
                    .map(|(a, t)| pg_name(a, t))
                    .collect();
                Err(DataFusionError::External(Box::new(common::Error::Sql {
                    state: common::SqlState::UNDEFINED_FUNCTION,
                    message: format!("function {shown}({}) does not exist", args.join(", ")),
                })))
            })
        })
    })
    .map(|_| ())
}

/// The check as an analyzer rule (before type coercion).
#[derive(Debug, Default)]
pub struct PgTextArgs;

impl datafusion::optimizer::AnalyzerRule for PgTextArgs {
    fn name(&self) -> &str {
        "tessera_pg_text_args"
    }

    fn analyze(
        &self,
        plan: LogicalPlan,
        _config: &datafusion::common::config::ConfigOptions,
    ) -> Result<LogicalPlan> {
        check(&plan)?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;
    use std::sync::Arc;

    async fn plan(sql: &str) -> std::result::Result<(), String> {
        // Before type coercion, as `plan::df` puts it.
        let mut rules = datafusion::optimizer::Analyzer::new().rules;
        let at = rules
            .iter()
            .position(|r| r.name() == "type_coercion")
            .unwrap_or(0);
        rules.insert(at, Arc::new(PgTextArgs));
        let state = datafusion::execution::SessionStateBuilder::new()
            .with_default_features()
            .with_analyzer_rules(rules)
            .build();
        let ctx = SessionContext::new_with_state(state);
        let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
        df.into_optimized_plan()
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn numbers_are_not_text_to_string_functions() {
        let e = plan("SELECT length(42)").await.unwrap_err();
        assert!(e.contains("function length(integer) does not exist"), "{e}");
        let e = plan("SELECT left(CAST(12345 AS BIGINT), 2)")
            .await
            .unwrap_err();
        assert!(e.contains("left(bigint, integer)"), "{e}");
        for ok in [
            "SELECT length('abc')",
            "SELECT length(NULL)",
            "SELECT repeat('ab', 3)",
            "SELECT lpad('x', 5, '*')",
            "SELECT substr('hello', 2, 3)",
            "SELECT length(CAST(42 AS TEXT))",
        ] {
            assert!(plan(ok).await.is_ok(), "{ok}");
        }
    }
}
