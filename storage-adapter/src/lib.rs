//! Storage adapter: everything Tessera knows about talking MySQL to a shard,
//! and nothing about the catalog. A [`ShardClient`] owns a bounded
//! `mysql_async` pool for one MariaDB server with the session settings that
//! make MariaDB evaluate SQL like PostgreSQL where it matters (ANSI quotes,
//! no backslash escapes, strict mode, UTC). This module also converts values
//! between [`common::Datum`] and MySQL values and maps MariaDB errors to
//! SQLSTATEs. See `ARCHITECTURE.md`.

pub mod convert;
pub mod local_socket;

use std::sync::Arc;
use std::time::Duration;

use common::config::MysqlEndpoint;
use common::{Error, Result, ShardId};
use mysql_async::{Conn, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};
use parking_lot::RwLock;

pub use mysql_async;

/// Session settings every shard connection runs once, at connect.
pub const SESSION_INIT: &[&str] = &[
    "SET SESSION sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES,STRICT_ALL_TABLES,PIPES_AS_CONCAT,ERROR_FOR_DIVISION_BY_ZERO,NO_ZERO_DATE,NO_ZERO_IN_DATE,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION'",
    "SET SESSION time_zone = '+00:00'",
    "SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin",
    "SET SESSION div_precision_increment = 20",
    // PostgreSQL's default; a transaction asking for another level sets it
    // with its XA START.
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
];

/// Longest wait for a pooled shard connection.
pub const POOL_WAIT: Duration = Duration::from_secs(10);

/// Handle to one shard: a bounded connection pool. Clones share it.
#[derive(Clone)]
pub struct ShardClient {
    pub id: ShardId,
    inner: Arc<Inner>,
}

struct Inner {
    /// Over TCP, or over the server's Unix socket once
    /// [`ShardClient::use_local_socket`] found it.
    transport: RwLock<Transport>,
    /// The TCP pool's options, to go back to TCP if the socket fails.
    tcp_opts: Opts,
    /// The server this pool connects to.
    host: String,
    port: u16,
}

struct Transport {
    pool: Pool,
    /// Whether `pool` connects over the server's Unix socket.
    socket: bool,
}

impl ShardClient {
    pub fn new(id: ShardId, endpoint: &MysqlEndpoint, max_conns: usize) -> Result<Self> {
        let opts = Opts::from_url(&endpoint.url(None)).map_err(|e| Error::ShardUnavailable {
            shard: id.to_string(),
            message: e.to_string(),
        })?;
        let constraints = PoolConstraints::new(0, max_conns.max(1)).unwrap_or_default();
        let opts: Opts = OptsBuilder::from_opts(opts)
            .pool_opts(
                PoolOpts::default()
                    .with_constraints(constraints)
                    // Connections come back clean (every transaction ended by
                    // us), so no COM_RESET_CONNECTION per checkout: it would
                    // also drop the server-side statement cache.
                    .with_reset_connection(false)
                    .with_inactive_connection_ttl(Duration::from_secs(60)),
            )
            .stmt_cache_size(256)
            // The socket is chosen by `use_local_socket`, checked to be
            // the same server's; mysql_async's own switch does not check.
            .prefer_socket(false)
            .tcp_nodelay(true)
            // UPDATE reports matched rows, as PostgreSQL does.
            .client_found_rows(true)
            .init(SESSION_INIT.to_vec())
            .into();
        Ok(ShardClient {
            id,
            inner: Arc::new(Inner {
                transport: RwLock::new(Transport {
                    pool: Pool::new(opts.clone()),
                    socket: false,
                }),
                tcp_opts: opts,
                host: endpoint.host.clone(),
                port: endpoint.port,
            }),
        })
    }

    /// The server this pool connects to (host, port).
    pub fn server(&self) -> (&str, u16) {
        (&self.inner.host, self.inner.port)
    }

    /// Whether connections go over the server's Unix socket.
    pub fn on_local_socket(&self) -> bool {
        self.inner.transport.read().socket
    }

    /// Moves the pool to the server's Unix socket when the server is on
    /// this host ([`local_socket::find`]); connections already lent out
    /// finish on TCP. Answers whether it moved.
    pub async fn use_local_socket(&self) -> bool {
        let Some(path) = local_socket::find(&self.inner.tcp_opts).await else {
            return false;
        };
        let opts = OptsBuilder::from_opts(self.inner.tcp_opts.clone()).socket(Some(path.clone()));
        self.swap(Transport {
            pool: Pool::new(opts),
            socket: true,
        });
        tracing::info!("{} is reached over {path}", self.id);
        true
    }

    fn swap(&self, transport: Transport) {
        let old = std::mem::replace(&mut *self.inner.transport.write(), transport);
        close_when_back(old.pool);
    }

    /// Borrows a connection. Waiting is bounded: sessions in transactions
    /// hold connections to several shards, so a saturated pool must not
    /// wait forever (that could deadlock two transactions on pool slots).
    /// A socket that stops answering sends the shard back to TCP.
    pub async fn conn(&self) -> Result<Conn> {
        match self.get_conn().await {
            Err(Error::ShardUnavailable { .. }) if self.on_local_socket() => {
                self.back_to_tcp();
                self.get_conn().await
            }
            r => r,
        }
    }

    /// The socket failed (the server restarted, say): TCP from now on, and
    /// the socket again once a check finds it (one checker at a time).
    fn back_to_tcp(&self) {
        {
            let mut t = self.inner.transport.write();
            if !t.socket {
                return;
            }
            let tcp = Transport {
                pool: Pool::new(self.inner.tcp_opts.clone()),
                socket: false,
            };
            close_when_back(std::mem::replace(&mut *t, tcp).pool);
        }
        tracing::warn!("{}: its Unix socket failed; back to TCP", self.id);
        let client = self.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for attempt in 1..=20u64 {
                    tokio::time::sleep(Duration::from_secs(attempt.min(10))).await;
                    if client.on_local_socket() || client.use_local_socket().await {
                        return;
                    }
                }
            });
        }
    }

    async fn get_conn(&self) -> Result<Conn> {
        let get = self.inner.transport.read().pool.get_conn();
        match tokio::time::timeout(POOL_WAIT, get).await {
            Ok(r) => r.map_err(|e| map_error(self.id, e)),
            Err(_) => Err(Error::Sql {
                state: common::SqlState::SERIALIZATION_FAILURE,
                message: format!(
                    "no connection to {} became free within {} s; retry the transaction",
                    self.id,
                    POOL_WAIT.as_secs()
                ),
            }),
        }
    }

    /// A connection of its own, outside the pool, over TCP with the
    /// pool's session settings: for work that changes what a connection is
    /// (a binary log stream) or holds it for long (a partition move's
    /// fence), so it never goes back to the pool.
    pub async fn own_conn(&self) -> Result<Conn> {
        Conn::new(self.inner.tcp_opts.clone())
            .await
            .map_err(|e| map_error(self.id, e))
    }

    pub async fn disconnect(self) {
        let pool = self.inner.transport.read().pool.clone();
        let _ = pool.disconnect().await;
    }
}

/// Closes a pool's connections as they come back to it.
fn close_when_back(pool: Pool) {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            let _ = pool.disconnect().await;
        });
    }
}

/// Maps a mysql_async error to a Tessera error, keeping MariaDB's error
/// number so the SQLSTATE can be derived from it. Never leaks addresses.
pub fn map_error(shard: ShardId, e: mysql_async::Error) -> Error {
    match e {
        mysql_async::Error::Server(se) => Error::Shard {
            code: se.code,
            message: se.message,
        },
        mysql_async::Error::Io(_) | mysql_async::Error::Driver(_) => Error::ShardUnavailable {
            shard: shard.to_string(),
            message: "connection failed".into(),
        },
        other => Error::Execution {
            message: format!("{shard}: {other}"),
        },
    }
}

/// Runs a statement that returns no rows: with parameters as a prepared
/// statement (cached per connection), without as one text-protocol query
/// (no prepare round trip, no cache entry for a text seen once).
pub async fn exec_drop(
    conn: &mut Conn,
    sql: &str,
    params: Vec<mysql_async::Value>,
) -> std::result::Result<(), mysql_async::Error> {
    use mysql_async::prelude::Queryable;
    if params.is_empty() {
        conn.query_drop(sql).await
    } else {
        conn.exec_drop(sql, params).await
    }
}

/// `map_error` for the failure of running `sql`: MariaDB reports a
/// `NOWAIT` lock that is not available as a lock wait timeout (1205),
/// PostgreSQL as 55P03.
pub fn map_statement_error(shard: ShardId, e: mysql_async::Error, sql: &str) -> Error {
    match map_error(shard, e) {
        Error::Shard { code: 1205, .. } if sql.ends_with(" NOWAIT") => Error::LockNotAvailable,
        other => other,
    }
}

/// Quotes an identifier for a shard session in ANSI_QUOTES mode.
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Quotes a string literal for a shard session in NO_BACKSLASH_ESCAPES mode:
/// only the quote character needs doubling.
pub fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Quotes an identifier with backticks, for statements that must work
/// whatever the session's sql_mode (database creation at bootstrap).
pub fn quote_ident_backtick(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_str("it's \\n"), "'it''s \\n'");
    }
}
