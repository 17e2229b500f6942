//! The DataFusion side of planning: a context over the catalog's
//! `ShardTableProvider`s with the session functions PostgreSQL clients
//! expect, logical plans of statements, and their description (parameter
//! types, result columns named as PostgreSQL names them).

use std::sync::Arc;

use common::Result;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::execution::context::{SessionConfig, SessionContext};
use datafusion::logical_expr::{create_udf, ColumnarValue, LogicalPlan, Volatility};
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::Statement;
use pgwire::api::Type;
use shard_router::dist::{TesseraCatalog, CATALOG_NAME};

use crate::errors::map_df_error;
use crate::pgtypes::arrow_to_pg;

/// Who a statement is planned for: unqualified names resolve in `schema`;
/// `current_user`, `session_user` and `current_database` answer `user` and
/// `database` (they are constants of the plan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub schema: String,
    pub user: String,
    pub database: String,
    /// The session's backend pid (`pg_backend_pid()`).
    pub pid: i32,
}

fn const_udf(ctx: &SessionContext, name: &str, value: String) {
    let f = Arc::new(
        move |_: &[ColumnarValue]| -> datafusion::error::Result<ColumnarValue> {
            Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(
                value.clone(),
            ))))
        },
    );
    ctx.register_udf(create_udf(
        name,
        vec![],
        DataType::Utf8,
        Volatility::Stable,
        f,
    ));
}

static RUNTIME: std::sync::OnceLock<Arc<datafusion::execution::runtime_env::RuntimeEnv>> =
    std::sync::OnceLock::new();

/// The node's DataFusion runtime: one memory pool of `query_memory_mb`.
pub fn runtime() -> Result<Arc<datafusion::execution::runtime_env::RuntimeEnv>> {
    if let Some(r) = RUNTIME.get() {
        return Ok(r.clone());
    }
    let mb = crate::QUERY_MEMORY_MB
        .load(std::sync::atomic::Ordering::Relaxed)
        .max(16);
    let r = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
        .with_memory_limit(mb * 1024 * 1024, 1.0)
        .build_arc()
        .map_err(map_df_error)?;
    Ok(RUNTIME.get_or_init(|| r).clone())
}

/// A DataFusion context over the current catalog for `scope`, its scans
/// locking with `lock`. `scan`: the shard access and scan log executions
/// in it use (none: a planning-only context).
pub fn context_for(
    router: &Arc<shard_router::Router>,
    scope: &Scope,
    lock: Option<&'static str>,
) -> Result<SessionContext> {
    let schema = scope.schema.clone();
    let mut config = SessionConfig::new();
    // PostgreSQL reads 1.5 as numeric, not double precision.
    config.options_mut().sql_parser.parse_float_as_decimal = true;
    // Sessions run in UTC: now() and current_timestamp are timestamptz.
    config.options_mut().execution.time_zone = Some("+00:00".into());
    let config = config
        .with_default_catalog_and_schema(CATALOG_NAME, &schema)
        .with_create_default_catalog_and_schema(false)
        .with_information_schema(false)
        .with_target_partitions(4);
    // Memory is bounded by a pool shared by the node's queries; operators
    // that can spill (sorts, aggregates, joins) spill to disk at the limit.
    // PostgreSQL's integer constants before type coercion; PostgreSQL's
    // arithmetic and casts where DataFusion's differ, after type coercion
    // and before anything is folded or pushed; then numeric quotients and
    // avg as PostgreSQL computes and prints them.
    let mut rules = datafusion::optimizer::Analyzer::new().rules;
    let coercion = rules
        .iter()
        .position(|r| r.name() == "type_coercion")
        .unwrap_or(0);
    rules.insert(coercion, Arc::new(crate::pgcasts::PgIntLiterals));
    // String functions given numbers: PostgreSQL's 42883, not a cast.
    rules.insert(coercion, Arc::new(crate::pgargs::PgTextArgs));
    rules.push(Arc::new(crate::semantics::PgSemantics));
    rules.push(Arc::new(crate::decorrelation::SetComparisons));
    rules.push(Arc::new(crate::dscale::PgNumeric));
    let state = datafusion::execution::SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime()?)
        .with_default_features()
        .with_analyzer_rules(rules)
        .build();
    let ctx = SessionContext::new_with_state(state);
    // One catalog snapshot for the user tables, the system catalogs and
    // the catalog functions of the statement.
    let catalog = router.catalog();
    let snapshot = Arc::new(crate::pgcatalog::Snapshot {
        catalog: catalog.clone(),
        schema: scope.schema.clone(),
        user: scope.user.clone(),
        database: scope.database.clone(),
        pid: scope.pid,
        router: Some(router.clone()),
    });
    ctx.register_catalog(
        CATALOG_NAME,
        Arc::new(crate::pgcatalog::WithSystemSchemas {
            inner: Arc::new(TesseraCatalog {
                catalog,
                router: router.clone(),
                lock,
            }),
            snapshot: snapshot.clone(),
        }),
    );
    crate::pgcatalog::funcs::register(&ctx, &snapshot);
    // PostgreSQL's avg: numeric for integers and numerics.
    ctx.register_udaf(datafusion::logical_expr::AggregateUDF::new_from_impl(
        crate::numeric::PgAvg::default(),
    ));
    crate::pgvariance::register(&ctx);
    crate::pgfuncs::register(&ctx);
    ctx.register_udaf(datafusion::logical_expr::AggregateUDF::new_from_impl(
        crate::onerow::OneRow::default(),
    ));
    const_udf(
        &ctx,
        "version",
        format!(
            "PostgreSQL {} (Tessera {}) on x86_64-pc-linux-gnu",
            crate::SERVER_VERSION,
            env!("CARGO_PKG_VERSION")
        ),
    );
    const_udf(&ctx, "current_database", scope.database.clone());
    const_udf(&ctx, "current_schema", schema);
    const_udf(&ctx, "current_user", scope.user.clone());
    const_udf(&ctx, "session_user", scope.user.clone());
    Ok(ctx)
}

/// DataFusion logical plans this node has made (`SHOW
/// tessera.logical_plans`): a prepared statement makes one at Parse and
/// none per execution.
pub static LOGICAL_PLANS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Plans a statement; returns the logical plan.
pub async fn logical_plan(ctx: &SessionContext, stmt: &Statement) -> Result<LogicalPlan> {
    LOGICAL_PLANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ctx.state()
        .statement_to_plan(DFStatement::Statement(Box::new(stmt.clone())))
        .await
        .map_err(map_df_error)
}

/// Parameter types and result columns of a DataFusion statement.
/// Parameter types (by position) and result columns (name, wire type).
pub type Description = (Vec<Option<DataType>>, Vec<(String, Type)>);

/// A result column's wire type: its Arrow type's, or bpchar for a
/// `char(n)` column shown as it is.
fn wire_type(f: &datafusion::arrow::datatypes::Field) -> Type {
    if f.metadata().contains_key(shard_router::sql::BPCHAR_WIDTH) {
        Type::BPCHAR
    } else if crate::pgtypeof::is_regtype(f) {
        Type::REGTYPE
    } else if let Some(v) = f.metadata().get(crate::pgcatalog::batch::VECTOR_TYPE) {
        if v == "oidvector" {
            Type::OID_VECTOR
        } else {
            Type::INT2_VECTOR
        }
    } else {
        arrow_to_pg(f.data_type())
    }
}

/// The result columns' wire types as the statement runs: from the plan
/// after the analyzer rules (PostgreSQL's types: `date + interval` is a
/// timestamp), without the hidden scale columns; `None` where the plan
/// cannot be analyzed before its parameters are known.
pub fn analyzed_types(ctx: &SessionContext, plan: &LogicalPlan) -> Option<Vec<Type>> {
    if matches!(plan, LogicalPlan::Explain(_) | LogicalPlan::Analyze(_)) {
        return None;
    }
    let state = ctx.state();
    let analyzed = state
        .analyzer()
        .execute_and_check(plan.clone(), state.config_options(), |_, _| {})
        .ok()?;
    Some(
        analyzed
            .schema()
            .fields()
            .iter()
            .filter(|f| !f.name().starts_with(crate::dscale::OUTPUT_SCALE))
            .map(|f| wire_type(f))
            .collect(),
    )
}

pub fn describe(plan: &LogicalPlan) -> Result<Description> {
    let params = plan.get_parameter_types().map_err(map_df_error)?;
    let mut ptypes: Vec<(usize, Option<DataType>)> = params
        .into_iter()
        .filter_map(|(k, v)| shard_router::sql::placeholder_index(&k).map(|i| (i, v)))
        .collect();
    ptypes.sort_by_key(|(i, _)| *i);
    let n = ptypes.last().map(|(i, _)| i + 1).unwrap_or(0);
    let mut out = vec![None; n];
    for (i, t) in ptypes {
        out[i] = t;
    }
    cast_parameter_types(plan, &mut out);
    any_parameter_types(plan, &mut out);
    let fields = match plan {
        LogicalPlan::Explain(_) | LogicalPlan::Analyze(_) => {
            vec![("QUERY PLAN".to_string(), Type::TEXT)]
        }
        _ => plan
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), wire_type(f)))
            .collect(),
    };
    Ok((out, fields))
}

/// A parameter DataFusion could not type, written cast (`$1::bigint`), is
/// of the cast's type, as PostgreSQL types it (the first such cast).
fn cast_parameter_types(plan: &LogicalPlan, out: &mut [Option<DataType>]) {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::logical_expr::expr::{Cast, TryCast};
    use datafusion::logical_expr::Expr;
    let _ = plan.apply_with_subqueries(|node| {
        node.apply_expressions(|e| {
            e.apply(|x| {
                let (inner, ty) = match x {
                    Expr::Cast(Cast { expr, field }) => (expr, field.data_type()),
                    Expr::TryCast(TryCast { expr, field }) => (expr, field.data_type()),
                    _ => return Ok(TreeNodeRecursion::Continue),
                };
                if let Expr::Placeholder(p) = inner.as_ref() {
                    if let Some(slot) =
                        shard_router::sql::placeholder_index(&p.id).and_then(|i| out.get_mut(i))
                    {
                        if slot.is_none() {
                            *slot = Some(ty.clone());
                        }
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
}

/// `x = ANY($1)`: the parameter is an array of `x`'s type, as PostgreSQL
/// types it (DataFusion plans `array_has($1, x)` and types `$1` as an
/// element, so a client's list, `{1,2,3}`, would be read as one value).
fn any_parameter_types(plan: &LogicalPlan, out: &mut [Option<DataType>]) {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::logical_expr::{Expr, ExprSchemable};
    let _ = plan.apply_with_subqueries(|node| {
        let inputs = node.inputs();
        let Some(input) = inputs.first() else {
            return Ok(TreeNodeRecursion::Continue);
        };
        let schema = input.schema().clone();
        node.apply_expressions(|e| {
            e.apply(|x| {
                let Expr::ScalarFunction(f) = x else {
                    return Ok(TreeNodeRecursion::Continue);
                };
                if f.func.name() != "array_has" || f.args.len() != 2 {
                    return Ok(TreeNodeRecursion::Continue);
                }
                let (Expr::Placeholder(p), Ok(elem)) = (&f.args[0], f.args[1].get_type(&schema))
                else {
                    return Ok(TreeNodeRecursion::Continue);
                };
                if let Some(slot) =
                    shard_router::sql::placeholder_index(&p.id).and_then(|i| out.get_mut(i))
                {
                    if !matches!(slot, Some(DataType::List(_))) {
                        let field = datafusion::arrow::datatypes::Field::new_list_field(elem, true);
                        *slot = Some(DataType::List(Arc::new(field)));
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    });
}

pub use super::colnames::pg_column_names;
