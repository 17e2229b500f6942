//! `pg_catalog.tessera_moves`: the partition moves meta records (issue
//! 33), one row per move, newest last, read from meta when the view is
//! scanned (a move's progress changes without a catalog change). The same
//! records `tessera cluster moves` prints.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::{MemTable, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use meta::store::MoveRecord;

use super::batch::{self, Col::*, Cols, V};
use super::Snapshot;

pub(super) const NAME: &str = "tessera_moves";

pub(super) const TESSERA_MOVES: Cols = &[
    ("move_id", I64),
    ("tables", Text),
    ("partition", I32),
    ("from_shard", I32),
    ("to_shard", I32),
    ("phase", Text),
    ("rows_copied", I64),
    ("bytes", I64),
    ("keys_caught_up", I64),
    ("waiting_keys", I64),
    ("fence_ms", I32),
    ("started", Ts),
    ("detail", Text),
    ("rows_total", I64),
    ("eta_secs", F32),
];

/// The view, read from meta at each scan.
#[derive(Debug)]
pub(super) struct MovesTable {
    pub schema: SchemaRef,
    pub snapshot: Arc<Snapshot>,
}

#[async_trait]
impl TableProvider for MovesTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn table_type(&self) -> TableType {
        TableType::View
    }
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let moves = match &self.snapshot.router {
            Some(router) => router
                .meta
                .moves(false)
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))?,
            None => vec![],
        };
        let now = chrono::Utc::now().timestamp_micros();
        let rows: Vec<Vec<V>> = moves.iter().map(|m| row(&self.snapshot, m, now)).collect();
        let b = batch::batch(TESSERA_MOVES, &rows)?;
        MemTable::try_new(b.schema(), vec![vec![b]])?
            .scan(state, projection, filters, limit)
            .await
    }
}

/// One move as a row; tables dropped since show their id.
fn row(snapshot: &Snapshot, m: &MoveRecord, now_micros: i64) -> Vec<V> {
    let tables = m
        .tables
        .iter()
        .map(|id| {
            snapshot
                .catalog
                .table_by_id(*id)
                .map(|t| t.qualified_name())
                .unwrap_or_else(|| id.0.to_string())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let opt = |v: Option<u32>| v.map(|v| V::I(v as i64)).unwrap_or(V::N);
    vec![
        V::I(m.id as i64),
        tables.into(),
        V::I(m.partition as i64),
        V::I(m.from.0 as i64),
        V::I(m.to.0 as i64),
        m.phase.as_str().into(),
        V::I(m.progress.rows_copied as i64),
        V::I(m.progress.bytes as i64),
        V::I(m.progress.keys_caught_up as i64),
        V::I(m.progress.lag_events as i64),
        opt(m.fence_ms),
        V::I(now_micros - (m.age_secs * 1e6) as i64),
        m.detail.clone().map(V::S).unwrap_or(V::N),
        V::I(m.rows_total as i64),
        m.eta_secs().map(V::F).unwrap_or(V::N),
    ]
}
