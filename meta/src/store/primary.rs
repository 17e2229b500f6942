//! A replicated meta (issue 34): which of meta's servers is the primary,
//! and its failover. Each meta server's `meta_primary` row (schema version
//! 14, replicated like every meta table) names the primary and an epoch
//! that every failover moves; the primary is the server whose own row
//! names it at the highest epoch. An old primary that comes back (a
//! restart, or a process that was stopped) names itself at an older epoch,
//! so no node follows it, and the node that sees it writable fences it.
//!
//! Meta's failover cannot be decided through meta: the node that finds
//! the primary gone takes `GET_LOCK('tessera_meta_failover')` on the first
//! replica (every replica must answer for a promotion anyway, so two nodes
//! meet on that lock), checks that no other node has promoted one
//! meanwhile, promotes the furthest replica (`crate::replication`) and
//! records it there.

use std::time::Duration;

use common::config::MysqlEndpoint;
use common::Result;
use mysql_async::prelude::*;

use super::{me, MetaStore};
use crate::replication::{self, admin_conn, meta_claims, primary_of, Login};

const ASK_TIMEOUT: Duration = Duration::from_millis(800);

impl MetaStore {
    /// Asks every meta server which is the primary and uses it: a
    /// writable server naming itself at the highest epoch (any server
    /// naming itself, when `writable_only` is false and none is writable).
    /// Answers whether the server in use changed.
    pub async fn follow_primary(&self, writable_only: bool) -> Result<bool> {
        self.follow_primary_of(self.servers(), writable_only).await
    }

    /// [`MetaStore::follow_primary`] without asking the server in use,
    /// which stopped answering (each ask of a silent server waits out its
    /// timeout): a writable server naming itself at a higher epoch than
    /// every other is one another node promoted.
    pub async fn follow_new_primary(&self) -> Result<bool> {
        let dead = self.server();
        let others: Vec<MysqlEndpoint> = self
            .servers()
            .iter()
            .filter(|s| **s != dead)
            .cloned()
            .collect();
        self.follow_primary_of(&others, true).await
    }

    async fn follow_primary_of(
        &self,
        servers: &[MysqlEndpoint],
        writable_only: bool,
    ) -> Result<bool> {
        if self.servers().len() < 2 {
            return Ok(false);
        }
        let claims = meta_claims(servers, self.database(), ASK_TIMEOUT).await;
        let best = primary_of(&claims, true).or_else(|| {
            if writable_only {
                None
            } else {
                primary_of(&claims, false)
            }
        });
        match best {
            Some((server, _)) => self.switch_to(&server),
            None => Ok(false),
        }
    }

    /// Fences every writable meta server that is not the primary (an old
    /// primary that came back): read-only, its clients' connections killed.
    pub async fn fence_stale(&self, admin_password: &str) {
        if self.servers().len() < 2 {
            return;
        }
        let claims = meta_claims(self.servers(), self.database(), ASK_TIMEOUT).await;
        let Some((primary, _)) = primary_of(&claims, true) else {
            return;
        };
        for c in claims
            .iter()
            .filter(|c| !c.read_only && c.server != primary)
        {
            tracing::warn!(
                "meta server {}:{} is writable but not the primary: fencing it",
                c.server.host,
                c.server.port
            );
            let started = std::time::Instant::now();
            let fenced = match admin_conn(
                &c.server.host,
                c.server.port,
                admin_password,
                ASK_TIMEOUT,
            )
            .await
            {
                Ok(mut conn) => {
                    let r = replication::fence(&mut conn).await;
                    let _ = conn.disconnect().await;
                    r
                }
                Err(e) => Err(e),
            };
            if let Err(e) = fenced {
                tracing::warn!(
                    "fencing meta server {}:{} failed after {} ms (tried again in a second): {e}",
                    c.server.host,
                    c.server.port,
                    started.elapsed().as_millis()
                );
            }
        }
    }

    /// Promotes a meta replica in place of the server in use, which
    /// stopped answering. Answers false when another node holds the
    /// failover lock (it is promoting one).
    pub async fn fail_over(&self, admin_password: &str, node_id: u32) -> Result<bool> {
        let dead = self.server();
        let replicas: Vec<(String, u16)> = self
            .servers()
            .iter()
            .filter(|s| **s != dead)
            .map(|s| (s.host.clone(), s.port))
            .collect();
        let Some((lock_host, lock_port)) = replicas.iter().min_by_key(|r| r.1).cloned() else {
            return Ok(false);
        };
        let mut lock = admin_conn(&lock_host, lock_port, admin_password, ASK_TIMEOUT * 2).await?;
        let got: Option<Option<i64>> = lock
            .query_first("SELECT GET_LOCK('tessera_meta_failover', 0)")
            .await
            .map_err(me)?;
        if got.flatten() != Some(1) {
            return Ok(false);
        }
        // Another node may have promoted one while this one asked (the
        // silent server is not asked: its answer would only wait out the
        // timeout, and a promotion needs every replica anyway).
        if self.follow_new_primary().await? {
            return Ok(true);
        }
        let login = Login {
            user: dead.user.clone(),
            password: dead.password.clone(),
        };
        let promoted = replication::promote("meta", &replicas, admin_password, &login).await?;
        let new = self
            .servers()
            .iter()
            .find(|s| s.host == promoted.server.0 && s.port == promoted.server.1)
            .cloned()
            .unwrap_or_else(|| dead.clone());
        let mut c = replication::conn_to(
            &new.host,
            new.port,
            &new.user,
            &new.password,
            ASK_TIMEOUT * 2,
        )
        .await?;
        c.query_drop(format!("USE `{}`", self.database().replace('`', "``")))
            .await
            .map_err(me)?;
        c.exec_drop(
            "UPDATE meta_primary SET host = ?, port = ?, epoch = epoch + 1 WHERE id = 1",
            (&new.host, new.port),
        )
        .await
        .map_err(me)?;
        c.exec_drop(
            "INSERT INTO failovers (shard_id, old_host, old_port, new_host, new_port, gtid, node_id, detected_ms) \
             VALUES (0, ?, ?, ?, ?, ?, ?, 0)",
            (&dead.host, dead.port, &new.host, new.port, &promoted.gtid, node_id),
        )
        .await
        .map_err(me)?;
        let _ = c.disconnect().await;
        let _ = lock.disconnect().await;
        self.switch_to(&new)?;
        tracing::warn!(
            "meta failed over from {}:{} to {}:{} at {}",
            dead.host,
            dead.port,
            new.host,
            new.port,
            promoted.gtid
        );
        Ok(true)
    }
}
