//! The tools users bring, run unmodified against the cluster: pgbench.

use super::*;

/// pgbench: `-i` with its own DDL and default steps (storage parameters,
/// TRUNCATE in a block, `COPY ... WITH (FREEZE ON)`, `VACUUM ANALYZE`,
/// `ALTER TABLE ... ADD PRIMARY KEY`, which spreads the keyless tables it
/// created over the shards by their new keys), then its TPC-B script in
/// the simple, extended and prepared modes and the select-only one, each
/// followed by pgbench's invariant: the account, teller and branch
/// balances and the history deltas sum alike.
pub(crate) async fn pgbench(cluster: &TestCluster) {
    let n = &cluster.role("compute")[0];
    let run = |args: &[&str]| {
        let out = std::process::Command::new("pgbench")
            .args(["-h", "127.0.0.1", "-p", &n.port.to_string(), "-U", &n.user])
            .args(args)
            .arg("tessera")
            .env("PGPASSWORD", &n.password)
            .output()
            .expect("pgbench runs (Debian's postgresql-client)");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "pgbench {args:?} failed:\n{text}");
        text
    };
    let c = cluster.connect(0).await;
    run(&["-i", "-s", "2", "-q"]);
    // Keyed after loading: every shard holds a partition of the accounts,
    // and together they hold every row once.
    let mut total = 0i64;
    for s in 1..=3usize {
        let mut conn = cluster.shard_conn(s).await;
        let names: Vec<String> = conn
            .query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'tsr_public' AND table_name LIKE 'pgbench\\_accounts\\_%\\_p%'")
            .await
            .unwrap();
        // The default: four partitions per shard.
        assert_eq!(names.len(), 4, "shard {s}: {names:?}");
        for name in &names {
            let n: Option<i64> = conn
                .query_first(format!("SELECT COUNT(*) FROM `tsr_public`.`{name}`"))
                .await
                .unwrap();
            assert!(n.unwrap() > 0, "shard {s}: {name} holds no accounts");
            total += n.unwrap();
        }
    }
    assert_eq!(total, 200_000, "accounts over the shards");
    for mode in ["simple", "extended", "prepared"] {
        if mode != "simple" {
            run(&["-i", "-s", "1", "-q"]);
        }
        let out = run(&["-M", mode, "-c", "4", "-t", "15"]);
        assert!(
            out.contains("number of failed transactions: 0"),
            "{mode}: {out}"
        );
        let row = c
            .query_one(
                "SELECT (SELECT sum(abalance) FROM pgbench_accounts)::bigint,
                        (SELECT sum(tbalance) FROM pgbench_tellers)::bigint,
                        (SELECT sum(bbalance) FROM pgbench_branches)::bigint,
                        (SELECT sum(delta) FROM pgbench_history)::bigint,
                        (SELECT count(*) FROM pgbench_history)",
                &[],
            )
            .await
            .unwrap();
        let sums: Vec<i64> = (0..4).map(|i| row.get::<_, i64>(i)).collect();
        assert!(sums.iter().all(|s| *s == sums[0]), "{mode}: {sums:?}");
        assert_eq!(row.get::<_, i64>(4), 60, "{mode}: history rows");
        let accounts: i64 = c
            .query_one("SELECT count(*) FROM pgbench_accounts", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(accounts, if mode == "simple" { 200_000 } else { 100_000 });
        println!("pgbench -M {mode}: 60 transactions, balances {sums:?}");
    }
    let out = run(&["-S", "-c", "4", "-t", "25"]);
    assert!(out.contains("number of failed transactions: 0"), "{out}");
    c.batch_execute(
        "DROP TABLE pgbench_accounts; DROP TABLE pgbench_branches; DROP TABLE pgbench_history; DROP TABLE pgbench_tellers",
    )
    .await
    .unwrap();
}

/// Runs a psql script (`-X`, stop at the first error) against compute node
/// 0; returns what psql printed.
fn psql(cluster: &TestCluster, script: &str) -> String {
    use std::io::Write;
    let n = &cluster.role("compute")[0];
    let mut child = std::process::Command::new("psql")
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
        .args(["-p", &n.port.to_string(), "-U", &n.user, "-d", "tessera"])
        .env("PGPASSWORD", &n.password)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("psql runs (Debian's postgresql-client)");
    child
        .stdin
        .take()
        .expect("psql's stdin")
        .write_all(script.as_bytes())
        .expect("script written to psql");
    let out = child.wait_with_output().expect("psql finishes");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "psql failed:\n{script}\n{text}");
    text
}

/// psql's `\copy` both ways: CSV fields holding newlines, quotes and the
/// delimiter survive the round trip; columns the COPY leaves out take
/// their defaults and sequence values, as in PostgreSQL.
pub(crate) async fn psql_copy(cluster: &TestCluster) {
    let dir = std::env::temp_dir().join(format!("tessera-copy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.csv");
    let output = dir.join("out.csv");
    std::fs::write(
        &input,
        "1,\"two\nlines\",\"a \"\"quoted\"\", comma\"\n2,plain,\n3,\"\",\"ends with newline\n\"\n",
    )
    .unwrap();
    let out = psql(
        cluster,
        &format!(
            "CREATE TABLE copy_csv (k int PRIMARY KEY, a text, b text, \
               id serial, d text DEFAULT 'dflt', n int);\n\
             \\copy copy_csv (k, a, b) FROM '{}' WITH (FORMAT csv)\n\
             SELECT k, id, d, n IS NULL AS n_null, b IS NULL AS b_null, length(a) FROM copy_csv ORDER BY k;\n\
             \\copy (SELECT k, a, b FROM copy_csv ORDER BY k) TO '{}' WITH (FORMAT csv)\n\
             DROP TABLE copy_csv;\n",
            input.display(),
            output.display()
        ),
    );
    let expected = " k | id |  d   | n_null | b_null | length \n\
                     ---+----+------+--------+--------+--------\n\
                     \x201 |  1 | dflt | t      | f      |      9\n\
                     \x202 |  2 | dflt | t      | t      |      5\n\
                     \x203 |  3 | dflt | t      | f      |      0\n\
                     (3 rows)\n";
    assert!(out.contains(expected), "{out}");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        std::fs::read_to_string(&input).unwrap(),
        "\\copy TO gives back what \\copy FROM read"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// psql's meta-commands read `pg_catalog` as they do on PostgreSQL: `\dt`,
/// `\d t` (types with modifiers, NOT NULL, defaults, the primary key and
/// indexes), `\d+ t` (storage; Tessera's distribution as the table's
/// options), `\di`, `\dn`, `\l`, `\du`, `\df`. The expected text is
/// PostgreSQL 15's for the same schema (run by hand; only the owner's name
/// differs there).
pub(crate) async fn psql_meta_commands(cluster: &TestCluster) {
    let n = &cluster.role("compute")[0];
    assert_eq!(n.user, "tessera", "the expected text has the owner's width");
    let out = psql(
        cluster,
        "CREATE SCHEMA metacmd;\n\
         SET search_path = metacmd;\n\
         CREATE TABLE acct (id int PRIMARY KEY, name varchar(40) NOT NULL, \
           bal numeric(12,2) DEFAULT 0, note text);\n\
         CREATE INDEX acct_name ON acct (name);\n\
         \\dt\n\\d acct\n\\d+ acct\n\\di\n\\dn metacmd\n\\df\n\\l\n\\du\n\
         DROP SCHEMA metacmd CASCADE;\n",
    );
    for expected in [
        "        List of relations\n\
         \x20Schema  | Name | Type  |  Owner  \n\
         ---------+------+-------+---------\n\
         \x20metacmd | acct | table | tessera\n\
         (1 row)\n",
        "                      Table \"metacmd.acct\"\n\
         \x20Column |         Type          | Collation | Nullable | Default \n\
         --------+-----------------------+-----------+----------+---------\n\
         \x20id     | integer               |           | not null | \n\
         \x20name   | character varying(40) |           | not null | \n\
         \x20bal    | numeric(12,2)         |           |          | 0\n\
         \x20note   | text                  |           |          | \n\
         Indexes:\n\
         \x20   \"acct_pkey\" PRIMARY KEY, btree (id)\n\
         \x20   \"acct_name\" btree (name)\n",
        "               List of relations\n\
         \x20Schema  |   Name    | Type  |  Owner  | Table \n\
         ---------+-----------+-------+---------+-------\n\
         \x20metacmd | acct_name | index | tessera | acct\n\
         \x20metacmd | acct_pkey | index | tessera | acct\n\
         (2 rows)\n",
        "                                                 Table \"metacmd.acct\"\n\
         \x20Column |         Type          | Collation | Nullable | Default | Storage  | Compression | Stats target | Description \n\
         --------+-----------------------+-----------+----------+---------+----------+-------------+--------------+-------------\n\
         \x20id     | integer               |           | not null |         | plain    |             |              | \n\
         \x20name   | character varying(40) |           | not null |         | extended |             |              | \n\
         \x20bal    | numeric(12,2)         |           |          | 0       | main     |             |              | \n\
         \x20note   | text                  |           |          |         | extended |             |              | \n\
         Indexes:\n\
         \x20   \"acct_pkey\" PRIMARY KEY, btree (id)\n\
         \x20   \"acct_name\" btree (name)\n\
         Access method: heap\n\
         Options: distribution=hash, distribution_key=id, partitions=",
        " metacmd | tessera\n",
        " Schema | Name | Result data type | Argument data types | Type \n\
         --------+------+------------------+---------------------+------\n\
         (0 rows)\n",
        " tessera | tessera | UTF8     |",
        " tessera   | Superuser",
    ] {
        assert!(out.contains(expected), "expected\n{expected}\nin\n{out}");
    }
}

/// psycopg 2 (autocommit off: DDL in a block; a named cursor), psycopg 3
/// (server-side prepared statements run many times, server-side cursors
/// with and without hold) and SQLAlchemy 2 (create_all,
/// reflection of columns and keys, ORM inserts with SERIAL ids, drop_all):
/// `tests/clients/drivers.py`.
pub(crate) async fn python_drivers(cluster: &TestCluster) {
    let n = &cluster.role("compute")[0];
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/drivers.py");
    // One driver per process: psycopg 2 and 3 bring their own libpq.
    for driver in ["psycopg2", "psycopg3", "sqlalchemy"] {
        let out = std::process::Command::new("python3")
            .arg(&script)
            .args([
                "127.0.0.1",
                &n.port.to_string(),
                &n.user,
                &n.password,
                driver,
            ])
            .output()
            .expect("python3 runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{driver} checks failed:\n{text}");
        assert!(text.contains("all driver checks passed"), "{text}");
    }
}

/// pgjdbc: batches, generated keys, `DatabaseMetaData.getTables` and
/// `getColumns`, `ResultSetMetaData` (precision, scale and length from the
/// type modifier, the base table), a fetch size: `tests/clients/Jdbc.java`,
/// compiled here.
pub(crate) async fn jdbc(cluster: &TestCluster) {
    let n = &cluster.role("compute")[0];
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/Jdbc.java");
    let dir = std::env::temp_dir().join(format!("tessera-jdbc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let javac = std::process::Command::new("javac")
        .args(["-cp", "/usr/share/java/postgresql.jar", "-d"])
        .arg(&dir)
        .arg(&src)
        .output()
        .expect("javac runs (default-jdk-headless)");
    assert!(
        javac.status.success(),
        "{}",
        String::from_utf8_lossy(&javac.stderr)
    );
    let out = std::process::Command::new("java")
        .arg("-cp")
        .arg(format!("/usr/share/java/postgresql.jar:{}", dir.display()))
        .arg("Jdbc")
        .arg(format!(
            "jdbc:postgresql://127.0.0.1:{}/tessera?loggerLevel=OFF",
            n.port
        ))
        .args([&n.user, &n.password])
        .output()
        .expect("java runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "JDBC checks failed:\n{text}");
    assert!(text.contains("all JDBC checks passed"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A node's Unix socket (`<dir>/.s.PGSQL.<port>`, as PostgreSQL's): psql
/// reaches it with `-h <dir>`, and a client that starts with encryption
/// requests, as libpq does over TCP through a proxy on the same host, is
/// answered 'N' to each and then to its startup message.
pub(crate) async fn unix_socket(cluster: &TestCluster) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let n = &cluster.role("compute")[0];
    let dir = cluster.dir.join(&n.name);
    let out = std::process::Command::new("psql")
        .args(["-X", "-q", "-At", "-h"])
        .arg(&dir)
        .args(["-p", &n.port.to_string(), "-U", &n.user, "-d", "tessera"])
        .args(["-c", "SELECT 40 + 2"])
        .env("PGPASSWORD", &n.password)
        .output()
        .expect("psql runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "42",
        "psql over the Unix socket: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join(format!(".s.PGSQL.{}", n.port));
    let mut s = tokio::net::UnixStream::connect(&path).await.unwrap();
    for code in [80877103u32, 80877104] {
        let mut request = 8u32.to_be_bytes().to_vec();
        request.extend_from_slice(&code.to_be_bytes());
        s.write_all(&request).await.unwrap();
        let mut answer = [0u8; 1];
        s.read_exact(&mut answer).await.unwrap();
        assert_eq!(&answer, b"N", "encryption request {code} refused");
    }
    let mut body = 196608u32.to_be_bytes().to_vec();
    for (k, v) in [("user", n.user.as_str()), ("database", "tessera")] {
        for part in [k, v] {
            body.extend_from_slice(part.as_bytes());
            body.push(0);
        }
    }
    body.push(0);
    let mut startup = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    startup.extend_from_slice(&body);
    s.write_all(&startup).await.unwrap();
    let mut kind = [0u8; 1];
    s.read_exact(&mut kind).await.unwrap();
    assert_eq!(
        &kind, b"R",
        "the startup message is answered by authentication"
    );
}
