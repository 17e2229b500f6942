//! The planner fuzzer: random and mutated statements through the parser,
//! the limits and the planner against an in-memory catalog. Whatever the
//! text, the answer is a plan or an error, never a panic or a hang.

use std::sync::Arc;

use common::{ShardId, SqlType, TableId};
use meta::{Catalog, ColumnDef, Distribution, TableDef};
use proptest::prelude::*;

pub(super) fn catalog() -> Catalog {
    let col = |name: &str, ty: SqlType, not_null: bool| ColumnDef {
        name: name.into(),
        ty,
        not_null,
        default: None,
        sequence: None,
        identity: None,
    };
    let mut c = Catalog::default();
    c.schemas.insert("public".into());
    let endpoint = |port| common::config::MysqlEndpoint {
        host: "127.0.0.1".into(),
        port,
        user: "tessera".into(),
        password: String::new(),
    };
    let mut placement = meta::Placement::new(1, (1..=3).map(|i| (ShardId(i), endpoint(3306))));
    // Both tables have id 7 (their physical names carry it): one layout.
    placement.set_layout(TableId(7), vec![ShardId(1), ShardId(2), ShardId(3)]);
    c.placement = Arc::new(placement);
    for (name, dist) in [
        (
            "t",
            Distribution::Hash {
                columns: vec!["id".into()],
                partitions: 3,
            },
        ),
        ("m", Distribution::Mirror),
    ] {
        c.tables.insert(
            ("public".into(), name.into()),
            Arc::new(TableDef {
                id: TableId(7),
                schema: "public".into(),
                name: name.into(),
                columns: vec![
                    col("id", SqlType::BigInt, true),
                    col("v", SqlType::Text, false),
                    col(
                        "n",
                        SqlType::Numeric {
                            precision: 12,
                            scale: 2,
                        },
                        false,
                    ),
                    col("d", SqlType::Date, false),
                ],
                primary_key: vec!["id".into()],
                distribution: dist,
                indexes: vec![],
            }),
        );
    }
    c
}

const SEEDS: &[&str] = &[
    "SELECT id, v FROM t WHERE id = $1",
    "SELECT count(*), sum(n), min(v) FROM t WHERE id IN ($1, 2, 3) AND v > 'a'",
    "SELECT v FROM t WHERE id BETWEEN $1 AND $2 ORDER BY id LIMIT $3",
    "UPDATE t SET v = $2, n = n + 1 WHERE id = $1",
    "DELETE FROM t WHERE id = 5 AND v = 'x' OR NOT id <> 4",
    "INSERT INTO t (id, v, n, d) VALUES ($1, 'a''b', 1.5, '2024-01-01'), (2, E'\\\\', -3, NULL)",
    "SELECT * FROM m WHERE id = 1 FOR UPDATE NOWAIT",
    "SELECT DISTINCT v FROM t WHERE d >= '2024-01-01' AND n IS NOT NULL",
    "SET transaction_isolation = 'serializable'",
    "BEGIN ISOLATION LEVEL REPEATABLE READ",
    "COPY t (id, v) FROM STDIN WITH (FORMAT csv)",
    "SELECT t.v FROM t WHERE t.id = -9223372036854775808",
];
const FRAGMENTS: &[&str] = &[
    "'",
    "\"",
    "\\",
    "$1",
    "$70000",
    "(",
    ")",
    ";",
    "--",
    " OR ",
    " AND ",
    "NULL",
    "é",
    "\u{0}",
    "9223372036854775808",
    "-",
    "::int",
    "E'\\'",
    ",",
    " IN (",
    "count(",
    "*",
    "1e400",
    "'NaN'",
    "'\\x4'",
    " FROM ",
    " WHERE ",
    "id",
    "$0",
];

fn statement() -> impl Strategy<Value = String> {
    (
        0..SEEDS.len(),
        proptest::collection::vec(
            (any::<usize>(), 0..FRAGMENTS.len(), 0u8..3, 0usize..40),
            0..6,
        ),
    )
        .prop_map(|(seed, edits)| {
            let mut s: Vec<char> = SEEDS[seed].chars().collect();
            for (at, frag, kind, n) in edits {
                let at = at % (s.len() + 1);
                match kind {
                    0 => {
                        s.splice(at..at, FRAGMENTS[frag].chars());
                    }
                    1 => {
                        let end = (at + n % 8).min(s.len());
                        s.drain(at..end);
                    }
                    _ => {
                        let end = (at + n % 12).min(s.len());
                        let span: Vec<char> = s[at..end].to_vec();
                        for _ in 0..n {
                            s.splice(at..at, span.iter().copied());
                        }
                    }
                }
            }
            s.into_iter().collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn planning_never_panics(sql in statement()) {
        let cat = catalog();
        if let Ok(stmts) = crate::parse::parse_sql(&sql) {
            for stmt in &stmts {
                let _ = crate::plan::Planner {
                    catalog: &cat,
                    schema: "public",
                    client_types: &[],
                }
                .plan(stmt);
            }
        }
    }
}
