//! Distributed reads and shard statements: the one write loop and fast-path
//! read of rendered statements (`exec`), the one merger of partial
//! answers (`merge`), the DataFusion catalog and
//! `TableProvider`s over the shards (`scan`), the plan node of shard queries
//! (`shard_scan`), shard rows decoded into Arrow (`shard_rows`) and spilled
//! when another read needs the connection (`spill`), and the deep pushdown
//! of plan fragments ([`ShardPushdown`]), and the locking reads that check
//! foreign keys across shards (`references`).

mod exec;
mod merge;
mod pushdown;
mod references;
mod scan;
mod shard_rows;
mod shard_scan;
mod spill;

pub use exec::{
    bind, kills_settled, read_partition, write, write_in, write_in_returning, write_returning,
    ShardStatement, Written,
};
pub use merge::{merge_rows, LimitValue, Merge, Partial};
pub use pushdown::ShardPushdown;
pub use references::{check_references, check_unreferenced};
pub use scan::{TesseraCatalog, CATALOG_NAME};
pub use shard_scan::{plain_reads, shard_scans, union_all};
