//! The `regtype` values Tessera produces (`pg_typeof`'s answers): a type's
//! name as text, its OID in binary. Below both the function
//! (`crate::pgtypeof`) and the wire encoder (`crate::pgtypes`).

/// The OIDs of the type names `pg_typeof` gives (`crate::pgtypeof`).
pub const OIDS: &[(&str, u32)] = &[
    ("boolean", 16),
    ("bytea", 17),
    ("bigint", 20),
    ("smallint", 21),
    ("integer", 23),
    ("text", 25),
    ("real", 700),
    ("double precision", 701),
    ("unknown", 705),
    ("character", 1042),
    ("character varying", 1043),
    ("date", 1082),
    ("time without time zone", 1083),
    ("timestamp without time zone", 1114),
    ("timestamp with time zone", 1184),
    ("interval", 1186),
    ("numeric", 1700),
    ("regtype", 2206),
];

/// The OID of a type named as `pg_typeof` names it (a regtype's binary
/// form).
pub fn oid_of(name: &str) -> Option<u32> {
    OIDS.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)
}
