//! Shared vocabulary of Tessera: ids, SQL types, datum values, the partition
//! hash function, SQLSTATE-carrying errors and the configuration file format.
//! Every other crate depends on this one and it depends on none of them; see
//! `ARCHITECTURE.md` for the crate map.

pub mod config;
pub mod error;
pub mod hash;
pub mod pgdatetime;
pub mod types;
pub mod tz;
pub mod value;

pub use error::{Error, Result, SqlState};
pub use types::SqlType;
pub use value::Datum;

/// Identifies one storage shard (one MariaDB server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShardId(pub u32);

/// Identifies one logical table in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub u64);

impl std::fmt::Display for ShardId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "shard{}", self.0)
    }
}
