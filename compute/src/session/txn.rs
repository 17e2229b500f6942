//! The transaction state machine of a session, as PostgreSQL's: BEGIN,
//! COMMIT, ROLLBACK, savepoints, and the failed state (25P02) a statement
//! error leaves an open transaction in. `failed` is set and cleared only
//! here.

use std::sync::Arc;

use common::{Error, Result, SqlState};
use shard_router::txn::{Branches, IsolationLevel};

use crate::plan::{Plan, PlanKind};

use super::{Output, Session};

use std::sync::atomic::{AtomicU8, Ordering};

/// [`Pending::done`] states.
pub const RUNNING: u8 = 0;
pub const SUCCEEDED: u8 = 1;
pub const FAILED: u8 = 2;

/// A streamed statement not yet settled: whether it armed the session's
/// transaction, and how its stream ended (`RUNNING` while it has not:
/// dropped by a cancel or a gone client, it fails the transaction).
pub struct Pending {
    pub armed: bool,
    pub done: Arc<AtomicU8>,
}

impl Session {
    /// Settles the last streamed statement, if any: a stream that ended
    /// well clears the failed flag its arming set; one that failed or was
    /// dropped before its end leaves the transaction failed. Every
    /// statement settles its predecessor before it runs.
    pub fn settle(&mut self) {
        if let Some(p) = self.pending.take() {
            match p.done.load(Ordering::Acquire) {
                SUCCEEDED => self.statement_ended(p.armed, true),
                _ => self.statement_ended(p.armed, false),
            }
        }
    }

    /// Whether a streamed statement's rows are still being sent.
    pub fn streaming(&self) -> bool {
        self.pending
            .as_ref()
            .is_some_and(|p| p.done.load(Ordering::Acquire) == RUNNING)
    }

    /// Marks an open transaction failed while a statement that reaches the
    /// shards runs; the caller clears it when the statement ends well. A
    /// statement dropped mid-way (a cancel request, the client gone) so
    /// leaves its transaction failed, as PostgreSQL's cancel does: COMMIT
    /// then rolls back instead of committing half of a write. Returns
    /// whether it armed.
    pub fn arm_statement(&mut self) -> bool {
        if self.txn.is_some() && !self.failed {
            self.failed = true;
            true
        } else {
            false
        }
    }

    /// A statement of the session failed (at Parse, Bind, Execute or in
    /// COPY): an open transaction block is now failed, as in PostgreSQL.
    pub fn statement_failed(&mut self) {
        if self.txn.is_some() {
            self.failed = true;
        }
    }

    /// A statement that failed having changed nothing (its only shard
    /// statement found a moved partition's old table gone) runs again:
    /// its transaction is as it was before it, which was not failed
    /// (`execute` refuses to start in a failed one).
    pub(crate) fn statement_had_no_effect(&mut self) {
        self.failed = false;
    }

    /// Settles a statement armed by [`Session::arm_statement`]: `ok` clears
    /// the failed flag it set.
    pub fn statement_ended(&mut self, armed: bool, ok: bool) {
        if armed && ok {
            self.failed = false;
        } else if !ok {
            self.statement_failed();
        }
    }

    /// Back to idle after the idle-in-transaction watchdog rolled the
    /// transaction back.
    pub fn terminate(&mut self) -> Option<Arc<Branches>> {
        self.failed = false;
        self.terminated = true;
        self.txn.take()
    }

    /// A session transaction's branches; with `tessera.consistent_reads`
    /// off, REPEATABLE READ reads each shard at its own moment (no cut).
    fn new_branches(&self, isolation: Option<IsolationLevel>, read_only: bool) -> Arc<Branches> {
        let b = Branches::new(self.router.node_id, isolation, read_only);
        Arc::new(if self.consistent_reads() {
            b
        } else {
            b.without_cut()
        })
    }

    pub(crate) fn begin(&mut self, isolation: Option<IsolationLevel>, read_only: bool) -> Output {
        if self.txn.is_none() {
            self.transaction_started = self.statement_started;
            self.transaction_servers_epoch = self.router.servers_epoch();
            // Validated when set.
            let default_iso = self.settings.typed().default_isolation;
            self.txn = Some(self.new_branches(isolation.or(default_iso), read_only));
        }
        Output::TxnStart
    }

    pub(crate) async fn commit(&mut self) -> Result<Output> {
        // Before anything changes: a cancel that interrupted this COMMIT
        // before it began fails it (57014, the block stays open and
        // failed); once up, the commit runs to its end and answers.
        let shield = match &self.txn {
            Some(_) => Some(crate::cancel::Shield::raise(
                self.pid,
                self.statement_generation,
            )?),
            None => None,
        };
        let failed = self.failed;
        self.failed = false;
        self.cursors.retain(|_, c| c.hold);
        match self.txn.take() {
            Some(t) => {
                let _shield = shield;
                // A server that failed over since the transaction began
                // may hold its commit for ever: it is given up and settled
                // on the new servers (`Branches::finish_detached`).
                t.finish_detached_since(
                    self.router.clone(),
                    !failed,
                    self.transaction_servers_epoch,
                )
                .await?;
                Ok(Output::TxnEnd(if failed { "ROLLBACK" } else { "COMMIT" }))
            }
            None => Ok(Output::TxnEnd("COMMIT")),
        }
    }

    pub(crate) async fn rollback(&mut self) -> Result<Output> {
        self.failed = false;
        self.cursors.retain(|_, c| c.hold);
        if let Some(t) = self.txn.take() {
            // A rollback may always run: shielded from now on.
            let _shield = crate::cancel::Shield::raise(self.pid, self.interrupt.generation())?;
            t.finish_detached_since(self.router.clone(), false, self.transaction_servers_epoch)
                .await?;
        }
        Ok(Output::TxnEnd("ROLLBACK"))
    }

    /// SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE.
    pub(crate) async fn savepoint_command(&mut self, plan: &Plan, name: &str) -> Result<Output> {
        let Some(txn) = self.txn.clone() else {
            return Err(Error::Sql {
                state: SqlState::NO_ACTIVE_TRANSACTION,
                message: format!("{} can only be used in transaction blocks", plan.tag),
            });
        };
        match &plan.kind {
            PlanKind::Savepoint(_) => txn.savepoint(name).await?,
            PlanKind::RollbackTo(_) => {
                txn.rollback_to(name).await?;
                self.failed = false;
            }
            _ => txn.release(name).await?,
        }
        Ok(Output::Command {
            tag: plan.tag.into(),
            rows: None,
        })
    }

    /// `SET TRANSACTION ISOLATION LEVEL` inside a block, before any query.
    pub(crate) fn set_transaction_isolation(&mut self, value: &str) -> Result<()> {
        if let Some(t) = &self.txn {
            if !t.shards().is_empty() {
                return Err(Error::Sql {
                    state: SqlState::ACTIVE_TRANSACTION,
                    message: "SET TRANSACTION ISOLATION LEVEL must be called before any query"
                        .into(),
                });
            }
            let level = IsolationLevel::parse(value)?;
            self.txn = Some(self.new_branches(Some(level), t.read_only));
        }
        Ok(())
    }
}
