//! Compute nodes and haproxy of a local cluster.

use super::*;
use std::path::Path;
use std::process::Command;

use common::config::ComputeConfig;

type AnyResult<T> = std::result::Result<T, String>;

pub(super) fn start_compute(
    cf: &ClusterFile,
    node: &Node,
    index: u32,
    exe: &Path,
) -> AnyResult<()> {
    std::fs::create_dir_all(&node.dir).map_err(|e| e.to_string())?;
    let config = ComputeConfig {
        node_id: index,
        listen: format!("127.0.0.1:{}", node.port),
        unix_socket_directory: local_socket(node)
            .and_then(|p| Some(p.parent()?.display().to_string()))
            .unwrap_or_default(),
        meta: cf.endpoint(Role::Meta, cf.meta_port()),
        meta_replicas: cf
            .meta_servers()
            .iter()
            .skip(1)
            .map(|s| format!("{}:{}", s.host, s.port))
            .collect(),
        shard_password: cf.password_of(Role::Shard).to_string(),
        shard_admin_password: if cf.replicas > 0 {
            cf.admin_password.clone()
        } else {
            String::new()
        },
        meta_database: "tessera_meta".into(),
        shard_pool_max: 200,
        default_distribution: cf.default_distribution,
        default_partitions: cf.default_partitions,
        sequence_cache: 1000,
        query_memory_mb: 1024,
        // A node's second thread on a host with fewer cores than threads
        // only adds switches (lever 6).
        worker_threads: cores_each(cf.compute as usize),
        recovery_interval_ms: 1000,
        xa_orphan_timeout_secs: 10,
        max_connections: 1000,
        statement_timeout_ms: 0,
        idle_in_transaction_session_timeout_ms: 0,
    };
    let cfg_path = node.dir.join("compute.toml");
    write_private(&cfg_path, &config.to_toml())?;
    let log = node.dir.join("node.log");
    let mut cmd = Command::new(exe);
    cmd.arg("compute").arg("--config").arg(&cfg_path);
    let pid = spawn_daemon(&mut cmd, &log, &node.dir.join("node.pid"))?;
    wait_port(node.port, pid, &node.name, &log)
}

/// The Unix socket a compute node listens on beside its TCP port: in its
/// own directory, unless that path is too long for a socket address
/// (`sun_path` holds 108 bytes; then the node has TCP only).
fn local_socket(node: &Node) -> Option<std::path::PathBuf> {
    let dir = std::path::absolute(&node.dir).ok()?;
    let path = compute::wire::socket_path(&dir, node.port);
    (path.as_os_str().len() < 100).then_some(path)
}

pub(super) fn start_haproxy(node: &Node, nodes: &[Node]) -> AnyResult<()> {
    let bin = find_binary("haproxy")
        .ok_or("haproxy is not installed. Install it with: apt-get install -y haproxy")?;
    std::fs::create_dir_all(&node.dir).map_err(|e| e.to_string())?;
    let mut cfg = String::from(
        "# Written by tessera cluster up: round robin over the compute nodes.\n\
         global\n    maxconn 4000\n\n\
         defaults\n    mode tcp\n    timeout connect 5s\n    timeout client 1h\n    timeout server 1h\n\n",
    );
    cfg.push_str(&format!(
        "listen tessera\n    bind 127.0.0.1:{}\n    balance roundrobin\n    option tcp-check\n",
        node.port
    ));
    for n in nodes.iter().filter(|n| n.role == Role::Compute) {
        // A node's Unix socket where it listens on one (a node still
        // running from an older start may not): the loopback TCP path
        // costs both sides of every statement more (lever 7 of RFC
        // 2026-12-03-oltp-round-trips).
        let address = local_socket(n)
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| format!("127.0.0.1:{}", n.port));
        cfg.push_str(&format!(
            "    server {} {address} check inter 2s fall 2 rise 1\n",
            n.name
        ));
    }
    let cfg_path = node.dir.join("haproxy.cfg");
    std::fs::write(&cfg_path, cfg).map_err(|e| e.to_string())?;
    let log = node.dir.join("node.log");
    let mut cmd = Command::new(bin);
    cmd.arg("-db").arg("-f").arg(&cfg_path);
    let pid = spawn_daemon(&mut cmd, &log, &node.dir.join("node.pid"))?;
    wait_port(node.port, pid, &node.name, &log)
}
