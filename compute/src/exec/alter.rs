//! `ALTER TABLE`, under meta's DDL lock: the plan (`plan::alter`) made
//! against the catalog read after the lock is held, PostgreSQL's checks on
//! existing rows, then the shards and the catalog (see ARCHITECTURE.md,
//! "ALTER TABLE").

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::AlterTable;
use meta::{Catalog, TableDef};
use shard_router::Router;

use crate::plan::alter::{analyze, AlterPlan, RowCheck};
use crate::plan::resolve_table;
use crate::session::Session;

use super::ddl_change::DdlChange;

impl Session {
    pub(crate) async fn execute_alter(&mut self, at: &AlterTable) -> Result<()> {
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, &at.to_string()).await?;
        // The catalog as of the lock: no other DDL can change it now.
        let catalog = txn.catalog().await?;
        let table = match resolve_table(&catalog, &at.name, &self.current_schema()) {
            Ok(t) => t,
            Err(_) if at.if_exists => return Ok(()),
            Err(e) => return Err(e),
        };
        refuse_breaking_a_view(at, &catalog, &table)?;
        let default = crate::default_distribution();
        let unenforced = self.settings.typed().unenforced_foreign_keys;
        let plan = analyze(at, &table, &catalog, default, &self.clock(), unenforced)?;
        check_existing_rows(&router, &table, &plan).await?;
        // Each kind orders its shard work and the catalog commit its own
        // way (`commit`, undoing the shards when the commit fails); the
        // reload comes after, for all.
        match plan {
            AlterPlan::Nothing => return Ok(()),
            AlterPlan::AddForeignKey { mut fk, parent } => {
                fk.id = txn.add_foreign_key(&fk).await?;
                if fk.enforcement == meta::Enforcement::Compute {
                    Box::pin(self.validate_foreign_key(&table, &parent, &fk)).await?;
                }
                if fk.enforcement == meta::Enforcement::Shards {
                    // Existing rows without a referenced row: 23503.
                    shard_router::placement::foreign_key(&router, &table, &parent, &fk, true)
                        .await?;
                }
                if let Err(e) = txn.commit().await {
                    if fk.enforcement == meta::Enforcement::Shards {
                        let _ = shard_router::placement::foreign_key(
                            &router, &table, &parent, &fk, false,
                        )
                        .await;
                    }
                    return Err(e);
                }
            }
            AlterPlan::DropForeignKey { fk, parent } => {
                txn.drop_foreign_key(fk.id).await?;
                if fk.enforcement == meta::Enforcement::Shards {
                    shard_router::placement::foreign_key(&router, &table, &parent, &fk, false)
                        .await?;
                }
                txn.commit().await?;
            }
            AlterPlan::Change {
                new,
                renamed,
                fill,
                new_sequences,
                ..
            } => {
                let sql = shard_router::placement::alter_clauses(&table, &new, &renamed, &fill)?;
                shard_router::placement::alter_table(&router, &table, &sql).await?;
                let committed = async {
                    txn.update_table(&new, &new_sequences).await?;
                    txn.commit().await
                }
                .await;
                if let Err(e) = committed {
                    // The catalog kept the old definition: so do the shards.
                    let back = shard_router::placement::AlterSql {
                        forward: sql.undo.clone(),
                        undo: sql.forward.clone(),
                    };
                    if let Err(u) = shard_router::placement::alter_table(&router, &new, &back).await
                    {
                        tracing::warn!("ALTER TABLE {}: undo failed: {u}", table.name);
                    }
                    return Err(e);
                }
            }
            AlterPlan::Rename { new } => {
                shard_router::placement::rename_table(&router, &table, &new).await?;
                let committed = async {
                    txn.update_table(&new, &[]).await?;
                    txn.commit().await
                }
                .await;
                if let Err(e) = committed {
                    let _ = shard_router::placement::rename_table(&router, &new, &table).await;
                    return Err(e);
                }
            }
            AlterPlan::Redistribute {
                mut new, layout, ..
            } => {
                let source = router.placement();
                new.id = txn.renumber_table(table.id).await?;
                let target = source.with_layout(new.id, layout.clone());
                let moved =
                    shard_router::placement::copy_rows(&router, &table, &new, &target).await?;
                txn.update_table(&new, &[]).await?;
                txn.set_layout(new.id, &layout).await?;
                txn.commit().await?;
                for (shard, db, tbl) in target.physical_tables(&new)? {
                    let _ = router.meta.unqueue_drop(shard, &db, &tbl).await;
                }
                tracing::info!(
                    "{} redistributed ({} -> {}): {} rows moved",
                    table.qualified_name(),
                    table.distribution.kind(),
                    new.distribution.kind(),
                    moved.checksum.rows
                );
                if let Err(e) = moved.finish(&router, &source, &table).await {
                    tracing::warn!(
                        "{}: old layout left for recovery to drop: {e}",
                        table.qualified_name()
                    );
                }
            }
        }
        router.reload().await?;
        Ok(())
    }
}

/// A view's stored query names the table and its columns: changes that
/// would break it are refused while a view reads the table.
fn refuse_breaking_a_view(at: &AlterTable, catalog: &Catalog, table: &TableDef) -> Result<()> {
    if let Some(v) = catalog.views_reading(&table.schema, &table.name).first() {
        use datafusion::sql::sqlparser::ast::AlterTableOperation as O;
        let breaks = at.operations.iter().any(|o| {
            matches!(
                o,
                O::RenameTable { .. }
                    | O::RenameColumn { .. }
                    | O::DropColumn { .. }
                    | O::AlterColumn {
                        op: datafusion::sql::sqlparser::ast::AlterColumnOperation::SetDataType { .. },
                        ..
                    }
            )
        });
        if breaks {
            return Err(Error::unsupported(format!(
                "renaming, dropping or retyping columns of a table a view reads (view {} reads {}; drop the view first)",
                v.name, table.name
            )));
        }
    }
    Ok(())
}

/// PostgreSQL's checks of the plan on existing rows (NOT NULL on a column
/// with NULLs, a sequence-fed column added to a table with rows).
async fn check_existing_rows(router: &Router, table: &TableDef, plan: &AlterPlan) -> Result<()> {
    let checks: &[RowCheck] = match plan {
        AlterPlan::Change { checks, .. } | AlterPlan::Redistribute { checks, .. } => checks,
        _ => &[],
    };
    for c in checks {
        let (column, null_in) = match c {
            RowCheck::Empty { column } | RowCheck::EmptyForSequence { column } => (column, None),
            RowCheck::NoNulls { column } => (column, Some(column.as_str())),
        };
        if shard_router::placement::any_row(router, table, null_in).await? {
            if matches!(c, RowCheck::EmptyForSequence { .. }) {
                return Err(Error::unsupported(format!(
                    "adding column \"{column}\" fed by a sequence to a table with rows (add it without the default, fill it, then SET DEFAULT)"
                )));
            }
            return Err(Error::Sql {
                state: SqlState::NOT_NULL_VIOLATION,
                message: format!(
                    "column \"{column}\" of relation \"{}\" contains null values",
                    table.name
                ),
            });
        }
    }
    Ok(())
}
