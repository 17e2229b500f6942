//! Running a two-step UPDATE/DELETE (`plan::readwrite`): step 1's rows
//! read and locked, step 2's keyed writes, in the session's transaction or
//! one implicit transaction committed with the statement (all or
//! nothing).

use std::collections::HashSet;
use std::sync::Arc;

use common::{Datum, Error, Result};
use pgwire::api::Type;
use shard_router::txn::{Branches, ShardAccess};

use super::insert_select::{Cell, MAX_ROWS};
use crate::plan::readwrite::{Action, ReadWritePlan};
use crate::session::{Output, Session};

/// Rows written per batch of shard statements.
const BATCH_ROWS: usize = 500;

/// A RETURNING value as the wire encodes its column's type.
fn wire_datum(c: Cell, ty: &Type) -> Result<Datum> {
    let s = match c {
        Cell::Datum(d) => return Ok(d),
        Cell::Text(None) => return Ok(Datum::Null),
        Cell::Text(Some(s)) => s,
    };
    // numeric keeps the scale its text has (NaN stays text).
    if *ty == Type::NUMERIC {
        return Ok(s
            .parse::<rust_decimal::Decimal>()
            .map(Datum::Decimal)
            .unwrap_or(Datum::Text(s)));
    }
    match crate::pgtypes::sql_type_of(ty) {
        Some(t) => Datum::parse(&s, &t),
        None => Ok(Datum::Text(s)),
    }
}

impl Session {
    pub(crate) async fn execute_read_write(
        &mut self,
        p: &ReadWritePlan,
        fields: &[(String, Type)],
        params: &[Datum],
    ) -> Result<Output> {
        if let Some(stale) = self.stmt_txn.take() {
            let _ = stale.finish(&self.router, false).await;
        }
        let implicit = if self.txn.is_none() {
            let b = Arc::new(Branches::new(self.router.node_id, None, false));
            self.stmt_txn = Some(b.clone());
            Some(b)
        } else {
            None
        };
        let result = self.read_write_rows(p, fields, params).await;
        if let Some(b) = implicit {
            self.stmt_txn = None;
            match &result {
                Ok(_) => {
                    let _shield =
                        crate::cancel::Shield::raise(self.pid, self.statement_generation)?;
                    b.finish_detached(self.router.clone(), true).await?;
                }
                Err(_) => {
                    let _ = b.finish(&self.router, false).await;
                }
            }
        }
        let (count, returned) = result?;
        if p.returning == 0 {
            return Ok(Output::Command {
                tag: if matches!(p.action, Action::Delete(_)) {
                    "DELETE".into()
                } else {
                    "UPDATE".into()
                },
                rows: Some(count),
            });
        }
        Ok(Output::Rows(returned))
    }

    async fn read_write_rows(
        &mut self,
        p: &ReadWritePlan,
        fields: &[(String, Type)],
        params: &[Datum],
    ) -> Result<(usize, Vec<Vec<Datum>>)> {
        let step1 = p
            .prepared
            .clone()
            .ok_or_else(|| Error::internal("a two-step write without its query"))?;
        let t = p.table.clone();
        let rows = self
            .plan_rows(&step1, params, MAX_ROWS, "the rows of UPDATE or DELETE")
            .await?;
        let access = self.statement_access();
        if matches!(access.shards, ShardAccess::Autocommit) {
            return Err(Error::internal("a two-step write outside a transaction"));
        }
        let key_cols: Vec<usize> = t
            .primary_key
            .iter()
            .map(|k| {
                t.column_index(k)
                    .ok_or_else(|| Error::internal("key column"))
            })
            .collect::<Result<_>>()?;
        let (mut olds, mut news) = (vec![], vec![]);
        let (parent_checks, child_checks) = self.read_write_checks(p)?;
        let mut seen: HashSet<String> = HashSet::new();
        let mut count = 0usize;
        let mut returned = vec![];
        let mut work = vec![];
        let mut inserts: Vec<Vec<Datum>> = vec![];
        for row in rows {
            let mut cells = row.into_iter();
            let mut key = Vec::with_capacity(key_cols.len());
            for ci in &key_cols {
                let c = cells.next().ok_or_else(|| Error::internal("short row"))?;
                key.push(c.into_datum(&t.columns[*ci].ty)?);
            }
            // A target row met through several FROM rows changes once.
            if !seen.insert(format!("{key:?}")) {
                continue;
            }
            count += 1;
            let mut new_row = vec![];
            if p.has_new_row() {
                for col in &t.columns {
                    let c = cells.next().ok_or_else(|| Error::internal("short row"))?;
                    new_row.push(c.into_datum(&col.ty)?);
                }
            }
            if parent_checks {
                // The referenced key is the primary key (`write_checks`):
                // gone when the row is deleted or its key changes.
                let changed =
                    !p.has_new_row() || key_cols.iter().zip(&key).any(|(ci, v)| new_row[*ci] != *v);
                if changed {
                    let mut old = vec![Datum::Null; t.columns.len()];
                    for (ci, v) in key_cols.iter().zip(&key) {
                        old[*ci] = v.clone();
                    }
                    olds.push(old);
                }
            }
            if child_checks && p.has_new_row() {
                news.push(new_row.clone());
            }
            match &p.action {
                Action::Delete(w) => work.extend(self.write_work(w, &key)?),
                Action::Update { set, assigned } => {
                    let mut vals = Vec::with_capacity(assigned.len() + key.len());
                    for ci in assigned {
                        let v = new_row[*ci].clone();
                        crate::rows::check_value(&t, &t.columns[*ci], &v)?;
                        vals.push(v);
                    }
                    vals.extend(key);
                    work.extend(self.write_work(set, &vals)?);
                }
                Action::Move(delete) => {
                    for (col, v) in t.columns.iter().zip(&new_row) {
                        crate::rows::check_value(&t, col, v)?;
                    }
                    work.extend(self.write_work(delete, &key)?);
                    inserts.push(new_row);
                }
            }
            if p.returning > 0 {
                let skip = fields.len().saturating_sub(p.returning);
                returned.push(
                    cells
                        .zip(&fields[skip..])
                        .map(|(c, (_, ty))| wire_datum(c, ty))
                        .collect::<Result<Vec<_>>>()?,
                );
            }
            if work.len() >= BATCH_ROWS {
                self.flush_read_write(&t, &access, &mut work, &mut inserts)
                    .await?;
            }
        }
        self.flush_read_write(&t, &access, &mut work, &mut inserts)
            .await?;
        if !olds.is_empty() {
            Box::pin(shard_router::dist::check_unreferenced(
                &self.router,
                &t,
                &olds,
                &access,
            ))
            .await?;
        }
        if !news.is_empty() {
            Box::pin(shard_router::dist::check_references(
                &self.router,
                &t,
                &news,
                &access,
            ))
            .await?;
        }
        Ok((count, returned))
    }

    /// Whether the keys of a two-step write's table are checked here: as
    /// the referenced table (rows deleted or keys changed), as the
    /// referencing one (new rows).
    fn read_write_checks(&self, p: &ReadWritePlan) -> Result<(bool, bool)> {
        let catalog = self.router.catalog();
        let t = &p.table;
        let assigned: Option<Vec<String>> = match &p.action {
            Action::Delete(_) => None,
            Action::Update { assigned, .. } => Some(
                assigned
                    .iter()
                    .map(|i| t.columns[*i].name.clone())
                    .collect(),
            ),
            Action::Move(_) => Some(t.columns.iter().map(|c| c.name.clone()).collect()),
        };
        crate::plan::foreign_key::write_checks(&catalog, t, assigned.as_deref())?;
        Ok((
            !catalog.checked_foreign_keys(t.id, false).is_empty(),
            !catalog.checked_foreign_keys(t.id, true).is_empty(),
        ))
    }

    /// Writes a batch: deletes of moved rows before their inserts (a row
    /// that stays in its partition is deleted and inserted again).
    async fn flush_read_write(
        &mut self,
        t: &meta::TableDef,
        access: &shard_router::txn::StatementAccess,
        work: &mut Vec<shard_router::dist::ShardStatement>,
        inserts: &mut Vec<Vec<Datum>>,
    ) -> Result<()> {
        if !work.is_empty() {
            shard_router::dist::write_in(&self.router, access, std::mem::take(work)).await?;
        }
        if !inserts.is_empty() {
            let rows = std::mem::take(inserts);
            let ins = shard_router::route::insert_statements_on(
                &self.router.placement(),
                t,
                &rows,
                &shard_router::route::OnConflict::Error,
            )?;
            shard_router::dist::write_in(&self.router, access, ins).await?;
        }
        Ok(())
    }
}

impl Session {
    /// The RETURNING rows of stored rows: their columns, or the items'
    /// values computed by `plan::returning`'s query.
    pub(crate) async fn returned_rows(
        &mut self,
        p: &crate::plan::InsertPlan,
        rows: &[Vec<Datum>],
        statement_params: &[Datum],
    ) -> Result<Vec<Vec<Datum>>> {
        let Some(rx) = &p.returning_exprs else {
            return Ok(rows
                .iter()
                .map(|r| p.returning.iter().map(|i| r[*i].clone()).collect())
                .collect());
        };
        let types: Vec<Type> = rx
            .described
            .as_ref()
            .map(|d| d.fields.iter().map(|f| f.1.clone()).collect())
            .unwrap_or_default();
        let mut out = vec![];
        let k = statement_params.len();
        let per = crate::plan::returning::ReturningExprs::rows_per_query(&p.table, k);
        let client: Vec<Option<Type>> = rx
            .described
            .as_ref()
            .map(|d| d.param_types.iter().take(k).cloned().map(Some).collect())
            .unwrap_or_default();
        for chunk in rows.chunks(per) {
            // One row (the usual INSERT ... RETURNING): the query planned
            // at Parse is this one; more rows are planned here.
            let plan = match &rx.described {
                Some(d) if chunk.len() == 1 => d.clone(),
                _ => {
                    let stmt = rx.query(&p.table, chunk.len(), k)?;
                    Arc::new(
                        crate::plan::plan_statement(&self.router, &self.scope(), &stmt, &client)
                            .await?,
                    )
                }
            };
            let params = crate::plan::returning::params(statement_params, chunk);
            for row in self
                .plan_rows(&plan, &params, usize::MAX, "RETURNING")
                .await?
            {
                out.push(
                    row.into_iter()
                        .zip(&types)
                        .map(|(c, ty)| wire_datum(c, ty))
                        .collect::<Result<Vec<_>>>()?,
                );
            }
        }
        Ok(out)
    }
}
