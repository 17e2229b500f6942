//! Consistent reads across shards: a multi-shard read sees every
//! distributed commit entirely or not at all.
//!
//! The barrier is one row of meta's `snapshot_barrier`. A distributed
//! commit holds it shared (`LOCK IN SHARE MODE`, [`hold_shared`]) from just
//! before its decision until every branch has committed; a reader takes it
//! exclusively (`FOR UPDATE`) just long enough to open `START TRANSACTION
//! WITH CONSISTENT SNAPSHOT, READ ONLY` on every connection it will read
//! through ([`Cut::open`]). While a reader holds it no distributed commit is
//! between its decision and its last `XA COMMIT`, so each such commit is
//! either committed on all its shards or on none when the snapshots open.
//! Readers of one node share one exclusive hold ([`Gate`]: whoever comes
//! while a hold is being taken rides on it), so readers do not queue behind
//! each other, only behind commits in their second phase.
//!
//! A commit whose coordinator died (or lost a shard) in phase two leaves its
//! decision `done = 0` in `commit_log` until recovery has committed every
//! branch. Under the hold a reader lists those and waits (bounded) while one
//! of them wrote two or more of the shards it reads: only then could it see
//! part of that commit. ARCHITECTURE.md, "Consistent reads", has the
//! argument and the failure modes.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use common::{Error, Result, ShardId, SqlState};
use meta::MetaStore;
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::{map_error, quote_str};

use super::reserve::Reserve;
use super::twopc::BarrierHold;
use crate::Router;

/// How long a reader waits for commits left incomplete by a failure that
/// touch what it reads, before giving up with 40001 (the wait for the
/// barrier itself is bounded in its statement: `innodb_lock_wait_timeout`
/// 10 s).
const READER_PATIENCE: Duration = Duration::from_secs(10);

/// How long opening the snapshots may take while the barrier is held
/// exclusively (a hung shard must not stall every distributed commit).
const OPEN_LIMIT: Duration = Duration::from_secs(5);

fn unavailable(what: String) -> Error {
    Error::Sql {
        state: SqlState::SERIALIZATION_FAILURE,
        message: format!("could not take a consistent snapshot across shards: {what}"),
    }
}

/// A meta connection inside a transaction that holds the barrier; closed
/// (so meta rolls back and frees the lock) unless ended cleanly.
struct Held(Option<Conn>);

impl Held {
    async fn end(mut self, sql: String) {
        if let Some(mut c) = self.0.take() {
            if c.query_drop(sql).await.is_err() {
                let _ = c.disconnect().await;
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    let _ = c.disconnect().await;
                });
            }
        }
    }
}

/// A hold taken on a meta server that stopped being the primary while it
/// was taken (one stopped, then resumed after its failover) excludes
/// nothing: commits and readers meet on the new primary's barrier.
fn moved() -> Error {
    Error::meta("meta failed over while the snapshot barrier was taken")
}

/// The committer's side: the barrier held shared until
/// [`BarrierHold::release`].
pub async fn hold_shared(meta: &MetaStore) -> Result<Box<dyn BarrierHold>> {
    let server = meta.server();
    let mut c = meta.barrier_conn().await?;
    match c
        .query_drop(
            "START TRANSACTION; SET STATEMENT innodb_lock_wait_timeout = 10 FOR SELECT id FROM snapshot_barrier WHERE id = 1 LOCK IN SHARE MODE",
        )
        .await
    {
        Ok(()) if meta.server() != server => {
            drop(Held(Some(c)));
            Err(moved())
        }
        Ok(()) => Ok(Box::new(SharedHold(Held(Some(c))))),
        Err(e) => {
            let _ = c.disconnect().await;
            Err(Error::meta(e))
        }
    }
}

struct SharedHold(Held);

#[async_trait]
impl BarrierHold for SharedHold {
    async fn release(self: Box<Self>, done: Option<String>) {
        let sql = match done {
            Some(g) => format!(
                "UPDATE commit_log SET done = 1 WHERE gtrid = {}; COMMIT",
                quote_str(&g)
            ),
            None => "ROLLBACK".into(),
        };
        self.0.end(sql).await
    }
}

/// What a reader learns under the exclusive hold: the shard sets of the
/// commits decided but not completed (`done = 0`).
type Pending = Arc<Vec<Vec<ShardId>>>;

type Ready = Option<std::result::Result<Pending, String>>;

#[derive(Clone)]
struct Epoch {
    ready: tokio::sync::watch::Receiver<Ready>,
    /// Dropped by every reader once its snapshots are open; the hold ends
    /// when the last is gone.
    riders: tokio::sync::mpsc::Sender<()>,
}

/// The readers' side of the barrier on one node.
pub struct Gate {
    meta: MetaStore,
    /// Snapshot connections kept between cuts.
    pub(crate) reserve: Arc<Reserve>,
    current: Arc<parking_lot::Mutex<Option<Epoch>>>,
}

/// A reader's share of an exclusive hold.
pub struct Ticket {
    pub pending: Pending,
    _rider: tokio::sync::mpsc::Sender<()>,
}

impl Gate {
    pub fn new(meta: MetaStore) -> Gate {
        Gate {
            meta,
            reserve: Default::default(),
            current: Default::default(),
        }
    }

    /// Waits for an exclusive hold (its own or one being taken by another
    /// reader of this node) and joins it.
    pub async fn enter(&self) -> Result<Ticket> {
        let epoch = {
            let mut cur = self.current.lock();
            match &*cur {
                Some(e) => e.clone(),
                None => {
                    let e = self.start();
                    *cur = Some(e.clone());
                    e
                }
            }
        };
        let Epoch { mut ready, riders } = epoch;
        let r = ready
            .wait_for(|r| r.is_some())
            .await
            .map_err(|_| unavailable("the barrier's holder went away".into()))?
            .clone();
        match r {
            Some(Ok(pending)) => Ok(Ticket {
                pending,
                _rider: riders,
            }),
            Some(Err(e)) => Err(unavailable(e)),
            None => Err(unavailable("no answer".into())),
        }
    }

    fn start(&self) -> Epoch {
        let (tx, rx) = tokio::sync::watch::channel(None);
        let (riders, mut gone) = tokio::sync::mpsc::channel::<()>(1);
        let epoch = Epoch {
            ready: rx,
            riders: riders.clone(),
        };
        let meta = self.meta.clone();
        let current = self.current.clone();
        let ready_rx = epoch.ready.clone();
        tokio::spawn(async move {
            // Not under a timeout: a meta connection dropped while its
            // transaction is open would go back to the pool inside it. The
            // lock wait is bounded by the statement itself (10 s).
            let server = meta.server();
            let taken = match take_exclusive(&meta).await {
                Ok(_) if meta.server() != server => Err(moved()),
                t => t,
            };
            // Readers coming from now on start the next hold.
            {
                let mut cur = current.lock();
                if cur
                    .as_ref()
                    .is_some_and(|e| e.ready.same_channel(&ready_rx))
                {
                    *cur = None;
                }
            }
            drop(riders);
            match taken {
                Ok((held, pending)) => {
                    let _ = tx.send(Some(Ok(Arc::new(pending))));
                    // Every rider has opened its snapshots (or given up).
                    while gone.recv().await.is_some() {}
                    held.end("ROLLBACK".into()).await;
                }
                Err(e) => {
                    let _ = tx.send(Some(Err(e.to_string())));
                }
            }
        });
        epoch
    }
}

async fn take_exclusive(meta: &MetaStore) -> Result<(Held, Vec<Vec<ShardId>>)> {
    let mut c = meta.barrier_conn().await?;
    // One round trip: the lock, then (under it) the incomplete decisions.
    let r = async {
        let mut r = c
            .query_iter(
                "START TRANSACTION; SET STATEMENT innodb_lock_wait_timeout = 10 FOR SELECT id FROM snapshot_barrier WHERE id = 1 FOR UPDATE; SELECT shards FROM commit_log WHERE done = 0",
            )
            .await?;
        let mut last: Vec<mysql_async::Row> = vec![];
        while !r.is_empty() {
            last = r.collect().await?;
        }
        Ok::<_, mysql_async::Error>(
            last.into_iter()
                .filter_map(|mut row| row.take::<String, _>(0))
                .collect::<Vec<String>>(),
        )
    }
    .await;
    match r {
        Ok(rows) => {
            let pending = rows
                .iter()
                .map(|s| {
                    s.split(',')
                        .filter_map(|n| n.trim().parse().ok().map(ShardId))
                        .collect()
                })
                .collect();
            Ok((Held(Some(c)), pending))
        }
        Err(e) => {
            let _ = c.disconnect().await;
            Err(Error::meta(e))
        }
    }
}

/// The table a REPEATABLE READ branch reads to open its read view at
/// `XA START` (MariaDB has no `XA START ... WITH CONSISTENT SNAPSHOT`; any
/// consistent read of an InnoDB table opens it). In `tsr_tessera`: schema
/// names starting with "tessera" are reserved, so no user schema maps there.
pub const PROBE: &str = "`tsr_tessera`.`snapshot_probe`";

/// Creates [`PROBE`] on a shard if it is not there (every node, at start,
/// for every shard it learns of; retried while the shard is down).
pub async fn ensure_probe(shard: storage_adapter::ShardClient) {
    let sql = format!(
        "CREATE DATABASE IF NOT EXISTS `tsr_tessera`; CREATE TABLE IF NOT EXISTS {PROBE} (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT IGNORE INTO {PROBE} VALUES (1)"
    );
    for attempt in 0..120u32 {
        match shard.conn().await {
            Ok(mut c) => match c.query_drop(&sql).await {
                Ok(()) => return,
                Err(e) => tracing::debug!("snapshot probe on {}: {e}", shard.id),
            },
            Err(e) => tracing::debug!("snapshot probe on {}: {e}", shard.id),
        }
        tokio::time::sleep(Duration::from_millis(500 * (attempt as u64 + 1).min(20))).await;
    }
}

/// One connection of a cut: inside `START TRANSACTION WITH CONSISTENT
/// SNAPSHOT, READ ONLY`; kept for the next cut on its shard when the cut
/// ends (`super::reserve`), or committed and pooled again.
pub struct SnapConn(pub Option<Conn>, Option<(ShardId, Arc<Reserve>)>);

impl Drop for SnapConn {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            if c.is_disconnected() {
                // Left midway through a statement (`Lease::conn`): the pool
                // discards it.
                return;
            }
            match self.1.take() {
                Some((shard, reserve)) => reserve.keep(shard, c),
                None => {
                    if let Ok(rt) = tokio::runtime::Handle::try_current() {
                        rt.spawn(super::reserve::retire(c));
                    }
                }
            }
        }
    }
}

type Slot = super::slot::ConnSlot<SnapConn>;

/// A statement's consistent cut: one connection per shard it reads, every
/// one opened under one exclusive hold of the barrier. One, not one per
/// partition read at once: two snapshots of one shard opened a moment apart
/// could each see a different side of a single-shard commit. The reads of
/// one shard take turns on its connection (a streaming scan that another
/// waits for reads the rest of its rows off first: `super::slot`).
pub struct Cut {
    slots: HashMap<ShardId, Slot>,
    /// Reads through the transaction's own branches that must open their
    /// read views before the barrier is let go ([`Cut::open_pinned`]).
    pin: Option<Arc<Pin>>,
}

/// The exclusive hold a pinned cut keeps until every read through a
/// branch of the statement has opened its read view.
struct Pin {
    hold: parking_lot::Mutex<Option<Ticket>>,
    left: std::sync::atomic::AtomicUsize,
    expired: std::sync::atomic::AtomicBool,
}

impl Pin {
    fn one_less(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        let before = self.left.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1));
        if before == Ok(1) {
            self.hold.lock().take();
        }
    }
}

/// One branch read's share of a pinned cut: [`ViewPin::opened`] once its
/// statement has answered (its read view is open), or dropped.
pub struct ViewPin(Arc<Pin>);

impl ViewPin {
    /// The read's view is open: fine unless the hold ran out first
    /// ([`OPEN_LIMIT`]), when commits may have landed between the cut's
    /// snapshots and this view (40001).
    pub fn opened(self) -> Result<()> {
        if self.0.expired.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(unavailable(format!(
                "a read through the transaction's branch did not start within {} s",
                OPEN_LIMIT.as_secs()
            )));
        }
        Ok(())
    }
}

impl Drop for ViewPin {
    fn drop(&mut self) {
        self.0.one_less();
    }
}

impl Cut {
    /// Opens the cut on `shards`: under the barrier when they are two or
    /// more (a distributed commit is atomic on each shard by itself).
    pub async fn open(router: &Router, shards: &BTreeSet<ShardId>) -> Result<Arc<Cut>> {
        let list: Vec<ShardId> = shards.iter().copied().collect();
        let slots = if list.len() < 2 {
            open_all(router, &list).await?
        } else {
            under_barrier(router, &list, || open_all(router, &list)).await?
        };
        Ok(Arc::new(Cut { slots, pin: None }))
    }

    /// A READ COMMITTED transaction's cut when it also reads `own_reads`
    /// times through its branches (on `own` shards, where its writes are):
    /// such a read opens a read view per statement, at its start, so the
    /// barrier stays held exclusively until each of those statements has
    /// answered ([`ViewPin`]), at most [`OPEN_LIMIT`]. Every view of the
    /// statement then sees the same distributed commits.
    pub async fn open_pinned(
        router: &Router,
        shards: &BTreeSet<ShardId>,
        own: &BTreeSet<ShardId>,
        own_reads: usize,
    ) -> Result<Arc<Cut>> {
        let list: Vec<ShardId> = shards.iter().copied().collect();
        let all: Vec<ShardId> = shards.union(own).copied().collect();
        let (slots, ticket) =
            under_barrier_keeping(router, &all, || open_all(router, &list)).await?;
        let pin = Arc::new(Pin {
            hold: parking_lot::Mutex::new(Some(ticket)),
            left: own_reads.into(),
            expired: false.into(),
        });
        let weak = Arc::downgrade(&pin);
        tokio::spawn(async move {
            tokio::time::sleep(OPEN_LIMIT).await;
            if let Some(p) = weak.upgrade() {
                if p.hold.lock().take().is_some() {
                    p.expired.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
        });
        Ok(Arc::new(Cut {
            slots,
            pin: Some(pin),
        }))
    }

    /// A read through the transaction's own branch in this statement: its
    /// share of the hold, if the cut keeps one.
    pub fn view_pin(&self) -> Option<ViewPin> {
        self.pin.as_ref().map(|p| ViewPin(p.clone()))
    }

    /// The cut's connection on `shard`, once free.
    pub async fn lease(&self, shard: ShardId) -> Result<super::slot::SlotGuard<SnapConn>> {
        let slot = self.slots.get(&shard).ok_or_else(|| {
            Error::internal(format!("{shard} is not in the statement's snapshot"))
        })?;
        Ok(slot.lock().await)
    }

    pub fn covers(&self, shard: ShardId) -> bool {
        self.slots.contains_key(&shard)
    }
}

/// Runs `open` (which opens snapshots on `shards`) under an exclusive
/// hold of the barrier, once no commit interrupted by a failure could show
/// part of itself to a read of `shards`.
pub async fn under_barrier<T, F, Fut>(router: &Router, shards: &[ShardId], open: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    under_barrier_keeping(router, shards, open)
        .await
        .map(|(t, _ticket)| t)
}

/// An exclusive hold of the barrier for reads that run under it (a held
/// read: one statement per shard on pooled connections, each opening its
/// own read view while no distributed commit is between its decision and
/// its last `XA COMMIT`), kept until the [`Ticket`] is dropped. The caller
/// bounds how long it keeps it: every distributed commit and every new
/// hold of the cluster waits for it.
pub async fn hold_for_reads(router: &Router, shards: &[ShardId]) -> Result<Ticket> {
    under_barrier_keeping(router, shards, || async { Ok(()) })
        .await
        .map(|((), ticket)| ticket)
}

/// [`under_barrier`], the hold kept (until the [`Ticket`] is dropped).
async fn under_barrier_keeping<T, F, Fut>(
    router: &Router,
    shards: &[ShardId],
    open: F,
) -> Result<(T, Ticket)>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let start = Instant::now();
    loop {
        let ticket = router.snapshots.enter().await?;
        // A commit left half done by a failure is waited for when this
        // read could see part of it (two or more of its shards).
        let blocking = ticket
            .pending
            .iter()
            .any(|p| p.iter().filter(|s| shards.contains(s)).count() >= 2);
        if blocking {
            drop(ticket);
            if start.elapsed() > READER_PATIENCE {
                return Err(unavailable(
                    "a distributed commit interrupted by a failure is still being completed by recovery".into(),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let opened = tokio::time::timeout(OPEN_LIMIT, open()).await;
        return match opened {
            Ok(r) => r.map(|t| (t, ticket)),
            Err(_) => Err(unavailable(format!(
                "opening the shards' snapshots took over {} s",
                OPEN_LIMIT.as_secs()
            ))),
        };
    }
}

async fn open_all(router: &Router, shards: &[ShardId]) -> Result<HashMap<ShardId, Slot>> {
    let reserve = &router.snapshots.reserve;
    let jobs = shards.iter().map(|&shard| async move {
        let client = router.shard(shard)?;
        let (host, port) = client.server();
        let (conn, open) = match reserve.take(shard, host, port) {
            Some(c) => (c, super::reserve::OPEN_KEPT),
            None => (client.conn().await?, super::reserve::OPEN_FRESH),
        };
        // Wrapped first: dropped at any point (the opening timed out), the
        // connection is committed (or kept inside its snapshot, whose
        // opening a later cut's replaces) before it is pooled.
        let mut sc = SnapConn(Some(conn), None);
        if let Some(c) = sc.0.as_mut() {
            c.query_drop(open).await.map_err(|e| map_error(shard, e))?;
        }
        sc.1 = Some((shard, reserve.clone()));
        Ok::<_, Error>((shard, Slot::new(sc)))
    });
    futures::future::join_all(jobs).await.into_iter().collect()
}

/// 40001 when a partition moved to `shard` after a transaction's cut was
/// taken under `then`: the cut's read view there predates the partition's
/// copy, so reading it would miss rows (PostgreSQL's answer to a snapshot
/// that cannot be kept: retry the transaction).
pub(super) fn check_cut(
    then: Option<Arc<meta::Placement>>,
    router: &crate::Router,
    shard: ShardId,
) -> Result<()> {
    match then {
        Some(then) if router.placement().moved_to(&then, shard) => Err(Error::Sql {
            state: SqlState::SERIALIZATION_FAILURE,
            message: "could not serialize access: a partition moved to another shard after this transaction's snapshot; retry the transaction".into(),
        }),
        _ => Ok(()),
    }
}
