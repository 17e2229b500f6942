//! INSERT, UPDATE, DELETE and TRUNCATE: rows evaluated and rendered per
//! partition, written through `shard_router::dist` in the session's
//! transaction or an implicit one.

use common::{Datum, Error, Result};
use datafusion::sql::sqlparser::ast::Expr;
use meta::Distribution;
use shard_router::route::{OnConflict, Route};
use shard_router::sql::eval_value;

use crate::plan::{resolve_table, InsertPlan, WritePlan};

use crate::session::{Output, Session};

impl Session {
    /// INSERT; with its foreign keys checked here when the compute node
    /// enforces them (`foreign_keys`), in an implicit transaction outside
    /// a transaction block.
    pub(crate) async fn execute_insert(
        &mut self,
        p: &InsertPlan,
        params: &[Datum],
    ) -> Result<Output> {
        crate::exec::foreign_keys::insert_supported(&self.router.catalog(), p)?;
        let implicit = self.statement_txn(&p.table).await;
        let r = match &p.source {
            Some(q) => Box::pin(self.execute_insert_select(p, q, params)).await,
            None => Box::pin(self.insert_values(p, params)).await,
        };
        self.end_statement_txn(implicit, r.is_ok()).await?;
        r
    }

    async fn insert_values(&mut self, p: &InsertPlan, params: &[Datum]) -> Result<Output> {
        // `nextval('s')` among the values: each call evaluated now, in row
        // order, into a constant.
        let with_values;
        let p = if p.sequence_calls {
            let mut rows = p.rows.clone();
            for row in &mut rows {
                for e in row.iter_mut() {
                    if let Some(call) = crate::plan::sequence::sequence_call(e) {
                        let crate::plan::sequence::SeqCall::Nextval(n) = call? else {
                            return Err(Error::unsupported(
                                "sequence functions other than nextval in INSERT values",
                            ));
                        };
                        let v = self.nextval_of(&n, params).await?;
                        *e = Expr::value(datafusion::sql::sqlparser::ast::Value::Number(
                            v.to_string(),
                            false,
                        ));
                    } else if crate::plan::sequence::calls_sequence_function(&*e) {
                        return Err(Error::unsupported(
                            "a sequence function inside an expression in INSERT values",
                        ));
                    }
                }
            }
            with_values = InsertPlan {
                table: p.table.clone(),
                column_map: p.column_map.clone(),
                rows,
                sequence_calls: false,
                on_conflict: p.on_conflict.clone(),
                conflict_key: p.conflict_key.clone(),
                source: None,
                source_plan: None,
                target_columns: p.target_columns,
                returning: p.returning.clone(),
                returning_exprs: p.returning_exprs.clone(),
            };
            &with_values
        } else {
            p
        };
        let t = &p.table;
        // Sequence values first (they may need a round trip to meta), in
        // row order, so the rows themselves are evaluated without awaiting.
        let mut sequenced: Vec<std::collections::VecDeque<i64>> = vec![];
        for (ci, col) in t.columns.iter().enumerate() {
            let mut values = std::collections::VecDeque::new();
            if let Some(seq) = &col.sequence {
                for exprs in &p.rows {
                    if is_default_expr(p.column_map[ci].and_then(|j| exprs.get(j))) {
                        values.push_back(self.next_source_value(seq).await?);
                    }
                }
            }
            sequenced.push(values);
        }
        let heavy = p.rows.len() > 1000;
        let placement = self.router.placement();
        let returns = !p.returning.is_empty() || p.returning_exprs.is_some();
        // With ON CONFLICT, what RETURNING shows is what the shards hold
        // after the statement (the row updated, or only the rows inserted).
        let from_shards = returns && p.on_conflict != OnConflict::Error;
        let (rows, batches) = crate::cpu_bound(heavy, || -> Result<_> {
            let clock = self.clock();
            let rows = insert_rows(p, params, sequenced, &clock)?;
            let on = crate::plan::conflict::bind(p, &rows, params)?;
            let batches =
                shard_router::route::insert_batches(&placement, t, &rows, &on, from_shards)?;
            Ok((rows, batches))
        })?;
        if from_shards {
            let stored = self.write_returning(t, &rows, batches, None).await?;
            return Ok(Output::Rows(self.returned_rows(p, &stored, params).await?));
        }
        let work = batches.into_iter().map(|b| b.statement).collect();
        let written = self.run_writes(work).await?;
        Box::pin(self.check_inserted(p, &rows)).await?;
        if !returns {
            return Ok(Output::Command {
                tag: "INSERT 0".into(),
                rows: Some(crate::plan::conflict::inserted(
                    &placement,
                    p,
                    rows.len(),
                    written,
                )),
            });
        }
        Ok(Output::Rows(self.returned_rows(p, &rows, params).await?))
    }

    /// TRUNCATE as PostgreSQL's is: all of it or none of it, inside a
    /// transaction block too. Every partition of every named table is
    /// emptied by `DELETE` in one transaction (the session's, or an
    /// implicit one committed with 2PC), so a shard that fails leaves
    /// every table as it was. MariaDB's own TRUNCATE commits on each shard
    /// at once and cannot be undone: with one shard down it emptied two
    /// thirds of a table.
    pub(crate) async fn execute_truncate(
        &mut self,
        t: &datafusion::sql::sqlparser::ast::Truncate,
    ) -> Result<()> {
        let catalog = self.router.ensure_fresh().await?;
        let schema = self.current_schema();
        let mut tables = vec![];
        for target in &t.table_names {
            tables.push(resolve_table(&catalog, &target.name, &schema)?);
        }
        // As PostgreSQL: a table other tables' foreign keys reference is
        // truncated only with them (0A000), and referencing tables are
        // emptied first (InnoDB checks the keys row by row).
        let ids: Vec<common::TableId> = tables.iter().map(|t| t.id).collect();
        for table in &tables {
            if let Some(fk) = catalog
                .foreign_keys_of(table.id, false)
                .into_iter()
                .find(|f| !ids.contains(&f.table))
            {
                let child = catalog
                    .table_by_id(fk.table)
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
                return Err(Error::unsupported(format!(
                    "TRUNCATE of table \"{}\" referenced in a foreign key constraint of \"{child}\" (truncate them together)",
                    table.name
                )));
            }
        }
        let mut ordered = vec![];
        while !tables.is_empty() {
            // A table no remaining table's key references goes next.
            let i = tables
                .iter()
                .position(|t| {
                    !catalog
                        .foreign_keys_of(t.id, false)
                        .iter()
                        .any(|f| f.table != t.id && tables.iter().any(|o| o.id == f.table))
                })
                .unwrap_or(0);
            ordered.push(tables.remove(i));
        }
        let mut work = vec![];
        let placement = self.router.placement();
        for table in ordered {
            for (shard, p) in placement.partitions(&table)? {
                let mut sql = shard_router::sql::ShardSql::new();
                sql.keyword("DELETE FROM ")
                    .table(&table.schema, &table.physical_name(p));
                work.push((shard, sql.into_parts().0, vec![]));
            }
        }
        self.run_writes(work).await?;
        Ok(())
    }

    /// Runs rendered writes in the session's transaction, or as one
    /// implicit transaction when there are several.
    /// An implicit commit raises the session's cancel shield first (see
    /// `compute::cancel`).
    async fn run_writes(&mut self, work: Vec<shard_router::dist::ShardStatement>) -> Result<u64> {
        Ok(self.run_writes_returning(work, None).await?.affected)
    }

    /// [`Session::run_writes`] of statements ending in `RETURNING`, their
    /// rows decoded as `returning`.
    async fn run_writes_returning(
        &mut self,
        work: Vec<shard_router::dist::ShardStatement>,
        returning: Option<&[common::SqlType]>,
    ) -> Result<shard_router::dist::Written> {
        let (pid, since) = (self.pid, self.statement_generation);
        let access = self.statement_access();
        shard_router::dist::write_returning(&self.router, &access, work, returning, || {
            crate::cancel::Shield::raise(pid, since)
        })
        .await
    }

    /// Writes INSERT batches rendered with `RETURNING` (in the session's
    /// transaction or an implicit one, or through `access`) and gives
    /// back, in the order of `rows`, the rows the shards hold for them
    /// afterwards: one per row for DO UPDATE, the rows inserted for DO
    /// NOTHING.
    pub(crate) async fn write_returning(
        &mut self,
        t: &meta::TableDef,
        rows: &[Vec<Datum>],
        batches: Vec<shard_router::route::InsertBatch>,
        access: Option<&shard_router::txn::StatementAccess>,
    ) -> Result<Vec<Vec<Datum>>> {
        let types: Vec<common::SqlType> = t.columns.iter().map(|c| c.ty).collect();
        let work = batches.iter().map(|b| b.statement.clone()).collect();
        let written = match access {
            None => self.run_writes_returning(work, Some(&types)).await?,
            Some(a) => {
                shard_router::dist::write_in_returning(&self.router, a, work, Some(&types)).await?
            }
        };
        Ok(shard_router::route::returned_in_order(
            t,
            &batches,
            written.returned,
            rows,
        ))
    }

    pub(crate) async fn execute_write(&mut self, p: &WritePlan, params: &[Datum]) -> Result<usize> {
        let t = &p.table;
        let work = self.write_work(p, params)?;
        let n = self.run_writes(work).await?;
        // A mirror table's copies each report the same count.
        Ok(if matches!(t.distribution, Distribution::Mirror) {
            (n / self.router.placement().partition_count(t)?.max(1) as u64) as usize
        } else {
            n as usize
        })
    }

    /// The shard statements of a write plan with its parameters.
    pub(crate) fn write_work(
        &self,
        p: &WritePlan,
        params: &[Datum],
    ) -> Result<Vec<shard_router::dist::ShardStatement>> {
        let t = &p.table;
        let placement = self.router.placement();
        let parts: Vec<u32> = match p.route.resolve(t, params)? {
            Route::SinglePartition(x) => vec![x],
            Route::Partitions(v) => v,
            Route::Scatter | Route::Mirror => (0..placement.partition_count(t)?).collect(),
        };
        let with_clock;
        let params = if p.clock_values.is_empty() {
            params
        } else {
            let clock = self.clock();
            let mut all = params.to_vec();
            for (e, ty) in &p.clock_values {
                all.push(eval_value(e, &[], Some(&clock))?.coerce(ty)?);
            }
            with_clock = all;
            &with_clock[..]
        };
        let mut work = vec![];
        for part in parts {
            let (sql, order) = crate::plan::dml::slot_sql(&p.sql, t, part)?;
            let vals = shard_router::dist::bind(order, params)?;
            work.push((placement.shard_of(t, part)?, sql.clone(), vals));
        }
        Ok(work)
    }
}

/// Whether an INSERT leaves this column to its default (not given, or the
/// keyword `DEFAULT`).
fn is_default_expr(given: Option<&Expr>) -> bool {
    match given {
        None => true,
        Some(Expr::Identifier(i)) => {
            i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default")
        }
        Some(_) => false,
    }
}

/// The full rows (in column order) an INSERT plan stores (see
/// [`RowFiller`]).
fn insert_rows(
    p: &InsertPlan,
    params: &[Datum],
    sequenced: Vec<std::collections::VecDeque<i64>>,
    clock: &shard_router::sql::Clock,
) -> Result<Vec<Vec<Datum>>> {
    let t = &p.table;
    let mut filler = crate::rows::RowFiller::new(t, clock, sequenced);
    let mut rows: Vec<Vec<Datum>> = Vec::with_capacity(p.rows.len());
    for exprs in &p.rows {
        let mut row = Vec::with_capacity(t.columns.len());
        for ci in 0..t.columns.len() {
            let given = p.column_map[ci].and_then(|j| exprs.get(j));
            let v = if is_default_expr(given) {
                None
            } else {
                Some(match given {
                    Some(e) => eval_value(e, params, Some(clock))?,
                    None => Datum::Null,
                })
            };
            row.push(filler.value(ci, v)?);
        }
        rows.push(row);
    }
    Ok(rows)
}
