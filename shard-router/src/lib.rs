//! Shard router: turns catalog knowledge into shard work. It owns the
//! [`Router`] (cached catalog + one [`ShardClient`] pool per shard); the
//! rest is five folders, one concern each, and each folder's `mod.rs` is
//! the facade the other crates use:
//!
//! * [`route`]: which partitions a statement touches ([`route::Route`]),
//!   the one partition pruner, rows routed to partitions as INSERTs;
//! * [`sql`]: the one renderer of shard SQL ([`sql::ShardSql`]), the one
//!   MariaDB-compatibility policy, the type map, names and constants read as
//!   PostgreSQL reads them ([`sql::normalize_ident`]);
//! * [`dist`]: statements run on shards and the DataFusion scans, merge and
//!   pushdown of the distributed path ([`dist::ScanContext`]);
//! * [`txn`]: a session's per-shard branches ([`txn::Branches`]), 2PC,
//!   recovery and consistent cuts;
//! * [`placement`]: DDL on every shard and redistribution.
//!
//! Dependencies run one way: `sql` <- `route` <- `placement` <- `txn` <-
//! `dist`. It reaches MariaDB only through `storage-adapter`. See
//! `ARCHITECTURE.md`.

pub mod dist;
pub mod failover;
pub mod placement;
pub mod route;
pub mod sql;
pub mod txn;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Error, Result, ShardId};
use meta::{Catalog, MetaStore};
use parking_lot::{Mutex, RwLock};
use storage_adapter::ShardClient;

pub use datafusion;

/// Shared by every session of a compute node.
pub struct Router {
    pub node_id: u32,
    pub meta: MetaStore,
    /// The readers' side of the snapshot barrier.
    pub snapshots: txn::Gate,
    catalog: RwLock<Arc<Catalog>>,
    /// One pool per shard, to the server the placement map names (with the
    /// address it was made for: a shard whose server changes gets a new
    /// pool).
    shards: RwLock<HashMap<ShardId, (common::config::MysqlEndpoint, ShardClient)>>,
    pool_max: usize,
    sequences: Mutex<HashMap<String, (i64, i64)>>,
    /// Reserved ranges of user sequences by id: (generation, next, values
    /// left, increment). Dropped when the catalog shows the sequence at
    /// another generation (`setval`, ALTER) or gone.
    user_sequences: Mutex<HashMap<u64, (u64, i64, i64, i64)>>,
    sequence_cache: i64,
    refresh: tokio::sync::Mutex<()>,
    last_confirmed: Mutex<Option<Instant>>,
    /// The shard account's password, from this node's config (meta keeps
    /// none).
    shard_password: String,
    /// Made by [`Router::offline`]: the catalog is fixed, meta is never
    /// asked and there are no shard pools.
    offline: bool,
    /// Partition moves' fences this node honours (`txn::fence`).
    pub fences: Arc<txn::Fences>,
    /// Moves whenever a shard's server changes (a failover): a statement
    /// begun before may wait on a server that stopped answering
    /// ([`Router::server_moved_since`]).
    servers_epoch: tokio::sync::watch::Sender<u64>,
}

/// How long a statement begun before a shard's failover may still run
/// after it before it is given up with 08006 (statements on other shards
/// end in milliseconds; one caught on a silent old primary never does).
/// Every statement still running after it is given up, so it is part of
/// the time to the first write after a silent primary's failover.
pub const FAILOVER_GRACE: Duration = Duration::from_millis(500);

/// How often each node polls meta for the catalog version.
pub const CATALOG_POLL: Duration = Duration::from_millis(100);

/// How often while a partition move is under way.
pub const FENCE_POLL: Duration = Duration::from_millis(20);

/// How long statements keep running on the cached catalog (and logins on
/// cached credentials) while meta cannot be reached. DDL cannot happen
/// without meta, so the cache can only miss a DDL committed in the last
/// poll interval before the outage.
pub const META_GRACE: Duration = Duration::from_secs(30);

/// Longest wait for meta's answer to a catalog version check.
pub const META_CHECK_TIMEOUT: Duration = Duration::from_secs(1);

impl Router {
    pub async fn new(
        meta: MetaStore,
        node_id: u32,
        pool_max: usize,
        sequence_cache: i64,
        shard_password: String,
    ) -> Result<Arc<Router>> {
        let catalog = meta.load_catalog().await?;
        let router = Router {
            node_id,
            snapshots: txn::Gate::new(meta.clone()),
            meta,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            shards: RwLock::new(HashMap::new()),
            pool_max,
            sequences: Mutex::new(HashMap::new()),
            user_sequences: Mutex::new(HashMap::new()),
            sequence_cache: sequence_cache.max(1),
            refresh: tokio::sync::Mutex::new(()),
            last_confirmed: Mutex::new(None),
            shard_password,
            offline: false,
            fences: Arc::default(),
            servers_epoch: tokio::sync::watch::Sender::new(0),
        };
        router.install(catalog)?;
        Ok(Arc::new(router))
    }

    /// A router over a fixed catalog that never connects anywhere, for
    /// planning without a cluster (golden plan tests): it holds no shard
    /// pools (`shard` answers an error, so a plan run by mistake fails
    /// instead of reaching a server), its `MetaStore` is made for an
    /// unresolvable address and never asked (`mysql_async` pools connect
    /// on first use; `ensure_fresh` and `check_version` answer the fixed
    /// catalog). Plans made with it are the product's plans; only running
    /// them needs [`Router::new`].
    pub fn offline(catalog: Catalog, node_id: u32) -> Result<Arc<Router>> {
        let nowhere = common::config::MysqlEndpoint {
            host: "offline.invalid".into(),
            port: 3306,
            user: "offline".into(),
            password: String::new(),
        };
        let meta = MetaStore::connect(&nowhere, "offline")?;
        Ok(Arc::new(Router {
            node_id,
            snapshots: txn::Gate::new(meta.clone()),
            meta,
            catalog: RwLock::new(Arc::new(catalog)),
            shards: RwLock::new(HashMap::new()),
            pool_max: 1,
            sequences: Mutex::new(HashMap::new()),
            user_sequences: Mutex::new(HashMap::new()),
            sequence_cache: 1,
            refresh: tokio::sync::Mutex::new(()),
            last_confirmed: Mutex::new(None),
            shard_password: String::new(),
            offline: true,
            fences: Arc::default(),
            servers_epoch: tokio::sync::watch::Sender::new(0),
        }))
    }

    fn install(&self, catalog: Catalog) -> Result<()> {
        {
            let mut shards = self.shards.write();
            for (id, server) in catalog.placement.servers() {
                let mut endpoint = server.clone();
                endpoint.password = self.shard_password.clone();
                match shards.get(&id) {
                    Some((e, _)) if *e == endpoint => continue,
                    // The shard's server changed: a failover.
                    Some(_) => self.servers_epoch.send_modify(|e| *e += 1),
                    None => {}
                }
                let client = ShardClient::new(id, &endpoint, self.pool_max)?;
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    let client = client.clone();
                    rt.spawn(async move {
                        client.use_local_socket().await;
                        txn::ensure_probe(client).await
                    });
                }
                shards.insert(id, (endpoint, client));
            }
        }
        let live: HashMap<u64, u64> = catalog
            .sequences
            .values()
            .map(|s| (s.id, s.generation))
            .collect();
        self.user_sequences
            .lock()
            .retain(|id, r| live.get(id) == Some(&r.0));
        *self.catalog.write() = Arc::new(catalog);
        Ok(())
    }

    /// Meta's primary changed: statements and commits waiting on the old
    /// one (which may never answer: stopped, cut off) are given up as for
    /// a shard's failover ([`Router::server_moved_since`]).
    pub fn meta_moved(&self) {
        self.servers_epoch.send_modify(|e| *e += 1);
    }

    /// The count of server changes so far (shards' and meta's).
    pub fn servers_epoch(&self) -> u64 {
        *self.servers_epoch.borrow()
    }

    /// Resolves [`FAILOVER_GRACE`] after a shard's server changed past
    /// `epoch` (never, if none does): a statement still running then may be
    /// waiting on the old server, which may never answer (stopped, cut
    /// off), so its session gives it up.
    pub async fn server_moved_since(&self, epoch: u64) {
        let mut rx = self.servers_epoch.subscribe();
        if rx.wait_for(|e| *e > epoch).await.is_err() {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(FAILOVER_GRACE).await;
    }

    /// Where every partition lives and which server serves each shard
    /// now: the one map routing, scans, DDL and transactions ask.
    pub fn placement(&self) -> Arc<meta::Placement> {
        self.catalog.read().placement.clone()
    }

    /// The cached catalog snapshot.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// The cached catalog, guaranteed to include every DDL acknowledged to
    /// a client before this call: either the background poller confirmed
    /// the version less than `2 * CATALOG_POLL` ago (and DDL waits that long
    /// before answering, see [`Router::reload`]), or this call asks meta.
    pub async fn ensure_fresh(&self) -> Result<Arc<Catalog>> {
        if self.offline {
            return Ok(self.catalog());
        }
        let last = *self.last_confirmed.lock();
        if let Some(t) = last {
            if t.elapsed() < 2 * CATALOG_POLL {
                return Ok(self.catalog());
            }
        }
        let r = match tokio::time::timeout(META_CHECK_TIMEOUT, self.check_version()).await {
            Ok(r) => r,
            Err(_) => Err(Error::meta("no answer from the metadata store")),
        };
        match r {
            Ok(c) => Ok(c),
            // Meta unreachable: statements keep running on the catalog
            // confirmed last, for a bounded time. DDL, multi-shard commits
            // and new sequence ranges still need meta and fail.
            Err(e) if last.is_some_and(|t| t.elapsed() < META_GRACE) => {
                tracing::debug!("serving the cached catalog, meta unreachable: {e}");
                Ok(self.catalog())
            }
            Err(e) => Err(e),
        }
    }

    /// Asks meta for the catalog version and reloads when it moved; takes
    /// the moves' fences raised meanwhile (after the catalog, so a
    /// statement let through by a lowered fence finds the new map).
    /// (The catalog poller confirms the cached version every
    /// `CATALOG_POLL`; see [`META_GRACE`].)
    pub async fn check_version(&self) -> Result<Arc<Catalog>> {
        Ok(self.check_state().await?.0)
    }

    /// [`Router::check_version`], and whether a move is under way.
    async fn check_state(&self) -> Result<(Arc<Catalog>, bool)> {
        if self.offline {
            return Ok((self.catalog(), false));
        }
        let started = Instant::now();
        let state = self.meta.poll_state().await?;
        let version = state.catalog_version;
        if self.catalog().version < version {
            let _guard = self.refresh.lock().await;
            if self.catalog().version < version {
                let fresh = self.meta.load_catalog().await?;
                self.install(fresh)?;
            }
        }
        {
            let mut last = self.last_confirmed.lock();
            if last.is_none_or(|t| t < started) {
                *last = Some(started);
            }
        }
        self.fences
            .refresh(&self.meta, self.node_id, &state.fences)
            .await;
        Ok((self.catalog(), state.moving || self.fences.any()))
    }

    /// Polls meta's catalog version every `CATALOG_POLL` until the process
    /// ends; every `FENCE_POLL` while a partition move is under way (its
    /// fence is seen and lowered sooner).
    pub async fn poll_catalog(self: Arc<Self>) {
        let mut every = CATALOG_POLL;
        loop {
            tokio::time::sleep(every).await;
            // Bounded: a meta server that stopped answering (stopped, cut
            // off) would hold the poll for ever; its successor's pool is
            // used once meta fails over.
            match tokio::time::timeout(META_CHECK_TIMEOUT, self.check_state()).await {
                Ok(Ok((_, moving))) => every = if moving { FENCE_POLL } else { CATALOG_POLL },
                Ok(Err(e)) => tracing::debug!("catalog poll failed: {e}"),
                Err(_) => tracing::debug!("catalog poll: no answer from the metadata store"),
            }
        }
    }

    /// Reloads the catalog after this node's own DDL, then waits until every
    /// healthy node's poller must have seen the new version, so that a
    /// statement sent anywhere after the DDL is acknowledged sees it.
    pub async fn reload(&self) -> Result<Arc<Catalog>> {
        let fresh = self.meta.load_catalog().await?;
        self.install(fresh)?;
        tokio::time::sleep(2 * CATALOG_POLL + Duration::from_millis(20)).await;
        Ok(self.catalog())
    }

    /// Every shard of the cluster (the placement map's).
    pub fn shard_ids(&self) -> Vec<ShardId> {
        self.placement().shard_ids()
    }

    /// The pool of the server that serves `id` now.
    pub fn shard(&self, id: ShardId) -> Result<ShardClient> {
        self.shards
            .read()
            .get(&id)
            .map(|(_, client)| client.clone())
            .ok_or_else(|| Error::internal(format!("unknown {id}")))
    }

    /// The shard account's login (replicas follow their primary with it).
    pub(crate) fn shard_login(&self, id: ShardId) -> Result<meta::replication::Login> {
        let server = self.placement().server(id)?.clone();
        Ok(meta::replication::Login {
            user: server.user,
            password: self.shard_password.clone(),
        })
    }

    /// Next value of a global sequence, from this node's reserved range.
    /// A column's `sequence` naming a user sequence
    /// (`meta::SEQUENCE_SOURCE_PREFIX`) takes its next value.
    pub async fn next_sequence_value(&self, name: &str) -> Result<i64> {
        if let Some(q) = name.strip_prefix(meta::SEQUENCE_SOURCE_PREFIX) {
            let (schema, seq) = q.split_once('.').unwrap_or(("public", q));
            let def = self
                .catalog()
                .sequence(schema, seq)
                .cloned()
                .ok_or_else(|| Error::Sql {
                    state: common::SqlState::UNDEFINED_TABLE,
                    message: format!("relation \"{seq}\" does not exist"),
                })?;
            return self.nextval(&def).await;
        }
        {
            let mut seqs = self.sequences.lock();
            if let Some((next, end)) = seqs.get_mut(name) {
                if *next < *end {
                    let v = *next;
                    *next += 1;
                    return Ok(v);
                }
            }
        }
        let start = self
            .meta
            .reserve_sequence(name, self.sequence_cache)
            .await?;
        let mut seqs = self.sequences.lock();
        seqs.insert(name.to_string(), (start + 1, start + self.sequence_cache));
        Ok(start)
    }

    /// `nextval` of a user sequence: from this node's reserved range (the
    /// node's `sequence_cache` values at a time), else a new range.
    pub async fn nextval(&self, def: &meta::SequenceDef) -> Result<i64> {
        {
            let mut seqs = self.user_sequences.lock();
            if let Some((generation, next, left, inc)) = seqs.get_mut(&def.id) {
                if *left > 0 && *generation == def.generation {
                    let v = *next;
                    *left -= 1;
                    *next = next.wrapping_add(*inc);
                    return Ok(v);
                }
            }
        }
        let r = self
            .meta
            .reserve_sequence_values(def.id, self.sequence_cache.max(def.cache))
            .await?;
        self.user_sequences.lock().insert(
            def.id,
            (
                def.generation,
                r.first.wrapping_add(r.increment),
                r.count - 1,
                r.increment,
            ),
        );
        Ok(r.first)
    }

    /// Forgets cached ranges of a sequence (after DROP TABLE).
    pub fn forget_sequence(&self, name: &str) {
        self.sequences.lock().remove(name);
    }
}
