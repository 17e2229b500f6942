//! Placement and DDL: rows on the partition the hash names, DDL seen by every node, DDL with a shard down.

use super::*;

/// Rows land on exactly the partition the hash function names.
pub(crate) async fn placement(cluster: &TestCluster) {
    let c = cluster.connect(1).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS place; CREATE TABLE place (id bigint PRIMARY KEY, v text)",
    )
    .await
    .unwrap();
    for i in 0..300i64 {
        c.execute("INSERT INTO place VALUES ($1, $2)", &[&i, &format!("v{i}")])
            .await
            .unwrap();
    }
    let mut seen: HashMap<i64, u32> = HashMap::new();
    let mut per_shard = vec![];
    for s in 1..=3usize {
        let mut conn = cluster.shard_conn(s).await;
        let mut count = 0;
        // The default: four partitions per shard, 12 in all, each on one
        // shard.
        for p in 0..12u32 {
            // Physical names carry the table id: `place_<id>_p<i>` in the
            // schema's database `tsr_public`.
            let names: Vec<String> = conn
                .query(format!(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'tsr_public' AND table_name LIKE 'place\\_%\\_p{p}'"
                ))
                .await
                .unwrap();
            assert!(names.len() <= 1, "{names:?}");
            let Some(name) = names.first() else { continue };
            let rows: Result<Vec<i64>, _> = conn
                .query(format!("SELECT id FROM `tsr_public`.`{name}`"))
                .await;
            if let Ok(ids) = rows {
                for id in ids {
                    let expect = common::hash::partition_of(&[common::Datum::Int(id)], 12);
                    assert_eq!(
                        expect, p,
                        "row {id} is in partition {p}, hash says {expect}"
                    );
                    assert!(seen.insert(id, p).is_none(), "row {id} stored twice");
                    count += 1;
                }
            }
        }
        per_shard.push(count);
    }
    assert_eq!(seen.len(), 300, "every row stored exactly once");
    for n in &per_shard {
        assert!(*n > 60, "uneven spread {per_shard:?}");
    }
    // Reading back by key through another node.
    let c2 = cluster.connect(2).await;
    for i in [0i64, 17, 299] {
        let row = c2
            .query_one("SELECT v FROM place WHERE id = $1", &[&i])
            .await
            .unwrap();
        assert_eq!(row.get::<_, String>(0), format!("v{i}"));
    }
    let n: i64 = c2
        .query_one("SELECT count(*) FROM place", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 300);
    c.batch_execute("DROP TABLE place").await.unwrap();
}

/// DDL through node 1 is seen by nodes 2 and 3 at once.
pub(crate) async fn ddl_across_nodes(cluster: &TestCluster) {
    let c1 = cluster.connect(0).await;
    c1.batch_execute("DROP TABLE IF EXISTS shared_t")
        .await
        .unwrap();
    c1.batch_execute("CREATE TABLE shared_t (k int PRIMARY KEY, n int)")
        .await
        .unwrap();
    let c2 = cluster.connect(1).await;
    let c3 = cluster.connect(2).await;
    let (a, b) = tokio::join!(
        c2.execute("INSERT INTO shared_t VALUES (1, 10)", &[]),
        c3.execute("INSERT INTO shared_t VALUES (2, 20)", &[])
    );
    assert_eq!(a.unwrap(), 1);
    assert_eq!(b.unwrap(), 1);
    let s: i64 = c1
        .query_one("SELECT sum(n) FROM shared_t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(s, 30);
    c1.batch_execute("DROP TABLE shared_t").await.unwrap();
    let e = c2.query("SELECT * FROM shared_t", &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42P01"));
}

/// DDL with a shard down: TRUNCATE changes nothing, DROP TABLE commits and
/// recovery drops the unreachable partition later, a failed CREATE TABLE
/// leaves nothing behind; sequences never repeat across a DROP and
/// re-CREATE done through another node.
pub(crate) async fn ddl_with_a_shard_down(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    let other = cluster.connect(1).await;
    c.batch_execute("DROP TABLE IF EXISTS dd; CREATE TABLE dd (id int PRIMARY KEY, v int) PARTITION BY HASH (id)")
        .await
        .unwrap();
    for i in 1..=9 {
        c.execute("INSERT INTO dd VALUES ($1, $1)", &[&i])
            .await
            .unwrap();
    }
    // Sequences: other inserts, this node drops and re-creates, other
    // inserts again: no duplicate.
    c.batch_execute("DROP TABLE IF EXISTS sq; CREATE TABLE sq (id serial PRIMARY KEY, v int)")
        .await
        .unwrap();
    other
        .execute("INSERT INTO sq (v) VALUES (1)", &[])
        .await
        .unwrap();
    c.batch_execute("DROP TABLE sq; CREATE TABLE sq (id serial PRIMARY KEY, v int); INSERT INTO sq (v) VALUES (2)")
        .await
        .unwrap();
    other
        .execute("INSERT INTO sq (v) VALUES (3)", &[])
        .await
        .unwrap();
    let n: i64 = c
        .query_one("SELECT count(DISTINCT id) FROM sq", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
    c.batch_execute("DROP TABLE sq").await.unwrap();

    let pid: i32 = std::fs::read_to_string(cluster.dir.join("shard2").join("node.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    unsafe { libc::kill(pid, libc::SIGKILL) };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        c.batch_execute("TRUNCATE dd").await.is_err(),
        "TRUNCATE with a shard down"
    );
    assert!(
        c.batch_execute("CREATE TABLE dd2 (id int PRIMARY KEY) PARTITION BY HASH (id)")
            .await
            .is_err(),
        "CREATE TABLE with a shard down"
    );
    c.batch_execute("DROP TABLE dd").await.unwrap();
    cluster.restart_missing();
    // Recovery drops dd's partition on shard 2 and the partitions the
    // failed CREATE made on the others.
    let mut left = vec![];
    for _ in 0..60 {
        left.clear();
        for s in 1..=3usize {
            let mut conn = cluster.shard_conn(s).await;
            let names: Vec<String> = conn
                .query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'tsr_public' AND (table_name LIKE 'dd\\_%' OR table_name LIKE 'dd2\\_%')")
                .await
                .unwrap();
            left.extend(names);
        }
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(left.is_empty(), "physical tables left behind: {left:?}");
    let c = cluster.connect(0).await;
    c.batch_execute("CREATE TABLE dd2 (id int PRIMARY KEY) PARTITION BY HASH (id); INSERT INTO dd2 VALUES (1), (2), (3); TRUNCATE dd2")
        .await
        .unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM dd2", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
    // TRUNCATE in a transaction block rolls back.
    c.batch_execute("INSERT INTO dd2 VALUES (1), (2), (3); BEGIN; TRUNCATE dd2; ROLLBACK")
        .await
        .unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM dd2", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 3);
    c.batch_execute("DROP TABLE dd2").await.unwrap();
}
