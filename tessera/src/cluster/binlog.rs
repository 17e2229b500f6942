//! A shard server's binary log as event groups (issue 34): what an old
//! primary wrote and applied, read with `mariadb-binlog` from its data
//! directory while it runs, for the rewind and the XA reconciliation of
//! `super::rewind`.
//!
//! Every file the server keeps is read (binary logs expire after a day):
//! MariaDB's binlog checkpoints would say which files the engines have made
//! durable, but the restart after a crash writes a new file whose
//! checkpoint names itself, and a server may be restarted more than once
//! before it rejoins. The text is read as it streams from the tool, and a
//! group keeps its statements only when it prepares a branch (the one kind
//! a reconciliation replays), so memory stays small.

use std::path::Path;

use super::AnyResult;

/// One event group (a transaction, an `XA PREPARE`d branch, the end of a
/// branch, a DDL statement) as `mariadb-binlog` prints it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Group {
    /// `domain-server-sequence`.
    pub gtid: String,
    /// Its statements as the server runs them (row events as `BINLOG`
    /// statements), without the client's delimiter.
    pub statements: Vec<String>,
    /// Index in `Log::formats` of its file's format description.
    pub format: usize,
}

/// What a group does to an XA branch (XIDs as `XA` statements name them).
#[derive(Debug, PartialEq)]
pub(super) enum Kind {
    /// `XA START x` ... `XA PREPARE x`.
    Prepare(String),
    /// `XA COMMIT x` of a prepared branch.
    Commit(String),
    /// `XA ROLLBACK x` of a prepared branch.
    Rollback(String),
    /// Anything else: an ordinary transaction or DDL.
    Other,
}

/// The groups of the files a rewind reads, in order.
#[derive(Debug, Default)]
pub(super) struct Log {
    /// Each file's format description event (a `BINLOG` statement): the
    /// row events of its groups can be applied only after it.
    pub formats: Vec<String>,
    pub groups: Vec<Group>,
}

impl Group {
    /// Domain 0's sequence number (every Tessera server writes domain 0).
    pub fn seq(&self) -> Option<u64> {
        meta::replication::domain0_seq(&self.gtid)
    }

    /// The id of the server that wrote it first.
    pub fn server(&self) -> Option<u32> {
        self.gtid.split('-').nth(1).and_then(|s| s.parse().ok())
    }

    /// Drops the statements of a group a reconciliation never replays.
    fn settle(&mut self) {
        if !matches!(self.kind(), Kind::Prepare(_)) {
            self.statements.retain(|s| s.starts_with("XA "));
        }
    }

    pub fn kind(&self) -> Kind {
        let first = self
            .statements
            .iter()
            .find(|s| !s.starts_with("SET ") && !s.starts_with("/*"));
        let Some(first) = first else {
            return Kind::Other;
        };
        let xid = |rest: &str| Some(rest.trim().to_string()).filter(|x| well_formed_xid(x));
        if let Some(x) = first.strip_prefix("XA COMMIT ").and_then(xid) {
            return Kind::Commit(x);
        }
        if let Some(x) = first.strip_prefix("XA ROLLBACK ").and_then(xid) {
            return Kind::Rollback(x);
        }
        let started = first.strip_prefix("XA START ").and_then(xid);
        let prepared = self
            .statements
            .iter()
            .find_map(|s| s.strip_prefix("XA PREPARE ").and_then(xid));
        match (started, prepared) {
            (Some(s), Some(p)) if s == p => Kind::Prepare(p),
            _ => Kind::Other,
        }
    }
}

/// Whether an XID as the binary log prints it is `X'hex',X'hex',n`: the
/// only form put back into a statement.
pub(super) fn well_formed_xid(xid: &str) -> bool {
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

/// What one file's `mariadb-binlog` text holds: its format description
/// and its groups.
#[derive(Debug, Default, PartialEq)]
pub(super) struct File {
    pub format: Option<String>,
    pub groups: Vec<Group>,
}

/// Parses `mariadb-binlog` output (not decoded: row events stay `BINLOG`
/// statements). Statements end with the `/*!*/;` delimiter the tool sets;
/// `#` lines are the tool's comments, which carry the GTID of each group.
pub(super) fn parse(text: impl std::io::BufRead, format: usize) -> std::io::Result<File> {
    let mut file = File::default();
    let mut pending = String::new();
    let mut delimited = false;
    let mut text = text;
    let mut buf = vec![];
    // Bytes, not UTF-8 lines: statements and comments quote binary values.
    // What a reconciliation replays (`XA`, `SET`, base64 `BINLOG`) is ASCII.
    while {
        buf.clear();
        text.read_until(b'\n', &mut buf)? > 0
    } {
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if let Some(rest) = line.strip_prefix('#') {
            if let Some(gtid) = rest.split("\tGTID ").nth(1) {
                let gtid = gtid.split_whitespace().next().unwrap_or_default();
                if let Some(g) = file.groups.last_mut() {
                    g.settle();
                }
                file.groups.push(Group {
                    gtid: gtid.to_string(),
                    statements: vec![],
                    format,
                });
            }
            continue;
        }
        if line.starts_with("DELIMITER ") {
            delimited = line.trim() == "DELIMITER /*!*/;";
            continue;
        }
        if !delimited {
            continue;
        }
        if !pending.is_empty() {
            pending.push('\n');
        }
        pending.push_str(line);
        let Some(statement) = pending.strip_suffix("/*!*/;") else {
            continue;
        };
        let statement = statement.trim().to_string();
        pending.clear();
        match file.groups.last_mut() {
            Some(g) => g.statements.push(statement),
            None if statement.starts_with("BINLOG '") && file.format.is_none() => {
                file.format = Some(statement)
            }
            None => {}
        }
    }
    if let Some(g) = file.groups.last_mut() {
        g.settle();
    }
    Ok(file)
}

/// The groups of the binary log of the server whose data directory is
/// `data`, every file it keeps in order.
pub(super) fn read(data: &Path) -> AnyResult<Log> {
    let index = std::fs::read_to_string(data.join("binlog.index")).map_err(|e| e.to_string())?;
    let mut log = Log::default();
    for name in index
        .lines()
        .map(|l| l.trim().trim_start_matches("./"))
        .filter(|l| !l.is_empty())
    {
        let file = decode(&data.join(name), log.formats.len())?;
        log.formats.push(file.format.unwrap_or_default());
        log.groups.extend(file.groups);
    }
    Ok(log)
}

fn decode(path: &Path, format: usize) -> AnyResult<File> {
    use std::process::{Command, Stdio};
    let fail = |e: &dyn std::fmt::Display| format!("mariadb-binlog {}: {e}", path.display());
    let mut child = Command::new("mariadb-binlog")
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(&e))?;
    let stdout = child.stdout.take().ok_or_else(|| fail(&"no output"))?;
    let parsed = parse(std::io::BufReader::new(stdout), format);
    if parsed.is_err() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().map_err(|e| fail(&e))?;
    let file = parsed.map_err(|e| fail(&e))?;
    if !out.status.success() {
        return Err(fail(&String::from_utf8_lossy(&out.stderr)));
    }
    Ok(file)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A file's text as `mariadb-binlog` prints it (cut): the format
    /// description, a checkpoint, a prepared branch, the commit of another.
    pub const FILE: &str = "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;\n\
DELIMITER /*!*/;\n\
# at 4\n\
ROLLBACK/*!*/;\n\
BINLOG '\n\
SOcSaw/sqwAA/AAAAAAB\n\
'/*!*/;\n\
#261204 16:16:08 server id 44012  end_log_pos 325 CRC32 0xb81720e6 \tBinlog checkpoint binlog.000001\n\
#261204 15:40:23 server id 40211  end_log_pos 470293 CRC32 0xf5f773c1 \tGTID 0-40211-1236 trans\n\
/*M!100001 SET @@session.gtid_seq_no=1236*//*!*/;\n\
XA START X'7473',X'31',1/*!*/;\n\
# at 470335\n\
#Q> UPDATE \"t\" SET b = 1\n\
SET TIMESTAMP=1796398823/*!*/;\n\
/*!\\C utf8mb4 *//*!*/;\n\
BINLOG '\n\
AAAA\n\
BBBB\n\
'/*!*/;\n\
XA END X'7473',X'31',1\n\
/*!*/;\n\
#261204 15:40:23 server id 40211  end_log_pos 470711 CRC32 0x4fb3badd \tXID = X'7473',X'31',1\n\
XA PREPARE X'7473',X'31',1\n\
/*!*/;\n\
#261204 16:16:17 server id 40311  end_log_pos 168769 CRC32 0xf62f1457 \tGTID 0-40311-1237 trans\n\
/*M!100001 SET @@session.gtid_seq_no=1237*//*!*/;\n\
SET TIMESTAMP=1796400977/*!*/;\n\
XA COMMIT X'7475',X'32',1\n\
/*!*/;\n\
DELIMITER ;\n\
# End of log file\n\
ROLLBACK /* added by mysqlbinlog */;\n";

    #[test]
    fn a_file_is_groups_of_statements_after_its_format_description() {
        let f = parse(FILE.as_bytes(), 3).expect("parse");
        assert_eq!(
            f.format.as_deref(),
            Some("BINLOG '\nSOcSaw/sqwAA/AAAAAAB\n'")
        );
        assert_eq!(f.groups.len(), 2);
        let g = &f.groups[0];
        assert_eq!(
            (g.gtid.as_str(), g.format, g.seq(), g.server()),
            ("0-40211-1236", 3, Some(1236), Some(40211))
        );
        assert_eq!(g.statements[1], "XA START X'7473',X'31',1");
        assert_eq!(g.statements[4], "BINLOG '\nAAAA\nBBBB\n'");
        assert_eq!(g.statements[5], "XA END X'7473',X'31',1");
        assert_eq!(g.kind(), Kind::Prepare("X'7473',X'31',1".into()));
        assert_eq!(f.groups[1].kind(), Kind::Commit("X'7475',X'32',1".into()));
    }

    #[test]
    fn only_well_formed_xids_name_a_branch() {
        assert!(well_formed_xid("X'7473722d',X'31',1"));
        assert!(well_formed_xid("X'666f',X'',1"));
        assert!(!well_formed_xid("X'74',X'31',1; DROP"));
        assert!(!well_formed_xid("X'74'' OR 1',X'31',1"));
        let g = |s: &str| Group {
            gtid: "0-1-2".into(),
            statements: vec![s.into()],
            format: 0,
        };
        assert_eq!(g("XA COMMIT X'74',X'31',1 ONE PHASE").kind(), Kind::Other);
        assert_eq!(g("START TRANSACTION").kind(), Kind::Other);
        assert_eq!(
            g("XA ROLLBACK X'74',X'31',1").kind(),
            Kind::Rollback("X'74',X'31',1".into())
        );
    }
}
