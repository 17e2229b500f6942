//! Prepared statements: a parsed statement and its plan, made at Parse
//! (or for a simple-protocol statement), described for the client and
//! re-planned only when the catalog version or the session's schema moved.

use std::sync::Arc;

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::Statement;
use pgwire::api::Type;
use shard_router::Router;

use super::df::{analyzed_types, context_for, describe, logical_plan, pg_column_names, Scope};
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
    let schema = scope.schema.as_str();
    let catalog = router.ensure_fresh().await?;
    let planner = Planner {
        catalog: &catalog,
        schema,
        client_types,
    };
    let mut plan = match crate::cpu_bound(heavy, || planner.plan(stmt)) {
        // A table created elsewhere a moment ago: ask meta before failing.
        Err(Error::TableNotFound { .. }) => {
            let catalog = router.check_version().await?;
            Planner {
                catalog: &catalog,
                schema,
                client_types,
            }
            .plan(stmt)?
        }
        other => other?,
    };
    // A cursor's query is prepared with the DECLARE (its parameters are
    // the DECLARE's).
    if let PlanKind::DeclareCursor {
        name,
        hold,
        query,
        prepared: None,
    } = &plan.kind
    {
        let inner = Box::pin(plan_statement_sized(
            router,
            scope,
            query,
            client_types,
            heavy,
        ))
        .await?;
        plan.param_types = inner.param_types.clone();
        plan.kind = PlanKind::DeclareCursor {
            name: name.clone(),
            hold: *hold,
            query: query.clone(),
            prepared: Some(Arc::new(Prepared::new(
                scope.schema.clone(),
                (**query).clone(),
                inner,
                client_types.to_vec(),
            ))),
        };
        return Ok(plan);
    }
    // Step 1 of a two-step UPDATE/DELETE is prepared with it: its
    // parameters are the statement's, its last columns the RETURNING ones.
    if let PlanKind::ReadWrite(rw) = &plan.kind {
        let inner = Box::pin(plan_statement_sized(
            router,
            scope,
            &rw.query,
            client_types,
            heavy,
        ))
        .await?;
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
        return Ok(plan);
    }
    // INSERT ... RETURNING expressions: the one-row query gives the
    // result columns' types.
    if let PlanKind::Insert(ins) = &plan.kind {
        // INSERT ... SELECT: the query planned now, with the statement's
        // parameters.
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
    }
    if let PlanKind::Insert(ins) = &plan.kind {
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
            let described =
                Box::pin(plan_statement_sized(router, scope, &one, &given, heavy)).await?;
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
        return Ok(plan);
    }
    let (s, lock, describes) = match &plan.kind {
        PlanKind::DataFusion(s, lock) => (s.clone(), *lock, true),
        PlanKind::CopyOut(s, _) => (s.clone(), None, false),
        _ => return Ok(plan),
    };
    // DataFusion plans the statement with duplicate names taken apart;
    // the client sees PostgreSQL's names (below).
    let planned = super::pgsyntax::for_datafusion(&s);
    let df_stmt = planned.as_ref().unwrap_or(&s);
    let mut ctx = context_for(router, scope, lock, None)?;
    let lp = match logical_plan(&ctx, df_stmt).await {
        Err(Error::TableNotFound { .. }) => {
            router.check_version().await?;
            ctx = context_for(router, scope, lock, None)?;
            logical_plan(&ctx, df_stmt).await?
        }
        other => other?,
    };
    if describes {
        let (ptypes, mut fields) = describe(&lp)?;
        if let Some(types) = analyzed_types(&ctx, &lp) {
            if types.len() == fields.len() {
                for (f, t) in fields.iter_mut().zip(types) {
                    f.1 = t;
                }
            }
        }
        plan.param_types = ptypes
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
            .collect();
        let origins = super::origins::of_plan(&lp, &router.catalog(), &scope.schema);
        if origins.len() == fields.len() {
            plan.origins = origins;
        }
        for f in fields.iter_mut() {
            if f.0.starts_with(super::colnames::RENAMED) {
                f.0 = super::colnames::restore_name(&f.0).to_string();
            }
        }
        plan.fields = fields;
        if let Some(names) = pg_column_names(&s) {
            if names.len() == plan.fields.len() {
                for (f, n) in plan.fields.iter_mut().zip(names) {
                    f.0 = n;
                }
            }
        }
    }
    plan.logical = Some(Arc::new(lp));
    Ok(plan)
}
