//! Step 3 of a move (see `super`): catch-up passes, each re-copying from
//! a consistent snapshot of the source the keys the feed saw change up to
//! the snapshot's log position; the last one before the fence is checked
//! in full (`super::verify`).

use std::time::{Duration, Instant};

use common::Result;
use meta::MovePhase;
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::map_error;

use super::feed::Feed;
use super::feed::LogPos;
use super::rows;
use super::throttle::Throttle;
use super::{not_supported, Mover};
use common::ShardId;

/// Opens a consistent snapshot on `conn`. Shard connections run READ
/// COMMITTED (PostgreSQL's default), where MariaDB ignores `WITH CONSISTENT
/// SNAPSHOT`: the transaction asks for REPEATABLE READ first.
pub(super) async fn open_snapshot(conn: &mut Conn, shard: ShardId) -> Result<()> {
    for sql in [
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
    ] {
        conn.query_drop(sql)
            .await
            .map_err(|e| map_error(shard, e))?;
    }
    Ok(())
}

/// The binary log position a consistent snapshot just opened on `conn`
/// corresponds to: every transaction logged before it is in the snapshot,
/// none logged after.
pub(super) async fn snapshot_pos(conn: &mut Conn, shard: ShardId) -> Result<LogPos> {
    let status: Vec<(String, String)> = conn
        .query("SHOW STATUS LIKE 'binlog_snapshot_%'")
        .await
        .map_err(|e| map_error(shard, e))?;
    let get = |k: &str| {
        status
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.clone())
    };
    let pos = LogPos {
        file: get("binlog_snapshot_file").unwrap_or_default(),
        pos: get("binlog_snapshot_position")
            .and_then(|p| p.parse().ok())
            .unwrap_or(0),
    };
    if pos.file.is_empty() {
        return Err(not_supported(&format!(
            "shard {} has no binary log (start it with log_bin and binlog_format=ROW)",
            shard.0
        )));
    }
    Ok(pos)
}

/// What a catch-up pass reads from and checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// From a consistent snapshot of the source.
    Plain,
    /// The same, then both copies checked in full.
    Checked,
    /// Under the fence (`source` holds the lock): every key left.
    Fenced,
}

impl Mover<'_> {
    /// Step 3: passes of re-copied keys until few are left.
    pub(super) async fn catch_up(&mut self, feed: &Feed) -> Result<()> {
        let mut source = self.src.own_conn().await?;
        let mut target = self.dst.own_conn().await?;
        for pass in 0..self.opts.max_passes {
            let pending = feed.changes.lock().pending();
            if pass > 0 && pending <= self.opts.fence_keys {
                break;
            }
            let n = self
                .recopy(feed, &mut source, &mut target, Pass::Plain)
                .await?;
            self.passes += 1;
            self.progress.lag_events = feed.changes.lock().pending() as u64;
            self.record(MovePhase::CatchingUp).await?;
            if n == 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        // One more pass, checked in full (`super::verify`); not when a
        // move is undone (the two copies differ by what is undone).
        if !self.undoing {
            self.recopy(feed, &mut source, &mut target, Pass::Checked)
                .await?;
            self.passes += 1;
        }
        let _ = source.disconnect().await;
        let _ = target.disconnect().await;
        Ok(())
    }

    /// One pass: the keys the feed found since the last, re-copied.
    /// Before the fence, from a consistent snapshot of the source, the
    /// keys changed up to its log position (those changed later wait for
    /// the next pass); under it (`fenced`: `source` holds the lock), all.
    pub(super) async fn recopy(
        &mut self,
        feed: &Feed,
        source: &mut Conn,
        target: &mut Conn,
        pass: Pass,
    ) -> Result<u64> {
        let fenced = pass == Pass::Fenced;
        let upto = if fenced {
            None
        } else {
            open_snapshot(source, self.from).await?;
            let pos = snapshot_pos(source, self.from).await?;
            feed.wait_for(&pos, Duration::from_secs(30)).await?;
            Some(pos)
        };
        let (keys, whole) = feed.take(upto.as_ref())?;
        let mut n = 0;
        let mut recorded = Instant::now();
        for (i, keys) in keys.into_iter().enumerate() {
            let t = &self.tables[i];
            if whole[i] {
                rows::clear(target, self.to, t).await?;
                let all = Throttle::fixed(1.0);
                rows::copy_all(source, self.from, target, self.to, t, &all).await?;
                n += 1;
            }
            for chunk in keys.chunks(5_000) {
                let done = rows::recopy_keys(source, self.from, target, self.to, t, chunk).await?;
                n += done;
                self.progress.keys_caught_up += done;
                // Progress within a long pass, about once a second.
                if !fenced && recorded.elapsed() > Duration::from_secs(1) {
                    self.progress.lag_events = feed.changes.lock().pending() as u64;
                    self.record(MovePhase::CatchingUp).await?;
                    recorded = Instant::now();
                }
            }
        }
        if pass == Pass::Checked {
            self.compare_full(source, target).await?;
        }
        if !fenced {
            source
                .query_drop("COMMIT")
                .await
                .map_err(|e| map_error(self.from, e))?;
        }
        Ok(n)
    }
}
