//! INSERT, UPDATE and DELETE: routes, per-partition SQL, parameter types
//! and RETURNING columns.

use std::sync::Arc;

use common::{Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Insert, Query, SetExpr,
    Statement, TableFactor, TableObject, Value, Values,
};
use meta::{Distribution, TableDef};
use pgwire::api::Type;
use shard_router::route::RoutePlan;
use shard_router::sql::{count_params, is_safe_expr, render};
use shard_router::sql::{normalize_ident, placeholder_index};
use shard_router::sql::{type_assigned_literal, type_literals};

use super::origins::Origin;
use super::*;
use crate::pgtypes::pg_type;

impl Planner<'_> {
    /// An INSERT's plan: its VALUES rows, evaluated and routed when it
    /// runs, or INSERT ... SELECT.
    pub(crate) fn plan_insert(&self, ins: &Insert) -> Result<Plan> {
        let TableObject::TableName(name) = &ins.table else {
            return Err(Error::unsupported("INSERT into a table function"));
        };
        let table = resolve_table(self.catalog, name, self.schema)?;
        let (on_conflict, conflict_key) = self.insert_conflict(ins, &table)?;
        let Some(source) = &ins.source else {
            return Err(Error::unsupported("INSERT without VALUES"));
        };
        let (cols, column_map) = insert_columns(ins, &table)?;
        let returning = insert_returning(ins, &table)?;
        let plan = InsertPlan {
            table,
            column_map,
            rows: vec![],
            sequence_calls: false,
            on_conflict,
            conflict_key,
            source: None,
            source_plan: None,
            target_columns: cols.len(),
            returning: returning.columns,
            returning_exprs: returning.exprs,
        };
        let SetExpr::Values(values) = source.body.as_ref() else {
            let plan = insert_select(ins, source, plan)?;
            return Ok(self.insert_plan_of(plan, vec![], returning.fields, returning.origins));
        };
        check_identity_always(&plan.table, &plan.column_map, values)?;
        let inferred = values_param_types(ins, &plan.table, &cols, values)?;
        let n = count_params(&Statement::Insert(ins.clone()));
        let plan = InsertPlan {
            rows: values.rows.iter().map(|r| r.content.clone()).collect(),
            sequence_calls: crate::plan::sequence::calls_sequence_function(&values.rows),
            ..plan
        };
        Ok(self.insert_plan_of(
            plan,
            param_types(n, &inferred, self.client_types),
            returning.fields,
            returning.origins,
        ))
    }

    /// What a row whose key exists does (`ON CONFLICT`), and the arbiter
    /// key's column indexes.
    fn insert_conflict(
        &self,
        ins: &Insert,
        table: &TableDef,
    ) -> Result<(shard_router::route::OnConflict, Vec<usize>)> {
        let Some(on) = &ins.on else {
            return Ok((shard_router::route::OnConflict::Error, vec![]));
        };
        crate::plan::conflict::on_conflict(on, table, self.catalog, &insert_alias(ins, table))
    }

    /// The [`Plan`] of an [`InsertPlan`] with its parameter and result
    /// columns.
    fn insert_plan_of(
        &self,
        insert: InsertPlan,
        param_types: Vec<Type>,
        fields: Vec<(String, Type)>,
        origins: Vec<Option<Origin>>,
    ) -> Plan {
        let mut plan = self.plan_of(PlanKind::Insert(Arc::new(insert)), "INSERT");
        plan.param_types = param_types;
        plan.fields = fields;
        plan.origins = origins;
        plan
    }

    /// PostgreSQL's checks of an UPDATE's assignments; then 0A000 (so the
    /// statement takes the two steps of `plan::readwrite`) when the
    /// compute node checks foreign keys this write touches, unless it is
    /// such a step (`keyed`): the rows must be read first for their keys.
    fn check_target(&self, stmt: &Statement, table: &TableDef, keyed: bool) -> Result<()> {
        if let Statement::Update(u) = stmt {
            check_identity_assignments(table, &u.assignments)?;
        }
        if keyed {
            return Ok(());
        }
        let assigned: Option<Vec<String>> = match stmt {
            Statement::Update(u) => Some(
                u.assignments
                    .iter()
                    .filter_map(|a| match &a.target {
                        datafusion::sql::sqlparser::ast::AssignmentTarget::ColumnName(n) => {
                            object_parts(n).last().cloned()
                        }
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        };
        match crate::plan::foreign_key::write_checks(self.catalog, table, assigned.as_deref())? {
            Some(why) => Err(Error::unsupported(why)),
            None => Ok(()),
        }
    }

    pub(crate) fn plan_write(&self, stmt: Statement) -> Result<Plan> {
        self.plan_write_as(stmt, false)
    }

    /// An UPDATE or DELETE as one rendered statement per partition.
    /// `keyed`: step 2 of a two-step write (`plan::readwrite`), whose
    /// foreign keys that write checks.
    pub(crate) fn plan_write_as(&self, stmt: Statement, keyed: bool) -> Result<Plan> {
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
        self.check_target(&stmt, &table, keyed)?;
        // A subquery would reach the shard naming logical tables.
        if datafusion::sql::sqlparser::ast::visit_expressions(&stmt, |e| match e {
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => {
                std::ops::ControlFlow::Break(())
            }
            _ => std::ops::ControlFlow::Continue(()),
        })
        .is_break()
        {
            return Err(Error::unsupported("subqueries in UPDATE or DELETE"));
        }
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
        // The client's parameters; current-time values assigned by SET
        // become parameters after them, bound at execution with the
        // transaction's clock (`WritePlan::clock_values`).
        let client_params = count_params(&stmt);
        let mut clock_values: Vec<(Expr, SqlType)> = vec![];
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
                if is_clock_value(&a.value) {
                    let n = client_params + clock_values.len() + 1;
                    let value = std::mem::replace(
                        &mut a.value,
                        Expr::value(Value::Placeholder(format!("${n}"))),
                    );
                    clock_values.push((value, cdef.ty));
                    continue;
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
        let sql = per_partition_sql(&self.catalog.placement, &table, &stmt)?;
        let n = sql
            .first()
            .map(|(_, o)| o.iter().map(|i| i + 1).max().unwrap_or(0))
            .unwrap_or(0)
            .min(client_params.max(n_placeholders(&sql, clock_values.len())));
        Ok(Plan {
            kind: PlanKind::Write(Arc::new(WritePlan {
                table,
                route,
                sql,
                clock_values,
            })),
            param_types: param_types(n, &inferred, self.client_types),
            fields: vec![],
            tag: if is_delete { "DELETE" } else { "UPDATE" },
            catalog_version: self.catalog.version,
            described: Default::default(),
            logical: None,
            origins: vec![],
        })
    }
}

/// The name an INSERT's target is referred to by: its alias, else its name.
fn insert_alias(ins: &Insert, table: &TableDef) -> String {
    ins.table_alias
        .as_ref()
        .map(|a| normalize_ident(&a.alias))
        .unwrap_or_else(|| table.name.clone())
}

/// The columns an INSERT names (every column when it names none) and, for
/// each table column, the index of the value that feeds it.
fn insert_columns(ins: &Insert, table: &TableDef) -> Result<(Vec<String>, Vec<Option<usize>>)> {
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
    Ok((cols, column_map))
}

/// An INSERT's RETURNING: the table columns it names, or the expressions
/// a query computes over the stored rows; and its result columns.
struct InsertReturning {
    columns: Vec<usize>,
    exprs: Option<Arc<super::returning::ReturningExprs>>,
    fields: Vec<(String, Type)>,
    origins: Vec<Option<Origin>>,
}

/// The RETURNING of an INSERT (none when it has none).
fn insert_returning(ins: &Insert, table: &TableDef) -> Result<InsertReturning> {
    let (named, exprs) = match &ins.returning {
        None => (vec![], None),
        Some(items) => match super::returning::returning_columns(table, items) {
            Ok(named) => (named, None),
            Err(Error::Unsupported { .. }) => (
                vec![],
                Some(Arc::new(super::returning::ReturningExprs::new(
                    table,
                    &insert_alias(ins, table),
                    items,
                )?)),
            ),
            Err(e) => return Err(e),
        },
    };
    let columns: Vec<usize> = named.iter().map(|(i, _)| *i).collect();
    let origins: Vec<_> = columns
        .iter()
        .map(|i| super::origins::of_column(table, *i))
        .collect();
    let fields: Vec<(String, Type)> = named
        .into_iter()
        .map(|(i, name)| (name, pg_type(&table.columns[i].ty)))
        .collect();
    Ok(InsertReturning {
        columns,
        exprs,
        fields,
        origins,
    })
}

/// INSERT ... SELECT: the query runs when the statement does. The query's
/// parameters are planned with it (prepare.rs); ON CONFLICT and RETURNING
/// are bound without any.
fn insert_select(ins: &Insert, source: &Query, plan: InsertPlan) -> Result<InsertPlan> {
    if count_params(&Statement::Insert(ins.clone()))
        > count_params(&Statement::Query(Box::new(source.clone())))
    {
        return Err(Error::unsupported(
            "parameters outside the query of INSERT ... SELECT",
        ));
    }
    if crate::plan::sequence::calls_sequence_function(source) {
        return Err(Error::unsupported(
            "sequence functions in INSERT ... SELECT",
        ));
    }
    let column_map = if ins.columns.is_empty() {
        // Every column, in order; the query may give fewer.
        (0..plan.table.columns.len()).map(Some).collect()
    } else {
        plan.column_map
    };
    Ok(InsertPlan {
        column_map,
        source: Some(Box::new(source.clone())),
        ..plan
    })
}

/// Refuses a value given to a `GENERATED ALWAYS AS IDENTITY` column
/// (DEFAULT is allowed).
fn check_identity_always(
    table: &TableDef,
    column_map: &[Option<usize>],
    values: &Values,
) -> Result<()> {
    for (ci, c) in table.columns.iter().enumerate() {
        if c.identity != Some(meta::Identity::Always) {
            continue;
        }
        let Some(j) = column_map[ci] else { continue };
        let given = values.rows.iter().any(|r| {
            r.content.get(j).is_some_and(|e| {
                !matches!(e, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
            })
        });
        if given {
            return Err(identity_always_insert(&c.name));
        }
    }
    Ok(())
}

/// Checks each VALUES row's length against the target columns and types
/// each parameter given as a value as the column it feeds.
fn values_param_types(
    ins: &Insert,
    table: &TableDef,
    cols: &[String],
    values: &Values,
) -> Result<Vec<Option<SqlType>>> {
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
    Ok(inferred)
}

/// 428C9: a value given for a `GENERATED ALWAYS AS IDENTITY` column.
pub(crate) fn identity_always_insert(column: &str) -> Error {
    Error::Sql {
        state: common::SqlState("428C9"),
        message: format!("cannot insert a non-DEFAULT value into column \"{column}\""),
    }
}

/// 428C9 for an UPDATE assigning a `GENERATED ALWAYS AS IDENTITY` column.
pub(crate) fn check_identity_assignments(
    table: &TableDef,
    assignments: &[datafusion::sql::sqlparser::ast::Assignment],
) -> Result<()> {
    for a in assignments {
        if let datafusion::sql::sqlparser::ast::AssignmentTarget::ColumnName(n) = &a.target {
            let col = object_parts(n).last().cloned().unwrap_or_default();
            let is_default = matches!(&a.value, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"));
            if !is_default
                && table
                    .column(&col)
                    .is_ok_and(|c| c.identity == Some(meta::Identity::Always))
            {
                return Err(Error::Sql {
                    state: common::SqlState("428C9"),
                    message: format!("column \"{col}\" can only be updated to DEFAULT"),
                });
            }
        }
    }
    Ok(())
}

/// Whether an assigned value is one of the current-time functions (its
/// value is the statement's or transaction's clock, not a constant).
fn is_clock_value(e: &Expr) -> bool {
    let now = chrono::Utc::now();
    let clock = shard_router::sql::Clock {
        transaction: now,
        statement: now,
    };
    shard_router::sql::eval_value(e, &[], None).is_err()
        && shard_router::sql::eval_value(e, &[], Some(&clock)).is_ok()
}

/// The client's parameter count of rendered SQL with `clock` appended
/// parameters.
fn n_placeholders(sql: &[(String, Vec<usize>)], clock: usize) -> usize {
    sql.first()
        .map(|(_, o)| o.iter().map(|i| i + 1).max().unwrap_or(0))
        .unwrap_or(0)
        .saturating_sub(clock)
}

/// Parameter types implied by comparisons and assignments with columns.
pub(crate) fn infer_params(e: &Expr, table: &TableDef, out: &mut Vec<Option<SqlType>>) {
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
                match (expr.as_ref(), i) {
                    (Expr::Tuple(cols), Expr::Tuple(vals)) => {
                        for (c, v) in cols.iter().zip(vals) {
                            set(v, col_ty(c));
                        }
                    }
                    _ => set(i, col_ty(expr)),
                }
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
        // `$1::bigint`: PostgreSQL types the parameter as the cast's type.
        Expr::Cast {
            expr, data_type, ..
        } => {
            set(
                expr,
                SqlType::parse(&data_type.to_string().to_lowercase()).ok(),
            );
            infer_params(expr, table, out)
        }
        _ => {}
    }
}

pub(crate) fn param_types(
    n: usize,
    inferred: &[Option<SqlType>],
    client: &[Option<Type>],
) -> Vec<Type> {
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

/// The SQL of one slot from [`per_partition_sql`]'s list: a slot the plan
/// was not made for (the table's layout grew since) is 42P01, never a
/// panic.
pub(crate) fn slot_sql<'a>(
    sql: &'a [(String, Vec<usize>)],
    table: &TableDef,
    slot: u32,
) -> Result<&'a (String, Vec<usize>)> {
    sql.get(slot as usize).ok_or_else(|| Error::Sql {
        state: common::SqlState::UNDEFINED_TABLE,
        message: format!(
            "relation \"{}\" changed its layout while the statement ran; run it again",
            table.name
        ),
    })
}

/// The statement rendered for each physical table of `table` (its slots
/// in the placement map).
pub(crate) fn per_partition_sql(
    placement: &meta::Placement,
    table: &TableDef,
    stmt: &Statement,
) -> Result<Vec<(String, Vec<usize>)>> {
    (0..placement.partition_count(table)?)
        .map(|p| render(stmt, &table.schema, &table.physical_name(p)))
        .collect()
}

pub(crate) fn fast_item_type(e: &Expr, table: &TableDef) -> Option<(String, SqlType)> {
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
pub(crate) fn check_columns(e: &Expr, table: &TableDef) -> Result<()> {
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
