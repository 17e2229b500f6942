//! Statements for a shard: the fast-path expression subset
//! ([`is_safe_expr`]: MariaDB evaluates it exactly as PostgreSQL does),
//! rendering through [`crate::shard_sql`] (table names rewritten to the
//! partition's physical name, identifiers quoted, values quoted or bound,
//! `$n` turned into `?` with the parameter order recorded), and INSERTs of
//! evaluated rows.

use std::ops::ControlFlow;

use common::Result;
use datafusion::sql::sqlparser::ast::{visit_expressions, Expr, Statement, UnaryOperator, Value};

use crate::route::placeholder_index;

/// `"<schema database>"."table"` of a physical table, quoted by the one
/// identifier quoter.
pub fn physical_object(schema: &str, table: &str) -> String {
    format!(
        "{}.{}",
        storage_adapter::quote_ident(&meta::physical_database(schema)),
        storage_adapter::quote_ident(table)
    )
}

/// Renders `stmt` for the partition `schema.table` of MariaDB through
/// [`crate::shard_sql`], the one renderer of client statements. Returns
/// the SQL and, for each `?`, the index of the client parameter it stands
/// for.
pub fn render(stmt: &Statement, schema: &str, table: &str) -> Result<(String, Vec<usize>)> {
    Ok(crate::shard_sql::render_statement(stmt, schema, table)?.into_parts())
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
            crate::compat::Op::of_sql(op).is_some() && is_safe_expr(left) && is_safe_expr(right)
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

/// One INSERT for a shard: its SQL and parameters.
pub type ShardInsert = (common::ShardId, String, Vec<mysql_async::Value>);

/// Rows per INSERT statement: well under max_allowed_packet and MariaDB's
/// 65,535 placeholders for any table Tessera accepts.
pub const INSERT_BATCH_ROWS: usize = 1000;

/// Renders full table rows (in column order) as INSERTs into the partitions
/// that store them (every copy of a mirror table), at most
/// `INSERT_BATCH_ROWS` rows each, in partition order. A single row is a
/// prepared statement with parameters (the same text every time, so the
/// shard's prepared statement is reused); several rows are sent as one text
/// statement with literals: their texts differ with the row count, and
/// preparing each would cost a round trip and a statement-cache entry
/// holding metadata for every placeholder.
pub fn insert_statements(
    placement: &meta::Placement,
    table: &meta::TableDef,
    rows: &[Vec<common::Datum>],
) -> common::Result<Vec<ShardInsert>> {
    insert_statements_on(placement, table, rows, &OnConflict::Error)
}

/// What an INSERT does with a row whose key is already there.
#[derive(Debug, Clone, PartialEq)]
pub enum OnConflict {
    /// PostgreSQL's unique violation (23505).
    Error,
    /// `ON CONFLICT DO NOTHING`: the row is skipped (`INSERT IGNORE`;
    /// planned only where no other error can be ignored with it).
    Ignore,
    /// `ON CONFLICT ... DO UPDATE SET`: `ON DUPLICATE KEY UPDATE`, each
    /// column from the existing row's and the proposed row's values.
    Update(Vec<(String, UpdateValue)>),
}

/// A value of `ON CONFLICT DO UPDATE SET col = ...`.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateValue {
    /// `EXCLUDED.col`: the row proposed for insertion.
    Excluded(String),
    /// `col` / `t.col`: the existing row.
    Current(String),
    Const(common::Datum),
    /// `$n` of the statement, bound before rendering.
    Param(usize),
    /// `+`, `-` or `*`.
    Arith(char, Box<UpdateValue>, Box<UpdateValue>),
}

impl UpdateValue {
    /// Parameters bound (`Param` to `Const`).
    pub fn bind(&self, params: &[common::Datum]) -> common::Result<UpdateValue> {
        Ok(match self {
            UpdateValue::Param(i) => {
                UpdateValue::Const(params.get(*i).cloned().ok_or_else(|| {
                    common::Error::internal(format!("no value for parameter ${}", i + 1))
                })?)
            }
            UpdateValue::Arith(op, a, b) => {
                UpdateValue::Arith(*op, Box::new(a.bind(params)?), Box::new(b.bind(params)?))
            }
            other => other.clone(),
        })
    }

    fn sql(&self) -> Option<String> {
        Some(match self {
            UpdateValue::Excluded(c) => format!("VALUES({})", storage_adapter::quote_ident(c)),
            UpdateValue::Current(c) => storage_adapter::quote_ident(c),
            UpdateValue::Const(d) => storage_adapter::convert::to_sql_literal(d)?,
            UpdateValue::Param(_) => return None,
            UpdateValue::Arith(op, a, b) => format!("({} {op} {})", a.sql()?, b.sql()?),
        })
    }
}

/// [`insert_statements`] with what a conflicting row does.
pub fn insert_statements_on(
    placement: &meta::Placement,
    table: &meta::TableDef,
    rows: &[Vec<common::Datum>],
    on: &OnConflict,
) -> common::Result<Vec<ShardInsert>> {
    let (verb, tail) = match on {
        OnConflict::Error => ("INSERT INTO", String::new()),
        OnConflict::Ignore => ("INSERT IGNORE INTO", String::new()),
        OnConflict::Update(set) => (
            "INSERT INTO",
            format!(
                " ON DUPLICATE KEY UPDATE {}",
                set.iter()
                    .map(|(c, v)| format!(
                        "{} = {}",
                        storage_adapter::quote_ident(c),
                        v.sql().unwrap_or_else(|| "NULL".into())
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    };
    let col_list = table
        .columns
        .iter()
        .map(|c| storage_adapter::quote_ident(&c.name))
        .collect::<Vec<_>>()
        .join(", ");
    let one = format!("({})", vec!["?"; table.columns.len()].join(", "));
    let mut out = vec![];
    for (p, idxs) in crate::route::rows_by_partition(placement, table, rows)? {
        let shard = placement.shard_of(table, p)?;
        for chunk in idxs.chunks(INSERT_BATCH_ROWS) {
            let head = format!(
                "{verb} {} ({col_list}) VALUES ",
                physical_object(&table.schema, &table.physical_name(p)),
            );
            if chunk.len() > 1 {
                if let Some(sql) = literal_insert(&head, chunk.iter().map(|i| &rows[*i])) {
                    out.push((shard, format!("{sql}{tail}"), vec![]));
                    continue;
                }
            }
            let sql = format!("{head}{}{tail}", vec![one.as_str(); chunk.len()].join(", "));
            let vals = chunk
                .iter()
                .flat_map(|i| rows[*i].iter().map(storage_adapter::convert::to_mysql))
                .collect();
            out.push((shard, sql, vals));
        }
    }
    Ok(out)
}

/// `head` followed by the rows as literal tuples, unless a value has no
/// exact literal.
fn literal_insert<'a>(
    head: &str,
    rows: impl Iterator<Item = &'a Vec<common::Datum>>,
) -> Option<String> {
    let mut sql = String::from(head);
    for (n, row) in rows.enumerate() {
        sql.push_str(if n == 0 { "(" } else { ", (" });
        for (i, d) in row.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&storage_adapter::convert::to_sql_literal(d)?);
        }
        sql.push(')');
    }
    Some(sql)
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
