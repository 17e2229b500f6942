//! The rebalance plan: which slots move where so every shard holds an even
//! share. Hash tables with the same layout are one co-location group and
//! move slot by slot together; within a group every shard ends with
//! `floor(P/S)` or `ceil(P/S)` of its `P` slots, the extra ones going to
//! the shards holding the fewest bytes; a slot leaves the fullest shards
//! first and goes to the emptiest. Pure: the caller measures sizes and
//! runs the moves.

use std::collections::{BTreeMap, HashMap};

use common::{ShardId, TableId};

/// One co-location group as the planner sees it.
#[derive(Debug, Clone)]
pub struct Group {
    pub tables: Vec<TableId>,
    /// The shard of each slot.
    pub layout: Vec<ShardId>,
    /// Bytes of each slot (all the group's tables).
    pub slot_bytes: Vec<u64>,
}

/// One planned move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMove {
    /// Index into the groups given to [`plan`].
    pub group: usize,
    pub slot: u32,
    pub from: ShardId,
    pub to: ShardId,
}

/// The moves that spread every group evenly over `shards`.
/// `fixed_bytes`: bytes on each shard that do not move (single tables,
/// mirror copies), counted when choosing where extra slots go.
pub fn plan(
    groups: &[Group],
    shards: &[ShardId],
    fixed_bytes: &HashMap<ShardId, u64>,
) -> Vec<PlannedMove> {
    if shards.is_empty() {
        return vec![];
    }
    let mut load: BTreeMap<ShardId, u64> = shards
        .iter()
        .map(|s| (*s, fixed_bytes.get(s).copied().unwrap_or(0)))
        .collect();
    for g in groups {
        for (slot, s) in g.layout.iter().enumerate() {
            if let Some(l) = load.get_mut(s) {
                *l += g.slot_bytes.get(slot).copied().unwrap_or(0);
            }
        }
    }
    let mut out = vec![];
    // Largest groups first: they decide the bytes.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(groups[i].slot_bytes.iter().sum::<u64>()));
    for gi in order {
        out.extend(plan_group(gi, &groups[gi], shards, &mut load));
    }
    out
}

fn plan_group(
    gi: usize,
    g: &Group,
    shards: &[ShardId],
    load: &mut BTreeMap<ShardId, u64>,
) -> Vec<PlannedMove> {
    let (p, n) = (g.layout.len(), shards.len());
    let base = p / n;
    let extra = p % n;
    // The shards that keep an extra slot: those holding most of this
    // group already (fewer moves), then the least loaded.
    let mut held: HashMap<ShardId, Vec<u32>> = HashMap::new();
    for (slot, s) in g.layout.iter().enumerate() {
        held.entry(*s).or_default().push(slot as u32);
    }
    let mut ranked: Vec<ShardId> = shards.to_vec();
    ranked.sort_by_key(|s| {
        (
            std::cmp::Reverse(held.get(s).map_or(0, |v| v.len()).min(base + 1)),
            load.get(s).copied().unwrap_or(0),
            *s,
        )
    });
    let target: HashMap<ShardId, usize> = ranked
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, base + usize::from(i < extra)))
        .collect();
    // Slots on shards outside `shards` (being drained) must all leave.
    let mut leaving: Vec<(ShardId, u32)> = vec![];
    for (s, slots) in &held {
        let keep = target.get(s).copied().unwrap_or(0);
        for slot in slots.iter().skip(keep) {
            leaving.push((*s, *slot));
        }
    }
    leaving.sort_by_key(|(s, slot)| (std::cmp::Reverse(load.get(s).copied().unwrap_or(0)), *slot));
    let mut room: Vec<(ShardId, usize)> = ranked
        .iter()
        .map(|s| {
            (
                *s,
                target[s].saturating_sub(held.get(s).map_or(0, |v| v.len())),
            )
        })
        .filter(|(_, r)| *r > 0)
        .collect();
    let mut out = vec![];
    for (from, slot) in leaving {
        room.sort_by_key(|(s, _)| (load.get(s).copied().unwrap_or(0), *s));
        let Some(r) = room.iter_mut().find(|(_, r)| *r > 0) else {
            break;
        };
        r.1 -= 1;
        let to = r.0;
        let bytes = g.slot_bytes.get(slot as usize).copied().unwrap_or(0);
        if let Some(l) = load.get_mut(&from) {
            *l = l.saturating_sub(bytes);
        }
        *load.entry(to).or_default() += bytes;
        out.push(PlannedMove {
            group: gi,
            slot,
            from,
            to,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(i: u32) -> ShardId {
        ShardId(i)
    }

    fn group(layout: &[u32]) -> Group {
        Group {
            tables: vec![TableId(1)],
            layout: layout.iter().map(|i| s(*i)).collect(),
            slot_bytes: vec![100; layout.len()],
        }
    }

    fn after(g: &Group, moves: &[PlannedMove]) -> HashMap<ShardId, usize> {
        let mut layout = g.layout.clone();
        for m in moves {
            assert_eq!(layout[m.slot as usize], m.from);
            layout[m.slot as usize] = m.to;
        }
        let mut counts = HashMap::new();
        for x in layout {
            *counts.entry(x).or_insert(0) += 1;
        }
        counts
    }

    #[test]
    fn twelve_slots_from_three_shards_to_four_move_three() {
        let g = group(&[1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
        let shards = [s(1), s(2), s(3), s(4)];
        let moves = plan(std::slice::from_ref(&g), &shards, &HashMap::new());
        assert_eq!(moves.len(), 3);
        assert!(moves.iter().all(|m| m.to == s(4)));
        let counts = after(&g, &moves);
        assert!(shards.iter().all(|x| counts[x] == 3), "{counts:?}");
    }

    #[test]
    fn a_drained_shard_gives_every_slot_away() {
        let g = group(&[1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]);
        let shards = [s(1), s(2), s(3)];
        let moves = plan(std::slice::from_ref(&g), &shards, &HashMap::new());
        let counts = after(&g, &moves);
        assert_eq!(counts.get(&s(4)), None);
        assert!(shards.iter().all(|x| counts[x] == 4), "{counts:?}");
        assert_eq!(moves.len(), 3);
    }

    #[test]
    fn an_even_cluster_plans_nothing() {
        let g = group(&[1, 2, 3, 1, 2, 3]);
        assert!(plan(&[g], &[s(1), s(2), s(3)], &HashMap::new()).is_empty());
    }

    #[test]
    fn three_slots_over_four_shards_leave_one_empty() {
        let g = group(&[1, 2, 3]);
        let moves = plan(&[g], &[s(1), s(2), s(3), s(4)], &HashMap::new());
        assert!(moves.is_empty(), "{moves:?}");
    }
}
