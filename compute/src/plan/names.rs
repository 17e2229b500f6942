//! Names: PostgreSQL identifiers quoted for Tessera's own SQL, and object
//! names split into parts and resolved against the catalog. A leaf: the
//! planner files use it, it uses none of them.

use std::sync::Arc;

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{ObjectName, ObjectNamePart};
use meta::{Catalog, TableDef};
use shard_router::sql::normalize_ident;

/// A PostgreSQL identifier, quoted, in SQL Tessera makes for its own
/// planner (shard SQL quotes through `shard_router::sql`).
pub fn quoted_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The parts of an object name, each normalized as PostgreSQL folds it.
pub fn object_parts(name: &ObjectName) -> Vec<String> {
    name.0
        .iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(normalize_ident(i)),
            _ => None,
        })
        .collect()
}

/// Resolves a (possibly schema-qualified) table name.
pub fn resolve_table(
    catalog: &Catalog,
    name: &ObjectName,
    search_schema: &str,
) -> Result<Arc<TableDef>> {
    let parts = object_parts(name);
    let (schema, table) = match parts.as_slice() {
        [t] => (search_schema.to_string(), t.clone()),
        [s, t] => (s.clone(), t.clone()),
        [_, s, t] => (s.clone(), t.clone()),
        _ => {
            return Err(Error::TableNotFound {
                name: name.to_string(),
            })
        }
    };
    catalog
        .table(&schema, &table)
        .cloned()
        .ok_or(Error::TableNotFound { name: table })
}
