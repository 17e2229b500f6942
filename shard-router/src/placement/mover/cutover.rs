//! Steps 4 to 6 of a move (see `super`): the fence, the last catch-up
//! under it, the check of both copies, and the switch of the map.

use std::time::{Duration, Instant};

use common::{Error, Result};
use meta::{Catalog, DdlTxn, FenceRecord, MovePhase};
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::{map_error, quote_ident};

use super::catchup::Pass;
use super::feed::{Feed, LogPos};
use super::{not_supported, Mover};

impl Mover<'_> {
    /// Step 4: the source's tables locked on a connection of their own,
    /// after every compute node holds new transactions away from them
    /// and has seen its older ones end (the move's fence, `txn::fence`):
    /// the lock then waits for no client, and no client waits for it
    /// inside MariaDB. `feed`: caught up with between attempts (none
    /// before the copy). Returns the lock and when the fence was raised.
    pub(super) async fn fence(&mut self, feed: Option<&Feed>) -> Result<(Conn, Instant)> {
        let objects: Vec<String> = self.tables.iter().map(|t| t.object.clone()).collect();
        let lock_sql = super::super::redistribute::lock_tables_sql(&objects);
        let record = FenceRecord {
            move_id: self.id,
            shard: self.from,
            objects,
            raised_at: String::new(),
        };
        let mut lock = self.src.own_conn().await?;
        lock.query_drop(format!(
            "SET SESSION lock_wait_timeout = {}",
            self.opts.fence_wait.as_secs().max(1)
        ))
        .await
        .map_err(|e| map_error(self.from, e))?;
        let mut last_err = None;
        for _ in 0..self.opts.fence_attempts.max(1) {
            let started = Instant::now();
            self.router.meta.raise_fence(&record).await?;
            self.await_answers().await?;
            match lock.query_drop(&lock_sql).await {
                Ok(()) => return Ok((lock, started)),
                Err(e) => {
                    // 1205: the slot's transactions held it past the wait;
                    // let the held statements go, catch up meanwhile and
                    // try again.
                    last_err = Some(map_error(self.from, e));
                    self.router.meta.lower_fence(self.id).await?;
                    if let Some(feed) = feed {
                        let mut source = self.src.conn().await?;
                        let mut target = self.dst.conn().await?;
                        self.recopy(feed, &mut source, &mut target, Pass::Plain)
                            .await?;
                    }
                }
            }
        }
        Err(last_err.unwrap_or_else(|| Error::internal("no fence attempt")))
    }

    /// Waits until every live compute node answered the fence, for at
    /// most `fence_wait`; the lock then does what is left (a node that
    /// did not answer leaves its clients to wait on the lock).
    async fn await_answers(&self) -> Result<()> {
        let deadline = Instant::now() + self.opts.fence_wait;
        while Instant::now() < deadline {
            if self.router.meta.fence_unanswered(self.id).await? == 0 {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tracing::info!(
            "move {}: not every compute node answered its fence within {} ms",
            self.id,
            self.opts.fence_wait.as_millis()
        );
        Ok(())
    }

    /// Step 4's end: the feed read to the log's end, the last keys copied.
    pub(super) async fn final_pass(
        &mut self,
        feed: &Feed,
        lock: &mut Conn,
        target: &mut Conn,
    ) -> Result<()> {
        let row: Option<mysql_async::Row> = lock
            .query_first("SHOW MASTER STATUS")
            .await
            .map_err(|e| map_error(self.from, e))?;
        let row = row.ok_or_else(|| not_supported("the source shard has no binary log"))?;
        let end = LogPos {
            file: row.get::<String, _>(0).unwrap_or_default(),
            pos: row.get::<u64, _>(1).unwrap_or(0),
        };
        feed.wait_for(&end, Duration::from_secs(30)).await?;
        self.recopy(feed, lock, target, Pass::Fenced).await?;
        self.progress.lag_events = 0;
        Ok(())
    }

    /// Step 6: renamed, committed, unlocked. Returns the fence's length.
    /// `cut`: the target's binary log position at the cut, recorded for
    /// undoing the move.
    pub(super) async fn switch(
        &mut self,
        mut ddl: DdlTxn,
        catalog: &Catalog,
        lock: &mut Conn,
        fenced_at: Instant,
        cut: &LogPos,
    ) -> Result<u64> {
        let retired = self.retired();
        self.router.meta.move_switching(self.id, &retired).await?;
        self.report(MovePhase::Switching);
        // MariaDB refuses RENAME TABLE under LOCK TABLES, but lets the
        // holder of a WRITE lock rename with ALTER TABLE.
        for (t, (db, name)) in self.tables.iter().zip(&retired) {
            lock.query_drop(format!(
                "ALTER TABLE {} RENAME TO {}.{}",
                t.object,
                quote_ident(db),
                quote_ident(name)
            ))
            .await
            .map_err(|e| map_error(self.from, e))?;
        }
        super::crash_point("renamed");
        let committed = async {
            for t in &self.tables {
                let mut layout = catalog.placement.layout(t.def.id).to_vec();
                layout[self.slot as usize] = self.to;
                ddl.set_layout(t.def.id, &layout).await?;
            }
            let fence_ms = fenced_at.elapsed().as_millis() as u64;
            ddl.move_switched(self.id, fence_ms as u32, &cut.to_text())
                .await?;
            ddl.lower_fence(self.id).await?;
            ddl.commit().await?;
            super::crash_point("switched");
            Ok::<_, Error>(fence_ms)
        }
        .await;
        let fence_ms = match committed {
            Ok(ms) => ms,
            Err(e) if !self.switched_in_meta().await => {
                // Not switched: the source gets its names back (the
                // renamed tables are no longer under the lock; a
                // statement meanwhile finds no table and fails).
                lock.query_drop("UNLOCK TABLES")
                    .await
                    .map_err(|e| map_error(self.from, e))?;
                let back: Vec<String> = self
                    .tables
                    .iter()
                    .zip(&retired)
                    .map(|(t, (db, name))| {
                        format!("{}.{} TO {}", quote_ident(db), quote_ident(name), t.object)
                    })
                    .collect();
                lock.query_drop(format!("RENAME TABLE {}", back.join(", ")))
                    .await
                    .map_err(|e| map_error(self.from, e))?;
                return Err(e);
            }
            Err(_) => fenced_at.elapsed().as_millis() as u64,
        };
        lock.query_drop("UNLOCK TABLES")
            .await
            .map_err(|e| map_error(self.from, e))?;
        let fence_ms = fence_ms.max(fenced_at.elapsed().as_millis() as u64);
        for t in &self.tables {
            let _ = self
                .router
                .meta
                .unqueue_drop(self.to, &t.database, &t.name)
                .await;
        }
        Ok(fence_ms)
    }

    pub(super) async fn switched_in_meta(&self) -> bool {
        match self.router.meta.moves(false).await {
            Ok(all) => all
                .iter()
                .any(|m| m.id == self.id && m.phase == MovePhase::Switched),
            Err(_) => false,
        }
    }
}
