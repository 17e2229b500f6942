//! Pushdown and the fast path give the answers of plain execution (DataFusion alone, or one MariaDB).

use super::*;

/// sysbench's statements give the same answers through Tessera as straight
/// on one MariaDB holding the same rows (a database of its own on shard 1's
/// server), and leave the same rows behind.
pub(crate) async fn sysbench_statements_match_mariadb(cluster: &TestCluster) {
    const N: i64 = 2000;
    let pg = cluster.connect(0).await;
    pg.batch_execute(
        "DROP TABLE IF EXISTS sbtest1;
         CREATE TABLE sbtest1 (id SERIAL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id));
         CREATE INDEX k_1 ON sbtest1(k)",
    )
    .await
    .unwrap();
    let mut my = cluster.shard_conn(1).await;
    my.query_drop("DROP DATABASE IF EXISTS tsr_zz_sb_oracle")
        .await
        .unwrap();
    my.query_drop("CREATE DATABASE tsr_zz_sb_oracle")
        .await
        .unwrap();
    my.query_drop("CREATE TABLE tsr_zz_sb_oracle.sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id), KEY k_1 (k))")
        .await
        .unwrap();
    let mut rng = Rng(42);
    let mut values = vec![];
    for i in 1..=N {
        let k = rng.next(N as u64) as i64;
        values.push(format!(
            "({i}, {k}, 'c-{}-{}', 'pad{}')",
            i,
            rng.next(1000),
            i % 7
        ));
    }
    for chunk in values.chunks(500) {
        let v = chunk.join(",");
        pg.batch_execute(&format!("INSERT INTO sbtest1 (id, k, c, pad) VALUES {v}"))
            .await
            .unwrap();
        my.query_drop(format!(
            "INSERT INTO tsr_zz_sb_oracle.sbtest1 (id, k, c, pad) VALUES {v}"
        ))
        .await
        .unwrap();
    }
    fn norm(v: &str) -> String {
        match v.parse::<f64>() {
            Ok(f) => format!("{f}"),
            Err(_) => v.trim_end().to_string(),
        }
    }
    async fn tessera_rows(c: &tokio_postgres::Client, sql: &str) -> Vec<Vec<String>> {
        text_rows(c, sql)
            .await
            .into_iter()
            .map(|r| {
                r.iter()
                    .map(|v| norm(v.as_deref().unwrap_or("NULL")))
                    .collect()
            })
            .collect()
    }
    async fn maria_rows(c: &mut mysql_async::Conn, sql: &str) -> Vec<Vec<String>> {
        let rows: Vec<mysql_async::Row> = c.query(sql).await.unwrap();
        rows.into_iter()
            .map(|r| {
                r.unwrap()
                    .into_iter()
                    .map(|v| match v {
                        mysql_async::Value::NULL => "NULL".to_string(),
                        mysql_async::Value::Bytes(b) => norm(&String::from_utf8_lossy(&b)),
                        mysql_async::Value::Int(i) => norm(&i.to_string()),
                        other => norm(other.as_sql(true).trim_matches('\'')),
                    })
                    .collect()
            })
            .collect()
    }
    for round in 0..60 {
        let id = 1 + rng.next(N as u64) as i64;
        let hi = id + 99;
        let stmts: Vec<(String, bool)> = vec![
            (format!("SELECT c FROM sbtest1 WHERE id={id}"), true),
            (format!("SELECT c FROM sbtest1 WHERE id BETWEEN {id} AND {hi}"), false),
            (format!("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN {id} AND {hi}"), true),
            (format!("SELECT c FROM sbtest1 WHERE id BETWEEN {id} AND {hi} ORDER BY c"), true),
            (format!("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN {id} AND {hi} ORDER BY c"), true),
            (format!("SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({}, {}, {})", rng.next(N as u64), rng.next(N as u64), id), false),
            (format!("SELECT count(k) FROM sbtest1 WHERE k BETWEEN {id} AND {hi} OR k BETWEEN {} AND {}", id / 2, id / 2 + 5), true),
            // Shapes merged across partitions by the fast path.
            (format!("SELECT id, c FROM sbtest1 WHERE k BETWEEN {id} AND {hi} ORDER BY id DESC LIMIT 5"), true),
            (format!("SELECT min(c), max(k), count(*), sum(id), min(id) FROM sbtest1 WHERE id BETWEEN {id} AND {hi}"), true),
            (format!("SELECT count(*), sum(k), max(c) FROM sbtest1 WHERE k < -{id}"), true),
            (format!("SELECT DISTINCT pad FROM sbtest1 WHERE k < {id}"), false),
            (format!("SELECT DISTINCT pad, k FROM sbtest1 WHERE id BETWEEN {id} AND {hi} ORDER BY k DESC, pad LIMIT 4"), true),
            (format!("SELECT k, id FROM sbtest1 WHERE id IN ({id}, {}, {}, {hi}) ORDER BY k, id", id + 1, id + 2), true),
            (format!("SELECT * FROM sbtest1 WHERE id BETWEEN {id} AND {hi} ORDER BY pad, id LIMIT 7"), true),
            ("SELECT * FROM sbtest1 WHERE id < 0 ORDER BY id LIMIT 3".to_string(), true),
        ];
        for (sql, ordered) in stmts {
            let mut a = tessera_rows(&pg, &sql).await;
            let mut b =
                maria_rows(&mut my, &sql.replace("sbtest1", "tsr_zz_sb_oracle.sbtest1")).await;
            if !ordered {
                a.sort();
                b.sort();
            }
            assert_eq!(a, b, "round {round}: {sql}");
        }
        let writes = [
            format!("UPDATE sbtest1 SET k=k+1 WHERE id={id}"),
            format!(
                "UPDATE sbtest1 SET c='upd-{round}' WHERE id={}",
                1 + rng.next(N as u64)
            ),
            format!("DELETE FROM sbtest1 WHERE id={hi}"),
            format!(
                "INSERT INTO sbtest1 (id, k, c, pad) VALUES ({hi}, {round}, 'ins-{round}', 'p')"
            ),
        ];
        for w in writes {
            let a = pg
                .execute(w.as_str(), &[])
                .await
                .map(|n| n as i64)
                .unwrap_or(-1);
            let b = match my
                .query_drop(w.replace("sbtest1", "tsr_zz_sb_oracle.sbtest1"))
                .await
            {
                Ok(()) => my.affected_rows() as i64,
                Err(_) => -1,
            };
            assert_eq!(a, b, "round {round}: {w}");
        }
    }
    // The same through the extended protocol, LIMIT as a parameter.
    for _ in 0..20 {
        let id = 1 + rng.next(N as u64) as i32;
        let (hi, n) = (id + 99, rng.next(10) as i64);
        let a: Vec<Vec<String>> = pg
            .query(
                "SELECT c, id FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c DESC, id LIMIT $3",
                &[&id, &hi, &n],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| {
                vec![
                    r.get::<_, String>(0).trim_end().to_string(),
                    r.get::<_, i32>(1).to_string(),
                ]
            })
            .collect();
        let b = maria_rows(
            &mut my,
            &format!("SELECT c, id FROM tsr_zz_sb_oracle.sbtest1 WHERE id BETWEEN {id} AND {hi} ORDER BY c DESC, id LIMIT {n}"),
        )
        .await;
        assert_eq!(a, b, "ranges with LIMIT ${n}");
        let s: Option<i64> = pg
            .query_one(
                "SELECT sum(k) FROM sbtest1 WHERE k BETWEEN $1 AND $2",
                &[&id, &hi],
            )
            .await
            .unwrap()
            .get(0);
        let t = maria_rows(
            &mut my,
            &format!("SELECT sum(k) FROM tsr_zz_sb_oracle.sbtest1 WHERE k BETWEEN {id} AND {hi}"),
        )
        .await;
        assert_eq!(
            vec![vec![s
                .map(|v| norm(&v.to_string()))
                .unwrap_or("NULL".into())]],
            t
        );
    }
    let all = "SELECT id, k, c, pad FROM sbtest1 ORDER BY id";
    assert_eq!(
        tessera_rows(&pg, all).await,
        maria_rows(&mut my, &all.replace("sbtest1", "tsr_zz_sb_oracle.sbtest1")).await
    );
    pg.batch_execute("DROP TABLE sbtest1").await.unwrap();
    my.query_drop("DROP DATABASE tsr_zz_sb_oracle")
        .await
        .unwrap();
}

/// Rows of a simple-protocol query as text.
pub(crate) async fn text_rows(c: &tokio_postgres::Client, sql: &str) -> Vec<Vec<Option<String>>> {
    let mut out = vec![];
    for m in c
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            out.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
        }
    }
    out
}

/// The `shard_scans:` lines of `EXPLAIN q`: the SQL each shard receives.
pub(crate) async fn shard_queries(c: &tokio_postgres::Client, q: &str) -> Vec<String> {
    text_rows(c, &format!("EXPLAIN {q}"))
        .await
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .skip_while(|l| !l.starts_with("shard_scans"))
        .collect()
}

/// Deep pushdown (partial aggregates, co-located and mirror joins, semi and
/// anti joins, per-shard top-n) gives exactly what DataFusion alone gives
/// over plain table scans (`SET tessera.pushdown = off`), on data with
/// NULLs, trailing blanks, backslashes, empty tables and empty groups; and
/// the pushed queries really reach the shards.
pub(crate) async fn pushdown_matches_datafusion(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    c.batch_execute(
        "DROP SCHEMA IF EXISTS pd CASCADE; CREATE SCHEMA pd; SET search_path = pd;
         CREATE TABLE a (id int PRIMARY KEY, g int, s varchar(10), d numeric(10,2),
                         f double precision, dt date) PARTITION BY HASH (id);
         CREATE TABLE b (aid int NOT NULL, k int NOT NULL, v numeric(8,3),
                         PRIMARY KEY (aid, k)) PARTITION BY HASH (aid);
         CREATE TABLE m (g int PRIMARY KEY, name text) WITH (distribution = 'mirror');
         CREATE TABLE e (id int PRIMARY KEY, x numeric(6,1)) PARTITION BY HASH (id);",
    )
    .await
    .unwrap();
    let strings = ["x", "x ", "Ab", "ab", "a\\b", "a%", "", "zz"];
    let mut ins = vec![];
    let mut bins = vec![];
    for i in 0..400i64 {
        let g = if i % 11 == 0 {
            "NULL".to_string()
        } else {
            (i % 7).to_string()
        };
        let s = if i % 13 == 0 {
            "NULL".to_string()
        } else {
            format!("'{}'", strings[(i % 8) as usize])
        };
        let d = if i % 5 == 0 {
            "NULL".to_string()
        } else {
            format!("{}.{:02}", (i * 37) % 1000 - 300, (i * 13) % 100)
        };
        ins.push(format!(
            "({i}, {g}, {s}, {d}, {}, DATE '199{}-0{}-1{}')",
            (i as f64) * 0.37 - 20.0,
            i % 10,
            1 + i % 9,
            i % 10
        ));
        for k in 0..(i % 4) {
            bins.push(format!(
                "({i}, {k}, {}.{:03})",
                (i + k) % 17,
                (i * k) % 1000
            ));
        }
    }
    c.batch_execute(&format!(
        "INSERT INTO a VALUES {}; INSERT INTO b VALUES {};
         INSERT INTO m VALUES (0, 'zero'), (1, 'one'), (2, 'two'), (3, 'three'), (5, NULL);",
        ins.join(", "),
        bins.join(", ")
    ))
    .await
    .unwrap();
    let queries = [
        "SELECT g, count(*), count(d), sum(d), avg(d), min(s), max(s), min(dt), max(dt), sum(id), avg(id) FROM a GROUP BY g ORDER BY g NULLS FIRST",
        "SELECT count(*), count(x), sum(x), avg(x), min(x), max(id) FROM e",
        "SELECT g, count(*), sum(x) FROM a JOIN e ON a.id = e.id GROUP BY g",
        "SELECT count(*), sum(d), avg(d) FROM a WHERE id < 0",
        "SELECT s, d, id FROM a ORDER BY d DESC NULLS FIRST, id LIMIT 7",
        "SELECT id, s FROM a ORDER BY s NULLS LAST, id LIMIT 10",
        "SELECT id, s FROM a ORDER BY s DESC, id DESC LIMIT 10",
        "SELECT a.g, sum(b.v), count(*), avg(b.v) FROM a JOIN b ON a.id = b.aid WHERE b.k > 0 GROUP BY a.g ORDER BY 1 NULLS LAST",
        "SELECT m.name, count(*), sum(a.d) FROM a JOIN m ON a.g = m.g GROUP BY m.name ORDER BY 1 NULLS FIRST",
        "SELECT a.id, m.name, b.k FROM a JOIN b ON b.aid = a.id JOIN m ON m.g = a.g WHERE a.id < 40 ORDER BY 1, 3",
        "SELECT count(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id AND b.v > 5)",
        "SELECT count(*), sum(d) FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.aid = a.id)",
        "SELECT count(*) FROM a WHERE g NOT IN (SELECT g FROM a WHERE id < 30)",
        "SELECT count(*) FROM a WHERE s LIKE 'a%'",
        "SELECT count(*) FROM a WHERE s LIKE 'a\\%'",
        "SELECT count(*) FROM a WHERE s LIKE '%b'",
        "SELECT count(*) FROM a WHERE s = 'x'",
        "SELECT count(*) FROM a WHERE s < 'a' OR s > 'x'",
        "SELECT sum(d * 2 - id), sum(d / 3), sum(-d) FROM a",
        "SELECT sum(CASE WHEN s LIKE 'a%' THEN d ELSE 0 END), sum(CASE WHEN g IN (1, 2) THEN 1 ELSE 0 END) FROM a",
        "SELECT extract(year FROM dt) AS y, count(*), min(d) FROM a GROUP BY extract(year FROM dt) ORDER BY 1",
        "SELECT substring(s from 1 for 1) AS p, count(*) FROM a GROUP BY substring(s from 1 for 1) ORDER BY 1 NULLS FIRST",
        "SELECT g, round(sum(f)::numeric, 6), round(avg(f)::numeric, 6), min(f), max(f) FROM a GROUP BY g ORDER BY g NULLS LAST",
        "SELECT a.id, b.k, b.v FROM a JOIN b ON a.id = b.aid ORDER BY b.v DESC, a.id, b.k LIMIT 5",
        "SELECT count(DISTINCT g), count(DISTINCT s) FROM a",
        "SELECT g, sum(d) FROM a GROUP BY g HAVING sum(d) > 10 ORDER BY g",
        "SELECT g, count(*) FROM a WHERE id IN (3, 4, 5) GROUP BY g ORDER BY g",
        "SELECT a.id, count(*), sum(b.v), min(b.k) FROM a JOIN b ON a.id = b.aid GROUP BY a.id HAVING count(*) > 1 ORDER BY a.id",
        "SELECT count(*), sum(d) FROM a WHERE id IN (SELECT aid FROM b GROUP BY aid HAVING sum(v) > 10)",
        "SELECT aid, k, count(*) FROM b GROUP BY aid, k HAVING max(v) > 3 ORDER BY aid DESC, k LIMIT 6",
        "SELECT dt, count(*) FROM a WHERE dt BETWEEN DATE '1993-01-01' AND DATE '1995-12-31' GROUP BY dt ORDER BY dt LIMIT 5",
    ];
    for q in queries {
        c.batch_execute("SET tessera.pushdown = on").await.unwrap();
        let on = text_rows(&c, q).await;
        c.batch_execute("SET tessera.pushdown = off").await.unwrap();
        let off = text_rows(&c, q).await;
        assert_eq!(on, off, "pushdown changed the answer of {q}");
        // Grouping an empty join has no groups; everything else has rows.
        assert!(
            !on.is_empty() || q.contains("JOIN e"),
            "{q} returned no rows"
        );
    }
    // What reached the shards.
    c.batch_execute("SET tessera.pushdown = on").await.unwrap();
    for (q, shard_sql) in [
        ("SELECT g, sum(d) FROM a GROUP BY g", "GROUP BY"),
        ("SELECT sum(b.v) FROM a JOIN b ON a.id = b.aid", "\"b_"),
        ("SELECT count(*) FROM a JOIN m ON a.g = m.g", "\"m_"),
        // A semi join on equalities: an uncorrelated IN, which MariaDB
        // runs as a semi-join; an anti join stays NOT EXISTS.
        (
            "SELECT count(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id)",
            "\"id\" IN (SELECT \"t2\".\"aid\"",
        ),
        (
            "SELECT count(*) FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.aid = a.id)",
            "NOT EXISTS (SELECT 1",
        ),
        ("SELECT id FROM a ORDER BY d LIMIT 3", "LIMIT 3"),
        (
            "SELECT aid, sum(v) FROM b GROUP BY aid HAVING sum(v) > 10",
            "GROUP BY 1) AS",
        ),
    ] {
        let scans = shard_queries(&c, q).await;
        assert!(
            scans.iter().any(|l| l.contains(shard_sql)),
            "{q}: no shard query with {shard_sql}: {scans:#?}"
        );
    }
    // Not pushed: a join that is not co-located, division, LIKE with an escape.
    for (q, not_in_shard_sql) in [
        ("SELECT count(*) FROM a JOIN b ON a.g = b.k", "\"b_"),
        ("SELECT sum(d / 3) FROM a", "SUM("),
        ("SELECT count(*) FROM a WHERE s LIKE 'a\\%'", "LIKE"),
    ] {
        let scans = shard_queries(&c, q).await;
        assert!(
            scans.iter().any(|l| l.contains("\"a_")),
            "{q}: no scan of a: {scans:#?}"
        );
        assert!(
            scans
                .iter()
                .all(|l| !l.contains("\"a_") || !l.contains(not_in_shard_sql)),
            "{q}: pushed what it must not: {scans:#?}"
        );
    }
    // The oracle side of the comparison above really is unpushed.
    c.batch_execute("SET tessera.pushdown = off").await.unwrap();
    let scans = shard_queries(&c, "SELECT g, sum(d) FROM a GROUP BY g").await;
    assert!(
        scans.iter().any(|l| l.contains("\"a_")) && scans.iter().all(|l| !l.contains("GROUP BY")),
        "pushdown off still pushed: {scans:#?}"
    );
    c.batch_execute("SET search_path = public; DROP SCHEMA pd CASCADE")
        .await
        .unwrap();
}
