//! Where clients connect: the TCP listener, and optionally a Unix-domain
//! socket named as PostgreSQL names its own (`<dir>/.s.PGSQL.<port>`), so
//! `psql -h <dir> -p <port>` and a proxy on the same host (the local
//! cluster's haproxy) reach the node without loopback TCP.
//!
//! A connection through a proxy starts as its client started it: libpq
//! sends an SSLRequest (or a GSSENCRequest) before its startup message
//! over TCP. pgwire answers those only on TCP sockets, so on the Unix
//! socket the node answers them itself ('N': no encryption, as it does on
//! TCP) before pgwire reads the startup message.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};

/// One accepted client connection.
pub(super) enum Accepted {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Accepted {
    /// Writes `bytes` and closes the connection (a refusal before any
    /// protocol handling).
    pub(super) async fn refuse(self, bytes: Vec<u8>) {
        async fn refuse_on(mut s: impl tokio::io::AsyncWrite + Unpin, bytes: &[u8]) {
            let _ = s.write_all(bytes).await;
            let _ = s.shutdown().await;
        }
        match self {
            Accepted::Tcp(s) => refuse_on(s, &bytes).await,
            Accepted::Unix(s) => refuse_on(s, &bytes).await,
        }
    }
}

/// The node's listeners.
pub(super) struct Listeners {
    tcp: TcpListener,
    unix: Option<UnixListener>,
}

/// PostgreSQL's name for the socket of `port` in `dir`.
pub fn socket_path(dir: &Path, port: u16) -> PathBuf {
    dir.join(format!(".s.PGSQL.{port}"))
}

impl Listeners {
    /// Binds `listen` (TCP) and, with `unix_dir`, the Unix socket of the
    /// same port in that directory. A socket file left by an earlier run
    /// is replaced: the TCP port, bound first, is this node's alone.
    pub(super) async fn bind(listen: &str, unix_dir: Option<&Path>) -> io::Result<Listeners> {
        let tcp = TcpListener::bind(listen).await?;
        let unix = match unix_dir {
            Some(dir) => {
                let path = socket_path(dir, tcp.local_addr()?.port());
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
                let l = UnixListener::bind(&path)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                tracing::info!("listening on {}", path.display());
                Some(l)
            }
            None => None,
        };
        Ok(Listeners { tcp, unix })
    }

    /// The next connection on either listener.
    pub(super) async fn accept(&self) -> io::Result<Accepted> {
        let unix = async {
            match &self.unix {
                Some(l) => l.accept().await.map(|(s, _)| s),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = self.tcp.accept() => r.map(|(s, _)| {
                let _ = s.set_nodelay(true);
                Accepted::Tcp(s)
            }),
            r = unix => r.map(Accepted::Unix),
        }
    }
}

/// SSLRequest and GSSENCRequest codes (PostgreSQL's protocol).
const SSL_REQUEST: u32 = 80877103;
const GSSENC_REQUEST: u32 = 80877104;

/// How long a Unix-socket client may take to send its first 8 bytes.
const FIRST_BYTES_LIMIT: Duration = Duration::from_secs(10);

/// Answers 'N' to each encryption request a client sends first on the
/// Unix socket, leaving the startup message unread for pgwire. The first
/// 8 bytes are peeked, never consumed, unless they are such a request.
pub(super) async fn refuse_encryption(s: &mut UnixStream) -> io::Result<()> {
    let start = Instant::now();
    loop {
        let head = peek_head(s, start).await?;
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let code = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if len != 8 || (code != SSL_REQUEST && code != GSSENC_REQUEST) {
            return Ok(());
        }
        let mut request = [0u8; 8];
        tokio::io::AsyncReadExt::read_exact(s, &mut request).await?;
        s.write_all(b"N").await?;
    }
}

/// The first 8 bytes waiting on `s`, without reading them.
async fn peek_head(s: &UnixStream, start: Instant) -> io::Result<[u8; 8]> {
    loop {
        s.readable().await?;
        let mut head = [0u8; 8];
        let got = s.try_io(tokio::io::Interest::READABLE, || {
            let flags = rustix::net::RecvFlags::PEEK | rustix::net::RecvFlags::DONTWAIT;
            let (n, _) = rustix::net::recv(s, &mut head[..], flags)?;
            Ok(n)
        });
        match got {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(8) => return Ok(head),
            // Fewer than 8 bytes so far: the rest is on its way.
            Ok(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        if start.elapsed() > FIRST_BYTES_LIMIT {
            return Err(io::ErrorKind::TimedOut.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn request(code: u32) -> Vec<u8> {
        let mut r = 8u32.to_be_bytes().to_vec();
        r.extend_from_slice(&code.to_be_bytes());
        r
    }

    #[tokio::test]
    async fn encryption_requests_are_refused_and_the_startup_left_unread() {
        let (mut node, mut client) = UnixStream::pair().unwrap();
        let startup = [0, 0, 0, 9, 0, 3, 0, 0, 0];
        let mut sent = request(SSL_REQUEST);
        sent.extend(request(GSSENC_REQUEST));
        client.write_all(&sent).await.unwrap();
        // The startup message arrives in two pieces, the first shorter
        // than the 8 bytes peeked.
        let late = tokio::spawn(async move {
            let mut answers = [0u8; 2];
            client.read_exact(&mut answers).await.unwrap();
            client.write_all(&startup[..3]).await.unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
            client.write_all(&startup[3..]).await.unwrap();
            (answers, client)
        });
        refuse_encryption(&mut node).await.unwrap();
        let (answers, _client) = late.await.unwrap();
        assert_eq!(&answers, b"NN");
        let mut left = [0u8; 9];
        node.read_exact(&mut left).await.unwrap();
        assert_eq!(left, startup, "the startup message is pgwire's to read");
    }

    #[tokio::test]
    async fn a_client_that_leaves_at_once_ends_the_connection() {
        let (mut node, client) = UnixStream::pair().unwrap();
        drop(client);
        let e = refuse_encryption(&mut node).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
