//! The distributed read path: DataFusion `TableProvider`s over the shards.
//! Each scan pushes projection, filters (those MariaDB evaluates like
//! PostgreSQL, rendered by `expr_sql` into `ShardSql`) and LIMIT into one
//! MySQL query per partition, composed as `ShardSql`, prunes
//! partitions from equality/IN filters on the partition key, and streams
//! shard rows into Arrow batches as they arrive. Filters are pushed as
//! `Inexact`, so DataFusion re-checks them: pushdown can only save work,
//! never change an answer.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use common::{Datum, SqlType};
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::{CatalogProvider, SchemaProvider, Session, TableProvider};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, DataFusionError, ScalarValue};
use datafusion::datasource::TableType;
use datafusion::logical_expr::{Expr, Operator, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use meta::{Catalog, Distribution, TableDef};

use crate::sql::arrow_type;
use crate::sql::expr_sql::render;
use crate::sql::ShardSql;
use crate::Router;

pub const CATALOG_NAME: &str = "tessera";

use crate::sql::BPCHAR_WIDTH;

pub fn table_schema(def: &TableDef) -> SchemaRef {
    Arc::new(Schema::new(
        def.columns
            .iter()
            .map(|c| {
                // Every column is declared nullable, NOT NULL ones too:
                // DataFusion keeps a column's non-nullability through
                // plans where it becomes NULL (a scalar subquery that
                // finds no row), and then fails the batch.
                let _ = c.not_null;
                let f = Field::new(&c.name, arrow_type(&c.ty), true);
                match c.ty {
                    // char(n) values travel without their trailing blanks
                    // (bpchar comparisons ignore them); the width rides
                    // along so a column shown as is gets them back.
                    SqlType::Char(n) => f.with_metadata(
                        [(BPCHAR_WIDTH.to_string(), n.to_string())]
                            .into_iter()
                            .collect(),
                    ),
                    _ => f,
                }
            })
            .collect::<Vec<_>>(),
    ))
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
                constraints: primary_key_constraint(t),
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
    /// The primary key, so the planner knows what PostgreSQL knows: the
    /// other columns of a table grouped by its key depend on it (`GROUP BY
    /// w_id` may select `w_ytd`).
    pub(crate) constraints: datafusion::common::Constraints,
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
    fn filter_sql(&self, f: &Expr) -> Option<ShardSql> {
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
        let cols: Vec<ShardSql> = self
            .table
            .columns
            .iter()
            .map(|c| {
                let mut col = ShardSql::new();
                col.ident(&c.name);
                col
            })
            .collect();
        render(&unqualified, &schema, &cols)
    }

    /// The partitions a scan with these filters must read.
    pub(crate) fn partitions(&self, filters: &[Expr]) -> Vec<u32> {
        let placement = self.router.placement();
        let all: Vec<u32> = (0..placement.partition_count(&self.table).unwrap_or(0)).collect();
        match &self.table.distribution {
            Distribution::Mirror => vec![crate::route::mirror_copy(
                &placement,
                &self.table,
                self.router.node_id,
            )],
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
                match crate::route::prune(&self.table, &values) {
                    Some(set) => set.into_iter().collect(),
                    None => all,
                }
            }
        }
    }
}

/// A table's primary key as DataFusion's constraint (none without one).
fn primary_key_constraint(t: &TableDef) -> datafusion::common::Constraints {
    let idx: Option<Vec<usize>> = t.primary_key.iter().map(|c| t.column_index(c)).collect();
    match idx {
        Some(i) if !i.is_empty() => datafusion::common::Constraints::new_unverified(vec![
            datafusion::common::Constraint::PrimaryKey(i),
        ]),
        _ => datafusion::common::Constraints::default(),
    }
}

#[async_trait]
impl TableProvider for ShardTableProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn constraints(&self) -> Option<&datafusion::common::Constraints> {
        Some(&self.constraints)
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
        _state: &dyn Session,
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
        let mut select = ShardSql::new();
        select.keyword("SELECT ");
        if indices.is_empty() {
            select.keyword("1");
        }
        for (k, i) in indices.iter().enumerate() {
            if k > 0 {
                select.keyword(", ");
            }
            let c = &self.table.columns[*i];
            if c.ty == SqlType::Real {
                // Read exactly (`crate::sql::widened_float`).
                let mut col = ShardSql::new();
                col.ident(&c.name);
                select.append(crate::sql::widened_float(col));
            } else {
                select.ident(&c.name);
            }
        }
        let conds: Vec<ShardSql> = filters.iter().filter_map(|f| self.filter_sql(f)).collect();
        let mut queries = vec![];
        let placement = self.router.placement();
        // A table the map no longer places (redistributed or dropped since
        // planning) is an error, not an empty scan.
        placement
            .slots(&self.table)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        for p in self.partitions(filters) {
            let mut sql = select.clone();
            sql.keyword(" FROM ")
                .table(&self.table.schema, &self.table.physical_name(p));
            if !conds.is_empty() {
                sql.keyword(" WHERE ").list(&conds, " AND ");
            }
            if let Some(n) = limit {
                sql.keyword(" LIMIT ").int(n as u64);
            }
            if let Some(l) = self.lock {
                sql.keyword(l);
            }
            // The edge: the composed query becomes the text the shard runs.
            let sql = sql
                .into_query()
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            let shard = placement
                .shard_of(&self.table, p)
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            queries.push((shard, sql));
        }
        Ok(Arc::new(super::shard_scan::ShardScanExec::new(
            self.router.clone(),
            projected,
            types,
            queries,
            self.lock.is_some(),
            None,
        )?))
    }
}
