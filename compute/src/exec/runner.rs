//! Running one client statement end to end, whatever the protocol: the
//! session checks (terminated, privileges), `statement_timeout`, re-planning
//! a prepared statement the catalog moved under, and the choice between the
//! session's executor and DataFusion. The wire layer only encodes the
//! [`Reply`].

use std::sync::Arc;

use common::{Datum, Error, Result};
use datafusion::arrow::array::RecordBatch;
use datafusion::sql::sqlparser::ast::Statement;

use super::df::RowStream;
use crate::plan::cache::{Compiled, Key, Source};
use crate::plan::columns::Columns;
use crate::plan::{plan_statement, plan_statement_sized, Plan, PlanKind, Planner, Prepared};
use crate::session::{Output, Session};

/// What a statement produced, for the wire to encode.
pub enum Reply {
    /// A command tag, optionally with a row count.
    Command {
        tag: String,
        rows: Option<usize>,
    },
    TxnStart,
    TxnEnd(&'static str),
    /// Result rows with their columns and command tag.
    Rows {
        columns: Arc<Columns>,
        tag: &'static str,
        rows: Rows,
    },
    /// COPY FROM STDIN started, with this many columns.
    CopyIn(usize),
    /// COPY TO STDOUT: the rendered lines, with this many columns.
    CopyOut {
        columns: usize,
        lines: Vec<String>,
    },
}

/// Result rows: decoded values (fast path, RETURNING, SHOW), or DataFusion
/// batches, streamed as they come or collected.
pub enum Rows {
    Datums(Vec<Vec<Datum>>),
    Batches(Vec<RecordBatch>),
    Stream(RowStream),
}

impl Reply {
    /// The reply with streamed rows collected: for a statement followed by
    /// others in the same message (a simple query's list, a portal read in
    /// pieces), whose shard connections must be free before the next runs.
    pub async fn materialize(self) -> Result<Reply> {
        use futures::TryStreamExt;
        Ok(match self {
            Reply::Rows {
                columns,
                tag,
                rows: Rows::Stream(s),
            } => Reply::Rows {
                columns,
                tag,
                rows: Rows::Batches(s.try_collect().await?),
            },
            other => other,
        })
    }
}

impl Session {
    /// Runs one statement under the session's `statement_timeout` (not
    /// COMMIT/ROLLBACK: a transaction's end always runs to its end). An
    /// error fails an open transaction.
    pub async fn run(&mut self, prepared: &Prepared, params: &[Datum]) -> Result<Reply> {
        self.settle();
        let since = self.interrupt.generation();
        self.statement_generation = since;
        // PostgreSQL's clock has microseconds.
        self.statement_started = chrono::SubsecRound::trunc_subsecs(chrono::Utc::now(), 6);
        let text = if prepared.text.is_empty() {
            &self.query_text
        } else {
            &prepared.text
        };
        if let Some(a) = &self.activity {
            a.statement_started(
                text,
                if self.txn.is_some() {
                    self.transaction_started
                } else {
                    self.statement_started
                },
            );
        }
        if self.fence_activity.is_none() {
            self.fence_activity = Some(self.router.fences.begin());
        }
        let interrupt = self.interrupt.clone();
        let router = self.router.clone();
        // Inside a block, the count when it began: its branches may be on
        // a server that failed over since.
        let servers = if self.txn.is_some() {
            self.transaction_servers_epoch
        } else {
            router.servers_epoch()
        };
        let ends_txn = matches!(prepared.plan.kind, PlanKind::Commit | PlanKind::Rollback);
        // (lock_timeout reaches the shards with the statement's access,
        // `Session::statement_access`.)
        let work = self.run_checked(prepared, params);
        let res = if ends_txn {
            // Never interrupted: it raises a shield (`compute::cancel`).
            work.await
        } else {
            // A cancel request drops the statement where it waits; its
            // transaction, if any, is failed (`Session::arm_statement`).
            // A shard that failed over meanwhile may hold it for ever (a
            // stopped server answers nothing): given up, retryable.
            tokio::select! {
                biased;
                r = work => r,
                _ = interrupt.past(since) => Err(Error::Canceled),
                _ = router.server_moved_since(servers) => Err(Error::ShardUnavailable {
                    shard: "a shard".into(),
                    message: "its server failed over while the statement ran; run it again".into(),
                }),
            }
        };
        if res.is_err() {
            self.statement_failed();
        }
        if self.txn.is_none() && self.stmt_txn.is_none() {
            self.fence_activity = None;
        }
        if let Some(a) = &self.activity {
            a.statement_ended(self.txn.is_some(), self.failed);
        }
        res
    }

    async fn run_checked(&mut self, prepared: &Prepared, params: &[Datum]) -> Result<Reply> {
        if self.terminated {
            return Err(Error::IdleInTransactionTimeout);
        }
        self.touch();
        self.check_privileges(prepared)?;
        let limit = self.statement_timeout();
        self.statement_deadline = limit.map(|d| tokio::time::Instant::now() + d);
        let res = match limit {
            Some(d) if !matches!(prepared.plan.kind, PlanKind::Commit | PlanKind::Rollback) => {
                match tokio::time::timeout(d, self.run_planned(prepared, params)).await {
                    Ok(r) => r,
                    // Dropped mid-way: the statement's transaction, if any,
                    // is failed (`Session::arm_statement`); answered once
                    // its shard statements are killed.
                    Err(_) => {
                        shard_router::dist::kills_settled(std::time::Duration::from_secs(2)).await;
                        Err(Error::StatementTimeout)
                    }
                }
            }
            _ => self.run_planned(prepared, params).await,
        };
        self.touch();
        res
    }

    /// The statement's privileges for the session's user, checked once
    /// per (catalog version, user, schema): grants and ownership are the
    /// catalog's, so a check that held holds until the catalog moves.
    fn check_privileges(&self, prepared: &Prepared) -> Result<()> {
        let catalog = self.router.catalog();
        // Superusers (the common case) skip the walk and the schema lookup.
        if crate::privileges::is_superuser(&catalog, &self.user) {
            return Ok(());
        }
        let schema = self.current_schema();
        let held = |m: &Option<crate::plan::prepare::AllowedFor>| {
            m.as_ref().is_some_and(|(v, u, s)| {
                *v == catalog.version && **u == *self.user && **s == *schema
            })
        };
        if held(&prepared.allowed.0.lock()) {
            return Ok(());
        }
        crate::privileges::check(&catalog, &self.user, &prepared.stmt, &schema)?;
        *prepared.allowed.0.lock() = Some((
            catalog.version,
            Arc::from(self.user.as_str()),
            Arc::from(schema.as_str()),
        ));
        Ok(())
    }

    pub(crate) async fn run_planned(
        &mut self,
        prepared: &Prepared,
        params: &[Datum],
    ) -> Result<Reply> {
        // Re-plan if DDL changed the catalog since this was prepared, or the
        // session's schema is no longer the one names were resolved in.
        let replanned;
        let mut plan = &prepared.plan;
        if !matches!(
            plan.kind,
            PlanKind::Begin { .. }
                | PlanKind::Commit
                | PlanKind::Rollback
                | PlanKind::Set { .. }
                | PlanKind::Reset(_)
                | PlanKind::Show { .. }
        ) {
            let fresh = self.router.ensure_fresh().await?;
            if fresh.version != plan.catalog_version
                || self.current_schema() != prepared.schema
                || prepared.zone != common::tz::session_zone()
            {
                replanned = plan_statement(
                    &self.router,
                    &self.scope(),
                    &prepared.stmt,
                    &prepared.client_types,
                )
                .await?;
                plan = &replanned;
            }
        }
        match &plan.kind {
            PlanKind::CopyOut(_, fmt) => {
                use futures::TryStreamExt;
                let batches: Vec<RecordBatch> = self
                    .run_datafusion(plan, params)
                    .await?
                    .try_collect()
                    .await?;
                Ok(copy_out_lines(plan, fmt, &batches))
            }
            PlanKind::DeclareCursor {
                name,
                hold,
                prepared: Some(q),
                ..
            } => self.declare_cursor(name, *hold, q, params).await,
            PlanKind::Fetch { name, count } => self.fetch_cursor(name, *count),
            PlanKind::CloseCursor(name) => self.close_cursor(name.as_deref()),
            PlanKind::DataFusion(..) => {
                use futures::StreamExt;
                let mut rows = self.run_datafusion(plan, params).await?;
                // The first batch now: a moved partition's old table is
                // found gone here, before any row reached the client.
                match rows.next().await {
                    Some(Err(e)) if e.sqlstate() == common::SqlState::UNDEFINED_TABLE => {
                        drop(rows);
                        self.settle();
                        return self.after_move(prepared, params, plan, e).await;
                    }
                    Some(first) => {
                        rows = Box::pin(futures::stream::once(async { first }).chain(rows))
                    }
                    None => rows = Box::pin(futures::stream::empty()),
                }
                Ok(Reply::Rows {
                    columns: plan.columns(),
                    tag: plan.tag,
                    rows: Rows::Stream(rows),
                })
            }
            _ => {
                let out = match self.execute(plan, params).await {
                    Err(e) if e.sqlstate() == common::SqlState::UNDEFINED_TABLE => {
                        // Planned against a table that exists: a partition
                        // moved (or a table was re-laid) under the statement.
                        return self.after_move(prepared, params, plan, e).await;
                    }
                    r => r?,
                };
                Ok(Self::reply_of(plan, out))
            }
        }
    }

    /// A statement that found its table gone from a shard at execution:
    /// when the catalog moved since the plan was made (a partition move's
    /// switch renamed the source tables and committed a new map with a new
    /// catalog version; the plan's version says when it started, so the
    /// statement's own path does no extra work), it runs again on the new map
    /// if nothing of it can have taken effect (see [`rerunnable`]);
    /// otherwise its transaction must be retried (40001). Any other 42P01
    /// stands.
    async fn after_move(
        &mut self,
        prepared: &Prepared,
        params: &[Datum],
        plan: &crate::plan::Plan,
        e: Error,
    ) -> Result<Reply> {
        // The switch renames the source tables under its fence, which
        // wakes the statements waiting there a moment before the new map
        // commits: wait for the map (a table gone for another reason
        // costs this wait, then its error).
        let mut moved = false;
        for _ in 0..100 {
            if let Ok(c) = self.router.check_version().await {
                if c.version != plan.catalog_version {
                    moved = true;
                    break;
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        if !moved {
            return Err(e);
        }
        if rerunnable(plan, self.txn.is_some()) {
            self.statement_had_no_effect();
            return Box::pin(self.run_planned(prepared, params)).await;
        }
        Err(Error::Sql {
            state: common::SqlState::SERIALIZATION_FAILURE,
            message: "could not serialize access: a partition this statement wrote moved to another shard; retry the transaction".into(),
        })
    }

    fn reply_of(plan: &crate::plan::Plan, out: Output) -> Reply {
        match out {
            Output::Command { tag, rows } => Reply::Command { tag, rows },
            Output::TxnStart => Reply::TxnStart,
            Output::TxnEnd(tag) => Reply::TxnEnd(tag),
            Output::Rows(rows) => Reply::Rows {
                columns: plan.columns(),
                tag: if plan.tag == "INSERT" {
                    "INSERT 0"
                } else {
                    plan.tag
                },
                rows: Rows::Datums(rows),
            },
            Output::CopyIn(n) => Reply::CopyIn(n),
        }
    }

    /// Runs one statement of a simple-protocol query: a cached fast-path
    /// plan of its shape when it has one (see `literals`), else planned
    /// with its literals. `heavy`: long text, planned with
    /// [`crate::cpu_bound`].
    pub async fn run_simple(&mut self, stmt: Statement, heavy: bool) -> Result<Reply> {
        self.settle();
        // Active from here: planning may read pg_stat_activity.
        if let Some(a) = &self.activity {
            a.statement_started(
                &self.query_text,
                if self.txn.is_some() {
                    self.transaction_started
                } else {
                    chrono::Utc::now()
                },
            );
        }
        let scope = self.scope();
        let schema = scope.schema.clone();
        if let Some((prepared, params)) = self.simple_shape(&schema, &stmt).await {
            return self.run(&prepared, &params).await;
        }
        if self.failed {
            let plan = Planner {
                catalog: &self.router.catalog(),
                schema: &schema,
                client_types: &[],
            }
            .plan(&stmt)?;
            if !plan.kind.allowed_when_failed() {
                return Err(Error::InFailedTransaction);
            }
        }
        let plan = match plan_statement_sized(&self.router, &scope, &stmt, &[], heavy).await {
            Ok(p) => p,
            Err(e) => {
                self.statement_failed();
                return Err(e);
            }
        };
        let prepared = Prepared::one_shot(schema, stmt, plan);
        self.run(&prepared, &[]).await
    }

    /// The cached fast-path plan of a simple-protocol statement's shape and
    /// its literals as parameters, if the shape has one (see `literals`).
    async fn simple_shape(
        &mut self,
        schema: &str,
        stmt: &Statement,
    ) -> Option<(Arc<Prepared>, Vec<Datum>)> {
        // A constant PostgreSQL refuses (LIMIT -1) must not become a
        // parameter: planned with its literals, the statement fails.
        if self.failed || crate::plan::pgsyntax::check(stmt).is_err() {
            return None;
        }
        let (shape, lits) = crate::literals::parameterize(stmt)?;
        let zone = common::tz::session_input_key();
        let key = Key::new(Source::SimpleShape, &shape.to_string(), schema, &zone, &[]);
        let version = self.router.catalog().version;
        let compiled = match self.statements.get(&key, version) {
            Some(c) => c,
            None => {
                let plan = plan_statement(&self.router, &self.scope(), &shape, &[])
                    .await
                    .ok()
                    .filter(|p| {
                        matches!(
                            p.kind,
                            PlanKind::FastSelect(_) | PlanKind::Write(_) | PlanKind::Insert(_)
                        ) && p.catalog_version == version
                    });
                let compiled = match plan {
                    Some(plan) => Compiled::Plan(Arc::new(Prepared::one_shot(
                        schema.to_string(),
                        shape,
                        plan,
                    ))),
                    None => Compiled::WithLiterals,
                };
                self.statements.insert(key, version, compiled.clone());
                compiled
            }
        };
        let Compiled::Plan(prepared) = compiled else {
            return None;
        };
        let params = crate::literals::bind(&lits, &prepared.plan.param_types)?;
        Some((prepared, params))
    }
}

/// The lines of a COPY TO: the header (HEADER) with the result columns'
/// names, then one line per row.
/// Whether a statement that failed on a moved partition's old table can
/// simply run again: a read (plain or locking: it changed nothing), or a
/// write outside a transaction block (its implicit transaction was rolled
/// back), or a write inside one that reaches a single partition (the one
/// that failed, so nothing else of it ran).
fn rerunnable(plan: &crate::plan::Plan, in_block: bool) -> bool {
    use shard_router::route::RoutePlan;
    let single = |r: &RoutePlan| match r {
        RoutePlan::Single => true,
        RoutePlan::Keys(k) => k.iter().all(|c| c.len() == 1),
        _ => false,
    };
    match &plan.kind {
        PlanKind::FastSelect(_) | PlanKind::DataFusion(..) => true,
        _ if !in_block => true,
        PlanKind::Write(w) => single(&w.route),
        PlanKind::Insert(i) => i.rows.len() == 1 && i.source.is_none(),
        _ => false,
    }
}

fn copy_out_lines(
    plan: &Plan,
    fmt: &crate::plan::copy::CopyFormat,
    batches: &[RecordBatch],
) -> Reply {
    let names: Vec<String> = plan
        .logical
        .as_ref()
        .map(|l| {
            l.schema()
                .fields()
                .iter()
                .filter(|f| !f.name().starts_with(crate::dscale::OUTPUT_SCALE))
                .map(|f| f.name().clone())
                .collect()
        })
        .unwrap_or_default();
    let columns = batches
        .first()
        .map(|b| b.num_columns())
        .unwrap_or(names.len());
    let forced = fmt.forced(&names);
    let mut lines = vec![];
    if fmt.header {
        lines.push(fmt.header_line(&names));
    }
    for b in batches {
        for r in 0..b.num_rows() {
            let fields: Vec<Option<String>> = b
                .columns()
                .iter()
                .map(|c| crate::pgtypes::arrow_text(c, r))
                .collect();
            lines.push(fmt.render(&fields, &forced));
        }
    }
    Reply::CopyOut { columns, lines }
}
