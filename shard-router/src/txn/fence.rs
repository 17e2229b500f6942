//! A compute node's side of a move's fence (meta: `meta::store::fences`;
//! design: docs/rfcs/2026-12-03-online-moves.md, "The fence").
//!
//! Before a move locks its source tables it raises a fence naming them.
//! Each node, when it sees the fence:
//!
//! * holds every statement of a transaction that began after the fence
//!   (a *new activity*) before it reaches one of those tables on the
//!   source shard: it waits here until the fence is lowered (the map
//!   switched, or the attempt given up), then runs (on the old map it
//!   finds the table renamed and is run again on the new one,
//!   `compute::exec::runner::after_move`);
//! * lets transactions that began before the fence run to their end, and
//!   answers the fence once none of them is left.
//!
//! When every live node has answered, no client transaction holds or
//! will ask for a metadata lock on the slot's tables, so the source's
//! `LOCK TABLES` takes them at once and no client can end up in a lock
//! cycle with it (MariaDB would fail the client: 40P01). The source's
//! lock stays what makes the move correct; the fence only keeps clients
//! from waiting inside MariaDB. A node that does not answer in time
//! leaves the move to its lock as before.
//!
//! An *activity* is a transaction block, or one statement outside any:
//! sessions take one ([`Fences::begin`]) and hold it to its end; its
//! generation says whether it began before a fence.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::ShardId;
use meta::{FenceRecord, MetaStore};
use parking_lot::{Mutex, RwLock};

/// Generation of work that never waits at a fence (internal statements).
pub const NEVER_FENCED: u64 = 0;

/// Generations told apart by the ring of open activities: a fence is
/// answered only while fewer than this many were raised since.
const RING: usize = 64;

struct Raised {
    record: FenceRecord,
    /// Activities of this generation or later began after the fence.
    generation: u64,
}

/// The fences this node honours and its open activities.
pub struct Fences {
    any: AtomicBool,
    raised: RwLock<Vec<Raised>>,
    /// The poll's text of the raised fences when they were last loaded.
    known: Mutex<String>,
    generation: AtomicU64,
    /// Open activities per generation, in a ring (`generation % RING`):
    /// two atomic operations per activity, no lock.
    open: [AtomicUsize; RING],
    lowered: tokio::sync::Notify,
}

impl Default for Fences {
    fn default() -> Self {
        Fences {
            any: AtomicBool::new(false),
            raised: RwLock::new(vec![]),
            known: Mutex::new(String::new()),
            generation: AtomicU64::new(1),
            open: std::array::from_fn(|_| AtomicUsize::new(0)),
            lowered: tokio::sync::Notify::new(),
        }
    }
}

/// An open activity; dropping it ends it.
pub struct Activity {
    fences: Arc<Fences>,
    pub generation: u64,
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.fences
            .slot(self.generation)
            .fetch_sub(1, Ordering::SeqCst);
    }
}

impl Fences {
    /// Whether any fence is raised (statements then check theirs).
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    fn slot(&self, generation: u64) -> &AtomicUsize {
        &self.open[(generation % RING as u64) as usize]
    }

    /// Opens an activity (a transaction, or a statement outside one).
    pub fn begin(self: &Arc<Self>) -> Activity {
        loop {
            let generation = self.generation.load(Ordering::SeqCst);
            self.slot(generation).fetch_add(1, Ordering::SeqCst);
            // A fence raised in between: counted as older, this activity
            // could be missed by an answer already sent; count it anew.
            if self.generation.load(Ordering::SeqCst) == generation {
                return Activity {
                    fences: self.clone(),
                    generation,
                };
            }
            self.slot(generation).fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// No activity older than `generation` is open.
    fn drained_before(&self, generation: u64) -> bool {
        let current = self.generation.load(Ordering::SeqCst);
        if current.saturating_sub(generation) >= RING as u64 - 1 {
            // The ring no longer tells older from newer: never answered
            // (the mover then relies on its lock alone).
            return false;
        }
        (0..RING as u64)
            .map(|back| generation.wrapping_sub(1 + back))
            .take(RING - 1 - (current - generation) as usize)
            .all(|g| self.slot(g).load(Ordering::SeqCst) == 0)
    }

    fn is_raised(&self, move_id: u64, generation: u64) -> bool {
        self.raised
            .read()
            .iter()
            .any(|r| r.record.move_id == move_id && r.generation == generation)
    }

    /// Takes meta's raised fences (`listed`: the poll's text of them; the
    /// records are read only when it changed). A new fence gets the next
    /// generation, and a task that answers it once this node's older
    /// activities have ended; waiters are woken when fences are lowered.
    pub async fn refresh(self: &Arc<Self>, meta: &MetaStore, node_id: u32, listed: &str) {
        if *self.known.lock() == listed {
            return;
        }
        let records = if listed.is_empty() {
            vec![]
        } else {
            match meta.fences().await {
                Ok(r) => r,
                Err(e) => {
                    tracing::debug!("fences not read: {e}");
                    return;
                }
            }
        };
        let mut answer = vec![];
        {
            let mut raised = self.raised.write();
            let mut next = Vec::with_capacity(records.len());
            for record in records {
                match raised.iter().position(|r| r.record == record) {
                    Some(i) => next.push(raised.swap_remove(i)),
                    None => {
                        // An activity begins either before the fence
                        // (older generation) or after (see `begin`).
                        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
                        answer.push((record.move_id, generation));
                        next.push(Raised { record, generation });
                    }
                }
            }
            *raised = next;
            self.any.store(!raised.is_empty(), Ordering::Release);
            *self.known.lock() = listed.to_string();
        }
        self.lowered.notify_waiters();
        for (move_id, generation) in answer {
            let (fences, meta) = (self.clone(), meta.clone());
            tokio::spawn(async move { fences.answer(&meta, node_id, move_id, generation).await });
        }
    }

    async fn answer(&self, meta: &MetaStore, node_id: u32, move_id: u64, generation: u64) {
        let deadline = tokio::time::Instant::now()
            + Duration::from_secs(meta::store::FENCE_EXPIRY_SECS as u64);
        while !self.drained_before(generation) {
            if !self.is_raised(move_id, generation) || tokio::time::Instant::now() > deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if let Err(e) = meta.ack_fence(move_id, node_id).await {
            tracing::debug!("fence of move {move_id} not answered: {e}");
        }
    }

    /// Waits while a fence holds work of `generation` away from `shard`'s
    /// tables that `sql` names (at most until the fence expires).
    pub async fn pass(&self, shard: ShardId, generation: u64, sql: &[&str]) {
        if !self.any() {
            return;
        }
        let deadline = tokio::time::Instant::now()
            + Duration::from_secs(meta::store::FENCE_EXPIRY_SECS as u64);
        loop {
            let lowered = self.lowered.notified();
            tokio::pin!(lowered);
            lowered.as_mut().enable();
            if !self.holds(shard, generation, sql) {
                return;
            }
            if tokio::time::timeout_at(deadline, lowered).await.is_err() {
                return;
            }
        }
    }

    fn holds(&self, shard: ShardId, generation: u64, sql: &[&str]) -> bool {
        self.raised.read().iter().any(|r| {
            r.record.shard == shard
                && generation >= r.generation
                && sql
                    .iter()
                    .any(|s| r.record.objects.iter().any(|o| s.contains(o.as_str())))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fence(fences: &Arc<Fences>, move_id: u64) -> u64 {
        let mut raised = fences.raised.write();
        let generation = fences.generation.fetch_add(1, Ordering::AcqRel) + 1;
        raised.push(Raised {
            record: FenceRecord {
                move_id,
                shard: ShardId(3),
                objects: vec!["`db`.`t_p5`".into()],
                raised_at: String::new(),
            },
            generation,
        });
        fences.any.store(true, Ordering::Release);
        generation
    }

    #[test]
    fn older_activities_pass_newer_wait_only_for_their_tables() {
        let fences = Arc::new(Fences::default());
        let old = fences.begin();
        let g = fence(&fences, 7);
        assert!(!fences.drained_before(g), "the older activity is open");
        let new = fences.begin();
        let sql = ["SELECT * FROM `db`.`t_p5` WHERE id = 1"];
        assert!(!fences.holds(ShardId(3), old.generation, &sql));
        assert!(fences.holds(ShardId(3), new.generation, &sql));
        assert!(!fences.holds(ShardId(2), new.generation, &sql));
        assert!(!fences.holds(ShardId(3), new.generation, &["SELECT * FROM `db`.`t_p50`"]));
        assert!(!fences.holds(ShardId(3), NEVER_FENCED, &sql));
        drop(old);
        assert!(fences.drained_before(g), "only newer activities are open");
        drop(new);
        assert!(fences.open.iter().all(|n| n.load(Ordering::SeqCst) == 0));
    }
}
