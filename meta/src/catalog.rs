//! In-memory catalog snapshot, immutable once loaded.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use common::config::MysqlEndpoint;
use common::{ShardId, SqlType, TableId};

use crate::placement::Placement;

pub use crate::table::{ColumnDef, Distribution, Identity, IndexDef, TableDef};

/// A foreign key (ALTER TABLE ... ADD FOREIGN KEY) of table `table`
/// referencing `ref_table`, and who checks it (see ARCHITECTURE.md,
/// "Foreign keys").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKeyDef {
    pub id: u64,
    pub table: TableId,
    pub name: String,
    pub columns: Vec<String>,
    pub ref_table: TableId,
    pub ref_columns: Vec<String>,
    /// `NO ACTION`, `RESTRICT`, `CASCADE`, `SET NULL`.
    pub on_delete: String,
    pub on_update: String,
    pub enforcement: Enforcement,
}

/// Who checks a foreign key. Stored in meta as 0 (recorded), 1 (shards),
/// 2 (compute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Recorded only (`tessera.unenforced_foreign_keys`): nobody checks it.
    Recorded,
    /// InnoDB on each shard: the tables are co-located, so every child
    /// row's referenced row is on its shard.
    Shards,
    /// The compute node, in the writing transaction: a locking read of the
    /// referenced keys after a child write, of the referencing rows after
    /// a parent delete (`compute::exec::foreign_keys`).
    Compute,
}

impl Enforcement {
    pub fn code(self) -> u8 {
        match self {
            Enforcement::Recorded => 0,
            Enforcement::Shards => 1,
            Enforcement::Compute => 2,
        }
    }

    pub fn from_code(c: u8) -> Enforcement {
        match c {
            1 => Enforcement::Shards,
            2 => Enforcement::Compute,
            _ => Enforcement::Recorded,
        }
    }
}

impl ForeignKeyDef {
    /// The InnoDB constraint's name on partition `p` (unique in its shard
    /// database, as InnoDB wants).
    pub fn physical_name(&self, partition: u32) -> String {
        format!("tsr_fk{}_p{partition}", self.id)
    }
}

/// A sequence (CREATE SEQUENCE): its options as PostgreSQL keeps them.
/// Its state (last value, whether it was called) lives in meta and is
/// changed by `nextval`/`setval` outside the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceDef {
    pub id: u64,
    pub schema: String,
    pub name: String,
    /// smallint, integer or bigint.
    pub ty: SqlType,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub start: i64,
    pub cache: i64,
    pub cycle: bool,
    /// `OWNED BY table.column`: dropped with the table.
    pub owned_by: Option<(TableId, String)>,
    /// Moved by `setval`: nodes drop their cached ranges of a
    /// sequence whose generation changed.
    pub generation: u64,
}

impl SequenceDef {
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }

    /// The name a column's `sequence` holds for a `DEFAULT nextval(...)`
    /// of this sequence (SERIAL columns hold their own counter's name).
    pub fn column_source(&self) -> String {
        format!("{SEQUENCE_SOURCE_PREFIX}{}", self.qualified_name())
    }
}

/// A view (CREATE VIEW), expanded into the statements that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDef {
    pub id: u64,
    pub schema: String,
    pub name: String,
    /// The query, as printed from its parse with every relation name
    /// qualified by the schema it resolved to at creation.
    pub definition: String,
    /// The view's columns and their wire type OIDs.
    pub columns: Vec<String>,
    pub type_oids: Vec<u32>,
    /// The tables and views it reads, `schema.name`.
    pub reads: Vec<(String, String)>,
}

impl ViewDef {
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }
}

/// Marks a column `sequence` that names a user sequence (see
/// [`SequenceDef::column_source`]).
pub const SEQUENCE_SOURCE_PREFIX: &str = "@";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardInfo {
    pub id: ShardId,
    pub endpoint: MysqlEndpoint,
}

/// One consistent snapshot of the catalog.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub version: u64,
    /// Where every table's partitions live and which server serves each
    /// shard: the one map routing, scans, DDL and transactions ask.
    pub placement: Arc<Placement>,
    pub schemas: BTreeSet<String>,
    pub tables: HashMap<(String, String), Arc<TableDef>>,
    /// Roles by name.
    pub roles: HashMap<String, Role>,
    /// Privileges granted (see [`Privilege`]).
    pub grants: std::collections::HashSet<Privilege>,
    /// Owner of each table created by a role (tables without one belong to
    /// the superusers).
    pub owners: HashMap<TableId, String>,
    /// Sequences by (schema, name).
    pub sequences: HashMap<(String, String), Arc<SequenceDef>>,
    /// Foreign keys between tables of the catalog.
    pub foreign_keys: Vec<Arc<ForeignKeyDef>>,
    /// COMMENT ON texts by (kind, object id, column): kind `table` (a table
    /// id; a column's name, or empty for the table) or `sequence`.
    pub comments: HashMap<(String, u64, String), String>,
    /// Views by (schema, name).
    pub views: HashMap<(String, String), Arc<ViewDef>>,
    /// ALTER SYSTEM's values by parameter (lower case), as SHOW prints
    /// them: every compute node's new sessions start with them (meta's
    /// `settings` table, read in the catalog's snapshot so a node sees
    /// them with the catalog version that changed them).
    pub system_settings: BTreeMap<String, String>,
}

/// The SCRAM-SHA-256 verifier of a password, what PostgreSQL stores
/// (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`): enough
/// to check a login, not to make one (the salted password, from which a
/// client proof can be computed, is never stored).
#[derive(Clone, PartialEq, Eq)]
pub struct ScramVerifier {
    pub salt: Vec<u8>,
    pub iterations: u32,
    /// `SHA-256(HMAC(SaltedPassword, "Client Key"))`
    pub stored_key: Vec<u8>,
    /// `HMAC(SaltedPassword, "Server Key")`
    pub server_key: Vec<u8>,
}

impl ScramVerifier {
    /// The verifier of a salted password (`Hi(password, salt, iterations)`).
    pub fn from_salted_password(salt: Vec<u8>, salted_password: &[u8], iterations: u32) -> Self {
        use ring::{digest, hmac};
        let key = hmac::Key::new(hmac::HMAC_SHA256, salted_password);
        let client_key = hmac::sign(&key, b"Client Key");
        let stored_key = digest::digest(&digest::SHA256, client_key.as_ref())
            .as_ref()
            .to_vec();
        let server_key = hmac::sign(&key, b"Server Key").as_ref().to_vec();
        ScramVerifier {
            salt,
            iterations,
            stored_key,
            server_key,
        }
    }
}

impl std::fmt::Debug for ScramVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramVerifier")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

/// A PostgreSQL role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub superuser: bool,
    pub login: bool,
}

/// One privilege granted: to `grantee` (a role or `public`), on a table
/// (`kind` "table", `object` its name) or a schema (`kind` "schema",
/// `object` empty), `privilege` in PostgreSQL's spelling (`SELECT`,
/// `INSERT`, `UPDATE`, `DELETE`, `TRUNCATE`, `USAGE`, `CREATE`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Privilege {
    pub grantee: String,
    pub kind: String,
    pub schema: String,
    pub object: String,
    pub privilege: String,
}

impl Catalog {
    /// Whether `role` (or PUBLIC) holds `privilege` on the object.
    pub fn granted(
        &self,
        role: &str,
        kind: &str,
        schema: &str,
        object: &str,
        privilege: &str,
    ) -> bool {
        [role, "public"].iter().any(|g| {
            self.grants.contains(&Privilege {
                grantee: g.to_string(),
                kind: kind.into(),
                schema: schema.into(),
                object: object.into(),
                privilege: privilege.into(),
            })
        })
    }
}

impl Catalog {
    pub fn table(&self, schema: &str, name: &str) -> Option<&Arc<TableDef>> {
        self.tables.get(&(schema.to_string(), name.to_string()))
    }

    /// The slots of a new table. A hash table joins a co-location group:
    /// of the hash tables with the partition count asked for, or with none
    /// asked, of all hash tables (the layout most of them share; on a tie,
    /// the oldest table's). So joins on the distribution key stay
    /// co-located after partition moves changed the round robin or shards
    /// were added. With no such table, the placement's policy
    /// ([`Placement::layout_for_new`]).
    pub fn layout_for_new(
        &self,
        distribution: &Distribution,
        partitions: Option<u32>,
    ) -> common::Result<Vec<ShardId>> {
        if matches!(distribution, Distribution::Hash { .. }) {
            if let Some(layout) = self.group_layout(partitions) {
                return Ok(layout);
            }
        }
        self.placement.layout_for_new(distribution, partitions)
    }

    /// The layout most hash tables (of `partitions` partitions, if given)
    /// share.
    fn group_layout(&self, partitions: Option<u32>) -> Option<Vec<ShardId>> {
        let mut groups: BTreeMap<&[ShardId], (usize, std::cmp::Reverse<TableId>)> = BTreeMap::new();
        for t in self.tables.values() {
            let Distribution::Hash { partitions: p, .. } = t.distribution else {
                continue;
            };
            let layout = self.placement.layout(t.id);
            if partitions.is_some_and(|n| n != p) || layout.len() != p as usize {
                continue;
            }
            let g = groups.entry(layout).or_insert((0, std::cmp::Reverse(t.id)));
            g.0 += 1;
            g.1 = g.1.max(std::cmp::Reverse(t.id));
        }
        groups
            .into_iter()
            .max_by_key(|(_, rank)| *rank)
            .map(|(layout, _)| layout.to_vec())
    }

    /// Foreign keys of table `t` (`referencing`), or referencing it.
    /// The keys of `t` (`referencing`) or to `t` that the compute node
    /// checks (`Enforcement::Compute`).
    pub fn checked_foreign_keys(&self, t: TableId, referencing: bool) -> Vec<Arc<ForeignKeyDef>> {
        self.foreign_keys_of(t, referencing)
            .into_iter()
            .filter(|f| f.enforcement == Enforcement::Compute)
            .collect()
    }

    /// Whether writes to `t` are checked by the compute node, as the
    /// referencing or the referenced table.
    pub fn checks_foreign_keys(&self, t: TableId) -> bool {
        self.foreign_keys
            .iter()
            .any(|f| f.enforcement == Enforcement::Compute && (f.table == t || f.ref_table == t))
    }

    pub fn foreign_keys_of(&self, t: TableId, referencing: bool) -> Vec<Arc<ForeignKeyDef>> {
        self.foreign_keys
            .iter()
            .filter(|f| {
                if referencing {
                    f.table == t
                } else {
                    f.ref_table == t
                }
            })
            .cloned()
            .collect()
    }

    pub fn table_by_id(&self, id: TableId) -> Option<&Arc<TableDef>> {
        self.tables.values().find(|t| t.id == id)
    }

    pub fn view(&self, schema: &str, name: &str) -> Option<&Arc<ViewDef>> {
        self.views.get(&(schema.to_string(), name.to_string()))
    }

    /// The views that read relation `schema.name`, directly or through
    /// other views, each once (readers after what they read).
    pub fn views_reading(&self, schema: &str, name: &str) -> Vec<Arc<ViewDef>> {
        let mut out: Vec<Arc<ViewDef>> = vec![];
        let mut todo = vec![(schema.to_string(), name.to_string())];
        while let Some(rel) = todo.pop() {
            let mut readers: Vec<&Arc<ViewDef>> = self
                .views
                .values()
                .filter(|v| v.reads.contains(&rel))
                .filter(|v| !out.iter().any(|o| o.id == v.id))
                .collect();
            readers.sort_by_key(|v| v.id);
            for v in readers {
                out.push(v.clone());
                todo.push((v.schema.clone(), v.name.clone()));
            }
        }
        out
    }

    pub fn sequence(&self, schema: &str, name: &str) -> Option<&Arc<SequenceDef>> {
        self.sequences.get(&(schema.to_string(), name.to_string()))
    }

    pub fn shard_ids(&self) -> Vec<ShardId> {
        self.placement.shard_ids()
    }

    /// Finds which table owns an index name in a schema.
    pub fn index_owner(&self, schema: &str, index: &str) -> Option<&Arc<TableDef>> {
        self.tables
            .values()
            .find(|t| t.schema == schema && t.indexes.iter().any(|i| i.name == index))
    }
}
