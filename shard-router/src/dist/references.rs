//! Foreign keys the compute node checks (`meta::Enforcement::Compute`):
//! their referencing and referenced rows may live on different shards, so
//! InnoDB cannot check them. As CockroachDB and TiDB do, each check is a
//! locking read in the writing statement's transaction:
//!
//! * after child rows are written, their keys are read `LOCK IN SHARE
//!   MODE` in the parent's partitions: a key missing is 23503, and the
//!   shared lock keeps each parent row until the transaction ends;
//! * after parent rows are deleted (or their keys changed), the children
//!   holding the old keys are read the same way, which sees rows committed
//!   since the snapshot and waits for uncommitted ones: one found is
//!   23503.

use common::{Datum, Error, Result, SqlState};
use meta::{Distribution, TableDef};

use super::exec::read_partition;
use crate::sql::ShardSql;
use crate::txn::StatementAccess;
use crate::Router;

/// Keys checked per shard statement.
const KEYS_PER_READ: usize = 500;

/// Child side: every key of `rows` (full rows of `t`, in column order)
/// without a NULL exists in its referenced table, and is locked there for
/// share until the transaction ends.
pub async fn check_references(
    router: &Router,
    t: &TableDef,
    rows: &[Vec<Datum>],
    access: &StatementAccess,
) -> Result<()> {
    let catalog = router.catalog();
    for fk in catalog.checked_foreign_keys(t.id, true) {
        let parent = catalog
            .table_by_id(fk.ref_table)
            .ok_or_else(|| Error::internal("a foreign key's table is not in the catalog"))?;
        let keys = distinct_keys(t, &fk.columns, parent, &fk.ref_columns, rows)?;
        let found = locking_lookup(router, parent, &fk.ref_columns, &keys, access, false).await?;
        if found.len() < keys.len() {
            return Err(Error::Sql {
                state: SqlState::FOREIGN_KEY_VIOLATION,
                message: format!(
                    "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                    t.name, fk.name
                ),
            });
        }
    }
    Ok(())
}

/// Parent side: no row of a table referencing `t` holds one of `old`
/// (rows of `t` deleted or whose key changed, in column order).
pub async fn check_unreferenced(
    router: &Router,
    t: &TableDef,
    old: &[Vec<Datum>],
    access: &StatementAccess,
) -> Result<()> {
    let catalog = router.catalog();
    for fk in catalog.checked_foreign_keys(t.id, false) {
        let child = catalog
            .table_by_id(fk.table)
            .ok_or_else(|| Error::internal("a foreign key's table is not in the catalog"))?;
        let keys = distinct_keys(t, &fk.ref_columns, child, &fk.columns, old)?;
        let found = locking_lookup(router, child, &fk.columns, &keys, access, true).await?;
        if !found.is_empty() {
            return Err(Error::Sql {
                    state: SqlState::FOREIGN_KEY_VIOLATION,
                    message: format!(
                        "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                        t.name, fk.name, child.name
                    ),
                });
        }
    }
    Ok(())
}

/// The keys among `keys` (values of `cols` of `t`) that rows of `t` hold,
/// read with a lock for share in `access`'s transaction. `any`: stop at
/// the first found.
async fn locking_lookup(
    router: &Router,
    t: &TableDef,
    cols: &[String],
    keys: &[Vec<Datum>],
    access: &StatementAccess,
    any: bool,
) -> Result<Vec<Vec<Datum>>> {
    let placement = router.placement();
    let types: Vec<common::SqlType> = cols
        .iter()
        .map(|c| t.column(c).map(|c| c.ty))
        .collect::<Result<_>>()?;
    let mut found = vec![];
    for (part, keys) in keys_by_partition(&placement, t, cols, keys, router.node_id)? {
        for chunk in keys.chunks(KEYS_PER_READ) {
            let (sql, order, values) = lookup_sql(t, part, cols, chunk, any);
            let values = super::exec::bind(&order, &values)?;
            let shard = placement.shard_of(t, part)?;
            let rows = read_partition(router, access, shard, &sql, values, &types, true).await?;
            found.extend(rows);
            if any && !found.is_empty() {
                return Ok(found);
            }
        }
    }
    found.sort_by(|a, b| cmp_rows(a, b));
    found.dedup_by(|a, b| cmp_rows(a, b).is_eq());
    Ok(found)
}

/// The distinct keys (values of `cols` of `t`'s rows, as the types of
/// `other`'s `other_cols`) without a NULL: MATCH SIMPLE skips those.
fn distinct_keys(
    t: &TableDef,
    cols: &[String],
    other: &TableDef,
    other_cols: &[String],
    rows: &[Vec<Datum>],
) -> Result<Vec<Vec<Datum>>> {
    let idx: Vec<usize> = cols
        .iter()
        .map(|c| {
            t.column_index(c)
                .ok_or_else(|| Error::internal("a foreign key column is not in its table"))
        })
        .collect::<Result<_>>()?;
    let types: Vec<common::SqlType> = other_cols
        .iter()
        .map(|c| other.column(c).map(|c| c.ty))
        .collect::<Result<_>>()?;
    let mut keys = vec![];
    for r in rows {
        let key: Vec<Datum> = idx.iter().map(|i| r[*i].clone()).collect();
        if key.iter().any(Datum::is_null) {
            continue;
        }
        keys.push(
            key.into_iter()
                .zip(&types)
                .map(|(v, ty)| v.coerce(ty))
                .collect::<Result<Vec<_>>>()?,
        );
    }
    keys.sort_by(|a, b| cmp_rows(a, b));
    keys.dedup_by(|a, b| cmp_rows(a, b).is_eq());
    Ok(keys)
}

fn cmp_rows(a: &[Datum], b: &[Datum]) -> std::cmp::Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.sort_cmp(y))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// The partitions of `t` that may hold each key (values of `cols`): the
/// one its hash names when the partition key is among `cols`, else all
/// (one copy of a mirror table).
fn keys_by_partition(
    placement: &meta::Placement,
    t: &TableDef,
    cols: &[String],
    keys: &[Vec<Datum>],
    node_id: u32,
) -> Result<Vec<(u32, Vec<Vec<Datum>>)>> {
    if keys.is_empty() {
        return Ok(vec![]);
    }
    match &t.distribution {
        Distribution::Hash { columns, .. } => {
            let at: Option<Vec<usize>> = columns
                .iter()
                .map(|k| cols.iter().position(|c| c == k))
                .collect();
            match at {
                Some(at) => {
                    let n = t.hash_partitions();
                    let mut by: std::collections::BTreeMap<u32, Vec<Vec<Datum>>> =
                        Default::default();
                    for k in keys {
                        let p = common::hash::partition_of(at.iter().map(|i| &k[*i]), n);
                        by.entry(p).or_default().push(k.clone());
                    }
                    Ok(by.into_iter().collect())
                }
                None => Ok((0..placement.partition_count(t)?)
                    .map(|p| (p, keys.to_vec()))
                    .collect()),
            }
        }
        Distribution::Single => Ok(vec![(0, keys.to_vec())]),
        Distribution::Mirror => Ok(vec![(
            crate::route::mirror_copy(placement, t, node_id),
            keys.to_vec(),
        )]),
    }
}

/// `SELECT cols FROM <partition> WHERE (cols) IN ((?, ...), ...) LOCK IN
/// SHARE MODE` and its values (`any`: at most one row).
fn lookup_sql(
    t: &TableDef,
    part: u32,
    cols: &[String],
    keys: &[Vec<Datum>],
    any: bool,
) -> (String, Vec<usize>, Vec<Datum>) {
    let mut sql = ShardSql::new();
    let mut names = ShardSql::new();
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            names.keyword(", ");
        }
        names.ident(c);
    }
    sql.keyword("SELECT ")
        .push(&names)
        .keyword(" FROM ")
        .table(&t.schema, &t.physical_name(part))
        .keyword(" WHERE (")
        .push(&names)
        .keyword(") IN (");
    let mut values = Vec::with_capacity(keys.len() * cols.len());
    for (i, k) in keys.iter().enumerate() {
        sql.keyword(if i > 0 { ", (" } else { "(" });
        for (j, v) in k.iter().enumerate() {
            if j > 0 {
                sql.keyword(", ");
            }
            sql.param(values.len());
            values.push(v.clone());
        }
        sql.keyword(")");
    }
    sql.keyword(")");
    if any {
        sql.keyword(" LIMIT 1");
    }
    sql.keyword(" LOCK IN SHARE MODE");
    let (text, order) = sql.into_parts();
    (text, order, values)
}
