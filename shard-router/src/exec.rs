//! Running rendered statements on shards: the one place a compute node's
//! reads and writes of partitions reach a MariaDB connection (the DataFusion
//! scans have their own streams in `scan`). DML, TRUNCATE and COPY all
//! write through [`write`] / [`write_in`]; the fast path reads through
//! [`read_partition`].

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{Datum, Error, Result, ShardId, SqlType};
use mysql_async::prelude::Queryable;
use storage_adapter::{convert, map_error};

use crate::txn::{Branches, ShardAccess};
use crate::Router;

/// One statement for one shard: its SQL text and parameter values.
pub type ShardStatement = (ShardId, String, Vec<mysql_async::Value>);

/// The values of a rendered statement's `?`s: `order[i]` is the client
/// parameter the i-th `?` takes (42P02 for one the client did not send).
pub fn bind(order: &[usize], params: &[Datum]) -> Result<Vec<mysql_async::Value>> {
    order
        .iter()
        .map(|i| {
            params
                .get(*i)
                .map(convert::to_mysql)
                .ok_or_else(|| Error::InvalidParameter {
                    message: format!("there is no parameter ${}", i + 1),
                })
        })
        .collect()
}

/// Runs writes as one unit: in the session's transaction `txn` if there is
/// one; a single statement in autocommit on a pooled connection; several
/// in an implicit transaction (2PC across shards) so they apply together
/// or not at all. Returns the rows affected.
pub async fn write(
    router: &Arc<Router>,
    txn: Option<&Arc<Branches>>,
    work: Vec<ShardStatement>,
) -> Result<u64> {
    let implicit = txn.is_none() && work.len() > 1;
    let access = match txn {
        Some(t) => ShardAccess::Txn(t.clone()),
        None if implicit => ShardAccess::Txn(Arc::new(Branches::new(router.node_id, None, false))),
        None => ShardAccess::Autocommit,
    };
    let result = write_in(router, &access, work).await;
    if implicit {
        if let ShardAccess::Txn(b) = &access {
            b.clone()
                .finish_detached(router.clone(), result.is_ok())
                .await?;
        }
    }
    result
}

/// Runs writes through `access`: each shard's statements in order, shards
/// concurrently. Every shard's work runs to its end or its first error
/// (none is dropped midway when another fails); then the first error, if
/// any, is reported. Returns the rows affected.
pub async fn write_in(
    router: &Router,
    access: &ShardAccess,
    work: Vec<ShardStatement>,
) -> Result<u64> {
    let mut per_shard: BTreeMap<ShardId, Vec<(String, Vec<mysql_async::Value>)>> = BTreeMap::new();
    for (shard, sql, vals) in work {
        per_shard.entry(shard).or_default().push((sql, vals));
    }
    let results =
        futures::future::join_all(per_shard.into_iter().map(|(shard, stmts)| async move {
            let mut lease = access.lease(router, shard, true).await?;
            let mut affected = 0;
            for (sql, vals) in stmts {
                let conn = lease.conn()?;
                storage_adapter::exec_drop(conn, &sql, vals)
                    .await
                    .map_err(|e| map_error(shard, e))?;
                affected += conn.affected_rows();
                lease.mark_written();
            }
            Ok::<_, Error>(affected)
        }))
        .await;
    let mut affected = 0;
    for r in results {
        affected += r?;
    }
    Ok(affected)
}

/// Runs one SELECT on `shard` through `access` and decodes its rows as
/// `types`. `locking`: the statement locks what it reads (its branch is
/// then prepared with the writers at commit).
pub async fn read_partition(
    router: &Router,
    access: &ShardAccess,
    shard: ShardId,
    sql: &str,
    vals: Vec<mysql_async::Value>,
    types: &[SqlType],
    locking: bool,
) -> Result<Vec<Vec<Datum>>> {
    let mut lease = access.lease(router, shard, locking).await?;
    let conn = lease.conn()?;
    // Without parameters, one text-protocol round trip (a prepared
    // statement would cost a prepare per distinct text).
    let raw: Vec<mysql_async::Row> = if vals.is_empty() {
        conn.query(sql).await
    } else {
        conn.exec(sql, vals).await
    }
    .map_err(|e| storage_adapter::map_statement_error(shard, e, sql))?;
    let mut rows = Vec::with_capacity(raw.len());
    for r in raw {
        let vals = r.unwrap_raw();
        let mut row = Vec::with_capacity(vals.len());
        for (v, ty) in vals.into_iter().zip(types) {
            let v = v.unwrap_or(mysql_async::Value::NULL);
            row.push(convert::from_mysql(v, ty)?);
        }
        rows.push(row);
    }
    Ok(rows)
}
