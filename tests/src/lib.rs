//! Integration test harness: starts a real Tessera cluster (real MariaDB
//! shards and meta, real compute processes) on free loopback ports in a
//! temporary folder, and talks to it only over the wire (PostgreSQL protocol
//! to compute nodes, MySQL protocol to shards for placement checks). See
//! `ARCHITECTURE.md`, "Tests".

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType};

pub mod architecture;
pub mod wire;

/// One node as `tessera cluster status --json` reports it.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub name: String,
    pub role: String,
    pub port: u16,
    pub user: String,
    pub password: String,
}

/// A running cluster, stopped (and its folder removed) on drop.
pub struct TestCluster {
    pub dir: PathBuf,
    pub bin: PathBuf,
    pub nodes: Vec<NodeInfo>,
}

/// The `tessera` binary next to the test executable (target/debug).
pub fn tessera_bin() -> PathBuf {
    if let Ok(p) = std::env::var("TESSERA_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    dir.join("tessera")
}

fn port_free(p: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()
}

/// A base port with `span` free ports above it: from 20000 in steps of
/// 40 for a cluster without replicas, from 30000 in steps of 200 for one
/// with them (replicas listen from base + 100 on). Every MariaDB server
/// also listens `ADMIN_PORT_OFFSET` (500) above its port, within the span.
fn pick_base_port(replicas: bool) -> u16 {
    let offset = meta::replication::ADMIN_PORT_OFFSET;
    let (from, step, span) = if replicas {
        (30000, 200, offset + 140)
    } else {
        (20000, 40, offset + 40)
    };
    let seed = (std::process::id() as u64 * 7919
        + std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0))
        % 100;
    for i in 0..100u64 {
        let base = from + (((seed + i) % 100) as u16) * step;
        if (0..span).all(|o| port_free(base + o)) {
            return base;
        }
    }
    panic!("no free port range on loopback");
}

/// `tessera cluster up` on an existing cluster: starts the nodes that
/// are down (after a kill); panics if it fails.
pub fn restart_missing(bin: &Path, dir: &Path) {
    restart_missing_with(bin, dir, &[]);
}

/// `cluster up` on an existing cluster, with these environment variables;
/// answers what it printed.
pub fn restart_missing_with(bin: &Path, dir: &Path, env: &[(&str, &str)]) -> String {
    let out = Command::new(bin)
        .args(["cluster", "up", "--data-dir"])
        .arg(dir)
        .envs(env.iter().copied())
        .output()
        .expect("run tessera cluster up");
    assert!(
        out.status.success(),
        "restart failed: {}\n(it printed: {})",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// How to reach meta's database on the meta server at `port` (the first
/// one, or a replica), with `login`'s account.
pub fn meta_opts(login: &NodeInfo, port: u16) -> mysql_async::OptsBuilder {
    mysql_async::OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(port)
        .user(Some(login.user.clone()))
        .pass(Some(login.password.clone()))
        .db_name(Some("tessera_meta"))
        .prefer_socket(false)
}

impl TestCluster {
    /// Starts the nodes that are down.
    pub fn restart_missing(&self) {
        restart_missing(&self.bin, &self.dir);
    }

    /// Starts the nodes that are down, with these environment variables
    /// for `cluster up`; answers what it printed.
    pub fn restart_missing_with(&self, env: &[(&str, &str)]) -> String {
        restart_missing_with(&self.bin, &self.dir, env)
    }

    pub fn start(shards: u32, compute: u32) -> TestCluster {
        Self::start_with(shards, compute, 0)
    }

    /// A cluster whose shards have `replicas` replicas each (in its own
    /// folder and port range, so it can run beside another).
    pub fn start_with(shards: u32, compute: u32, replicas: u32) -> TestCluster {
        let bin = tessera_bin();
        assert!(
            bin.exists(),
            "{} not built: run `cargo build --bin tessera` first",
            bin.display()
        );
        let suffix = if replicas > 0 { "-r" } else { "" };
        let dir = std::env::temp_dir().join(format!("tessera-test-{}{suffix}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let base = pick_base_port(replicas > 0);
        let out = Command::new(&bin)
            .args(["cluster", "up", "--data-dir"])
            .arg(&dir)
            .args([
                "--shards",
                &shards.to_string(),
                "--compute",
                &compute.to_string(),
                "--base-port",
                &base.to_string(),
                "--replicas",
                &replicas.to_string(),
            ])
            .output()
            .expect("run tessera cluster up");
        let mut c = TestCluster {
            dir,
            bin,
            nodes: vec![],
        };
        assert!(
            out.status.success(),
            "cluster up failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        c.nodes = c.status();
        c
    }

    pub fn status(&self) -> Vec<NodeInfo> {
        let out = Command::new(&self.bin)
            .args(["cluster", "status", "--json", "--data-dir"])
            .arg(&self.dir)
            .output()
            .expect("run tessera cluster status");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("status json");
        v.as_array()
            .expect("array")
            .iter()
            .map(|n| NodeInfo {
                name: n["name"].as_str().unwrap_or_default().to_string(),
                role: n["role"].as_str().unwrap_or_default().to_string(),
                port: n["port"].as_u64().unwrap_or(0) as u16,
                user: n["user"].as_str().unwrap_or_default().to_string(),
                password: n["password"].as_str().unwrap_or_default().to_string(),
            })
            .collect()
    }

    /// The files of the cluster folder that hold passwords.
    pub fn private_files(&self) -> Vec<PathBuf> {
        let mut out = vec![self.dir.join("cluster.toml")];
        if let Ok(rd) = std::fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let f = e.path().join("compute.toml");
                if f.exists() {
                    out.push(f);
                }
            }
        }
        assert!(
            out.len() > 1,
            "no compute.toml found in {}",
            self.dir.display()
        );
        out
    }

    pub fn role(&self, role: &str) -> Vec<NodeInfo> {
        self.nodes
            .iter()
            .filter(|n| n.role == role)
            .cloned()
            .collect()
    }

    pub fn pg_url(&self, compute_index: usize) -> String {
        let n = &self.role("compute")[compute_index];
        format!(
            "host=127.0.0.1 port={} user={} password={} dbname=tessera",
            n.port, n.user, n.password
        )
    }

    pub async fn connect(&self, compute_index: usize) -> tokio_postgres::Client {
        let (client, conn) =
            tokio_postgres::connect(&self.pg_url(compute_index), tokio_postgres::NoTls)
                .await
                .expect("connect to compute node");
        tokio::spawn(async move {
            let _ = conn.await;
        });
        client
    }

    /// A MySQL connection straight to meta's database.
    pub async fn meta_conn(&self) -> mysql_async::Conn {
        let n = &self.role("meta")[0];
        mysql_async::Conn::new(meta_opts(n, n.port))
            .await
            .expect("connect to meta")
    }

    /// A MySQL connection straight to shard `i` (1-based).
    pub async fn shard_conn(&self, i: usize) -> mysql_async::Conn {
        mysql_conn(&self.role("shard")[i - 1]).await
    }
}

/// A MySQL connection straight to a MariaDB node (meta or a shard) with
/// the login `cluster status` printed.
pub async fn mysql_conn(n: &NodeInfo) -> mysql_async::Conn {
    let opts = mysql_async::OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(n.port)
        .user(Some(n.user.clone()))
        .pass(Some(n.password.clone()))
        .prefer_socket(false);
    mysql_async::Conn::new(opts)
        .await
        .expect("connect to a MariaDB node")
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.bin)
            .args(["cluster", "down", "--data-dir"])
            .arg(&self.dir)
            .output();
        if std::env::var("TESSERA_KEEP_TEST_DATA").is_err() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// sqllogictest driver over the PostgreSQL simple query protocol.
pub struct PgDb {
    pub client: tokio_postgres::Client,
}

#[derive(Debug)]
pub struct PgError(pub tokio_postgres::Error);

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_db_error() {
            Some(db) => write!(f, "{}: {}", db.code().code(), db.message()),
            None => write!(f, "{}", self.0),
        }
    }
}

impl std::error::Error for PgError {}

#[async_trait::async_trait]
impl AsyncDB for PgDb {
    type Error = PgError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, PgError> {
        use tokio_postgres::SimpleQueryMessage;
        let msgs = self.client.simple_query(sql).await.map_err(PgError)?;
        let mut rows = vec![];
        let mut width = None;
        let mut count = 0;
        for m in msgs {
            match m {
                SimpleQueryMessage::Row(r) => {
                    width = Some(r.len());
                    rows.push(
                        (0..r.len())
                            .map(|i| {
                                r.get(i)
                                    .map(|s| {
                                        if s.is_empty() {
                                            "(empty)".to_string()
                                        } else {
                                            s.to_string()
                                        }
                                    })
                                    .unwrap_or_else(|| "NULL".to_string())
                            })
                            .collect(),
                    );
                }
                SimpleQueryMessage::RowDescription(d) => width = Some(d.len()),
                SimpleQueryMessage::CommandComplete(n) => count = n,
                _ => {}
            }
        }
        match width {
            Some(w) => Ok(DBOutput::Rows {
                types: vec![DefaultColumnType::Any; w],
                rows,
            }),
            None => Ok(DBOutput::StatementComplete(count)),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "tessera"
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await;
    }

    fn error_sql_state(err: &PgError) -> Option<String> {
        err.0.as_db_error().map(|d| d.code().code().to_string())
    }
}
