//! Golden distributed plans, checked without a cluster (like Vitess's
//! `planbuilder/testdata` and DataFusion's `tpch/plans`): the 22 TPC-H
//! queries (`benches/tpch/queries`) and sysbench's statements
//! (`testdata/distributed.sql`) planned against fake tables, the TPC-H
//! schema of `benches/tpch/schema.sql` and sysbench's `sbtest1`, placed
//! on three shards. Each statement goes the product's way
//! (`plan_statement`, then the session's execution context with the
//! pushdown rule and DataFusion's physical planner, through a
//! [`Router::offline`](shard_router::Router::offline) that never
//! connects) and is never run; its kind, routes and, for DataFusion
//! statements, the physical plan and the SQL each shard receives (as
//! EXPLAIN renders them) must match `testdata/distributed.golden`.
//! `TESSERA_BLESS=1` rewrites the golden file after an intended change
//! (review its diff). The pushdown unit tests below assert the shard SQL
//! of single rewrites.

use std::fmt::Write;
use std::sync::Arc;

use common::{Datum, ShardId, TableId};
use datafusion::sql::sqlparser::ast::Statement;
use meta::{Catalog, IndexDef, Placement};
use shard_router::Router;

use super::df::{execution_context, physical_lines, run, Ran};
use crate::plan::df::Scope;
use crate::plan::PlanKind;

const TPCH_SCHEMA: &str = include_str!("../../../benches/tpch/schema.sql");

/// sbtest1 as sysbench's pgsql driver creates it (hash on the primary
/// key, the cluster's default), with its secondary index `k_1`.
const SYSBENCH_SCHEMA: &str = "CREATE TABLE sbtest1 (id serial, k integer DEFAULT 0 NOT NULL, c char(120) DEFAULT '' NOT NULL, pad char(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))";

/// A table with two partitions on each shard: the fast path reads a
/// shard's partitions in one statement (UNION ALL).
const WIDE_SCHEMA: &str = "CREATE TABLE wide (id bigint PRIMARY KEY, v int) WITH (partitions = 6)";

const TPCH_QUERIES: [&str; 22] = [
    include_str!("../../../benches/tpch/queries/q1.sql"),
    include_str!("../../../benches/tpch/queries/q2.sql"),
    include_str!("../../../benches/tpch/queries/q3.sql"),
    include_str!("../../../benches/tpch/queries/q4.sql"),
    include_str!("../../../benches/tpch/queries/q5.sql"),
    include_str!("../../../benches/tpch/queries/q6.sql"),
    include_str!("../../../benches/tpch/queries/q7.sql"),
    include_str!("../../../benches/tpch/queries/q8.sql"),
    include_str!("../../../benches/tpch/queries/q9.sql"),
    include_str!("../../../benches/tpch/queries/q10.sql"),
    include_str!("../../../benches/tpch/queries/q11.sql"),
    include_str!("../../../benches/tpch/queries/q12.sql"),
    include_str!("../../../benches/tpch/queries/q13.sql"),
    include_str!("../../../benches/tpch/queries/q14.sql"),
    include_str!("../../../benches/tpch/queries/q15.sql"),
    include_str!("../../../benches/tpch/queries/q16.sql"),
    include_str!("../../../benches/tpch/queries/q17.sql"),
    include_str!("../../../benches/tpch/queries/q18.sql"),
    include_str!("../../../benches/tpch/queries/q19.sql"),
    include_str!("../../../benches/tpch/queries/q20.sql"),
    include_str!("../../../benches/tpch/queries/q21.sql"),
    include_str!("../../../benches/tpch/queries/q22.sql"),
];

fn statement(sql: &str) -> Statement {
    let mut stmts = crate::parse::parse_sql(sql).unwrap();
    assert_eq!(stmts.len(), 1, "{sql}");
    stmts.pop().unwrap()
}

/// The TPC-H tables, sbtest1 and `wide`, made from their CREATE TABLE
/// statements as the product makes them (`plan::ddl::table_def`, the
/// placement map's policy for new tables): six hash-partitioned TPC-H
/// tables and sbtest1 with one partition per shard, nation and region
/// mirrored on every shard, `wide` with six partitions over the three
/// shards.
pub(crate) fn catalog() -> Catalog {
    let mut c = Catalog::default();
    c.schemas.insert("public".into());
    let endpoint = |i: u32| common::config::MysqlEndpoint {
        host: format!("shard{i}.invalid"),
        port: 3306,
        user: "tessera".into(),
        password: String::new(),
    };
    let mut placement = Placement::new(1, (1..=3).map(|i| (ShardId(i), endpoint(i))));
    let ddl = TPCH_SCHEMA
        .lines()
        .filter(|l| !l.trim().is_empty())
        .chain([SYSBENCH_SCHEMA, WIDE_SCHEMA]);
    for (i, sql) in ddl.enumerate() {
        let Statement::CreateTable(ct) = statement(sql) else {
            panic!("not a CREATE TABLE: {sql}");
        };
        c.placement = Arc::new(placement.clone());
        let (mut def, layout) = crate::plan::ddl::table_def(
            &ct,
            "public",
            &c,
            common::config::DefaultDistribution::Hash,
            // One partition per shard, as clusters made them before the
            // default became four per shard: the plans' shapes are what
            // these files pin, and `wide` covers several per shard.
            Some(3),
        )
        .unwrap();
        def.id = TableId(100 + i as u64);
        if def.name == "sbtest1" {
            def.indexes.push(IndexDef {
                name: "k_1".into(),
                columns: vec!["k".into()],
                unique: false,
            });
        }
        placement.set_layout(def.id, layout);
        c.tables
            .insert((def.schema.clone(), def.name.clone()), Arc::new(def));
    }
    c.placement = Arc::new(placement);
    c
}

pub(crate) fn scope() -> Scope {
    Scope {
        schema: "public".into(),
        user: "tessera".into(),
        database: "tessera".into(),
        pid: 1,
    }
}

/// The physical plan of a DataFusion statement as the session would run
/// it (pushdown on, the default), with its parameters bound.
pub(crate) async fn physical_plan(
    router: &Arc<Router>,
    logical: datafusion::logical_expr::LogicalPlan,
    params: &[Datum],
) -> common::Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
    let ctx = execution_context(router, &scope(), true)?;
    let now = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
    match run(&ctx, logical, params, &[], now).await? {
        Ran::Plan(physical, _) => Ok(physical),
        Ran::Explained(_) | Ran::Analyze(..) => Err(common::Error::internal("an EXPLAIN")),
    }
}

/// One statement's entry: its kind, routes and shard SQL as the plan
/// golden file shows them; for a DataFusion statement its physical plan
/// and `shard_scans:` as EXPLAIN shows them.
async fn describe(router: &Arc<Router>, sql: &str, params: &[Datum]) -> String {
    let stmt = statement(sql);
    let plan = match crate::plan::prepare::plan_statement(router, &scope(), &stmt, &[]).await {
        Ok(p) => p,
        Err(e) => return format!("error {}: {e}\n", e.sqlstate().code()),
    };
    describe_plan(router, &plan, params).await
}

/// [`describe`] of a planned statement; a two-step UPDATE/DELETE shows its
/// step 1 (the rows read FOR UPDATE) and the per-slot SQL of its step 2
/// (the writes by key, parameters from step 1's rows).
async fn describe_plan(router: &Arc<Router>, plan: &crate::plan::Plan, params: &[Datum]) -> String {
    let mut out = crate::plan::golden::describe(&router.placement(), plan, params);
    if let PlanKind::ReadWrite(rw) = &plan.kind {
        if let Some(step1) = &rw.prepared {
            let _ = writeln!(out, "step 1, rows read FOR UPDATE:");
            let inner = Box::pin(describe_plan(router, step1, params)).await;
            for l in inner.lines() {
                let _ = writeln!(out, "  {l}");
            }
        }
        use crate::plan::readwrite::Action;
        let (what, write) = match &rw.action {
            Action::Delete(w) => ("delete by key", w),
            Action::Update { set, .. } => ("update by key", set),
            Action::Move(w) => ("delete by key, then insert the new row", w),
        };
        let _ = writeln!(out, "step 2, {what}:");
        for (p, (text, order)) in write.sql.iter().enumerate() {
            let order: Vec<String> = order.iter().map(|i| format!("${}", i + 1)).collect();
            let _ = writeln!(out, "  p{p}: {text}  [{}]", order.join(", "));
        }
    }
    if let (PlanKind::DataFusion(..), Some(lp)) = (&plan.kind, &plan.logical) {
        match physical_plan(router, (**lp).clone(), params).await {
            Ok(physical) => {
                for l in physical_lines(&physical, false, false) {
                    let _ = writeln!(out, "{l}");
                }
            }
            Err(e) => {
                let _ = writeln!(out, "error {}: {e}", e.sqlstate().code());
            }
        }
    }
    out
}

async fn golden_text() -> String {
    let router = Router::offline(catalog(), 1).unwrap();
    let mut out = String::new();
    for (i, q) in TPCH_QUERIES.iter().enumerate() {
        let sql = q.trim().trim_end_matches(';');
        let _ = writeln!(out, "> TPC-H q{}\n{sql}", i + 1);
        out.push_str(&describe(&router, sql, &[]).await);
        out.push('\n');
    }
    let input = include_str!("../../testdata/distributed.sql");
    for line in input.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (sql, params) = match line.split_once(" -- ") {
            Some((s, p)) => (s.trim(), crate::plan::golden::params_of(p)),
            None => (line, vec![]),
        };
        let _ = writeln!(out, "> {line}");
        out.push_str(&describe(&router, sql, &params).await);
        out.push('\n');
    }
    out
}

#[tokio::test]
async fn distributed_plans_match_the_golden_file() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/distributed.golden");
    let actual = golden_text().await;
    // Planned twice, alike: nothing in the text depends on addresses,
    // timing or hash-map order.
    assert_eq!(actual, golden_text().await);
    crate::plan::golden::assert_golden(path, &actual);
}

/// Pushdown unit tests: single rewrites of the `ShardPushdown` rule (and
/// the scans' own filter and projection pushdown), asserted on the SQL
/// each shard receives. Statements go to DataFusion directly (not through
/// the planner's fast path), so they test the distributed path alone.
mod pushdown {
    use super::*;

    /// The SQL each shard receives for `sql`, `shardN: ...`, scan by scan.
    async fn shard_sql(sql: &str) -> Vec<String> {
        let router = Router::offline(catalog(), 1).unwrap();
        let ctx = execution_context(&router, &scope(), true).unwrap();
        let logical = crate::plan::df::logical_plan(&ctx, &statement(sql))
            .await
            .unwrap();
        let physical = physical_plan(&router, logical, &[]).await.unwrap();
        shard_router::dist::shard_scans(&physical)
            .into_iter()
            .map(|s| format!("{}: {}", s.shard, s.sql))
            .collect()
    }

    /// Every scan's queries, one per shard, all alike but for the
    /// partition; returns shard 1's.
    fn first_of_three(scans: &[String], partition_table: &str) -> String {
        assert_eq!(scans.len(), 3, "{scans:#?}");
        for (i, s) in scans.iter().enumerate() {
            assert!(s.starts_with(&format!("shard{}: ", i + 1)), "{s}");
            let same = scans[0].replace("shard1: ", "").replace(
                &format!("{partition_table}_p0"),
                &format!("{partition_table}_p{i}"),
            );
            assert_eq!(s[8..], same, "{scans:#?}");
        }
        scans[0][8..].to_string()
    }

    #[tokio::test]
    async fn filter_and_projection_go_to_every_shard() {
        let scans = shard_sql("SELECT c FROM sbtest1 WHERE k > 5 AND id < 1000").await;
        // Filters are pushed inexact (DataFusion checks them again), so
        // their columns are read too.
        assert_eq!(
            first_of_three(&scans, "sbtest1_108"),
            r#"SELECT "id", "k", "c" FROM "tsr_public"."sbtest1_108_p0" WHERE ("k" > 5) AND ("id" < 1000)"#
        );
    }

    #[tokio::test]
    async fn equality_on_the_partition_key_reads_one_shard() {
        let scans = shard_sql("SELECT c FROM sbtest1 WHERE id = 42 AND k > 5").await;
        assert_eq!(
            scans,
            [
                r#"shard2: SELECT "id", "k", "c" FROM "tsr_public"."sbtest1_108_p1" WHERE ("id" = 42) AND ("k" > 5)"#
            ]
        );
    }

    #[tokio::test]
    async fn aggregates_are_split_into_partial_ones_per_shard() {
        let scans = shard_sql(
            "SELECT l_returnflag, count(*), sum(l_quantity), avg(l_discount) FROM lineitem GROUP BY l_returnflag",
        )
        .await;
        // avg travels as SUM and COUNT of its argument; the node merges.
        assert_eq!(
            first_of_three(&scans, "lineitem_105"),
            r#"SELECT "t1"."l_returnflag" AS "c0", COUNT(*) AS "c1", SUM("t1"."l_quantity") AS "c2", SUM("t1"."l_discount") AS "c3", COUNT("t1"."l_discount") AS "c4" FROM "tsr_public"."lineitem_105_p0" AS "t1" GROUP BY 1"#
        );
    }

    #[tokio::test]
    async fn order_by_limit_is_a_top_n_per_shard() {
        let scans = shard_sql(
            "SELECT o_orderkey, o_totalprice FROM orders ORDER BY o_totalprice DESC LIMIT 5",
        )
        .await;
        // PostgreSQL's DESC puts NULLs first, MariaDB's last: said out loud.
        assert_eq!(
            first_of_three(&scans, "orders_104"),
            r#"SELECT "t1"."o_orderkey" AS "c0", "t1"."o_totalprice" AS "c1" FROM "tsr_public"."orders_104_p0" AS "t1" ORDER BY ("t1"."o_totalprice" IS NULL) DESC, "t1"."o_totalprice" DESC LIMIT 5"#
        );
    }

    #[tokio::test]
    async fn a_join_of_co_located_tables_on_their_key_is_pushed() {
        let scans = shard_sql(
            "SELECT o_orderkey, l_quantity FROM orders JOIN lineitem ON l_orderkey = o_orderkey WHERE l_quantity > 10",
        )
        .await;
        let first = first_of_three(
            &scans
                .iter()
                .map(|s| {
                    s.replace("lineitem_105_p1", "lineitem_105_p0")
                        .replace("lineitem_105_p2", "lineitem_105_p0")
                })
                .collect::<Vec<_>>(),
            "orders_104",
        );
        assert_eq!(
            first,
            r#"SELECT "t1"."o_orderkey" AS "c0", "t2"."l_quantity" AS "c1" FROM "tsr_public"."orders_104_p0" AS "t1", "tsr_public"."lineitem_105_p0" AS "t2" WHERE ("t2"."l_quantity" > 10.00) AND ("t1"."o_orderkey" = "t2"."l_orderkey")"#
        );
        // Partition i of one table meets partition i of the other.
        assert!(scans[2].contains("orders_104_p2") && scans[2].contains("lineitem_105_p2"));
    }

    #[tokio::test]
    async fn a_join_with_a_mirror_table_is_pushed() {
        let scans = shard_sql(
            "SELECT c_name, n_name FROM customer JOIN nation ON c_nationkey = n_nationkey",
        )
        .await;
        assert_eq!(
            first_of_three(&scans, "customer_103"),
            r#"SELECT "t1"."c_name" AS "c0", "t2"."n_name" AS "c1" FROM "tsr_public"."customer_103_p0" AS "t1", "tsr_public"."nation_106" AS "t2" WHERE ("t1"."c_nationkey" = "t2"."n_nationkey")"#
        );
    }

    #[tokio::test]
    async fn a_join_off_the_partition_key_is_not_pushed() {
        let scans = shard_sql(
            "SELECT o_orderkey, c_name FROM orders JOIN customer ON o_custkey = c_custkey",
        )
        .await;
        // Two plain scans; DataFusion joins their rows on the node.
        assert_eq!(
            first_of_three(&scans[..3], "orders_104"),
            r#"SELECT "o_orderkey", "o_custkey" FROM "tsr_public"."orders_104_p0""#
        );
        assert_eq!(
            first_of_three(&scans[3..], "customer_103"),
            r#"SELECT "c_custkey", "c_name" FROM "tsr_public"."customer_103_p0""#
        );
    }
}
