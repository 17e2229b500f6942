//! `MetaStore`: the handle a compute node (or `tessera cluster up`) uses to
//! read and change the metadata MariaDB.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use common::config::MysqlEndpoint;
use common::{Error, Result, ShardId, SqlType, TableId};
use mysql_async::prelude::*;
use mysql_async::{Conn, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};

use crate::catalog::{
    Catalog, ColumnDef, Distribution, IndexDef, ScramVerifier, SequenceDef, ShardInfo, TableDef,
};
use crate::schema;

fn me(e: mysql_async::Error) -> Error {
    Error::meta(e)
}

#[derive(Clone)]
pub struct MetaStore {
    pool: Pool,
}

type TableRow = (u64, String, String, String, String, String);
type ColumnRow = (u64, String, String, bool, Option<String>, Option<String>);

/// Values handed out by one reservation of a sequence: `count` values
/// from `first`, `increment` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceRange {
    pub first: i64,
    pub count: i64,
    pub increment: i64,
}

fn sequence_error(state: &'static str, message: String) -> Error {
    Error::Sql {
        state: common::SqlState(state),
        message,
    }
}

impl MetaStore {
    pub fn connect(endpoint: &MysqlEndpoint, database: &str) -> Result<MetaStore> {
        let opts = Opts::from_url(&endpoint.url(Some(database))).map_err(Error::meta)?;
        // Idle connections must stay pooled: with mysql_async's default
        // `inactive_connection_ttl` of 0 the pool keeps only `min` idle
        // connections and closes every other one on return, so a compute
        // node opened (and the meta server accepted) a new connection for
        // every catalog poll, heartbeat and client authentication, dozens
        // per second, and bursts of them were reset by the server.
        let constraints = PoolConstraints::new(1, 16).unwrap_or_default();
        let pool_opts = PoolOpts::default()
            .with_constraints(constraints)
            .with_inactive_connection_ttl(std::time::Duration::from_secs(60));
        let opts = OptsBuilder::from_opts(opts)
            .pool_opts(pool_opts)
            .prefer_socket(false)
            .init(vec![
                "SET SESSION sql_mode='STRICT_ALL_TABLES,NO_BACKSLASH_ESCAPES'",
            ]);
        Ok(MetaStore {
            pool: Pool::new(opts),
        })
    }

    /// A pooled meta connection. A connection attempt reset by the server
    /// (seen under bursts of 256 sysbench clients connecting at once) is
    /// retried twice before it is reported.
    pub async fn conn(&self) -> Result<Conn> {
        let mut attempt = 0;
        loop {
            match self.pool.get_conn().await {
                Err(mysql_async::Error::Io(e)) if attempt < 2 => {
                    attempt += 1;
                    tracing::debug!("meta connection failed ({e}), retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt)).await;
                }
                other => return other.map_err(me),
            }
        }
    }

    /// Creates (or upgrades) the metadata schema on a fresh meta server and
    /// records the shards. Idempotent.
    pub async fn bootstrap(
        endpoint: &MysqlEndpoint,
        database: &str,
        cluster_id: &str,
        shards: &[ShardInfo],
    ) -> Result<()> {
        let opts = Opts::from_url(&endpoint.url(None)).map_err(Error::meta)?;
        let mut conn = Conn::new(OptsBuilder::from_opts(opts).prefer_socket(false))
            .await
            .map_err(me)?;
        conn.query_drop(format!(
            "CREATE DATABASE IF NOT EXISTS `{database}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
        ))
        .await
        .map_err(me)?;
        conn.query_drop(format!("USE `{database}`"))
            .await
            .map_err(me)?;
        schema::upgrade(&mut conn).await?;
        let existing: Option<String> = conn
            .query_first("SELECT cluster_id FROM cluster WHERE id = 1")
            .await
            .map_err(me)?;
        match existing {
            Some(id) if id != cluster_id => {
                return Err(Error::meta(format!(
                    "the metadata store belongs to cluster {id}, not {cluster_id}"
                )))
            }
            Some(_) => {}
            None => {
                conn.exec_drop(
                    "INSERT INTO cluster (id, cluster_id) VALUES (1, ?)",
                    (cluster_id,),
                )
                .await
                .map_err(me)?;
            }
        }
        for s in shards {
            conn.exec_drop(
                "REPLACE INTO shards (shard_id, host, port, user) VALUES (?, ?, ?, ?)",
                (s.id.0, &s.endpoint.host, s.endpoint.port, &s.endpoint.user),
            )
            .await
            .map_err(me)?;
        }
        conn.disconnect().await.map_err(me)?;
        Ok(())
    }

    pub async fn catalog_version(&self) -> Result<u64> {
        let mut conn = self.conn().await?;
        let v: Option<u64> = conn
            .query_first("SELECT version FROM catalog_version WHERE id = 1")
            .await
            .map_err(me)?;
        Ok(v.unwrap_or(0))
    }

    /// Reads one consistent snapshot of the whole catalog.
    pub async fn load_catalog(&self) -> Result<Catalog> {
        let mut conn = self.conn().await?;
        conn.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
            .await
            .map_err(me)?;
        let version: Option<u64> = conn
            .query_first("SELECT version FROM catalog_version WHERE id = 1")
            .await
            .map_err(me)?;
        let shards: Vec<(u32, String, u16, String)> = conn
            .query("SELECT shard_id, host, port, user FROM shards ORDER BY shard_id")
            .await
            .map_err(me)?;
        let schemas: Vec<String> = conn
            .query("SELECT schema_name FROM cat_schemas")
            .await
            .map_err(me)?;
        let tables: Vec<TableRow> = conn
            .query("SELECT table_id, schema_name, table_name, distribution, dist_columns, primary_key FROM cat_tables")
            .await
            .map_err(me)?;
        let columns: Vec<ColumnRow> = conn
            .query("SELECT table_id, column_name, type_name, not_null, default_expr, sequence_name FROM cat_columns ORDER BY table_id, ordinal")
            .await
            .map_err(me)?;
        let indexes: Vec<(u64, String, String, bool)> = conn
            .query("SELECT table_id, index_name, columns, is_unique FROM cat_indexes ORDER BY table_id, index_name")
            .await
            .map_err(me)?;
        let partitions: Vec<(u64, u32, u32)> = conn
            .query("SELECT table_id, partition_no, shard_id FROM cat_partitions ORDER BY table_id, partition_no")
            .await
            .map_err(me)?;
        conn.query_drop("COMMIT").await.map_err(me)?;

        let mut cols: HashMap<u64, Vec<ColumnDef>> = HashMap::new();
        for (tid, name, ty, not_null, default, sequence) in columns {
            cols.entry(tid).or_default().push(ColumnDef {
                name,
                ty: SqlType::parse(&ty)?,
                not_null,
                default,
                sequence,
            });
        }
        let mut idx: HashMap<u64, Vec<IndexDef>> = HashMap::new();
        for (tid, name, columns, unique) in indexes {
            idx.entry(tid).or_default().push(IndexDef {
                name,
                columns: parse_list(&columns)?,
                unique,
            });
        }
        let mut parts: HashMap<u64, Vec<ShardId>> = HashMap::new();
        for (tid, _, shard) in partitions {
            parts.entry(tid).or_default().push(ShardId(shard));
        }
        let mut catalog = Catalog {
            version: version.unwrap_or(0),
            shards: shards
                .into_iter()
                .map(|(id, host, port, user)| ShardInfo {
                    id: ShardId(id),
                    // The password is not in meta: each compute node's
                    // config has it (`shard_password`).
                    endpoint: MysqlEndpoint {
                        host,
                        port,
                        user,
                        password: String::new(),
                    },
                })
                .collect(),
            schemas: schemas.into_iter().collect::<BTreeSet<_>>(),
            tables: HashMap::new(),
            roles: HashMap::new(),
            grants: Default::default(),
            owners: HashMap::new(),
            sequences: HashMap::new(),
            foreign_keys: vec![],
        };
        let roles: Vec<(String, bool, bool)> = conn
            .query("SELECT user_name, superuser, can_login FROM users")
            .await
            .map_err(me)?;
        for (name, superuser, login) in roles {
            catalog
                .roles
                .insert(name, crate::catalog::Role { superuser, login });
        }
        let grants: Vec<(String, String, String, String, String)> = conn
            .query("SELECT grantee, kind, schema_name, object_name, privilege FROM grants")
            .await
            .map_err(me)?;
        for (grantee, kind, schema, object, privilege) in grants {
            catalog.grants.insert(crate::catalog::Privilege {
                grantee,
                kind,
                schema,
                object,
                privilege,
            });
        }
        let owners: Vec<(u64, String)> = conn
            .query("SELECT table_id, owner FROM table_owners")
            .await
            .map_err(me)?;
        for (tid, owner) in owners {
            catalog.owners.insert(TableId(tid), owner);
        }
        let sequences: Vec<mysql_async::Row> = conn
            .query("SELECT seq_id, schema_name, seq_name, type_name, increment_by, min_value, max_value, start_value, cache_size, cycle, owned_table, owned_column, generation FROM cat_sequences")
            .await
            .map_err(me)?;
        for mut r in sequences {
            fn col<T: mysql_async::prelude::FromValue>(
                r: &mut mysql_async::Row,
                i: usize,
            ) -> Result<T> {
                r.take_opt(i)
                    .ok_or_else(|| Error::meta(format!("cat_sequences: no column {i}")))?
                    .map_err(|e| Error::meta(format!("cat_sequences column {i}: {e}")))
            }
            let (schema, name): (String, String) = (col(&mut r, 1)?, col(&mut r, 2)?);
            let owned_table: Option<u64> = col(&mut r, 10)?;
            let owned_column: Option<String> = col(&mut r, 11)?;
            let def = SequenceDef {
                id: col(&mut r, 0)?,
                schema: schema.clone(),
                name: name.clone(),
                ty: SqlType::parse(&col::<String>(&mut r, 3)?)?,
                increment: col(&mut r, 4)?,
                min: col(&mut r, 5)?,
                max: col(&mut r, 6)?,
                start: col(&mut r, 7)?,
                cache: col(&mut r, 8)?,
                cycle: col(&mut r, 9)?,
                owned_by: owned_table.zip(owned_column).map(|(t, c)| (TableId(t), c)),
                generation: col(&mut r, 12)?,
            };
            catalog.sequences.insert((schema, name), Arc::new(def));
        }
        type FkRow = (u64, u64, String, String, u64, String, String, String, bool);
        let fks: Vec<FkRow> = conn
            .query("SELECT fk_id, table_id, fk_name, columns, ref_table_id, ref_columns, on_delete, on_update, enforced FROM cat_foreign_keys ORDER BY fk_id")
            .await
            .map_err(me)?;
        let table_ids: std::collections::HashSet<u64> = tables.iter().map(|t| t.0).collect();
        for (id, table, name, cols, ref_table, ref_cols, on_delete, on_update, enforced) in fks {
            // Of tables in the catalog (a table dropped inside a
            // transaction block keeps its keys until the block ends).
            if !table_ids.contains(&table) || !table_ids.contains(&ref_table) {
                continue;
            }
            catalog
                .foreign_keys
                .push(Arc::new(crate::catalog::ForeignKeyDef {
                    id,
                    table: TableId(table),
                    name,
                    columns: parse_list(&cols)?,
                    ref_table: TableId(ref_table),
                    ref_columns: parse_list(&ref_cols)?,
                    on_delete,
                    on_update,
                    enforced,
                }));
        }
        for (tid, schema, name, dist, dist_cols, pk) in tables {
            let partition_shards = parts.remove(&tid).unwrap_or_default();
            let distribution = match dist.as_str() {
                "hash" => Distribution::Hash {
                    columns: parse_list(&dist_cols)?,
                    partitions: partition_shards.len() as u32,
                },
                "mirror" => Distribution::Mirror,
                _ => Distribution::Single,
            };
            let def = TableDef {
                id: TableId(tid),
                schema: schema.clone(),
                name: name.clone(),
                columns: cols.remove(&tid).unwrap_or_default(),
                primary_key: parse_list(&pk)?,
                distribution,
                partition_shards,
                indexes: idx.remove(&tid).unwrap_or_default(),
            };
            catalog.tables.insert((schema, name), Arc::new(def));
        }
        Ok(catalog)
    }

    /// Starts a DDL change: takes the cluster-wide DDL lock (a MariaDB named
    /// lock, released if this connection dies) and opens a meta transaction.
    pub async fn begin_ddl(&self, node_id: u32, statement: &str) -> Result<DdlTxn> {
        let mut conn = self.conn().await?;
        let got: Option<Option<i64>> = conn
            .query_first("SELECT GET_LOCK('tessera_ddl', 60)")
            .await
            .map_err(me)?;
        if got.flatten() != Some(1) {
            return Err(Error::Sql {
                state: common::SqlState::LOCK_NOT_AVAILABLE,
                message: "could not obtain the cluster DDL lock within 60 s".into(),
            });
        }
        conn.query_drop("START TRANSACTION").await.map_err(me)?;
        Ok(DdlTxn {
            conn: Some(conn),
            node_id,
            statement: statement.to_string(),
        })
    }

    /// Records physical tables to drop (shard, database, table) for table
    /// `table_id`, committed at once: they outlive this node.
    pub async fn queue_drops(
        &self,
        table_id: TableId,
        drops: &[(ShardId, String, String)],
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        for (shard, db, tbl) in drops {
            conn.exec_drop(
                "INSERT IGNORE INTO pending_drops (shard_id, db, tbl, table_id) VALUES (?, ?, ?, ?)",
                (shard.0, db, tbl, table_id.0),
            )
            .await
            .map_err(me)?;
        }
        Ok(())
    }

    /// Forgets a queued drop (done, or its table exists after all).
    pub async fn unqueue_drop(&self, shard: ShardId, db: &str, tbl: &str) -> Result<()> {
        self.conn()
            .await?
            .exec_drop(
                "DELETE FROM pending_drops WHERE shard_id = ? AND db = ? AND tbl = ?",
                (shard.0, db, tbl),
            )
            .await
            .map_err(me)
    }

    /// Queued drops whose table is not in the catalog (a committed DROP,
    /// or a CREATE that never committed), if no DDL is running: returns
    /// them with a connection holding the DDL lock, so no CREATE can
    /// commit one of them meanwhile. `None` when there is nothing to do or
    /// another node holds the lock.
    pub async fn claim_orphans(&self) -> Result<Option<OrphanClaim>> {
        let mut conn = self.conn().await?;
        let any: Option<i64> = conn
            .query_first("SELECT 1 FROM pending_drops LIMIT 1")
            .await
            .map_err(me)?;
        if any.is_none() {
            return Ok(None);
        }
        let got: Option<Option<i64>> = conn
            .query_first("SELECT GET_LOCK('tessera_ddl', 0)")
            .await
            .map_err(me)?;
        if got.flatten() != Some(1) {
            return Ok(None);
        }
        // Queued but a physical table of the catalog: its CREATE (or the
        // redistribution that made it) committed after all (the queue
        // entry is removed after the commit, so a crash can leave one), or
        // the old layout of a redistribution that never committed. The
        // catalog cannot change meanwhile: this connection holds the lock.
        let catalog = self.load_catalog().await?;
        let live: std::collections::HashSet<(ShardId, String, String)> = catalog
            .tables
            .values()
            .flat_map(|t| t.physical_tables())
            .collect();
        let rows: Vec<(u32, String, String)> = conn
            .query("SELECT shard_id, db, tbl FROM pending_drops")
            .await
            .map_err(me)?;
        let mut drops = vec![];
        for (s, d, t) in rows {
            let entry = (ShardId(s), d, t);
            if live.contains(&entry) {
                conn.exec_drop(
                    "DELETE FROM pending_drops WHERE shard_id = ? AND db = ? AND tbl = ?",
                    (s, &entry.1, &entry.2),
                )
                .await
                .map_err(me)?;
            } else {
                drops.push(entry);
            }
        }
        Ok(Some(OrphanClaim {
            conn: Some(conn),
            drops,
        }))
    }

    /// Reserves `count` values of a sequence; returns the first one.
    pub async fn reserve_sequence(&self, name: &str, count: i64) -> Result<i64> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE sequences SET next_value = LAST_INSERT_ID(next_value + ?) WHERE sequence_name = ?",
            (count, name),
        )
        .await
        .map_err(me)?;
        if conn.affected_rows() == 0 {
            return Err(Error::Execution {
                message: format!("sequence \"{name}\" does not exist"),
            });
        }
        let next: Option<i64> = conn
            .query_first("SELECT LAST_INSERT_ID()")
            .await
            .map_err(me)?;
        let next = next.ok_or_else(|| Error::meta("LAST_INSERT_ID() returned nothing"))?;
        Ok(next - count)
    }

    /// Reserves up to `count` values of sequence `id` (fewer near its
    /// bound), as PostgreSQL's `nextval` hands them out: from its start,
    /// `increment` apart, wrapping at the bound if it cycles, else 2200H.
    pub async fn reserve_sequence_values(&self, id: u64, count: i64) -> Result<SequenceRange> {
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(mysql_async::TxOpts::default())
            .await
            .map_err(me)?;
        type State = (String, String, i64, i64, i64, bool, i64, bool);
        let row: Option<State> = tx
            .exec_first(
                "SELECT schema_name, seq_name, increment_by, min_value, max_value, cycle, last_value, is_called FROM cat_sequences WHERE seq_id = ? FOR UPDATE",
                (id,),
            )
            .await
            .map_err(me)?;
        let Some((schema, name, inc, min, max, cycle, last, called)) = row else {
            return Err(sequence_error(
                "42P01",
                format!("sequence {id} does not exist"),
            ));
        };
        let (inc, min, max) = (inc as i128, min as i128, max as i128);
        let mut next = if called {
            last as i128 + inc
        } else {
            last as i128
        };
        if next > max || next < min {
            if !cycle {
                let (which, bound) = if inc > 0 {
                    ("maximum", max)
                } else {
                    ("minimum", min)
                };
                return Err(sequence_error(
                    "2200H",
                    format!("nextval: reached {which} value of sequence \"{name}\" ({bound})"),
                ));
            }
            next = if inc > 0 { min } else { max };
        }
        let room = if inc > 0 {
            (max - next) / inc + 1
        } else {
            (min - next) / inc + 1
        };
        let n = room.min(count.max(1) as i128);
        let last_given = next + (n - 1) * inc;
        tx.exec_drop(
            "UPDATE cat_sequences SET last_value = ?, is_called = TRUE WHERE seq_id = ?",
            (last_given as i64, id),
        )
        .await
        .map_err(me)?;
        tx.commit().await.map_err(me)?;
        let _ = schema;
        Ok(SequenceRange {
            first: next as i64,
            count: n as i64,
            increment: inc as i64,
        })
    }

    /// `setval`: the sequence's state set (bounds checked, 22003), and the
    /// catalog version moved so every node drops its cached range of it.
    pub async fn set_sequence_value(&self, id: u64, value: i64, is_called: bool) -> Result<()> {
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(mysql_async::TxOpts::default())
            .await
            .map_err(me)?;
        let row: Option<(String, i64, i64)> = tx
            .exec_first(
                "SELECT seq_name, min_value, max_value FROM cat_sequences WHERE seq_id = ? FOR UPDATE",
                (id,),
            )
            .await
            .map_err(me)?;
        let Some((name, min, max)) = row else {
            return Err(sequence_error(
                "42P01",
                format!("sequence {id} does not exist"),
            ));
        };
        if value < min || value > max {
            return Err(sequence_error(
                "22003",
                format!(
                    "setval: value {value} is out of bounds for sequence \"{name}\" ({min}..{max})"
                ),
            ));
        }
        tx.exec_drop(
            "UPDATE cat_sequences SET last_value = ?, is_called = ?, generation = generation + 1 WHERE seq_id = ?",
            (value, is_called, id),
        )
        .await
        .map_err(me)?;
        tx.query_drop("UPDATE catalog_version SET version = version + 1 WHERE id = 1")
            .await
            .map_err(me)?;
        tx.commit().await.map_err(me)
    }

    pub async fn register_node(&self, node_id: u32, host: &str, port: u16, pid: u32) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "REPLACE INTO compute_nodes (node_id, host, port, pid, heartbeat_at) VALUES (?, ?, ?, ?, NOW())",
            (node_id, host, port, pid),
        )
        .await
        .map_err(me)
    }

    pub async fn heartbeat(&self, node_id: u32) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE compute_nodes SET heartbeat_at = NOW() WHERE node_id = ?",
            (node_id,),
        )
        .await
        .map_err(me)
    }

    /// A login role's SCRAM verifier; `None` for an unknown role, a role
    /// without a password or one that may not log in.
    pub async fn user_credentials(&self, user: &str) -> Result<Option<ScramVerifier>> {
        let mut conn = self.conn().await?;
        type VerifierRow = (Vec<u8>, u32, Vec<u8>, Vec<u8>);
        let row: Option<VerifierRow> = conn.exec_first(
            "SELECT salt, iterations, stored_key, server_key FROM users WHERE user_name = ? AND can_login AND salt IS NOT NULL AND stored_key IS NOT NULL AND server_key IS NOT NULL",
            (user,),
        )
        .await
        .map_err(me)?;
        Ok(
            row.map(|(salt, iterations, stored_key, server_key)| ScramVerifier {
                salt,
                iterations,
                stored_key,
                server_key,
            }),
        )
    }

    /// Creates (or replaces) a superuser that can log in.
    pub async fn put_user(&self, user: &str, v: &ScramVerifier) -> Result<()> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "REPLACE INTO users (user_name, salt, iterations, stored_key, server_key, superuser, can_login) VALUES (?, ?, ?, ?, ?, TRUE, TRUE)",
            (user, &v.salt, v.iterations, &v.stored_key, &v.server_key),
        )
        .await
        .map_err(me)
    }

    pub async fn disconnect(self) {
        let _ = self.pool.disconnect().await;
    }
}

fn parse_list(s: &str) -> Result<Vec<String>> {
    serde_json::from_str(s).map_err(|e| Error::meta(format!("bad list in catalog: {e}")))
}

fn list(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

/// Queued physical drops claimed under the DDL lock; the lock is released
/// when the claim is dropped.
pub struct OrphanClaim {
    conn: Option<Conn>,
    pub drops: Vec<(ShardId, String, String)>,
}

impl Drop for OrphanClaim {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            tokio::spawn(async move {
                if conn
                    .query_drop("DO RELEASE_LOCK('tessera_ddl')")
                    .await
                    .is_err()
                {
                    // Never pool a connection that may still hold the lock.
                    let _ = conn.disconnect().await;
                }
            });
        }
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
    fn c(&mut self) -> Result<&mut Conn> {
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

    /// Records a new table; returns its id. `def.id` is ignored.
    pub async fn create_table(&mut self, def: &TableDef) -> Result<TableId> {
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
        Ok(TableId(id))
    }

    /// Rewrites a table's catalog rows (name, distribution, columns,
    /// indexes, partitions) to `def`, keeping its id. `new_sequences`:
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
        let map_version: Option<i64> = conn
            .query_first("SELECT map_version FROM shard_map WHERE id = 1")
            .await
            .map_err(me)?;
        for t in ["cat_columns", "cat_indexes", "cat_partitions"] {
            conn.exec_drop(format!("DELETE FROM {t} WHERE table_id = ?"), (id,))
                .await
                .map_err(me)?;
        }
        for (i, c) in def.columns.iter().enumerate() {
            conn.exec_drop(
                "INSERT INTO cat_columns VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    id,
                    i as u32,
                    &c.name,
                    c.ty.to_string(),
                    c.not_null,
                    &c.default,
                    &c.sequence,
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
        for (i, s) in def.partition_shards.iter().enumerate() {
            conn.exec_drop(
                "INSERT INTO cat_partitions VALUES (?, ?, ?, ?)",
                (id, i as u32, s.0, map_version.unwrap_or(1)),
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
        let conn = self.c()?;
        conn.exec_drop("DELETE FROM cat_tables WHERE table_id = ?", (id,))
            .await
            .map_err(me)?;
        for t in [
            "cat_tables",
            "cat_columns",
            "cat_indexes",
            "cat_partitions",
            "table_owners",
        ] {
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
            (fk.table.0, &fk.name, list(&fk.columns), fk.ref_table.0, list(&fk.ref_columns), &fk.on_delete, &fk.on_update, fk.enforced),
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
        for t in ["cat_tables", "cat_columns", "cat_indexes", "cat_partitions"] {
            conn.exec_drop(format!("DELETE FROM {t} WHERE table_id = ?"), (def.id.0,))
                .await
                .map_err(me)?;
        }
        Ok(())
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
    /// its id.
    pub async fn restore_table(&mut self, def: &TableDef) -> Result<()> {
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
        self.update_table(def, &[]).await
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
