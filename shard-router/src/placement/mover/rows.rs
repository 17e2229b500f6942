//! A move's row work: the snapshot copy, the catch-up's re-copy of changed
//! keys, and the check that source and target hold the same rows. Rows
//! travel as MariaDB's binary-protocol values (a prepared SELECT on the
//! source, its values the INSERT's parameters on the target), so a value
//! is written exactly as it was stored: no text round trip of floats or
//! temporal values.

use std::collections::HashMap;
use std::time::Instant;

use common::{Result, ShardId};
use meta::TableDef;
use mysql_async::prelude::*;
use mysql_async::{Conn, Params, Value};
use storage_adapter::{map_error, quote_ident};

use super::throttle::Throttle;
use crate::sql::physical_object;

/// MariaDB's limit on a statement's `?`s is 65,535.
const MAX_PARAMS: usize = 60_000;
/// Rows per INSERT of the copy.
const COPY_BATCH: usize = 500;
/// Keys per re-read of the catch-up.
const KEY_BATCH: usize = 500;

/// One physical table of the moving slot: its name on the source, and on
/// the target (the same, but when a move is undone into the source's
/// retired copy).
pub struct Physical {
    pub def: TableDef,
    pub database: String,
    pub name: String,
    /// `"db"."table"` as shard SQL names it, on the source.
    pub object: String,
    /// The same on the target.
    pub target: String,
    columns: String,
    /// The primary key's column names and positions (empty: keyless).
    pub key: Vec<String>,
    pub key_positions: Vec<usize>,
}

impl Physical {
    pub fn new(def: &TableDef, slot: u32) -> Physical {
        let name = def.physical_name(slot);
        let key_positions = def
            .primary_key
            .iter()
            .filter_map(|k| def.columns.iter().position(|c| c.name == *k))
            .collect();
        let object = physical_object(&def.schema, &name);
        Physical {
            target: object.clone(),
            object,
            database: meta::physical_database(&def.schema),
            columns: def
                .columns
                .iter()
                .map(|c| quote_ident(&c.name))
                .collect::<Vec<_>>()
                .join(", "),
            key: def.primary_key.clone(),
            key_positions,
            name,
            def: def.clone(),
        }
    }

    /// The same table written under another name on the target.
    pub fn into_target(mut self, name: &str) -> Physical {
        self.target = physical_object(&self.def.schema, name);
        self
    }

    fn width(&self) -> usize {
        self.def.columns.len().max(1)
    }

    fn key_tuple(&self) -> String {
        let cols: Vec<String> = self.key.iter().map(|k| quote_ident(k)).collect();
        if cols.len() == 1 {
            cols[0].clone()
        } else {
            format!("({})", cols.join(", "))
        }
    }

    fn key_placeholders(&self, n: usize) -> String {
        let one = if self.key.len() == 1 {
            "?".to_string()
        } else {
            format!("({})", vec!["?"; self.key.len()].join(", "))
        };
        vec![one; n].join(", ")
    }
}

/// What a copy moved.
#[derive(Debug, Default, Clone, Copy)]
pub struct Copied {
    pub rows: u64,
    pub bytes: u64,
}

fn value_bytes(v: &Value) -> u64 {
    match v {
        Value::Bytes(b) => b.len() as u64,
        Value::NULL => 1,
        _ => 8,
    }
}

/// Inserts `rows` (emptied) into the target table.
async fn write_rows(
    target: &mut Conn,
    shard: ShardId,
    t: &Physical,
    rows: &mut Vec<Vec<Value>>,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let one = format!("({})", vec!["?"; t.width()].join(", "));
    let sql = format!(
        "INSERT INTO {} ({}) VALUES {}",
        t.target,
        t.columns,
        vec![one; rows.len()].join(", ")
    );
    let params: Vec<Value> = rows.drain(..).flatten().collect();
    target
        .exec_drop(sql, Params::Positional(params))
        .await
        .map_err(|e| map_error(shard, e))
}

/// Copies every row `source` sees of the table (in its snapshot, or under
/// its lock) into the target's copy: the rows stream from the source's
/// result while each batch is written on the target's connection.
pub async fn copy_all(
    source: &mut Conn,
    from: ShardId,
    target: &mut Conn,
    to: ShardId,
    t: &Physical,
    throttle: &Throttle,
) -> Result<Copied> {
    let batch_rows = COPY_BATCH.min(MAX_PARAMS / t.width()).max(1);
    let mut copied = Copied::default();
    let mut result = source
        .exec_iter(format!("SELECT {} FROM {}", t.columns, t.object), ())
        .await
        .map_err(|e| map_error(from, e))?;
    let mut pending: Vec<Vec<Value>> = Vec::with_capacity(batch_rows);
    let mut started = Instant::now();
    while let Some(row) = result.next().await.map_err(|e| map_error(from, e))? {
        let values: Vec<Value> = row
            .unwrap_raw()
            .into_iter()
            .map(|v| v.unwrap_or(Value::NULL))
            .collect();
        copied.rows += 1;
        copied.bytes += values.iter().map(value_bytes).sum::<u64>();
        pending.push(values);
        if pending.len() >= batch_rows {
            write_rows(target, to, t, &mut pending).await?;
            throttle.after(started).await?;
            started = Instant::now();
        }
    }
    drop(result);
    write_rows(target, to, t, &mut pending).await?;
    Ok(copied)
}

/// Re-copies the rows of `keys` from the source to the target, in
/// batches: the target's rows of those keys are deleted and the source's
/// written. `source` reads in a catch-up pass's consistent snapshot (see
/// `super::feed`) or under the fence's lock. Returns how many keys.
pub async fn recopy_keys(
    source: &mut Conn,
    from: ShardId,
    target: &mut Conn,
    to: ShardId,
    t: &Physical,
    keys: &[Vec<Value>],
) -> Result<u64> {
    let per = KEY_BATCH.min(MAX_PARAMS / t.key.len().max(1)).max(1);
    let n = keys.len() as u64;
    for chunk in keys.chunks(per) {
        let params: Vec<Value> = chunk.iter().flatten().cloned().collect();
        let rows: Vec<mysql_async::Row> = source
            .exec(
                format!(
                    "SELECT {} FROM {} WHERE {} IN ({})",
                    t.columns,
                    t.object,
                    t.key_tuple(),
                    t.key_placeholders(chunk.len()),
                ),
                Params::Positional(params.clone()),
            )
            .await
            .map_err(|e| map_error(from, e))?;
        let mut found: Vec<Vec<Value>> = rows
            .into_iter()
            .map(|r| {
                r.unwrap_raw()
                    .into_iter()
                    .map(|v| v.unwrap_or(Value::NULL))
                    .collect()
            })
            .collect();
        target
            .exec_drop(
                format!(
                    "DELETE FROM {} WHERE {} IN ({})",
                    t.target,
                    t.key_tuple(),
                    t.key_placeholders(chunk.len())
                ),
                Params::Positional(params),
            )
            .await
            .map_err(|e| map_error(to, e))?;
        write_rows(target, to, t, &mut found).await?;
    }
    Ok(n)
}

/// The rows of the tables on the source as InnoDB estimates them (for a
/// move's ETA; no scan).
pub async fn estimated_rows(conn: &mut Conn, shard: ShardId, tables: &[Physical]) -> Result<u64> {
    let mut total = 0;
    for t in tables {
        let rows: Option<Option<u64>> = conn
            .exec_first(
                "SELECT table_rows FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
                (&t.database, &t.name),
            )
            .await
            .map_err(|e| map_error(shard, e))?;
        total += rows.flatten().unwrap_or(0);
    }
    Ok(total)
}

/// Empties the target's copy (a keyless table copied again whole).
pub async fn clear(target: &mut Conn, to: ShardId, t: &Physical) -> Result<()> {
    target
        .query_drop(format!("DELETE FROM {}", t.target))
        .await
        .map_err(|e| map_error(to, e))
}

/// Each row's key text and checksum on one side, for naming the keys
/// where source and target differ.
async fn row_sums(
    conn: &mut Conn,
    shard: ShardId,
    t: &Physical,
    object: &str,
) -> Result<HashMap<String, u64>> {
    let all: Vec<String> = t
        .def
        .columns
        .iter()
        .map(|c| format!("CAST(QUOTE({}) AS BINARY)", quote_ident(&c.name)))
        .collect();
    let key: Vec<String> = if t.key.is_empty() {
        all.clone()
    } else {
        t.key
            .iter()
            .map(|k| format!("CAST(QUOTE({}) AS BINARY)", quote_ident(k)))
            .collect()
    };
    let rows: Vec<(Vec<u8>, u64)> = conn
        .query(format!(
            "SELECT CONCAT_WS(',', {}), CRC32(CONCAT_WS(',', {})) FROM {}",
            key.join(", "),
            all.join(", "),
            object
        ))
        .await
        .map_err(|e| map_error(shard, e))?;
    let mut out = HashMap::new();
    for (k, sum) in rows {
        *out.entry(String::from_utf8_lossy(&k).into_owned())
            .or_insert(0) ^= sum;
    }
    Ok(out)
}

/// The keys (as text, at most `limit`) whose rows differ between the two
/// copies (`source_object`: the table's name on the source).
pub async fn differing_keys(
    source: &mut Conn,
    from: ShardId,
    source_object: &str,
    target: &mut Conn,
    to: ShardId,
    t: &Physical,
    limit: usize,
) -> Result<Vec<String>> {
    let a = row_sums(source, from, t, source_object).await?;
    let b = row_sums(target, to, t, &t.target).await?;
    let mut out: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .chain(b.keys().filter(|k| !a.contains_key(*k)).cloned())
        .collect();
    out.sort();
    out.truncate(limit);
    Ok(out)
}
