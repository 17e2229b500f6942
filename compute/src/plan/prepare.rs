//! Prepared statements: a parsed statement and its plan, made at Parse
//! (or for a simple-protocol statement), described for the client and
//! re-planned only when the catalog version or the session's schema moved.

use std::sync::Arc;

use common::{Error, Result};
use datafusion::execution::context::SessionContext;
use datafusion::sql::sqlparser::ast::Statement;
use pgwire::api::Type;
use shard_router::Router;

use super::df::{context_for, describe, logical_plan, pg_column_names};
use super::{Plan, PlanKind, Planner};

static NEXT_PREPARED_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A prepared statement: its SQL and its plan (re-planned when the catalog
/// version moves).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Unique per prepared statement (0: one-shot simple query).
    pub id: u64,
    /// The schema unqualified names were resolved in.
    pub schema: String,
    pub sql: String,
    pub stmt: Statement,
    pub plan: Plan,
    pub client_types: Vec<Option<Type>>,
}

impl Prepared {
    /// A statement prepared by a client's Parse: a fresh id.
    pub fn new(
        schema: String,
        sql: String,
        stmt: Statement,
        plan: Plan,
        client_types: Vec<Option<Type>>,
    ) -> Prepared {
        Prepared {
            id: NEXT_PREPARED_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            schema,
            sql,
            stmt,
            plan,
            client_types,
        }
    }

    /// A one-shot statement of the simple protocol (id 0: not cached).
    pub fn one_shot(schema: String, stmt: Statement, plan: Plan) -> Prepared {
        Prepared {
            id: 0,
            schema,
            sql: String::new(),
            stmt,
            plan,
            client_types: vec![],
        }
    }
}

/// A planning-only DataFusion context (autocommit access, no lock), used to
/// describe statements at prepare time.
fn describe_context(router: &Arc<Router>, schema: &str) -> Result<SessionContext> {
    context_for(
        router,
        Arc::new(parking_lot::RwLock::new(
            shard_router::txn::ShardAccess::Autocommit,
        )),
        schema.to_string(),
        "tessera",
        "tessera",
        None,
        Default::default(),
    )
}

/// Plans a statement against the current catalog, including the describe
/// step of DataFusion statements.
pub async fn plan_statement(
    router: &Arc<Router>,
    schema: &str,
    stmt: &Statement,
    client_types: &[Option<Type>],
) -> Result<Plan> {
    plan_statement_sized(router, schema, stmt, client_types, false).await
}

/// [`plan_statement`] for a statement known to be `heavy` (long text):
/// planned with [`crate::cpu_bound`].
pub async fn plan_statement_sized(
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
    if let PlanKind::DataFusion(s, _) = &plan.kind {
        let ctx = describe_context(router, schema)?;
        let lp = match logical_plan(&ctx, s).await {
            Err(Error::TableNotFound { .. }) => {
                router.check_version().await?;
                let ctx = describe_context(router, schema)?;
                logical_plan(&ctx, s).await?
            }
            other => other?,
        };
        let (ptypes, fields) = describe(&lp)?;
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
        plan.fields = fields;
        if let Some(names) = pg_column_names(s) {
            if names.len() == plan.fields.len() {
                for (f, n) in plan.fields.iter_mut().zip(names) {
                    f.0 = n;
                }
            }
        }
    }
    Ok(plan)
}
