//! PostgreSQL's privilege checks, made by the compute node before a
//! statement runs (42501), against the roles and grants of the cached
//! catalog (kept in meta, changed through the DDL lock and log like any
//! catalog change).
//!
//! What is modelled: superusers may do anything; other roles need
//! `USAGE` on a table's schema (everyone has it on `public`, as in
//! PostgreSQL 15) and `SELECT` on every table a query reads, `INSERT` /
//! `UPDATE` / `DELETE` / `TRUNCATE` on the table a statement changes
//! (`UPDATE` and `DELETE` with a `WHERE` also `SELECT`), `CREATE` on the
//! schema to create a table there; the owner of a table (the role that
//! created it) has every privilege on it and alone (with superusers) may
//! drop it or index it. Schemas, roles and grants are managed by
//! superusers only. Not modelled: role membership and inheritance, column
//! privileges, `WITH GRANT OPTION`, default privileges, database-level
//! `CONNECT`/`CREATE`.

use std::ops::ControlFlow;

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    visit_relations, CopySource, Delete, FromTable, Insert, ObjectName, ObjectType, Statement,
    TableFactor, TableObject, Update,
};
use meta::{Catalog, TableDef};

use crate::plan::{object_parts, resolve_table};

fn denied(what: String) -> Error {
    Error::Sql {
        state: SqlState::INSUFFICIENT_PRIVILEGE,
        message: format!("permission denied for {what}"),
    }
}

/// Whether `user` is a superuser (unknown roles are not).
pub fn is_superuser(catalog: &Catalog, user: &str) -> bool {
    catalog.roles.get(user).is_some_and(|r| r.superuser)
}

fn owns(catalog: &Catalog, user: &str, t: &TableDef) -> bool {
    catalog.owners.get(&t.id).is_some_and(|o| o == user)
}

/// Whether `user` may VACUUM or ANALYZE `t`: its owner or a superuser.
pub fn may_maintain(catalog: &Catalog, user: &str, t: &TableDef) -> bool {
    is_superuser(catalog, user) || owns(catalog, user, t)
}

/// Ownership of `t`, which indexing and dropping it need.
fn check_owner(catalog: &Catalog, user: &str, t: &TableDef, what: &str) -> Result<()> {
    if owns(catalog, user, t) {
        Ok(())
    } else {
        Err(Error::Sql {
            state: SqlState::INSUFFICIENT_PRIVILEGE,
            message: format!("must be owner of {what}"),
        })
    }
}

/// The privilege a write needs on its table, plus `SELECT` when its
/// `WHERE` reads the table's columns.
fn check_write(
    catalog: &Catalog,
    user: &str,
    t: &TableDef,
    privilege: &str,
    reads: bool,
) -> Result<()> {
    check_table(catalog, user, t, privilege)?;
    if reads {
        check_table(catalog, user, t, "SELECT")?;
    }
    Ok(())
}

fn check_usage(catalog: &Catalog, user: &str, schema: &str) -> Result<()> {
    if schema == "public" || catalog.granted(user, "schema", schema, "", "USAGE") {
        Ok(())
    } else {
        Err(denied(format!("schema {schema}")))
    }
}

fn check_table(catalog: &Catalog, user: &str, t: &TableDef, privilege: &str) -> Result<()> {
    if owns(catalog, user, t) {
        return Ok(());
    }
    check_usage(catalog, user, &t.schema)?;
    if catalog.granted(user, "table", &t.schema, &t.name, privilege) {
        Ok(())
    } else {
        Err(denied(format!("table {}", t.name)))
    }
}

/// The table `name` names, if it is one of the catalog's (names that are
/// not are left to the planner: 42P01, or a CTE's name).
fn table_of(
    catalog: &Catalog,
    name: &ObjectName,
    schema: &str,
) -> Option<std::sync::Arc<TableDef>> {
    resolve_table(catalog, name, schema).ok()
}

/// `SELECT` on every catalog table a statement names.
fn check_reads(catalog: &Catalog, user: &str, stmt: &Statement, schema: &str) -> Result<()> {
    check_reads_besides(catalog, user, stmt, schema, None)
}

/// `SELECT` on every catalog table a statement names other than the
/// table it writes (whose privileges its write checks): UPDATE ... FROM,
/// DELETE ... USING and subqueries read them.
fn check_reads_besides(
    catalog: &Catalog,
    user: &str,
    stmt: &Statement,
    schema: &str,
    target: Option<common::TableId>,
) -> Result<()> {
    let mut err = None;
    let _ = visit_relations(stmt, |name| {
        if target.is_some() && table_of(catalog, name, schema).map(|t| t.id) == target {
            return ControlFlow::Continue(());
        }
        // A view: SELECT granted on the view itself (its tables are read
        // with its owner's, a superuser's, privileges, as in PostgreSQL).
        if let Some(v) = crate::plan::views::view_named(catalog, name, schema) {
            if !catalog.granted(user, "table", &v.schema, &v.name, "SELECT") {
                err = Some(denied(format!("view {}", v.name)));
                return ControlFlow::Break(());
            }
        }
        if let Some(t) = table_of(catalog, name, schema) {
            if let Err(e) = check_table(catalog, user, &t, "SELECT") {
                err = Some(e);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    err.map_or(Ok(()), Err)
}

/// Checks that `user` may run `stmt` (with unqualified names in `schema`).
pub fn check(catalog: &Catalog, user: &str, stmt: &Statement, schema: &str) -> Result<()> {
    if is_superuser(catalog, user) {
        return Ok(());
    }
    let superuser_only = |what: &str| Err(denied(format!("{what} (superusers only)")));
    match stmt {
        // `WITH ... INSERT / UPDATE / DELETE`: the write's privileges, and
        // SELECT on what the whole statement reads.
        Statement::Query(q) => {
            use datafusion::sql::sqlparser::ast::SetExpr;
            if let SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) = q.body.as_ref() {
                check(catalog, user, s, schema)?;
            }
            check_reads(catalog, user, stmt, schema)
        }
        Statement::Explain { .. } => check_reads(catalog, user, stmt, schema),
        Statement::Insert(ins) => check_insert(catalog, user, ins, schema),
        Statement::Update(u) => check_update(catalog, user, stmt, u, schema),
        Statement::Delete(d) => check_delete(catalog, user, stmt, d, schema),
        Statement::Truncate(t) => {
            for target in &t.table_names {
                if let Some(t) = table_of(catalog, &target.name, schema) {
                    check_table(catalog, user, &t, "TRUNCATE")?;
                }
            }
            Ok(())
        }
        Statement::Copy { source, to, .. } => check_copy(catalog, user, source, *to, schema),
        Statement::CreateTable(ct) => check_create_table(catalog, user, &ct.name, schema),
        Statement::AlterTable(at) => check_table_owner(catalog, user, &at.name, schema),
        Statement::CreateIndex(ci) => check_table_owner(catalog, user, &ci.table_name, schema),
        Statement::Drop {
            object_type: ObjectType::Table,
            names,
            ..
        } => {
            for n in names {
                check_table_owner(catalog, user, n, schema)?;
            }
            Ok(())
        }
        Statement::Drop {
            object_type: ObjectType::Index,
            names,
            ..
        } => check_drop_index(catalog, user, names, schema),
        Statement::Drop { .. } => superuser_only("DROP"),
        Statement::CreateView(_) => superuser_only("CREATE VIEW"),
        Statement::CreateSchema { .. } | Statement::CreateDatabase { .. } => {
            superuser_only("CREATE SCHEMA")
        }
        Statement::CreateRole(_) | Statement::AlterRole { .. } => superuser_only("roles"),
        Statement::Grant(_) | Statement::Revoke(_) => superuser_only("GRANT and REVOKE"),
        // Session and transaction control, SHOW, DISCARD: allowed.
        _ => Ok(()),
    }
}

/// INSERT on the table (and SELECT with RETURNING), SELECT on what its
/// source reads.
fn check_insert(catalog: &Catalog, user: &str, ins: &Insert, schema: &str) -> Result<()> {
    if let TableObject::TableName(n) = &ins.table {
        if let Some(t) = table_of(catalog, n, schema) {
            check_table(catalog, user, &t, "INSERT")?;
            // RETURNING reads the rows (PostgreSQL asks SELECT).
            if ins.returning.is_some() {
                check_table(catalog, user, &t, "SELECT")?;
            }
        }
    }
    if let Some(src) = &ins.source {
        check_reads(catalog, user, &Statement::Query(src.clone()), schema)?;
    }
    Ok(())
}

/// UPDATE (`stmt`) on its table, SELECT on the others it reads.
fn check_update(
    catalog: &Catalog,
    user: &str,
    stmt: &Statement,
    u: &Update,
    schema: &str,
) -> Result<()> {
    let mut target = None;
    if let TableFactor::Table { name, .. } = &u.table.relation {
        if let Some(t) = table_of(catalog, name, schema) {
            check_write(
                catalog,
                user,
                &t,
                "UPDATE",
                u.selection.is_some() || u.returning.is_some(),
            )?;
            target = Some(t.id);
        }
    }
    check_reads_besides(catalog, user, stmt, schema, target)
}

/// DELETE (`stmt`) on its table, SELECT on the others it reads.
fn check_delete(
    catalog: &Catalog,
    user: &str,
    stmt: &Statement,
    d: &Delete,
    schema: &str,
) -> Result<()> {
    let from = match &d.from {
        FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
    };
    let mut target = None;
    for f in from {
        if let TableFactor::Table { name, .. } = &f.relation {
            if let Some(t) = table_of(catalog, name, schema) {
                check_write(
                    catalog,
                    user,
                    &t,
                    "DELETE",
                    d.selection.is_some() || d.returning.is_some(),
                )?;
                target = Some(t.id);
            }
        }
    }
    check_reads_besides(catalog, user, stmt, schema, target)
}

/// COPY TO (`to`) reads a table or query, COPY FROM inserts.
fn check_copy(
    catalog: &Catalog,
    user: &str,
    source: &CopySource,
    to: bool,
    schema: &str,
) -> Result<()> {
    match source {
        CopySource::Table { table_name, .. } => {
            if let Some(t) = table_of(catalog, table_name, schema) {
                check_table(catalog, user, &t, if to { "SELECT" } else { "INSERT" })?;
            }
            Ok(())
        }
        CopySource::Query(q) => check_reads(catalog, user, &Statement::Query(q.clone()), schema),
    }
}

/// CREATE on the schema a new table `name` goes to.
fn check_create_table(
    catalog: &Catalog,
    user: &str,
    name: &ObjectName,
    schema: &str,
) -> Result<()> {
    let parts = object_parts(name);
    let s = if parts.len() >= 2 {
        parts[parts.len() - 2].clone()
    } else {
        schema.to_string()
    };
    if catalog.granted(user, "schema", &s, "", "CREATE") {
        Ok(())
    } else {
        Err(denied(format!("schema {s}")))
    }
}

/// Ownership of the table `name` names, if it is one of the catalog's.
fn check_table_owner(catalog: &Catalog, user: &str, name: &ObjectName, schema: &str) -> Result<()> {
    match table_of(catalog, name, schema) {
        Some(t) => check_owner(catalog, user, &t, &format!("table {}", t.name)),
        None => Ok(()),
    }
}

/// Ownership of the table of each index `names` names.
fn check_drop_index(
    catalog: &Catalog,
    user: &str,
    names: &[ObjectName],
    schema: &str,
) -> Result<()> {
    for n in names {
        let parts = object_parts(n);
        let (s, i) = match parts.as_slice() {
            [i] => (schema.to_string(), i.clone()),
            [s, i] => (s.clone(), i.clone()),
            _ => continue,
        };
        if let Some(t) = catalog.index_owner(&s, &i) {
            check_owner(catalog, user, t, &format!("index {i}"))?;
        }
    }
    Ok(())
}
