//! Moving one slot of a co-location group to another shard while the
//! cluster serves it (issue 33; design: docs/rfcs/2026-12-03-online-moves.md).
//!
//! The steps, each recorded in meta's `partition_moves` ([`meta::MovePhase`]):
//!
//! 1. Under meta's DDL lock (held to the end: no DDL changes the tables
//!    meanwhile) the target's physical tables are created (queued for
//!    dropping until the switch commits).
//! 2. **Copy** (`copying`): one consistent snapshot of the source shard,
//!    with the binary log position it corresponds to
//!    (`binlog_snapshot_file/position`); every row of the slot's tables
//!    copied in batches, throttled to a share of the time.
//! 3. **Catch up** (`catching_up`): the source's binary log from that
//!    position ([`feed`]) names the keys changed since; each pass opens a
//!    consistent snapshot of the source and re-copies, in batches, the keys
//!    changed up to its log position, pass after pass, until few are left.
//! 4. **Fence**: every compute node holds new transactions away from the
//!    slot's tables and answers once its older ones ended
//!    (`crate::txn::fence`); then `LOCK TABLES ... WRITE` on the source's
//!    tables (retried with a short wait, so a long transaction delays the
//!    move instead of stalling clients); the feed is read to the log's end
//!    and the last keys re-copied.
//! 5. **Verify**: row count and checksum of every table on both sides; a
//!    difference names the keys and rolls the move back.
//! 6. **Switch** (`switching` -> `switched`): the source tables renamed to
//!    retired names under the lock, then the new layout, the move's phase
//!    and the catalog version committed in one meta transaction, then the
//!    lock released. A statement that waited on the old tables, or
//!    arrives from a node that has not reloaded yet, finds no table
//!    (MariaDB 1146); the compute node reloads the catalog and runs it
//!    again on the target (`compute::exec::runner`).
//! 7. The retired copy is dropped after `keep_source` (`done`).
//!
//! A mover that dies leaves its move open; [`recover`] rolls back a move
//! that had not switched and finishes one that had. A switched move whose
//! retired copy is kept can be undone ([`undo`]); one whose check after the
//! switch fails is undone at once.

mod catchup;
use catchup::{open_snapshot, snapshot_pos};
mod cutover;
pub mod feed;
pub mod plan;
pub mod rebalance;
pub mod recover;
mod rows;
mod throttle;
pub mod undo;
mod verify;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Error, Result, ShardId, TableId};
use meta::{Catalog, DdlTxn, Distribution, MovePhase, MoveProgress, TableDef};
use mysql_async::prelude::*;
use storage_adapter::{map_error, ShardClient};

use crate::Router;
use feed::{Feed, LogPos, Watched};
use rows::Physical;
use throttle::Throttle;

/// One slot of a group of co-located tables, to move to `to`.
#[derive(Debug, Clone)]
pub struct MoveRequest {
    pub tables: Vec<TableDef>,
    pub slot: u32,
    pub to: ShardId,
}

/// What a move reports as it goes.
#[derive(Debug, Clone)]
pub struct MoveStatus {
    pub id: u64,
    pub phase: MovePhase,
    pub progress: MoveProgress,
    /// Seconds until the copy ends at its rate so far (while copying).
    pub eta_secs: Option<f64>,
}

pub type ProgressFn = Arc<dyn Fn(&MoveStatus) + Send + Sync>;

/// How a move runs.
#[derive(Clone)]
pub struct MoveOptions {
    /// Share of the wall time the copy may take (the rest is left to the
    /// foreground): 0.5 copies at most half the time.
    pub duty: f64,
    /// The latency guard (`throttle`): the copy slows while a probe of
    /// the source or target shard takes more than this many times what it
    /// took before the copy (0: the fixed share alone).
    pub max_slowdown: f64,
    /// Catch-up passes before fencing, at most.
    pub max_passes: u32,
    /// Fence once at most this many changed keys wait.
    pub fence_keys: usize,
    /// Tries to take the fence, each waiting `fence_wait` for the slot's
    /// open transactions.
    pub fence_attempts: u32,
    pub fence_wait: Duration,
    /// How long the source's retired copy stays before it is dropped.
    pub keep_source: Duration,
    pub progress: Option<ProgressFn>,
}

impl Default for MoveOptions {
    fn default() -> Self {
        MoveOptions {
            duty: 0.5,
            max_slowdown: 1.5,
            max_passes: 50,
            fence_keys: 200,
            fence_attempts: 20,
            fence_wait: Duration::from_secs(1),
            keep_source: Duration::ZERO,
            progress: None,
        }
    }
}

/// What a finished move did.
#[derive(Debug, Clone)]
pub struct MoveReport {
    pub id: u64,
    pub from: ShardId,
    pub to: ShardId,
    pub slot: u32,
    pub tables: usize,
    pub rows: u64,
    pub bytes: u64,
    pub keys_caught_up: u64,
    pub passes: u32,
    /// How long the slot's writers and readers were held (ms).
    pub fence_ms: u64,
    /// Where the fence's time went (ms): waiting for the lock, the last
    /// catch-up, the verification, the switch.
    pub fence_parts: [u64; 4],
    pub copy_secs: f64,
    pub total_secs: f64,
    /// The lowest share of the time the copy ran at (the latency guard).
    pub lowest_duty: f64,
}

/// The tables whose slots move together with `table`'s: every hash table
/// with the same layout (so co-located joins and foreign keys stay
/// co-located), or a single table alone. Mirror tables are on every shard
/// and are not moved.
pub fn group_of(catalog: &Catalog, table: &TableDef) -> Result<Vec<TableDef>> {
    let layout = catalog.placement.layout(table.id);
    match table.distribution {
        Distribution::Mirror => Err(not_supported(
            "a mirror table is on every shard; it is not moved",
        )),
        Distribution::Single => Ok(vec![table.clone()]),
        Distribution::Hash { .. } => {
            let mut out: Vec<TableDef> = catalog
                .tables
                .values()
                .filter(|t| matches!(t.distribution, Distribution::Hash { .. }))
                .filter(|t| catalog.placement.layout(t.id) == layout)
                .map(|t| (**t).clone())
                .collect();
            out.sort_by_key(|t| t.id.0);
            Ok(out)
        }
    }
}

/// Tests kill the mover at a step: `TESSERA_MOVE_CRASH=<step>` aborts the
/// process there (no cleanup runs, as with SIGKILL). Steps: `copied`,
/// `fenced`, `renamed` (source renamed, map not switched), `switched`
/// (map switched, fence and retired copy left).
pub(super) fn crash_point(step: &str) {
    if std::env::var("TESSERA_MOVE_CRASH").is_ok_and(|s| s == step) {
        eprintln!("TESSERA_MOVE_CRASH: aborting at {step}");
        std::process::abort();
    }
}

fn not_supported(what: &str) -> Error {
    Error::Sql {
        state: common::SqlState::FEATURE_NOT_SUPPORTED,
        message: format!("partition move: {what}"),
    }
}

/// The shard the slot is on now, after checking the request against the
/// catalog read under the DDL lock.
fn check(catalog: &Catalog, req: &MoveRequest) -> Result<ShardId> {
    let first = req
        .tables
        .first()
        .ok_or_else(|| Error::internal("a move of no table"))?;
    let layout = catalog.placement.layout(first.id).to_vec();
    let from = *layout.get(req.slot as usize).ok_or_else(|| {
        Error::internal(format!(
            "{} has no slot {}",
            first.qualified_name(),
            req.slot
        ))
    })?;
    for t in &req.tables {
        if catalog.placement.layout(t.id) != layout.as_slice() {
            return Err(Error::internal(format!(
                "{} is not laid out like {} any more",
                t.qualified_name(),
                first.qualified_name()
            )));
        }
        if catalog.foreign_keys.iter().any(|fk| {
            (fk.table == t.id || fk.ref_table == t.id)
                && fk.enforcement == meta::Enforcement::Shards
        }) {
            return Err(not_supported(&format!(
                "{} has foreign keys the shards enforce",
                t.qualified_name()
            )));
        }
    }
    if !catalog.placement.shard_ids().contains(&req.to) {
        return Err(Error::internal(format!("no shard {}", req.to.0)));
    }
    if from == req.to {
        return Err(Error::internal(format!(
            "slot {} is on shard {} already",
            req.slot, from.0
        )));
    }
    Ok(from)
}

struct Mover<'a> {
    router: &'a Router,
    opts: &'a MoveOptions,
    id: u64,
    slot: u32,
    from: ShardId,
    to: ShardId,
    src: ShardClient,
    dst: ShardClient,
    tables: Vec<Physical>,
    progress: MoveProgress,
    passes: u32,
    fence_parts: [u64; 4],
    lowest_duty: f64,
    /// Undoing a switched move (`undo`): the source is the move's target,
    /// and the two copies differ by what is undone (no full check).
    undoing: bool,
    /// The slot's rows on the source (InnoDB's estimate), and when the
    /// move started: the copy's ETA.
    rows_total: u64,
    started: Instant,
}

/// Moves one slot of a group of tables to `req.to` (see the module's
/// documentation). On an error the move is rolled back: the source is as
/// it was and the target's tables are dropped.
pub async fn move_slot(
    router: &Router,
    req: &MoveRequest,
    opts: &MoveOptions,
) -> Result<MoveReport> {
    let started = Instant::now();
    let names: Vec<String> = req.tables.iter().map(|t| t.qualified_name()).collect();
    let ddl = router
        .meta
        .begin_ddl(
            router.node_id,
            &format!(
                "-- move slot {} of {} to shard {}",
                req.slot,
                names.join(", "),
                req.to.0
            ),
        )
        .await?;
    // Under the DDL lock: the catalog cannot change but through this move.
    let catalog = router.meta.load_catalog().await?;
    let from = check(&catalog, req)?;
    let ids: Vec<TableId> = req.tables.iter().map(|t| t.id).collect();
    let id = router.meta.start_move(&ids, req.slot, from, req.to).await?;
    let tables = req
        .tables
        .iter()
        .map(|t| Physical::new(t, req.slot))
        .collect();
    let mut m = Mover::new(router, opts, id, req.slot, from, req.to, tables)?;
    match m.run(ddl, &catalog).await {
        Ok((fence_ms, copy_secs)) => {
            m.after_switch().await;
            Ok(MoveReport {
                id,
                from,
                to: req.to,
                slot: req.slot,
                tables: m.tables.len(),
                rows: m.progress.rows_copied,
                bytes: m.progress.bytes,
                keys_caught_up: m.progress.keys_caught_up,
                passes: m.passes,
                fence_ms,
                fence_parts: m.fence_parts,
                copy_secs,
                total_secs: started.elapsed().as_secs_f64(),
                lowest_duty: m.lowest_duty,
            })
        }
        Err(e) => {
            m.roll_back(&e).await;
            Err(e)
        }
    }
}

impl<'a> Mover<'a> {
    /// A mover of `slot` of `tables` from `from` to `to` (the move's
    /// record `id`).
    fn new(
        router: &'a Router,
        opts: &'a MoveOptions,
        id: u64,
        slot: u32,
        from: ShardId,
        to: ShardId,
        tables: Vec<Physical>,
    ) -> Result<Mover<'a>> {
        Ok(Mover {
            router,
            opts,
            id,
            slot,
            from,
            to,
            src: router.shard(from)?,
            dst: router.shard(to)?,
            tables,
            progress: MoveProgress::default(),
            passes: 0,
            fence_parts: [0; 4],
            lowest_duty: opts.duty,
            undoing: false,
            rows_total: 0,
            started: Instant::now(),
        })
    }

    /// The source's binary log feed of the slot's tables from `from`,
    /// under server id `base` plus the move's id.
    async fn start_feed(&self, base: u32, from: LogPos) -> Result<Feed> {
        let watched = self
            .tables
            .iter()
            .map(|t| Watched {
                database: t.database.clone(),
                table: t.name.clone(),
                key_columns: t.key_positions.clone(),
            })
            .collect();
        let server_id = base + (self.id % 1_000_000_000) as u32;
        Feed::start(&self.src, server_id, from, watched).await
    }

    fn report(&self, phase: MovePhase) {
        if let Some(f) = &self.opts.progress {
            let copied = self.progress.rows_copied;
            let eta_secs = (phase == MovePhase::Copying && copied > 0).then(|| {
                self.rows_total.saturating_sub(copied) as f64 * self.started.elapsed().as_secs_f64()
                    / copied as f64
            });
            f(&MoveStatus {
                id: self.id,
                phase,
                progress: self.progress,
                eta_secs,
            });
        }
    }

    /// Records progress in `phase` (`reversing` throughout an undo:
    /// recovery tells the two apart by it).
    async fn record(&self, phase: MovePhase) -> Result<()> {
        let phase = if self.undoing {
            MovePhase::Reversing
        } else {
            phase
        };
        self.report(phase);
        self.router
            .meta
            .update_move(self.id, phase, &self.progress)
            .await
    }

    /// Steps 1 to 6; returns the fence's length (ms) and the copy's (s).
    async fn run(&mut self, ddl: DdlTxn, catalog: &Catalog) -> Result<(u64, f64)> {
        self.create_target().await?;
        let copy_started = Instant::now();
        let from_pos = self.copy().await?;
        let copy_secs = copy_started.elapsed().as_secs_f64();
        crash_point("copied");
        // A server id no replica of the cluster uses.
        let feed = self.start_feed(1_000_000_000, from_pos).await?;
        self.record(MovePhase::CatchingUp).await?;
        self.catch_up(&feed).await?;
        let (mut lock, fenced_at) = self.fence(Some(&feed)).await?;
        crash_point("fenced");
        let mut target = self.dst.own_conn().await?;
        let ms = |t: Instant| t.elapsed().as_millis() as u64;
        self.fence_parts[0] = ms(fenced_at);
        let r = async {
            let t = Instant::now();
            self.final_pass(&feed, &mut lock, &mut target).await?;
            self.fence_parts[1] = ms(t);
            let t = Instant::now();
            self.compare_counts(&mut lock, &mut target).await?;
            undo::corrupt_for_test(self, &mut target).await?;
            let (cut, cut_pos) = self.target_at_cut().await?;
            self.fence_parts[2] = ms(t);
            let t = Instant::now();
            let fence = self
                .switch(ddl, catalog, &mut lock, fenced_at, &cut_pos)
                .await;
            self.fence_parts[3] = ms(t);
            fence.map(|f| (f, cut))
        }
        .await;
        // The lock's connection ends either way: closing it releases the
        // fence if UNLOCK did not run.
        let _ = lock.disconnect().await;
        let (fence_ms, mut cut) = r?;
        let checked = self.compare_after_cutover(&mut cut, &self.retired()).await;
        // Its snapshot's metadata locks would hold off undoing the move.
        let _ = cut.disconnect().await;
        if let Err(e) = checked {
            return Err(self.undo_after_failed_check(e).await);
        }
        Ok((fence_ms, copy_secs))
    }

    /// The source tables' names once the switch retired them.
    fn retired(&self) -> Vec<(String, String)> {
        self.tables
            .iter()
            .map(|t| (t.database.clone(), format!("{}_m{}", t.name, self.id)))
            .collect()
    }

    /// Step 1: the target's physical tables, queued for dropping until the
    /// switch commits.
    async fn create_target(&self) -> Result<()> {
        let physical: Vec<(ShardId, String, String)> = self
            .tables
            .iter()
            .map(|t| (self.to, t.database.clone(), t.name.clone()))
            .collect();
        for t in &self.tables {
            self.router.meta.queue_drops(t.def.id, &physical).await?;
        }
        let mut stmts = vec![];
        for t in &self.tables {
            stmts.push(super::ddl::ensure_schema_sql(&t.def.schema));
            stmts.push(super::ddl::create_table_sql(&t.def, self.slot));
        }
        super::ddl::run_on_shards(self.router, vec![(self.to, stmts)]).await
    }

    /// Step 2: the snapshot copy; returns the log position it corresponds
    /// to.
    async fn copy(&mut self) -> Result<LogPos> {
        let from = self.from;
        let mut source = self.src.own_conn().await?;
        let mut target = self.dst.own_conn().await?;
        // The snapshot is opened under a moment's fence: no transaction
        // that wrote the slot is open then, so none prepared (and logged)
        // before the snapshot's position commits after it unseen by the
        // feed. (An XA branch prepared by a coordinator that died holds no
        // table lock; the check of step 5 catches what it hides.)
        let (mut lock, _) = self.fence(None).await?;
        let opened = open_snapshot(&mut source, from).await;
        let _ = lock.query_drop("UNLOCK TABLES").await;
        let _ = lock.disconnect().await;
        let lowered = self.router.meta.lower_fence(self.id).await;
        opened?;
        lowered?;
        let pos = snapshot_pos(&mut source, from).await?;
        self.rows_total = rows::estimated_rows(&mut source, from, &self.tables).await?;
        self.router
            .meta
            .set_move_rows_total(self.id, self.rows_total)
            .await?;
        let shards = vec![self.src.clone(), self.dst.clone()];
        let throttle = Throttle::guarded(self.opts.duty, self.opts.max_slowdown, shards).await?;
        for i in 0..self.tables.len() {
            let c = rows::copy_all(
                &mut source,
                from,
                &mut target,
                self.to,
                &self.tables[i],
                &throttle,
            )
            .await?;
            self.progress.rows_copied += c.rows;
            self.progress.bytes += c.bytes;
            self.record(MovePhase::Copying).await?;
        }
        self.lowest_duty = throttle.lowest_duty();
        source
            .query_drop("COMMIT")
            .await
            .map_err(|e| map_error(from, e))?;
        let _ = source.disconnect().await;
        let _ = target.disconnect().await;
        Ok(pos)
    }

    /// Step 7: this node's catalog reloaded; the retired copy dropped once
    /// `keep_source` has passed.
    async fn after_switch(&self) {
        let _ = self.router.check_version().await;
        self.report(MovePhase::Switched);
        if !self.opts.keep_source.is_zero() {
            tokio::time::sleep(self.opts.keep_source).await;
        }
        match recover::drop_retired(self.router, self.id).await {
            Ok(()) => self.report(MovePhase::Done),
            Err(e) => tracing::warn!("move {}: the retired copy stays for recovery: {e}", self.id),
        }
    }

    async fn roll_back(&self, e: &Error) {
        let record = self
            .router
            .meta
            .moves(false)
            .await
            .ok()
            .and_then(|all| all.into_iter().find(|m| m.id == self.id));
        let Some(r) = record else {
            tracing::warn!("move {}: meta unreadable; left for recovery", self.id);
            return;
        };
        // Switched (then left unverified, or undone): the map names the
        // target or, undone, the source again; nothing is rolled back.
        if matches!(
            r.phase,
            MovePhase::Switched
                | MovePhase::Unverified
                | MovePhase::Reversing
                | MovePhase::Reversed
                | MovePhase::Done
        ) {
            return;
        }
        // Held statements go (to the source: the move is not switched).
        if let Err(x) = self.router.meta.lower_fence(self.id).await {
            tracing::warn!("move {}: its fence stays until it expires: {x}", self.id);
        }
        // A switch cut off after its rename gives the source its names
        // back first; if that fails the move stays open for recovery.
        if let Err(x) = recover::restore_source(self.router, &r).await {
            tracing::warn!("move {}: left for recovery: {x}", self.id);
            return;
        }
        let physical: Vec<(ShardId, String, String)> = self
            .tables
            .iter()
            .map(|t| (self.to, t.database.clone(), t.name.clone()))
            .collect();
        if let Err(d) = super::ddl::drop_physical(self.router, &physical).await {
            tracing::warn!("move {}: the target's tables stay queued: {d}", self.id);
        }
        let _ = self
            .router
            .meta
            .end_move(self.id, MovePhase::RolledBack, Some(&e.to_string()))
            .await;
        self.report(MovePhase::RolledBack);
    }
}
