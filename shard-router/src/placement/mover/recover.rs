//! Moves a mover left open (it died, or lost meta): each is finished or
//! rolled back from the phase meta recorded. A live mover holds meta's DDL
//! lock for its whole move, so whoever holds that lock knows every open
//! move is abandoned.
//!
//! * `copying`, `catching_up`: only the target was touched; its tables are
//!   dropped.
//! * `switching`: the source tables may carry their retired names, and the
//!   map still names the source (the switch commits the map and the phase
//!   together): the names are given back, the target dropped.
//! * `switched`: the map names the target; the retired copy is dropped.
//! * `reversing` (being undone, `super::undo`): every table gets the name
//!   it had when switched, and the move is left `unverified`, to undo
//!   again.

use common::{Result, ShardId};
use meta::{MovePhase, MoveRecord};

use crate::Router;

/// Finishes or rolls back every open move (waiting for a running mover to
/// end); returns a line per move.
pub async fn recover_moves(router: &Router) -> Result<Vec<String>> {
    if router.meta.moves(true).await?.is_empty() {
        return Ok(vec![]);
    }
    let ddl = router
        .meta
        .begin_ddl(router.node_id, "-- recover partition moves")
        .await?;
    let out = recover_open(router, true).await;
    drop(ddl);
    out
}

/// A compute node's recovery round: the open moves, if any, recovered when
/// no mover holds the DDL lock (a running one does, until its switch
/// commits). Switched moves are left to the movers: their retired copies
/// may be kept on purpose (`--keep-source-secs`) and harm nothing.
pub async fn recover_abandoned(router: &Router) -> Result<Vec<String>> {
    if router.meta.moves(true).await?.is_empty() {
        return Ok(vec![]);
    }
    let Some(ddl) = router
        .meta
        .try_begin_ddl(router.node_id, "-- recover partition moves")
        .await?
    else {
        return Ok(vec![]);
    };
    let out = recover_open(router, false).await;
    drop(ddl);
    out
}

/// Under the DDL lock: every open move rolled back, or (`finish_switched`)
/// finished.
async fn recover_open(router: &Router, finish_switched: bool) -> Result<Vec<String>> {
    let mut out = vec![];
    for m in router.meta.moves(true).await? {
        // Its mover is gone: statements its fence holds go now.
        router.meta.lower_fence(m.id).await?;
        let line = match m.phase {
            MovePhase::Switched if !finish_switched => continue,
            MovePhase::Switched => {
                drop_retired(router, m.id).await?;
                format!("move {}: switched; its retired copy dropped", m.id)
            }
            MovePhase::Copying | MovePhase::CatchingUp | MovePhase::Switching => {
                restore_source(router, &m).await?;
                drop_target(router, &m).await?;
                router
                    .meta
                    .end_move(
                        m.id,
                        MovePhase::RolledBack,
                        Some("abandoned by its mover; rolled back"),
                    )
                    .await?;
                format!(
                    "move {}: abandoned in phase {}; rolled back",
                    m.id,
                    m.phase.as_str()
                )
            }
            MovePhase::Reversing => {
                super::undo::leave_switched(
                    router,
                    &m,
                    "undoing it was abandoned by its mover; left as switched (tessera cluster undo-move tries again)",
                )
                .await?;
                format!(
                    "move {}: abandoned while being undone; left as switched",
                    m.id
                )
            }
            MovePhase::Done
            | MovePhase::RolledBack
            | MovePhase::Unverified
            | MovePhase::Reversed => continue,
        };
        out.push(line);
    }
    Ok(out)
}

/// The target's copies of a move not switched.
async fn drop_target(router: &Router, m: &MoveRecord) -> Result<()> {
    let catalog = router.meta.load_catalog().await?;
    let mut physical: Vec<(ShardId, String, String)> = vec![];
    for def in catalog.tables.values().filter(|t| m.tables.contains(&t.id)) {
        // The map still names the source for the slot: only then is the
        // target's copy not the live one.
        if catalog.placement.layout(def.id).get(m.partition as usize) == Some(&m.to) {
            continue;
        }
        physical.push((
            m.to,
            meta::physical_database(&def.schema),
            def.physical_name(m.partition),
        ));
    }
    super::super::ddl::drop_physical(router, &physical).await
}

/// Gives the source tables their names back where the switch renamed them
/// and the map still names the source.
pub(super) async fn restore_source(router: &Router, m: &MoveRecord) -> Result<()> {
    let suffix = format!("_m{}", m.id);
    for (db, retired) in &m.retired {
        if let Some(original) = retired.strip_suffix(&suffix) {
            super::undo::rename_if(router, m.from, db, retired, original).await?;
        }
    }
    Ok(())
}

/// Drops a switched move's retired copy on its source and ends the move.
pub async fn drop_retired(router: &Router, id: u64) -> Result<()> {
    let Some(m) = router
        .meta
        .moves(false)
        .await?
        .into_iter()
        .find(|m| m.id == id)
    else {
        return Ok(());
    };
    // Undone (or being undone) meanwhile: the retired copy is live again.
    if m.phase != MovePhase::Switched {
        return Ok(());
    }
    let retired: Vec<(ShardId, String, String)> = m
        .retired
        .iter()
        .map(|(db, t)| (m.from, db.clone(), t.clone()))
        .collect();
    super::super::ddl::drop_physical(router, &retired).await?;
    router.meta.end_move(id, MovePhase::Done, None).await
}
