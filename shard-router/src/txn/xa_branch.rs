//! A transaction branch: while statements run in it ([`Branch`]), and as
//! the two-phase commit coordinator drives it (`super::twopc::Participant`):
//! `XA END` / `PREPARE` / `COMMIT` / `ROLLBACK` on the branch's own
//! connection, which is closed rather than pooled when its XA state is
//! unknown or unfinished.

use common::{Error, Result, ShardId};
use mysql_async::prelude::*;
use mysql_async::Conn;
use storage_adapter::map_error;

use super::twopc::Participant;
use super::xid::branch_sql as xid;

/// One shard's part of a distributed transaction while its statements run:
/// its connection, inside `XA START`. Handed on whole
/// ([`Branch::into_conn`]) to the commit or the rollback that ends it;
/// dropped any other way (a commit given up midway when a server fails
/// over, a transaction dropped while a statement held the branch), the
/// connection is closed, which rolls the branch back, and never goes back
/// to the pool with the XA transaction still active there: the next
/// `XA START` on it would fail with XAER_RMFAIL, and a statement in
/// autocommit would silently join the dead transaction.
pub struct Branch {
    conn: Option<Conn>,
}

impl Branch {
    pub fn new(conn: Conn) -> Branch {
        Branch { conn: Some(conn) }
    }

    /// The connection (always there until [`Branch::into_conn`]).
    pub fn conn(&mut self) -> Option<&mut Conn> {
        self.conn.as_mut()
    }

    /// The connection, for whoever ends the branch (and owns its state).
    pub fn into_conn(mut self) -> Option<Conn> {
        self.conn.take()
    }
}

impl Drop for Branch {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            close(conn);
        }
    }
}

/// Closes `conn` rather than pooling it.
fn close(conn: Conn) {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            let _ = conn.disconnect().await;
        });
    }
}

/// A branch as the commit coordinator drives it, on its own connection.
pub struct XaBranch {
    shard: ShardId,
    conn: Option<Conn>,
    active: bool,
    /// XA PREPARE succeeded and no XA COMMIT / ROLLBACK has yet.
    prepared: bool,
    broken: bool,
}

impl XaBranch {
    /// An active branch (after `XA START`) on `conn`.
    pub fn new(shard: ShardId, conn: Conn) -> XaBranch {
        XaBranch {
            shard,
            conn: Some(conn),
            active: true,
            prepared: false,
            broken: false,
        }
    }

    async fn run(&mut self, sql: String) -> Result<()> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| Error::internal("branch connection gone"))?;
        if conn.is_disconnected() {
            // A statement on it was dropped midway (`Lease::conn`): closed
            // on drop, which rolls an active branch back.
            self.broken = true;
            return Err(Error::ShardUnavailable {
                shard: self.shard.to_string(),
                message: "the branch's connection was left midway through a statement".into(),
            });
        }
        // Until the statement answers, the branch's state is unknown: a
        // commit given up midway (its future dropped, as a failover does
        // to statements on a stopped server) leaves the branch broken, so
        // its connection is closed, never pooled with an XA transaction
        // still active on it (the next `XA START` there failed with
        // XAER_RMFAIL, seen once in the failover scenario).
        let was_broken = self.broken;
        self.broken = true;
        let r = conn
            .query_drop(sql)
            .await
            .map_err(|e| map_error(self.shard, e));
        if r.is_ok() {
            self.broken = was_broken;
        }
        r
    }

    /// `XA END` (if still active) and `then` in one round trip: MariaDB
    /// runs the second statement only if the first succeeded.
    async fn end_then(&mut self, then: String, gtrid: &str) -> Result<()> {
        if self.active {
            self.active = false;
            self.run(format!("XA END {}; {then}", xid(gtrid, self.shard)))
                .await
        } else {
            self.run(then).await
        }
    }

    async fn end(&mut self, gtrid: &str) -> Result<()> {
        if self.active {
            self.active = false;
            self.run(format!("XA END {}", xid(gtrid, self.shard)))
                .await?;
        }
        Ok(())
    }
}

impl Drop for XaBranch {
    fn drop(&mut self) {
        if self.broken || self.active || self.prepared {
            // Never hand a connection in an unknown or unfinished XA state
            // back to the pool (a prepared branch whose decision could not
            // be recorded made every later statement on that connection
            // fail with XAER_RMFAIL): closing it makes MariaDB roll back
            // an active branch, a prepared one survives for recovery.
            if let Some(conn) = self.conn.take() {
                close(conn);
            }
        }
    }
}

#[async_trait::async_trait]
impl Participant for XaBranch {
    fn shard(&self) -> ShardId {
        self.shard
    }
    async fn prepare(&mut self, gtrid: &str) -> Result<()> {
        let x = xid(gtrid, self.shard);
        self.end_then(format!("XA PREPARE {x}"), gtrid).await?;
        self.prepared = true;
        Ok(())
    }
    async fn commit_prepared(&mut self, gtrid: &str) -> Result<()> {
        self.run(format!("XA COMMIT {}", xid(gtrid, self.shard)))
            .await?;
        self.prepared = false;
        Ok(())
    }
    async fn commit_one_phase(&mut self, gtrid: &str) -> Result<()> {
        let x = xid(gtrid, self.shard);
        self.end_then(format!("XA COMMIT {x} ONE PHASE"), gtrid)
            .await
    }
    async fn commit_alone(&mut self, gtrid: &str) -> Result<()> {
        let x = xid(gtrid, self.shard);
        self.end_then(format!("XA PREPARE {x}; XA COMMIT {x}"), gtrid)
            .await
    }
    async fn rollback(&mut self, gtrid: &str) -> Result<()> {
        let _ = self.end(gtrid).await;
        self.run(format!("XA ROLLBACK {}", xid(gtrid, self.shard)))
            .await?;
        self.prepared = false;
        Ok(())
    }
}
