//! The servers a benchmark compares: a Tessera cluster (through the
//! `tessera` binary), one plain MariaDB with the shards' settings, and one
//! plain PostgreSQL 15, all on loopback under one work folder.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::ledger::Watch;

/// How sysbench (or psql) reaches a server.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub name: String,
    /// "pgsql" or "mysql"
    pub driver: &'static str,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub db: String,
    /// Settings every session gets at startup (libpq's PGOPTIONS, e.g.
    /// `-c tessera.consistent_reads=off`).
    pub options: Option<String>,
}

impl Endpoint {
    /// The libpq connection string of a PostgreSQL-wire endpoint.
    pub fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user={} password={} dbname={}",
            self.port, self.user, self.password, self.db
        )
    }

    pub fn sysbench_args(&self) -> Vec<String> {
        let d = self.driver;
        let mut args = vec![
            format!("--db-driver={d}"),
            format!("--{d}-host=127.0.0.1"),
            format!("--{d}-port={}", self.port),
            format!("--{d}-user={}", self.user),
            format!("--{d}-password={}", self.password),
            format!("--{d}-db={}", self.db),
        ];
        // The pgsql driver retries deadlocks, serialization failures and
        // duplicate keys on its own; the mysql driver only deadlocks, lock
        // wait timeouts and 1020. Duplicate keys (1062) are part of
        // oltp_insert with explicit random ids, so all targets retry them.
        if d == "mysql" {
            args.push("--mysql-ignore-errors=1213,1020,1205,1062".into());
        }
        args
    }
}

fn wait_port(port: u16, what: &str) -> Result<(), String> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("{what} did not come up on port {port}"))
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

/// Flushing at commit, set alike on every side of a comparison: `relaxed`
/// is the benchmark reports' setting (MariaDB
/// `innodb_flush_log_at_trx_commit=2`, `sync_binlog=0`; PostgreSQL
/// `synchronous_commit=off`), `durable` flushes and fsyncs every commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Durability {
    Relaxed,
    Durable,
}

impl Durability {
    pub fn name(self) -> &'static str {
        match self {
            Durability::Relaxed => "relaxed",
            Durability::Durable => "durable",
        }
    }
}

/// A Tessera cluster started with `tessera cluster up --haproxy`.
pub struct Tessera {
    pub bin: PathBuf,
    pub dir: PathBuf,
}

impl Tessera {
    pub fn start(
        bin: &Path,
        dir: &Path,
        base_port: u16,
        distribution: &str,
        durability: Durability,
        extra: &[String],
    ) -> Result<(Tessera, Endpoint), String> {
        run(Command::new(bin)
            .args(["cluster", "up", "--haproxy", "--data-dir"])
            .arg(dir)
            .args([
                "--base-port",
                &base_port.to_string(),
                "--default-distribution",
                distribution,
                "--durability",
                durability.name(),
            ])
            .args(extra))?;
        let t = Tessera {
            bin: bin.into(),
            dir: dir.into(),
        };
        let v = t.status()?;
        let hp = v
            .as_array()
            .and_then(|a| a.iter().find(|n| n["role"] == "haproxy"))
            .ok_or("no haproxy in cluster status")?;
        let ep = Endpoint {
            name: format!("tessera-{distribution}"),
            driver: "pgsql",
            port: hp["port"].as_u64().unwrap_or(0) as u16,
            user: hp["user"].as_str().unwrap_or_default().into(),
            password: hp["password"].as_str().unwrap_or_default().into(),
            db: "tessera".into(),
            options: None,
        };
        Ok((t, ep))
    }

    /// `tessera cluster status --json`: every node's role, pid and address.
    pub fn status(&self) -> Result<serde_json::Value, String> {
        let status = run(Command::new(&self.bin)
            .args(["cluster", "status", "--json", "--data-dir"])
            .arg(&self.dir))?;
        serde_json::from_str(&status).map_err(|e| e.to_string())
    }

    /// The cost ledger's view of the cluster (an empty one if its status
    /// cannot be read). `client_children`: the client is a child process.
    pub fn watch(&self, client_children: bool) -> Watch {
        let status = self.status().unwrap_or_default();
        Watch::tessera(&status, client_children)
    }
}

impl Drop for Tessera {
    fn drop(&mut self) {
        let _ = Command::new(&self.bin)
            .args(["cluster", "down", "--data-dir"])
            .arg(&self.dir)
            .output();
    }
}

/// One MariaDB with the shards' settings, alone or as the primary of
/// semi-synchronous replicas.
pub struct Mariadb {
    pid: u32,
    sock: PathBuf,
    /// The replicas' processes (stopped with the primary).
    replicas: Vec<u32>,
}

/// The semi-synchronous settings of Tessera's replicated shards
/// (`tessera cluster up --replicas N`): lossless (the commit waits, after
/// the binary log is synced, for one replica to have the transaction) and
/// never falling back to asynchronous replication.
const SEMI_SYNC: &[&str] = &[
    "--rpl-semi-sync-slave-enabled=ON",
    "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
    "--rpl-semi-sync-master-timeout=4294967295",
    "--log-slave-updates=ON",
    "--slave-parallel-threads=0",
];

/// Starts one mariadbd in `dir` (made on first use) and waits for its
/// port; answers its pid.
fn mariadbd(
    dir: &Path,
    port: u16,
    durability: Durability,
    extra: &[String],
) -> Result<u32, String> {
    let data = dir.join("data");
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    if !data.join("mysql").exists() {
        run(Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .args([
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ]))?;
    }
    let sock = dir.join("mysqld.sock");
    let log = std::fs::File::create(dir.join("mariadb.log")).map_err(|e| e.to_string())?;
    let child = Command::new("mariadbd")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--socket={}", sock.display()))
        .args([
            "--user=root",
            "--skip-name-resolve",
            match durability {
                Durability::Relaxed => "--innodb-flush-log-at-trx-commit=2",
                Durability::Durable => "--innodb-flush-log-at-trx-commit=1",
            },
            match durability {
                Durability::Relaxed => "--sync-binlog=0",
                Durability::Durable => "--sync-binlog=1",
            },
            "--innodb-buffer-pool-size=1G",
            "--innodb-log-file-size=128M",
            "--max-connections=4000",
            "--max-prepared-stmt-count=1000000",
            "--innodb-lock-wait-timeout=20",
            "--performance-schema=OFF",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| e.to_string())?;
    wait_port(port, "mariadb")?;
    Ok(child.id())
}

/// Statements run as root through a server's socket.
fn mariadb_root(dir: &Path, sql: &str) -> Result<String, String> {
    run(Command::new("mariadb")
        .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
        .args(["-uroot", "-N", "-B", "-e"])
        .arg(sql))
}

/// The benchmark's account and database, on one server only (not written
/// to the binary log: every server of a replicated baseline gets its own).
const SBTEST: &str = "SET SESSION sql_log_bin = 0; CREATE DATABASE IF NOT EXISTS sbtest; \
    CREATE USER IF NOT EXISTS 'sbtest'@'%' IDENTIFIED BY 'sbtest'; GRANT ALL ON *.* TO 'sbtest'@'%';";

impl Mariadb {
    pub fn start(
        dir: &Path,
        port: u16,
        durability: Durability,
    ) -> Result<(Mariadb, Endpoint), String> {
        Mariadb::start_replicated(dir, port, durability, 0)
    }

    /// With `replicas` > 0: a primary writing a row-based binary log with
    /// GTIDs and `replicas` semi-synchronous replicas (ports `port + 1`,
    /// ...), set as Tessera sets a replicated shard. The endpoint is the
    /// primary, named `mariadb-semisync`.
    pub fn start_replicated(
        dir: &Path,
        port: u16,
        durability: Durability,
        replicas: u16,
    ) -> Result<(Mariadb, Endpoint), String> {
        let binlog = |id: u16| -> Vec<String> {
            let mut v: Vec<String> = vec![
                "--log-bin=binlog".into(),
                "--binlog-format=ROW".into(),
                format!("--server-id={id}"),
            ];
            v.extend(SEMI_SYNC.iter().map(|s| s.to_string()));
            v
        };
        if replicas > 0 {
            // A replica's position is its data's: start them all afresh.
            let _ = std::fs::remove_dir_all(dir);
        }
        let extra = if replicas > 0 {
            let mut v = binlog(port);
            v.push("--rpl-semi-sync-master-enabled=ON".into());
            v
        } else {
            vec![]
        };
        let pid = mariadbd(dir, port, durability, &extra)?;
        let mut m = Mariadb {
            pid,
            sock: dir.join("mysqld.sock"),
            replicas: vec![],
        };
        mariadb_root(dir, SBTEST)?;
        let name = if replicas > 0 {
            mariadb_root(
                dir,
                "SET SESSION sql_log_bin = 0; CREATE USER IF NOT EXISTS 'repl'@'%' IDENTIFIED BY 'repl'; \
                 GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';",
            )?;
            for r in 1..=replicas {
                let rdir = dir.join(format!("replica{r}"));
                let mut opts = binlog(port + r);
                opts.push("--read-only=ON".into());
                m.replicas
                    .push(mariadbd(&rdir, port + r, durability, &opts)?);
                mariadb_root(&rdir, SBTEST)?;
                mariadb_root(
                    &rdir,
                    &format!(
                        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='repl', \
                         MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos; START SLAVE;"
                    ),
                )?;
            }
            wait_semi_sync_clients(dir, replicas)?;
            "mariadb-semisync"
        } else {
            "mariadb"
        };
        Ok((
            m,
            Endpoint {
                name: name.into(),
                driver: "mysql",
                port,
                user: "sbtest".into(),
                password: "sbtest".into(),
                db: "sbtest".into(),
                options: None,
            },
        ))
    }

    /// The primary's semi-synchronous counters: transactions acknowledged
    /// by a replica and transactions committed without (0 when lossless).
    pub fn semi_sync_counts(&self) -> Option<(u64, u64)> {
        let dir = self.sock.parent()?;
        let out = mariadb_root(
            dir,
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_yes_tx', 'Rpl_semi_sync_master_no_tx')",
        )
        .ok()?;
        let get = |k: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(k))
                .and_then(|v| v.trim().parse().ok())
        };
        Some((
            get("Rpl_semi_sync_master_yes_tx")?,
            get("Rpl_semi_sync_master_no_tx")?,
        ))
    }
}

/// Waits until the primary counts `n` semi-synchronous replicas.
fn wait_semi_sync_clients(dir: &Path, n: u16) -> Result<(), String> {
    let start = Instant::now();
    loop {
        let out = mariadb_root(
            dir,
            "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_clients'",
        )?;
        let clients: u16 = out
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if clients >= n {
            return Ok(());
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err(format!(
                "the MariaDB baseline's primary counts {clients} semi-synchronous replicas of {n} after 30 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Mariadb {
    /// The cost ledger's view of this server (and its replicas' CPU, as
    /// class `replica`).
    pub fn watch(&self, client_children: bool) -> Watch {
        Watch::mariadb(self.pid, &self.sock, client_children).and_procs("replica", &self.replicas)
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        for pid in self.replicas.iter().chain([&self.pid]) {
            let _ = Command::new("kill").arg(pid.to_string()).output();
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// One PostgreSQL 15 (Debian's binaries), run as the `postgres` user.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
}

impl Postgres {
    pub fn start(
        dir: &Path,
        port: u16,
        durability: Durability,
    ) -> Result<(Postgres, Endpoint), String> {
        let bin = PathBuf::from("/usr/lib/postgresql/15/bin");
        if !bin.join("postgres").exists() {
            return Err("PostgreSQL 15 is not installed (apt-get install -y postgresql-15)".into());
        }
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        run(Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir))?;
        let data = dir.join("data");
        if !data.join("PG_VERSION").exists() {
            run(Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(bin.join("initdb"))
                .args(["-A", "trust", "-U", "postgres", "-D"])
                .arg(&data))?;
        }
        run(Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("postgres.log"))
            .arg("-o")
            .arg(format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=1100 -c shared_buffers=256MB -c synchronous_commit={}",
                dir.display(),
                match durability {
                    Durability::Relaxed => "off",
                    Durability::Durable => "on",
                }
            ))
            .args(["-w", "start"]))?;
        let pg = Postgres {
            dir: data,
            bin: bin.clone(),
        };
        wait_port(port, "postgres")?;
        let _ = run(Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
                "-c",
            ])
            .arg("CREATE ROLE sbtest LOGIN SUPERUSER PASSWORD 'sbtest'"));
        let _ = run(Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
                "-c",
            ])
            .arg("CREATE DATABASE sbtest OWNER sbtest"));
        Ok((
            pg,
            Endpoint {
                name: "postgres".into(),
                driver: "pgsql",
                port,
                user: "sbtest".into(),
                password: "sbtest".into(),
                db: "sbtest".into(),
                options: None,
            },
        ))
    }
}

impl Postgres {
    /// The cost ledger's view of this server: the postmaster named by the
    /// first line of `postmaster.pid`, and its backends.
    pub fn watch(&self, client_children: bool) -> Watch {
        let pid = std::fs::read_to_string(self.dir.join("postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
            .unwrap_or(0);
        Watch::postgres(pid, client_children)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.dir)
            .args(["-m", "fast", "-w", "stop"])
            .output();
    }
}
