//! `tessera cluster rebalance` and `remove-shard`'s drain: mirror tables
//! copied to shards that lack them, then the moves [`super::plan`] finds
//! run one after another, each verified.

use std::collections::HashMap;

use common::{Result, ShardId, TableId};
use meta::{Catalog, Distribution, TableDef};
use mysql_async::prelude::*;
use storage_adapter::map_error;

use super::plan::{plan, Group, PlannedMove};
use super::{move_slot, MoveOptions, MoveReport, MoveRequest};
use crate::Router;

/// What a rebalance did.
#[derive(Debug, Default)]
pub struct Rebalanced {
    pub mirrors_extended: Vec<String>,
    pub moves: Vec<MoveReport>,
}

/// Spreads every hash group evenly over `onto` (every shard but those
/// being drained), after giving each shard of `onto` its mirror copies.
/// `before_each` is told each move before it starts.
pub async fn rebalance(
    router: &Router,
    onto: &[ShardId],
    opts: &MoveOptions,
    before_each: &(dyn Fn(&PlannedMove, &[String]) + Send + Sync),
    after_each: &(dyn Fn(&MoveReport) + Send + Sync),
) -> Result<Rebalanced> {
    let mut done = Rebalanced {
        mirrors_extended: place_mirrors(router, onto).await?,
        moves: vec![],
    };
    let catalog = router.meta.load_catalog().await?;
    let (groups, defs) = groups_of(&catalog);
    let sizes = slot_bytes(router, &catalog).await?;
    let groups: Vec<Group> = groups
        .into_iter()
        .map(|mut g| {
            g.slot_bytes = (0..g.layout.len() as u32)
                .map(|slot| {
                    g.tables
                        .iter()
                        .map(|t| sizes.get(&(*t, slot)).copied().unwrap_or(0))
                        .sum::<u64>()
                        .max(1)
                })
                .collect();
            g
        })
        .collect();
    // Mirror copies are alike on every shard: they weigh nothing here.
    let fixed: HashMap<ShardId, u64> = HashMap::new();
    for m in plan(&groups, onto, &fixed) {
        let tables: Vec<TableDef> = groups[m.group]
            .tables
            .iter()
            .filter_map(|t| defs.get(t).cloned())
            .collect();
        let names: Vec<String> = tables.iter().map(|t| t.qualified_name()).collect();
        before_each(&m, &names);
        let req = MoveRequest {
            tables,
            slot: m.slot,
            to: m.to,
        };
        let report = move_slot(router, &req, opts).await?;
        after_each(&report);
        done.moves.push(report);
    }
    Ok(done)
}

/// The co-location groups (hash tables with one layout; each single
/// table alone), and the tables by id.
fn groups_of(catalog: &Catalog) -> (Vec<Group>, HashMap<TableId, TableDef>) {
    let mut by_layout: HashMap<Vec<ShardId>, Vec<TableId>> = HashMap::new();
    let mut alone: Vec<(Vec<ShardId>, Vec<TableId>)> = vec![];
    let mut defs = HashMap::new();
    for t in catalog.tables.values() {
        let layout = catalog.placement.layout(t.id).to_vec();
        match t.distribution {
            Distribution::Hash { .. } => by_layout.entry(layout).or_default().push(t.id),
            Distribution::Single => alone.push((layout, vec![t.id])),
            Distribution::Mirror => continue,
        }
        defs.insert(t.id, (**t).clone());
    }
    let mut groups: Vec<Group> = by_layout
        .into_iter()
        .chain(alone)
        .map(|(layout, mut tables)| {
            tables.sort();
            Group {
                tables,
                layout,
                slot_bytes: vec![],
            }
        })
        .collect();
    groups.sort_by_key(|g| g.tables.first().copied());
    (groups, defs)
}

/// Bytes (data and indexes, as InnoDB estimates them) of every slot of
/// every table, asked of the shards holding them.
async fn slot_bytes(router: &Router, catalog: &Catalog) -> Result<HashMap<(TableId, u32), u64>> {
    let mut by_name: HashMap<(ShardId, String, String), (TableId, u32)> = HashMap::new();
    for t in catalog.tables.values() {
        for (slot, s) in catalog.placement.layout(t.id).iter().enumerate() {
            by_name.insert(
                (
                    *s,
                    meta::physical_database(&t.schema),
                    t.physical_name(slot as u32),
                ),
                (t.id, slot as u32),
            );
        }
    }
    let mut out = HashMap::new();
    for shard in catalog.placement.shard_ids() {
        let mut conn = router.shard(shard)?.conn().await?;
        let rows: Vec<(String, String, u64)> = conn
            .query(format!(
                "SELECT table_schema, table_name, CAST(data_length + index_length AS UNSIGNED) FROM information_schema.tables WHERE table_schema LIKE '{}%'",
                meta::PHYSICAL_DB_PREFIX.replace('_', "\\_")
            ))
            .await
            .map_err(|e| map_error(shard, e))?;
        for (db, tbl, bytes) in rows {
            if let Some(k) = by_name.get(&(shard, db, tbl)) {
                out.insert(*k, bytes);
            }
        }
    }
    Ok(out)
}

/// Puts a copy of every mirror table on exactly the shards of `onto`:
/// a mirror whose copies are elsewhere is copied to a new layout (a new
/// table id; the old copies locked while rows are copied, then dropped: a
/// statement that waited on them finds them gone and runs again on the
/// new layout).
async fn place_mirrors(router: &Router, onto: &[ShardId]) -> Result<Vec<String>> {
    let mut out = vec![];
    let catalog = router.meta.load_catalog().await?;
    let shards = onto.to_vec();
    let mut lacking: Vec<TableDef> = catalog
        .tables
        .values()
        .filter(|t| matches!(t.distribution, Distribution::Mirror))
        .filter(|t| catalog.placement.layout(t.id) != shards.as_slice())
        .map(|t| (**t).clone())
        .collect();
    lacking.sort_by_key(|t| t.id.0);
    for table in lacking {
        let mut txn = router
            .meta
            .begin_ddl(
                router.node_id,
                &format!("-- mirror {} on every shard", table.qualified_name()),
            )
            .await?;
        let source = router.meta.load_catalog().await?.placement;
        let mut new = table.clone();
        new.id = txn.renumber_table(table.id).await?;
        let target = source.with_layout(new.id, shards.clone());
        let moved = crate::placement::copy_rows(router, &table, &new, &target).await?;
        txn.update_table(&new, &[]).await?;
        txn.set_layout(new.id, &shards).await?;
        txn.commit().await?;
        for (shard, db, tbl) in target.physical_tables(&new)? {
            let _ = router.meta.unqueue_drop(shard, &db, &tbl).await;
        }
        let _ = router.check_version().await;
        if let Err(e) = moved.finish(router, &source, &table).await {
            tracing::warn!(
                "{}: old copies left for recovery: {e}",
                table.qualified_name()
            );
        }
        out.push(table.qualified_name());
    }
    Ok(out)
}
