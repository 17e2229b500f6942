//! The placement map's use on the shards: DDL applied on every shard that
//! holds a table's partitions (physical tables, indexes, ALTER clauses and
//! their undo, foreign keys, renames, dropped schemas) and a table's rows
//! redistributed to a new layout ([`copy_rows`]); one slot of a
//! co-location group moved to another shard while the cluster serves it
//! ([`mover`]).

mod ddl;
pub mod mover;
mod redistribute;

pub use ddl::{
    alter_clauses, alter_table, any_row, create_index, create_table, drop_index, drop_physical,
    drop_schema, ensure_schema_sql, foreign_key, rename_table, run_on_shards, AlterSql,
};
pub use redistribute::copy_rows;

pub(crate) use ddl::drop_orphans;
