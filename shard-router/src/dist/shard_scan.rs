//! `ShardScanExec`: the DataFusion execution plan of shard scans, one
//! output partition per (shard, query). Plain table scans and pushed
//! fragments both become one. Its `DisplayAs` shows the SQL each shard
//! receives; its metrics (`output_rows`, `bytes`, `shard_time` per
//! partition) are what `EXPLAIN ANALYZE` reports, read from the plan.

use std::fmt;
use std::sync::Arc;

use common::{ShardId, SqlType};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use futures::StreamExt;

use crate::txn::StatementAccess;
use crate::Router;

/// One shard query per output partition, streamed as Arrow batches.
pub struct ShardScanExec {
    router: Arc<Router>,
    /// The queries' own columns (what each row from the shard holds).
    schema: SchemaRef,
    types: Vec<SqlType>,
    queries: Vec<(ShardId, String)>,
    /// `FOR UPDATE`: in a transaction the queries run in its branches.
    locking: bool,
    /// Columns of `schema` the plan outputs.
    projection: Option<Vec<usize>>,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

/// What one partition of a scan sent and, once run, got back.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardScanReport {
    pub shard: ShardId,
    pub sql: String,
    /// Rows, bytes and milliseconds, when the scan ran (EXPLAIN ANALYZE).
    pub ran: Option<(usize, usize, f64)>,
}

impl ShardScanExec {
    pub fn new(
        router: Arc<Router>,
        schema: SchemaRef,
        types: Vec<SqlType>,
        queries: Vec<(ShardId, String)>,
        locking: bool,
        projection: Option<Vec<usize>>,
    ) -> Result<ShardScanExec, DataFusionError> {
        let output = match &projection {
            Some(p) => Arc::new(schema.project(p)?),
            None => schema.clone(),
        };
        // A shard's partitions are read by one statement, so the read sees
        // one moment of the shard through a transaction's branch as
        // through a cut's connection. Locking reads stay per partition
        // (they read the latest rows under their locks anyway).
        let queries = if locking {
            queries
        } else {
            one_per_shard(queries)
        };
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(output),
            Partitioning::UnknownPartitioning(queries.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(ShardScanExec {
            router,
            schema,
            types,
            queries,
            locking,
            projection,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// Each partition's shard and SQL, with what it returned once run.
    pub fn report(&self) -> Vec<ShardScanReport> {
        let metrics = self.metrics.clone_inner();
        self.queries
            .iter()
            .enumerate()
            .map(|(i, (shard, sql))| {
                let of = |name: &str| {
                    metrics
                        .iter()
                        .filter(|m| m.partition() == Some(i) && m.value().name() == name)
                        .map(|m| m.value().as_usize())
                        .sum::<usize>()
                };
                let ran = metrics
                    .iter()
                    .any(|m| m.partition() == Some(i) && m.value().name() == "shard_time")
                    .then(|| {
                        (
                            of("output_rows"),
                            of("bytes"),
                            of("shard_time") as f64 / 1e6,
                        )
                    });
                ShardScanReport {
                    shard: *shard,
                    sql: sql.clone(),
                    ran,
                }
            })
            .collect()
    }
}

impl fmt::Debug for ShardScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShardScanExec({} queries)", self.queries.len())
    }
}

impl DisplayAs for ShardScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::TreeRender => {
                write!(f, "ShardScanExec: {} shard queries", self.queries.len())?;
                if let Some((shard, sql)) = self.queries.first() {
                    write!(f, ", {shard}: {sql}")?;
                }
                Ok(())
            }
            DisplayFormatType::Verbose => {
                write!(f, "ShardScanExec:")?;
                for (shard, sql) in &self.queries {
                    write!(f, " [{shard}: {sql}]")?;
                }
                Ok(())
            }
        }
    }
}

impl ExecutionPlan for ShardScanExec {
    fn name(&self) -> &'static str {
        "ShardScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> datafusion::error::Result<TreeNodeRecursion>,
    ) -> datafusion::error::Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "ShardScanExec has no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        ctx: Arc<TaskContext>,
    ) -> datafusion::error::Result<SendableRecordBatchStream> {
        let output = self.cache.eq_properties.schema().clone();
        let Some((shard, sql)) = self.queries.get(partition).cloned() else {
            // No query (a table with no partitions to read): no rows.
            return Ok(Box::pin(RecordBatchStreamAdapter::new(
                output,
                futures::stream::empty(),
            )));
        };
        let rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let bytes = MetricBuilder::new(&self.metrics).counter("bytes", partition);
        let time = MetricBuilder::new(&self.metrics).subset_time("shard_time", partition);
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<RecordBatch, DataFusionError>>(2);
        let router = self.router.clone();
        // The statement's access, given with this execution: a plan made
        // earlier runs in whatever transaction the session is in now.
        let access = StatementAccess::of_task(&ctx);
        let locking = self.locking;
        let sql = if locking {
            access.under_lock_timeout(&sql).into_owned()
        } else {
            sql
        };
        let schema = self.schema.clone();
        let types = self.types.clone();
        tokio::spawn(async move {
            let start = std::time::Instant::now();
            access.pass_fences(&router, shard, &[&sql]).await;
            let res = match access
                .lease(&router, shard, locking)
                .await
                .and_then(|lease| super::exec::Watched::new(&router, lease))
            {
                Ok(mut watched) => {
                    // A consumer that goes away (LIMIT satisfied, a hash
                    // join whose build side is empty, the statement
                    // canceled) has the shard's query killed rather than
                    // read to its end. The read itself is never dropped
                    // midway: a connection whose reply was left half read
                    // would answer the next statement with the rest of it.
                    use super::shard_rows::Streamed;
                    let killer = watched.killer();
                    let mut killed = false;
                    let mut hung = false;
                    let r = {
                        let read = async {
                            let lease = watched.lease()?;
                            super::shard_rows::stream_rows(lease, &sql, schema, &types, &tx).await
                        };
                        tokio::pin!(read);
                        tokio::select! {
                            r = &mut read => r,
                            _ = tx.closed() => {
                                killed = true;
                                // Bounded: a shard that answers neither the
                                // kill nor the read (hung) has the read
                                // dropped after all, and its connection is
                                // then never used again (`Lease::conn`).
                                let both = async { tokio::join!(read, killer.kill()).0 };
                                match tokio::time::timeout(KILLED_READ_LIMIT, both).await {
                                    Ok(r) => r.map(|_| Streamed::Gone),
                                    Err(_) => {
                                        hung = true;
                                        Ok(Streamed::Gone)
                                    }
                                }
                            }
                        }
                    };
                    if let Ok(Streamed::Gone) = r {
                        if !killed {
                            watched.killer().kill().await;
                        }
                        // The kill has run; what it left (the rest of the
                        // rows, its error) is read off before the
                        // connection serves another read.
                        if let (false, Ok(lease)) = (hung, watched.lease()) {
                            lease.settle().await;
                        }
                    }
                    watched.done();
                    match r {
                        Ok(Streamed::Gone) => Ok((0, 0)),
                        Ok(Streamed::Done(r, b)) => Ok((r, b)),
                        Ok(Streamed::Drained(r, b, rest)) => {
                            // The connection goes to the read waiting for
                            // it; the rest follows from the spill.
                            rest.forward(&tx).await.map(|()| (r, b))
                        }
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(e),
            };
            match res {
                Ok((r, b)) => {
                    rows.add(r as usize);
                    bytes.add(b as usize);
                    time.add_duration(start.elapsed());
                }
                Err(e) => {
                    let _ = tx.send(Err(DataFusionError::External(Box::new(e)))).await;
                }
            }
        });
        let stream = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        Ok(match self.projection.clone() {
            Some(p) => Box::pin(RecordBatchStreamAdapter::new(
                output,
                stream.map(move |b| b.and_then(|b| b.project(&p).map_err(Into::into))),
            )),
            None => Box::pin(RecordBatchStreamAdapter::new(output, stream)),
        })
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}

/// How long a scan whose consumer went away waits for its killed shard
/// query to end before it drops the read.
const KILLED_READ_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The queries of one shard joined into one (`(q1) UNION ALL (q2)`, each
/// keeping its ORDER BY and LIMIT), shards in their first order.
fn one_per_shard(queries: Vec<(ShardId, String)>) -> Vec<(ShardId, String)> {
    let mut out: Vec<(ShardId, Vec<String>)> = vec![];
    for (shard, sql) in queries {
        match out.iter_mut().find(|(s, _)| *s == shard) {
            Some((_, v)) => v.push(sql),
            None => out.push((shard, vec![sql])),
        }
    }
    out.into_iter()
        .map(|(shard, mut v)| {
            if v.len() == 1 {
                return (shard, v.pop().unwrap_or_default());
            }
            (shard, union_all(&v))
        })
        .collect()
}

/// Queries of one shard as one statement that reads them at one moment:
/// `(q1) UNION ALL (q2)`, each keeping its ORDER BY and LIMIT.
pub fn union_all<S: AsRef<str>>(queries: &[S]) -> String {
    queries
        .iter()
        .map(|q| format!("({})", q.as_ref()))
        .collect::<Vec<_>>()
        .join(" UNION ALL ")
}

/// The shard scans of a physical plan, in plan order.
pub fn shard_scans(plan: &Arc<dyn ExecutionPlan>) -> Vec<ShardScanReport> {
    let mut out = vec![];
    let mut stack = vec![plan.clone()];
    while let Some(p) = stack.pop() {
        if let Some(s) = p.downcast_ref::<ShardScanExec>() {
            out.extend(s.report());
        }
        // Children pushed in reverse so the first child is visited first.
        for c in p.children().into_iter().rev() {
            stack.push(c.clone());
        }
    }
    out
}

/// How many plain (not locking) reads of each shard `plan` runs: a
/// statement with two or more reads them through a consistent cut
/// (`crate::txn::Cut`).
pub fn plain_reads(plan: &Arc<dyn ExecutionPlan>) -> std::collections::BTreeMap<ShardId, usize> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![plan.clone()];
    while let Some(p) = stack.pop() {
        if let Some(s) = p.downcast_ref::<ShardScanExec>() {
            if !s.locking {
                for (shard, _) in &s.queries {
                    *out.entry(*shard).or_default() += 1;
                }
            }
        }
        for c in p.children() {
            stack.push(c.clone());
        }
    }
    out
}
