//! COPY FROM STDIN (text and CSV) and COPY TO STDOUT.
//!
//! Incoming data is parsed line by line into rows of the table's types,
//! routed to partitions and written to the shards in batches of up to 1000
//! rows per INSERT, shards in parallel, all inside one transaction (the
//! session's, or an implicit one committed with 2PC at CopyDone), so a
//! failed COPY leaves nothing behind. A bad row fails the COPY with an
//! error naming its line.

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{Datum, Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{CopyLegacyCsvOption, CopyLegacyOption, CopyOption};
use meta::TableDef;
use shard_router::txn::{Branches, ShardAccess};
use shard_router::Router;
use storage_adapter::map_error;

#[derive(Debug, Clone, PartialEq)]
pub struct CopyFormat {
    pub csv: bool,
    pub delimiter: char,
    pub null: String,
    pub header: bool,
    pub quote: char,
    pub escape: char,
}

impl CopyFormat {
    pub fn from_options(options: &[CopyOption], legacy: &[CopyLegacyOption]) -> Result<CopyFormat> {
        let mut f = CopyFormat {
            csv: false,
            delimiter: '\t',
            null: "\\N".into(),
            header: false,
            quote: '"',
            escape: '"',
        };
        let mut delimiter = None;
        let mut null = None;
        let mut escape = None;
        for o in options {
            match o {
                CopyOption::Format(i) => match i.value.to_lowercase().as_str() {
                    "csv" => f.csv = true,
                    "text" => f.csv = false,
                    other => return Err(Error::unsupported(format!("COPY format {other}"))),
                },
                CopyOption::Delimiter(c) => delimiter = Some(*c),
                CopyOption::Null(s) => null = Some(s.clone()),
                CopyOption::Header(h) => f.header = *h,
                CopyOption::Quote(c) => f.quote = *c,
                CopyOption::Escape(c) => escape = Some(*c),
                CopyOption::Encoding(e)
                    if e.eq_ignore_ascii_case("utf8") || e.eq_ignore_ascii_case("utf-8") => {}
                CopyOption::Freeze(_) => {}
                other => return Err(Error::unsupported(format!("COPY option {other}"))),
            }
        }
        for o in legacy {
            match o {
                CopyLegacyOption::Csv(opts) => {
                    f.csv = true;
                    for c in opts {
                        match c {
                            CopyLegacyCsvOption::Header => f.header = true,
                            CopyLegacyCsvOption::Quote(q) => f.quote = *q,
                            CopyLegacyCsvOption::Escape(e) => escape = Some(*e),
                            other => {
                                return Err(Error::unsupported(format!("COPY option {other}")))
                            }
                        }
                    }
                }
                CopyLegacyOption::Delimiter(c) => delimiter = Some(*c),
                CopyLegacyOption::Null(s) => null = Some(s.clone()),
                CopyLegacyOption::Header => f.header = true,
                other => return Err(Error::unsupported(format!("COPY option {other}"))),
            }
        }
        if f.csv {
            f.delimiter = ',';
            f.null = String::new();
        }
        if let Some(d) = delimiter {
            f.delimiter = d;
        }
        if let Some(n) = null {
            f.null = n;
        }
        f.escape = escape.unwrap_or(f.quote);
        if f.header && !f.csv {
            return Err(Error::unsupported("HEADER in text format COPY"));
        }
        Ok(f)
    }

    /// Splits one line into fields; `None` fields are NULL.
    pub fn split(&self, line: &str) -> std::result::Result<Vec<Option<String>>, String> {
        if self.csv {
            self.split_csv(line)
        } else {
            self.split_text(line)
        }
    }

    fn split_text(&self, line: &str) -> std::result::Result<Vec<Option<String>>, String> {
        let mut out = vec![];
        for raw in line.split(self.delimiter) {
            if raw == self.null {
                out.push(None);
                continue;
            }
            let mut s = String::with_capacity(raw.len());
            let mut chars = raw.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    s.push(c);
                    continue;
                }
                match chars.next() {
                    Some('b') => s.push('\u{8}'),
                    Some('f') => s.push('\u{c}'),
                    Some('n') => s.push('\n'),
                    Some('r') => s.push('\r'),
                    Some('t') => s.push('\t'),
                    Some('v') => s.push('\u{b}'),
                    Some('x') => {
                        let mut v = 0u32;
                        let mut n = 0;
                        while n < 2 && chars.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                            v = v * 16 + chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0);
                            n += 1;
                        }
                        s.push(char::from_u32(v).unwrap_or('?'));
                    }
                    Some(d @ '0'..='7') => {
                        let mut v = d.to_digit(8).unwrap_or(0);
                        let mut n = 1;
                        while n < 3 && chars.peek().is_some_and(|c| ('0'..='7').contains(c)) {
                            v = v * 8 + chars.next().and_then(|c| c.to_digit(8)).unwrap_or(0);
                            n += 1;
                        }
                        s.push(char::from_u32(v).unwrap_or('?'));
                    }
                    Some(other) => s.push(other),
                    None => return Err("a line ends with a lone backslash".into()),
                }
            }
            out.push(Some(s));
        }
        Ok(out)
    }

    fn split_csv(&self, line: &str) -> std::result::Result<Vec<Option<String>>, String> {
        let mut out = vec![];
        let mut cur = String::new();
        let mut quoted_field = false;
        let mut in_quotes = false;
        let mut chars = line.chars().peekable();
        loop {
            let c = chars.next();
            match c {
                Some(c) if in_quotes => {
                    if c == self.escape
                        && chars.peek() == Some(&self.quote)
                        && self.escape != self.quote
                    {
                        cur.push(self.quote);
                        chars.next();
                    } else if c == self.quote {
                        if self.escape == self.quote && chars.peek() == Some(&self.quote) {
                            cur.push(self.quote);
                            chars.next();
                        } else {
                            in_quotes = false;
                        }
                    } else {
                        cur.push(c);
                    }
                }
                Some(c) if c == self.quote => {
                    in_quotes = true;
                    quoted_field = true;
                }
                Some(c) if c == self.delimiter => {
                    out.push(if !quoted_field && cur == self.null {
                        None
                    } else {
                        Some(std::mem::take(&mut cur))
                    });
                    cur.clear();
                    quoted_field = false;
                }
                Some(c) => cur.push(c),
                None => {
                    if in_quotes {
                        return Err("unterminated CSV quoted field".into());
                    }
                    out.push(if !quoted_field && cur == self.null {
                        None
                    } else {
                        Some(cur)
                    });
                    return Ok(out);
                }
            }
        }
    }

    /// Renders one row for COPY TO.
    pub fn render(&self, fields: &[Option<String>]) -> String {
        let mut line = String::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                line.push(self.delimiter);
            }
            match f {
                None => line.push_str(&self.null),
                Some(s) if self.csv => {
                    if s.contains(self.delimiter)
                        || s.contains(self.quote)
                        || s.contains('\n')
                        || s.contains('\r')
                        || s == &self.null
                    {
                        line.push(self.quote);
                        for c in s.chars() {
                            if c == self.quote {
                                line.push(self.escape);
                            }
                            line.push(c);
                        }
                        line.push(self.quote);
                    } else {
                        line.push_str(s);
                    }
                }
                Some(s) => {
                    for c in s.chars() {
                        match c {
                            '\\' => line.push_str("\\\\"),
                            '\n' => line.push_str("\\n"),
                            '\r' => line.push_str("\\r"),
                            '\t' => line.push_str("\\t"),
                            c if c == self.delimiter => {
                                line.push('\\');
                                line.push(c);
                            }
                            c => line.push(c),
                        }
                    }
                }
            }
        }
        line.push('\n');
        line
    }
}

/// What a COPY FROM STDIN was planned into.
#[derive(Debug)]
pub struct CopyInPlan {
    pub table: Arc<TableDef>,
    /// For each table column, the index of the field that feeds it.
    pub column_map: Vec<Option<usize>>,
    pub fields: usize,
    pub format: CopyFormat,
}

/// A COPY FROM STDIN in progress.
pub struct CopyIn {
    plan: Arc<CopyInPlan>,
    pending: Vec<u8>,
    rows: Vec<Vec<Datum>>,
    line: usize,
    count: u64,
    header_skipped: bool,
    done: bool,
    error: Option<Error>,
    access: ShardAccess,
    implicit: Option<Arc<Branches>>,
}

const BATCH_ROWS: usize = 5000;

impl CopyIn {
    pub fn new(plan: Arc<CopyInPlan>, session_txn: Option<Arc<Branches>>, node_id: u32) -> CopyIn {
        let (access, implicit) = match session_txn {
            Some(t) => (ShardAccess::Txn(t), None),
            None => {
                let b = Arc::new(Branches::new(node_id, None, false));
                (ShardAccess::Txn(b.clone()), Some(b))
            }
        };
        CopyIn {
            plan,
            pending: vec![],
            rows: vec![],
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
        while let Some(pos) = self.pending[start..].iter().position(|b| *b == b'\n') {
            let end = start + pos;
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

    fn bad_line(&self, msg: impl std::fmt::Display) -> Error {
        Error::TxnState {
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
            let v = match self.plan.column_map[ci].and_then(|j| fields[j].as_deref()) {
                Some(s) => Datum::parse(s, &col.ty)
                    .map_err(|e| self.bad_line(format!("column {}: {e}", col.name)))?,
                None if self.plan.column_map[ci].is_none() && col.sequence.is_some() => {
                    return Err(Error::unsupported(
                        "COPY into a table leaving a SERIAL column out",
                    ));
                }
                None => Datum::Null,
            };
            if v.is_null() && col.not_null {
                return Err(Error::TxnState {
                    state: SqlState::NOT_NULL_VIOLATION,
                    message: format!(
                        "COPY {}, line {}: null value in column \"{}\" violates not-null constraint",
                        t.name, self.line, col.name
                    ),
                });
            }
            row.push(v);
        }
        self.rows.push(row);
        Ok(())
    }

    /// Writes buffered rows: grouped by partition, shards in parallel.
    async fn flush(&mut self, router: &Router) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.rows);
        let mut per_shard: BTreeMap<common::ShardId, Vec<(String, Vec<mysql_async::Value>)>> =
            BTreeMap::new();
        for (shard, sql, vals) in shard_router::render::insert_statements(&self.plan.table, &rows) {
            per_shard.entry(shard).or_default().push((sql, vals));
        }
        let access = &self.access;
        let results =
            futures::future::join_all(per_shard.into_iter().map(|(shard, stmts)| async move {
                let mut lease = access.lease(router, shard, true).await?;
                for (sql, vals) in stmts {
                    let conn = lease.conn()?;
                    storage_adapter::exec_drop(conn, &sql, vals)
                        .await
                        .map_err(|e| map_error(shard, e))?;
                    lease.mark_written();
                }
                Ok::<_, Error>(())
            }))
            .await;
        for r in results {
            r?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> CopyFormat {
        CopyFormat::from_options(&[], &[]).unwrap()
    }

    #[test]
    fn text_format_escapes_and_nulls() {
        let f = text();
        assert_eq!(
            f.split("1\ta\\tb\\\\c\t\\N").unwrap(),
            vec![Some("1".into()), Some("a\tb\\c".into()), None]
        );
        let line = f.render(&[Some("a\tb\\c".into()), None]);
        assert_eq!(line, "a\\tb\\\\c\t\\N\n");
        assert_eq!(
            f.split(line.trim_end_matches('\n')).unwrap(),
            vec![Some("a\tb\\c".into()), None]
        );
    }

    #[test]
    fn csv_quotes_and_nulls() {
        let f = CopyFormat::from_options(&[CopyOption::Format("csv".into())], &[]).unwrap();
        assert_eq!(
            f.split("1,\"a,\"\"b\"\"\",,\"\"").unwrap(),
            vec![
                Some("1".into()),
                Some("a,\"b\"".into()),
                None,
                Some("".into())
            ]
        );
        assert_eq!(f.render(&[Some("a,b".into()), None]), "\"a,b\",\n");
    }
}
