//! The cluster-wide DDL lock and the catalog changes made under it.

use common::{Error, Result, ShardId, TableId};
use mysql_async::prelude::*;
use mysql_async::Conn;

use crate::catalog::{Distribution, IndexDef, ScramVerifier, SequenceDef, TableDef};

use super::{list, me, MetaStore};

impl MetaStore {
    /// Starts a DDL change: takes the cluster-wide DDL lock (a MariaDB named
    /// lock, released if this connection dies) and opens a meta transaction.
    pub async fn begin_ddl(&self, node_id: u32, statement: &str) -> Result<DdlTxn> {
        self.ddl_within(node_id, statement, 60)
            .await?
            .ok_or_else(|| Error::Sql {
                state: common::SqlState::LOCK_NOT_AVAILABLE,
                message: "could not obtain the cluster DDL lock within 60 s".into(),
            })
    }

    /// [`MetaStore::begin_ddl`] if the DDL lock is free now, else `None`.
    pub async fn try_begin_ddl(&self, node_id: u32, statement: &str) -> Result<Option<DdlTxn>> {
        self.ddl_within(node_id, statement, 0).await
    }

    async fn ddl_within(&self, node_id: u32, statement: &str, secs: u32) -> Result<Option<DdlTxn>> {
        let mut conn = self.conn().await?;
        let got: Option<Option<i64>> = conn
            .query_first(format!("SELECT GET_LOCK('tessera_ddl', {secs})"))
            .await
            .map_err(me)?;
        if got.flatten() != Some(1) {
            return Ok(None);
        }
        conn.query_drop("START TRANSACTION").await.map_err(me)?;
        Ok(Some(DdlTxn {
            conn: Some(conn),
            node_id,
            statement: statement.to_string(),
        }))
    }
}

/// An open DDL change. Dropping it without `commit` rolls the catalog change
/// back and releases the DDL lock (in a spawned task, before the connection
/// goes back to the pool).
pub struct DdlTxn {
    conn: Option<Conn>,
    node_id: u32,
    statement: String,
}

impl DdlTxn {
    pub(super) fn c(&mut self) -> Result<&mut Conn> {
        self.conn
            .as_mut()
            .ok_or_else(|| Error::internal("DDL transaction already finished"))
    }

    pub async fn create_schema(&mut self, name: &str) -> Result<()> {
        self.c()?
            .exec_drop("INSERT INTO cat_schemas VALUES (?)", (name,))
            .await
            .map_err(me)
    }

    pub async fn drop_schema(&mut self, name: &str) -> Result<()> {
        self.c()?
            .exec_drop("DELETE FROM cat_schemas WHERE schema_name = ?", (name,))
            .await
            .map_err(me)
    }

    /// A table id never used before: a placeholder row whose name
    /// `update_table` (or the caller) sets under the DDL lock.
    async fn new_table_id(&mut self) -> Result<u64> {
        let conn = self.c()?;
        conn.query_drop(
            "INSERT INTO cat_tables (schema_name, table_name, distribution, dist_columns, primary_key) VALUES ('', '', 'single', '[]', '[]')",
        )
        .await
        .map_err(me)?;
        conn.last_insert_id()
            .ok_or_else(|| Error::meta("no table id assigned"))
    }

    /// Records a new table with its slots on `layout` (see
    /// [`crate::Placement`]); returns its id. `def.id` is ignored.
    pub async fn create_table(&mut self, def: &TableDef, layout: &[ShardId]) -> Result<TableId> {
        let id = self.new_table_id().await?;
        // The sequence name carries the table id: a table created again
        // under a dropped one's name gets a new sequence, so no node's
        // cached range of the old one can hand out a value twice. A
        // `DEFAULT nextval('s')` names a user sequence as it is.
        let mut def = def.clone();
        def.id = TableId(id);
        let mut counters = vec![];
        for c in &mut def.columns {
            if let Some(s) = &mut c.sequence {
                if !s.starts_with(crate::catalog::SEQUENCE_SOURCE_PREFIX) {
                    s.push_str(&format!("#{id}"));
                    counters.push(s.clone());
                }
            }
        }
        self.update_table(&def, &counters).await?;
        self.set_layout(def.id, layout).await?;
        Ok(TableId(id))
    }

    /// Sets where a table's slots live (meta's `cat_partitions`; an empty
    /// layout removes them). A change moves the placement epoch
    /// (`shard_map.map_version`) and is recorded slot by slot in
    /// `placement_log`, so the map's history stays in meta.
    pub async fn set_layout(&mut self, table: TableId, layout: &[ShardId]) -> Result<()> {
        let conn = self.c()?;
        let old: Vec<u32> = conn
            .exec(
                "SELECT shard_id FROM cat_partitions WHERE table_id = ? ORDER BY partition_no",
                (table.0,),
            )
            .await
            .map_err(me)?;
        let old: Vec<ShardId> = old.into_iter().map(ShardId).collect();
        if old == layout {
            return Ok(());
        }
        conn.query_drop("UPDATE shard_map SET map_version = map_version + 1 WHERE id = 1")
            .await
            .map_err(me)?;
        let epoch: u64 = conn
            .query_first("SELECT map_version FROM shard_map WHERE id = 1")
            .await
            .map_err(me)?
            .ok_or_else(|| Error::meta("the shard_map row is missing"))?;
        conn.exec_drop("DELETE FROM cat_partitions WHERE table_id = ?", (table.0,))
            .await
            .map_err(me)?;
        for (i, s) in layout.iter().enumerate() {
            conn.exec_drop(
                "INSERT INTO cat_partitions VALUES (?, ?, ?, ?)",
                (table.0, i as u32, s.0, epoch),
            )
            .await
            .map_err(me)?;
        }
        for i in 0..old.len().max(layout.len()) {
            let (from, to) = (old.get(i).map(|s| s.0), layout.get(i).map(|s| s.0));
            if from != to {
                conn.exec_drop(
                    "INSERT INTO placement_log (epoch, table_id, partition_no, from_shard, to_shard) VALUES (?, ?, ?, ?, ?)",
                    (epoch, table.0, i as u32, from, to),
                )
                .await
                .map_err(me)?;
            }
        }
        Ok(())
    }

    /// Rewrites a table's catalog rows (name, distribution, columns,
    /// indexes) to `def`, keeping its id; where its slots live is
    /// [`DdlTxn::set_layout`]'s. `new_sequences`:
    /// sequences of columns added with it (full names, as in `def`).
    pub async fn update_table(&mut self, def: &TableDef, new_sequences: &[String]) -> Result<()> {
        let dist_cols = match &def.distribution {
            Distribution::Hash { columns, .. } => columns.clone(),
            _ => vec![],
        };
        let id = def.id.0;
        let conn = self.c()?;
        conn.exec_drop(
            "UPDATE cat_tables SET schema_name = ?, table_name = ?, distribution = ?, dist_columns = ?, primary_key = ? WHERE table_id = ?",
            (&def.schema, &def.name, def.distribution.kind(), list(&dist_cols), list(&def.primary_key), id),
        )
        .await
        .map_err(me)?;
        for t in ["cat_columns", "cat_indexes"] {
            conn.exec_drop(format!("DELETE FROM {t} WHERE table_id = ?"), (id,))
                .await
                .map_err(me)?;
        }
        for (i, c) in def.columns.iter().enumerate() {
            conn.exec_drop(
                "INSERT INTO cat_columns (table_id, ordinal, column_name, type_name, not_null, default_expr, sequence_name, identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    id,
                    i as u32,
                    &c.name,
                    c.ty.to_string(),
                    c.not_null,
                    &c.default,
                    &c.sequence,
                    c.identity.map(|x| x.as_str()),
                ),
            )
            .await
            .map_err(me)?;
        }
        for seq in new_sequences {
            conn.exec_drop(
                "INSERT INTO sequences (sequence_name, next_value, increment_by) VALUES (?, 1, 1)",
                (seq,),
            )
            .await
            .map_err(me)?;
        }
        for ix in &def.indexes {
            conn.exec_drop(
                "INSERT INTO cat_indexes VALUES (?, ?, ?, ?)",
                (id, &ix.name, list(&ix.columns), ix.unique),
            )
            .await
            .map_err(me)?;
        }
        Ok(())
    }

    /// Gives a table a new id (never used before), keeping its rows: a
    /// redistributed table's physical tables carry the new id, so they
    /// never share a name with the old layout's.
    pub async fn renumber_table(&mut self, old: TableId) -> Result<TableId> {
        let id = self.new_table_id().await?;
        // The old id's slots end here (logged as gone); the caller places
        // the new id with `set_layout`.
        self.set_layout(old, &[]).await?;
        let conn = self.c()?;
        conn.exec_drop("DELETE FROM cat_tables WHERE table_id = ?", (id,))
            .await
            .map_err(me)?;
        for t in ["cat_tables", "cat_columns", "cat_indexes", "table_owners"] {
            conn.exec_drop(
                format!("UPDATE {t} SET table_id = ? WHERE table_id = ?"),
                (id, old.0),
            )
            .await
            .map_err(me)?;
        }
        for sql in [
            "UPDATE cat_sequences SET owned_table = ? WHERE owned_table = ?",
            "UPDATE cat_foreign_keys SET table_id = ? WHERE table_id = ?",
            "UPDATE cat_foreign_keys SET ref_table_id = ? WHERE ref_table_id = ?",
        ] {
            conn.exec_drop(sql, (id, old.0)).await.map_err(me)?;
        }
        Ok(TableId(id))
    }

    /// Records a new sequence (its state at its start, not yet called);
    /// returns its id. `def.id` is ignored.
    pub async fn create_sequence(&mut self, def: &SequenceDef) -> Result<u64> {
        let conn = self.c()?;
        let (owned_table, owned_column) = match &def.owned_by {
            Some((t, c)) => (Some(t.0), Some(c.clone())),
            None => (None, None),
        };
        conn.exec_drop(
            "INSERT INTO cat_sequences (schema_name, seq_name, type_name, increment_by, min_value, max_value, start_value, cache_size, cycle, owned_table, owned_column, last_value, is_called) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FALSE)",
            mysql_async::Params::Positional(vec![
                def.schema.clone().into(),
                def.name.clone().into(),
                def.ty.to_string().into(),
                def.increment.into(),
                def.min.into(),
                def.max.into(),
                def.start.into(),
                def.cache.into(),
                def.cycle.into(),
                owned_table.into(),
                owned_column.into(),
                def.start.into(),
            ]),
        )
        .await
        .map_err(me)?;
        conn.last_insert_id()
            .ok_or_else(|| Error::meta("no sequence id assigned"))
    }

    /// Records a foreign key; returns its id. `fk.id` is ignored.
    pub async fn add_foreign_key(&mut self, fk: &crate::catalog::ForeignKeyDef) -> Result<u64> {
        let conn = self.c()?;
        conn.exec_drop(
            "INSERT INTO cat_foreign_keys (table_id, fk_name, columns, ref_table_id, ref_columns, on_delete, on_update, enforced) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (fk.table.0, &fk.name, list(&fk.columns), fk.ref_table.0, list(&fk.ref_columns), &fk.on_delete, &fk.on_update, fk.enforcement.code()),
        )
        .await
        .map_err(me)?;
        conn.last_insert_id()
            .ok_or_else(|| Error::meta("no foreign key id assigned"))
    }

    pub async fn drop_foreign_key(&mut self, id: u64) -> Result<()> {
        self.c()?
            .exec_drop("DELETE FROM cat_foreign_keys WHERE fk_id = ?", (id,))
            .await
            .map_err(me)
    }

    /// Records a view; returns its id. `def.id` is ignored.
    pub async fn create_view(&mut self, def: &crate::catalog::ViewDef) -> Result<u64> {
        let conn = self.c()?;
        let oids: Vec<String> = def.type_oids.iter().map(|o| o.to_string()).collect();
        let reads: Vec<String> = def.reads.iter().map(|(s, n)| format!("{s}.{n}")).collect();
        conn.exec_drop(
            "INSERT INTO cat_views (schema_name, view_name, definition, columns, type_oids, reads_from) VALUES (?, ?, ?, ?, ?, ?)",
            (&def.schema, &def.name, &def.definition, list(&def.columns), list(&oids), list(&reads)),
        )
        .await
        .map_err(me)?;
        conn.last_insert_id()
            .ok_or_else(|| Error::meta("no view id assigned"))
    }

    /// Replaces a view's definition (CREATE OR REPLACE VIEW), keeping its id.
    pub async fn replace_view(&mut self, def: &crate::catalog::ViewDef) -> Result<()> {
        let oids: Vec<String> = def.type_oids.iter().map(|o| o.to_string()).collect();
        let reads: Vec<String> = def.reads.iter().map(|(s, n)| format!("{s}.{n}")).collect();
        self.c()?
            .exec_drop(
                "UPDATE cat_views SET definition = ?, columns = ?, type_oids = ?, reads_from = ? WHERE view_id = ?",
                (&def.definition, list(&def.columns), list(&oids), list(&reads), def.id),
            )
            .await
            .map_err(me)
    }

    pub async fn drop_view(&mut self, id: u64) -> Result<()> {
        let c = self.c()?;
        c.exec_drop("DELETE FROM cat_views WHERE view_id = ?", (id,))
            .await
            .map_err(me)?;
        c.exec_drop(
            "DELETE FROM cat_comments WHERE kind = 'view' AND object_id = ?",
            (id,),
        )
        .await
        .map_err(me)
    }

    pub async fn drop_sequence(&mut self, id: u64) -> Result<()> {
        self.c()?
            .exec_drop("DELETE FROM cat_sequences WHERE seq_id = ?", (id,))
            .await
            .map_err(me)
    }

    /// Removes a table from the catalog with what belongs to it.
    pub async fn drop_table(&mut self, def: &TableDef) -> Result<()> {
        self.drop_table_keeping(def).await?;
        self.drop_table_leftovers(def).await
    }

    /// Removes a table's catalog rows but keeps its grants, owner, SERIAL
    /// counters and owned sequences, so [`DdlTxn::restore_table`] can put
    /// it back (a DROP inside a transaction block, before the block ends).
    pub async fn drop_table_keeping(&mut self, def: &TableDef) -> Result<()> {
        let conn = self.c()?;
        for t in ["cat_tables", "cat_columns", "cat_indexes"] {
            conn.exec_drop(format!("DELETE FROM {t} WHERE table_id = ?"), (def.id.0,))
                .await
                .map_err(me)?;
        }
        self.set_layout(def.id, &[]).await
    }

    /// What a dropped table leaves: its grants, owner, SERIAL counters and
    /// the sequences OWNED BY it.
    pub async fn drop_table_leftovers(&mut self, def: &TableDef) -> Result<()> {
        let conn = self.c()?;
        conn.exec_drop(
            "DELETE FROM grants WHERE kind = 'table' AND schema_name = ? AND object_name = ?",
            (&def.schema, &def.name),
        )
        .await
        .map_err(me)?;
        conn.exec_drop("DELETE FROM table_owners WHERE table_id = ?", (def.id.0,))
            .await
            .map_err(me)?;
        conn.exec_drop(
            "DELETE FROM cat_sequences WHERE owned_table = ?",
            (def.id.0,),
        )
        .await
        .map_err(me)?;
        conn.exec_drop(
            "DELETE FROM cat_foreign_keys WHERE table_id = ? OR ref_table_id = ?",
            (def.id.0, def.id.0),
        )
        .await
        .map_err(me)?;
        for c in &def.columns {
            if let Some(seq) = &c.sequence {
                conn.exec_drop("DELETE FROM sequences WHERE sequence_name = ?", (seq,))
                    .await
                    .map_err(me)?;
            }
        }
        Ok(())
    }

    /// Puts back a table removed by [`DdlTxn::drop_table_keeping`], with
    /// its id and its slots on `layout`.
    pub async fn restore_table(&mut self, def: &TableDef, layout: &[ShardId]) -> Result<()> {
        let dist_cols = match &def.distribution {
            Distribution::Hash { columns, .. } => columns.clone(),
            _ => vec![],
        };
        self.c()?
            .exec_drop(
                "INSERT INTO cat_tables (table_id, schema_name, table_name, distribution, dist_columns, primary_key) VALUES (?, ?, ?, ?, ?, ?)",
                (def.id.0, &def.schema, &def.name, def.distribution.kind(), list(&dist_cols), list(&def.primary_key)),
            )
            .await
            .map_err(me)?;
        self.update_table(def, &[]).await?;
        self.set_layout(def.id, layout).await
    }

    /// Sets (or, with `None`, removes) the comment of an object: kind
    /// `table` or `sequence`, its id, a column's name or empty.
    pub async fn set_comment(
        &mut self,
        kind: &str,
        id: u64,
        column: &str,
        comment: Option<&str>,
    ) -> Result<()> {
        let c = self.c()?;
        match comment {
            Some(text) => c
                .exec_drop(
                    "REPLACE INTO cat_comments (kind, object_id, column_name, comment) VALUES (?, ?, ?, ?)",
                    (kind, id, column, text),
                )
                .await
                .map_err(me),
            None => c
                .exec_drop(
                    "DELETE FROM cat_comments WHERE kind = ? AND object_id = ? AND column_name = ?",
                    (kind, id, column),
                )
                .await
                .map_err(me),
        }
    }

    pub async fn add_index(&mut self, table: TableId, ix: &IndexDef) -> Result<()> {
        self.c()?
            .exec_drop(
                "INSERT INTO cat_indexes VALUES (?, ?, ?, ?)",
                (table.0, &ix.name, list(&ix.columns), ix.unique),
            )
            .await
            .map_err(me)
    }

    pub async fn drop_index(&mut self, table: TableId, name: &str) -> Result<()> {
        self.c()?
            .exec_drop(
                "DELETE FROM cat_indexes WHERE table_id = ? AND index_name = ?",
                (table.0, name),
            )
            .await
            .map_err(me)
    }

    /// Creates or changes a role. `None` keeps a field as it is (new
    /// roles: no superuser, no login, no password).
    pub async fn put_role(
        &mut self,
        name: &str,
        superuser: Option<bool>,
        login: Option<bool>,
        password: Option<Option<ScramVerifier>>,
    ) -> Result<()> {
        let conn = self.c()?;
        conn.exec_drop(
            "INSERT IGNORE INTO users (user_name, salt, iterations, stored_key, server_key, superuser, can_login) VALUES (?, NULL, 0, NULL, NULL, FALSE, FALSE)",
            (name,),
        )
        .await
        .map_err(me)?;
        if let Some(su) = superuser {
            conn.exec_drop(
                "UPDATE users SET superuser = ? WHERE user_name = ?",
                (su, name),
            )
            .await
            .map_err(me)?;
        }
        if let Some(l) = login {
            conn.exec_drop(
                "UPDATE users SET can_login = ? WHERE user_name = ?",
                (l, name),
            )
            .await
            .map_err(me)?;
        }
        if let Some(p) = password {
            let (salt, iter, stored, server) = match p {
                Some(v) => (
                    Some(v.salt),
                    v.iterations,
                    Some(v.stored_key),
                    Some(v.server_key),
                ),
                None => (None, 0, None, None),
            };
            conn.exec_drop(
                "UPDATE users SET salt = ?, iterations = ?, stored_key = ?, server_key = ? WHERE user_name = ?",
                (salt, iter, stored, server, name),
            )
            .await
            .map_err(me)?;
        }
        Ok(())
    }

    /// Drops a role and what was granted to it; its tables go to no one
    /// (the superusers).
    pub async fn drop_role(&mut self, name: &str) -> Result<()> {
        let conn = self.c()?;
        for sql in [
            "DELETE FROM users WHERE user_name = ?",
            "DELETE FROM grants WHERE grantee = ?",
            "DELETE FROM table_owners WHERE owner = ?",
        ] {
            conn.exec_drop(sql, (name,)).await.map_err(me)?;
        }
        Ok(())
    }

    /// Grants (or revokes) one privilege.
    pub async fn set_grant(&mut self, p: &crate::catalog::Privilege, grant: bool) -> Result<()> {
        let sql = if grant {
            "INSERT IGNORE INTO grants VALUES (?, ?, ?, ?, ?)"
        } else {
            "DELETE FROM grants WHERE grantee = ? AND kind = ? AND schema_name = ? AND object_name = ? AND privilege = ?"
        };
        self.c()?
            .exec_drop(
                sql,
                (&p.grantee, &p.kind, &p.schema, &p.object, &p.privilege),
            )
            .await
            .map_err(me)
    }

    /// Records the role that created a table.
    pub async fn set_owner(&mut self, table: TableId, owner: &str) -> Result<()> {
        self.c()?
            .exec_drop("REPLACE INTO table_owners VALUES (?, ?)", (table.0, owner))
            .await
            .map_err(me)
    }

    /// Logs the statement, bumps the catalog version, commits and releases
    /// the DDL lock. Returns the new catalog version.
    pub async fn commit(mut self) -> Result<u64> {
        let node_id = self.node_id;
        let statement = std::mem::take(&mut self.statement);
        let conn = self.c()?;
        conn.query_drop("UPDATE catalog_version SET version = version + 1 WHERE id = 1")
            .await
            .map_err(me)?;
        let v: Option<u64> = conn
            .query_first("SELECT version FROM catalog_version WHERE id = 1")
            .await
            .map_err(me)?;
        let v = v.unwrap_or(0);
        conn.exec_drop(
            "INSERT INTO ddl_log (node_id, statement, catalog_version) VALUES (?, ?, ?)",
            (node_id, statement, v),
        )
        .await
        .map_err(me)?;
        conn.query_drop("COMMIT").await.map_err(me)?;
        conn.query_drop("DO RELEASE_LOCK('tessera_ddl')")
            .await
            .map_err(me)?;
        self.conn = None;
        Ok(v)
    }
}

impl Drop for DdlTxn {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            tokio::spawn(async move {
                let _ = conn.query_drop("ROLLBACK").await;
                let _ = conn.query_drop("DO RELEASE_LOCK('tessera_ddl')").await;
            });
        }
    }
}
