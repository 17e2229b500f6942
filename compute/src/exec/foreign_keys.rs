//! The session's side of foreign keys the compute node checks
//! (`meta::Enforcement::Compute`; the locking reads are
//! `shard_router::dist::check_references` / `check_unreferenced`): the
//! implicit transaction a checked write outside a transaction block runs
//! in, so the write and its check commit together; the check of an
//! INSERT's rows; the validation of existing rows when such a key is
//! added. Checks run at the end of each write batch, before the statement
//! returns (PostgreSQL's `NO ACTION` checks at the end of the statement).

use std::sync::Arc;

use common::{Datum, Error, Result, SqlState};
use meta::{Catalog, ForeignKeyDef, TableDef};

use shard_router::txn::{Branches, StatementAccess};

use crate::session::Session;

/// ON CONFLICT on a table whose keys are checked here: refused, since a
/// skipped or updated row would be checked as if inserted.
pub fn insert_supported(catalog: &Catalog, p: &crate::plan::InsertPlan) -> Result<()> {
    if !matches!(p.on_conflict, shard_router::route::OnConflict::Error)
        && !catalog.checked_foreign_keys(p.table.id, true).is_empty()
    {
        return Err(Error::unsupported(
            "INSERT ... ON CONFLICT into a table with a foreign key to a table on other shards",
        ));
    }
    Ok(())
}

impl Session {
    /// The rows an INSERT wrote (full rows of its table) reference rows
    /// that exist: checked when the compute node enforces a key of its
    /// table, in the statement's transaction.
    pub(crate) async fn check_inserted(
        &mut self,
        p: &crate::plan::InsertPlan,
        rows: &[Vec<Datum>],
    ) -> Result<()> {
        if self
            .router
            .catalog()
            .checked_foreign_keys(p.table.id, true)
            .is_empty()
        {
            return Ok(());
        }
        let access = self.statement_access();
        shard_router::dist::check_references(&self.router, &p.table, rows, &access).await
    }

    /// Existing rows of `child` whose key `parent` lacks, when the key is
    /// added: one anti-join (run as any query, across shards) finds the
    /// first; 23503 then, as PostgreSQL's validation.
    pub(crate) async fn validate_foreign_key(
        &mut self,
        child: &TableDef,
        parent: &TableDef,
        fk: &ForeignKeyDef,
    ) -> Result<()> {
        use crate::plan::names::quoted_ident as q;
        let table = |t: &TableDef| format!("{}.{}", q(&t.schema), q(&t.name));
        let not_null: Vec<String> = fk
            .columns
            .iter()
            .map(|c| format!("c.{} IS NOT NULL", q(c)))
            .collect();
        let matched: Vec<String> = fk
            .columns
            .iter()
            .zip(&fk.ref_columns)
            .map(|(c, r)| format!("p.{} = c.{}", q(r), q(c)))
            .collect();
        let sql = format!(
            "SELECT 1 FROM {} c WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {}) LIMIT 1",
            table(child),
            not_null.join(" AND "),
            table(parent),
            matched.join(" AND ")
        );
        let stmt = datafusion::sql::sqlparser::parser::Parser::parse_sql(
            &crate::dialect::TesseraDialect,
            &sql,
        )
        .map_err(Error::internal)?
        .pop()
        .ok_or_else(|| Error::internal("empty foreign key check"))?;
        let plan = crate::plan::plan_statement(&self.router, &self.scope(), &stmt, &[]).await?;
        if !self
            .plan_rows(&plan, &[], 1, "the foreign key check")
            .await?
            .is_empty()
        {
            return Err(Error::Sql {
                state: SqlState::FOREIGN_KEY_VIOLATION,
                message: format!(
                    "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                    child.name, fk.name
                ),
            });
        }
        Ok(())
    }

    /// `check_references` when `t` has keys checked here.
    pub(crate) async fn check_references_in(
        &mut self,
        t: &TableDef,
        rows: &[Vec<Datum>],
        access: &StatementAccess,
    ) -> Result<()> {
        if self
            .router
            .catalog()
            .checked_foreign_keys(t.id, true)
            .is_empty()
        {
            return Ok(());
        }
        shard_router::dist::check_references(&self.router, t, rows, access).await
    }

    /// An implicit transaction for one statement whose writes to `t` are
    /// checked here, when the session has none open: the write and its
    /// check then commit together (`end_statement_txn`).
    pub(crate) async fn statement_txn(&mut self, t: &TableDef) -> Option<Arc<Branches>> {
        if self.txn.is_some() || !self.router.catalog().checks_foreign_keys(t.id) {
            return None;
        }
        if let Some(stale) = self.stmt_txn.take() {
            let _ = stale.finish(&self.router, false).await;
        }
        let b = Arc::new(Branches::new(self.router.node_id, None, false));
        self.stmt_txn = Some(b.clone());
        Some(b)
    }

    /// Commits (when `ok`) or rolls back the implicit transaction of
    /// `statement_txn`.
    pub(crate) async fn end_statement_txn(
        &mut self,
        implicit: Option<Arc<Branches>>,
        ok: bool,
    ) -> Result<()> {
        let Some(b) = implicit else {
            return Ok(());
        };
        self.stmt_txn = None;
        if ok {
            let _shield = crate::cancel::Shield::raise(self.pid, self.statement_generation)?;
            b.finish_detached(self.router.clone(), true).await
        } else {
            let _ = b.finish(&self.router, false).await;
            Ok(())
        }
    }
}
