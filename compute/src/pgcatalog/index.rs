//! A table's indexes as the catalogs show them (`pg_class`, `pg_index`,
//! `pg_constraint`, `pg_indexes`, `pg_get_indexdef`): its primary key and
//! its other indexes, with their OIDs.

use meta::TableDef;

use super::oids;

/// One index as `pg_class` and `pg_index` show it.
pub struct Index<'a> {
    pub oid: i64,
    pub name: String,
    pub table: &'a TableDef,
    pub columns: Vec<String>,
    pub unique: bool,
    pub primary: bool,
    /// Whether a constraint (PRIMARY KEY, UNIQUE) made it.
    pub constraint: bool,
}

/// A table's indexes: its primary key first (`<table>_pkey`), then the
/// others.
pub fn indexes(t: &TableDef) -> Vec<Index<'_>> {
    let mut out = vec![];
    if !t.primary_key.is_empty() {
        out.push(Index {
            oid: oids::index(t.id, 0),
            name: format!("{}_pkey", t.name),
            table: t,
            columns: t.primary_key.clone(),
            unique: true,
            primary: true,
            constraint: true,
        });
    }
    for ix in &t.indexes {
        out.push(Index {
            oid: oids::index(t.id, out.len().max(1)),
            name: ix.name.clone(),
            table: t,
            columns: ix.columns.clone(),
            unique: ix.unique,
            primary: false,
            constraint: ix.unique && ix.name.ends_with("_key"),
        });
    }
    out
}

/// The column numbers (from 1) of columns of `t`.
pub(super) fn attnums(t: &TableDef, cols: &[String]) -> Vec<i64> {
    cols.iter()
        .filter_map(|c| t.column_index(c).map(|i| i as i64 + 1))
        .collect()
}
