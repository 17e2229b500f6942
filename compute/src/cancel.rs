//! Cancel requests, as PostgreSQL holds them off: a cancel that arrives
//! while a session is ending its transaction (COMMIT, ROLLBACK, the
//! implicit commit of a multi-shard statement) is ignored, as PostgreSQL
//! ignores interrupts inside `CommitTransaction`. pgwire cancels by
//! dropping the statement's future, so the commit work itself also runs in
//! a task of its own (`Branches::finish_detached`): if a cancel slips in
//! just before the shield goes up, the commit still runs to its end and no
//! connection is left inside an XA transaction; only the client's answer
//! is lost.
//!
//! A statement whose rows stream after its handler returned (DataFusion
//! results) is past pgwire's cancel point: its stream waits on the
//! session's [`Interrupt`] too, which every honoured cancel request fires.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;
use pgwire::api::cancel::CancelHandler;
use pgwire::api::ConnectionManager;
use pgwire::messages::cancel::CancelRequest;

static SHIELDED: LazyLock<Mutex<HashMap<i32, usize>>> = LazyLock::new(Default::default);

/// While alive, cancel requests for the session with this backend pid are
/// ignored.
pub struct Shield(i32);

impl Shield {
    pub fn new(pid: i32) -> Shield {
        *SHIELDED.lock().entry(pid).or_insert(0) += 1;
        Shield(pid)
    }
}

impl Drop for Shield {
    fn drop(&mut self) {
        let mut m = SHIELDED.lock();
        if let Some(n) = m.get_mut(&self.0) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.0);
            }
        }
    }
}

pub fn shielded(pid: i32) -> bool {
    SHIELDED.lock().contains_key(&pid)
}

/// Cancel requests for one session, for statements whose rows are still
/// streaming: each request moves the generation on and wakes the waiters.
#[derive(Default)]
pub struct Interrupt {
    generation: std::sync::atomic::AtomicU64,
    notify: tokio::sync::Notify,
}

impl Interrupt {
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Resolves once a cancel request arrived after generation `g`.
    pub async fn past(&self, g: u64) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.generation() != g {
                return;
            }
            notified.await;
        }
    }

    fn fire(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.notify.notify_waiters();
    }
}

static INTERRUPTS: LazyLock<Mutex<HashMap<i32, Arc<Interrupt>>>> = LazyLock::new(Default::default);

/// The interrupt of the session with backend pid `pid` (made on first use).
pub fn interrupt_of(pid: i32) -> Arc<Interrupt> {
    INTERRUPTS.lock().entry(pid).or_default().clone()
}

/// The session with backend pid `pid` ended.
pub fn forget(pid: i32) {
    INTERRUPTS.lock().remove(&pid);
}

/// pgwire's cancel handling with the shield in front.
pub struct ShieldedCancelHandler {
    pub manager: Arc<ConnectionManager>,
}

#[async_trait::async_trait]
impl CancelHandler for ShieldedCancelHandler {
    async fn on_cancel_request(&self, req: CancelRequest) {
        if shielded(req.pid) {
            tracing::debug!(
                pid = req.pid,
                "cancel request ignored: transaction end in progress"
            );
            return;
        }
        // `cancel` is true only for a connection with this pid and secret.
        if self.manager.cancel(req.pid, &req.secret_key).await {
            if let Some(i) = INTERRUPTS.lock().get(&req.pid) {
                i.fire();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shields_nest() {
        let a = Shield::new(-7);
        let b = Shield::new(-7);
        drop(a);
        assert!(shielded(-7));
        drop(b);
        assert!(!shielded(-7));
    }
}
