//! Every `pg_catalog` and `information_schema` table over one sample
//! catalog: rows as wide as their columns, values of their columns' types.
//! And a dump of the tables (columns, their types and order, rows) and of
//! the catalog functions (result types, answers to a set of arguments):
//! a refactoring of this module must print the same before and after.

use std::fmt::Write;
use std::sync::Arc;

use common::{SqlType, TableId};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::prelude::SessionContext;
use meta::{
    Catalog, ColumnDef, Distribution, ForeignKeyDef, Identity, IndexDef, Role, SequenceDef,
    TableDef, ViewDef,
};

use super::batch::{Col, V};
use super::udf::CatalogFn;
use super::{oids, Snapshot};

fn col(name: &str, ty: SqlType, not_null: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        not_null,
        default: None,
        sequence: None,
        identity: None,
    }
}

/// Tables with every column type, serial, identity and defaulted
/// columns, a primary key and unique and plain indexes.
fn sample_tables() -> [TableDef; 3] {
    let t1 = TableDef {
        id: TableId(1),
        schema: "public".into(),
        name: "t1".into(),
        columns: vec![
            ColumnDef {
                sequence: Some(format!("{}public.t1_id_seq", meta::SEQUENCE_SOURCE_PREFIX)),
                ..col("id", SqlType::BigInt, true)
            },
            ColumnDef {
                default: Some("'x'::text".into()),
                ..col("v", SqlType::Varchar(Some(20)), false)
            },
            col(
                "n",
                SqlType::Numeric {
                    precision: 12,
                    scale: 2,
                },
                false,
            ),
            col("d", SqlType::Date, false),
            col("Quoted", SqlType::Char(3), false),
            col("user", SqlType::TimestampTz, false),
            col("txt", SqlType::Text, false),
            col("b", SqlType::Boolean, false),
            col("f", SqlType::Double, false),
            col("r", SqlType::Real, false),
            col("si", SqlType::SmallInt, false),
            col("ts", SqlType::Timestamp, false),
            col("by", SqlType::Bytea, false),
            col("vc", SqlType::Varchar(None), false),
        ],
        primary_key: vec!["id".into()],
        distribution: Distribution::Hash {
            columns: vec!["id".into()],
            partitions: 3,
        },
        indexes: vec![
            IndexDef {
                name: "t1_v_key".into(),
                columns: vec!["v".into()],
                unique: true,
            },
            IndexDef {
                name: "t1_nd".into(),
                columns: vec!["n".into(), "d".into()],
                unique: false,
            },
            IndexDef {
                name: "t1_u".into(),
                columns: vec!["Quoted".into()],
                unique: true,
            },
        ],
    };
    let t2 = TableDef {
        id: TableId(2),
        schema: "public".into(),
        name: "t2".into(),
        columns: vec![
            ColumnDef {
                identity: Some(Identity::Always),
                sequence: Some(format!("{}public.t2_k_seq", meta::SEQUENCE_SOURCE_PREFIX)),
                ..col("k", SqlType::Integer, true)
            },
            col("t1_id", SqlType::BigInt, false),
            col("t1_v", SqlType::Varchar(Some(20)), false),
        ],
        primary_key: vec!["k".into()],
        distribution: Distribution::Mirror,
        indexes: vec![],
    };
    let t3 = TableDef {
        id: TableId(3),
        schema: "s2".into(),
        name: "T3".into(),
        columns: vec![ColumnDef {
            sequence: Some(format!("{}s2.own_seq", meta::SEQUENCE_SOURCE_PREFIX)),
            ..col("a", SqlType::Integer, false)
        }],
        primary_key: vec![],
        distribution: Distribution::Single,
        indexes: vec![],
    };
    [t1, t2, t3]
}

fn sample() -> Snapshot {
    let mut c = Catalog {
        version: 7,
        ..Catalog::default()
    };
    c.schemas.insert("public".into());
    c.schemas.insert("s2".into());
    for t in sample_tables() {
        c.tables
            .insert((t.schema.clone(), t.name.clone()), Arc::new(t));
    }
    let seq = |id: u64, schema: &str, name: &str, owned_by: Option<(TableId, &str)>| SequenceDef {
        id,
        schema: schema.into(),
        name: name.into(),
        ty: if id == 2 {
            SqlType::Integer
        } else {
            SqlType::BigInt
        },
        increment: id as i64,
        min: 1,
        max: 1000 + id as i64,
        start: 1,
        cache: 1,
        cycle: id == 3,
        owned_by: owned_by.map(|(t, c)| (t, c.to_string())),
        generation: 0,
    };
    for s in [
        seq(1, "public", "t1_id_seq", Some((TableId(1), "id"))),
        seq(2, "public", "t2_k_seq", Some((TableId(2), "k"))),
        seq(3, "s2", "own_seq", None),
    ] {
        c.sequences
            .insert((s.schema.clone(), s.name.clone()), Arc::new(s));
    }
    c.foreign_keys.push(Arc::new(ForeignKeyDef {
        id: 1,
        table: TableId(2),
        name: "t2_t1_id_fkey".into(),
        columns: vec!["t1_id".into()],
        ref_table: TableId(1),
        ref_columns: vec!["id".into()],
        on_delete: "cascade".into(),
        on_update: "".into(),
        enforcement: meta::Enforcement::Shards,
    }));
    c.foreign_keys.push(Arc::new(ForeignKeyDef {
        id: 2,
        table: TableId(2),
        name: "t2_t1_v_fkey".into(),
        columns: vec!["t1_v".into()],
        ref_table: TableId(1),
        ref_columns: vec!["v".into()],
        on_delete: "SET NULL".into(),
        on_update: "restrict".into(),
        enforcement: meta::Enforcement::Recorded,
    }));
    for v in [
        ViewDef {
            id: 1,
            schema: "public".into(),
            name: "v1".into(),
            definition: "SELECT id, v FROM public.t1".into(),
            columns: vec!["id".into(), "v".into(), "n".into(), "arr".into()],
            type_oids: vec![20, 1043, 1700, 1007],
            reads: vec![("public".into(), "t1".into())],
        },
        ViewDef {
            id: 2,
            schema: "s2".into(),
            name: "v2".into(),
            definition: "SELECT 1".into(),
            columns: vec!["x".into(), "j".into()],
            type_oids: vec![25, 114],
            reads: vec![],
        },
    ] {
        c.views
            .insert((v.schema.clone(), v.name.clone()), Arc::new(v));
    }
    c.roles.insert(
        "alice".into(),
        Role {
            superuser: false,
            login: true,
        },
    );
    c.roles.insert(
        "grp".into(),
        Role {
            superuser: false,
            login: false,
        },
    );
    c.owners.insert(TableId(2), "alice".into());
    c.comments
        .insert(("table".into(), 1, String::new()), "the t1".into());
    c.comments
        .insert(("table".into(), 1, "v".into()), "a v".into());
    c.comments
        .insert(("table".into(), 9, String::new()), "gone".into());
    c.comments
        .insert(("sequence".into(), 3, String::new()), "own".into());
    Snapshot {
        catalog: Arc::new(c),
        schema: "public".into(),
        user: "tessera".into(),
        database: "db".into(),
        pid: 42,
        router: None,
    }
}

fn dump_table(out: &mut String, schema: &str, name: &str, t: Option<super::batch::Table>) {
    let Some((cols, rows)) = t else {
        writeln!(out, "== {schema}.{name}: none").unwrap();
        return;
    };
    writeln!(out, "== {schema}.{name}").unwrap();
    for (n, c) in cols {
        writeln!(out, "  {n}: {c:?}").unwrap();
    }
    // The node's sessions change while the tests run.
    if name == "pg_stat_activity" {
        return;
    }
    for r in rows {
        writeln!(out, "  {r:?}").unwrap();
    }
}

fn arg_sets(sn: &Snapshot) -> Vec<Vec<ScalarValue>> {
    let i = |x: i64| ScalarValue::Int64(Some(x));
    let t = |x: &str| ScalarValue::Utf8(Some(x.into()));
    let mut oid_list: Vec<i64> = vec![0, 11, 23, 25, 1007, 1043, 1259, 12_040, 16_384, -5];
    for t in sn.tables() {
        oid_list.push(oids::table(t.id));
        for n in 0..4 {
            oid_list.push(oids::index(t.id, n));
            oid_list.push(oids::index_constraint(oids::index(t.id, n)));
        }
    }
    for id in 1..=3 {
        oid_list.push(oids::sequence(id));
        oid_list.push(oids::view(id));
        oid_list.push(oids::foreign_key(id));
    }
    for s in sn.schemas() {
        oid_list.push(oids::namespace(&s));
    }
    for (r, _) in sn.roles() {
        oid_list.push(oids::role(&r));
    }
    let texts = [
        "t1",
        "public.t1",
        "s2.\"T3\"",
        "s2.T3",
        "\"T3\"",
        "T1",
        "t1_pkey",
        "t1_v_key",
        "v1",
        "s2.v2",
        "t1_id_seq",
        "s2.own_seq",
        "pg_class",
        "pg_catalog.pg_type",
        "pg_stat_activity",
        "public.pg_class",
        "int4",
        "integer",
        "int",
        "pg_catalog.int8",
        "varchar(3)",
        "bool",
        "nosuch",
        "a.b.c",
        "\"x",
        "",
        "123",
        "user",
        "Abc",
    ];
    let mut sets: Vec<Vec<ScalarValue>> = vec![
        vec![],
        vec![ScalarValue::Int64(None)],
        vec![ScalarValue::Utf8(None)],
        vec![ScalarValue::Boolean(Some(true))],
        vec![ScalarValue::Boolean(Some(false))],
        vec![i(6)],
        vec![i(8192)],
        vec![i(123_456_789)],
        vec![i(-10 * 1024 * 1024 * 1024)],
    ];
    for o in &oid_list {
        sets.push(vec![i(*o)]);
        sets.push(vec![t(&o.to_string())]);
        for n in [0, 1, 2, 3] {
            sets.push(vec![i(*o), i(n)]);
        }
        sets.push(vec![i(*o), t("pg_class")]);
        sets.push(vec![i(*o), t("pg_namespace")]);
        sets.push(vec![i(*o), i(-1)]);
    }
    for x in texts {
        sets.push(vec![t(x)]);
        for c in ["id", "ID", "k", "a", "nosuch"] {
            sets.push(vec![t(x), t(c)]);
        }
    }
    let int_list = ScalarValue::List(ScalarValue::new_list_nullable(
        &[
            ScalarValue::Int32(Some(4)),
            ScalarValue::Int32(None),
            ScalarValue::Int32(Some(6)),
        ],
        &DataType::Int32,
    ));
    let text_list = ScalarValue::List(ScalarValue::new_list_nullable(
        &[t("a"), ScalarValue::Utf8(None), t("c")],
        &DataType::Utf8,
    ));
    let empty = ScalarValue::List(ScalarValue::new_list_nullable(&[], &DataType::Int32));
    for l in [&int_list, &text_list, &empty] {
        sets.push(vec![l.clone()]);
        sets.push(vec![l.clone(), i(1)]);
        sets.push(vec![l.clone(), i(2)]);
        sets.push(vec![t("p_"), l.clone()]);
    }
    sets.push(vec![
        t("a"),
        i(1),
        t("b"),
        t("x\"y"),
        t("c"),
        ScalarValue::Null,
    ]);
    sets.push(vec![t("a"), i(1), t("b")]);
    sets.push(vec![t("a"), ScalarValue::Boolean(Some(true))]);
    sets
}

fn dump_functions(out: &mut String, sn: &Arc<Snapshot>) {
    let ctx = SessionContext::new();
    let before: Vec<String> = ctx.state().scalar_functions().keys().cloned().collect();
    super::funcs::register(&ctx, sn);
    let state = ctx.state();
    let mut names: Vec<&String> = state.scalar_functions().keys().collect();
    names.sort();
    let sets = arg_sets(sn);
    for name in names {
        let udf = &state.scalar_functions()[name];
        let Some(f) = udf.inner().downcast_ref::<CatalogFn>() else {
            continue;
        };
        writeln!(
            out,
            "== fn {name} (replaces a built-in: {}) -> {:?}, text arg -> {:?}, {:?}",
            before.contains(name),
            f.ret,
            f.text_arg.as_ref().map(|(t, _)| t),
            f.signature,
        )
        .unwrap();
        let mut bodies = vec![("", &f.body)];
        if let Some((_, b)) = &f.text_arg {
            bodies.push(("text ", b));
        }
        for (kind, body) in bodies {
            for args in &sets {
                let r = match body(sn, args) {
                    Ok(v) => format!("{v:?}"),
                    Err(e) => format!("error {e}"),
                };
                writeln!(out, "  {kind}{args:?} = {r}").unwrap();
            }
        }
    }
}

fn dump() -> String {
    let sn = Arc::new(sample());
    let mut out = String::new();
    for name in super::oids::CATALOG_TABLES {
        dump_table(&mut out, "pg_catalog", name, sn.table(name));
    }
    for name in super::info::NAMES {
        dump_table(&mut out, "information_schema", name, sn.info_table(name));
    }
    for name in ["pg_nosuch", "tables", "columns"] {
        dump_table(&mut out, "pg_catalog", name, sn.table(name));
    }
    for name in ["pg_class", "nosuch"] {
        dump_table(&mut out, "information_schema", name, sn.info_table(name));
    }
    writeln!(
        out,
        "names {:?} {:?}",
        super::oids::CATALOG_TABLES,
        super::info::NAMES
    )
    .unwrap();
    dump_functions(&mut out, &sn);
    out
}

/// Whether a value fits its column's type (else the column shows NULL).
fn fits(v: &V, c: Col) -> bool {
    matches!(
        (v, c),
        (V::N, _)
            | (
                V::I(_) | V::B(_),
                Col::Oid | Col::I16 | Col::I32 | Col::I64 | Col::Ts
            )
            | (V::F(_) | V::I(_), Col::F32)
            | (V::B(_), Col::Bool)
            | (V::S(_), Col::Text)
            | (V::A(_), Col::TextArr)
            | (
                V::IA(_),
                Col::I16Arr | Col::OidArr | Col::I16Vec | Col::OidVec
            )
    )
}

/// Every table's rows are as wide as its columns, every value fits its
/// column, and no column name is repeated.
#[test]
fn rows_match_their_columns() {
    let sn = sample();
    let all = oids::CATALOG_TABLES
        .iter()
        .map(|n| (n, sn.table(n)))
        .chain(super::info::NAMES.iter().map(|n| (n, sn.info_table(n))));
    for (name, t) in all {
        let (cols, rows) = t.unwrap_or_else(|| panic!("no table {name}"));
        let mut names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), cols.len(), "{name}: a column name repeated");
        for r in &rows {
            assert_eq!(r.len(), cols.len(), "{name}: {r:?}");
            for (v, (c, ty)) in r.iter().zip(cols.iter()) {
                assert!(fits(v, *ty), "{name}.{c}: {v:?} is no {ty:?}");
            }
        }
        super::batch::batch(cols, &rows).unwrap();
    }
}

/// The dump, written to the file `TESSERA_PGCATALOG_DUMP` names: run it
/// before and after a change (`cargo test -p compute --lib catalog_dump
/// -- --ignored`) and compare. Ignored by default: it takes seconds.
#[test]
#[ignore]
fn catalog_dump() {
    let d = dump();
    assert!(d.contains("== pg_catalog.pg_class\n"));
    if let Ok(path) = std::env::var("TESSERA_PGCATALOG_DUMP") {
        std::fs::write(path, d).unwrap();
    }
}
