//! The extended query protocol: Parse (planned once, described from the
//! plan), Bind (format codes checked), Describe and Execute. Answers are
//! buffered and flushed once, at Sync.

use std::sync::Arc;

use async_trait::async_trait;
use common::Error;
use futures::SinkExt;
use pgwire::api::portal::{Format, Portal, PortalExecutionState};
use pgwire::api::query::ExtendedQueryHandler;
use pgwire::api::results::{
    DescribePortalResponse, DescribeStatementResponse, FieldInfo, Response,
};
use pgwire::api::stmt::{QueryParser, StoredStatement};
use pgwire::api::store::{Entry, PortalStore};
use pgwire::api::{
    ClientInfo, ClientPortalStore, ConnectionHandle, PgWireConnectionState, Type, DEFAULT_NAME,
};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::data::{NoData, ParameterDescription, RowDescription};
use pgwire::messages::extendedquery::{
    Bind, BindComplete, Describe, Execute, Parse, ParseComplete, TARGET_TYPE_BYTE_PORTAL,
    TARGET_TYPE_BYTE_STATEMENT,
};
use pgwire::messages::response::EmptyQueryResponse;
use pgwire::messages::PgWireBackendMessage;
use shard_router::Router;

use super::response::{encode, to_pg_error};
use super::{ConnHandlers, SCHEMA_METADATA};
use crate::pgtypes::decode_param;
use crate::plan::cache::{Compiled, Key, Source, StatementCache};
use crate::plan::columns::fields_of;
use crate::plan::{plan_statement, PlanKind, Prepared, Scope};

pub struct TesseraParser {
    pub(super) router: Arc<Router>,
    /// The node's compiled statements, shared by its sessions.
    pub(super) statements: Arc<StatementCache>,
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
        // The session's schema, as the handlers last recorded it.
        let schema = client
            .metadata()
            .get(SCHEMA_METADATA)
            .cloned()
            .unwrap_or_else(|| "public".to_string());
        // One plan per text for the node's sessions (`plan::cache`): a
        // text compiled before is neither parsed nor planned again.
        let version = self
            .router
            .ensure_fresh()
            .await
            .map_err(|e| to_pg_error(&e))?
            .version;
        let zone = common::tz::session_input_key();
        let key = Key::new(Source::Parse, sql, &schema, &zone, types);
        if let Some(Compiled::Plan(p)) = self.statements.get(&key, version) {
            return Ok(Some(p));
        }
        let mut stmts = crate::parse::parse_sql(sql).map_err(|e| to_pg_error(&e))?;
        if stmts.len() > 1 {
            return Err(to_pg_error(&Error::Syntax {
                message: "cannot insert multiple commands into a prepared statement".into(),
                position: None,
            }));
        }
        let Some(stmt) = stmts.pop() else {
            return Ok(None);
        };
        let md = client.metadata();
        let user = md.get("user").cloned().unwrap_or_default();
        let scope = Scope {
            pid: client.pid_and_secret_key().0,
            schema: schema.clone(),
            database: md.get("database").cloned().unwrap_or_else(|| user.clone()),
            user,
        };
        let plan = plan_statement(&self.router, &scope, &stmt, types)
            .await
            .map_err(|e| to_pg_error(&e))?;
        let made_at = plan.catalog_version;
        let mut prepared = Prepared::new(schema, stmt, plan, types.to_vec());
        prepared.text = Arc::from(sql);
        let prepared = Arc::new(prepared);
        self.statements
            .insert(key, made_at, Compiled::Plan(prepared.clone()));
        Ok(Some(prepared))
    }

    fn get_parameter_types(&self, stmt: &Arc<Prepared>) -> PgWireResult<Vec<Type>> {
        Ok(stmt.plan.param_types.clone())
    }

    fn get_result_schema(
        &self,
        stmt: &Arc<Prepared>,
        format: Option<&Format>,
    ) -> PgWireResult<Vec<FieldInfo>> {
        Ok(fields_of(&stmt.plan.fields, &stmt.plan.origins, format))
    }
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
                    session.statement_failed();
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
                    return Err(to_pg_error(&Error::Sql {
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
                    return Err(to_pg_error(&Error::Sql {
                        state: common::SqlState::PROTOCOL_VIOLATION,
                        message: format!(
                            "bind message has {n_codes} parameter formats but {n_params} parameters"
                        ),
                    }));
                }
                if n_rcodes > 1 && n_cols > 0 && n_rcodes != n_cols {
                    return Err(to_pg_error(&Error::Sql {
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
        // A FETCH describes its cursor's columns (in the session).
        let cursor_fields = |plan: &crate::plan::Plan| {
            let PlanKind::Fetch { name, .. } = &plan.kind else {
                return None;
            };
            Some(name.clone())
        };
        let fetched = match message.target_type {
            TARGET_TYPE_BYTE_STATEMENT => match client.portal_store().get_statement(name) {
                Some(Entry::Value(s)) => cursor_fields(&s.statement.plan),
                _ => None,
            },
            TARGET_TYPE_BYTE_PORTAL => match client.portal_store().get_portal(name) {
                Some(Entry::Value(p)) => cursor_fields(&p.statement.statement.plan),
                _ => None,
            },
            _ => None,
        };
        let fetched = match fetched {
            Some(cursor) => self
                .session(client)
                .await
                .as_ref()
                .and_then(|s| s.cursor_fields(&cursor)),
            None => None,
        };
        let (params, fields) = match message.target_type {
            TARGET_TYPE_BYTE_STATEMENT => match client.portal_store().get_statement(name) {
                Some(Entry::Value(s)) if fetched.is_some() => {
                    let (f, o) = fetched.unwrap_or_default();
                    (
                        Some(s.statement.plan.param_types.clone()),
                        Arc::new(fields_of(&f, &o, None)),
                    )
                }
                Some(Entry::Value(s)) => (
                    Some(s.statement.plan.param_types.clone()),
                    s.statement.plan.columns().described(&Format::UnifiedText),
                ),
                Some(Entry::Empty) => (Some(vec![]), Arc::new(vec![])),
                None => return Err(PgWireError::StatementNotFound(name.to_owned())),
            },
            TARGET_TYPE_BYTE_PORTAL => match client.portal_store().get_portal(name) {
                Some(Entry::Value(p)) if fetched.is_some() => {
                    let (f, o) = fetched.unwrap_or_default();
                    (
                        None,
                        Arc::new(fields_of(&f, &o, Some(&p.result_column_format))),
                    )
                }
                // Every execution of a libpq client describes its portal:
                // the plan's description, made once per format.
                Some(Entry::Value(p)) => (
                    None,
                    p.statement
                        .statement
                        .plan
                        .columns()
                        .described(&p.result_column_format),
                ),
                Some(Entry::Empty) => (None, Arc::new(vec![])),
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
                super::response::send_data_rows(client, &mut q).await?;
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
            fields_of(&p.plan.fields, &p.plan.origins, None),
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
            &p.plan.origins,
            Some(&target.result_column_format),
        )))
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<Arc<Prepared>>,
        max_rows: usize,
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
        let mut res = session.run(&prepared, &params).await;
        super::response::send_notices(client, &mut session.notices).await?;
        // A DECLAREd cursor is a portal of the protocol too (psycopg 3
        // describes its server-side cursors by name): one whose statement
        // is `FETCH ALL` from it.
        if let (Ok(_), PlanKind::DeclareCursor { name, .. }) = (&res, &prepared.plan.kind) {
            let parse = pgwire::messages::extendedquery::Parse::new(
                Some(name.clone()),
                format!("FETCH ALL FROM \"{}\"", name.replace('"', "\"\"")),
                vec![],
            );
            if let Ok(Some(stmt)) =
                StoredStatement::parse(client, &parse, self.query_parser()).await
            {
                client.portal_store().put_portal(Arc::new(
                    pgwire::api::portal::Portal::new_cursor(name.clone(), Arc::new(stmt)),
                ));
            }
        }
        // A portal read in pieces (Execute with a row limit) may be left
        // suspended while other statements run: its rows are collected
        // so that it holds no shard connection.
        if max_rows > 0 {
            res = match res {
                Ok(r) => r.materialize().await,
                e => e,
            };
            session.settle();
        }
        if matches!(
            prepared.plan.kind,
            PlanKind::Set { .. } | PlanKind::Reset(_)
        ) {
            client
                .metadata_mut()
                .insert(SCHEMA_METADATA.to_string(), session.current_schema());
        }
        match res.and_then(|r| encode(r, &portal.result_column_format)) {
            Ok(r) => Ok(r),
            Err(e) => {
                session.statement_failed();
                Err(to_pg_error(&e))
            }
        }
    }
}
