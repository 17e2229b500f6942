//! Replicated shards as meta records them (schema version 13): each
//! shard's replicas (`shard_replicas`), the lease of the one compute node
//! that watches the primaries (`leases`), and every failover
//! (`failovers`). `shards` keeps naming each shard's primary: a failover
//! changes that row, moves the placement epoch and the catalog version in
//! one meta transaction, so every node's next catalog poll routes to the
//! new primary (`shard_router::failover`).

use common::{Error, Result, ShardId};
use mysql_async::prelude::*;

use super::{me, MetaStore};

/// What a replica is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    /// Streaming the primary's binary log; a candidate for promotion.
    Replica,
    /// A primary that was failed over: read-only at best, and it may
    /// hold transactions no replica acknowledged. Never promoted, never
    /// routed to; it rejoins only after being rebuilt.
    Failed,
}

impl ReplicaState {
    pub fn as_str(&self) -> &'static str {
        match self {
            ReplicaState::Replica => "replica",
            ReplicaState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "replica" => Ok(ReplicaState::Replica),
            "failed" => Ok(ReplicaState::Failed),
            other => Err(Error::meta(format!("unknown replica state {other}"))),
        }
    }
}

/// One replica of a shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaRecord {
    pub shard: ShardId,
    pub host: String,
    pub port: u16,
    pub state: ReplicaState,
}

/// A failover as the failover watcher decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failover {
    pub shard: ShardId,
    /// The primary that stopped answering.
    pub old: (String, u16),
    /// The replica promoted in its place.
    pub new: (String, u16),
    /// The new primary's GTID position when it was promoted.
    pub gtid: String,
    /// From the first missed probe to the promotion, in ms.
    pub detected_ms: u32,
}

impl MetaStore {
    /// Every shard's replicas, by shard.
    pub async fn shard_replicas(&self) -> Result<Vec<ReplicaRecord>> {
        let mut conn = self.conn().await?;
        let rows: Vec<(u32, String, u16, String)> = conn
            .query("SELECT shard_id, host, port, state FROM shard_replicas ORDER BY shard_id, port")
            .await
            .map_err(me)?;
        rows.into_iter()
            .map(|(shard, host, port, state)| {
                Ok(ReplicaRecord {
                    shard: ShardId(shard),
                    host,
                    port,
                    state: ReplicaState::parse(&state)?,
                })
            })
            .collect()
    }

    /// Records a replica of a shard (made by `tessera cluster up`); a
    /// server already recorded keeps its state, and one promoted to
    /// primary is not a replica.
    pub async fn register_replica(&self, shard: ShardId, host: &str, port: u16) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "INSERT IGNORE INTO shard_replicas (shard_id, host, port, state) \
             SELECT ?, ?, ?, 'replica' FROM DUAL WHERE NOT EXISTS \
             (SELECT 1 FROM shards WHERE shard_id = ? AND host = ? AND port = ?)",
            (shard.0, host, port, shard.0, host, port),
        )
        .await
        .map_err(me)
    }

    /// Records what a server of a shard is now (an old primary that
    /// rejoined as a replica).
    pub async fn set_replica_state(
        &self,
        shard: ShardId,
        port: u16,
        state: ReplicaState,
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE shard_replicas SET state = ? WHERE shard_id = ? AND port = ?",
            (state.as_str(), shard.0, port),
        )
        .await
        .map_err(me)
    }

    /// Takes or renews the lease `name` for `node` for `secs` seconds
    /// (meta's clock): answers whether `node` holds it now.
    pub async fn take_lease(&self, name: &str, node: u32, secs: u32) -> Result<bool> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, NOW(3) + INTERVAL ? SECOND) \
             ON DUPLICATE KEY UPDATE \
             holder = IF(holder = VALUES(holder) OR expires_at < NOW(3), VALUES(holder), holder), \
             expires_at = IF(holder = VALUES(holder), VALUES(expires_at), expires_at)",
            (name, node, secs),
        )
        .await
        .map_err(me)?;
        let holder: Option<u32> = conn
            .exec_first("SELECT holder FROM leases WHERE name = ?", (name,))
            .await
            .map_err(me)?;
        Ok(holder == Some(node))
    }

    /// Makes a promoted replica its shard's primary, in one meta
    /// transaction, if `node` still holds the lease `lease`: the shard's
    /// server changes (the placement epoch and the catalog version move, so
    /// every node routes to it at its next poll), the promoted server is no
    /// longer a replica, and the old primary is recorded as failed.
    pub async fn record_failover(&self, lease: &str, node: u32, f: &Failover) -> Result<()> {
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(mysql_async::TxOpts::default())
            .await
            .map_err(me)?;
        let holder: Option<u32> = tx
            .exec_first(
                "SELECT holder FROM leases WHERE name = ? AND expires_at > NOW(3) FOR UPDATE",
                (lease,),
            )
            .await
            .map_err(me)?;
        if holder != Some(node) {
            return Err(Error::meta(format!(
                "node {node} lost the {lease} lease before recording the failover of {}",
                f.shard
            )));
        }
        let current: Option<(String, u16)> = tx
            .exec_first(
                "SELECT host, port FROM shards WHERE shard_id = ? FOR UPDATE",
                (f.shard.0,),
            )
            .await
            .map_err(me)?;
        if current.as_ref() != Some(&f.old) {
            return Err(Error::meta(format!(
                "{} is no longer served by {}:{}",
                f.shard, f.old.0, f.old.1
            )));
        }
        tx.exec_drop(
            "UPDATE shards SET host = ?, port = ? WHERE shard_id = ?",
            (&f.new.0, f.new.1, f.shard.0),
        )
        .await
        .map_err(me)?;
        tx.exec_drop(
            "DELETE FROM shard_replicas WHERE shard_id = ? AND host = ? AND port = ?",
            (f.shard.0, &f.new.0, f.new.1),
        )
        .await
        .map_err(me)?;
        tx.exec_drop(
            "REPLACE INTO shard_replicas (shard_id, host, port, state) VALUES (?, ?, ?, 'failed')",
            (f.shard.0, &f.old.0, f.old.1),
        )
        .await
        .map_err(me)?;
        tx.exec_drop(
            "INSERT INTO failovers (shard_id, old_host, old_port, new_host, new_port, gtid, node_id, detected_ms) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (f.shard.0, &f.old.0, f.old.1, &f.new.0, f.new.1, &f.gtid, node, f.detected_ms),
        )
        .await
        .map_err(me)?;
        tx.query_drop("UPDATE shard_map SET map_version = map_version + 1 WHERE id = 1")
            .await
            .map_err(me)?;
        tx.query_drop("UPDATE catalog_version SET version = version + 1 WHERE id = 1")
            .await
            .map_err(me)?;
        tx.commit().await.map_err(me)
    }

    /// The GTID position the newest failover away from a server promoted
    /// its successor at: the last of its history the new primary has
    /// (shard 0 is meta).
    pub async fn promoted_at(&self, shard: ShardId, old_port: u16) -> Result<Option<String>> {
        let mut conn = self.conn().await?;
        conn.exec_first(
            "SELECT gtid FROM failovers WHERE shard_id = ? AND old_port = ? ORDER BY failover_id DESC LIMIT 1",
            (shard.0, old_port),
        )
        .await
        .map_err(me)
    }

    /// Failovers so far, newest first: (shard, old, new, when, detected ms).
    pub async fn failovers(&self) -> Result<Vec<(u32, String, String, String, u32)>> {
        let mut conn = self.conn().await?;
        conn.query(
            "SELECT shard_id, CONCAT(old_host, ':', old_port), CONCAT(new_host, ':', new_port), \
             CAST(failed_over_at AS CHAR), detected_ms FROM failovers ORDER BY failover_id DESC",
        )
        .await
        .map_err(me)
    }
}
