//! Golden plan tests, like Vitess's plan test data: every statement of
//! `testdata/plans.sql` planned offline against an in-memory catalog;
//! its kind, parameter types, route (resolved with the given parameters)
//! and the SQL each partition's shard receives must match
//! `testdata/plans.golden`. `TESSERA_BLESS=1` rewrites the golden file
//! after an intended change (review its diff).

use std::fmt::Write;

use common::Datum;
use shard_router::route::{KeyValue, Route, RoutePlan};

use super::{Plan, PlanKind, Planner};

pub(crate) fn params_of(list: &str) -> Vec<Datum> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| match s.parse::<i64>() {
            Ok(i) => Datum::Int(i),
            Err(_) => Datum::Text(s.trim_matches('\'').to_string()),
        })
        .collect()
}

fn route_plan(r: &RoutePlan) -> String {
    match r {
        RoutePlan::Keys(cols) => {
            let cols: Vec<String> = cols
                .iter()
                .map(|vals| {
                    let vals: Vec<String> = vals
                        .iter()
                        .map(|v| match v {
                            KeyValue::Param(i) => format!("${}", i + 1),
                            KeyValue::Literal(e) => e.to_string(),
                        })
                        .collect();
                    format!("[{}]", vals.join(", "))
                })
                .collect();
            format!("keys {}", cols.join(" "))
        }
        RoutePlan::Scatter => "scatter".into(),
        RoutePlan::Mirror => "mirror".into(),
        RoutePlan::Single => "single".into(),
    }
}

/// The partitions a route names, in order.
fn partitions(route: &Route, count: u32) -> Vec<u32> {
    match route {
        Route::SinglePartition(p) => vec![*p],
        Route::Partitions(v) => v.clone(),
        Route::Scatter | Route::Mirror => (0..count).collect(),
    }
}

pub(crate) fn describe(placement: &meta::Placement, plan: &Plan, params: &[Datum]) -> String {
    let mut out = String::new();
    let kind = match &plan.kind {
        PlanKind::FastSelect(_) => "fast select",
        PlanKind::Write(_) => "write",
        PlanKind::Insert(_) => "insert",
        PlanKind::DataFusion(..) => "datafusion",
        PlanKind::CopyIn(_) => "copy in",
        PlanKind::CopyOut(..) => "copy out",
        PlanKind::Begin { .. } => "begin",
        PlanKind::Set { .. } | PlanKind::Reset(_) => "set",
        PlanKind::Show { .. } => "show",
        PlanKind::ReadWrite(_) => "two steps",
        _ => "other",
    };
    let _ = writeln!(out, "kind: {kind} ({})", plan.tag);
    if !plan.param_types.is_empty() {
        let types: Vec<&str> = plan.param_types.iter().map(|t| t.name()).collect();
        let _ = writeln!(out, "params: {}", types.join(", "));
    }
    if !plan.fields.is_empty() {
        let cols: Vec<String> = plan
            .fields
            .iter()
            .map(|(n, t)| format!("{n} {}", t.name()))
            .collect();
        let _ = writeln!(out, "columns: {}", cols.join(", "));
    }
    let (table, route, sql) = match &plan.kind {
        PlanKind::FastSelect(p) => (&p.table, &p.route, &p.sql),
        PlanKind::Write(p) => (&p.table, &p.route, &p.sql),
        PlanKind::Insert(p) => {
            let _ = writeln!(out, "rows: {} into {}", p.rows.len(), p.table.name);
            return out;
        }
        PlanKind::Set { name, value } => {
            let _ = writeln!(out, "set: {name} = {value}");
            return out;
        }
        _ => return out,
    };
    let resolved = route.resolve(table, params);
    let _ = writeln!(
        out,
        "route: {} -> {}",
        route_plan(route),
        match &resolved {
            Ok(r) => format!("{r:?}"),
            Err(e) => format!("error {}", e.sqlstate().code()),
        }
    );
    if let Ok(r) = resolved {
        let mut parts = partitions(&r, placement.partition_count(table).unwrap_or(0));
        // A read of a mirror table goes to one copy (the node's own pick).
        if r == Route::Mirror && matches!(plan.kind, PlanKind::FastSelect(_)) {
            parts.truncate(1);
            let _ = writeln!(out, "  (any one copy)");
        }
        for p in parts {
            let (text, order) = &sql[p as usize];
            let order: Vec<String> = order.iter().map(|i| format!("${}", i + 1)).collect();
            let _ = writeln!(
                out,
                "  p{p} on shard {}: {text}{}",
                placement.layout(table.id)[p as usize].0,
                if order.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", order.join(", "))
                }
            );
        }
    }
    out
}

fn golden_text() -> String {
    let input = include_str!("../../testdata/plans.sql");
    let cat = super::fuzz::catalog();
    let mut out = String::new();
    for line in input.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (sql, params) = match line.split_once(" -- ") {
            Some((s, p)) => (s.trim(), params_of(p)),
            None => (line, vec![]),
        };
        let _ = writeln!(out, "> {line}");
        let planned = crate::parse::parse_sql(sql).and_then(|mut stmts| {
            let stmt = stmts
                .pop()
                .ok_or_else(|| common::Error::internal("empty"))?;
            Planner {
                catalog: &cat,
                schema: "public",
                client_types: &[],
            }
            .plan(&stmt)
        });
        match planned {
            Ok(plan) => out.push_str(&describe(&cat.placement, &plan, &params)),
            Err(e) => {
                let _ = writeln!(out, "error {}: {e}", e.sqlstate().code());
            }
        }
        out.push('\n');
    }
    out
}

/// Compares `actual` with the golden file at `path` (rewrites it instead
/// with `TESSERA_BLESS` set), naming the first line that differs.
pub(crate) fn assert_golden(path: &str, actual: &str) {
    if std::env::var("TESSERA_BLESS").is_ok() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "plans differ from {path} at line {}:\n  expected: {:?}\n  actual:   {:?}\n(TESSERA_BLESS=1 rewrites the file after an intended change)",
            first + 1,
            expected.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

#[test]
fn plans_match_the_golden_file() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/plans.golden");
    assert_golden(path, &golden_text());
}
