//! Snapshot connections kept between cuts: a consistent cut's connection
//! stays inside its read-only snapshot transaction when the cut ends, and
//! the next cut on that shard opens its snapshot on it with one statement
//! (`START TRANSACTION` commits the old one implicitly). A cut's shard read
//! is then two round trips (open, the statement) instead of three (open,
//! the statement, `COMMIT`), and the connection keeps its REPEATABLE READ
//! session setting instead of setting it per cut.
//!
//! The cost ledger chose this (docs/rfcs/2026-12-03-oltp-round-trips.md):
//! sysbench's read-only transaction sent 58 statements to the shards where
//! one MariaDB receives 16, and context switches are the largest item in
//! both the compute node's and the shards' profiles.
//!
//! A kept connection holds an old read view and the metadata locks of the
//! tables its cut read (no row locks: the reads were consistent reads), so
//! it is kept at most [`KEEP`]: the sweeper commits it and gives it back to
//! the pool as a READ COMMITTED session. A DDL on a table a kept snapshot
//! read waits that long at most; purge is held back that long at most.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use common::ShardId;
use mysql_async::prelude::*;
use mysql_async::Conn;

/// How long a connection is kept inside its finished cut's snapshot.
pub const KEEP: Duration = Duration::from_millis(200);

/// Kept connections per shard at most (the rest are retired at once).
const MAX_PER_SHARD: usize = 32;

/// Opens a snapshot on a connection fresh from the pool (a READ COMMITTED
/// session, where a consistent snapshot would be ignored).
pub const OPEN_FRESH: &str = "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ; START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY";

/// Opens a snapshot on a kept connection (already REPEATABLE READ; its old
/// snapshot transaction is committed implicitly).
pub const OPEN_KEPT: &str = "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY";

/// Gives a snapshot connection back to the pool as the pool made it.
const RETIRE: &str = "COMMIT; SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// The kept snapshot connections of one node, by shard.
#[derive(Default)]
pub struct Reserve {
    idle: parking_lot::Mutex<HashMap<ShardId, Vec<(Conn, Instant)>>>,
    sweeping: AtomicBool,
}

impl Reserve {
    /// The most recently kept connection of `shard` to the server at
    /// `host:port` (one to another server, left from before the shard
    /// moved, is retired).
    pub fn take(&self, shard: ShardId, host: &str, port: u16) -> Option<Conn> {
        loop {
            let (c, _) = self.idle.lock().get_mut(&shard)?.pop()?;
            let opts = c.opts();
            if opts.ip_or_hostname() == host && opts.tcp_port() == port {
                return Some(c);
            }
            spawn_retire(c);
        }
    }

    /// Keeps a snapshot connection whose cut has ended (or retires it when
    /// the shard has enough kept).
    pub fn keep(self: &Arc<Self>, shard: ShardId, c: Conn) {
        let full = {
            let mut idle = self.idle.lock();
            let list = idle.entry(shard).or_default();
            if list.len() >= MAX_PER_SHARD {
                Some(c)
            } else {
                list.push((c, Instant::now()));
                None
            }
        };
        match full {
            Some(c) => spawn_retire(c),
            None => self.start_sweeper(),
        }
    }

    /// One sweeper per node, started by the first kept connection, ending
    /// with the node's router.
    fn start_sweeper(self: &Arc<Self>) {
        if self.sweeping.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            self.sweeping.store(false, Ordering::SeqCst);
            return;
        };
        let weak: Weak<Reserve> = Arc::downgrade(self);
        rt.spawn(async move {
            loop {
                tokio::time::sleep(KEEP / 2).await;
                let Some(r) = weak.upgrade() else {
                    return;
                };
                for c in r.expired(Instant::now()) {
                    retire(c).await;
                }
            }
        });
    }

    /// Removes and returns the connections kept longer than [`KEEP`].
    fn expired(&self, now: Instant) -> Vec<Conn> {
        let mut out = vec![];
        for list in self.idle.lock().values_mut() {
            let (old, young): (Vec<_>, Vec<_>) = std::mem::take(list)
                .into_iter()
                .partition(|(_, at)| now.duration_since(*at) >= KEEP);
            *list = young;
            out.extend(old.into_iter().map(|(c, _)| c));
        }
        out
    }
}

/// Commits a snapshot connection and gives it back to the pool as a READ
/// COMMITTED session; one that fails is closed (the pool discards it).
pub async fn retire(mut c: Conn) {
    if c.query_drop(RETIRE).await.is_err() {
        let _ = c.disconnect().await;
    }
}

fn spawn_retire(c: Conn) {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(retire(c));
    }
}
