//! A session's view of the shards: autocommit (borrow a pooled connection per
//! statement) or inside a transaction (one branch per shard touched, opened
//! lazily and held until COMMIT/ROLLBACK). The two-phase commit work builds
//! on [`Branches`].

use std::collections::HashMap;
use std::sync::Arc;

use common::{Error, Result, ShardId, SqlState};
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::{map_error, quote_ident};

use super::twopc::Participant;
use super::xa_branch::{Branch, XaBranch};
use super::xid::branch_sql as xid;

use crate::Router;

pub type BranchSlot = super::slot::ConnSlot<Option<Branch>>;

use super::xid::new_gtrid;

/// A transaction isolation level: the only values that reach a shard's
/// `SET TRANSACTION ISOLATION LEVEL`, so a client's text never does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl IsolationLevel {
    /// Parses a level as PostgreSQL's `SET` accepts it (any case, single
    /// spaces or underscores between the words; 22023 otherwise).
    pub fn parse(s: &str) -> Result<IsolationLevel> {
        let norm = s
            .split(|c: char| c.is_ascii_whitespace() || c == '_')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        Ok(match norm.as_str() {
            "read uncommitted" => IsolationLevel::ReadUncommitted,
            "read committed" => IsolationLevel::ReadCommitted,
            "repeatable read" => IsolationLevel::RepeatableRead,
            "serializable" => IsolationLevel::Serializable,
            _ => {
                return Err(Error::InvalidParameter {
                    message: format!(
                        "invalid value for parameter \"transaction_isolation\": \"{s}\""
                    ),
                })
            }
        })
    }

    /// The level as MariaDB SQL.
    pub fn sql(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        }
    }

    /// The level as PostgreSQL's `SHOW` prints it.
    pub fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "read uncommitted",
            IsolationLevel::ReadCommitted => "read committed",
            IsolationLevel::RepeatableRead => "repeatable read",
            IsolationLevel::Serializable => "serializable",
        }
    }
}

/// The branches of one open transaction. Every branch is an XA branch
/// (`XA START` on first touch), so a transaction may turn into a
/// multi-shard one at any statement.
pub struct Branches {
    pub gtrid: String,
    slots: parking_lot::Mutex<HashMap<ShardId, BranchSlot>>,
    written: parking_lot::Mutex<Vec<ShardId>>,
    savepoints: parking_lot::Mutex<Vec<String>>,
    pub isolation: Option<IsolationLevel>,
    pub read_only: bool,
    /// REPEATABLE READ reads one cut across shards, taken at the first
    /// statement (`take_cut`); false once taken or when the session reads
    /// per shard (`tessera.consistent_reads = off`).
    cut_pending: tokio::sync::Mutex<bool>,
    /// The map the cut was taken under (`snapshot::check_cut`).
    cut_placement: parking_lot::Mutex<Option<Arc<meta::Placement>>>,
}

impl Branches {
    pub fn new(node_id: u32, isolation: Option<IsolationLevel>, read_only: bool) -> Branches {
        Branches {
            gtrid: new_gtrid(node_id),
            isolation,
            read_only,
            slots: Default::default(),
            written: Default::default(),
            savepoints: Default::default(),
            cut_pending: tokio::sync::Mutex::new(isolation == Some(IsolationLevel::RepeatableRead)),
            cut_placement: parking_lot::Mutex::new(None),
        }
    }

    /// Reads per shard: no cut at the first statement.
    pub fn without_cut(mut self) -> Branches {
        *self.cut_pending.get_mut() = false;
        self
    }

    /// A REPEATABLE READ transaction's cut: at its first statement, a
    /// branch on every shard with its read view opened under one
    /// exclusive hold of the snapshot barrier (`super::snapshot`), so all
    /// its reads see the same distributed commits.
    async fn take_cut(&self, router: &Router) -> Result<()> {
        let mut pending = self.cut_pending.lock().await;
        if !*pending {
            return Ok(());
        }
        let placement = router.placement();
        let shards = placement.shard_ids();
        super::snapshot::under_barrier(router, &shards, || async {
            let opened = futures::future::join_all(shards.iter().map(|&shard| async move {
                let slot = self.slot(shard);
                let mut guard = slot.lock().await;
                if guard.is_none() {
                    self.open_branch(router, shard, true, &mut guard).await?;
                }
                Ok::<_, Error>(())
            }))
            .await;
            opened.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
        })
        .await?;
        *pending = false;
        *self.cut_placement.lock() = Some(placement);
        Ok(())
    }

    /// `XA START` of this transaction's branch on `shard`, in one round
    /// trip with the isolation level (shard sessions default to READ
    /// COMMITTED) and the savepoints taken before; `read_view`: and a
    /// consistent read that opens the branch's read view now.
    ///
    /// The connection is in `slot` while the statement runs: dropped
    /// midway (a cancel, the cut's time limit), the branch is rolled back
    /// with the transaction rather than pooled in an unknown XA state. On
    /// an error it is taken out again and closed.
    async fn open_branch(
        &self,
        router: &Router,
        shard: ShardId,
        read_view: bool,
        slot: &mut Option<Branch>,
    ) -> Result<()> {
        let conn = router.shard(shard)?.conn().await?;
        let mut sql = String::new();
        if let Some(level) = self.isolation {
            if level != IsolationLevel::ReadCommitted {
                sql.push_str("SET TRANSACTION ISOLATION LEVEL ");
                sql.push_str(level.sql());
                sql.push_str("; ");
            }
        }
        sql.push_str(&format!("XA START {}", xid(&self.gtrid, shard)));
        for sp in self.savepoints.lock().iter() {
            sql.push_str(&format!("; SAVEPOINT {}", quote_ident(sp)));
        }
        if read_view {
            // Any consistent read of an InnoDB table opens the read view.
            sql.push_str(&format!(
                "; SELECT id FROM {} LIMIT 1",
                super::snapshot::PROBE
            ));
        }
        let branch = slot.insert(Branch::new(conn));
        let Some(conn) = branch.conn() else {
            return Err(Error::internal("transaction branch vanished"));
        };
        if let Err(e) = conn.query_drop(sql).await {
            // Part of the round trip may have run (XA START): closed, not
            // pooled (`Branch`'s drop).
            slot.take();
            return Err(map_error(shard, e));
        }
        Ok(())
    }

    /// Whether every statement of this transaction reads the data
    /// committed when it starts (READ COMMITTED, PostgreSQL's default; READ
    /// UNCOMMITTED behaves the same in PostgreSQL). Then a plain read of a
    /// shard the transaction has not opened a branch on (by writing or
    /// locking there) runs on a pooled connection outside the transaction:
    /// it sees what a read in a fresh branch would, and that shard needs no
    /// `XA START`, `XA END` and commit round trips for it.
    pub fn statement_snapshots(&self) -> bool {
        matches!(
            self.isolation,
            Some(IsolationLevel::ReadCommitted | IsolationLevel::ReadUncommitted)
        )
    }

    /// Whether the transaction has a branch on `shard`.
    pub fn has_slot(&self, shard: ShardId) -> bool {
        self.slots.lock().contains_key(&shard)
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

    /// Ends the transaction: ROLLBACK, or COMMIT through the two-phase
    /// commit coordinator (`twopc::commit`).
    /// [`Branches::finish`] in a task of its own: it runs to its end even
    /// when the statement that asked for it is dropped (a cancel request,
    /// the client gone), so no branch is left half-committed and no
    /// connection goes back to the pool inside an XA transaction.
    ///
    /// A server that fails over while it runs may hold it for ever (a stopped server
    /// answers nothing, and phase two would keep the snapshot barrier
    /// shared meanwhile, stalling every consistent reader and, behind
    /// them, every distributed commit): it is given up `FAILOVER_GRACE`
    /// after the change. Its connections are dropped (the barrier with
    /// them) and a commit of two or more writers is settled on the new
    /// servers right away (`twopc::settle`: its decision if one was
    /// recorded, else abort, applied to its prepared branches), so the
    /// client hears the outcome and no prepared branch holds its row locks
    /// until recovery's orphan timeout. What cannot be settled within
    /// `recovery::SETTLE_LIMIT` is left to recovery, and the outcome is unknown.
    pub async fn finish_detached(self: Arc<Self>, router: Arc<Router>, commit: bool) -> Result<()> {
        let epoch = router.servers_epoch();
        self.finish_detached_since(router, commit, epoch).await
    }

    /// [`Branches::finish_detached`], given up on a server change since
    /// `epoch` (a session transaction's: the count when it began).
    pub async fn finish_detached_since(
        self: Arc<Self>,
        router: Arc<Router>,
        commit: bool,
        epoch: u64,
    ) -> Result<()> {
        tokio::spawn(async move {
            let writers = self.written_shards();
            tokio::select! {
                r = self.finish(&router, commit) => r,
                _ = router.server_moved_since(epoch) => {
                    if !commit {
                        // Rolled back when the old server closes their
                        // connections (or is fenced).
                        Ok(())
                    } else if writers.len() > 1 {
                        super::recovery::settle_abandoned(&router, &self.gtrid, &writers).await
                    } else {
                        Err(super::recovery::outcome_unknown())
                    }
                }
            }
        })
        .await
        .map_err(|e| Error::internal(format!("commit task failed: {e}")))?
    }

    pub async fn finish(&self, router: &Router, commit: bool) -> Result<()> {
        let writers = self.written_shards();
        self.written.lock().clear();
        self.savepoints.lock().clear();
        let mut parts = vec![];
        for (id, slot) in self.take_all() {
            if let Some(conn) = slot.lock().await.take().and_then(Branch::into_conn) {
                parts.push((XaBranch::new(id, conn), writers.contains(&id)));
            }
        }
        if !commit {
            for (mut p, _) in parts {
                let _ = p.rollback(&self.gtrid).await;
            }
            return Ok(());
        }
        super::twopc::commit(&self.gtrid, parts, &router.meta, &|_| false).await
    }

    /// `SAVEPOINT name` on every open branch; branches opened later get it
    /// right after `XA START`.
    pub async fn savepoint(&self, name: &str) -> Result<()> {
        self.on_all_branches(&format!("SAVEPOINT {}", quote_ident(name)))
            .await?;
        let mut sp = self.savepoints.lock();
        sp.retain(|s| s != name);
        sp.push(name.to_string());
        Ok(())
    }

    pub async fn rollback_to(&self, name: &str) -> Result<()> {
        self.check_savepoint(name)?;
        self.on_all_branches(&format!("ROLLBACK TO SAVEPOINT {}", quote_ident(name)))
            .await?;
        let mut sp = self.savepoints.lock();
        if let Some(i) = sp.iter().position(|s| s == name) {
            sp.truncate(i + 1);
        }
        Ok(())
    }

    pub async fn release(&self, name: &str) -> Result<()> {
        self.check_savepoint(name)?;
        self.on_all_branches(&format!("RELEASE SAVEPOINT {}", quote_ident(name)))
            .await?;
        let mut sp = self.savepoints.lock();
        if let Some(i) = sp.iter().position(|s| s == name) {
            sp.truncate(i);
        }
        Ok(())
    }

    fn check_savepoint(&self, name: &str) -> Result<()> {
        if self.savepoints.lock().iter().any(|s| s == name) {
            Ok(())
        } else {
            Err(Error::Sql {
                state: SqlState("3B001"),
                message: format!("savepoint \"{name}\" does not exist"),
            })
        }
    }

    async fn on_all_branches(&self, sql: &str) -> Result<()> {
        let slots: Vec<(ShardId, BranchSlot)> = self
            .slots
            .lock()
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        for (id, slot) in slots {
            let mut g = slot.lock().await;
            if let Some(conn) = g.as_mut().and_then(Branch::conn) {
                conn.query_drop(sql).await.map_err(|e| map_error(id, e))?;
            }
        }
        Ok(())
    }
}

impl Drop for Branches {
    /// A transaction dropped without COMMIT/ROLLBACK (its statement was
    /// canceled, its client vanished mid-COPY): roll every branch back on
    /// its own connection, so none goes back to the pool inside an XA
    /// transaction. A connection that cannot be cleaned is closed.
    fn drop(&mut self) {
        let gtrid = self.gtrid.clone();
        for (id, slot) in self.slots.get_mut().drain() {
            let Some(mut guard) = slot.try_lock() else {
                continue;
            };
            if let Some(b) = guard.take() {
                let x = xid(&gtrid, id);
                if let Ok(handle) = tokio::runtime::Handle::try_current() {
                    handle.spawn(async move {
                        let Some(mut conn) = b.into_conn() else {
                            return;
                        };
                        if conn.is_disconnected() {
                            // Left midway through a statement: closing it
                            // rolls the branch back.
                            drop(conn);
                            return;
                        }
                        let _ = conn.query_drop(format!("XA END {x}")).await;
                        if conn.query_drop(format!("XA ROLLBACK {x}")).await.is_err() {
                            let _ = conn.disconnect().await;
                        }
                    });
                }
            }
        }
    }
}

/// The text that prefixes a statement run under `lock_timeout`: MariaDB's
/// per-statement setting, so a pooled connection keeps no session state.
pub(crate) const LOCK_WAIT_PREFIX: &str = "SET STATEMENT innodb_lock_wait_timeout=";

/// Where a statement's shard work runs.
#[derive(Clone)]
pub enum ShardAccess {
    Autocommit,
    Txn(Arc<Branches>),
    /// One statement's consistent cut (`super::snapshot`): plain reads of
    /// shards the transaction (if any) has no branch on read through the
    /// cut; writes and locking reads go as they would without it.
    Cut(Option<Arc<Branches>>, Arc<super::snapshot::Cut>),
}

/// A connection lent for one statement: a pooled connection, or a
/// transaction branch held through its slot's lock.
pub enum Lease {
    Pooled(ShardId, Conn),
    /// The branch; and when a statement's cut keeps the barrier until
    /// this read's view is open, its share of that hold.
    Branch(
        ShardId,
        super::slot::SlotGuard<Option<Branch>>,
        Arc<Branches>,
        Option<super::snapshot::ViewPin>,
    ),
    /// The connection of a statement's consistent cut on one shard.
    Snapshot(ShardId, super::slot::SlotGuard<super::snapshot::SnapConn>),
}

impl Lease {
    /// The connection, unless a statement on it was dropped midway: then
    /// what it answers next could be the rest of that statement's reply
    /// (a SELECT that reads another command's OK packet returns no rows),
    /// so it serves nothing more (08006).
    pub fn conn(&mut self) -> Result<&mut Conn> {
        let shard = self.shard();
        let c = match self {
            Lease::Pooled(_, c) => Ok(c),
            Lease::Branch(_, g, _, _) => g
                .as_mut()
                .and_then(Branch::conn)
                .ok_or_else(|| Error::internal("transaction branch vanished")),
            Lease::Snapshot(_, g) => {
                g.0.as_mut()
                    .ok_or_else(|| Error::internal("snapshot connection vanished"))
            }
        }?;
        if c.is_disconnected() {
            return Err(Error::ShardUnavailable {
                shard: shard.to_string(),
                message:
                    "a statement on this connection was interrupted midway; its state is unknown"
                        .into(),
            });
        }
        Ok(c)
    }

    pub fn shard(&self) -> ShardId {
        match self {
            Lease::Pooled(s, _) | Lease::Branch(s, _, _, _) | Lease::Snapshot(s, _) => *s,
        }
    }

    /// The share of a cut's hold this read must give up once its
    /// statement has answered (`ViewPin::opened`).
    pub fn take_view_pin(&mut self) -> Option<super::snapshot::ViewPin> {
        match self {
            Lease::Branch(_, _, _, pin) => pin.take(),
            _ => None,
        }
    }

    /// Says when another statement waits for this connection (a pooled
    /// one is nobody else's).
    pub fn contention(&self) -> Option<super::slot::Contention> {
        match self {
            Lease::Pooled(..) => None,
            Lease::Branch(_, g, _, _) => Some(g.contention()),
            Lease::Snapshot(_, g) => Some(g.contention()),
        }
    }

    /// After a `KILL QUERY` of this connection's statement has run: reads
    /// off what the statement left (the rest of its rows, the kill's error)
    /// with a statement of ours, so the next read of a cut's or a branch's
    /// connection gets neither. A pooled connection is cleaned by the pool
    /// when it goes back; one left midway through a statement is never used
    /// again (`Lease::conn`).
    pub async fn settle(&mut self) {
        if let Lease::Pooled(..) = self {
            return;
        }
        if let Ok(conn) = self.conn() {
            let _ = conn.query_drop("DO 0").await;
        }
    }

    /// Records that this statement wrote through the lease.
    pub fn mark_written(&mut self) {
        if let Lease::Branch(shard, _, branches, _) = self {
            branches.mark_written(*shard);
        }
    }
}

impl ShardAccess {
    /// Borrows a connection to `shard` for one statement. In a transaction
    /// the shard's branch is opened on first touch. `write` says whether the
    /// statement writes or locks rows (`SELECT ... FOR UPDATE`): those always
    /// run in the branch, and fail in a READ ONLY transaction (25006). A
    /// plain read runs in the branch if the shard has one, and otherwise,
    /// under READ COMMITTED, on a pooled connection
    /// ([`Branches::statement_snapshots`]).
    pub async fn lease(&self, router: &Router, shard: ShardId, write: bool) -> Result<Lease> {
        match self {
            ShardAccess::Autocommit => Ok(Lease::Pooled(shard, router.shard(shard)?.conn().await?)),
            ShardAccess::Cut(txn, cut) => {
                let own = txn.as_ref().is_some_and(|b| b.has_slot(shard));
                if write || own || !cut.covers(shard) {
                    let plain = match txn {
                        Some(b) => ShardAccess::Txn(b.clone()),
                        None => ShardAccess::Autocommit,
                    };
                    let mut lease = Box::pin(plain.lease(router, shard, write)).await?;
                    if let (false, Lease::Branch(_, _, _, pin)) = (write, &mut lease) {
                        *pin = cut.view_pin();
                    }
                    return Ok(lease);
                }
                Ok(Lease::Snapshot(shard, cut.lease(shard).await?))
            }
            ShardAccess::Txn(branches) => {
                if write && branches.read_only {
                    return Err(Error::Sql {
                        state: SqlState("25006"),
                        message: "cannot execute a write in a read-only transaction".into(),
                    });
                }
                if !write && branches.statement_snapshots() && !branches.has_slot(shard) {
                    return Ok(Lease::Pooled(shard, router.shard(shard)?.conn().await?));
                }
                branches.take_cut(router).await?;
                super::snapshot::check_cut(branches.cut_placement.lock().clone(), router, shard)?;
                let slot = branches.slot(shard);
                let mut guard = slot.lock().await;
                if guard.is_none() {
                    branches
                        .open_branch(router, shard, false, &mut guard)
                        .await?;
                }
                // A branch that writes or locks rows takes part in the
                // commit as a writer from now on: it is prepared with the
                // others (a FOR UPDATE branch committed one phase before
                // the writers prepared released its locks before the
                // commit point), and a write dropped mid-way (a cancel)
                // still counts.
                if write {
                    branches.mark_written(shard);
                }
                Ok(Lease::Branch(shard, guard, branches.clone(), None))
            }
        }
    }
}
