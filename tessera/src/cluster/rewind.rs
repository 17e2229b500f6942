//! Rewinding a killed old primary to the point its successor was promoted
//! at, before it follows the new primary (issue 34).
//!
//! A primary killed by a crash restarts with `--init-rpl-role=SLAVE`, and
//! MariaDB's recovery removes from its binary log the transactions no
//! replica acknowledged. Not `XA PREPARE`s: a branch prepared there but
//! never received by a replica stays prepared, and its GTID stays in the
//! binary log past the promotion, so the new primary refuses the old one as
//! a replica (error 1236, "diverged"). Such a branch was never answered to
//! its coordinator (its prepare waited for the acknowledgement), so its
//! transaction was rolled back everywhere else: it is rolled back here too,
//! unlogged, and the binary log is emptied, so the server follows the new
//! primary from the promotion's position. Anything else past that position
//! (a commit, as a server that was only stopped keeps from its killed
//! clients) is a real divergence: the server stays out.

use std::path::Path;

use mysql_async::prelude::*;

use super::AnyResult;

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

/// Whether an XID as the binary log prints it is `X'hex',X'hex',n`.
fn well_formed_xid(xid: &str) -> bool {
    let mut parts = xid.split(',');
    let hex = |p: Option<&str>| {
        p.and_then(|p| p.strip_prefix("X'"))
            .and_then(|p| p.strip_suffix('\''))
            .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    hex(parts.next())
        && hex(parts.next())
        && parts
            .next()
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && parts.next().is_none()
}

/// Classifies `mariadb-binlog --base64-output=decode-rows` text of the
/// events past a position: each event group opens with a `GTID` header
/// line (`domain-server-sequence`). Groups another server wrote were
/// received from the new primary (the server followed it for a while);
/// of its own (`own`, its server id), a group that starts `XA START x`
/// and ends `XA PREPARE x` is a prepared branch, any other group, or one
/// after a received group, a divergence.
pub(super) fn classify(text: &str, own: u32) -> Tail {
    let mut groups: Vec<(String, Vec<&str>)> = vec![];
    for line in text.lines() {
        if line.starts_with('#') {
            if let Some(gtid) = line.split("\tGTID ").nth(1) {
                let gtid = gtid.split_whitespace().next().unwrap_or_default();
                groups.push((gtid.to_string(), vec![]));
            }
            continue;
        }
        if let Some((_, lines)) = groups.last_mut() {
            lines.push(line);
        }
    }
    let mut xids = vec![];
    let mut resolved = vec![];
    let mut received = false;
    for (gtid, lines) in &groups {
        let server: Option<u32> = gtid.split('-').nth(1).and_then(|s| s.parse().ok());
        if server != Some(own) {
            received = true;
            continue;
        }
        if received {
            return Tail::Diverged(gtid.clone());
        }
        let statement = |prefix: &str| -> Option<String> {
            lines.iter().find_map(|l| {
                let rest = l.strip_prefix(prefix)?;
                Some(rest.trim_end_matches("/*!*/;").trim().to_string())
            })
        };
        let first = lines
            .iter()
            .find(|l| !l.starts_with("SET ") && !l.starts_with("/*") && !l.trim().is_empty());
        let finished = first.and_then(|l| {
            l.strip_prefix("XA COMMIT ")
                .or_else(|| l.strip_prefix("XA ROLLBACK "))
        });
        if let Some(x) = finished.map(|x| x.trim_end_matches("/*!*/;").trim()) {
            if !well_formed_xid(x) {
                return Tail::Diverged(gtid.clone());
            }
            resolved.push(x.to_string());
            continue;
        }
        let started = first.and_then(|l| l.strip_prefix("XA START "));
        match (started, statement("XA PREPARE ")) {
            (Some(s), Some(p))
                if s.trim_end_matches("/*!*/;").trim() == p && well_formed_xid(&p) =>
            {
                xids.push(p)
            }
            _ => return Tail::Diverged(gtid.clone()),
        }
    }
    if xids.is_empty() && resolved.is_empty() {
        Tail::Empty
    } else {
        Tail::Prepared(xids, resolved)
    }
}

/// What the server in `data` wrote to its binary log past `promoted`.
pub(super) fn tail(data: &Path, binlog_pos: &str, promoted: &str, own: u32) -> AnyResult<Tail> {
    use meta::replication::domain0_seq;
    match (domain0_seq(binlog_pos), domain0_seq(promoted)) {
        (Some(mine), Some(theirs)) if mine > theirs => {}
        _ => return Ok(Tail::Empty),
    }
    let index = std::fs::read_to_string(data.join("binlog.index")).map_err(|e| e.to_string())?;
    let files: Vec<_> = index
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| data.join(l.trim().trim_start_matches("./")))
        .collect();
    let out = std::process::Command::new("mariadb-binlog")
        .args([
            "--skip-gtid-strict-mode",
            "--base64-output=decode-rows",
            &format!("--start-position={promoted}"),
        ])
        .args(&files)
        .output()
        .map_err(|e| format!("mariadb-binlog: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "mariadb-binlog: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(classify(&String::from_utf8_lossy(&out.stdout), own))
}

/// Rolls back (unlogged) the branches of a `Prepared` tail that are still
/// prepared and empties the binary log; the caller then follows the new
/// primary from `promoted`. False, and nothing done, when a branch the
/// tail commits or rolls back is no longer prepared here (the engine
/// finished it: a divergence).
pub(super) async fn roll_back(
    conn: &mut mysql_async::Conn,
    xids: &[String],
    resolved: &[String],
) -> AnyResult<bool> {
    let prepared: Vec<mysql_async::Row> = conn
        .query("XA RECOVER FORMAT = 'SQL'")
        .await
        .map_err(|e| e.to_string())?;
    let prepared: Vec<String> = prepared
        .iter()
        .filter_map(|r| r.get_opt::<String, _>("data").and_then(|v| v.ok()))
        .collect();
    if resolved.iter().any(|x| !prepared.contains(x)) {
        return Ok(false);
    }
    conn.query_drop("SET SESSION sql_log_bin = 0")
        .await
        .map_err(|e| e.to_string())?;
    for xid in xids.iter().filter(|x| prepared.contains(x)) {
        // Checked by `well_formed_xid`: quotes around hex digits only.
        conn.query_drop(format!("XA ROLLBACK {xid}"))
            .await
            .map_err(|e| format!("XA ROLLBACK {xid}: {e}"))?;
    }
    conn.query_drop("RESET MASTER")
        .await
        .map_err(|e| e.to_string())?;
    conn.query_drop("SET SESSION sql_log_bin = 1")
        .await
        .map_err(|e| e.to_string())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREPARED: &str = "#261204 15:40:23 server id 40211  end_log_pos 470293 CRC32 0xf5f773c1 \tGTID 0-40211-1236 trans\n\
/*!100001 SET @@session.server_id=40211*//*!*/;\n\
XA START X'7473',X'31',1/*!*/;\n\
# at 470335\n\
#Q> UPDATE \"t\" SET b = 1\n\
SET TIMESTAMP=1796398823/*!*/;\n\
XA END X'7473',X'31',1\n\
/*!*/;\n\
#261204 15:40:23 server id 40211  end_log_pos 470711 CRC32 0x4fb3badd \tXID = X'7473',X'31',1\n\
XA PREPARE X'7473',X'31',1\n\
/*!*/;\n";

    #[test]
    fn a_tail_of_prepared_branches_is_rolled_back_anything_else_diverges() {
        assert_eq!(classify("", 40211), Tail::Empty);
        assert_eq!(
            classify(PREPARED, 40211),
            Tail::Prepared(vec!["X'7473',X'31',1".into()], vec![])
        );
        let commit = |server: u32, seq: u32| {
            format!(
                "#261204 15:40:24 server id {server}  end_log_pos 1 CRC32 0x0 \tGTID 0-{server}-{seq} trans\nSTART TRANSACTION\n/*!*/;\nCOMMIT/*!*/;\n"
            )
        };
        let own_commit = format!("{PREPARED}{}", commit(40211, 1237));
        assert_eq!(
            classify(&own_commit, 40211),
            Tail::Diverged("0-40211-1237".into())
        );
        let finished = "#261204 15:40:25 server id 40211  end_log_pos 1 CRC32 0x0 \tGTID 0-40211-1238 trans\n/*!*/;\nXA COMMIT X'7475',X'32',1\n/*!*/;\n";
        assert_eq!(
            classify(finished, 40211),
            Tail::Prepared(vec![], vec!["X'7475',X'32',1".into()])
        );
        // Received from the new primary (40311): not its own.
        assert_eq!(classify(&commit(40311, 1237), 40211), Tail::Empty);
        let own_after = format!("{}{PREPARED}", commit(40311, 1235));
        assert!(matches!(classify(&own_after, 40211), Tail::Diverged(_)));
        let spoofed = PREPARED.replace(
            "X'7473',X'31',1\n/*!*/;\n",
            "X'74'' OR 1',X'31',1\n/*!*/;\n",
        );
        assert!(matches!(classify(&spoofed, 40211), Tail::Diverged(_)));
    }

    #[test]
    fn xids_are_hex_pairs_and_a_format() {
        assert!(well_formed_xid("X'7473722d',X'31',1"));
        assert!(!well_formed_xid("X'74',X'31',1; DROP"));
    }
}
