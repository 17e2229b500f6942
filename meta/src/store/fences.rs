//! Move fences as meta records them (`move_fences`, `fence_acks`, schema
//! version 12): before a move locks its source tables it asks every
//! compute node to hold new transactions away from the slot's physical
//! tables and to say when the transactions already touching them have
//! ended (`shard_router::txn::fence`). Then the source's `LOCK TABLES`
//! finds the tables idle: no client waits on a metadata lock inside
//! MariaDB, so none can be part of a lock cycle with the fence.
//!
//! A fence is lowered in the meta transaction that switches the map, or
//! when the move gives up the attempt; one older than [`FENCE_EXPIRY_SECS`]
//! (its mover died) is ignored by every node.

use common::{Result, ShardId};
use mysql_async::prelude::*;

use super::{me, DdlTxn, MetaStore};

/// A fence is honoured for at most this long after it was raised.
pub const FENCE_EXPIRY_SECS: u32 = 30;

/// A node that has not beaten its heart for this long is not waited for.
const LIVE_NODE_SECS: u32 = 15;

/// One raised fence: the physical tables (as shard SQL names them) of one
/// slot on the move's source shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenceRecord {
    pub move_id: u64,
    pub shard: ShardId,
    pub objects: Vec<String>,
    /// When it was raised (meta's clock, as text): a fence raised again
    /// is a new one.
    pub raised_at: String,
}

/// What a node's catalog poll learns in one round trip.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaState {
    pub catalog_version: u64,
    /// The raised fences (move ids and when raised, in order; "" when
    /// none).
    pub fences: String,
    /// A move is catching up (its fence may come soon: poll more often).
    pub moving: bool,
}

impl MetaStore {
    /// The catalog version, the fences raised and whether a move is open.
    pub async fn poll_state(&self) -> Result<MetaState> {
        let mut conn = self.conn().await?;
        let row: Option<(u64, Option<String>, bool)> = conn
            .query_first(format!(
                "SELECT c.version, \
                 (SELECT GROUP_CONCAT(move_id, '@', raised_at ORDER BY move_id) FROM move_fences \
                  WHERE raised_at > NOW(3) - INTERVAL {FENCE_EXPIRY_SECS} SECOND), \
                 EXISTS (SELECT 1 FROM partition_moves WHERE phase = 'catching_up') \
                 FROM catalog_version c WHERE c.id = 1"
            ))
            .await
            .map_err(me)?;
        Ok(row
            .map(|(catalog_version, fences, moving)| MetaState {
                catalog_version,
                fences: fences.unwrap_or_default(),
                moving,
            })
            .unwrap_or_default())
    }

    /// Every fence raised and not expired.
    pub async fn fences(&self) -> Result<Vec<FenceRecord>> {
        let mut conn = self.conn().await?;
        let rows: Vec<(u64, u32, String, String)> = conn
            .query(format!(
                "SELECT move_id, shard_id, objects, CAST(raised_at AS CHAR) FROM move_fences \
                 WHERE raised_at > NOW(3) - INTERVAL {FENCE_EXPIRY_SECS} SECOND ORDER BY move_id"
            ))
            .await
            .map_err(me)?;
        Ok(rows
            .into_iter()
            .map(|(move_id, shard, objects, raised_at)| FenceRecord {
                move_id,
                shard: ShardId(shard),
                objects: objects.lines().map(str::to_string).collect(),
                raised_at,
            })
            .collect())
    }

    /// Raises (or raises again) a move's fence; earlier answers are void.
    pub async fn raise_fence(&self, f: &FenceRecord) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop("DELETE FROM fence_acks WHERE move_id = ?", (f.move_id,))
            .await
            .map_err(me)?;
        conn.exec_drop(
            "REPLACE INTO move_fences (move_id, shard_id, objects, raised_at) VALUES (?, ?, ?, NOW(3))",
            (f.move_id, f.shard.0, f.objects.join("\n")),
        )
        .await
        .map_err(me)
    }

    /// Lowers a move's fence (nothing if none is raised).
    pub async fn lower_fence(&self, move_id: u64) -> Result<()> {
        lower(&mut self.conn().await?, move_id).await
    }

    /// A node's answer: it holds new transactions away from the fenced
    /// tables, and none of its older ones is still open.
    pub async fn ack_fence(&self, move_id: u64, node_id: u32) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "INSERT IGNORE INTO fence_acks (move_id, node_id) \
             SELECT move_id, ? FROM move_fences WHERE move_id = ?",
            (node_id, move_id),
        )
        .await
        .map_err(me)
    }

    /// How many live compute nodes have not answered the move's fence.
    pub async fn fence_unanswered(&self, move_id: u64) -> Result<u64> {
        let mut conn = self.conn().await?;
        let n: Option<u64> = conn
            .exec_first(
                format!(
                    "SELECT COUNT(*) FROM compute_nodes n \
                     WHERE n.heartbeat_at > NOW() - INTERVAL {LIVE_NODE_SECS} SECOND \
                     AND NOT EXISTS (SELECT 1 FROM fence_acks a \
                                     WHERE a.move_id = ? AND a.node_id = n.node_id)"
                ),
                (move_id,),
            )
            .await
            .map_err(me)?;
        Ok(n.unwrap_or(0))
    }
}

impl DdlTxn {
    /// The move's fence lowered in the transaction that switches the map:
    /// nodes see the new map and the open slot at once.
    pub async fn lower_fence(&mut self, move_id: u64) -> Result<()> {
        lower(self.c()?, move_id).await
    }
}

/// A move's fence and its answers deleted on `conn`.
async fn lower(conn: &mut mysql_async::Conn, move_id: u64) -> Result<()> {
    conn.exec_drop("DELETE FROM move_fences WHERE move_id = ?", (move_id,))
        .await
        .map_err(me)?;
    conn.exec_drop("DELETE FROM fence_acks WHERE move_id = ?", (move_id,))
        .await
        .map_err(me)
}
