//! `pg_typeof(x)` answered in the logical plan where the catalog knows the
//! type and the Arrow type does not say it (see `crate::pgtypeof`): a
//! table's column by its declared type (a varchar or char column is a
//! string like text), and a string built by `||` or a string function by
//! `text`, as PostgreSQL types their results, and integer constants (and
//! what is computed from them alone) by `integer`. Projections and filters are
//! looked at (their columns are followed to the scans).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{lit, BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use meta::Catalog;

/// Functions whose string result PostgreSQL types as `text` whatever
/// string type their argument is.
const TEXT_FUNCTIONS: &[&str] = &[
    "upper",
    "lower",
    "initcap",
    "substr",
    "substring",
    "replace",
    "translate",
    "concat",
    "concat_ws",
    "trim",
    "btrim",
    "ltrim",
    "rtrim",
    "lpad",
    "rpad",
    "repeat",
    "reverse",
    "left",
    "right",
    "md5",
    "to_char",
    "split_part",
    "chr",
    "format",
    "quote_literal",
    "quote_ident",
    "regexp_replace",
    "to_hex",
    "string_agg",
];

/// `plan` with each `pg_typeof(x)` whose type the catalog or the
/// expression's form says given the type's name (`pg_typeof(x, 'name')`).
pub fn resolve(
    plan: LogicalPlan,
    catalog: &Catalog,
    schema: &str,
) -> datafusion::error::Result<LogicalPlan> {
    plan.transform_up(|node| {
        if !matches!(node, LogicalPlan::Projection(_) | LogicalPlan::Filter(_)) {
            return Ok(Transformed::no(node));
        }
        let input = node.inputs()[0].clone();
        let projection = matches!(node, LogicalPlan::Projection(_));
        let t = node.map_expressions(|e| {
            let name = e.schema_name().to_string();
            let t = e.transform_up(|x| Ok(named(x, &input, catalog, schema)))?;
            // A projection's column keeps its name for the nodes above.
            Ok(
                if t.transformed && projection && !matches!(t.data, Expr::Alias(_)) {
                    t.update_data(|d| d.alias(name))
                } else {
                    t
                },
            )
        })?;
        if t.transformed {
            t.map_data(|n| n.recompute_schema())
        } else {
            Ok(t)
        }
    })
    .map(|t| t.data)
}

/// `x` with the name of its argument's type when it is `pg_typeof(y)` of
/// a value whose type the catalog or its form says.
fn named(x: Expr, input: &LogicalPlan, catalog: &Catalog, schema: &str) -> Transformed<Expr> {
    if let Expr::Cast(c) = &x {
        return as_text(c).map_or(Transformed::no(x), Transformed::yes);
    }
    let Expr::ScalarFunction(f) = &x else {
        return Transformed::no(x);
    };
    if f.name() != crate::pgtypeof::NAME || f.args.len() != 1 {
        return Transformed::no(x);
    }
    let arg = &f.args[0];
    let name = match arg {
        Expr::Column(c) => super::origins::column_type(input, c, catalog, schema)
            .map(|t| crate::pgtypeof::sql_type_name(&t)),
        // Integer constants DataFusion widened to bigint: PostgreSQL's
        // are integer, and so is what is computed from them alone.
        _ if matches!(arg.get_type(input.schema()), Ok(DataType::Int64)) && int_constant(arg) => {
            Some("integer".to_string())
        }
        _ if !matches!(arg.get_type(input.schema()), Ok(DataType::Utf8)) => None,
        Expr::BinaryExpr(BinaryExpr {
            op: Operator::StringConcat,
            ..
        }) => Some("text".to_string()),
        Expr::ScalarFunction(g) if TEXT_FUNCTIONS.contains(&g.name()) => Some("text".to_string()),
        Expr::AggregateFunction(g) if TEXT_FUNCTIONS.contains(&g.func.name()) => {
            Some("text".to_string())
        }
        Expr::Cast(c) if c.field.data_type() == &DataType::Utf8 => Some("text".to_string()),
        _ => None,
    };
    match name {
        Some(n) => Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(
            f.func.clone(),
            vec![arg.clone(), lit(ScalarValue::Utf8(Some(n)))],
        ))),
        None => Transformed::no(x),
    }
}

/// Whether `e` is computed from integer constants alone (each within
/// integer's range) by arithmetic, CASE, or functions whose type is their
/// arguments': PostgreSQL types it integer.
fn int_constant(e: &Expr) -> bool {
    use datafusion::logical_expr::expr::Case;
    match e {
        Expr::Literal(v, _) => match v {
            ScalarValue::Int64(Some(x)) => i32::try_from(*x).is_ok(),
            ScalarValue::Int32(Some(_)) | ScalarValue::Int16(Some(_)) => true,
            _ => false,
        },
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            matches!(
                op,
                Operator::Plus
                    | Operator::Minus
                    | Operator::Multiply
                    | Operator::Divide
                    | Operator::Modulo
            ) && int_constant(left)
                && int_constant(right)
        }
        Expr::Negative(x) => int_constant(x),
        Expr::Case(Case {
            when_then_expr,
            else_expr,
            ..
        }) => {
            when_then_expr.iter().all(|(_, t)| int_constant(t))
                && else_expr.as_deref().is_none_or(int_constant)
        }
        Expr::ScalarFunction(f) => {
            matches!(
                f.name(),
                "abs" | "coalesce" | "greatest" | "least" | "nullif"
            ) && f.args.iter().all(int_constant)
        }
        _ => false,
    }
}

/// `pg_typeof(...)::text` (or another string type): the call with a third
/// argument, so its answer is text, not a regtype, as PostgreSQL's cast
/// makes it.
fn as_text(c: &datafusion::logical_expr::Cast) -> Option<Expr> {
    let Expr::ScalarFunction(f) = c.expr.as_ref() else {
        return None;
    };
    if f.name() != crate::pgtypeof::NAME
        || f.args.len() > 2
        || !matches!(
            c.field.data_type(),
            DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
        )
    {
        return None;
    }
    let mut args = f.args.clone();
    if args.len() == 1 {
        args.push(lit(ScalarValue::Utf8(None)));
    }
    args.push(lit(ScalarValue::Utf8(Some("text".into()))));
    Some(Expr::Cast(datafusion::logical_expr::Cast {
        expr: Box::new(Expr::ScalarFunction(ScalarFunction::new_udf(
            f.func.clone(),
            args,
        ))),
        field: c.field.clone(),
    }))
}
