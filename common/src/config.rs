//! The compute node's configuration file (TOML). Every key is documented in
//! `config/example.toml`, which a test parses.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How to reach a MariaDB server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct MysqlEndpoint {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
}

impl MysqlEndpoint {
    pub fn url(&self, database: Option<&str>) -> String {
        format!(
            "mysql://{}:{}@{}:{}/{}",
            pct(&self.user),
            pct(&self.password),
            self.host,
            self.port,
            database.unwrap_or("")
        )
    }
}

fn pct(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Placement of tables created without a distribution clause.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum DefaultDistribution {
    /// Hash on the leading column of the primary key, as YugabyteDB does
    /// (whole-table placement without one): tables keyed by a common
    /// leading column (TPC-C's warehouse) are co-located.
    #[default]
    Hash,
    /// Hash on the whole primary key (the default before 2026-12-03).
    #[serde(rename = "hash-primary-key")]
    HashPrimaryKey,
    /// Whole table on one shard.
    Single,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeConfig {
    /// Unique id of this compute node in the cluster (appears in transaction ids).
    pub node_id: u32,
    /// Address the PostgreSQL protocol listener binds to.
    pub listen: String,
    /// Directory of the node's Unix-domain socket, `.s.PGSQL.<port>` as
    /// PostgreSQL names it, beside the TCP listener; empty: none.
    #[serde(default)]
    pub unix_socket_directory: String,
    /// The metadata MariaDB.
    pub meta: MysqlEndpoint,
    /// Meta's replicas (`host:port`, same login as `meta`): the node
    /// follows whichever of meta's servers is the primary, and promotes a
    /// replica when the primary stops answering.
    #[serde(default)]
    pub meta_replicas: Vec<String>,
    /// Password of the shard account (the account's name and the shards'
    /// addresses are in meta's shard map; the password is kept only here,
    /// in this node's 0600 config file, never in meta).
    pub shard_password: String,
    /// Password of the shards' administrative account (`tessera_admin`),
    /// with which this node fails over a replicated shard whose primary
    /// stopped answering; empty: this node never fails over.
    #[serde(default)]
    pub shard_admin_password: String,
    /// Name of the schema (database) holding the catalog on the meta server.
    #[serde(default = "default_meta_db")]
    pub meta_database: String,
    /// Maximum connections this node opens to each shard.
    #[serde(default = "default_pool_max")]
    pub shard_pool_max: usize,
    /// Placement of tables without a distribution clause.
    #[serde(default)]
    pub default_distribution: DefaultDistribution,
    /// Partitions of a hash table created without a `partitions` option
    /// (0: four per shard at creation).
    #[serde(default)]
    pub default_partitions: u32,
    /// How many values of a sequence a node reserves at once.
    #[serde(default = "default_seq_cache")]
    pub sequence_cache: i64,
    /// Size of the DataFusion memory pool, in MiB.
    #[serde(default = "default_memory")]
    pub query_memory_mb: usize,
    /// Threads of the node's async runtime (0: one per core of the host).
    /// Nodes that share a host should share its cores: two nodes' threads
    /// on one core switch and wake each other for every statement.
    #[serde(default)]
    pub worker_threads: usize,
    /// How often the 2PC recovery task looks for prepared branches, in ms.
    #[serde(default = "default_recovery_interval")]
    pub recovery_interval_ms: u64,
    /// How long a prepared branch may wait for its commit decision before
    /// recovery decides abort, in seconds.
    #[serde(default = "default_orphan_timeout")]
    pub xa_orphan_timeout_secs: u64,
    /// Client connections this node accepts at once; one more is refused
    /// with 53300, as PostgreSQL's `max_connections`.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Default `statement_timeout` of new sessions, ms (0: none).
    #[serde(default)]
    pub statement_timeout_ms: u64,
    /// Default `idle_in_transaction_session_timeout` of new sessions, ms
    /// (0: none).
    #[serde(default)]
    pub idle_in_transaction_session_timeout_ms: u64,
}

fn default_max_connections() -> usize {
    1000
}

fn default_recovery_interval() -> u64 {
    1000
}
fn default_orphan_timeout() -> u64 {
    10
}

fn default_meta_db() -> String {
    "tessera_meta".into()
}
fn default_pool_max() -> usize {
    200
}
fn default_seq_cache() -> i64 {
    1000
}
fn default_memory() -> usize {
    1024
}

impl ComputeConfig {
    pub fn from_toml(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::InvalidParameter {
            message: format!("invalid compute config: {e}"),
        })
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses() {
        let text = include_str!("../../config/example.toml");
        let cfg = ComputeConfig::from_toml(text).unwrap();
        assert_eq!(cfg.node_id, 1);
        assert_eq!(cfg.default_distribution, DefaultDistribution::Hash);
        let again = ComputeConfig::from_toml(&cfg.to_toml()).unwrap();
        assert_eq!(again.meta, cfg.meta);
    }
}
