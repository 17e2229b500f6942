//! Classification and planning of one statement, done once per prepared
//! statement: what kind of work it is, its route plan, the MySQL SQL it
//! renders to, its parameter types and its result columns.

use std::sync::Arc;

use common::{Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, ObjectName,
    ObjectNamePart, Query, Select, SelectItem, SetExpr, Statement, TableFactor, Value,
};
use meta::{Catalog, Distribution, TableDef};
use pgwire::api::Type;
use shard_router::render::{count_params, is_safe_expr, render};
use shard_router::route::{normalize_ident, placeholder_index, RoutePlan};
use shard_router::txn::IsolationLevel;
use shard_router::typing::{type_assigned_literal, type_literals};

use crate::pgtypes::pg_type;

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
    Show {
        name: String,
    },
    Noop,
    Ddl(Box<Statement>),
    Insert(Arc<InsertPlan>),
    Write(Arc<WritePlan>),
    FastSelect(Arc<FastSelect>),
    /// Planned by DataFusion; the lock clause (`FOR UPDATE`) each shard
    /// scan appends, taken off the statement DataFusion sees.
    DataFusion(Arc<Statement>, Option<&'static str>),
    /// COPY FROM STDIN.
    CopyIn(Arc<crate::copy::CopyInPlan>),
    /// COPY TO STDOUT: the query DataFusion runs and the output format.
    CopyOut(Arc<Statement>, Arc<crate::copy::CopyFormat>),
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
}

#[derive(Debug)]
pub struct InsertPlan {
    pub table: Arc<TableDef>,
    /// For each table column, the index into each VALUES row, if given.
    pub column_map: Vec<Option<usize>>,
    pub rows: Vec<Vec<Expr>>,
    /// RETURNING: table column indexes.
    pub returning: Vec<usize>,
}

#[derive(Debug)]
pub struct WritePlan {
    pub table: Arc<TableDef>,
    pub route: RoutePlan,
    /// MySQL SQL per partition and the client parameter order for its `?`s.
    pub sql: Vec<(String, Vec<usize>)>,
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
}

/// Combining per-partition answers of a fast-path SELECT in the compute
/// node. Every partition runs the same rendered statement (with its own
/// DISTINCT, ORDER BY and LIMIT); the merge redoes those over the union.
#[derive(Debug, Clone)]
pub enum Merge {
    Rows {
        /// Result column index and descending flag of each ORDER BY key.
        order: Vec<(usize, bool)>,
        distinct: bool,
        limit: Option<LimitValue>,
    },
    /// One row of aggregates, no GROUP BY: partials combined per column.
    Aggregates(Vec<AggMerge>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggMerge {
    Count,
    Sum,
    Min,
    Max,
}

#[derive(Debug, Clone, Copy)]
pub enum LimitValue {
    Const(u64),
    Param(usize),
}

pub fn object_parts(name: &ObjectName) -> Vec<String> {
    name.0
        .iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(normalize_ident(i)),
            _ => None,
        })
        .collect()
}

/// Resolves a (possibly schema-qualified) table name.
pub fn resolve_table(
    catalog: &Catalog,
    name: &ObjectName,
    search_schema: &str,
) -> Result<Arc<TableDef>> {
    let parts = object_parts(name);
    let (schema, table) = match parts.as_slice() {
        [t] => (search_schema.to_string(), t.clone()),
        [s, t] => (s.clone(), t.clone()),
        [_, s, t] => (s.clone(), t.clone()),
        _ => {
            return Err(Error::TableNotFound {
                name: name.to_string(),
            })
        }
    };
    catalog
        .table(&schema, &table)
        .cloned()
        .ok_or(Error::TableNotFound { name: table })
}

fn single_table(select: &Select) -> Option<&ObjectName> {
    if select.from.len() != 1 || !select.from[0].joins.is_empty() {
        return None;
    }
    match &select.from[0].relation {
        TableFactor::Table {
            name,
            args: None,
            with_hints,
            ..
        } if with_hints.is_empty() => Some(name),
        _ => None,
    }
}

/// Parameter types implied by comparisons and assignments with columns.
fn infer_params(e: &Expr, table: &TableDef, out: &mut Vec<Option<SqlType>>) {
    let col_ty = |x: &Expr| -> Option<SqlType> {
        let name = match x {
            Expr::Identifier(i) => normalize_ident(i),
            Expr::CompoundIdentifier(p) => normalize_ident(p.last()?),
            _ => return None,
        };
        table.column(&name).ok().map(|c| c.ty)
    };
    let mut set = |p: &Expr, ty: Option<SqlType>| {
        if let (Expr::Value(v), Some(ty)) = (p, ty) {
            if let Value::Placeholder(s) = &v.value {
                if let Some(i) = placeholder_index(s) {
                    if out.len() <= i {
                        out.resize(i + 1, None);
                    }
                    out[i].get_or_insert(ty);
                }
            }
        }
    };
    match e {
        Expr::BinaryOp { left, op, right } => {
            if !matches!(op, BinaryOperator::And | BinaryOperator::Or) {
                set(right, col_ty(left));
                set(left, col_ty(right));
            }
            infer_params(left, table, out);
            infer_params(right, table, out);
        }
        Expr::InList { expr, list, .. } => {
            for i in list {
                set(i, col_ty(expr));
            }
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            set(low, col_ty(expr));
            set(high, col_ty(expr));
        }
        Expr::Nested(x) | Expr::UnaryOp { expr: x, .. } | Expr::IsNull(x) | Expr::IsNotNull(x) => {
            infer_params(x, table, out)
        }
        _ => {}
    }
}

fn param_types(n: usize, inferred: &[Option<SqlType>], client: &[Option<Type>]) -> Vec<Type> {
    (0..n)
        .map(|i| {
            client
                .get(i)
                .cloned()
                .flatten()
                .filter(|t| *t != Type::UNKNOWN)
                .or_else(|| inferred.get(i).cloned().flatten().map(|t| pg_type(&t)))
                .unwrap_or(Type::TEXT)
        })
        .collect()
}

fn per_partition_sql(table: &TableDef, stmt: &Statement) -> Result<Vec<(String, Vec<usize>)>> {
    (0..table.partition_count())
        .map(|p| render(stmt, &table.schema, &table.physical_name(p)))
        .collect()
}

pub struct Planner<'a> {
    pub catalog: &'a Catalog,
    pub schema: &'a str,
    pub client_types: &'a [Option<Type>],
}

impl Planner<'_> {
    fn plan_of(&self, kind: PlanKind, tag: &'static str) -> Plan {
        Plan {
            kind,
            param_types: vec![],
            fields: vec![],
            tag,
            catalog_version: self.catalog.version,
        }
    }

    /// Plans everything but DataFusion statements, whose planning needs the
    /// session (see `session.rs`); for those it returns `PlanKind::DataFusion`
    /// with no fields yet.
    pub fn plan(&self, stmt: &Statement) -> Result<Plan> {
        Ok(match stmt {
            Statement::StartTransaction { modes, .. } => {
                let mut isolation = None;
                let mut read_only = false;
                for m in modes {
                    use datafusion::sql::sqlparser::ast::{TransactionAccessMode, TransactionMode};
                    match m {
                        TransactionMode::IsolationLevel(l) => isolation = Some(isolation_level(l)?),
                        TransactionMode::AccessMode(TransactionAccessMode::ReadOnly) => {
                            read_only = true
                        }
                        TransactionMode::AccessMode(_) => {}
                    }
                }
                self.plan_of(
                    PlanKind::Begin {
                        isolation,
                        read_only,
                    },
                    "BEGIN",
                )
            }
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
            Statement::ShowVariable { variable } => {
                let name = variable
                    .iter()
                    .map(|i| i.value.to_lowercase())
                    .collect::<Vec<_>>()
                    .join(" ");
                let mut p = self.plan_of(PlanKind::Show { name: name.clone() }, "SHOW");
                p.fields = vec![(name, Type::TEXT)];
                p
            }
            Statement::Discard { .. } | Statement::Deallocate { .. } => {
                self.plan_of(PlanKind::Noop, "DISCARD")
            }
            s @ (Statement::CreateTable(_)
            | Statement::CreateIndex(_)
            | Statement::Drop { .. }
            | Statement::Truncate(_)
            | Statement::CreateSchema { .. }
            | Statement::CreateDatabase { .. }
            | Statement::CreateRole(_)
            | Statement::AlterRole { .. }
            | Statement::Grant(_)
            | Statement::Revoke(_)) => {
                let tag = match s {
                    Statement::CreateTable(_) => "CREATE TABLE",
                    Statement::CreateIndex(_) => "CREATE INDEX",
                    Statement::CreateRole(_) => "CREATE ROLE",
                    Statement::AlterRole { .. } => "ALTER ROLE",
                    Statement::Grant(_) => "GRANT",
                    Statement::Revoke(_) => "REVOKE",
                    Statement::Drop { object_type, .. } => match object_type {
                        datafusion::sql::sqlparser::ast::ObjectType::Table => "DROP TABLE",
                        datafusion::sql::sqlparser::ast::ObjectType::Index => "DROP INDEX",
                        datafusion::sql::sqlparser::ast::ObjectType::Schema => "DROP SCHEMA",
                        datafusion::sql::sqlparser::ast::ObjectType::Role => "DROP ROLE",
                        _ => "DROP",
                    },
                    Statement::Truncate(_) => "TRUNCATE TABLE",
                    Statement::CreateSchema { .. } => "CREATE SCHEMA",
                    _ => "CREATE DATABASE",
                };
                self.plan_of(PlanKind::Ddl(Box::new(s.clone())), tag)
            }
            // Borrowed: a multi-row INSERT's AST is large, and the plan
            // keeps only its rows.
            Statement::Insert(ins) => self.plan_insert(ins)?,
            s @ (Statement::Update(_) | Statement::Delete(_)) => self.plan_write(s.clone())?,
            Statement::Query(q) => self.plan_query(q.clone())?,
            Statement::Copy {
                source,
                to,
                target,
                options,
                legacy_options,
                values,
            } => self.plan_copy(
                source.clone(),
                *to,
                target.clone(),
                options,
                legacy_options,
                values,
            )?,
            s @ Statement::Explain { .. } => {
                self.plan_of(PlanKind::DataFusion(Arc::new(s.clone()), None), "EXPLAIN")
            }
            other => {
                let name = other.to_string();
                let word = name
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                return Err(Error::unsupported(format!("statement {word}")));
            }
        })
    }

    fn plan_copy(
        &self,
        source: datafusion::sql::sqlparser::ast::CopySource,
        to: bool,
        target: datafusion::sql::sqlparser::ast::CopyTarget,
        options: &[datafusion::sql::sqlparser::ast::CopyOption],
        legacy: &[datafusion::sql::sqlparser::ast::CopyLegacyOption],
        values: &[Option<String>],
    ) -> Result<Plan> {
        use datafusion::sql::sqlparser::ast::{CopySource, CopyTarget};
        let format = crate::copy::CopyFormat::from_options(options, legacy)?;
        if !values.is_empty() {
            return Err(Error::unsupported("COPY with inline data"));
        }
        match (source, to, target) {
            (
                CopySource::Table {
                    table_name,
                    columns,
                },
                false,
                CopyTarget::Stdin,
            ) => {
                let table = resolve_table(self.catalog, &table_name, self.schema)?;
                let names: Vec<String> = if columns.is_empty() {
                    table.columns.iter().map(|c| c.name.clone()).collect()
                } else {
                    columns.iter().map(normalize_ident).collect()
                };
                let mut column_map = vec![None; table.columns.len()];
                for (j, c) in names.iter().enumerate() {
                    let i = table
                        .column_index(c)
                        .ok_or_else(|| Error::ColumnNotFound { name: c.clone() })?;
                    column_map[i] = Some(j);
                }
                Ok(self.plan_of(
                    PlanKind::CopyIn(Arc::new(crate::copy::CopyInPlan {
                        table,
                        column_map,
                        fields: names.len(),
                        format,
                    })),
                    "COPY",
                ))
            }
            (source, true, CopyTarget::Stdout) => {
                let query = match source {
                    CopySource::Query(q) => Statement::Query(q),
                    CopySource::Table {
                        table_name,
                        columns,
                    } => {
                        let table = resolve_table(self.catalog, &table_name, self.schema)?;
                        let cols: Vec<String> = if columns.is_empty() {
                            table.columns.iter().map(|c| c.name.clone()).collect()
                        } else {
                            columns.iter().map(normalize_ident).collect()
                        };
                        let sql = format!(
                            "SELECT {} FROM \"{}\".\"{}\"",
                            cols.iter()
                                .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
                                .collect::<Vec<_>>()
                                .join(", "),
                            table.schema.replace('"', "\"\""),
                            table.name.replace('"', "\"\"")
                        );
                        datafusion::sql::sqlparser::parser::Parser::parse_sql(
                            &crate::dialect::TesseraDialect,
                            &sql,
                        )
                        .map_err(Error::internal)?
                        .pop()
                        .ok_or_else(|| Error::internal("empty COPY query"))?
                    }
                };
                Ok(self.plan_of(PlanKind::CopyOut(Arc::new(query), Arc::new(format)), "COPY"))
            }
            _ => Err(Error::unsupported(
                "COPY to or from a file on the server (use STDIN/STDOUT)",
            )),
        }
    }

    fn plan_set(&self, set: datafusion::sql::sqlparser::ast::Set) -> Result<Plan> {
        use datafusion::sql::sqlparser::ast::Set as S;
        match set {
            S::SingleAssignment {
                variable, values, ..
            } => {
                let name = object_parts(&variable).join(".");
                let value = values
                    .iter()
                    .map(|v| match v {
                        Expr::Value(v) => match &v.value {
                            Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        Expr::Identifier(i) => i.value.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                Ok(self.plan_of(PlanKind::Set { name, value }, "SET"))
            }
            S::SetTimeZone { value, .. } => Ok(self.plan_of(
                PlanKind::Set {
                    name: "timezone".into(),
                    value: value.to_string().trim_matches('\'').to_string(),
                },
                "SET",
            )),
            S::SetTransaction { modes, session, .. } => {
                let mut value = String::new();
                for m in &modes {
                    if let datafusion::sql::sqlparser::ast::TransactionMode::IsolationLevel(l) = m {
                        value = isolation_level(l)?.name().to_string();
                    }
                }
                let name = if session {
                    "default_transaction_isolation"
                } else {
                    "transaction_isolation"
                };
                Ok(self.plan_of(
                    PlanKind::Set {
                        name: name.into(),
                        value,
                    },
                    "SET",
                ))
            }
            S::SetNames { .. } | S::SetNamesDefault {} => Ok(self.plan_of(PlanKind::Noop, "SET")),
            other => Err(Error::unsupported(format!("{other}"))),
        }
    }

    fn plan_insert(&self, ins: &datafusion::sql::sqlparser::ast::Insert) -> Result<Plan> {
        use datafusion::sql::sqlparser::ast::TableObject;
        let TableObject::TableName(name) = &ins.table else {
            return Err(Error::unsupported("INSERT into a table function"));
        };
        let table = resolve_table(self.catalog, name, self.schema)?;
        if ins.on.is_some() {
            return Err(Error::unsupported("INSERT ... ON CONFLICT"));
        }
        let Some(source) = &ins.source else {
            return Err(Error::unsupported("INSERT without VALUES"));
        };
        let SetExpr::Values(values) = source.body.as_ref() else {
            return Err(Error::unsupported("INSERT ... SELECT"));
        };
        let cols: Vec<String> = if ins.columns.is_empty() {
            table.columns.iter().map(|c| c.name.clone()).collect()
        } else {
            ins.columns
                .iter()
                .map(|c| object_parts(c).last().cloned().unwrap_or_default())
                .collect()
        };
        let mut column_map = vec![None; table.columns.len()];
        for (j, c) in cols.iter().enumerate() {
            let i = table
                .column_index(c)
                .ok_or_else(|| Error::ColumnNotFound { name: c.clone() })?;
            if column_map[i].is_some() {
                return Err(Error::Syntax {
                    message: format!("column \"{c}\" specified more than once"),
                    position: None,
                });
            }
            column_map[i] = Some(j);
        }
        let mut inferred: Vec<Option<SqlType>> = vec![];
        for row in values.rows.iter().map(|r| &r.content) {
            if row.len() > cols.len() {
                return Err(Error::Syntax {
                    message: "INSERT has more expressions than target columns".into(),
                    position: None,
                });
            }
            if row.len() < cols.len() && !ins.columns.is_empty() {
                return Err(Error::Syntax {
                    message: "INSERT has more target columns than expressions".into(),
                    position: None,
                });
            }
            for (j, e) in row.iter().enumerate() {
                if let Expr::Value(v) = e {
                    if let Value::Placeholder(p) = &v.value {
                        if let Some(i) = placeholder_index(p) {
                            if inferred.len() <= i {
                                inferred.resize(i + 1, None);
                            }
                            let ci = table.column_index(&cols[j]).unwrap_or(0);
                            inferred[i] = Some(table.columns[ci].ty);
                        }
                    }
                }
            }
        }
        let returning = match &ins.returning {
            None => vec![],
            Some(items) => returning_columns(&table, items)?,
        };
        let n = count_params(&Statement::Insert(ins.clone()));
        let fields = returning
            .iter()
            .map(|i| {
                (
                    table.columns[*i].name.clone(),
                    pg_type(&table.columns[*i].ty),
                )
            })
            .collect();
        Ok(Plan {
            kind: PlanKind::Insert(Arc::new(InsertPlan {
                table,
                column_map,
                rows: values.rows.iter().map(|r| r.content.clone()).collect(),
                returning,
            })),
            param_types: param_types(n, &inferred, self.client_types),
            fields,
            tag: "INSERT",
            catalog_version: self.catalog.version,
        })
    }

    fn plan_write(&self, stmt: Statement) -> Result<Plan> {
        let (name, selection, is_delete) = match &stmt {
            Statement::Update(u) => {
                if u.from.is_some() || !u.table.joins.is_empty() {
                    return Err(Error::unsupported("UPDATE ... FROM"));
                }
                if u.returning.is_some() {
                    return Err(Error::unsupported("UPDATE ... RETURNING"));
                }
                let TableFactor::Table {
                    name, alias: None, ..
                } = &u.table.relation
                else {
                    return Err(Error::unsupported("UPDATE of this target"));
                };
                (name.clone(), u.selection.clone(), false)
            }
            Statement::Delete(d) => {
                use datafusion::sql::sqlparser::ast::FromTable;
                if d.using.is_some() || d.returning.is_some() || d.limit.is_some() {
                    return Err(Error::unsupported("DELETE ... USING/RETURNING/LIMIT"));
                }
                let from = match &d.from {
                    FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
                };
                if from.len() != 1 || !from[0].joins.is_empty() {
                    return Err(Error::unsupported("DELETE from several tables"));
                }
                let TableFactor::Table {
                    name, alias: None, ..
                } = &from[0].relation
                else {
                    return Err(Error::unsupported("DELETE of this target"));
                };
                (name.clone(), d.selection.clone(), true)
            }
            _ => return Err(Error::internal("not a write")),
        };
        let table = resolve_table(self.catalog, &name, self.schema)?;
        // Literals meeting a column take its type before MariaDB sees them.
        let mut stmt = stmt;
        let mut selection = selection;
        if let Some(sel) = &mut selection {
            check_columns(sel, &table)?;
            type_literals(sel, &table)?;
        }
        match &mut stmt {
            Statement::Update(u) => u.selection.clone_from(&selection),
            Statement::Delete(d) => d.selection.clone_from(&selection),
            _ => {}
        }
        let mut inferred = vec![];
        if let Some(sel) = &selection {
            if !is_safe_expr(sel) {
                return Err(Error::unsupported(format!(
                    "this WHERE clause in {} on a distributed table (only comparisons, AND/OR/NOT, IN, BETWEEN, IS NULL and + - * are supported yet)",
                    if is_delete { "DELETE" } else { "UPDATE" }
                )));
            }
            infer_params(sel, &table, &mut inferred);
        }
        if let Statement::Update(u) = &mut stmt {
            let keys = match &table.distribution {
                Distribution::Hash { columns, .. } => columns.clone(),
                _ => vec![],
            };
            for a in &mut u.assignments {
                let col = match &a.target {
                    datafusion::sql::sqlparser::ast::AssignmentTarget::ColumnName(n) => {
                        object_parts(n).last().cloned().unwrap_or_default()
                    }
                    _ => return Err(Error::unsupported("UPDATE of a column tuple")),
                };
                let cdef = table.column(&col)?;
                if keys.contains(&col) {
                    return Err(Error::unsupported(format!(
                        "UPDATE of partition key column \"{col}\" (delete and re-insert the row instead)"
                    )));
                }
                if !is_safe_expr(&a.value) {
                    return Err(Error::unsupported(format!(
                        "the expression assigned to \"{col}\" in UPDATE on a distributed table"
                    )));
                }
                check_columns(&a.value, &table)?;
                type_assigned_literal(&mut a.value, &cdef.ty)?;
                if let Expr::Value(v) = &a.value {
                    if let Value::Placeholder(p) = &v.value {
                        if let Some(i) = placeholder_index(p) {
                            if inferred.len() <= i {
                                inferred.resize(i + 1, None);
                            }
                            inferred[i] = Some(cdef.ty);
                        }
                    }
                }
                infer_params(&a.value, &table, &mut inferred);
            }
        }
        let route = RoutePlan::from_where(&table, selection.as_ref());
        let sql = per_partition_sql(&table, &stmt)?;
        let n = sql
            .first()
            .map(|(_, o)| o.iter().map(|i| i + 1).max().unwrap_or(0))
            .unwrap_or(0);
        Ok(Plan {
            kind: PlanKind::Write(Arc::new(WritePlan { table, route, sql })),
            param_types: param_types(n, &inferred, self.client_types),
            fields: vec![],
            tag: if is_delete { "DELETE" } else { "UPDATE" },
            catalog_version: self.catalog.version,
        })
    }

    fn plan_query(&self, mut q: Box<Query>) -> Result<Plan> {
        if let Some(fast) = self.try_fast_select(&q)? {
            return Ok(fast);
        }
        let lock = lock_clause(&q)?;
        q.locks.clear();
        Ok(self.plan_of(
            PlanKind::DataFusion(Arc::new(Statement::Query(q)), lock),
            "SELECT",
        ))
    }

    /// A SELECT that one partition can answer exactly as PostgreSQL would.
    fn try_fast_select(&self, q: &Query) -> Result<Option<Plan>> {
        if q.with.is_some() || q.fetch.is_some() {
            return Ok(None);
        }
        // FOR UPDATE [NOWAIT | SKIP LOCKED] renders as is for MariaDB.
        if q.locks.len() > 1
            || q.locks.iter().any(|l| {
                l.of.is_some() || l.lock_type != datafusion::sql::sqlparser::ast::LockType::Update
            })
        {
            return Ok(None);
        }
        let SetExpr::Select(select) = q.body.as_ref() else {
            return Ok(None);
        };
        let Some(name) = single_table(select) else {
            return Ok(None);
        };
        let Ok(table) = resolve_table(self.catalog, name, self.schema) else {
            return Ok(None);
        };
        if select.having.is_some()
            || !matches!(&select.group_by, GroupByExpr::Expressions(g, _) if g.is_empty())
            || select.top.is_some()
            || select.into.is_some()
            || !select.lateral_views.is_empty()
            || select.qualify.is_some()
            || select
                .distinct
                .as_ref()
                .is_some_and(|d| !matches!(d, datafusion::sql::sqlparser::ast::Distinct::Distinct))
        {
            return Ok(None);
        }
        let mut selection = select.selection.clone();
        if let Some(sel) = &mut selection {
            if !is_safe_expr(sel) || check_columns(sel, &table).is_err() {
                return Ok(None);
            }
            // Literals meeting a column take its type before MariaDB sees
            // them (`id = 'abc'` fails here with 22P02, as in PostgreSQL).
            type_literals(sel, &table)?;
        }
        let route = RoutePlan::from_where(&table, selection.as_ref());
        // Projection: columns, *, and simple aggregates over columns.
        let mut fields = vec![];
        let mut types = vec![];
        // Per result column: the table column it is, or the aggregate.
        let mut sources: Vec<Option<String>> = vec![];
        let mut aggs: Vec<Option<AggMerge>> = vec![];
        for item in &select.projection {
            match item {
                SelectItem::Wildcard(_) => {
                    for c in &table.columns {
                        fields.push((c.name.clone(), pg_type(&c.ty)));
                        types.push(c.ty);
                        sources.push(Some(c.name.clone()));
                        aggs.push(None);
                    }
                }
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    let alias = match item {
                        SelectItem::ExprWithAlias { alias, .. } => Some(normalize_ident(alias)),
                        _ => None,
                    };
                    let Some((name, ty)) = fast_item_type(e, &table) else {
                        return Ok(None);
                    };
                    let agg = match e {
                        Expr::Function(_) => Some(match name.as_str() {
                            "count" => AggMerge::Count,
                            "sum" => AggMerge::Sum,
                            "min" => AggMerge::Min,
                            _ => AggMerge::Max,
                        }),
                        _ => None,
                    };
                    sources.push(agg.is_none().then(|| name.clone()));
                    aggs.push(agg);
                    types.push(ty);
                    fields.push((alias.unwrap_or(name), pg_type(&ty)));
                }
                _ => return Ok(None),
            }
        }
        let has_agg = select.projection.iter().any(|i| {
            matches!(
                i,
                SelectItem::UnnamedExpr(Expr::Function(_))
                    | SelectItem::ExprWithAlias {
                        expr: Expr::Function(_),
                        ..
                    }
            )
        });
        if has_agg
            && select.projection.iter().any(|i| {
                matches!(
                    i,
                    SelectItem::UnnamedExpr(Expr::Identifier(_)) | SelectItem::Wildcard(_)
                )
            })
        {
            return Ok(None);
        }
        // ORDER BY only on NOT NULL columns (MariaDB and PostgreSQL place
        // NULLs differently) and without NULLS FIRST/LAST.
        if let Some(ob) = &q.order_by {
            use datafusion::sql::sqlparser::ast::OrderByKind;
            let OrderByKind::Expressions(exprs) = &ob.kind else {
                return Ok(None);
            };
            for o in exprs {
                let Expr::Identifier(i) = &o.expr else {
                    return Ok(None);
                };
                match table.column(&normalize_ident(i)) {
                    Ok(c) if c.not_null && o.options.nulls_first.is_none() => {}
                    _ => return Ok(None),
                }
            }
        }
        if let Some(limit) = &q.limit_clause {
            use datafusion::sql::sqlparser::ast::LimitClause;
            match limit {
                LimitClause::LimitOffset {
                    limit,
                    offset,
                    limit_by,
                } => {
                    if !limit_by.is_empty() {
                        return Ok(None);
                    }
                    let ok = |e: &Expr| matches!(e, Expr::Value(v) if matches!(v.value, Value::Number(..) | Value::Placeholder(_)));
                    if limit.as_ref().is_some_and(|l| !ok(l))
                        || offset.as_ref().is_some_and(|o| !ok(&o.value))
                    {
                        return Ok(None);
                    }
                }
                _ => return Ok(None),
            }
        }
        let merge = merge_of(q, select, &sources, &aggs);
        let single = match &route {
            RoutePlan::Keys(k) => k.iter().all(|v| v.len() == 1),
            RoutePlan::Single | RoutePlan::Mirror => true,
            RoutePlan::Scatter => false,
        };
        if !single && merge.is_none() {
            return Ok(None);
        }
        let mut typed = q.clone();
        if let SetExpr::Select(s) = typed.body.as_mut() {
            s.selection = selection;
        }
        let stmt = Statement::Query(Box::new(typed));
        // A shape the shard renderer does not know goes to DataFusion.
        let sql = match per_partition_sql(&table, &stmt) {
            Ok(sql) => sql,
            Err(Error::Unsupported { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut inferred = vec![];
        if let Some(sel) = &select.selection {
            infer_params(sel, &table, &mut inferred);
        }
        let n = sql
            .first()
            .map(|(_, o)| o.iter().map(|i| i + 1).max().unwrap_or(0))
            .unwrap_or(0);
        let mut ptypes = param_types(n, &inferred, self.client_types);
        // LIMIT/OFFSET parameters are bigint.
        for (i, t) in ptypes.iter_mut().enumerate() {
            if inferred.get(i).cloned().flatten().is_none() && *t == Type::TEXT {
                if let Some(limit) = &q.limit_clause {
                    if limit.to_string().contains(&format!("${}", i + 1)) {
                        *t = Type::INT8;
                    }
                }
            }
        }
        Ok(Some(Plan {
            kind: PlanKind::FastSelect(Arc::new(FastSelect {
                table,
                route,
                sql,
                types,
                merge,
                locking: !q.locks.is_empty(),
            })),
            param_types: ptypes,
            fields,
            tag: "SELECT",
            catalog_version: self.catalog.version,
        }))
    }
}

/// How the answers of several partitions to this SELECT combine, if they
/// can be combined exactly: plain columns (with DISTINCT, ORDER BY on result
/// columns and LIMIT without OFFSET redone over the union), or aggregates
/// alone without GROUP BY, DISTINCT, ORDER BY or LIMIT.
fn merge_of(
    q: &Query,
    select: &Select,
    sources: &[Option<String>],
    aggs: &[Option<AggMerge>],
) -> Option<Merge> {
    use datafusion::sql::sqlparser::ast::{LimitClause, OrderByKind};
    let distinct = select.distinct.is_some();
    let limit = match &q.limit_clause {
        None => None,
        Some(LimitClause::LimitOffset {
            limit,
            offset: None,
            limit_by,
        }) if limit_by.is_empty() => match limit {
            None => None,
            Some(Expr::Value(v)) => Some(match &v.value {
                Value::Number(n, _) => LimitValue::Const(n.parse().ok()?),
                Value::Placeholder(p) => LimitValue::Param(placeholder_index(p)?),
                _ => return None,
            }),
            Some(_) => return None,
        },
        Some(_) => return None,
    };
    if aggs.iter().all(|a| a.is_some()) {
        if distinct || q.order_by.is_some() || q.limit_clause.is_some() {
            return None;
        }
        return Some(Merge::Aggregates(aggs.iter().flatten().copied().collect()));
    }
    if aggs.iter().any(|a| a.is_some()) {
        return None;
    }
    let mut order = vec![];
    if let Some(ob) = &q.order_by {
        let OrderByKind::Expressions(exprs) = &ob.kind else {
            return None;
        };
        for o in exprs {
            let Expr::Identifier(i) = &o.expr else {
                return None;
            };
            let name = normalize_ident(i);
            let idx = sources.iter().position(|s| s.as_deref() == Some(&name))?;
            order.push((idx, o.options.asc == Some(false)));
        }
    }
    Some(Merge::Rows {
        order,
        distinct,
        limit,
    })
}

/// Result name and type of a projection item on the fast path.
fn fast_item_type(e: &Expr, table: &TableDef) -> Option<(String, SqlType)> {
    match e {
        Expr::Identifier(i) => {
            let c = table.column(&normalize_ident(i)).ok()?;
            Some((c.name.clone(), c.ty))
        }
        Expr::CompoundIdentifier(p) => {
            let c = table.column(&normalize_ident(p.last()?)).ok()?;
            Some((c.name.clone(), c.ty))
        }
        Expr::Function(f) => {
            let fname = object_parts(&f.name).join(".");
            if f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
                return None;
            }
            let FunctionArguments::List(list) = &f.args else {
                return None;
            };
            if list.duplicate_treatment.is_some()
                || list.args.len() != 1
                || !list.clauses.is_empty()
            {
                return None;
            }
            let arg_ty = match &list.args[0] {
                FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if fname == "count" => None,
                FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(i))) => {
                    Some(table.column(&normalize_ident(i)).ok()?.ty)
                }
                _ => return None,
            };
            let ty = match (fname.as_str(), arg_ty) {
                ("count", _) => SqlType::BigInt,
                ("sum", Some(SqlType::SmallInt | SqlType::Integer)) => SqlType::BigInt,
                ("sum", Some(SqlType::BigInt)) => SqlType::Numeric {
                    precision: 38,
                    scale: 0,
                },
                ("sum", Some(t @ SqlType::Numeric { .. })) => t,
                ("min" | "max", Some(t)) => t,
                _ => return None,
            };
            Some((fname, ty))
        }
        _ => None,
    }
}

/// Every column an expression names must exist (42703 otherwise).
fn check_columns(e: &Expr, table: &TableDef) -> Result<()> {
    let mut err = None;
    let _ = datafusion::sql::sqlparser::ast::visit_expressions(e, |x| {
        let name = match x {
            Expr::Identifier(i) => Some(normalize_ident(i)),
            Expr::CompoundIdentifier(p) => p.last().map(normalize_ident),
            _ => None,
        };
        if let Some(n) = name {
            if table.column_index(&n).is_none() {
                err = Some(Error::ColumnNotFound { name: n });
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn returning_columns(table: &TableDef, items: &[SelectItem]) -> Result<Vec<usize>> {
    let mut out = vec![];
    for item in items {
        match item {
            SelectItem::Wildcard(_) => out.extend(0..table.columns.len()),
            SelectItem::UnnamedExpr(Expr::Identifier(i)) => {
                let n = normalize_ident(i);
                out.push(
                    table
                        .column_index(&n)
                        .ok_or(Error::ColumnNotFound { name: n })?,
                );
            }
            _ => {
                return Err(Error::unsupported(
                    "RETURNING expressions other than columns",
                ))
            }
        }
    }
    Ok(out)
}

/// The MariaDB lock clause for a query's `FOR UPDATE` / `FOR SHARE`.
fn lock_clause(q: &Query) -> Result<Option<&'static str>> {
    use datafusion::sql::sqlparser::ast::{LockType, NonBlock};
    match q.locks.as_slice() {
        [] => Ok(None),
        [l] if l.of.is_none() => Ok(Some(match (l.lock_type, l.nonblock) {
            (LockType::Update, None) => " FOR UPDATE",
            (LockType::Update, Some(NonBlock::Nowait)) => " FOR UPDATE NOWAIT",
            (LockType::Update, Some(NonBlock::SkipLocked)) => " FOR UPDATE SKIP LOCKED",
            (LockType::Share, None) => " LOCK IN SHARE MODE",
            (LockType::Share, Some(_)) => {
                return Err(Error::unsupported("FOR SHARE NOWAIT / SKIP LOCKED"))
            }
        })),
        _ => Err(Error::unsupported(
            "FOR UPDATE OF / several locking clauses",
        )),
    }
}

fn isolation_level(
    l: &datafusion::sql::sqlparser::ast::TransactionIsolationLevel,
) -> Result<IsolationLevel> {
    use datafusion::sql::sqlparser::ast::TransactionIsolationLevel as L;
    Ok(match l {
        L::ReadUncommitted => IsolationLevel::ReadUncommitted,
        L::ReadCommitted => IsolationLevel::ReadCommitted,
        L::RepeatableRead => IsolationLevel::RepeatableRead,
        L::Serializable => IsolationLevel::Serializable,
        _ => return Err(Error::unsupported("this isolation level")),
    })
}
