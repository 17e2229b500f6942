//! `INSERT ... SELECT`: the query runs first (fast path or DataFusion,
//! reading what the statement's snapshot sees), its rows are completed
//! with defaults and sequence values, and written in batches in the
//! session's transaction or in one implicit transaction, so the statement
//! is all or nothing. Rows pass through the compute node: at most
//! [`MAX_ROWS`] per statement (54000 beyond).

use common::{Datum, Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{Query, Statement};
use shard_router::txn::{Branches, ShardAccess};

use crate::plan::{InsertPlan, PlanKind};
use crate::rows::RowFiller;
use crate::session::{Output, Session};

/// Rows one INSERT ... SELECT may move through the compute node.
pub const MAX_ROWS: usize = 2_000_000;

const BATCH_ROWS: usize = 1000;

/// A value of a query's answer: decoded (fast path) or as text (DataFusion).
pub enum Cell {
    Datum(Datum),
    Text(Option<String>),
}

impl Cell {
    /// The value as `ty` (text read as PostgreSQL's input of the type).
    pub fn into_datum(self, ty: &common::SqlType) -> Result<Datum> {
        match self {
            Cell::Datum(d) => d.coerce(ty),
            Cell::Text(None) => Ok(Datum::Null),
            Cell::Text(Some(s)) => Datum::parse(&s, ty),
        }
    }
}

impl Session {
    /// Runs a query of this session and returns its rows (at most `limit`;
    /// 54000 beyond).
    pub(crate) async fn query_rows(&mut self, q: &Query, limit: usize) -> Result<Vec<Vec<Cell>>> {
        let stmt = Statement::Query(Box::new(q.clone()));
        let plan = crate::plan::plan_statement(&self.router, &self.scope(), &stmt, &[]).await?;
        self.plan_rows(&plan, &[], limit, "the query of INSERT ... SELECT")
            .await
    }

    /// Runs a planned query with `params` and returns its rows (at most
    /// `limit`; 54000 beyond, naming `what`).
    pub(crate) async fn plan_rows(
        &mut self,
        plan: &crate::plan::Plan,
        params: &[Datum],
        limit: usize,
        what: &str,
    ) -> Result<Vec<Vec<Cell>>> {
        use futures::TryStreamExt;
        let too_many = || Error::Sql {
            state: SqlState("54000"),
            message: format!("{what} returned more than {limit} rows"),
        };
        match &plan.kind {
            PlanKind::FastSelect(p) => match self.execute_fast_select(p, params).await? {
                Output::Rows(rows) => {
                    if rows.len() > limit {
                        return Err(too_many());
                    }
                    Ok(rows
                        .into_iter()
                        .map(|r| r.into_iter().map(Cell::Datum).collect())
                        .collect())
                }
                _ => Err(Error::internal("a query answered without rows")),
            },
            PlanKind::DataFusion(..) => {
                let mut stream = self.start_datafusion(plan, params).await?;
                let mut out = vec![];
                while let Some(b) = stream
                    .try_next()
                    .await
                    .map_err(crate::errors::map_df_error)?
                {
                    if out.len() + b.num_rows() > limit {
                        return Err(too_many());
                    }
                    for r in 0..b.num_rows() {
                        out.push(
                            b.columns()
                                .iter()
                                .map(|c| Cell::Text(crate::pgtypes::arrow_text(c, r)))
                                .collect(),
                        );
                    }
                }
                Ok(out)
            }
            _ => Err(Error::unsupported(format!("this query in {what}"))),
        }
    }

    pub(crate) async fn execute_insert_select(
        &mut self,
        p: &InsertPlan,
        q: &Query,
        params: &[Datum],
    ) -> Result<Output> {
        let t = p.table.clone();
        let source = match &p.source_plan {
            Some(sp) => {
                self.plan_rows(sp, params, MAX_ROWS, "the query of INSERT ... SELECT")
                    .await?
            }
            None => self.query_rows(q, MAX_ROWS).await?,
        };
        if let Some(r) = source.first() {
            for (ci, c) in t.columns.iter().enumerate() {
                if c.identity == Some(meta::Identity::Always)
                    && p.column_map[ci].is_some_and(|j| j < r.len())
                {
                    return Err(crate::plan::dml::identity_always_insert(&c.name));
                }
            }
            if r.len() > p.target_columns {
                return Err(Error::Syntax {
                    message: "INSERT has more expressions than target columns".into(),
                    position: None,
                });
            }
        }
        let (access, implicit) = match self.access() {
            ShardAccess::Txn(b) => (ShardAccess::Txn(b), None),
            _ => {
                let b = std::sync::Arc::new(Branches::new(self.router.node_id, None, false));
                (ShardAccess::Txn(b.clone()), Some(b))
            }
        };
        let access = shard_router::txn::StatementAccess::new(access, self.lock_timeout_secs())
            .in_activity(self.fence_generation());
        let clock = self.clock();
        let mut count = 0usize;
        let mut returned: Vec<Vec<Datum>> = vec![];
        let result = async {
            let mut source = source.into_iter();
            loop {
                let batch: Vec<Vec<Cell>> = source.by_ref().take(BATCH_ROWS).collect();
                if batch.is_empty() {
                    break;
                }
                // Sequence values of the batch's defaulted columns, in row
                // order.
                let mut sequenced = vec![];
                for (ci, col) in t.columns.iter().enumerate() {
                    let mut values = std::collections::VecDeque::new();
                    if let Some(seq) = &col.sequence {
                        for row in &batch {
                            if p.column_map[ci].is_none_or(|j| j >= row.len()) {
                                values.push_back(self.next_source_value(seq).await?);
                            }
                        }
                    }
                    sequenced.push(values);
                }
                let mut filler = RowFiller::new(&t, &clock, sequenced);
                let mut rows = Vec::with_capacity(batch.len());
                for row in batch {
                    let mut cells: Vec<Option<Cell>> = row.into_iter().map(Some).collect();
                    let mut full = Vec::with_capacity(t.columns.len());
                    for (ci, col) in t.columns.iter().enumerate() {
                        let given = match p.column_map[ci].and_then(|j| cells.get_mut(j)) {
                            Some(c) => match c.take() {
                                Some(c) => Some(c.into_datum(&col.ty)?),
                                None => None,
                            },
                            None => None,
                        };
                        full.push(filler.value(ci, given)?);
                    }
                    rows.push(full);
                }
                let on = crate::plan::conflict::bind(p, &rows, &[])?;
                let placement = self.router.placement();
                let returns = !p.returning.is_empty() || p.returning_exprs.is_some();
                // With ON CONFLICT, RETURNING shows the rows as the
                // shards hold them after the statement (see dml.rs).
                if returns && p.on_conflict != shard_router::route::OnConflict::Error {
                    let batches =
                        shard_router::route::insert_batches(&placement, &t, &rows, &on, true)?;
                    let stored = self
                        .write_returning(&t, &rows, batches, Some(&access))
                        .await?;
                    count += stored.len();
                    returned.extend(self.returned_rows(p, &stored, &[]).await?);
                    continue;
                }
                let work = shard_router::route::insert_statements_on(&placement, &t, &rows, &on)?;
                let written = shard_router::dist::write_in(&self.router, &access, work).await?;
                Box::pin(self.check_references_in(&t, &rows, &access)).await?;
                count += crate::plan::conflict::inserted(&placement, p, rows.len(), written);
                if returns {
                    returned.extend(self.returned_rows(p, &rows, &[]).await?);
                }
            }
            Ok::<_, Error>(())
        }
        .await;
        if let Some(b) = implicit {
            match &result {
                Ok(()) => {
                    let _shield =
                        crate::cancel::Shield::raise(self.pid, self.statement_generation)?;
                    b.finish_detached(self.router.clone(), true).await?;
                }
                Err(_) => {
                    let _ = b.finish(&self.router, false).await;
                }
            }
        }
        result?;
        if p.returning.is_empty() && p.returning_exprs.is_none() {
            return Ok(Output::Command {
                tag: "INSERT 0".into(),
                rows: Some(count),
            });
        }
        Ok(Output::Rows(returned))
    }
}
