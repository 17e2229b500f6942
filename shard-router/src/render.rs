//! Renders statements for a shard: table names rewritten to the partition's
//! physical name, every identifier quoted (shard sessions run with
//! ANSI_QUOTES), `$n` placeholders turned into MySQL `?` with the order of
//! parameters recorded. Only expressions in the [`is_safe_expr`] subset are
//! sent this way: MariaDB evaluates them exactly as PostgreSQL does.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, visit_relations_mut, BinaryOperator, Expr, Ident, ObjectName,
    ObjectNamePart, Statement, UnaryOperator, Value,
};

use crate::route::{normalize_ident, placeholder_index};

/// Quotes an identifier after PostgreSQL case folding.
pub fn quoted(i: &Ident) -> Ident {
    Ident::with_quote('"', normalize_ident(i))
}

/// `"schema"."table"` as an object name.
pub fn physical_object(schema: &str, table: &str) -> ObjectName {
    ObjectName(vec![
        ObjectNamePart::Identifier(Ident::with_quote('"', schema)),
        ObjectNamePart::Identifier(Ident::with_quote('"', table)),
    ])
}

/// Renders `stmt` for MariaDB. `map_table` returns the physical name of each
/// logical table reference. Returns the SQL and, for each `?`, the index of
/// the client parameter it stands for.
pub fn render(
    stmt: &Statement,
    mut map_table: impl FnMut(&ObjectName) -> Option<ObjectName>,
) -> (String, Vec<usize>) {
    let mut s = stmt.clone();
    let _ = visit_relations_mut(&mut s, |name| {
        if let Some(p) = map_table(name) {
            *name = p;
        }
        ControlFlow::<()>::Continue(())
    });
    let _ = visit_expressions_mut(&mut s, |e| {
        match e {
            Expr::Identifier(i) => *i = quoted(i),
            Expr::CompoundIdentifier(parts) => {
                // Qualifiers name the logical table; the shard knows only
                // the physical one, so keep just the column.
                if let Some(last) = parts.last() {
                    *e = Expr::Identifier(quoted(last));
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    if let Statement::Update(u) = &mut s {
        for a in &mut u.assignments {
            if let datafusion::sql::sqlparser::ast::AssignmentTarget::ColumnName(n) = &mut a.target
            {
                if let Some(ObjectNamePart::Identifier(i)) = n.0.last() {
                    *n = ObjectName(vec![ObjectNamePart::Identifier(quoted(i))]);
                }
            }
        }
    }
    placeholders_to_mysql(&s.to_string())
}

/// Replaces `$n` outside quotes with `?`, recording the parameter order.
pub fn placeholders_to_mysql(sql: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(sql.len());
    let mut order = vec![];
    let b = sql.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                out.push(c as char);
                i += 1;
            }
            None => {
                if c == b'\'' || c == b'"' || c == b'`' {
                    quote = Some(c);
                    out.push(c as char);
                    i += 1;
                } else if c == b'$' && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                    let mut j = i + 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    if let Some(idx) = placeholder_index(&sql[i..j]) {
                        order.push(idx);
                    }
                    out.push('?');
                    i = j;
                } else {
                    // Multi-byte UTF-8 sequences are copied byte-exact.
                    let ch_len = utf8_len(c);
                    out.push_str(&sql[i..(i + ch_len).min(sql.len())]);
                    i += ch_len;
                }
            }
        }
    }
    (out, order)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
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
                | Value::Boolean(_)
                | Value::Null
                | Value::Placeholder(_)
        ),
        Expr::BinaryOp { left, op, right } => {
            matches!(
                op,
                BinaryOperator::Eq
                    | BinaryOperator::NotEq
                    | BinaryOperator::Lt
                    | BinaryOperator::LtEq
                    | BinaryOperator::Gt
                    | BinaryOperator::GtEq
                    | BinaryOperator::And
                    | BinaryOperator::Or
                    | BinaryOperator::Plus
                    | BinaryOperator::Minus
                    | BinaryOperator::Multiply
            ) && is_safe_expr(left)
                && is_safe_expr(right)
        }
        Expr::UnaryOp { op, expr } => {
            matches!(op, UnaryOperator::Not | UnaryOperator::Minus) && is_safe_expr(expr)
        }
        Expr::IsNull(x) | Expr::IsNotNull(x) | Expr::Nested(x) => is_safe_expr(x),
        Expr::InList { expr, list, .. } => is_safe_expr(expr) && list.iter().all(is_safe_expr),
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
pub fn insert_statements(table: &meta::TableDef, rows: &[Vec<common::Datum>]) -> Vec<ShardInsert> {
    let col_list = table
        .columns
        .iter()
        .map(|c| storage_adapter::quote_ident(&c.name))
        .collect::<Vec<_>>()
        .join(", ");
    let one = format!("({})", vec!["?"; table.columns.len()].join(", "));
    let mut out = vec![];
    for (p, idxs) in crate::route::rows_by_partition(table, rows) {
        let shard = table.partition_shards[p as usize];
        for chunk in idxs.chunks(INSERT_BATCH_ROWS) {
            let head = format!(
                "INSERT INTO {} ({col_list}) VALUES ",
                physical_object(&table.schema, &table.physical_name(p)),
            );
            if chunk.len() > 1 {
                if let Some(sql) = literal_insert(&head, chunk.iter().map(|i| &rows[*i])) {
                    out.push((shard, sql, vec![]));
                    continue;
                }
            }
            let sql = format!("{head}{}", vec![one.as_str(); chunk.len()].join(", "));
            let vals = chunk
                .iter()
                .flat_map(|i| rows[*i].iter().map(storage_adapter::convert::to_mysql))
                .collect();
            out.push((shard, sql, vals));
        }
    }
    out
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
    fn renders_physical_names_quotes_and_placeholders() {
        let stmt = Parser::parse_sql(
            &PostgreSqlDialect {},
            "SELECT c, t.Pad FROM t WHERE id = $2 AND k BETWEEN $1 AND 10 AND c = '$3 it''s'",
        )
        .unwrap()
        .remove(0);
        let (sql, order) = render(&stmt, |_| Some(physical_object("public", "t_p1")));
        assert_eq!(
            sql,
            "SELECT \"c\", \"pad\" FROM \"public\".\"t_p1\" WHERE \"id\" = ? AND \"k\" BETWEEN ? AND 10 AND \"c\" = '$3 it''s'"
        );
        assert_eq!(order, vec![1, 0]);
        // Round trip: the rendering parses again.
        Parser::parse_sql(&PostgreSqlDialect {}, &sql.replace('?', "1")).unwrap();
    }
}
