//! The change feed of a move: the source shard's row-based binary log read
//! from the position of the copy's snapshot, reduced to the keys of the
//! moving tables' rows that changed since. The catch-up re-reads those
//! keys from the source (a locking read, so a change whose event is in the
//! log but whose transaction has not committed in InnoDB yet is waited
//! for) and writes what it finds to the target: the feed never applies row
//! images itself, so an XA branch prepared (and logged) but later rolled
//! back costs a re-read, never a wrong row.
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

/// Changed keys of one table: the key's text -> its values.
pub type KeySet = HashMap<String, Vec<Value>>;

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

    /// Takes the keys found so far (the feed keeps its position), and,
    /// `fenced`, which keyless tables changed (before the fence those stay
    /// marked: a keyless table is copied again only under the fence).
    pub fn take(&self, fenced: bool) -> Result<(Vec<KeySet>, Vec<bool>)> {
        let mut c = self.changes.lock();
        if let Some(e) = &c.failed {
            return Err(Error::internal(format!(
                "the move's binary log feed stopped: {e}"
            )));
        }
        let n = c.keys.len();
        let keys = std::mem::replace(&mut c.keys, (0..n).map(|_| HashMap::new()).collect());
        let whole = if fenced {
            std::mem::replace(&mut c.whole, vec![false; n])
        } else {
            vec![false; n]
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

async fn read(
    mut stream: mysql_async::BinlogStream,
    watched: Vec<Watched>,
    changes: Arc<Mutex<Changes>>,
    mut file: String,
    shard: ShardId,
) {
    // Binary log table ids of the watched tables (they change as the
    // server reopens tables).
    let mut ids: HashMap<u64, usize> = HashMap::new();
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                changes.lock().failed = Some(map_error(shard, e).to_string());
                return;
            }
        };
        let log_pos = event.header().log_pos() as u64;
        let mut found: Vec<Found> = vec![];
        match event.read_data() {
            Ok(Some(EventData::RotateEvent(r))) => {
                file = r.name().to_string();
                let mut c = changes.lock();
                c.read_to = LogPos {
                    file: file.clone(),
                    pos: r.position(),
                };
                continue;
            }
            Ok(Some(EventData::TableMapEvent(t))) => {
                let (db, tbl) = (t.database_name(), t.table_name());
                match watched
                    .iter()
                    .position(|w| w.database == db && w.table == tbl)
                {
                    Some(i) => {
                        ids.insert(t.table_id(), i);
                    }
                    None => {
                        ids.remove(&t.table_id());
                    }
                }
            }
            Ok(Some(EventData::RowsEvent(rows))) => {
                if let Some(&i) = ids.get(&rows.table_id()) {
                    match keys_of(&stream, &rows, &watched[i]) {
                        Ok(_) if watched[i].key_columns.is_empty() => found.push((i, None)),
                        Ok(keys) => found.extend(keys.into_iter().map(|k| (i, Some(k)))),
                        Err(e) => {
                            changes.lock().failed = Some(e);
                            return;
                        }
                    }
                }
            }
            _ => {}
        }
        let mut c = changes.lock();
        for (i, k) in found {
            match k {
                Some((text, values)) => {
                    c.keys[i].insert(text, values);
                }
                None => c.whole[i] = true,
            }
        }
        // Artificial events (a rotation's, a heartbeat) carry position 0.
        if log_pos > 0 {
            c.read_to = LogPos {
                file: file.clone(),
                pos: log_pos,
            };
        }
    }
    changes.lock().failed = Some("the server closed the binary log stream".into());
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
