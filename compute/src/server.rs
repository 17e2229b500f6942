//! The PostgreSQL wire front end (pgwire): startup with SCRAM-SHA-256 against
//! users in meta, the simple and extended query protocols, cancel requests.
//! Errors become ErrorResponses here and only here.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use common::{Datum, Error, Result};
use datafusion::execution::context::SessionContext;
use datafusion::sql::sqlparser::ast::Statement;
use datafusion::sql::sqlparser::parser::ParserError;
use futures::stream;
use futures::{SinkExt, StreamExt};
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramAuth};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::{AuthSource, DefaultServerParameterProvider, LoginInfo, Password};
use pgwire::api::portal::PortalExecutionState;
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{
    DataRowEncoder, DescribePortalResponse, DescribeStatementResponse, FieldFormat, FieldInfo,
    QueryResponse, Response, Tag,
};
use pgwire::api::stmt::{QueryParser, StoredStatement};
use pgwire::api::store::Entry;
use pgwire::api::store::PortalStore;
use pgwire::api::{
    ClientInfo, ClientPortalStore, ConnectionHandle, ConnectionManager, PgWireConnectionState,
    PgWireServerHandlers, Type, DEFAULT_NAME,
};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::data::{NoData, ParameterDescription, RowDescription};
use pgwire::messages::extendedquery::{
    Bind, BindComplete, Describe, Execute, Parse, ParseComplete, TARGET_TYPE_BYTE_PORTAL,
    TARGET_TYPE_BYTE_STATEMENT,
};
use pgwire::messages::response::EmptyQueryResponse;
use pgwire::messages::PgWireBackendMessage;
use shard_router::Router;

use crate::df;
use crate::pgtypes::{decode_param, encode_arrow, encode_datum, field};
use crate::plan::{Plan, PlanKind, Planner};
use crate::session::{Output, Session};

pub const SCRAM_ITERATIONS: usize = 4096;

/// Client metadata key holding the session's current schema, so Parse
/// resolves names where the session would.
const SCHEMA_METADATA: &str = "tessera.current_schema";

static NEXT_PREPARED_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Stores a user's SCRAM verifier material in meta.
pub async fn create_user(store: &meta::MetaStore, user: &str, password: &str) -> Result<()> {
    let salt: [u8; 16] = rand::random();
    let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
    store
        .put_user(user, &salt, &salted, SCRAM_ITERATIONS as u32)
        .await
}

pub fn to_pg_error(e: &Error) -> PgWireError {
    PgWireError::UserError(Box::new(error_info(e)))
}

struct MetaAuth {
    router: Arc<Router>,
}

impl std::fmt::Debug for MetaAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MetaAuth")
    }
}

#[async_trait]
impl AuthSource for MetaAuth {
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        let user = login.user().unwrap_or_default();
        let creds = cached_credentials(&self.router, user)
            .await
            .map_err(|e| to_pg_error(&e))?;
        match creds {
            Some((salt, salted, _)) => Ok(Password::new(Some(salt), salted)),
            None => Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "FATAL".into(),
                "28P01".into(),
                format!("password authentication failed for user \"{user}\""),
            )))),
        }
    }
}

type Credentials = Option<(Vec<u8>, Vec<u8>, u32)>;

/// Logins' SCRAM credentials by user, with when meta was last asked.
static CREDENTIALS: std::sync::LazyLock<
    parking_lot::Mutex<HashMap<String, (Credentials, std::time::Instant)>>,
> = std::sync::LazyLock::new(Default::default);

/// How long an answer of meta about a user (also "no such user") is
/// reused: a flood of login attempts costs meta one query per user and
/// interval, not one per attempt.
const CREDENTIALS_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// A user's credentials: from the cache while fresh, else from meta; when
/// meta cannot be reached, an entry up to `shard_router::META_GRACE` old
/// still serves, so logins keep working through a short meta outage.
async fn cached_credentials(router: &Router, user: &str) -> Result<Credentials> {
    let cached = CREDENTIALS.lock().get(user).cloned();
    if let Some((c, at)) = &cached {
        if at.elapsed() < CREDENTIALS_TTL {
            return Ok(c.clone());
        }
    }
    match router.meta.user_credentials(user).await {
        Ok(c) => {
            let mut m = CREDENTIALS.lock();
            if m.len() > 10_000 {
                m.clear();
            }
            m.insert(user.to_string(), (c.clone(), std::time::Instant::now()));
            Ok(c)
        }
        Err(e) => match cached {
            Some((c, at)) if at.elapsed() < shard_router::META_GRACE => Ok(c),
            _ => Err(e),
        },
    }
}

/// A prepared statement: its SQL and its plan (re-planned when the catalog
/// version moves).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Unique per prepared statement (0: one-shot simple query).
    pub id: u64,
    /// The schema unqualified names were resolved in.
    pub schema: String,
    pub sql: String,
    pub stmt: Statement,
    pub plan: Plan,
    pub client_types: Vec<Option<Type>>,
}

fn parse_error(sql: &str, e: ParserError) -> Error {
    let msg = e.to_string();
    // "... at Line: 1, Column: 8" -> character position in the query.
    let position = msg.rsplit("Line: ").next().and_then(|rest| {
        let mut it = rest.split(", Column: ");
        let line: usize = it.next()?.trim().parse().ok()?;
        let col: usize = it.next()?.trim().parse().ok()?;
        let before: usize = sql
            .lines()
            .take(line.saturating_sub(1))
            .map(|l| l.chars().count() + 1)
            .sum();
        Some(before + col)
    });
    let message = msg
        .trim_start_matches("sql parser error: ")
        .split(" at Line:")
        .next()
        .unwrap_or(&msg)
        .to_string();
    Error::Syntax {
        message: format!("syntax error: {message}"),
        position,
    }
}

/// Parses a client's statement text, refusing text or expression trees
/// over the limits of [`crate::limits`] before anything else walks them.
pub fn parse_sql(sql: &str) -> Result<Vec<Statement>> {
    crate::limits::check_size(sql)?;
    parse_checked(sql)
}

fn parse_checked(sql: &str) -> Result<Vec<Statement>> {
    let stmts = crate::dialect::parse(sql).map_err(|e| parse_error(sql, e))?;
    let mut out = Vec::with_capacity(stmts.len());
    let mut err = None;
    for s in stmts {
        if err.is_some() {
            crate::limits::dismantle(s);
            continue;
        }
        match crate::limits::check_statement(s) {
            Ok(s) => out.push(s),
            Err(e) => err = Some(e),
        }
    }
    match err {
        Some(e) => {
            out.into_iter().for_each(crate::limits::dismantle);
            Err(e)
        }
        None => Ok(out),
    }
}

/// A planning-only DataFusion context (autocommit access, no lock), used to
/// describe statements at prepare time.
fn describe_context(router: &Arc<Router>, schema: &str) -> Result<SessionContext> {
    df::context_for(
        router,
        Arc::new(parking_lot::RwLock::new(
            shard_router::txn::ShardAccess::Autocommit,
        )),
        schema.to_string(),
        "tessera",
        "tessera",
        None,
        Default::default(),
    )
}

/// Plans a statement against the current catalog, including the describe
/// step of DataFusion statements.
pub async fn plan_statement(
    router: &Arc<Router>,
    schema: &str,
    stmt: &Statement,
    client_types: &[Option<Type>],
) -> Result<Plan> {
    plan_statement_sized(router, schema, stmt, client_types, false).await
}

/// [`plan_statement`] for a statement known to be `heavy` (long text):
/// planned with [`crate::cpu_bound`].
pub async fn plan_statement_sized(
    router: &Arc<Router>,
    schema: &str,
    stmt: &Statement,
    client_types: &[Option<Type>],
    heavy: bool,
) -> Result<Plan> {
    let catalog = router.ensure_fresh().await?;
    let planner = Planner {
        catalog: &catalog,
        schema,
        client_types,
    };
    let mut plan = match crate::cpu_bound(heavy, || planner.plan(stmt)) {
        // A table created elsewhere a moment ago: ask meta before failing.
        Err(Error::TableNotFound { .. }) => {
            let catalog = router.check_version().await?;
            Planner {
                catalog: &catalog,
                schema,
                client_types,
            }
            .plan(stmt)?
        }
        other => other?,
    };
    if let PlanKind::DataFusion(s, _) = &plan.kind {
        let ctx = describe_context(router, schema)?;
        let lp = match df::logical_plan(&ctx, s).await {
            Err(Error::TableNotFound { .. }) => {
                router.check_version().await?;
                let ctx = describe_context(router, schema)?;
                df::logical_plan(&ctx, s).await?
            }
            other => other?,
        };
        let (ptypes, fields) = df::describe(&lp)?;
        plan.param_types = ptypes
            .iter()
            .enumerate()
            .map(|(i, t)| {
                client_types
                    .get(i)
                    .cloned()
                    .flatten()
                    .filter(|t| *t != Type::UNKNOWN)
                    .or_else(|| t.as_ref().map(crate::pgtypes::arrow_to_pg))
                    .unwrap_or(Type::TEXT)
            })
            .collect();
        plan.fields = fields;
        if let Some(names) = pg_column_names(s) {
            if names.len() == plan.fields.len() {
                for (f, n) in plan.fields.iter_mut().zip(names) {
                    f.0 = n;
                }
            }
        }
    }
    Ok(plan)
}

/// Column names as PostgreSQL derives them for a SELECT list (DataFusion
/// names `count(*)` and `max(t.v)`, PostgreSQL `count` and `max`).
fn pg_column_names(stmt: &Statement) -> Option<Vec<String>> {
    use datafusion::sql::sqlparser::ast::{Expr, SelectItem, SetExpr};
    let Statement::Query(q) = stmt else {
        return None;
    };
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    fn name_of(e: &Expr) -> String {
        match e {
            Expr::Identifier(i) => shard_router::route::normalize_ident(i),
            Expr::CompoundIdentifier(p) => p
                .last()
                .map(shard_router::route::normalize_ident)
                .unwrap_or_default(),
            Expr::Function(f) => crate::plan::object_parts(&f.name)
                .last()
                .cloned()
                .unwrap_or_default(),
            Expr::Cast { expr, .. } | Expr::Nested(expr) => name_of(expr),
            _ => "?column?".to_string(),
        }
    }
    sel.projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => Some(name_of(e)),
            SelectItem::ExprWithAlias { alias, .. } => {
                Some(shard_router::route::normalize_ident(alias))
            }
            _ => None,
        })
        .collect()
}

pub struct TesseraParser {
    router: Arc<Router>,
}

#[async_trait]
impl QueryParser for TesseraParser {
    type Statement = Arc<Prepared>;

    async fn parse_sql<C>(
        &self,
        client: &C,
        sql: &str,
        types: &[Option<Type>],
    ) -> PgWireResult<Option<Arc<Prepared>>>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let mut stmts = parse_sql(sql).map_err(|e| to_pg_error(&e))?;
        if stmts.len() > 1 {
            return Err(to_pg_error(&Error::Syntax {
                message: "cannot insert multiple commands into a prepared statement".into(),
                position: None,
            }));
        }
        let Some(stmt) = stmts.pop() else {
            return Ok(None);
        };
        // The session's schema, as the handlers last recorded it.
        let schema = client
            .metadata()
            .get(SCHEMA_METADATA)
            .cloned()
            .unwrap_or_else(|| "public".to_string());
        let plan = plan_statement(&self.router, &schema, &stmt, types)
            .await
            .map_err(|e| to_pg_error(&e))?;
        Ok(Some(Arc::new(Prepared {
            id: NEXT_PREPARED_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            schema,
            sql: sql.to_string(),
            stmt,
            plan,
            client_types: types.to_vec(),
        })))
    }

    fn get_parameter_types(&self, stmt: &Arc<Prepared>) -> PgWireResult<Vec<Type>> {
        Ok(stmt.plan.param_types.clone())
    }

    fn get_result_schema(
        &self,
        stmt: &Arc<Prepared>,
        format: Option<&Format>,
    ) -> PgWireResult<Vec<FieldInfo>> {
        Ok(fields_of(&stmt.plan.fields, format))
    }
}

/// The format of result column `i` (pgwire's `format_for` indexes the
/// client's code list and panics past its end).
fn column_format(f: &Format, i: usize) -> FieldFormat {
    match f {
        Format::Individual(codes) => codes
            .get(i)
            .map_or(FieldFormat::Text, |c| FieldFormat::from(*c)),
        other => other.format_for(i),
    }
}

fn fields_of(fields: &[(String, Type)], format: Option<&Format>) -> Vec<FieldInfo> {
    fields
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            field(
                n,
                t.clone(),
                format.map_or(FieldFormat::Text, |f| column_format(f, i)),
            )
        })
        .collect()
}

/// Per-connection handlers: they own the session.
pub struct ConnHandlers {
    router: Arc<Router>,
    session: tokio::sync::Mutex<Option<Session>>,
    parser: Arc<TesseraParser>,
    manager: Arc<ConnectionManager>,
}

impl ConnHandlers {
    async fn session<'a, C: ClientInfo>(
        &'a self,
        client: &C,
    ) -> tokio::sync::MutexGuard<'a, Option<Session>> {
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            let md = client.metadata();
            let user = md.get("user").cloned().unwrap_or_default();
            let db = md.get("database").cloned().unwrap_or_else(|| user.clone());
            let superuser = crate::privileges::is_superuser(&self.router.catalog(), &user);
            let mut s = Session::new(self.router.clone(), db, user);
            s.settings.insert(
                "is_superuser".into(),
                if superuser { "on" } else { "off" }.into(),
            );
            s.pid = client.pid_and_secret_key().0;
            if let Some(app) = md.get("application_name") {
                s.settings.insert("application_name".into(), app.clone());
            }
            *guard = Some(s);
        }
        guard
    }

    /// Plans (or reuses the cached plan of) and runs a DataFusion statement
    /// in the session's context.
    async fn run_datafusion(
        &self,
        session: &mut Session,
        prepared_id: u64,
        stmt: &Statement,
        lock: Option<&'static str>,
        params: &[Datum],
    ) -> Result<Vec<datafusion::arrow::array::RecordBatch>> {
        if session.failed {
            return Err(Error::InFailedTransaction);
        }
        let armed = session.arm_statement();
        let res = self
            .run_datafusion_armed(session, prepared_id, stmt, lock, params)
            .await;
        if armed && res.is_ok() {
            session.failed = false;
        }
        res
    }

    async fn run_datafusion_armed(
        &self,
        session: &mut Session,
        prepared_id: u64,
        stmt: &Statement,
        lock: Option<&'static str>,
        params: &[Datum],
    ) -> Result<Vec<datafusion::arrow::array::RecordBatch>> {
        *session.access_cell.write() = session.access();
        let version = self.router.catalog().version;
        let schema = session.current_schema();
        let reuse = matches!(&session.df_ctx, Some((v, s, l, _)) if *v == version && *s == schema && *l == lock);
        if !reuse {
            session.df_ctx = Some((version, schema, lock, df::context(session, lock)?));
            session.df_plans.clear();
        }
        let ctx = match &session.df_ctx {
            Some((.., c)) => c.clone(),
            None => return Err(Error::internal("no DataFusion context")),
        };
        let cached = session.df_plans.get(&prepared_id).map(|(_, lp)| lp.clone());
        let lp = match cached {
            Some(lp) => Ok(lp),
            None => df::logical_plan(&ctx, stmt).await,
        };
        if let (Ok(lp), true) = (&lp, prepared_id != 0) {
            if session.df_plans.len() > 1000 {
                session.df_plans.clear();
            }
            session.df_plans.insert(prepared_id, (version, lp.clone()));
        }
        let res = match lp {
            Ok(lp) => df::run(&ctx, lp, params, &session.scan_log).await,
            Err(e) => Err(e),
        };
        if res.is_err() && session.in_txn() {
            session.failed = true;
        }
        res
    }

    /// The cached fast-path plan of a simple-protocol statement's shape and
    /// its literals as parameters, if the shape has one (see `literals`).
    async fn simple_shape(
        &self,
        session: &mut Session,
        schema: &str,
        stmt: &Statement,
    ) -> Option<(Arc<Prepared>, Vec<Datum>)> {
        if session.failed {
            return None;
        }
        let (shape, lits) = crate::literals::parameterize(stmt)?;
        let key = format!("{schema}\u{0}{shape}");
        let version = self.router.catalog().version;
        let prepared = match session.simple_plans.get(&key) {
            Some((v, p)) if *v == version => p.clone(),
            _ => {
                let plan = plan_statement(&self.router, schema, &shape, &[])
                    .await
                    .ok()
                    .filter(|p| {
                        matches!(
                            p.kind,
                            PlanKind::FastSelect(_) | PlanKind::Write(_) | PlanKind::Insert(_)
                        ) && p.catalog_version == version
                    });
                let prepared = plan.map(|plan| {
                    Arc::new(Prepared {
                        id: 0,
                        schema: schema.to_string(),
                        sql: String::new(),
                        stmt: shape,
                        plan,
                        client_types: vec![],
                    })
                });
                if session.simple_plans.len() >= crate::session::SIMPLE_PLANS_MAX {
                    session.simple_plans.clear();
                }
                session
                    .simple_plans
                    .insert(key, (version, prepared.clone()));
                prepared
            }
        }?;
        let params = crate::literals::bind(&lits, &prepared.plan.param_types)?;
        Some((prepared, params))
    }

    /// Executes one planned statement and shapes the wire response.
    /// Runs one statement under the session's `statement_timeout` (not
    /// COMMIT/ROLLBACK: a transaction's end always runs to its end).
    async fn run(
        &self,
        session: &mut Session,
        prepared: &Prepared,
        params: &[Datum],
        format: &Format,
    ) -> Result<Response> {
        if session.terminated {
            return Err(Error::TxnState {
                state: common::SqlState::IDLE_IN_TRANSACTION_TIMEOUT,
                message: "terminating connection due to idle-in-transaction timeout".into(),
            });
        }
        session.touch();
        // Superusers (the common case) skip the walk and the schema lookup.
        let catalog = self.router.catalog();
        if !crate::privileges::is_superuser(&catalog, &session.user) {
            crate::privileges::check(
                &catalog,
                &session.user,
                &prepared.stmt,
                &session.current_schema(),
            )?;
        }
        let limit = session.statement_timeout();
        let res = match limit {
            Some(d) if !matches!(prepared.plan.kind, PlanKind::Commit | PlanKind::Rollback) => {
                match tokio::time::timeout(d, self.run_inner(session, prepared, params, format))
                    .await
                {
                    Ok(r) => r,
                    Err(_) => {
                        // Dropped mid-way: the statement's transaction, if
                        // any, is failed (`Session::arm_statement`).
                        Err(Error::TxnState {
                            state: common::SqlState::QUERY_CANCELED,
                            message: "canceling statement due to statement timeout".into(),
                        })
                    }
                }
            }
            _ => self.run_inner(session, prepared, params, format).await,
        };
        session.touch();
        res
    }

    async fn run_inner(
        &self,
        session: &mut Session,
        prepared: &Prepared,
        params: &[Datum],
        format: &Format,
    ) -> Result<Response> {
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
                | PlanKind::Show { .. }
        ) {
            let fresh = self.router.ensure_fresh().await?;
            let schema = session.current_schema();
            if fresh.version != plan.catalog_version || schema != prepared.schema {
                replanned = plan_statement(
                    &self.router,
                    &schema,
                    &prepared.stmt,
                    &prepared.client_types,
                )
                .await?;
                plan = &replanned;
            }
        }
        if let PlanKind::CopyOut(stmt, fmt) = &plan.kind {
            let batches = self
                .run_datafusion(session, prepared.id, stmt, None, params)
                .await?;
            let ncols = batches.first().map(|b| b.num_columns()).unwrap_or(0);
            let mut chunks = vec![];
            for b in &batches {
                for r in 0..b.num_rows() {
                    let fields: Vec<Option<String>> = b
                        .columns()
                        .iter()
                        .map(|c| crate::pgtypes::arrow_text(c, r))
                        .collect();
                    chunks.push(Ok(pgwire::messages::copy::CopyData::new(
                        bytes::Bytes::from(fmt.render(&fields)),
                    )));
                }
            }
            return Ok(Response::CopyOut(pgwire::api::results::CopyResponse::new(
                0,
                ncols,
                stream::iter(chunks),
            )));
        }
        if let PlanKind::DataFusion(stmt, lock) = &plan.kind {
            let batches = self
                .run_datafusion(session, prepared.id, stmt, *lock, params)
                .await?;
            let fields = Arc::new(fields_of(&plan.fields, Some(format)));
            let mut rows = vec![];
            let mut enc = DataRowEncoder::new(fields.clone());
            for b in &batches {
                if b.num_columns() != fields.len() {
                    return Err(Error::internal(
                        "result width does not match its description",
                    ));
                }
                for r in 0..b.num_rows() {
                    for (c, f) in b.columns().iter().zip(fields.iter()) {
                        encode_arrow(&mut enc, c, r, f).map_err(Error::internal)?;
                    }
                    rows.push(Ok(enc.take_row()));
                }
            }
            let mut q = QueryResponse::new(fields, stream::iter(rows));
            q.set_command_tag(plan.tag);
            return Ok(Response::Query(q));
        }
        let out = session.execute(plan, params).await?;
        Ok(match out {
            Output::Command { tag, rows } => {
                let mut t = Tag::new(&tag);
                if let Some(n) = rows {
                    t = t.with_rows(n);
                }
                Response::Execution(t)
            }
            Output::TxnStart => Response::TransactionStart(Tag::new("BEGIN")),
            Output::TxnEnd(tag) => Response::TransactionEnd(Tag::new(tag)),
            Output::Rows(data) => {
                let fields = Arc::new(fields_of(&plan.fields, Some(format)));
                let mut enc = DataRowEncoder::new(fields.clone());
                let mut rows = Vec::with_capacity(data.len());
                for r in &data {
                    for (d, f) in r.iter().zip(fields.iter()) {
                        encode_datum(&mut enc, d, f).map_err(Error::internal)?;
                    }
                    rows.push(Ok(enc.take_row()));
                }
                let mut q = QueryResponse::new(fields, stream::iter(rows));
                q.set_command_tag(if plan.tag == "INSERT" {
                    "INSERT 0"
                } else {
                    plan.tag
                });
                Response::Query(q)
            }
            Output::CopyIn(n) => Response::CopyIn(pgwire::api::results::CopyResponse::new(
                0,
                n,
                stream::empty(),
            )),
        })
    }
}

#[async_trait]
impl SimpleQueryHandler for ConnHandlers {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let mut guard = self.session(client).await;
        let Some(session) = guard.as_mut() else {
            return Err(PgWireError::ApiError("no session".into()));
        };
        let heavy = query.len() > crate::HEAVY_STATEMENT_BYTES;
        let _permit = if heavy {
            crate::heavy_permit().await
        } else {
            None
        };
        let stmts = match crate::cpu_bound(heavy, || parse_sql(query)) {
            Ok(s) => s,
            Err(e) => {
                if session.in_txn() {
                    session.failed = true;
                }
                return Ok(vec![Response::Error(Box::new(error_info(&e)))]);
            }
        };
        let mut out = vec![];
        for stmt in stmts {
            let schema = session.current_schema();
            let res = async {
                if let Some((prepared, params)) = self.simple_shape(session, &schema, &stmt).await {
                    return self
                        .run(session, &prepared, &params, &Format::UnifiedText)
                        .await;
                }
                if session.failed {
                    let plan = Planner {
                        catalog: &session.router.catalog(),
                        schema: &schema,
                        client_types: &[],
                    }
                    .plan(&stmt)?;
                    if !plan.kind.allowed_when_failed() {
                        return Err(Error::InFailedTransaction);
                    }
                }
                let plan = plan_statement_sized(&self.router, &schema, &stmt, &[], heavy).await?;
                let prepared = Prepared {
                    id: 0,
                    schema: schema.clone(),
                    sql: String::new(),
                    stmt,
                    plan,
                    client_types: vec![],
                };
                self.run(session, &prepared, &[], &Format::UnifiedText)
                    .await
            }
            .await;
            match res {
                Ok(r) => out.push(r),
                Err(e) => {
                    if session.in_txn() {
                        session.failed = true;
                    }
                    out.push(Response::Error(Box::new(error_info(&e))));
                    break;
                }
            }
        }
        client
            .metadata_mut()
            .insert(SCHEMA_METADATA.to_string(), session.current_schema());
        Ok(out)
    }
}

/// The ErrorResponse for `e`. Errors that are the system's, not the
/// statement's (connection failures, serialization failures and deadlocks,
/// resource limits, internal errors) are also logged, as PostgreSQL does.
fn error_info(e: &Error) -> ErrorInfo {
    let state = e.sqlstate().code();
    if ["08", "40", "53", "55", "57", "58", "XX"].contains(&&state[..2]) {
        tracing::warn!("statement failed: {state} {e}");
    } else {
        tracing::debug!("statement failed: {state} {e}");
    }
    // Errors that end the session, as PostgreSQL's FATAL ones (pgwire
    // closes the connection after sending them).
    let severity = if state == "25P03" { "FATAL" } else { "ERROR" };
    let mut info = ErrorInfo::new(
        severity.to_string(),
        e.sqlstate().code().to_string(),
        e.to_string(),
    );
    info.position = e.position().map(|p| p.to_string());
    info
}

#[async_trait]
impl ExtendedQueryHandler for ConnHandlers {
    type Statement = Arc<Prepared>;
    type QueryParser = TesseraParser;

    fn query_parser(&self) -> Arc<TesseraParser> {
        self.parser.clone()
    }

    // Parse, Bind, Describe and Execute answers are buffered and flushed once, at
    // Sync: a sysbench execution (Bind + Describe + Execute + Sync in one
    // packet) gets one write instead of three.

    async fn on_parse<C>(&self, client: &mut C, message: Parse) -> PgWireResult<()>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let name = message
            .name
            .clone()
            .unwrap_or_else(|| DEFAULT_NAME.to_owned());
        let parsed = StoredStatement::parse(client, &message, self.query_parser()).await;
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) => {
                // As in PostgreSQL, an error at Parse inside a transaction
                // block fails the transaction too.
                if let Some(session) = self.session.lock().await.as_mut() {
                    if session.in_txn() {
                        session.failed = true;
                    }
                }
                return Err(e);
            }
        };
        match parsed {
            Some(stmt) => client.portal_store().put_statement(Arc::new(stmt)),
            None => client.portal_store().put_empty_statement(&name),
        }
        client
            .feed(PgWireBackendMessage::ParseComplete(ParseComplete::new()))
            .await?;
        Ok(())
    }

    async fn on_bind<C>(&self, client: &mut C, message: Bind) -> PgWireResult<()>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let stmt_name = message.statement_name.as_deref().unwrap_or(DEFAULT_NAME);
        match client.portal_store().get_statement(stmt_name) {
            Some(Entry::Value(stmt)) => {
                if message.parameters.len() != stmt.statement.plan.param_types.len() {
                    return Err(to_pg_error(&Error::TxnState {
                        state: common::SqlState::PROTOCOL_VIOLATION,
                        message: format!(
                            "bind message supplies {} parameters, but prepared statement requires {}",
                            message.parameters.len(),
                            stmt.statement.plan.param_types.len()
                        ),
                    }));
                }
                // PostgreSQL's rule: zero, one, or one format code per
                // parameter / result column. pgwire indexes the codes by
                // position and would panic on a short list.
                let n_params = message.parameters.len();
                let n_codes = message.parameter_format_codes.len();
                let n_cols = stmt.statement.plan.fields.len();
                let n_rcodes = message.result_column_format_codes.len();
                if n_codes > 1 && n_codes != n_params {
                    return Err(to_pg_error(&Error::TxnState {
                        state: common::SqlState::PROTOCOL_VIOLATION,
                        message: format!(
                            "bind message has {n_codes} parameter formats but {n_params} parameters"
                        ),
                    }));
                }
                if n_rcodes > 1 && n_cols > 0 && n_rcodes != n_cols {
                    return Err(to_pg_error(&Error::TxnState {
                        state: common::SqlState::PROTOCOL_VIOLATION,
                        message: format!(
                            "bind message has {n_rcodes} result formats but query has {n_cols} columns"
                        ),
                    }));
                }
                let portal = Portal::try_new(&message, stmt)?;
                client.portal_store().put_portal(Arc::new(portal));
            }
            Some(Entry::Empty) => {
                let portal_name = message.portal_name.as_deref().unwrap_or(DEFAULT_NAME);
                client.portal_store().put_empty_portal(portal_name);
            }
            None => return Err(PgWireError::StatementNotFound(stmt_name.to_owned())),
        }
        client
            .feed(PgWireBackendMessage::BindComplete(BindComplete::new()))
            .await?;
        Ok(())
    }

    async fn on_describe<C>(&self, client: &mut C, message: Describe) -> PgWireResult<()>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let name = message.name.as_deref().unwrap_or(DEFAULT_NAME);
        let (params, fields) = match message.target_type {
            TARGET_TYPE_BYTE_STATEMENT => match client.portal_store().get_statement(name) {
                Some(Entry::Value(s)) => (
                    Some(s.statement.plan.param_types.clone()),
                    fields_of(&s.statement.plan.fields, None),
                ),
                Some(Entry::Empty) => (Some(vec![]), vec![]),
                None => return Err(PgWireError::StatementNotFound(name.to_owned())),
            },
            TARGET_TYPE_BYTE_PORTAL => match client.portal_store().get_portal(name) {
                Some(Entry::Value(p)) => (
                    None,
                    fields_of(
                        &p.statement.statement.plan.fields,
                        Some(&p.result_column_format),
                    ),
                ),
                Some(Entry::Empty) => (None, vec![]),
                None => return Err(PgWireError::PortalNotFound(name.to_owned())),
            },
            other => return Err(PgWireError::InvalidTargetType(other)),
        };
        if let Some(p) = params {
            client
                .feed(PgWireBackendMessage::ParameterDescription(
                    ParameterDescription::new(p.iter().map(|t| t.oid()).collect()),
                ))
                .await?;
        }
        if fields.is_empty() {
            client
                .feed(PgWireBackendMessage::NoData(NoData::new()))
                .await?;
        } else {
            client
                .feed(PgWireBackendMessage::RowDescription(RowDescription::new(
                    fields.iter().map(Into::into).collect(),
                )))
                .await?;
        }
        Ok(())
    }

    async fn on_execute<C>(&self, client: &mut C, message: Execute) -> PgWireResult<()>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        // Row limits (portal suspension) and re-executed portals take
        // pgwire's general path.
        let name = message.name.as_deref().unwrap_or(DEFAULT_NAME);
        let portal = match client.portal_store().get_portal(name) {
            Some(Entry::Value(p))
                if message.max_rows == 0
                    && !matches!(
                        p.statement.statement.plan.kind,
                        PlanKind::CopyIn(_) | PlanKind::CopyOut(..)
                    ) =>
            {
                p
            }
            _ => return self._on_execute(client, message).await,
        };
        if !matches!(*portal.state().lock().await, PortalExecutionState::Initial)
            || !matches!(client.state(), PgWireConnectionState::ReadyForQuery)
        {
            return self._on_execute(client, message).await;
        }
        let mut status = client.transaction_status();
        client.set_state(PgWireConnectionState::QueryInProgress);
        let handle = client.session_extensions().get::<Arc<ConnectionHandle>>();
        let resp = match handle {
            Some(h) => {
                let cancel = h.start_query().await;
                match futures::future::select(
                    Box::pin(ExtendedQueryHandler::do_query(self, client, &portal, 0)),
                    cancel,
                )
                .await
                {
                    futures::future::Either::Left((r, _)) => r,
                    futures::future::Either::Right(_) => Err(PgWireError::QueryCanceled),
                }
            }
            None => ExtendedQueryHandler::do_query(self, client, &portal, 0).await,
        };
        let resp = match resp {
            Ok(r) => r,
            Err(e) => {
                client.set_state(PgWireConnectionState::ReadyForQuery);
                return Err(e);
            }
        };
        match resp {
            Response::Query(mut q) => {
                let tag = q.command_tag().to_string();
                let mut n = 0;
                while let Some(row) = q.data_rows().next().await {
                    client.feed(PgWireBackendMessage::DataRow(row?)).await?;
                    n += 1;
                }
                client
                    .feed(PgWireBackendMessage::CommandComplete(
                        Tag::new(&tag).with_rows(n).into(),
                    ))
                    .await?;
            }
            Response::Execution(tag) => {
                client
                    .feed(PgWireBackendMessage::CommandComplete(tag.into()))
                    .await?;
            }
            Response::TransactionStart(tag) => {
                client
                    .feed(PgWireBackendMessage::CommandComplete(tag.into()))
                    .await?;
                status = status.to_in_transaction_state();
            }
            Response::TransactionEnd(tag) => {
                client
                    .feed(PgWireBackendMessage::CommandComplete(tag.into()))
                    .await?;
                status = status.to_idle_state();
                client.portal_store().rm_portal(DEFAULT_NAME);
            }
            Response::EmptyQuery => {
                client
                    .feed(PgWireBackendMessage::EmptyQueryResponse(
                        EmptyQueryResponse::new(),
                    ))
                    .await?;
            }
            Response::Error(e) => {
                client
                    .feed(PgWireBackendMessage::ErrorResponse((*e).into()))
                    .await?;
                status = status.to_error_state();
            }
            Response::CopyIn(_) | Response::CopyOut(_) | Response::CopyBoth(_) => {
                client.set_state(PgWireConnectionState::ReadyForQuery);
                return Err(to_pg_error(&Error::unsupported(
                    "COPY over the extended protocol",
                )));
            }
        }
        client.set_state(PgWireConnectionState::ReadyForQuery);
        client.set_transaction_status(status);
        Ok(())
    }

    async fn do_describe_statement<C>(
        &self,
        _client: &mut C,
        target: &StoredStatement<Arc<Prepared>>,
    ) -> PgWireResult<DescribeStatementResponse>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let p = &target.statement;
        Ok(DescribeStatementResponse::new(
            p.plan.param_types.clone(),
            fields_of(&p.plan.fields, None),
        ))
    }

    async fn do_describe_portal<C>(
        &self,
        _client: &mut C,
        target: &Portal<Arc<Prepared>>,
    ) -> PgWireResult<DescribePortalResponse>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let p = &target.statement.statement;
        Ok(DescribePortalResponse::new(fields_of(
            &p.plan.fields,
            Some(&target.result_column_format),
        )))
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<Arc<Prepared>>,
        _max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo
            + ClientPortalStore
            + futures::Sink<PgWireBackendMessage>
            + Unpin
            + Send
            + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let prepared = portal.statement.statement.clone();
        let mut guard = self.session(client).await;
        let Some(session) = guard.as_mut() else {
            return Err(PgWireError::ApiError("no session".into()));
        };
        let types = &prepared.plan.param_types;
        let mut params = Vec::with_capacity(portal.parameter_len());
        for i in 0..portal.parameter_len() {
            let ty = types.get(i).cloned().unwrap_or(Type::TEXT);
            match decode_param(portal, i, &ty) {
                Ok(d) => params.push(d),
                Err(e) => return Err(to_pg_error(&e)),
            }
        }
        let res = self
            .run(session, &prepared, &params, &portal.result_column_format)
            .await;
        if matches!(prepared.plan.kind, PlanKind::Set { .. }) {
            client
                .metadata_mut()
                .insert(SCHEMA_METADATA.to_string(), session.current_schema());
        }
        match res {
            Ok(r) => Ok(r),
            Err(e) => {
                if session.in_txn() {
                    session.failed = true;
                }
                Err(to_pg_error(&e))
            }
        }
    }
}

#[async_trait]
impl pgwire::api::copy::CopyHandler for ConnHandlers {
    async fn on_copy_data<C>(
        &self,
        _client: &mut C,
        data: pgwire::messages::copy::CopyData,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + futures::Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let mut guard = self.session.lock().await;
        if let Some(session) = guard.as_mut() {
            if let Some(c) = session.copy_in.as_mut() {
                c.data(&self.router, &data.data).await;
            }
        }
        Ok(())
    }

    async fn on_copy_done<C>(
        &self,
        client: &mut C,
        _done: pgwire::messages::copy::CopyDone,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + futures::Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let mut guard = self.session.lock().await;
        let Some(session) = guard.as_mut() else {
            return Err(PgWireError::ApiError("no session".into()));
        };
        let Some(copy) = session.copy_in.take() else {
            return Err(to_pg_error(&Error::TxnState {
                state: common::SqlState::PROTOCOL_VIOLATION,
                message: "CopyDone without COPY in progress".into(),
            }));
        };
        match copy.finish(&self.router).await {
            Ok(n) => {
                client
                    .send(PgWireBackendMessage::CommandComplete(
                        Tag::new("COPY").with_rows(n as usize).into(),
                    ))
                    .await?;
                Ok(())
            }
            Err(e) => {
                if session.in_txn() {
                    session.failed = true;
                }
                Err(to_pg_error(&e))
            }
        }
    }

    async fn on_copy_fail<C>(
        &self,
        _client: &mut C,
        fail: pgwire::messages::copy::CopyFail,
    ) -> PgWireError
    where
        C: ClientInfo + futures::Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
    {
        let mut guard = self.session.lock().await;
        if let Some(session) = guard.as_mut() {
            if let Some(copy) = session.copy_in.take() {
                copy.abort(&self.router).await;
            }
            if session.in_txn() {
                session.failed = true;
            }
        }
        to_pg_error(&Error::TxnState {
            state: common::SqlState::QUERY_CANCELED,
            message: format!("COPY from stdin failed: {}", fail.message),
        })
    }
}

pub struct Factory {
    handlers: Arc<ConnHandlers>,
    router: Arc<Router>,
}

impl PgWireServerHandlers for Factory {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.handlers.clone()
    }
    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.handlers.clone()
    }
    fn startup_handler(&self) -> Arc<impl pgwire::api::auth::StartupHandler> {
        let mut scram = ScramAuth::new(Arc::new(MetaAuth {
            router: self.router.clone(),
        }));
        scram.set_iterations(SCRAM_ITERATIONS);
        let mut params = DefaultServerParameterProvider::default();
        params.server_version = crate::SERVER_VERSION.to_string();
        params.date_style = "ISO, MDY".to_string();
        params.time_zone = "UTC".to_string();
        Arc::new(
            SASLAuthStartupHandler::new(Arc::new(params))
                .with_scram(scram)
                .with_connection_manager(self.handlers.manager.clone()),
        )
    }
    fn copy_handler(&self) -> Arc<impl pgwire::api::copy::CopyHandler> {
        self.handlers.clone()
    }
    fn cancel_handler(&self) -> Arc<impl pgwire::api::cancel::CancelHandler> {
        Arc::new(crate::cancel::ShieldedCancelHandler {
            manager: self.handlers.manager.clone(),
        })
    }
}

/// Accepts connections forever.
pub async fn serve(router: Arc<Router>, listen: &str) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    tracing::info!("listening on {listen}");
    let parser = Arc::new(TesseraParser {
        router: router.clone(),
    });
    let manager = Arc::new(ConnectionManager::new());
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut last_warning = std::time::Instant::now() - std::time::Duration::from_secs(60);
    loop {
        let (mut socket, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of
                // spinning (and logging) in a tight loop.
                if last_warning.elapsed() > std::time::Duration::from_secs(10) {
                    tracing::warn!("accept failed: {e}");
                    last_warning = std::time::Instant::now();
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = socket.set_nodelay(true);
        let max = crate::MAX_CONNECTIONS.load(std::sync::atomic::Ordering::Relaxed);
        if open.fetch_add(1, std::sync::atomic::Ordering::AcqRel) >= max {
            open.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let _ = socket
                    .write_all(&fatal_error("53300", "sorry, too many clients already"))
                    .await;
                let _ = socket.shutdown().await;
            });
            continue;
        }
        let handlers = Arc::new(ConnHandlers {
            router: router.clone(),
            session: tokio::sync::Mutex::new(None),
            parser: parser.clone(),
            manager: manager.clone(),
        });
        tokio::spawn(idle_watchdog(Arc::downgrade(&handlers)));
        let factory = Arc::new(Factory {
            handlers,
            router: router.clone(),
        });
        let open = open.clone();
        tokio::spawn(async move {
            if let Err(e) = pgwire::tokio::process_socket(socket, None, factory).await {
                tracing::debug!("connection ended: {e}");
            }
            open.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        });
    }
}

/// `idle_in_transaction_session_timeout`: a session idle inside a
/// transaction block for longer has its transaction rolled back at once
/// (freeing its shard connections and row locks for everyone else) and is
/// terminated: its next statement gets FATAL 25P03 and the connection
/// closes, as in PostgreSQL.
async fn idle_watchdog(handlers: std::sync::Weak<ConnHandlers>) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let Some(h) = handlers.upgrade() else {
            return;
        };
        // Locked: a statement is running, so the session is not idle.
        let Ok(mut guard) = h.session.try_lock() else {
            continue;
        };
        let Some(s) = guard.as_mut() else {
            continue;
        };
        let Some(limit) = s.idle_in_transaction_timeout() else {
            continue;
        };
        if s.txn.is_some() && s.copy_in.is_none() && s.idle_for() > limit {
            if let Some(t) = s.txn.take() {
                let router = h.router.clone();
                tokio::spawn(async move {
                    let _ = t.finish_detached(router, false).await;
                });
            }
            s.failed = false;
            s.terminated = true;
        }
    }
}

/// A FATAL ErrorResponse as raw bytes, for refusing a connection before
/// any protocol handling (PostgreSQL answers an over-limit connection's
/// startup this way).
fn fatal_error(code: &str, message: &str) -> Vec<u8> {
    let mut body = vec![];
    for (t, v) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', code),
        (b'M', message),
    ] {
        body.push(t);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut out = vec![b'E'];
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}
