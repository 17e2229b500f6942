//! DDL: the dispatch of every DDL statement, and CREATE TABLE, INDEX and
//! SCHEMA and COMMENT ON (DROP in `drops`, roles and privileges in
//! `roles`, ALTER TABLE in `alter`, views and sequences in theirs). Each
//! takes meta's DDL lock, writes the catalog and the DDL log, applies the
//! change on the shards and commits the catalog ([`DdlChange`]; see
//! ARCHITECTURE.md, "DDL protocol").

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{CreateIndex, CreateTable, Expr, SchemaName, Statement};
use meta::{Catalog, IndexDef, SequenceDef, TableDef};
use shard_router::sql::normalize_ident;

use crate::plan::{object_parts, resolve_table};

use crate::plan::ddl::{check_schema_name, check_unique_includes_key, table_def};
use crate::session::Session;

use super::ddl_change::DdlChange;
use super::drops::DropStatement;

impl Session {
    pub(crate) async fn execute_ddl(&mut self, stmt: &Statement) -> Result<String> {
        let router = self.router.clone();
        let catalog = router.ensure_fresh().await?;
        let schema = self.current_schema();
        match stmt {
            Statement::CreateTable(ct) => {
                self.create_table(stmt, ct, &catalog, &schema).await?;
                Ok("CREATE TABLE".into())
            }
            Statement::CreateSequence {
                temporary,
                if_not_exists,
                name,
                data_type,
                sequence_options,
                owned_by,
            } => {
                if *temporary {
                    return Err(Error::unsupported("temporary sequences"));
                }
                self.create_sequence(
                    name,
                    *if_not_exists,
                    data_type.as_ref(),
                    sequence_options,
                    owned_by.as_ref(),
                )
                .await?;
                Ok("CREATE SEQUENCE".into())
            }
            Statement::CreateView(cv) => {
                self.create_view(cv).await?;
                Ok("CREATE VIEW".into())
            }
            Statement::AlterTable(at) => {
                self.execute_alter(at).await?;
                Ok("ALTER TABLE".into())
            }
            Statement::CreateIndex(ci) => {
                self.create_index(stmt, ci, &catalog, &schema).await?;
                Ok("CREATE INDEX".into())
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => {
                let drop = DropStatement {
                    stmt,
                    names,
                    if_exists: *if_exists,
                    cascade: *cascade,
                };
                self.execute_drop(object_type, &drop, &catalog, &schema)
                    .await
            }
            Statement::Comment { comment, .. } => {
                self.comment_on(stmt, comment.as_deref(), &catalog).await?;
                Ok("COMMENT".into())
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                self.create_schema(stmt, schema_name, *if_not_exists, &catalog)
                    .await?;
                Ok("CREATE SCHEMA".into())
            }
            Statement::CreateRole(cr) => {
                self.create_role(cr, &catalog).await?;
                Ok("CREATE ROLE".into())
            }
            Statement::AlterRole { name, operation } => {
                self.alter_role(name, operation, &catalog).await?;
                Ok("ALTER ROLE".into())
            }
            Statement::Grant(g) => {
                if g.with_grant_option {
                    return Err(Error::unsupported("WITH GRANT OPTION"));
                }
                let what = (&g.privileges, g.objects.as_ref(), &g.grantees[..]);
                self.grant_or_revoke(true, what, &catalog, &schema).await?;
                Ok("GRANT".into())
            }
            Statement::Revoke(r) => {
                let what = (&r.privileges, r.objects.as_ref(), &r.grantees[..]);
                self.grant_or_revoke(false, what, &catalog, &schema).await?;
                Ok("REVOKE".into())
            }
            _ => Err(Error::unsupported(
                "CREATE DATABASE (a cluster serves one database; use schemas)",
            )),
        }
    }

    async fn create_table(
        &mut self,
        stmt: &Statement,
        ct: &CreateTable,
        catalog: &Catalog,
        schema: &str,
    ) -> Result<()> {
        let router = self.router.clone();
        let (mut def, _) = table_def(
            ct,
            schema,
            catalog,
            crate::default_distribution(),
            crate::default_partitions(),
        )?;
        if catalog.table(&def.schema, &def.name).is_some()
            || catalog.view(&def.schema, &def.name).is_some()
        {
            if ct.if_not_exists {
                return Ok(());
            }
            return Err(Error::TableExists { name: def.name });
        }
        let identities = identity_sequences(ct, &mut def, catalog)?;
        let mut txn = DdlChange::begin(&router, &stmt.to_string()).await?;
        // Placed by the map as meta has it under the DDL lock: a partition
        // move may have switched since this node last loaded the catalog,
        // and a new table joins its group's layout as it is now.
        let now = router.meta.load_catalog().await?;
        let (_, layout) = table_def(
            ct,
            schema,
            &now,
            crate::default_distribution(),
            crate::default_partitions(),
        )?;
        // Catalog rows first (they may fail on a concurrent create),
        // then the shards; the meta commit makes it visible.
        let id = txn.create_table(&def, &layout).await?;
        def.id = id;
        for (mut seq, column) in identities {
            seq.owned_by = Some((id, column));
            txn.create_sequence(&seq).await?;
        }
        if !crate::privileges::is_superuser(catalog, &self.user) {
            txn.set_owner(id, &self.user).await?;
        }
        // Queued first, committed at once: if the shards fail or
        // this node dies before the catalog commit, recovery drops
        // what was made (the id is never reused).
        let placement = now.placement.with_layout(id, layout);
        let physical = placement.physical_tables(&def)?;
        router.meta.queue_drops(id, &physical).await?;
        if let Err(e) = shard_router::placement::create_table(&router, &placement, &def).await {
            // Rolled back first, then what the shards made is dropped.
            drop(txn);
            let _ = shard_router::placement::drop_physical(&router, &physical).await;
            return Err(e);
        }
        // Not `finish`: the drops are unqueued between the commit and
        // the reload.
        txn.commit().await?;
        for (shard, db, tbl) in &physical {
            let _ = router.meta.unqueue_drop(*shard, db, tbl).await;
        }
        router.reload().await?;
        Ok(())
    }

    async fn create_index(
        &mut self,
        stmt: &Statement,
        ci: &CreateIndex,
        catalog: &Catalog,
        schema: &str,
    ) -> Result<()> {
        let router = self.router.clone();
        let table = resolve_table(catalog, &ci.table_name, schema)?;
        let cols: Vec<String> = ci
            .columns
            .iter()
            .map(|c| match &c.column.expr {
                Expr::Identifier(i) => Ok(normalize_ident(i)),
                other => Err(Error::unsupported(format!("index on expression {other}"))),
            })
            .collect::<Result<_>>()?;
        for c in &cols {
            table.column(c)?;
        }
        let name = match &ci.name {
            Some(n) => object_parts(n).last().cloned().unwrap_or_default(),
            None => format!("{}_{}_idx", table.name, cols.join("_")),
        };
        if ci.unique {
            check_unique_includes_key(&table, &cols)?;
        }
        if table.indexes.iter().any(|i| i.name == name) {
            if ci.if_not_exists {
                return Ok(());
            }
            return Err(Error::IndexExists { name });
        }
        let ix = IndexDef {
            name,
            columns: cols,
            unique: ci.unique,
        };
        let mut txn = DdlChange::begin(&router, &stmt.to_string()).await?;
        txn.add_index(table.id, &ix).await?;
        shard_router::placement::create_index(&router, &table, &ix).await?;
        txn.finish().await
    }

    /// COMMENT ON (what it names: `comment_target`).
    async fn comment_on(
        &mut self,
        stmt: &Statement,
        comment: Option<&str>,
        catalog: &Catalog,
    ) -> Result<()> {
        let Some((kind, id, column)) = self.comment_target(catalog, stmt)? else {
            return Ok(());
        };
        // An empty comment removes it, as in PostgreSQL.
        let text = comment.filter(|c| !c.is_empty());
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, &stmt.to_string()).await?;
        txn.set_comment(kind, id, &column, text).await?;
        txn.finish().await
    }

    async fn create_schema(
        &mut self,
        stmt: &Statement,
        schema_name: &SchemaName,
        if_not_exists: bool,
        catalog: &Catalog,
    ) -> Result<()> {
        let SchemaName::Simple(n) = schema_name else {
            return Err(Error::unsupported("CREATE SCHEMA AUTHORIZATION"));
        };
        let name = object_parts(n).join(".");
        check_schema_name(&name)?;
        if catalog.schemas.contains(&name) {
            if if_not_exists {
                return Ok(());
            }
            return Err(Error::SchemaExists { name });
        }
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, &stmt.to_string()).await?;
        txn.create_schema(&name).await?;
        let sql = shard_router::placement::ensure_schema_sql(&name);
        shard_router::placement::run_on_shards(
            &router,
            catalog
                .shard_ids()
                .into_iter()
                .map(|s| (s, vec![sql.clone()]))
                .collect(),
        )
        .await?;
        txn.finish().await
    }
}

/// The sequences of a new table's identity columns, with the column each
/// feeds (set as its source in `def`): PostgreSQL's names
/// (`<table>_<column>_seq`, a digit added while taken).
fn identity_sequences(
    ct: &CreateTable,
    def: &mut TableDef,
    catalog: &Catalog,
) -> Result<Vec<(SequenceDef, String)>> {
    let mut identities = vec![];
    for c in def.columns.iter_mut().filter(|c| c.identity.is_some()) {
        let base = format!("{}_{}_seq", def.name, c.name);
        let mut name = base.clone();
        let mut n = 0;
        while catalog.sequence(&def.schema, &name).is_some()
            || catalog.table(&def.schema, &name).is_some()
            || catalog.view(&def.schema, &name).is_some()
        {
            n += 1;
            name = format!("{base}{n}");
        }
        let ast = ct
            .columns
            .iter()
            .find(|a| normalize_ident(&a.name) == c.name)
            .ok_or_else(|| Error::internal("identity column vanished"))?;
        let options = ast
            .options
            .iter()
            .find_map(|o| match &o.option {
                datafusion::sql::sqlparser::ast::ColumnOption::Generated {
                    sequence_options,
                    ..
                } => sequence_options.clone(),
                _ => None,
            })
            .unwrap_or_default();
        let seq = crate::plan::sequence::sequence_def(
            &def.schema,
            &name,
            Some(&ast.data_type),
            &options,
        )?;
        c.sequence = Some(seq.column_source());
        identities.push((seq, c.name.clone()));
    }
    Ok(identities)
}

impl Session {
    /// `ANALYZE [t]`: `ANALYZE TABLE` on every partition of the table (of
    /// every table without one) the user may maintain (its owner or a
    /// superuser; PostgreSQL skips the others too), each on a pooled
    /// connection outside any transaction (statistics are not
    /// transactional, and MariaDB's ANALYZE TABLE would end an XA branch).
    pub(crate) async fn execute_analyze(
        &mut self,
        table: Option<&datafusion::sql::sqlparser::ast::ObjectName>,
    ) -> Result<()> {
        let catalog = self.router.catalog();
        let tables = match table {
            Some(n) => vec![resolve_table(&catalog, n, &self.current_schema())?],
            None => catalog.tables.values().cloned().collect(),
        };
        let mut work = vec![];
        for t in tables {
            if !crate::privileges::may_maintain(&catalog, &self.user, &t) {
                continue;
            }
            for (shard, p) in catalog.placement.partitions(&t)? {
                let mut sql = shard_router::sql::ShardSql::new();
                sql.keyword("ANALYZE TABLE ")
                    .table(&t.schema, &t.physical_name(p));
                work.push((shard, sql.into_parts().0, vec![]));
            }
        }
        let autocommit = shard_router::txn::StatementAccess::new(
            shard_router::txn::ShardAccess::Autocommit,
            self.lock_timeout_secs(),
        );
        shard_router::dist::write_in(&self.router, &autocommit, work).await?;
        Ok(())
    }
}
