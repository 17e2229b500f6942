//! Routing: which partitions a statement must touch ([`RoutePlan`] from its
//! key predicates, resolved per execution to a [`Route`]), the one
//! partition pruner (`partition`, shared with the DataFusion scans), the
//! copy of a mirror table a node reads, and evaluated rows routed to their
//! partitions as INSERTs ([`insert_statements_on`]).

mod insert;
mod partition;
mod plan;

pub use insert::{
    insert_batches, insert_statements, insert_statements_on, returned_in_order, InsertBatch,
    OnConflict, UpdateValue,
};
pub use partition::mirror_copy;
pub use plan::{KeyValue, Route, RoutePlan};

pub(crate) use insert::INSERT_BATCH_ROWS;
pub(crate) use partition::prune;
