//! Replicated MariaDB servers (a shard's or meta's; issue 34, RFC
//! 2026-12-04-replicas-and-failover): the administrative account's
//! connections, a promotion, the fence of an old primary, and which of
//! meta's servers is its primary.
//!
//! One promotion: the replica with the most of a failed primary's binary
//! log becomes the primary, the other replicas follow it.
//!
//! 1. Every replica must answer (with one of them missing, the one that
//!    holds a commit only it acknowledged could be the missing one: no
//!    promotion, the watcher tries again).
//! 2. Each stops receiving from the old primary (`STOP SLAVE IO_THREAD`):
//!    from here on no replica can acknowledge a commit to it, so a primary
//!    that was only silent (stopped, cut off) can commit nothing more.
//! 3. Each applies what it received (`MASTER_GTID_WAIT` on its
//!    `Gtid_IO_Pos`); the one whose `gtid_current_pos` is furthest is
//!    promoted: replication reset, semi-synchronous commits on, writable.
//! 4. The others follow it from their own GTID position.
//!
//! Every step is idempotent: a watcher that dies midway leaves replicas
//! stopped or already following the promoted one, and the next holder of
//! the lease runs the same steps to the same result.

use std::time::Duration;

use common::config::MysqlEndpoint;
use common::{Error, Result};
use mysql_async::prelude::*;
use mysql_async::Conn;

/// The administrative account on replicated servers (made by `cluster
/// up`): replication control, read-only switches, KILL; no data.
pub const ADMIN_USER: &str = "tessera_admin";

/// How far above a server's port its administrative port listens
/// (MariaDB's `extra_port`: one thread per connection, outside the thread
/// pool). A primary whose commits wait for an acknowledgement no replica
/// will give holds every worker of its pool, and a login on its service
/// port then waits for ever; the fence that would release those commits
/// logs in here (issue 34: a resumed old meta primary was never fenced).
pub const ADMIN_PORT_OFFSET: u16 = 500;

/// The administrative port of the server listening on `port` (None when it
/// would not fit: the server then has none).
pub fn admin_port(port: u16) -> Option<u16> {
    port.checked_add(ADMIN_PORT_OFFSET)
}

/// How long a replica may take to apply what it received.
const APPLY_TIMEOUT_SECS: u32 = 30;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

pub struct Promoted {
    pub server: (String, u16),
    pub gtid: String,
}

/// The account replicas log in to their primary with.
pub struct Login {
    pub user: String,
    pub password: String,
}

/// Promotes the furthest of `replicas` (`what` names the server set in
/// errors) and points the others at it.
pub async fn promote(
    what: &str,
    replicas: &[(String, u16)],
    admin_password: &str,
    login: &Login,
) -> Result<Promoted> {
    if replicas.is_empty() {
        return Err(Error::internal(format!("{what} has no replica to promote")));
    }
    let mut conns = Vec::with_capacity(replicas.len());
    for (host, port) in replicas {
        let c = admin_conn(host, *port, admin_password, CONNECT_TIMEOUT)
            .await
            .map_err(|e| {
                Error::internal(format!(
                    "{what}: replica {host}:{port} does not answer ({e}); a promotion needs every replica"
                ))
            })?;
        conns.push(c);
    }
    // "Not configured as a replica": it was promoted by a watcher that
    // died before recording it; nothing to stop.
    let _ = futures::future::join_all(conns.iter_mut().map(stop_receiving)).await;
    let mut positions = Vec::with_capacity(conns.len());
    let mut broken = vec![];
    for (i, (c, (host, port))) in conns.iter_mut().zip(replicas).enumerate() {
        match applied_position(c)
            .await
            .map_err(|e| Error::internal(format!("{what}: replica {host}:{port}: {e}")))?
        {
            Applied::Position(pos) => positions.push(pos),
            Applied::Broken { received, error } => {
                tracing::warn!(
                    "{what}: replica {host}:{port} stopped applying ({error}): not promoted"
                );
                broken.push((i, received));
                positions.push(String::new());
            }
        }
    }
    let best = furthest_healthy(&positions, &broken)
        .map_err(|e| Error::internal(format!("{what}: {e}")))?;
    let (host, port) = replicas[best].clone();
    let gtid = positions[best].clone();
    make_primary(&mut conns[best]).await?;
    for (i, c) in conns.iter_mut().enumerate() {
        if i != best {
            follow(c, &host, port, login).await?;
        }
    }
    for c in conns {
        let _ = c.disconnect().await;
    }
    Ok(Promoted {
        server: (host, port),
        gtid,
    })
}

/// Stops a replica's stream from its primary. Its receiving thread is
/// killed first: `STOP SLAVE` alone signals it and waits in steps of 2 s,
/// and a thread blocked reading from a silent (stopped, cut off) primary
/// notices only at the second step; a kill closes its socket at once.
async fn stop_receiving(c: &mut Conn) -> Result<()> {
    let ids: Vec<u64> = c
        .query("SELECT id FROM information_schema.processlist WHERE command = 'Slave_IO'")
        .await
        .map_err(me)?;
    for id in ids {
        let _ = c.query_drop(format!("KILL {id}")).await;
    }
    c.query_drop("STOP SLAVE IO_THREAD").await.map_err(me)
}

/// Waits until the replica applied everything it received, then answers
/// its GTID position.
async fn applied_position(c: &mut Conn) -> Result<Applied> {
    let status: Option<mysql_async::Row> = c.query_first("SHOW SLAVE STATUS").await.map_err(me)?;
    let get = |k: &str| -> Option<String> {
        status
            .as_ref()
            .and_then(|r| r.get_opt::<String, _>(k))
            .and_then(|r| r.ok())
    };
    let received = get("Gtid_IO_Pos");
    if get("Last_SQL_Errno").is_some_and(|e| e != "0") {
        return Ok(Applied::Broken {
            received: received.unwrap_or_default(),
            error: get("Last_SQL_Error").unwrap_or_default(),
        });
    }
    if let Some(received) = received.filter(|r| !r.is_empty()) {
        let waited: Option<i64> = c
            .exec_first(
                "SELECT MASTER_GTID_WAIT(?, ?)",
                (received.as_str(), APPLY_TIMEOUT_SECS),
            )
            .await
            .map_err(me)?;
        if waited != Some(0) {
            return Err(Error::internal(format!(
                "did not apply what it received ({received}) within {APPLY_TIMEOUT_SECS} s"
            )));
        }
    }
    let pos: Option<String> = c
        .query_first("SELECT @@GLOBAL.gtid_current_pos")
        .await
        .map_err(me)?;
    Ok(Applied::Position(pos.unwrap_or_default()))
}

/// Where a replica stands at a promotion.
enum Applied {
    /// It applied everything it received, up to this position.
    Position(String),
    /// Its applier stopped on an error: it cannot be promoted.
    Broken { received: String, error: String },
}

/// The furthest replica that applies (`broken`: the others, with what
/// they received); the last of equals. None may be promoted past a broken
/// replica that received more: that one may hold the only copy of an
/// acknowledged commit.
fn furthest_healthy(
    positions: &[String],
    broken: &[(usize, String)],
) -> std::result::Result<usize, String> {
    let best = (0..positions.len())
        .filter(|i| broken.iter().all(|(b, _)| b != i))
        .max_by_key(|i| domain0_seq(&positions[*i]))
        .ok_or("every replica's applier stopped on an error")?;
    let best_seq = domain0_seq(&positions[best]);
    if let Some((_, r)) = broken.iter().find(|(_, r)| domain0_seq(r) > best_seq) {
        return Err(format!(
            "a replica whose applier stopped received more ({r}) than the furthest that applies ({})",
            positions[best]
        ));
    }
    Ok(best)
}

/// The sequence number of domain 0 in a GTID position (`0-11-42,1-5-7`).
pub fn domain0_seq(pos: &str) -> Option<u64> {
    pos.split(',')
        .filter_map(|g| {
            let mut parts = g.trim().splitn(3, '-');
            let domain = parts.next()?;
            let _server = parts.next()?;
            let seq = parts.next()?;
            (domain == "0").then(|| seq.parse::<u64>().ok()).flatten()
        })
        .max()
}

async fn make_primary(c: &mut Conn) -> Result<()> {
    for sql in [
        "STOP SLAVE",
        "RESET SLAVE ALL",
        "SET GLOBAL rpl_semi_sync_master_enabled = ON",
        "SET GLOBAL read_only = OFF",
    ] {
        c.query_drop(sql).await.map_err(me)?;
    }
    Ok(())
}

async fn follow(c: &mut Conn, host: &str, port: u16, login: &Login) -> Result<()> {
    c.query_drop("STOP SLAVE").await.map_err(me)?;
    // CHANGE MASTER takes no parameters: literals, quoted as every value
    // sent to a shard is (the connection has NO_BACKSLASH_ESCAPES).
    c.query_drop(format!(
        "CHANGE MASTER TO MASTER_HOST = {}, MASTER_PORT = {port}, MASTER_USER = {}, \
         MASTER_PASSWORD = {}, MASTER_USE_GTID = slave_pos",
        quote_str(host),
        quote_str(&login.user),
        quote_str(&login.password)
    ))
    .await
    .map_err(me)?;
    c.query_drop("START SLAVE").await.map_err(me)
}

/// Keeps an old primary from serving: read-only, and every connection of
/// a client account killed (the failover account's own excepted).
///
/// Connections first: `SET GLOBAL read_only` waits for commits in
/// progress, and a commit waiting for an acknowledgement no replica will
/// give waits for ever. `KILL CONNECTION` (never `KILL QUERY`, which
/// answers such a commit with success) closes its client's connection, so
/// the commit is never reported done. Bounded: a server that stops
/// answering midway is left for the next round.
pub async fn fence(c: &mut Conn) -> Result<()> {
    let step = std::sync::atomic::AtomicUsize::new(0);
    match tokio::time::timeout(Duration::from_secs(3), fence_now(c, &step)).await {
        Ok(r) => r,
        Err(_) => Err(Error::internal(format!(
            "fencing took longer than 3 s ({})",
            FENCE_STEPS[step.load(std::sync::atomic::Ordering::Relaxed)]
        ))),
    }
}

/// The steps of [`fence_now`], named in its errors.
const FENCE_STEPS: [&str; 4] = [
    "killing clients",
    "semi-synchronous commits off",
    "read_only",
    "killing late clients",
];

async fn fence_now(c: &mut Conn, step: &std::sync::atomic::AtomicUsize) -> Result<()> {
    let at = |i: usize| step.store(i, std::sync::atomic::Ordering::Relaxed);
    kill_clients(c)
        .await
        .map_err(|e| Error::internal(format!("killing clients: {e}")))?;
    at(1);
    // A killed session's commit (or XA PREPARE) may still wait for an
    // acknowledgement, and `read_only` waits for it: with no client left
    // to tell, the wait is released (what it committed stays on this
    // server only, which rejoins only if its history did not diverge).
    c.query_drop("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        .await
        .map_err(|e| Error::internal(format!("semi-synchronous commits off: {e}")))?;
    at(2);
    c.query_drop("SET GLOBAL read_only = ON")
        .await
        .map_err(|e| Error::internal(format!("read_only: {e}")))?;
    at(3);
    // Any that connected meanwhile.
    kill_clients(c).await
}

async fn kill_clients(c: &mut Conn) -> Result<()> {
    let ids: Vec<u64> = c
        .exec(
            "SELECT id FROM information_schema.processlist WHERE user NOT IN (?, 'root', 'system user', 'event_scheduler') AND id <> CONNECTION_ID()",
            (ADMIN_USER,),
        )
        .await
        .map_err(me)?;
    for id in ids {
        let _ = c.query_drop(format!("KILL CONNECTION {id}")).await;
    }
    Ok(())
}

fn me(e: mysql_async::Error) -> Error {
    Error::internal(e.to_string())
}

/// Quotes a string literal for a connection in NO_BACKSLASH_ESCAPES mode
/// (as `storage_adapter::quote_str` does for shard sessions).
fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A connection of `user` to a MariaDB server over TCP, on its
/// administrative port ([`admin_port`]) when it has one, given up after
/// `timeout`; strings on it are quoted by doubling quotes only.
pub async fn conn_to(
    host: &str,
    port: u16,
    user: &str,
    password: &str,
    timeout: Duration,
) -> Result<Conn> {
    let opts = |port: u16| {
        mysql_async::OptsBuilder::default()
            .ip_or_hostname(host)
            .tcp_port(port)
            .user(Some(user))
            .pass(Some(password))
            .prefer_socket(false)
            .init(vec!["SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'"])
    };
    let deadline = tokio::time::Instant::now() + timeout;
    // The administrative port first; the service port when nothing
    // listens there (a server started by an older version).
    if let Some(admin) = admin_port(port) {
        match tokio::time::timeout_at(deadline, Conn::new(opts(admin))).await {
            Ok(Ok(c)) => return Ok(c),
            Ok(Err(mysql_async::Error::Io(_))) => {}
            Ok(Err(e)) => return Err(Error::internal(format!("{host}:{admin}: {e}"))),
            Err(_) => return Err(Error::internal(format!("{host}:{admin}: no answer"))),
        }
    }
    match tokio::time::timeout_at(deadline, Conn::new(opts(port))).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(Error::internal(format!("{host}:{port}: {e}"))),
        Err(_) => Err(Error::internal(format!("{host}:{port}: no answer"))),
    }
}

/// A connection of the administrative account.
pub async fn admin_conn(host: &str, port: u16, password: &str, timeout: Duration) -> Result<Conn> {
    conn_to(host, port, ADMIN_USER, password, timeout).await
}

/// What one meta server says of itself: whether it is read-only and the
/// primary its `meta_primary` row names, with that row's epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaClaim {
    pub server: MysqlEndpoint,
    pub read_only: bool,
    pub names: Option<(String, u16, u64)>,
}

impl MetaClaim {
    /// The epoch at which this server is the primary by its own record.
    pub fn own_epoch(&self) -> Option<u64> {
        self.names
            .as_ref()
            .filter(|(h, p, _)| *h == self.server.host && *p == self.server.port)
            .map(|(_, _, e)| *e)
    }
}

/// Asks every meta server (in parallel, each within `timeout`) what it
/// claims; servers that do not answer are left out.
pub async fn meta_claims(
    servers: &[MysqlEndpoint],
    database: &str,
    timeout: Duration,
) -> Vec<MetaClaim> {
    let sql = format!(
        "SELECT @@read_only, (SELECT CONCAT(host, ' ', port, ' ', epoch) FROM `{}`.meta_primary WHERE id = 1)",
        database.replace('`', "``")
    );
    let asks = servers.iter().map(|s| {
        let sql = sql.clone();
        async move {
            let mut c = conn_to(&s.host, s.port, &s.user, &s.password, timeout)
                .await
                .ok()?;
            let row: Option<(u8, Option<String>)> =
                tokio::time::timeout(timeout, c.query_first(sql))
                    .await
                    .ok()?
                    .ok()?;
            let _ = c.disconnect().await;
            let (read_only, names) = row?;
            let names = names.and_then(|n| {
                let mut p = n.split(' ');
                Some((
                    p.next()?.to_string(),
                    p.next()?.parse().ok()?,
                    p.next()?.parse().ok()?,
                ))
            });
            Some(MetaClaim {
                server: s.clone(),
                read_only: read_only != 0,
                names,
            })
        }
    });
    futures::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The meta primary among the claims: the server whose own record names
/// it at the highest epoch (only writable ones when `writable` is set).
pub fn primary_of(claims: &[MetaClaim], writable: bool) -> Option<(MysqlEndpoint, u64)> {
    claims
        .iter()
        .filter(|c| !writable || !c.read_only)
        .filter_map(|c| c.own_epoch().map(|e| (c.server.clone(), e)))
        .max_by_key(|(_, e)| *e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_replica_is_skipped_unless_it_received_more() {
        let p = vec!["".to_string(), "0-11-40".into(), "0-11-41".into()];
        assert_eq!(furthest_healthy(&p, &[(0, "0-11-41".into())]), Ok(2));
        assert!(furthest_healthy(&p, &[(0, "0-11-42".into())]).is_err());
        assert_eq!(furthest_healthy(&p, &[(2, "0-11-40".into())]), Ok(1));
        assert!(furthest_healthy(
            &p,
            &[(0, String::new()), (1, String::new()), (2, String::new())]
        )
        .is_err());
    }

    #[test]
    fn furthest_by_domain_zero() {
        assert_eq!(domain0_seq("0-11-42"), Some(42));
        assert_eq!(domain0_seq("1-5-700,0-12-43"), Some(43));
        assert_eq!(domain0_seq(""), None);
        let p = vec!["0-11-42".to_string(), "0-12-43".into(), "".into()];
        assert_eq!(furthest_healthy(&p, &[]), Ok(1));
        let p = vec!["".to_string(), "0-11-7".into()];
        assert_eq!(furthest_healthy(&p, &[]), Ok(1));
    }
}
