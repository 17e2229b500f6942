//! The two ways the driver talks to a server with the same transaction
//! logic: the PostgreSQL wire (tokio-postgres; Tessera and PostgreSQL) and
//! the MySQL protocol (mysql_async; the MariaDB baseline). Both prepare
//! [`super::statements::SQL`] once per connection; values cross as [`V`].

use std::collections::BTreeMap;
use std::future::Future;

use rust_decimal::Decimal;

use super::CopyText;

/// A parameter or a result cell.
#[derive(Debug, Clone)]
pub enum V {
    I32(i32),
    I64(i64),
    Dec(Decimal),
    Text(String),
    Null,
}

impl V {
    pub fn i32(&self) -> Result<i32, DbError> {
        match self {
            V::I32(v) => Ok(*v),
            V::I64(v) => i32::try_from(*v).map_err(|_| DbError::shape("int out of range")),
            V::Text(s) => s.parse().map_err(|_| DbError::shape("not an int")),
            _ => Err(DbError::shape("not an int")),
        }
    }

    pub fn i64(&self) -> Result<i64, DbError> {
        match self {
            V::I32(v) => Ok(*v as i64),
            V::I64(v) => Ok(*v),
            V::Text(s) => s.parse().map_err(|_| DbError::shape("not an int")),
            _ => Err(DbError::shape("not an int")),
        }
    }

    /// A numeric, NULL as None (MySQL's DECIMAL arrives as text).
    pub fn dec(&self) -> Result<Option<Decimal>, DbError> {
        match self {
            V::Dec(d) => Ok(Some(*d)),
            V::Null => Ok(None),
            V::I32(v) => Ok(Some(Decimal::from(*v))),
            V::I64(v) => Ok(Some(Decimal::from(*v))),
            V::Text(s) => s
                .parse()
                .map(Some)
                .map_err(|_| DbError::shape("not a numeric")),
        }
    }

    pub fn text(&self) -> Result<String, DbError> {
        match self {
            V::Text(s) => Ok(s.clone()),
            _ => Err(DbError::shape("not text")),
        }
    }
}

/// A failed statement: its SQLSTATE (or what went wrong before one).
#[derive(Debug)]
pub struct DbError {
    pub sqlstate: String,
    pub message: String,
}

impl DbError {
    fn shape(what: &str) -> DbError {
        DbError {
            sqlstate: "result".into(),
            message: what.into(),
        }
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.sqlstate)
    }
}

pub type Row = Vec<V>;

/// One connection with the transactions' statements prepared.
pub trait Db: Send + Sized {
    /// Connects; `prepare`: prepare the transactions' statements (the
    /// tables exist).
    fn connect(url: &str, prepare: bool) -> impl Future<Output = Result<Self, String>> + Send;
    /// Runs prepared statement `key` of [`super::statements::SQL`].
    fn exec(
        &mut self,
        key: &'static str,
        p: &[V],
    ) -> impl Future<Output = Result<Vec<Row>, DbError>> + Send;
    /// Runs statements as text (BEGIN, COMMIT, DDL).
    fn batch(&mut self, sql: &str) -> impl Future<Output = Result<(), DbError>> + Send;
    /// The first column of the first row of a query as text, as an int.
    fn scalar(&mut self, sql: &str) -> impl Future<Output = Result<i64, DbError>> + Send;
    /// Bulk-loads one table's rows (COPY text).
    fn load(&mut self, ch: &CopyText) -> impl Future<Output = Result<(), String>> + Send;
    fn is_closed(&self) -> bool;
}

/// `$n` placeholders as `?`, and which parameter each `?` takes.
fn question_marks(sql: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(sql.len());
    let mut order = vec![];
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            let mut n = 0usize;
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                n = n * 10 + d as usize;
                chars.next();
            }
            order.push(n - 1);
            out.push('?');
        } else {
            out.push(c);
        }
    }
    (out, order)
}

// --- PostgreSQL wire -------------------------------------------------------

use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

impl ToSql for V {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            V::I32(v) => v.to_sql(ty, out),
            V::I64(v) => v.to_sql(ty, out),
            V::Dec(v) => v.to_sql(ty, out),
            V::Text(v) => v.to_sql(ty, out),
            V::Null => Ok(IsNull::Yes),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

pub struct Pg {
    c: tokio_postgres::Client,
    st: BTreeMap<&'static str, tokio_postgres::Statement>,
}

fn pg_err(e: tokio_postgres::Error) -> DbError {
    DbError {
        sqlstate: e
            .code()
            .map(|c| c.code().to_string())
            .unwrap_or_else(|| "connection".into()),
        message: e.to_string(),
    }
}

fn pg_cell(r: &tokio_postgres::Row, i: usize) -> Result<V, DbError> {
    let ty = r.columns()[i].type_();
    let v = if *ty == Type::INT4 {
        r.try_get::<_, Option<i32>>(i).map_err(pg_err)?.map(V::I32)
    } else if *ty == Type::INT8 {
        r.try_get::<_, Option<i64>>(i).map_err(pg_err)?.map(V::I64)
    } else if *ty == Type::NUMERIC {
        r.try_get::<_, Option<Decimal>>(i)
            .map_err(pg_err)?
            .map(V::Dec)
    } else if [Type::TEXT, Type::VARCHAR, Type::BPCHAR].contains(ty) {
        r.try_get::<_, Option<String>>(i)
            .map_err(pg_err)?
            .map(V::Text)
    } else {
        // Timestamps: the transactions read them but use none.
        None
    };
    Ok(v.unwrap_or(V::Null))
}

impl Db for Pg {
    async fn connect(url: &str, prepare: bool) -> Result<Pg, String> {
        let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut st = BTreeMap::new();
        if prepare {
            for (k, sql) in super::statements::SQL {
                st.insert(*k, c.prepare(sql).await.map_err(|e| format!("{k}: {e}"))?);
            }
        }
        Ok(Pg { c, st })
    }

    async fn exec(&mut self, key: &'static str, p: &[V]) -> Result<Vec<Row>, DbError> {
        let st = self
            .st
            .get(key)
            .ok_or_else(|| DbError::shape("not prepared"))?;
        let params: Vec<&(dyn ToSql + Sync)> = p.iter().map(|v| v as _).collect();
        let rows = self.c.query(st, &params).await.map_err(pg_err)?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| pg_cell(r, i)).collect())
            .collect()
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.c.batch_execute(sql).await.map_err(pg_err)
    }

    async fn scalar(&mut self, sql: &str) -> Result<i64, DbError> {
        let r = self.c.query_one(sql, &[]).await.map_err(pg_err)?;
        pg_cell(&r, 0)?.i64()
    }

    async fn load(&mut self, ch: &CopyText) -> Result<(), String> {
        use futures::SinkExt;
        let sink = self
            .c
            .copy_in(&format!("COPY {} FROM STDIN", ch.table))
            .await
            .map_err(|e| format!("COPY {}: {e}", ch.table))?;
        futures::pin_mut!(sink);
        // In pieces of about 1 MiB, at line ends.
        let bytes = ch.buf.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let mut end = (at + (1 << 20)).min(bytes.len());
            while end < bytes.len() && bytes[end - 1] != b'\n' {
                end += 1;
            }
            sink.send(bytes::Bytes::copy_from_slice(&bytes[at..end]))
                .await
                .map_err(|e| format!("COPY {}: {e}", ch.table))?;
            at = end;
        }
        sink.finish()
            .await
            .map_err(|e| format!("COPY {}: {e}", ch.table))?;
        Ok(())
    }

    fn is_closed(&self) -> bool {
        self.c.is_closed()
    }
}

// --- MySQL protocol ----------------------------------------------------------

use mysql_async::prelude::Queryable;

pub struct My {
    c: mysql_async::Conn,
    st: BTreeMap<&'static str, (mysql_async::Statement, Vec<usize>)>,
    closed: bool,
}

impl My {
    fn err(&mut self, e: mysql_async::Error) -> DbError {
        match e {
            mysql_async::Error::Server(s) => DbError {
                sqlstate: s.state.clone(),
                message: format!("{} ({})", s.message, s.code),
            },
            e => {
                self.closed = true;
                DbError {
                    sqlstate: "connection".into(),
                    message: e.to_string(),
                }
            }
        }
    }
}

fn my_value(v: &V) -> mysql_async::Value {
    use mysql_async::Value;
    match v {
        V::I32(v) => Value::Int(*v as i64),
        V::I64(v) => Value::Int(*v),
        V::Dec(d) => Value::Bytes(d.to_string().into_bytes()),
        V::Text(s) => Value::Bytes(s.clone().into_bytes()),
        V::Null => Value::NULL,
    }
}

fn my_cell(v: mysql_async::Value) -> V {
    use mysql_async::Value;
    match v {
        Value::Int(i) => V::I64(i),
        Value::UInt(u) => V::I64(u as i64),
        Value::Bytes(b) => V::Text(String::from_utf8_lossy(&b).into_owned()),
        Value::Double(d) => V::Text(d.to_string()),
        Value::Float(d) => V::Text(d.to_string()),
        // NULL, dates and times: the transactions use none.
        _ => V::Null,
    }
}

impl Db for My {
    async fn connect(url: &str, prepare: bool) -> Result<My, String> {
        let opts = mysql_async::Opts::from_url(url).map_err(|e| format!("{url}: {e}"))?;
        let mut c = mysql_async::Conn::new(opts)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        let mut st = BTreeMap::new();
        if prepare {
            for (k, sql) in super::statements::SQL {
                let (q, order) = question_marks(sql);
                let s = c.prep(q).await.map_err(|e| format!("{k}: {e}"))?;
                st.insert(*k, (s, order));
            }
        }
        Ok(My {
            c,
            st,
            closed: false,
        })
    }

    async fn exec(&mut self, key: &'static str, p: &[V]) -> Result<Vec<Row>, DbError> {
        let (st, order) = self
            .st
            .get(key)
            .ok_or_else(|| DbError::shape("not prepared"))?;
        let params: Vec<mysql_async::Value> = order.iter().map(|&i| my_value(&p[i])).collect();
        let st = st.clone();
        match self.c.exec::<mysql_async::Row, _, _>(st, params).await {
            Ok(rows) => Ok(rows
                .into_iter()
                .map(|r| {
                    r.unwrap_raw()
                        .into_iter()
                        .map(|v| v.map(my_cell).unwrap_or(V::Null))
                        .collect()
                })
                .collect()),
            Err(e) => Err(self.err(e)),
        }
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self.c.query_drop(sql).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.err(e)),
        }
    }

    async fn scalar(&mut self, sql: &str) -> Result<i64, DbError> {
        match self.c.query_first::<mysql_async::Value, _>(sql).await {
            Ok(Some(v)) => my_cell(v).i64(),
            Ok(None) => Err(DbError::shape("no row")),
            Err(e) => Err(self.err(e)),
        }
    }

    async fn load(&mut self, ch: &CopyText) -> Result<(), String> {
        // LOAD DATA's default format is COPY's text format: tabs,
        // newlines, \N for NULL.
        // In pieces under the packet limit (any boundary will do).
        let data = bytes::Bytes::from(ch.buf.clone());
        let pieces: Vec<std::io::Result<bytes::Bytes>> = (0..data.len())
            .step_by(1 << 20)
            .map(|at| Ok(data.slice(at..(at + (1 << 20)).min(data.len()))))
            .collect();
        self.c.set_infile_handler(async move {
            Ok(futures::StreamExt::boxed(futures::stream::iter(pieces)))
        });
        self.c
            .query_drop(format!(
                "LOAD DATA LOCAL INFILE 'tpcc' INTO TABLE {}",
                ch.table
            ))
            .await
            .map_err(|e| format!("LOAD DATA {}: {e}", ch.table))
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn question_marks_keep_parameter_order() {
        let (q, order) =
            super::question_marks("SET a = a - $1, b = b + $1 WHERE x = $2 AND y = $10");
        assert_eq!(q, "SET a = a - ?, b = b + ? WHERE x = ? AND y = ?");
        assert_eq!(order, vec![0, 0, 1, 9]);
    }
}
