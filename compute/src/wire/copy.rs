//! COPY FROM STDIN's data messages: fed to the session's COPY in progress.

use async_trait::async_trait;
use common::Error;
use futures::SinkExt;
use pgwire::api::results::Tag;
use pgwire::api::ClientInfo;
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;

use super::response::to_pg_error;
use super::ConnHandlers;

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
            return Err(to_pg_error(&Error::Sql {
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
                session.statement_failed();
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
            session.statement_failed();
        }
        to_pg_error(&Error::Sql {
            state: common::SqlState::QUERY_CANCELED,
            message: format!("COPY from stdin failed: {}", fail.message),
        })
    }
}
