//! Checks on a replicated cluster's servers, as root on their sockets:
//! a rejoined old primary holds the same rows and the same prepared XA
//! branches as its shard's primary.

use mysql_async::prelude::*;
use tests::TestCluster;

/// MariaDB's root on a node's socket (the fence of an old primary kills
/// every other account's connections, the cluster account's too).
pub async fn root_conn(cluster: &TestCluster, node: &str) -> mysql_async::Conn {
    try_root_conn(cluster, node)
        .await
        .expect("root on the socket")
}

pub async fn try_root_conn(
    cluster: &TestCluster,
    node: &str,
) -> Result<mysql_async::Conn, mysql_async::Error> {
    let sock = cluster.dir.join(node).join("mysqld.sock");
    let opts = mysql_async::OptsBuilder::default()
        .socket(Some(sock.to_string_lossy().to_string()))
        .user(Some("root"));
    mysql_async::Conn::new(opts).await
}

/// A rejoined old primary, once it applied all its primary wrote, holds
/// the same rows (`CHECKSUM TABLE` of every table of the shard's data).
#[allow(dead_code)] // for when rejoining old primaries is on again
pub async fn same_rows_as_primary(cluster: &TestCluster, meta: &mut mysql_async::Conn, name: &str) {
    let shard: u32 = name
        .trim_start_matches("shard")
        .split('r')
        .next()
        .and_then(|d| d.parse().ok())
        .expect("shard number");
    let port: Option<u16> = meta
        .exec_first("SELECT port FROM shards WHERE shard_id = ?", (shard,))
        .await
        .expect("primary");
    let primary_name = &cluster
        .nodes
        .iter()
        .find(|n| Some(n.port) == port)
        .expect("primary node")
        .name;
    let mut primary = root_conn(cluster, primary_name).await;
    let mut old = root_conn(cluster, name).await;
    let pos: Option<String> = primary
        .query_first("SELECT @@GLOBAL.gtid_binlog_pos")
        .await
        .expect("primary position");
    let waited: Option<i64> = old
        .exec_first("SELECT MASTER_GTID_WAIT(?, 30)", (pos.unwrap_or_default(),))
        .await
        .expect("wait");
    assert_eq!(
        waited,
        Some(0),
        "{name} did not catch up with {primary_name}"
    );
    let tables: Vec<String> = primary
        .query(
            "SELECT CONCAT(table_schema, '.', table_name) FROM information_schema.tables \
             WHERE table_schema LIKE 'tsr\\_%' ORDER BY 1",
        )
        .await
        .expect("tables");
    assert!(!tables.is_empty(), "no tables on {primary_name}");
    for t in tables {
        let sql = format!("CHECKSUM TABLE {t}");
        let a: Option<(String, Option<i64>)> = primary.query_first(&sql).await.expect("checksum");
        let b: Option<(String, Option<i64>)> = old.query_first(&sql).await.expect("checksum");
        assert_eq!(a, b, "{t}: {name} holds other rows than {primary_name}");
    }
    assert_eq!(
        prepared(&mut old).await,
        prepared(&mut primary).await,
        "{name} holds other prepared XA branches than {primary_name}"
    );
}

async fn prepared(c: &mut mysql_async::Conn) -> Vec<String> {
    let rows: Vec<mysql_async::Row> = c.query("XA RECOVER").await.expect("XA RECOVER");
    let mut xids: Vec<String> = rows
        .iter()
        .filter_map(|r| r.get::<String, _>("data"))
        .collect();
    xids.sort();
    xids
}
