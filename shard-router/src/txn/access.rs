//! What one statement's shard work runs with ([`StatementAccess`]): the
//! session's [`ShardAccess`], its `lock_timeout`, and its activity's
//! generation for partition moves' fences (`super::fence`).

use common::{Result, ShardId};

use super::branches::{Lease, ShardAccess, LOCK_WAIT_PREFIX};
use crate::Router;

/// What one statement's shard work runs with, handed down from the session
/// as one value (never kept in task-locals or cells): where it runs
/// ([`ShardAccess`]) and its `lock_timeout`. The fast path passes it to
/// `exec`; a DataFusion statement puts it in the `TaskContext` its plan
/// executes with, where every `ShardScanExec` reads it when it starts.
#[derive(Clone)]
pub struct StatementAccess {
    pub shards: ShardAccess,
    /// `lock_timeout` in InnoDB's whole seconds (rounded up: InnoDB counts
    /// lock waits in seconds); 0: the shard's own
    /// `innodb_lock_wait_timeout`.
    pub lock_timeout_secs: u32,
    /// The generation of the session's activity (`super::fence`):
    /// whether a move's fence holds this statement back.
    /// [`super::NEVER_FENCED`] for internal work.
    pub fence_generation: u64,
}

impl std::fmt::Debug for StatementAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StatementAccess(lock_timeout {}s)",
            self.lock_timeout_secs
        )
    }
}

impl StatementAccess {
    pub fn new(shards: ShardAccess, lock_timeout_secs: u32) -> StatementAccess {
        StatementAccess {
            shards,
            lock_timeout_secs,
            fence_generation: super::NEVER_FENCED,
        }
    }

    /// The same access for a statement of a session's activity.
    pub fn in_activity(mut self, generation: u64) -> StatementAccess {
        self.fence_generation = generation;
        self
    }

    /// Autocommit, without a `lock_timeout`.
    pub fn autocommit() -> StatementAccess {
        StatementAccess::new(ShardAccess::Autocommit, 0)
    }

    /// The same statement's access with its shard work elsewhere (a
    /// consistent cut, an implicit transaction).
    pub fn with_shards(&self, shards: ShardAccess) -> StatementAccess {
        StatementAccess::new(shards, self.lock_timeout_secs).in_activity(self.fence_generation)
    }

    /// The access a DataFusion execution was given (autocommit without a
    /// lock timeout for a context that was given none: planning only).
    pub fn of_task(ctx: &datafusion::execution::TaskContext) -> StatementAccess {
        ctx.session_config()
            .get_extension::<StatementAccess>()
            .map(|a| (*a).clone())
            .unwrap_or_else(StatementAccess::autocommit)
    }

    /// `sql` waiting at most the `lock_timeout` for each row lock (for
    /// writes and locking reads), if there is one.
    pub fn under_lock_timeout<'a>(&self, sql: &'a str) -> std::borrow::Cow<'a, str> {
        match self.lock_timeout_secs {
            0 => sql.into(),
            secs => format!("{LOCK_WAIT_PREFIX}{secs} FOR {sql}").into(),
        }
    }

    pub async fn lease(&self, router: &Router, shard: ShardId, write: bool) -> Result<Lease> {
        self.shards.lease(router, shard, write).await
    }

    /// Waits while a partition move's fence holds this statement away
    /// from the tables `sql` names on `shard` (`super::fence`).
    pub async fn pass_fences(&self, router: &Router, shard: ShardId, sql: &[&str]) {
        router.fences.pass(shard, self.fence_generation, sql).await
    }
}
