//! Physical tables queued for dropping, and the recovery of orphans.

use common::{Result, ShardId, TableId};
use mysql_async::prelude::*;
use mysql_async::Conn;

use super::{me, DdlTxn, MetaStore};

/// The queue's rows for `drops` of table `table_id`, on `conn`.
async fn insert_drops(
    conn: &mut Conn,
    table_id: TableId,
    drops: &[(ShardId, String, String)],
) -> Result<()> {
    for (shard, db, tbl) in drops {
        conn.exec_drop(
            "INSERT IGNORE INTO pending_drops (shard_id, db, tbl, table_id) VALUES (?, ?, ?, ?)",
            (shard.0, db, tbl, table_id.0),
        )
        .await
        .map_err(me)?;
    }
    Ok(())
}

impl DdlTxn {
    /// Queues physical tables to drop in this DDL transaction: they are
    /// dropped (by the orphan sweep) only if it commits.
    pub async fn queue_drops(
        &mut self,
        table_id: TableId,
        drops: &[(ShardId, String, String)],
    ) -> Result<()> {
        insert_drops(self.c()?, table_id, drops).await
    }
}

impl MetaStore {
    /// Records physical tables to drop (shard, database, table) for table
    /// `table_id`, committed at once: they outlive this node.
    pub async fn queue_drops(
        &self,
        table_id: TableId,
        drops: &[(ShardId, String, String)],
    ) -> Result<()> {
        insert_drops(&mut self.conn().await?, table_id, drops).await
    }

    /// Forgets a queued drop (done, or its table exists after all).
    pub async fn unqueue_drop(&self, shard: ShardId, db: &str, tbl: &str) -> Result<()> {
        self.conn()
            .await?
            .exec_drop(
                "DELETE FROM pending_drops WHERE shard_id = ? AND db = ? AND tbl = ?",
                (shard.0, db, tbl),
            )
            .await
            .map_err(me)
    }

    /// Queued drops whose table is not in the catalog (a committed DROP,
    /// or a CREATE that never committed), if no DDL is running: returns
    /// them with a connection holding the DDL lock, so no CREATE can
    /// commit one of them meanwhile. `None` when there is nothing to do or
    /// another node holds the lock.
    pub async fn claim_orphans(&self) -> Result<Option<OrphanClaim>> {
        let mut conn = self.conn().await?;
        let any: Option<i64> = conn
            .query_first("SELECT 1 FROM pending_drops LIMIT 1")
            .await
            .map_err(me)?;
        if any.is_none() {
            return Ok(None);
        }
        let got: Option<Option<i64>> = conn
            .query_first("SELECT GET_LOCK('tessera_ddl', 0)")
            .await
            .map_err(me)?;
        if got.flatten() != Some(1) {
            return Ok(None);
        }
        // Queued but a physical table of the catalog: its CREATE (or the
        // redistribution that made it) committed after all (the queue
        // entry is removed after the commit, so a crash can leave one), or
        // the old layout of a redistribution that never committed. The
        // catalog cannot change meanwhile: this connection holds the lock.
        let catalog = self.load_catalog().await?;
        let live: std::collections::HashSet<(ShardId, String, String)> = catalog
            .tables
            .values()
            .flat_map(|t| catalog.placement.physical_tables(t).unwrap_or_default())
            .collect();
        let rows: Vec<(u32, String, String)> = conn
            .query("SELECT shard_id, db, tbl FROM pending_drops")
            .await
            .map_err(me)?;
        let mut drops = vec![];
        for (s, d, t) in rows {
            let entry = (ShardId(s), d, t);
            if live.contains(&entry) {
                conn.exec_drop(
                    "DELETE FROM pending_drops WHERE shard_id = ? AND db = ? AND tbl = ?",
                    (s, &entry.1, &entry.2),
                )
                .await
                .map_err(me)?;
            } else {
                drops.push(entry);
            }
        }
        Ok(Some(OrphanClaim {
            conn: Some(conn),
            drops,
        }))
    }
}

/// Queued physical drops claimed under the DDL lock; the lock is released
/// when the claim is dropped.
pub struct OrphanClaim {
    conn: Option<Conn>,
    pub drops: Vec<(ShardId, String, String)>,
}

impl Drop for OrphanClaim {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            tokio::spawn(async move {
                if conn
                    .query_drop("DO RELEASE_LOCK('tessera_ddl')")
                    .await
                    .is_err()
                {
                    // Never pool a connection that may still hold the lock.
                    let _ = conn.disconnect().await;
                }
            });
        }
    }
}
