//! DDL inside a transaction block, as PostgreSQL users rely on it (psycopg2
//! and JDBC run with autocommit off, so an application's CREATE TABLE
//! arrives inside one). MariaDB's DDL commits at once, so Tessera
//! compensates (see ARCHITECTURE.md, "Transactional DDL"):
//!
//! * CREATE TABLE / INDEX / SEQUENCE / SCHEMA / VIEW, ALTER TABLE ... ADD
//!   COLUMN, COMMENT ON and DROP VIEW run at once and record their undo (DROP ...,
//!   DROP COLUMN, the previous comment);
//!   ROLLBACK (of the block, or to a savepoint before them), a failed
//!   COMMIT or the client's disconnect runs the undo, newest first.
//! * DROP TABLE / INDEX / SEQUENCE are checked at once and run after the
//!   block's COMMIT succeeded; ROLLBACK forgets them.
//! * ROLLBACK TO SAVEPOINT undoes what was created after the savepoint when
//!   the block ends, however it ends.
//!
//! Other DDL inside a block is refused (0A000).

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{AlterTableOperation, ObjectName, ObjectType, Statement};

use crate::plan::{object_parts, resolve_table};
use crate::session::{BlockDdl, Session};

use crate::plan::quoted_ident as ident;

use super::ddl_change::DdlChange;

fn parse_one(sql: &str) -> Result<Statement> {
    crate::dialect::parse(sql)
        .map_err(Error::internal)?
        .pop()
        .ok_or_else(|| Error::internal("no statement"))
}

impl Session {
    /// (schema, name) of a possibly qualified name.
    pub(crate) fn qualified(
        &self,
        name: &datafusion::sql::sqlparser::ast::ObjectName,
    ) -> (String, String) {
        let parts = object_parts(name);
        match parts.as_slice() {
            [n] => (self.current_schema(), n.clone()),
            [.., s, n] => (s.clone(), n.clone()),
            [] => (self.current_schema(), String::new()),
        }
    }

    /// Runs (or defers) one DDL statement inside the open block.
    pub(crate) async fn ddl_in_block(&mut self, stmt: &Statement) -> Result<String> {
        let catalog = self.router.ensure_fresh().await?;
        match stmt {
            Statement::Drop {
                object_type: ObjectType::View,
                names,
                ..
            } => return self.drop_views_in_block(stmt, names, &catalog).await,
            Statement::Drop {
                object_type: ObjectType::Table,
                names,
                if_exists,
                cascade,
                ..
            } => {
                self.drop_tables_in_block(stmt, names, *if_exists, *cascade, &catalog)
                    .await?;
                return Ok("DROP TABLE".into());
            }
            Statement::Drop {
                object_type: object_type @ (ObjectType::Index | ObjectType::Sequence),
                names,
                if_exists,
                ..
            } => {
                // Checked now (42P01 in the block, as PostgreSQL), run at
                // COMMIT.
                if !if_exists {
                    for n in names {
                        let (s, name) = self.qualified(n);
                        let found = match object_type {
                            ObjectType::Index => catalog.index_owner(&s, &name).is_some(),
                            _ => catalog.sequence(&s, &name).is_some(),
                        };
                        if !found {
                            return Err(Error::Sql {
                                state: common::SqlState::UNDEFINED_TABLE,
                                message: format!("relation \"{name}\" does not exist"),
                            });
                        }
                    }
                }
                self.block_ddl
                    .push(BlockDdl::Deferred(Box::new(stmt.clone())));
                return Ok(match object_type {
                    ObjectType::Index => "DROP INDEX",
                    _ => "DROP SEQUENCE",
                }
                .into());
            }
            _ => {}
        }
        let undo = self.undo_of(stmt, &catalog)?;
        let tag = self.execute_ddl(stmt).await?;
        if let Some(sql) = undo {
            self.block_ddl
                .push(BlockDdl::Undo(Box::new(parse_one(&sql)?)));
        }
        Ok(tag)
    }

    /// The statement that undoes `stmt` (run at once in the block), if
    /// it makes anything; 0A000 for DDL a block refuses.
    fn undo_of(&self, stmt: &Statement, catalog: &meta::Catalog) -> Result<Option<String>> {
        let touched = self.txn.as_ref().is_some_and(|t| !t.shards().is_empty());
        let before_writes = |what: &str| -> Result<()> {
            if touched {
                return Err(Error::unsupported(format!(
                    "{what} inside a transaction block after it wrote or read shards (run it first in the block, or outside one)"
                )));
            }
            Ok(())
        };
        Ok(match stmt {
            Statement::CreateTable(ct) => {
                let (s, n) = self.qualified(&ct.name);
                (catalog.table(&s, &n).is_none())
                    .then(|| format!("DROP TABLE IF EXISTS {}.{}", ident(&s), ident(&n)))
            }
            Statement::CreateIndex(ci) => {
                before_writes("CREATE INDEX")?;
                let table = resolve_table(catalog, &ci.table_name, &self.current_schema())?;
                ci.name.as_ref().map(|n| {
                    let name = object_parts(n).last().cloned().unwrap_or_default();
                    format!(
                        "DROP INDEX IF EXISTS {}.{}",
                        ident(&table.schema),
                        ident(&name)
                    )
                })
            }
            Statement::CreateView(cv) => {
                let (s, n) = self.qualified(&cv.name);
                if catalog.view(&s, &n).is_some() && cv.or_replace {
                    return Err(Error::unsupported(
                        "CREATE OR REPLACE VIEW of an existing view inside a transaction block",
                    ));
                }
                (catalog.view(&s, &n).is_none() && catalog.table(&s, &n).is_none())
                    .then(|| format!("DROP VIEW IF EXISTS {}.{}", ident(&s), ident(&n)))
            }
            Statement::CreateSequence { name, .. } => {
                let (s, n) = self.qualified(name);
                (catalog.sequence(&s, &n).is_none())
                    .then(|| format!("DROP SEQUENCE IF EXISTS {}.{}", ident(&s), ident(&n)))
            }
            Statement::Comment {
                object_type,
                object_name,
                ..
            } => match self.comment_target(catalog, stmt)? {
                Some((kind, id, column)) => {
                    let old = catalog
                        .comments
                        .get(&(kind.to_string(), id, column))
                        .map(|c| format!("'{}'", c.replace('\'', "''")))
                        .unwrap_or_else(|| "NULL".into());
                    let name = object_parts(object_name)
                        .iter()
                        .map(|p| ident(p))
                        .collect::<Vec<_>>()
                        .join(".");
                    Some(format!("COMMENT ON {object_type} {name} IS {old}"))
                }
                None => None,
            },
            Statement::CreateSchema { schema_name, .. } => {
                let name = schema_name.to_string();
                let name = name.trim_matches('"').to_string();
                (!catalog.schemas.contains(&name))
                    .then(|| format!("DROP SCHEMA IF EXISTS {}", ident(&name)))
            }
            Statement::AlterTable(at)
                if at
                    .operations
                    .iter()
                    .all(|o| matches!(o, AlterTableOperation::AddColumn { .. })) =>
            {
                before_writes("ALTER TABLE")?;
                let table = resolve_table(catalog, &at.name, &self.current_schema())?;
                let added: Vec<String> = at
                    .operations
                    .iter()
                    .filter_map(|o| match o {
                        AlterTableOperation::AddColumn { column_def, .. } => {
                            let n = shard_router::sql::normalize_ident(&column_def.name);
                            table.column_index(&n).is_none().then_some(n)
                        }
                        _ => None,
                    })
                    .collect();
                (!added.is_empty()).then(|| {
                    format!(
                        "ALTER TABLE {}.{} {}",
                        ident(&table.schema),
                        ident(&table.name),
                        added
                            .iter()
                            .map(|c| format!("DROP COLUMN IF EXISTS {}", ident(c)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            }
            other => {
                let text = other.to_string();
                let words: Vec<&str> = text.split_whitespace().take(2).collect();
                return Err(Error::unsupported(format!(
                    "{} inside a transaction block",
                    words.join(" ")
                )));
            }
        })
    }

    /// DROP VIEW in a block: dropped at once; ROLLBACK makes each again
    /// from its definition (a view other views read: refused here).
    async fn drop_views_in_block(
        &mut self,
        stmt: &Statement,
        names: &[ObjectName],
        catalog: &meta::Catalog,
    ) -> Result<String> {
        let mut undo = vec![];
        for n in names {
            let (s, name) = self.qualified(n);
            let Some(v) = catalog.view(&s, &name) else {
                continue;
            };
            if !catalog.views_reading(&s, &name).is_empty() {
                return Err(Error::unsupported(
                    "DROP VIEW of a view other views read, inside a transaction block",
                ));
            }
            undo.push(format!(
                "CREATE VIEW {}.{} ({}) AS {}",
                ident(&v.schema),
                ident(&v.name),
                v.columns
                    .iter()
                    .map(|c| ident(c))
                    .collect::<Vec<_>>()
                    .join(", "),
                v.definition
            ));
        }
        let tag = self.execute_ddl(stmt).await?;
        for sql in undo {
            self.block_ddl
                .push(BlockDdl::Undo(Box::new(parse_one(&sql)?)));
        }
        Ok(tag)
    }

    /// DROP TABLE in a block: gone from the catalog at once (later
    /// statements of the block, and a CREATE of the same name, see it
    /// gone, as in PostgreSQL); the rows stay until the block commits.
    async fn drop_tables_in_block(
        &mut self,
        stmt: &Statement,
        names: &[ObjectName],
        if_exists: bool,
        cascade: bool,
        catalog: &meta::Catalog,
    ) -> Result<()> {
        let router = self.router.clone();
        let dropping: Vec<common::TableId> = names
            .iter()
            .filter_map(|n| resolve_table(catalog, n, &self.current_schema()).ok())
            .map(|t| t.id)
            .collect();
        for n in names {
            let table = match resolve_table(catalog, n, &self.current_schema()) {
                Ok(t) => t,
                Err(_) if if_exists => continue,
                Err(e) => return Err(e),
            };
            if let Some(r) = catalog.views_reading(&table.schema, &table.name).first() {
                if cascade {
                    return Err(Error::unsupported(
                        "DROP TABLE ... CASCADE of a table views read, inside a transaction block",
                    ));
                }
                return Err(super::views::depends("table", &table.name, &r.name));
            }
            let mut txn = DdlChange::begin(&router, &stmt.to_string()).await?;
            // Keys referencing it from tables that stay: 2BP01 (a
            // CASCADE in a block is not undone: refused).
            super::drops::drop_dependent_foreign_keys(
                &router, catalog, &table, &dropping, false, &mut txn,
            )
            .await
            .map_err(|e| match e {
                Error::Sql { .. } if cascade => Error::unsupported(
                    "DROP TABLE ... CASCADE of a referenced table inside a transaction block",
                ),
                e => e,
            })?;
            let layout = catalog.placement.layout(table.id).to_vec();
            txn.drop_table_keeping(&table).await?;
            // One change per table, each remembered for the block's end;
            // the reload after the last.
            txn.commit().await?;
            self.block_ddl.push(BlockDdl::DroppedTable(table, layout));
        }
        router.reload().await?;
        Ok(())
    }

    /// The block ended: committed, its deferred DDL runs; else its undo
    /// runs, newest first. Errors are logged (the block's answer stands).
    pub(crate) async fn end_block_ddl(&mut self, committed: bool) {
        let list = std::mem::take(&mut self.block_ddl);
        self.run_block_ddl(list, committed).await;
    }

    async fn run_block_ddl(&mut self, list: Vec<BlockDdl>, committed: bool) {
        let mut stmts: Vec<Box<Statement>> = vec![];
        let mut dropped = vec![];
        if committed {
            for d in &list {
                if let BlockDdl::Deferred(s) = d {
                    stmts.push(s.clone());
                }
            }
        }
        for d in list.into_iter().rev() {
            match d {
                BlockDdl::Undo(s) if !committed => stmts.push(s),
                BlockDdl::UndoAtEnd(s) => stmts.push(s),
                BlockDdl::DroppedTable(t, l) => dropped.push((t, l, committed)),
                BlockDdl::RestoreAtEnd(t, l) => dropped.push((t, l, false)),
                _ => {}
            }
        }
        for s in stmts {
            if let Err(e) = self.execute_ddl(&s).await {
                tracing::warn!("DDL of a transaction block ({s}) failed: {e}");
            }
        }
        for (t, layout, gone) in dropped {
            if let Err(e) = self.settle_dropped_table(&t, &layout, gone).await {
                tracing::warn!(
                    "DROP TABLE {} of a transaction block: {e}",
                    t.qualified_name()
                );
            }
        }
    }

    /// A table dropped in a block: dropped for good (`committed`) or put
    /// back.
    /// `layout`: the shards its slots were on.
    async fn settle_dropped_table(
        &mut self,
        t: &meta::TableDef,
        layout: &[common::ShardId],
        committed: bool,
    ) -> Result<()> {
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, "DROP TABLE (block end)").await?;
        if committed {
            let physical = router
                .placement()
                .with_layout(t.id, layout.to_vec())
                .physical_tables(t)?;
            txn.drop_table_leftovers(t).await?;
            router.meta.queue_drops(t.id, &physical).await?;
            // Committed with the physical tables queued, then dropped (as
            // DROP TABLE outside a block). No reload, as before: the table
            // left this node's catalog when the block dropped it; what goes
            // here (grants, owner, owned sequences) arrives with the next
            // catalog poll.
            txn.commit().await?;
            shard_router::placement::drop_physical(&router, &physical).await?;
            for c in &t.columns {
                if let Some(s) = &c.sequence {
                    router.forget_sequence(s);
                }
            }
        } else {
            txn.restore_table(t, layout).await?;
            txn.finish().await?;
        }
        Ok(())
    }

    /// SAVEPOINT / ROLLBACK TO / RELEASE, after the transaction's own.
    pub(crate) fn savepoint_block_ddl(&mut self, kind: &crate::plan::PlanKind, name: &str) {
        use crate::plan::PlanKind;
        let marker = |d: &BlockDdl| matches!(d, BlockDdl::Savepoint(n) if n == name);
        match kind {
            PlanKind::Savepoint(_) => self.block_ddl.push(BlockDdl::Savepoint(name.to_string())),
            // Undone when the block ends (the block's shard branches may
            // still hold metadata locks on what they touched), however it
            // ends; deferred drops after the savepoint are forgotten.
            PlanKind::RollbackTo(_) => {
                if let Some(i) = self.block_ddl.iter().rposition(marker) {
                    let undone = self.block_ddl.split_off(i + 1);
                    for d in undone {
                        match d {
                            BlockDdl::Undo(s) | BlockDdl::UndoAtEnd(s) => {
                                self.block_ddl.push(BlockDdl::UndoAtEnd(s))
                            }
                            BlockDdl::Savepoint(n) => self.block_ddl.push(BlockDdl::Savepoint(n)),
                            BlockDdl::Deferred(_) => {}
                            // Restored when the block ends, however it
                            // ends.
                            BlockDdl::DroppedTable(t, l) | BlockDdl::RestoreAtEnd(t, l) => {
                                self.block_ddl.push(BlockDdl::RestoreAtEnd(t, l))
                            }
                        }
                    }
                }
            }
            _ => {
                if let Some(i) = self.block_ddl.iter().rposition(marker) {
                    self.block_ddl.remove(i);
                }
            }
        }
    }

    /// The client is gone: an open block rolls back (its shard branches
    /// first, so no undo waits on their locks), then its DDL is undone.
    pub async fn close(mut self) {
        if self.txn.is_some() {
            let _ = self.rollback().await;
        }
        self.end_block_ddl(false).await;
    }
}
