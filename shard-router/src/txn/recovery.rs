//! Production implementations of the 2PC traits (meta's commit log, shards'
//! `XA RECOVER`), the recovery loop every compute node runs, and the
//! settling of a commit given up after a failover.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use common::{Error, Result, ShardId, SqlState};
use meta::MetaStore;
use mysql_async::prelude::*;
use storage_adapter::{map_error, quote_str, ShardClient};

use super::twopc::{Decision, DecisionLog, Recovery, RecoveryShard};
use super::xid::Xid;
use crate::Router;

/// Global transaction ids as an SQL list, each through the one quoting
/// function for string literals.
fn quoted_list(gtrids: &[String]) -> String {
    gtrids
        .iter()
        .map(|g| quote_str(g))
        .collect::<Vec<_>>()
        .join(", ")
}

#[async_trait]
impl DecisionLog for MetaStore {
    async fn decide(
        &self,
        gtrid: &str,
        d: Decision,
        shards: &[ShardId],
        not_after: Option<std::time::SystemTime>,
    ) -> Result<Decision> {
        let mut conn = self.conn().await?;
        // A commit is complete once every branch has committed; an abort
        // needs no such mark (`super::snapshot`).
        let done = d != Decision::Commit;
        let list = shards
            .iter()
            .map(|s| s.0.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let r = match not_after {
            None => {
                conn.exec_drop(
                    "INSERT INTO commit_log (gtrid, decision, node_id, shards, done) VALUES (?, ?, 0, ?, ?)",
                    (gtrid, d.as_str(), &list, done),
                )
                .await
            }
            Some(t) => {
                let secs = t
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs_f64())
                    .unwrap_or(0.0);
                conn.exec_drop(
                    "INSERT INTO commit_log (gtrid, decision, node_id, shards, done) SELECT ?, ?, 0, ?, ? FROM DUAL WHERE UNIX_TIMESTAMP(NOW(6)) < ?",
                    (gtrid, d.as_str(), &list, done, secs),
                )
                .await
            }
        };
        match r {
            // Past the deadline on meta's clock: the abort is recorded
            // instead (or whatever decision already stands).
            Ok(()) if not_after.is_some() && conn.affected_rows() == 0 => {
                drop(conn);
                Box::pin(self.decide(gtrid, Decision::Abort, &[], None)).await
            }
            Ok(()) => Ok(d),
            Err(mysql_async::Error::Server(e)) if e.code == 1062 => {
                let existing: Option<String> = conn
                    .exec_first("SELECT decision FROM commit_log WHERE gtrid = ?", (gtrid,))
                    .await
                    .map_err(Error::meta)?;
                existing
                    .map(|s| Decision::parse(&s))
                    .ok_or_else(|| Error::meta("decision vanished"))
            }
            Err(e) => Err(Error::meta(e)),
        }
    }

    async fn lookup(&self, gtrids: &[String]) -> Result<HashMap<String, Decision>> {
        let mut conn = self.conn().await?;
        let list = quoted_list(gtrids);
        let rows: Vec<(String, String)> = conn
            .query(format!(
                "SELECT gtrid, decision FROM commit_log WHERE gtrid IN ({list})"
            ))
            .await
            .map_err(Error::meta)?;
        Ok(rows
            .into_iter()
            .map(|(g, d)| (g, Decision::parse(&d)))
            .collect())
    }

    async fn hold_barrier(&self) -> Result<Box<dyn super::twopc::BarrierHold>> {
        super::snapshot::hold_shared(self).await
    }

    async fn incomplete(&self) -> Result<Vec<String>> {
        let mut conn = self.conn().await?;
        conn.query("SELECT gtrid FROM commit_log WHERE done = 0 LIMIT 10000")
            .await
            .map_err(Error::meta)
    }

    async fn completed(&self, gtrids: &[String]) -> Result<()> {
        let mut conn = self.conn().await?;
        for chunk in gtrids.chunks(500) {
            let list = quoted_list(chunk);
            conn.query_drop(format!(
                "UPDATE commit_log SET done = 1 WHERE gtrid IN ({list})"
            ))
            .await
            .map_err(Error::meta)?;
        }
        Ok(())
    }

    async fn forget(&self, age: Duration, keep: &HashSet<String>) -> Result<usize> {
        let mut conn = self.conn().await?;
        let old: Vec<String> = conn
            .exec(
                "SELECT gtrid FROM commit_log WHERE created_at < NOW() - INTERVAL ? SECOND LIMIT 10000",
                (age.as_secs(),),
            )
            .await
            .map_err(Error::meta)?;
        let gone: Vec<String> = old.into_iter().filter(|g| !keep.contains(g)).collect();
        for chunk in gone.chunks(500) {
            let list = quoted_list(chunk);
            conn.query_drop(format!("DELETE FROM commit_log WHERE gtrid IN ({list})"))
                .await
                .map_err(Error::meta)?;
        }
        Ok(gone.len())
    }
}

#[async_trait]
impl RecoveryShard for ShardClient {
    fn id(&self) -> ShardId {
        self.id
    }

    async fn prepared(&self) -> Result<Vec<(String, String)>> {
        let mut conn = self.conn().await?;
        let rows: Vec<(i64, usize, usize, Vec<u8>)> = conn
            .query("XA RECOVER")
            .await
            .map_err(|e| map_error(self.id, e))?;
        Ok(rows
            .into_iter()
            .filter_map(|(_, glen, blen, data)| {
                let g = String::from_utf8(data.get(..glen)?.to_vec()).ok()?;
                let b = String::from_utf8(data.get(glen..glen + blen)?.to_vec()).ok()?;
                Some((g, b))
            })
            .collect())
    }

    async fn commit(&self, gtrid: &str, bqual: &str) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.query_drop(format!("XA COMMIT {}", Xid::new(gtrid, bqual).sql()))
            .await
            .map_err(|e| map_error(self.id, e))
    }

    async fn rollback(&self, gtrid: &str, bqual: &str) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.query_drop(format!("XA ROLLBACK {}", Xid::new(gtrid, bqual).sql()))
            .await
            .map_err(|e| map_error(self.id, e))
    }
}

/// Runs recovery every `interval` until the process ends. Every compute
/// node runs it; two nodes resolving the same branch is harmless (the
/// second XA COMMIT/ROLLBACK finds nothing) and the commit log's primary key
/// makes their decisions agree.
pub async fn recovery_loop(router: Arc<Router>, interval: Duration, orphan_timeout: Duration) {
    let mut rec = Recovery::new(orphan_timeout);
    loop {
        tokio::time::sleep(interval).await;
        // A round waiting on a server that failed over (a stopped meta or
        // shard primary answers nothing) is given up; the next one asks
        // the new servers (every step is idempotent).
        let epoch = router.servers_epoch();
        tokio::select! {
            _ = recovery_round(&router, &mut rec) => {}
            _ = router.server_moved_since(epoch) => {}
        }
    }
}

async fn recovery_round(router: &Router, rec: &mut Recovery) {
    let ids = router.shard_ids();
    let clients: Vec<ShardClient> = ids.iter().filter_map(|id| router.shard(*id).ok()).collect();
    let shards: Vec<&dyn RecoveryShard> = clients.iter().map(|c| c as &dyn RecoveryShard).collect();
    match rec.run_once(&shards, &router.meta, Instant::now()).await {
        Ok(r) if r.committed + r.rolled_back + r.aborted > 0 => {
            tracing::info!(
                "recovery: committed {} and rolled back {} branches, decided abort for {} transactions",
                r.committed,
                r.rolled_back,
                r.aborted
            );
        }
        Ok(_) => {}
        Err(e) => tracing::debug!("recovery round failed: {e}"),
    }
    match crate::placement::drop_orphans(router).await {
        Ok(0) => {}
        Ok(n) => tracing::info!("recovery: dropped {n} physical tables left by DDL"),
        Err(e) => tracing::debug!("dropping leftover physical tables failed: {e}"),
    }
    match crate::placement::mover::recover::recover_abandoned(router).await {
        Ok(lines) => {
            for l in lines {
                tracing::info!("recovery: {l}");
            }
        }
        Err(e) => tracing::debug!("recovering partition moves failed: {e}"),
    }
}

/// How long a commit given up after a failover may take to settle on the
/// new servers (`Branches::finish_detached`).
pub(super) const SETTLE_LIMIT: Duration = Duration::from_secs(5);

/// A commit given up on a server that failed over, not settled.
pub(super) fn outcome_unknown() -> Error {
    Error::ShardUnavailable {
        shard: "a shard".into(),
        message:
            "its server failed over while the transaction ended; whether it committed is not known"
                .into(),
    }
}

/// Settles the transaction `gtrid` that wrote `writers`, whose commit was
/// given up after a failover (`twopc::settle` on the servers in use now):
/// Ok when its commit stands, 40001 when it was rolled back, the outcome
/// unknown when that cannot be settled within [`SETTLE_LIMIT`] (left to
/// recovery).
pub(super) async fn settle_abandoned(
    router: &Router,
    gtrid: &str,
    writers: &[ShardId],
) -> Result<()> {
    let clients: Vec<ShardClient> = writers
        .iter()
        .filter_map(|id| router.shard(*id).ok())
        .collect();
    let shards: Vec<&dyn RecoveryShard> = clients.iter().map(|c| c as &dyn RecoveryShard).collect();
    let settled = tokio::time::timeout(
        SETTLE_LIMIT,
        super::twopc::settle(gtrid, &shards, &router.meta),
    )
    .await;
    match settled {
        Ok(Ok(Decision::Commit)) => Ok(()),
        Ok(Ok(Decision::Abort)) => Err(Error::Sql {
            state: SqlState::SERIALIZATION_FAILURE,
            message: format!(
                "transaction {gtrid} rolled back: a server failed over while it committed"
            ),
        }),
        Ok(Err(e)) => {
            tracing::warn!("settling {gtrid} after a failover failed: {e}");
            Err(outcome_unknown())
        }
        Err(_) => Err(outcome_unknown()),
    }
}
