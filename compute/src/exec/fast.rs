//! The single-table fast path: one rendered SELECT per partition, run
//! through `shard_router::dist::read_partition` (the partitions of one
//! shard in one statement); answers of several partitions merged here
//! (aggregates, ORDER BY, LIMIT, DISTINCT).

use common::{Datum, Error, Result, SqlType};
use shard_router::route::Route;
use shard_router::txn::StatementAccess;
use shard_router::Router;

use crate::plan::{AggMerge, FastSelect, LimitValue, Merge};

use crate::session::{Output, Session};

impl Session {
    /// A single-table SELECT without DataFusion: one partition answers it
    /// directly; several (IN lists on the key, ranges, non-key filters) run
    /// the same rendered statement concurrently and their answers are
    /// merged here.
    pub(crate) async fn execute_fast_select(
        &mut self,
        p: &FastSelect,
        params: &[Datum],
    ) -> Result<Output> {
        let t = &p.table;
        let placement = self.router.placement();
        let parts: Vec<u32> = match p.route.resolve(t, params)? {
            Route::SinglePartition(x) => vec![x],
            Route::Mirror => vec![shard_router::route::mirror_copy(
                &placement,
                t,
                self.router.node_id,
            )],
            Route::Partitions(v) => v,
            Route::Scatter => (0..placement.partition_count(t)?).collect(),
        };
        if let [part] = parts[..] {
            let access = self.statement_access();
            let shard = placement.shard_of(t, part)?;
            return Ok(Output::Rows(
                fast_select_parts(&self.router, &access, p, shard, &[part], params).await?,
            ));
        }
        // The partitions of one shard are read by one statement (their
        // queries joined by UNION ALL), so they share one read view; a
        // statement of several shards reads one consistent cut. Locking
        // reads run per partition (MariaDB takes no lock clause inside a
        // UNION branch), and lock the latest rows anyway.
        let mut by_shard: std::collections::BTreeMap<common::ShardId, Vec<u32>> =
            std::collections::BTreeMap::new();
        for part in &parts {
            by_shard
                .entry(placement.shard_of(t, *part)?)
                .or_default()
                .push(*part);
        }
        let groups: Vec<(common::ShardId, Vec<u32>)> = if p.locking {
            parts
                .iter()
                .map(|part| Ok((placement.shard_of(t, *part)?, vec![*part])))
                .collect::<Result<_>>()?
        } else {
            by_shard.into_iter().collect()
        };
        let access = if p.locking {
            self.statement_access()
        } else {
            let mut wants = std::collections::BTreeMap::new();
            for (shard, _) in &groups {
                *wants.entry(*shard).or_default() += 1;
            }
            self.read_access(&wants).await?
        };
        let Some(merge) = &p.merge else {
            return Err(Error::internal(
                "a single-partition statement routed to several partitions",
            ));
        };
        // Every shard's query runs to its end (none is dropped midway when
        // another fails), then the first error, if any, is reported.
        let answers = futures::future::join_all(groups.iter().map(|(shard, parts)| {
            fast_select_parts(&self.router, &access, p, *shard, parts, params)
        }))
        .await
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
        Ok(Output::Rows(merge_answers(
            merge, &p.types, answers, params,
        )?))
    }
}

/// Runs a fast-path SELECT on partitions of one shard in one statement
/// (`(q1) UNION ALL (q2)`, each keeping its ORDER BY and LIMIT) and decodes
/// the rows.
async fn fast_select_parts(
    router: &Router,
    access: &StatementAccess,
    p: &FastSelect,
    shard: common::ShardId,
    parts: &[u32],
    params: &[Datum],
) -> Result<Vec<Vec<Datum>>> {
    let (sql, vals) = if let [part] = parts {
        let (sql, order) = crate::plan::dml::slot_sql(&p.sql, &p.table, *part)?;
        (
            std::borrow::Cow::Borrowed(sql.as_str()),
            shard_router::dist::bind(order, params)?,
        )
    } else {
        let mut queries = vec![];
        let mut vals = vec![];
        for part in parts {
            let (q, order) = crate::plan::dml::slot_sql(&p.sql, &p.table, *part)?;
            queries.push(q.as_str());
            vals.extend(shard_router::dist::bind(order, params)?);
        }
        (
            std::borrow::Cow::Owned(shard_router::dist::union_all(&queries)),
            vals,
        )
    };
    shard_router::dist::read_partition(router, access, shard, &sql, vals, &p.types, p.locking).await
}

/// Combines the answers of several partitions to one fast-path SELECT.
fn merge_answers(
    merge: &Merge,
    types: &[SqlType],
    answers: Vec<Vec<Vec<Datum>>>,
    params: &[Datum],
) -> Result<Vec<Vec<Datum>>> {
    use std::cmp::Ordering;
    match merge {
        Merge::Aggregates(aggs) => {
            let mut acc: Vec<Datum> = aggs
                .iter()
                .map(|a| match a {
                    AggMerge::Count => Datum::Int(0),
                    _ => Datum::Null,
                })
                .collect();
            for row in answers.into_iter().flatten() {
                for (i, v) in row.into_iter().enumerate() {
                    let (Some(agg), Some(slot)) = (aggs.get(i), acc.get_mut(i)) else {
                        return Err(Error::internal("aggregate row wider than planned"));
                    };
                    let prev = std::mem::replace(slot, Datum::Null);
                    *slot = combine(*agg, types.get(i), prev, v)?;
                }
            }
            Ok(vec![acc])
        }
        Merge::Rows {
            order,
            distinct,
            limit,
        } => {
            let mut rows: Vec<Vec<Datum>> = answers.into_iter().flatten().collect();
            let by_order = |a: &Vec<Datum>, b: &Vec<Datum>| {
                for (i, desc) in order {
                    let o = a[*i].sort_cmp(&b[*i]);
                    let o = if *desc { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            };
            let whole = |a: &Vec<Datum>, b: &Vec<Datum>| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.sort_cmp(y))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or(Ordering::Equal)
            };
            if *distinct {
                // Equal rows have equal ORDER BY keys, so they end up
                // adjacent.
                rows.sort_by(|a, b| by_order(a, b).then_with(|| whole(a, b)));
                rows.dedup_by(|a, b| whole(a, b) == Ordering::Equal);
            } else if !order.is_empty() {
                rows.sort_by(by_order);
            }
            if let Some(l) = limit {
                let n = match l {
                    LimitValue::Const(n) => *n,
                    LimitValue::Param(i) => match params.get(*i) {
                        Some(Datum::Int(n)) => (*n).max(0) as u64,
                        Some(Datum::Null) => u64::MAX,
                        Some(Datum::Text(s)) => s
                            .trim()
                            .parse::<i64>()
                            .map_err(|_| Error::InvalidText {
                                ty: "bigint".into(),
                                value: s.clone(),
                            })?
                            .max(0) as u64,
                        _ => {
                            return Err(Error::InvalidParameter {
                                message: format!("LIMIT parameter ${} is not an integer", i + 1),
                            })
                        }
                    },
                };
                rows.truncate(usize::try_from(n).unwrap_or(usize::MAX));
            }
            Ok(rows)
        }
    }
}

/// Folds one partition's partial aggregate into the running value.
fn combine(agg: AggMerge, ty: Option<&SqlType>, acc: Datum, v: Datum) -> Result<Datum> {
    use std::cmp::Ordering;
    if v.is_null() {
        return Ok(acc);
    }
    if acc.is_null() {
        return Ok(v);
    }
    let out_of_range = || Error::NumericOutOfRange {
        message: format!(
            "{} out of range",
            ty.map(|t| t.to_string()).unwrap_or_else(|| "value".into())
        ),
    };
    Ok(match (agg, acc, v) {
        (AggMerge::Count | AggMerge::Sum, Datum::Int(a), Datum::Int(b)) => {
            Datum::Int(a.checked_add(b).ok_or_else(out_of_range)?)
        }
        (AggMerge::Sum, Datum::Decimal(a), Datum::Decimal(b)) => {
            Datum::Decimal(a.checked_add(b).ok_or_else(out_of_range)?)
        }
        (AggMerge::Min, a, b) => {
            if b.sort_cmp(&a) == Ordering::Less {
                b
            } else {
                a
            }
        }
        (AggMerge::Max, a, b) => {
            if b.sort_cmp(&a) == Ordering::Greater {
                b
            } else {
                a
            }
        }
        (agg, a, b) => {
            return Err(Error::internal(format!(
                "cannot merge {agg:?} of {a:?} and {b:?}"
            )))
        }
    })
}
