//! The compute node: a stateless PostgreSQL-protocol server. Its stages
//! are rooms, each depending only on the ones below it: `wire` (pgwire:
//! decode, call, encode) -> `exec` (run a planned statement) -> `session`
//! (settings, the transaction state machine) -> `plan` (one planner per
//! statement kind, done once per prepared statement) -> the leaf modules
//! (`parse`, `limits`, `dialect`, `literals`, `pgtypes`, `pgtext`, `errors`,
//! `privileges`, `scram`, `cancel`). Shards are reached only through
//! `shard-router`. The `tessera` binary (its own crate) runs it. See
//! `ARCHITECTURE.md`.

pub mod activity;
pub mod alter_system;
pub mod cancel;
pub mod decorrelation;
pub mod dialect;
pub mod dscale;
pub mod errors;
pub mod exec;
pub mod guc;
pub mod limits;
pub mod literals;
pub mod numeric;
pub mod numeric_sqrt;
pub mod onerow;
pub mod parse;
pub mod pgargs;
pub mod pgbpchar;
pub mod pgcasts;
pub mod pgcatalog;
pub mod pgextract;
pub mod pgfloat;
pub mod pgfuncs;
pub mod pginterval;
pub mod pgmath;
pub mod pgresult;
pub mod pgtext;
pub mod pgtypeof;
pub mod pgtypes;
pub mod pgvariance;
pub mod pgzone;
pub mod plan;
pub mod privileges;
pub mod regtype;
pub mod rows;
pub mod scram;
pub mod semantics;
pub mod session;
pub mod textcast;
pub mod textdates;
pub mod tokens;
pub mod wire;
pub mod wirevals;

/// What `server_version` and `version()` report; clients parse the number.
pub const SERVER_VERSION: &str = "15.0";

/// Placement of tables without a distribution clause (config
/// `default_distribution`), as `DefaultDistribution as u8`.
static DEFAULT_DISTRIBUTION: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

pub fn set_default_distribution(d: common::config::DefaultDistribution) {
    let code = match d {
        common::config::DefaultDistribution::Hash => 0,
        common::config::DefaultDistribution::HashPrimaryKey => 1,
        common::config::DefaultDistribution::Single => 2,
    };
    DEFAULT_DISTRIBUTION.store(code, std::sync::atomic::Ordering::Relaxed);
}

/// Partitions of a hash table without a `partitions` option (config
/// `default_partitions`; 0: the placement's default, four per shard).
static DEFAULT_PARTITIONS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

pub fn set_default_partitions(n: u32) {
    DEFAULT_PARTITIONS.store(n, std::sync::atomic::Ordering::Relaxed);
}

pub fn default_partitions() -> Option<u32> {
    match DEFAULT_PARTITIONS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

pub fn default_distribution() -> common::config::DefaultDistribution {
    match DEFAULT_DISTRIBUTION.load(std::sync::atomic::Ordering::Relaxed) {
        0 => common::config::DefaultDistribution::Hash,
        1 => common::config::DefaultDistribution::HashPrimaryKey,
        _ => common::config::DefaultDistribution::Single,
    }
}

/// Client connections this node accepts at once (config `max_connections`).
pub static MAX_CONNECTIONS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(1000);

/// Defaults of new sessions' `statement_timeout` and
/// `idle_in_transaction_session_timeout`, ms (config).
pub static DEFAULT_STATEMENT_TIMEOUT_MS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);
pub static DEFAULT_IDLE_TXN_TIMEOUT_MS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// ALTER SYSTEM's values of the parameters read only when a node starts
/// (PostgreSQL's `postmaster` context) as they were when this node
/// started: its sessions use these, and `pg_settings` shows
/// `pending_restart` where the catalog's differ.
pub static NODE_START_SETTINGS: std::sync::OnceLock<std::collections::BTreeMap<String, String>> =
    std::sync::OnceLock::new();

/// DataFusion memory pool size of this node, MiB (config `query_memory_mb`).
pub static QUERY_MEMORY_MB: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(1024);

/// Runs CPU-heavy work of one statement (parsing a 512 KiB multi-row
/// INSERT, evaluating and rendering its rows) when `heavy`: on a
/// multi-threaded runtime the worker thread hands its other tasks to
/// another thread first, so connection handshakes, keepalives and other
/// sessions' short statements keep being polled instead of timing out
/// behind it. Light work runs inline.
pub fn cpu_bound<R>(heavy: bool, f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if heavy && multi {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// Statements longer than this are parsed and planned with [`cpu_bound`],
/// and at most [`heavy_permit`]'s limit of them run at once.
pub const HEAVY_STATEMENT_BYTES: usize = 16 * 1024;

/// Admission for heavy statements (sysbench's bulk_insert sends 512 KiB
/// INSERTs of ~40,000 rows from every client): at most two per core run on
/// this node at once, the rest wait their turn. Each costs ~100 MB while it
/// runs and a connection to every shard it writes; letting 85 of them run
/// together (256 clients over 3 nodes) only shared the same cores more
/// thinly, while their memory and the shard connections they opened at once
/// grew until connection handshakes timed out.
pub async fn heavy_permit() -> Option<tokio::sync::SemaphorePermit<'static>> {
    static HEAVY: std::sync::LazyLock<tokio::sync::Semaphore> = std::sync::LazyLock::new(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        tokio::sync::Semaphore::new(2 * cores)
    });
    HEAVY.acquire().await.ok()
}
