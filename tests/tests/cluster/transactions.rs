//! Transactions: disconnects, cancels, row locks, isolation levels.

use super::*;

/// A client that disconnects mid-transaction leaves no lock and no branch.
pub(crate) async fn disconnect_mid_transaction(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    c.batch_execute("DROP TABLE IF EXISTS dc; CREATE TABLE dc (id int PRIMARY KEY, n int); INSERT INTO dc VALUES (1, 0), (2, 0)")
        .await
        .unwrap();
    {
        let doomed = cluster.connect(1).await;
        doomed
            .batch_execute(
                "BEGIN; UPDATE dc SET n = 99 WHERE id = 1; UPDATE dc SET n = 99 WHERE id = 2",
            )
            .await
            .unwrap();
        drop(doomed);
    }
    // The rows are not locked for long: these finish well before MariaDB's
    // 20 s lock wait timeout.
    let start = std::time::Instant::now();
    c.batch_execute("UPDATE dc SET n = n + 1").await.unwrap();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(15),
        "rows stayed locked"
    );
    let rows = c.query("SELECT n FROM dc ORDER BY id", &[]).await.unwrap();
    let ns: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(
        ns,
        vec![1, 1],
        "the disconnected transaction was not rolled back"
    );
    for s in 1..=3 {
        let mut conn = cluster.shard_conn(s).await;
        let prepared: Vec<mysql_async::Row> = conn.query("XA RECOVER").await.unwrap();
        assert!(prepared.is_empty(), "branch left prepared on shard {s}");
    }
    c.batch_execute("DROP TABLE dc").await.unwrap();
}

/// A cancel request stops a running statement; the session stays usable.
pub(crate) async fn cancel_request(cluster: &TestCluster) {
    let c = cluster.connect(2).await;
    c.batch_execute("DROP TABLE IF EXISTS cx; CREATE TABLE cx (id int PRIMARY KEY)")
        .await
        .unwrap();
    let values: Vec<String> = (0..3000).map(|i| format!("({i})")).collect();
    c.batch_execute(&format!("INSERT INTO cx VALUES {}", values.join(",")))
        .await
        .unwrap();
    let token = c.cancel_token();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        token.cancel_query(tokio_postgres::NoTls).await
    });
    let e = c
        .query(
            "SELECT count(*) FROM cx a, cx b, cx c WHERE a.id + b.id + c.id = -1",
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("57014"), "{e}");
    canceller.await.unwrap().unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM cx", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 3000);
    // A write canceled inside a transaction block fails the transaction:
    // COMMIT rolls back all of it, never half of it.
    c.batch_execute("CREATE TABLE cy (id int PRIMARY KEY, n int)")
        .await
        .unwrap();
    // Another session holds row 2; this one writes row 1, then waits
    // for row 2 and is canceled while waiting.
    let holder = cluster.connect(2).await;
    holder
        .batch_execute("BEGIN; INSERT INTO cy VALUES (2, 0)")
        .await
        .unwrap();
    let token = c.cancel_token();
    c.batch_execute("BEGIN; INSERT INTO cy VALUES (1, 0)")
        .await
        .unwrap();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        token.cancel_query(tokio_postgres::NoTls).await
    });
    let e = c
        .query("UPDATE cy SET n = 5 WHERE id = 2", &[])
        .await
        .unwrap_err();
    canceller.await.unwrap().unwrap();
    assert_eq!(e.code().map(|c| c.code()), Some("57014"), "{e}");
    holder.batch_execute("ROLLBACK").await.unwrap();
    let e = c.query("SELECT 1", &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("25P02"), "{e}");
    let tag = c.simple_query("COMMIT").await.unwrap();
    assert!(
        matches!(
            tag.last(),
            Some(tokio_postgres::SimpleQueryMessage::CommandComplete(_))
        ),
        "{tag:?}"
    );
    let n: i64 = c
        .query_one("SELECT count(*) FROM cy", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "a canceled transaction committed");
    // Cancels racing COMMITs of multi-shard transactions: every COMMIT that
    // answers success committed, one that answers 57014 was canceled
    // before it began (nothing committed, the block still open and
    // failed), every connection stays usable, no branch stays prepared.
    let mut canceled = 0;
    for round in 0..20 {
        let base = round * 10;
        c.batch_execute(&format!(
            "BEGIN; INSERT INTO cy VALUES ({}, 1), ({}, 1), ({}, 1), ({}, 1)",
            base,
            base + 1,
            base + 2,
            base + 3
        ))
        .await
        .unwrap();
        let token = c.cancel_token();
        let delay = (round % 5) as u64;
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
            token.cancel_query(tokio_postgres::NoTls).await
        });
        let r = c.batch_execute("COMMIT").await;
        canceller.await.unwrap().unwrap();
        if r.is_err() {
            // ROLLBACK is never interrupted.
            c.batch_execute("ROLLBACK").await.unwrap();
        }
        // A cancel that arrives after COMMIT ended cancels whatever runs
        // next (as in PostgreSQL): this read is retried then.
        let mut n = -1i64;
        for _ in 0..3 {
            match c
                .query_one(
                    "SELECT count(*) FROM cy WHERE id >= $1 AND id < $2",
                    &[&base, &(base + 10)],
                )
                .await
            {
                Ok(row) => {
                    n = row.get(0);
                    break;
                }
                Err(e) if e.code().map(|c| c.code()) == Some("57014") => continue,
                Err(e) => panic!("{e}"),
            }
        }
        match r {
            Ok(()) => assert_eq!(n, 4, "COMMIT answered success, {n} of 4 rows"),
            Err(e) => {
                assert_eq!(e.code().map(|c| c.code()), Some("57014"), "{e}");
                canceled += 1;
                assert_eq!(n, 0, "COMMIT answered 57014, {n} of 4 rows committed");
            }
        }
    }
    println!("cancel racing COMMIT: {canceled} of 20 answered 57014");
    for i in 0..40 {
        c.execute("INSERT INTO cy VALUES ($1, 2)", &[&(1000 + i)])
            .await
            .unwrap();
    }
    c.batch_execute("DROP TABLE cx; DROP TABLE cy")
        .await
        .unwrap();
}

/// FOR UPDATE takes row locks on the shard: a writer waits for the holder.
pub(crate) async fn for_update_locks(cluster: &TestCluster) {
    let a = cluster.connect(0).await;
    a.batch_execute("DROP TABLE IF EXISTS fu; CREATE TABLE fu (id int PRIMARY KEY, n int); INSERT INTO fu VALUES (1, 0)")
        .await
        .unwrap();
    a.batch_execute("BEGIN").await.unwrap();
    a.query("SELECT n FROM fu WHERE id = 1 FOR UPDATE", &[])
        .await
        .unwrap();
    let b = cluster.connect(1).await;
    let writer =
        tokio::spawn(async move { b.execute("UPDATE fu SET n = 2 WHERE id = 1", &[]).await });
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    assert!(!writer.is_finished(), "the row was not locked");
    let c = cluster.connect(2).await;
    c.batch_execute("BEGIN").await.unwrap();
    let e = c
        .query("SELECT n FROM fu WHERE id = 1 FOR UPDATE NOWAIT", &[])
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("55P03"), "{e:?}");
    c.batch_execute("ROLLBACK").await.unwrap();
    // lock_timeout: a write and a locking read that wait longer fail with
    // PostgreSQL's 55P03 (both protocols), the session keeps working, and
    // SHOW prints the setting as PostgreSQL does.
    c.batch_execute("SET lock_timeout = '1s'").await.unwrap();
    let shown: String = c.query_one("SHOW lock_timeout", &[]).await.unwrap().get(0);
    assert_eq!(shown, "1s");
    let t = std::time::Instant::now();
    let e = c
        .execute("UPDATE fu SET n = 3 WHERE id = 1", &[])
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("55P03"), "{e:?}");
    assert!(
        e.as_db_error()
            .is_some_and(|d| d.message() == "canceling statement due to lock timeout"),
        "{e:?}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(15),
        "waited {:?}",
        t.elapsed()
    );
    c.batch_execute("BEGIN").await.unwrap();
    let e = c
        .simple_query("SELECT n FROM fu WHERE id = 1 FOR UPDATE")
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("55P03"), "{e:?}");
    c.batch_execute("ROLLBACK; BEGIN").await.unwrap();
    // A locking read on the DataFusion path (every partition, sorted).
    let e = c
        .query(
            "SELECT n + 1 FROM fu WHERE n >= 0 ORDER BY 1 FOR UPDATE",
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("55P03"), "{e:?}");
    c.batch_execute("ROLLBACK; SET lock_timeout = 0")
        .await
        .unwrap();
    let e = c
        .batch_execute("SET lock_timeout = '1 fortnight'")
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("22023"), "{e:?}");
    a.batch_execute("UPDATE fu SET n = 1 WHERE id = 1; COMMIT")
        .await
        .unwrap();
    assert_eq!(writer.await.unwrap().unwrap(), 1);
    let n: i32 = a
        .query_one("SELECT n FROM fu WHERE id = 1", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
    a.batch_execute("DROP TABLE fu").await.unwrap();
}

/// Reads in a READ COMMITTED transaction run outside it on shards it has
/// not written (a fresh snapshot per statement, as in PostgreSQL); its own
/// writes, locking reads and REPEATABLE READ transactions use the branch.
pub(crate) async fn isolation_levels(cluster: &TestCluster) {
    let a = cluster.connect(0).await;
    let b = cluster.connect(1).await;
    a.batch_execute(
        "DROP TABLE IF EXISTS iso; CREATE TABLE iso (id int PRIMARY KEY, n int);
         INSERT INTO iso VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6)",
    )
    .await
    .unwrap();
    async fn sum(c: &tokio_postgres::Client) -> i64 {
        let r = c.query_one("SELECT sum(n) FROM iso", &[]).await.unwrap();
        r.get(0)
    }
    async fn n_of(c: &tokio_postgres::Client, id: i32) -> i32 {
        let r = c
            .query_one("SELECT n FROM iso WHERE id = $1", &[&id])
            .await
            .unwrap();
        r.get(0)
    }
    // READ COMMITTED: each statement sees what was committed before it.
    a.batch_execute("BEGIN").await.unwrap();
    assert_eq!(sum(&a).await, 21);
    b.batch_execute("UPDATE iso SET n = n + 1 WHERE id = 1")
        .await
        .unwrap();
    assert_eq!(sum(&a).await, 22);
    // Own writes are seen by the writer only, until COMMIT.
    a.batch_execute("UPDATE iso SET n = 20 WHERE id = 2")
        .await
        .unwrap();
    assert_eq!(n_of(&a, 2).await, 20);
    assert_eq!(sum(&a).await, 40);
    assert_eq!(n_of(&b, 2).await, 2);
    a.batch_execute("COMMIT").await.unwrap();
    assert_eq!(n_of(&b, 2).await, 20);
    // REPEATABLE READ: the shard's snapshot holds for the transaction.
    a.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        .await
        .unwrap();
    assert_eq!(n_of(&a, 3).await, 3);
    b.batch_execute("UPDATE iso SET n = 30 WHERE id = 3")
        .await
        .unwrap();
    assert_eq!(n_of(&a, 3).await, 3);
    a.batch_execute("COMMIT").await.unwrap();
    assert_eq!(n_of(&a, 3).await, 30);
    // Locking reads belong to the transaction, so not to a READ ONLY one.
    a.batch_execute("BEGIN READ ONLY").await.unwrap();
    assert_eq!(n_of(&a, 4).await, 4);
    let e = a
        .query("SELECT n FROM iso WHERE id = 4 FOR UPDATE", &[])
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("25006"), "{e:?}");
    a.batch_execute("ROLLBACK").await.unwrap();
    a.batch_execute("DROP TABLE iso").await.unwrap();
}
