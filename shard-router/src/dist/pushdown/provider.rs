//! The table a pushed fragment becomes: one MySQL query per partition,
//! scanned through the shard streams of `scan`.

use super::fragment::Frag;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use common::{ShardId, SqlType};
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Column, DataFusionError, TableReference};
use datafusion::datasource::{provider_as_source, TableType};
use datafusion::logical_expr::{
    cast, Expr, LogicalPlan, LogicalPlanBuilder, TableProviderFilterPushDown,
};
use datafusion::physical_plan::ExecutionPlan;

use crate::sql::{arrow_type, sql_type_of, ShardSql};
use crate::Router;

/// A scan of `f` with this SELECT list (and GROUP BY / ORDER BY tails),
/// projected back to `fields`, the schema of the subtree it replaces.
/// `select`: the shard query's items, unaliased (named `c0`, `c1`, ...
/// here, `sql::scan_items`).
pub(super) fn scan_plan(
    f: &Frag,
    select: &[ShardSql],
    group_by: &ShardSql,
    tail: &ShardSql,
    fields: &[(Option<TableReference>, Arc<Field>)],
) -> datafusion::error::Result<LogicalPlan> {
    let Some(types) = fields
        .iter()
        .map(|(_, fl)| sql_type_of(fl.data_type()))
        .collect::<Option<Vec<_>>>()
    else {
        return Err(DataFusionError::Plan("pushdown: unsupported type".into()));
    };
    let schema = Arc::new(Schema::new(
        types
            .iter()
            .zip(fields)
            .enumerate()
            .map(|(i, (t, (_, fl)))| {
                // The replaced subtree's field metadata (a char(n)'s
                // width) goes on, or the plan's schemas disagree above.
                Field::new(format!("c{i}"), arrow_type(t), fl.is_nullable())
                    .with_metadata(fl.metadata().clone())
            })
            .collect::<Vec<_>>(),
    ));
    let select = super::sql::scan_items(select, &types);
    let queries: Vec<(ShardId, ShardSql)> = f
        .targets()
        .into_iter()
        .map(|(shard, p)| (shard, f.body.query_sql(&select, p, &[group_by, tail])))
        .collect();
    let provider = ShardQueryProvider {
        schema: schema.clone(),
        types,
        queries,
        router: f.router.clone(),
    };
    let name = TableReference::bare("shard_query");
    let scan =
        LogicalPlanBuilder::scan(name.clone(), provider_as_source(Arc::new(provider)), None)?
            .build()?;
    let exprs: Vec<Expr> = fields
        .iter()
        .enumerate()
        .map(|(i, (q, fl))| {
            let c = Expr::Column(Column::new(Some(name.clone()), format!("c{i}")));
            let c = if schema.field(i).data_type() == fl.data_type() {
                c
            } else {
                cast(c, fl.data_type().clone())
            };
            c.alias_qualified(q.clone(), fl.name())
        })
        .collect();
    LogicalPlanBuilder::from(scan).project(exprs)?.build()
}

/// The per-partition queries of a pushed fragment, as a table.
pub struct ShardQueryProvider {
    schema: SchemaRef,
    types: Vec<SqlType>,
    queries: Vec<(ShardId, ShardSql)>,
    router: Arc<Router>,
}

impl fmt::Debug for ShardQueryProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShardQuery({} partitions)", self.queries.len())
    }
}

#[async_trait]
impl TableProvider for ShardQueryProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn table_type(&self) -> TableType {
        TableType::Temporary
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>, DataFusionError> {
        Ok(vec![
            TableProviderFilterPushDown::Unsupported;
            filters.len()
        ])
    }
    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>, DataFusionError> {
        let _ = limit;
        // The edge: the composed queries become the text the shards run.
        let queries = self
            .queries
            .iter()
            .map(|(shard, sql)| Ok((*shard, sql.clone().into_query()?)))
            .collect::<common::Result<Vec<_>>>()
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(Arc::new(crate::dist::shard_scan::ShardScanExec::new(
            self.router.clone(),
            self.schema.clone(),
            self.types.clone(),
            queries,
            // Locking scans are never pushed down (see `compile`).
            false,
            projection.cloned(),
        )?))
    }
}
