//! A shard on this host is reached over its Unix socket instead of
//! loopback TCP: the kernel's TCP path was half of a compute node's CPU on
//! a point select (RFC 2026-12-03-oltp-round-trips, "Unix sockets").
//!
//! The socket is the one the server itself names (`@@socket`), taken only
//! when a connection through it reaches the same server as the TCP
//! connection did: same port, data directory and host name. A path that
//! names another server on this host (a container's server published on a
//! loopback port, say) fails that check and the shard stays on TCP.

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};

/// What identifies a server: (port, data directory, host name).
type Identity = (u16, String, String);

const IDENTITY: &str = "SELECT @@port, @@datadir, @@hostname, @@socket";

/// The server's Unix socket, when `opts` names a loopback address and a
/// connection through the socket reaches the same server; `None` leaves
/// the shard on TCP (any failure here is only a lost optimisation).
pub async fn find(opts: &Opts) -> Option<String> {
    if !opts.addr_is_loopback() || opts.socket().is_some() {
        tracing::debug!("socket discovery: not a loopback address");
        return None;
    }
    let tcp = OptsBuilder::from_opts(opts.clone()).prefer_socket(false);
    let (tcp_id, socket) = identity(tcp).await?;
    let socket = socket.filter(|s| !s.is_empty())?;
    if !std::path::Path::new(&socket).exists() {
        return None;
    }
    let via_socket = OptsBuilder::from_opts(opts.clone())
        .prefer_socket(false)
        .socket(Some(socket.clone()));
    let (socket_id, _) = identity(via_socket).await?;
    if socket_id != tcp_id {
        tracing::info!(
            "{socket} is another server than {}:{}; staying on TCP",
            opts.ip_or_hostname(),
            opts.tcp_port()
        );
        return None;
    }
    Some(socket)
}

async fn identity(opts: OptsBuilder) -> Option<(Identity, Option<String>)> {
    let connect = Conn::new(opts);
    let mut conn = match tokio::time::timeout(std::time::Duration::from_secs(5), connect).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            tracing::debug!("socket discovery: {e}");
            return None;
        }
        Err(_) => return None,
    };
    type Row = (u16, String, String, Option<String>);
    let row: Option<Row> = match conn.query_first(IDENTITY).await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!("socket discovery: {e}");
            None
        }
    };
    let _ = conn.disconnect().await;
    let (port, datadir, host, socket) = row?;
    Some(((port, datadir, host), socket))
}
