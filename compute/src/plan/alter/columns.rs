//! The column operations of `ALTER TABLE`: ADD, DROP, RENAME and ALTER
//! COLUMN.

use common::{Datum, Error, Result, SqlState, SqlType};
use datafusion::sql::sqlparser::ast::{AlterColumnOperation, DataType, Expr, Ident};
use meta::{ColumnDef, Distribution, IndexDef};
use shard_router::sql::{eval_value, normalize_ident};

use super::{Alter, RowCheck};
use crate::plan::ddl::{check_unique_includes_key, column_def, missing_column, ColumnKey};

fn duplicate_column(c: &str, t: &str) -> Error {
    Error::Sql {
        state: SqlState("42701"),
        message: format!("column \"{c}\" of relation \"{t}\" already exists"),
    }
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

impl Alter<'_> {
    /// `ADD COLUMN`: the column, what existing rows hold in it, its key.
    pub(super) fn add_column(
        &mut self,
        cd: &datafusion::sql::sqlparser::ast::ColumnDef,
        if_not_exists: bool,
    ) -> Result<()> {
        let table = self.table;
        let (mut col, key) = column_def(cd, &table.schema, &table.name, self.catalog)?;
        if col.identity.is_some() {
            return Err(Error::unsupported("ADD COLUMN ... GENERATED AS IDENTITY"));
        }
        if self.new.column_index(&col.name).is_some() {
            if if_not_exists {
                return Ok(());
            }
            return Err(duplicate_column(&col.name, &table.name));
        }
        self.own_sequence(&mut col);
        self.fill_existing_rows(&col)?;
        let name = col.name.clone();
        self.new.columns.push(col);
        self.column_key(name, key)
    }

    /// An added column's sequence, named for the table when the column owns
    /// it; existing rows would each take a value of it, so the table must be
    /// empty.
    fn own_sequence(&mut self, col: &mut ColumnDef) {
        if let Some(seq) = &mut col.sequence {
            if !seq.starts_with(meta::SEQUENCE_SOURCE_PREFIX) {
                seq.push_str(&format!("#{}", self.table.id.0));
                self.new_sequences.push(seq.clone());
            }
            // Existing rows would each take a value of the sequence.
            self.checks.push(RowCheck::EmptyForSequence {
                column: col.name.clone(),
            });
        }
    }

    /// What existing rows hold in an added column: its default's value, or
    /// an empty table when that is NULL and the column NOT NULL.
    fn fill_existing_rows(&mut self, col: &ColumnDef) -> Result<()> {
        match &col.default {
            _ if col.sequence.is_some() => {}
            Some(text) => {
                let e = crate::parse::parse_stored_expr(text)?;
                let v = eval_value(&e, &[], Some(self.clock))?.coerce(&col.ty)?;
                if col.not_null && matches!(v, Datum::Null) {
                    self.checks.push(RowCheck::Empty {
                        column: col.name.clone(),
                    });
                }
                self.fill.push((col.name.clone(), v));
            }
            None if col.not_null && col.sequence.is_none() => self.checks.push(RowCheck::Empty {
                column: col.name.clone(),
            }),
            None => {}
        }
        Ok(())
    }

    /// The PRIMARY KEY or UNIQUE written on an added column.
    fn column_key(&mut self, name: String, key: Option<ColumnKey>) -> Result<()> {
        match key {
            Some(ColumnKey::Primary) => self.add_primary_key(vec![name])?,
            Some(ColumnKey::Unique) => {
                check_unique_includes_key(&self.new, std::slice::from_ref(&name))?;
                self.new.indexes.push(IndexDef {
                    name: format!("{}_{name}_key", self.table.name),
                    columns: vec![name],
                    unique: true,
                });
            }
            None => {}
        }
        Ok(())
    }

    /// `DROP COLUMN a, b, ...`.
    pub(super) fn drop_columns(&mut self, names: &[Ident], if_exists: bool) -> Result<()> {
        for n in names {
            let n = normalize_ident(n);
            let Some(i) = self.new.column_index(&n) else {
                if if_exists {
                    continue;
                }
                return Err(missing_column(&n, &self.table.name));
            };
            self.drop_column(i, n)?;
        }
        Ok(())
    }

    /// Drops column `n` (at `i`) with its keys and indexes, unless the
    /// partition key or a foreign key uses it or it is the last one.
    fn drop_column(&mut self, i: usize, n: String) -> Result<()> {
        let table = self.table;
        if self.new.key_indexes().contains(&i) {
            return Err(Error::unsupported(format!(
                "dropping column \"{n}\": it is part of the partition key of \"{}\"",
                table.name
            )));
        }
        let in_fk = self.catalog.foreign_keys.iter().any(|f| {
            (f.table == table.id && f.columns.contains(&n))
                || (f.ref_table == table.id && f.ref_columns.contains(&n))
        });
        if in_fk {
            return Err(Error::unsupported(format!(
                "dropping column \"{n}\": a foreign key uses it (drop the constraint first)"
            )));
        }
        if self.new.columns.len() == 1 {
            return Err(Error::unsupported(
                "a table without columns (MariaDB has none)",
            ));
        }
        self.new.columns.remove(i);
        if self.new.primary_key.contains(&n) {
            self.new.primary_key.clear();
        }
        self.new.indexes.retain(|ix| !ix.columns.contains(&n));
        Ok(())
    }

    /// `RENAME COLUMN from TO to`, in the keys, indexes and distribution too.
    pub(super) fn rename_column(&mut self, from: &Ident, to: &Ident) -> Result<()> {
        let (from, to) = (normalize_ident(from), normalize_ident(to));
        let new = &mut self.new;
        let i = new
            .column_index(&from)
            .ok_or_else(|| missing_column(&from, &self.table.name))?;
        if new.column_index(&to).is_some() {
            return Err(duplicate_column(&to, &self.table.name));
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
        match self.renamed.iter_mut().find(|(_, n)| *n == from) {
            Some(r) => r.1 = to,
            None => self.renamed.push((from, to)),
        }
        Ok(())
    }

    /// `ALTER COLUMN n ...`: NOT NULL, DEFAULT, TYPE.
    pub(super) fn alter_column(&mut self, name: &Ident, op: &AlterColumnOperation) -> Result<()> {
        let n = normalize_ident(name);
        let i = self
            .new
            .column_index(&n)
            .ok_or_else(|| missing_column(&n, &self.table.name))?;
        match op {
            AlterColumnOperation::SetNotNull => {
                if !self.new.columns[i].not_null {
                    self.new.columns[i].not_null = true;
                    self.checks.push(RowCheck::NoNulls { column: n });
                }
            }
            AlterColumnOperation::DropNotNull => {
                if self.new.primary_key.contains(&n) {
                    return Err(Error::Sql {
                        state: SqlState::INVALID_TABLE_DEFINITION,
                        message: format!("column \"{n}\" is in a primary key"),
                    });
                }
                self.new.columns[i].not_null = false;
            }
            AlterColumnOperation::SetDefault { value } => self.set_default(i, value)?,
            AlterColumnOperation::DropDefault => {
                self.new.columns[i].default = None;
                self.new.columns[i].sequence = None;
            }
            AlterColumnOperation::SetDataType { using: Some(_), .. } => {
                return Err(Error::unsupported("ALTER COLUMN TYPE ... USING"))
            }
            AlterColumnOperation::SetDataType { data_type, .. } => {
                self.set_data_type(i, &n, data_type)?
            }
            other => return Err(Error::unsupported(format!("ALTER COLUMN ... {other}"))),
        }
        Ok(())
    }

    /// `SET DEFAULT value` on the column at `i`: a sequence's `nextval`, or
    /// a value checked against the column's type.
    fn set_default(&mut self, i: usize, value: &Expr) -> Result<()> {
        let col = &mut self.new.columns[i];
        col.sequence =
            crate::plan::sequence::nextval_default(value, self.catalog, &self.table.schema)?;
        if col.sequence.is_none() {
            eval_value(value, &[], Some(self.clock))?.coerce(&col.ty)?;
        }
        col.default = Some(value.to_string());
        Ok(())
    }

    /// `TYPE data_type` on column `n` (at `i`): only conversions the shards
    /// make without loss, and none of the partition key.
    fn set_data_type(&mut self, i: usize, n: &str, data_type: &DataType) -> Result<()> {
        let to = SqlType::parse(&data_type.to_string().to_lowercase())?;
        let from = self.new.columns[i].ty;
        if self.new.key_indexes().contains(&i) && from != to {
            return Err(Error::unsupported(format!(
                "changing the type of \"{n}\": it is part of the partition key"
            )));
        }
        if !lossless(&from, &to) {
            return Err(Error::unsupported(format!(
                "ALTER COLUMN TYPE from {from} to {to} (the shards cannot convert every value without loss)"
            )));
        }
        self.new.columns[i].ty = to;
        Ok(())
    }
}
