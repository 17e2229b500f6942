//! CREATE [OR REPLACE] VIEW and DROP VIEW: catalog-only changes (a view
//! has no rows on the shards) under the DDL lock and log. The query is
//! planned at creation, which checks it and gives the view's columns and
//! their types; `plan::views` expands it wherever it is read.

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{CreateView, ObjectName};
use meta::ViewDef;

use crate::session::Session;

use super::ddl_change::DdlChange;

fn sql_err(state: &'static str, message: String) -> Error {
    Error::Sql {
        state: SqlState(state),
        message,
    }
}

/// PostgreSQL's name of a wire type in its messages (`integer`, `text`).
fn type_name(oid: u32) -> String {
    crate::pgcatalog::oids::format_type(oid as i64, None).unwrap_or_else(|| oid.to_string())
}

impl Session {
    pub(crate) async fn create_view(&mut self, cv: &CreateView) -> Result<()> {
        if cv.materialized {
            return Err(Error::unsupported("materialized views"));
        }
        if cv.temporary {
            return Err(Error::unsupported("temporary views"));
        }
        if cv.or_alter
            || cv.secure
            || cv.to.is_some()
            || cv.params.is_some()
            || cv.with_no_schema_binding
            || !cv.cluster_by.is_empty()
            || cv.comment.is_some()
            || cv.copy_grants
        {
            return Err(Error::unsupported("this form of CREATE VIEW"));
        }
        if !matches!(
            cv.options,
            datafusion::sql::sqlparser::ast::CreateTableOptions::None
        ) {
            return Err(Error::unsupported("view options (WITH ...)"));
        }
        let router = self.router.clone();
        let catalog = router.ensure_fresh().await?;
        let (schema, name) = self.qualified(&cv.name);
        if !catalog.schemas.contains(&schema) {
            return Err(Error::SchemaNotFound { name: schema });
        }
        let existing = catalog.view(&schema, &name).cloned();
        let taken = catalog.table(&schema, &name).is_some()
            || catalog.sequence(&schema, &name).is_some()
            || catalog.index_owner(&schema, &name).is_some();
        if taken && cv.or_replace && catalog.table(&schema, &name).is_some() {
            return Err(sql_err("42809", format!("\"{name}\" is not a view")));
        }
        if taken || (existing.is_some() && !cv.or_replace) {
            if cv.if_not_exists {
                return Ok(());
            }
            return Err(Error::TableExists { name });
        }
        // Planned as it will be read: checks the query, gives the columns.
        let (definition, reads) =
            crate::plan::views::definition(&catalog, &self.current_schema(), &cv.query)?;
        let stmt = crate::dialect::parse(&definition)
            .map_err(Error::internal)?
            .pop()
            .ok_or_else(|| Error::internal("view query vanished"))?;
        let plan = crate::plan::plan_statement(&router, &self.scope(), &stmt, &[]).await?;
        if !plan.param_types.is_empty() {
            return Err(sql_err("42P02", "there is no parameter $1".into()));
        }
        if plan.tag != "SELECT" {
            return Err(Error::unsupported("a view over this statement"));
        }
        let mut columns: Vec<String> = plan.fields.iter().map(|f| f.0.clone()).collect();
        let type_oids: Vec<u32> = plan.fields.iter().map(|f| f.1.oid()).collect();
        if cv.columns.len() > columns.len() {
            return Err(sql_err(
                "42601",
                "CREATE VIEW specifies more column names than columns".into(),
            ));
        }
        for (c, given) in columns.iter_mut().zip(&cv.columns) {
            *c = shard_router::sql::normalize_ident(&given.name);
        }
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].contains(c) {
                return Err(sql_err(
                    "42701",
                    format!("column \"{c}\" specified more than once"),
                ));
            }
        }
        let mut def = ViewDef {
            id: 0,
            schema,
            name,
            definition,
            columns,
            type_oids,
            reads,
        };
        if let Some(old) = &existing {
            check_replacement(old, &def)?;
            def.id = old.id;
        }
        let statement = format!("CREATE VIEW {}", def.qualified_name());
        let mut txn = DdlChange::begin(&router, &statement).await?;
        match existing {
            Some(_) => txn.replace_view(&def).await?,
            None => {
                txn.create_view(&def).await?;
            }
        }
        txn.finish().await
    }

    /// DROP VIEW names...: 42809 for a table, 2BP01 when other views read
    /// one (without CASCADE; with it they are dropped too).
    pub(crate) async fn drop_views(
        &mut self,
        names: &[ObjectName],
        if_exists: bool,
        cascade: bool,
    ) -> Result<()> {
        let router = self.router.clone();
        let catalog = router.ensure_fresh().await?;
        let mut dropping: Vec<std::sync::Arc<ViewDef>> = vec![];
        for n in names {
            let (schema, name) = self.qualified(n);
            let Some(v) = catalog.view(&schema, &name).cloned() else {
                if catalog.table(&schema, &name).is_some() {
                    return Err(sql_err("42809", format!("\"{name}\" is not a view")));
                }
                if if_exists {
                    continue;
                }
                return Err(sql_err("42P01", format!("view \"{name}\" does not exist")));
            };
            let readers = catalog.views_reading(&v.schema, &v.name);
            let outside: Vec<_> = readers
                .iter()
                .filter(|r| {
                    !names
                        .iter()
                        .any(|n| self.qualified(n) == (r.schema.clone(), r.name.clone()))
                })
                .collect();
            if !outside.is_empty() && !cascade {
                return Err(depends("view", &v.name, &outside[0].name));
            }
            for r in readers.into_iter().chain([v]) {
                if !dropping.iter().any(|d| d.id == r.id) {
                    dropping.push(r);
                }
            }
        }
        if dropping.is_empty() {
            return Ok(());
        }
        let mut txn = DdlChange::begin(&router, "DROP VIEW").await?;
        for v in &dropping {
            txn.drop_view(v.id).await?;
        }
        txn.finish().await
    }
}

/// 2BP01 for dropping an object other objects depend on.
pub(crate) fn depends(kind: &str, name: &str, reader: &str) -> Error {
    Error::Sql {
        state: SqlState("2BP01"),
        message: format!(
            "cannot drop {kind} {name} because other objects depend on it (view {reader} depends on {kind} {name}; use DROP ... CASCADE to drop the dependent objects too)"
        ),
    }
}

/// CREATE OR REPLACE VIEW keeps the old columns, in order, with their
/// names and types, and may add columns after them (PostgreSQL's rule).
fn check_replacement(old: &ViewDef, new: &ViewDef) -> Result<()> {
    if new.columns.len() < old.columns.len() {
        return Err(sql_err("42P16", "cannot drop columns from view".into()));
    }
    for i in 0..old.columns.len() {
        if old.columns[i] != new.columns[i] {
            return Err(sql_err(
                "42P16",
                format!(
                    "cannot change name of view column \"{}\" to \"{}\"",
                    old.columns[i], new.columns[i]
                ),
            ));
        }
        if old.type_oids[i] != new.type_oids[i] {
            return Err(sql_err(
                "42P16",
                format!(
                    "cannot change data type of view column \"{}\" from {} to {}",
                    old.columns[i],
                    type_name(old.type_oids[i]),
                    type_name(new.type_oids[i])
                ),
            ));
        }
    }
    Ok(())
}
