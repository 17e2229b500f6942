//! DDL of the metadata schema, versioned: [`upgrade`] (run by
//! `MetaStore::bootstrap`) applies the statements of every version above
//! the stored one.

use common::{Error, Result};
use mysql_async::prelude::*;
use mysql_async::Conn;

use crate::catalog::ScramVerifier;

fn me(e: mysql_async::Error) -> Error {
    Error::meta(e)
}

pub const SCHEMA_VERSION: i64 = 15;

/// Statements creating version 1 of the metadata schema. `settings` holds
/// ALTER SYSTEM's values (parameter, value as SHOW prints it), written
/// under the DDL lock and read with the catalog.
pub const V1: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS schema_version (id INT PRIMARY KEY, version INT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS cluster (id INT PRIMARY KEY, cluster_id VARCHAR(64) NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
    "CREATE TABLE IF NOT EXISTS catalog_version (id INT PRIMARY KEY, version BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS shards (shard_id INT PRIMARY KEY, host VARCHAR(255) NOT NULL, port INT NOT NULL, user VARCHAR(128) NOT NULL, password VARCHAR(255) NOT NULL)",
    "CREATE TABLE IF NOT EXISTS shard_map (id INT PRIMARY KEY, map_version BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS cat_schemas (schema_name VARCHAR(64) PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS cat_tables (table_id BIGINT AUTO_INCREMENT PRIMARY KEY, schema_name VARCHAR(64) NOT NULL, table_name VARCHAR(64) NOT NULL, distribution VARCHAR(16) NOT NULL, dist_columns TEXT NOT NULL, primary_key TEXT NOT NULL, UNIQUE KEY (schema_name, table_name))",
    "CREATE TABLE IF NOT EXISTS cat_columns (table_id BIGINT NOT NULL, ordinal INT NOT NULL, column_name VARCHAR(64) NOT NULL, type_name VARCHAR(64) NOT NULL, not_null BOOLEAN NOT NULL, default_expr TEXT NULL, sequence_name VARCHAR(255) NULL, PRIMARY KEY (table_id, ordinal))",
    "CREATE TABLE IF NOT EXISTS cat_indexes (table_id BIGINT NOT NULL, index_name VARCHAR(64) NOT NULL, columns TEXT NOT NULL, is_unique BOOLEAN NOT NULL, PRIMARY KEY (table_id, index_name))",
    "CREATE TABLE IF NOT EXISTS cat_partitions (table_id BIGINT NOT NULL, partition_no INT NOT NULL, shard_id INT NOT NULL, map_version BIGINT NOT NULL, PRIMARY KEY (table_id, partition_no))",
    "CREATE TABLE IF NOT EXISTS ddl_log (ddl_id BIGINT AUTO_INCREMENT PRIMARY KEY, node_id INT NOT NULL, statement LONGTEXT NOT NULL, catalog_version BIGINT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
    "CREATE TABLE IF NOT EXISTS sequences (sequence_name VARCHAR(255) PRIMARY KEY, next_value BIGINT NOT NULL, increment_by BIGINT NOT NULL DEFAULT 1)",
    "CREATE TABLE IF NOT EXISTS compute_nodes (node_id INT PRIMARY KEY, host VARCHAR(255) NOT NULL, port INT NOT NULL, pid INT NOT NULL, started_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, heartbeat_at TIMESTAMP NULL)",
    "CREATE TABLE IF NOT EXISTS users (user_name VARCHAR(64) PRIMARY KEY, salt VARBINARY(64) NOT NULL, salted_password VARBINARY(64) NOT NULL, iterations INT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS commit_log (gtrid VARCHAR(128) PRIMARY KEY, decision VARCHAR(8) NOT NULL, node_id INT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
    "CREATE TABLE IF NOT EXISTS settings (name VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL)",
    "INSERT IGNORE INTO catalog_version VALUES (1, 1)",
    "INSERT IGNORE INTO shard_map VALUES (1, 1)",
    "INSERT IGNORE INTO cat_schemas VALUES ('public')",
];

/// Version 2: physical tables waiting to be dropped on a shard (a DROP
/// TABLE committed in the catalog, a CREATE TABLE that failed or whose node
/// died before its commit). Recovery drops them under the DDL lock.
pub const V2: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS pending_drops (shard_id INT NOT NULL, db VARCHAR(64) NOT NULL, tbl VARCHAR(64) NOT NULL, table_id BIGINT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (shard_id, db, tbl))",
];

/// Version 3: PostgreSQL roles and privileges. Existing users keep being
/// superusers that can log in.
pub const V3: &[&str] = &[
    "ALTER TABLE users ADD COLUMN IF NOT EXISTS superuser BOOLEAN NOT NULL DEFAULT TRUE",
    "ALTER TABLE users ADD COLUMN IF NOT EXISTS can_login BOOLEAN NOT NULL DEFAULT TRUE",
    "ALTER TABLE users MODIFY salt VARBINARY(64) NULL, MODIFY salted_password VARBINARY(64) NULL",
    "CREATE TABLE IF NOT EXISTS grants (grantee VARCHAR(64) NOT NULL, kind VARCHAR(8) NOT NULL, schema_name VARCHAR(64) NOT NULL, object_name VARCHAR(64) NOT NULL, privilege VARCHAR(16) NOT NULL, PRIMARY KEY (grantee, kind, schema_name, object_name, privilege))",
    "CREATE TABLE IF NOT EXISTS table_owners (table_id BIGINT PRIMARY KEY, owner VARCHAR(64) NOT NULL)",
];

/// Version 4: secrets out of meta. Users keep a SCRAM verifier (StoredKey,
/// ServerKey) instead of the salted password, which is enough to log in
/// (`MetaStore::bootstrap` converts existing rows between `V4` and
/// `V4_DROP`); shards keep no password (each compute node has it in its
/// 0600 config file).
pub const V4: &[&str] = &[
    "ALTER TABLE users ADD COLUMN IF NOT EXISTS stored_key VARBINARY(64) NULL",
    "ALTER TABLE users ADD COLUMN IF NOT EXISTS server_key VARBINARY(64) NULL",
];

/// The end of version 4, after existing users' verifiers are computed.
pub const V4_DROP: &[&str] = &[
    "ALTER TABLE users DROP COLUMN IF EXISTS salted_password",
    "ALTER TABLE shards DROP COLUMN IF EXISTS password",
];

/// Version 5: PostgreSQL sequences (CREATE SEQUENCE): options and state
/// (`last_value`, `is_called`, as PostgreSQL's sequence relation has them);
/// foreign keys.
pub const V5: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS cat_foreign_keys (fk_id BIGINT AUTO_INCREMENT PRIMARY KEY, table_id BIGINT NOT NULL, fk_name VARCHAR(64) NOT NULL, columns TEXT NOT NULL, ref_table_id BIGINT NOT NULL, ref_columns TEXT NOT NULL, on_delete VARCHAR(16) NOT NULL, on_update VARCHAR(16) NOT NULL, enforced BOOLEAN NOT NULL, UNIQUE KEY (table_id, fk_name))",
    "CREATE TABLE IF NOT EXISTS cat_sequences (seq_id BIGINT AUTO_INCREMENT PRIMARY KEY, schema_name VARCHAR(64) NOT NULL, seq_name VARCHAR(64) NOT NULL, type_name VARCHAR(16) NOT NULL, increment_by BIGINT NOT NULL, min_value BIGINT NOT NULL, max_value BIGINT NOT NULL, start_value BIGINT NOT NULL, cache_size BIGINT NOT NULL, cycle BOOLEAN NOT NULL, owned_table BIGINT NULL, owned_column VARCHAR(64) NULL, last_value BIGINT NOT NULL, is_called BOOLEAN NOT NULL, generation BIGINT NOT NULL DEFAULT 0, UNIQUE KEY (schema_name, seq_name))",
];

/// Version 6: comments (COMMENT ON) of tables, their columns and
/// sequences, by object id (a table's comments follow its renames).
pub const V6: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS cat_comments (kind VARCHAR(16) NOT NULL, object_id BIGINT NOT NULL, column_name VARCHAR(64) NOT NULL, comment TEXT NOT NULL, PRIMARY KEY (kind, object_id, column_name))",
];

/// Version 7: views (CREATE VIEW): the query's text as Tessera printed it
/// with its table names qualified, the columns' names and wire type OIDs,
/// and the relations it reads (for DROP's dependency checks).
pub const V7: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS cat_views (view_id BIGINT AUTO_INCREMENT PRIMARY KEY, schema_name VARCHAR(64) NOT NULL, view_name VARCHAR(64) NOT NULL, definition LONGTEXT NOT NULL, columns TEXT NOT NULL, type_oids TEXT NOT NULL, reads_from TEXT NOT NULL, UNIQUE KEY (schema_name, view_name))",
];

/// Version 8: identity columns (`GENERATED ... AS IDENTITY`).
pub const V8: &[&str] =
    &["ALTER TABLE cat_columns ADD COLUMN IF NOT EXISTS identity VARCHAR(16) NULL"];

/// Version 9: consistent reads across shards (`shard_router::txn::snapshot`):
/// the barrier row, and per commit decision the shards it wrote and
/// whether every branch has committed.
pub const V9: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS snapshot_barrier (id INT PRIMARY KEY)",
    "INSERT IGNORE INTO snapshot_barrier VALUES (1)",
    "ALTER TABLE commit_log ADD COLUMN IF NOT EXISTS shards VARCHAR(1024) NOT NULL DEFAULT '', ADD COLUMN IF NOT EXISTS done BOOLEAN NOT NULL DEFAULT TRUE",
    "CREATE INDEX IF NOT EXISTS commit_log_done ON commit_log (done)",
];

/// Version 10: the placement map's history. `shard_map.map_version` is the
/// placement epoch (it moves whenever a slot of a table changes shard, or
/// a shard its server); each change is a row here.
pub const V10: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS placement_log (epoch BIGINT NOT NULL, table_id BIGINT NOT NULL, partition_no INT NOT NULL, from_shard INT NULL, to_shard INT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (epoch, table_id, partition_no))",
];

/// Version 11: partition moves (`shard_router::placement::mover`), one row
/// per move with its phase; the phase that switches the map is written in
/// the same meta transaction as the new layout.
pub const V11: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS partition_moves (move_id BIGINT AUTO_INCREMENT PRIMARY KEY, tables VARCHAR(4096) NOT NULL, partition_no INT NOT NULL, from_shard INT NOT NULL, to_shard INT NOT NULL, phase VARCHAR(32) NOT NULL, rows_copied BIGINT NOT NULL DEFAULT 0, keys_caught_up BIGINT NOT NULL DEFAULT 0, lag_events BIGINT NOT NULL DEFAULT 0, fence_ms INT NULL, bytes BIGINT NOT NULL DEFAULT 0, retired VARCHAR(4096) NOT NULL DEFAULT '', detail TEXT NULL, started_at TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3), updated_at TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3))",
];

/// Version 12: move fences (`store::fences`): a move asks every compute
/// node to hold new transactions away from a slot, and each answers.
pub const V12: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS move_fences (move_id BIGINT PRIMARY KEY, shard_id INT NOT NULL, objects TEXT NOT NULL, raised_at TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3))",
    "CREATE TABLE IF NOT EXISTS fence_acks (move_id BIGINT NOT NULL, node_id INT NOT NULL, PRIMARY KEY (move_id, node_id))",
];

/// Version 13: replicated shards (`store::replicas`): each shard's
/// replicas and their state, the lease one compute node holds to watch the
/// primaries and fail them over, and the history of failovers.
pub const V13: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS shard_replicas (shard_id INT NOT NULL, host VARCHAR(255) NOT NULL, port INT NOT NULL, state VARCHAR(16) NOT NULL, PRIMARY KEY (shard_id, host, port))",
    "CREATE TABLE IF NOT EXISTS leases (name VARCHAR(64) PRIMARY KEY, holder INT NOT NULL, expires_at TIMESTAMP(3) NOT NULL)",
    "CREATE TABLE IF NOT EXISTS failovers (failover_id BIGINT AUTO_INCREMENT PRIMARY KEY, shard_id INT NOT NULL, old_host VARCHAR(255) NOT NULL, old_port INT NOT NULL, new_host VARCHAR(255) NOT NULL, new_port INT NOT NULL, gtid VARCHAR(1024) NOT NULL, node_id INT NOT NULL, detected_ms INT NOT NULL, failed_over_at TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3))",
];

/// Version 14: a replicated meta (`store::primary`): the primary, as the
/// servers' own replicated record names it, and the epoch every meta
/// failover moves.
pub const V14: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS meta_primary (id INT PRIMARY KEY, host VARCHAR(255) NOT NULL, port INT NOT NULL, epoch BIGINT NOT NULL)",
];

/// Version 15: a move's estimated rows (for its ETA) and the target's
/// binary log position at the cut (where undoing a switched move catches
/// up from).
pub const V15: &[&str] = &[
    "ALTER TABLE partition_moves ADD COLUMN IF NOT EXISTS rows_total BIGINT NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS target_cut VARCHAR(1024) NOT NULL DEFAULT ''",
];

/// Brings the metadata schema in the connection's database to
/// [`SCHEMA_VERSION`]; refuses a schema newer than this binary knows.
pub async fn upgrade(conn: &mut Conn) -> Result<()> {
    conn.query_drop(
        "CREATE TABLE IF NOT EXISTS schema_version (id INT PRIMARY KEY, version INT NOT NULL)",
    )
    .await
    .map_err(me)?;
    let current: i64 = conn
        .query_first::<i64, _>("SELECT version FROM schema_version WHERE id = 1")
        .await
        .map_err(me)?
        .unwrap_or(0);
    if current > SCHEMA_VERSION {
        return Err(Error::meta(format!(
            "metadata schema version {current} is newer than this binary supports ({SCHEMA_VERSION})"
        )));
    }
    for (version, stmts) in [
        (1, V1),
        (2, V2),
        (3, V3),
        (4, V4),
        (5, V5),
        (6, V6),
        (7, V7),
        (8, V8),
        (9, V9),
        (10, V10),
        (11, V11),
        (12, V12),
        (13, V13),
        (14, V14),
        (15, V15),
    ] {
        if current < version {
            for stmt in stmts {
                conn.query_drop(*stmt).await.map_err(me)?;
            }
        }
    }
    if current < 4 {
        verifiers_from_salted_passwords(conn).await?;
        for stmt in V4_DROP {
            conn.query_drop(*stmt).await.map_err(me)?;
        }
    }
    conn.exec_drop(
        "REPLACE INTO schema_version VALUES (1, ?)",
        (SCHEMA_VERSION,),
    )
    .await
    .map_err(me)
}

/// Version 4's conversion: each user's salted password into its SCRAM
/// verifier. (A bootstrap cut off after `V4_DROP` finds no column left.)
async fn verifiers_from_salted_passwords(conn: &mut Conn) -> Result<()> {
    let has_salted: Option<u64> = conn
        .query_first("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'users' AND column_name = 'salted_password'")
        .await
        .map_err(me)?;
    if has_salted.unwrap_or(0) == 0 {
        return Ok(());
    }
    let salted: Vec<(String, Vec<u8>, Vec<u8>, u32)> = conn
        .query("SELECT user_name, salt, salted_password, iterations FROM users WHERE salted_password IS NOT NULL AND salt IS NOT NULL")
        .await
        .map_err(me)?;
    for (user, salt, salted, iterations) in salted {
        let v = ScramVerifier::from_salted_password(salt, &salted, iterations);
        conn.exec_drop(
            "UPDATE users SET stored_key = ?, server_key = ? WHERE user_name = ?",
            (v.stored_key, v.server_key, user),
        )
        .await
        .map_err(me)?;
    }
    Ok(())
}
