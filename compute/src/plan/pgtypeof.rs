//! `pg_typeof(x)` answered in the logical plan where the catalog knows the
//! type and the Arrow type does not say it (see `crate::pgtypeof`): a
//! table's column by its declared type (a varchar or char column is a
//! string like text), and a string built by `||` or a string function by
//! `text`, as PostgreSQL types their results. Projections and filters are
//! looked at (their columns are followed to the scans).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::ScalarValue;
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
/// expression's form says replaced by the type's name.
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

/// `x` as the literal name of its type when it is `pg_typeof(y)` of a
/// string whose type is known.
fn named(x: Expr, input: &LogicalPlan, catalog: &Catalog, schema: &str) -> Transformed<Expr> {
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
        Some(n) => Transformed::yes(lit(ScalarValue::Utf8(Some(n)))),
        None => Transformed::no(x),
    }
}
