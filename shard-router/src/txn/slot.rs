//! A shard connection that one statement at a time uses (a transaction's
//! branch, a consistent cut's snapshot on one shard), with the statements
//! waiting for it counted.
//!
//! A shard scan that streams holds its connection until its last row. When
//! its consumer stops reading to wait for another scan of the same shard
//! (a hash join's build side, a merge of sorted partitions), that scan
//! would wait for the connection for ever. A holder learns through
//! [`SlotGuard::contention`] that someone waits, reads the rest of its rows
//! off the connection (`crate::dist`'s shard rows) and lets it go.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{Mutex, Notify, OwnedMutexGuard};

#[derive(Default)]
struct Waiting {
    n: AtomicUsize,
    notify: Notify,
}

/// Counts one waiter while alive (a waiter dropped mid-wait, e.g. a
/// canceled statement, stops counting).
struct Waiter(Arc<Waiting>);

impl Waiter {
    fn new(w: &Arc<Waiting>) -> Waiter {
        w.n.fetch_add(1, Ordering::SeqCst);
        w.notify.notify_waiters();
        Waiter(w.clone())
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        self.0.n.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection slot shared by the statements of a transaction or cut.
pub struct ConnSlot<T> {
    conn: Arc<Mutex<T>>,
    waiting: Arc<Waiting>,
}

impl<T> Clone for ConnSlot<T> {
    fn clone(&self) -> Self {
        ConnSlot {
            conn: self.conn.clone(),
            waiting: self.waiting.clone(),
        }
    }
}

impl<T: Default> Default for ConnSlot<T> {
    fn default() -> Self {
        ConnSlot::new(T::default())
    }
}

impl<T> ConnSlot<T> {
    pub fn new(v: T) -> ConnSlot<T> {
        ConnSlot {
            conn: Arc::new(Mutex::new(v)),
            waiting: Default::default(),
        }
    }

    /// The slot, once free; while waiting, its holder sees contention.
    pub async fn lock(&self) -> SlotGuard<T> {
        if let Some(g) = self.try_lock() {
            return g;
        }
        let _waiter = Waiter::new(&self.waiting);
        let guard = self.conn.clone().lock_owned().await;
        SlotGuard {
            guard,
            waiting: self.waiting.clone(),
        }
    }

    pub fn try_lock(&self) -> Option<SlotGuard<T>> {
        self.conn
            .clone()
            .try_lock_owned()
            .ok()
            .map(|guard| SlotGuard {
                guard,
                waiting: self.waiting.clone(),
            })
    }

    /// The value, when nobody else holds the slot any more.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        Arc::get_mut(&mut self.conn).map(|m| m.get_mut())
    }
}

/// The slot held.
pub struct SlotGuard<T> {
    guard: OwnedMutexGuard<T>,
    waiting: Arc<Waiting>,
}

impl<T> SlotGuard<T> {
    /// A handle that says when another statement waits for this slot.
    pub fn contention(&self) -> Contention {
        Contention(self.waiting.clone())
    }
}

impl<T> Deref for SlotGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for SlotGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// See [`SlotGuard::contention`].
#[derive(Clone)]
pub struct Contention(Arc<Waiting>);

impl Contention {
    /// Resolves once someone waits for the slot (at once if someone does).
    pub async fn wanted(&self) {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.0.n.load(Ordering::SeqCst) > 0 {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_holder_learns_that_someone_waits() {
        let slot = ConnSlot::new(0u32);
        let held = slot.lock().await;
        let contention = held.contention();
        // Nobody waits: not resolved.
        assert!(
            tokio::time::timeout(Duration::from_millis(20), contention.wanted())
                .await
                .is_err()
        );
        let other = slot.clone();
        let waiter = tokio::spawn(async move { *other.lock().await + 1 });
        tokio::time::timeout(Duration::from_secs(5), contention.wanted())
            .await
            .expect("the waiter is seen");
        drop(held);
        assert_eq!(waiter.await.unwrap(), 1);
    }

    #[tokio::test]
    async fn a_canceled_waiter_stops_counting() {
        let slot = ConnSlot::new(());
        let held = slot.lock().await;
        let contention = held.contention();
        let other = slot.clone();
        let gave_up =
            tokio::time::timeout(Duration::from_millis(20), async move { other.lock().await })
                .await;
        assert!(gave_up.is_err());
        assert!(
            tokio::time::timeout(Duration::from_millis(20), contention.wanted())
                .await
                .is_err()
        );
    }
}
