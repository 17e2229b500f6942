//! One table's definition: its columns, keys, indexes and how its rows
//! are spread (hash, mirror, single). Where its pieces live is
//! [`crate::Placement`]'s.

use common::{Error, Result, SqlType, TableId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distribution {
    /// Rows spread over `partitions` partitions by the hash of `columns`.
    Hash {
        columns: Vec<String>,
        partitions: u32,
    },
    /// A full copy on every shard; read any, write all.
    Mirror,
    /// The whole table on one shard.
    Single,
}

impl Distribution {
    pub fn kind(&self) -> &'static str {
        match self {
            Distribution::Hash { .. } => "hash",
            Distribution::Mirror => "mirror",
            Distribution::Single => "single",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
    /// A constant default, as PostgreSQL SQL text.
    pub default: Option<String>,
    /// Global sequence feeding this column (SERIAL/BIGSERIAL).
    pub sequence: Option<String>,
    /// `GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY`: fed by the
    /// sequence in `sequence` (one OWNED BY the column).
    pub identity: Option<Identity>,
}

/// How an identity column takes given values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// Given values are refused (428C9) unless `OVERRIDING SYSTEM VALUE`.
    Always,
    /// A given value is stored, as for a column default.
    ByDefault,
}

impl Identity {
    /// The catalog's spelling, and `pg_attribute.attidentity`'s letter.
    pub fn as_str(self) -> &'static str {
        match self {
            Identity::Always => "always",
            Identity::ByDefault => "by default",
        }
    }

    pub fn letter(self) -> &'static str {
        match self {
            Identity::Always => "a",
            Identity::ByDefault => "d",
        }
    }

    pub fn parse(s: &str) -> Option<Identity> {
        match s {
            "always" => Some(Identity::Always),
            "by default" => Some(Identity::ByDefault),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    pub name: String,
    pub columns: Vec<String>,
    pub unique: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    pub id: TableId,
    pub schema: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub primary_key: Vec<String>,
    pub distribution: Distribution,
    pub indexes: Vec<IndexDef>,
}

impl TableDef {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    pub fn column(&self, name: &str) -> Result<&ColumnDef> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Error::ColumnNotFound {
                name: name.to_string(),
            })
    }

    /// Indexes of the partition key columns (hash tables only).
    pub fn key_indexes(&self) -> Vec<usize> {
        self.key_columns().collect()
    }

    /// [`TableDef::key_indexes`] without a vector (the routing of every
    /// point statement walks it).
    pub fn key_columns(&self) -> impl Iterator<Item = usize> + '_ {
        let columns = match &self.distribution {
            Distribution::Hash { columns, .. } => columns.as_slice(),
            _ => &[],
        };
        columns.iter().filter_map(|c| self.column_index(c))
    }

    /// The number of hash partitions (1 for a table that is not hashed):
    /// what the hash function spreads key values over. Where each lives is
    /// [`crate::Placement`]'s to say.
    pub fn hash_partitions(&self) -> u32 {
        match self.distribution {
            Distribution::Hash { partitions, .. } => partitions.max(1),
            _ => 1,
        }
    }

    /// The name of a physical table of this table on its shard:
    /// `<name>_<table id>` (whole copies) or `<name>_<table id>_p<i>`
    /// (partitions), the name cut to 40 characters. The table id makes it
    /// unique: no other logical table, and no table created later under
    /// the same name, can own it (a name alone let `CREATE TABLE t_p0`
    /// adopt partition 0 of `t`).
    pub fn physical_name(&self, partition: u32) -> String {
        let short: String = self.name.chars().take(40).collect();
        match self.distribution {
            Distribution::Hash { .. } => format!("{short}_{}_p{partition}", self.id.0),
            _ => format!("{short}_{}", self.id.0),
        }
    }

    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }
}

/// The partition key of a table hashed without a named key: the leading
/// column of its primary key, as YugabyteDB does, so tables whose keys
/// start alike (TPC-C's warehouse id) are co-located and their joins and
/// foreign keys stay inside each shard. The whole primary key where a
/// unique constraint lacks that column (it is enforced per partition) or
/// it cannot be hashed alike (floating point), or when the cluster's
/// `default_distribution` is `hash-primary-key`.
pub fn default_hash_key(
    primary_key: &[String],
    uniques: &[Vec<String>],
    columns: &[ColumnDef],
    default: common::config::DefaultDistribution,
) -> Vec<String> {
    let Some(lead) = primary_key.first() else {
        return vec![];
    };
    let hashable = columns
        .iter()
        .find(|c| &c.name == lead)
        .is_some_and(|c| !matches!(c.ty, SqlType::Real | SqlType::Double));
    if default == common::config::DefaultDistribution::HashPrimaryKey
        || !hashable
        || uniques.iter().any(|u| !u.contains(lead))
    {
        return primary_key.to_vec();
    }
    vec![lead.clone()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::config::DefaultDistribution;

    fn col(name: &str, ty: SqlType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            not_null: true,
            default: None,
            identity: None,
            sequence: None,
        }
    }

    #[test]
    fn the_default_key_is_the_leading_primary_key_column_where_it_can_be() {
        let cols = [
            col("w", SqlType::Integer),
            col("d", SqlType::Integer),
            col("x", SqlType::Double),
        ];
        let pk = ["w".to_string(), "d".to_string()];
        let lead =
            |pk: &[String], uniques: &[Vec<String>], d| default_hash_key(pk, uniques, &cols, d);
        assert_eq!(lead(&pk, &[], DefaultDistribution::Hash), ["w"]);
        assert_eq!(lead(&pk, &[], DefaultDistribution::HashPrimaryKey), pk);
        // A unique key without the leading column is enforced per partition.
        assert_eq!(
            lead(&pk, &[vec!["d".into()]], DefaultDistribution::Hash),
            pk
        );
        assert_eq!(
            lead(
                &pk,
                &[vec!["d".into(), "w".into()]],
                DefaultDistribution::Hash
            ),
            ["w"]
        );
        // Floating point is not hashed alike.
        let fpk = ["x".to_string(), "w".to_string()];
        assert_eq!(lead(&fpk, &[], DefaultDistribution::Hash), fpk);
        assert!(lead(&[], &[], DefaultDistribution::Hash).is_empty());
    }
}
