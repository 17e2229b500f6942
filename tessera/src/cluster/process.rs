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
