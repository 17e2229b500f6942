//! Encoding: a statement's [`Reply`] as pgwire responses in the formats the
//! client asked for, and errors as ErrorResponses (the SQLSTATE comes from
//! `common::Error::sqlstate`, decided nowhere else).

use std::sync::Arc;

use common::Error;
use datafusion::arrow::array::RecordBatch;
use futures::stream::{self, BoxStream};
use futures::StreamExt;
use pgwire::api::portal::Format;
use pgwire::api::results::{DataRowEncoder, FieldInfo, QueryResponse, Response, Tag};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::data::DataRow;

use crate::exec::runner::{Reply, Rows};
use crate::pgtypes::{encode_arrow, encode_datum};

pub fn to_pg_error(e: &Error) -> PgWireError {
    PgWireError::UserError(Box::new(error_info(e)))
}

/// The ErrorResponse for `e`. Errors that are the system's, not the
/// statement's (connection failures, serialization failures and deadlocks,
/// resource limits, internal errors) are also logged, as PostgreSQL does.
pub fn error_info(e: &Error) -> ErrorInfo {
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

/// Sends the NOTICEs a statement raised (`Session::notices`), before its
/// answer.
pub async fn send_notices<C>(client: &mut C, notices: &mut Vec<String>) -> PgWireResult<()>
where
    C: futures::Sink<pgwire::messages::PgWireBackendMessage> + Unpin,
    PgWireError: From<C::Error>,
{
    use futures::SinkExt;
    for n in notices.drain(..) {
        let info = ErrorInfo::new("NOTICE".into(), "00000".into(), n);
        client
            .feed(pgwire::messages::PgWireBackendMessage::NoticeResponse(
                info.into(),
            ))
            .await?;
    }
    Ok(())
}

/// A statement's DataRows as they are produced, then CommandComplete with
/// PostgreSQL's tag ([`rows_tag`]): the simple and the extended protocol
/// alike.
pub async fn send_data_rows<C>(client: &mut C, q: &mut QueryResponse) -> PgWireResult<()>
where
    C: futures::Sink<pgwire::messages::PgWireBackendMessage> + Unpin,
    PgWireError: From<C::Error>,
{
    use futures::SinkExt;
    use pgwire::messages::PgWireBackendMessage;
    let tag = q.command_tag().to_string();
    let mut n = 0;
    while let Some(row) = q.data_rows().next().await {
        client.feed(PgWireBackendMessage::DataRow(row?)).await?;
        n += 1;
    }
    client
        .feed(PgWireBackendMessage::CommandComplete(
            rows_tag(&tag, n).into(),
        ))
        .await?;
    Ok(())
}

/// One batch's rows as DataRows.
fn encode_batch(fields: &Arc<Vec<FieldInfo>>, b: &RecordBatch) -> Vec<PgWireResult<DataRow>> {
    if b.num_columns() != fields.len() {
        return vec![Err(to_pg_error(&Error::internal(
            "result width does not match its description",
        )))];
    }
    let mut enc = DataRowEncoder::new(fields.clone());
    let mut out = Vec::with_capacity(b.num_rows());
    for r in 0..b.num_rows() {
        for (c, f) in b.columns().iter().zip(fields.iter()) {
            if let Err(e) = encode_arrow(&mut enc, c, r, f) {
                out.push(Err(to_pg_error(&Error::internal(e))));
                return out;
            }
        }
        out.push(Ok(enc.take_row()));
    }
    out
}

/// The CommandComplete tag of a statement that returned `rows` rows:
/// PostgreSQL counts the rows of SELECT, FETCH, COPY and a write's
/// RETURNING; SHOW and EXPLAIN answer with the bare tag.
pub fn rows_tag(tag: &str, rows: usize) -> Tag {
    match tag {
        "SHOW" | "EXPLAIN" => Tag::new(tag),
        _ => Tag::new(tag).with_rows(rows),
    }
}

/// The wire response of a statement's reply, rows in `format`.
pub fn encode(reply: Reply, format: &Format) -> common::Result<Response> {
    Ok(match reply {
        Reply::Command { tag, rows } => {
            let mut t = Tag::new(&tag);
            if let Some(n) = rows {
                t = t.with_rows(n);
            }
            Response::Execution(t)
        }
        Reply::TxnStart => Response::TransactionStart(Tag::new("BEGIN")),
        Reply::TxnEnd(tag) => Response::TransactionEnd(Tag::new(tag)),
        Reply::Rows { columns, tag, rows } => {
            let fields = columns.described(format);
            let out: BoxStream<'static, PgWireResult<DataRow>> = match rows {
                Rows::Datums(data) => {
                    let mut enc = DataRowEncoder::new(fields.clone());
                    let mut out = Vec::with_capacity(data.len());
                    for r in &data {
                        for (d, f) in r.iter().zip(fields.iter()) {
                            encode_datum(&mut enc, d, f).map_err(Error::internal)?;
                        }
                        out.push(Ok(enc.take_row()));
                    }
                    stream::iter(out).boxed()
                }
                Rows::Batches(batches) => {
                    let out: Vec<_> = batches
                        .iter()
                        .flat_map(|b| encode_batch(&fields, b))
                        .collect();
                    stream::iter(out).boxed()
                }
                // Encoded batch by batch as DataFusion produces them: the
                // first rows leave before the last are read from the shards.
                Rows::Stream(s) => {
                    let f = fields.clone();
                    s.flat_map(move |item| {
                        stream::iter(match item {
                            Ok(b) => encode_batch(&f, &b),
                            Err(e) => vec![Err(to_pg_error(&e))],
                        })
                    })
                    .boxed()
                }
            };
            let mut q = QueryResponse::new(fields, out);
            q.set_command_tag(tag);
            Response::Query(q)
        }
        Reply::CopyIn(n) => Response::CopyIn(pgwire::api::results::CopyResponse::new(
            0,
            n,
            stream::empty(),
        )),
        Reply::CopyOut { columns, lines } => {
            let chunks: Vec<_> = lines
                .into_iter()
                .map(|l| Ok(pgwire::messages::copy::CopyData::new(bytes::Bytes::from(l))))
                .collect();
            Response::CopyOut(pgwire::api::results::CopyResponse::new(
                0,
                columns,
                stream::iter(chunks),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use pgwire::messages::response::CommandComplete;

    #[test]
    fn show_and_explain_tags_carry_no_row_count() {
        let tag = |t, n| CommandComplete::from(super::rows_tag(t, n)).tag;
        assert_eq!(tag("SHOW", 1), "SHOW");
        assert_eq!(tag("EXPLAIN", 6), "EXPLAIN");
        assert_eq!(tag("SELECT", 2), "SELECT 2");
        assert_eq!(tag("INSERT 0", 3), "INSERT 0 3");
        assert_eq!(tag("FETCH", 0), "FETCH 0");
    }
}
