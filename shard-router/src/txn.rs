//! A session's view of the shards: autocommit (borrow a pooled connection per
//! statement) or inside a transaction (one branch per shard touched, opened
//! lazily and held until COMMIT/ROLLBACK). The two-phase commit work builds
//! on [`Branches`].

use std::collections::HashMap;
use std::sync::Arc;

use common::{Error, Result, ShardId, SqlState};
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::map_error;

use crate::Router;

/// One shard's part of a distributed transaction.
pub struct Branch {
    pub conn: Conn,
    pub wrote: bool,
}

pub type BranchSlot = Arc<tokio::sync::Mutex<Option<Branch>>>;

static TXN_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static START_MS: std::sync::OnceLock<u128> = std::sync::OnceLock::new();

/// A global transaction id, unique across compute nodes and restarts: the
/// node id, the process start time in ms and a counter.
pub fn new_gtrid(node_id: u32) -> String {
    let start = START_MS.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    });
    let n = TXN_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("tsr-{node_id}-{start}-{n}")
}

fn xid(gtrid: &str, shard: ShardId) -> String {
    format!("'{gtrid}','{}'", shard.0)
}

/// The branches of one open transaction. Every branch is an XA branch
/// (`XA START` on first touch), so a transaction may turn into a
/// multi-shard one at any statement.
#[derive(Default)]
pub struct Branches {
    pub gtrid: String,
    slots: parking_lot::Mutex<HashMap<ShardId, BranchSlot>>,
    written: parking_lot::Mutex<Vec<ShardId>>,
    pub isolation: Option<String>,
    pub read_only: bool,
}

impl Branches {
    pub fn new(node_id: u32, isolation: Option<String>, read_only: bool) -> Branches {
        Branches {
            gtrid: new_gtrid(node_id),
            isolation,
            read_only,
            ..Default::default()
        }
    }

    pub fn slot(&self, shard: ShardId) -> BranchSlot {
        self.slots.lock().entry(shard).or_default().clone()
    }

    pub fn shards(&self) -> Vec<ShardId> {
        self.slots.lock().keys().copied().collect()
    }

    fn take_all(&self) -> Vec<(ShardId, BranchSlot)> {
        self.slots.lock().drain().collect()
    }

    /// Shards this transaction has written to.
    pub fn written_shards(&self) -> Vec<ShardId> {
        self.written.lock().clone()
    }

    fn mark_written(&self, shard: ShardId) {
        let mut w = self.written.lock();
        if !w.contains(&shard) {
            w.push(shard);
        }
    }

    /// Ends the transaction. ROLLBACK, or COMMIT: one phase when at most
    /// one shard was written; otherwise XA PREPARE on every writer, the
    /// decision row in meta's commit log, then XA COMMIT on each.
    pub async fn finish(&self, router: &Router, commit: bool) -> Result<()> {
        let writers = self.written_shards();
        self.written.lock().clear();
        let mut branches = vec![];
        for (id, slot) in self.take_all() {
            if let Some(b) = slot.lock().await.take() {
                branches.push((id, b));
            }
        }
        if !commit {
            for (id, mut b) in branches {
                let x = xid(&self.gtrid, id);
                let ok = b.conn.query_drop(format!("XA END {x}")).await.is_ok()
                    & b.conn.query_drop(format!("XA ROLLBACK {x}")).await.is_ok();
                if !ok {
                    // Dropping the connection makes MariaDB roll back an
                    // active branch.
                    let _ = b.conn.disconnect().await;
                }
            }
            return Ok(());
        }
        if writers.len() <= 1 {
            let mut first_err = None;
            for (id, mut b) in branches {
                let x = xid(&self.gtrid, id);
                let r = async {
                    b.conn.query_drop(format!("XA END {x}")).await?;
                    b.conn.query_drop(format!("XA COMMIT {x} ONE PHASE")).await
                }
                .await;
                if let Err(e) = r {
                    let _ = b.conn.query_drop(format!("XA ROLLBACK {x}")).await;
                    first_err.get_or_insert(map_error(id, e));
                    let _ = b.conn.disconnect().await;
                }
            }
            return match first_err {
                Some(Error::Shard { code, message })
                    if code == 1213 || code == 1614 || code == 1402 =>
                {
                    Err(Error::TxnState {
                        state: SqlState::SERIALIZATION_FAILURE,
                        message: format!("transaction rolled back: {message}"),
                    })
                }
                Some(e) => Err(e),
                None => Ok(()),
            };
        }
        // Two-phase commit.
        let mut prepared = vec![];
        let mut failure = None;
        for (id, mut b) in branches {
            let x = xid(&self.gtrid, id);
            if !writers.contains(&id) {
                let _ = b.conn.query_drop(format!("XA END {x}")).await;
                let _ = b.conn.query_drop(format!("XA COMMIT {x} ONE PHASE")).await;
                continue;
            }
            if failure.is_some() {
                let _ = b.conn.query_drop(format!("XA END {x}")).await;
                let _ = b.conn.query_drop(format!("XA ROLLBACK {x}")).await;
                continue;
            }
            let r = async {
                b.conn.query_drop(format!("XA END {x}")).await?;
                b.conn.query_drop(format!("XA PREPARE {x}")).await
            }
            .await;
            match r {
                Ok(()) => prepared.push((id, b)),
                Err(e) => {
                    failure = Some(map_error(id, e));
                    let _ = b.conn.query_drop(format!("XA ROLLBACK {x}")).await;
                }
            }
        }
        if let Some(e) = failure {
            for (id, mut b) in prepared {
                let _ = b
                    .conn
                    .query_drop(format!("XA ROLLBACK {}", xid(&self.gtrid, id)))
                    .await;
            }
            return Err(Error::TxnState {
                state: SqlState::SERIALIZATION_FAILURE,
                message: format!("transaction rolled back: a shard could not prepare it ({e})"),
            });
        }
        if let Err(e) = router
            .meta
            .log_decision(&self.gtrid, "commit", router.node_id)
            .await
        {
            tracing::warn!("commit decision for {} not recorded: {e}", self.gtrid);
            return Err(Error::TxnOutcomeUnknown {
                xid: self.gtrid.clone(),
            });
        }
        for (id, mut b) in prepared {
            if let Err(e) = b
                .conn
                .query_drop(format!("XA COMMIT {}", xid(&self.gtrid, id)))
                .await
            {
                // The decision is durable: the branch is committed by
                // recovery from the commit log.
                tracing::warn!(
                    "XA COMMIT of {} on {id} failed after the decision: {e}",
                    self.gtrid
                );
                let _ = b.conn.disconnect().await;
            }
        }
        Ok(())
    }
}

/// Where a statement's shard work runs.
#[derive(Clone)]
pub enum ShardAccess {
    Autocommit,
    Txn(Arc<Branches>),
}

/// A connection lent for one statement: a pooled connection, or a
/// transaction branch held through its slot's lock.
pub enum Lease {
    Pooled(ShardId, Conn),
    Branch(
        ShardId,
        tokio::sync::OwnedMutexGuard<Option<Branch>>,
        Arc<Branches>,
    ),
}

impl Lease {
    pub fn conn(&mut self) -> Result<&mut Conn> {
        match self {
            Lease::Pooled(_, c) => Ok(c),
            Lease::Branch(_, g, _) => g
                .as_mut()
                .map(|b| &mut b.conn)
                .ok_or_else(|| Error::internal("transaction branch vanished")),
        }
    }

    pub fn shard(&self) -> ShardId {
        match self {
            Lease::Pooled(s, _) | Lease::Branch(s, _, _) => *s,
        }
    }

    /// Records that this statement wrote through the lease.
    pub fn mark_written(&mut self) {
        if let Lease::Branch(shard, g, branches) = self {
            if let Some(b) = g.as_mut() {
                b.wrote = true;
            }
            branches.mark_written(*shard);
        }
    }
}

impl ShardAccess {
    /// Borrows a connection to `shard` for one statement. In a transaction
    /// the shard's branch is opened on first touch. `write` says whether the
    /// statement will write: a transaction writing a second shard needs the
    /// two-phase commit that is not built yet and fails with 0A000.
    pub async fn lease(&self, router: &Router, shard: ShardId, write: bool) -> Result<Lease> {
        match self {
            ShardAccess::Autocommit => Ok(Lease::Pooled(shard, router.shard(shard)?.conn().await?)),
            ShardAccess::Txn(branches) => {
                if write && branches.read_only {
                    return Err(Error::TxnState {
                        state: SqlState("25006"),
                        message: "cannot execute a write in a read-only transaction".into(),
                    });
                }
                let slot = branches.slot(shard);
                let mut guard = slot.lock_owned().await;
                if guard.is_none() {
                    let mut conn = router.shard(shard)?.conn().await?;
                    if let Some(level) = &branches.isolation {
                        conn.query_drop(format!("SET TRANSACTION ISOLATION LEVEL {level}"))
                            .await
                            .map_err(|e| map_error(shard, e))?;
                    }
                    conn.query_drop(format!("XA START {}", xid(&branches.gtrid, shard)))
                        .await
                        .map_err(|e| map_error(shard, e))?;
                    *guard = Some(Branch { conn, wrote: false });
                }
                Ok(Lease::Branch(shard, guard, branches.clone()))
            }
        }
    }
}
