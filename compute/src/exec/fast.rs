//! The single-table fast path: one rendered SELECT per partition, run
//! through `shard_router::dist::read_partition` (the partitions of one
//! shard in one statement); answers of several partitions merged here
//! by the one merger, `shard_router::dist::merge_rows` (aggregates,
//! ORDER BY, LIMIT, DISTINCT).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{Datum, Error, Result, ShardId};
use shard_router::route::Route;
use shard_router::txn::StatementAccess;
use shard_router::Router;

use crate::plan::FastSelect;

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
        // UNION branch), and lock the latest rows anyway; so do reads of a
        // `real` value: MariaDB's UNION passes a FLOAT on with six
        // significant digits (`1.23457e-20` for PostgreSQL's
        // `1.2345679e-20`), and the cut's snapshots are one moment anyway.
        let mut by_shard: BTreeMap<ShardId, Vec<u32>> = BTreeMap::new();
        for part in &parts {
            by_shard
                .entry(placement.shard_of(t, *part)?)
                .or_default()
                .push(*part);
        }
        let apart = p.locking || p.types.contains(&common::SqlType::Real);
        let groups: Vec<(ShardId, Vec<u32>)> = if apart {
            parts
                .iter()
                .map(|part| Ok((placement.shard_of(t, *part)?, vec![*part])))
                .collect::<Result<_>>()?
        } else {
            by_shard.into_iter().collect()
        };
        let Some(merge) = &p.merge else {
            return Err(Error::internal(
                "a single-partition statement routed to several partitions",
            ));
        };
        let answers = if p.locking {
            read_groups(&self.router, &self.statement_access(), p, &groups, params).await?
        } else {
            self.read_consistent(p, &groups, params).await?
        };
        Ok(Output::Rows(shard_router::dist::merge_rows(
            merge, &p.types, answers, params,
        )?))
    }
}

/// A held read whose last run took at least this long reads through a
/// cut of snapshots instead: a held read keeps every distributed commit
/// and every other consistent read of the cluster waiting.
const HELD_TRY: Duration = Duration::from_millis(20);

/// How long a held read may keep the barrier: after that its statements
/// are abandoned (killed on the shards) and it reads through snapshots.
const HELD_LIMIT: Duration = Duration::from_millis(100);

type Answers = Vec<Vec<Vec<Datum>>>;

impl Session {
    /// A plain read of several partitions, consistent across shards: under
    /// a held barrier (one round trip per shard, no snapshot to open) when
    /// the statement's last read was short, else through a cut.
    async fn read_consistent(
        &self,
        p: &FastSelect,
        groups: &[(ShardId, Vec<u32>)],
        params: &[Datum],
    ) -> Result<Answers> {
        // How many statements read each shard.
        let mut wants = BTreeMap::new();
        for (shard, _) in groups {
            *wants.entry(*shard).or_default() += 1;
        }
        let last = Duration::from_micros(p.read_micros.load(Ordering::Relaxed).into());
        if last < HELD_TRY {
            if let Some(ticket) = self.held_read(&wants).await? {
                let access = self.statement_access();
                let start = Instant::now();
                let read = tokio::time::timeout(
                    HELD_LIMIT,
                    read_groups(&self.router, &access, p, groups, params),
                )
                .await;
                drop(ticket);
                record(p, start.elapsed());
                if let Ok(answers) = read {
                    return answers;
                }
            }
        }
        let access = self.read_access(&wants).await?;
        let start = Instant::now();
        let answers = read_groups(&self.router, &access, p, groups, params).await;
        record(p, start.elapsed());
        answers
    }
}

fn record(p: &FastSelect, took: Duration) {
    let micros = u32::try_from(took.as_micros()).unwrap_or(u32::MAX);
    p.read_micros.store(micros, Ordering::Relaxed);
}

/// Every shard's query runs to its end (none is dropped midway when
/// another fails), then the first error, if any, is reported.
async fn read_groups(
    router: &Router,
    access: &StatementAccess,
    p: &FastSelect,
    groups: &[(ShardId, Vec<u32>)],
    params: &[Datum],
) -> Result<Answers> {
    futures::future::join_all(
        groups
            .iter()
            .map(|(shard, parts)| fast_select_parts(router, access, p, *shard, parts, params)),
    )
    .await
    .into_iter()
    .collect()
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
