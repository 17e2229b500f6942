//! Partition moves as meta records them (`partition_moves`, schema
//! version 11): one row per move of one slot of a co-location group from
//! one shard to another, with its phase and progress. The mover
//! (`shard_router::placement::mover`) writes it; `tessera cluster status`
//! and recovery read it. The phase that switches the map is written by
//! [`DdlTxn::move_switched`] in the same meta transaction as the new
//! layout, so "switched" and "the map says the target" are one fact.

use common::{Error, Result, ShardId, TableId};
use mysql_async::prelude::*;

use super::{me, DdlTxn, MetaStore};
use crate::catalog::ShardInfo;

/// Where a move is. `Copying` and `CatchingUp` touch only the target;
/// `Switching` means the source tables may be renamed to their retired
/// names (the fence is held); `Switched` is the map naming the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MovePhase {
    Copying,
    CatchingUp,
    Switching,
    Switched,
    /// Switched, and the source's retired copy dropped.
    Done,
    /// Stopped before the switch; the source is as it was.
    RolledBack,
    /// Switched, but the check after the switch found the copies
    /// different: the retired copy is kept for the operator (recovery
    /// leaves it) and the move can be undone.
    Unverified,
    /// Being undone: the slot goes back to the source (its retired copy
    /// plus what clients changed on the target since the switch). A
    /// mover that dies here leaves the move as it was switched.
    Reversing,
    /// Undone: the map names the source again; the target's copy is
    /// queued for dropping.
    Reversed,
}

impl MovePhase {
    pub fn as_str(&self) -> &'static str {
        match self {
            MovePhase::Copying => "copying",
            MovePhase::CatchingUp => "catching_up",
            MovePhase::Switching => "switching",
            MovePhase::Switched => "switched",
            MovePhase::Done => "done",
            MovePhase::RolledBack => "rolled_back",
            MovePhase::Unverified => "unverified",
            MovePhase::Reversing => "reversing",
            MovePhase::Reversed => "reversed",
        }
    }

    pub fn parse(s: &str) -> Result<MovePhase> {
        Ok(match s {
            "copying" => MovePhase::Copying,
            "catching_up" => MovePhase::CatchingUp,
            "switching" => MovePhase::Switching,
            "switched" => MovePhase::Switched,
            "done" => MovePhase::Done,
            "rolled_back" => MovePhase::RolledBack,
            "unverified" => MovePhase::Unverified,
            "reversing" => MovePhase::Reversing,
            "reversed" => MovePhase::Reversed,
            other => return Err(Error::meta(format!("unknown move phase {other}"))),
        })
    }

    /// Nothing is left to do for the move (its retired copy, if any, is
    /// gone).
    pub fn is_finished(&self) -> bool {
        matches!(
            self,
            MovePhase::Done | MovePhase::RolledBack | MovePhase::Reversed
        )
    }
}

/// One row of `partition_moves`.
#[derive(Debug, Clone)]
pub struct MoveRecord {
    pub id: u64,
    pub tables: Vec<TableId>,
    pub partition: u32,
    pub from: ShardId,
    pub to: ShardId,
    pub phase: MovePhase,
    pub progress: MoveProgress,
    pub fence_ms: Option<u32>,
    /// The source's physical tables under their retired names
    /// (database, table), set when the switch begins.
    pub retired: Vec<(String, String)>,
    pub detail: Option<String>,
    /// Seconds since the move started.
    pub age_secs: f64,
    /// The slot's rows on the source when the move started (InnoDB's
    /// estimate), for the copy's ETA.
    pub rows_total: u64,
    /// The target's binary log position at the cut (`file:position`),
    /// recorded with the switch: undoing the move catches up from it.
    pub target_cut: String,
}

impl MoveRecord {
    /// Seconds until the copy ends at its rate so far (the catch-up and
    /// the fence follow, usually seconds); `None` outside the copy or
    /// before its first rows.
    pub fn eta_secs(&self) -> Option<f64> {
        if self.phase != MovePhase::Copying || self.progress.rows_copied == 0 {
            return None;
        }
        let left = self.rows_total.saturating_sub(self.progress.rows_copied) as f64;
        Some(left * self.age_secs / self.progress.rows_copied as f64)
    }
}

/// How far a move got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MoveProgress {
    pub rows_copied: u64,
    pub bytes: u64,
    /// Distinct keys re-copied from the binary log's changes.
    pub keys_caught_up: u64,
    /// Changed keys seen in the binary log and not yet re-copied.
    pub lag_events: u64,
}

fn ids_text(tables: &[TableId]) -> String {
    tables
        .iter()
        .map(|t| t.0.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl MetaStore {
    /// Records a new move in phase `copying`; returns its id.
    pub async fn start_move(
        &self,
        tables: &[TableId],
        partition: u32,
        from: ShardId,
        to: ShardId,
    ) -> Result<u64> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "INSERT INTO partition_moves (tables, partition_no, from_shard, to_shard, phase) VALUES (?, ?, ?, ?, 'copying')",
            (ids_text(tables), partition, from.0, to.0),
        )
        .await
        .map_err(me)?;
        conn.last_insert_id()
            .ok_or_else(|| Error::meta("no move id assigned"))
    }

    /// The slot's rows on the source as InnoDB estimates them.
    pub async fn set_move_rows_total(&self, id: u64, rows: u64) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE partition_moves SET rows_total = ? WHERE move_id = ?",
            (rows, id),
        )
        .await
        .map_err(me)
    }

    /// Moves a move to `phase` with its progress so far.
    pub async fn update_move(&self, id: u64, phase: MovePhase, p: &MoveProgress) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE partition_moves SET phase = ?, rows_copied = ?, bytes = ?, keys_caught_up = ?, lag_events = ? WHERE move_id = ?",
            (
                phase.as_str(),
                p.rows_copied,
                p.bytes,
                p.keys_caught_up,
                p.lag_events,
                id,
            ),
        )
        .await
        .map_err(me)
    }

    /// The switch begins: the source tables are about to be renamed to
    /// `retired` (recorded first, so recovery knows the names).
    pub async fn move_switching(&self, id: u64, retired: &[(String, String)]) -> Result<()> {
        let text = serde_json::to_string(retired).map_err(Error::meta)?;
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE partition_moves SET phase = 'switching', retired = ? WHERE move_id = ?",
            (text, id),
        )
        .await
        .map_err(me)
    }

    /// Ends a move (`Done` or `RolledBack`) with a note on why.
    pub async fn end_move(&self, id: u64, phase: MovePhase, detail: Option<&str>) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE partition_moves SET phase = ?, detail = COALESCE(?, detail) WHERE move_id = ?",
            (phase.as_str(), detail, id),
        )
        .await
        .map_err(me)
    }

    /// Every move (`open_only`: those not finished, and not left unverified for the operator), oldest first.
    pub async fn moves(&self, open_only: bool) -> Result<Vec<MoveRecord>> {
        let mut conn = self.conn().await?;
        let raw: Vec<mysql_async::Row> = conn
            .query(format!(
                "SELECT move_id, tables, partition_no, from_shard, to_shard, phase, rows_copied, bytes, keys_caught_up, lag_events, fence_ms, retired, detail, CAST(TIMESTAMPDIFF(MICROSECOND, started_at, NOW(3)) / 1e6 AS DOUBLE), rows_total, target_cut FROM partition_moves {} ORDER BY move_id",
                if open_only { "WHERE phase NOT IN ('done', 'rolled_back', 'unverified', 'reversed')" } else { "" }
            ))
            .await
            .map_err(me)?;
        let mut out = vec![];
        for r in raw {
            let get = |i: usize| r.get_opt::<mysql_async::Value, _>(i).and_then(|v| v.ok());
            out.push(MoveRecord {
                id: num(get(0)),
                tables: text(get(1))
                    .split(',')
                    .filter_map(|t| t.parse().ok().map(TableId))
                    .collect(),
                partition: num(get(2)) as u32,
                from: ShardId(num(get(3)) as u32),
                to: ShardId(num(get(4)) as u32),
                phase: MovePhase::parse(&text(get(5)))?,
                progress: MoveProgress {
                    rows_copied: num(get(6)),
                    bytes: num(get(7)),
                    keys_caught_up: num(get(8)),
                    lag_events: num(get(9)),
                },
                fence_ms: get(10).and_then(|v| mysql_async::from_value_opt::<u32>(v).ok()),
                retired: serde_json::from_str(&text(get(11))).unwrap_or_default(),
                detail: get(12).and_then(|v| mysql_async::from_value_opt::<String>(v).ok()),
                age_secs: get(13)
                    .and_then(|v| mysql_async::from_value_opt::<f64>(v).ok())
                    .unwrap_or(0.0),
                rows_total: num(get(14)),
                target_cut: text(get(15)),
            });
        }
        Ok(out)
    }
}

fn num(v: Option<mysql_async::Value>) -> u64 {
    v.and_then(|v| mysql_async::from_value_opt::<u64>(v).ok())
        .unwrap_or(0)
}

fn text(v: Option<mysql_async::Value>) -> String {
    v.and_then(|v| mysql_async::from_value_opt::<String>(v).ok())
        .unwrap_or_default()
}

impl DdlTxn {
    /// The move's switch, in the transaction that writes the new layout:
    /// once this commits, the map names the target.
    /// `target_cut`: the target's binary log position at the cut.
    pub async fn move_switched(&mut self, id: u64, fence_ms: u32, target_cut: &str) -> Result<()> {
        self.c()?
            .exec_drop(
                "UPDATE partition_moves SET phase = 'switched', fence_ms = ?, target_cut = ? WHERE move_id = ?",
                (fence_ms, target_cut, id),
            )
            .await
            .map_err(me)
    }

    /// The move undone, in the transaction that writes the source's
    /// layout back; `detail` says why.
    pub async fn move_reversed(&mut self, id: u64, fence_ms: u32, detail: &str) -> Result<()> {
        self.c()?
            .exec_drop(
                "UPDATE partition_moves SET phase = 'reversed', fence_ms = ?, detail = ? WHERE move_id = ?",
                (fence_ms, detail, id),
            )
            .await
            .map_err(me)
    }

    /// Registers a new shard (or a new server for one): the placement
    /// epoch moves, and every node opens a pool to it at its next catalog
    /// load.
    pub async fn add_shard(&mut self, s: &ShardInfo) -> Result<()> {
        let conn = self.c()?;
        conn.exec_drop(
            "REPLACE INTO shards (shard_id, host, port, user) VALUES (?, ?, ?, ?)",
            (s.id.0, &s.endpoint.host, s.endpoint.port, &s.endpoint.user),
        )
        .await
        .map_err(me)?;
        conn.query_drop("UPDATE shard_map SET map_version = map_version + 1 WHERE id = 1")
            .await
            .map_err(me)
    }

    /// Retires a shard that holds no slot any more.
    pub async fn remove_shard(&mut self, id: ShardId) -> Result<()> {
        let conn = self.c()?;
        let held: Option<u64> = conn
            .exec_first(
                "SELECT COUNT(*) FROM cat_partitions WHERE shard_id = ?",
                (id.0,),
            )
            .await
            .map_err(me)?;
        if held.unwrap_or(0) > 0 {
            return Err(Error::meta(format!(
                "shard {} still holds {} partitions; move them away first",
                id.0,
                held.unwrap_or(0)
            )));
        }
        conn.exec_drop("DELETE FROM shards WHERE shard_id = ?", (id.0,))
            .await
            .map_err(me)?;
        conn.exec_drop("DELETE FROM shard_replicas WHERE shard_id = ?", (id.0,))
            .await
            .map_err(me)?;
        conn.query_drop("UPDATE shard_map SET map_version = map_version + 1 WHERE id = 1")
            .await
            .map_err(me)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(phase: MovePhase, copied: u64, total: u64, age: f64) -> MoveRecord {
        MoveRecord {
            id: 1,
            tables: vec![],
            partition: 0,
            from: ShardId(1),
            to: ShardId(2),
            phase,
            progress: MoveProgress {
                rows_copied: copied,
                ..Default::default()
            },
            fence_ms: None,
            retired: vec![],
            detail: None,
            age_secs: age,
            rows_total: total,
            target_cut: String::new(),
        }
    }

    #[test]
    fn eta_is_the_copy_left_at_its_rate() {
        // A quarter copied in 10 s: 30 s left.
        assert_eq!(
            record(MovePhase::Copying, 250, 1000, 10.0).eta_secs(),
            Some(30.0)
        );
        // An estimate below what was copied: nothing left.
        assert_eq!(
            record(MovePhase::Copying, 1200, 1000, 10.0).eta_secs(),
            Some(0.0)
        );
        assert_eq!(record(MovePhase::Copying, 0, 1000, 10.0).eta_secs(), None);
        assert_eq!(
            record(MovePhase::CatchingUp, 1000, 1000, 10.0).eta_secs(),
            None
        );
    }

    #[test]
    fn phases_read_back_as_written() {
        for p in [
            MovePhase::Copying,
            MovePhase::CatchingUp,
            MovePhase::Switching,
            MovePhase::Switched,
            MovePhase::Done,
            MovePhase::RolledBack,
            MovePhase::Unverified,
            MovePhase::Reversing,
            MovePhase::Reversed,
        ] {
            assert_eq!(MovePhase::parse(p.as_str()).ok(), Some(p));
        }
        assert!(MovePhase::Reversed.is_finished());
        assert!(!MovePhase::Reversing.is_finished());
    }
}
