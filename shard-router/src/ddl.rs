//! DDL on the shards: the MariaDB statements that create, drop and index the
//! physical tables of a logical table, and their application on every shard.

use common::{Result, ShardId, SqlType};
use futures::future::join_all;
use meta::{IndexDef, TableDef};
use mysql_async::prelude::*;
use storage_adapter::{map_error, quote_ident};

use crate::render::physical_object;
use crate::Router;

/// Longest string a key column may hold on a shard (3072-byte InnoDB key
/// limit / 4 bytes per utf8mb4 character).
pub const KEY_TEXT_CHARS: u32 = 768;

fn column_ddl(def: &TableDef, col: &meta::ColumnDef) -> String {
    let in_key = def.primary_key.contains(&col.name)
        || def.indexes.iter().any(|i| i.columns.contains(&col.name));
    let ty = match col.ty {
        SqlType::Text | SqlType::Varchar(None) if in_key => format!("VARCHAR({KEY_TEXT_CHARS})"),
        SqlType::Bytea if in_key => format!("VARBINARY({})", KEY_TEXT_CHARS * 4),
        t => t.mysql_ddl(),
    };
    let null = if col.not_null { " NOT NULL" } else { " NULL" };
    format!("{} {ty}{null}", quote_ident(&col.name))
}

fn cols(c: &[String]) -> String {
    c.iter()
        .map(|x| quote_ident(x))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `CREATE TABLE` of one physical table (a partition or a whole copy).
pub fn create_table_sql(def: &TableDef, partition: u32) -> String {
    let mut parts: Vec<String> = def.columns.iter().map(|c| column_ddl(def, c)).collect();
    if !def.primary_key.is_empty() {
        parts.push(format!("PRIMARY KEY ({})", cols(&def.primary_key)));
    }
    for ix in &def.indexes {
        parts.push(format!(
            "{}KEY {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            quote_ident(&ix.name),
            cols(&ix.columns)
        ));
    }
    format!(
        // No IF NOT EXISTS: the name carries the table id, so a table of
        // that name is never another table's to adopt.
        "CREATE TABLE {} ({}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin",
        physical_object(&def.schema, &def.physical_name(partition)),
        parts.join(", ")
    )
}

/// Every (shard, physical partition) of a table.
pub fn placements(def: &TableDef) -> Vec<(ShardId, u32)> {
    def.partition_shards
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                *s,
                if matches!(def.distribution, meta::Distribution::Hash { .. }) {
                    i as u32
                } else {
                    0
                },
            )
        })
        .collect()
}

/// Runs the statements on their shards, shards in parallel and each shard's
/// statements in order.
/// Runs each shard's statements in order, shards concurrently. Every
/// shard's work runs to its end or its first error before this returns
/// (then the first error is reported): a CREATE still running on one shard
/// when another failed would otherwise finish after the cleanup's DROP and
/// leave a table no queue entry remembers.
pub async fn run_on_shards(router: &Router, work: Vec<(ShardId, Vec<String>)>) -> Result<()> {
    let results = join_all(work.into_iter().map(|(shard, stmts)| async move {
        let mut conn = router.shard(shard)?.conn().await?;
        for s in stmts {
            conn.query_drop(&s).await.map_err(|e| map_error(shard, e))?;
        }
        Ok::<_, common::Error>(())
    }))
    .await;
    results.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
}

fn group(def: &TableDef, f: impl Fn(u32) -> Vec<String>) -> Vec<(ShardId, Vec<String>)> {
    let mut out: Vec<(ShardId, Vec<String>)> = vec![];
    for (shard, p) in placements(def) {
        let stmts = f(p);
        match out.iter_mut().find(|(s, _)| *s == shard) {
            Some((_, v)) => v.extend(stmts),
            None => out.push((shard, stmts)),
        }
    }
    out
}

pub fn ensure_schema_sql(schema: &str) -> String {
    format!(
        "CREATE DATABASE IF NOT EXISTS {} CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
        quote_ident(&meta::physical_database(schema))
    )
}

pub async fn create_table(router: &Router, def: &TableDef) -> Result<()> {
    let schema_sql = ensure_schema_sql(&def.schema);
    run_on_shards(
        router,
        group(def, |p| vec![schema_sql.clone(), create_table_sql(def, p)]),
    )
    .await
}

/// Every physical table of `def`: (shard, database, table).
pub fn physical_tables(def: &TableDef) -> Vec<(ShardId, String, String)> {
    placements(def)
        .into_iter()
        .map(|(shard, p)| {
            (
                shard,
                meta::physical_database(&def.schema),
                def.physical_name(p),
            )
        })
        .collect()
}

/// Drops physical tables, each forgotten in the queue of meta's
/// `pending_drops` once gone. Shards in parallel; every drop is tried, and
/// the first error is returned after all were (the rest stay queued for
/// recovery).
pub async fn drop_physical(router: &Router, tables: &[(ShardId, String, String)]) -> Result<()> {
    let results = join_all(tables.iter().map(|(shard, db, tbl)| async move {
        let mut conn = router.shard(*shard)?.conn().await?;
        conn.query_drop(format!(
            "DROP TABLE IF EXISTS {}.{}",
            quote_ident(db),
            quote_ident(tbl)
        ))
        .await
        .map_err(|e| map_error(*shard, e))?;
        router.meta.unqueue_drop(*shard, db, tbl).await
    }))
    .await;
    results.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
}

/// Recovery's part of DDL: physical tables queued for dropping whose table
/// is not in the catalog, dropped under the DDL lock. Returns how many.
pub async fn drop_orphans(router: &Router) -> Result<usize> {
    let Some(claim) = router.meta.claim_orphans().await? else {
        return Ok(0);
    };
    let n = claim.drops.len();
    let r = drop_physical(router, &claim.drops).await;
    drop(claim);
    r.map(|_| n)
}

pub async fn create_index(router: &Router, def: &TableDef, ix: &IndexDef) -> Result<()> {
    run_on_shards(
        router,
        group(def, |p| {
            vec![format!(
                "CREATE {}INDEX IF NOT EXISTS {} ON {} ({})",
                if ix.unique { "UNIQUE " } else { "" },
                quote_ident(&ix.name),
                physical_object(&def.schema, &def.physical_name(p)),
                cols(&ix.columns)
            )]
        }),
    )
    .await
}

pub async fn drop_index(router: &Router, def: &TableDef, name: &str) -> Result<()> {
    run_on_shards(
        router,
        group(def, |p| {
            vec![format!(
                "DROP INDEX IF EXISTS {} ON {}",
                quote_ident(name),
                physical_object(&def.schema, &def.physical_name(p))
            )]
        }),
    )
    .await
}

pub async fn drop_schema(router: &Router, shards: &[ShardId], schema: &str) -> Result<()> {
    let sql = format!(
        "DROP DATABASE IF EXISTS {}",
        quote_ident(&meta::physical_database(schema))
    );
    run_on_shards(
        router,
        shards.iter().map(|s| (*s, vec![sql.clone()])).collect(),
    )
    .await
}
