//! UPDATE and DELETE the single rendered statement per partition cannot
//! express (`UPDATE ... FROM`, `DELETE ... USING`, RETURNING of any
//! expression, subqueries, expressions MariaDB would evaluate differently,
//! an UPDATE of the partition key) run in two steps, inside the session's
//! transaction or one implicit transaction:
//!
//! 1. a SELECT ... FOR UPDATE, planned like any query, finds the target
//!    rows and computes, per row, its primary key, every column's new
//!    value (UPDATE; PostgreSQL's semantics, evaluated by the query engine)
//!    and the RETURNING items (over the new row for UPDATE, the old one for
//!    DELETE);
//! 2. each row is written by its key: `UPDATE t SET c = $1 ... WHERE key`,
//!    `DELETE FROM t WHERE key`, or, when the partition key changes, the
//!    old row deleted and the new one inserted (so it lands in its new
//!    partition).
//!
//! The target needs a primary key (0A000 otherwise). A row joined to
//! several FROM rows is changed once, as in PostgreSQL.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, FromTable, Ident, LockClause, LockType, Query, SelectItem,
    SetExpr, Statement, TableFactor, TableWithJoins, UpdateTableFromKind, VisitMut, VisitorMut,
};
use meta::{Distribution, TableDef};
use shard_router::sql::normalize_ident;

use super::{resolve_table, Plan, PlanKind, Planner, WritePlan};

/// How step 2 writes one row found by step 1.
#[derive(Debug, Clone)]
pub enum Action {
    /// `DELETE FROM t WHERE key = $1 ...` (parameters: the key).
    Delete(Arc<WritePlan>),
    /// `UPDATE t SET <assigned> = $1 ... WHERE key = $n ...` (parameters:
    /// the assigned columns' new values, then the key).
    Update {
        set: Arc<WritePlan>,
        assigned: Vec<usize>,
    },
    /// A partition key column is assigned: the old row deleted by its key,
    /// the new one inserted.
    Move(Arc<WritePlan>),
}

#[derive(Debug)]
pub struct ReadWritePlan {
    pub table: Arc<TableDef>,
    /// Step 1: the key's columns, then (UPDATE) every column's new value,
    /// then the RETURNING items.
    pub query: Box<Statement>,
    pub action: Action,
    /// Step 1 planned (by `plan_statement`; `None` until then).
    pub prepared: Option<Arc<Plan>>,
    pub returning: usize,
    /// PostgreSQL's names of the RETURNING items.
    pub returning_names: Vec<String>,
}

impl ReadWritePlan {
    pub fn key_len(&self) -> usize {
        self.table.primary_key.len()
    }

    /// Whether step 1 gives every column's new value (UPDATE).
    pub fn has_new_row(&self) -> bool {
        !matches!(self.action, Action::Delete(_))
    }
}

use super::quoted_ident as quote;

fn ident(s: &str) -> Ident {
    Ident::with_quote('"', s)
}

/// Replaces references to the target's columns by their new values.
struct NewValues<'a> {
    target: &'a str,
    values: &'a HashMap<String, Expr>,
}

impl VisitorMut for NewValues<'_> {
    type Break = ();
    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        let name = match e {
            Expr::Identifier(i) => Some(normalize_ident(i)),
            Expr::CompoundIdentifier(p)
                if p.len() == 2 && normalize_ident(&p[0]) == self.target =>
            {
                Some(normalize_ident(&p[1]))
            }
            _ => None,
        };
        if let Some(v) = name.and_then(|n| self.values.get(&n)) {
            *e = Expr::Nested(Box::new(v.clone()));
        }
        ControlFlow::Continue(())
    }
}

impl Planner<'_> {
    /// `WITH ctes INSERT / UPDATE / DELETE ...`.
    pub(crate) fn plan_with_dml(&self, q: &Query) -> Result<Plan> {
        if q.order_by.is_some()
            || q.limit_clause.is_some()
            || q.fetch.is_some()
            || !q.locks.is_empty()
        {
            return Err(Error::unsupported(
                "ORDER BY, LIMIT or locking after a data-modifying statement",
            ));
        }
        let with = q.with.as_ref();
        // A CTE that itself writes is not modelled.
        if with.is_some_and(|w| {
            w.cte_tables.iter().any(|c| {
                matches!(
                    c.query.body.as_ref(),
                    SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_)
                )
            })
        }) {
            return Err(Error::unsupported("data-modifying statements in WITH"));
        }
        match q.body.as_ref() {
            SetExpr::Insert(Statement::Insert(ins)) => {
                let mut ins = ins.clone();
                if let (Some(w), Some(src)) = (with, ins.source.as_mut()) {
                    if !matches!(src.body.as_ref(), SetExpr::Values(_)) {
                        match &mut src.with {
                            Some(own) => {
                                let mut ctes = w.cte_tables.clone();
                                ctes.append(&mut own.cte_tables);
                                own.cte_tables = ctes;
                            }
                            None => src.with = Some(w.clone()),
                        }
                    }
                }
                self.plan_insert(&ins)
            }
            SetExpr::Update(s) | SetExpr::Delete(s) => self.plan_read_write_with(s, with),
            _ => Err(Error::unsupported("this statement after WITH")),
        }
    }

    /// The two-step plan of an UPDATE or DELETE (module comment).
    pub(crate) fn plan_read_write(&self, stmt: &Statement) -> Result<Plan> {
        self.plan_read_write_with(stmt, None)
    }

    /// The two-step plan of an UPDATE or DELETE, `with` the CTEs of a
    /// `WITH ... UPDATE / DELETE`.
    fn plan_read_write_with(
        &self,
        stmt: &Statement,
        with: Option<&datafusion::sql::sqlparser::ast::With>,
    ) -> Result<Plan> {
        let parts = parts_of(stmt)?;
        let (table, target) = self.target_of(parts.relation, parts.assignments)?;
        let (values, assigned) = new_values(&table, parts.assignments)?;
        let (items, returning_names) = self.step_one_items(&table, &target, &parts, &values)?;
        let is_delete = parts.is_delete;
        let query = step_one_query(parts, items, with)?;
        let action = self.step_two_action(&table, is_delete, assigned)?;
        Ok(Plan {
            kind: PlanKind::ReadWrite(Arc::new(ReadWritePlan {
                table,
                query: Box::new(Statement::Query(query)),
                action,
                prepared: None,
                returning: returning_names.len(),
                returning_names,
            })),
            param_types: vec![],
            fields: vec![],
            tag: if is_delete { "DELETE" } else { "UPDATE" },
            catalog_version: self.catalog.version,
            described: Default::default(),
            logical: None,
            origins: vec![],
        })
    }

    /// The target table of an UPDATE or DELETE and the name step 1
    /// qualifies its columns by (its alias, else its name).
    fn target_of(
        &self,
        relation: &TableFactor,
        assignments: &[Assignment],
    ) -> Result<(Arc<TableDef>, String)> {
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = relation
        else {
            return Err(Error::unsupported("UPDATE or DELETE of this target"));
        };
        let table = resolve_table(self.catalog, name, self.schema)?;
        super::dml::check_identity_assignments(&table, assignments)?;
        if table.primary_key.is_empty() {
            return Err(Error::unsupported(format!(
                "this UPDATE or DELETE on table \"{}\" without a primary key (UPDATE ... FROM, DELETE ... USING, RETURNING expressions, subqueries or a partition key change need one)",
                table.name
            )));
        }
        if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
            return Err(Error::unsupported("column aliases on the target"));
        }
        let target = alias
            .as_ref()
            .map(|a| normalize_ident(&a.name))
            .unwrap_or_else(|| table.name.clone());
        Ok((table, target))
    }

    /// Step 1's select list: the key's columns, then (UPDATE) every
    /// column's new value, then the RETURNING items, each under a unique
    /// alias; and PostgreSQL's names of the RETURNING items.
    fn step_one_items(
        &self,
        table: &TableDef,
        target: &str,
        parts: &Parts<'_>,
        values: &HashMap<String, Expr>,
    ) -> Result<(Vec<SelectItem>, Vec<String>)> {
        let mut items: Vec<SelectItem> = table
            .primary_key
            .iter()
            .map(|k| SelectItem::UnnamedExpr(target_column(target, k)))
            .collect();
        if !parts.is_delete {
            for c in &table.columns {
                items.push(SelectItem::UnnamedExpr(match values.get(&c.name) {
                    Some(v) => Expr::Nested(Box::new(v.clone())),
                    None => target_column(target, &c.name),
                }));
            }
        }
        let returned = match &parts.returning {
            Some(r) => self.returning_items(r, table, target, !parts.from.is_empty(), values)?,
            None => vec![],
        };
        let returning_names: Vec<String> = returned.iter().map(|(n, _)| n.clone()).collect();
        items.extend(
            returned
                .into_iter()
                .map(|(_, e)| SelectItem::UnnamedExpr(e)),
        );
        // Unique names for the query engine (PostgreSQL's names of the
        // RETURNING items are put back on the statement's columns).
        let items: Vec<SelectItem> = items
            .into_iter()
            .enumerate()
            .map(|(i, it)| match it {
                SelectItem::UnnamedExpr(expr) => SelectItem::ExprWithAlias {
                    expr,
                    alias: Ident::new(format!("__tessera_rw_{i}")),
                },
                other => other,
            })
            .collect();
        Ok((items, returning_names))
    }

    /// Step 2: how each row step 1 finds is written, each statement planned
    /// as an ordinary keyed write.
    fn step_two_action(
        &self,
        table: &TableDef,
        is_delete: bool,
        assigned: Vec<usize>,
    ) -> Result<Action> {
        let qualified = format!("{}.{}", quote(&table.schema), quote(&table.name));
        let keys = match &table.distribution {
            Distribution::Hash { columns, .. } => columns.clone(),
            _ => vec![],
        };
        let moves = assigned
            .iter()
            .any(|ci| keys.contains(&table.columns[*ci].name));
        Ok(if is_delete {
            Action::Delete(self.keyed_write(format!(
                "DELETE FROM {qualified} WHERE {}",
                key_condition(table, 1)
            ))?)
        } else if moves {
            if !self.catalog.foreign_keys_of(table.id, false).is_empty() {
                return Err(Error::unsupported(
                    "UPDATE of the partition key of a table other tables' foreign keys reference",
                ));
            }
            Action::Move(self.keyed_write(format!(
                "DELETE FROM {qualified} WHERE {}",
                key_condition(table, 1)
            ))?)
        } else {
            let sets: Vec<String> = assigned
                .iter()
                .enumerate()
                .map(|(i, ci)| format!("{} = ${}", quote(&table.columns[*ci].name), i + 1))
                .collect();
            Action::Update {
                set: self.keyed_write(format!(
                    "UPDATE {qualified} SET {} WHERE {}",
                    sets.join(", "),
                    key_condition(table, assigned.len() + 1)
                ))?,
                assigned,
            }
        })
    }

    /// One of step 2's statements (SQL Tessera writes) planned as a keyed
    /// write.
    fn keyed_write(&self, sql: String) -> Result<Arc<WritePlan>> {
        let stmt = crate::dialect::parse(&sql)
            .map_err(Error::internal)?
            .pop()
            .ok_or_else(|| Error::internal("no statement"))?;
        match self.plan_write_as(stmt, true)?.kind {
            PlanKind::Write(w) => Ok(w),
            _ => Err(Error::internal("a keyed write planned otherwise")),
        }
    }

    /// RETURNING items as step 1 computes them: wildcards expanded to the
    /// target's columns, references to assigned columns replaced by their
    /// new values, each named as PostgreSQL names the item as written.
    fn returning_items(
        &self,
        items: &[SelectItem],
        table: &TableDef,
        target: &str,
        has_from: bool,
        values: &HashMap<String, Expr>,
    ) -> Result<Vec<(String, Expr)>> {
        let mut expanded: Vec<SelectItem> = vec![];
        for it in items {
            match it {
                SelectItem::Wildcard(_) if has_from => {
                    return Err(Error::unsupported("RETURNING * with FROM or USING tables"))
                }
                SelectItem::Wildcard(_) => expanded.extend(
                    table
                        .columns
                        .iter()
                        .map(|c| SelectItem::UnnamedExpr(Expr::Identifier(ident(&c.name)))),
                ),
                SelectItem::QualifiedWildcard(k, _) => {
                    let q = k.to_string();
                    let q = q.trim_end_matches(".*");
                    if normalize_ident(&Ident::new(q)) != target && q != quote(target) {
                        return Err(Error::unsupported(
                            "RETURNING another table's columns by wildcard",
                        ));
                    }
                    // `target.col`: with FROM tables a bare name may be
                    // theirs too (ambiguous, 42702).
                    expanded.extend(table.columns.iter().map(|c| {
                        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(vec![
                            ident(target),
                            ident(&c.name),
                        ]))
                    }));
                }
                other => expanded.push(other.clone()),
            }
        }
        // Names from the items as written.
        let names = {
            let probe = Statement::Query(Box::new(Query {
                body: Box::new(SetExpr::Select(Box::new(
                    datafusion::sql::sqlparser::ast::Select {
                        projection: expanded.clone(),
                        ..empty_select()?
                    },
                ))),
                ..empty_query()?
            }));
            super::colnames::pg_column_names(&probe)
                .ok_or_else(|| Error::internal("RETURNING names"))?
        };
        let mut sub = NewValues { target, values };
        expanded
            .into_iter()
            .zip(names)
            .map(|(it, name)| {
                let mut e = match it {
                    SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
                    _ => return Err(Error::unsupported("this RETURNING item")),
                };
                let _ = VisitMut::visit(&mut e, &mut sub);
                Ok((name, e))
            })
            .collect()
    }
}

/// The parts of an UPDATE or DELETE its two steps are made from.
struct Parts<'a> {
    relation: &'a TableFactor,
    /// UPDATE's FROM or DELETE's USING tables.
    from: Vec<TableWithJoins>,
    /// UPDATE's SET (empty for DELETE).
    assignments: &'a [Assignment],
    selection: Option<Expr>,
    returning: Option<Vec<SelectItem>>,
    is_delete: bool,
}

/// An UPDATE's or DELETE's parts, refusing the shapes the two steps do not
/// model (joined targets, ORDER BY, LIMIT).
fn parts_of(stmt: &Statement) -> Result<Parts<'_>> {
    match stmt {
        Statement::Update(u) => {
            if !u.table.joins.is_empty() || u.limit.is_some() || !u.order_by.is_empty() {
                return Err(Error::unsupported("UPDATE of a join, ORDER BY or LIMIT"));
            }
            let from = match &u.from {
                Some(UpdateTableFromKind::AfterSet(f)) => f.clone(),
                Some(UpdateTableFromKind::BeforeSet(_)) => {
                    return Err(Error::unsupported("UPDATE FROM before SET"))
                }
                None => vec![],
            };
            Ok(Parts {
                relation: &u.table.relation,
                from,
                assignments: u.assignments.as_slice(),
                selection: u.selection.clone(),
                returning: u.returning.clone(),
                is_delete: false,
            })
        }
        Statement::Delete(d) => {
            if !d.tables.is_empty() || d.limit.is_some() || !d.order_by.is_empty() {
                return Err(Error::unsupported(
                    "DELETE of several tables, ORDER BY or LIMIT",
                ));
            }
            let (FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f)) = &d.from;
            let [target] = f.as_slice() else {
                return Err(Error::unsupported("DELETE from several tables"));
            };
            if !target.joins.is_empty() {
                return Err(Error::unsupported("DELETE from a join"));
            }
            Ok(Parts {
                relation: &target.relation,
                from: d.using.clone().unwrap_or_default(),
                assignments: &[][..],
                selection: d.selection.clone(),
                returning: d.returning.clone(),
                is_delete: true,
            })
        }
        _ => Err(Error::internal("not an UPDATE or DELETE")),
    }
}

/// Each assigned column's new value by name, and the assigned columns'
/// indexes in the order of the SET list.
fn new_values(
    table: &TableDef,
    assignments: &[Assignment],
) -> Result<(HashMap<String, Expr>, Vec<usize>)> {
    let mut values: HashMap<String, Expr> = HashMap::new();
    let mut assigned: Vec<usize> = vec![];
    for a in assignments {
        let col = match &a.target {
            AssignmentTarget::ColumnName(n) => {
                super::object_parts(n).last().cloned().unwrap_or_default()
            }
            _ => return Err(Error::unsupported("UPDATE of a column tuple")),
        };
        let ci = table
            .column_index(&col)
            .ok_or_else(|| Error::ColumnNotFound { name: col.clone() })?;
        if values.insert(col.clone(), a.value.clone()).is_some() {
            return Err(Error::Sql {
                state: common::SqlState("42601"),
                message: format!("multiple assignments to same column \"{col}\""),
            });
        }
        if matches!(&a.value, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
        {
            return Err(Error::unsupported("SET column = DEFAULT here"));
        }
        assigned.push(ci);
    }
    Ok((values, assigned))
}

/// Step 1: `SELECT items FROM target, from... WHERE selection FOR UPDATE`,
/// with the statement's CTEs.
fn step_one_query(
    parts: Parts<'_>,
    items: Vec<SelectItem>,
    with: Option<&datafusion::sql::sqlparser::ast::With>,
) -> Result<Box<Query>> {
    let mut tables = vec![TableWithJoins {
        relation: parts.relation.clone(),
        joins: vec![],
    }];
    tables.extend(parts.from);
    let select_sql = "SELECT 1";
    let mut query: Box<Query> = match crate::dialect::parse(select_sql)
        .map_err(Error::internal)?
        .pop()
    {
        Some(Statement::Query(q)) => q,
        _ => return Err(Error::internal("no query")),
    };
    let SetExpr::Select(select) = query.body.as_mut() else {
        return Err(Error::internal("no select"));
    };
    select.projection = items;
    select.from = tables;
    select.selection = parts.selection;
    query.with = with.cloned();
    query.locks = vec![LockClause {
        lock_type: LockType::Update,
        of: None,
        nonblock: None,
    }];
    Ok(query)
}

/// A column of the target as step 1 names it (`target."c"`).
fn target_column(target: &str, c: &str) -> Expr {
    Expr::CompoundIdentifier(vec![Ident::new(target), ident(c)])
}

/// `"k1" = $first AND "k2" = $first+1 ...`: the primary key matched by
/// parameters from `first` on.
fn key_condition(table: &TableDef, first: usize) -> String {
    table
        .primary_key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{} = ${}", quote(k), first + i))
        .collect::<Vec<_>>()
        .join(" AND ")
}

fn empty_query() -> Result<Query> {
    match crate::dialect::parse("SELECT 1")
        .map_err(Error::internal)?
        .pop()
    {
        Some(Statement::Query(q)) => Ok(*q),
        _ => Err(Error::internal("SELECT 1 is not a query")),
    }
}

fn empty_select() -> Result<datafusion::sql::sqlparser::ast::Select> {
    match *empty_query()?.body {
        SetExpr::Select(s) => Ok(*s),
        _ => Err(Error::internal("SELECT 1 is not a select")),
    }
}
