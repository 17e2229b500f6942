//! Cancel requests, as PostgreSQL holds them off. A cancel request moves
//! the session's [`Interrupt`] on; the running statement (its shard work in
//! `Session::run`, its rows streaming after the handler returned) watches
//! the interrupt from the generation it started at and stops with 57014.
//! pgwire's own cancellation (dropping the handler's future whenever a
//! request arrives) is not used: it could drop a COMMIT after its decision.
//!
//! The end of a transaction (COMMIT, ROLLBACK, the implicit commit of a
//! multi-shard statement) raises a [`Shield`] first, as PostgreSQL holds
//! interrupts in `CommitTransaction`. A request and a shield settle their
//! race under one lock: a request that arrives while a shield is up is
//! ignored, and a shield cannot go up for a statement a request already
//! interrupted (that statement fails with 57014 and its commit never
//! starts). So a COMMIT is either canceled before it began or runs to its
//! end and answers; a client never gets 57014 for a transaction that
//! committed. The commit work itself also runs in a task of its own
//! (`Branches::finish_detached`), so a client that disconnects mid-commit
//! leaves no connection inside an XA transaction.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use common::{Error, Result};
use parking_lot::Mutex;
use pgwire::api::cancel::CancelHandler;
use pgwire::messages::cancel::CancelRequest;
use pgwire::messages::startup::SecretKey;

/// A session's cancel state: its secret key, the shields up, its interrupt.
struct Registered {
    secret: SecretKey,
    shields: usize,
    interrupt: Arc<Interrupt>,
}

/// Sessions of this node by backend pid.
static SESSIONS: LazyLock<Mutex<HashMap<i32, Registered>>> = LazyLock::new(Default::default);

/// The session with backend pid `pid` and this secret key started; its
/// interrupt.
pub fn register(pid: i32, secret: SecretKey) -> Arc<Interrupt> {
    let interrupt = Arc::new(Interrupt::default());
    SESSIONS.lock().insert(
        pid,
        Registered {
            secret,
            shields: 0,
            interrupt: interrupt.clone(),
        },
    );
    interrupt
}

/// The session with backend pid `pid` ended.
pub fn forget(pid: i32) {
    SESSIONS.lock().remove(&pid);
}

/// While alive, cancel requests for the session with this backend pid are
/// ignored.
pub struct Shield(i32);

impl Shield {
    /// Holds off cancel requests for the statement that started at
    /// interrupt generation `since`; 57014 if one already interrupted it.
    pub fn raise(pid: i32, since: u64) -> Result<Shield> {
        let mut m = SESSIONS.lock();
        if let Some(r) = m.get_mut(&pid) {
            if r.interrupt.generation() != since {
                return Err(Error::Canceled);
            }
            r.shields += 1;
        }
        Ok(Shield(pid))
    }
}

impl Drop for Shield {
    fn drop(&mut self) {
        if let Some(r) = SESSIONS.lock().get_mut(&self.0) {
            r.shields = r.shields.saturating_sub(1);
        }
    }
}

/// Cancel requests for one session: each honoured request moves the
/// generation on and wakes the waiters.
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

/// What a cancel request did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Interrupted,
    /// The session is ending its transaction.
    Shielded,
    /// No session with that pid and secret key.
    Unknown,
}

/// A cancel request for (`pid`, `secret`): the session's statement is
/// interrupted unless a shield is up.
pub fn request(pid: i32, secret: &SecretKey) -> Outcome {
    let m = SESSIONS.lock();
    match m.get(&pid) {
        Some(r) if r.secret.eq_value(secret) => {
            if r.shields > 0 {
                Outcome::Shielded
            } else {
                r.interrupt.fire();
                Outcome::Interrupted
            }
        }
        _ => Outcome::Unknown,
    }
}

/// Cancel requests from the wire.
pub struct TesseraCancelHandler;

#[async_trait::async_trait]
impl CancelHandler for TesseraCancelHandler {
    async fn on_cancel_request(&self, req: CancelRequest) {
        let outcome = request(req.pid, &req.secret_key);
        tracing::debug!(pid = req.pid, ?outcome, "cancel request");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shields_and_requests_settle_their_race() {
        let secret = SecretKey::I32(42);
        let i = register(-7, secret.clone());
        let g0 = i.generation();
        // A wrong key does nothing.
        assert_eq!(request(-7, &SecretKey::I32(41)), Outcome::Unknown);
        let a = Shield::raise(-7, g0).unwrap();
        let b = Shield::raise(-7, g0).unwrap();
        drop(a);
        assert_eq!(request(-7, &secret), Outcome::Shielded);
        assert_eq!(i.generation(), g0);
        drop(b);
        assert_eq!(request(-7, &secret), Outcome::Interrupted);
        // The statement that started at g0 was interrupted: its commit
        // may not start.
        assert!(matches!(Shield::raise(-7, g0), Err(Error::Canceled)));
        // The next statement's may.
        assert!(Shield::raise(-7, i.generation()).is_ok());
        forget(-7);
        assert_eq!(request(-7, &secret), Outcome::Unknown);
    }
}
