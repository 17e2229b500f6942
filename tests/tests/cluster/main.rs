//! The one integration test binary: starts a 3 compute + 3 shard cluster once
//! and runs every scenario against it, then stops it; then failover runs on
//! a cluster of its own (3 shards with 2 replicas each). Scenarios live in
//! modules by concern: placement and DDL, the protocol, execution, transactions,
//! faults and limits, pushdown, security, failover, and the `.slt` files.

mod clients;
mod crash_xa;
mod execution;
mod external;
mod failover;
mod faults;
mod growth;
mod held;
mod placement;
mod protocol;
mod pushdown;
mod rejoin;
mod security;
mod slt;
mod snapshots;
mod transactions;
mod undo;

use std::collections::HashMap;
use std::path::PathBuf;

use mysql_async::prelude::*;
use tests::{PgDb, TestCluster};

use clients::*;
use execution::*;
use faults::*;
use growth::*;
use held::*;
use placement::*;
use protocol::*;
use pushdown::*;
use security::*;
use slt::*;
use snapshots::*;
use transactions::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_suite() {
    // TESSERA_SCENARIO=name runs just the scenarios of that name.
    let only = std::env::var("TESSERA_SCENARIO").ok();
    if only.as_deref() != Some("failover") {
        main_suite(only.as_deref()).await;
    }
    if only.as_deref().is_none_or(|o| o == "failover") {
        let t = std::time::Instant::now();
        failover::failover().await;
        println!("step failover: {:.1} s", t.elapsed().as_secs_f64());
    }
}

/// Every scenario but failover, on one 3 compute + 3 shard cluster.
async fn main_suite(only: Option<&str>) {
    let cluster = TestCluster::start(3, 3);
    // TESSERA_FUZZ_ONLY=1 runs just the wire fuzzer (to replay a seed).
    if std::env::var("TESSERA_FUZZ_ONLY").is_ok() {
        wire_fuzz(&cluster).await;
        return;
    }
    // Each scenario's time, so a slow CI run shows where it went.
    macro_rules! step {
        ($name:expr, $e:expr) => {{
            if only.is_none_or(|o| o == $name) {
                let t = std::time::Instant::now();
                $e;
                println!("step {}: {:.1} s", $name, t.elapsed().as_secs_f64());
            }
        }};
    }
    step!("garbage_bytes", garbage_bytes(&cluster).await);
    step!("placement", placement(&cluster).await);
    step!("ddl_across_nodes", ddl_across_nodes(&cluster).await);
    step!("extended_protocol", extended_protocol(&cluster).await);
    step!(
        "plans_once_and_streams",
        plans_once_and_streams(&cluster).await
    );
    step!(
        "statements_compiled_once_per_node",
        statements_compiled_once_per_node(&cluster).await
    );
    step!(
        "disconnect_mid_transaction",
        disconnect_mid_transaction(&cluster).await
    );
    step!("cancel_request", cancel_request(&cluster).await);
    step!("for_update_locks", for_update_locks(&cluster).await);
    step!("isolation_levels", isolation_levels(&cluster).await);
    step!("abandoned_reads", abandoned_reads(&cluster).await);
    step!("kept_snapshots", kept_snapshots(&cluster).await);
    step!("held_reads", held_reads(&cluster).await);
    step!(
        "shards_over_local_sockets",
        shards_over_local_sockets(&cluster).await
    );
    step!("consistent_reads", consistent_reads(&cluster).await);
    step!(
        "pushdown_matches_datafusion",
        pushdown_matches_datafusion(&cluster).await
    );
    step!(
        "sysbench_statements_match_mariadb",
        sysbench_statements_match_mariadb(&cluster).await
    );
    step!(
        "simple_protocol_shapes",
        simple_protocol_shapes(&cluster).await
    );
    let before = shard_databases(&cluster).await;
    step!("run_slt", run_slt(&cluster).await);
    step!("safety", safety(&cluster).await);
    // No statement a client sent created or dropped a database on a shard
    // outside what the catalog made (the slt files drop their schemas).
    let after = shard_databases(&cluster).await;
    assert_eq!(before, after, "shard databases changed behind the catalog");
    step!("least_privilege", least_privilege(&cluster).await);
    step!("pgbench", pgbench(&cluster).await);
    step!("psql_copy", psql_copy(&cluster).await);
    step!("psql_meta_commands", psql_meta_commands(&cluster).await);
    step!("unix_socket", unix_socket(&cluster).await);
    step!("python_drivers", python_drivers(&cluster).await);
    step!("jdbc", jdbc(&cluster).await);
    step!(
        "ddl_with_a_shard_down",
        ddl_with_a_shard_down(&cluster).await
    );
    step!("session_limits", session_limits(&cluster).await);
    step!("roles_and_privileges", roles_and_privileges(&cluster).await);
    step!("meta_down", meta_down(&cluster).await);
    step!("bind_format_codes", bind_format_codes(&cluster).await);
    step!("wire_fuzz", wire_fuzz(&cluster).await);
    step!(
        "bank_under_faults",
        bank_under_faults(&cluster, Victim::Compute).await
    );
    step!(
        "bank_under_faults",
        bank_under_faults(&cluster, Victim::Shard).await
    );
    step!(
        "lost_prepare_after_crash",
        crash_xa::lost_prepare_after_crash(&cluster).await
    );
    step!(
        "single_writer_commit_is_logged",
        crash_xa::single_writer_commit_is_logged(&cluster).await
    );
    // Last: it leaves the cluster on shards 1, 2 and 4.
    step!("online_growth", online_growth(&cluster).await);
}
