//! An existing MariaDB server joins the cluster as a shard (issue 33):
//! the test starts one on its own, the way an operator runs a server
//! Tessera did not make, with an administrative login of its own; then
//! `tessera cluster add-shard --port P --admin-user U` takes it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use mysql_async::prelude::*;

pub(crate) const ADMIN_USER: &str = "opadmin";
pub(crate) const ADMIN_PASSWORD: &str = "an-operators-secret";

/// A MariaDB server outside the cluster; killed when dropped.
pub(crate) struct ExternalServer {
    pub port: u16,
    child: Child,
}

impl Drop for ExternalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn binary(name: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} is not installed");
}

impl ExternalServer {
    /// Installs and starts a server under `dir` with a row-based binary
    /// log, and an administrative account that may grant.
    pub(crate) async fn start(dir: &Path) -> ExternalServer {
        let data = dir.join("data");
        std::fs::create_dir_all(dir).expect("external dir");
        let out = Command::new(binary("mariadb-install-db"))
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg("--user=root")
            .arg("--auth-root-authentication-method=socket")
            .arg("--skip-test-db")
            .output()
            .expect("mariadb-install-db");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let sock = dir.join("mysqld.sock");
        let log = std::fs::File::create(dir.join("server.log")).expect("log");
        let child = Command::new(binary("mariadbd"))
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", sock.display()))
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .arg("--user=root")
            .arg("--skip-name-resolve")
            .arg("--innodb-buffer-pool-size=128M")
            .arg("--log-bin=binlog")
            .arg("--binlog-format=ROW")
            .arg(format!("--server-id={port}"))
            .stderr(log)
            .spawn()
            .expect("mariadbd");
        let server = ExternalServer { port, child };
        let opts = mysql_async::OptsBuilder::default()
            .socket(Some(sock.to_string_lossy().to_string()))
            .user(Some("root"));
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut root = loop {
            match mysql_async::Conn::new(opts.clone()).await {
                Ok(c) => break c,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("the external server did not start: {e}"),
            }
        };
        for sql in [
            format!("CREATE USER '{ADMIN_USER}'@'%' IDENTIFIED BY '{ADMIN_PASSWORD}'"),
            format!("GRANT ALL PRIVILEGES ON *.* TO '{ADMIN_USER}'@'%' WITH GRANT OPTION"),
        ] {
            root.query_drop(sql).await.expect("admin account");
        }
        let _ = root.disconnect().await;
        server
    }
}
