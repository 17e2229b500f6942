//! The SQL text of a pushed fragment: FROM items, conditions, EXISTS
//! subqueries, select lists and GROUP BY ordinals.

use std::sync::Arc;

use datafusion::arrow::datatypes::Field;
use datafusion::common::{DFSchema, TableReference};
use meta::{Distribution, TableDef};
use storage_adapter::quote_ident;

use crate::sql::physical_object;

/// FROM items and conditions of a fragment; EXISTS subqueries nest.
#[derive(Clone, Debug, Default)]
pub(super) struct Body {
    pub(super) tables: Vec<(String, FromItem)>,
    pub(super) conds: Vec<String>,
    pub(super) exists: Vec<(bool, Body)>,
}

/// A FROM item: a table's partition, or a derived table (an aggregate each
/// shard computes completely, because its groups never span partitions).
#[derive(Clone, Debug)]
pub(super) enum FromItem {
    Table(Arc<TableDef>),
    Derived {
        select: Vec<String>,
        body: Box<Body>,
        group_by: String,
    },
}

impl Body {
    pub(super) fn tables_sql(&self, p: u32) -> String {
        self.tables
            .iter()
            .map(|(alias, item)| match item {
                FromItem::Table(t) => {
                    let part = if matches!(t.distribution, Distribution::Hash { .. }) {
                        p
                    } else {
                        0
                    };
                    format!(
                        "{} AS {}",
                        physical_object(&t.schema, &t.physical_name(part)),
                        quote_ident(alias)
                    )
                }
                FromItem::Derived {
                    select,
                    body,
                    group_by,
                } => format!(
                    "(SELECT {} FROM {}{}{group_by}) AS {}",
                    select.join(", "),
                    body.tables_sql(p),
                    body.conditions_sql(p),
                    quote_ident(alias)
                ),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn conditions_sql(&self, p: u32) -> String {
        let mut conds = self.conds.clone();
        for (negated, sub) in &self.exists {
            let w = sub.conditions_sql(p);
            conds.push(format!(
                "{}EXISTS (SELECT 1 FROM {}{})",
                if *negated { "NOT " } else { "" },
                sub.tables_sql(p),
                w
            ));
        }
        if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        }
    }
}

/// A SELECT list naming its items `c0`, `c1`, ... (the scan's columns).
pub(super) fn aliased(items: &[String]) -> Vec<String> {
    items
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s} AS {}", quote_ident(&format!("c{i}"))))
        .collect()
}

pub(super) type QualifiedFields = Vec<(Option<TableReference>, Arc<Field>)>;

pub(super) fn fields_of(schema: &DFSchema) -> QualifiedFields {
    schema
        .iter()
        .map(|(q, f)| (q.cloned(), f.clone()))
        .collect()
}

/// ` GROUP BY 1, 2, ..., n` (empty for n = 0).
pub(super) fn group_by_ordinals(n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    let ordinals: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!(" GROUP BY {}", ordinals.join(", "))
}
