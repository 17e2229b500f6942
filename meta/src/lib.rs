//! The metadata store: the catalog (schemas, tables, columns, types,
//! distribution, indexes), the versioned shard map, the DDL lock and log,
//! global sequences, users, the compute node registry and the commit log, all
//! kept in a MariaDB schema (`tessera_meta`). Compute nodes cache a
//! [`Catalog`] snapshot and reload it when the catalog version moves. See
//! `ARCHITECTURE.md`, "Meta".

pub mod catalog;
pub mod schema;
pub mod store;

pub use catalog::{Catalog, ColumnDef, Distribution, IndexDef, ShardInfo, TableDef};
pub use store::{DdlTxn, MetaStore};
