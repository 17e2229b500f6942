//! Reading one consistent snapshot of the whole catalog.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use common::config::MysqlEndpoint;
use common::{Error, Result, ShardId, SqlType, TableId};
use mysql_async::prelude::*;
use mysql_async::Conn;

use crate::catalog::{
    Catalog, ColumnDef, Distribution, ForeignKeyDef, IndexDef, SequenceDef, TableDef, ViewDef,
};

use super::{me, parse_list, MetaStore};
use crate::placement::Placement;

type TableRow = (u64, String, String, String, String, String);
type ColumnRow = (
    u64,
    String,
    String,
    bool,
    Option<String>,
    Option<String>,
    Option<String>,
);
type IndexRow = (u64, String, String, bool);
type ViewRow = (u64, String, String, String, String, String, String);
type FkRow = (u64, u64, String, String, u64, String, String, String, u8);

/// The rows read in the consistent snapshot: what tables and placement are
/// built from.
struct SnapshotRows {
    version: Option<u64>,
    epoch: Option<u64>,
    shards: Vec<(u32, String, u16, String)>,
    schemas: Vec<String>,
    tables: Vec<TableRow>,
    columns: Vec<ColumnRow>,
    indexes: Vec<IndexRow>,
    partitions: Vec<(u64, u32, u32)>,
}

impl MetaStore {
    /// Reads one consistent snapshot of the whole catalog: every read in
    /// one read-only transaction (roles, grants, sequences, views and
    /// foreign keys too, so a DDL committed meanwhile is seen whole or not
    /// at all).
    pub async fn load_catalog(&self) -> Result<Catalog> {
        let mut conn = self.conn().await?;
        let loaded = read_catalog(&mut conn).await;
        if loaded.is_ok() {
            conn.query_drop("COMMIT").await.map_err(me)?;
        } else {
            // The read's error is the answer; the pool resets the
            // connection anyway.
            let _ = conn.query_drop("ROLLBACK").await;
        }
        loaded
    }
}

/// The catalog read inside the snapshot transaction [`read_snapshot`]
/// starts.
async fn read_catalog(conn: &mut Conn) -> Result<Catalog> {
    let rows = read_snapshot(conn).await?;
    let mut cols = columns_by_table(rows.columns)?;
    let mut idx = indexes_by_table(rows.indexes)?;
    let placement = placement(rows.epoch, rows.shards, rows.partitions);
    let mut catalog = Catalog {
        version: rows.version.unwrap_or(0),
        placement: Arc::new(placement),
        schemas: rows.schemas.into_iter().collect::<BTreeSet<_>>(),
        tables: HashMap::new(),
        roles: HashMap::new(),
        grants: Default::default(),
        owners: HashMap::new(),
        sequences: HashMap::new(),
        foreign_keys: vec![],
        comments: HashMap::new(),
        views: HashMap::new(),
        system_settings: Default::default(),
    };
    read_roles(conn, &mut catalog).await?;
    read_sequences(conn, &mut catalog).await?;
    read_comments(conn, &mut catalog).await?;
    read_views(conn, &mut catalog).await?;
    catalog.system_settings = conn
        .query("SELECT name, value FROM settings")
        .await
        .map_err(me)?
        .into_iter()
        .collect();
    read_foreign_keys(conn, &mut catalog, &rows.tables).await?;
    for row in rows.tables {
        let def = table_def(row, &catalog.placement, &mut cols, &mut idx)?;
        catalog
            .tables
            .insert((def.schema.clone(), def.name.clone()), Arc::new(def));
    }
    Ok(catalog)
}

/// Starts the catalog's one `START TRANSACTION WITH CONSISTENT SNAPSHOT`
/// and reads versions, shards, schemas, tables, columns, indexes and
/// partitions in it (the caller reads the rest in it and commits).
async fn read_snapshot(conn: &mut Conn) -> Result<SnapshotRows> {
    conn.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        .await
        .map_err(me)?;
    let version: Option<u64> = conn
        .query_first("SELECT version FROM catalog_version WHERE id = 1")
        .await
        .map_err(me)?;
    let epoch: Option<u64> = conn
        .query_first("SELECT map_version FROM shard_map WHERE id = 1")
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
        .query("SELECT table_id, column_name, type_name, not_null, default_expr, sequence_name, identity FROM cat_columns ORDER BY table_id, ordinal")
        .await
        .map_err(me)?;
    let indexes: Vec<IndexRow> = conn
        .query("SELECT table_id, index_name, columns, is_unique FROM cat_indexes ORDER BY table_id, index_name")
        .await
        .map_err(me)?;
    let partitions: Vec<(u64, u32, u32)> = conn
        .query("SELECT table_id, partition_no, shard_id FROM cat_partitions ORDER BY table_id, partition_no")
        .await
        .map_err(me)?;
    Ok(SnapshotRows {
        version,
        epoch,
        shards,
        schemas,
        tables,
        columns,
        indexes,
        partitions,
    })
}

/// Each table's columns, in order.
fn columns_by_table(rows: Vec<ColumnRow>) -> Result<HashMap<u64, Vec<ColumnDef>>> {
    let mut cols: HashMap<u64, Vec<ColumnDef>> = HashMap::new();
    for (tid, name, ty, not_null, default, sequence, identity) in rows {
        cols.entry(tid).or_default().push(ColumnDef {
            name,
            ty: SqlType::parse(&ty)?,
            not_null,
            default,
            sequence,
            identity: identity
                .as_deref()
                .and_then(crate::catalog::Identity::parse),
        });
    }
    Ok(cols)
}

/// Each table's indexes.
fn indexes_by_table(rows: Vec<IndexRow>) -> Result<HashMap<u64, Vec<IndexDef>>> {
    let mut idx: HashMap<u64, Vec<IndexDef>> = HashMap::new();
    for (tid, name, columns, unique) in rows {
        idx.entry(tid).or_default().push(IndexDef {
            name,
            columns: parse_list(&columns)?,
            unique,
        });
    }
    Ok(idx)
}

/// The shards and each table's layout (its partitions' shards, in order).
fn placement(
    epoch: Option<u64>,
    shards: Vec<(u32, String, u16, String)>,
    partitions: Vec<(u64, u32, u32)>,
) -> Placement {
    let mut parts: HashMap<u64, Vec<ShardId>> = HashMap::new();
    for (tid, _, shard) in partitions {
        parts.entry(tid).or_default().push(ShardId(shard));
    }
    let mut placement = Placement::new(
        epoch.unwrap_or(1),
        shards.into_iter().map(|(id, host, port, user)| {
            // The password is not in meta: each compute node's config
            // has it (`shard_password`).
            let endpoint = MysqlEndpoint {
                host,
                port,
                user,
                password: String::new(),
            };
            (ShardId(id), endpoint)
        }),
    );
    for (tid, layout) in parts {
        placement.set_layout(TableId(tid), layout);
    }
    placement
}

/// Reads the roles, the grants and the tables' owners into `catalog`.
async fn read_roles(conn: &mut Conn, catalog: &mut Catalog) -> Result<()> {
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
    Ok(())
}

/// Reads the sequences into `catalog`.
async fn read_sequences(conn: &mut Conn, catalog: &mut Catalog) -> Result<()> {
    let sequences: Vec<mysql_async::Row> = conn
        .query("SELECT seq_id, schema_name, seq_name, type_name, increment_by, min_value, max_value, start_value, cache_size, cycle, owned_table, owned_column, generation FROM cat_sequences")
        .await
        .map_err(me)?;
    for r in sequences {
        let def = sequence_def(r)?;
        catalog
            .sequences
            .insert((def.schema.clone(), def.name.clone()), Arc::new(def));
    }
    Ok(())
}

/// One sequence from its `cat_sequences` row.
fn sequence_def(mut r: mysql_async::Row) -> Result<SequenceDef> {
    /// Column `i` of the row.
    fn col<T: FromValue>(r: &mut mysql_async::Row, i: usize) -> Result<T> {
        r.take_opt(i)
            .ok_or_else(|| Error::meta(format!("cat_sequences: no column {i}")))?
            .map_err(|e| Error::meta(format!("cat_sequences column {i}: {e}")))
    }
    let (schema, name): (String, String) = (col(&mut r, 1)?, col(&mut r, 2)?);
    let owned_table: Option<u64> = col(&mut r, 10)?;
    let owned_column: Option<String> = col(&mut r, 11)?;
    Ok(SequenceDef {
        id: col(&mut r, 0)?,
        schema,
        name,
        ty: SqlType::parse(&col::<String>(&mut r, 3)?)?,
        increment: col(&mut r, 4)?,
        min: col(&mut r, 5)?,
        max: col(&mut r, 6)?,
        start: col(&mut r, 7)?,
        cache: col(&mut r, 8)?,
        cycle: col(&mut r, 9)?,
        owned_by: owned_table.zip(owned_column).map(|(t, c)| (TableId(t), c)),
        generation: col(&mut r, 12)?,
    })
}

/// Reads the comments into `catalog`.
async fn read_comments(conn: &mut Conn, catalog: &mut Catalog) -> Result<()> {
    let comments: Vec<(String, u64, String, String)> = conn
        .query("SELECT kind, object_id, column_name, comment FROM cat_comments")
        .await
        .map_err(me)?;
    for (kind, id, column, text) in comments {
        catalog.comments.insert((kind, id, column), text);
    }
    Ok(())
}

/// Reads the views into `catalog`.
async fn read_views(conn: &mut Conn, catalog: &mut Catalog) -> Result<()> {
    let views: Vec<ViewRow> = conn
        .query("SELECT view_id, schema_name, view_name, definition, columns, type_oids, reads_from FROM cat_views")
        .await
        .map_err(me)?;
    for row in views {
        let def = view_def(row)?;
        catalog
            .views
            .insert((def.schema.clone(), def.name.clone()), Arc::new(def));
    }
    Ok(())
}

/// One view from its `cat_views` row (its lists stored as JSON).
fn view_def(row: ViewRow) -> Result<ViewDef> {
    let (id, schema, name, definition, columns, oids, reads) = row;
    let json = |what: &str, text: &str| -> Result<Vec<String>> {
        serde_json::from_str(text)
            .map_err(|e| Error::meta(format!("cat_views {what} of {schema}.{name}: {e}")))
    };
    let type_oids = json("type_oids", &oids)?
        .iter()
        .map(|o| o.parse::<u32>().map_err(Error::meta))
        .collect::<Result<Vec<u32>>>()?;
    let reads = json("reads", &reads)?
        .into_iter()
        .filter_map(|r| {
            r.split_once('.')
                .map(|(s, n)| (s.to_string(), n.to_string()))
        })
        .collect();
    let columns = json("columns", &columns)?;
    Ok(ViewDef {
        id,
        schema,
        name,
        definition,
        columns,
        type_oids,
        reads,
    })
}

/// Reads into `catalog` the foreign keys between the `tables` read.
async fn read_foreign_keys(
    conn: &mut Conn,
    catalog: &mut Catalog,
    tables: &[TableRow],
) -> Result<()> {
    let fks: Vec<FkRow> = conn
        .query("SELECT fk_id, table_id, fk_name, columns, ref_table_id, ref_columns, on_delete, on_update, enforced FROM cat_foreign_keys ORDER BY fk_id")
        .await
        .map_err(me)?;
    let table_ids: HashSet<u64> = tables.iter().map(|t| t.0).collect();
    for (id, table, name, cols, ref_table, ref_cols, on_delete, on_update, enforced) in fks {
        // Of tables in the catalog (a table dropped inside a
        // transaction block keeps its keys until the block ends).
        if !table_ids.contains(&table) || !table_ids.contains(&ref_table) {
            continue;
        }
        catalog.foreign_keys.push(Arc::new(ForeignKeyDef {
            id,
            table: TableId(table),
            name,
            columns: parse_list(&cols)?,
            ref_table: TableId(ref_table),
            ref_columns: parse_list(&ref_cols)?,
            on_delete,
            on_update,
            enforcement: crate::catalog::Enforcement::from_code(enforced),
        }));
    }
    Ok(())
}

/// One table from its `cat_tables` row, taking its columns and indexes
/// from `cols` and `idx`.
fn table_def(
    row: TableRow,
    placement: &Placement,
    cols: &mut HashMap<u64, Vec<ColumnDef>>,
    idx: &mut HashMap<u64, Vec<IndexDef>>,
) -> Result<TableDef> {
    let (tid, schema, name, dist, dist_cols, pk) = row;
    let distribution = match dist.as_str() {
        "hash" => Distribution::Hash {
            columns: parse_list(&dist_cols)?,
            partitions: placement.layout(TableId(tid)).len() as u32,
        },
        "mirror" => Distribution::Mirror,
        _ => Distribution::Single,
    };
    Ok(TableDef {
        id: TableId(tid),
        schema,
        name,
        columns: cols.remove(&tid).unwrap_or_default(),
        primary_key: parse_list(&pk)?,
        distribution,
        indexes: idx.remove(&tid).unwrap_or_default(),
    })
}
