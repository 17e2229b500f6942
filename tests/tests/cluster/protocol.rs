//! The PostgreSQL protocol: extended and simple protocols, format codes, garbage and fuzzed messages.

use super::*;

/// Extended protocol: prepared statements, binary parameters and results,
/// every supported type round-tripped.
pub(crate) async fn extended_protocol(cluster: &TestCluster) {
    use chrono::{NaiveDate, NaiveDateTime};
    use rust_decimal::Decimal;
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP TABLE IF EXISTS types_t;
         CREATE TABLE types_t (id int PRIMARY KEY, s smallint, b bigint, n numeric(12,3), r real, d double precision,
           flag boolean, ch char(4), vc varchar(20), t text, dt date, ts timestamp, by bytea)",
    )
    .await
    .unwrap();
    let ins = c
        .prepare(
            "INSERT INTO types_t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .await
        .unwrap();
    let dt = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
    let ts: NaiveDateTime = dt.and_hms_micro_opt(13, 14, 15, 123456).unwrap();
    let n: Decimal = "-1234.500".parse().unwrap();
    let text = "it's a \\ backslash".to_string();
    c.execute(
        &ins,
        &[
            &7i32,
            &-3i16,
            &9_000_000_000i64,
            &n,
            &1.5f32,
            &2.25f64,
            &true,
            &"ab".to_string(),
            &"vc".to_string(),
            &text,
            &dt,
            &ts,
            &vec![0u8, 1, 255],
        ],
    )
    .await
    .unwrap();
    let sel = c
        .prepare("SELECT id, s, b, n, r, d, flag, ch, vc, t, dt, ts, by FROM types_t WHERE id = $1")
        .await
        .unwrap();
    assert_eq!(sel.params()[0], tokio_postgres::types::Type::INT4);
    let row = c.query_one(&sel, &[&7i32]).await.unwrap();
    assert_eq!(row.get::<_, i32>(0), 7);
    assert_eq!(row.get::<_, i16>(1), -3);
    assert_eq!(row.get::<_, i64>(2), 9_000_000_000);
    assert_eq!(row.get::<_, Decimal>(3), n);
    assert_eq!(row.get::<_, f32>(4), 1.5);
    assert_eq!(row.get::<_, f64>(5), 2.25);
    assert!(row.get::<_, bool>(6));
    assert_eq!(row.get::<_, String>(7).trim_end(), "ab");
    assert_eq!(row.get::<_, String>(8), "vc");
    assert_eq!(row.get::<_, String>(9), text);
    assert_eq!(row.get::<_, NaiveDate>(10), dt);
    assert_eq!(row.get::<_, NaiveDateTime>(11), ts);
    assert_eq!(row.get::<_, Vec<u8>>(12), vec![0u8, 1, 255]);
    // The same through the distributed (DataFusion) path.
    let rows = c
        .query(
            "SELECT id, n, t, dt FROM types_t WHERE t LIKE $1",
            &[&"it%".to_string()],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, Decimal>(1), n);
    assert_eq!(rows[0].get::<_, String>(2), text);
    // Prepared statements resolve names in the session's search_path.
    c.batch_execute(
        "CREATE SCHEMA ext_s; CREATE TABLE ext_s.k (id int PRIMARY KEY); INSERT INTO ext_s.k VALUES (42); SET search_path = ext_s",
    )
    .await
    .unwrap();
    let k: i32 = c
        .query_one("SELECT id FROM k WHERE id = $1", &[&42i32])
        .await
        .unwrap()
        .get(0);
    assert_eq!(k, 42);
    c.batch_execute("SET search_path = public; DROP SCHEMA ext_s CASCADE")
        .await
        .unwrap();
    // Errors keep the session usable.
    let e = c.query("SELECT nope FROM types_t", &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42703"));
    let one: i64 = c
        .query_one("SELECT count(*) FROM types_t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(one, 1);
    c.batch_execute("DROP TABLE types_t").await.unwrap();
}

/// Garbage on the port neither panics nor kills the node.
pub(crate) async fn garbage_bytes(cluster: &TestCluster) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let port = cluster.role("compute")[0].port;
    for payload in [
        b"\x00\x00\x00\x08\x04\xd2\x16\x2f".to_vec(),
        b"GET / HTTP/1.1\r\n\r\n".to_vec(),
        vec![0xff; 4096],
        b"\x00\x00\x00\x03".to_vec(),
    ] {
        if let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            let _ = s.write_all(&payload).await;
            let mut buf = [0u8; 256];
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), s.read(&mut buf)).await;
        }
    }
    let c = cluster.connect(0).await;
    let v: String = c.query_one("SELECT version()", &[]).await.unwrap().get(0);
    assert!(v.starts_with("PostgreSQL 15"), "{v}");
}

/// Simple-protocol statements of one shape with different literals reuse
/// one plan (literals taken out as parameters) and still answer as if
/// planned with their literals: negative numbers, quotes, backslashes,
/// numbers that are not integers, strings read as integers, other schemas,
/// a table re-created with other columns, a failed transaction.
pub(crate) async fn simple_protocol_shapes(cluster: &TestCluster) {
    let c = cluster.connect(1).await;
    c.batch_execute(
        "DROP SCHEMA IF EXISTS sp CASCADE; CREATE SCHEMA sp; SET search_path = sp;
         CREATE TABLE sh (id int PRIMARY KEY, c text, n numeric(10,2));
         INSERT INTO sh VALUES (1, 'a\\b', 1.5), (2, 'it''s', -2.25), (3, NULL, 0)",
    )
    .await
    .unwrap();
    let one = |v: &str| vec![vec![Some(v.to_string())]];
    let none: Vec<Vec<Option<String>>> = vec![];
    for (sql, want) in [
        ("SELECT c FROM sh WHERE id = 1", one("a\\b")),
        ("SELECT c FROM sh WHERE id = 2", one("it's")),
        ("SELECT c FROM sh WHERE id = -1", none.clone()),
        ("SELECT c FROM sh WHERE id = 5.5", none.clone()),
        ("SELECT c FROM sh WHERE id = 2.0", one("it's")),
        ("SELECT c FROM sh WHERE id = '2'", one("it's")),
        ("SELECT c FROM sh WHERE id = 3000000000", none.clone()),
        ("SELECT id FROM sh WHERE n = -2.25", one("2")),
        ("SELECT id FROM sh WHERE n > 1", one("1")),
        ("SELECT c FROM sh WHERE c = 'a\\b'", one("a\\b")),
        ("SELECT c FROM sh WHERE c = 'it''s'", one("it's")),
        ("SELECT count(*) FROM sh WHERE id > -5", one("3")),
        ("SELECT count(*) FROM sh WHERE id > 2", one("1")),
    ] {
        assert_eq!(text_rows(&c, sql).await, want, "{sql}");
    }
    c.batch_execute("UPDATE sh SET c = 'x''y\\' WHERE id = 3; UPDATE sh SET c = 'z' WHERE id = 2")
        .await
        .unwrap();
    assert_eq!(
        text_rows(&c, "SELECT c FROM sh WHERE id IN (1, 2, 3) ORDER BY id").await,
        vec![
            vec![Some("a\\b".to_string())],
            vec![Some("z".to_string())],
            vec![Some("x'y\\".to_string())]
        ]
    );
    // The same shape in another schema, then after the table changed shape.
    c.batch_execute(
        "CREATE SCHEMA sp2; CREATE TABLE sp2.sh (id int PRIMARY KEY, c text);
         INSERT INTO sp2.sh VALUES (1, 'other'); SET search_path = sp2",
    )
    .await
    .unwrap();
    assert_eq!(
        text_rows(&c, "SELECT c FROM sh WHERE id = 1").await,
        one("other")
    );
    c.batch_execute(
        "SET search_path = sp; DROP TABLE sh; CREATE TABLE sh (id int PRIMARY KEY, c int);
         INSERT INTO sh VALUES (1, 42)",
    )
    .await
    .unwrap();
    assert_eq!(
        text_rows(&c, "SELECT c FROM sh WHERE id = 1").await,
        one("42")
    );
    let e = c.batch_execute("BEGIN; SELECT 1/0").await.unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("22012"));
    let e = c
        .simple_query("SELECT c FROM sh WHERE id = 1")
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|s| s.code()), Some("25P02"));
    c.batch_execute("ROLLBACK").await.unwrap();
    // Multi-row INSERTs reach the shards as literals, single rows as
    // parameters: both must store the same values.
    c.batch_execute(
        "CREATE TABLE ty (id int PRIMARY KEY, f double precision, r real, d numeric(12,4), t text, b bytea, ts timestamp, tz timestamptz, dt date, ok boolean)",
    )
    .await
    .unwrap();
    let rows = [
        "0.1, 3.25, -12.5, 'it''s \\n', '\\x00ff27', '2024-02-29 01:02:03.000004', '2024-01-01 00:00:00+02', '0001-01-01', true",
        "-1.5e300, 1e-7, 0, '', '\\x', '1999-12-31 23:59:59', '1970-01-01 00:00:00+00', '9999-12-31', false",
        "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
        "123456789.123456789, -0.5, 99999999.9999, 'ünï €', '\\x5c', '2000-01-01', '2000-01-01 12:00:00-05', '2000-02-29', NULL",
    ];
    let multi: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| format!("({i}, {r})"))
        .collect();
    c.batch_execute(&format!("INSERT INTO ty VALUES {}", multi.join(", ")))
        .await
        .unwrap();
    for (i, r) in rows.iter().enumerate() {
        c.batch_execute(&format!("INSERT INTO ty VALUES ({}, {r})", i + 100))
            .await
            .unwrap();
    }
    let cols = "f, r, d, t, b, ts, tz, dt, ok";
    assert_eq!(
        text_rows(
            &c,
            &format!("SELECT {cols} FROM ty WHERE id < 100 ORDER BY id")
        )
        .await,
        text_rows(
            &c,
            &format!("SELECT {cols} FROM ty WHERE id >= 100 ORDER BY id")
        )
        .await
    );
    assert_eq!(
        text_rows(&c, "SELECT f, t, b FROM ty WHERE id = 0").await,
        vec![vec![
            Some("0.1".to_string()),
            Some("it's \\n".to_string()),
            Some("\\x00ff27".to_string())
        ]]
    );
    // Quoted literals compared with (or assigned to) a column are values
    // of the column's type, as in PostgreSQL, not strings MariaDB converts
    // its own way ('t' is true, a zone offset is applied, 'abc' is no int).
    for (sql, want) in [
        (
            "SELECT count(*) FROM ty WHERE tz = '2024-01-01 00:00:00+02'",
            "2",
        ),
        (
            "SELECT count(*) FROM ty WHERE tz = '2023-12-31 22:00:00+00'",
            "2",
        ),
        ("SELECT count(*) FROM ty WHERE ok = 't'", "2"),
        ("SELECT count(*) FROM ty WHERE ok IN ('yes', 'off')", "4"),
        ("SELECT count(*) FROM ty WHERE b = '\\x5c'", "2"),
        (
            "SELECT count(*) FROM ty WHERE dt BETWEEN '2000-01-01' AND '2000-12-31'",
            "2",
        ),
        ("SELECT count(*) FROM ty WHERE id IN ('0', ' 100 ')", "2"),
        ("SELECT count(*) FROM ty WHERE d < '0'", "2"),
    ] {
        assert_eq!(text_rows(&c, sql).await, one(want), "{sql}");
    }
    for (sql, code) in [
        ("SELECT t FROM ty WHERE id = 'abc'", "22P02"),
        ("SELECT t FROM ty WHERE id IN (1, '2x')", "22P02"),
        ("SELECT t FROM ty WHERE ok = 'maybe'", "22P02"),
        ("SELECT t FROM ty WHERE t = 5", "42883"),
        ("DELETE FROM ty WHERE id = 'x'", "22P02"),
        ("UPDATE ty SET ok = 1 WHERE id = 0", "42804"),
    ] {
        let e = c.simple_query(sql).await.unwrap_err();
        assert_eq!(e.code().map(|s| s.code()), Some(code), "{sql}: {e:?}");
    }
    c.batch_execute("UPDATE ty SET ok = 'yes', tz = '2000-01-01 00:00:00-01' WHERE id = '3'")
        .await
        .unwrap();
    assert_eq!(
        text_rows(
            &c,
            "SELECT count(*) FROM ty WHERE ok AND tz = '2000-01-01 01:00:00+00'"
        )
        .await,
        one("1")
    );
    c.batch_execute("SET search_path = public; DROP SCHEMA sp CASCADE; DROP SCHEMA sp2 CASCADE")
        .await
        .unwrap();
}

/// A Bind whose format codes do not match its parameters is a protocol
/// error (08P01), not a panic that drops the connection.
pub(crate) async fn bind_format_codes(cluster: &TestCluster) {
    use tests::wire::{bind_sequence, Reply, WireClient};
    let n = &cluster.role("compute")[0];
    let mut w = WireClient::connect(n.port, &n.user, &n.password)
        .await
        .unwrap();
    let one: &[u8] = b"1";
    let msg = bind_sequence(
        "SELECT $1::int + $2::int + $3::int",
        &[0, 0],
        &[Some(one), Some(one), Some(one)],
        &[],
    )
    .unwrap();
    w.send(&msg).await.unwrap();
    let r = w.until_ready().await.unwrap();
    assert!(r.contains(&Reply::Error("08P01".into())), "{r:?}");
    assert!(!r.contains(&Reply::Row), "{r:?}");
    // Result formats for more columns than the statement has.
    let msg = bind_sequence("SELECT 1, 2", &[], &[], &[0, 1, 0]).unwrap();
    w.send(&msg).await.unwrap();
    let r = w.until_ready().await.unwrap();
    assert!(r.contains(&Reply::Error("08P01".into())), "{r:?}");
    assert!(!r.contains(&Reply::Row), "{r:?}");
    let r = w.query("SELECT 1").await.unwrap();
    assert_eq!(
        r,
        vec![Reply::Other, Reply::Row, Reply::Other, Reply::Ready]
    );
}

/// The wire fuzzer: random and mutated messages (statements from a seed
/// list with quotes, backslashes, placeholders, huge and NUL parameters
/// spliced in; random format codes; truncated and garbage frames) against
/// a compute node for a bounded time. Every answer must be a reply or a
/// closed connection, and the node must keep serving: crashes are 0.
pub(crate) async fn wire_fuzz(cluster: &TestCluster) {
    use bytes::BytesMut;
    use postgres_protocol::message::frontend;
    use tests::wire::{mutate, random_frame, random_param, Rng, WireClient};
    let secs: u64 = std::env::var("TESSERA_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("TESSERA_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    println!("wire fuzz: seed {seed} (TESSERA_FUZZ_SEED reproduces), {secs} s");
    let c = cluster.connect(0).await;
    c.batch_execute("DROP TABLE IF EXISTS fz; CREATE TABLE fz (id bigint PRIMARY KEY, v text); INSERT INTO fz VALUES (1, 'a'), (2, 'b')")
        .await
        .unwrap();
    let n = cluster.role("compute")[0].clone();
    let mut rng = Rng(seed);
    // TESSERA_FUZZ_LOG=file records every input.
    let fuzz_log = std::env::var("TESSERA_FUZZ_LOG")
        .ok()
        .and_then(|p| std::fs::File::create(p).ok());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let (mut inputs, mut dropped, mut errors) = (0u64, 0u64, 0u64);
    let mut w = WireClient::connect(n.port, &n.user, &n.password)
        .await
        .unwrap();
    // TESSERA_FUZZ_MAX_INPUTS caps the run (with a fixed seed, CI replays
    // exactly the inputs tried before it landed).
    let max_inputs: u64 = std::env::var("TESSERA_FUZZ_MAX_INPUTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX);
    while std::time::Instant::now() < deadline && inputs < max_inputs {
        let mut out = BytesMut::new();
        let frame_only = rng.below(20) == 0;
        if frame_only {
            out.extend_from_slice(&random_frame(&mut rng));
        } else if rng.below(3) == 0 {
            // The encoder refuses NUL inside a string: such inputs go out
            // as raw frames instead.
            if frontend::query(&mutate(&mut rng), &mut out).is_err() {
                out.extend_from_slice(&random_frame(&mut rng));
            }
        } else {
            let sql = mutate(&mut rng);
            let nparams = rng.below(4);
            let params: Vec<Option<Vec<u8>>> =
                (0..nparams).map(|_| random_param(&mut rng)).collect();
            let formats: Vec<i16> = (0..rng.below(5)).map(|_| rng.below(3) as i16).collect();
            let rformats: Vec<i16> = (0..rng.below(4)).map(|_| rng.below(3) as i16).collect();
            if frontend::parse("", &sql, std::iter::empty(), &mut out).is_err() {
                continue;
            }
            let refs: Vec<Option<&[u8]>> = params.iter().map(|p| p.as_deref()).collect();
            let _ = tests::wire::bind(&formats, &refs, &rformats, &mut out);
            if rng.below(2) == 0 {
                frontend::describe(b'P', "", &mut out).unwrap();
            }
            frontend::execute("", rng.below(3) as i32, &mut out).unwrap();
        }
        frontend::sync(&mut out);
        inputs += 1;
        if let Some(log) = &fuzz_log {
            use std::io::Write;
            let mut f = log;
            let _ = writeln!(f, "{inputs}\t{:?}", String::from_utf8_lossy(&out));
        }
        let ok = match w.send(&out).await {
            Ok(()) => {
                match tokio::time::timeout(std::time::Duration::from_secs(2), w.until_ready()).await
                {
                    Ok(Ok(r)) => {
                        errors += r
                            .iter()
                            .filter(|x| matches!(x, tests::wire::Reply::Error(_)))
                            .count() as u64;
                        true
                    }
                    // A closed connection after a malformed frame is the
                    // protocol's answer; a silent one (waiting for the rest of
                    // a frame whose length was a lie) too.
                    _ => false,
                }
            }
            Err(_) => false,
        };
        if !ok {
            dropped += 1;
            // The node itself must still answer.
            w = WireClient::connect(n.port, &n.user, &n.password)
                .await
                .unwrap_or_else(|e| {
                    let log = std::fs::read_to_string(cluster.dir.join("compute1").join("node.log"))
                        .unwrap_or_default();
                    let _ = std::fs::write(std::env::temp_dir().join("tessera-fuzz-node.log"), &log);
                    let lines: Vec<&str> = log.lines().collect();
                    let tail: String = lines
                        .iter()
                        .enumerate()
                        .filter(|(_, l)| l.contains("panicked") || l.contains("overflow") || l.contains("fatal"))
                        .flat_map(|(i, _)| lines[i..(i + 3).min(lines.len())].iter())
                        .map(|l| format!("{l}\n"))
                        .collect();
                    panic!(
                        "node stopped answering after input {inputs} (seed {seed}): {e}\nlast input: {:?}\nnode log:\n{tail}",
                        String::from_utf8_lossy(&out)
                    )
                });
        }
    }
    for i in 0..3 {
        let c = cluster.connect(i).await;
        c.simple_query("SELECT 1").await.unwrap();
    }
    c.batch_execute("DROP TABLE fz").await.unwrap();
    println!(
        "wire fuzz: {inputs} inputs, {errors} error responses, {dropped} connections closed by the node, crashes: 0"
    );
}
