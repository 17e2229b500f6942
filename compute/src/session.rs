//! One client session: its settings, its transaction (one branch per shard
//! touched) and the execution of planned statements.

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{Datum, Error, Result, ShardId, SqlState, SqlType};
use datafusion::sql::sqlparser::ast::{
    ColumnOption, CreateTable, Expr, ObjectType, SchemaName, Statement, TableConstraint,
};
use meta::{ColumnDef, Distribution, IndexDef, TableDef};
use mysql_async::prelude::*;
use shard_router::route::{eval_const, normalize_ident, Route};
use shard_router::txn::{Branches, IsolationLevel, ShardAccess};
use shard_router::Router;
use storage_adapter::{convert, map_error};

use crate::plan::{
    object_parts, resolve_table, AggMerge, FastSelect, InsertPlan, LimitValue, Merge, Plan,
    PlanKind, WritePlan,
};

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
    pub failed: bool,
    pub settings: BTreeMap<String, String>,
    pub database: String,
    pub user: String,
    /// The access DataFusion scans use; set from `txn` before each run.
    pub access_cell: shard_router::txn::SharedAccess,
    /// DataFusion context for this session: (catalog version, schema, lock).
    pub df_ctx: Option<(
        u64,
        String,
        Option<&'static str>,
        datafusion::execution::context::SessionContext,
    )>,
    /// Shard scans of the current DataFusion statement (EXPLAIN output).
    pub scan_log: shard_router::scan::ScanLog,
    /// A COPY FROM STDIN in progress.
    pub copy_in: Option<crate::copy::CopyIn>,
    /// Logical plans of prepared statements, by statement id.
    pub df_plans: std::collections::HashMap<u64, (u64, datafusion::logical_expr::LogicalPlan)>,
    /// Simple-protocol statement shapes (literals taken out, see
    /// `literals`): catalog version planned at, and the plan if the shape
    /// runs on the fast path (`None`: plan each statement with its literals).
    pub simple_plans: SimplePlans,
    /// The backend pid cancel requests name (see `cancel`).
    pub pid: i32,
    /// When the session last started or ended a statement.
    pub last_activity: std::time::Instant,
    /// Set by the idle-in-transaction watchdog: the session is over.
    pub terminated: bool,
}

/// Cached plans of simple-protocol statement shapes, by schema and shape.
pub type SimplePlans =
    std::collections::HashMap<String, (u64, Option<Arc<crate::server::Prepared>>)>;

/// Entries kept per session before the shape cache starts over.
pub const SIMPLE_PLANS_MAX: usize = 512;

impl Drop for Session {
    fn drop(&mut self) {
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

fn default_settings() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for (k, v) in [
        ("server_version", crate::SERVER_VERSION),
        ("server_version_num", "150000"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("datestyle", "ISO, MDY"),
        ("timezone", "UTC"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("search_path", "\"$user\", public"),
        ("transaction_isolation", "read committed"),
        ("default_transaction_isolation", "read committed"),
        ("max_identifier_length", "63"),
        ("application_name", ""),
        ("extra_float_digits", "1"),
        ("lc_collate", "C"),
        ("is_superuser", "on"),
        // Off: every shard scan is a plain table scan, all else DataFusion.
        ("tessera.pushdown", "on"),
        ("lock_timeout", "0"),
    ] {
        m.insert(k.to_string(), v.to_string());
    }
    use std::sync::atomic::Ordering::Relaxed;
    m.insert(
        "statement_timeout".into(),
        format_duration_ms(crate::DEFAULT_STATEMENT_TIMEOUT_MS.load(Relaxed)),
    );
    m.insert(
        "idle_in_transaction_session_timeout".into(),
        format_duration_ms(crate::DEFAULT_IDLE_TXN_TIMEOUT_MS.load(Relaxed)),
    );
    m
}

/// A time setting as PostgreSQL reads it: a number of milliseconds, or a
/// number with a unit (us, ms, s, min, h, d); 22023 otherwise.
pub fn parse_duration_ms(v: &str) -> Result<u64> {
    let t = v.trim();
    let bad = || Error::InvalidParameter {
        message: format!("invalid value for a time parameter: \"{v}\""),
    };
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let factor = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return Err(bad()),
    };
    let ms = (n * factor).round();
    if !(0.0..=i32::MAX as f64).contains(&ms) {
        return Err(Error::InvalidParameter {
            message: format!("{v} is outside the valid range for a time parameter"),
        });
    }
    Ok(ms as u64)
}

/// PostgreSQL's SHOW text of a time setting in ms: `0`, `1500ms`, `5s`,
/// `2min`, `3h`, `1d`.
pub fn format_duration_ms(ms: u64) -> String {
    if ms == 0 {
        return "0".into();
    }
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1000),
    ] {
        if ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

impl Session {
    pub fn new(router: Arc<Router>, database: String, user: String) -> Session {
        Session {
            router,
            txn: None,
            failed: false,
            settings: default_settings(),
            database,
            user,
            access_cell: Arc::new(parking_lot::RwLock::new(ShardAccess::Autocommit)),
            df_ctx: None,
            copy_in: None,
            scan_log: Default::default(),
            df_plans: std::collections::HashMap::new(),
            simple_plans: SimplePlans::new(),
            pid: 0,
            last_activity: std::time::Instant::now(),
            terminated: false,
        }
    }

    pub fn touch(&mut self) {
        self.last_activity = std::time::Instant::now();
    }

    pub fn idle_for(&self) -> std::time::Duration {
        self.last_activity.elapsed()
    }

    fn duration_setting(&self, name: &str) -> Option<std::time::Duration> {
        let ms = parse_duration_ms(self.settings.get(name)?).ok()?;
        (ms > 0).then(|| std::time::Duration::from_millis(ms))
    }

    /// `statement_timeout`, if set.
    pub fn statement_timeout(&self) -> Option<std::time::Duration> {
        self.duration_setting("statement_timeout")
    }

    /// `idle_in_transaction_session_timeout`, if set.
    pub fn idle_in_transaction_timeout(&self) -> Option<std::time::Duration> {
        self.duration_setting("idle_in_transaction_session_timeout")
    }

    /// The schema unqualified names resolve in.
    /// Whether plan fragments are pushed into the shards (`tessera.pushdown`).
    pub fn pushdown(&self) -> bool {
        self.settings
            .get("tessera.pushdown")
            .is_none_or(|v| !v.eq_ignore_ascii_case("off"))
    }

    pub fn current_schema(&self) -> String {
        let path = self
            .settings
            .get("search_path")
            .cloned()
            .unwrap_or_default();
        let cat = self.router.catalog();
        for s in path.split(',') {
            let s = s.trim().trim_matches('"');
            let s = if s == "$user" { self.user.as_str() } else { s };
            if cat.schemas.contains(s) {
                return s.to_string();
            }
        }
        "public".to_string()
    }

    pub fn access(&self) -> ShardAccess {
        match &self.txn {
            Some(b) => ShardAccess::Txn(b.clone()),
            None => ShardAccess::Autocommit,
        }
    }

    pub fn in_txn(&self) -> bool {
        self.txn.is_some()
    }

    /// Runs a planned statement with decoded parameters, keeping the
    /// transaction state machine as PostgreSQL does (25P02 after an error).
    pub async fn execute(&mut self, plan: &Plan, params: &[Datum]) -> Result<Output> {
        if self.failed && !plan.kind.allowed_when_failed() {
            return Err(Error::InFailedTransaction);
        }
        let armed = !matches!(
            plan.kind,
            PlanKind::Commit
                | PlanKind::Rollback
                | PlanKind::Begin { .. }
                | PlanKind::Set { .. }
                | PlanKind::Show { .. }
                | PlanKind::Noop
                | PlanKind::Empty
        ) && self.arm_statement();
        let res = self.execute_inner(plan, params).await;
        if res.is_err() && self.txn.is_some() {
            self.failed = true;
        } else if armed && res.is_ok() {
            self.failed = false;
        }
        res
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

    async fn execute_inner(&mut self, plan: &Plan, params: &[Datum]) -> Result<Output> {
        match &plan.kind {
            PlanKind::Empty | PlanKind::Noop => Ok(Output::Command {
                tag: plan.tag.into(),
                rows: None,
            }),
            PlanKind::Begin {
                isolation,
                read_only,
            } => {
                if self.txn.is_none() {
                    // Validated when set.
                    let default_iso = self
                        .settings
                        .get("default_transaction_isolation")
                        .and_then(|s| IsolationLevel::parse(s).ok());
                    self.txn = Some(Arc::new(Branches::new(
                        self.router.node_id,
                        (*isolation).or(default_iso),
                        *read_only,
                    )));
                }
                Ok(Output::TxnStart)
            }
            PlanKind::Commit => {
                let failed = self.failed;
                self.failed = false;
                match self.txn.take() {
                    Some(t) => {
                        let _shield = crate::cancel::Shield::new(self.pid);
                        t.finish_detached(self.router.clone(), !failed).await?;
                        Ok(Output::TxnEnd(if failed { "ROLLBACK" } else { "COMMIT" }))
                    }
                    None => Ok(Output::TxnEnd("COMMIT")),
                }
            }
            PlanKind::Rollback => {
                self.failed = false;
                if let Some(t) = self.txn.take() {
                    let _shield = crate::cancel::Shield::new(self.pid);
                    t.finish_detached(self.router.clone(), false).await?;
                }
                Ok(Output::TxnEnd("ROLLBACK"))
            }
            PlanKind::Savepoint(name) | PlanKind::RollbackTo(name) | PlanKind::Release(name) => {
                let Some(txn) = self.txn.clone() else {
                    return Err(Error::TxnState {
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
            PlanKind::Set { name, value } => {
                let key = name.to_ascii_lowercase();
                let key = if key == "time zone" {
                    "timezone".to_string()
                } else {
                    key
                };
                if key == "transaction_isolation" {
                    if let Some(t) = &self.txn {
                        if !t.shards().is_empty() {
                            return Err(Error::TxnState {
                                state: SqlState::ACTIVE_TRANSACTION,
                                message: "SET TRANSACTION ISOLATION LEVEL must be called before any query".into(),
                            });
                        }
                        self.txn = Some(Arc::new(Branches::new(
                            self.router.node_id,
                            Some(IsolationLevel::parse(value)?),
                            t.read_only,
                        )));
                    }
                }
                let value = &match key.as_str() {
                    "statement_timeout" | "idle_in_transaction_session_timeout" => {
                        format_duration_ms(parse_duration_ms(value)?)
                    }
                    "lock_timeout" => {
                        if parse_duration_ms(value)? != 0 {
                            return Err(Error::unsupported(
                                "lock_timeout (shards wait up to innodb_lock_wait_timeout, 20 s, then report 40P01)",
                            ));
                        }
                        "0".to_string()
                    }
                    _ => value.clone(),
                };
                // Every value that can reach a shard is checked against its
                // allowed values and stored in canonical form (22023).
                let value =
                    &if key == "transaction_isolation" || key == "default_transaction_isolation" {
                        IsolationLevel::parse(value)?.name().to_string()
                    } else {
                        value.clone()
                    };
                if key == "timezone" {
                    let v = value.to_ascii_uppercase();
                    if !matches!(
                        v.as_str(),
                        "UTC" | "ETC/UTC" | "GMT" | "Z" | "+00:00" | "0" | "UCT"
                    ) {
                        return Err(Error::unsupported(format!(
                            "time zone \"{value}\" (sessions run in UTC)"
                        )));
                    }
                }
                if key == "tessera.pushdown" {
                    if !matches!(value.to_ascii_lowercase().as_str(), "on" | "off") {
                        return Err(Error::InvalidText {
                            ty: "boolean".into(),
                            value: value.clone(),
                        });
                    }
                    // The DataFusion context carries the rule: rebuild it.
                    self.df_ctx = None;
                }
                self.settings.insert(key, value.clone());
                Ok(Output::Command {
                    tag: "SET".into(),
                    rows: None,
                })
            }
            PlanKind::Show { name } => {
                let key = match name.to_ascii_lowercase().as_str() {
                    "time zone" => "timezone".to_string(),
                    "transaction isolation level" => "transaction_isolation".to_string(),
                    k => k.to_string(),
                };
                if key == "transaction_isolation" {
                    let level = self
                        .txn
                        .as_ref()
                        .and_then(|t| t.isolation.map(|l| l.name().to_string()))
                        .or_else(|| self.settings.get("default_transaction_isolation").cloned())
                        .unwrap_or_else(|| "read committed".into());
                    return Ok(Output::Rows(vec![vec![Datum::Text(
                        level.to_ascii_lowercase(),
                    )]]));
                }
                if key == "all" {
                    return Err(Error::unsupported("SHOW ALL"));
                }
                let v = self
                    .settings
                    .get(&key)
                    .cloned()
                    .ok_or(Error::UnknownSetting { name: name.clone() })?;
                Ok(Output::Rows(vec![vec![Datum::Text(v)]]))
            }
            PlanKind::Ddl(stmt) if matches!(**stmt, Statement::Truncate(_)) => {
                let Statement::Truncate(t) = &**stmt else {
                    return Err(Error::internal("not a TRUNCATE"));
                };
                self.execute_truncate(t).await?;
                Ok(Output::Command {
                    tag: "TRUNCATE TABLE".into(),
                    rows: None,
                })
            }
            PlanKind::Ddl(stmt) => {
                if self.txn.is_some() {
                    return Err(Error::unsupported("DDL inside a transaction block"));
                }
                let tag = self.execute_ddl(stmt).await?;
                Ok(Output::Command { tag, rows: None })
            }
            PlanKind::Insert(p) => self.execute_insert(p, params).await,
            PlanKind::Write(p) => {
                let n = self.execute_write(p, params).await?;
                Ok(Output::Command {
                    tag: plan.tag.into(),
                    rows: Some(n),
                })
            }
            PlanKind::FastSelect(p) => self.execute_fast_select(p, params).await,
            PlanKind::CopyIn(p) => {
                self.copy_in = Some(crate::copy::CopyIn::new(
                    p.clone(),
                    self.txn.clone(),
                    self.router.node_id,
                ));
                Ok(Output::CopyIn(p.fields))
            }
            PlanKind::DataFusion(..) | PlanKind::CopyOut(..) => {
                Err(Error::internal("DataFusion plans run in the server"))
            }
        }
    }

    // ---------------------------------------------------------------- DDL

    async fn execute_ddl(&mut self, stmt: &Statement) -> Result<String> {
        let router = self.router.clone();
        let catalog = router.ensure_fresh().await?;
        let schema = self.current_schema();
        match stmt {
            Statement::CreateTable(ct) => {
                let mut def = self.table_def(ct, &schema, &catalog)?;
                if catalog.table(&def.schema, &def.name).is_some() {
                    if ct.if_not_exists {
                        return Ok("CREATE TABLE".into());
                    }
                    return Err(Error::TableExists { name: def.name });
                }
                let mut txn = router
                    .meta
                    .begin_ddl(router.node_id, &stmt.to_string())
                    .await?;
                // Catalog rows first (they may fail on a concurrent create),
                // then the shards; the meta commit makes it visible.
                let id = txn.create_table(&def).await?;
                def.id = id;
                if !crate::privileges::is_superuser(&catalog, &self.user) {
                    txn.set_owner(id, &self.user).await?;
                }
                // Queued first, committed at once: if the shards fail or
                // this node dies before the catalog commit, recovery drops
                // what was made (the id is never reused).
                let physical = shard_router::ddl::physical_tables(&def);
                router.meta.queue_drops(id, &physical).await?;
                if let Err(e) = shard_router::ddl::create_table(&router, &def).await {
                    drop(txn);
                    let _ = shard_router::ddl::drop_physical(&router, &physical).await;
                    return Err(e);
                }
                txn.commit().await?;
                for (shard, db, tbl) in &physical {
                    let _ = router.meta.unqueue_drop(*shard, db, tbl).await;
                }
                router.reload().await?;
                Ok("CREATE TABLE".into())
            }
            Statement::CreateIndex(ci) => {
                let table = resolve_table(&catalog, &ci.table_name, &schema)?;
                let cols: Vec<String> = ci
                    .columns
                    .iter()
                    .map(|c| match &c.column.expr {
                        Expr::Identifier(i) => Ok(normalize_ident(i)),
                        other => Err(Error::unsupported(format!("index on expression {other}"))),
                    })
                    .collect::<Result<_>>()?;
                for c in &cols {
                    table.column(c)?;
                }
                let name = match &ci.name {
                    Some(n) => object_parts(n).last().cloned().unwrap_or_default(),
                    None => format!("{}_{}_idx", table.name, cols.join("_")),
                };
                if ci.unique {
                    check_unique_includes_key(&table, &cols)?;
                }
                if table.indexes.iter().any(|i| i.name == name) {
                    if ci.if_not_exists {
                        return Ok("CREATE INDEX".into());
                    }
                    return Err(Error::IndexExists { name });
                }
                let ix = IndexDef {
                    name,
                    columns: cols,
                    unique: ci.unique,
                };
                let mut txn = router
                    .meta
                    .begin_ddl(router.node_id, &stmt.to_string())
                    .await?;
                txn.add_index(table.id, &ix).await?;
                shard_router::ddl::create_index(&router, &table, &ix).await?;
                txn.commit().await?;
                router.reload().await?;
                Ok("CREATE INDEX".into())
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => {
                match object_type {
                    ObjectType::Table => {
                        for n in names {
                            let table = match resolve_table(&catalog, n, &schema) {
                                Ok(t) => t,
                                Err(_) if *if_exists => continue,
                                Err(e) => return Err(e),
                            };
                            let mut txn = router
                                .meta
                                .begin_ddl(router.node_id, &stmt.to_string())
                                .await?;
                            // The catalog change commits first, with the
                            // physical tables queued; then they are dropped.
                            // A shard that fails keeps its table queued and
                            // recovery drops it: the DROP is never half done.
                            let physical = shard_router::ddl::physical_tables(&table);
                            txn.drop_table(&table).await?;
                            router.meta.queue_drops(table.id, &physical).await?;
                            txn.commit().await?;
                            if let Err(e) =
                                shard_router::ddl::drop_physical(&router, &physical).await
                            {
                                tracing::warn!(
                                    "DROP TABLE {}: physical tables left for recovery: {e}",
                                    table.qualified_name()
                                );
                            }
                            for c in &table.columns {
                                if let Some(s) = &c.sequence {
                                    router.forget_sequence(s);
                                }
                            }
                        }
                        router.reload().await?;
                        Ok("DROP TABLE".into())
                    }
                    ObjectType::Index => {
                        for n in names {
                            let parts = object_parts(n);
                            let (s, name) = match parts.as_slice() {
                                [i] => (schema.clone(), i.clone()),
                                [s, i] => (s.clone(), i.clone()),
                                _ => {
                                    return Err(Error::IndexNotFound {
                                        name: n.to_string(),
                                    })
                                }
                            };
                            let Some(table) = catalog.index_owner(&s, &name).cloned() else {
                                if *if_exists {
                                    continue;
                                }
                                return Err(Error::IndexNotFound { name });
                            };
                            let mut txn = router
                                .meta
                                .begin_ddl(router.node_id, &stmt.to_string())
                                .await?;
                            txn.drop_index(table.id, &name).await?;
                            shard_router::ddl::drop_index(&router, &table, &name).await?;
                            txn.commit().await?;
                        }
                        router.reload().await?;
                        Ok("DROP INDEX".into())
                    }
                    ObjectType::Schema => {
                        for n in names {
                            let name = object_parts(n).join(".");
                            if !catalog.schemas.contains(&name) {
                                if *if_exists {
                                    continue;
                                }
                                return Err(Error::SchemaNotFound { name });
                            }
                            let tables: Vec<_> = catalog
                                .tables
                                .values()
                                .filter(|t| t.schema == name)
                                .cloned()
                                .collect();
                            if !tables.is_empty() && !cascade {
                                return Err(Error::TxnState {
                                state: SqlState("2BP01"),
                                message: format!("cannot drop schema {name} because other objects depend on it"),
                            });
                            }
                            let mut txn = router
                                .meta
                                .begin_ddl(router.node_id, &stmt.to_string())
                                .await?;
                            for t in &tables {
                                txn.drop_table(t).await?;
                            }
                            txn.drop_schema(&name).await?;
                            shard_router::ddl::drop_schema(&router, &catalog.shard_ids(), &name)
                                .await?;
                            txn.commit().await?;
                        }
                        router.reload().await?;
                        Ok("DROP SCHEMA".into())
                    }
                    ObjectType::Role => {
                        let mut txn = router.meta.begin_ddl(router.node_id, "DROP ROLE").await?;
                        for n in names {
                            let name = object_parts(n).join(".");
                            if !catalog.roles.contains_key(&name) {
                                if *if_exists {
                                    continue;
                                }
                                return Err(Error::TxnState {
                                    state: SqlState::UNDEFINED_OBJECT,
                                    message: format!("role \"{name}\" does not exist"),
                                });
                            }
                            if name == self.user {
                                return Err(Error::TxnState {
                                    state: SqlState::OBJECT_IN_USE,
                                    message: "current user cannot be dropped".into(),
                                });
                            }
                            txn.drop_role(&name).await?;
                        }
                        txn.commit().await?;
                        router.reload().await?;
                        Ok("DROP ROLE".into())
                    }
                    other => Err(Error::unsupported(format!("DROP {other}"))),
                }
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                let SchemaName::Simple(n) = schema_name else {
                    return Err(Error::unsupported("CREATE SCHEMA AUTHORIZATION"));
                };
                let name = object_parts(n).join(".");
                check_schema_name(&name)?;
                if catalog.schemas.contains(&name) {
                    if *if_not_exists {
                        return Ok("CREATE SCHEMA".into());
                    }
                    return Err(Error::SchemaExists { name });
                }
                let mut txn = router
                    .meta
                    .begin_ddl(router.node_id, &stmt.to_string())
                    .await?;
                txn.create_schema(&name).await?;
                let sql = shard_router::ddl::ensure_schema_sql(&name);
                shard_router::ddl::run_on_shards(
                    &router,
                    catalog
                        .shard_ids()
                        .into_iter()
                        .map(|s| (s, vec![sql.clone()]))
                        .collect(),
                )
                .await?;
                txn.commit().await?;
                router.reload().await?;
                Ok("CREATE SCHEMA".into())
            }
            Statement::CreateRole(cr) => {
                let mut txn = router.meta.begin_ddl(router.node_id, "CREATE ROLE").await?;
                for n in &cr.names {
                    let name = object_parts(n).join(".");
                    if catalog.roles.contains_key(&name) {
                        if cr.if_not_exists {
                            continue;
                        }
                        return Err(Error::TxnState {
                            state: SqlState::DUPLICATE_OBJECT,
                            message: format!("role \"{name}\" already exists"),
                        });
                    }
                    if name.starts_with("pg_") || name == "public" || name == "none" {
                        return Err(Error::TxnState {
                            state: SqlState::RESERVED_NAME,
                            message: format!("role name \"{name}\" is reserved"),
                        });
                    }
                    let password = role_password(cr.password.as_ref())?;
                    txn.put_role(
                        &name,
                        Some(cr.superuser.unwrap_or(false)),
                        Some(cr.login.unwrap_or(false)),
                        password,
                    )
                    .await?;
                }
                txn.commit().await?;
                router.reload().await?;
                Ok("CREATE ROLE".into())
            }
            Statement::AlterRole { name, operation } => {
                use datafusion::sql::sqlparser::ast::{AlterRoleOperation, RoleOption};
                let name = normalize_ident(name);
                if !catalog.roles.contains_key(&name) {
                    return Err(Error::TxnState {
                        state: SqlState::UNDEFINED_OBJECT,
                        message: format!("role \"{name}\" does not exist"),
                    });
                }
                let AlterRoleOperation::WithOptions { options } = operation else {
                    return Err(Error::unsupported("this ALTER ROLE"));
                };
                let (mut su, mut login, mut pw) = (None, None, None);
                for o in options {
                    match o {
                        RoleOption::SuperUser(b) => su = Some(*b),
                        RoleOption::Login(b) => login = Some(*b),
                        RoleOption::Password(p) => pw = role_password(Some(p))?,
                        other => return Err(Error::unsupported(format!("role option {other}"))),
                    }
                }
                let mut txn = router.meta.begin_ddl(router.node_id, "ALTER ROLE").await?;
                txn.put_role(&name, su, login, pw).await?;
                txn.commit().await?;
                router.reload().await?;
                Ok("ALTER ROLE".into())
            }
            Statement::Grant(_) | Statement::Revoke(_) => {
                let (grant, privileges, objects, grantees) = match stmt {
                    Statement::Grant(g) => {
                        if g.with_grant_option {
                            return Err(Error::unsupported("WITH GRANT OPTION"));
                        }
                        (true, &g.privileges, g.objects.as_ref(), &g.grantees)
                    }
                    Statement::Revoke(r) => (false, &r.privileges, r.objects.as_ref(), &r.grantees),
                    _ => return Err(Error::internal("not a GRANT or REVOKE")),
                };
                let privs = grant_list(&catalog, &schema, privileges, objects, grantees)?;
                let tag = if grant { "GRANT" } else { "REVOKE" };
                let mut txn = router.meta.begin_ddl(router.node_id, tag).await?;
                for p in &privs {
                    txn.set_grant(p, grant).await?;
                }
                txn.commit().await?;
                router.reload().await?;
                Ok(tag.into())
            }
            _ => Err(Error::unsupported(
                "CREATE DATABASE (a cluster serves one database; use schemas)",
            )),
        }
    }

    fn table_def(
        &self,
        ct: &CreateTable,
        default_schema: &str,
        catalog: &meta::Catalog,
    ) -> Result<TableDef> {
        let parts = object_parts(&ct.name);
        let (schema, name) = match parts.as_slice() {
            [t] => (default_schema.to_string(), t.clone()),
            [s, t] => (s.clone(), t.clone()),
            _ => return Err(Error::unsupported("three-part table names")),
        };
        if !catalog.schemas.contains(&schema) {
            return Err(Error::SchemaNotFound { name: schema });
        }
        if ct.query.is_some() || ct.like.is_some() || ct.partition_of.is_some() {
            return Err(Error::unsupported("CREATE TABLE AS / LIKE / PARTITION OF"));
        }
        if name.len() > 56 {
            return Err(Error::InvalidTableDefinition {
                message: "table names are limited to 56 characters".into(),
            });
        }
        let mut columns = vec![];
        let mut primary_key: Vec<String> = vec![];
        let mut uniques: Vec<Vec<String>> = vec![];
        for c in &ct.columns {
            let cname = normalize_ident(&c.name);
            let type_text = c.data_type.to_string().to_lowercase();
            let (ty, serial) = match type_text.as_str() {
                "serial" | "serial4" => (SqlType::Integer, true),
                "bigserial" | "serial8" => (SqlType::BigInt, true),
                "smallserial" | "serial2" => (SqlType::SmallInt, true),
                _ => (SqlType::parse(&type_text)?, false),
            };
            let mut col = ColumnDef {
                name: cname.clone(),
                ty,
                not_null: serial,
                default: None,
                sequence: if serial {
                    Some(format!("{schema}.{name}.{cname}"))
                } else {
                    None
                },
            };
            for opt in &c.options {
                match &opt.option {
                    ColumnOption::NotNull => col.not_null = true,
                    ColumnOption::Null => {}
                    ColumnOption::Default(e) => {
                        // Constants only: evaluated now to check them.
                        eval_const(e, &[])?.coerce(&ty)?;
                        col.default = Some(e.to_string());
                    }
                    ColumnOption::PrimaryKey(_) => {
                        col.not_null = true;
                        primary_key = vec![cname.clone()];
                    }
                    ColumnOption::Unique(_) => uniques.push(vec![cname.clone()]),
                    other => return Err(Error::unsupported(format!("column option {other}"))),
                }
            }
            columns.push(col);
        }
        let idx_cols =
            |cols: &[datafusion::sql::sqlparser::ast::IndexColumn]| -> Result<Vec<String>> {
                cols.iter()
                    .map(|c| match &c.column.expr {
                        Expr::Identifier(i) => Ok(normalize_ident(i)),
                        other => Err(Error::unsupported(format!(
                            "constraint on expression {other}"
                        ))),
                    })
                    .collect()
            };
        for tc in &ct.constraints {
            match tc {
                TableConstraint::PrimaryKey(pk) => primary_key = idx_cols(&pk.columns)?,
                TableConstraint::Unique(u) => uniques.push(idx_cols(&u.columns)?),
                other => return Err(Error::unsupported(format!("table constraint {other}"))),
            }
        }
        for k in &primary_key {
            let i = columns
                .iter()
                .position(|c| &c.name == k)
                .ok_or(Error::ColumnNotFound { name: k.clone() })?;
            columns[i].not_null = true;
        }
        // Distribution: PARTITION BY HASH (cols), WITH (distribution=..., partitions=N).
        let mut dist_kind: Option<String> = None;
        let mut partitions: Option<u32> = None;
        let options = match &ct.table_options {
            datafusion::sql::sqlparser::ast::CreateTableOptions::With(o) => o.clone(),
            datafusion::sql::sqlparser::ast::CreateTableOptions::None => vec![],
            other => return Err(Error::unsupported(format!("table options {other}"))),
        };
        for o in &options {
            if let datafusion::sql::sqlparser::ast::SqlOption::KeyValue { key, value } = o {
                let v = match value {
                    Expr::Value(v) => match &v.value {
                        datafusion::sql::sqlparser::ast::Value::SingleQuotedString(s) => s.clone(),
                        other => other.to_string(),
                    },
                    Expr::Identifier(i) => i.value.clone(),
                    other => other.to_string(),
                };
                match key.value.to_lowercase().as_str() {
                    "distribution" => dist_kind = Some(v.to_lowercase()),
                    "partitions" => {
                        partitions = Some(v.parse().ok().filter(|n| (1..=1024).contains(n)).ok_or(
                            Error::InvalidParameter {
                                message: "partitions must be an integer between 1 and 1024".into(),
                            },
                        )?)
                    }
                    other => return Err(Error::unsupported(format!("table option \"{other}\""))),
                }
            } else {
                return Err(Error::unsupported(format!("table option {o}")));
            }
        }
        let mut hash_cols: Option<Vec<String>> = None;
        if let Some(pb) = &ct.partition_by {
            match pb.as_ref() {
                Expr::Function(f) if object_parts(&f.name).join(".") == "hash" => {
                    let datafusion::sql::sqlparser::ast::FunctionArguments::List(l) = &f.args
                    else {
                        return Err(Error::unsupported("PARTITION BY HASH without columns"));
                    };
                    let mut cols = vec![];
                    for a in &l.args {
                        match a {
                            datafusion::sql::sqlparser::ast::FunctionArg::Unnamed(
                                datafusion::sql::sqlparser::ast::FunctionArgExpr::Expr(
                                    Expr::Identifier(i),
                                ),
                            ) => cols.push(normalize_ident(i)),
                            other => {
                                return Err(Error::unsupported(format!("partition key {other}")))
                            }
                        }
                    }
                    hash_cols = Some(cols);
                }
                other => {
                    return Err(Error::unsupported(format!(
                        "PARTITION BY {other} (only HASH)"
                    )))
                }
            }
        }
        let shards = catalog.shard_ids();
        if shards.is_empty() {
            return Err(Error::internal("no shards in the shard map"));
        }
        let default_hash = self.router_default_hash();
        let distribution = match (dist_kind.as_deref(), hash_cols) {
            (Some("mirror"), None) => Distribution::Mirror,
            (Some("single"), None) => Distribution::Single,
            (Some("hash") | None, Some(cols)) => Distribution::Hash { columns: cols, partitions: 0 },
            (Some("hash"), None) if !primary_key.is_empty() => Distribution::Hash { columns: primary_key.clone(), partitions: 0 },
            (None, None) if default_hash && !primary_key.is_empty() => {
                Distribution::Hash { columns: primary_key.clone(), partitions: 0 }
            }
            (None, None) => Distribution::Single,
            (Some(k), _) => {
                return Err(Error::InvalidParameter {
                    message: format!("distribution '{k}' is not one of hash, mirror, single (and cannot be combined with PARTITION BY)"),
                })
            }
        };
        let partition_shards: Vec<ShardId> = match &distribution {
            Distribution::Hash { columns: kc, .. } => {
                for k in kc {
                    let c = columns
                        .iter()
                        .find(|c| &c.name == k)
                        .ok_or(Error::ColumnNotFound { name: k.clone() })?;
                    if matches!(c.ty, SqlType::Real | SqlType::Double) {
                        return Err(Error::unsupported("floating-point partition keys"));
                    }
                }
                let n = partitions.unwrap_or(shards.len() as u32);
                (0..n).map(|i| shards[i as usize % shards.len()]).collect()
            }
            Distribution::Mirror => shards.clone(),
            Distribution::Single => {
                // Balance: the shard holding the fewest tables.
                let mut counts: BTreeMap<ShardId, usize> = shards.iter().map(|s| (*s, 0)).collect();
                for t in catalog.tables.values() {
                    for s in &t.partition_shards {
                        *counts.entry(*s).or_default() += 1;
                    }
                }
                let best = counts
                    .iter()
                    .min_by_key(|(s, n)| (**n, **s))
                    .map(|(s, _)| *s)
                    .unwrap_or(shards[0]);
                vec![best]
            }
        };
        let distribution = match distribution {
            Distribution::Hash { columns, .. } => Distribution::Hash {
                columns,
                partitions: partition_shards.len() as u32,
            },
            d => d,
        };
        let mut def = TableDef {
            id: common::TableId(0),
            schema,
            name: name.clone(),
            columns,
            primary_key,
            distribution,
            partition_shards,
            indexes: vec![],
        };
        if !def.primary_key.is_empty() {
            check_unique_includes_key(&def, &def.primary_key.clone())?;
        }
        for (i, u) in uniques.into_iter().enumerate() {
            check_unique_includes_key(&def, &u)?;
            def.indexes.push(IndexDef {
                name: format!("{name}_key{i}"),
                columns: u,
                unique: true,
            });
        }
        Ok(def)
    }

    fn router_default_hash(&self) -> bool {
        crate::DEFAULT_HASH.load(std::sync::atomic::Ordering::Relaxed)
    }

    // ---------------------------------------------------------------- DML

    async fn execute_insert(&mut self, p: &InsertPlan, params: &[Datum]) -> Result<Output> {
        let t = &p.table;
        // Sequence values first (they may need a round trip to meta), in
        // row order, so the rows themselves are evaluated without awaiting.
        let mut sequenced: Vec<std::collections::VecDeque<i64>> = vec![];
        for (ci, col) in t.columns.iter().enumerate() {
            let mut values = std::collections::VecDeque::new();
            if let Some(seq) = &col.sequence {
                for exprs in &p.rows {
                    if is_default_expr(p.column_map[ci].and_then(|j| exprs.get(j))) {
                        values.push_back(self.router.next_sequence_value(seq).await?);
                    }
                }
            }
            sequenced.push(values);
        }
        let heavy = p.rows.len() > 1000;
        let (rows, work) = crate::cpu_bound(heavy, || -> Result<_> {
            let rows = insert_rows(p, params, sequenced)?;
            let work = shard_router::render::insert_statements(t, &rows);
            Ok((rows, work))
        })?;
        self.run_writes(work).await?;
        if p.returning.is_empty() {
            return Ok(Output::Command {
                tag: "INSERT 0".into(),
                rows: Some(rows.len()),
            });
        }
        Ok(Output::Rows(
            rows.iter()
                .map(|r| p.returning.iter().map(|i| r[*i].clone()).collect())
                .collect(),
        ))
    }

    /// Runs write statements, each (shard, sql, params). A single statement
    /// in autocommit runs on a pooled connection; several run in one
    /// implicit transaction so they apply together or not at all.
    /// TRUNCATE as PostgreSQL's is: all of it or none of it, inside a
    /// transaction block too. Every partition of every named table is
    /// emptied by `DELETE` in one transaction (the session's, or an
    /// implicit one committed with 2PC), so a shard that fails leaves
    /// every table as it was. MariaDB's own TRUNCATE commits on each shard
    /// at once and cannot be undone: with one shard down it emptied two
    /// thirds of a table.
    async fn execute_truncate(
        &mut self,
        t: &datafusion::sql::sqlparser::ast::Truncate,
    ) -> Result<()> {
        let catalog = self.router.ensure_fresh().await?;
        let schema = self.current_schema();
        let mut work = vec![];
        for target in &t.table_names {
            let table = resolve_table(&catalog, &target.name, &schema)?;
            for (shard, p) in shard_router::ddl::placements(&table) {
                let mut sql = shard_router::shard_sql::ShardSql::new();
                sql.keyword("DELETE FROM ")
                    .table(&table.schema, &table.physical_name(p));
                work.push((shard, sql.into_parts().0, vec![]));
            }
        }
        self.run_writes(work).await?;
        Ok(())
    }

    async fn run_writes(
        &mut self,
        work: Vec<(ShardId, String, Vec<mysql_async::Value>)>,
    ) -> Result<u64> {
        let implicit = self.txn.is_none() && work.len() > 1;
        let access = if implicit {
            ShardAccess::Txn(Arc::new(Branches::new(self.router.node_id, None, false)))
        } else {
            self.access()
        };
        let mut affected = 0u64;
        let mut result = Ok(());
        for (shard, sql, vals) in work {
            let r: Result<u64> = async {
                let mut lease = access.lease(&self.router, shard, true).await?;
                let conn = lease.conn()?;
                storage_adapter::exec_drop(conn, &sql, vals)
                    .await
                    .map_err(|e| map_error(shard, e))?;
                let n = conn.affected_rows();
                lease.mark_written();
                Ok(n)
            }
            .await;
            match r {
                Ok(n) => affected += n,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if implicit {
            if let ShardAccess::Txn(b) = &access {
                b.clone()
                    .finish_detached(self.router.clone(), result.is_ok())
                    .await?;
            }
        }
        result.map(|_| affected)
    }

    async fn execute_write(&mut self, p: &WritePlan, params: &[Datum]) -> Result<usize> {
        let t = &p.table;
        let parts: Vec<u32> = match p.route.resolve(t, params)? {
            Route::SinglePartition(x) => vec![x],
            Route::Partitions(v) => v,
            Route::Scatter | Route::Mirror => (0..t.partition_count()).collect(),
        };
        let mut work = vec![];
        for part in parts {
            let (sql, order) = &p.sql[part as usize];
            let vals = bind(order, params)?;
            work.push((t.partition_shards[part as usize], sql.clone(), vals));
        }
        let n = self.run_writes(work).await?;
        // A mirror table's copies each report the same count.
        Ok(if matches!(t.distribution, Distribution::Mirror) {
            (n / t.partition_count().max(1) as u64) as usize
        } else {
            n as usize
        })
    }

    /// A single-table SELECT without DataFusion: one partition answers it
    /// directly; several (IN lists on the key, ranges, non-key filters) run
    /// the same rendered statement concurrently and their answers are
    /// merged here.
    async fn execute_fast_select(&mut self, p: &FastSelect, params: &[Datum]) -> Result<Output> {
        let t = &p.table;
        let parts: Vec<u32> = match p.route.resolve(t, params)? {
            Route::SinglePartition(x) => vec![x],
            Route::Mirror => vec![self.router.node_id % t.partition_count().max(1)],
            Route::Partitions(v) => v,
            Route::Scatter => (0..t.partition_count()).collect(),
        };
        let access = self.access();
        if let [part] = parts[..] {
            return Ok(Output::Rows(
                fast_select_part(&self.router, &access, p, part, params).await?,
            ));
        }
        let Some(merge) = &p.merge else {
            return Err(Error::internal(
                "a single-partition statement routed to several partitions",
            ));
        };
        // Every partition's query runs to its end (none is dropped midway
        // when another fails), then the first error, if any, is reported.
        let answers = futures::future::join_all(
            parts
                .iter()
                .map(|part| fast_select_part(&self.router, &access, p, *part, params)),
        )
        .await
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
        Ok(Output::Rows(merge_answers(
            merge, &p.types, answers, params,
        )?))
    }
}

/// Runs a fast-path SELECT on one partition and decodes its rows.
async fn fast_select_part(
    router: &Router,
    access: &ShardAccess,
    p: &FastSelect,
    part: u32,
    params: &[Datum],
) -> Result<Vec<Vec<Datum>>> {
    let shard = p.table.partition_shards[part as usize];
    let (sql, order) = &p.sql[part as usize];
    let vals = bind(order, params)?;
    let mut lease = access.lease(router, shard, p.locking).await?;
    let conn = lease.conn()?;
    // Without parameters, one text-protocol round trip (a prepared
    // statement would cost a prepare per distinct text).
    let raw: Vec<mysql_async::Row> = if vals.is_empty() {
        conn.query(sql.as_str()).await
    } else {
        conn.exec(sql.as_str(), vals).await
    }
    .map_err(|e| storage_adapter::map_statement_error(shard, e, sql))?;
    let mut rows = Vec::with_capacity(raw.len());
    for r in raw {
        let vals = r.unwrap();
        let mut row = Vec::with_capacity(vals.len());
        for (v, ty) in vals.into_iter().zip(&p.types) {
            row.push(convert::from_mysql(v, ty)?);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Combines the answers of several partitions to one fast-path SELECT.
fn merge_answers(
    merge: &Merge,
    types: &[SqlType],
    answers: Vec<Vec<Vec<Datum>>>,
    params: &[Datum],
) -> Result<Vec<Vec<Datum>>> {
    use std::cmp::Ordering;
    match merge {
        Merge::Aggregates(aggs) => {
            let mut acc: Vec<Datum> = aggs
                .iter()
                .map(|a| match a {
                    AggMerge::Count => Datum::Int(0),
                    _ => Datum::Null,
                })
                .collect();
            for row in answers.into_iter().flatten() {
                for (i, v) in row.into_iter().enumerate() {
                    let (Some(agg), Some(slot)) = (aggs.get(i), acc.get_mut(i)) else {
                        return Err(Error::internal("aggregate row wider than planned"));
                    };
                    let prev = std::mem::replace(slot, Datum::Null);
                    *slot = combine(*agg, types.get(i), prev, v)?;
                }
            }
            Ok(vec![acc])
        }
        Merge::Rows {
            order,
            distinct,
            limit,
        } => {
            let mut rows: Vec<Vec<Datum>> = answers.into_iter().flatten().collect();
            let by_order = |a: &Vec<Datum>, b: &Vec<Datum>| {
                for (i, desc) in order {
                    let o = a[*i].sort_cmp(&b[*i]);
                    let o = if *desc { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            };
            let whole = |a: &Vec<Datum>, b: &Vec<Datum>| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.sort_cmp(y))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or(Ordering::Equal)
            };
            if *distinct {
                // Equal rows have equal ORDER BY keys, so they end up
                // adjacent.
                rows.sort_by(|a, b| by_order(a, b).then_with(|| whole(a, b)));
                rows.dedup_by(|a, b| whole(a, b) == Ordering::Equal);
            } else if !order.is_empty() {
                rows.sort_by(by_order);
            }
            if let Some(l) = limit {
                let n = match l {
                    LimitValue::Const(n) => *n,
                    LimitValue::Param(i) => match params.get(*i) {
                        Some(Datum::Int(n)) => (*n).max(0) as u64,
                        Some(Datum::Null) => u64::MAX,
                        Some(Datum::Text(s)) => s
                            .trim()
                            .parse::<i64>()
                            .map_err(|_| Error::InvalidText {
                                ty: "bigint".into(),
                                value: s.clone(),
                            })?
                            .max(0) as u64,
                        _ => {
                            return Err(Error::InvalidParameter {
                                message: format!("LIMIT parameter ${} is not an integer", i + 1),
                            })
                        }
                    },
                };
                rows.truncate(usize::try_from(n).unwrap_or(usize::MAX));
            }
            Ok(rows)
        }
    }
}

/// Folds one partition's partial aggregate into the running value.
fn combine(agg: AggMerge, ty: Option<&SqlType>, acc: Datum, v: Datum) -> Result<Datum> {
    use std::cmp::Ordering;
    if v.is_null() {
        return Ok(acc);
    }
    if acc.is_null() {
        return Ok(v);
    }
    let out_of_range = || Error::NumericOutOfRange {
        message: format!(
            "{} out of range",
            ty.map(|t| t.to_string()).unwrap_or_else(|| "value".into())
        ),
    };
    Ok(match (agg, acc, v) {
        (AggMerge::Count | AggMerge::Sum, Datum::Int(a), Datum::Int(b)) => {
            Datum::Int(a.checked_add(b).ok_or_else(out_of_range)?)
        }
        (AggMerge::Sum, Datum::Decimal(a), Datum::Decimal(b)) => {
            Datum::Decimal(a.checked_add(b).ok_or_else(out_of_range)?)
        }
        (AggMerge::Min, a, b) => {
            if b.sort_cmp(&a) == Ordering::Less {
                b
            } else {
                a
            }
        }
        (AggMerge::Max, a, b) => {
            if b.sort_cmp(&a) == Ordering::Greater {
                b
            } else {
                a
            }
        }
        (agg, a, b) => {
            return Err(Error::internal(format!(
                "cannot merge {agg:?} of {a:?} and {b:?}"
            )))
        }
    })
}

fn bind(order: &[usize], params: &[Datum]) -> Result<Vec<mysql_async::Value>> {
    order
        .iter()
        .map(|i| {
            params
                .get(*i)
                .map(convert::to_mysql)
                .ok_or_else(|| Error::InvalidParameter {
                    message: format!("there is no parameter ${}", i + 1),
                })
        })
        .collect()
}

fn check_unique_includes_key(t: &TableDef, cols: &[String]) -> Result<()> {
    if let Distribution::Hash { columns, .. } = &t.distribution {
        if !columns.iter().all(|k| cols.contains(k)) {
            return Err(Error::unsupported(format!(
                "a unique constraint on ({}) that does not include the partition key ({}): uniqueness is enforced per partition",
                cols.join(", "),
                columns.join(", ")
            )));
        }
    }
    Ok(())
}

/// Whether an INSERT leaves this column to its default (not given, or the
/// keyword `DEFAULT`).
fn is_default_expr(given: Option<&Expr>) -> bool {
    match given {
        None => true,
        Some(Expr::Identifier(i)) => {
            i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default")
        }
        Some(_) => false,
    }
}

/// The full rows (in column order) an INSERT plan stores: given values
/// coerced to the column types, defaults, and `sequenced` values (per
/// column, in row order) for defaulted sequence columns; NOT NULL and
/// length limits checked as PostgreSQL checks them.
fn insert_rows(
    p: &InsertPlan,
    params: &[Datum],
    mut sequenced: Vec<std::collections::VecDeque<i64>>,
) -> Result<Vec<Vec<Datum>>> {
    let t = &p.table;
    // Each column's default, evaluated once when first needed.
    let mut defaults: Vec<Option<Datum>> = vec![None; t.columns.len()];
    let default_of = |col: &meta::ColumnDef| -> Result<Datum> {
        match &col.default {
            Some(d) => {
                let e = datafusion::sql::sqlparser::parser::Parser::new(
                    &crate::dialect::TesseraDialect,
                )
                .try_with_sql(d)
                .and_then(|mut p| p.parse_expr())
                .map_err(Error::internal)?;
                eval_const(&e, &[])?.coerce(&col.ty)
            }
            None => Ok(Datum::Null),
        }
    };
    let mut rows: Vec<Vec<Datum>> = Vec::with_capacity(p.rows.len());
    for exprs in &p.rows {
        let mut row = Vec::with_capacity(t.columns.len());
        for (ci, col) in t.columns.iter().enumerate() {
            let given = p.column_map[ci].and_then(|j| exprs.get(j));
            let v = if !is_default_expr(given) {
                match given {
                    Some(e) => eval_const(e, params)?.coerce(&col.ty)?,
                    None => Datum::Null,
                }
            } else if col.sequence.is_some() {
                let next = sequenced[ci]
                    .pop_front()
                    .ok_or_else(|| Error::internal("sequence values ran out"))?;
                Datum::Int(next).coerce(&col.ty)?
            } else {
                match &defaults[ci] {
                    Some(d) => d.clone(),
                    None => {
                        let d = default_of(col)?;
                        defaults[ci] = Some(d.clone());
                        d
                    }
                }
            };
            if v.is_null() && col.not_null {
                return Err(Error::Shard {
                    code: 1048,
                    message: format!(
                        "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                        col.name, t.name
                    ),
                });
            }
            if let (Datum::Text(s), SqlType::Varchar(Some(n)) | SqlType::Char(n)) = (&v, &col.ty) {
                if s.trim_end_matches(' ').chars().count() > *n as usize {
                    return Err(Error::Shard {
                        code: 1406,
                        message: format!("value too long for type {}", col.ty),
                    });
                }
            }
            row.push(v);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Schema names PostgreSQL or the shards reserve (42939): `pg_*`,
/// `information_schema`, MariaDB's own databases and Tessera's; and names
/// too long for a shard database once prefixed (42622).
fn check_schema_name(name: &str) -> Result<()> {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("pg_")
        || lower.starts_with("tessera")
        || lower.starts_with(meta::PHYSICAL_DB_PREFIX)
        || matches!(
            lower.as_str(),
            "information_schema" | "performance_schema" | "mysql" | "sys"
        )
    {
        return Err(Error::TxnState {
            state: SqlState::RESERVED_NAME,
            message: format!(
                "unacceptable schema name \"{name}\": the name is reserved for system schemas"
            ),
        });
    }
    if name.chars().count() + meta::PHYSICAL_DB_PREFIX.len() > 64 {
        return Err(Error::TxnState {
            state: SqlState("42622"),
            message: format!("schema name \"{name}\" is too long (at most 60 characters)"),
        });
    }
    Ok(())
}

/// The SCRAM material of a role's `PASSWORD` option: `Some(None)` for
/// `PASSWORD NULL`.
fn role_password(
    p: Option<&datafusion::sql::sqlparser::ast::Password>,
) -> Result<Option<Option<meta::ScramSecret>>> {
    use datafusion::sql::sqlparser::ast::{Password, Value};
    Ok(match p {
        None => None,
        Some(Password::NullPassword) => Some(None),
        Some(Password::Password(Expr::Value(v))) => match &v.value {
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => {
                Some(Some(crate::privileges::password_verifier(s)))
            }
            Value::Null => Some(None),
            _ => {
                return Err(Error::unsupported(
                    "a password that is not a string literal",
                ))
            }
        },
        Some(_) => {
            return Err(Error::unsupported(
                "a password that is not a string literal",
            ))
        }
    })
}

/// The privileges a GRANT or REVOKE names, one row each.
fn grant_list(
    catalog: &meta::Catalog,
    schema: &str,
    privileges: &datafusion::sql::sqlparser::ast::Privileges,
    objects: Option<&datafusion::sql::sqlparser::ast::GrantObjects>,
    grantees: &[datafusion::sql::sqlparser::ast::Grantee],
) -> Result<Vec<meta::Privilege>> {
    use datafusion::sql::sqlparser::ast::{
        Action, GrantObjects, GranteeName, GranteesType, Privileges,
    };
    let mut roles = vec![];
    for g in grantees {
        let name = match (&g.grantee_type, &g.name) {
            (GranteesType::Public, _) => "public".to_string(),
            (_, Some(GranteeName::ObjectName(n))) => object_parts(n).join("."),
            _ => return Err(Error::unsupported("this grantee")),
        };
        if name != "public" && !catalog.roles.contains_key(&name) {
            return Err(Error::TxnState {
                state: SqlState::UNDEFINED_OBJECT,
                message: format!("role \"{name}\" does not exist"),
            });
        }
        roles.push(name);
    }
    // (kind, schema, object) targets
    let mut targets = vec![];
    let on_schema;
    match objects {
        Some(GrantObjects::Tables(names)) => {
            on_schema = false;
            for n in names {
                let t = resolve_table(catalog, n, schema)?;
                targets.push(("table", t.schema.clone(), t.name.clone()));
            }
        }
        Some(GrantObjects::AllTablesInSchema { schemas }) => {
            on_schema = false;
            for s in schemas {
                let s = object_parts(s).join(".");
                if !catalog.schemas.contains(&s) {
                    return Err(Error::SchemaNotFound { name: s });
                }
                for t in catalog.tables.values().filter(|t| t.schema == s) {
                    targets.push(("table", t.schema.clone(), t.name.clone()));
                }
            }
        }
        Some(GrantObjects::Schemas(names)) => {
            on_schema = true;
            for n in names {
                let s = object_parts(n).join(".");
                if !catalog.schemas.contains(&s) {
                    return Err(Error::SchemaNotFound { name: s });
                }
                targets.push(("schema", s, String::new()));
            }
        }
        _ => return Err(Error::unsupported("GRANT on this kind of object")),
    }
    let all_table = ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE"];
    let all_schema = ["USAGE", "CREATE"];
    let names: Vec<&str> = match privileges {
        Privileges::All { .. } => {
            if on_schema {
                all_schema.to_vec()
            } else {
                all_table.to_vec()
            }
        }
        Privileges::Actions(actions) => {
            let mut v = vec![];
            for a in actions {
                let n = match a {
                    Action::Select { columns: None } => "SELECT",
                    Action::Insert { columns: None } => "INSERT",
                    Action::Update { columns: None } => "UPDATE",
                    Action::Delete => "DELETE",
                    Action::Truncate => "TRUNCATE",
                    Action::Usage => "USAGE",
                    Action::Create { obj_type: None } => "CREATE",
                    other => return Err(Error::unsupported(format!("privilege {other}"))),
                };
                let fits = if on_schema {
                    all_schema.contains(&n)
                } else {
                    all_table.contains(&n)
                };
                if !fits {
                    return Err(Error::TxnState {
                        state: SqlState("0LP01"),
                        message: format!(
                            "invalid privilege type {n} for {}",
                            if on_schema { "schema" } else { "table" }
                        ),
                    });
                }
                v.push(n);
            }
            v
        }
    };
    let mut out = vec![];
    for r in &roles {
        for (kind, s, o) in &targets {
            for p in &names {
                out.push(meta::Privilege {
                    grantee: r.clone(),
                    kind: kind.to_string(),
                    schema: s.clone(),
                    object: o.clone(),
                    privilege: p.to_string(),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_settings_read_and_print_like_postgres() {
        use super::{format_duration_ms, parse_duration_ms};
        assert_eq!(parse_duration_ms("1500").unwrap(), 1500);
        assert_eq!(parse_duration_ms("5s").unwrap(), 5000);
        assert_eq!(parse_duration_ms(" 2min").unwrap(), 120_000);
        assert!(parse_duration_ms("5 parsecs").is_err());
        assert!(parse_duration_ms("-1").is_err());
        assert_eq!(format_duration_ms(5000), "5s");
        assert_eq!(format_duration_ms(1500), "1500ms");
        assert_eq!(format_duration_ms(0), "0");
    }
}
