//! Undoing a switched move (issue 33): the slot goes back to its source,
//! as the source's retired copy (the source at the cut) plus every change
//! clients made on the target since the switch. A move whose check after
//! the switch fails is undone at once; `tessera cluster undo-move` undoes
//! any switched move whose retired copy is still kept.
//!
//! It is a move in reverse with the same machinery (`super`): the
//! target's binary log from the cut (recorded with the switch) names the
//! keys changed since; catch-up passes re-copy them from the target into
//! the retired copy; the target's tables are fenced and locked, the last
//! keys re-copied; then, under the lock, the target's tables get retired
//! names, the retired copy its names back, and one meta transaction writes
//! the source's layout, the phase `reversed`, the target's copy queued for
//! dropping, and lowers the fence. Keys nobody changed since the switch
//! keep the source's rows: a wrong copy is not carried back.
//!
//! A mover that dies while undoing (phase `reversing`) leaves the move as
//! it was switched: recovery gives every table the name it had
//! ([`restore_switched`]) and marks the move `unverified`, to undo again.

use std::time::Instant;

use common::{Error, Result, ShardId};
use meta::{Catalog, DdlTxn, MovePhase, MoveRecord};
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::{map_error, quote_ident};

use super::feed::LogPos;
use super::rows::Physical;
use super::{crash_point, not_supported, MoveOptions, Mover};
use crate::Router;

/// What undoing a move did.
#[derive(Debug, Clone)]
pub struct UndoReport {
    pub id: u64,
    /// The shard the slot is back on.
    pub shard: ShardId,
    pub keys_caught_up: u64,
    pub fence_ms: u64,
}

/// Undoes switched move `id` (`why`: recorded as its detail). On an error
/// the move is left as it was switched (`unverified`), to try again.
pub async fn undo_move(
    router: &Router,
    id: u64,
    opts: &MoveOptions,
    why: &str,
) -> Result<UndoReport> {
    let ddl = router
        .meta
        .begin_ddl(router.node_id, &format!("-- undo partition move {id}"))
        .await?;
    // Under the DDL lock: no DDL, no other mover, no recovery meanwhile.
    let catalog = router.meta.load_catalog().await?;
    let record = record_of(router, id).await?;
    let tables = undoable(router, &catalog, &record).await?;
    let cut = LogPos::parse(&record.target_cut)
        .ok_or_else(|| not_supported(&format!("move {id} recorded no cut to undo from")))?;
    router
        .meta
        .update_move(id, MovePhase::Reversing, &record.progress)
        .await?;
    let mut m = Mover::new(
        router,
        opts,
        id,
        record.partition,
        record.to,
        record.from,
        tables,
    )?;
    m.undoing = true;
    match m.run_undo(ddl, &catalog, cut, why).await {
        Ok(fence_ms) => Ok(UndoReport {
            id,
            shard: record.from,
            keys_caught_up: m.progress.keys_caught_up,
            fence_ms,
        }),
        Err(e) => {
            let _ = router.meta.lower_fence(id).await;
            if let Ok(r) = record_of(router, id).await {
                if r.phase == MovePhase::Reversing {
                    leave_switched(router, &r, &format!("{why}; undoing it failed: {e}")).await?;
                }
            }
            Err(e)
        }
    }
}

async fn record_of(router: &Router, id: u64) -> Result<MoveRecord> {
    router
        .meta
        .moves(false)
        .await?
        .into_iter()
        .find(|m| m.id == id)
        .ok_or_else(|| not_supported(&format!("no move {id}")))
}

fn retired_name(name: &str, id: u64) -> String {
    format!("{name}_m{id}")
}

/// The move's tables, to copy from the target's live tables into the
/// source's retired copy, after checking the move can be undone: switched,
/// the map naming the target, the retired copy present with the columns
/// the catalog has (no DDL changed the tables since).
async fn undoable(router: &Router, catalog: &Catalog, m: &MoveRecord) -> Result<Vec<Physical>> {
    if !matches!(m.phase, MovePhase::Switched | MovePhase::Unverified) {
        return Err(not_supported(&format!(
            "move {} is {}: only a switched move whose retired copy is kept can be undone",
            m.id,
            m.phase.as_str()
        )));
    }
    let mut source = router.shard(m.from)?.conn().await?;
    let mut out = vec![];
    for tid in &m.tables {
        let def = catalog
            .table_by_id(*tid)
            .ok_or_else(|| not_supported(&format!("a table of move {} was dropped", m.id)))?;
        if catalog.placement.layout(def.id).get(m.partition as usize) != Some(&m.to) {
            return Err(not_supported(&format!(
                "the map does not name shard {} for {} slot {} any more",
                m.to.0,
                def.qualified_name(),
                m.partition
            )));
        }
        let p = Physical::new(def, m.partition);
        let retired = retired_name(&p.name, m.id);
        let columns: Vec<String> = source
            .exec(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
                (&p.database, &retired),
            )
            .await
            .map_err(|e| map_error(m.from, e))?;
        let expected: Vec<&String> = def.columns.iter().map(|c| &c.name).collect();
        if columns.is_empty() {
            return Err(not_supported(&format!(
                "the retired copy of {} slot {} is gone",
                def.qualified_name(),
                m.partition
            )));
        }
        if columns.iter().collect::<Vec<_>>() != expected {
            return Err(not_supported(&format!(
                "{} changed since the move's switch",
                def.qualified_name()
            )));
        }
        out.push(p.into_target(&retired));
    }
    Ok(out)
}

impl Mover<'_> {
    /// The check after the switch failed: the move is recorded
    /// `unverified` and undone (`undo`); the error says which.
    pub(super) async fn undo_after_failed_check(&self, e: Error) -> Error {
        let detail = format!("verification after the switch failed: {e}");
        let _ = self
            .router
            .meta
            .end_move(self.id, MovePhase::Unverified, Some(&detail))
            .await;
        self.report(MovePhase::Unverified);
        match undo_move(self.router, self.id, self.opts, &detail).await {
            Ok(u) => {
                self.report(MovePhase::Reversed);
                Error::internal(format!(
                    "move {}: {detail}; undone: slot {} is back on shard {} ({} keys changed since the switch carried back, fence {} ms)",
                    self.id, self.slot, u.shard.0, u.keys_caught_up, u.fence_ms
                ))
            }
            Err(u) => Error::internal(format!(
                "move {}: {detail}; undoing it failed ({u}); the retired copy is kept: `tessera cluster undo-move {}` tries again",
                self.id, self.id
            )),
        }
    }

    /// The move in reverse; returns the fence's length (ms).
    async fn run_undo(
        &mut self,
        ddl: DdlTxn,
        catalog: &Catalog,
        cut: LogPos,
        why: &str,
    ) -> Result<u64> {
        // A server id neither the move's own feed nor any replica uses.
        let feed = self.start_feed(2_000_000_000, cut).await?;
        self.catch_up(&feed).await?;
        let (mut lock, fenced_at) = self.fence(Some(&feed)).await?;
        crash_point("undo_fenced");
        let mut target = self.dst.own_conn().await?;
        let r = async {
            self.final_pass(&feed, &mut lock, &mut target).await?;
            self.switch_back(ddl, catalog, &mut lock, &mut target, fenced_at, why)
                .await
        }
        .await;
        let _ = lock.disconnect().await;
        let _ = target.disconnect().await;
        r
    }

    /// Under the lock on the target's tables (`lock`; `self.from` is the
    /// move's target here): they get retired names, the source's retired
    /// copy (`target`'s shard) its names back, and the map names the
    /// source again.
    async fn switch_back(
        &mut self,
        mut ddl: DdlTxn,
        catalog: &Catalog,
        lock: &mut Conn,
        target: &mut Conn,
        fenced_at: Instant,
        why: &str,
    ) -> Result<u64> {
        for t in &self.tables {
            lock.query_drop(format!(
                "ALTER TABLE {} RENAME TO {}.{}",
                t.object,
                quote_ident(&t.database),
                quote_ident(&retired_name(&t.name, self.id))
            ))
            .await
            .map_err(|e| map_error(self.from, e))?;
        }
        let back: Vec<String> = self
            .tables
            .iter()
            .map(|t| format!("{} TO {}", t.target, t.object))
            .collect();
        target
            .query_drop(format!("RENAME TABLE {}", back.join(", ")))
            .await
            .map_err(|e| map_error(self.to, e))?;
        crash_point("undo_renamed");
        let fence_ms = fenced_at.elapsed().as_millis() as u64;
        for t in &self.tables {
            let mut layout = catalog.placement.layout(t.def.id).to_vec();
            layout[self.slot as usize] = self.to;
            ddl.set_layout(t.def.id, &layout).await?;
            let old = (
                self.from,
                t.database.clone(),
                retired_name(&t.name, self.id),
            );
            ddl.queue_drops(t.def.id, &[old]).await?;
        }
        ddl.move_reversed(self.id, fence_ms as u32, why).await?;
        ddl.lower_fence(self.id).await?;
        // A failed commit leaves the move `reversing`: the caller gives
        // every table its name back (`restore_switched`).
        ddl.commit().await?;
        lock.query_drop("UNLOCK TABLES")
            .await
            .map_err(|e| map_error(self.from, e))?;
        Ok(fence_ms.max(fenced_at.elapsed().as_millis() as u64))
    }
}

/// A move whose undo failed or was abandoned, back as it was switched
/// (`restore_switched`) and recorded `unverified` with `detail`, to undo
/// again.
pub(super) async fn leave_switched(router: &Router, m: &MoveRecord, detail: &str) -> Result<()> {
    restore_switched(router, m).await?;
    router
        .meta
        .end_move(m.id, MovePhase::Unverified, Some(detail))
        .await
}

/// Gives a move that was being undone (the map still names its target)
/// the tables it had when switched: the target's live tables their names,
/// the source's copy its retired names. Each rename is done only where
/// the table is under the other name, so it can run again.
pub(super) async fn restore_switched(router: &Router, m: &MoveRecord) -> Result<()> {
    let catalog = router.meta.load_catalog().await?;
    for tid in &m.tables {
        let Some(def) = catalog.table_by_id(*tid) else {
            continue;
        };
        if catalog.placement.layout(def.id).get(m.partition as usize) != Some(&m.to) {
            continue;
        }
        let p = Physical::new(def, m.partition);
        let retired = retired_name(&p.name, m.id);
        rename_if(router, m.to, &p.database, &retired, &p.name).await?;
        rename_if(router, m.from, &p.database, &p.name, &retired).await?;
    }
    Ok(())
}

/// Renames `db.from_name` to `db.to_name` on `shard` if only the first
/// exists (so recovery can run it again).
pub(super) async fn rename_if(
    router: &Router,
    shard: ShardId,
    db: &str,
    from_name: &str,
    to_name: &str,
) -> Result<()> {
    let mut conn = router.shard(shard)?.conn().await?;
    let present: Vec<String> = conn
        .exec(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name IN (?, ?)",
            (db, from_name, to_name),
        )
        .await
        .map_err(|e| map_error(shard, e))?;
    if present.iter().any(|t| t == from_name) && !present.iter().any(|t| t == to_name) {
        conn.query_drop(format!(
            "RENAME TABLE {q}.{} TO {q}.{}",
            quote_ident(from_name),
            quote_ident(to_name),
            q = quote_ident(db)
        ))
        .await
        .map_err(|e| map_error(shard, e))?;
    }
    Ok(())
}

/// Tests make the copy wrong under the fence (`TESSERA_MOVE_CORRUPT=1`):
/// the first row of the first table with an integer column outside its
/// key gets that column plus one on the target, so the check after the
/// switch fails and the move is undone.
pub(super) async fn corrupt_for_test(mover: &Mover<'_>, target: &mut Conn) -> Result<()> {
    if std::env::var("TESSERA_MOVE_CORRUPT").map_or(true, |v| v != "1") {
        return Ok(());
    }
    for t in &mover.tables {
        let Some(col) = t.def.columns.iter().find(|c| {
            !t.key.contains(&c.name)
                && matches!(
                    c.ty,
                    common::SqlType::Integer | common::SqlType::BigInt | common::SqlType::SmallInt
                )
        }) else {
            continue;
        };
        if t.key.is_empty() {
            continue;
        }
        let c = quote_ident(&col.name);
        let key: Vec<String> = t.key.iter().map(|k| quote_ident(k)).collect();
        target
            .query_drop(format!(
                "UPDATE {} SET {c} = {c} + 1 ORDER BY {} LIMIT 1",
                t.target,
                key.join(", ")
            ))
            .await
            .map_err(|e| map_error(mover.to, e))?;
        eprintln!("TESSERA_MOVE_CORRUPT: changed a row of {}", t.target);
        return Ok(());
    }
    Err(Error::internal("TESSERA_MOVE_CORRUPT: no table to corrupt"))
}
