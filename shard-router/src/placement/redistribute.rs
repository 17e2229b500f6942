//! Moving a table's rows to a new layout (another distribution, key or
//! partition count): `ALTER TABLE ... ADD PRIMARY KEY` on a keyless table
//! that the cluster's default hashes once keyed, and `ALTER TABLE ... SET
//! (distribution = ...)`. The caller holds meta's DDL lock and commits the
//! catalog between [`copy_rows`] and [`Moved::finish`]:
//!
//! 1. the new layout's physical tables are created (queued for dropping
//!    until the catalog commits, like a CREATE TABLE's);
//! 2. every physical table of the old layout is locked (`LOCK TABLES ...
//!    WRITE` on one connection per shard): writers and readers of the old
//!    layout wait; open transactions on it finish first;
//! 3. the rows are streamed from the old layout (one copy of a mirror
//!    table) and inserted into the new one in batches;
//! 4. row count and checksum (sum and xor of each row's CRC32 over its
//!    columns' quoted values) of both layouts must match;
//! 5. the caller commits the catalog (a new table id, the new layout);
//! 6. [`Moved::finish`] drops the old physical tables under their locks
//!    and unlocks: a statement still waiting on the old layout (planned
//!    with the old catalog) fails with 42P01 instead of writing rows that
//!    would be lost.
//!
//! If anything fails before 5, the new physical tables are dropped and the
//! locks released: the table is as it was.

use common::{Datum, Error, Result, ShardId};
use futures::future::join_all;
use meta::{Placement, TableDef};
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::{convert, map_error, quote_ident};

use crate::route::INSERT_BATCH_ROWS;
use crate::sql::physical_object;
use crate::Router;

/// How long a redistribution waits for the old layout's open transactions.
const LOCK_WAIT_SECS: u32 = 60;

/// What a redistribution moved, checked on both layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Checksum {
    pub rows: u64,
    pub crc_sum: u128,
    pub crc_xor: u64,
}

impl Checksum {
    fn add(&mut self, o: Checksum) {
        self.rows += o.rows;
        self.crc_sum += o.crc_sum;
        self.crc_xor ^= o.crc_xor;
    }
}

/// The old layout, locked, after its rows were copied.
pub struct Moved {
    locks: Vec<(ShardId, Conn, Vec<String>)>,
    pub checksum: Checksum,
}

/// The checksum of one physical table (`db.tbl` rendered).
/// `LOCK TABLES` taking every one of `objects` (shard SQL names) for
/// writing.
pub(super) fn lock_tables_sql(objects: &[String]) -> String {
    let each: Vec<String> = objects.iter().map(|o| format!("{o} WRITE")).collect();
    format!("LOCK TABLES {}", each.join(", "))
}

pub(super) async fn checksum_of(
    conn: &mut Conn,
    shard: ShardId,
    def: &TableDef,
    object: &str,
) -> Result<Checksum> {
    let cols = def
        .columns
        .iter()
        // As bytes: columns of different collations (char's PAD SPACE,
        // the rest NO PAD) cannot be concatenated as text.
        .map(|c| format!("CAST(QUOTE({}) AS BINARY)", quote_ident(&c.name)))
        .collect::<Vec<_>>()
        .join(", ");
    let row: Option<(u64, Option<String>, Option<u64>)> = conn
        .query_first(format!(
            "SELECT COUNT(*), CAST(SUM(CRC32(CONCAT_WS(',', {cols}))) AS CHAR), BIT_XOR(CRC32(CONCAT_WS(',', {cols}))) FROM {object}"
        ))
        .await
        .map_err(|e| map_error(shard, e))?;
    let (rows, sum, xor) = row.unwrap_or_default();
    Ok(Checksum {
        rows,
        crc_sum: sum.and_then(|s| s.parse().ok()).unwrap_or(0),
        crc_xor: xor.unwrap_or(0),
    })
}

/// Steps 1 to 4 (see the module's documentation). `to` has the new id.
/// `target` is the placement map with `to`'s new layout.
pub async fn copy_rows(
    router: &Router,
    from: &TableDef,
    to: &TableDef,
    target: &Placement,
) -> Result<Moved> {
    let physical = target.physical_tables(to)?;
    router.meta.queue_drops(to.id, &physical).await?;
    super::ddl::create_table(router, target, to).await?;
    match lock_and_copy(router, from, to, target).await {
        Ok(m) => Ok(m),
        Err(e) => {
            let _ = super::ddl::drop_physical(router, &physical).await;
            Err(e)
        }
    }
}

async fn lock_and_copy(
    router: &Router,
    from: &TableDef,
    to: &TableDef,
    target: &Placement,
) -> Result<Moved> {
    // One locking connection per shard of the old layout.
    let mut by_shard: Vec<(ShardId, Vec<String>)> = vec![];
    for (shard, p) in router.placement().partitions(from)? {
        let object = physical_object(&from.schema, &from.physical_name(p));
        match by_shard.iter_mut().find(|(s, _)| *s == shard) {
            Some((_, v)) => v.push(object),
            None => by_shard.push((shard, vec![object])),
        }
    }
    let mut moved = Moved {
        locks: vec![],
        checksum: Checksum::default(),
    };
    for (shard, objects) in by_shard {
        let mut conn = router.shard(shard)?.conn().await?;
        let lock = lock_tables_sql(&objects);
        conn.query_drop(format!("SET SESSION lock_wait_timeout = {LOCK_WAIT_SECS}"))
            .await
            .map_err(|e| map_error(shard, e))?;
        // Held from here on: `Moved`'s drop unlocks (or disconnects).
        let r = conn.query_drop(lock).await.map_err(|e| map_error(shard, e));
        moved.locks.push((shard, conn, objects));
        r?;
    }
    // A mirror table's copies are equal: one is read.
    let read_all = !matches!(from.distribution, meta::Distribution::Mirror);
    let mut expected = Checksum::default();
    let types: Vec<common::SqlType> = from.columns.iter().map(|c| c.ty).collect();
    let col_list = from
        .columns
        .iter()
        .map(|c| quote_ident(&c.name))
        .collect::<Vec<_>>()
        .join(", ");
    for (shard, conn, objects) in moved.locks.iter_mut() {
        for object in objects.iter() {
            expected.add(checksum_of(conn, *shard, from, object).await?);
            let mut result = conn
                .query_iter(format!("SELECT {col_list} FROM {object}"))
                .await
                .map_err(|e| map_error(*shard, e))?;
            let mut batch: Vec<Vec<Datum>> = Vec::with_capacity(INSERT_BATCH_ROWS);
            while let Some(row) = result.next().await.map_err(|e| map_error(*shard, e))? {
                let mut out = Vec::with_capacity(types.len());
                for (v, ty) in row.unwrap_raw().into_iter().zip(&types) {
                    out.push(convert::from_mysql(
                        v.unwrap_or(mysql_async::Value::NULL),
                        ty,
                    )?);
                }
                batch.push(out);
                if batch.len() >= INSERT_BATCH_ROWS {
                    insert(router, target, to, &std::mem::take(&mut batch)).await?;
                }
            }
            drop(result);
            insert(router, target, to, &batch).await?;
            if !read_all {
                break;
            }
        }
        if !read_all {
            break;
        }
    }
    let sums = join_all(
        target
            .partitions(to)?
            .into_iter()
            .map(|(shard, p)| async move {
                let mut conn = router.shard(shard)?.conn().await?;
                checksum_of(
                    &mut conn,
                    shard,
                    to,
                    &physical_object(&to.schema, &to.physical_name(p)),
                )
                .await
            }),
    )
    .await;
    // Each copy of a mirror target holds every row; partitions share them.
    let mut copied = Checksum::default();
    for s in sums {
        let s = s?;
        if matches!(to.distribution, meta::Distribution::Mirror) {
            if s != expected {
                copied = s;
                break;
            }
            copied = expected;
        } else {
            copied.add(s);
        }
    }
    if copied != expected {
        return Err(Error::internal(format!(
            "moving the rows of {} was not exact (read {expected:?}, written {copied:?})",
            from.qualified_name()
        )));
    }
    moved.checksum = expected;
    Ok(moved)
}

async fn insert(
    router: &Router,
    target: &Placement,
    to: &TableDef,
    rows: &[Vec<Datum>],
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let work = crate::route::insert_statements(target, to, rows)?;
    let results = join_all(work.into_iter().map(|(shard, sql, vals)| async move {
        let mut conn = router.shard(shard)?.conn().await?;
        if vals.is_empty() {
            conn.query_drop(&sql).await
        } else {
            conn.exec_drop(&sql, vals).await
        }
        .map_err(|e| map_error(shard, e))
    }))
    .await;
    results.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
}

impl Moved {
    /// Step 6: the old physical tables dropped under their locks, then
    /// unlocked. Run after the catalog commit; a failure leaves the old
    /// tables queued for recovery to drop.
    /// `source` is the placement map `from` was read under.
    pub async fn finish(
        mut self,
        router: &Router,
        source: &Placement,
        from: &TableDef,
    ) -> Result<()> {
        let physical = source.physical_tables(from)?;
        router.meta.queue_drops(from.id, &physical).await?;
        let mut first_err = None;
        for (shard, mut conn, objects) in std::mem::take(&mut self.locks) {
            let r = async {
                conn.query_drop(format!("DROP TABLE {}", objects.join(", ")))
                    .await
                    .map_err(|e| map_error(shard, e))?;
                conn.query_drop("UNLOCK TABLES")
                    .await
                    .map_err(|e| map_error(shard, e))?;
                conn.query_drop("SET SESSION lock_wait_timeout = DEFAULT")
                    .await
                    .map_err(|e| map_error(shard, e))
            }
            .await;
            match r {
                Ok(()) => {
                    for (s, db, tbl) in &physical {
                        if *s == shard {
                            let _ = router.meta.unqueue_drop(*s, db, tbl).await;
                        }
                    }
                }
                Err(e) => {
                    let _ = conn.disconnect().await;
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

impl Drop for Moved {
    /// Not finished (an error, or the catalog commit failed): the old
    /// layout stays, unlocked. A connection that cannot say UNLOCK is
    /// closed, which releases its locks.
    fn drop(&mut self) {
        for (_, mut conn, _) in std::mem::take(&mut self.locks) {
            tokio::spawn(async move {
                let unlocked = conn.query_drop("UNLOCK TABLES").await.is_ok()
                    && conn
                        .query_drop("SET SESSION lock_wait_timeout = DEFAULT")
                        .await
                        .is_ok();
                if !unlocked {
                    let _ = conn.disconnect().await;
                }
            });
        }
    }
}
