//! The one partition pruner: given candidate values of every partition key
//! column, the partitions that can hold matching rows. Routing (the fast
//! path, on the client's statement) and DataFusion scans (on filter
//! expressions) each find the candidates in their own expression trees and
//! prune here, with the same bound.

use std::collections::BTreeSet;

use common::{hash, Datum};
use meta::TableDef;

/// Most key value combinations a route is resolved from; past it the
/// statement reads every partition (the shards still filter).
pub const MAX_ROUTE_COMBOS: usize = 4096;

/// The partitions of `table` holding rows whose key columns (in key order)
/// take one of `per_key`'s values each; `None` when the combinations pass
/// [`MAX_ROUTE_COMBOS`] (checked before any is built: the product of a
/// few IN lists once grew a node by 1.5 GB).
pub fn prune(table: &TableDef, per_key: &[Vec<Datum>]) -> Option<BTreeSet<u32>> {
    let mut count: usize = 1;
    for vals in per_key {
        count = count.saturating_mul(vals.len());
        if count > MAX_ROUTE_COMBOS {
            return None;
        }
    }
    let mut combos: Vec<Vec<&Datum>> = vec![vec![]];
    for vals in per_key {
        let mut next = Vec::with_capacity(combos.len() * vals.len());
        for combo in &combos {
            for v in vals {
                let mut c = combo.clone();
                c.push(v);
                next.push(c);
            }
        }
        combos = next;
    }
    let n = table.hash_partitions();
    Some(
        combos
            .iter()
            .map(|c| hash::partition_of(c.iter().copied(), n))
            .collect(),
    )
}

/// The copy of a mirror table node `node_id` reads: one per node, so the
/// nodes spread their reads over the copies (the fast path and scans
/// choose alike).
pub fn mirror_copy(placement: &meta::Placement, table: &TableDef, node_id: u32) -> u32 {
    node_id % placement.partition_count(table).unwrap_or(0).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::{SqlType, TableId};
    use meta::{ColumnDef, Distribution};

    fn table(keys: &[&str]) -> TableDef {
        TableDef {
            id: TableId(1),
            schema: "public".into(),
            name: "t".into(),
            columns: keys
                .iter()
                .map(|k| ColumnDef {
                    name: (*k).into(),
                    ty: SqlType::BigInt,
                    not_null: true,
                    default: None,
                    sequence: None,
                    identity: None,
                })
                .collect(),
            primary_key: keys.iter().map(|k| (*k).to_string()).collect(),
            distribution: Distribution::Hash {
                columns: keys.iter().map(|k| (*k).to_string()).collect(),
                partitions: 8,
            },
            indexes: vec![],
        }
    }

    #[test]
    fn one_value_per_key_is_one_partition_and_matches_placement() {
        let t = table(&["a", "b"]);
        for (a, b) in [(1, 2), (7, -3), (i64::MAX, 0)] {
            let got = prune(&t, &[vec![Datum::Int(a)], vec![Datum::Int(b)]]).unwrap();
            let want = hash::partition_of([Datum::Int(a), Datum::Int(b)].iter(), 8);
            assert_eq!(got.into_iter().collect::<Vec<_>>(), vec![want]);
        }
    }

    #[test]
    fn in_lists_multiply_and_the_bound_holds() {
        let t = table(&["a", "b"]);
        let vals = |n: i64| (0..n).map(Datum::Int).collect::<Vec<_>>();
        let got = prune(&t, &[vals(3), vals(2)]).unwrap();
        let want: BTreeSet<u32> = (0..3)
            .flat_map(|a| (0..2).map(move |b| (a, b)))
            .map(|(a, b)| hash::partition_of([Datum::Int(a), Datum::Int(b)].iter(), 8))
            .collect();
        assert_eq!(got, want);
        assert!(prune(&t, &[vals(64), vals(64)]).is_some());
        assert!(prune(&t, &[vals(65), vals(64)]).is_none());
        assert!(prune(&t, &[vals(100_000), vals(100_000)]).is_none());
    }
}
