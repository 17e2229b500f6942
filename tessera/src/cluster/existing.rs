//! `tessera cluster add-shard --host H --port P --admin-user U`: an
//! existing MariaDB server, started and run by its operator, joins the
//! cluster as a shard (issue 33). Tessera checks what it needs of the
//! server, makes its own least-privilege account there with the
//! operator's login (`TESSERA_ADMIN_PASSWORD`, never stored), and
//! registers it; it never starts, stops or reconfigures the server.

use std::time::Duration;

use common::config::MysqlEndpoint;
use common::ShardId;
use meta::ShardInfo;
use mysql_async::prelude::*;
use serde::{Deserialize, Serialize};

use super::mariadb::account_statements;
use super::{ClusterFile, Role};

type AnyResult<T> = std::result::Result<T, String>;

/// A shard on a server the cluster did not start (`cluster.toml`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExternalShard {
    pub number: u32,
    pub host: String,
    pub port: u16,
}

/// Where the existing server is and the operator's login to it.
pub struct ExistingServer {
    pub host: String,
    pub port: u16,
    pub admin_user: String,
    pub admin_password: String,
}

/// The oldest MariaDB whose XA and binary log Tessera relies on.
const MIN_VERSION: (u32, u32) = (10, 5);

async fn admin_conn(s: &ExistingServer) -> AnyResult<mysql_async::Conn> {
    let opts = mysql_async::OptsBuilder::default()
        .ip_or_hostname(s.host.clone())
        .tcp_port(s.port)
        .user(Some(s.admin_user.clone()))
        .pass(Some(s.admin_password.clone()))
        .prefer_socket(false);
    tokio::time::timeout(Duration::from_secs(10), mysql_async::Conn::new(opts))
        .await
        .map_err(|_| format!("{}:{} did not answer within 10 s", s.host, s.port))?
        .map_err(|e| {
            format!(
                "logging in to {}:{} as {}: {e}",
                s.host, s.port, s.admin_user
            )
        })
}

/// What the cluster needs of a shard server, as problems found (none: it
/// can join).
pub(super) fn problems(
    version: &str,
    log_bin: bool,
    format: &str,
    row_image: &str,
    tessera_dbs: &[String],
    need_binlog: bool,
) -> Vec<String> {
    let mut out = vec![];
    let numbers: Vec<u32> = version
        .split(|c: char| !c.is_ascii_digit())
        .take(2)
        .filter_map(|n| n.parse().ok())
        .collect();
    if !version.contains("MariaDB") {
        out.push(format!("it is not MariaDB (version {version})"));
    } else if numbers.len() < 2 || (numbers[0], numbers[1]) < MIN_VERSION {
        out.push(format!(
            "MariaDB {version} is older than {}.{}",
            MIN_VERSION.0, MIN_VERSION.1
        ));
    }
    if need_binlog {
        if !log_bin {
            out.push(
                "it writes no binary log (start it with log_bin; partition moves catch up from it)"
                    .into(),
            );
        }
        if !format.eq_ignore_ascii_case("ROW") {
            out.push(format!("binlog_format is {format}, not ROW"));
        }
        if !row_image.eq_ignore_ascii_case("FULL") {
            out.push(format!("binlog_row_image is {row_image}, not FULL"));
        }
    }
    if !tessera_dbs.is_empty() {
        out.push(format!(
            "it already holds Tessera databases ({}): a shard of another cluster?",
            tessera_dbs.join(", ")
        ));
    }
    out
}

/// Checks the server, makes the cluster's account on it, registers it as
/// shard `number`.
pub(super) async fn join(cf: &ClusterFile, number: u32, s: &ExistingServer) -> AnyResult<()> {
    let mut conn = admin_conn(s).await?;
    let q = |e: mysql_async::Error| e.to_string();
    let (version, log_bin, format, row_image): (String, bool, String, String) = conn
        .query_first("SELECT @@version, @@log_bin, @@binlog_format, @@binlog_row_image")
        .await
        .map_err(q)?
        .ok_or("the server answered no settings")?;
    let prefix = meta::PHYSICAL_DB_PREFIX.replace('_', "\\_");
    let dbs: Vec<String> = conn
        .exec(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE ?",
            (format!("{prefix}%"),),
        )
        .await
        .map_err(q)?;
    let found = problems(
        &version,
        log_bin,
        &format,
        &row_image,
        &dbs,
        cf.shard_binlog,
    );
    if !found.is_empty() {
        return Err(format!(
            "{}:{} cannot be a shard: {}",
            s.host,
            s.port,
            found.join("; ")
        ));
    }
    for sql in account_statements(cf, Role::Shard) {
        conn.query_drop(&sql).await.map_err(q)?;
    }
    let _ = conn.disconnect().await;
    let endpoint = MysqlEndpoint {
        host: s.host.clone(),
        ..cf.endpoint(Role::Shard, s.port)
    };
    // The cluster's own login works before the shard is registered.
    let url = endpoint.url(None);
    let opts = mysql_async::Opts::from_url(&url).map_err(|e| e.to_string())?;
    let probe = mysql_async::OptsBuilder::from_opts(opts).prefer_socket(false);
    mysql_async::Conn::new(probe)
        .await
        .map_err(|e| format!("the cluster's account on {}:{}: {e}", s.host, s.port))?
        .disconnect()
        .await
        .map_err(q)?;
    let store = cf.meta_store().await?;
    let mut ddl = store
        .begin_ddl(0, &format!("-- add shard {number} ({}:{})", s.host, s.port))
        .await
        .map_err(|e| e.to_string())?;
    ddl.add_shard(&ShardInfo {
        id: ShardId(number),
        endpoint,
    })
    .await
    .map_err(|e| e.to_string())?;
    ddl.commit().await.map_err(|e| e.to_string())?;
    store.disconnect().await;
    Ok(())
}

/// Every shard the cluster has, where its server is.
pub(super) fn shard_infos(cf: &ClusterFile) -> Vec<ShardInfo> {
    (1..=cf.shards)
        .filter(|i| !cf.removed_shards.contains(i))
        .map(|i| ShardInfo {
            id: ShardId(i),
            endpoint: match cf.external_shards.iter().find(|x| x.number == i) {
                Some(x) => MysqlEndpoint {
                    host: x.host.clone(),
                    ..cf.endpoint(Role::Shard, x.port)
                },
                None => cf.endpoint(Role::Shard, cf.shard_port(i)),
            },
        })
        .collect()
}

/// `cluster status` rows of the shards on existing servers.
pub(super) fn status_rows(cf: &ClusterFile) -> Vec<serde_json::Value> {
    cf.external_shards
        .iter()
        .filter(|x| !cf.removed_shards.contains(&x.number))
        .map(|x| {
            let answers = super::process::port_answers(x.port);
            serde_json::json!({
                "name": format!("shard{}", x.number),
                "role": "shard",
                "host": x.host,
                "port": x.port,
                "pid": null,
                "running": answers,
                "answers": answers,
                "external": true,
                "user": cf.mysql_user,
                "password": cf.password_of(Role::Shard),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::problems;

    #[test]
    fn a_server_must_be_mariadb_with_a_row_log_and_no_tessera_data() {
        let ok = problems(
            "10.11.6-MariaDB-0+deb12u1-log",
            true,
            "ROW",
            "FULL",
            &[],
            true,
        );
        assert!(ok.is_empty(), "{ok:?}");
        assert_eq!(problems("8.0.36", true, "ROW", "FULL", &[], true).len(), 1);
        assert_eq!(
            problems("10.4.2-MariaDB", true, "ROW", "FULL", &[], true).len(),
            1
        );
        let no_log = problems("10.11.6-MariaDB", false, "STATEMENT", "MINIMAL", &[], true);
        assert_eq!(no_log.len(), 3, "{no_log:?}");
        // A cluster made without shard binary logs does not ask for one.
        assert!(problems("10.11.6-MariaDB", false, "MIXED", "FULL", &[], false).is_empty());
        let used = problems(
            "11.4.2-MariaDB",
            true,
            "ROW",
            "FULL",
            &["tsr_public".into()],
            true,
        );
        assert_eq!(used.len(), 1, "{used:?}");
    }
}
