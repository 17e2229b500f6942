//! The change feed of a move: the source shard's row-based binary log read
//! from the position of the copy's snapshot, reduced to the keys of the
//! moving tables' rows that changed since, each with the log position of
//! its last change. A catch-up pass opens a consistent snapshot of the
//! source with the log position it corresponds to, and re-reads from it
//! (in batches, without locks) the keys changed up to that position: the
//! snapshot holds every transaction logged before it. The feed never
//! applies row images itself.
//!
//! An XA branch is logged at `XA PREPARE` (its rows) and again at `XA
//! COMMIT` (no rows): its keys are kept by XA id, and its commit marks
//! them changed again at the commit's position, so a pass whose snapshot
//! came between the two (and read the rows as they were) is followed by
//! one that reads them committed. A branch rolled back costs a re-read.
//!
//! mysql_async's binlog stream (`COM_BINLOG_DUMP` by file and position)
//! reads MariaDB's log; MariaDB's own event types (GTID, checkpoints)
//! arrive as events mysql_common does not decode, and are skipped: only
//! table maps, row events and rotations matter here.

use std::collections::HashMap;
use std::sync::Arc;

use common::{Error, Result, ShardId};
use futures::StreamExt;
use mysql_async::binlog::events::{EventData, RowsEventData};
use mysql_async::prelude::*;
use mysql_async::{BinlogStreamRequest, Value};
use parking_lot::Mutex;
use storage_adapter::{map_error, ShardClient};

/// A position in a server's binary log.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct LogPos {
    pub file: String,
    pub pos: u64,
}

impl LogPos {
    /// `file:position`, as meta records a move's cut.
    pub fn to_text(&self) -> String {
        format!("{}:{}", self.file, self.pos)
    }

    /// The inverse of [`LogPos::to_text`].
    pub fn parse(s: &str) -> Option<LogPos> {
        let (file, pos) = s.rsplit_once(':')?;
        Some(LogPos {
            file: file.to_string(),
            pos: pos.parse().ok()?,
        })
        .filter(|p| !p.file.is_empty())
    }
}

/// Changed keys of one table: the key's text -> its values, the log
/// position of its last change, and whether that change was an XA
/// branch's commit (see [`Feed::take`]).
pub type KeySet = HashMap<String, (Vec<Value>, LogPos, bool)>;

/// The values of keys taken for a pass.
pub type Keys = Vec<Vec<Value>>;

/// A key found in an event: its text and values (`None`: a keyless table's
/// row).
type Found = (usize, Option<(String, Vec<Value>)>);

/// One moving table as the feed watches it.
pub struct Watched {
    pub database: String,
    pub table: String,
    /// Positions of the primary key's columns in the physical table
    /// (empty: no key, so any change marks the whole partition).
    pub key_columns: Vec<usize>,
}

/// What the feed found so far, per watched table.
#[derive(Default)]
pub struct Changes {
    /// Keys changed (key text -> key values), per watched table.
    pub keys: Vec<KeySet>,
    /// A keyless table changed: its partition is copied again.
    pub whole: Vec<bool>,
    /// The position of the last event read.
    pub read_to: LogPos,
    /// The feed stopped with this error.
    pub failed: Option<String>,
}

impl Changes {
    pub fn pending(&self) -> usize {
        self.keys.iter().map(|k| k.len()).sum::<usize>() + self.whole.iter().filter(|w| **w).count()
    }
}

/// A running feed; dropping it stops the stream.
pub struct Feed {
    pub changes: Arc<Mutex<Changes>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Feed {
    /// Starts reading `shard`'s binary log at `from`. `server_id` must be
    /// unique among the server's replicas and feeds.
    pub async fn start(
        shard: &ShardClient,
        server_id: u32,
        from: LogPos,
        watched: Vec<Watched>,
    ) -> Result<Feed> {
        let mut conn = shard.own_conn().await?;
        let id = shard.id;
        // MariaDB's own GTID events as they are (mysql_common skips them):
        // for a replica that does not say this, MariaDB rewrites them into
        // older events, and fails to for XA transactions.
        conn.query_drop("SET @mariadb_slave_capability = 4")
            .await
            .map_err(|e| map_error(id, e))?;
        let request = BinlogStreamRequest::new(server_id)
            .with_filename(from.file.as_bytes())
            .with_pos(from.pos);
        let stream = conn
            .get_binlog_stream(request)
            .await
            .map_err(|e| map_error(id, e))?;
        let changes = Arc::new(Mutex::new(Changes {
            keys: watched.iter().map(|_| HashMap::new()).collect(),
            whole: vec![false; watched.len()],
            read_to: from.clone(),
            failed: None,
        }));
        let task = tokio::spawn(read(stream, watched, changes.clone(), from.file, id));
        Ok(Feed { changes, task })
    }

    /// Takes the keys changed up to `upto` (all of them: `None`, under
    /// the fence) per table, and, under the fence, which keyless tables
    /// changed (before the fence those stay marked: a keyless table is
    /// copied again only under the fence).
    pub fn take(&self, upto: Option<&LogPos>) -> Result<(Vec<Keys>, Vec<bool>)> {
        let mut c = self.changes.lock();
        if let Some(e) = &c.failed {
            return Err(Error::internal(format!(
                "the move's binary log feed stopped: {e}"
            )));
        }
        let n = c.keys.len();
        let mut keys = Vec::with_capacity(n);
        for set in c.keys.iter_mut() {
            let taken: Vec<String> = set
                .iter()
                .filter(|(_, (_, at, _))| upto.is_none_or(|u| at <= u))
                .map(|(k, _)| k.clone())
                .collect();
            let mut values = Vec::with_capacity(taken.len());
            for k in taken {
                let Some((v, at, xa)) = set.remove(&k) else {
                    continue;
                };
                // A key an XA commit changed is read once more by the
                // next pass: that a snapshot whose log position follows
                // the `XA COMMIT` of a prepared branch also sees it
                // committed is not documented; one more read costs little.
                if xa && upto.is_some() {
                    set.insert(k, (v.clone(), at, false));
                }
                values.push(v);
            }
            keys.push(values);
        }
        let whole = match upto {
            None => std::mem::replace(&mut c.whole, vec![false; n]),
            Some(_) => vec![false; n],
        };
        Ok((keys, whole))
    }

    /// Waits until the feed has read past `pos` (the log's end when the
    /// fence closed), for at most `limit`.
    pub async fn wait_for(&self, pos: &LogPos, limit: std::time::Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            {
                let c = self.changes.lock();
                if let Some(e) = &c.failed {
                    return Err(Error::internal(format!(
                        "the move's binary log feed stopped: {e}"
                    )));
                }
                if c.read_to >= *pos {
                    return Ok(());
                }
            }
            if tokio::time::Instant::now() > deadline {
                return Err(Error::internal(format!(
                    "the move's binary log feed did not reach {}:{} within {} s",
                    pos.file,
                    pos.pos,
                    limit.as_secs()
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }
}

/// The feed's reading state between events.
struct Reader {
    watched: Vec<Watched>,
    changes: Arc<Mutex<Changes>>,
    file: String,
    shard: ShardId,
    /// Binary log table ids of the watched tables (they change as the
    /// server reopens tables).
    ids: HashMap<u64, usize>,
    /// Keys of the event group (transaction) being read: an XA branch's
    /// are kept when its prepare event ends the group.
    group: Vec<Found>,
    /// Keys of prepared XA branches, until their commit or rollback.
    xa_keys: HashMap<String, Vec<Found>>,
    /// The log's format description was read (events before it are
    /// parsed without knowing their checksum).
    described: bool,
}

async fn read(
    mut stream: mysql_async::BinlogStream,
    watched: Vec<Watched>,
    changes: Arc<Mutex<Changes>>,
    file: String,
    shard: ShardId,
) {
    let mut r = Reader {
        watched,
        changes,
        file,
        shard,
        ids: HashMap::new(),
        group: vec![],
        xa_keys: HashMap::new(),
        described: false,
    };
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                r.changes.lock().failed = Some(map_error(r.shard, e).to_string());
                return;
            }
        };
        if let Err(e) = r.on_event(&stream, &event) {
            r.changes.lock().failed = Some(e);
            return;
        }
    }
    r.changes.lock().failed = Some("the server closed the binary log stream".into());
}

impl Reader {
    fn on_event(
        &mut self,
        stream: &mysql_async::BinlogStream,
        event: &mysql_async::binlog::events::Event,
    ) -> std::result::Result<(), String> {
        let log_pos = event.header().log_pos() as u64;
        let mut found: Vec<Found> = vec![];
        let mut xa_commit = false;
        match event.read_data() {
            Ok(Some(EventData::RotateEvent(r))) => {
                // The server's first (fake) rotation comes before the
                // format description, so its name is read with the
                // event's checksum as part of it: the feed keeps the file
                // it asked for then.
                if self.described {
                    self.file = r.name().to_string();
                }
                self.changes.lock().read_to = LogPos {
                    file: self.file.clone(),
                    pos: r.position(),
                };
                return Ok(());
            }
            Ok(Some(EventData::TableMapEvent(t))) => {
                let (db, tbl) = (t.database_name(), t.table_name());
                match self
                    .watched
                    .iter()
                    .position(|w| w.database == db && w.table == tbl)
                {
                    Some(i) => self.ids.insert(t.table_id(), i),
                    None => self.ids.remove(&t.table_id()),
                };
            }
            Ok(Some(EventData::RowsEvent(rows))) => {
                if let Some(&i) = self.ids.get(&rows.table_id()) {
                    let w = &self.watched[i];
                    let keys = keys_of(stream, &rows, w)?;
                    if w.key_columns.is_empty() {
                        found.push((i, None));
                    } else {
                        found.extend(keys.into_iter().map(|k| (i, Some(k))));
                    }
                    self.group.extend(found.iter().cloned());
                }
            }
            Ok(Some(EventData::QueryEvent(q))) => match xa_statement(&q.query()) {
                Some(("COMMIT", xid)) => {
                    found = self.xa_keys.remove(&xid).unwrap_or_default();
                    xa_commit = true;
                }
                Some(("ROLLBACK", xid)) => {
                    self.xa_keys.remove(&xid);
                }
                _ => {}
            },
            Ok(Some(EventData::FormatDescriptionEvent(_))) => self.described = true,
            Ok(Some(EventData::XaPrepareLogEvent(data))) => {
                let keys = std::mem::take(&mut self.group);
                if let Some(xid) = prepared_xid(&data) {
                    self.xa_keys.entry(xid).or_default().extend(keys);
                }
            }
            Ok(Some(EventData::XidEvent(_))) => self.group.clear(),
            // MariaDB's GTID event (not decoded) starts each group.
            _ if event.header().event_type_raw() == MARIADB_GTID_EVENT => self.group.clear(),
            _ => {}
        }
        let at = LogPos {
            file: self.file.clone(),
            pos: log_pos,
        };
        let mut c = self.changes.lock();
        for (i, k) in found {
            match k {
                Some((text, values)) => {
                    c.keys[i].insert(text, (values, at.clone(), xa_commit));
                }
                None => c.whole[i] = true,
            }
        }
        // Artificial events (a rotation's, a heartbeat) carry position 0.
        if log_pos > 0 {
            c.read_to = at;
        }
        Ok(())
    }
}

/// MariaDB's GTID event type: the first event of every event group.
const MARIADB_GTID_EVENT: u8 = 162;

/// The XA id of a prepare event (one-phase flag, format id, gtrid and
/// bqual lengths, then both) as `XA COMMIT` prints it in the log:
/// `X'<gtrid hex>',X'<bqual hex>',<format id>` (upper case).
fn prepared_xid(data: &[u8]) -> Option<String> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
    };
    let (format, gtrid, bqual) = (word(1)?, word(5)? as usize, word(9)? as usize);
    let ids = data.get(13..13 + gtrid + bqual)?;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02X}")).collect::<String>();
    Some(format!(
        "X'{}',X'{}',{}",
        hex(&ids[..gtrid]),
        hex(&ids[gtrid..]),
        format
    ))
}

/// An XA statement as the binary log records it (`XA START X'..',X'..',1`,
/// `XA COMMIT ...`, `XA ROLLBACK ...`): its verb and its XA id's text
/// (upper case, without `ONE PHASE`).
fn xa_statement(query: &str) -> Option<(&'static str, String)> {
    let q = query.trim();
    q.get(..3).filter(|p| p.eq_ignore_ascii_case("XA "))?;
    let body = q[3..].trim_start();
    let verb = ["START", "BEGIN", "COMMIT", "ROLLBACK"]
        .into_iter()
        .find(|v| {
            body.get(..v.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(v))
        })?;
    let mut xid = body[verb.len()..].trim().to_ascii_uppercase();
    if xid.is_empty() {
        return None;
    }
    if let Some(s) = xid.strip_suffix("ONE PHASE") {
        xid = s.trim().to_string();
    }
    let verb = if verb == "BEGIN" { "START" } else { verb };
    Some((verb, xid.replace(' ', "")))
}

/// The keys of every row image (before and after) of a rows event.
fn keys_of(
    stream: &mysql_async::BinlogStream,
    rows: &RowsEventData<'_>,
    w: &Watched,
) -> std::result::Result<Vec<(String, Vec<Value>)>, String> {
    let tme = stream
        .get_tme(rows.table_id())
        .ok_or("a rows event without its table map")?;
    let mut out = vec![];
    for r in rows.rows(tme) {
        let (before, after) = r.map_err(|e| e.to_string())?;
        for image in [before, after].into_iter().flatten() {
            let mut values = Vec::with_capacity(w.key_columns.len());
            for &c in &w.key_columns {
                let v = match image.as_ref(c) {
                    Some(mysql_async::binlog::value::BinlogValue::Value(v)) => v.clone(),
                    _ => return Err("a key column without a plain value in the row image".into()),
                };
                values.push(v);
            }
            out.push((format!("{values:?}"), values));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{xa_statement, LogPos};

    #[test]
    fn log_positions_read_back_as_written() {
        let p = LogPos {
            file: "shard-bin.000012".into(),
            pos: 4711,
        };
        assert_eq!(LogPos::parse(&p.to_text()), Some(p));
        assert_eq!(LogPos::parse(""), None);
        assert_eq!(LogPos::parse(":12"), None);
        assert_eq!(LogPos::parse("f:x"), None);
    }

    #[test]
    fn xa_statements_name_their_branch() {
        assert_eq!(
            xa_statement("XA START X'7473',X'31',1"),
            Some(("START", "X'7473',X'31',1".into()))
        );
        assert_eq!(
            xa_statement("xa commit X'7473', x'31', 1"),
            Some(("COMMIT", "X'7473',X'31',1".into()))
        );
        assert_eq!(
            xa_statement("XA COMMIT X'7473',X'31',1 ONE PHASE"),
            Some(("COMMIT", "X'7473',X'31',1".into()))
        );
        assert_eq!(
            xa_statement("XA ROLLBACK X'7473',X'31',1"),
            Some(("ROLLBACK", "X'7473',X'31',1".into()))
        );
        assert_eq!(xa_statement("XA END X'7473',X'31',1"), None);
        assert_eq!(xa_statement("COMMIT"), None);
        assert_eq!(xa_statement("XA COMMIT"), None);
        assert_eq!(xa_statement("XA \u{e9}t\u{e9}"), None);
    }

    #[test]
    fn a_prepare_event_names_its_branch_as_xa_commit_prints_it() {
        let mut data = vec![0u8];
        data.extend(1u32.to_le_bytes());
        data.extend(2u32.to_le_bytes());
        data.extend(1u32.to_le_bytes());
        data.extend(b"ts1");
        let xid = super::prepared_xid(&data).expect("xid");
        assert_eq!(xid, "X'7473',X'31',1");
        assert_eq!(
            xa_statement("XA COMMIT X'7473',X'31',1"),
            Some(("COMMIT", xid))
        );
        assert_eq!(super::prepared_xid(&data[..10]), None);
    }
}
