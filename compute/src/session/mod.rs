//! One client session: who it is, its settings ([`settings`]) and its
//! transaction ([`txn`], the state machine: the one place a transaction
//! becomes failed). Statements are planned in `plan` and executed by
//! `exec` against the session.

pub mod copy;
pub mod cursor;
pub mod settings;
pub mod txn;

use std::sync::Arc;

use common::Datum;
use shard_router::txn::{Branches, ShardAccess, StatementAccess};
use shard_router::Router;

/// What executing a statement produced.
pub enum Output {
    Command {
        tag: String,
        rows: Option<usize>,
    },
    TxnStart,
    TxnEnd(&'static str),
    /// Rows as Datums (fast path, RETURNING, SHOW) with their catalog types.
    Rows(Vec<Vec<Datum>>),
    /// COPY FROM STDIN started, with this many columns.
    CopyIn(usize),
}

pub struct Session {
    pub router: Arc<Router>,
    pub txn: Option<Arc<Branches>>,
    /// The implicit transaction of one autocommit statement that reads
    /// before it writes (a two-step UPDATE/DELETE): its reads lock rows in
    /// it. Not a transaction block; a leftover of a statement cut off is
    /// rolled back by the next such statement or dropped with the session.
    pub stmt_txn: Option<Arc<Branches>>,
    /// The session's open activity for partition moves' fences
    /// (`shard_router::txn::fence`): from a statement or BEGIN outside a
    /// transaction to the end of that transaction.
    pub fence_activity: Option<shard_router::txn::Activity>,
    pub failed: bool,
    pub settings: settings::Settings,
    /// The settings once the startup packet's were applied: what RESET
    /// goes back to.
    pub startup_settings: settings::Settings,
    pub database: String,
    pub user: String,
    /// DataFusion execution context of this session, for its pushdown
    /// setting (plans are made in `plan`, not here).
    pub df_ctx: Option<(bool, datafusion::execution::context::SessionContext)>,
    /// A COPY FROM STDIN in progress.
    pub copy_in: Option<copy::CopyIn>,
    /// The text the client sent for the running statement (simple
    /// protocol; a prepared statement has its own), for
    /// `pg_stat_activity`.
    pub query_text: Arc<str>,
    /// Open cursors by name.
    pub cursors: std::collections::HashMap<String, cursor::Cursor>,
    /// A streamed statement whose end is not settled yet (see `settle`).
    pub pending: Option<txn::Pending>,
    /// When the running statement's `statement_timeout` expires.
    pub statement_deadline: Option<tokio::time::Instant>,
    /// The node's compiled statements (`plan::cache`): Parse's plans and
    /// those of simple-protocol statement shapes (literals taken out, see
    /// `literals`), shared by every session of the node.
    pub statements: Arc<crate::plan::cache::StatementCache>,
    /// The backend pid cancel requests name (see `cancel`).
    pub pid: i32,
    /// This session's entry in `pg_stat_activity` (none for a session of
    /// no connection).
    pub activity: Option<crate::activity::Slot>,
    /// Fired by cancel requests for this session (streamed rows).
    pub interrupt: Arc<crate::cancel::Interrupt>,
    /// The interrupt's generation when the running statement started: a
    /// cancel request after it interrupts the statement.
    pub statement_generation: u64,
    /// When the running statement started, and the open transaction
    /// (`now()` is the transaction's start, as in PostgreSQL).
    pub statement_started: chrono::DateTime<chrono::Utc>,
    pub transaction_started: chrono::DateTime<chrono::Utc>,
    /// The router's count of shard server changes when the transaction
    /// block began: its end is given up once a shard fails over after it
    /// (`txn.rs`, `Router::server_moved_since`).
    pub(crate) transaction_servers_epoch: u64,
    /// When the session last started or ended a statement.
    pub last_activity: std::time::Instant,
    /// Set by the idle-in-transaction watchdog: the session is over.
    pub terminated: bool,
    /// `currval` of each sequence this session called `nextval` of.
    pub sequence_values: std::collections::HashMap<u64, i64>,
    /// `lastval`: the sequence and value of the last `nextval`.
    pub last_sequence_value: Option<(u64, i64)>,
    /// DDL of the open transaction block (see `exec::block_ddl`).
    pub block_ddl: Vec<BlockDdl>,
    /// NOTICEs the running statement raised, sent before its answer
    /// (`wire` drains them).
    pub notices: Vec<String>,
}

/// One entry of a transaction block's DDL record.
#[derive(Debug)]
pub enum BlockDdl {
    /// Run if the block does not commit (DROP of what it created).
    Undo(Box<datafusion::sql::sqlparser::ast::Statement>),
    /// Run when the block ends, however it ends (created after a savepoint
    /// the block rolled back to).
    UndoAtEnd(Box<datafusion::sql::sqlparser::ast::Statement>),
    /// Run after the block committed (a DROP inside it).
    Deferred(Box<datafusion::sql::sqlparser::ast::Statement>),
    /// A table the block dropped: gone from the catalog, its physical
    /// tables kept; put back if the block does not commit, dropped for
    /// good if it does. With the shards its slots were on.
    DroppedTable(Arc<meta::TableDef>, Vec<common::ShardId>),
    /// A table dropped after a savepoint the block rolled back to: put
    /// back when the block ends.
    RestoreAtEnd(Arc<meta::TableDef>, Vec<common::ShardId>),
    Savepoint(String),
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.pid != 0 {
            crate::cancel::forget(self.pid);
            crate::activity::end(self.pid);
        }
        // A client that disconnects mid-transaction: roll every branch back
        // so the shard connections go back to the pool clean.
        let router = self.router.clone();
        let txn = self.txn.take();
        let copy = self.copy_in.take();
        if txn.is_some() || copy.is_some() {
            tokio::spawn(async move {
                if let Some(c) = copy {
                    c.abort(&router).await;
                }
                if let Some(t) = txn {
                    let _ = t.finish(&router, false).await;
                }
            });
        }
    }
}

impl Session {
    pub fn new(
        router: Arc<Router>,
        statements: Arc<crate::plan::cache::StatementCache>,
        database: String,
        user: String,
    ) -> Session {
        Session {
            router,
            txn: None,
            stmt_txn: None,
            fence_activity: None,
            failed: false,
            settings: settings::default_settings(),
            startup_settings: settings::default_settings(),
            database,
            user,
            df_ctx: None,
            copy_in: None,
            cursors: std::collections::HashMap::new(),
            query_text: Arc::from(""),
            pending: None,
            statement_deadline: None,
            statements,
            pid: 0,
            activity: None,
            interrupt: Default::default(),
            statement_generation: 0,
            statement_started: chrono::Utc::now(),
            transaction_started: chrono::Utc::now(),
            transaction_servers_epoch: 0,
            last_activity: std::time::Instant::now(),
            terminated: false,
            sequence_values: std::collections::HashMap::new(),
            last_sequence_value: None,
            block_ddl: vec![],
            notices: vec![],
        }
    }

    pub fn touch(&mut self) {
        self.last_activity = std::time::Instant::now();
    }

    pub fn idle_for(&self) -> std::time::Duration {
        self.last_activity.elapsed()
    }

    /// The clock of the running statement's values.
    pub fn clock(&self) -> shard_router::sql::Clock {
        shard_router::sql::Clock {
            transaction: if self.txn.is_some() {
                self.transaction_started
            } else {
                self.statement_started
            },
            statement: self.statement_started,
        }
    }

    /// `lock_timeout` in InnoDB's whole seconds (rounded up); 0: none.
    pub fn lock_timeout_secs(&self) -> u32 {
        self.settings
            .typed()
            .lock_timeout
            .map(|d| u32::try_from(d.as_millis().div_ceil(1000)).unwrap_or(u32::MAX))
            .unwrap_or(0)
    }

    /// `statement_timeout`, if set.
    pub fn statement_timeout(&self) -> Option<std::time::Duration> {
        self.settings.typed().statement_timeout
    }

    /// `idle_in_transaction_session_timeout`, if set.
    pub fn idle_in_transaction_timeout(&self) -> Option<std::time::Duration> {
        self.settings.typed().idle_in_transaction_timeout
    }

    /// Whether plan fragments are pushed into the shards (`tessera.pushdown`).
    pub fn pushdown(&self) -> bool {
        self.settings.typed().pushdown
    }

    /// The schema unqualified names resolve in: the first of
    /// `search_path` that exists (resolved once per catalog version).
    pub fn current_schema(&self) -> String {
        let cat = self.router.catalog();
        if let Some(s) = self.settings.resolved_schema(cat.version) {
            return s;
        }
        let path = self
            .settings
            .get("search_path")
            .map(String::as_str)
            .unwrap_or_default();
        let schema = path
            .split(',')
            .map(|s| s.trim().trim_matches('"'))
            .map(|s| if s == "$user" { self.user.as_str() } else { s })
            .find(|s| cat.schemas.contains(*s))
            .unwrap_or("public");
        self.settings.remember_schema(cat.version, schema);
        schema.to_string()
    }

    /// `tessera.consistent_reads` (on unless set off): a plain read of
    /// two or more shards reads one consistent cut
    /// (`shard_router::txn`); off reads each shard at its own moment.
    pub fn consistent_reads(&self) -> bool {
        self.settings.typed().consistent_reads
    }

    /// The access for a statement whose plain reads are `wants` (how many
    /// of each shard): in autocommit or READ COMMITTED, when it reads
    /// twice or more, a consistent cut over the shards the transaction has
    /// no branch on (one read of one shard is consistent by itself, two
    /// reads on two pooled connections a moment apart are not); the
    /// session's access otherwise.
    pub(crate) async fn read_access(
        &self,
        wants: &std::collections::BTreeMap<common::ShardId, usize>,
    ) -> common::Result<StatementAccess> {
        Ok(
            StatementAccess::new(self.read_shards(wants).await?, self.lock_timeout_secs())
                .in_activity(self.fence_generation()),
        )
    }

    /// The barrier's exclusive hold for a held read of `wants` (RFC
    /// 2026-12-03-oltp-round-trips, lever 4): a plain read of two or more
    /// shards, each read by one statement, none through the transaction's
    /// own branch, in autocommit or READ COMMITTED. Its statements then run
    /// on pooled connections while the hold lasts, each opening its read
    /// view under it, instead of opening a snapshot on each shard first.
    /// `None`: the read goes through [`Session::read_access`].
    pub(crate) async fn held_read(
        &self,
        wants: &std::collections::BTreeMap<common::ShardId, usize>,
    ) -> common::Result<Option<shard_router::txn::Ticket>> {
        if wants.len() < 2 || wants.values().any(|n| *n != 1) || !self.consistent_reads() {
            return Ok(None);
        }
        match self.access() {
            ShardAccess::Autocommit => {}
            ShardAccess::Txn(b)
                if b.statement_snapshots() && !wants.keys().any(|s| b.has_slot(*s)) => {}
            _ => return Ok(None),
        }
        let shards: Vec<common::ShardId> = wants.keys().copied().collect();
        Ok(Some(
            shard_router::txn::hold_for_reads(&self.router, &shards).await?,
        ))
    }

    /// The generation of the session's open activity (none: never held
    /// by a fence).
    pub fn fence_generation(&self) -> u64 {
        self.fence_activity
            .as_ref()
            .map_or(shard_router::txn::NEVER_FENCED, |a| a.generation)
    }

    async fn read_shards(
        &self,
        wants: &std::collections::BTreeMap<common::ShardId, usize>,
    ) -> common::Result<ShardAccess> {
        let access = self.access();
        if wants.values().sum::<usize>() < 2 || !self.consistent_reads() {
            return Ok(access);
        }
        let txn = match &access {
            ShardAccess::Txn(b) if !b.statement_snapshots() => return Ok(access),
            ShardAccess::Txn(b) => Some(b.clone()),
            _ => None,
        };
        let (own, outside): (Vec<_>, Vec<_>) = wants
            .iter()
            .partition(|(s, _)| txn.as_ref().is_some_and(|b| b.has_slot(**s)));
        let outside: std::collections::BTreeSet<_> = outside.into_iter().map(|(s, _)| *s).collect();
        let own_reads: usize = own.iter().map(|(_, n)| **n).sum();
        let own: std::collections::BTreeSet<_> = own.into_iter().map(|(s, _)| *s).collect();
        let cut = if own.len() + outside.len() >= 2 && !own.is_empty() {
            // Reads through branches too: the barrier is kept until they
            // have opened their views.
            shard_router::txn::Cut::open_pinned(&self.router, &outside, &own, own_reads).await?
        } else if !outside.is_empty() {
            shard_router::txn::Cut::open(&self.router, &outside).await?
        } else {
            return Ok(access);
        };
        Ok(ShardAccess::Cut(txn, cut))
    }

    /// What the running statement's shard work runs with: the session's
    /// access and `lock_timeout`, as one value (`StatementAccess`).
    pub fn statement_access(&self) -> StatementAccess {
        StatementAccess::new(self.access(), self.lock_timeout_secs())
            .in_activity(self.fence_generation())
    }

    pub fn access(&self) -> ShardAccess {
        match self.txn.as_ref().or(self.stmt_txn.as_ref()) {
            Some(b) => ShardAccess::Txn(b.clone()),
            None => ShardAccess::Autocommit,
        }
    }

    /// Who this session's statements are planned for.
    pub fn scope(&self) -> crate::plan::Scope {
        crate::plan::Scope {
            schema: self.current_schema(),
            user: self.user.clone(),
            database: self.database.clone(),
            pid: self.pid,
        }
    }

    pub fn in_txn(&self) -> bool {
        self.txn.is_some()
    }
}
