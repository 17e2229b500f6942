//! Processes of a local cluster: daemons, pid files, ports, private files.

use super::*;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

type AnyResult<T> = std::result::Result<T, String>;

pub(super) fn random_token(n: usize) -> String {
    use rand::Rng;
    const CHARS: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rng();
    (0..n)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect()
}

/// Each of `sharers` processes' share of this host's cores, at least one:
/// a cluster's compute nodes size their runtimes by it, its MariaDB
/// servers their thread pools (RFC 2026-12-03-oltp-round-trips, levers 6
/// and 8).
pub(super) fn cores_each(sharers: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / sharers.max(1)).max(1)
}

/// Whether a process exists and is not a zombie waiting to be reaped.
pub fn pid_alive(pid: i32) -> bool {
    if pid <= 0 || unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

pub(super) fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

pub(super) fn port_answers(port: u16) -> bool {
    TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(300),
    )
    .is_ok()
}

/// A MariaDB server's id: its port, or the id its last rejoin gave it
/// (`server-id` in its folder). A server skips the events its own id
/// wrote, so an old primary rejoining under its old id would never apply
/// the acknowledged transactions its crash recovery removed from its
/// binary log when they come back from the new primary (issue 34).
pub(super) fn server_id(node: &Node) -> u32 {
    std::fs::read_to_string(node.dir.join("server-id"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(u32::from(node.port))
}

/// The next id of a rejoining server (`server_id`'s, 65,536 further: ports
/// stay apart), recorded for its later starts.
pub(super) fn next_server_id(node: &Node, current: u32) -> AnyResult<u32> {
    let next = current
        .checked_add(65_536)
        .filter(|n| *n < 1_000_000_000)
        .unwrap_or(u32::from(node.port) + 65_536);
    write_private(&node.dir.join("server-id"), &next.to_string())?;
    Ok(next)
}

/// What a MariaDB server logged since its last start (its `node.log` from
/// the last "Starting MariaDB"); None without a log or a start in it.
pub(super) fn last_start_log(node: &Node) -> Option<String> {
    let log = std::fs::read_to_string(node.dir.join("node.log")).ok()?;
    let i = log.rfind("Starting MariaDB")?;
    Some(log[i..].to_string())
}

const ROOT_LOGIN_TIMEOUT: Duration = Duration::from_secs(10);

/// MariaDB's root on a server's socket. Tried three times: a server that
/// just started was seen to reset the first connection.
pub(super) async fn root_conn(node: &Node) -> AnyResult<mysql_async::Conn> {
    let sock = node.dir.join("mysqld.sock");
    let opts = mysql_async::OptsBuilder::default()
        .socket(Some(sock.to_string_lossy().to_string()))
        .user(Some("root"));
    let mut tries = 0;
    loop {
        // Bounded: a server whose thread pool is stalled (commits waiting
        // for an acknowledgement) answers no login.
        let e = match tokio::time::timeout(ROOT_LOGIN_TIMEOUT, mysql_async::Conn::new(opts.clone()))
            .await
        {
            Ok(Ok(c)) => return Ok(c),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {ROOT_LOGIN_TIMEOUT:?}"),
        };
        if tries == 2 {
            return Err(format!("{}: {e}", node.name));
        }
        tries += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

pub(super) fn node_pid(n: &Node) -> Option<i32> {
    read_pid(&n.dir.join("node.pid")).filter(|p| pid_alive(*p))
}

pub(super) fn find_binary(name: &str) -> Option<PathBuf> {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return Some(p);
        }
    }
    None
}

/// The cluster file of a cluster that must exist.
pub(super) fn existing(dir: &Path) -> AnyResult<ClusterFile> {
    load(dir)?.ok_or_else(|| format!("no cluster in {}", dir.display()))
}

pub(super) fn load(dir: &Path) -> AnyResult<Option<ClusterFile>> {
    let f = dir.join("cluster.toml");
    if !f.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: {e}", f.display()))
}
pub(super) fn spawn_daemon(cmd: &mut Command, log: &Path, pid_file: &Path) -> AnyResult<u32> {
    use std::os::unix::process::CommandExt;
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("could not start {:?}: {e}", cmd.get_program()))?;
    let pid = child.id();
    std::fs::write(pid_file, pid.to_string()).map_err(|e| e.to_string())?;
    Ok(pid)
}

pub(super) fn wait_port(port: u16, pid: u32, what: &str, log: &Path) -> AnyResult<()> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(90) {
        if port_answers(port) {
            return Ok(());
        }
        if !pid_alive(pid as i32) {
            return Err(format!(
                "{what} exited during startup; see {}",
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "{what} did not answer on port {port} within 90 s; see {}",
        log.display()
    ))
}

pub(super) fn reap(pid: i32) {
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
}

/// Stops one node's process (SIGTERM, then SIGKILL after 60 s).
pub(super) fn stop_node(n: &Node) {
    if let Some(pid) = node_pid(n) {
        println!("stopping {} (pid {pid})", n.name);
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let start = Instant::now();
        while pid_alive(pid) && start.elapsed() < Duration::from_secs(60) {
            reap(pid);
            std::thread::sleep(Duration::from_millis(100));
        }
        if pid_alive(pid) {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let _ = std::fs::remove_file(n.dir.join("node.pid"));
}
