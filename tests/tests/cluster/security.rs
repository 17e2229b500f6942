//! Security: roles and privileges, deep statements, least privilege on the shards.

use super::*;

/// PostgreSQL roles and privileges, checked by the compute node (42501).
pub(crate) async fn roles_and_privileges(cluster: &TestCluster) {
    let admin = cluster.connect(0).await;
    admin
        .batch_execute(
            "CREATE ROLE alice LOGIN PASSWORD 'pw-a'; CREATE USER bob WITH PASSWORD 'pw-b'; CREATE ROLE nol PASSWORD 'pw-n';
             CREATE SCHEMA rp; CREATE TABLE rp.t (id int PRIMARY KEY, v text); INSERT INTO rp.t VALUES (1, 'r');
             CREATE TABLE pt (id int PRIMARY KEY, v text); INSERT INTO pt VALUES (1, 'p')",
        )
        .await
        .unwrap();
    let port = cluster.role("compute")[1].port;
    let login = |user: &str, pw: &str| {
        format!("host=127.0.0.1 port={port} user={user} password={pw} dbname=tessera")
    };
    async fn connect(url: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
        tokio::spawn(conn);
        Ok(c)
    }
    async fn code(c: &tokio_postgres::Client, sql: &str) -> String {
        match c.batch_execute(sql).await {
            Ok(()) => "ok".into(),
            Err(e) => e
                .code()
                .map(|c| c.code().to_string())
                .unwrap_or(e.to_string()),
        }
    }
    let alice = connect(&login("alice", "pw-a")).await.unwrap();
    let su: String = alice
        .query_one("SHOW is_superuser", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(su, "off");
    assert_eq!(code(&alice, "SELECT * FROM pt").await, "42501");
    assert_eq!(code(&alice, "SELECT * FROM pt WHERE id = 1").await, "42501");
    admin
        .batch_execute("GRANT SELECT ON pt TO alice")
        .await
        .unwrap();
    let v: String = alice
        .query_one("SELECT v FROM pt WHERE id = 1", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, "p");
    assert_eq!(
        code(&alice, "INSERT INTO pt VALUES (2, 'x')").await,
        "42501"
    );
    assert_eq!(
        code(&alice, "UPDATE pt SET v = 'y' WHERE id = 1").await,
        "42501"
    );
    assert_eq!(code(&alice, "TRUNCATE pt").await, "42501");
    assert_eq!(code(&alice, "SELECT * FROM rp.t").await, "42501");
    admin
        .batch_execute("GRANT SELECT ON rp.t TO alice")
        .await
        .unwrap();
    assert_eq!(
        code(&alice, "SELECT * FROM rp.t").await,
        "42501",
        "no USAGE on rp"
    );
    admin
        .batch_execute("GRANT USAGE ON SCHEMA rp TO alice")
        .await
        .unwrap();
    assert_eq!(code(&alice, "SELECT * FROM rp.t").await, "ok");
    assert_eq!(
        code(&alice, "SELECT count(*) FROM pt JOIN rp.t USING (id)").await,
        "ok"
    );
    assert_eq!(
        code(&alice, "CREATE TABLE at (id int PRIMARY KEY)").await,
        "42501"
    );
    admin
        .batch_execute("GRANT CREATE ON SCHEMA public TO alice")
        .await
        .unwrap();
    assert_eq!(
        code(&alice, "CREATE TABLE at (id int PRIMARY KEY)").await,
        "ok"
    );
    assert_eq!(code(&alice, "INSERT INTO at VALUES (1), (2)").await, "ok");
    assert_eq!(code(&alice, "CREATE INDEX ON pt (v)").await, "42501");
    assert_eq!(code(&alice, "DROP TABLE pt").await, "42501");
    assert_eq!(code(&alice, "CREATE ROLE mallory SUPERUSER").await, "42501");
    assert_eq!(code(&alice, "GRANT ALL ON pt TO alice").await, "42501");
    assert_eq!(code(&alice, "CREATE SCHEMA mine").await, "42501");
    let bob = connect(&login("bob", "pw-b")).await.unwrap();
    assert_eq!(code(&bob, "SELECT * FROM at").await, "42501");
    admin
        .batch_execute("GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO PUBLIC")
        .await
        .unwrap();
    assert_eq!(code(&bob, "SELECT * FROM pt").await, "ok");
    assert_eq!(code(&bob, "INSERT INTO pt VALUES (3, 'b')").await, "ok");
    assert_eq!(code(&bob, "DELETE FROM pt WHERE id = 3").await, "42501");
    admin.batch_execute("REVOKE SELECT, INSERT ON ALL TABLES IN SCHEMA public FROM PUBLIC; REVOKE SELECT ON pt FROM alice").await.unwrap();
    assert_eq!(code(&alice, "SELECT * FROM pt").await, "42501");
    // Writes to her own table that read one she may not read: refused;
    // so is a view over it (SELECT is granted on the view itself).
    for sql in [
        "UPDATE at SET id = at.id FROM pt WHERE pt.id = at.id",
        "DELETE FROM at USING pt WHERE pt.id = at.id",
        "DELETE FROM at WHERE id IN (SELECT id FROM pt)",
        "WITH x AS (SELECT id FROM pt) UPDATE at SET id = id WHERE id IN (SELECT id FROM x)",
        "WITH x AS (SELECT id FROM pt) INSERT INTO at SELECT id + 100 FROM x",
        "SELECT * FROM pv",
    ] {
        admin
            .batch_execute("CREATE OR REPLACE VIEW pv AS SELECT id FROM pt")
            .await
            .unwrap();
        assert_eq!(code(&alice, sql).await, "42501", "{sql}");
    }
    assert_eq!(
        code(
            &alice,
            "UPDATE at SET id = id + 10 WHERE id = 1 RETURNING id"
        )
        .await,
        "ok"
    );
    admin.batch_execute("DROP VIEW pv").await.unwrap();
    assert_eq!(code(&alice, "DROP TABLE at").await, "ok");
    assert!(
        connect(&login("nol", "pw-n")).await.is_err(),
        "a NOLOGIN role logged in"
    );
    // A wrong password is PostgreSQL's FATAL 28P01, naming the user.
    let e = connect(&login("alice", "wrong")).await.err().unwrap();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "28P01", "{e}");
    assert_eq!(
        db.message(),
        "password authentication failed for user \"alice\""
    );
    admin
        .batch_execute("ALTER ROLE alice WITH PASSWORD 'pw-2'")
        .await
        .unwrap();
    // Credentials are cached for a few seconds per node: another node
    // sees the new password at once.
    let other_port = cluster.role("compute")[2].port;
    let url2 = format!("host=127.0.0.1 port={other_port} user=alice password=pw-2 dbname=tessera");
    connect(&url2).await.unwrap();
    drop(alice);
    drop(bob);
    admin
        .batch_execute("DROP ROLE alice, bob, nol; DROP SCHEMA rp CASCADE; DROP TABLE pt")
        .await
        .unwrap();
    assert_eq!(code(&admin, "DROP ROLE alice").await, "42704");
}

/// Every shard's databases, as the cluster account sees them.
pub(crate) async fn shard_databases(cluster: &TestCluster) -> Vec<Vec<String>> {
    let mut out = vec![];
    for s in 1..=3usize {
        let mut conn = cluster.shard_conn(s).await;
        let mut names: Vec<String> = conn
            .query("SELECT schema_name FROM information_schema.schemata")
            .await
            .unwrap();
        names.sort();
        for n in &names {
            assert!(
                n.starts_with("tsr_") || n == "information_schema",
                "shard {s} shows database {n} to the cluster account"
            );
        }
        out.push(names);
    }
    out
}

/// Deep expressions are refused with 54001 and the node keeps serving;
/// a wide but shallow IN list still runs.
pub(crate) async fn safety(cluster: &TestCluster) {
    let c = cluster.connect(1).await;
    c.batch_execute("DROP TABLE IF EXISTS deep; CREATE TABLE deep (id bigint PRIMARY KEY, v text)")
        .await
        .unwrap();
    c.execute("INSERT INTO deep VALUES (1, 'a'), (2, 'b')", &[])
        .await
        .unwrap();
    let chain = |n: usize| {
        let mut q = String::from("SELECT count(*) FROM deep WHERE id = 0");
        for i in 1..n {
            q.push_str(&format!(" OR id = {i}"));
        }
        q
    };
    for n in [3_000, 100_000] {
        let e = c.simple_query(&chain(n)).await.unwrap_err();
        assert_eq!(
            e.code().map(|s| s.code()),
            Some("54001"),
            "{n} OR terms: {e}"
        );
        let e = c.query(&chain(n), &[]).await.unwrap_err();
        assert_eq!(e.code().map(|s| s.code()), Some("54001"), "{e}");
    }
    let rows = c.query(&chain(500), &[]).await.unwrap();
    assert_eq!(rows[0].get::<_, i64>(0), 2);
    let list: Vec<String> = (0..30_000).map(|i| i.to_string()).collect();
    let rows = c
        .query(
            &format!("SELECT count(*) FROM deep WHERE id IN ({})", list.join(",")),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows[0].get::<_, i64>(0), 2);
    // A composite key with two wide IN lists: 4 million combinations are
    // never built (the route scatters past 4,096), the answer is right.
    c.batch_execute("DROP TABLE IF EXISTS ck; CREATE TABLE ck (a int, b int, PRIMARY KEY (a, b)) PARTITION BY HASH (a, b); INSERT INTO ck VALUES (1, 1), (2, 2), (3, 5000)")
        .await
        .unwrap();
    let list: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    let l = list.join(",");
    let rows = c
        .query(
            &format!("SELECT count(*) FROM ck WHERE a IN ({l}) AND b IN ({l})"),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows[0].get::<_, i64>(0), 2);
    let rows = c
        .simple_query(&format!(
            "SELECT a FROM ck WHERE a IN ({l}) AND b IN ({l}) ORDER BY a"
        ))
        .await
        .unwrap();
    let n = rows
        .iter()
        .filter(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(_)))
        .count();
    assert_eq!(n, 2);
    c.batch_execute("DROP TABLE ck").await.unwrap();
    // The node still serves its other sessions.
    let d = cluster.connect(1).await;
    d.simple_query("SELECT 1").await.unwrap();
    c.batch_execute("DROP TABLE deep").await.unwrap();
}

/// Least privilege: MariaDB root has no network login, the cluster
/// account has no FILE, no grant option and no access to `mysql`, and the
/// files holding passwords are private.
pub(crate) async fn least_privilege(cluster: &TestCluster) {
    for s in 1..=3usize {
        let port = cluster.role("shard")[s - 1].port;
        let opts = mysql_async::OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(port)
            .user(Some("root"))
            .prefer_socket(false);
        assert!(
            mysql_async::Conn::new(opts).await.is_err(),
            "root logged in to shard {s} over TCP without a password"
        );
        let mut conn = cluster.shard_conn(s).await;
        for sql in [
            "SELECT count(*) FROM mysql.user",
            "SELECT count(*) FROM mysql.global_priv",
            "CREATE DATABASE not_tessera",
            "GRANT SELECT ON *.* TO 'x'@'%'",
        ] {
            let r: Result<Vec<mysql_async::Row>, _> = conn.query(sql).await;
            assert!(r.is_err(), "shard {s}: {sql} was allowed");
        }
        let f: Vec<Option<String>> = conn
            .query("SELECT LOAD_FILE('/etc/hostname')")
            .await
            .unwrap();
        assert_eq!(f, vec![None], "LOAD_FILE read a file");
    }
    // Meta keeps no secret that opens anything: users have a SCRAM
    // verifier (no salted password, from which a client proof can be
    // computed), the shard map has no password, and meta's login is not a
    // shard login.
    let m = &cluster.role("meta")[0];
    let meta_opts = |port: u16| {
        mysql_async::OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(port)
            .user(Some(m.user.clone()))
            .pass(Some(m.password.clone()))
            .prefer_socket(false)
    };
    let mut meta = mysql_async::Conn::new(meta_opts(m.port).db_name(Some("tessera_meta")))
        .await
        .unwrap();
    let cols: Vec<(String, String)> = meta
        .query("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'tessera_meta' AND table_name IN ('users', 'shards')")
        .await
        .unwrap();
    assert!(
        cols.iter().any(|(_, c)| c == "stored_key") && cols.iter().any(|(_, c)| c == "server_key"),
        "{cols:?}"
    );
    for (t, c) in &cols {
        assert!(
            !c.contains("password"),
            "meta's {t} has a column {c}: {cols:?}"
        );
    }
    for s in cluster.role("shard") {
        assert_ne!(s.password, m.password, "shards share meta's password");
        assert!(
            mysql_async::Conn::new(meta_opts(s.port)).await.is_err(),
            "meta's login opened shard {}",
            s.name
        );
    }
    use std::os::unix::fs::PermissionsExt;
    for f in cluster.private_files() {
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} has mode {mode:o}", f.display());
    }
}
