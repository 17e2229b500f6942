//! The MariaDB servers of a local cluster (meta and shards): their
//! configuration, bootstrap, least-privilege accounts and status.

use super::*;
use std::path::Path;
use std::process::Command;

use common::config::MysqlEndpoint;

type AnyResult<T> = std::result::Result<T, String>;

pub(super) fn start_mariadb(cf: &ClusterFile, node: &Node) -> AnyResult<()> {
    start_mariadb_with(cf, node, &[])
}

/// `start_mariadb` with more server options (`--read-only=ON` for a
/// crashed shard until its XA branches are reconciled).
pub(super) fn start_mariadb_with(cf: &ClusterFile, node: &Node, extra: &[&str]) -> AnyResult<()> {
    let mariadbd = find_binary("mariadbd")
        .ok_or("mariadbd is not installed. Install it with: apt-get install -y mariadb-server")?;
    let data = node.dir.join("data");
    let fresh = !data.join("mysql").exists();
    std::fs::create_dir_all(&node.dir).map_err(|e| e.to_string())?;
    let id_file = node.dir.join("cluster-id");
    match std::fs::read_to_string(&id_file) {
        Ok(id) if id.trim() != cf.cluster_id => {
            return Err(format!(
                "{} belongs to another cluster ({}); use another --data-dir or remove it",
                node.dir.display(),
                id.trim()
            ))
        }
        Ok(_) => {}
        Err(_) => std::fs::write(&id_file, &cf.cluster_id).map_err(|e| e.to_string())?,
    }
    if fresh {
        let install = find_binary("mariadb-install-db")
            .ok_or("mariadb-install-db is not installed (apt-get install -y mariadb-server)")?;
        let out = Command::new(install)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg("--user=root")
            // root logs in only through the unix socket as the OS user
            // root: no password exists that could be guessed or leaked.
            .arg("--auth-root-authentication-method=socket")
            .arg("--skip-test-db")
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "mariadb-install-db failed for {}: {}",
                node.name,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let sock = node.dir.join("mysqld.sock");
    let log = node.dir.join("node.log");
    // A replica is configured as the server it replicates.
    let kind = node.kind();
    // secure_file_priv must name an existing directory: an empty one that
    // only the server's user may enter.
    let no_files = node.dir.join("no-file-access");
    std::fs::create_dir_all(&no_files).map_err(|e| e.to_string())?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&no_files, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| e.to_string())?;
    }
    let mut cmd = Command::new(mariadbd);
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--port={}", node.port))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--socket={}", sock.display()))
        .arg(format!(
            "--pid-file={}",
            node.dir.join("mariadbd.pid").display()
        ))
        .arg("--user=root")
        .arg("--skip-name-resolve")
        // Durable by default; meta holds the commit decisions, so it
        // flushes at every commit whatever the setting.
        .arg(
            if kind == Role::Meta || cf.durability == Durability::Durable {
                "--innodb-flush-log-at-trx-commit=1"
            } else {
                "--innodb-flush-log-at-trx-commit=2"
            },
        )
        .arg(
            if kind == Role::Meta || cf.durability == Durability::Durable {
                "--sync-binlog=1"
            } else {
                "--sync-binlog=0"
            },
        )
        // No server-side file access for anyone (LOAD_FILE, INTO OUTFILE,
        // LOAD DATA INFILE): a directory that does not exist.
        .arg(format!("--secure-file-priv={}", no_files.display()))
        .arg("--local-infile=0")
        // 1 GiB per shard holds a TPC-H SF1 partition's working set; the
        // pool grows on demand (allocated, not reserved, on Linux).
        .arg(if kind == Role::Meta {
            "--innodb-buffer-pool-size=256M"
        } else {
            "--innodb-buffer-pool-size=1G"
        })
        .arg("--innodb-log-file-size=128M")
        .arg("--max-connections=4000")
        .arg("--max-prepared-stmt-count=1000000")
        .arg("--innodb-lock-wait-timeout=20")
        .arg("--character-set-server=utf8mb4")
        .arg("--collation-server=utf8mb4_nopad_bin")
        .arg("--performance-schema=OFF")
        // A few threads serve all connections from epoll instead of one
        // thread per connection: a shard's client is a handful of compute
        // nodes multiplexing every session over pooled connections, and on
        // a machine with fewer cores than connections the per-connection
        // threads spend the statement's time being scheduled (RFC
        // 2026-12-03-oltp-round-trips, "MariaDB's thread pool"). Lock and
        // XA waits hand the worker's place to another thread.
        .arg("--thread-handling=pool-of-threads");
    if cf.replicas == 0 {
        // The pool's thread groups (by default one per core) share the
        // host's cores with the cluster's other servers: on 2 cores, 4
        // servers with one group each served 10 % more point selects on
        // 13 us of shard CPU each instead of 15-16 (RFC
        // 2026-12-03-oltp-round-trips, lever 8). Replicated servers keep
        // the default: a commit waiting for a replica's acknowledgement
        // holds its group's worker.
        let servers = 1 + (1..=cf.shards).filter(|i| cf.local_shard(*i)).count();
        cmd.arg(format!("--thread-pool-size={}", cores_each(servers)));
    }
    // Administrative logins (failure probes, fences, promotions) on a port
    // of their own, one thread per connection: a pool whose workers all
    // wait for semi-synchronous acknowledgements answers no login on the
    // service port (`meta::replication::ADMIN_PORT_OFFSET`).
    if let Some(admin) = meta::replication::admin_port(node.port) {
        cmd.arg(format!("--extra-port={admin}"))
            .arg("--extra-max-connections=64");
    }
    let replicated = cf.replicas > 0;
    if (kind == Role::Shard && cf.shard_binlog) || replicated {
        // A shard's row-based binary log is how a partition move catches
        // up with the writes made while its rows were copied
        // (`shard_router::placement::mover`); the server id only has to be
        // unique among the cluster's servers.
        cmd.arg("--log-bin=binlog")
            .arg("--binlog-format=ROW")
            .arg("--binlog-row-image=FULL")
            .arg(format!("--server-id={}", server_id(node)))
            .arg("--binlog-expire-logs-seconds=86400");
    }
    if replicated {
        cmd.args(replication_options());
    }
    cmd.args(extra);
    let pid = spawn_daemon(&mut cmd, &log, &node.dir.join("node.pid"))?;
    wait_port(node.port, pid, &node.name, &log)?;
    // Every start, not only the first: the grants are idempotent, and a
    // cluster made by an older version gets the ones added since (the
    // binary log privileges partition moves need).
    create_mysql_user(cf, kind, &sock)?;
    Ok(())
}

/// The privileges of the cluster's account on a node: on meta, everything
/// on the meta database only; on a shard, data and schema changes on
/// Tessera's databases (`tsr_*`, see `meta::physical_database`) and XA
/// recovery, but no FILE, no GRANT OPTION, no access to `mysql` or `sys`.
pub(super) fn grants(role: Role, user: &str) -> Vec<String> {
    match role {
        // Meta's replicas follow it with the cluster account.
        Role::Meta => vec![
            format!("GRANT ALL PRIVILEGES ON `tessera_meta`.* TO '{user}'@'%'"),
            format!("GRANT REPLICATION SLAVE ON *.* TO '{user}'@'%'"),
        ],
        _ => vec![
            format!(
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES, \
                 CREATE TEMPORARY TABLES, LOCK TABLES ON `{}%`.* TO '{user}'@'%'",
                meta::PHYSICAL_DB_PREFIX.replace('_', "\\_")
            ),
            // XA RECOVER lists other connections' prepared branches only
            // with PROCESS (MariaDB 10.5+), and `cluster status` counts the
            // node's connections with it. A partition move reads the
            // shard's binary log (REPLICATION SLAVE) from the position its
            // copy started at (BINLOG MONITOR).
            format!("GRANT PROCESS, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '{user}'@'%'"),
        ],
    }
}

/// The cluster's account on a server of `role` (idempotent statements):
/// made, granted its privileges, and the administrative account with
/// replicas.
pub(super) fn account_statements(cf: &ClusterFile, role: Role) -> Vec<String> {
    let pw = cf.password_of(role).replace('\'', "''");
    let mut stmts = vec![
        // Accounts are each server's own: never in the binary log, so a
        // replica's history is exactly its primary's.
        "SET SESSION sql_log_bin = 0".to_string(),
        "FLUSH PRIVILEGES".to_string(),
        format!(
            "CREATE USER IF NOT EXISTS '{}'@'%' IDENTIFIED BY '{pw}'",
            cf.mysql_user
        ),
    ];
    if role == Role::Meta {
        stmts.push("CREATE DATABASE IF NOT EXISTS `tessera_meta`".to_string());
    }
    stmts.extend(grants(role, &cf.mysql_user));
    if cf.replicas > 0 && !cf.admin_password.is_empty() {
        stmts.extend(admin_account(cf));
    }
    stmts.push("FLUSH PRIVILEGES".to_string());
    stmts
}

pub(super) fn create_mysql_user(cf: &ClusterFile, role: Role, sock: &Path) -> AnyResult<()> {
    use mysql_async::prelude::*;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let opts = mysql_async::OptsBuilder::default()
            .socket(Some(sock.to_string_lossy().to_string()))
            .user(Some("root"));
        // MariaDB listens on TCP (what `wait_port` saw) a moment before its
        // unix socket exists, and a server restarted after a kill first
        // recovers (its old socket file refuses meanwhile): retry for a
        // while before giving up (30 s once ran out on a loaded machine).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let mut conn = loop {
            match mysql_async::Conn::new(opts.clone()).await {
                Ok(c) => break c,
                Err(e) if std::time::Instant::now() < deadline => {
                    tracing::debug!("MariaDB socket not ready yet: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                }
                Err(e) => return Err(format!("connecting to MariaDB as root: {e}")),
            }
        };
        let mut stmts = vec![
            // Anonymous accounts, if the installer made any.
            "DELETE FROM mysql.global_priv WHERE User = ''".to_string(),
        ];
        stmts.extend(account_statements(cf, role));
        for sql in stmts {
            conn.query_drop(sql).await.map_err(|e| e.to_string())?;
        }
        let _ = conn.disconnect().await;
        Ok(())
    })
}

/// (Threads_connected, Threads_running) of a MariaDB server.
pub(super) fn mysql_connections(ep: &MysqlEndpoint) -> Option<(u64, u64)> {
    use mysql_async::prelude::*;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    rt.block_on(async {
        let opts = mysql_async::Opts::from_url(&ep.url(None)).ok()?;
        let mut conn = mysql_async::Conn::new(mysql_async::OptsBuilder::from_opts(opts).prefer_socket(false))
            .await
            .ok()?;
        let rows: Vec<(String, String)> = conn
            .query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_connected', 'Threads_running')")
            .await
            .ok()?;
        let _ = conn.disconnect().await;
        let get = |k: &str| rows.iter().find(|(n, _)| n == k).and_then(|(_, v)| v.parse::<u64>().ok());
        // Minus this status connection itself.
        Some((get("Threads_connected")?.saturating_sub(1), get("Threads_running")?.saturating_sub(1)))
    })
}

/// The account the compute nodes' failover watcher uses on shard servers:
/// replication control, read-only switches and KILL, no data privileges.
const ADMIN_USER: &str = "tessera_admin";

/// How long a commit waits for a replica's acknowledgement before the
/// primary would fall back to asynchronous replication (MariaDB's
/// largest): never, in practice. A primary whose replicas are all gone
/// makes its commits wait, and `Rpl_semi_sync_master_status` says why.
const SEMI_SYNC_TIMEOUT_MS: u64 = 4_294_967_295;

/// Options of every server of a replicated shard (primary or replica):
/// any of them can be promoted, so all log the changes they apply and
/// start read-only; `configure` opens the primary for writes.
fn replication_options() -> Vec<String> {
    vec![
        "--log-slave-updates=ON".into(),
        "--read-only=ON".into(),
        "--rpl-semi-sync-slave-enabled=ON".into(),
        "--rpl-semi-sync-master-wait-point=AFTER_SYNC".into(),
        format!("--rpl-semi-sync-master-timeout={SEMI_SYNC_TIMEOUT_MS}"),
        // A semi-synchronous replica's receiving thread, when stopped,
        // connects to its primary to kill its own dump connection there,
        // and a promotion waits for it: against a silent primary that
        // takes this long (default 5 s; 2 s extra seen in a silent
        // primary's failover about one time in three).
        "--rpl-semi-sync-slave-kill-conn-timeout=1".into(),
        // Crash recovery removes the binary log's tail no replica
        // acknowledged (it was never acknowledged to a client either), so
        // an old primary restarted after a crash can follow the new one.
        "--init-rpl-role=SLAVE".into(),
        // Replicated XA PREPAREs and the rows of each transaction applied
        // in order, one at a time: a promoted replica is its primary's
        // history exactly.
        "--slave-parallel-threads=0".into(),
    ]
}

/// The administrative account on a shard server (idempotent statements).
fn admin_account(cf: &ClusterFile) -> Vec<String> {
    let pw = cf.admin_password.replace('\'', "''");
    vec![
        format!("CREATE USER IF NOT EXISTS '{ADMIN_USER}'@'%' IDENTIFIED BY '{pw}'"),
        format!(
            "GRANT REPLICATION SLAVE ADMIN, SLAVE MONITOR, REPLICATION MASTER ADMIN, BINLOG MONITOR, \
             READ_ONLY ADMIN, CONNECTION ADMIN, PROCESS, RELOAD ON *.* TO '{ADMIN_USER}'@'%'"
        ),
    ]
}
