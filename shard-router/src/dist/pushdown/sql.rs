//! The SQL of a pushed fragment, composed from `ShardSql` fragments (the
//! one renderer, `crate::sql`): FROM items, conditions, EXISTS subqueries,
//! select lists and GROUP BY ordinals. Nothing here spells a name or a
//! value itself.

use std::sync::Arc;

use datafusion::arrow::datatypes::Field;
use datafusion::common::{DFSchema, TableReference};
use meta::{Distribution, TableDef};

use crate::sql::ShardSql;

/// FROM items and conditions of a fragment; EXISTS and IN subqueries
/// nest.
#[derive(Clone, Debug, Default)]
pub(super) struct Body {
    pub(super) tables: Vec<(String, FromItem)>,
    pub(super) conds: Vec<ShardSql>,
    pub(super) exists: Vec<(bool, Body)>,
    /// `(l1, ...) IN (SELECT r1, ... FROM <body>)`: a semi join on
    /// equalities alone, uncorrelated, so MariaDB can run it as a
    /// semi-join (materialized once) where a correlated EXISTS is run per
    /// outer row.
    pub(super) ins: Vec<SemiIn>,
}

/// One `IN (SELECT ...)` condition of a [`Body`].
#[derive(Clone, Debug)]
pub(super) struct SemiIn {
    pub(super) left: Vec<ShardSql>,
    pub(super) right: Vec<ShardSql>,
    pub(super) body: Body,
}

/// A FROM item: a table's partition, or a derived table (an aggregate each
/// shard computes completely, because its groups never span partitions).
#[derive(Clone, Debug)]
pub(super) enum FromItem {
    Table(Arc<TableDef>),
    Derived {
        select: Vec<ShardSql>,
        body: Box<Body>,
        group_by: ShardSql,
    },
}

impl Body {
    /// `SELECT <select> FROM <tables>[ WHERE ...]<tail>` over partition `p`.
    pub(super) fn query_sql(&self, select: &[ShardSql], p: u32, tail: &[&ShardSql]) -> ShardSql {
        let mut out = ShardSql::new();
        out.keyword("SELECT ")
            .list(select, ", ")
            .keyword(" FROM ")
            .append(self.tables_sql(p))
            .append(self.conditions_sql(p));
        for t in tail {
            out.push(t);
        }
        out
    }

    fn tables_sql(&self, p: u32) -> ShardSql {
        let mut out = ShardSql::new();
        for (i, (alias, item)) in self.tables.iter().enumerate() {
            if i > 0 {
                out.keyword(", ");
            }
            match item {
                FromItem::Table(t) => {
                    let part = if matches!(t.distribution, Distribution::Hash { .. }) {
                        p
                    } else {
                        0
                    };
                    out.table(&t.schema, &t.physical_name(part));
                }
                FromItem::Derived {
                    select,
                    body,
                    group_by,
                } => {
                    out.keyword("(")
                        .append(body.query_sql(select, p, &[group_by]))
                        .keyword(")");
                }
            }
            out.keyword(" AS ").ident(alias);
        }
        out
    }

    fn conditions_sql(&self, p: u32) -> ShardSql {
        let mut conds = self.conds.clone();
        for (negated, sub) in &self.exists {
            let mut e = ShardSql::new();
            e.keyword(if *negated { "NOT EXISTS (" } else { "EXISTS (" })
                .keyword("SELECT 1 FROM ")
                .append(sub.tables_sql(p))
                .append(sub.conditions_sql(p))
                .keyword(")");
            conds.push(e);
        }
        for semi in &self.ins {
            let mut e = ShardSql::new();
            let row = semi.left.len() > 1;
            if row {
                e.keyword("(");
            }
            e.list(&semi.left, ", ");
            if row {
                e.keyword(")");
            }
            e.keyword(" IN (SELECT ")
                .list(&semi.right, ", ")
                .keyword(" FROM ")
                .append(semi.body.tables_sql(p))
                .append(semi.body.conditions_sql(p))
                .keyword(")");
            conds.push(e);
        }
        let mut out = ShardSql::new();
        if !conds.is_empty() {
            out.keyword(" WHERE ").list(&conds, " AND ");
        }
        out
    }
}

/// A shard query's SELECT list, its items named `c0`, `c1`, ..., a `real`
/// item read as DOUBLE: MariaDB's text protocol prints a FLOAT with six
/// significant digits (`1.23457e20`), and widening is exact, so the value
/// read back and narrowed again is the stored one (PostgreSQL prints
/// `1.2345679e+20`).
pub(super) fn scan_items(items: &[ShardSql], types: &[common::SqlType]) -> Vec<ShardSql> {
    let widened: Vec<ShardSql> = items
        .iter()
        .zip(types)
        .map(|(s, t)| match t {
            common::SqlType::Real => crate::sql::widened_float(s.clone()),
            _ => s.clone(),
        })
        .collect();
    aliased(&widened)
}

/// A SELECT list naming its items `c0`, `c1`, ... (the scan's columns).
pub(super) fn aliased(items: &[ShardSql]) -> Vec<ShardSql> {
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut out = s.clone();
            out.keyword(" AS ").ident(&format!("c{i}"));
            out
        })
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
pub(super) fn group_by_ordinals(n: usize) -> ShardSql {
    let mut out = ShardSql::new();
    for i in 1..=n as u64 {
        out.keyword(if i == 1 { " GROUP BY " } else { ", " }).int(i);
    }
    out
}
