//! DROP TABLE, INDEX and SCHEMA (and the dispatch of the other DROPs to
//! `views`, `sequence` and `roles`). A statement naming several objects
//! makes one catalog change per object, each committed before the next
//! begins, and reloads the catalog once at the end.

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{ObjectName, ObjectType, Statement};
use meta::Catalog;

use crate::plan::{object_parts, resolve_table};
use crate::session::Session;

use super::ddl_change::DdlChange;

/// A `DROP <kind> [IF EXISTS] names... [CASCADE]`.
pub(crate) struct DropStatement<'a> {
    /// The whole statement (what the DDL log records).
    pub stmt: &'a Statement,
    pub names: &'a [ObjectName],
    pub if_exists: bool,
    pub cascade: bool,
}

impl Session {
    /// DROP of any kind: its command tag.
    pub(crate) async fn execute_drop(
        &mut self,
        object_type: &ObjectType,
        d: &DropStatement<'_>,
        catalog: &Catalog,
        schema: &str,
    ) -> Result<String> {
        match object_type {
            ObjectType::Table => {
                self.drop_tables(d, catalog, schema).await?;
                Ok("DROP TABLE".into())
            }
            ObjectType::Index => {
                self.drop_indexes(d, catalog, schema).await?;
                Ok("DROP INDEX".into())
            }
            ObjectType::Schema => {
                self.drop_schemas(d, catalog).await?;
                Ok("DROP SCHEMA".into())
            }
            ObjectType::View => {
                self.drop_views(d.names, d.if_exists, d.cascade).await?;
                Ok("DROP VIEW".into())
            }
            ObjectType::Sequence => {
                self.drop_sequences(d.names, d.if_exists, d.cascade).await?;
                Ok("DROP SEQUENCE".into())
            }
            ObjectType::Role => {
                self.drop_roles(d.names, d.if_exists, catalog).await?;
                Ok("DROP ROLE".into())
            }
            other => Err(Error::unsupported(format!("DROP {other}"))),
        }
    }

    async fn drop_tables(
        &mut self,
        d: &DropStatement<'_>,
        catalog: &Catalog,
        schema: &str,
    ) -> Result<()> {
        let router = self.router.clone();
        let dropping: Vec<common::TableId> = d
            .names
            .iter()
            .filter_map(|n| resolve_table(catalog, n, schema).ok())
            .map(|t| t.id)
            .collect();
        for n in d.names {
            if let Some(v) = crate::plan::views::view_named(catalog, n, schema) {
                return Err(Error::Sql {
                    state: SqlState("42809"),
                    message: format!("\"{}\" is not a table", v.name),
                });
            }
            let table = match resolve_table(catalog, n, schema) {
                Ok(t) => t,
                Err(_) if d.if_exists => continue,
                Err(e) => return Err(e),
            };
            let readers = catalog.views_reading(&table.schema, &table.name);
            if let (Some(r), false) = (readers.first(), d.cascade) {
                return Err(super::views::depends("table", &table.name, &r.name));
            }
            let mut txn = DdlChange::begin(&router, &d.stmt.to_string()).await?;
            for v in &readers {
                txn.drop_view(v.id).await?;
            }
            drop_dependent_foreign_keys(&router, catalog, &table, &dropping, d.cascade, &mut txn)
                .await?;
            // The catalog change commits first, with the physical tables
            // queued; then they are dropped (so `commit`, not `finish`:
            // the reload comes after the last table). A shard that fails
            // keeps its table queued and recovery drops it: the DROP is
            // never half done.
            let physical = catalog.placement.physical_tables(&table)?;
            txn.drop_table(&table).await?;
            router.meta.queue_drops(table.id, &physical).await?;
            txn.commit().await?;
            if let Err(e) = shard_router::placement::drop_physical(&router, &physical).await {
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
        Ok(())
    }

    async fn drop_indexes(
        &mut self,
        d: &DropStatement<'_>,
        catalog: &Catalog,
        schema: &str,
    ) -> Result<()> {
        let router = self.router.clone();
        for n in d.names {
            let parts = object_parts(n);
            let (s, name) = match parts.as_slice() {
                [i] => (schema.to_string(), i.clone()),
                [s, i] => (s.clone(), i.clone()),
                _ => {
                    return Err(Error::IndexNotFound {
                        name: n.to_string(),
                    })
                }
            };
            let Some(table) = catalog.index_owner(&s, &name).cloned() else {
                if d.if_exists {
                    continue;
                }
                return Err(Error::IndexNotFound { name });
            };
            // One change per index; the reload after the last.
            let mut txn = DdlChange::begin(&router, &d.stmt.to_string()).await?;
            txn.drop_index(table.id, &name).await?;
            shard_router::placement::drop_index(&router, &table, &name).await?;
            txn.commit().await?;
        }
        router.reload().await?;
        Ok(())
    }

    async fn drop_schemas(&mut self, d: &DropStatement<'_>, catalog: &Catalog) -> Result<()> {
        let router = self.router.clone();
        for n in d.names {
            let name = object_parts(n).join(".");
            if !catalog.schemas.contains(&name) {
                if d.if_exists {
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
            // Its sequences go with it too (they outlived the schema, and
            // a schema made again with the name found them).
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
            if (!tables.is_empty() || !sequences.is_empty() || !views.is_empty()) && !d.cascade {
                return Err(Error::Sql {
                    state: SqlState("2BP01"),
                    message: format!(
                        "cannot drop schema {name} because other objects depend on it"
                    ),
                });
            }
            // One change per schema; the reload after the last.
            let mut txn = DdlChange::begin(&router, &d.stmt.to_string()).await?;
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
            shard_router::placement::drop_schema(&router, &catalog.shard_ids(), &name).await?;
            txn.commit().await?;
        }
        router.reload().await?;
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
        if fk.enforcement == meta::Enforcement::Shards {
            if let Some(child) = catalog.table_by_id(fk.table) {
                shard_router::placement::foreign_key(router, child, t, &fk, false).await?;
            }
        }
    }
    Ok(())
}
