//! Undoing a move (issue 33): a copy made wrong under the fence
//! (`TESSERA_MOVE_CORRUPT=1`) fails the check after the switch, and the
//! move is undone while writers run: the partition is back on its source
//! with the source's rows (not the wrong copy's) and every write
//! acknowledged since the switch. Then the same with the mover killed
//! while undoing: recovery leaves the move as switched, and `tessera
//! cluster undo-move` undoes it.

use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mysql_async::prelude::*;
use tests::TestCluster;

const ROWS: i64 = 600;

/// Runs `tessera cluster <args>` on the test cluster with `env` set;
/// returns whether it succeeded and what it printed.
pub(crate) async fn run_cli(
    cluster: &TestCluster,
    args: &[&str],
    env: &[(&'static str, &'static str)],
) -> (bool, String) {
    let (dir, bin) = (cluster.dir.clone(), cluster.bin.clone());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env = env.to_vec();
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(&bin);
        cmd.arg("cluster").args(&args).arg("--data-dir").arg(&dir);
        cmd.env_remove("TESSERA_MOVE_CRASH")
            .env_remove("TESSERA_MOVE_CORRUPT");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run tessera cluster");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        println!("tessera cluster {}: {}", args.join(" "), text.trim_end());
        (out.status.success(), text)
    })
    .await
    .expect("join")
}

/// Writers of `grow_undo`: each adds one to `w` of its own rows, one
/// autocommit statement at a time. Returns, per id, the increments
/// acknowledged and those whose outcome is unknown (an error other than
/// "not done": 40001, or 42P01 while a killed mover left the slot
/// without its table).
struct Writers {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<HashMap<i64, (i64, i64)>>>,
}

/// `skip`: the row the test corrupts, left alone (a row clients change
/// after the switch is carried back whole, as the wrong copy had it).
async fn start_writers(cluster: &TestCluster, skip: i64) -> Writers {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = vec![];
    for w in 0..3i64 {
        let c = cluster
            .connect(w as usize % cluster.role("compute").len())
            .await;
        let stop = stop.clone();
        tasks.push(tokio::spawn(async move {
            let mut counts: HashMap<i64, (i64, i64)> = HashMap::new();
            let mut id = w + 1;
            while !stop.load(Ordering::Relaxed) {
                if id == skip {
                    id += 3;
                    continue;
                }
                let e = counts.entry(id).or_default();
                match c
                    .execute("UPDATE grow_undo SET w = w + 1 WHERE id = $1", &[&id])
                    .await
                {
                    Ok(1) => e.0 += 1,
                    Ok(n) => panic!("update of id {id} touched {n} rows"),
                    Err(err) => {
                        let state = err.code().map(|s| s.code().to_string());
                        if !matches!(state.as_deref(), Some("40001" | "42P01")) {
                            e.1 += 1;
                        }
                    }
                }
                id += 3;
                if id > ROWS {
                    id = w + 1;
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
            counts
        }));
    }
    Writers { stop, tasks }
}

/// The slot's shard now, and a shard it is not on.
async fn slot_and_target(cluster: &TestCluster, slot: u32) -> (u32, u32) {
    let mut meta = cluster.meta_conn().await;
    let shards: Vec<u32> = meta
        .query("SELECT shard_id FROM shards ORDER BY shard_id")
        .await
        .expect("shards");
    let on: u32 = meta
        .exec_first(
            "SELECT p.shard_id FROM cat_partitions p JOIN cat_tables t ON t.table_id = p.table_id \
             WHERE t.table_name = 'grow_undo' AND p.partition_no = ?",
            (slot,),
        )
        .await
        .expect("layout")
        .expect("slot");
    let to = *shards.iter().find(|s| **s != on).expect("another shard");
    (on, to)
}

/// The first id (in key order) of `grow_undo`'s slot 0, on shard `on`:
/// the row `TESSERA_MOVE_CORRUPT` changes.
async fn first_row_of_slot0(cluster: &TestCluster, on: u32) -> i64 {
    let node = cluster
        .role("shard")
        .into_iter()
        .find(|n| n.name == format!("shard{on}"))
        .expect("the slot's shard");
    let mut conn = tests::mysql_conn(&node).await;
    let (db, table): (String, String) = conn
        .query_first(
            "SELECT table_schema, table_name FROM information_schema.tables              WHERE table_name LIKE 'grow\\_undo\\_%\\_p0'",
        )
        .await
        .expect("slot 0's table")
        .expect("slot 0's table on its shard");
    conn.query_first(format!("SELECT MIN(id) FROM `{db}`.`{table}`"))
        .await
        .expect("first row")
        .expect("a row in slot 0")
}

/// The last move's id and phase.
async fn last_move(cluster: &TestCluster) -> (u64, String) {
    let mut meta = cluster.meta_conn().await;
    meta.query_first("SELECT move_id, phase FROM partition_moves ORDER BY move_id DESC LIMIT 1")
        .await
        .expect("moves")
        .expect("a move")
}

pub(crate) async fn undo_moves(cluster: &TestCluster) {
    let c = cluster.connect(0).await;
    c.batch_execute(&format!(
        "DROP TABLE IF EXISTS grow_undo;
         CREATE TABLE grow_undo (id bigint PRIMARY KEY, v bigint NOT NULL, w bigint NOT NULL) WITH (partitions = 6);
         INSERT INTO grow_undo SELECT g, g * 10, 0 FROM generate_series(1, {ROWS}) g;"
    ))
    .await
    .expect("create grow_undo");
    move_by_sql(cluster, &c).await;
    let (on, to) = slot_and_target(cluster, 0).await;
    let writers = start_writers(cluster, first_row_of_slot0(cluster, on).await).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // 1. The check after the switch fails: undone at once.
    let (to_s, slot) = (to.to_string(), "0");
    let move_args = [
        "move",
        "--table",
        "grow_undo",
        "--partition",
        slot,
        "--to",
        &to_s,
    ];
    let (ok, out) = run_cli(cluster, &move_args, &[("TESSERA_MOVE_CORRUPT", "1")]).await;
    assert!(!ok, "a move with a wrong copy succeeded: {out}");
    assert!(out.contains("undone"), "{out}");
    let (id, phase) = last_move(cluster).await;
    assert_eq!(phase, "reversed", "move {id}");
    assert_eq!(
        slot_and_target(cluster, 0).await.0,
        on,
        "not back on shard {on}"
    );
    // 2. The mover killed while undoing, then undone by the operator.
    let (ok, out) = run_cli(
        cluster,
        &move_args,
        &[
            ("TESSERA_MOVE_CORRUPT", "1"),
            ("TESSERA_MOVE_CRASH", "undo_renamed"),
        ],
    )
    .await;
    assert!(!ok, "{out}");
    let (id, _) = last_move(cluster).await;
    // A compute node's recovery round (each second) restores it.
    let mut phase = String::new();
    for _ in 0..100 {
        phase = last_move(cluster).await.1;
        if phase == "unverified" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        phase, "unverified",
        "move {id} after its mover died undoing it"
    );
    assert_eq!(
        slot_and_target(cluster, 0).await.0,
        to,
        "recovery left the map"
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (ok, out) = run_cli(cluster, &["undo-move", &id.to_string()], &[]).await;
    assert!(ok, "undo-move failed: {out}");
    assert_eq!(last_move(cluster).await.1, "reversed");
    assert_eq!(slot_and_target(cluster, 0).await.0, on);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    writers.stop.store(true, Ordering::Relaxed);
    let mut counts: HashMap<i64, (i64, i64)> = HashMap::new();
    for t in writers.tasks {
        counts.extend(t.await.expect("writer"));
    }
    check_rows(&c, &counts).await;
    check_copies_dropped(cluster, id).await;
    c.batch_execute("DROP TABLE grow_undo").await.expect("drop");
}

/// A move asked for in SQL: `tessera_move_partition` moves slot 1 and
/// says so; `tessera_undo_move` of it is refused once its retired copy
/// is dropped (at once by default).
async fn move_by_sql(cluster: &TestCluster, c: &tokio_postgres::Client) {
    let (_, to) = slot_and_target(cluster, 1).await;
    let row = c
        .query_one(
            "SELECT tessera_move_partition('public.grow_undo', 1, $1::int)",
            &[&(to as i32)],
        )
        .await
        .expect("tessera_move_partition");
    let text: String = row.get(0);
    assert!(text.contains("verified"), "{text}");
    assert_eq!(slot_and_target(cluster, 1).await.0, to, "{text}");
    let (id, phase) = last_move(cluster).await;
    assert_eq!(phase, "done");
    let err = c
        .query_one("SELECT tessera_undo_move($1)", &[&(id as i64)])
        .await
        .expect_err("an undo without a retired copy");
    assert_eq!(err.code().map(|s| s.code()), Some("0A000"), "{err:?}");
    let busy = c
        .batch_execute("BEGIN; SELECT tessera_undo_move(1); COMMIT")
        .await
        .expect_err("in a transaction block");
    assert_eq!(busy.code().map(|s| s.code()), Some("25001"), "{busy:?}");
    c.batch_execute("ROLLBACK").await.expect("rollback");
}

/// Every row has the source's `v` (the wrong copy's change was not
/// carried back) and every acknowledged increment of `w`.
async fn check_rows(c: &tokio_postgres::Client, counts: &HashMap<i64, (i64, i64)>) {
    let rows = c
        .query("SELECT id, v, w FROM grow_undo ORDER BY id", &[])
        .await
        .expect("rows");
    assert_eq!(rows.len() as i64, ROWS);
    let mut acknowledged = 0;
    for r in rows {
        let (id, v, w): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
        assert_eq!(v, id * 10, "row {id} kept the wrong copy's value");
        let (acked, unknown) = counts.get(&id).copied().unwrap_or_default();
        assert!(
            w >= acked && w <= acked + unknown,
            "row {id}: w = {w}, {acked} increments acknowledged, {unknown} unknown"
        );
        acknowledged += acked;
    }
    println!(
        "undo: {acknowledged} increments acknowledged, all present; no wrong value carried back"
    );
}

/// The wrong copies (`*_m<id>` on the move's target) are dropped by the
/// orphan sweep once the undo committed.
async fn check_copies_dropped(cluster: &TestCluster, id: u64) {
    let pattern = format!("%\\_m{id}");
    for _ in 0..100 {
        let mut left = 0;
        for n in cluster.role("shard") {
            let mut conn = tests::mysql_conn(&n).await;
            let found: Vec<String> = conn
                .exec(
                    "SELECT table_name FROM information_schema.tables WHERE table_name LIKE ?",
                    (&pattern,),
                )
                .await
                .expect("tables");
            left += found.len();
        }
        if left == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("move {id}'s copies are still on the shards after 20 s");
}
