//! Where data lives: the one map from a table's partitions to shards, and
//! from each shard to the server that serves it now, at one epoch.
//!
//! Routing, scans, DDL, transactions, consistent cuts, two-phase commit
//! and recovery ask a [`Placement`] and nothing else where a partition or a
//! shard's server is. A table's definition ([`TableDef`]) says how its rows
//! are spread (hash on which columns over how many partitions, mirrored,
//! single); the placement says where each of those pieces is. A partition
//! move or a primary failover is one change to this map, recorded in
//! meta's `placement_log` with the new epoch (see
//! `docs/design/placement.md`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use common::config::MysqlEndpoint;
use common::{Error, Result, ShardId, TableId};

use crate::table::{Distribution, TableDef};

/// One consistent view of where every partition lives.
///
/// A table's *slots* are its physical tables: partition `i` of a hash
/// table is slot `i`; a mirror table has one slot per copy (each a whole
/// copy, physical partition 0); a single table has one slot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    epoch: u64,
    layouts: HashMap<TableId, Arc<[ShardId]>>,
    servers: BTreeMap<ShardId, MysqlEndpoint>,
}

impl Placement {
    /// An empty map at `epoch` over these shards' servers.
    pub fn new(epoch: u64, servers: impl IntoIterator<Item = (ShardId, MysqlEndpoint)>) -> Self {
        Placement {
            epoch,
            layouts: HashMap::new(),
            servers: servers.into_iter().collect(),
        }
    }

    /// Sets a table's slots (as meta's `cat_partitions` lists them).
    pub fn set_layout(&mut self, table: TableId, shards: Vec<ShardId>) {
        self.layouts.insert(table, shards.into());
    }

    /// This map with one table's layout set: a table being created or
    /// redistributed, before the catalog commit makes it the map.
    pub fn with_layout(&self, table: TableId, shards: Vec<ShardId>) -> Placement {
        let mut next = self.clone();
        next.set_layout(table, shards);
        next
    }

    /// The version of this map: it changes when any partition or shard
    /// server changes.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Every shard of the cluster, in order.
    pub fn shard_ids(&self) -> Vec<ShardId> {
        self.servers.keys().copied().collect()
    }

    /// Every shard with the server that serves it now.
    pub fn servers(&self) -> impl Iterator<Item = (ShardId, &MysqlEndpoint)> {
        self.servers.iter().map(|(s, e)| (*s, e))
    }

    /// The server that serves `shard` now.
    pub fn server(&self, shard: ShardId) -> Result<&MysqlEndpoint> {
        self.servers
            .get(&shard)
            .ok_or_else(|| Error::internal(format!("{shard} is not in the placement map")))
    }

    /// A table's slots: slot `i` lives on `layout(t)[i]`.
    pub fn layout(&self, table: TableId) -> &[ShardId] {
        self.layouts.get(&table).map(|l| &l[..]).unwrap_or(&[])
    }

    /// A table's slots, or 42P01 when the map does not know the table: a
    /// statement planned before the table was redistributed (it has a new
    /// id) or dropped fails instead of reading or writing nothing.
    pub fn slots(&self, table: &TableDef) -> Result<&[ShardId]> {
        self.layouts
            .get(&table.id)
            .map(|l| &l[..])
            .ok_or_else(|| moved_away(table))
    }

    /// How many physical tables the table has (its partitions, its mirror
    /// copies, or 1).
    pub fn partition_count(&self, table: &TableDef) -> Result<u32> {
        Ok(self.slots(table)?.len() as u32)
    }

    /// The shard of one slot of a table.
    pub fn shard_of(&self, table: &TableDef, slot: u32) -> Result<ShardId> {
        self.slots(table)?
            .get(slot as usize)
            .copied()
            .ok_or_else(|| moved_away(table))
    }

    /// Every (shard, physical partition) of the table: one per partition of
    /// a hash table, one whole copy (partition 0) per shard of a mirror
    /// table, one of a single table.
    pub fn partitions(&self, table: &TableDef) -> Result<Vec<(ShardId, u32)>> {
        let hashed = matches!(table.distribution, Distribution::Hash { .. });
        Ok(self
            .slots(table)?
            .iter()
            .enumerate()
            .map(|(i, s)| (*s, if hashed { i as u32 } else { 0 }))
            .collect())
    }

    /// Every physical table of the table: (shard, database, table).
    pub fn physical_tables(&self, table: &TableDef) -> Result<Vec<(ShardId, String, String)>> {
        Ok(self
            .partitions(table)?
            .into_iter()
            .map(|(shard, p)| {
                (
                    shard,
                    crate::physical_database(&table.schema),
                    table.physical_name(p),
                )
            })
            .collect())
    }

    /// The shards holding any part of the table, in order.
    pub fn shards_of(&self, table: &TableDef) -> Vec<ShardId> {
        let set: BTreeSet<ShardId> = self.layout(table.id).iter().copied().collect();
        set.into_iter().collect()
    }

    /// Whether a slot of a table both maps know is on `shard` in this map
    /// and elsewhere in `older`: a partition moved to `shard` since
    /// `older` (a transaction whose snapshot was taken under `older` must
    /// not read it there).
    pub fn moved_to(&self, older: &Placement, shard: ShardId) -> bool {
        if self.epoch == older.epoch {
            return false;
        }
        self.layouts.iter().any(|(t, now)| {
            older.layouts.get(t).is_some_and(|then| {
                then.len() == now.len()
                    && now
                        .iter()
                        .zip(then.iter())
                        .any(|(n, o)| *n == shard && *o != shard)
            })
        })
    }

    /// Whether two tables' slots are on the same shards, slot by slot
    /// (with equal distributions: co-located).
    pub fn same_layout(&self, a: TableId, b: TableId) -> bool {
        self.layout(a) == self.layout(b)
    }

    /// How many partitions a hash table gets when neither its statement
    /// nor the cluster's `default_partitions` says: this many per shard
    /// at creation, so a table made on 3 shards spreads evenly over 12
    /// later (partition moves move whole partitions; see
    /// `docs/rfcs/2026-12-03-online-moves.md`, "Partitions to move").
    pub const PARTITIONS_PER_SHARD: u32 = 4;

    /// The slots of a new table: a hash table's `partitions` (default:
    /// [`Self::PARTITIONS_PER_SHARD`] per shard) dealt round robin over the
    /// shards; a mirror table a copy on every shard; a single table on the
    /// shard holding the fewest physical tables. The one placement policy
    /// for new tables (`Catalog::layout_for_new` first looks for a
    /// co-location group to join).
    pub fn layout_for_new(
        &self,
        distribution: &Distribution,
        partitions: Option<u32>,
    ) -> Result<Vec<ShardId>> {
        let shards = self.shard_ids();
        if shards.is_empty() {
            return Err(Error::internal("the cluster has no shards"));
        }
        Ok(match distribution {
            Distribution::Hash { .. } => {
                let n = self.hash_partitions(partitions);
                (0..n).map(|i| shards[i as usize % shards.len()]).collect()
            }
            Distribution::Mirror => shards,
            Distribution::Single => vec![self.least_loaded(&shards)],
        })
    }

    /// The partition count of a new hash table: the one asked for, or
    /// [`Self::PARTITIONS_PER_SHARD`] per shard.
    fn hash_partitions(&self, partitions: Option<u32>) -> u32 {
        partitions.unwrap_or(Self::PARTITIONS_PER_SHARD * self.servers.len().max(1) as u32)
    }

    /// The shard holding the fewest physical tables (the lowest id on a
    /// tie).
    fn least_loaded(&self, shards: &[ShardId]) -> ShardId {
        let mut counts: BTreeMap<ShardId, usize> = shards.iter().map(|s| (*s, 0)).collect();
        for layout in self.layouts.values() {
            for s in layout.iter() {
                *counts.entry(*s).or_default() += 1;
            }
        }
        counts
            .iter()
            .min_by_key(|(s, n)| (**n, **s))
            .map(|(s, _)| *s)
            .unwrap_or(shards[0])
    }
}

/// 42P01 for a table the map does not place (any more).
fn moved_away(table: &TableDef) -> Error {
    Error::Sql {
        state: common::SqlState::UNDEFINED_TABLE,
        message: format!(
            "relation \"{}\" changed its layout or was dropped while the statement ran; run it again",
            table.name
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(port: u16) -> MysqlEndpoint {
        MysqlEndpoint {
            host: "127.0.0.1".into(),
            port,
            user: "u".into(),
            password: String::new(),
        }
    }

    fn table(id: u64, distribution: Distribution) -> TableDef {
        TableDef {
            id: TableId(id),
            schema: "public".into(),
            name: format!("t{id}"),
            columns: vec![],
            primary_key: vec![],
            distribution,
            indexes: vec![],
        }
    }

    fn three_shards() -> Placement {
        Placement::new(7, (1..=3).map(|i| (ShardId(i), endpoint(3300 + i as u16))))
    }

    #[test]
    fn new_hash_tables_deal_partitions_round_robin() {
        let p = three_shards();
        let hash = Distribution::Hash {
            columns: vec!["id".into()],
            partitions: 0,
        };
        let l = p.layout_for_new(&hash, Some(5)).unwrap();
        assert_eq!(l, [1, 2, 3, 1, 2].map(ShardId));
        assert_eq!(p.layout_for_new(&hash, None).unwrap().len(), 12);
        assert_eq!(
            p.layout_for_new(&Distribution::Mirror, None).unwrap(),
            [1, 2, 3].map(ShardId)
        );
    }

    #[test]
    fn new_hash_tables_join_the_group_of_their_partition_count() {
        let hash = |n| Distribution::Hash {
            columns: vec!["id".into()],
            partitions: n,
        };
        let mut c = crate::catalog::Catalog::default();
        let mut p = three_shards();
        let tables = [
            (2, hash(3), [1, 2, 3]),
            (5, hash(3), [3, 1, 2]),
            (7, hash(3), [3, 1, 2]),
            (9, Distribution::Mirror, [1, 2, 3]),
            (11, Distribution::Mirror, [1, 2, 3]),
        ];
        for (id, d, layout) in tables {
            let t = table(id, d);
            p.set_layout(t.id, layout.map(ShardId).to_vec());
            c.tables
                .insert((t.schema.clone(), t.name.clone()), Arc::new(t));
        }
        c.placement = Arc::new(p.clone());
        // Most hash tables of 3 partitions share [3, 1, 2]; mirrors do not count.
        assert_eq!(
            c.layout_for_new(&hash(0), Some(3)).unwrap(),
            [3, 1, 2].map(ShardId)
        );
        // No group of 4 partitions: round robin.
        assert_eq!(
            c.layout_for_new(&hash(0), Some(4)).unwrap(),
            [1, 2, 3, 1].map(ShardId)
        );
        // A tie goes to the oldest table's layout.
        c.tables.retain(|_, t| t.id.0 != 7);
        assert_eq!(
            c.layout_for_new(&hash(0), Some(3)).unwrap(),
            [1, 2, 3].map(ShardId)
        );
        // No count asked: the biggest group, whatever its count.
        c.tables.retain(|_, t| t.id.0 != 2);
        assert_eq!(
            c.layout_for_new(&hash(0), None).unwrap(),
            [3, 1, 2].map(ShardId)
        );
        // Mirror and single tables keep the placement's policy.
        assert_eq!(
            c.layout_for_new(&Distribution::Mirror, None).unwrap(),
            [1, 2, 3].map(ShardId)
        );
    }

    #[test]
    fn single_tables_go_to_the_least_loaded_shard() {
        let mut p = three_shards();
        p.set_layout(TableId(1), vec![ShardId(1)]);
        p.set_layout(TableId(2), vec![ShardId(2), ShardId(1)]);
        let l = p.layout_for_new(&Distribution::Single, None).unwrap();
        assert_eq!(l, vec![ShardId(3)]);
    }

    #[test]
    fn slots_of_hash_mirror_and_single_tables() {
        let mut p = three_shards();
        let h = table(
            1,
            Distribution::Hash {
                columns: vec!["id".into()],
                partitions: 4,
            },
        );
        let m = table(2, Distribution::Mirror);
        p.set_layout(h.id, [1, 2, 3, 1].map(ShardId).to_vec());
        p.set_layout(m.id, [1, 2, 3].map(ShardId).to_vec());
        assert_eq!(p.shard_of(&h, 3).unwrap(), ShardId(1));
        assert!(p.shard_of(&h, 4).is_err());
        assert_eq!(p.partition_count(&h).unwrap(), 4);
        assert_eq!(p.shards_of(&h), [1, 2, 3].map(ShardId));
        assert_eq!(
            p.partitions(&m).unwrap(),
            vec![(ShardId(1), 0), (ShardId(2), 0), (ShardId(3), 0)]
        );
        assert_eq!(
            p.physical_tables(&h).unwrap()[3],
            (ShardId(1), "tsr_public".into(), "t1_1_p3".into())
        );
        let moved = p.with_layout(h.id, [2, 2, 3, 1].map(ShardId).to_vec());
        assert_eq!(moved.shard_of(&h, 0).unwrap(), ShardId(2));
        assert_eq!(p.shard_of(&h, 0).unwrap(), ShardId(1));
        assert!(!moved.same_layout(h.id, m.id));
        assert_eq!(p.epoch(), 7);
        assert_eq!(p.server(ShardId(2)).unwrap().port, 3302);
        assert!(p.server(ShardId(9)).is_err());
        let gone = table(3, Distribution::Single);
        assert_eq!(
            p.partition_count(&gone).unwrap_err().sqlstate().code(),
            "42P01"
        );
    }
}
