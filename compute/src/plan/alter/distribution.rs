//! `ALTER TABLE` operations that move the rows to a new layout: `SET
//! (distribution ...)`, and a primary key added to a keyless single table.

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::SqlOption;
use meta::Distribution;

use super::{Alter, AlterPlan};
use crate::plan::ddl::{
    check_partition_key, check_unique_includes_key, table_options, TableOptions,
};

impl Alter<'_> {
    /// `SET (distribution = ..., distribution_key = ..., partitions = ...)`
    /// (other storage parameters do nothing).
    pub(super) fn set_options(&mut self, options: &[SqlOption]) -> Result<()> {
        let TableOptions {
            distribution,
            partitions,
            key,
        } = table_options(options)?;
        if distribution.is_none() && key.is_none() && partitions.is_none() {
            return Ok(());
        }
        self.only("SET (distribution ...)")?;
        self.partitions = partitions;
        let kind = distribution.unwrap_or_else(|| "hash".into());
        self.redistribute = Some(match kind.as_str() {
            "hash" => Distribution::Hash {
                columns: self.hash_key(key)?,
                partitions: 0,
            },
            "mirror" if key.is_none() => Distribution::Mirror,
            "single" if key.is_none() => Distribution::Single,
            k => {
                let message = format!(
                    "distribution '{k}' is not one of hash, mirror, single (a key only with hash)"
                );
                return Err(Error::InvalidParameter { message });
            }
        });
        Ok(())
    }

    /// The key of `distribution = hash`: the one given, else the table's
    /// hash key, else its primary key.
    fn hash_key(&self, key: Option<Vec<String>>) -> Result<Vec<String>> {
        let table = self.table;
        Ok(match key {
            Some(k) => k,
            None => match &table.distribution {
                Distribution::Hash { columns, .. } => columns.clone(),
                _ if !table.primary_key.is_empty() => table.primary_key.clone(),
                _ => return Err(Error::InvalidParameter {
                    message:
                        "distribution = hash needs distribution_key (the table has no primary key)"
                            .into(),
                }),
            },
        })
    }

    /// A keyless single table keyed now is hashed by its key when that is
    /// the cluster's default for keyed tables (as if created with it).
    pub(super) fn hash_by_new_key(
        &mut self,
        default: common::config::DefaultDistribution,
    ) -> Result<()> {
        if self.redistribute.is_none()
            && default != common::config::DefaultDistribution::Single
            && matches!(self.table.distribution, Distribution::Single)
            && self.table.primary_key.is_empty()
            && !self.new.primary_key.is_empty()
        {
            if self.operations > 1 {
                return Err(Error::unsupported(
                    "ADD PRIMARY KEY on a table that is distributed by it, combined with other actions",
                ));
            }
            let uniques: Vec<Vec<String>> = self
                .new
                .indexes
                .iter()
                .filter(|i| i.unique)
                .map(|i| i.columns.clone())
                .collect();
            self.redistribute = Some(Distribution::Hash {
                columns: meta::table::default_hash_key(
                    &self.new.primary_key,
                    &uniques,
                    &self.new.columns,
                    default,
                ),
                partitions: 0,
            });
        }
        Ok(())
    }

    /// The plan that moves the rows to distribution `d`: its layout, and
    /// the keys checked against the new partition key.
    pub(super) fn redistribution(self, d: Distribution) -> Result<AlterPlan> {
        let (table, catalog) = (self.table, self.catalog);
        // Unenforced keys have no InnoDB constraint to break.
        let enforced = |referencing| {
            catalog
                .foreign_keys_of(table.id, referencing)
                .iter()
                .any(|f| f.enforcement == meta::Enforcement::Shards)
        };
        if enforced(true) || enforced(false) {
            return Err(Error::unsupported(format!(
                "changing the distribution of \"{}\" while enforced foreign keys reference it or it references others (drop them first)",
                table.name
            )));
        }
        let mut new = self.new;
        check_partition_key(&new.columns, &d)?;
        let partitions = self.partitions.or(crate::default_partitions());
        let layout = catalog.layout_for_new(&d, partitions)?;
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
        Ok(AlterPlan::Redistribute {
            new,
            layout,
            checks: self.checks,
        })
    }
}
