//! A raw PostgreSQL wire client for tests that must send what no driver
//! sends: malformed Bind messages, random message sequences (the wire
//! fuzzer), cancels at chosen moments. Frames are built and read with
//! `postgres-protocol`, the codec under tokio-postgres; SCRAM-SHA-256 with
//! its `ScramSha256`.

use bytes::BytesMut;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What the server answered, reduced to what tests compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Ready,
    Error(String),
    Row,
    Other,
}

pub struct WireClient {
    stream: TcpStream,
    buf: BytesMut,
}

fn io_err(m: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(m.to_string())
}

/// SQLSTATE of an ErrorResponse body.
fn error_code(body: &postgres_protocol::message::backend::ErrorResponseBody) -> String {
    use fallible_iterator::FallibleIterator;
    let mut fields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        if f.type_() == b'C' {
            return String::from_utf8_lossy(f.value_bytes()).to_string();
        }
    }
    "?????".into()
}

impl WireClient {
    /// Connects and logs in with SCRAM-SHA-256.
    pub async fn connect(port: u16, user: &str, password: &str) -> std::io::Result<WireClient> {
        let stream = TcpStream::connect(("127.0.0.1", port)).await?;
        let mut c = WireClient {
            stream,
            buf: BytesMut::new(),
        };
        let mut out = BytesMut::new();
        frontend::startup_message([("user", user), ("database", "tessera")], &mut out)?;
        c.stream.write_all(&out).await?;
        let mut scram = None;
        loop {
            match c.next().await? {
                Message::AuthenticationSasl(_) => {
                    let s = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
                    let mut out = BytesMut::new();
                    frontend::sasl_initial_response("SCRAM-SHA-256", s.message(), &mut out)?;
                    c.stream.write_all(&out).await?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(b) => {
                    let s = scram.as_mut().ok_or_else(|| io_err("SASL out of order"))?;
                    s.update(b.data())?;
                    let mut out = BytesMut::new();
                    frontend::sasl_response(s.message(), &mut out)?;
                    c.stream.write_all(&out).await?;
                }
                Message::AuthenticationSaslFinal(b) => {
                    let s = scram.as_mut().ok_or_else(|| io_err("SASL out of order"))?;
                    s.finish(b.data())?;
                }
                Message::ReadyForQuery(_) => return Ok(c),
                Message::ErrorResponse(e) => {
                    return Err(io_err(format!("login failed: {}", error_code(&e))))
                }
                _ => {}
            }
        }
    }

    /// Reads one backend message (30 s at most).
    async fn next(&mut self) -> std::io::Result<Message> {
        loop {
            if let Some(m) = Message::parse(&mut self.buf)? {
                return Ok(m);
            }
            let mut chunk = [0u8; 8192];
            let n = tokio::time::timeout(Duration::from_secs(30), self.stream.read(&mut chunk))
                .await
                .map_err(|_| io_err("no answer within 30 s"))??;
            if n == 0 {
                return Err(io_err("connection closed"));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// Reads until ReadyForQuery, returning every reply.
    pub async fn until_ready(&mut self) -> std::io::Result<Vec<Reply>> {
        let mut out = vec![];
        loop {
            let r = match self.next().await? {
                Message::ReadyForQuery(_) => {
                    out.push(Reply::Ready);
                    return Ok(out);
                }
                Message::ErrorResponse(e) => Reply::Error(error_code(&e)),
                Message::DataRow(_) => Reply::Row,
                _ => Reply::Other,
            };
            out.push(r);
        }
    }

    /// A simple-protocol query; its replies.
    pub async fn query(&mut self, sql: &str) -> std::io::Result<Vec<Reply>> {
        let mut out = BytesMut::new();
        frontend::query(sql, &mut out)?;
        self.send(&out).await?;
        self.until_ready().await
    }
}

/// A Bind of the unnamed statement to the unnamed portal, with these
/// format codes and raw parameter bytes (`None`: NULL), whatever their
/// counts (the point is to send what drivers would not).
pub fn bind(
    param_formats: &[i16],
    params: &[Option<&[u8]>],
    result_formats: &[i16],
    out: &mut BytesMut,
) -> std::io::Result<()> {
    frontend::bind(
        "",
        "",
        param_formats.iter().copied(),
        params.iter(),
        |p, buf| match p {
            Some(v) => {
                buf.extend_from_slice(v);
                Ok(postgres_protocol::IsNull::No)
            }
            None => Ok(postgres_protocol::IsNull::Yes),
        },
        result_formats.iter().copied(),
        out,
    )
    .map_err(|e| match e {
        frontend::BindError::Conversion(e) => io_err(e),
        frontend::BindError::Serialization(e) => e,
    })
}

/// Parse + Bind with the given format codes + Execute + Sync as bytes.
pub fn bind_sequence(
    sql: &str,
    param_formats: &[i16],
    params: &[Option<&[u8]>],
    result_formats: &[i16],
) -> std::io::Result<BytesMut> {
    let mut out = BytesMut::new();
    frontend::parse("", sql, std::iter::empty(), &mut out)?;
    bind(param_formats, params, result_formats, &mut out)?;
    frontend::execute("", 0, &mut out)?;
    frontend::sync(&mut out);
    Ok(out)
}

/// Seeded random source for the fuzzer (no dependency on a global RNG, so
/// a failing seed reproduces).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Statements the fuzzer starts from; each is then mutated.
pub const SEEDS: &[&str] = &[
    "SELECT id, v FROM fz WHERE id = $1",
    "SELECT count(*) FROM fz WHERE id IN ($1, $2, 3)",
    "SELECT v, length(v) FROM fz WHERE v > $1 ORDER BY 1 LIMIT 5",
    "INSERT INTO fz VALUES ($1, $2)",
    "UPDATE fz SET v = $2 WHERE id = $1",
    "DELETE FROM fz WHERE id = $1 AND v = 'x'",
    "SELECT * FROM fz a JOIN fz b ON a.id = b.id WHERE a.id BETWEEN $1 AND $2",
    "SELECT $1::int + 1",
    "SELECT 'é''\\' || v FROM fz WHERE id = 1",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT s",
    "SET search_path = public",
    "SHOW transaction_isolation",
    "COPY fz TO STDOUT",
    "SELECT * FROM fz FOR UPDATE",
    "SELECT sum(id), max(v) FROM fz GROUP BY v HAVING count(*) > $1",
];

const FRAGMENTS: &[&str] = &[
    "'",
    "\"",
    "\\",
    "$1",
    "$99999",
    "(",
    ")",
    ";",
    "--",
    "/*",
    "*/",
    " OR ",
    " AND ",
    "NULL",
    "é",
    "😀",
    "\u{0}",
    "9223372036854775808",
    "-",
    "::",
    "E'\\'",
    "[",
    "]",
    ",",
    " IN (",
    "SELECT",
    "WHERE",
    "1e400",
    "NaN",
    "'\\x41'",
    " FROM ",
    "*",
];

/// One mutated statement: a seed with fragments inserted, spans removed or
/// repeated.
pub fn mutate(rng: &mut Rng) -> String {
    let mut s: Vec<char> = rng.pick(SEEDS).chars().collect();
    for _ in 0..rng.below(4) {
        let at = rng.below(s.len() + 1);
        match rng.below(3) {
            0 => {
                let f: Vec<char> = rng.pick(FRAGMENTS).chars().collect();
                s.splice(at..at, f);
            }
            1 if !s.is_empty() => {
                let end = (at + rng.below(8)).min(s.len());
                s.drain(at.min(end)..end);
            }
            _ => {
                let end = (at + rng.below(12)).min(s.len());
                let span: Vec<char> = s[at.min(end)..end].to_vec();
                for _ in 0..rng.below(50) {
                    s.splice(at..at, span.clone());
                }
            }
        }
    }
    s.into_iter().collect()
}

/// Random parameter bytes: text, binary-looking, huge, empty or NULL.
pub fn random_param(rng: &mut Rng) -> Option<Vec<u8>> {
    match rng.below(7) {
        0 => None,
        1 => Some(vec![]),
        2 => Some((rng.next_u64() as i64).to_string().into_bytes()),
        3 => Some((0..rng.below(16)).map(|_| rng.next_u64() as u8).collect()),
        4 => Some(rng.pick(FRAGMENTS).as_bytes().to_vec()),
        5 => Some((rng.next_u64() as u32).to_be_bytes().to_vec()),
        _ => Some(vec![b'9'; rng.below(5000)]),
    }
}

/// Raw frames a driver would never send: truncated, wrong lengths, random
/// type bytes.
pub fn random_frame(rng: &mut Rng) -> Vec<u8> {
    let ty = *rng.pick(b"PBDESHCdcfXQp\x00\xff");
    let len = match rng.below(4) {
        0 => 4,
        1 => rng.below(64) as i32 + 4,
        2 => -1,
        _ => rng.next_u64() as i32,
    };
    let mut v = vec![ty];
    v.extend_from_slice(&len.to_be_bytes());
    for _ in 0..rng.below(32) {
        v.push(rng.next_u64() as u8);
    }
    v
}
