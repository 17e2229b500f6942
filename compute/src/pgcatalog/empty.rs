//! The `pg_catalog` tables of objects Tessera does not have (functions,
//! triggers, policies, publications, extensions, ...): PostgreSQL 15's
//! columns, and no rows.

use super::batch::{Col::*, Cols};

/// The columns of an always-empty `pg_catalog` table.
pub(super) fn columns(name: &str) -> Option<Cols> {
    TABLES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, cols)| *cols)
}

const TABLES: &[(&str, Cols)] = &[
    ("pg_auth_members", PG_AUTH_MEMBERS),
    ("pg_proc", PG_PROC),
    ("pg_shdescription", PG_SHDESCRIPTION),
    ("pg_matviews", PG_MATVIEWS),
    ("pg_inherits", PG_INHERITS),
    ("pg_partitioned_table", PG_PARTITIONED_TABLE),
    ("pg_trigger", PG_TRIGGER),
    ("pg_policy", PG_POLICY),
    ("pg_statistic_ext", PG_STATISTIC_EXT),
    ("pg_publication", PG_PUBLICATION),
    ("pg_publication_rel", PG_PUBLICATION_REL),
    ("pg_publication_namespace", PG_PUBLICATION_NAMESPACE),
    ("pg_extension", PG_EXTENSION),
    ("pg_enum", PG_ENUM),
    ("pg_opclass", PG_OPCLASS),
    ("pg_range", PG_RANGE),
    ("pg_rewrite", PG_REWRITE),
    ("pg_foreign_table", PG_FOREIGN_TABLE),
    ("pg_event_trigger", PG_EVENT_TRIGGER),
];

const PG_AUTH_MEMBERS: Cols = &[
    ("roleid", Oid),
    ("member", Oid),
    ("grantor", Oid),
    ("admin_option", Bool),
];

const PG_PROC: Cols = &[
    ("oid", Oid),
    ("proname", Text),
    ("pronamespace", Oid),
    ("proowner", Oid),
    ("prolang", Oid),
    ("procost", F32),
    ("prorows", F32),
    ("provariadic", Oid),
    ("prosupport", Text),
    ("prokind", Text),
    ("prosecdef", Bool),
    ("proleakproof", Bool),
    ("proisstrict", Bool),
    ("proretset", Bool),
    ("provolatile", Text),
    ("proparallel", Text),
    ("pronargs", I16),
    ("pronargdefaults", I16),
    ("prorettype", Oid),
    ("proargtypes", OidVec),
    ("proallargtypes", OidArr),
    ("proargmodes", TextArr),
    ("proargnames", TextArr),
    ("proargdefaults", Text),
    ("protrftypes", OidArr),
    ("prosrc", Text),
    ("probin", Text),
    ("prosqlbody", Text),
    ("proconfig", TextArr),
    ("proacl", TextArr),
];

const PG_SHDESCRIPTION: Cols = &[("objoid", Oid), ("classoid", Oid), ("description", Text)];

const PG_MATVIEWS: Cols = &[
    ("schemaname", Text),
    ("matviewname", Text),
    ("matviewowner", Text),
    ("tablespace", Text),
    ("hasindexes", Bool),
    ("ispopulated", Bool),
    ("definition", Text),
];

const PG_INHERITS: Cols = &[
    ("inhrelid", Oid),
    ("inhparent", Oid),
    ("inhseqno", I32),
    ("inhdetachpending", Bool),
];

const PG_PARTITIONED_TABLE: Cols = &[
    ("partrelid", Oid),
    ("partstrat", Text),
    ("partnatts", I16),
    ("partdefid", Oid),
    ("partattrs", I16Vec),
    ("partclass", OidVec),
    ("partcollation", OidVec),
    ("partexprs", Text),
];

const PG_TRIGGER: Cols = &[
    ("oid", Oid),
    ("tgrelid", Oid),
    ("tgparentid", Oid),
    ("tgname", Text),
    ("tgfoid", Oid),
    ("tgtype", I16),
    ("tgenabled", Text),
    ("tgisinternal", Bool),
    ("tgconstrrelid", Oid),
    ("tgconstrindid", Oid),
    ("tgconstraint", Oid),
    ("tgdeferrable", Bool),
    ("tginitdeferred", Bool),
    ("tgnargs", I16),
    ("tgattr", I16Vec),
    ("tgargs", Text),
    ("tgqual", Text),
    ("tgoldtable", Text),
    ("tgnewtable", Text),
];

const PG_POLICY: Cols = &[
    ("oid", Oid),
    ("polname", Text),
    ("polrelid", Oid),
    ("polcmd", Text),
    ("polpermissive", Bool),
    ("polroles", OidArr),
    ("polqual", Text),
    ("polwithcheck", Text),
];

const PG_STATISTIC_EXT: Cols = &[
    ("oid", Oid),
    ("stxrelid", Oid),
    ("stxname", Text),
    ("stxnamespace", Oid),
    ("stxowner", Oid),
    ("stxstattarget", I32),
    ("stxkeys", I16Vec),
    ("stxkind", TextArr),
    ("stxexprs", Text),
];

const PG_PUBLICATION: Cols = &[
    ("oid", Oid),
    ("pubname", Text),
    ("pubowner", Oid),
    ("puballtables", Bool),
    ("pubinsert", Bool),
    ("pubupdate", Bool),
    ("pubdelete", Bool),
    ("pubtruncate", Bool),
    ("pubviaroot", Bool),
];

const PG_PUBLICATION_REL: Cols = &[
    ("oid", Oid),
    ("prpubid", Oid),
    ("prrelid", Oid),
    ("prqual", Text),
    ("prattrs", I16Arr),
];

const PG_PUBLICATION_NAMESPACE: Cols = &[("oid", Oid), ("pnpubid", Oid), ("pnnspid", Oid)];

const PG_EXTENSION: Cols = &[
    ("oid", Oid),
    ("extname", Text),
    ("extowner", Oid),
    ("extnamespace", Oid),
    ("extrelocatable", Bool),
    ("extversion", Text),
    ("extconfig", OidArr),
    ("extcondition", TextArr),
];

const PG_ENUM: Cols = &[
    ("oid", Oid),
    ("enumtypid", Oid),
    ("enumsortorder", F32),
    ("enumlabel", Text),
];

const PG_OPCLASS: Cols = &[
    ("oid", Oid),
    ("opcmethod", Oid),
    ("opcname", Text),
    ("opcnamespace", Oid),
    ("opcowner", Oid),
    ("opcfamily", Oid),
    ("opcintype", Oid),
    ("opcdefault", Bool),
    ("opckeytype", Oid),
];

const PG_RANGE: Cols = &[
    ("rngtypid", Oid),
    ("rngsubtype", Oid),
    ("rngmultitypid", Oid),
    ("rngcollation", Oid),
    ("rngsubopc", Oid),
    ("rngcanonical", Text),
    ("rngsubdiff", Text),
];

const PG_REWRITE: Cols = &[
    ("oid", Oid),
    ("rulename", Text),
    ("ev_class", Oid),
    ("ev_type", Text),
    ("ev_enabled", Text),
    ("is_instead", Bool),
    ("ev_qual", Text),
    ("ev_action", Text),
];

const PG_FOREIGN_TABLE: Cols = &[("ftrelid", Oid), ("ftserver", Oid), ("ftoptions", TextArr)];

const PG_EVENT_TRIGGER: Cols = &[
    ("oid", Oid),
    ("evtname", Text),
    ("evtevent", Text),
    ("evtowner", Oid),
    ("evtfoid", Oid),
    ("evtenabled", Text),
    ("evttags", TextArr),
];
