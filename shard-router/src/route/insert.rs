//! INSERTs of evaluated rows: each row routed to the partitions that store
//! it ([`rows_by_partition`]), rendered in batches for the shards that hold
//! them, with what a row whose key is already there does ([`OnConflict`]).

use super::plan::rows_by_partition;
use crate::sql::physical_object;

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
    for (p, idxs) in rows_by_partition(placement, table, rows)? {
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
