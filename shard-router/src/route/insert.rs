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
    Ok(insert_batches(placement, table, rows, on, false)?
        .into_iter()
        .map(|b| b.statement)
        .collect())
}

/// One INSERT for a shard and the rows it carries, so that what it
/// returns can be put back in the statement's row order.
#[derive(Debug)]
pub struct InsertBatch {
    pub statement: ShardInsert,
    /// The partition written (a mirror table's copies are its partitions).
    pub partition: u32,
    /// The indexes of its rows among the statement's rows, in the order
    /// they are written.
    pub rows: Vec<usize>,
}

/// [`insert_statements_on`] with each statement's partition and rows;
/// `returning`: each statement ends in `RETURNING` every column (in column
/// order), so the shard gives back each row as it stands after the
/// statement: inserted, or updated by `ON DUPLICATE KEY UPDATE`; `INSERT
/// IGNORE` gives back only the rows it inserted.
pub fn insert_batches(
    placement: &meta::Placement,
    table: &meta::TableDef,
    rows: &[Vec<common::Datum>],
    on: &OnConflict,
    returning: bool,
) -> common::Result<Vec<InsertBatch>> {
    let (verb, mut tail) = match on {
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
    if returning {
        tail.push_str(" RETURNING ");
        tail.push_str(&col_list);
    }
    let one = format!("({})", vec!["?"; table.columns.len()].join(", "));
    let mut out = vec![];
    for (p, idxs) in rows_by_partition(placement, table, rows)? {
        let shard = placement.shard_of(table, p)?;
        for chunk in idxs.chunks(INSERT_BATCH_ROWS) {
            let head = format!(
                "{verb} {} ({col_list}) VALUES ",
                physical_object(&table.schema, &table.physical_name(p)),
            );
            let literal = if chunk.len() > 1 {
                literal_insert(&head, chunk.iter().map(|i| &rows[*i]))
            } else {
                None
            };
            let statement = match literal {
                Some(sql) => (shard, format!("{sql}{tail}"), vec![]),
                None => {
                    let sql = format!("{head}{}{tail}", vec![one.as_str(); chunk.len()].join(", "));
                    let vals = chunk
                        .iter()
                        .flat_map(|i| rows[*i].iter().map(storage_adapter::convert::to_mysql))
                        .collect();
                    (shard, sql, vals)
                }
            };
            out.push(InsertBatch {
                statement,
                partition: p,
                rows: chunk.to_vec(),
            });
        }
    }
    Ok(out)
}

/// The rows the shards gave back for `batches` (`returned[i]` for
/// `batches[i]`), in the statement's row order, as PostgreSQL returns
/// them; a mirror table's rows from its first copy only. A batch that gave
/// back all its rows maps row for row (MariaDB returns them in the order
/// written); one that gave back fewer (`INSERT IGNORE` skipped some) is
/// matched by the table's unique key ([`match_key`]).
pub fn returned_in_order(
    table: &meta::TableDef,
    batches: &[InsertBatch],
    returned: Vec<Vec<Vec<common::Datum>>>,
    rows: &[Vec<common::Datum>],
) -> Vec<Vec<common::Datum>> {
    let first = batches.iter().map(|b| b.partition).min();
    let mirror = matches!(table.distribution, meta::Distribution::Mirror);
    let key = match_key(table);
    let mut placed: Vec<((usize, usize), Vec<common::Datum>)> = vec![];
    for (b, got) in batches.iter().zip(returned) {
        if (mirror && Some(b.partition) != first) || b.rows.is_empty() {
            continue;
        }
        if got.len() == b.rows.len() {
            placed.extend(b.rows.iter().map(|i| (*i, 0)).zip(got));
            continue;
        }
        let mut next = 0;
        for (n, r) in got.into_iter().enumerate() {
            let found = (next..b.rows.len()).find(|&x| same_key(&rows[b.rows[x]], &r, &key));
            match found {
                Some(x) => {
                    placed.push(((b.rows[x], 0), r));
                    next = x + 1;
                }
                // A value the shard gave back in another form: kept in
                // the order returned, after the last row matched.
                None => placed.push(((b.rows[next.min(b.rows.len() - 1)], n + 1), r)),
            }
        }
    }
    placed.sort_by_key(|(at, _)| *at);
    placed.into_iter().map(|(_, r)| r).collect()
}

/// The columns that tell a table's rows apart: its primary key, else the
/// columns of its unique indexes (none: no row can conflict, every row is
/// inserted).
fn match_key(table: &meta::TableDef) -> Vec<usize> {
    let names: Vec<&String> = if table.primary_key.is_empty() {
        table
            .indexes
            .iter()
            .filter(|i| i.unique)
            .flat_map(|i| &i.columns)
            .collect()
    } else {
        table.primary_key.iter().collect()
    };
    let mut key: Vec<usize> = names
        .into_iter()
        .filter_map(|c| table.column_index(c))
        .collect();
    key.sort_unstable();
    key.dedup();
    key
}

fn same_key(a: &[common::Datum], b: &[common::Datum], key: &[usize]) -> bool {
    key.iter().all(|&i| match (a.get(i), b.get(i)) {
        (Some(x), Some(y)) => x.sort_cmp(y) == std::cmp::Ordering::Equal,
        _ => false,
    })
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
    use common::{Datum, ShardId, SqlType, TableId};
    use meta::{ColumnDef, Distribution, TableDef};

    fn table(distribution: Distribution) -> TableDef {
        let col = |name: &str, ty| ColumnDef {
            name: name.into(),
            ty,
            not_null: false,
            default: None,
            sequence: None,
            identity: None,
        };
        TableDef {
            id: TableId(7),
            schema: "public".into(),
            name: "t".into(),
            columns: vec![col("id", SqlType::Integer), col("v", SqlType::Text)],
            primary_key: vec!["id".into()],
            distribution,
            indexes: vec![],
        }
    }

    fn hash() -> Distribution {
        Distribution::Hash {
            columns: vec!["id".into()],
            partitions: 3,
        }
    }

    fn placement() -> meta::Placement {
        let endpoint = |port| common::config::MysqlEndpoint {
            host: "127.0.0.1".into(),
            port,
            user: "tessera".into(),
            password: String::new(),
        };
        let mut p = meta::Placement::new(1, (1..=3).map(|i| (ShardId(i), endpoint(3306))));
        p.set_layout(TableId(7), vec![ShardId(1), ShardId(2), ShardId(3)]);
        p
    }

    fn row(id: i64, v: &str) -> Vec<Datum> {
        vec![Datum::Int(id), Datum::Text(v.into())]
    }

    fn batch(partition: u32, rows: Vec<usize>) -> InsertBatch {
        InsertBatch {
            statement: (ShardId(1), String::new(), vec![]),
            partition,
            rows,
        }
    }

    #[test]
    fn upserts_return_every_column_after_the_conflict_clause() {
        let t = table(hash());
        let rows: Vec<_> = (1..=6).map(|i| row(i, "x")).collect();
        let on = OnConflict::Update(vec![("v".into(), UpdateValue::Excluded("v".into()))]);
        let batches = insert_batches(&placement(), &t, &rows, &on, true).unwrap();
        let mut seen: Vec<usize> = batches.iter().flat_map(|b| b.rows.clone()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..6).collect::<Vec<_>>());
        for b in &batches {
            let sql = &b.statement.1;
            assert!(
                sql.ends_with(
                    "ON DUPLICATE KEY UPDATE \"v\" = VALUES(\"v\") RETURNING \"id\", \"v\""
                ),
                "{sql}"
            );
        }
        let plain = insert_statements_on(&placement(), &t, &rows, &OnConflict::Ignore).unwrap();
        assert!(plain
            .iter()
            .all(|s| s.1.starts_with("INSERT IGNORE") && !s.1.contains("RETURNING")));
    }

    #[test]
    fn returned_rows_come_back_in_the_statements_order() {
        let t = table(hash());
        let rows: Vec<_> = (0..5).map(|i| row(i, "in")).collect();
        // Rows 0, 2, 4 on one partition, 1, 3 on another; every row back
        // (DO UPDATE), with the values the shard holds.
        let batches = vec![batch(2, vec![1, 3]), batch(0, vec![0, 2, 4])];
        let got = returned_in_order(
            &t,
            &batches,
            vec![
                vec![row(1, "u1"), row(3, "u3")],
                vec![row(0, "u0"), row(2, "u2"), row(4, "u4")],
            ],
            &rows,
        );
        let ids: Vec<_> = got.iter().map(|r| r[0].clone()).collect();
        assert_eq!(ids, (0..5).map(Datum::Int).collect::<Vec<_>>());
        assert_eq!(got[3], row(3, "u3"));
        // DO NOTHING: rows 0 and 3 were there; the others are matched by
        // key.
        let got = returned_in_order(
            &t,
            &batches,
            vec![vec![row(1, "in")], vec![row(2, "in"), row(4, "in")]],
            &rows,
        );
        assert_eq!(got, vec![row(1, "in"), row(2, "in"), row(4, "in")]);
    }

    #[test]
    fn a_mirror_tables_rows_come_from_one_copy() {
        let t = table(Distribution::Mirror);
        let rows = vec![row(1, "a"), row(2, "b")];
        let batches = vec![batch(0, vec![0, 1]), batch(1, vec![0, 1])];
        let got = returned_in_order(
            &t,
            &batches,
            vec![vec![row(2, "b")], vec![row(2, "b")]],
            &rows,
        );
        assert_eq!(got, vec![row(2, "b")]);
    }
}
