//! `pg_catalog` and `information_schema`, served by every compute node
//! from its catalog snapshot (never from a shard), so psql's `\d`, JDBC's
//! `DatabaseMetaData`, SQLAlchemy's reflection and the drivers' type
//! lookups see a PostgreSQL. A statement's catalog tables and catalog
//! functions answer from the one snapshot its DataFusion context was made
//! with, so they agree with each other and with the user tables it reads.
//!
//! * [`batch`]: Arrow batches of catalog rows;
//! * [`oids`]: the OIDs Tessera's objects get, the `pg_catalog` tables
//!   there are, the built-in types;
//! * `index`: a table's indexes as the catalogs show them; `defs`:
//!   definitions as PostgreSQL prints them (quoted names, `CREATE INDEX`,
//!   a column's default);
//! * [`tables`]: the `pg_catalog` tables, each a column list and a
//!   function making its rows (the relation catalogs' in `relations` and
//!   `attributes`, the always-empty ones' in `empty`); [`info`]:
//!   `information_schema`;
//! * [`funcs`]: `format_type`, `pg_get_indexdef`, `pg_table_is_visible`,
//!   the `reg*` conversions and the other functions catalog queries call.
//!
//! The files use each other one way: `batch`, `oids`, `index` and `defs`
//! at the bottom; `relations`, `attributes`, `typefacts` and `empty`
//! above them; `tables`, `info` and `funcs` on top, used by this file only.
//!
//! Unqualified names find `pg_catalog` tables after the session's schema
//! (PostgreSQL searches `pg_catalog` first; a user table named like a
//! catalog is the only case where the two differ).

mod attributes;
pub mod batch;
mod defs;
mod empty;
pub mod funcs;
mod index;
pub mod info;
mod moves;
pub mod oids;
mod relations;
pub mod tables;
mod typefacts;
mod udf;

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use meta::{Catalog, Role, SequenceDef, TableDef};

/// `x::regclass` of text (its OID) and of an OID (its name), likewise
/// `regtype`: the functions `plan::pgsyntax` rewrites the casts into.
pub const REGCLASS: &str = "tessera_regclass";
pub const REGTYPE: &str = "tessera_regtype";
/// `information_schema._pg_expandarray(a)`'s rows, as a list.
pub const EXPANDARRAY: &str = "tessera_expandarray";
/// A text array's elements with a prefix (`ARRAY(SELECT 'p' || x FROM
/// unnest(a) x)`).
pub const PREFIX_ELEMENTS: &str = "tessera_prefix_elements";
/// The subscripts of an array's first dimension, as a list.
pub const SUBSCRIPTS: &str = "tessera_subscripts";
pub const REGNAMESPACE_OUT: &str = "tessera_regnamespace_out";
pub const REGROLE_OUT: &str = "tessera_regrole_out";

/// The catalog as one statement sees it.
pub struct Snapshot {
    pub catalog: Arc<Catalog>,
    /// The schema unqualified names resolve in.
    pub schema: String,
    pub user: String,
    pub database: String,
    /// The session's backend pid.
    pub pid: i32,
    /// Meta, for the views read when scanned (`tessera_moves`); `None` in
    /// unit tests.
    pub router: Option<Arc<shard_router::Router>>,
}

impl Snapshot {
    /// Every schema, the system ones included.
    pub fn schemas(&self) -> Vec<String> {
        let mut v: Vec<String> = ["pg_catalog", "information_schema"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(self.catalog.schemas.iter().cloned());
        v
    }

    /// User tables, by schema and name.
    pub fn tables(&self) -> impl Iterator<Item = &TableDef> {
        let mut v: Vec<&TableDef> = self.catalog.tables.values().map(|t| t.as_ref()).collect();
        v.sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
        v.into_iter()
    }

    /// The catalog sequence feeding a column (`DEFAULT nextval`, identity).
    pub fn sequence_of_column(&self, c: &meta::ColumnDef) -> Option<&SequenceDef> {
        let q = c
            .sequence
            .as_ref()?
            .strip_prefix(meta::SEQUENCE_SOURCE_PREFIX)?;
        let (schema, name) = q.split_once('.')?;
        self.catalog.sequence(schema, name).map(|s| s.as_ref())
    }

    /// Views, by schema and name.
    pub fn views(&self) -> Vec<&meta::ViewDef> {
        let mut v: Vec<&meta::ViewDef> = self.catalog.views.values().map(|v| v.as_ref()).collect();
        v.sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
        v
    }

    pub fn sequences(&self) -> Vec<&SequenceDef> {
        let mut v: Vec<&SequenceDef> = self
            .catalog
            .sequences
            .values()
            .map(|s| s.as_ref())
            .collect();
        v.sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
        v
    }

    pub fn roles(&self) -> Vec<(String, Role)> {
        let mut v: Vec<(String, Role)> = self
            .catalog
            .roles
            .iter()
            .map(|(n, r)| (n.clone(), r.clone()))
            .collect();
        if !self.catalog.roles.contains_key(&self.user) {
            v.push((
                self.user.clone(),
                Role {
                    superuser: true,
                    login: true,
                },
            ));
        }
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    pub fn owner_name<'a>(&'a self, t: &'a TableDef) -> &'a str {
        self.catalog
            .owners
            .get(&t.id)
            .map(|s| s.as_str())
            .unwrap_or(&self.user)
    }

    /// An owner's role OID (`None`: the session's user).
    pub fn owner_oid(&self, owner: Option<&str>) -> batch::V {
        batch::V::I(oids::role(owner.unwrap_or(&self.user)))
    }

    fn mem_table(&self, t: Option<batch::Table>) -> Result<Option<Arc<dyn TableProvider>>> {
        let Some((cols, rows)) = t else {
            return Ok(None);
        };
        let b = batch::batch(cols, &rows)?;
        Ok(Some(Arc::new(MemTable::try_new(
            b.schema(),
            vec![vec![b]],
        )?)))
    }
}

/// The session's catalog with `pg_catalog` and `information_schema`
/// added, and `pg_catalog`'s tables found by unqualified names too.
#[derive(Debug)]
pub struct WithSystemSchemas {
    pub inner: Arc<dyn CatalogProvider>,
    pub snapshot: Arc<Snapshot>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot(v{})", self.catalog.version)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum System {
    PgCatalog,
    InformationSchema,
}

#[derive(Debug)]
struct SystemSchema {
    which: System,
    snapshot: Arc<Snapshot>,
}

#[async_trait]
impl SchemaProvider for SystemSchema {
    fn table_names(&self) -> Vec<String> {
        let names = match self.which {
            System::PgCatalog => oids::CATALOG_TABLES,
            System::InformationSchema => info::NAMES,
        };
        names.iter().map(|s| s.to_string()).collect()
    }
    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        // Sessions and their settings change between a statement's
        // planning and its run.
        let live = ["pg_stat_activity", "pg_settings"];
        if let Some(live) = live
            .into_iter()
            .find(|l| *l == name && self.which == System::PgCatalog)
        {
            let schema = self
                .snapshot
                .table(name)
                .map(|(cols, _)| batch::schema(cols));
            return Ok(schema.map(|schema| {
                Arc::new(LiveTable {
                    schema,
                    snapshot: self.snapshot.clone(),
                    name: live,
                }) as Arc<dyn TableProvider>
            }));
        }
        if name == moves::NAME && self.which == System::PgCatalog {
            return Ok(Some(Arc::new(moves::MovesTable {
                schema: batch::schema(moves::TESSERA_MOVES),
                snapshot: self.snapshot.clone(),
            })));
        }
        let t = match self.which {
            System::PgCatalog => self.snapshot.table(name),
            System::InformationSchema => self.snapshot.info_table(name),
        };
        self.snapshot.mem_table(t)
    }
    fn table_exist(&self, name: &str) -> bool {
        self.table_names().iter().any(|n| n == name)
    }
}

/// A user schema whose unknown names are looked up in `pg_catalog`.
#[derive(Debug)]
struct WithCatalogFallback {
    inner: Arc<dyn SchemaProvider>,
    system: SystemSchema,
}

#[async_trait]
impl SchemaProvider for WithCatalogFallback {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }
    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        match self.inner.table(name).await? {
            Some(t) => Ok(Some(t)),
            None => self.system.table(name).await,
        }
    }
    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name) || self.system.table_exist(name)
    }
}

impl CatalogProvider for WithSystemSchemas {
    fn schema_names(&self) -> Vec<String> {
        self.snapshot.schemas()
    }
    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let system = |which| SystemSchema {
            which,
            snapshot: self.snapshot.clone(),
        };
        match name {
            "pg_catalog" => Some(Arc::new(system(System::PgCatalog))),
            "information_schema" => Some(Arc::new(system(System::InformationSchema))),
            _ => match self.inner.schema(name) {
                Some(inner) => Some(Arc::new(WithCatalogFallback {
                    inner,
                    system: system(System::PgCatalog),
                })),
                // The session's schema before it is created.
                None if name == self.snapshot.schema => Some(Arc::new(system(System::PgCatalog))),
                None => None,
            },
        }
    }
}

/// A catalog table made when it is scanned, not when it is planned.
#[derive(Debug)]
struct LiveTable {
    schema: datafusion::arrow::datatypes::SchemaRef,
    snapshot: Arc<Snapshot>,
    name: &'static str,
}

#[async_trait]
impl TableProvider for LiveTable {
    fn schema(&self) -> datafusion::arrow::datatypes::SchemaRef {
        self.schema.clone()
    }
    fn table_type(&self) -> datafusion::datasource::TableType {
        datafusion::datasource::TableType::View
    }
    async fn scan(
        &self,
        state: &dyn datafusion::catalog::Session,
        projection: Option<&Vec<usize>>,
        filters: &[datafusion::logical_expr::Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        let Some((cols, rows)) = self.snapshot.table(self.name) else {
            return Err(datafusion::error::DataFusionError::Plan(format!(
                "no catalog table {}",
                self.name
            )));
        };
        let b = batch::batch(cols, &rows)?;
        MemTable::try_new(b.schema(), vec![vec![b]])?
            .scan(state, projection, filters, limit)
            .await
    }
}

/// Whether a (lower-case) table name is one of `pg_catalog`'s.
pub fn is_catalog_table(name: &str) -> bool {
    oids::CATALOG_TABLES.contains(&name)
}

#[cfg(test)]
mod dump_tests;
