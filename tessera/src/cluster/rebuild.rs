//! Rebuilding a server from its primary (issue 34): an old primary that
//! cannot be rewound to its successor's history (it committed past the
//! promotion, as a stopped primary keeps from its killed clients, or
//! MariaDB's crash recovery refused to start it) becomes a fresh copy of
//! the primary's data, taken with `mariadb-backup` while the primary
//! serves, and follows the primary from the copy's GTID position.
//!
//! What is discarded was never acknowledged to a client: the promotion
//! picked the replica with the most of the old primary's acknowledged
//! history. The old data is kept beside the new (`data.before-rebuild`)
//! for the operator, the one before it removed. The copy is a local one:
//! this CLI runs every server of a cluster on one machine.

use std::path::Path;
use std::process::Command;

use super::mariadb::start_mariadb;
use super::process::{find_binary, stop_node};
use super::{AnyResult, ClusterFile, Node};

/// Makes `n` a copy of `primary`'s data and starts it (read-only, not yet
/// following); answers the GTID position the copy holds, from which it
/// must follow the primary.
pub(super) fn copy_from(cf: &ClusterFile, n: &Node, primary: &Node) -> AnyResult<String> {
    let backup = find_binary("mariadb-backup").ok_or(
        "mariadb-backup is not installed. Install it with: apt-get install -y mariadb-backup",
    )?;
    stop_node(n);
    let copy = n.dir.join("rebuild");
    let _ = std::fs::remove_dir_all(&copy);
    println!("{}: copying {}'s data", n.name, primary.name);
    run(
        Command::new(&backup)
            .arg("--no-defaults")
            .arg("--backup")
            .arg(format!("--target-dir={}", copy.display()))
            .arg(format!("--datadir={}", primary.dir.join("data").display()))
            .arg(format!(
                "--socket={}",
                primary.dir.join("mysqld.sock").display()
            ))
            .arg("--user=root"),
        "mariadb-backup --backup",
    )?;
    run(
        Command::new(&backup)
            .arg("--no-defaults")
            .arg("--prepare")
            .arg(format!("--target-dir={}", copy.display())),
        "mariadb-backup --prepare",
    )?;
    let gtid = copied_gtid(&copy)?;
    let data = n.dir.join("data");
    let before = n.dir.join("data.before-rebuild");
    let _ = std::fs::remove_dir_all(&before);
    std::fs::rename(&data, &before).map_err(|e| format!("{}: {e}", data.display()))?;
    run(
        Command::new(&backup)
            .arg("--no-defaults")
            .arg("--move-back")
            .arg(format!("--target-dir={}", copy.display()))
            .arg(format!("--datadir={}", data.display())),
        "mariadb-backup --move-back",
    )?;
    let _ = std::fs::remove_dir_all(&copy);
    println!(
        "{}: its data is a copy of {}'s at {gtid} (its old data is in {})",
        n.name,
        primary.name,
        before.display()
    );
    start_mariadb(cf, n)?;
    Ok(gtid)
}

fn run(cmd: &mut Command, what: &str) -> AnyResult<()> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    // mariadb-backup writes its progress to stderr: the end says why.
    let tail: Vec<&str> = err.lines().rev().take(5).collect();
    Err(format!(
        "{what} failed: {}",
        tail.into_iter().rev().collect::<Vec<_>>().join("; ")
    ))
}

/// The GTID position of a prepared copy (`xtrabackup_binlog_info`: file,
/// offset, position), checked to be one: it goes into a statement.
fn copied_gtid(copy: &Path) -> AnyResult<String> {
    let info = ["xtrabackup_binlog_info", "mariadb_backup_binlog_info"]
        .iter()
        .find_map(|f| std::fs::read_to_string(copy.join(f)).ok())
        .ok_or("the copy has no binary log position: is the primary's binary log on?")?;
    gtid_of(&info)
        .ok_or_else(|| format!("the copy's binary log position is not a GTID position: {info}"))
}

fn gtid_of(info: &str) -> Option<String> {
    let gtid = info.split_whitespace().nth(2)?;
    let valid = !gtid.is_empty()
        && gtid
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b',');
    valid.then(|| gtid.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_position_is_its_gtid() {
        assert_eq!(
            gtid_of("binlog.000001\t983223\t0-42322-2733\n").as_deref(),
            Some("0-42322-2733")
        );
        assert_eq!(
            gtid_of("binlog.000001\t4\t0-1-2,1-3-4").as_deref(),
            Some("0-1-2,1-3-4")
        );
        assert_eq!(gtid_of("binlog.000001\t4"), None);
        assert_eq!(gtid_of("binlog.000001\t4\t0-1-2'; DROP"), None);
    }
}
