//! Object identifiers Tessera shows for its catalog objects, the
//! `pg_catalog` tables there are, and the built-in types with PostgreSQL's
//! OIDs.
//!
//! OIDs are derived, never stored: a table's from its table id (so they
//! stay the same across catalog versions and nodes), its indexes' from
//! the table's, a schema's or role's from a hash of its name. PostgreSQL's
//! own fixed OIDs are kept: `pg_catalog` 11, `public` 2200, the built-in
//! types.

use common::SqlType;
use pgwire::api::Type;

pub const PG_CATALOG_NS: i64 = 11;
pub const PUBLIC_NS: i64 = 2200;
pub const INFORMATION_SCHEMA_NS: i64 = 13_000;
/// The database's OID (PostgreSQL's first user database is 16384 too;
/// `template1` is 1).
pub const DATABASE: i64 = 16_384;
pub const BTREE_AM: i64 = 403;
pub const HEAP_AM: i64 = 2;
pub const DEFAULT_COLLATION: i64 = 100;
/// `pg_class` OIDs of the catalogs objects belong to (`classoid` in
/// `pg_description`, `pg_depend`).
pub const PG_CLASS: i64 = 1259;
pub const PG_NAMESPACE: i64 = 2615;
pub const PG_CONSTRAINT: i64 = 2606;

/// Every `pg_catalog` table Tessera serves; a view's OID is numbered by
/// its place here (see [`catalog_relation`]).
pub const CATALOG_TABLES: &[&str] = &[
    "pg_namespace",
    "pg_class",
    "pg_attribute",
    "pg_attrdef",
    "pg_type",
    "pg_index",
    "pg_constraint",
    "pg_am",
    "pg_collation",
    "pg_database",
    "pg_roles",
    "pg_authid",
    "pg_user",
    "pg_auth_members",
    "pg_proc",
    "pg_description",
    "pg_shdescription",
    "pg_sequence",
    "pg_sequences",
    "pg_settings",
    "pg_tablespace",
    "pg_tables",
    "pg_indexes",
    "pg_views",
    "pg_inherits",
    "pg_partitioned_table",
    "pg_trigger",
    "pg_policy",
    "pg_statistic_ext",
    "pg_publication",
    "pg_publication_rel",
    "pg_publication_namespace",
    "pg_extension",
    "pg_enum",
    "pg_opclass",
    "pg_range",
    "pg_depend",
    "pg_rewrite",
    "pg_foreign_table",
    "pg_language",
    "pg_event_trigger",
    "pg_matviews",
    "pg_stat_activity",
    "tessera_moves",
];

/// A `pg_catalog` table's or view's OID: PostgreSQL's for the catalogs,
/// a fixed one below 16384 for the views.
pub fn catalog_relation(name: &str) -> Option<i64> {
    Some(match name {
        "pg_class" => PG_CLASS,
        "pg_type" => 1247,
        "pg_attribute" => 1249,
        "pg_proc" => 1255,
        "pg_namespace" => PG_NAMESPACE,
        "pg_database" => 1262,
        "pg_authid" => 1260,
        "pg_auth_members" => 1261,
        "pg_constraint" => PG_CONSTRAINT,
        "pg_description" => 2609,
        "pg_shdescription" => 2396,
        "pg_index" => 2610,
        "pg_am" => 2601,
        "pg_attrdef" => 2604,
        "pg_trigger" => 2620,
        "pg_rewrite" => 2618,
        "pg_inherits" => 2611,
        "pg_sequence" => 2224,
        "pg_collation" => 3456,
        "pg_tablespace" => 1213,
        "pg_depend" => 2608,
        "pg_extension" => 3079,
        "pg_enum" => 3501,
        "pg_opclass" => 2616,
        "pg_range" => 3541,
        "pg_policy" => 3256,
        "pg_statistic_ext" => 3381,
        "pg_publication" => 6104,
        "pg_publication_rel" => 6106,
        "pg_publication_namespace" => 6237,
        "pg_foreign_table" => 3118,
        "pg_language" => 2612,
        "pg_event_trigger" => 3466,
        "pg_partitioned_table" => 3350,
        other => {
            let i = CATALOG_TABLES.iter().position(|n| *n == other)?;
            12_000 + i as i64
        }
    })
}

const TABLE_BASE: i64 = 100_000;
/// Relation OIDs per table: the table, then its indexes (primary key
/// first).
const PER_TABLE: i64 = 64;
const SEQUENCE_BASE: i64 = 1_000_000_000;
const VIEW_BASE: i64 = 1_100_000_000;
const FOREIGN_KEY_BASE: i64 = 1_200_000_000;
const CONSTRAINT_OFFSET: i64 = 600_000_000;

fn name_hash(kind: &str, name: &str) -> i64 {
    // FNV-1a: stable across builds and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in kind.bytes().chain([0]).chain(name.bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Above every OID of tables and below 2^31.
    1_400_000_000 + (h % 700_000_000) as i64
}

pub fn namespace(name: &str) -> i64 {
    match name {
        "pg_catalog" => PG_CATALOG_NS,
        "public" => PUBLIC_NS,
        "information_schema" => INFORMATION_SCHEMA_NS,
        _ => name_hash("ns", name),
    }
}

pub fn role(name: &str) -> i64 {
    name_hash("role", name)
}

pub fn table(id: common::TableId) -> i64 {
    TABLE_BASE + id.0 as i64 * PER_TABLE
}

/// The `n`th index of a table (0: its primary key, when it has one).
pub fn index(id: common::TableId, n: usize) -> i64 {
    table(id) + 1 + (n as i64).min(PER_TABLE - 2)
}

/// The constraint an index implements (primary key, unique).
pub fn index_constraint(index_oid: i64) -> i64 {
    CONSTRAINT_OFFSET + index_oid
}

pub fn sequence(id: u64) -> i64 {
    SEQUENCE_BASE + id as i64
}

pub fn view(id: u64) -> i64 {
    VIEW_BASE + id as i64
}

pub fn foreign_key(id: u64) -> i64 {
    FOREIGN_KEY_BASE + id as i64
}

/// The wire type and type modifier of a column type (as PostgreSQL's
/// `atttypid` and `atttypmod`).
pub fn column_type(t: &SqlType) -> (i64, i32) {
    let oid = crate::pgtypes::pg_type(t).oid() as i64;
    let typmod = match t {
        SqlType::Char(n) | SqlType::Varchar(Some(n)) => *n as i32 + 4,
        SqlType::Numeric { precision, scale } => ((*precision as i32) << 16 | *scale as i32) + 4,
        _ => -1,
    };
    (oid, typmod)
}

/// PostgreSQL's `format_type(oid, typmod)`.
pub fn format_type(oid: i64, typmod: Option<i64>) -> Option<String> {
    let t = Type::from_oid(u32::try_from(oid).ok()?)?;
    if let postgres_types::Kind::Array(elem) = t.kind() {
        return format_type(elem.oid() as i64, typmod).map(|s| format!("{s}[]"));
    }
    let m = typmod.filter(|m| *m >= 0);
    Some(match oid {
        16 => "boolean".into(),
        18 => "\"char\"".into(),
        20 => "bigint".into(),
        21 => "smallint".into(),
        23 => "integer".into(),
        700 => "real".into(),
        701 => "double precision".into(),
        1042 => match m {
            Some(m) => format!("character({})", m - 4),
            None => "character".into(),
        },
        1043 => match m {
            Some(m) => format!("character varying({})", m - 4),
            None => "character varying".into(),
        },
        1083 => "time without time zone".into(),
        1114 => "timestamp without time zone".into(),
        1184 => "timestamp with time zone".into(),
        1266 => "time with time zone".into(),
        1700 => match m {
            Some(m) => format!("numeric({},{})", ((m - 4) >> 16) & 0xffff, (m - 4) & 0xffff),
            None => "numeric".into(),
        },
        _ => t.name().to_string(),
    })
}

/// A built-in type's `pg_type` facts: length, by value, category.
pub struct TypeFacts {
    pub oid: i64,
    pub name: String,
    pub len: i16,
    pub byval: bool,
    pub kind: &'static str,
    pub category: &'static str,
    pub elem: i64,
    pub array: i64,
    pub input: String,
    pub output: String,
}

/// Every built-in type pgwire knows (PostgreSQL's OIDs and names).
pub fn builtin_types() -> Vec<TypeFacts> {
    let all: Vec<Type> = (1..=20_000u32).filter_map(Type::from_oid).collect();
    let array_of = |oid: u32| {
        all.iter()
            .find(|a| matches!(a.kind(), postgres_types::Kind::Array(e) if e.oid() == oid))
            .map(|a| a.oid() as i64)
            .unwrap_or(0)
    };
    all.iter()
        .map(|t| {
            let (len, byval, category) = match t.oid() {
                16 => (1, true, "B"),
                18 => (1, true, "S"),
                19 => (64, false, "S"),
                20 => (8, true, "N"),
                21 => (2, true, "N"),
                23 | 26 | 24 | 2202..=2206 | 4089 | 4096 | 3734 | 3769 => (4, true, "N"),
                700 => (4, true, "N"),
                701 => (8, true, "N"),
                1700 => (-1, false, "N"),
                25 | 1042 | 1043 => (-1, false, "S"),
                1082 => (4, true, "D"),
                1083 | 1114 | 1184 => (8, true, "D"),
                1186 => (16, false, "T"),
                2950 => (16, false, "U"),
                17 => (-1, false, "U"),
                114 | 3802 => (-1, false, "U"),
                _ => (-1, false, "U"),
            };
            let (kind, category, elem) = match t.kind() {
                postgres_types::Kind::Array(e) => ("b", "A", e.oid() as i64),
                postgres_types::Kind::Pseudo => ("p", "P", 0),
                postgres_types::Kind::Range(_) | postgres_types::Kind::Multirange(_) => {
                    ("r", "R", 0)
                }
                _ => ("b", category, 0),
            };
            let (input, output) = if category == "A" {
                ("array_in".to_string(), "array_out".to_string())
            } else {
                (format!("{}in", t.name()), format!("{}out", t.name()))
            };
            TypeFacts {
                oid: t.oid() as i64,
                name: t.name().to_string(),
                len,
                byval,
                kind,
                category,
                elem,
                array: if category == "A" {
                    0
                } else {
                    array_of(t.oid())
                },
                input,
                output,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// pg_typeof's regtype OIDs name the types the catalog names.
    #[test]
    fn regtype_oids_are_the_catalogs() {
        for (name, oid) in crate::regtype::OIDS {
            assert_eq!(
                super::format_type(i64::from(*oid), None).as_deref(),
                Some(*name)
            );
        }
    }

    use super::*;

    #[test]
    fn types_format_as_postgresql_prints_them() {
        let f = |t: SqlType| {
            let (oid, m) = column_type(&t);
            format_type(oid, Some(m as i64)).unwrap()
        };
        assert_eq!(f(SqlType::Integer), "integer");
        assert_eq!(f(SqlType::Varchar(Some(20))), "character varying(20)");
        assert_eq!(f(SqlType::Char(3)), "character(3)");
        assert_eq!(
            f(SqlType::Numeric {
                precision: 12,
                scale: 2
            }),
            "numeric(12,2)"
        );
        assert_eq!(f(SqlType::TimestampTz), "timestamp with time zone");
        assert_eq!(format_type(1007, None).unwrap(), "integer[]");
        assert_eq!(format_type(25, None).unwrap(), "text");
    }

    #[test]
    fn builtin_types_have_their_arrays() {
        let all = builtin_types();
        let int4 = all.iter().find(|t| t.name == "int4").unwrap();
        assert_eq!((int4.oid, int4.array, int4.len), (23, 1007, 4));
        let arr = all.iter().find(|t| t.oid == 1007).unwrap();
        assert_eq!(
            (arr.name.as_str(), arr.elem, arr.category),
            ("_int4", 23, "A")
        );
    }

    #[test]
    fn object_oids_do_not_collide() {
        let t = common::TableId(7);
        assert!(index(t, 0) > table(t) && index(t, 61) < table(common::TableId(8)));
        assert!(index_constraint(index(common::TableId(1_000_000), 3)) < SEQUENCE_BASE * 2);
        assert_ne!(namespace("a"), namespace("b"));
    }
}
