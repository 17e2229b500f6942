//! DDL: CREATE/DROP TABLE, INDEX and SCHEMA, roles and privileges. Each
//! takes meta's DDL lock, writes the catalog and the DDL log, applies the
//! change on the shards and commits the catalog (see ARCHITECTURE.md, "DDL
//! protocol").

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{Expr, ObjectType, SchemaName, Statement};
use meta::IndexDef;
use shard_router::route::normalize_ident;

use crate::plan::{object_parts, resolve_table};

use crate::plan::ddl::{
    check_schema_name, check_unique_includes_key, grant_list, role_password, table_def,
};
use crate::session::Session;

impl Session {
    pub(crate) async fn execute_ddl(&mut self, stmt: &Statement) -> Result<String> {
        let router = self.router.clone();
        let catalog = router.ensure_fresh().await?;
        let schema = self.current_schema();
        match stmt {
            Statement::CreateTable(ct) => {
                let (mut def, layout) = table_def(
                    ct,
                    &schema,
                    &catalog,
                    crate::DEFAULT_HASH.load(std::sync::atomic::Ordering::Relaxed),
                )?;
                if catalog.table(&def.schema, &def.name).is_some()
                    || catalog.view(&def.schema, &def.name).is_some()
                {
                    if ct.if_not_exists {
                        return Ok("CREATE TABLE".into());
                    }
                    return Err(Error::TableExists { name: def.name });
                }
                // Identity columns' sequences: PostgreSQL's names
                // (`<table>_<column>_seq`, a digit added while taken).
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
                let mut txn = router
                    .meta
                    .begin_ddl(router.node_id, &stmt.to_string())
                    .await?;
                // Catalog rows first (they may fail on a concurrent create),
                // then the shards; the meta commit makes it visible.
                let id = txn.create_table(&def, &layout).await?;
                def.id = id;
                for (mut seq, column) in identities {
                    seq.owned_by = Some((id, column));
                    txn.create_sequence(&seq).await?;
                }
                if !crate::privileges::is_superuser(&catalog, &self.user) {
                    txn.set_owner(id, &self.user).await?;
                }
                // Queued first, committed at once: if the shards fail or
                // this node dies before the catalog commit, recovery drops
                // what was made (the id is never reused).
                let placement = catalog.placement.with_layout(id, layout);
                let physical = placement.physical_tables(&def);
                router.meta.queue_drops(id, &physical).await?;
                if let Err(e) = shard_router::ddl::create_table(&router, &placement, &def).await {
                    drop(txn);
                    let _ = shard_router::ddl::drop_physical(&router, &physical).await;
                    return Err(e);
                }
                txn.commit().await?;
                for (shard, db, tbl) in &physical {
                    let _ = router.meta.unqueue_drop(*shard, db, tbl).await;
                }
                router.reload().await?;
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
                let table = resolve_table(&catalog, &ci.table_name, &schema)?;
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
                        return Ok("CREATE INDEX".into());
                    }
                    return Err(Error::IndexExists { name });
                }
                let ix = IndexDef {
                    name,
                    columns: cols,
                    unique: ci.unique,
                };
                let mut txn = router
                    .meta
                    .begin_ddl(router.node_id, &stmt.to_string())
                    .await?;
                txn.add_index(table.id, &ix).await?;
                shard_router::ddl::create_index(&router, &table, &ix).await?;
                txn.commit().await?;
                router.reload().await?;
                Ok("CREATE INDEX".into())
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => {
                match object_type {
                    ObjectType::Table => {
                        let dropping: Vec<common::TableId> = names
                            .iter()
                            .filter_map(|n| resolve_table(&catalog, n, &schema).ok())
                            .map(|t| t.id)
                            .collect();
                        for n in names {
                            if let Some(v) = crate::plan::views::view_named(&catalog, n, &schema) {
                                return Err(Error::Sql {
                                    state: SqlState("42809"),
                                    message: format!("\"{}\" is not a table", v.name),
                                });
                            }
                            let table = match resolve_table(&catalog, n, &schema) {
                                Ok(t) => t,
                                Err(_) if *if_exists => continue,
                                Err(e) => return Err(e),
                            };
                            let readers = catalog.views_reading(&table.schema, &table.name);
                            if let (Some(r), false) = (readers.first(), *cascade) {
                                return Err(crate::exec::views::depends(
                                    "table",
                                    &table.name,
                                    &r.name,
                                ));
                            }
                            let mut txn = router
                                .meta
                                .begin_ddl(router.node_id, &stmt.to_string())
                                .await?;
                            for v in &readers {
                                txn.drop_view(v.id).await?;
                            }
                            drop_dependent_foreign_keys(
                                &router, &catalog, &table, &dropping, *cascade, &mut txn,
                            )
                            .await?;
                            // The catalog change commits first, with the
                            // physical tables queued; then they are dropped.
                            // A shard that fails keeps its table queued and
                            // recovery drops it: the DROP is never half done.
                            let physical = catalog.placement.physical_tables(&table);
                            txn.drop_table(&table).await?;
                            router.meta.queue_drops(table.id, &physical).await?;
                            txn.commit().await?;
                            if let Err(e) =
                                shard_router::ddl::drop_physical(&router, &physical).await
                            {
                                tracing::warn!(
                                    "DROP TABLE {}: physical tables left for recovery: {e}",
                                    table.qualified_name()
                                );
                            }
                            for c in &table.columns {
                                if let Some(s) = &c.sequence {
                                    router.forget_sequence(s);
                                }
                            }
                        }
                        router.reload().await?;
                        Ok("DROP TABLE".into())
                    }
                    ObjectType::Index => {
                        for n in names {
                            let parts = object_parts(n);
                            let (s, name) = match parts.as_slice() {
                                [i] => (schema.clone(), i.clone()),
                                [s, i] => (s.clone(), i.clone()),
                                _ => {
                                    return Err(Error::IndexNotFound {
                                        name: n.to_string(),
                                    })
                                }
                            };
                            let Some(table) = catalog.index_owner(&s, &name).cloned() else {
                                if *if_exists {
                                    continue;
                                }
                                return Err(Error::IndexNotFound { name });
                            };
                            let mut txn = router
                                .meta
                                .begin_ddl(router.node_id, &stmt.to_string())
                                .await?;
                            txn.drop_index(table.id, &name).await?;
                            shard_router::ddl::drop_index(&router, &table, &name).await?;
                            txn.commit().await?;
                        }
                        router.reload().await?;
                        Ok("DROP INDEX".into())
                    }
                    ObjectType::Schema => {
                        for n in names {
                            let name = object_parts(n).join(".");
                            if !catalog.schemas.contains(&name) {
                                if *if_exists {
                                    continue;
                                }
                                return Err(Error::SchemaNotFound { name });
                            }
                            let tables: Vec<_> = catalog
                                .tables
                                .values()
                                .filter(|t| t.schema == name)
                                .cloned()
                                .collect();
                            // Its sequences go with it too (they outlived the
                            // schema, and a schema made again with the name
                            // found them).
                            let sequences: Vec<u64> = catalog
                                .sequences
                                .values()
                                .filter(|q| q.schema == name)
                                .map(|q| q.id)
                                .collect();
                            let views: Vec<u64> = catalog
                                .views
                                .values()
                                .filter(|v| v.schema == name)
                                .map(|v| v.id)
                                .collect();
                            if (!tables.is_empty() || !sequences.is_empty() || !views.is_empty())
                                && !cascade
                            {
                                return Err(Error::Sql {
                                state: SqlState("2BP01"),
                                message: format!("cannot drop schema {name} because other objects depend on it"),
                            });
                            }
                            let mut txn = router
                                .meta
                                .begin_ddl(router.node_id, &stmt.to_string())
                                .await?;
                            for t in &tables {
                                txn.drop_table(t).await?;
                            }
                            for id in &sequences {
                                txn.drop_sequence(*id).await?;
                            }
                            for id in &views {
                                txn.drop_view(*id).await?;
                            }
                            txn.drop_schema(&name).await?;
                            shard_router::ddl::drop_schema(&router, &catalog.shard_ids(), &name)
                                .await?;
                            txn.commit().await?;
                        }
                        router.reload().await?;
                        Ok("DROP SCHEMA".into())
                    }
                    ObjectType::View => {
                        self.drop_views(names, *if_exists, *cascade).await?;
                        Ok("DROP VIEW".into())
                    }
                    ObjectType::Sequence => {
                        self.drop_sequences(names, *if_exists, *cascade).await?;
                        Ok("DROP SEQUENCE".into())
                    }
                    ObjectType::Role => {
                        let mut txn = router.meta.begin_ddl(router.node_id, "DROP ROLE").await?;
                        for n in names {
                            let name = object_parts(n).join(".");
                            if !catalog.roles.contains_key(&name) {
                                if *if_exists {
                                    continue;
                                }
                                return Err(Error::Sql {
                                    state: SqlState::UNDEFINED_OBJECT,
                                    message: format!("role \"{name}\" does not exist"),
                                });
                            }
                            if name == self.user {
                                return Err(Error::Sql {
                                    state: SqlState::OBJECT_IN_USE,
                                    message: "current user cannot be dropped".into(),
                                });
                            }
                            txn.drop_role(&name).await?;
                        }
                        txn.commit().await?;
                        router.reload().await?;
                        Ok("DROP ROLE".into())
                    }
                    other => Err(Error::unsupported(format!("DROP {other}"))),
                }
            }
            Statement::Comment { comment, .. } => {
                let Some((kind, id, column)) = self.comment_target(&catalog, stmt)? else {
                    return Ok("COMMENT".into());
                };
                // An empty comment removes it, as in PostgreSQL.
                let text = comment.as_deref().filter(|c| !c.is_empty());
                let mut txn = router
                    .meta
                    .begin_ddl(router.node_id, &stmt.to_string())
                    .await?;
                txn.set_comment(kind, id, &column, text).await?;
                txn.commit().await?;
                router.reload().await?;
                Ok("COMMENT".into())
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                let SchemaName::Simple(n) = schema_name else {
                    return Err(Error::unsupported("CREATE SCHEMA AUTHORIZATION"));
                };
                let name = object_parts(n).join(".");
                check_schema_name(&name)?;
                if catalog.schemas.contains(&name) {
                    if *if_not_exists {
                        return Ok("CREATE SCHEMA".into());
                    }
                    return Err(Error::SchemaExists { name });
                }
                let mut txn = router
                    .meta
                    .begin_ddl(router.node_id, &stmt.to_string())
                    .await?;
                txn.create_schema(&name).await?;
                let sql = shard_router::ddl::ensure_schema_sql(&name);
                shard_router::ddl::run_on_shards(
                    &router,
                    catalog
                        .shard_ids()
                        .into_iter()
                        .map(|s| (s, vec![sql.clone()]))
                        .collect(),
                )
                .await?;
                txn.commit().await?;
                router.reload().await?;
                Ok("CREATE SCHEMA".into())
            }
            Statement::CreateRole(cr) => {
                let mut txn = router.meta.begin_ddl(router.node_id, "CREATE ROLE").await?;
                for n in &cr.names {
                    let name = object_parts(n).join(".");
                    if catalog.roles.contains_key(&name) {
                        if cr.if_not_exists {
                            continue;
                        }
                        return Err(Error::Sql {
                            state: SqlState::DUPLICATE_OBJECT,
                            message: format!("role \"{name}\" already exists"),
                        });
                    }
                    if name.starts_with("pg_") || name == "public" || name == "none" {
                        return Err(Error::Sql {
                            state: SqlState::RESERVED_NAME,
                            message: format!("role name \"{name}\" is reserved"),
                        });
                    }
                    let password = role_password(cr.password.as_ref())?;
                    txn.put_role(
                        &name,
                        Some(cr.superuser.unwrap_or(false)),
                        Some(cr.login.unwrap_or(false)),
                        password,
                    )
                    .await?;
                }
                txn.commit().await?;
                router.reload().await?;
                Ok("CREATE ROLE".into())
            }
            Statement::AlterRole { name, operation } => {
                use datafusion::sql::sqlparser::ast::{AlterRoleOperation, RoleOption};
                let name = normalize_ident(name);
                if !catalog.roles.contains_key(&name) {
                    return Err(Error::Sql {
                        state: SqlState::UNDEFINED_OBJECT,
                        message: format!("role \"{name}\" does not exist"),
                    });
                }
                let AlterRoleOperation::WithOptions { options } = operation else {
                    return Err(Error::unsupported("this ALTER ROLE"));
                };
                let (mut su, mut login, mut pw) = (None, None, None);
                for o in options {
                    match o {
                        RoleOption::SuperUser(b) => su = Some(*b),
                        RoleOption::Login(b) => login = Some(*b),
                        RoleOption::Password(p) => pw = role_password(Some(p))?,
                        other => return Err(Error::unsupported(format!("role option {other}"))),
                    }
                }
                let mut txn = router.meta.begin_ddl(router.node_id, "ALTER ROLE").await?;
                txn.put_role(&name, su, login, pw).await?;
                txn.commit().await?;
                router.reload().await?;
                Ok("ALTER ROLE".into())
            }
            Statement::Grant(_) | Statement::Revoke(_) => {
                let (grant, privileges, objects, grantees) = match stmt {
                    Statement::Grant(g) => {
                        if g.with_grant_option {
                            return Err(Error::unsupported("WITH GRANT OPTION"));
                        }
                        (true, &g.privileges, g.objects.as_ref(), &g.grantees)
                    }
                    Statement::Revoke(r) => (false, &r.privileges, r.objects.as_ref(), &r.grantees),
                    _ => return Err(Error::internal("not a GRANT or REVOKE")),
                };
                let privs = grant_list(&catalog, &schema, privileges, objects, grantees)?;
                let tag = if grant { "GRANT" } else { "REVOKE" };
                let mut txn = router.meta.begin_ddl(router.node_id, tag).await?;
                for p in &privs {
                    txn.set_grant(p, grant).await?;
                }
                txn.commit().await?;
                router.reload().await?;
                Ok(tag.into())
            }
            _ => Err(Error::unsupported(
                "CREATE DATABASE (a cluster serves one database; use schemas)",
            )),
        }
    }
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
            for (shard, p) in catalog.placement.partitions(&t) {
                let mut sql = shard_router::shard_sql::ShardSql::new();
                sql.keyword("ANALYZE TABLE ")
                    .table(&t.schema, &t.physical_name(p));
                work.push((shard, sql.into_parts().0, vec![]));
            }
        }
        shard_router::exec::write_in(
            &self.router,
            &shard_router::txn::ShardAccess::Autocommit,
            work,
        )
        .await?;
        Ok(())
    }
}

/// Foreign keys of other tables (not in `dropping`) that reference `t`:
/// 2BP01 unless `cascade`, when they are dropped with it (on the shards
/// and in the catalog, in `txn`), as PostgreSQL's DROP ... CASCADE does.
pub(crate) async fn drop_dependent_foreign_keys(
    router: &shard_router::Router,
    catalog: &meta::Catalog,
    t: &meta::TableDef,
    dropping: &[common::TableId],
    cascade: bool,
    txn: &mut meta::DdlTxn,
) -> Result<()> {
    for fk in catalog.foreign_keys_of(t.id, false) {
        if dropping.contains(&fk.table) {
            continue;
        }
        if !cascade {
            return Err(Error::Sql {
                state: SqlState("2BP01"),
                message: format!(
                    "cannot drop table {} because other objects depend on it",
                    t.name
                ),
            });
        }
        txn.drop_foreign_key(fk.id).await?;
        if fk.enforced {
            if let Some(child) = catalog.table_by_id(fk.table) {
                shard_router::ddl::foreign_key(router, child, t, &fk, false).await?;
            }
        }
    }
    Ok(())
}
