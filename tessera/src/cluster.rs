//! `tessera cluster up|down|status`: the embedded deployment. One data folder
//! holds a meta MariaDB, N shard MariaDBs and M compute nodes, each with its
//! own data, config, log and pid files; `cluster.toml` at the top records the
//! layout and the credentials.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::config::{ComputeConfig, DefaultDistribution, MysqlEndpoint};
use common::ShardId;
use meta::{MetaStore, ShardInfo};
use serde::{Deserialize, Serialize};

type AnyResult<T> = std::result::Result<T, String>;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterFile {
    pub cluster_id: String,
    pub base_port: u16,
    pub shards: u32,
    pub compute: u32,
    pub mysql_user: String,
    pub mysql_password: String,
    pub pg_user: String,
    pub pg_password: String,
    #[serde(default)]
    pub default_distribution: DefaultDistribution,
    /// Whether a haproxy (round robin over the compute nodes) runs too.
    #[serde(default)]
    pub haproxy: bool,
    /// `durable` (the default: every commit flushed and fsynced on meta and
    /// shards) or `relaxed` (the benchmark reports' settings, on every side
    /// of a comparison alike).
    #[serde(default)]
    pub durability: Durability,
}

/// How MariaDB nodes flush at commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// `innodb_flush_log_at_trx_commit=1`, `sync_binlog=1`: an acknowledged
    /// commit (and a prepared XA branch) survives an OS crash.
    #[default]
    Durable,
    /// `innodb_flush_log_at_trx_commit=2`, `sync_binlog=0`: survives a
    /// process crash, not an OS crash. Meta stays durable: it holds the
    /// commit decisions.
    Relaxed,
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "durable" => Ok(Durability::Durable),
            "relaxed" => Ok(Durability::Relaxed),
            other => Err(format!(
                "--durability must be durable or relaxed, not {other}"
            )),
        }
    }
}

/// Writes a file only its owner can read (it holds passwords).
fn write_private(path: &Path, text: &str) -> AnyResult<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // An existing file keeps its mode on open: set it.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    f.write_all(text.as_bytes()).map_err(|e| e.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Meta,
    Shard,
    Compute,
    Haproxy,
}

impl Role {
    fn name(&self) -> &'static str {
        match self {
            Role::Meta => "meta",
            Role::Shard => "shard",
            Role::Compute => "compute",
            Role::Haproxy => "haproxy",
        }
    }
}

pub struct Node {
    pub role: Role,
    pub name: String,
    pub port: u16,
    pub dir: PathBuf,
}

impl ClusterFile {
    pub fn meta_port(&self) -> u16 {
        self.base_port + 10
    }
    pub fn shard_port(&self, i: u32) -> u16 {
        self.base_port + 10 + i as u16
    }
    pub fn compute_port(&self, i: u32) -> u16 {
        self.base_port + i as u16 - 1
    }
    pub fn haproxy_port(&self) -> u16 {
        self.base_port + 20
    }

    pub fn nodes(&self, dir: &Path) -> Vec<Node> {
        let mut v = vec![Node {
            role: Role::Meta,
            name: "meta".into(),
            port: self.meta_port(),
            dir: dir.join("meta"),
        }];
        for i in 1..=self.shards {
            v.push(Node {
                role: Role::Shard,
                name: format!("shard{i}"),
                port: self.shard_port(i),
                dir: dir.join(format!("shard{i}")),
            });
        }
        for i in 1..=self.compute {
            v.push(Node {
                role: Role::Compute,
                name: format!("compute{i}"),
                port: self.compute_port(i),
                dir: dir.join(format!("compute{i}")),
            });
        }
        if self.haproxy {
            v.push(Node {
                role: Role::Haproxy,
                name: "haproxy".into(),
                port: self.haproxy_port(),
                dir: dir.join("haproxy"),
            });
        }
        v
    }

    pub fn endpoint(&self, port: u16) -> MysqlEndpoint {
        MysqlEndpoint {
            host: "127.0.0.1".into(),
            port,
            user: self.mysql_user.clone(),
            password: self.mysql_password.clone(),
        }
    }

    pub fn psql_url(&self, port: u16) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{port}/tessera",
            self.pg_user, self.pg_password
        )
    }
}

fn random_token(n: usize) -> String {
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

fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn port_answers(port: u16) -> bool {
    TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(300),
    )
    .is_ok()
}

fn node_pid(n: &Node) -> Option<i32> {
    read_pid(&n.dir.join("node.pid")).filter(|p| pid_alive(*p))
}

fn find_binary(name: &str) -> Option<PathBuf> {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return Some(p);
        }
    }
    None
}

fn load(dir: &Path) -> AnyResult<Option<ClusterFile>> {
    let f = dir.join("cluster.toml");
    if !f.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: {e}", f.display()))
}

pub struct UpArgs {
    pub data_dir: PathBuf,
    pub shards: u32,
    pub compute: u32,
    pub base_port: u16,
    pub default_distribution: DefaultDistribution,
    pub haproxy: bool,
    /// `None`: keep the cluster's setting (durable for a new cluster).
    pub durability: Option<Durability>,
}

fn spawn_daemon(cmd: &mut Command, log: &Path, pid_file: &Path) -> AnyResult<u32> {
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

fn wait_port(port: u16, pid: u32, what: &str, log: &Path) -> AnyResult<()> {
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

fn start_mariadb(cf: &ClusterFile, node: &Node) -> AnyResult<()> {
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
            if node.role == Role::Meta || cf.durability == Durability::Durable {
                "--innodb-flush-log-at-trx-commit=1"
            } else {
                "--innodb-flush-log-at-trx-commit=2"
            },
        )
        .arg(
            if node.role == Role::Meta || cf.durability == Durability::Durable {
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
        .arg(if node.role == Role::Meta {
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
        .arg("--performance-schema=OFF");
    let pid = spawn_daemon(&mut cmd, &log, &node.dir.join("node.pid"))?;
    wait_port(node.port, pid, &node.name, &log)?;
    if fresh {
        create_mysql_user(cf, node.role, &sock)?;
    }
    Ok(())
}

/// The privileges of the cluster's account on a node: on meta, everything
/// on the meta database only; on a shard, data and schema changes on
/// Tessera's databases (`tsr_*`, see `meta::physical_database`) and XA
/// recovery, but no FILE, no GRANT OPTION, no access to `mysql` or `sys`.
fn grants(role: Role, user: &str) -> Vec<String> {
    match role {
        Role::Meta => vec![format!(
            "GRANT ALL PRIVILEGES ON `tessera_meta`.* TO '{user}'@'%'"
        )],
        _ => vec![
            format!(
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES, \
                 CREATE TEMPORARY TABLES, LOCK TABLES ON `{}%`.* TO '{user}'@'%'",
                meta::PHYSICAL_DB_PREFIX.replace('_', "\\_")
            ),
            // XA RECOVER lists other connections' prepared branches only
            // with this privilege (MariaDB 10.5+), and `cluster status`
            // counts the node's connections with PROCESS.
            format!("GRANT PROCESS ON *.* TO '{user}'@'%'"),
        ],
    }
}

fn create_mysql_user(cf: &ClusterFile, role: Role, sock: &Path) -> AnyResult<()> {
    use mysql_async::prelude::*;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let opts = mysql_async::OptsBuilder::default()
            .socket(Some(sock.to_string_lossy().to_string()))
            .user(Some("root"));
        let mut conn = mysql_async::Conn::new(opts)
            .await
            .map_err(|e| format!("connecting to new MariaDB as root: {e}"))?;
        let pw = cf.mysql_password.replace('\'', "''");
        let mut stmts = vec![
            // Anonymous accounts, if the installer made any.
            "DELETE FROM mysql.global_priv WHERE User = ''".to_string(),
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
        stmts.push("FLUSH PRIVILEGES".to_string());
        for sql in stmts {
            conn.query_drop(sql).await.map_err(|e| e.to_string())?;
        }
        let _ = conn.disconnect().await;
        Ok(())
    })
}

fn start_compute(cf: &ClusterFile, node: &Node, index: u32, exe: &Path) -> AnyResult<()> {
    std::fs::create_dir_all(&node.dir).map_err(|e| e.to_string())?;
    let config = ComputeConfig {
        node_id: index,
        listen: format!("127.0.0.1:{}", node.port),
        meta: cf.endpoint(cf.meta_port()),
        meta_database: "tessera_meta".into(),
        shard_pool_max: 200,
        default_distribution: cf.default_distribution,
        sequence_cache: 1000,
        query_memory_mb: 1024,
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

pub fn up(args: UpArgs) -> AnyResult<()> {
    let dir = &args.data_dir;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let cf = match load(&dir)? {
        Some(cf) => cf,
        None => {
            let cf = ClusterFile {
                cluster_id: random_token(12),
                base_port: args.base_port,
                shards: args.shards,
                compute: args.compute,
                mysql_user: "tessera".into(),
                mysql_password: random_token(16),
                pg_user: "tessera".into(),
                pg_password: random_token(12),
                default_distribution: args.default_distribution,
                haproxy: args.haproxy,
                durability: args.durability.unwrap_or_default(),
            };
            write_private(
                &dir.join("cluster.toml"),
                &toml::to_string_pretty(&cf).map_err(|e| e.to_string())?,
            )?;
            cf
        }
    };
    let mut cf = cf;
    let durability = args.durability.unwrap_or(cf.durability);
    if (args.haproxy && !cf.haproxy) || durability != cf.durability {
        cf.haproxy |= args.haproxy;
        cf.durability = durability;
    }
    // Rewritten every time: also tightens the mode of older files.
    write_private(
        &dir.join("cluster.toml"),
        &toml::to_string_pretty(&cf).map_err(|e| e.to_string())?,
    )?;
    let nodes = cf.nodes(&dir);
    let running: Vec<bool> = nodes.iter().map(|n| node_pid(n).is_some()).collect();
    if running.iter().all(|r| *r) {
        println!(
            "The cluster in {} is already running; nothing changed.",
            dir.display()
        );
        print_connect(&cf);
        return Ok(());
    }
    for (n, r) in nodes.iter().zip(&running) {
        if !*r && port_answers(n.port) {
            return Err(format!(
                "port {} (for {}) is already in use by another program; stop it or choose another --base-port",
                n.port, n.name
            ));
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    for (n, r) in nodes.iter().zip(&running) {
        if *r || n.role == Role::Compute || n.role == Role::Haproxy {
            continue;
        }
        println!("starting {} on port {}", n.name, n.port);
        start_mariadb(&cf, n)?;
    }
    // Meta schema, shard map and the SQL user (idempotent).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let shards: Vec<ShardInfo> = (1..=cf.shards)
            .map(|i| ShardInfo {
                id: ShardId(i),
                endpoint: cf.endpoint(cf.shard_port(i)),
            })
            .collect();
        MetaStore::bootstrap(
            &cf.endpoint(cf.meta_port()),
            "tessera_meta",
            &cf.cluster_id,
            &shards,
        )
        .await
        .map_err(|e| e.to_string())?;
        let store = MetaStore::connect(&cf.endpoint(cf.meta_port()), "tessera_meta")
            .map_err(|e| e.to_string())?;
        if store
            .user_credentials(&cf.pg_user)
            .await
            .map_err(|e| e.to_string())?
            .is_none()
        {
            compute::scram::create_user(&store, &cf.pg_user, &cf.pg_password)
                .await
                .map_err(|e| e.to_string())?;
        }
        store.disconnect().await;
        Ok::<_, String>(())
    })?;
    for (i, (n, r)) in nodes.iter().zip(&running).enumerate() {
        if *r || n.role != Role::Compute {
            continue;
        }
        let index = (i as u32) - cf.shards;
        println!("starting {} on port {}", n.name, n.port);
        start_compute(&cf, n, index, &exe)?;
    }
    for (n, r) in nodes.iter().zip(&running) {
        if !*r && n.role == Role::Haproxy {
            println!("starting haproxy on port {}", n.port);
            start_haproxy(&cf, n)?;
        }
    }
    println!(
        "Tessera cluster is up ({} shards, {} compute nodes) in {}",
        cf.shards,
        cf.compute,
        dir.display()
    );
    print_connect(&cf);
    Ok(())
}

fn start_haproxy(cf: &ClusterFile, node: &Node) -> AnyResult<()> {
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
    for i in 1..=cf.compute {
        cfg.push_str(&format!(
            "    server compute{i} 127.0.0.1:{} check inter 2s fall 2 rise 1\n",
            cf.compute_port(i)
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

fn print_connect(cf: &ClusterFile) {
    println!("Connect with:");
    if cf.haproxy {
        println!("  psql \"{}\"    (haproxy)", cf.psql_url(cf.haproxy_port()));
    }
    for i in 1..=cf.compute {
        println!("  psql \"{}\"", cf.psql_url(cf.compute_port(i)));
    }
}

/// (Threads_connected, Threads_running) of a MariaDB server.
fn mysql_connections(ep: &MysqlEndpoint) -> Option<(u64, u64)> {
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

pub fn status(dir: &Path, json: bool) -> AnyResult<()> {
    let cf = load(dir)?.ok_or_else(|| format!("no cluster in {}", dir.display()))?;
    let mut out = vec![];
    for n in cf.nodes(dir) {
        let pid = node_pid(&n);
        let answers = pid.is_some() && port_answers(n.port);
        let mut obj = serde_json::json!({
            "name": n.name,
            "role": n.role.name(),
            "host": "127.0.0.1",
            "port": n.port,
            "pid": pid,
            "running": pid.is_some(),
            "answers": answers,
        });
        if n.role == Role::Compute || n.role == Role::Haproxy {
            obj["user"] = cf.pg_user.clone().into();
            obj["password"] = cf.pg_password.clone().into();
        } else {
            obj["user"] = cf.mysql_user.clone().into();
            obj["password"] = cf.mysql_password.clone().into();
            // Pool use as the shard sees it: connections open to it (from
            // every compute node) and how many are running a statement.
            if answers {
                if let Some((open, busy)) = mysql_connections(&cf.endpoint(n.port)) {
                    obj["connections"] = open.into();
                    obj["running_statements"] = busy.into();
                }
            }
        }
        out.push(obj);
    }
    if json {
        println!("{}", serde_json::Value::Array(out));
    } else {
        println!(
            "{:<10} {:<8} {:>8} {:<16} {:<8} {:<8} {:<12} login",
            "node", "role", "pid", "address", "running", "answers", "conns/busy"
        );
        for o in &out {
            let conns = match (o["connections"].as_u64(), o["running_statements"].as_u64()) {
                (Some(c), Some(b)) => format!("{c}/{b}"),
                _ => "-".to_string(),
            };
            println!(
                "{:<10} {:<8} {:>8} {:<16} {:<8} {:<8} {:<12} {}/{}",
                o["name"].as_str().unwrap_or(""),
                o["role"].as_str().unwrap_or(""),
                o["pid"]
                    .as_i64()
                    .map(|p| p.to_string())
                    .unwrap_or("-".into()),
                format!("127.0.0.1:{}", o["port"]),
                o["running"],
                o["answers"],
                conns,
                o["user"].as_str().unwrap_or(""),
                o["password"].as_str().unwrap_or(""),
            );
        }
    }
    Ok(())
}

pub fn down(dir: &Path) -> AnyResult<()> {
    let cf = load(dir)?.ok_or_else(|| format!("no cluster in {}", dir.display()))?;
    let mut nodes = cf.nodes(dir);
    // Compute nodes first, then shards, meta last.
    nodes.reverse();
    for n in &nodes {
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
    println!("cluster in {} stopped", dir.display());
    Ok(())
}

fn reap(pid: i32) {
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
}
