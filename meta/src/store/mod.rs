//! `MetaStore`: the handle a compute node (or `tessera cluster up`) uses to
//! read and change the metadata MariaDB. One file per concern: `load`
//! reads the catalog, `ddl` holds the DDL lock and the catalog changes,
//! `queue` the physical tables to drop and orphan recovery, `sequences`
//! reservations and setval, `settings` ALTER SYSTEM's values; this file the pool, bootstrap, the node
//! registry and users.

mod ddl;
mod fences;
mod load;
mod moves;
mod primary;
mod queue;
mod replicas;
mod sequences;
mod settings;

pub use ddl::DdlTxn;
pub use fences::{FenceRecord, MetaState, FENCE_EXPIRY_SECS};
pub use moves::{MovePhase, MoveProgress, MoveRecord};
pub use queue::OrphanClaim;
pub use replicas::{Failover, ReplicaRecord, ReplicaState};
pub use sequences::SequenceRange;

use std::sync::{Arc, RwLock};

use common::config::MysqlEndpoint;
use common::{Error, Result};
use mysql_async::prelude::*;
use mysql_async::{Conn, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};

use crate::catalog::{ScramVerifier, ShardInfo};
use crate::schema;

fn me(e: mysql_async::Error) -> Error {
    Error::meta(e)
}

#[derive(Clone)]
pub struct MetaStore {
    /// The pools of the meta server in use (the primary, once a failover
    /// moved it: `primary.rs`).
    current: Arc<RwLock<Current>>,
    /// Every meta server this store may use: the configured primary
    /// first, then its replicas.
    servers: Arc<Vec<MysqlEndpoint>>,
    database: Arc<str>,
}

struct Current {
    server: MysqlEndpoint,
    pool: Pool,
    /// Connections that hold the snapshot barrier
    /// (`shard_router::txn::snapshot`), apart from `pool`: a distributed commit
    /// holds one from before its decision until its phase two ends, and
    /// records the decision through `pool` meanwhile. Drawn from one pool,
    /// 64 commits holding the barrier would each wait for a 65th
    /// connection for ever (seen with 256 sysbench threads).
    barrier: Pool,
}

impl Current {
    fn new(endpoint: &MysqlEndpoint, database: &str) -> Result<Current> {
        let opts = Opts::from_url(&endpoint.url(Some(database))).map_err(Error::meta)?;
        // Idle connections must stay pooled: with mysql_async's default
        // `inactive_connection_ttl` of 0 the pool keeps only `min` idle
        // connections and closes every other one on return, so a compute
        // node opened (and the meta server accepted) a new connection for
        // every catalog poll, heartbeat and client authentication, dozens
        // per second, and bursts of them were reset by the server.
        let pool_of = |min: usize, max: usize| {
            let constraints = PoolConstraints::new(min, max).unwrap_or_default();
            let pool_opts = PoolOpts::default()
                .with_constraints(constraints)
                .with_inactive_connection_ttl(std::time::Duration::from_secs(60));
            Pool::new(
                OptsBuilder::from_opts(opts.clone())
                    .pool_opts(pool_opts)
                    .prefer_socket(false)
                    .init(vec![
                        "SET SESSION sql_mode='STRICT_ALL_TABLES,NO_BACKSLASH_ESCAPES'",
                    ]),
            )
        };
        // The barrier's: one per distributed commit in its second phase
        // at once, and one per reading node's exclusive hold.
        Ok(Current {
            server: endpoint.clone(),
            pool: pool_of(1, 64),
            barrier: pool_of(0, 512),
        })
    }
}

impl MetaStore {
    pub fn connect(endpoint: &MysqlEndpoint, database: &str) -> Result<MetaStore> {
        Self::connect_servers(vec![endpoint.clone()], database)
    }

    /// A store over a replicated meta: `servers[0]` is used until
    /// [`MetaStore::follow_primary`] finds another primary.
    pub fn connect_servers(servers: Vec<MysqlEndpoint>, database: &str) -> Result<MetaStore> {
        let first = servers
            .first()
            .ok_or_else(|| Error::meta("no meta server configured"))?;
        Ok(MetaStore {
            current: Arc::new(RwLock::new(Current::new(first, database)?)),
            servers: Arc::new(servers),
            database: database.into(),
        })
    }

    /// Every meta server (the configured primary first).
    pub fn servers(&self) -> &[MysqlEndpoint] {
        &self.servers
    }

    /// The meta server in use.
    pub fn server(&self) -> MysqlEndpoint {
        self.current
            .read()
            .map(|c| c.server.clone())
            .unwrap_or_else(|p| p.into_inner().server.clone())
    }

    /// The database holding the catalog.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Uses `server` from now on (new pools; the old ones closed as their
    /// connections come back). Answers whether it changed.
    pub fn switch_to(&self, server: &MysqlEndpoint) -> Result<bool> {
        if self.server() == *server {
            return Ok(false);
        }
        let fresh = Current::new(server, &self.database)?;
        let old = {
            let mut cur = self.current.write().unwrap_or_else(|p| p.into_inner());
            std::mem::replace(&mut *cur, fresh)
        };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = old.pool.disconnect().await;
                let _ = old.barrier.disconnect().await;
            });
        }
        tracing::warn!("meta is {}:{} from now on", server.host, server.port);
        Ok(true)
    }

    fn pools(&self) -> (Pool, Pool) {
        let c = self.current.read().unwrap_or_else(|p| p.into_inner());
        (c.pool.clone(), c.barrier.clone())
    }

    /// A connection to hold the snapshot barrier on (see `barrier`).
    pub async fn barrier_conn(&self) -> Result<Conn> {
        Self::conn_of(&self.pools().1).await
    }

    /// A pooled meta connection. A connection attempt reset by the server
    /// (seen under bursts of 256 sysbench clients connecting at once) is
    /// retried twice before it is reported.
    pub async fn conn(&self) -> Result<Conn> {
        Self::conn_of(&self.pools().0).await
    }

    async fn conn_of(pool: &Pool) -> Result<Conn> {
        let mut attempt = 0;
        loop {
            match pool.get_conn().await {
                Err(mysql_async::Error::Io(e)) if attempt < 2 => {
                    attempt += 1;
                    tracing::debug!("meta connection failed ({e}), retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt)).await;
                }
                other => return other.map_err(me),
            }
        }
    }

    /// Creates (or upgrades) the metadata schema on a fresh meta server and
    /// records the shards that are not recorded yet (a shard's server,
    /// once recorded, changes only by a failover). Idempotent.
    pub async fn bootstrap(
        endpoint: &MysqlEndpoint,
        database: &str,
        cluster_id: &str,
        shards: &[ShardInfo],
    ) -> Result<()> {
        let opts = Opts::from_url(&endpoint.url(None)).map_err(Error::meta)?;
        let mut conn = Conn::new(OptsBuilder::from_opts(opts).prefer_socket(false))
            .await
            .map_err(me)?;
        conn.query_drop(format!(
            "CREATE DATABASE IF NOT EXISTS `{database}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
        ))
        .await
        .map_err(me)?;
        conn.query_drop(format!("USE `{database}`"))
            .await
            .map_err(me)?;
        schema::upgrade(&mut conn).await?;
        let existing: Option<String> = conn
            .query_first("SELECT cluster_id FROM cluster WHERE id = 1")
            .await
            .map_err(me)?;
        match existing {
            Some(id) if id != cluster_id => {
                return Err(Error::meta(format!(
                    "the metadata store belongs to cluster {id}, not {cluster_id}"
                )))
            }
            Some(_) => {}
            None => {
                conn.exec_drop(
                    "INSERT INTO cluster (id, cluster_id) VALUES (1, ?)",
                    (cluster_id,),
                )
                .await
                .map_err(me)?;
            }
        }
        // The primary is the server bootstrapped, until a failover.
        conn.exec_drop(
            "INSERT IGNORE INTO meta_primary (id, host, port, epoch) VALUES (1, ?, ?, 1)",
            (&endpoint.host, endpoint.port),
        )
        .await
        .map_err(me)?;
        for s in shards {
            conn.exec_drop(
                "INSERT IGNORE INTO shards (shard_id, host, port, user) VALUES (?, ?, ?, ?)",
                (s.id.0, &s.endpoint.host, s.endpoint.port, &s.endpoint.user),
            )
            .await
            .map_err(me)?;
        }
        conn.disconnect().await.map_err(me)?;
        Ok(())
    }

    pub async fn catalog_version(&self) -> Result<u64> {
        let mut conn = self.conn().await?;
        let v: Option<u64> = conn
            .query_first("SELECT version FROM catalog_version WHERE id = 1")
            .await
            .map_err(me)?;
        Ok(v.unwrap_or(0))
    }

    pub async fn register_node(&self, node_id: u32, host: &str, port: u16, pid: u32) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "REPLACE INTO compute_nodes (node_id, host, port, pid, heartbeat_at) VALUES (?, ?, ?, ?, NOW())",
            (node_id, host, port, pid),
        )
        .await
        .map_err(me)
    }

    pub async fn heartbeat(&self, node_id: u32) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE compute_nodes SET heartbeat_at = NOW() WHERE node_id = ?",
            (node_id,),
        )
        .await
        .map_err(me)
    }

    /// A login role's SCRAM verifier; `None` for an unknown role, a role
    /// without a password or one that may not log in.
    pub async fn user_credentials(&self, user: &str) -> Result<Option<ScramVerifier>> {
        let mut conn = self.conn().await?;
        type VerifierRow = (Vec<u8>, u32, Vec<u8>, Vec<u8>);
        let row: Option<VerifierRow> = conn.exec_first(
            "SELECT salt, iterations, stored_key, server_key FROM users WHERE user_name = ? AND can_login AND salt IS NOT NULL AND stored_key IS NOT NULL AND server_key IS NOT NULL",
            (user,),
        )
        .await
        .map_err(me)?;
        Ok(
            row.map(|(salt, iterations, stored_key, server_key)| ScramVerifier {
                salt,
                iterations,
                stored_key,
                server_key,
            }),
        )
    }

    /// Creates (or replaces) a superuser that can log in.
    pub async fn put_user(&self, user: &str, v: &ScramVerifier) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "REPLACE INTO users (user_name, salt, iterations, stored_key, server_key, superuser, can_login) VALUES (?, ?, ?, ?, ?, TRUE, TRUE)",
            (user, &v.salt, v.iterations, &v.stored_key, &v.server_key),
        )
        .await
        .map_err(me)
    }

    pub async fn disconnect(self) {
        let (pool, barrier) = self.pools();
        let _ = pool.disconnect().await;
        let _ = barrier.disconnect().await;
    }
}

fn parse_list(s: &str) -> Result<Vec<String>> {
    serde_json::from_str(s).map_err(|e| Error::meta(format!("bad list in catalog: {e}")))
}

fn list(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}
