//! Planning: classification of one statement, done once per prepared
//! statement: what kind of work it is, its route plan, the MySQL SQL it
//! renders to, its parameter types and its result columns. One planner per
//! statement kind: queries ([`query`]), DML ([`dml`]), DDL analysis
//! ([`ddl`]); [`prepare`] parses client text and adds the DataFusion
//! description (and logical plan) of distributed statements.

pub mod admin;
pub mod alter;
pub mod cache;
pub mod colnames;
pub mod columns;
pub mod conflict;
pub mod copy;
pub mod cursor;
pub mod ddl;
pub mod df;
pub mod dml;
pub mod foreign_key;
#[cfg(test)]
mod fuzz;
#[cfg(test)]
pub(crate) mod golden;
pub mod names;
pub mod origins;
pub mod pgsyntax;
pub mod pgtypeof;
pub mod prepare;
pub mod query;
pub mod readwrite;
pub mod returning;
pub mod sequence;
pub mod settings;
pub mod views;

pub use df::Scope;
pub use names::{object_parts, quoted_ident, resolve_table};
pub use prepare::{plan_statement, plan_statement_sized, Prepared};

use std::sync::Arc;

use common::{Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{
    DiscardObject, Expr, Ident, ObjectType, Query, Reset, ResetStatement, SetExpr, Statement,
    TransactionAccessMode, TransactionMode,
};
use meta::{Catalog, TableDef};
use pgwire::api::Type;
use shard_router::route::RoutePlan;
use shard_router::sql::normalize_ident;
use shard_router::txn::IsolationLevel;

#[derive(Debug, Clone)]
pub enum PlanKind {
    Empty,
    Begin {
        isolation: Option<IsolationLevel>,
        read_only: bool,
    },
    Commit,
    Rollback,
    Savepoint(String),
    RollbackTo(String),
    Release(String),
    Set {
        name: String,
        value: String,
    },
    /// `RESET name`, `SET name TO DEFAULT`; `RESET ALL` without a name.
    Reset(Option<String>),
    /// `ALTER SYSTEM SET/RESET` (see `exec::system`).
    AlterSystem(crate::alter_system::AlterSystem),
    Show {
        name: String,
    },
    Noop,
    Ddl(Box<Statement>),
    /// `VACUUM` / `ANALYZE` of one table (`None`: every table): InnoDB
    /// purges by itself, so VACUUM does nothing more; ANALYZE (also
    /// `VACUUM ANALYZE`) runs `ANALYZE TABLE` on every partition.
    Maintenance {
        table: Option<datafusion::sql::sqlparser::ast::ObjectName>,
        analyze: bool,
        vacuum: bool,
    },
    Insert(Arc<InsertPlan>),
    Write(Arc<WritePlan>),
    /// UPDATE / DELETE in two steps (`readwrite`).
    ReadWrite(Arc<readwrite::ReadWritePlan>),
    FastSelect(Arc<FastSelect>),
    /// Planned by DataFusion; the lock clause (`FOR UPDATE`) each shard
    /// scan appends, taken off the statement DataFusion sees.
    DataFusion(Arc<Statement>, Option<&'static str>),
    /// `SELECT nextval('s'), ...`: sequence functions without FROM.
    SequenceSelect(Arc<Vec<(String, sequence::SeqCall)>>),
    /// `SELECT tessera_move_partition(...)` and the other administrative
    /// functions (`admin`).
    Admin(Arc<admin::AdminCall>),
    /// COPY FROM STDIN.
    CopyIn(Arc<copy::CopyInPlan>),
    /// `DECLARE name CURSOR [WITH HOLD] FOR query`: the query prepared
    /// with the statement (`None` until `plan_statement` prepares it).
    DeclareCursor {
        name: String,
        hold: bool,
        query: Box<Statement>,
        prepared: Option<Arc<Prepared>>,
    },
    /// `FETCH [FORWARD] [n | ALL | NEXT] [FROM] name` (`count` None: all).
    Fetch {
        name: String,
        count: Option<u64>,
    },
    /// `CLOSE name` / `CLOSE ALL` (`None`).
    CloseCursor(Option<String>),
    /// COPY TO STDOUT: the query DataFusion runs and the output format.
    CopyOut(Arc<Statement>, Arc<copy::CopyFormat>),
}

impl PlanKind {
    /// Statements PostgreSQL still accepts in a failed transaction.
    pub fn allowed_when_failed(&self) -> bool {
        matches!(
            self,
            PlanKind::Commit | PlanKind::Rollback | PlanKind::RollbackTo(_)
        )
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub kind: PlanKind,
    pub param_types: Vec<Type>,
    /// Result columns: name, wire type, and the catalog type when known.
    pub fields: Vec<(String, Type)>,
    pub tag: &'static str,
    pub catalog_version: u64,
    /// Per result column, the table column it is (RowDescription's table
    /// OID, column number and type modifier); empty when unknown.
    pub origins: Vec<Option<origins::Origin>>,
    /// The DataFusion logical plan of a distributed statement or COPY TO,
    /// made once with the plan (without parameter values).
    pub logical: Option<Arc<datafusion::logical_expr::LogicalPlan>>,
    /// The result columns with their RowDescription, made at the first
    /// execution ([`Plan::columns`]).
    pub described: columns::Described,
}

#[derive(Debug)]
pub struct InsertPlan {
    pub table: Arc<TableDef>,
    /// For each table column, the index into each VALUES row, if given.
    pub column_map: Vec<Option<usize>>,
    pub rows: Vec<Vec<Expr>>,
    /// Whether a value calls a sequence function (`nextval('s')`),
    /// evaluated before the rows.
    pub sequence_calls: bool,
    /// What a row whose key exists does (`ON CONFLICT`).
    pub on_conflict: shard_router::route::OnConflict,
    /// `ON CONFLICT DO UPDATE`: the arbiter key's column indexes (two rows
    /// of one statement with one key are 21000, as in PostgreSQL).
    pub conflict_key: Vec<usize>,
    /// INSERT ... SELECT: the query whose rows are inserted (`rows` is
    /// empty), each row's values mapped by `column_map`.
    pub source: Option<Box<datafusion::sql::sqlparser::ast::Query>>,
    /// `source` planned with the statement (`prepare::plan_statement`):
    /// its parameters are the statement's.
    pub source_plan: Option<Arc<Plan>>,
    /// How many target columns the statement names (or the table has).
    pub target_columns: usize,
    /// RETURNING: table column indexes.
    pub returning: Vec<usize>,
    /// RETURNING items other than columns: computed over the stored rows
    /// by a query (`plan::returning`); `returning` is then empty.
    pub returning_exprs: Option<Arc<returning::ReturningExprs>>,
}

impl InsertPlan {
    /// A copy of the plan (to complete it after planning).
    pub fn clone_of(p: &InsertPlan) -> InsertPlan {
        InsertPlan {
            table: p.table.clone(),
            column_map: p.column_map.clone(),
            rows: p.rows.clone(),
            sequence_calls: p.sequence_calls,
            on_conflict: p.on_conflict.clone(),
            conflict_key: p.conflict_key.clone(),
            source: p.source.clone(),
            source_plan: p.source_plan.clone(),
            target_columns: p.target_columns,
            returning: p.returning.clone(),
            returning_exprs: p.returning_exprs.clone(),
        }
    }
}

#[derive(Debug)]
pub struct WritePlan {
    pub table: Arc<TableDef>,
    pub route: RoutePlan,
    /// MySQL SQL per partition and the client parameter order for its `?`s.
    pub sql: Vec<(String, Vec<usize>)>,
    /// `SET c = now()` and the like: values of the parameters after the
    /// client's, from the transaction's clock, typed as their column.
    pub clock_values: Vec<(Expr, SqlType)>,
}

#[derive(Debug)]
pub struct FastSelect {
    pub table: Arc<TableDef>,
    pub route: RoutePlan,
    pub sql: Vec<(String, Vec<usize>)>,
    /// Catalog type of each result column (for decoding shard values).
    pub types: Vec<SqlType>,
    /// How the answers of several partitions combine when the route
    /// resolves to more than one (`None`: the statement's shape cannot be
    /// merged exactly, so it is only planned here when it routes to one).
    pub merge: Option<Merge>,
    /// `FOR UPDATE`: in a transaction the rows are read (and locked) in its
    /// branches, never on a pooled connection.
    pub locking: bool,
    /// How long (microseconds) its last read of several shards took: a
    /// short one is read under a held barrier (`exec::fast`).
    pub read_micros: std::sync::atomic::AtomicU32,
}

pub use shard_router::dist::{LimitValue, Merge, Partial};

pub struct Planner<'a> {
    pub catalog: &'a Catalog,
    pub schema: &'a str,
    pub client_types: &'a [Option<Type>],
}

impl Planner<'_> {
    pub(crate) fn plan_of(&self, kind: PlanKind, tag: &'static str) -> Plan {
        Plan {
            kind,
            param_types: vec![],
            fields: vec![],
            tag,
            catalog_version: self.catalog.version,
            described: Default::default(),
            logical: None,
            origins: vec![],
        }
    }

    /// Plans everything but DataFusion statements, whose planning needs the
    /// session (see `session.rs`); for those it returns `PlanKind::DataFusion`
    /// with no fields yet.
    pub fn plan(&self, stmt: &Statement) -> Result<Plan> {
        if let Some(expanded) = views::expand(self.catalog, self.schema, stmt)? {
            return self.plan_expanded(&expanded);
        }
        self.plan_expanded(stmt)
    }

    /// [`Planner::plan`] of a statement whose views are expanded: each kind
    /// of statement to its planner.
    fn plan_expanded(&self, stmt: &Statement) -> Result<Plan> {
        Ok(match stmt {
            Statement::StartTransaction { modes, .. } => self.plan_begin(modes)?,
            Statement::Commit { .. } => self.plan_of(PlanKind::Commit, "COMMIT"),
            Statement::Rollback {
                savepoint: None, ..
            } => self.plan_of(PlanKind::Rollback, "ROLLBACK"),
            Statement::Rollback {
                savepoint: Some(name),
                ..
            } => self.plan_of(PlanKind::RollbackTo(normalize_ident(name)), "ROLLBACK"),
            Statement::Savepoint { name } => {
                self.plan_of(PlanKind::Savepoint(normalize_ident(name)), "SAVEPOINT")
            }
            Statement::ReleaseSavepoint { name } => {
                self.plan_of(PlanKind::Release(normalize_ident(name)), "RELEASE")
            }
            Statement::Set(set) => self.plan_set(set.clone())?,
            Statement::Reset(r) => self.plan_reset(r),
            s @ Statement::AlterSession { .. } => match crate::alter_system::of(s) {
                Some(a) => self.plan_of(PlanKind::AlterSystem(a), "ALTER SYSTEM"),
                None => return Err(Error::unsupported("ALTER SESSION")),
            },
            Statement::ShowVariable { variable } => self.plan_show(variable),
            Statement::Discard { object_type } => {
                self.plan_of(PlanKind::Noop, discard_tag(object_type))
            }
            Statement::Deallocate { name, .. } => {
                self.plan_of(PlanKind::Noop, deallocate_tag(name))
            }
            Statement::Vacuum(v) => self.plan_of(
                PlanKind::Maintenance {
                    table: v.table_name.clone(),
                    analyze: false,
                    vacuum: true,
                },
                "VACUUM",
            ),
            // `compute_statistics` marks a `VACUUM ANALYZE` (see
            // `dialect::parse_vacuum`).
            Statement::Analyze(a) => self.plan_of(
                PlanKind::Maintenance {
                    table: a.table_name.clone(),
                    analyze: true,
                    vacuum: a.compute_statistics,
                },
                if a.compute_statistics {
                    "VACUUM"
                } else {
                    "ANALYZE"
                },
            ),
            Statement::Query(q) if sequence::calls_sequence_function(q) => {
                self.plan_sequence_select(q)?
            }
            Statement::Query(q) if admin::calls_admin_function(q) => {
                let (column, call) = admin::admin_select(q)?;
                let param_types = call.param_types();
                let mut p = self.plan_of(PlanKind::Admin(Arc::new(call)), "SELECT");
                p.fields = vec![(column, Type::TEXT)];
                p.param_types = param_types;
                p
            }
            s @ (Statement::Update(_) | Statement::Delete(_))
                if sequence::calls_sequence_function(s) =>
            {
                return Err(Error::unsupported("sequence functions in UPDATE or DELETE"))
            }
            s @ (Statement::CreateTable(_)
            | Statement::CreateSequence { .. }
            | Statement::AlterTable(_)
            | Statement::CreateIndex(_)
            | Statement::Drop { .. }
            | Statement::Truncate(_)
            | Statement::CreateSchema { .. }
            | Statement::CreateDatabase { .. }
            | Statement::CreateRole(_)
            | Statement::AlterRole { .. }
            | Statement::Grant(_)
            | Statement::Revoke(_)
            | Statement::Comment { .. }
            | Statement::CreateView(_)) => {
                self.plan_of(PlanKind::Ddl(Box::new(s.clone())), ddl_tag(s))
            }
            // Borrowed: a multi-row INSERT's AST is large, and the plan
            // keeps only its rows.
            Statement::Insert(ins) => self.plan_insert(ins)?,
            // The one rendered statement per partition where it can say
            // it, else the two steps of `readwrite`.
            s @ (Statement::Update(_) | Statement::Delete(_)) => match self.plan_write(s.clone()) {
                Err(Error::Unsupported { .. }) => self.plan_read_write(s)?,
                other => other?,
            },
            // `WITH ... INSERT / UPDATE / DELETE`: the CTEs go to the
            // statement's query (INSERT's source, the two-step read).
            Statement::Query(q)
                if matches!(
                    q.body.as_ref(),
                    SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_)
                ) =>
            {
                self.plan_with_dml(q)?
            }
            Statement::Query(q) => self.plan_query(q.clone())?,
            s @ Statement::Copy { .. } => self.plan_copy(s)?,
            Statement::Declare { stmts } => self.plan_declare(stmts)?,
            Statement::Fetch {
                name,
                direction,
                into: None,
                ..
            } => self.plan_fetch(name, direction)?,
            Statement::Close { cursor } => self.plan_close(cursor),
            s @ Statement::Explain { .. } => {
                self.plan_of(PlanKind::DataFusion(Arc::new(s.clone()), None), "EXPLAIN")
            }
            other => return Err(unsupported_statement(other)),
        })
    }

    /// `BEGIN` / `START TRANSACTION` with its isolation level and access mode.
    fn plan_begin(&self, modes: &[TransactionMode]) -> Result<Plan> {
        let mut isolation = None;
        let mut read_only = false;
        for m in modes {
            match m {
                TransactionMode::IsolationLevel(l) => isolation = Some(isolation_level(l)?),
                TransactionMode::AccessMode(TransactionAccessMode::ReadOnly) => read_only = true,
                TransactionMode::AccessMode(_) => {}
            }
        }
        Ok(self.plan_of(
            PlanKind::Begin {
                isolation,
                read_only,
            },
            "BEGIN",
        ))
    }

    /// `RESET name` / `RESET ALL`.
    fn plan_reset(&self, r: &ResetStatement) -> Plan {
        let name = match &r.reset {
            Reset::ALL => None,
            Reset::ConfigurationParameter(n) => Some(object_parts(n).join(".")),
        };
        self.plan_of(PlanKind::Reset(name), "RESET")
    }

    /// `SHOW name`: one text column named as PostgreSQL names the setting.
    fn plan_show(&self, variable: &[Ident]) -> Plan {
        // `SHOW time zone` and `SHOW transaction isolation level`
        // are words; `SHOW tessera.pushdown` arrives as two names.
        let words: Vec<String> = variable.iter().map(|i| i.value.to_lowercase()).collect();
        let spaced = words.join(" ");
        let name = if matches!(
            spaced.as_str(),
            "time zone" | "transaction isolation level" | "session authorization"
        ) {
            spaced
        } else {
            words.join(".")
        };
        // The result column is the setting's own name, as
        // PostgreSQL spells it (`SHOW time zone` gives TimeZone).
        let column = match name.as_str() {
            "time zone" | "timezone" => "TimeZone".to_string(),
            "datestyle" => "DateStyle".to_string(),
            "intervalstyle" => "IntervalStyle".to_string(),
            "transaction isolation level" => "transaction_isolation".to_string(),
            "session authorization" => "session_authorization".to_string(),
            _ => crate::guc::find(&name).map_or_else(|| name.clone(), |p| p.name.to_string()),
        };
        let mut p = self.plan_of(PlanKind::Show { name }, "SHOW");
        p.fields = vec![(column, Type::TEXT)];
        p
    }

    /// `SELECT nextval('s'), ...`: sequence functions without FROM, each
    /// result column a bigint.
    fn plan_sequence_select(&self, q: &Query) -> Result<Plan> {
        let items = sequence::sequence_select(q)?;
        let fields = items.iter().map(|(n, _)| (n.clone(), Type::INT8)).collect();
        let mut p = self.plan_of(PlanKind::SequenceSelect(Arc::new(items)), "SELECT");
        p.fields = fields;
        Ok(p)
    }

    /// A COPY statement's plan (the COPY planned by [`copy::plan_copy`]).
    fn plan_copy(&self, stmt: &Statement) -> Result<Plan> {
        let kind = match copy::plan_copy(self.catalog, self.schema, stmt)? {
            copy::CopyPlan::In(p) => PlanKind::CopyIn(p),
            copy::CopyPlan::Out(query, format) => PlanKind::CopyOut(query, format),
        };
        Ok(self.plan_of(kind, "COPY"))
    }
}

/// PostgreSQL's tag of a DISCARD.
fn discard_tag(object_type: &DiscardObject) -> &'static str {
    match object_type {
        DiscardObject::ALL => "DISCARD ALL",
        DiscardObject::PLANS => "DISCARD PLANS",
        DiscardObject::SEQUENCES => "DISCARD SEQUENCES",
        DiscardObject::TEMP => "DISCARD TEMP",
    }
}

/// PostgreSQL's tag of a DEALLOCATE: DEALLOCATE ALL or DEALLOCATE.
fn deallocate_tag(name: &Ident) -> &'static str {
    if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
        "DEALLOCATE ALL"
    } else {
        "DEALLOCATE"
    }
}

/// PostgreSQL's tag of a DDL statement that [`Planner::plan_expanded`]
/// plans as [`PlanKind::Ddl`].
fn ddl_tag(s: &Statement) -> &'static str {
    match s {
        Statement::CreateView(_) => "CREATE VIEW",
        Statement::CreateTable(_) => "CREATE TABLE",
        Statement::CreateIndex(_) => "CREATE INDEX",
        Statement::AlterTable(_) => "ALTER TABLE",
        Statement::CreateSequence { .. } => "CREATE SEQUENCE",
        Statement::CreateRole(_) => "CREATE ROLE",
        Statement::AlterRole { .. } => "ALTER ROLE",
        Statement::Grant(_) => "GRANT",
        Statement::Revoke(_) => "REVOKE",
        Statement::Drop { object_type, .. } => match object_type {
            ObjectType::Table => "DROP TABLE",
            ObjectType::Index => "DROP INDEX",
            ObjectType::Schema => "DROP SCHEMA",
            ObjectType::Role => "DROP ROLE",
            ObjectType::Sequence => "DROP SEQUENCE",
            ObjectType::View => "DROP VIEW",
            _ => "DROP",
        },
        Statement::Truncate(_) => "TRUNCATE TABLE",
        Statement::CreateSchema { .. } => "CREATE SCHEMA",
        Statement::Comment { .. } => "COMMENT",
        _ => "CREATE DATABASE",
    }
}

/// The error for a statement Tessera does not plan, named by its first two
/// words.
fn unsupported_statement(stmt: &Statement) -> Error {
    let name = stmt.to_string();
    let word = name
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    Error::unsupported(format!("statement {word}"))
}

pub(crate) use settings::isolation_level;
