//! Execution of planned statements against a session: the dispatch here,
//! DDL ([`ddl`]), DML and TRUNCATE ([`dml`]), the single-table fast path
//! ([`fast`]), DataFusion statements ([`datafusion`]) and COPY ([`copy`]).
//! Shards are reached only through `shard_router` (`shard_router::dist`
//! for rendered statements, its scans for DataFusion).

pub mod admin;
pub mod alter;
pub mod block_ddl;
pub mod comment;
pub mod cursor;
pub mod ddl;
pub mod ddl_change;
pub mod df;
pub mod dml;
pub mod drops;
pub mod fast;
pub mod foreign_keys;
#[cfg(test)]
mod golden;
pub mod insert_select;
pub mod readwrite;
pub mod roles;
pub mod runner;
pub mod sequence;
pub mod system;
pub mod views;

use common::{Datum, Error, Result};
use datafusion::sql::sqlparser::ast::Statement;

use crate::plan::{Plan, PlanKind};

use crate::session::{Output, Session};

impl Session {
    /// Runs a planned statement with decoded parameters, keeping the
    /// transaction state machine as PostgreSQL does (25P02 after an error).
    pub async fn execute(&mut self, plan: &Plan, params: &[Datum]) -> Result<Output> {
        if self.failed && !plan.kind.allowed_when_failed() {
            return Err(Error::InFailedTransaction);
        }
        let armed = !matches!(
            plan.kind,
            PlanKind::Commit
                | PlanKind::Rollback
                | PlanKind::Begin { .. }
                | PlanKind::Set { .. }
                | PlanKind::Reset(_)
                | PlanKind::Show { .. }
                | PlanKind::Noop
                | PlanKind::Empty
        ) && self.arm_statement();
        let res = self.execute_inner(plan, params).await;
        self.statement_ended(armed, res.is_ok());
        res.map_err(|e| crate::errors::foreign_key_error(e, &self.router.catalog()))
    }

    async fn execute_inner(&mut self, plan: &Plan, params: &[Datum]) -> Result<Output> {
        match &plan.kind {
            PlanKind::Empty | PlanKind::Noop => Ok(Output::Command {
                tag: plan.tag.into(),
                rows: None,
            }),
            PlanKind::Begin {
                isolation,
                read_only,
            } => Ok(self.begin(*isolation, *read_only)),
            PlanKind::Commit => {
                let r = self.commit().await;
                let committed = matches!(r, Ok(Output::TxnEnd("COMMIT")));
                self.end_block_ddl(committed).await;
                r
            }
            PlanKind::Rollback => {
                let r = self.rollback().await;
                self.end_block_ddl(false).await;
                r
            }
            PlanKind::Savepoint(name) | PlanKind::RollbackTo(name) | PlanKind::Release(name) => {
                let out = self.savepoint_command(plan, name).await?;
                self.savepoint_block_ddl(&plan.kind, name);
                Ok(out)
            }
            PlanKind::Set { name, value } => self.set(name, value),
            PlanKind::Reset(name) => self.reset(name.as_deref(), plan.tag),
            PlanKind::Show { name } => self.show(name),
            PlanKind::AlterSystem(a) => self.alter_system(a).await,
            PlanKind::Ddl(stmt) if matches!(**stmt, Statement::Truncate(_)) => {
                let Statement::Truncate(t) = &**stmt else {
                    return Err(Error::internal("not a TRUNCATE"));
                };
                self.execute_truncate(t).await?;
                Ok(Output::Command {
                    tag: "TRUNCATE TABLE".into(),
                    rows: None,
                })
            }
            PlanKind::Maintenance {
                table,
                analyze,
                vacuum,
            } => {
                if *vacuum && self.txn.is_some() {
                    return Err(Error::Sql {
                        state: common::SqlState("25001"),
                        message: "VACUUM cannot run inside a transaction block".into(),
                    });
                }
                if *analyze {
                    self.execute_analyze(table.as_ref()).await?;
                }
                Ok(Output::Command {
                    tag: plan.tag.into(),
                    rows: None,
                })
            }
            PlanKind::Ddl(stmt) => {
                let tag = if self.txn.is_some() {
                    self.ddl_in_block(stmt).await?
                } else {
                    self.execute_ddl(stmt).await?
                };
                Ok(Output::Command { tag, rows: None })
            }
            PlanKind::Insert(p) => self.execute_insert(p, params).await,
            PlanKind::SequenceSelect(items) => self.execute_sequence_select(items, params).await,
            PlanKind::Admin(call) => self.execute_admin(call, params).await,
            PlanKind::Write(p) => {
                let n = self.execute_write(p, params).await?;
                Ok(Output::Command {
                    tag: plan.tag.into(),
                    rows: Some(n),
                })
            }
            PlanKind::FastSelect(p) => self.execute_fast_select(p, params).await,
            PlanKind::ReadWrite(p) => self.execute_read_write(p, &plan.fields, params).await,
            PlanKind::CopyIn(p) => {
                self.copy_in = Some(crate::session::copy::CopyIn::new(
                    p.clone(),
                    self.txn.clone(),
                    self.router.node_id,
                    self.clock(),
                    self.lock_timeout_secs(),
                ));
                Ok(Output::CopyIn(p.fields))
            }
            PlanKind::DataFusion(..)
            | PlanKind::CopyOut(..)
            | PlanKind::DeclareCursor { .. }
            | PlanKind::Fetch { .. }
            | PlanKind::CloseCursor(_) => {
                Err(Error::internal("DataFusion plans run in the server"))
            }
        }
    }
}
