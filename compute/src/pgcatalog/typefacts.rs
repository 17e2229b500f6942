//! `information_schema.columns`' facts of a column type (`data_type`,
//! lengths, precisions, `udt_name`), from a catalog type or, for a view's
//! columns, a wire type.

use common::SqlType;

use super::batch::V;

fn yes(b: bool) -> V {
    if b { "YES" } else { "NO" }.into()
}

/// `data_type` to `udt_name` of a column (`type_facts` and the octet
/// length between the length and the precision).
pub(super) type Facts = (String, V, V, V, V, V, V, String);

/// The facts of a view column, from its wire type.
pub(super) fn oid_facts(oid: u32) -> Facts {
    use pgwire::api::Type;
    let ty = Type::from_oid(oid);
    let sql = ty.as_ref().and_then(crate::pgtypes::sql_type_of);
    match (sql, ty) {
        (Some(sql), _) => {
            let (dt, len, prec, radix, scale, dtp, udt) = type_facts(&sql);
            let octets = if matches!(sql, SqlType::Text | SqlType::Varchar(None)) {
                V::I(1_073_741_824)
            } else {
                V::N
            };
            (dt, len, octets, prec, radix, scale, dtp, udt.to_string())
        }
        // numeric without a typmod: no precision or scale, as PostgreSQL.
        (None, Some(t)) if t == Type::NUMERIC => (
            "numeric".into(),
            V::N,
            V::N,
            V::N,
            V::I(10),
            V::N,
            V::N,
            "numeric".into(),
        ),
        (None, t) => (
            match &t {
                Some(t) if matches!(t.kind(), postgres_types::Kind::Array(_)) => "ARRAY".into(),
                _ => super::oids::format_type(oid as i64, None)
                    .unwrap_or_else(|| "USER-DEFINED".into()),
            },
            V::N,
            V::N,
            V::N,
            V::N,
            V::N,
            V::N,
            t.map(|t| t.name().to_string()).unwrap_or_default(),
        ),
    }
}

/// One row of `information_schema.columns`.
pub(super) fn column_row(
    database: &str,
    (schema, table, name, i): (&str, &str, &str, usize),
    default: V,
    nullable: bool,
    (dt, len, octets, prec, radix, scale, dtp, udt): Facts,
    updatable: bool,
    identity: Option<(meta::Identity, &meta::SequenceDef)>,
) -> Vec<V> {
    let db = || V::from(database);
    let mut row = vec![
        db(),
        schema.into(),
        table.into(),
        name.into(),
        V::I(i as i64 + 1),
        default,
        yes(nullable),
        dt.into(),
        len,
        octets,
        prec,
        radix,
        scale,
        dtp,
    ];
    row.extend(std::iter::repeat_n(V::N, 11));
    row.extend([db(), "pg_catalog".into(), udt.into()]);
    row.extend(std::iter::repeat_n(V::N, 4));
    row.extend([V::S((i + 1).to_string()), "NO".into()]);
    match identity {
        Some((how, s)) => row.extend([
            "YES".into(),
            match how {
                meta::Identity::Always => "ALWAYS",
                meta::Identity::ByDefault => "BY DEFAULT",
            }
            .into(),
            V::S(s.start.to_string()),
            V::S(s.increment.to_string()),
            V::S(s.max.to_string()),
            V::S(s.min.to_string()),
            yes(s.cycle),
        ]),
        None => row.extend(["NO".into(), V::N, V::N, V::N, V::N, V::N, "NO".into()]),
    }
    row.extend(["NEVER".into(), V::N, yes(updatable)]);
    row
}

/// `data_type`, `character_maximum_length`, `numeric_precision`,
/// `numeric_precision_radix`, `numeric_scale`, `datetime_precision`,
/// `udt_name` of a column type.
pub(super) fn type_facts(t: &SqlType) -> (String, V, V, V, V, V, &'static str) {
    let n = V::N;
    match t {
        SqlType::SmallInt => (
            "smallint".into(),
            n,
            V::I(16),
            V::I(2),
            V::I(0),
            V::N,
            "int2",
        ),
        SqlType::Integer => (
            "integer".into(),
            n,
            V::I(32),
            V::I(2),
            V::I(0),
            V::N,
            "int4",
        ),
        SqlType::BigInt => ("bigint".into(), n, V::I(64), V::I(2), V::I(0), V::N, "int8"),
        SqlType::Numeric { precision, scale } => (
            "numeric".into(),
            n,
            V::I(*precision as i64),
            V::I(10),
            V::I(*scale as i64),
            V::N,
            "numeric",
        ),
        SqlType::Real => ("real".into(), n, V::I(24), V::I(2), V::N, V::N, "float4"),
        SqlType::Double => (
            "double precision".into(),
            n,
            V::I(53),
            V::I(2),
            V::N,
            V::N,
            "float8",
        ),
        SqlType::Boolean => ("boolean".into(), n, V::N, V::N, V::N, V::N, "bool"),
        SqlType::Char(l) => (
            "character".into(),
            V::I(*l as i64),
            V::N,
            V::N,
            V::N,
            V::N,
            "bpchar",
        ),
        SqlType::Varchar(l) => (
            "character varying".into(),
            l.map(|l| V::I(l as i64)).unwrap_or(V::N),
            V::N,
            V::N,
            V::N,
            V::N,
            "varchar",
        ),
        SqlType::Text => ("text".into(), n, V::N, V::N, V::N, V::N, "text"),
        SqlType::Date => ("date".into(), n, V::N, V::N, V::N, V::I(0), "date"),
        SqlType::Timestamp => (
            "timestamp without time zone".into(),
            n,
            V::N,
            V::N,
            V::N,
            V::I(6),
            "timestamp",
        ),
        SqlType::TimestampTz => (
            "timestamp with time zone".into(),
            n,
            V::N,
            V::N,
            V::N,
            V::I(6),
            "timestamptz",
        ),
        SqlType::Bytea => ("bytea".into(), n, V::N, V::N, V::N, V::N, "bytea"),
    }
}
