//! Analysis of `ALTER TABLE` into the table's new definition: what the
//! shards must do (`shard_router::placement::alter_clauses` derives it from the
//! old and new definitions), the checks PostgreSQL makes on existing rows,
//! and whether the rows move to a new layout. Pure: `exec::alter` applies
//! it under the DDL lock.

use common::{Datum, Error, Result};
use datafusion::sql::sqlparser::ast::{AlterTable, AlterTableOperation, RenameTableNameKind};
use meta::{Catalog, Distribution, ForeignKeyDef, TableDef};
use shard_router::sql::Clock;

use crate::plan::ddl::check_unique_includes_key;
use crate::plan::object_parts;

mod columns;
mod constraints;
mod distribution;

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

/// What the operations of one `ALTER TABLE` build together: the table's
/// new definition and what the shards and the existing rows need besides.
struct Alter<'a> {
    /// How many operations the statement has (some must stand alone).
    operations: usize,
    /// The table as it is.
    table: &'a TableDef,
    catalog: &'a Catalog,
    clock: &'a Clock,
    /// The table as it will be.
    new: TableDef,
    /// Columns renamed, (old, new), chains collapsed to their ends.
    renamed: Vec<(String, String)>,
    /// Values the added columns take in existing rows.
    fill: Vec<(String, Datum)>,
    /// Sequences the added columns own, to create.
    new_sequences: Vec<String>,
    checks: Vec<RowCheck>,
    /// The new distribution when the rows move.
    redistribute: Option<Distribution>,
    /// How many partitions the new layout asks for (`SET (partitions = n)`).
    partitions: Option<u32>,
}

/// The plan of one `ALTER TABLE` of `table` (resolved by the caller).
pub fn analyze(
    at: &AlterTable,
    table: &TableDef,
    catalog: &Catalog,
    default: common::config::DefaultDistribution,
    clock: &Clock,
    unenforced_foreign_keys: bool,
) -> Result<AlterPlan> {
    let mut alter = Alter {
        operations: at.operations.len(),
        table,
        catalog,
        clock,
        new: table.clone(),
        renamed: vec![],
        fill: vec![],
        new_sequences: vec![],
        checks: vec![],
        redistribute: None,
        partitions: None,
    };
    for op in &at.operations {
        if let Some(plan) = alter.operation(op, unenforced_foreign_keys)? {
            return Ok(plan);
        }
    }
    alter.hash_by_new_key(default)?;
    alter.finish()
}

impl Alter<'_> {
    /// Applies one operation; `Some` is the whole statement's plan (an
    /// operation that stands alone).
    fn operation(
        &mut self,
        op: &AlterTableOperation,
        unenforced_foreign_keys: bool,
    ) -> Result<Option<AlterPlan>> {
        match op {
            AlterTableOperation::AddColumn {
                if_not_exists,
                column_def,
                column_position: None,
                ..
            } => self.add_column(column_def, *if_not_exists)?,
            AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => self.drop_columns(column_names, *if_exists)?,
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => self.rename_column(old_column_name, new_column_name)?,
            AlterTableOperation::RenameTable { table_name } => {
                return self.rename_table(table_name).map(Some)
            }
            AlterTableOperation::AlterColumn { column_name, op } => {
                self.alter_column(column_name, op)?
            }
            AlterTableOperation::AddConstraint { constraint, .. } => {
                return self.add_constraint(constraint, unenforced_foreign_keys)
            }
            AlterTableOperation::DropConstraint {
                if_exists, name, ..
            } => return self.drop_constraint(name, *if_exists),
            AlterTableOperation::SetOptionsParens { options } => self.set_options(options)?,
            other => {
                let text = other.to_string();
                let words: Vec<&str> = text.split_whitespace().take(2).collect();
                return Err(Error::unsupported(format!(
                    "ALTER TABLE ... {}",
                    words.join(" ")
                )));
            }
        }
        Ok(None)
    }

    /// 0A000 unless `what` is the statement's only operation.
    fn only(&self, what: &str) -> Result<()> {
        if self.operations > 1 {
            return Err(Error::unsupported(format!(
                "{what} combined with other ALTER TABLE actions (run them as separate statements)"
            )));
        }
        Ok(())
    }

    /// `RENAME TO`: the table under its new name.
    fn rename_table(&self, table_name: &RenameTableNameKind) -> Result<AlterPlan> {
        self.only("RENAME")?;
        let name = match table_name {
            RenameTableNameKind::To(n) | RenameTableNameKind::As(n) => n,
        };
        let parts = object_parts(name);
        let [to] = parts.as_slice() else {
            return Err(Error::unsupported("RENAME TO a schema-qualified name"));
        };
        if self.catalog.table(&self.table.schema, to).is_some() {
            return Err(Error::TableExists { name: to.clone() });
        }
        if to.len() > 56 {
            return Err(Error::InvalidTableDefinition {
                message: "table names are limited to 56 characters".into(),
            });
        }
        let mut new = self.new.clone();
        new.name = to.clone();
        Ok(AlterPlan::Rename { new })
    }

    /// The plan once every operation is applied.
    fn finish(mut self) -> Result<AlterPlan> {
        if let Some(d) = self.redistribute.take() {
            return self.redistribution(d);
        }
        let new = self.new;
        if !new.primary_key.is_empty() && new.primary_key != self.table.primary_key {
            check_unique_includes_key(&new, &new.primary_key.clone())?;
        }
        if new == *self.table {
            return Ok(AlterPlan::Nothing);
        }
        Ok(AlterPlan::Change {
            new,
            renamed: self.renamed,
            fill: self.fill,
            new_sequences: self.new_sequences,
            checks: self.checks,
        })
    }
}
