//! Failover of replicated shards (issue 34; design in
//! docs/rfcs/2026-12-04-replicas-and-failover.md).
//!
//! One compute node at a time holds meta's `shard_failover` lease and
//! probes every replicated shard's primary; when a primary misses
//! [`MISSES`] probes in a row, that node promotes the replica holding the
//! most of its binary log ([`promote`]), records the new primary in meta
//! (the placement epoch and catalog version move, so every node routes to
//! it at its next poll), and from then on keeps the old primary fenced
//! whenever it answers again: read-only, its client connections killed.
//!
//! Nothing acknowledged is lost: a shard's primary commits only once a
//! replica has the transaction (semi-synchronous, `AFTER_SYNC`, with no
//! fallback to asynchronous), a promotion needs every replica to answer,
//! stops each one's stream from the old primary before reading positions,
//! and promotes the one that applied the most.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Result, ShardId};
use meta::replication::{self, admin_conn};
use meta::{ReplicaRecord, ReplicaState};
use mysql_async::prelude::*;
use mysql_async::Conn;

use crate::Router;

/// The meta lease of the node that watches the primaries.
pub const LEASE: &str = "shard_failover";

/// How often the watcher probes each primary.
pub const PROBE_EVERY: Duration = Duration::from_millis(250);

/// Missed probes in a row that make a primary failed.
pub const MISSES: u32 = 4;

/// Or fewer, when none answered for this long: a stopped primary (alive
/// but silent) makes each probe wait [`PROBE_TIMEOUT`], so four misses
/// would take five seconds.
pub const SILENCE: Duration = Duration::from_secs(2);

/// Whether a primary that missed `misses` probes in a row, the first
/// sent at `first`, has failed.
fn has_failed(misses: u32, first: Instant) -> bool {
    misses >= MISSES || (misses >= 2 && first.elapsed() >= SILENCE)
}

/// Longest wait for a probe's answer.
const PROBE_TIMEOUT: Duration = Duration::from_millis(1000);

/// The lease's length; renewed every second by its holder, and again
/// just before a failover is recorded.
const LEASE_SECS: u32 = 5;
const RENEW_EVERY: Duration = Duration::from_secs(1);

/// Runs until the process ends: takes the lease when it is free, and
/// while this node holds it, probes the primaries and fails them over.
/// A node without the administrative password never takes the lease.
pub async fn watch(router: Arc<Router>, admin_password: String) {
    let replicated_meta = router.meta.servers().len() > 1;
    if admin_password.is_empty() && !replicated_meta {
        return;
    }
    let mut w = Watcher {
        router,
        admin_password,
        held_until: None,
        renewed: None,
        replicas: vec![],
        probes: HashMap::new(),
        misses: HashMap::new(),
        meta_misses: None,
        meta_checked: Instant::now(),
    };
    loop {
        tokio::time::sleep(PROBE_EVERY).await;
        if replicated_meta {
            w.meta_round().await;
        }
        // The lease lives in meta: while meta's primary is silent the
        // round would only wait on it, and the meta round's next probe
        // with it.
        if w.admin_password.is_empty() || w.meta_misses.is_some() {
            continue;
        }
        if let Err(e) = w.round().await {
            tracing::warn!("failover watcher: {e}");
        }
    }
}

/// Waits (up to [`SILENCE`] twice over) for another node's promotion of a
/// meta replica, and follows it; answers whether it did.
async fn promoted_elsewhere(meta: &meta::MetaStore) -> bool {
    let until = Instant::now() + SILENCE * 2;
    while Instant::now() < until {
        if matches!(meta.follow_new_primary().await, Ok(true)) {
            return true;
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
    false
}

struct Watcher {
    router: Arc<Router>,
    admin_password: String,
    /// While this node holds the lease (by its own clock, a second short
    /// of meta's expiry).
    held_until: Option<Instant>,
    renewed: Option<Instant>,
    replicas: Vec<ReplicaRecord>,
    /// A kept connection to each primary: (its port, the connection).
    probes: HashMap<ShardId, (u16, Conn)>,
    /// Missed probes in a row, and when the first of them was sent.
    misses: HashMap<ShardId, (u32, Instant)>,
    /// The same for meta's primary.
    meta_misses: Option<(u32, Instant)>,
    /// When meta's servers were last asked which is the primary.
    meta_checked: Instant,
}

impl Watcher {
    /// Meta's primary: probed every round; every second every meta server
    /// is asked which is the primary (a failover another node made is
    /// followed, an old primary that came back is fenced); after
    /// [`MISSES`] misses a replica is promoted.
    async fn meta_round(&mut self) {
        let meta = self.router.meta.clone();
        let sent = Instant::now();
        let probe = async {
            let mut c = meta.conn().await?;
            c.query_drop("SELECT 1").await.map_err(common::Error::meta)
        };
        let answered = matches!(tokio::time::timeout(PROBE_TIMEOUT, probe).await, Ok(Ok(())));
        if answered {
            self.meta_misses = None;
            if self.meta_checked.elapsed() >= RENEW_EVERY {
                self.meta_checked = Instant::now();
                match meta.follow_primary(true).await {
                    Ok(true) => self.router.meta_moved(),
                    Ok(false) => {}
                    Err(e) => tracing::debug!("asking meta's servers: {e}"),
                }
                if !self.admin_password.is_empty() {
                    meta.fence_stale(&self.admin_password).await;
                }
            }
            return;
        }
        let m = self.meta_misses.get_or_insert((0, sent));
        m.0 += 1;
        tracing::warn!("meta's primary missed probe {} of {MISSES}", m.0);
        if !has_failed(m.0, m.1) {
            return;
        }
        let first_miss = m.1;
        let moved = match meta.follow_new_primary().await {
            Ok(true) => true,
            _ if self.admin_password.is_empty() => false,
            _ => match meta
                .fail_over(&self.admin_password, self.router.node_id)
                .await
            {
                Ok(true) => true,
                // Another node is promoting one: followed as soon as it is
                // recorded, not at this node's next probe (which would
                // wait out its timeout on the silent server first).
                Ok(false) => promoted_elsewhere(&meta).await,
                Err(e) => {
                    tracing::warn!("meta failover not done yet: {e}");
                    false
                }
            },
        };
        if moved {
            tracing::warn!(
                "meta: on its new primary {} ms after the first missed probe",
                first_miss.elapsed().as_millis()
            );
            self.meta_misses = None;
            self.router.meta_moved();
            let _ = self.router.check_version().await;
        }
    }

    async fn round(&mut self) -> Result<()> {
        if !self.lease().await? {
            return Ok(());
        }
        let placement = self.router.placement();
        let shards: Vec<ShardId> = placement
            .shard_ids()
            .into_iter()
            .filter(|s| self.candidates(*s).next().is_some())
            .collect();
        for shard in shards {
            let server = placement.server(shard)?.clone();
            let sent = Instant::now();
            if self.probe(shard, &server.host, server.port).await {
                self.misses.remove(&shard);
                continue;
            }
            let m = self.misses.entry(shard).or_insert((0, sent));
            m.0 += 1;
            tracing::warn!("{shard}: its primary missed probe {} of {MISSES}", m.0);
            if !has_failed(m.0, m.1) {
                continue;
            }
            let first_miss = m.1;
            match self
                .fail_over(shard, (server.host.clone(), server.port), first_miss)
                .await
            {
                Ok(()) => {
                    self.misses.remove(&shard);
                }
                Err(e) => tracing::warn!("{shard}: failover not done yet: {e}"),
            }
        }
        self.fence_failed().await;
        Ok(())
    }

    /// Takes or renews the lease (every second); answers whether this node
    /// holds it.
    async fn lease(&mut self) -> Result<bool> {
        let due = self.renewed.is_none_or(|t| t.elapsed() >= RENEW_EVERY);
        if due {
            let asked = Instant::now();
            self.renewed = Some(asked);
            let meta = &self.router.meta;
            // Bounded: a silent meta primary (stopped, cut off) must not
            // stall the watcher, whose meta round fails meta over.
            let taken = tokio::time::timeout(
                PROBE_TIMEOUT,
                meta.take_lease(LEASE, self.router.node_id, LEASE_SECS),
            )
            .await;
            match taken {
                Ok(Ok(true)) => {
                    if self.held_until.is_none() {
                        tracing::info!("this node watches the shards' primaries now");
                    }
                    self.held_until = Some(asked + Duration::from_secs(LEASE_SECS as u64 - 1));
                    self.replicas = tokio::time::timeout(PROBE_TIMEOUT, meta.shard_replicas())
                        .await
                        .map_err(|_| common::Error::meta("meta did not answer in time"))??;
                }
                Ok(Ok(false)) => self.held_until = None,
                Ok(Err(e)) => tracing::debug!("failover lease: {e}"),
                Err(_) => tracing::debug!("failover lease: meta did not answer in time"),
            }
        }
        let held = self.held_until.is_some_and(|t| Instant::now() < t);
        if !held {
            self.misses.clear();
            self.probes.clear();
        }
        Ok(held)
    }

    /// The replicas of a shard that can be promoted.
    fn candidates(&self, shard: ShardId) -> impl Iterator<Item = &ReplicaRecord> {
        self.replicas
            .iter()
            .filter(move |r| r.shard == shard && r.state == ReplicaState::Replica)
    }

    /// Whether the primary answers `SELECT 1` in time, on a kept
    /// connection (a new one after a failure).
    async fn probe(&mut self, shard: ShardId, host: &str, port: u16) -> bool {
        let kept = self.probes.remove(&shard).filter(|(p, _)| *p == port);
        let conn = match kept {
            Some((_, c)) => Some(c),
            None => admin_conn(host, port, &self.admin_password, PROBE_TIMEOUT)
                .await
                .ok(),
        };
        let Some(mut conn) = conn else {
            return false;
        };
        let answered = tokio::time::timeout(PROBE_TIMEOUT, conn.query_drop("SELECT 1")).await;
        if matches!(answered, Ok(Ok(()))) {
            self.probes.insert(shard, (port, conn));
            true
        } else {
            false
        }
    }

    async fn fail_over(
        &mut self,
        shard: ShardId,
        old: (String, u16),
        first_miss: Instant,
    ) -> Result<()> {
        let replicas: Vec<(String, u16)> = self
            .candidates(shard)
            .map(|r| (r.host.clone(), r.port))
            .collect();
        let login = self.router.shard_login(shard)?;
        let promoted =
            replication::promote(&shard.to_string(), &replicas, &self.admin_password, &login)
                .await?;
        // A promotion takes seconds against a stopped primary: the lease is
        // renewed before the record checks it.
        if !self
            .router
            .meta
            .take_lease(LEASE, self.router.node_id, LEASE_SECS)
            .await?
        {
            return Err(common::Error::meta(
                "the failover lease passed to another node",
            ));
        }
        let f = meta::Failover {
            shard,
            old: old.clone(),
            new: promoted.server.clone(),
            gtid: promoted.gtid.clone(),
            detected_ms: first_miss.elapsed().as_millis().min(u32::MAX as u128) as u32,
        };
        self.router
            .meta
            .record_failover(LEASE, self.router.node_id, &f)
            .await?;
        tracing::warn!(
            "{shard}: failed over from {}:{} to {}:{} at {} ({} ms after the first missed probe)",
            old.0,
            old.1,
            f.new.0,
            f.new.1,
            f.gtid,
            f.detected_ms
        );
        self.replicas = self.router.meta.shard_replicas().await?;
        self.probes.remove(&shard);
        // Route to the new primary now rather than at the next poll.
        self.router.check_version().await?;
        Ok(())
    }

    /// Old primaries that answer again are kept read-only, and their
    /// clients' connections (commits waiting for an acknowledgement no
    /// replica will give) are killed: those commits are never reported
    /// to a client as done.
    async fn fence_failed(&mut self) {
        let failed: Vec<(String, u16)> = self
            .replicas
            .iter()
            .filter(|r| r.state == ReplicaState::Failed)
            .map(|r| (r.host.clone(), r.port))
            .collect();
        for (host, port) in failed {
            if let Ok(mut c) = admin_conn(&host, port, &self.admin_password, PROBE_TIMEOUT).await {
                if let Err(e) = replication::fence(&mut c).await {
                    tracing::warn!("fencing the old primary {host}:{port}: {e}");
                }
                let _ = c.disconnect().await;
            }
        }
    }
}
