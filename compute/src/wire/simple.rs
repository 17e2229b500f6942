//! The simple query protocol: a query string of one or more statements,
//! each run in turn until one fails.

use async_trait::async_trait;
use pgwire::api::portal::Format;
use pgwire::api::query::SimpleQueryHandler;
use pgwire::api::results::Response;
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;

use super::response::{encode, error_info};
use super::{ConnHandlers, SCHEMA_METADATA};

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
