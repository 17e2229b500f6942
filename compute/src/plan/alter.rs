//! Analysis of `ALTER TABLE` into the table's new definition: what the
//! shards must do (`shard_router::ddl::alter_clauses` derives it from the
//! old and new definitions), the checks PostgreSQL makes on existing rows,
//! and whether the rows move to a new layout. Pure: `exec::alter` applies
//! it under the DDL lock.

use common::{Datum, Error, Result, SqlState, SqlType};
use datafusion::sql::sqlparser::ast::{
    AlterColumnOperation, AlterTable, AlterTableOperation, Expr, IndexColumn, TableConstraint,
};
use meta::{Catalog, Distribution, ForeignKeyDef, IndexDef, TableDef};
use shard_router::route::{eval_value, normalize_ident, Clock};

use crate::plan::ddl::{
    check_partition_key, check_unique_includes_key, column_def, missing_column, table_options,
    ColumnKey, TableOptions,
};
use crate::plan::object_parts;

/// A check on existing rows before the shards change (PostgreSQL's 23502
/// for a NOT NULL column that would hold NULLs).
#[derive(Debug, Clone, PartialEq)]
pub enum RowCheck {
    /// The table must be empty (a NOT NULL column added without default).
    Empty { column: String },
    /// The table must be empty: existing rows would each take a value
    /// of the added column's sequence (0A000 otherwise).
    EmptyForSequence { column: String },
    /// No row may have this column NULL.
    NoNulls { column: String },
}

#[derive(Debug)]
pub enum AlterPlan {
    /// Nothing to do (`IF EXISTS` / `IF NOT EXISTS` that matched, storage
    /// parameters).
    Nothing,
    /// Columns, keys, indexes or defaults: one ALTER of each physical
    /// table, then the catalog.
    Change {
        new: TableDef,
        renamed: Vec<(String, String)>,
        fill: Vec<(String, Datum)>,
        new_sequences: Vec<String>,
        checks: Vec<RowCheck>,
    },
    /// The table renamed (its physical tables with it).
    Rename { new: TableDef },
    /// The rows move to a new layout (`new.id` is assigned at execution).
    Redistribute {
        new: TableDef,
        /// Where the new layout's slots go (the placement policy's choice).
        layout: Vec<common::ShardId>,
        checks: Vec<RowCheck>,
    },
    /// A foreign key added (`fk.id` assigned at execution), enforced by
    /// InnoDB on each shard when `fk.enforced`.
    AddForeignKey {
        fk: ForeignKeyDef,
        parent: std::sync::Arc<TableDef>,
    },
    DropForeignKey {
        fk: std::sync::Arc<ForeignKeyDef>,
        parent: std::sync::Arc<TableDef>,
    },
}

fn duplicate_column(c: &str, t: &str) -> Error {
    Error::Sql {
        state: SqlState("42701"),
        message: format!("column \"{c}\" of relation \"{t}\" already exists"),
    }
}

fn index_columns(cols: &[IndexColumn], t: &TableDef) -> Result<Vec<String>> {
    cols.iter()
        .map(|c| match &c.column.expr {
            Expr::Identifier(i) => {
                let n = normalize_ident(i);
                t.column(&n)
                    .map_err(|_| Error::Sql {
                        state: SqlState::UNDEFINED_COLUMN,
                        message: format!("column \"{n}\" named in key does not exist"),
                    })
                    .map(|_| n)
            }
            other => Err(Error::unsupported(format!(
                "a key on the expression {other}"
            ))),
        })
        .collect()
}

/// Whether the shards convert `from` to `to` without losing a value (and
/// reading it back gives what PostgreSQL's cast gives).
fn lossless(from: &SqlType, to: &SqlType) -> bool {
    use SqlType::*;
    let int_rank = |t: &SqlType| match t {
        SmallInt => Some(1),
        Integer => Some(2),
        BigInt => Some(3),
        _ => None,
    };
    match (from, to) {
        (a, b) if a == b => true,
        (a, b) if int_rank(a).is_some() && int_rank(b).is_some() => int_rank(a) <= int_rank(b),
        (SmallInt, Numeric { precision, scale }) => precision - scale >= 5,
        (Integer, Numeric { precision, scale }) => precision - scale >= 10,
        (BigInt, Numeric { precision, scale }) => precision - scale >= 19,
        (
            Numeric {
                precision: p1,
                scale: s1,
            },
            Numeric {
                precision: p2,
                scale: s2,
            },
        ) => s2 >= s1 && p2 - s2 >= p1 - s1,
        (Real, Double) => false,
        (Varchar(Some(a)), Varchar(Some(b))) => a <= b,
        (Varchar(_), Varchar(None) | Text) | (Text, Varchar(None)) => true,
        (Char(_), Varchar(None) | Text) => false,
        _ => false,
    }
}

/// The plan of one `ALTER TABLE` of `table` (resolved by the caller).
pub fn analyze(
    at: &AlterTable,
    table: &TableDef,
    catalog: &Catalog,
    default_hash: bool,
    clock: &Clock,
    unenforced_foreign_keys: bool,
) -> Result<AlterPlan> {
    let tname = table.name.clone();
    let mut new = table.clone();
    let mut renamed: Vec<(String, String)> = vec![];
    let mut fill = vec![];
    let mut new_sequences = vec![];
    let mut checks = vec![];
    let mut redistribute: Option<Distribution> = None;
    let mut partitions: Option<u32> = None;
    let only = |what: &str| -> Result<()> {
        if at.operations.len() > 1 {
            return Err(Error::unsupported(format!(
                "{what} combined with other ALTER TABLE actions (run them as separate statements)"
            )));
        }
        Ok(())
    };
    let add_primary_key = |new: &mut TableDef, cols: Vec<String>, checks: &mut Vec<RowCheck>| {
        if !new.primary_key.is_empty() {
            return Err(Error::Sql {
                state: SqlState::INVALID_TABLE_DEFINITION,
                message: format!("multiple primary keys for table \"{tname}\" are not allowed"),
            });
        }
        for c in &cols {
            let i = new
                .column_index(c)
                .ok_or_else(|| missing_column(c, &tname))?;
            if !new.columns[i].not_null {
                new.columns[i].not_null = true;
                checks.push(RowCheck::NoNulls { column: c.clone() });
            }
        }
        new.primary_key = cols;
        Ok::<_, Error>(())
    };
    for op in &at.operations {
        match op {
            AlterTableOperation::AddColumn {
                if_not_exists,
                column_def: cd,
                column_position: None,
                ..
            } => {
                let (mut col, key) = column_def(cd, &table.schema, &table.name, catalog)?;
                if col.identity.is_some() {
                    return Err(Error::unsupported("ADD COLUMN ... GENERATED AS IDENTITY"));
                }
                if new.column_index(&col.name).is_some() {
                    if *if_not_exists {
                        continue;
                    }
                    return Err(duplicate_column(&col.name, &table.name));
                }
                if let Some(seq) = &mut col.sequence {
                    if !seq.starts_with(meta::SEQUENCE_SOURCE_PREFIX) {
                        seq.push_str(&format!("#{}", table.id.0));
                        new_sequences.push(seq.clone());
                    }
                    // Existing rows would each take a value of the sequence.
                    checks.push(RowCheck::EmptyForSequence {
                        column: col.name.clone(),
                    });
                }
                match &col.default {
                    _ if col.sequence.is_some() => {}
                    Some(text) => {
                        let e = crate::parse::parse_stored_expr(text)?;
                        let v = eval_value(&e, &[], Some(clock))?.coerce(&col.ty)?;
                        if col.not_null && matches!(v, Datum::Null) {
                            checks.push(RowCheck::Empty {
                                column: col.name.clone(),
                            });
                        }
                        fill.push((col.name.clone(), v));
                    }
                    None if col.not_null && col.sequence.is_none() => {
                        checks.push(RowCheck::Empty {
                            column: col.name.clone(),
                        })
                    }
                    None => {}
                }
                let name = col.name.clone();
                new.columns.push(col);
                match key {
                    Some(ColumnKey::Primary) => add_primary_key(&mut new, vec![name], &mut checks)?,
                    Some(ColumnKey::Unique) => {
                        check_unique_includes_key(&new, std::slice::from_ref(&name))?;
                        new.indexes.push(IndexDef {
                            name: format!("{}_{name}_key", table.name),
                            columns: vec![name],
                            unique: true,
                        });
                    }
                    None => {}
                }
            }
            AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for n in column_names {
                    let n = normalize_ident(n);
                    let Some(i) = new.column_index(&n) else {
                        if *if_exists {
                            continue;
                        }
                        return Err(missing_column(&n, &table.name));
                    };
                    if new.key_indexes().contains(&i) {
                        return Err(Error::unsupported(format!(
                            "dropping column \"{n}\": it is part of the partition key of \"{}\"",
                            table.name
                        )));
                    }
                    let in_fk = catalog.foreign_keys.iter().any(|f| {
                        (f.table == table.id && f.columns.contains(&n))
                            || (f.ref_table == table.id && f.ref_columns.contains(&n))
                    });
                    if in_fk {
                        return Err(Error::unsupported(format!(
                            "dropping column \"{n}\": a foreign key uses it (drop the constraint first)"
                        )));
                    }
                    if new.columns.len() == 1 {
                        return Err(Error::unsupported(
                            "a table without columns (MariaDB has none)",
                        ));
                    }
                    new.columns.remove(i);
                    if new.primary_key.contains(&n) {
                        new.primary_key.clear();
                    }
                    new.indexes.retain(|ix| !ix.columns.contains(&n));
                }
            }
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (from, to) = (
                    normalize_ident(old_column_name),
                    normalize_ident(new_column_name),
                );
                let i = new
                    .column_index(&from)
                    .ok_or_else(|| missing_column(&from, &table.name))?;
                if new.column_index(&to).is_some() {
                    return Err(duplicate_column(&to, &table.name));
                }
                new.columns[i].name = to.clone();
                let rename = |v: &mut Vec<String>| {
                    for c in v.iter_mut() {
                        if *c == from {
                            *c = to.clone();
                        }
                    }
                };
                rename(&mut new.primary_key);
                for ix in &mut new.indexes {
                    rename(&mut ix.columns);
                }
                if let Distribution::Hash { columns, .. } = &mut new.distribution {
                    rename(columns);
                }
                // Chains (a -> b, b -> c) collapse to their ends.
                match renamed.iter_mut().find(|(_, n)| *n == from) {
                    Some(r) => r.1 = to,
                    None => renamed.push((from, to)),
                }
            }
            AlterTableOperation::RenameTable { table_name } => {
                only("RENAME")?;
                let name = match table_name {
                    datafusion::sql::sqlparser::ast::RenameTableNameKind::To(n)
                    | datafusion::sql::sqlparser::ast::RenameTableNameKind::As(n) => n,
                };
                let parts = object_parts(name);
                let [to] = parts.as_slice() else {
                    return Err(Error::unsupported("RENAME TO a schema-qualified name"));
                };
                if catalog.table(&table.schema, to).is_some() {
                    return Err(Error::TableExists { name: to.clone() });
                }
                if to.len() > 56 {
                    return Err(Error::InvalidTableDefinition {
                        message: "table names are limited to 56 characters".into(),
                    });
                }
                new.name = to.clone();
                return Ok(AlterPlan::Rename { new });
            }
            AlterTableOperation::AlterColumn { column_name, op } => {
                let n = normalize_ident(column_name);
                let i = new
                    .column_index(&n)
                    .ok_or_else(|| missing_column(&n, &table.name))?;
                match op {
                    AlterColumnOperation::SetNotNull => {
                        if !new.columns[i].not_null {
                            new.columns[i].not_null = true;
                            checks.push(RowCheck::NoNulls { column: n });
                        }
                    }
                    AlterColumnOperation::DropNotNull => {
                        if new.primary_key.contains(&n) {
                            return Err(Error::Sql {
                                state: SqlState::INVALID_TABLE_DEFINITION,
                                message: format!("column \"{n}\" is in a primary key"),
                            });
                        }
                        new.columns[i].not_null = false;
                    }
                    AlterColumnOperation::SetDefault { value } => {
                        new.columns[i].sequence =
                            crate::plan::sequence::nextval_default(value, catalog, &table.schema)?;
                        if new.columns[i].sequence.is_none() {
                            eval_value(value, &[], Some(clock))?.coerce(&new.columns[i].ty)?;
                        }
                        new.columns[i].default = Some(value.to_string());
                    }
                    AlterColumnOperation::DropDefault => {
                        new.columns[i].default = None;
                        new.columns[i].sequence = None;
                    }
                    AlterColumnOperation::SetDataType {
                        data_type, using, ..
                    } => {
                        if using.is_some() {
                            return Err(Error::unsupported("ALTER COLUMN TYPE ... USING"));
                        }
                        let to = SqlType::parse(&data_type.to_string().to_lowercase())?;
                        let from = new.columns[i].ty;
                        if new.key_indexes().contains(&i) && from != to {
                            return Err(Error::unsupported(format!(
                                "changing the type of \"{n}\": it is part of the partition key"
                            )));
                        }
                        if !lossless(&from, &to) {
                            return Err(Error::unsupported(format!(
                                "ALTER COLUMN TYPE from {from} to {to} (the shards cannot convert every value without loss)"
                            )));
                        }
                        new.columns[i].ty = to;
                    }
                    other => return Err(Error::unsupported(format!("ALTER COLUMN ... {other}"))),
                }
            }
            AlterTableOperation::AddConstraint { constraint, .. } => match constraint {
                TableConstraint::ForeignKey(f) => {
                    only("ADD FOREIGN KEY")?;
                    let (fk, parent) = crate::plan::foreign_key::foreign_key(
                        f,
                        table,
                        catalog,
                        unenforced_foreign_keys,
                    )?;
                    return Ok(AlterPlan::AddForeignKey { fk, parent });
                }
                TableConstraint::PrimaryKey(pk) => {
                    let cols = index_columns(&pk.columns, &new)?;
                    add_primary_key(&mut new, cols, &mut checks)?;
                }
                TableConstraint::Unique(u) => {
                    let cols = index_columns(&u.columns, &new)?;
                    check_unique_includes_key(&new, &cols)?;
                    let name = match &u.name {
                        Some(n) => normalize_ident(n),
                        None => format!("{}_{}_key", table.name, cols.join("_")),
                    };
                    if new.indexes.iter().any(|i| i.name == name) {
                        return Err(Error::Sql {
                            state: SqlState::DUPLICATE_TABLE,
                            message: format!("relation \"{name}\" already exists"),
                        });
                    }
                    new.indexes.push(IndexDef {
                        name,
                        columns: cols,
                        unique: true,
                    });
                }
                other => {
                    return Err(Error::unsupported(format!(
                        "ADD CONSTRAINT of this kind ({})",
                        other
                            .to_string()
                            .split_whitespace()
                            .take(3)
                            .collect::<Vec<_>>()
                            .join(" ")
                    )))
                }
            },
            AlterTableOperation::DropConstraint {
                if_exists, name, ..
            } => {
                let n = normalize_ident(name);
                if let Some(fk) = catalog
                    .foreign_keys_of(table.id, true)
                    .into_iter()
                    .find(|f| f.name == n)
                {
                    only("DROP CONSTRAINT of a foreign key")?;
                    let parent = catalog
                        .table_by_id(fk.ref_table)
                        .cloned()
                        .ok_or_else(|| Error::internal("a foreign key's table is gone"))?;
                    return Ok(AlterPlan::DropForeignKey { fk, parent });
                }
                if n == format!("{}_pkey", table.name) && !new.primary_key.is_empty() {
                    new.primary_key.clear();
                } else if let Some(i) = new.indexes.iter().position(|ix| ix.unique && ix.name == n)
                {
                    new.indexes.remove(i);
                } else if *if_exists {
                    continue;
                } else {
                    return Err(Error::Sql {
                        state: SqlState::UNDEFINED_OBJECT,
                        message: format!(
                            "constraint \"{n}\" of relation \"{}\" does not exist",
                            table.name
                        ),
                    });
                }
            }
            AlterTableOperation::SetOptionsParens { options } => {
                let TableOptions {
                    distribution,
                    partitions: p,
                    key,
                } = table_options(options)?;
                if distribution.is_none() && key.is_none() && p.is_none() {
                    continue;
                }
                only("SET (distribution ...)")?;
                partitions = p;
                let kind = distribution.unwrap_or_else(|| "hash".into());
                redistribute = Some(match kind.as_str() {
                    "hash" => {
                        let columns = match key {
                            Some(k) => k,
                            None => match &table.distribution {
                                Distribution::Hash { columns, .. } => columns.clone(),
                                _ if !table.primary_key.is_empty() => table.primary_key.clone(),
                                _ => {
                                    return Err(Error::InvalidParameter {
                                        message: "distribution = hash needs distribution_key (the table has no primary key)".into(),
                                    })
                                }
                            },
                        };
                        Distribution::Hash {
                            columns,
                            partitions: 0,
                        }
                    }
                    "mirror" if key.is_none() => Distribution::Mirror,
                    "single" if key.is_none() => Distribution::Single,
                    k => {
                        return Err(Error::InvalidParameter {
                            message: format!(
                                "distribution '{k}' is not one of hash, mirror, single (a key only with hash)"
                            ),
                        })
                    }
                });
            }
            other => {
                let text = other.to_string();
                let words: Vec<&str> = text.split_whitespace().take(2).collect();
                return Err(Error::unsupported(format!(
                    "ALTER TABLE ... {}",
                    words.join(" ")
                )));
            }
        }
    }
    // A keyless single table keyed now is hashed by its key when that is
    // the cluster's default for keyed tables (as if created with it).
    if redistribute.is_none()
        && default_hash
        && matches!(table.distribution, Distribution::Single)
        && table.primary_key.is_empty()
        && !new.primary_key.is_empty()
    {
        if at.operations.len() > 1 {
            return Err(Error::unsupported(
                "ADD PRIMARY KEY on a table that is distributed by it, combined with other actions",
            ));
        }
        redistribute = Some(Distribution::Hash {
            columns: new.primary_key.clone(),
            partitions: 0,
        });
    }
    if let Some(d) = redistribute {
        // Unenforced keys have no InnoDB constraint to break.
        let enforced = |referencing| {
            catalog
                .foreign_keys_of(table.id, referencing)
                .iter()
                .any(|f| f.enforced)
        };
        if enforced(true) || enforced(false) {
            return Err(Error::unsupported(format!(
                "changing the distribution of \"{}\" while enforced foreign keys reference it or it references others (drop them first)",
                table.name
            )));
        }
        check_partition_key(&new.columns, &d)?;
        let layout = catalog.placement.layout_for_new(&d, partitions)?;
        new.distribution = match d {
            Distribution::Hash { columns, .. } => Distribution::Hash {
                columns,
                partitions: layout.len() as u32,
            },
            d => d,
        };
        if !new.primary_key.is_empty() {
            check_unique_includes_key(&new, &new.primary_key.clone())?;
        }
        for ix in new.indexes.iter().filter(|i| i.unique) {
            check_unique_includes_key(&new, &ix.columns)?;
        }
        return Ok(AlterPlan::Redistribute {
            new,
            layout,
            checks,
        });
    }
    if !new.primary_key.is_empty() && new.primary_key != table.primary_key {
        check_unique_includes_key(&new, &new.primary_key.clone())?;
    }
    if new == *table {
        return Ok(AlterPlan::Nothing);
    }
    Ok(AlterPlan::Change {
        new,
        renamed,
        fill,
        new_sequences,
        checks,
    })
}
