//! Step 5 of a move (see `super`): the target holds the source's rows.
//!
//! The full check (row count and checksum of every table on both sides,
//! and where they differ up to 20 keys) runs three times around the
//! fence, so the fence itself stays short:
//!
//! 1. at the last catch-up pass, between the source's consistent snapshot
//!    and the target as that pass left it (the target then holds exactly
//!    the source as of the snapshot's log position);
//! 2. under the fence only the row counts: what changed since (1) is the
//!    last pass's keys, re-copied from the locked source;
//! 3. after the switch, between the retired source (renamed under the
//!    fence: it is the source at the cut) and a snapshot of the target
//!    opened under the fence, before any client could write it.
//!
//! A difference at (1) or (2) rolls the move back. A difference at (3)
//! leaves the move `unverified`: the map names the target, the retired
//! copy is kept (never dropped by recovery) and the move reports it.

use common::{Error, Result, ShardId};
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::map_error;

use super::super::redistribute::checksum_of;
use super::feed::LogPos;
use super::rows::{self, Physical};
use super::Mover;
use crate::sql::physical_object;

impl Mover<'_> {
    /// Every table's row count and checksum on both sides (`source`: in a
    /// snapshot, or the lock's connection).
    pub(super) async fn compare_full(&self, source: &mut Conn, target: &mut Conn) -> Result<()> {
        for t in &self.tables {
            compare_table(source, self.from, &t.object, target, self.to, t, self.slot).await?;
        }
        Ok(())
    }

    /// Under the fence: every table has as many rows on both sides.
    pub(super) async fn compare_counts(&self, lock: &mut Conn, target: &mut Conn) -> Result<()> {
        for t in &self.tables {
            let count = |object: &str| format!("SELECT COUNT(*) FROM {object}");
            let (a, b) = tokio::join!(
                lock.query_first::<u64, _>(count(&t.object)),
                target.query_first::<u64, _>(count(&t.target))
            );
            let a = a.map_err(|e| map_error(self.from, e))?.unwrap_or(0);
            let b = b.map_err(|e| map_error(self.to, e))?.unwrap_or(0);
            if a != b {
                return Err(differs(t, self.slot, b, a, vec![]));
            }
        }
        Ok(())
    }

    /// A snapshot of the target opened under the fence, before the switch
    /// lets clients write it: the target at the cut.
    /// Also returns the target's binary log position there (undoing the
    /// move catches up from it).
    pub(super) async fn target_at_cut(&self) -> Result<(Conn, LogPos)> {
        let mut cut = self.dst.own_conn().await?;
        super::open_snapshot(&mut cut, self.to).await?;
        let pos = super::snapshot_pos(&mut cut, self.to).await?;
        Ok((cut, pos))
    }

    /// After the switch: the retired source (`retired`: its tables' new
    /// names) against the target at the cut.
    pub(super) async fn compare_after_cutover(
        &self,
        cut: &mut Conn,
        retired: &[(String, String)],
    ) -> Result<()> {
        let mut source = self.src.own_conn().await?;
        for (t, (_, name)) in self.tables.iter().zip(retired) {
            let old = physical_object(&t.def.schema, name);
            compare_table(&mut source, self.from, &old, cut, self.to, t, self.slot).await?;
        }
        let _ = cut.query_drop("COMMIT").await;
        let _ = source.disconnect().await;
        Ok(())
    }
}

/// One table's row count and checksum, `source_object` on the source and
/// the table's own name on the target.
async fn compare_table(
    source: &mut Conn,
    from: ShardId,
    source_object: &str,
    target: &mut Conn,
    to: ShardId,
    t: &Physical,
    slot: u32,
) -> Result<()> {
    // Both sides at once.
    let (a, b) = tokio::join!(
        checksum_of(source, from, &t.def, source_object),
        checksum_of(target, to, &t.def, &t.target)
    );
    let (a, b) = (a?, b?);
    if a == b {
        return Ok(());
    }
    let keys = rows::differing_keys(source, from, source_object, target, to, t, 20).await?;
    Err(differs(t, slot, b.rows, a.rows, keys))
}

fn differs(
    t: &Physical,
    slot: u32,
    target_rows: u64,
    source_rows: u64,
    keys: Vec<String>,
) -> Error {
    Error::internal(format!(
        "the copy of {} slot {} differs from its source ({} rows against {}){}",
        t.def.qualified_name(),
        slot,
        target_rows,
        source_rows,
        if keys.is_empty() {
            String::new()
        } else {
            format!("; keys: {}", keys.join("; "))
        }
    ))
}
