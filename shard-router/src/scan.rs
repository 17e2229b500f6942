//! The distributed read path: DataFusion `TableProvider`s over the shards.
//! Each scan pushes projection, filters (those MariaDB evaluates like
//! PostgreSQL, see `expr_sql`) and LIMIT into one MySQL query per partition, prunes
//! partitions from equality/IN filters on the partition key, and streams
//! shard rows into Arrow batches as they arrive. Filters are pushed as
//! `Inexact`, so DataFusion re-checks them: pushdown can only save work,
//! never change an answer.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use common::{Datum, Result as TResult, SqlType};
use datafusion::arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int16Builder, Int32Builder, Int64Builder, RecordBatch, RecordBatchOptions,
    StringBuilder, TimestampMicrosecondBuilder,
};
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::{CatalogProvider, SchemaProvider, Session, TableProvider};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, DataFusionError, ScalarValue};
use datafusion::datasource::TableType;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, Operator, TableProviderFilterPushDown};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::ExecutionPlan;
use meta::{Catalog, Distribution, TableDef};
use storage_adapter::{convert::from_mysql, map_error, quote_ident};

pub use crate::arrow_types::{arrow_type, decimal_params};
use crate::expr_sql::render;
use crate::render::physical_object;
use crate::txn::{Lease, SharedAccess};
use crate::Router;

pub const CATALOG_NAME: &str = "tessera";

/// What one partition scan sent to its shard and, once run, what came back.
#[derive(Debug, Clone)]
pub struct ScanRecord {
    pub shard: common::ShardId,
    pub sql: String,
    pub rows: u64,
    pub bytes: u64,
    pub micros: u64,
    pub done: bool,
}

/// The scans of a session's current statement (for EXPLAIN [ANALYZE]).
pub type ScanLog = Arc<parking_lot::Mutex<Vec<ScanRecord>>>;

/// What the shard scans of one execution run with: the session's shard
/// access (autocommit or its transaction's branches, read when a partition
/// starts) and its scan log. A session sets it as an extension of the
/// `SessionConfig` it executes in, so logical plans hold no session state
/// and a prepared statement's plan, made once at Parse, runs in whatever
/// transaction the session is in at Execute.
#[derive(Clone)]
pub struct ScanContext {
    pub access: SharedAccess,
    pub log: ScanLog,
}

impl fmt::Debug for ScanContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScanContext({} scans)", self.log.lock().len())
    }
}

impl Default for ScanContext {
    fn default() -> ScanContext {
        ScanContext {
            access: Arc::new(parking_lot::RwLock::new(
                crate::txn::ShardAccess::Autocommit,
            )),
            log: ScanLog::default(),
        }
    }
}

impl ScanContext {
    /// The context `state` executes with (autocommit and a fresh log if it
    /// has none: a planning-only context).
    pub fn of(state: &dyn Session) -> ScanContext {
        state
            .config()
            .get_extension::<ScanContext>()
            .map(|c| (*c).clone())
            .unwrap_or_default()
    }
}
const BATCH_ROWS: usize = 8192;

/// Arrow type of a column type.
/// The i128 mantissa of `d` at `scale` for an Arrow `Decimal128(precision,
/// scale)`, exactly: digits are added without limit of rust_decimal's 28
/// places (its `rescale` clamps the scale and so changed values: a
/// numeric(38,20) 123456789012.5 became 123456789.0125); 22003 past the
/// precision, 0A000 for more places than `scale`.
pub fn decimal_mantissa(
    d: &rust_decimal::Decimal,
    precision: u8,
    scale: u8,
) -> common::Result<i128> {
    let overflow = || {
        common::Error::NumericOutOfRange {
        message: format!("numeric field overflow: a value of precision {precision}, scale {scale} must round to an absolute value less than 10^{}", precision as i32 - scale as i32),
    }
    };
    let m = d.mantissa();
    let ds = d.scale();
    let s = scale as u32;
    let v = if s >= ds {
        m.checked_mul(10i128.checked_pow(s - ds).ok_or_else(overflow)?)
            .ok_or_else(overflow)?
    } else {
        // Shards store a numeric(p, s) column with exactly s places, so
        // only an unconstrained numeric can have more: refused, since
        // rounding it would change the value.
        let div = 10i128.pow(ds - s);
        if m % div != 0 {
            return Err(common::Error::unsupported(format!(
                "unconstrained numeric values with more than {scale} decimal places on the distributed path"
            )));
        }
        m / div
    };
    if v.unsigned_abs() >= 10u128.pow(precision.min(38) as u32) {
        return Err(overflow());
    }
    Ok(v)
}

pub fn table_schema(def: &TableDef) -> SchemaRef {
    Arc::new(Schema::new(
        def.columns
            .iter()
            .map(|c| Field::new(&c.name, arrow_type(&c.ty), !c.not_null))
            .collect::<Vec<_>>(),
    ))
}

fn df_err(e: common::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// The `tessera` catalog DataFusion resolves table names in.
pub struct TesseraCatalog {
    pub catalog: Arc<Catalog>,
    pub router: Arc<Router>,
    /// Appended to every shard scan (`FOR UPDATE`, `LOCK IN SHARE MODE`).
    pub lock: Option<&'static str>,
}

impl fmt::Debug for TesseraCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TesseraCatalog(v{})", self.catalog.version)
    }
}

impl CatalogProvider for TesseraCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.catalog.schemas.iter().cloned().collect()
    }
    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        if !self.catalog.schemas.contains(name) {
            return None;
        }
        Some(Arc::new(TesseraSchema {
            name: name.to_string(),
            catalog: self.catalog.clone(),
            router: self.router.clone(),
            lock: self.lock,
        }))
    }
}

pub struct TesseraSchema {
    name: String,
    catalog: Arc<Catalog>,
    router: Arc<Router>,
    lock: Option<&'static str>,
}

impl fmt::Debug for TesseraSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TesseraSchema({})", self.name)
    }
}

#[async_trait]
impl SchemaProvider for TesseraSchema {
    fn table_names(&self) -> Vec<String> {
        self.catalog
            .tables
            .values()
            .filter(|t| t.schema == self.name)
            .map(|t| t.name.clone())
            .collect()
    }
    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        Ok(self.catalog.table(&self.name, name).map(|t| {
            Arc::new(ShardTableProvider {
                schema: table_schema(t),
                table: t.clone(),
                router: self.router.clone(),
                lock: self.lock,
            }) as Arc<dyn TableProvider>
        }))
    }
    fn table_exist(&self, name: &str) -> bool {
        self.catalog.table(&self.name, name).is_some()
    }
}

/// One logical table, scanned partition by partition on the shards.
pub struct ShardTableProvider {
    pub(crate) table: Arc<TableDef>,
    pub(crate) schema: SchemaRef,
    pub(crate) router: Arc<Router>,
    pub(crate) lock: Option<&'static str>,
}

impl fmt::Debug for ShardTableProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShardTableProvider({})", self.table.qualified_name())
    }
}

fn scalar_datum(v: &ScalarValue) -> Option<Datum> {
    Some(match v {
        ScalarValue::Int8(Some(i)) => Datum::Int(*i as i64),
        ScalarValue::Int16(Some(i)) => Datum::Int(*i as i64),
        ScalarValue::Int32(Some(i)) => Datum::Int(*i as i64),
        ScalarValue::Int64(Some(i)) => Datum::Int(*i),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Datum::Text(s.clone()),
        ScalarValue::Decimal128(Some(_), _, _) => Datum::Text(v.to_string()),
        ScalarValue::Date32(Some(_)) => Datum::Text(v.to_string()),
        ScalarValue::Boolean(Some(b)) => Datum::Bool(*b),
        _ => return None,
    })
}

/// Candidate key values of a column from `col = lit` / `col IN (lits)`.
fn key_candidates(filters: &[Expr], col: &str) -> Option<Vec<ScalarValue>> {
    fn walk(e: &Expr, col: &str) -> Option<Vec<ScalarValue>> {
        match e {
            Expr::BinaryExpr(b) if b.op == Operator::And => {
                walk(&b.left, col).or_else(|| walk(&b.right, col))
            }
            Expr::BinaryExpr(b) if b.op == Operator::Eq => match (&*b.left, &*b.right) {
                (Expr::Column(c), Expr::Literal(v, _)) | (Expr::Literal(v, _), Expr::Column(c))
                    if c.name == col =>
                {
                    Some(vec![v.clone()])
                }
                _ => None,
            },
            Expr::InList(l) if !l.negated => match &*l.expr {
                Expr::Column(c) if c.name == col => l
                    .list
                    .iter()
                    .map(|i| match i {
                        Expr::Literal(v, _) => Some(v.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            },
            _ => None,
        }
    }
    filters.iter().find_map(|f| walk(f, col))
}

impl ShardTableProvider {
    /// A pushed-down filter as MariaDB SQL over the partition's columns, when
    /// MariaDB evaluates it like PostgreSQL (`expr_sql::render`).
    fn filter_sql(&self, f: &Expr) -> Option<String> {
        let unqualified = f
            .clone()
            .transform(|e| {
                Ok(match e {
                    Expr::Column(c) => {
                        Transformed::yes(Expr::Column(Column::new_unqualified(c.name)))
                    }
                    e => Transformed::no(e),
                })
            })
            .ok()?
            .data;
        let schema = DFSchema::try_from(self.schema.as_ref().clone()).ok()?;
        let cols: Vec<String> = self
            .table
            .columns
            .iter()
            .map(|c| quote_ident(&c.name))
            .collect();
        render(&unqualified, &schema, &cols)
    }

    /// The partitions a scan with these filters must read.
    pub(crate) fn partitions(&self, filters: &[Expr]) -> Vec<u32> {
        let all: Vec<u32> = (0..self.table.partition_count()).collect();
        match &self.table.distribution {
            Distribution::Mirror => {
                let n = self.table.partition_count().max(1);
                vec![self.router.node_id % n]
            }
            Distribution::Single => vec![0],
            Distribution::Hash { columns, .. } => {
                let mut values = Vec::with_capacity(columns.len());
                for c in columns {
                    let Some(ty) = self.table.column(c).ok().map(|c| c.ty) else {
                        return all;
                    };
                    let Some(vals) = key_candidates(filters, c) else {
                        return all;
                    };
                    let mut typed = Vec::with_capacity(vals.len());
                    for v in &vals {
                        let Some(d) = scalar_datum(v).and_then(|d| d.coerce(&ty).ok()) else {
                            return all;
                        };
                        typed.push(d);
                    }
                    values.push(typed);
                }
                match crate::partition::prune(&self.table, &values) {
                    Some(set) => set.into_iter().collect(),
                    None => all,
                }
            }
        }
    }
}

#[async_trait]
impl TableProvider for ShardTableProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn table_type(&self) -> TableType {
        TableType::Base
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>, DataFusionError> {
        Ok(filters
            .iter()
            .map(|f| {
                if self.filter_sql(f).is_some() {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>, DataFusionError> {
        let indices: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.table.columns.len()).collect(),
        };
        let projected = Arc::new(self.schema.project(&indices)?);
        let types: Vec<SqlType> = indices.iter().map(|i| self.table.columns[*i].ty).collect();
        let select_list = if indices.is_empty() {
            "1".to_string()
        } else {
            indices
                .iter()
                .map(|i| quote_ident(&self.table.columns[*i].name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let conds: Vec<String> = filters.iter().filter_map(|f| self.filter_sql(f)).collect();
        let mut queries = vec![];
        for p in self.partitions(filters) {
            let mut sql = format!(
                "SELECT {select_list} FROM {}",
                physical_object(&self.table.schema, &self.table.physical_name(p))
            );
            if !conds.is_empty() {
                sql.push_str(" WHERE ");
                sql.push_str(&conds.join(" AND "));
            }
            if let Some(n) = limit {
                sql.push_str(&format!(" LIMIT {n}"));
            }
            if let Some(l) = self.lock {
                sql.push_str(l);
            }
            queries.push((self.table.partition_shards[p as usize], sql));
        }
        let cx = ScanContext::of(state);
        let streams = shard_streams(
            &self.router,
            &cx.access,
            &cx.log,
            &projected,
            &types,
            queries,
            self.lock.is_some(),
        );
        Ok(Arc::new(StreamingTableExec::try_new(
            projected,
            streams,
            None,
            vec![],
            false,
            limit,
        )?))
    }
}

/// One stream per (shard, query), each logged in the session's scan log.
/// `locking`: the queries lock the rows they read (`FOR UPDATE`), so in a
/// transaction they run in its branches.
pub(crate) fn shard_streams(
    router: &Arc<Router>,
    access: &SharedAccess,
    log: &ScanLog,
    schema: &SchemaRef,
    types: &[SqlType],
    queries: Vec<(common::ShardId, String)>,
    locking: bool,
) -> Vec<Arc<dyn PartitionStream>> {
    queries
        .into_iter()
        .map(|(shard, sql)| {
            let slot = {
                let mut log = log.lock();
                log.push(ScanRecord {
                    shard,
                    sql: sql.clone(),
                    rows: 0,
                    bytes: 0,
                    micros: 0,
                    done: false,
                });
                log.len() - 1
            };
            Arc::new(ShardPartitionStream {
                router: router.clone(),
                access: access.clone(),
                shard,
                sql,
                locking,
                schema: schema.clone(),
                types: types.to_vec(),
                log: log.clone(),
                slot,
            }) as Arc<dyn PartitionStream>
        })
        .collect()
}

/// One partition's shard query, streamed as Arrow batches.
pub struct ShardPartitionStream {
    router: Arc<Router>,
    access: SharedAccess,
    shard: common::ShardId,
    pub sql: String,
    locking: bool,
    schema: SchemaRef,
    types: Vec<SqlType>,
    log: ScanLog,
    slot: usize,
}

impl fmt::Debug for ShardPartitionStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShardScan {}: {}", self.shard, self.sql)
    }
}

impl PartitionStream for ShardPartitionStream {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<RecordBatch, DataFusionError>>(2);
        let router = self.router.clone();
        // Read at execution: a cached plan runs in whatever transaction
        // the session is in now.
        let access = self.access.read().clone();
        let shard = self.shard;
        let sql = self.sql.clone();
        let locking = self.locking;
        let schema = self.schema.clone();
        let types = self.types.clone();
        let log = self.log.clone();
        let slot = self.slot;
        tokio::spawn(async move {
            let start = std::time::Instant::now();
            let res = match access.lease(&router, shard, locking).await {
                Ok(lease) => stream_rows(lease, &sql, schema, &types, &tx).await,
                Err(e) => Err(e),
            };
            match res {
                Ok((rows, bytes)) => {
                    if let Some(r) = log.lock().get_mut(slot) {
                        r.rows = rows;
                        r.bytes = bytes;
                        r.micros = start.elapsed().as_micros() as u64;
                        r.done = true;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(df_err(e))).await;
                }
            }
        });
        let stream = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream))
    }
}

/// Streams the rows of `sql` run on the leased connection as Arrow batches.
async fn stream_rows(
    mut lease: Lease,
    sql: &str,
    schema: SchemaRef,
    types: &[SqlType],
    tx: &tokio::sync::mpsc::Sender<Result<RecordBatch, DataFusionError>>,
) -> TResult<(u64, u64)> {
    use mysql_async::prelude::Queryable;
    let mut total_rows = 0u64;
    let mut total_bytes = 0u64;
    let shard = lease.shard();
    let conn = lease.conn()?;
    let mut result = conn
        .query_iter(sql)
        .await
        .map_err(|e| storage_adapter::map_statement_error(shard, e, sql))?;
    let mut builders: Vec<ColumnBuilder> = types.iter().map(ColumnBuilder::new).collect();
    let mut rows = 0usize;
    while let Some(row) = result.next().await.map_err(|e| map_error(shard, e))? {
        let values = row.unwrap();
        total_rows += 1;
        for v in &values {
            total_bytes += match v {
                mysql_async::Value::Bytes(b) => b.len() as u64,
                _ => 8,
            };
        }
        for ((b, v), ty) in builders.iter_mut().zip(values).zip(types) {
            let d = match (ty, from_mysql(v, ty)?) {
                // bpchar semantics in DataFusion: trailing blanks do not
                // count (comparisons, joins, grouping).
                (SqlType::Char(_), Datum::Text(s)) => {
                    Datum::Text(s.trim_end_matches(' ').to_string())
                }
                (_, d) => d,
            };
            b.append(d)?;
        }
        rows += 1;
        if rows == BATCH_ROWS {
            let batch = finish(&schema, &mut builders, rows)?;
            rows = 0;
            if tx.send(Ok(batch)).await.is_err() {
                // The consumer is gone (LIMIT satisfied, query canceled):
                // read the rest so the connection stays usable.
                while result
                    .next()
                    .await
                    .map_err(|e| map_error(shard, e))?
                    .is_some()
                {}
                return Ok((total_rows, total_bytes));
            }
        }
    }
    if rows > 0 {
        let batch = finish(&schema, &mut builders, rows)?;
        let _ = tx.send(Ok(batch)).await;
    }
    Ok((total_rows, total_bytes))
}

fn finish(schema: &SchemaRef, builders: &mut [ColumnBuilder], rows: usize) -> TResult<RecordBatch> {
    let arrays: Vec<ArrayRef> = builders.iter_mut().map(|b| b.finish()).collect();
    RecordBatch::try_new_with_options(
        schema.clone(),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(common::Error::internal)
}

/// An Arrow array builder for one column type.
pub enum ColumnBuilder {
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
    Str(StringBuilder),
    Bin(BinaryBuilder),
    Date(Date32Builder),
    Ts(TimestampMicrosecondBuilder, bool),
    Dec(Decimal128Builder, u8, u8),
}

impl ColumnBuilder {
    pub fn new(t: &SqlType) -> ColumnBuilder {
        match t {
            SqlType::SmallInt => ColumnBuilder::I16(Int16Builder::new()),
            SqlType::Integer => ColumnBuilder::I32(Int32Builder::new()),
            SqlType::BigInt => ColumnBuilder::I64(Int64Builder::new()),
            SqlType::Real => ColumnBuilder::F32(Float32Builder::new()),
            SqlType::Double => ColumnBuilder::F64(Float64Builder::new()),
            SqlType::Boolean => ColumnBuilder::Bool(BooleanBuilder::new()),
            SqlType::Char(_) | SqlType::Varchar(_) | SqlType::Text => {
                ColumnBuilder::Str(StringBuilder::new())
            }
            SqlType::Bytea => ColumnBuilder::Bin(BinaryBuilder::new()),
            SqlType::Date => ColumnBuilder::Date(Date32Builder::new()),
            SqlType::Timestamp => ColumnBuilder::Ts(TimestampMicrosecondBuilder::new(), false),
            SqlType::TimestampTz => ColumnBuilder::Ts(TimestampMicrosecondBuilder::new(), true),
            SqlType::Numeric { precision, scale } => {
                let (p, s) = decimal_params(*precision, *scale);
                ColumnBuilder::Dec(Decimal128Builder::new(), p, s)
            }
        }
    }

    pub fn append(&mut self, d: Datum) -> TResult<()> {
        let bad = |d: &Datum| common::Error::internal(format!("unexpected value {d:?}"));
        match (self, d) {
            (ColumnBuilder::I16(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::I32(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::I64(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::F32(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::F64(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Bool(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Str(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Bin(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Date(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Ts(b, _), Datum::Null) => b.append_null(),
            (ColumnBuilder::Dec(b, _, _), Datum::Null) => b.append_null(),
            (ColumnBuilder::I16(b), Datum::Int(i)) => b.append_value(i as i16),
            (ColumnBuilder::I32(b), Datum::Int(i)) => b.append_value(i as i32),
            (ColumnBuilder::I64(b), Datum::Int(i)) => b.append_value(i),
            (ColumnBuilder::F32(b), Datum::Float(f)) => b.append_value(f as f32),
            (ColumnBuilder::F64(b), Datum::Float(f)) => b.append_value(f),
            (ColumnBuilder::Bool(b), Datum::Bool(v)) => b.append_value(v),
            (ColumnBuilder::Str(b), Datum::Text(s)) => b.append_value(s),
            (ColumnBuilder::Bin(b), Datum::Bytes(v)) => b.append_value(v),
            (ColumnBuilder::Date(b), Datum::Date(d)) => {
                b.append_value(common::value::days_since_epoch(d) as i32)
            }
            (ColumnBuilder::Ts(b, _), Datum::Timestamp(t)) => {
                b.append_value(t.and_utc().timestamp_micros())
            }
            (ColumnBuilder::Ts(b, _), Datum::TimestampTz(t)) => {
                b.append_value(t.timestamp_micros())
            }
            (ColumnBuilder::Dec(b, p, s), Datum::Decimal(d)) => {
                b.append_value(decimal_mantissa(&d, *p, *s)?)
            }
            (_, d) => return Err(bad(&d)),
        }
        Ok(())
    }

    pub fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::I16(b) => Arc::new(b.finish()),
            ColumnBuilder::I32(b) => Arc::new(b.finish()),
            ColumnBuilder::I64(b) => Arc::new(b.finish()),
            ColumnBuilder::F32(b) => Arc::new(b.finish()),
            ColumnBuilder::F64(b) => Arc::new(b.finish()),
            ColumnBuilder::Bool(b) => Arc::new(b.finish()),
            ColumnBuilder::Str(b) => Arc::new(b.finish()),
            ColumnBuilder::Bin(b) => Arc::new(b.finish()),
            ColumnBuilder::Date(b) => Arc::new(b.finish()),
            ColumnBuilder::Ts(b, tz) => {
                let a = b.finish();
                if *tz {
                    Arc::new(a.with_timezone("+00:00"))
                } else {
                    Arc::new(a)
                }
            }
            ColumnBuilder::Dec(b, p, s) => {
                let a = b.finish();
                match a.clone().with_precision_and_scale(*p, *s as i8) {
                    Ok(x) => Arc::new(x),
                    Err(_) => Arc::new(a),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::decimal_mantissa;
    use rust_decimal::Decimal;
    use std::str::FromStr;

    #[test]
    fn decimal_mantissa_is_exact_at_any_scale() {
        let d = Decimal::from_str("123456789012.5").unwrap();
        assert_eq!(
            decimal_mantissa(&d, 38, 20).unwrap(),
            12_345_678_901_250_000_000_000_000_000_000
        );
        let d = Decimal::from_str("1.5").unwrap();
        assert_eq!(decimal_mantissa(&d, 38, 30).unwrap(), 15 * 10i128.pow(29));
        let d = Decimal::from_str("-2.340").unwrap();
        assert_eq!(decimal_mantissa(&d, 10, 2).unwrap(), -234);
        let d = Decimal::from_str("-2.345").unwrap();
        assert!(decimal_mantissa(&d, 10, 2).is_err());
        let d = Decimal::from_str("1000").unwrap();
        assert!(decimal_mantissa(&d, 5, 2).is_err());
    }
}
