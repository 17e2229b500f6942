//! The metadata store: the catalog (schemas, tables, columns, types,
//! distribution, indexes), the versioned shard map, the DDL lock and log,
//! global sequences, users, the compute node registry and the commit log, all
//! kept in a MariaDB schema (`tessera_meta`). Compute nodes cache a
//! [`Catalog`] snapshot and reload it when the catalog version moves. See
//! `ARCHITECTURE.md`, "Meta".

pub mod catalog;
pub mod placement;
pub mod replication;
pub mod schema;
pub mod store;
pub mod table;

pub use catalog::{
    Catalog, ColumnDef, Distribution, Enforcement, ForeignKeyDef, Identity, IndexDef, Privilege,
    Role, ScramVerifier, SequenceDef, ShardInfo, TableDef, ViewDef, SEQUENCE_SOURCE_PREFIX,
};
pub use placement::Placement;
pub use store::{
    DdlTxn, Failover, FenceRecord, MetaState, MetaStore, MovePhase, MoveProgress, MoveRecord,
    OrphanClaim, ReplicaRecord, ReplicaState,
};

/// Prefix of every MariaDB database Tessera creates on a shard: schema `s`
/// is database `tsr_s`, so the cluster's shard account is granted
/// privileges on `tsr\_%` only and can never reach `mysql`, `sys` or any
/// other database of the server.
pub const PHYSICAL_DB_PREFIX: &str = "tsr_";

/// The shard database holding a schema's tables.
pub fn physical_database(schema: &str) -> String {
    format!("{PHYSICAL_DB_PREFIX}{schema}")
}
