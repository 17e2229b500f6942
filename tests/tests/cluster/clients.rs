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
            .query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'tsr_public' AND table_name LIKE 'pgbench\\_accounts\\_%\\_p_'")
            .await
            .unwrap();
        assert_eq!(names.len(), 1, "shard {s}: {names:?}");
        let n: Option<i64> = conn
            .query_first(format!("SELECT COUNT(*) FROM `tsr_public`.`{}`", names[0]))
            .await
            .unwrap();
        assert!(n.unwrap() > 0, "shard {s} holds no accounts");
        total += n.unwrap();
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
