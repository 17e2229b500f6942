//! Running DataFusion statements: the session's execution context,
//! parameter values, streamed execution settled when the stream ends, and
//! EXPLAIN's text with the SQL each shard received.

use std::sync::Arc;

use std::sync::atomic::{AtomicU8, Ordering};

use common::{Datum, Error, Result};
use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{ParamValues, ScalarValue};
use datafusion::execution::context::SessionContext;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use shard_router::txn::StatementAccess;

use crate::errors::map_df_error;
use crate::plan::df::{context_for, describe};
use crate::plan::Plan;
use crate::session::txn::{Pending, FAILED, RUNNING, SUCCEEDED};
use crate::session::Session;

/// The session's execution context: with `tessera.pushdown` on,
/// fragments go to the shards. Plans come from `plan` (made once per
/// prepared statement); this context only optimizes and runs them, so it
/// lives as long as the session's pushdown setting. What a statement's
/// scans run with (its `StatementAccess`) is given with each execution.
pub fn context(session: &Session) -> Result<SessionContext> {
    execution_context(&session.router, &session.scope(), session.pushdown())
}

/// The execution context of a session of `scope`, fragments pushed to
/// the shards when `pushdown`: the planning context plus the optimizer
/// rules statements run with.
pub(crate) fn execution_context(
    router: &Arc<shard_router::Router>,
    scope: &crate::plan::df::Scope,
    pushdown: bool,
) -> Result<SessionContext> {
    let ctx = context_for(router, scope, None)?;
    // (PostgreSQL's semantics are analyzer rules of every context.)
    ctx.add_optimizer_rule(Arc::new(crate::decorrelation::SameNameCorrelation));
    // After DataFusion's own rules: hand whole fragments to the shards.
    if pushdown {
        ctx.add_optimizer_rule(Arc::new(shard_router::dist::ShardPushdown));
    }
    Ok(ctx)
}

fn scalar_of(d: &Datum, ty: Option<&DataType>) -> Result<ScalarValue> {
    if let (Datum::Text(s), Some(DataType::List(f))) = (d, ty) {
        return array_scalar(s, f.data_type());
    }
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

/// An array parameter's text (`{1,2,3}`) as a list of `elem` values;
/// bad text is 22P02, as PostgreSQL's `array_in` reports it.
fn array_scalar(s: &str, elem: &DataType) -> Result<ScalarValue> {
    let bad = || Error::InvalidText {
        ty: format!("{}[]", crate::pgtypes::arrow_to_pg(elem).name()),
        value: s.to_string(),
    };
    let items = crate::pgtext::array_elements(s)?.ok_or_else(bad)?;
    let values = items
        .into_iter()
        .map(|e| match e {
            Some(e) => ScalarValue::Utf8(Some(e)).cast_to(elem).map_err(|_| bad()),
            None => ScalarValue::try_from(elem).map_err(|_| bad()),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ScalarValue::List(ScalarValue::new_list_nullable(
        &values, elem,
    )))
}

/// A planned statement: EXPLAIN's answer, EXPLAIN ANALYZE's plan to run
/// (then shown), or the physical plan to run.
pub(crate) enum Ran {
    Explained(SendableRecordBatchStream),
    Analyze(Explain, TaskContext),
    Plan(
        Arc<dyn datafusion::physical_plan::ExecutionPlan>,
        TaskContext,
    ),
}

/// A statement under EXPLAIN, planned.
pub(crate) struct Explain {
    optimized: LogicalPlan,
    physical: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    verbose: bool,
}

/// Plans a statement with parameters down to its physical plan (EXPLAIN
/// [ANALYZE]: its text, once planned or run).
pub(crate) async fn run(
    ctx: &SessionContext,
    plan: LogicalPlan,
    params: &[Datum],
    client_types: &[pgwire::api::Type],
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Ran> {
    let (mut types, _) = describe(&plan)?;
    // A parameter the client typed as an array (`id = ANY($1)` with a
    // Python list of ints: int8[]) is read as that array, as PostgreSQL
    // reads it, whatever element type the statement suggests.
    for (t, c) in types.iter_mut().zip(client_types) {
        if let Some(e) = crate::wirevals::array_element_arrow(c) {
            let field = datafusion::arrow::datatypes::Field::new_list_field(e, true);
            *t = Some(DataType::List(Arc::new(field)));
        }
    }
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
    let (inner, analyze, verbose) = match &plan {
        LogicalPlan::Explain(e) => (e.plan.clone(), false, e.verbose),
        LogicalPlan::Analyze(a) => (a.input.clone(), true, a.verbose),
        _ => {
            // `now()` is the transaction's start, as in PostgreSQL
            // (DataFusion's would be this statement's).
            let mut state = ctx.state();
            state.execution_props_mut().query_execution_start_time = Some(now);
            let df = datafusion::dataframe::DataFrame::new(state, plan);
            let task = df.task_ctx();
            let physical = df.create_physical_plan().await.map_err(map_df_error)?;
            return Ok(Ran::Plan(physical, task));
        }
    };
    let state = ctx.state();
    let planned = Explain {
        optimized: state.optimize(&inner).map_err(map_df_error)?,
        physical: state
            .create_physical_plan(&inner)
            .await
            .map_err(map_df_error)?,
        verbose,
    };
    Ok(if analyze {
        Ran::Analyze(planned, TaskContext::from(&state))
    } else {
        Ran::Explained(explain(planned, false)?)
    })
}

impl Session {
    /// `task` given the access a statement about to run `physical` reads
    /// with: one consistent cut when it reads two or more shards
    /// (`Session::read_access`), else the session's. The scans read it
    /// from the task when they start (which may be while the stream
    /// runs); a cut lives as long as the task, that is, the stream.
    async fn with_read_access(
        &self,
        physical: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
        task: TaskContext,
    ) -> Result<Arc<TaskContext>> {
        let wants = shard_router::dist::plain_reads(physical);
        let access: StatementAccess = self.read_access(&wants).await?;
        let config = task
            .session_config()
            .clone()
            .with_extension(Arc::new(access));
        Ok(Arc::new(task.with_session_config(config)))
    }
}

/// EXPLAIN [ANALYZE] as one text column, one line per row, like
/// PostgreSQL: the optimized logical plan, the physical plan (with its
/// metrics under ANALYZE, once it has run) and `shard_scans:`, the SQL
/// each shard receives, read from the plan's `ShardScanExec`s (with rows,
/// bytes and time under ANALYZE).
fn explain(planned: Explain, analyze: bool) -> Result<SendableRecordBatchStream> {
    let Explain {
        optimized,
        physical,
        verbose,
    } = planned;
    let mut lines = vec!["logical_plan:".to_string()];
    lines.extend(
        optimized
            .display_indent()
            .to_string()
            .lines()
            .map(|l| format!("  {l}")),
    );
    lines.extend(physical_lines(&physical, analyze, verbose));
    let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(vec![
        datafusion::arrow::datatypes::Field::new("QUERY PLAN", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(lines))])
        .map_err(Error::internal)?;
    Ok(Box::pin(RecordBatchStreamAdapter::new(
        schema,
        futures::stream::once(async move { Ok(batch) }),
    )))
}

/// EXPLAIN's lines after the logical plan: `physical_plan:` (with its
/// metrics under `analyze`, once it has run) and `shard_scans:`, the SQL
/// each shard receives, read from the plan's `ShardScanExec`s (with rows,
/// bytes and time under `analyze`).
pub(crate) fn physical_lines(
    physical: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    analyze: bool,
    verbose: bool,
) -> Vec<String> {
    use datafusion::physical_plan::display::DisplayableExecutionPlan;
    let mut lines = vec!["physical_plan:".to_string()];
    let shown = if analyze {
        DisplayableExecutionPlan::with_metrics(physical.as_ref())
    } else {
        DisplayableExecutionPlan::new(physical.as_ref())
    };
    lines.extend(
        shown
            .indent(verbose)
            .to_string()
            .lines()
            .map(|l| format!("  {l}")),
    );
    let scans = shard_router::dist::shard_scans(physical);
    if !scans.is_empty() {
        lines.push("shard_scans:".to_string());
        for s in scans {
            let mut l = format!("  {}: {}", s.shard, s.sql);
            if let Some((rows, bytes, ms)) = s.ran {
                l.push_str(&format!("  [rows={rows} bytes={bytes} time={ms:.3} ms]"));
            }
            lines.push(l);
        }
    }
    lines
}

impl Session {
    /// Runs a DataFusion statement's plan in the session's context. The
    /// rows stream: the statement is settled (its transaction failed or
    /// not) when the stream ends, see [`Session::settle`]; past the
    /// statement's deadline the stream ends with 57014.
    pub(crate) async fn run_datafusion(
        &mut self,
        plan: &Plan,
        params: &[Datum],
    ) -> Result<RowStream> {
        if self.failed {
            return Err(Error::InFailedTransaction);
        }
        let armed = self.arm_statement();
        match self.start_datafusion(plan, params).await {
            Ok(stream) => {
                let done = Arc::new(AtomicU8::new(RUNNING));
                self.pending = Some(Pending {
                    armed,
                    done: done.clone(),
                });
                let interrupt = (self.interrupt.clone(), self.statement_generation);
                Ok(settling(stream, done, self.statement_deadline, interrupt))
            }
            Err(e) => {
                self.statement_ended(armed, false);
                Err(e)
            }
        }
    }

    pub(crate) async fn start_datafusion(
        &mut self,
        plan: &Plan,
        params: &[Datum],
    ) -> Result<SendableRecordBatchStream> {
        let pushdown = self.pushdown();
        let ctx = match &self.df_ctx {
            Some((p, c)) if *p == pushdown => c.clone(),
            _ => {
                let c = context(self)?;
                self.df_ctx = Some((pushdown, c.clone()));
                c
            }
        };
        // `plan_statement` makes every DataFusion and COPY TO plan with its
        // logical plan.
        let lp = plan
            .logical
            .as_ref()
            .map(|lp| (**lp).clone())
            .ok_or_else(|| Error::internal("a DataFusion plan without its logical plan"))?;
        // char(n) columns shown as they are get their trailing blanks back.
        let widths: Vec<Option<usize>> = lp
            .schema()
            .fields()
            .iter()
            .map(|f| {
                f.metadata()
                    .get(shard_router::sql::BPCHAR_WIDTH)
                    .and_then(|n| n.parse().ok())
            })
            .collect();
        let stream = match run(
            &ctx,
            lp,
            params,
            &plan.param_types,
            self.clock().transaction,
        )
        .await?
        {
            Ran::Explained(s) => s,
            Ran::Analyze(planned, task) => {
                // Run as the statement alone would be.
                let task = self.with_read_access(&planned.physical, task).await?;
                datafusion::physical_plan::collect(planned.physical.clone(), task)
                    .await
                    .map_err(map_df_error)?;
                explain(planned, true)?
            }
            Ran::Plan(physical, task) => {
                let task = self.with_read_access(&physical, task).await?;
                datafusion::physical_plan::execute_stream(physical, task).map_err(map_df_error)?
            }
        };
        let stream = with_numeric_scales(stream)?;
        if widths.iter().all(Option::is_none) {
            return Ok(stream);
        }
        use futures::StreamExt;
        let schema = stream.schema();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            stream.map(move |b| b.and_then(|b| pad_bpchar(b, &widths))),
        )))
    }
}

/// The stream with quotient columns printed at their per-row scales
/// (`dscale`'s `__pg_out_scale_<k>` companions, dropped here) as text.
fn with_numeric_scales(stream: SendableRecordBatchStream) -> Result<SendableRecordBatchStream> {
    use datafusion::arrow::datatypes::{Field, Schema};
    let schema = stream.schema();
    let mut scales: Vec<(usize, usize)> = vec![];
    let mut keep = vec![];
    for (i, f) in schema.fields().iter().enumerate() {
        match f.name().strip_prefix(crate::dscale::OUTPUT_SCALE) {
            Some(k) => {
                let k: usize = k
                    .parse()
                    .map_err(|_| Error::internal("a numeric scale column without its column"))?;
                scales.push((k, i));
            }
            None => keep.push(i),
        }
    }
    if scales.is_empty() {
        return Ok(stream);
    }
    let fields: Vec<Field> = keep
        .iter()
        .map(|&i| {
            let f = schema.field(i);
            if scales.iter().any(|(k, _)| *k == i) {
                Field::new(f.name(), DataType::Utf8, true).with_metadata(f.metadata().clone())
            } else {
                f.clone()
            }
        })
        .collect();
    let out = Arc::new(Schema::new(fields));
    let out2 = out.clone();
    use futures::StreamExt;
    Ok(Box::pin(RecordBatchStreamAdapter::new(
        out,
        stream.map(move |b| {
            let b = b?;
            let mut cols = vec![];
            for &i in &keep {
                let col = b.column(i);
                match scales.iter().find(|(k, _)| *k == i) {
                    Some((_, s)) => cols.push(quotient_text(col, b.column(*s))?),
                    None => cols.push(col.clone()),
                }
            }
            RecordBatch::try_new(out2.clone(), cols).map_err(Into::into)
        }),
    )))
}

fn quotient_text(values: &ArrayRef, scales: &ArrayRef) -> datafusion::error::Result<ArrayRef> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::{Decimal128Type, Int32Type};
    let (DataType::Decimal128(_, s), DataType::Int32) = (values.data_type(), scales.data_type())
    else {
        return Err(datafusion::error::DataFusionError::Internal(
            "a numeric quotient column of an unexpected type".into(),
        ));
    };
    let v = values.as_primitive::<Decimal128Type>();
    let sc = scales.as_primitive::<Int32Type>();
    let text: StringArray = (0..v.len())
        .map(|i| {
            (!v.is_null(i)).then(|| {
                let d = if sc.is_null(i) {
                    *s as i32
                } else {
                    sc.value(i)
                };
                crate::numeric::scaled_text(v.value(i), *s, d)
            })
        })
        .collect();
    Ok(Arc::new(text))
}

/// Pads the string columns of `b` that have a width to that many
/// characters, as PostgreSQL shows `char(n)` values.
fn pad_bpchar(b: RecordBatch, widths: &[Option<usize>]) -> datafusion::error::Result<RecordBatch> {
    let mut cols = b.columns().to_vec();
    for (c, w) in cols.iter_mut().zip(widths) {
        let (Some(w), Some(a)) = (w, c.as_any().downcast_ref::<StringArray>()) else {
            continue;
        };
        let padded: StringArray = a
            .iter()
            .map(|v| {
                v.map(|s| {
                    let n = s.chars().count();
                    if n >= *w {
                        s.to_string()
                    } else {
                        format!("{s}{}", " ".repeat(w - n))
                    }
                })
            })
            .collect();
        *c = Arc::new(padded);
    }
    RecordBatch::try_new(b.schema(), cols).map_err(Into::into)
}

/// A DataFusion statement's rows, errors already Tessera's.
pub type RowStream = std::pin::Pin<Box<dyn futures::Stream<Item = Result<RecordBatch>> + Send>>;

/// `stream` with its end recorded in `done`, cut at `deadline` (57014,
/// statement timeout) or by a cancel request after the interrupt's
/// generation (57014, user request).
fn settling(
    stream: SendableRecordBatchStream,
    done: Arc<AtomicU8>,
    deadline: Option<tokio::time::Instant>,
    interrupt: (Arc<crate::cancel::Interrupt>, u64),
) -> RowStream {
    use futures::StreamExt;
    Box::pin(futures::stream::unfold(
        Some((stream, done, interrupt)),
        move |state| async move {
            let (mut stream, done, interrupt) = state?;
            let timeout = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            let next = tokio::select! {
                n = stream.next() => n,
                _ = timeout => {
                    done.store(FAILED, Ordering::Release);
                    return Some((Err(Error::StatementTimeout), None));
                }
                _ = interrupt.0.past(interrupt.1) => {
                    done.store(FAILED, Ordering::Release);
                    return Some((Err(Error::Canceled), None));
                }
            };
            match next {
                Some(Ok(b)) => Some((Ok(b), Some((stream, done, interrupt)))),
                Some(Err(e)) => {
                    done.store(FAILED, Ordering::Release);
                    Some((Err(map_df_error(e)), None))
                }
                None => {
                    done.store(SUCCEEDED, Ordering::Release);
                    None
                }
            }
        },
    ))
}
