//! Transactions: a session's shard access ([`ShardAccess`]: pooled leases in
//! autocommit, one branch per shard in a transaction, [`Branches`]), the
//! connection slot statements take turns on (`slot`), XA ids (`xid`), the
//! two-phase commit coordinator (`twopc`, `xa_branch`), recovery of what a
//! dead coordinator left ([`recovery_loop`]) and consistent cuts across
//! shards (`snapshot`: the barrier, [`Cut`]) and a node's side of a
//! partition move's fence ([`Fences`]).

mod access;
mod branches;
pub mod fence;
mod recovery;
mod reserve;
mod slot;
mod snapshot;
mod twopc;
mod xa_branch;
mod xid;

pub use access::StatementAccess;
pub use branches::{Branches, IsolationLevel, ShardAccess};
pub use fence::{Activity, Fences, NEVER_FENCED};
pub use recovery::recovery_loop;
pub use snapshot::{hold_for_reads, Cut, Ticket};
pub use twopc::ORPHAN_TIMEOUT_MS;

pub(crate) use branches::{Lease, LOCK_WAIT_PREFIX};
pub(crate) use slot::Contention;
pub(crate) use snapshot::{ensure_probe, Gate};
