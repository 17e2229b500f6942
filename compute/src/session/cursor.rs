//! Cursors (`DECLARE ... CURSOR [WITH HOLD] FOR`, `FETCH`, `CLOSE`): a
//! query's rows kept in the session and handed out in pieces.
//!
//! The query runs to its end at DECLARE and its rows are kept in memory
//! (bounded by [`MAX_ROWS`]); FETCH reads them forward. A cursor without
//! HOLD lives until its transaction ends, one WITH HOLD until CLOSE or the
//! end of the session.

use datafusion::arrow::record_batch::RecordBatch;

use common::Datum;

/// The most rows a cursor keeps (54000 past it).
pub const MAX_ROWS: usize = 2_000_000;

/// A cursor's rows: as the fast path or DataFusion answered them.
pub enum CursorRows {
    Datums(Vec<Vec<Datum>>),
    Batch(RecordBatch),
}

impl CursorRows {
    pub fn len(&self) -> usize {
        match self {
            CursorRows::Datums(d) => d.len(),
            CursorRows::Batch(b) => b.num_rows(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows `from..from + n` (fewer at the end).
    pub fn slice(&self, from: usize, n: usize) -> CursorRows {
        let from = from.min(self.len());
        let n = n.min(self.len() - from);
        match self {
            CursorRows::Datums(d) => CursorRows::Datums(d[from..from + n].to_vec()),
            CursorRows::Batch(b) => CursorRows::Batch(b.slice(from, n)),
        }
    }
}

pub struct Cursor {
    pub columns: std::sync::Arc<crate::plan::columns::Columns>,
    pub rows: CursorRows,
    /// The next row FETCH reads.
    pub position: usize,
    pub hold: bool,
}
