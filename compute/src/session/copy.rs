//! A COPY FROM STDIN in progress: session state between CopyData
//! messages.
//!
//! Incoming data is parsed line by line into rows of the table's types,
//! routed to partitions and written to the shards in batches of up to 1000
//! rows per INSERT, shards in parallel, all inside one transaction (the
//! session's, or an implicit one committed with 2PC at CopyDone), so a
//! failed COPY leaves nothing behind. A bad row fails the COPY with an
//! error naming its line.

use std::sync::Arc;

use common::{Datum, Error, Result, SqlState};
use shard_router::txn::{Branches, ShardAccess, StatementAccess};
use shard_router::Router;

use crate::plan::copy::CopyInPlan;

/// A COPY FROM STDIN in progress.
pub struct CopyIn {
    plan: Arc<CopyInPlan>,
    pending: Vec<u8>,
    /// Parsed rows in column order; `None`: the column's default.
    rows: Vec<Vec<Option<Datum>>>,
    clock: shard_router::sql::Clock,
    line: usize,
    count: u64,
    header_skipped: bool,
    done: bool,
    error: Option<Error>,
    access: StatementAccess,
    implicit: Option<Arc<Branches>>,
}

const BATCH_ROWS: usize = 5000;

impl CopyIn {
    pub fn new(
        plan: Arc<CopyInPlan>,
        session_txn: Option<Arc<Branches>>,
        node_id: u32,
        clock: shard_router::sql::Clock,
        lock_timeout_secs: u32,
    ) -> CopyIn {
        let (access, implicit) = match session_txn {
            Some(t) => (ShardAccess::Txn(t), None),
            None => {
                let b = Arc::new(Branches::new(node_id, None, false));
                (ShardAccess::Txn(b.clone()), Some(b))
            }
        };
        // The COPY's writes wait for row locks as long as the session's
        // `lock_timeout` says, as PostgreSQL's do.
        let access = StatementAccess::new(access, lock_timeout_secs);
        CopyIn {
            plan,
            pending: vec![],
            rows: vec![],
            clock,
            line: 0,
            count: 0,
            header_skipped: false,
            done: false,
            error: None,
            access,
            implicit,
        }
    }

    /// Takes a CopyData message; writes full batches to the shards.
    pub async fn data(&mut self, router: &Router, bytes: &[u8]) {
        if self.error.is_some() || self.done {
            return;
        }
        self.pending.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(end) = self.record_end(start) {
            let line = self.pending[start..end].to_vec();
            start = end + 1;
            if let Err(e) = self.line(&line) {
                self.error = Some(e);
                return;
            }
            if self.done {
                break;
            }
        }
        self.pending.drain(..start);
        if self.rows.len() >= BATCH_ROWS {
            if let Err(e) = self.flush(router).await {
                self.error = Some(e);
            }
        }
    }

    /// Where the record starting at `start` of the pending bytes ends (its
    /// newline), once it is all there: a CSV quoted field may hold
    /// newlines.
    fn record_end(&self, start: usize) -> Option<usize> {
        let bytes = &self.pending[start..];
        let f = &self.plan.format;
        if !f.csv || !f.quote.is_ascii() || !f.escape.is_ascii() {
            return bytes.iter().position(|b| *b == b'\n').map(|p| start + p);
        }
        let (quote, escape) = (f.quote as u8, f.escape as u8);
        let mut in_quotes = false;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if in_quotes {
                if b == escape && escape != quote && bytes.get(i + 1) == Some(&quote) {
                    i += 1;
                } else if b == quote {
                    in_quotes = false;
                }
            } else if b == quote {
                in_quotes = true;
            } else if b == b'\n' {
                return Some(start + i);
            }
            i += 1;
        }
        None
    }

    fn bad_line(&self, msg: impl std::fmt::Display) -> Error {
        Error::Sql {
            state: SqlState::INVALID_TEXT_REPRESENTATION,
            message: format!("COPY {}, line {}: {msg}", self.plan.table.name, self.line),
        }
    }

    fn line(&mut self, raw: &[u8]) -> Result<()> {
        self.line += 1;
        let mut text = std::str::from_utf8(raw).map_err(|_| self.bad_line("invalid UTF-8"))?;
        if let Some(t) = text.strip_suffix('\r') {
            text = t;
        }
        if text == "\\." {
            self.done = true;
            return Ok(());
        }
        if self.plan.format.header && !self.header_skipped {
            self.header_skipped = true;
            return Ok(());
        }
        let fields = self.plan.format.split(text).map_err(|e| self.bad_line(e))?;
        if fields.len() != self.plan.fields {
            return Err(self.bad_line(format!(
                "expected {} columns, found {}",
                self.plan.fields,
                fields.len()
            )));
        }
        let t = &self.plan.table;
        let mut row = Vec::with_capacity(t.columns.len());
        for (ci, col) in t.columns.iter().enumerate() {
            // A column the COPY leaves out takes its default (`None`); a
            // NULL field is NULL.
            let v = match self.plan.column_map[ci] {
                None => None,
                Some(j) => Some(match fields[j].as_deref() {
                    Some(s) => Datum::parse(s, &col.ty)
                        .map_err(|e| self.bad_line(format!("column {}: {e}", col.name)))?,
                    None => Datum::Null,
                }),
            };
            if let Some(v) = &v {
                crate::rows::check_value(t, col, v)?;
            }
            row.push(v);
        }
        self.rows.push(row);
        Ok(())
    }

    /// The buffered rows completed: defaults and sequence values (reserved
    /// now, in row order) for the columns the COPY leaves out.
    async fn complete(
        &self,
        router: &Router,
        rows: Vec<Vec<Option<Datum>>>,
    ) -> Result<Vec<Vec<Datum>>> {
        let t = &self.plan.table;
        let mut sequenced = vec![];
        for (ci, col) in t.columns.iter().enumerate() {
            let mut values = std::collections::VecDeque::new();
            if let (Some(seq), None) = (&col.sequence, self.plan.column_map[ci]) {
                for _ in 0..rows.len() {
                    values.push_back(router.next_sequence_value(seq).await?);
                }
            }
            sequenced.push(values);
        }
        let mut filler = crate::rows::RowFiller::new(t, &self.clock, sequenced);
        rows.into_iter()
            .map(|row| {
                row.into_iter()
                    .enumerate()
                    .map(|(ci, v)| filler.value(ci, v))
                    .collect()
            })
            .collect()
    }

    /// Writes buffered rows: grouped by partition, shards in parallel.
    async fn flush(&mut self, router: &Router) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.rows);
        let rows = self.complete(router, rows).await?;
        let work =
            shard_router::route::insert_statements(&router.placement(), &self.plan.table, &rows)?;
        shard_router::dist::write_in(router, &self.access, work).await?;
        shard_router::dist::check_references(router, &self.plan.table, &rows, &self.access).await?;
        self.count += rows.len() as u64;
        Ok(())
    }

    /// CopyDone: flushes, commits an implicit transaction, returns the count.
    pub async fn finish(mut self, router: &Arc<Router>) -> Result<u64> {
        if self.error.is_none() && !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            if let Err(e) = self.line(&rest) {
                self.error = Some(e);
            }
        }
        if self.error.is_none() {
            if let Err(e) = self.flush(router).await {
                self.error = Some(e);
            }
        }
        if let Some(e) = self.error.take() {
            if let Some(b) = &self.implicit {
                let _ = b.finish(router, false).await;
            }
            return Err(e);
        }
        if let Some(b) = &self.implicit {
            b.clone().finish_detached(router.clone(), true).await?;
        }
        Ok(self.count)
    }

    /// CopyFail from the client: abandon everything.
    pub async fn abort(self, router: &Router) {
        if let Some(b) = &self.implicit {
            let _ = b.finish(router, false).await;
        }
    }
}
