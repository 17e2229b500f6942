//! Prepared statements: a parsed statement and its plan, made at Parse
//! (or for a simple-protocol statement), described for the client and
//! re-planned only when the catalog version or the session's schema moved.

use std::sync::Arc;

use common::{Error, Result};
use datafusion::arrow::datatypes::DataType;
use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::sqlparser::ast::Statement;
use pgwire::api::Type;
use shard_router::Router;

use super::df::{
    analyzed_types, context_for, describe, logical_plan, pg_column_names, Description, Scope,
};
use super::{Plan, PlanKind, Planner};

/// A prepared statement: its statement and its plan, DataFusion logical plan
/// included (re-planned only when the catalog version or the schema moves).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The schema unqualified names were resolved in.
    pub schema: String,
    pub stmt: Statement,
    pub plan: Plan,
    pub client_types: Vec<Option<Type>>,
    /// The session's time zone when it was planned (what timestamptz
    /// literals and text casts were read in).
    pub zone: common::tz::Zone,
    /// The client's text of a statement prepared by Parse (empty for the
    /// simple protocol's, see `Session::query_text`).
    pub text: Arc<str>,
    /// The last (catalog version, user, schema) the statement's
    /// privileges were checked for and held: executions by that user at
    /// that version walk nothing (`crate::privileges::check`).
    pub allowed: Allowed,
}

/// The (catalog version, user, schema) a prepared statement's privileges
/// last held for; a copy of the statement starts without it.
#[derive(Default)]
pub struct Allowed(pub parking_lot::Mutex<Option<AllowedFor>>);

/// A catalog version, a user and a schema.
pub type AllowedFor = (u64, Arc<str>, Arc<str>);

impl Clone for Allowed {
    fn clone(&self) -> Self {
        Allowed::default()
    }
}

impl std::fmt::Debug for Allowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Allowed")
    }
}

impl Prepared {
    /// A statement prepared by a client's Parse.
    pub fn new(
        schema: String,
        stmt: Statement,
        plan: Plan,
        client_types: Vec<Option<Type>>,
    ) -> Prepared {
        Prepared {
            schema,
            stmt,
            plan,
            client_types,
            zone: common::tz::session_zone(),
            text: Arc::from(""),
            allowed: Default::default(),
        }
    }

    /// A one-shot statement of the simple protocol.
    pub fn one_shot(schema: String, stmt: Statement, plan: Plan) -> Prepared {
        Prepared {
            schema,
            stmt,
            plan,
            client_types: vec![],
            zone: common::tz::session_zone(),
            text: Arc::from(""),
            allowed: Default::default(),
        }
    }
}

/// Plans a statement against the current catalog for `scope`, including
/// the DataFusion logical plan and description of distributed statements
/// (kept in the plan: a prepared statement is planned once).
pub async fn plan_statement(
    router: &Arc<Router>,
    scope: &Scope,
    stmt: &Statement,
    client_types: &[Option<Type>],
) -> Result<Plan> {
    plan_statement_sized(router, scope, stmt, client_types, false).await
}

/// [`plan_statement`] for a statement known to be `heavy` (long text):
/// planned with [`crate::cpu_bound`].
pub async fn plan_statement_sized(
    router: &Arc<Router>,
    scope: &Scope,
    stmt: &Statement,
    client_types: &[Option<Type>],
    heavy: bool,
) -> Result<Plan> {
    super::pgsyntax::check(stmt)?;
    let plan = plan_against_catalog(router, &scope.schema, stmt, client_types, heavy).await?;
    match &plan.kind {
        // A cursor's query is prepared with the DECLARE (its parameters are
        // the DECLARE's).
        PlanKind::DeclareCursor {
            query,
            prepared: None,
            ..
        } => {
            let query = query.clone();
            let inner = Box::pin(plan_statement_sized(
                router,
                scope,
                &query,
                client_types,
                heavy,
            ))
            .await?;
            Ok(with_cursor_query(plan, inner, scope, client_types))
        }
        // Step 1 of a two-step UPDATE/DELETE is prepared with it: its
        // parameters are the statement's, its last columns the RETURNING ones.
        PlanKind::ReadWrite(rw) => {
            let inner = Box::pin(plan_statement_sized(
                router,
                scope,
                &rw.query,
                client_types,
                heavy,
            ))
            .await?;
            Ok(with_first_step(plan, inner))
        }
        PlanKind::Insert(_) => {
            let plan = plan_insert_source(router, scope, plan, client_types, heavy).await?;
            describe_insert_returning(router, scope, plan, client_types, heavy).await
        }
        PlanKind::DataFusion(..) | PlanKind::CopyOut(..) => {
            with_logical_plan(router, scope, plan, client_types).await
        }
        _ => Ok(plan),
    }
}

/// The plan of a statement by a [`Planner`] over the current catalog,
/// planned once more over meta's newest when a table is not found.
async fn plan_against_catalog(
    router: &Arc<Router>,
    schema: &str,
    stmt: &Statement,
    client_types: &[Option<Type>],
    heavy: bool,
) -> Result<Plan> {
    let catalog = router.ensure_fresh().await?;
    let planner = Planner {
        catalog: &catalog,
        schema,
        client_types,
    };
    match crate::cpu_bound(heavy, || planner.plan(stmt)) {
        // A table created elsewhere a moment ago: ask meta before failing.
        Err(Error::TableNotFound { .. }) => {
            let catalog = router.check_version().await?;
            Planner {
                catalog: &catalog,
                schema,
                client_types,
            }
            .plan(stmt)
        }
        other => other,
    }
}

/// A DECLARE's plan with its cursor's query prepared (`inner`).
fn with_cursor_query(
    mut plan: Plan,
    inner: Plan,
    scope: &Scope,
    client_types: &[Option<Type>],
) -> Plan {
    plan.param_types = inner.param_types.clone();
    if let PlanKind::DeclareCursor {
        query, prepared, ..
    } = &mut plan.kind
    {
        *prepared = Some(Arc::new(Prepared::new(
            scope.schema.clone(),
            (**query).clone(),
            inner,
            client_types.to_vec(),
        )));
    }
    plan
}

/// A two-step UPDATE/DELETE's plan with its step 1 planned (`inner`): the
/// statement's parameters and RETURNING columns are step 1's.
fn with_first_step(mut plan: Plan, inner: Plan) -> Plan {
    let PlanKind::ReadWrite(rw) = &plan.kind else {
        return plan;
    };
    plan.param_types = inner.param_types.clone();
    let skip = inner.fields.len().saturating_sub(rw.returning);
    plan.fields = inner.fields[skip..]
        .iter()
        .zip(&rw.returning_names)
        .map(|((_, ty), name)| (name.clone(), ty.clone()))
        .collect();
    plan.kind = PlanKind::ReadWrite(Arc::new(super::readwrite::ReadWritePlan {
        table: rw.table.clone(),
        query: rw.query.clone(),
        action: rw.action.clone(),
        prepared: Some(Arc::new(inner)),
        returning: rw.returning,
        returning_names: rw.returning_names.clone(),
    }));
    plan
}

/// INSERT ... SELECT: the query planned now, with the statement's
/// parameters.
async fn plan_insert_source(
    router: &Arc<Router>,
    scope: &Scope,
    mut plan: Plan,
    client_types: &[Option<Type>],
    heavy: bool,
) -> Result<Plan> {
    let PlanKind::Insert(ins) = &plan.kind else {
        return Ok(plan);
    };
    if let (Some(q), None) = (&ins.source, &ins.source_plan) {
        let query = Statement::Query(q.clone());
        let inner = Box::pin(plan_statement_sized(
            router,
            scope,
            &query,
            client_types,
            heavy,
        ))
        .await?;
        plan.param_types = inner.param_types.clone();
        let mut with = super::InsertPlan::clone_of(ins);
        with.source_plan = Some(Arc::new(inner));
        plan.kind = PlanKind::Insert(Arc::new(with));
    }
    Ok(plan)
}

/// INSERT ... RETURNING expressions: the one-row query gives the result
/// columns' types.
async fn describe_insert_returning(
    router: &Arc<Router>,
    scope: &Scope,
    mut plan: Plan,
    client_types: &[Option<Type>],
    heavy: bool,
) -> Result<Plan> {
    let PlanKind::Insert(ins) = &plan.kind else {
        return Ok(plan);
    };
    if let Some(rx) = &ins.returning_exprs {
        let k = plan.param_types.len();
        let one = rx.query(&ins.table, 1, k)?;
        let given: Vec<Option<Type>> = (0..k)
            .map(|i| {
                client_types
                    .get(i)
                    .cloned()
                    .flatten()
                    .or_else(|| plan.param_types.get(i).cloned())
            })
            .collect();
        let described = Box::pin(plan_statement_sized(router, scope, &one, &given, heavy)).await?;
        plan.fields = described
            .fields
            .iter()
            .zip(&rx.names)
            .map(|((_, ty), name)| (name.clone(), ty.clone()))
            .collect();
        let mut with = super::InsertPlan::clone_of(ins);
        with.returning_exprs = Some(Arc::new(rx.with_description(described)));
        plan.kind = PlanKind::Insert(Arc::new(with));
    }
    Ok(plan)
}

/// A DataFusion statement's or COPY TO's plan with its DataFusion logical
/// plan, and (DataFusion statements) its parameter and result columns.
async fn with_logical_plan(
    router: &Arc<Router>,
    scope: &Scope,
    mut plan: Plan,
    client_types: &[Option<Type>],
) -> Result<Plan> {
    let (s, lock, describes) = match &plan.kind {
        PlanKind::DataFusion(s, lock) => (s.clone(), *lock, true),
        PlanKind::CopyOut(s, _) => (s.clone(), None, false),
        _ => return Ok(plan),
    };
    // DataFusion plans the statement with duplicate names taken apart;
    // the client sees PostgreSQL's names (below).
    let planned = super::pgsyntax::for_datafusion(&s);
    let df_stmt = planned.as_ref().unwrap_or(&s);
    let mut ctx = context_for(router, scope, lock)?;
    let lp = match logical_plan(&ctx, df_stmt).await {
        Err(Error::TableNotFound { .. }) => {
            router.check_version().await?;
            ctx = context_for(router, scope, lock)?;
            logical_plan(&ctx, df_stmt).await?
        }
        other => other?,
    };
    let lp = super::pgtypeof::resolve(lp, &router.catalog(), &scope.schema)
        .map_err(crate::errors::map_df_error)?;
    if describes {
        let (ptypes, fields) = result_columns(&ctx, &lp, &s)?;
        plan.param_types = parameter_types(&ptypes, client_types);
        let origins = super::origins::of_plan(&lp, &router.catalog(), &scope.schema);
        if origins.len() == fields.len() {
            plan.origins = origins;
        }
        plan.fields = fields;
    }
    plan.logical = Some(Arc::new(lp));
    Ok(plan)
}

/// A DataFusion statement's parameter types (as DataFusion infers them)
/// and result columns: typed as the analyzer types them, named as
/// PostgreSQL names them.
fn result_columns(ctx: &SessionContext, lp: &LogicalPlan, s: &Statement) -> Result<Description> {
    let (ptypes, mut fields) = describe(lp)?;
    if let Some(types) = analyzed_types(ctx, lp) {
        if types.len() == fields.len() {
            for (f, t) in fields.iter_mut().zip(types) {
                f.1 = t;
            }
        }
    }
    for f in fields.iter_mut() {
        if f.0.starts_with(super::colnames::RENAMED) {
            f.0 = super::colnames::restore_name(&f.0).to_string();
        }
    }
    if let Some(names) = pg_column_names(s) {
        if names.len() == fields.len() {
            for (f, n) in fields.iter_mut().zip(names) {
                f.0 = n;
            }
        }
    }
    Ok((ptypes, fields))
}

/// Each parameter's type: the client's when it gave one, else DataFusion's
/// inferred type, else text.
fn parameter_types(inferred: &[Option<DataType>], client_types: &[Option<Type>]) -> Vec<Type> {
    inferred
        .iter()
        .enumerate()
        .map(|(i, t)| {
            client_types
                .get(i)
                .cloned()
                .flatten()
                .filter(|t| *t != Type::UNKNOWN)
                .or_else(|| t.as_ref().map(crate::pgtypes::arrow_to_pg))
                .unwrap_or(Type::TEXT)
        })
        .collect()
}
