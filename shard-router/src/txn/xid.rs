//! XA transaction ids: the one place a global transaction id is made and
//! the one place an XA id is rendered into shard SQL. `txn` (which starts
//! branches), `twopc` (which prepares and decides) and `recovery` (which
//! finishes what a dead coordinator left) all use it.

use common::ShardId;
use storage_adapter::quote_str;

/// Every Tessera gtrid starts with this; recovery leaves other XA
/// transactions alone.
pub const GTRID_PREFIX: &str = "tsr-";

static TXN_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static START_MS: std::sync::OnceLock<u128> = std::sync::OnceLock::new();

/// A global transaction id, unique across compute nodes and restarts: the
/// node id, the process start time in ms and a counter.
pub fn new_gtrid(node_id: u32) -> String {
    let start = START_MS.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    });
    let n = TXN_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{GTRID_PREFIX}{node_id}-{start}-{n}")
}

/// Whether a gtrid found on a shard is one of Tessera's. Only the tests ask
/// (recovery filters by `GTRID_PREFIX` itself, in `twopc::Recovery`).
#[cfg(test)]
pub fn is_tessera_gtrid(gtrid: &str) -> bool {
    gtrid.starts_with(GTRID_PREFIX)
}

/// One XA branch id: the global transaction and the branch qualifier (the
/// shard's id for Tessera's branches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Xid<'a> {
    pub gtrid: &'a str,
    pub bqual: &'a str,
}

/// A branch qualifier for `shard`.
pub fn bqual(shard: ShardId) -> String {
    shard.0.to_string()
}

impl<'a> Xid<'a> {
    pub fn new(gtrid: &'a str, bqual: &'a str) -> Xid<'a> {
        Xid { gtrid, bqual }
    }

    /// The xid as XA statements take it: two quoted strings.
    pub fn sql(&self) -> String {
        format!("{},{}", quote_str(self.gtrid), quote_str(self.bqual))
    }
}

/// The XA id of `shard`'s branch of `gtrid`, rendered for a statement.
pub fn branch_sql(gtrid: &str, shard: ShardId) -> String {
    Xid::new(gtrid, &bqual(shard)).sql()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtrids_are_unique_and_recognised() {
        let a = new_gtrid(3);
        let b = new_gtrid(3);
        assert_ne!(a, b);
        assert!(is_tessera_gtrid(&a));
        assert!(!is_tessera_gtrid("other-1"));
    }

    #[test]
    fn xid_quotes_both_parts() {
        assert_eq!(branch_sql("tsr-1-2-3", ShardId(2)), "'tsr-1-2-3','2'");
        assert_eq!(Xid::new("a'b", "c").sql(), "'a''b','c'");
    }
}
