//! Running DataFusion statements: the session's contexts (one per lock
//! mode, rebuilt when the catalog version or the schema moves), parameter
//! values, execution, and EXPLAIN's text with the SQL each shard received.

use std::sync::Arc;

use common::{Datum, Error, Result};
use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{ParamValues, ScalarValue};
use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::sqlparser::ast::Statement;

use crate::errors::map_df_error;
use crate::plan::df::{context_for, describe, logical_plan};
use crate::session::Session;

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
pub(crate) async fn run(
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

impl Session {
    /// Plans (or reuses the cached plan of) and runs a DataFusion statement
    /// in the session's context.
    pub(crate) async fn run_datafusion(
        &mut self,
        prepared_id: u64,
        stmt: &Statement,
        lock: Option<&'static str>,
        params: &[Datum],
    ) -> Result<Vec<RecordBatch>> {
        if self.failed {
            return Err(Error::InFailedTransaction);
        }
        let armed = self.arm_statement();
        let res = self
            .run_datafusion_armed(prepared_id, stmt, lock, params)
            .await;
        self.statement_ended(armed, res.is_ok());
        res
    }

    async fn run_datafusion_armed(
        &mut self,
        prepared_id: u64,
        stmt: &Statement,
        lock: Option<&'static str>,
        params: &[Datum],
    ) -> Result<Vec<RecordBatch>> {
        *self.access_cell.write() = self.access();
        let version = self.router.catalog().version;
        let schema = self.current_schema();
        let reuse = matches!(&self.df_ctx, Some((v, s, l, _)) if *v == version && *s == schema && *l == lock);
        if !reuse {
            self.df_ctx = Some((version, schema, lock, context(self, lock)?));
            self.df_plans.clear();
        }
        let ctx = match &self.df_ctx {
            Some((.., c)) => c.clone(),
            None => return Err(Error::internal("no DataFusion context")),
        };
        let cached = self.df_plans.get(&prepared_id).map(|(_, lp)| lp.clone());
        let lp = match cached {
            Some(lp) => lp,
            None => logical_plan(&ctx, stmt).await?,
        };
        if prepared_id != 0 {
            if self.df_plans.len() > 1000 {
                self.df_plans.clear();
            }
            self.df_plans.insert(prepared_id, (version, lp.clone()));
        }
        run(&ctx, lp, params, &self.scan_log).await
    }
}
