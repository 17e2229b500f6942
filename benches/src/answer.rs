//! A statement's answer reduced to what the differential programs
//! (`pgdiff`, `pgregress`) compare between Tessera and PostgreSQL 15:
//! column names, every value as text, the affected-row count of a
//! command, or the SQLSTATE of an error. The error's message is kept for
//! reports and for telling a missing object apart, but two errors are the
//! same answer when their SQLSTATEs are.

use tokio_postgres::SimpleQueryMessage;

/// One statement's answer.
#[derive(Debug, Clone, Eq)]
pub enum Answer {
    Rows {
        columns: Vec<String>,
        rows: Vec<Vec<Option<String>>>,
        /// The count of the command tag (`INSERT 0 3`, `SELECT 5`), when
        /// the protocol reported one.
        affected: Option<u64>,
    },
    Error {
        /// The SQLSTATE, or `client: ...` when the client failed.
        code: String,
        message: String,
    },
}

impl PartialEq for Answer {
    fn eq(&self, other: &Answer) -> bool {
        match (self, other) {
            (
                Answer::Rows {
                    columns: c1,
                    rows: r1,
                    affected: a1,
                },
                Answer::Rows {
                    columns: c2,
                    rows: r2,
                    affected: a2,
                },
            ) => c1 == c2 && r1 == r2 && a1 == a2,
            (Answer::Error { code: c1, .. }, Answer::Error { code: c2, .. }) => c1 == c2,
            _ => false,
        }
    }
}

impl Answer {
    /// An error answer from its SQLSTATE alone.
    pub fn error(code: &str) -> Answer {
        Answer::Error {
            code: code.into(),
            message: String::new(),
        }
    }

    /// The SQLSTATE, if this is an error.
    pub fn code(&self) -> Option<&str> {
        match self {
            Answer::Error { code, .. } => Some(code),
            Answer::Rows { .. } => None,
        }
    }

    /// The answer without its command count.
    pub fn without_count(self) -> Answer {
        match self {
            Answer::Rows { columns, rows, .. } => Answer::Rows {
                columns,
                rows,
                affected: None,
            },
            e => e,
        }
    }

    /// The rows sorted, for comparing as multisets.
    pub fn sorted(&self) -> Answer {
        match self {
            Answer::Rows {
                columns,
                rows,
                affected,
            } => {
                let mut rows = rows.clone();
                rows.sort();
                Answer::Rows {
                    columns: columns.clone(),
                    rows,
                    affected: *affected,
                }
            }
            e => e.clone(),
        }
    }

    /// One line for a report: row count, columns and the first rows, or
    /// the error.
    pub fn short(&self) -> String {
        match self {
            Answer::Rows { columns, rows, .. } if columns.is_empty() && rows.is_empty() => {
                match self {
                    Answer::Rows {
                        affected: Some(n), ..
                    } => format!("ok ({n})"),
                    _ => "ok".into(),
                }
            }
            Answer::Rows { columns, rows, .. } => {
                let first: Vec<String> = rows
                    .iter()
                    .take(3)
                    .map(|r| {
                        let v: Vec<&str> =
                            r.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
                        format!("({})", v.join(", "))
                    })
                    .collect();
                format!("{} rows {:?} {}", rows.len(), columns, first.join(" "))
            }
            Answer::Error { code, message } if message.is_empty() => format!("error {code}"),
            Answer::Error { code, message } => format!("error {code}: {message}"),
        }
    }
}

/// A connection whose driver task runs in the background.
pub async fn connect(url: &str) -> Result<tokio_postgres::Client, String> {
    let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(c)
}

/// A client error as an answer: the server's SQLSTATE and message, or
/// `client: ...` (a lost connection, a protocol error).
pub fn error_answer(e: &tokio_postgres::Error) -> Answer {
    match e.as_db_error() {
        Some(db) => Answer::Error {
            code: db.code().code().to_string(),
            message: db.message().to_string(),
        },
        None => Answer::Error {
            code: e
                .code()
                .map(|s| s.code().to_string())
                .unwrap_or_else(|| "client".into()),
            message: e.to_string(),
        },
    }
}

/// The answer over the simple protocol (values as the server's text).
pub async fn answer(c: &tokio_postgres::Client, sql: &str) -> Answer {
    match c.simple_query(sql).await {
        Ok(msgs) => {
            let mut columns = vec![];
            let mut rows = vec![];
            let mut affected = None;
            for m in msgs {
                match m {
                    SimpleQueryMessage::RowDescription(cols) => {
                        columns = cols.iter().map(|c| c.name().to_string()).collect();
                    }
                    SimpleQueryMessage::Row(r) => {
                        rows.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
                    }
                    SimpleQueryMessage::CommandComplete(n) => affected = Some(n),
                    _ => {}
                }
            }
            Answer::Rows {
                columns,
                rows,
                affected,
            }
        }
        Err(e) => error_answer(&e),
    }
}

/// The answer over the extended protocol: Parse, Describe, Bind (binary
/// results), Execute; values decoded by their described types
/// (`crate::pgbinary`). The protocol gives no command count here.
pub async fn answer_extended(c: &tokio_postgres::Client, sql: &str) -> Answer {
    let st = match c.prepare(sql).await {
        Ok(st) => st,
        Err(e) => return error_answer(&e),
    };
    let columns = st.columns().iter().map(|c| c.name().to_string()).collect();
    match c.query(&st, &[]).await {
        Ok(rows) => {
            let mut out = vec![];
            for r in rows {
                let mut vals = vec![];
                for i in 0..r.len() {
                    match r.try_get::<_, crate::pgbinary::Raw>(i) {
                        Ok(v) => vals.push(v.0),
                        Err(e) => {
                            return Answer::Error {
                                code: format!("client: {e}"),
                                message: String::new(),
                            }
                        }
                    }
                }
                out.push(vals);
            }
            Answer::Rows {
                columns,
                rows: out,
                affected: None,
            }
        }
        Err(e) => error_answer(&e),
    }
}
