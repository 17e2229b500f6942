//! The distributed path: statements DataFusion plans and runs over the
//! `ShardTableProvider`s, with session functions PostgreSQL clients expect.

use std::sync::Arc;

use common::{Datum, Error, Result, SqlState};
use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, ParamValues, ScalarValue};
use datafusion::execution::context::{SessionConfig, SessionContext};
use datafusion::logical_expr::{create_udf, ColumnarValue, LogicalPlan, Volatility};
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::Statement;
use pgwire::api::Type;
use shard_router::scan::{TesseraCatalog, CATALOG_NAME};

use crate::pgtypes::arrow_to_pg;
use crate::session::Session;

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
fn runtime() -> Result<Arc<datafusion::execution::runtime_env::RuntimeEnv>> {
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

/// A DataFusion context bound to this session's catalog snapshot and shard
/// access (autocommit or the open transaction's branches).
pub fn context(session: &Session, lock: Option<&'static str>) -> Result<SessionContext> {
    let ctx = context_for(
        &session.router,
        session.access_cell.clone(),
        session.current_schema(),
        &session.database,
        &session.user,
        lock,
        session.scan_log.clone(),
    )?;
    // After DataFusion's own rules: hand whole fragments to the shards.
    if session.pushdown() {
        ctx.add_optimizer_rule(Arc::new(shard_router::pushdown::ShardPushdown));
    }
    Ok(ctx)
}

pub fn context_for(
    router: &Arc<shard_router::Router>,
    access: shard_router::txn::SharedAccess,
    schema: String,
    database: &str,
    user: &str,
    lock: Option<&'static str>,
    log: shard_router::scan::ScanLog,
) -> Result<SessionContext> {
    let mut config = SessionConfig::new();
    // PostgreSQL reads 1.5 as numeric, not double precision.
    config.options_mut().sql_parser.parse_float_as_decimal = true;
    let config = config
        .with_default_catalog_and_schema(CATALOG_NAME, &schema)
        .with_create_default_catalog_and_schema(false)
        .with_information_schema(false)
        .with_target_partitions(4);
    // Memory is bounded by a pool shared by the node's queries; operators
    // that can spill (sorts, aggregates, joins) spill to disk at the limit.
    let ctx = SessionContext::new_with_config_rt(config, runtime()?);
    ctx.register_catalog(
        CATALOG_NAME,
        Arc::new(TesseraCatalog {
            catalog: router.catalog(),
            router: router.clone(),
            access,
            lock,
            log,
        }),
    );
    const_udf(
        &ctx,
        "version",
        format!(
            "PostgreSQL {} (Tessera {}) on x86_64-pc-linux-gnu",
            crate::SERVER_VERSION,
            env!("CARGO_PKG_VERSION")
        ),
    );
    const_udf(&ctx, "current_database", database.to_string());
    const_udf(&ctx, "current_schema", schema);
    const_udf(&ctx, "current_user", user.to_string());
    const_udf(&ctx, "session_user", user.to_string());
    Ok(ctx)
}

pub fn map_df_error(e: DataFusionError) -> Error {
    map_df_root(e.find_root())
}

fn map_df_root(e: &DataFusionError) -> Error {
    match e {
        DataFusionError::External(inner) => match inner.downcast_ref::<Error>() {
            Some(e) => e.clone(),
            None => Error::Execution {
                message: inner.to_string(),
            },
        },
        DataFusionError::NotImplemented(m) => Error::unsupported(m.clone()),
        DataFusionError::SQL(e, _) => Error::Syntax {
            message: e.to_string(),
            position: None,
        },
        DataFusionError::Plan(m) => plan_error(m.clone()),
        DataFusionError::SchemaError(e, _) => {
            let m = e.to_string();
            if m.contains("No field named") {
                let name = m.split("No field named ").nth(1).unwrap_or(&m);
                let name = name
                    .split(['.', '\n'])
                    .next()
                    .unwrap_or(name)
                    .trim_matches('"');
                Error::ColumnNotFound {
                    name: name.to_string(),
                }
            } else if m.contains("mbiguous") {
                Error::TxnState {
                    state: SqlState::AMBIGUOUS_COLUMN,
                    message: m,
                }
            } else {
                Error::Execution { message: m }
            }
        }
        DataFusionError::ArrowError(e, _) => {
            let m = e.to_string();
            if m.contains("Divide by zero") {
                Error::TxnState {
                    state: SqlState::DIVISION_BY_ZERO,
                    message: "division by zero".into(),
                }
            } else if m.contains("overflow") {
                Error::NumericOutOfRange { message: m }
            } else if m.contains("Cast error") || m.contains("Cannot cast") {
                Error::InvalidText {
                    ty: "value".into(),
                    value: m,
                }
            } else {
                Error::Execution { message: m }
            }
        }
        DataFusionError::Execution(m) => {
            if m.contains("Divide by zero") || m.contains("Division by zero") {
                Error::TxnState {
                    state: SqlState::DIVISION_BY_ZERO,
                    message: "division by zero".into(),
                }
            } else {
                Error::Execution { message: m.clone() }
            }
        }
        other => Error::Execution {
            message: other.to_string(),
        },
    }
}

fn plan_error(m: String) -> Error {
    if let Some(rest) = m
        .split("table '")
        .nth(1)
        .filter(|_| m.contains("not found"))
    {
        let name = rest.split('\'').next().unwrap_or(rest);
        return Error::TableNotFound {
            name: name.rsplit('.').next().unwrap_or(name).to_string(),
        };
    }
    if m.contains("Invalid function") || m.contains("not found in registry") {
        return Error::TxnState {
            state: SqlState::UNDEFINED_FUNCTION,
            message: m,
        };
    }
    if m.contains("Cannot infer common argument type")
        || m.contains("Cannot coerce")
        || m.contains("There isn't a common type")
        || m.contains("No function matches")
    {
        return Error::TypeMismatch { message: m };
    }
    Error::TxnState {
        state: SqlState::DATATYPE_MISMATCH,
        message: m,
    }
}

/// Plans a statement; returns the logical plan.
pub async fn logical_plan(ctx: &SessionContext, stmt: &Statement) -> Result<LogicalPlan> {
    ctx.state()
        .statement_to_plan(DFStatement::Statement(Box::new(stmt.clone())))
        .await
        .map_err(map_df_error)
}

/// Parameter types and result columns of a DataFusion statement.
/// Parameter types (by position) and result columns (name, wire type).
pub type Description = (Vec<Option<DataType>>, Vec<(String, Type)>);

pub fn describe(plan: &LogicalPlan) -> Result<Description> {
    let params = plan.get_parameter_types().map_err(map_df_error)?;
    let mut ptypes: Vec<(usize, Option<DataType>)> = params
        .into_iter()
        .filter_map(|(k, v)| shard_router::route::placeholder_index(&k).map(|i| (i, v)))
        .collect();
    ptypes.sort_by_key(|(i, _)| *i);
    let n = ptypes.last().map(|(i, _)| i + 1).unwrap_or(0);
    let mut out = vec![None; n];
    for (i, t) in ptypes {
        out[i] = t;
    }
    let fields = match plan {
        LogicalPlan::Explain(_) | LogicalPlan::Analyze(_) => {
            vec![("QUERY PLAN".to_string(), Type::TEXT)]
        }
        _ => plan
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), arrow_to_pg(f.data_type())))
            .collect(),
    };
    Ok((out, fields))
}

fn scalar_of(d: &Datum, ty: Option<&DataType>) -> Result<ScalarValue> {
    let v = match d {
        Datum::Null => ScalarValue::Null,
        Datum::Bool(b) => ScalarValue::Boolean(Some(*b)),
        Datum::Int(i) => ScalarValue::Int64(Some(*i)),
        Datum::Float(f) => ScalarValue::Float64(Some(*f)),
        Datum::Decimal(d) => ScalarValue::Decimal128(Some(d.mantissa()), 38, d.scale() as i8),
        Datum::Text(s) => ScalarValue::Utf8(Some(s.clone())),
        Datum::Bytes(b) => ScalarValue::Binary(Some(b.clone())),
        Datum::Date(d) => ScalarValue::Date32(Some(common::value::days_since_epoch(*d) as i32)),
        Datum::Timestamp(t) => {
            ScalarValue::TimestampMicrosecond(Some(t.and_utc().timestamp_micros()), None)
        }
        Datum::TimestampTz(t) => {
            ScalarValue::TimestampMicrosecond(Some(t.timestamp_micros()), Some("+00:00".into()))
        }
    };
    match ty {
        Some(t) if v.data_type() != *t => v.cast_to(t).map_err(|_| Error::InvalidText {
            ty: t.to_string(),
            value: format!("{d:?}"),
        }),
        _ => Ok(v),
    }
}

/// Runs a planned statement with parameters; returns its batches.
pub async fn run(
    ctx: &SessionContext,
    plan: LogicalPlan,
    params: &[Datum],
    log: &shard_router::scan::ScanLog,
) -> Result<Vec<RecordBatch>> {
    log.lock().clear();
    let (types, _) = describe(&plan)?;
    let plan = if types.is_empty() {
        plan
    } else {
        let values: Vec<ScalarValue> = params
            .iter()
            .enumerate()
            .map(|(i, d)| scalar_of(d, types.get(i).and_then(|t| t.as_ref())))
            .collect::<Result<_>>()?;
        plan.with_param_values(ParamValues::List(
            values.into_iter().map(Into::into).collect(),
        ))
        .map_err(map_df_error)?
    };
    let is_explain = matches!(plan, LogicalPlan::Explain(_) | LogicalPlan::Analyze(_));
    let df = ctx.execute_logical_plan(plan).await.map_err(map_df_error)?;
    let batches = df.collect().await.map_err(map_df_error)?;
    if is_explain {
        // One text column, one line per row, like PostgreSQL.
        let mut lines = vec![];
        for b in &batches {
            if let (Some(kind), Some(text)) = (
                b.column(0).as_any().downcast_ref::<StringArray>(),
                b.column(1).as_any().downcast_ref::<StringArray>(),
            ) {
                for i in 0..b.num_rows() {
                    lines.push(format!("{}:", kind.value(i)));
                    for l in text.value(i).lines() {
                        lines.push(format!("  {l}"));
                    }
                }
            }
        }
        // The SQL each shard receives (and, under ANALYZE, what it returned).
        let scans = log.lock().clone();
        if !scans.is_empty() {
            lines.push("shard_scans:".to_string());
            for s in scans {
                let mut l = format!("  {}: {}", s.shard, s.sql);
                if s.done {
                    l.push_str(&format!(
                        "  [rows={} bytes={} time={:.3} ms]",
                        s.rows,
                        s.bytes,
                        s.micros as f64 / 1000.0
                    ));
                }
                lines.push(l);
            }
        }
        let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(vec![
            datafusion::arrow::datatypes::Field::new("QUERY PLAN", DataType::Utf8, false),
        ]));
        let arr = StringArray::from(lines);
        return RecordBatch::try_new(schema, vec![Arc::new(arr)])
            .map(|b| vec![b])
            .map_err(Error::internal);
    }
    Ok(batches)
}
