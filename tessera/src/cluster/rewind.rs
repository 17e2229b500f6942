//! Bringing a failed-over old primary back to its successor's history
//! before it follows it (issue 34): the XA reconciliation of what its
//! crash left in the engine, then the rewind of its unacknowledged tail.
//! Design: docs/rfcs/2026-12-04-replicas-and-failover.md ("Rejoin").
//!
//! **Reconciliation.** MariaDB's crash recovery does not make the engine's
//! XA branches what the binary log says: with `AFTER_SYNC` an `XA COMMIT`
//! is binary-logged, acknowledged, and only then committed in the engine,
//! so a kill in between leaves the branch prepared while the log (and the
//! GTID position the server follows from) says committed (why a writing
//! branch is never committed `ONE PHASE`: `shard_router::txn::Participant::
//! commit_alone`); and an `XA
//! PREPARE` can be binary-logged and received by a replica but lost by the
//! engine. Up to the promotion's GTID (what the new primary has too) each
//! branch is made what the log says last: a branch the log commits or rolls
//! back but the engine holds prepared is committed or rolled back, one the
//! log leaves prepared but the engine lost is prepared again by replaying
//! its group. All unlogged: the log has them already.
//!
//! **Rewind.** A primary killed by a crash restarts with
//! `--init-rpl-role=SLAVE`, and MariaDB's recovery removes from its binary
//! log the transactions no replica acknowledged. Not `XA PREPARE`s: a
//! branch prepared there but never received by a replica stays prepared,
//! and its GTID stays in the binary log past the promotion, so the new
//! primary would refuse the old one as a replica (error 1236, "diverged").
//! Such a branch was never answered to its coordinator (its prepare waited
//! for the acknowledgement), so its transaction was rolled back everywhere
//! else: it is rolled back here too, unlogged, and the binary log is
//! emptied, so the server follows the new primary from the promotion's
//! position. Anything else past that position (a commit, as a server that
//! was only stopped keeps from its killed clients) is a real divergence:
//! the server is rebuilt from its primary (`super::rebuild`).

use mysql_async::prelude::*;

use super::binlog::{Group, Kind, Log};
use super::process::root_conn;
use super::{AnyResult, ClusterFile, Node, Role, ShardId};

/// What an old primary holds past its successor's promotion.
#[derive(Debug, PartialEq)]
pub(super) enum Tail {
    /// Nothing: it follows from its own position.
    Empty,
    /// Only branches it prepared (their XIDs, as `XA` statements name them),
    /// and the commits or rollbacks of branches prepared before (which
    /// must still be prepared here: the engine finishes them only after the
    /// acknowledgement; the new primary's recovery finishes them again).
    Prepared(Vec<String>, Vec<String>),
    /// Something else: the first such group's GTID.
    Diverged(String),
}

/// Classifies the groups past the promotion. Groups another server wrote
/// were received from the new primary (the server followed it for a
/// while); of its own (`own`, its server id), a prepared branch or the end
/// of one is its unacknowledged tail, any other group, or one after a
/// received group, a divergence.
pub(super) fn classify(tail: &[Group], own: u32) -> Tail {
    let mut xids = vec![];
    let mut resolved = vec![];
    let mut received = false;
    for g in tail {
        if g.server() != Some(own) {
            received = true;
            continue;
        }
        if received {
            return Tail::Diverged(g.gtid.clone());
        }
        match g.kind() {
            Kind::Prepare(x) => xids.push(x),
            Kind::Commit(x) | Kind::Rollback(x) => resolved.push(x),
            Kind::Other => return Tail::Diverged(g.gtid.clone()),
        }
    }
    if xids.is_empty() && resolved.is_empty() {
        Tail::Empty
    } else {
        Tail::Prepared(xids, resolved)
    }
}

/// One change that makes the engine's XA branches what the log says.
#[derive(Debug, PartialEq)]
pub(super) enum Fix {
    Commit(String),
    Rollback(String),
    /// Prepare again the branch of this group (an index into the groups).
    Replay(usize),
}

/// The fixes, in log order, given the groups read (the first `shared` of
/// them up to the promotion) and the branches the engine holds prepared.
/// A branch is finished only by an end up to the promotion (an end past it
/// was not acknowledged: the branch stays prepared, as on the new
/// primary); it is prepared again only when its prepare, up to the
/// promotion, is the last the whole log says of it.
pub(super) fn reconcile(groups: &[Group], shared: usize, prepared: &[String]) -> Vec<Fix> {
    use std::collections::HashMap;
    let mut last_shared: HashMap<String, usize> = HashMap::new();
    let mut last_any: HashMap<String, usize> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        let (Kind::Prepare(x) | Kind::Commit(x) | Kind::Rollback(x)) = g.kind() else {
            continue;
        };
        if i < shared {
            last_shared.insert(x.clone(), i);
        }
        last_any.insert(x, i);
    }
    let mut fixes: Vec<(usize, Fix)> = vec![];
    for (x, i) in last_shared {
        let in_engine = prepared.contains(&x);
        match groups[i].kind() {
            Kind::Prepare(_) if !in_engine && last_any.get(&x) == Some(&i) => {
                fixes.push((i, Fix::Replay(i)))
            }
            Kind::Commit(_) if in_engine => fixes.push((i, Fix::Commit(x))),
            Kind::Rollback(_) if in_engine => fixes.push((i, Fix::Rollback(x))),
            _ => {}
        }
    }
    fixes.sort_by_key(|(i, _)| *i);
    fixes.into_iter().map(|(_, f)| f).collect()
}

/// The XIDs of the branches the engine holds prepared, as the binary log
/// prints them (`X'gtrid',X'bqual',format`: `XA RECOVER FORMAT = 'SQL'`
/// quotes printable ones as strings instead).
async fn xa_recover(conn: &mut mysql_async::Conn) -> AnyResult<Vec<String>> {
    let rows: Vec<(i64, usize, usize, Vec<u8>)> =
        conn.query("XA RECOVER").await.map_err(|e| e.to_string())?;
    Ok(rows
        .iter()
        .filter_map(|(format, gtrid, bqual, data)| xid_text(*format, *gtrid, *bqual, data))
        .collect())
}

/// One `XA RECOVER` row's XID in the binary log's form.
fn xid_text(format: i64, gtrid: usize, bqual: usize, data: &[u8]) -> Option<String> {
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let g = data.get(..gtrid)?;
    let b = data.get(gtrid..gtrid.checked_add(bqual)?)?;
    Some(format!("X'{}',X'{}',{format}", hex(g), hex(b)))
}

/// Applies the fixes, unlogged. A replay runs the group's statements as
/// `mariadb-binlog | mariadb` would (the format description first, so its
/// `BINLOG` row events apply), on a connection of its own that it leaves
/// with the branch prepared. The statements are the server's own binary
/// log; the XIDs were checked by `binlog::well_formed_xid`.
async fn apply(n: &Node, conn: &mut mysql_async::Conn, log: &Log, fixes: &[Fix]) -> AnyResult<()> {
    conn.query_drop("SET SESSION sql_log_bin = 0")
        .await
        .map_err(|e| e.to_string())?;
    for fix in fixes {
        let sql = match fix {
            Fix::Commit(x) => format!("XA COMMIT {x}"),
            Fix::Rollback(x) => format!("XA ROLLBACK {x}"),
            Fix::Replay(i) => {
                replay(n, log, &log.groups[*i]).await?;
                continue;
            }
        };
        match conn.query_drop(&sql).await {
            Ok(()) => {}
            // XAER_NOTA: 2PC recovery finished it meanwhile.
            Err(mysql_async::Error::Server(e)) if e.code == 1397 => {}
            Err(e) => return Err(format!("{sql}: {e}")),
        }
    }
    conn.query_drop("SET SESSION sql_log_bin = 1")
        .await
        .map_err(|e| e.to_string())
}

async fn replay(n: &Node, log: &Log, g: &Group) -> AnyResult<()> {
    let mut c = root_conn(n).await?;
    let mut sql = vec![
        "SET SESSION sql_log_bin = 0".to_string(),
        "SET SESSION pseudo_slave_mode = 1".to_string(),
        log.formats[g.format].clone(),
    ];
    // `\C` is the client's charset command, not SQL.
    sql.extend(
        g.statements
            .iter()
            .filter(|s| !s.starts_with("/*!\\C"))
            .cloned(),
    );
    for s in sql {
        c.query_drop(s)
            .await
            .map_err(|e| format!("replaying {}: {e}", g.gtid))?;
    }
    let _ = c.disconnect().await;
    Ok(())
}

/// Rolls back (unlogged) the branches of a `Prepared` tail that are still
/// prepared and empties the binary log; the caller then follows the new
/// primary from the promotion. False, and nothing done, when a branch the
/// tail commits or rolls back is no longer prepared here (the engine
/// finished it: a divergence).
async fn roll_back(
    n: &Node,
    conn: &mut mysql_async::Conn,
    log: &Log,
    xids: &[String],
    resolved: &[String],
) -> AnyResult<bool> {
    let prepared = xa_recover(conn).await?;
    if resolved.iter().any(|x| !prepared.contains(x)) {
        return Ok(false);
    }
    let rollbacks: Vec<Fix> = xids
        .iter()
        .filter(|x| prepared.contains(x))
        .map(|x| Fix::Rollback(x.clone()))
        .collect();
    apply(n, conn, log, &rollbacks).await?;
    conn.query_drop("RESET MASTER")
        .await
        .map_err(|e| e.to_string())?;
    Ok(true)
}

/// Rolls back (unlogged) the branches `n`'s engine holds prepared that its
/// binary log never mentions and its primary does not hold: an `XA
/// PREPARE` the engine made but a kill kept out of the log, so no replica
/// received it and its coordinator saw it fail. Nothing would ever finish
/// such a branch here (2PC recovery asks primaries only), and its row
/// locks stop the applier at the first replicated change of those rows
/// (seen: a rejoined old primary stuck in lock waits for 60 s).
async fn roll_back_unlogged(
    n: &Node,
    conn: &mut mysql_async::Conn,
    log: &Log,
    primary: &Node,
) -> AnyResult<()> {
    let logged: std::collections::HashSet<String> = log
        .groups
        .iter()
        .filter_map(|g| match g.kind() {
            Kind::Prepare(x) | Kind::Commit(x) | Kind::Rollback(x) => Some(x),
            _ => None,
        })
        .collect();
    let unlogged: Vec<String> = xa_recover(conn)
        .await?
        .into_iter()
        .filter(|x| !logged.contains(x))
        .collect();
    if unlogged.is_empty() {
        return Ok(());
    }
    let mut p = root_conn(primary).await?;
    let on_primary = xa_recover(&mut p).await?;
    let _ = p.disconnect().await;
    let fixes: Vec<Fix> = unlogged
        .into_iter()
        .filter(|x| !on_primary.contains(x))
        .map(Fix::Rollback)
        .collect();
    if fixes.is_empty() {
        return Ok(());
    }
    apply(n, conn, log, &fixes)
        .await
        .map_err(|e| format!("{}: {e}", n.name))?;
    println!(
        "{} was a primary before a failover: rolled back {} branch(es) its engine prepared but its binary log never received ({fixes:?})",
        n.name,
        fixes.len()
    );
    Ok(())
}

/// Where the promotion of `n`'s successor left off (its GTID position), as
/// meta recorded it, if meta answers and has it.
async fn promoted_at(cf: &ClusterFile, kind: Role, n: &Node) -> Option<String> {
    let shard = ShardId(if kind == Role::Meta { 0 } else { n.shard });
    let store = cf.meta_store().await.ok()?;
    let p = store.promoted_at(shard, n.port).await;
    store.disconnect().await;
    // Put into a statement below: digits, dashes and commas only.
    p.ok().flatten().filter(|p| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b',')
    })
}

/// What reconciling a server's XA branches with its binary log came to.
enum Reconciled {
    /// These fixes applied (none: nothing to do).
    Applied(Vec<Fix>),
    /// A lost prepare needs a replay, and the server does not flush every
    /// commit: the engine may have finished a branch the log still shows
    /// prepared, and preparing it again could apply it twice.
    NotDurable,
    /// Applying the fixes failed.
    Failed(Vec<Fix>, String),
}

/// Reads the engine's prepared branches, then the binary log (that order:
/// were a branch finished in between, by 2PC recovery, its end is in the
/// log read after; the other order would see it gone and prepare it
/// again), and makes each branch what the log says up to the first group
/// past `cut` (a GTID sequence number; none: the whole log). Answers the
/// log, how many groups are up to the cut, and what was done.
async fn reconcile_with_log(
    n: &Node,
    conn: &mut mysql_async::Conn,
    cut: Option<u64>,
) -> AnyResult<(Log, usize, Reconciled)> {
    let durable: Option<bool> = conn
        .query_first(
            "SELECT @@GLOBAL.sync_binlog = 1 AND @@GLOBAL.innodb_flush_log_at_trx_commit = 1",
        )
        .await
        .map_err(|e| format!("{}: {e}", n.name))?;
    let prepared = xa_recover(conn).await?;
    let log = super::binlog::read(&n.dir.join("data")).map_err(|e| format!("{}: {e}", n.name))?;
    let past = |g: &Group| cut.is_some_and(|c| g.seq().is_some_and(|s| s > c));
    let shared = log.groups.iter().position(past).unwrap_or(log.groups.len());
    let fixes = reconcile(&log.groups, shared, &prepared);
    if durable != Some(true) && fixes.iter().any(|f| matches!(f, Fix::Replay(_))) {
        return Ok((log, shared, Reconciled::NotDurable));
    }
    let done = match apply(n, conn, &log, &fixes).await {
        Ok(()) => Reconciled::Applied(fixes),
        Err(e) => Reconciled::Failed(fixes, e),
    };
    Ok((log, shared, done))
}

/// Reconciles an old primary's XA branches with its log and rewinds its
/// tail; answers the statement that sets where it starts following its
/// successor (the end of its own binary log, or the promotion's position
/// when it had a tail), or None when it diverged (the caller rebuilds it
/// from its primary: `super::rebuild`).
pub(super) async fn start_position(
    cf: &ClusterFile,
    kind: Role,
    n: &Node,
    primary: &Node,
    conn: &mut mysql_async::Conn,
) -> AnyResult<Option<String>> {
    use meta::replication::domain0_seq;
    let own = "SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos".to_string();
    let promoted = promoted_at(cf, kind, n).await;
    let (binlog_pos, server_id): (String, u32) = conn
        .query_first("SELECT @@GLOBAL.gtid_binlog_pos, @@GLOBAL.server_id")
        .await
        .map_err(|e| format!("{}: {e}", n.name))?
        .ok_or_else(|| format!("{}: no server variables", n.name))?;
    let cut = promoted.as_deref().and_then(domain0_seq);
    let (log, shared, done) = reconcile_with_log(n, conn, cut).await?;
    match done {
        Reconciled::Applied(fixes) if fixes.is_empty() => {}
        Reconciled::Applied(fixes) => println!(
            "{} was a primary before a failover: its XA branches made what its binary log says ({fixes:?})",
            n.name
        ),
        Reconciled::NotDurable => {
            println!("{} was a primary before a failover and lost a prepared XA branch at its crash, and it does not flush every commit: it cannot be reconciled", n.name);
            return Ok(None);
        }
        Reconciled::Failed(fixes, e) => {
            println!(
                "{} was a primary before a failover and its XA branches could not be made what its binary log says ({fixes:?}: {e})",
                n.name
            );
            return Ok(None);
        }
    }
    roll_back_unlogged(n, conn, &log, primary).await?;
    let Some(promoted) = promoted else {
        return Ok(Some(own));
    };
    let tail = &log.groups[shared..];
    let past_end = domain0_seq(&binlog_pos) > cut && tail.is_empty();
    let diverged = |what: String| {
        println!(
            "{} was a primary before a failover and {what} after its successor's promotion at {promoted}",
            n.name
        );
        Ok(None)
    };
    match classify(tail, server_id) {
        // Its position is past the promotion, but the files that hold the
        // groups that took it there were not read (a checkpoint past them).
        Tail::Empty if past_end => diverged(format!("wrote up to {binlog_pos}")),
        Tail::Empty => Ok(Some(own)),
        Tail::Prepared(xids, resolved) => {
            if !roll_back(n, conn, &log, &xids, &resolved)
                .await
                .map_err(|e| format!("{}: {e}", n.name))?
            {
                return diverged("finished a branch".into());
            }
            println!(
                "{} was a primary before a failover: rolled back {} branch(es) it prepared that no replica received, dropped {} unacknowledged end(s) of branches still prepared, and follows from {promoted}",
                n.name,
                xids.len(),
                resolved.len()
            );
            Ok(Some(format!("SET GLOBAL gtid_slave_pos = '{promoted}'")))
        }
        Tail::Diverged(gtid) => diverged(format!("committed {gtid}")),
    }
}

/// Whether a server that is not running ended its last run without a
/// clean shutdown (its log's last start has no "Shutdown complete").
pub(super) fn crashed_last_run(n: &Node) -> bool {
    super::process::last_start_log(n).is_some_and(|log| !log.contains("Shutdown complete"))
}

/// After a crash restart of a shard server that has no replicas, its XA
/// branches made what its binary log says (the same reconciliation as a
/// rejoin's, over the whole log): a branch whose `XA PREPARE` the engine
/// lost would otherwise vanish, and 2PC recovery could not tell it from a
/// committed one; an acknowledged transfer was seen lost that way under
/// shard kills. Nothing is done without durable commits (a replay could
/// apply a branch twice): the server says so. The server was started
/// read-only (2PC recovery cannot finish a branch meanwhile) and is made
/// writable at the end.
pub(super) fn reconcile_after_crash(n: &Node) -> AnyResult<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let mut conn = root_conn(n).await?;
        if n.dir.join("data").join("binlog.index").exists() {
            // Writable again whatever happens: a failed reconciliation is
            // reported, it does not leave the shard read-only.
            if let Err(e) = reconcile_crashed(n, &mut conn).await {
                println!(
                    "{}: WARNING: its XA branches could not be reconciled after its crash: {e}",
                    n.name
                );
            }
        }
        conn.query_drop("SET GLOBAL read_only = OFF")
            .await
            .map_err(|e| format!("{}: {e}", n.name))
    })
}

async fn reconcile_crashed(n: &Node, conn: &mut mysql_async::Conn) -> AnyResult<()> {
    match reconcile_with_log(n, conn, None).await?.2 {
        Reconciled::Applied(fixes) if fixes.is_empty() => {}
        Reconciled::Applied(fixes) => println!(
            "{}: after its crash, its XA branches made what its binary log says ({fixes:?})",
            n.name
        ),
        Reconciled::NotDurable => println!("{}: its crash lost a prepared XA branch its binary log holds, and it does not flush every commit: not prepared again", n.name),
        Reconciled::Failed(fixes, e) => println!(
            "{}: WARNING: after its crash, its XA branches could not all be made what its binary log says ({fixes:?}): {e}",
            n.name
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::binlog::{parse, tests::FILE};
    use super::*;

    fn group(server: u32, seq: u32, statements: &[&str]) -> Group {
        Group {
            gtid: format!("0-{server}-{seq}"),
            statements: statements.iter().map(|s| s.to_string()).collect(),
            format: 0,
        }
    }

    const X: &str = "X'7473',X'31',1";

    fn prepare(server: u32, seq: u32) -> Group {
        group(
            server,
            seq,
            &[
                "XA START X'7473',X'31',1",
                "BINLOG 'AAAA'",
                "XA END X'7473',X'31',1",
                "XA PREPARE X'7473',X'31',1",
            ],
        )
    }

    #[test]
    fn a_tail_of_prepared_branches_is_rolled_back_anything_else_diverges() {
        assert_eq!(classify(&[], 40211), Tail::Empty);
        let file = parse(FILE.as_bytes(), 0).expect("parse");
        assert_eq!(
            classify(&file.groups[..1], 40211),
            Tail::Prepared(vec![X.into()], vec![])
        );
        let commit = |server, seq| group(server, seq, &["START TRANSACTION", "COMMIT"]);
        assert_eq!(
            classify(&[prepare(40211, 1236), commit(40211, 1237)], 40211),
            Tail::Diverged("0-40211-1237".into())
        );
        let finished = group(
            40211,
            1238,
            &["SET TIMESTAMP=1", "XA COMMIT X'7475',X'32',1"],
        );
        assert_eq!(
            classify(&[finished], 40211),
            Tail::Prepared(vec![], vec!["X'7475',X'32',1".into()])
        );
        // Received from the new primary (40311): not its own.
        assert_eq!(classify(&[commit(40311, 1237)], 40211), Tail::Empty);
        assert!(matches!(
            classify(&[commit(40311, 1235), prepare(40211, 1236)], 40211),
            Tail::Diverged(_)
        ));
        let spoofed = group(
            40211,
            1236,
            &[
                "XA START X'74'' OR 1',X'31',1",
                "XA PREPARE X'74'' OR 1',X'31',1",
            ],
        );
        assert!(matches!(classify(&[spoofed], 40211), Tail::Diverged(_)));
    }

    #[test]
    fn recovered_xids_are_printed_as_the_binary_log_prints_them() {
        assert_eq!(xid_text(1, 2, 1, b"ts1").as_deref(), Some(X));
        assert_eq!(
            xid_text(1, 3, 0, b"abc").as_deref(),
            Some("X'616263',X'',1")
        );
        assert_eq!(xid_text(1, 3, 2, b"abc"), None);
    }

    #[test]
    fn branches_are_made_what_the_log_says_up_to_the_promotion() {
        let end = |seq, what: &str| group(1, seq, &["SET TIMESTAMP=1", &format!("{what} {X}")]);
        let other = group(1, 9, &["START TRANSACTION", "COMMIT"]);
        // Committed in the log, still prepared in the engine: committed.
        let log = [prepare(1, 1), other.clone(), end(2, "XA COMMIT")];
        assert_eq!(reconcile(&log, 3, &[X.into()]), vec![Fix::Commit(X.into())]);
        assert_eq!(reconcile(&log, 3, &[]), vec![]);
        let log = [prepare(1, 1), end(2, "XA ROLLBACK")];
        assert_eq!(
            reconcile(&log, 2, &[X.into()]),
            vec![Fix::Rollback(X.into())]
        );
        // Prepared in the log, lost by the engine: prepared again.
        let log = [other.clone(), prepare(1, 1)];
        assert_eq!(reconcile(&log, 2, &[]), vec![Fix::Replay(1)]);
        assert_eq!(reconcile(&log, 2, &[X.into()]), vec![]);
        // An end past the promotion was not acknowledged: the branch stays
        // prepared as on the new primary (the rewind checks the engine did
        // not finish it), and is not prepared twice.
        let log = [prepare(1, 1), end(2, "XA COMMIT")];
        assert_eq!(reconcile(&log, 1, &[X.into()]), vec![]);
        assert_eq!(reconcile(&log, 1, &[]), vec![]);
        // A prepare past the promotion is the tail's (rolled back).
        assert_eq!(reconcile(&[prepare(1, 1)], 0, &[]), vec![]);
    }
}
