//! Shard router: turns catalog knowledge into shard work. It owns the
//! [`Router`] (cached catalog + one [`ShardClient`] pool per shard), computes
//! routes for statements ([`route::Route`]), renders MySQL SQL for partitions
//! ([`render`]), applies DDL on every shard ([`ddl`]), holds a session's
//! per-shard transaction branches ([`txn`]) and provides the DataFusion
//! `TableProvider`s of the distributed path ([`scan`]). It reaches MariaDB
//! only through `storage-adapter`. See `ARCHITECTURE.md`.

pub mod ddl;
pub mod recovery;
pub mod render;
pub mod route;
pub mod scan;
pub mod twopc;
pub mod txn;

use std::collections::HashMap;
use std::sync::Arc;

use common::{Error, Result, ShardId};
use meta::{Catalog, MetaStore};
use parking_lot::{Mutex, RwLock};
use storage_adapter::ShardClient;

pub use datafusion;

/// Shared by every session of a compute node.
pub struct Router {
    pub node_id: u32,
    pub meta: MetaStore,
    catalog: RwLock<Arc<Catalog>>,
    shards: RwLock<HashMap<ShardId, ShardClient>>,
    pool_max: usize,
    sequences: Mutex<HashMap<String, (i64, i64)>>,
    sequence_cache: i64,
    refresh: tokio::sync::Mutex<()>,
}

impl Router {
    pub async fn new(
        meta: MetaStore,
        node_id: u32,
        pool_max: usize,
        sequence_cache: i64,
    ) -> Result<Arc<Router>> {
        let catalog = meta.load_catalog().await?;
        let router = Router {
            node_id,
            meta,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            shards: RwLock::new(HashMap::new()),
            pool_max,
            sequences: Mutex::new(HashMap::new()),
            sequence_cache: sequence_cache.max(1),
            refresh: tokio::sync::Mutex::new(()),
        };
        router.install(catalog)?;
        Ok(Arc::new(router))
    }

    fn install(&self, catalog: Catalog) -> Result<()> {
        {
            let mut shards = self.shards.write();
            for s in &catalog.shards {
                if let std::collections::hash_map::Entry::Vacant(e) = shards.entry(s.id) {
                    e.insert(ShardClient::new(s.id, &s.endpoint, self.pool_max)?);
                }
            }
        }
        *self.catalog.write() = Arc::new(catalog);
        Ok(())
    }

    /// The cached catalog snapshot.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// Makes sure the cached catalog is at least as new as the one in meta,
    /// reloading it if DDL happened elsewhere. Called before each statement
    /// that reads the catalog.
    pub async fn ensure_fresh(&self) -> Result<Arc<Catalog>> {
        let version = self.meta.catalog_version().await?;
        if self.catalog().version < version {
            let _guard = self.refresh.lock().await;
            if self.catalog().version < version {
                let fresh = self.meta.load_catalog().await?;
                self.install(fresh)?;
            }
        }
        Ok(self.catalog())
    }

    /// Reloads the catalog unconditionally (after our own DDL).
    pub async fn reload(&self) -> Result<Arc<Catalog>> {
        let fresh = self.meta.load_catalog().await?;
        self.install(fresh)?;
        Ok(self.catalog())
    }

    pub fn shard(&self, id: ShardId) -> Result<ShardClient> {
        self.shards
            .read()
            .get(&id)
            .cloned()
            .ok_or_else(|| Error::internal(format!("unknown {id}")))
    }

    /// Next value of a global sequence, from this node's reserved range.
    pub async fn next_sequence_value(&self, name: &str) -> Result<i64> {
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

    /// Forgets cached ranges of a sequence (after DROP TABLE).
    pub fn forget_sequence(&self, name: &str) {
        self.sequences.lock().remove(name);
    }
}
