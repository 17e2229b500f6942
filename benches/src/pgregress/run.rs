//! Running the files: a fresh session per side for every file (as
//! pg_regress starts a psql per file) while the objects persist from file
//! to file; each statement is sent to both servers at once over the simple
//! protocol, with a time limit on each side.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::SinkExt;
use tokio_postgres::Client;

use super::cascade::Broken;
use super::report::{Counts, Difference, Known};
use super::script::{one_line, split, Env, Item};
use super::verdict::{compare, first_difference, shape, Verdict};
use crate::answer::{answer, connect, error_answer, Answer};

/// What every session gets before a file runs, on both sides (and
/// `statement_timeout`, the per-statement limit, so that a runaway
/// statement stops on the server too).
/// pg_regress's own session has TimeZone America/Los_Angeles (kept: the
/// files' timestamptz cases are written for it), DateStyle `Postgres, MDY`
/// and IntervalStyle `postgres_verbose` (not kept: they are output
/// formats, and a format Tessera lacks would make nearly every date or
/// interval differ for that one cause; the files that test the styles set
/// them themselves).
pub const SESSION_SETTINGS: [&str; 3] = [
    "SET TimeZone = 'America/Los_Angeles'",
    "SET DateStyle = 'ISO, MDY'",
    "SET IntervalStyle = 'postgres'",
];

/// The answer recorded when a side did not answer in time.
const TIMEOUT: &str = "timeout";
/// The code of an answer after which the connection was closed.
const CLOSED: &str = "closed";

/// One server's session.
pub struct Side {
    url: String,
    client: Client,
    limit: Duration,
}

impl Side {
    pub async fn open(url: &str, limit: Duration) -> Result<Side, String> {
        let client = connect(url).await?;
        let timeout = format!("SET statement_timeout = '{}ms'", limit.as_millis());
        for s in SESSION_SETTINGS.iter().copied().chain([timeout.as_str()]) {
            client
                .batch_execute(s)
                .await
                .map_err(|e| format!("{s}: {e}"))?;
        }
        Ok(Side {
            url: url.into(),
            client,
            limit,
        })
    }

    /// The item's answer. The server stops a statement at the limit
    /// (57014); a client-side limit a little later catches a server that
    /// does not: the statement is cancelled then, and a session that does
    /// not answer `SELECT 1`, or one that was lost, is replaced by a new
    /// one (its settings and transaction are gone, as after a psql
    /// reconnect).
    pub async fn run(&mut self, item: &Item) -> Answer {
        let limit = self.limit + Duration::from_secs(2);
        let answer = match tokio::time::timeout(limit, execute(&self.client, item)).await {
            Ok(a) => a,
            Err(_) => {
                let token = self.client.cancel_token();
                let _ = token.cancel_query(tokio_postgres::NoTls).await;
                let probe = self.client.simple_query("SELECT 1");
                if !matches!(
                    tokio::time::timeout(Duration::from_secs(3), probe).await,
                    Ok(Ok(_))
                ) {
                    self.reopen().await;
                }
                return Answer::Error {
                    code: TIMEOUT.into(),
                    message: format!("no answer in {} s", limit.as_secs()),
                };
            }
        };
        if self.client.is_closed() {
            self.reopen().await;
            return Answer::Error {
                code: CLOSED.into(),
                message: "the server closed the connection".into(),
            };
        }
        answer
    }

    async fn reopen(&mut self) {
        match Side::open(&self.url, self.limit).await {
            Ok(s) => *self = s,
            Err(e) => eprintln!("reconnecting to {}: {e}", self.url),
        }
    }
}

async fn execute(c: &Client, item: &Item) -> Answer {
    match item {
        Item::Sql { text, .. } => answer(c, text).await,
        Item::Copy { text, data, .. } => copy_in(c, text, data).await,
        Item::Meta { .. } => Answer::Rows {
            columns: vec![],
            rows: vec![],
            affected: None,
        },
    }
}

/// `COPY ... FROM STDIN` with the data sent in pieces of whole lines.
async fn copy_in(c: &Client, text: &str, data: &[u8]) -> Answer {
    let sink = match c.copy_in::<_, bytes::Bytes>(text).await {
        Ok(s) => s,
        Err(e) => return error_answer(&e),
    };
    futures::pin_mut!(sink);
    let mut rest = data;
    while !rest.is_empty() {
        let mut end = rest.len().min(64 * 1024);
        if let Some(nl) = rest[end..].iter().position(|b| *b == b'\n') {
            end += nl + 1;
        }
        let end = end.min(rest.len());
        if let Err(e) = sink.send(bytes::Bytes::copy_from_slice(&rest[..end])).await {
            return error_answer(&e);
        }
        rest = &rest[end..];
    }
    match sink.finish().await {
        Ok(n) => Answer::Rows {
            columns: vec![],
            rows: vec![],
            affected: Some(n),
        },
        Err(e) => error_answer(&e),
    }
}

/// What the runs share: where the files are, how to reach the servers,
/// the known list and the objects missing on Tessera so far.
pub struct Runner {
    pub regress: PathBuf,
    pub env: Env,
    pub postgres_url: String,
    pub tessera_url: String,
    pub limit: Duration,
    pub known: Known,
    pub verbose: bool,
    pub broken: Broken,
    /// Cascaded statements by their cause.
    pub cascades: BTreeMap<String, usize>,
}

impl Runner {
    /// Runs `sql/<file>.sql`; the counts and the differing statements.
    pub async fn file(&mut self, file: &str) -> Result<(Counts, Vec<Difference>), String> {
        let start = Instant::now();
        let path = self.regress.join("sql").join(format!("{file}.sql"));
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let items = split(&text, &self.env, &self.regress)?;
        let mut pg = Side::open(&self.postgres_url, self.limit).await?;
        let mut ts = Side::open(&self.tessera_url, self.limit).await?;
        let mut counts = Counts::default();
        let mut diffs = vec![];
        for item in &items {
            let sql = match item {
                Item::Meta { .. } => {
                    counts.meta += 1;
                    continue;
                }
                Item::Sql { text, .. } | Item::Copy { text, .. } => text,
            };
            let t0 = Instant::now();
            let (pa, ta) = tokio::join!(pg.run(item), ts.run(item));
            let took = t0.elapsed().as_secs_f64();
            if took > 2.0 {
                println!("slow [{file}:{}] {took:.1} s", item.line());
            }
            let timed_out = |a: &Answer| matches!(a.code(), Some(TIMEOUT | "57014"));
            if timed_out(&pa) || timed_out(&ta) {
                counts.timeouts += 1;
            }
            let shape = shape(sql);
            let mut v = compare(&pa, &ta, &shape);
            if v == Verdict::Differ {
                if let Some(cause) = self.broken.explains(sql, &pa, &ta) {
                    v = Verdict::Cascade;
                    *self.cascades.entry(cause).or_default() += 1;
                }
            }
            let at = format!("{file}:{} {}", item.line(), clip_to(&one_line(sql), 60));
            self.broken.update(sql, &pa, &ta, v, &at);
            counts.count(v);
            if self.verbose && v != Verdict::Differ {
                println!("{v:?} [{file}:{}] {}", item.line(), clip(&one_line(sql)));
                if !matches!(v, Verdict::Same | Verdict::Plan) {
                    println!("    tessera: {}", clip(&ta.short()));
                }
            }
            if v != Verdict::Differ {
                continue;
            }
            let statement = one_line(sql);
            // A connection Tessera closed (a node that panicked) is never
            // an accepted difference.
            let listed = ta.code() != Some(CLOSED)
                && self.known.contains(&(file.to_string(), statement.clone()));
            if !listed {
                counts.unlisted += 1;
            }
            let d = Difference {
                file: file.into(),
                line: item.line(),
                statement,
                postgres: pa.short(),
                tessera: ta.short(),
                first_difference: first_difference(&pa, &ta, &shape),
                listed,
            };
            // A listed difference takes one line (all of it with
            // --verbose); a new one is shown in full.
            if listed && !self.verbose {
                println!("known [{file}:{}] {}", d.line, clip_to(&d.statement, 120));
            } else {
                println!(
                    "{} [{file}:{}] {}\n    postgres: {}\n    tessera:  {}",
                    if listed { "known" } else { "DIFFER" },
                    d.line,
                    clip(&d.statement),
                    clip(&d.postgres),
                    clip(&d.tessera)
                );
                if let Some(f) = &d.first_difference {
                    println!("    first difference: {}", clip(f));
                }
            }
            diffs.push(d);
        }
        self.broken.end_session();
        counts.seconds = start.elapsed().as_secs_f64();
        Ok((counts, diffs))
    }
}

/// A long text cut for the log (the JSON report has it whole).
fn clip(s: &str) -> String {
    clip_to(s, 300)
}

fn clip_to(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{} ...", &s[..i]),
        None => s.to_string(),
    }
}
