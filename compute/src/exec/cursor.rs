//! DECLARE, FETCH and CLOSE of cursors (see `session::cursor`).

use std::sync::Arc;

use common::{Datum, Error, Result, SqlState};

use crate::exec::runner::{Reply, Rows};
use crate::plan::Prepared;
use crate::session::cursor::{Cursor, CursorRows, MAX_ROWS};
use crate::session::Session;

/// A cursor's result columns and their origins.
pub type CursorColumns = (
    Vec<(String, pgwire::api::Type)>,
    Vec<Option<crate::plan::origins::Origin>>,
);

fn no_cursor(name: &str) -> Error {
    Error::Sql {
        state: SqlState("34000"),
        message: format!("cursor \"{name}\" does not exist"),
    }
}

impl Session {
    /// Runs the cursor's query to its end and keeps its rows.
    pub(crate) async fn declare_cursor(
        &mut self,
        name: &str,
        hold: bool,
        query: &Arc<Prepared>,
        params: &[Datum],
    ) -> Result<Reply> {
        if self.failed {
            return Err(Error::InFailedTransaction);
        }
        if !hold && self.txn.is_none() {
            return Err(Error::Sql {
                state: SqlState("25P01"),
                message: "DECLARE CURSOR can only be used in transaction blocks".into(),
            });
        }
        if self.cursors.contains_key(name) {
            return Err(Error::Sql {
                state: SqlState("42P03"),
                message: format!("cursor \"{name}\" already exists"),
            });
        }
        let reply = Box::pin(self.run_planned(query, params)).await?;
        let Reply::Rows { columns, rows, .. } = reply else {
            return Err(Error::Sql {
                state: SqlState("42P11"),
                message: "cursor query must be a SELECT".into(),
            });
        };
        let too_many = || Error::Sql {
            state: SqlState("54000"),
            message: format!("a cursor keeps at most {MAX_ROWS} rows"),
        };
        let rows = match rows {
            Rows::Datums(d) => CursorRows::Datums(d),
            other => {
                use futures::TryStreamExt;
                let batches = match other {
                    Rows::Batches(b) => b,
                    Rows::Stream(s) => {
                        let mut out = vec![];
                        let mut n = 0;
                        let mut s = s;
                        while let Some(b) = s.try_next().await? {
                            n += b.num_rows();
                            if n > MAX_ROWS {
                                return Err(too_many());
                            }
                            out.push(b);
                        }
                        out
                    }
                    Rows::Datums(_) => vec![],
                };
                match batches.first() {
                    Some(first) => CursorRows::Batch(
                        datafusion::arrow::compute::concat_batches(&first.schema(), &batches)
                            .map_err(Error::internal)?,
                    ),
                    None => CursorRows::Datums(vec![]),
                }
            }
        };
        if rows.len() > MAX_ROWS {
            return Err(too_many());
        }
        self.cursors.insert(
            name.to_string(),
            Cursor {
                columns,
                rows,
                position: 0,
                hold,
            },
        );
        Ok(Reply::Command {
            tag: "DECLARE CURSOR".into(),
            rows: None,
        })
    }

    /// The next `count` rows of a cursor (`None`: all that are left).
    pub(crate) fn fetch_cursor(&mut self, name: &str, count: Option<u64>) -> Result<Reply> {
        if self.failed {
            return Err(Error::InFailedTransaction);
        }
        let c = self.cursors.get_mut(name).ok_or_else(|| no_cursor(name))?;
        let n = count.map_or(usize::MAX, |n| n.min(usize::MAX as u64) as usize);
        let piece = c.rows.slice(c.position, n);
        c.position += piece.len();
        Ok(Reply::Rows {
            columns: c.columns.clone(),
            tag: "FETCH",
            rows: match piece {
                CursorRows::Datums(d) => Rows::Datums(d),
                CursorRows::Batch(b) => Rows::Batches(vec![b]),
            },
        })
    }

    pub(crate) fn close_cursor(&mut self, name: Option<&str>) -> Result<Reply> {
        match name {
            None => self.cursors.clear(),
            Some(n) => {
                self.cursors.remove(n).ok_or_else(|| no_cursor(n))?;
            }
        }
        Ok(Reply::Command {
            tag: "CLOSE CURSOR".into(),
            rows: None,
        })
    }

    /// The result columns a FETCH from `name` describes.
    pub fn cursor_fields(&self, name: &str) -> Option<CursorColumns> {
        self.cursors
            .get(name)
            .map(|c| (c.columns.fields.clone(), c.columns.origins.clone()))
    }
}
