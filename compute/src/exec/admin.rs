//! Runs the administrative functions (`plan::admin`): a partition move or
//! an undo, by this compute node as the CLI's process would run it
//! (`shard_router::placement::mover`), for a superuser, outside a
//! transaction block. The statement answers when the move has ended, with
//! one text row saying what it did.

use common::{Datum, Error, Result, ShardId, SqlState};
use datafusion::sql::sqlparser::ast::Expr;
use shard_router::placement::mover::{self, undo, MoveOptions, MoveRequest};

use crate::plan::admin::AdminCall;
use crate::plan::sequence::regclass_parts;
use crate::session::{Output, Session};

fn int_arg(e: &Expr, params: &[Datum], what: &str) -> Result<i64> {
    match shard_router::sql::eval_const(e, params)? {
        Datum::Int(i) => Ok(i),
        Datum::Text(t) => t.trim().parse().map_err(|_| invalid(what, &t)),
        other => Err(invalid(what, &format!("{other:?}"))),
    }
}

fn invalid(what: &str, value: &str) -> Error {
    Error::Sql {
        state: SqlState("22023"),
        message: format!("invalid {what}: {value}"),
    }
}

impl Session {
    pub(crate) async fn execute_admin(
        &mut self,
        call: &AdminCall,
        params: &[Datum],
    ) -> Result<Output> {
        if self.txn.is_some() {
            return Err(Error::Sql {
                state: SqlState::ACTIVE_TRANSACTION,
                message: format!("{} cannot run inside a transaction block", call.name()),
            });
        }
        if !crate::privileges::is_superuser(&self.router.catalog(), &self.user) {
            return Err(Error::Sql {
                state: SqlState::INSUFFICIENT_PRIVILEGE,
                message: format!("permission denied for function {}", call.name()),
            });
        }
        let text = match call {
            AdminCall::MovePartition(a) => {
                let [table, partition, to] = &**a;
                self.move_partition(table, partition, to, params).await?
            }
            AdminCall::UndoMove(id) => {
                let id = int_arg(id, params, "move id")?;
                let id = u64::try_from(id).map_err(|_| invalid("move id", &id.to_string()))?;
                let u = undo::undo_move(&self.router, id, &MoveOptions::default(), "undone by SQL")
                    .await?;
                format!(
                    "move {}: undone; the partition is back on shard{} ({} keys changed since the switch carried back, fence {} ms)",
                    u.id, u.shard.0, u.keys_caught_up, u.fence_ms
                )
            }
        };
        // This node's sessions see the new map at once.
        let _ = self.router.check_version().await;
        Ok(Output::Rows(vec![vec![Datum::Text(text)]]))
    }

    async fn move_partition(
        &mut self,
        table: &Expr,
        partition: &Expr,
        to: &Expr,
        params: &[Datum],
    ) -> Result<String> {
        let name = match shard_router::sql::eval_const(table, params)? {
            Datum::Text(t) => t,
            other => return Err(invalid("table name", &format!("{other:?}"))),
        };
        let (schema, table) = regclass_parts(&name, &self.current_schema())?;
        let catalog = self.router.catalog();
        let def = catalog.table(&schema, &table).ok_or_else(|| Error::Sql {
            state: SqlState::UNDEFINED_TABLE,
            message: format!("relation \"{name}\" does not exist"),
        })?;
        let slot = int_arg(partition, params, "partition")?;
        let to = int_arg(to, params, "shard")?;
        let (Ok(slot), Ok(to)) = (u32::try_from(slot), u32::try_from(to)) else {
            return Err(invalid("partition or shard", &format!("{slot}, {to}")));
        };
        let req = MoveRequest {
            tables: mover::group_of(&catalog, def)?,
            slot,
            to: ShardId(to),
        };
        let r = mover::move_slot(&self.router, &req, &MoveOptions::default()).await?;
        Ok(format!(
            "move {}: partition {} of {} table(s) from shard{} to shard{}, {} rows copied, {} keys caught up, fence {} ms; verified",
            r.id, r.slot, r.tables, r.from.0, r.to.0, r.rows, r.keys_caught_up, r.fence_ms
        ))
    }
}
