//! Running rendered statements on shards: the one place a compute node's
//! reads and writes of partitions reach a MariaDB connection (the DataFusion
//! scans have their own streams in `scan`). DML, TRUNCATE and COPY all
//! write through [`write`] / [`write_in`]; the fast path reads through
//! [`read_partition`].

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{Datum, Error, Result, ShardId, SqlType};
use mysql_async::prelude::Queryable;
use storage_adapter::convert;

use crate::txn::{Branches, Lease, ShardAccess, StatementAccess};
use crate::Router;

/// A shard's error for `sql`: a lock wait that timed out under the
/// session's `lock_timeout` is PostgreSQL's lock timeout (55P03), not the
/// deadlock a shard's own timeout stands for.
pub(crate) fn statement_error(shard: ShardId, e: mysql_async::Error, sql: &str) -> Error {
    match storage_adapter::map_statement_error(shard, e, sql) {
        Error::Shard { code: 1205, .. } if sql.starts_with(crate::txn::LOCK_WAIT_PREFIX) => {
            Error::LockTimeout
        }
        other => other,
    }
}

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

/// What writes gave back: the rows they affected, and, when asked for,
/// each statement's `RETURNING` rows (in the order of the work).
#[derive(Debug, Default)]
pub struct Written {
    pub affected: u64,
    pub returned: Vec<Vec<Vec<Datum>>>,
}

/// Runs writes as one unit: in the session's transaction `txn` if there is
/// one; a single statement in autocommit on a pooled connection; several
/// in an implicit transaction (2PC across shards) so they apply together
/// or not at all. `shield` is called just before an implicit commit: what
/// it returns is held until the commit has ended (the session's cancel
/// shield), and its error rolls the writes back instead. Returns the rows
/// affected.
pub async fn write<G>(
    router: &Arc<Router>,
    access: &StatementAccess,
    work: Vec<ShardStatement>,
    shield: impl FnOnce() -> Result<G>,
) -> Result<u64> {
    Ok(write_returning(router, access, work, None, shield)
        .await?
        .affected)
}

/// [`write`] of statements that end in `RETURNING`, their rows decoded as
/// `returning` (none: statements without rows).
pub async fn write_returning<G>(
    router: &Arc<Router>,
    access: &StatementAccess,
    work: Vec<ShardStatement>,
    returning: Option<&[SqlType]>,
    shield: impl FnOnce() -> Result<G>,
) -> Result<Written> {
    let implicit = matches!(access.shards, ShardAccess::Autocommit) && work.len() > 1;
    let access = if implicit {
        access.with_shards(ShardAccess::Txn(Arc::new(Branches::new(
            router.node_id,
            None,
            false,
        ))))
    } else {
        access.clone()
    };
    let result = write_in_returning(router, &access, work, returning).await;
    if implicit {
        if let ShardAccess::Txn(b) = &access.shards {
            match shield() {
                Ok(held) => {
                    b.clone()
                        .finish_detached(router.clone(), result.is_ok())
                        .await?;
                    drop(held);
                }
                Err(e) => {
                    b.clone().finish_detached(router.clone(), false).await?;
                    return Err(e);
                }
            }
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
    access: &StatementAccess,
    work: Vec<ShardStatement>,
) -> Result<u64> {
    Ok(write_in_returning(router, access, work, None)
        .await?
        .affected)
}

/// [`write_in`] of statements that end in `RETURNING`, their rows decoded
/// as `returning` (none: statements without rows).
pub async fn write_in_returning(
    router: &Router,
    access: &StatementAccess,
    work: Vec<ShardStatement>,
    returning: Option<&[SqlType]>,
) -> Result<Written> {
    let n = work.len();
    type Stmts = Vec<(usize, String, Vec<mysql_async::Value>)>;
    let mut per_shard: BTreeMap<ShardId, Stmts> = BTreeMap::new();
    for (i, (shard, sql, vals)) in work.into_iter().enumerate() {
        per_shard.entry(shard).or_default().push((i, sql, vals));
    }
    let results =
        futures::future::join_all(per_shard.into_iter().map(|(shard, stmts)| async move {
            if router.fences.any() {
                let texts: Vec<&str> = stmts.iter().map(|(_, sql, _)| sql.as_str()).collect();
                access.pass_fences(router, shard, &texts).await;
            }
            let mut watched = Watched::new(router, access.lease(router, shard, true).await?)?;
            let r = async {
                let lease = watched.lease()?;
                let mut affected = 0;
                let mut returned = vec![];
                for (i, sql, vals) in stmts {
                    let conn = lease.conn()?;
                    let sql = access.under_lock_timeout(&sql);
                    match returning {
                        None => storage_adapter::exec_drop(conn, &sql, vals)
                            .await
                            .map_err(|e| statement_error(shard, e, &sql))?,
                        Some(types) => {
                            let raw: Vec<mysql_async::Row> = if vals.is_empty() {
                                conn.query(&*sql).await
                            } else {
                                conn.exec(&*sql, vals).await
                            }
                            .map_err(|e| statement_error(shard, e, &sql))?;
                            returned.push((i, decode_rows(raw, types)?));
                        }
                    }
                    affected += conn.affected_rows();
                    lease.mark_written();
                }
                Ok::<_, Error>((affected, returned))
            }
            .await;
            watched.done();
            r
        }))
        .await;
    let mut written = Written {
        affected: 0,
        returned: if returning.is_some() {
            vec![vec![]; n]
        } else {
            vec![]
        },
    };
    for r in results {
        let (affected, returned) = r?;
        written.affected += affected;
        for (i, rows) in returned {
            written.returned[i] = rows;
        }
    }
    Ok(written)
}

/// Rows read from a shard, decoded as `types`.
fn decode_rows(raw: Vec<mysql_async::Row>, types: &[SqlType]) -> Result<Vec<Vec<Datum>>> {
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

/// Runs one SELECT on `shard` through `access` and decodes its rows as
/// `types`. `locking`: the statement locks what it reads (its branch is
/// then prepared with the writers at commit).
pub async fn read_partition(
    router: &Router,
    access: &StatementAccess,
    shard: ShardId,
    sql: &str,
    vals: Vec<mysql_async::Value>,
    types: &[SqlType],
    locking: bool,
) -> Result<Vec<Vec<Datum>>> {
    access.pass_fences(router, shard, &[sql]).await;
    let mut watched = Watched::new(router, access.lease(router, shard, locking).await?)?;
    let sql = &*if locking {
        access.under_lock_timeout(sql)
    } else {
        sql.into()
    };
    let raw = async {
        let lease = watched.lease()?;
        let pin = lease.take_view_pin();
        let conn = lease.conn()?;
        // Without parameters, one text-protocol round trip (a prepared
        // statement would cost a prepare per distinct text), unless a
        // `real` is read: the text protocol prints a FLOAT with six
        // significant digits, the binary one sends its four bytes.
        let raw: Vec<mysql_async::Row> = if vals.is_empty() && !types.contains(&SqlType::Real) {
            conn.query(sql).await
        } else {
            conn.exec(sql, vals).await
        }
        .map_err(|e| statement_error(shard, e, sql))?;
        if let Some(p) = pin {
            p.opened()?;
        }
        Ok::<_, Error>(raw)
    }
    .await;
    watched.done();
    decode_rows(raw?, types)
}

/// A lease whose statement is killed on the shard if it is abandoned: a
/// cancel request or `statement_timeout` drops the statement's future, and
/// MariaDB would otherwise run it to its end (a write applied after the
/// client was told 57014, locks held by a statement nobody waits for). The
/// lease is held until `KILL QUERY` has run, so the connection serves no
/// other statement meanwhile.
pub(crate) struct Watched {
    lease: Option<Lease>,
    client: storage_adapter::ShardClient,
    conn_id: u32,
}

impl Watched {
    pub(crate) fn new(router: &Router, mut lease: Lease) -> Result<Watched> {
        let conn_id = lease.conn()?.id();
        let client = router.shard(lease.shard())?;
        Ok(Watched {
            lease: Some(lease),
            client,
            conn_id,
        })
    }

    pub(crate) fn lease(&mut self) -> Result<&mut Lease> {
        self.lease
            .as_mut()
            .ok_or_else(|| Error::internal("statement lease already returned"))
    }

    /// A way to kill the statement while it still runs here.
    pub(crate) fn killer(&self) -> Killer {
        Killer {
            client: self.client.clone(),
            conn_id: self.conn_id,
        }
    }

    /// The statement ran to its end (or its error): nothing to kill.
    pub(crate) fn done(mut self) {
        self.lease = None;
    }
}

/// `KILL QUERY`s spawned and not yet run (see [`kills_settled`]).
static KILLS_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn kills_done() -> &'static tokio::sync::Notify {
    static DONE: std::sync::OnceLock<tokio::sync::Notify> = std::sync::OnceLock::new();
    DONE.get_or_init(tokio::sync::Notify::new)
}

/// Waits (at most `max`) until every abandoned statement's `KILL QUERY`
/// has run: a statement that timed out is answered 57014 only once its
/// write can no longer be applied (a lock freed between the answer and
/// the kill let it commit).
pub async fn kills_settled(max: std::time::Duration) {
    use std::sync::atomic::Ordering;
    let _ = tokio::time::timeout(max, async {
        loop {
            let notified = kills_done().notified();
            if KILLS_IN_FLIGHT.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    })
    .await;
}

impl Drop for Watched {
    fn drop(&mut self) {
        let Some(lease) = self.lease.take() else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let kill = self.killer().kill();
        rt.spawn(async move {
            kill.await;
            let mut lease = lease;
            lease.settle().await;
            drop(lease);
        });
    }
}

/// Kills the statement running on one shard connection, from another.
pub(crate) struct Killer {
    client: storage_adapter::ShardClient,
    conn_id: u32,
}

impl Killer {
    /// `KILL QUERY` of the connection's statement, counted in flight
    /// (`kills_settled`) from this call until it has run.
    pub(crate) fn kill(self) -> impl std::future::Future<Output = ()> + Send + 'static {
        KILLS_IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        async move {
            let id = self.conn_id;
            match self.client.conn().await {
                Ok(mut c) => {
                    if let Err(e) = c.query_drop(format!("KILL QUERY {id}")).await {
                        tracing::debug!("KILL QUERY {id} on {}: {e}", self.client.id);
                    }
                }
                Err(e) => tracing::debug!("no connection to kill query {id}: {e}"),
            }
            KILLS_IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
            kills_done().notify_waiters();
        }
    }
}
