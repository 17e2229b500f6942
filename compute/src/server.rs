//! The PostgreSQL wire front end (pgwire): startup with SCRAM-SHA-256 against
//! users in meta, the simple and extended query protocols, cancel requests.
//! Errors become ErrorResponses here and only here.

use std::sync::Arc;

use async_trait::async_trait;
use common::{Datum, Error, Result};
use datafusion::sql::sqlparser::ast::Statement;
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use futures::stream;
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramAuth};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::{AuthSource, DefaultServerParameterProvider, LoginInfo, Password};
use pgwire::api::cancel::DefaultCancelHandler;
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{
    DataRowEncoder, DescribePortalResponse, DescribeStatementResponse, FieldFormat, FieldInfo,
    QueryResponse, Response, Tag,
};
use pgwire::api::stmt::{QueryParser, StoredStatement};
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore, ConnectionManager, PgWireServerHandlers, Type};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;
use shard_router::Router;

use crate::df;
use crate::pgtypes::{decode_param, encode_arrow, encode_datum, field};
use crate::plan::{Plan, PlanKind, Planner};
use crate::session::{Output, Session};

pub const SCRAM_ITERATIONS: usize = 4096;

/// Stores a user's SCRAM verifier material in meta.
pub async fn create_user(store: &meta::MetaStore, user: &str, password: &str) -> Result<()> {
    let salt: [u8; 16] = rand::random();
    let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
    store
        .put_user(user, &salt, &salted, SCRAM_ITERATIONS as u32)
        .await
}

pub fn to_pg_error(e: &Error) -> PgWireError {
    let mut info = ErrorInfo::new(
        "ERROR".to_string(),
        e.sqlstate().code().to_string(),
        e.to_string(),
    );
    info.position = e.position().map(|p| p.to_string());
    PgWireError::UserError(Box::new(info))
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
        let creds = self
            .router
            .meta
            .user_credentials(user)
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

/// A prepared statement: its SQL and its plan (re-planned when the catalog
/// version moves).
#[derive(Debug, Clone)]
pub struct Prepared {
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

pub fn parse_sql(sql: &str) -> Result<Vec<Statement>> {
    Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(|e| parse_error(sql, e))
}

/// Plans a statement against the current catalog, including the describe
/// step of DataFusion statements.
pub async fn plan_statement(
    router: &Arc<Router>,
    schema: &str,
    stmt: Statement,
    client_types: &[Option<Type>],
) -> Result<Plan> {
    let catalog = router.ensure_fresh().await?;
    let planner = Planner {
        catalog: &catalog,
        schema,
        client_types,
    };
    let mut plan = planner.plan(stmt)?;
    if let PlanKind::DataFusion(s, _) = &plan.kind {
        let ctx = df::context_for(
            router,
            shard_router::txn::ShardAccess::Autocommit,
            schema.to_string(),
            "tessera",
            "tessera",
            None,
        )?;
        let lp = df::logical_plan(&ctx, s).await?;
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
        _client: &C,
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
        let plan = plan_statement(&self.router, "public", stmt.clone(), types)
            .await
            .map_err(|e| to_pg_error(&e))?;
        Ok(Some(Arc::new(Prepared {
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

fn fields_of(fields: &[(String, Type)], format: Option<&Format>) -> Vec<FieldInfo> {
    fields
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            field(
                n,
                t.clone(),
                format.map(|f| f.format_for(i)).unwrap_or(FieldFormat::Text),
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
            let mut s = Session::new(self.router.clone(), db, user);
            if let Some(app) = md.get("application_name") {
                s.settings.insert("application_name".into(), app.clone());
            }
            *guard = Some(s);
        }
        guard
    }

    /// Executes one planned statement and shapes the wire response.
    async fn run(
        &self,
        session: &mut Session,
        prepared: &Prepared,
        params: &[Datum],
        format: &Format,
    ) -> Result<Response> {
        // Re-plan if DDL changed the catalog since this was prepared.
        let mut plan = prepared.plan.clone();
        if !matches!(
            plan.kind,
            PlanKind::Begin { .. }
                | PlanKind::Commit
                | PlanKind::Rollback
                | PlanKind::Set { .. }
                | PlanKind::Show { .. }
        ) {
            let fresh = self.router.ensure_fresh().await?;
            if fresh.version != plan.catalog_version {
                plan = plan_statement(
                    &self.router,
                    &session.current_schema(),
                    prepared.stmt.clone(),
                    &prepared.client_types,
                )
                .await?;
            }
        }
        if let PlanKind::DataFusion(stmt, lock) = &plan.kind {
            if session.failed {
                return Err(Error::InFailedTransaction);
            }
            let ctx = df::context(session, *lock)?;
            let lp = df::logical_plan(&ctx, stmt).await;
            let res = match lp {
                Ok(lp) => df::run(&ctx, lp, params).await,
                Err(e) => Err(e),
            };
            let batches = match res {
                Ok(b) => b,
                Err(e) => {
                    if session.in_txn() {
                        session.failed = true;
                    }
                    return Err(e);
                }
            };
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
        let out = session.execute(&plan, params).await?;
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
            Output::Batches(_) => return Err(Error::internal("unexpected batches")),
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
        let stmts = match parse_sql(query) {
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
                if session.failed {
                    let plan = Planner {
                        catalog: &session.router.catalog(),
                        schema: &schema,
                        client_types: &[],
                    }
                    .plan(stmt.clone())?;
                    if !plan.kind.allowed_when_failed() {
                        return Err(Error::InFailedTransaction);
                    }
                }
                let plan = plan_statement(&self.router, &schema, stmt.clone(), &[]).await?;
                let prepared = Prepared {
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
        Ok(out)
    }
}

fn error_info(e: &Error) -> ErrorInfo {
    let mut info = ErrorInfo::new(
        "ERROR".to_string(),
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
        match self
            .run(session, &prepared, &params, &portal.result_column_format)
            .await
        {
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
    fn cancel_handler(&self) -> Arc<impl pgwire::api::cancel::CancelHandler> {
        Arc::new(DefaultCancelHandler::new(self.handlers.manager.clone()))
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
    loop {
        let (socket, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                continue;
            }
        };
        let _ = socket.set_nodelay(true);
        let factory = Arc::new(Factory {
            handlers: Arc::new(ConnHandlers {
                router: router.clone(),
                session: tokio::sync::Mutex::new(None),
                parser: parser.clone(),
                manager: manager.clone(),
            }),
            router: router.clone(),
        });
        tokio::spawn(async move {
            if let Err(e) = pgwire::tokio::process_socket(socket, None, factory).await {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
}
