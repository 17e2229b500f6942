//! Statements for a shard: the fast-path expression subset
//! ([`is_safe_expr`]: MariaDB evaluates it exactly as PostgreSQL does),
//! rendering through [`super::stmt_sql`] (table names rewritten to the
//! partition's physical name, identifiers quoted, values quoted or bound,
//! `$n` turned into `?` with the parameter order recorded). INSERTs of
//! evaluated rows are `crate::route`'s.

use std::ops::ControlFlow;

use common::Result;
use datafusion::sql::sqlparser::ast::{visit_expressions, Expr, Statement, UnaryOperator, Value};

use super::ident::placeholder_index;
use super::shard_sql::ShardSql;

/// `"<schema database>"."table"` of a physical table, spelled by
/// [`ShardSql::table`] (for the SQL built outside the renderer: DDL,
/// INSERTs of evaluated rows, redistribution).
pub fn physical_object(schema: &str, table: &str) -> String {
    let mut out = ShardSql::new();
    out.table(schema, table);
    out.into_parts().0
}

/// Renders `stmt` for the partition `schema.table` of MariaDB through
/// [`super::stmt_sql`], the statement front-end of the one renderer. Returns
/// the SQL and, for each `?`, the index of the client parameter it stands
/// for.
pub fn render(stmt: &Statement, schema: &str, table: &str) -> Result<(String, Vec<usize>)> {
    Ok(super::stmt_sql::render_statement(stmt, schema, table)?.into_parts())
}

/// The number of `$n` parameters a statement refers to (the highest n).
pub fn count_params(stmt: &Statement) -> usize {
    let mut n = 0;
    let _ = visit_expressions(stmt, |e| {
        if let Expr::Value(v) = e {
            if let Value::Placeholder(p) = &v.value {
                if let Some(i) = placeholder_index(p) {
                    n = n.max(i + 1);
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    n
}

/// Expressions MariaDB (in Tessera's shard session mode) evaluates exactly
/// like PostgreSQL. Anything else is computed by the compute node or
/// rejected.
pub fn is_safe_expr(e: &Expr) -> bool {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::Value(v) => matches!(
            v.value,
            Value::Number(..)
                | Value::SingleQuotedString(_)
                | Value::EscapedStringLiteral(_)
                | Value::Boolean(_)
                | Value::Null
                | Value::Placeholder(_)
        ),
        Expr::BinaryOp { left, op, right } => {
            super::compat::Op::of_sql(op).is_some() && is_safe_expr(left) && is_safe_expr(right)
        }
        Expr::UnaryOp { op, expr } => {
            matches!(op, UnaryOperator::Not | UnaryOperator::Minus) && is_safe_expr(expr)
        }
        Expr::IsNull(x) | Expr::IsNotNull(x) | Expr::Nested(x) => is_safe_expr(x),
        Expr::InList { expr, list, .. } => is_safe_expr(expr) && list.iter().all(is_safe_expr),
        // Row values: `(a, b) IN ((1, 2), (3, 4))` (MariaDB compares rows
        // as PostgreSQL does, NULLs included).
        Expr::Tuple(items) => !items.is_empty() && items.iter().all(is_safe_expr),
        Expr::Between {
            expr, low, high, ..
        } => is_safe_expr(expr) && is_safe_expr(low) && is_safe_expr(high),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    #[test]
    fn counts_parameters() {
        let stmt = Parser::parse_sql(
            &PostgreSqlDialect {},
            "SELECT c FROM t WHERE id = $2 AND c = '$3' AND k IN ($1, $1)",
        )
        .unwrap()
        .remove(0);
        assert_eq!(count_params(&stmt), 2);
    }
}
