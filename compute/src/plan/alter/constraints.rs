//! The constraint operations of `ALTER TABLE`: ADD and DROP CONSTRAINT
//! (primary key, unique, foreign key).

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    Expr, Ident, IndexColumn, TableConstraint, UniqueConstraint,
};
use meta::{IndexDef, TableDef};
use shard_router::sql::normalize_ident;

use super::{Alter, AlterPlan, RowCheck};
use crate::plan::ddl::{check_unique_includes_key, missing_column};

/// The columns of a key, each one of `t`'s.
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

impl Alter<'_> {
    /// The primary key `cols`, its columns made NOT NULL (checked on the
    /// rows); 42P16 when the table has one.
    pub(super) fn add_primary_key(&mut self, cols: Vec<String>) -> Result<()> {
        let new = &mut self.new;
        let tname = &self.table.name;
        if !new.primary_key.is_empty() {
            return Err(Error::Sql {
                state: SqlState::INVALID_TABLE_DEFINITION,
                message: format!("multiple primary keys for table \"{tname}\" are not allowed"),
            });
        }
        for c in &cols {
            let i = new
                .column_index(c)
                .ok_or_else(|| missing_column(c, tname))?;
            if !new.columns[i].not_null {
                new.columns[i].not_null = true;
                self.checks.push(RowCheck::NoNulls { column: c.clone() });
            }
        }
        new.primary_key = cols;
        Ok(())
    }

    /// `ADD CONSTRAINT`: a primary key, a unique index, or a foreign key
    /// (which stands alone and is its own plan).
    pub(super) fn add_constraint(
        &mut self,
        constraint: &TableConstraint,
        unenforced_foreign_keys: bool,
    ) -> Result<Option<AlterPlan>> {
        match constraint {
            TableConstraint::ForeignKey(f) => {
                self.only("ADD FOREIGN KEY")?;
                let (fk, parent) = crate::plan::foreign_key::foreign_key(
                    f,
                    self.table,
                    self.catalog,
                    unenforced_foreign_keys,
                )?;
                return Ok(Some(AlterPlan::AddForeignKey { fk, parent }));
            }
            TableConstraint::PrimaryKey(pk) => {
                let cols = index_columns(&pk.columns, &self.new)?;
                self.add_primary_key(cols)?;
            }
            TableConstraint::Unique(u) => self.add_unique(u)?,
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
        }
        Ok(None)
    }

    /// `ADD CONSTRAINT ... UNIQUE`: a unique index (42P07 if its name is
    /// taken).
    fn add_unique(&mut self, u: &UniqueConstraint) -> Result<()> {
        let cols = index_columns(&u.columns, &self.new)?;
        check_unique_includes_key(&self.new, &cols)?;
        let name = match &u.name {
            Some(n) => normalize_ident(n),
            None => format!("{}_{}_key", self.table.name, cols.join("_")),
        };
        if self.new.indexes.iter().any(|i| i.name == name) {
            return Err(Error::Sql {
                state: SqlState::DUPLICATE_TABLE,
                message: format!("relation \"{name}\" already exists"),
            });
        }
        self.new.indexes.push(IndexDef {
            name,
            columns: cols,
            unique: true,
        });
        Ok(())
    }

    /// `DROP CONSTRAINT name`: a foreign key (which stands alone and is its
    /// own plan), the primary key, or a unique index.
    pub(super) fn drop_constraint(
        &mut self,
        name: &Ident,
        if_exists: bool,
    ) -> Result<Option<AlterPlan>> {
        let (table, catalog) = (self.table, self.catalog);
        let n = normalize_ident(name);
        if let Some(fk) = catalog
            .foreign_keys_of(table.id, true)
            .into_iter()
            .find(|f| f.name == n)
        {
            self.only("DROP CONSTRAINT of a foreign key")?;
            let parent = catalog
                .table_by_id(fk.ref_table)
                .cloned()
                .ok_or_else(|| Error::internal("a foreign key's table is gone"))?;
            return Ok(Some(AlterPlan::DropForeignKey { fk, parent }));
        }
        let new = &mut self.new;
        if n == format!("{}_pkey", table.name) && !new.primary_key.is_empty() {
            new.primary_key.clear();
        } else if let Some(i) = new.indexes.iter().position(|ix| ix.unique && ix.name == n) {
            new.indexes.remove(i);
        } else if !if_exists {
            return Err(Error::Sql {
                state: SqlState::UNDEFINED_OBJECT,
                message: format!(
                    "constraint \"{n}\" of relation \"{}\" does not exist",
                    table.name
                ),
            });
        }
        Ok(None)
    }
}
