//! The simple query protocol: a query string of one or more statements,
//! each run in turn until one fails.

use std::sync::Arc;

use async_trait::async_trait;
use futures::SinkExt;
use pgwire::api::copy::{send_copy_both_response, send_copy_in_response, send_copy_out_response};
use pgwire::api::portal::Format;
use pgwire::api::query::{send_execution_response, send_ready_for_query, SimpleQueryHandler};
use pgwire::api::results::{QueryResponse, Response};
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore, ConnectionHandle, PgWireConnectionState};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::data::RowDescription;
use pgwire::messages::response::{EmptyQueryResponse, TransactionStatus};
use pgwire::messages::simplequery::Query;
use pgwire::messages::PgWireBackendMessage;

use super::response::{encode, error_info, send_data_rows};
use super::{ConnHandlers, SCHEMA_METADATA};

#[async_trait]
impl SimpleQueryHandler for ConnHandlers {
    /// Runs a Query message's statements ([`Self::do_query`]) and sends
    /// their replies, then ReadyForQuery. Sent here, not by pgwire's
    /// default, for the tags of rows: pgwire appends a row count to every
    /// one, and PostgreSQL's SHOW and EXPLAIN carry none
    /// ([`super::response::rows_tag`]).
    async fn on_query<C>(&self, client: &mut C, query: Query) -> PgWireResult<()>
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
        if !matches!(client.state(), PgWireConnectionState::ReadyForQuery) {
            return Err(PgWireError::NotReadyForQuery);
        }
        let mut status = client.transaction_status();
        client.set_state(PgWireConnectionState::QueryInProgress);
        // Only semicolons and blanks: PostgreSQL's empty query.
        let replies = if query.query.chars().all(|c| c == ';' || c.is_whitespace()) {
            vec![Response::EmptyQuery]
        } else {
            match client.session_extensions().get::<Arc<ConnectionHandle>>() {
                Some(h) => {
                    let cancel = h.start_query().await;
                    match futures::future::select(
                        Box::pin(self.do_query(client, &query.query)),
                        cancel,
                    )
                    .await
                    {
                        futures::future::Either::Left((r, _)) => r?,
                        futures::future::Either::Right(_) => {
                            return Err(PgWireError::QueryCanceled)
                        }
                    }
                }
                None => self.do_query(client, &query.query).await?,
            }
        };
        for r in replies {
            status = send_reply(client, r, status).await?;
        }
        // A COPY in progress answers ReadyForQuery when it ends.
        if !matches!(client.state(), PgWireConnectionState::CopyInProgress(_)) {
            client.set_state(PgWireConnectionState::ReadyForQuery);
            client.set_transaction_status(status);
            send_ready_for_query(client, status).await?;
        }
        Ok(())
    }

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
        let stmts = match crate::cpu_bound(heavy, || crate::parse::parse_sql(query)) {
            Ok(s) => s,
            Err(e) => {
                session.statement_failed();
                return Ok(vec![Response::Error(Box::new(error_info(&e)))]);
            }
        };
        session.query_text = std::sync::Arc::from(query);
        let mut out = vec![];
        let last = stmts.len().saturating_sub(1);
        for (i, stmt) in stmts.into_iter().enumerate() {
            let mut res = session.run_simple(stmt, heavy).await;
            // Sent at once: before this statement's answer, though after
            // those of the statements before it in the same string.
            super::response::send_notices(client, &mut session.notices).await?;
            // The replies are sent after the last statement ran: rows of an
            // earlier one are collected first, so its shard connections are
            // free for the statements after it.
            if i < last {
                res = match res {
                    Ok(r) => r.materialize().await,
                    e => e,
                };
                session.settle();
            }
            match res.and_then(|r| encode(r, &Format::UnifiedText)) {
                Ok(r) => out.push(r),
                Err(e) => {
                    session.statement_failed();
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

/// Sends one statement's reply; returns the transaction status after it.
async fn send_reply<C>(
    client: &mut C,
    reply: Response,
    status: TransactionStatus,
) -> PgWireResult<TransactionStatus>
where
    C: ClientInfo + futures::Sink<PgWireBackendMessage> + Unpin + Send + Sync,
    C::Error: std::fmt::Debug,
    PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
{
    match reply {
        Response::EmptyQuery => {
            client
                .feed(PgWireBackendMessage::EmptyQueryResponse(
                    EmptyQueryResponse::new(),
                ))
                .await?
        }
        Response::Query(q) => send_rows(client, q).await?,
        Response::Execution(tag) => send_execution_response(client, tag).await?,
        Response::TransactionStart(tag) => {
            send_execution_response(client, tag).await?;
            return Ok(status.to_in_transaction_state());
        }
        Response::TransactionEnd(tag) => {
            send_execution_response(client, tag).await?;
            return Ok(status.to_idle_state());
        }
        Response::Error(e) => {
            client
                .feed(PgWireBackendMessage::ErrorResponse((*e).into()))
                .await?;
            return Ok(status.to_error_state());
        }
        Response::CopyIn(c) => {
            send_copy_in_response(client, c).await?;
            client.set_state(PgWireConnectionState::CopyInProgress(false));
        }
        Response::CopyOut(c) => send_copy_out_response(client, c).await?,
        Response::CopyBoth(c) => {
            send_copy_both_response(client, c).await?;
            client.set_state(PgWireConnectionState::CopyInProgress(false));
        }
    }
    Ok(status)
}

/// A statement's rows: RowDescription, DataRows as they are produced,
/// CommandComplete with PostgreSQL's tag.
async fn send_rows<C>(client: &mut C, mut q: QueryResponse) -> PgWireResult<()>
where
    C: futures::Sink<PgWireBackendMessage> + Unpin + Send,
    C::Error: std::fmt::Debug,
    PgWireError: From<<C as futures::Sink<PgWireBackendMessage>>::Error>,
{
    let fields = q.row_schema();
    client
        .feed(PgWireBackendMessage::RowDescription(RowDescription::new(
            fields.iter().map(Into::into).collect(),
        )))
        .await?;
    send_data_rows(client, &mut q).await
}
