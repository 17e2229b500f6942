//! Cancel requests, as PostgreSQL holds them off: a cancel that arrives
//! while a session is ending its transaction (COMMIT, ROLLBACK, the
//! implicit commit of a multi-shard statement) is ignored, as PostgreSQL
//! ignores interrupts inside `CommitTransaction`. pgwire cancels by
//! dropping the statement's future, so the commit work itself also runs in
//! a task of its own (`Branches::finish_detached`): if a cancel slips in
//! just before the shield goes up, the commit still runs to its end and no
//! connection is left inside an XA transaction; only the client's answer
//! is lost.

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
        self.manager.cancel(req.pid, &req.secret_key).await;
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
