//! The `pg_catalog` tables, made from one catalog snapshot: PostgreSQL
//! 15's columns, Tessera's objects as rows (its own partitions are not
//! relations of their own), empty where Tessera has no such objects.

use meta::TableDef;

use super::batch::{Col, Col::*, V};
use super::oids;
use super::relations::{PG_ATTRIBUTE, PG_CLASS, PG_CONSTRAINT, PG_INDEX, PG_ROLES, PG_TYPE};
use super::Snapshot;

/// A table's columns and rows.
pub type Table = (&'static [(&'static str, Col)], Vec<Vec<V>>);

/// Every `pg_catalog` table Tessera serves.
pub const NAMES: &[&str] = &[
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
];

/// One index as `pg_class` and `pg_index` show it.
pub struct Index<'a> {
    pub oid: i64,
    pub name: String,
    pub table: &'a TableDef,
    pub columns: Vec<String>,
    pub unique: bool,
    pub primary: bool,
    /// Whether a constraint (PRIMARY KEY, UNIQUE) made it.
    pub constraint: bool,
}

/// A table's indexes: its primary key first (`<table>_pkey`), then the
/// others.
pub fn indexes(t: &TableDef) -> Vec<Index<'_>> {
    let mut out = vec![];
    if !t.primary_key.is_empty() {
        out.push(Index {
            oid: oids::index(t.id, 0),
            name: format!("{}_pkey", t.name),
            table: t,
            columns: t.primary_key.clone(),
            unique: true,
            primary: true,
            constraint: true,
        });
    }
    for ix in &t.indexes {
        out.push(Index {
            oid: oids::index(t.id, out.len().max(1)),
            name: ix.name.clone(),
            table: t,
            columns: ix.columns.clone(),
            unique: ix.unique,
            primary: false,
            constraint: ix.unique && ix.name.ends_with("_key"),
        });
    }
    out
}

pub(super) fn attnums(t: &TableDef, cols: &[String]) -> Vec<i64> {
    cols.iter()
        .filter_map(|c| t.column_index(c).map(|i| i as i64 + 1))
        .collect()
}

impl Snapshot {
    pub fn table(&self, name: &str) -> Option<Table> {
        Some(match name {
            "pg_namespace" => (
                &[
                    ("oid", Oid),
                    ("nspname", Text),
                    ("nspowner", Oid),
                    ("nspacl", TextArr),
                ],
                self.schemas()
                    .iter()
                    .map(|s| {
                        vec![
                            oids::namespace(s).into(),
                            s.as_str().into(),
                            self.owner_oid(None),
                            V::N,
                        ]
                    })
                    .collect(),
            ),
            "pg_class" => (PG_CLASS, self.pg_class()),
            "pg_attribute" => (PG_ATTRIBUTE, self.pg_attribute()),
            "pg_attrdef" => (
                &[
                    ("oid", Oid),
                    ("adrelid", Oid),
                    ("adnum", I16),
                    ("adbin", Text),
                ],
                self.tables()
                    .flat_map(|t| {
                        t.columns.iter().enumerate().filter_map(move |(i, c)| {
                            let d = super::funcs::default_text(t, c)?;
                            Some(vec![
                                V::I(oids::table(t.id) + 32 + i as i64 % 30),
                                oids::table(t.id).into(),
                                V::I(i as i64 + 1),
                                d.into(),
                            ])
                        })
                    })
                    .collect(),
            ),
            "pg_type" => (PG_TYPE, self.pg_type()),
            "pg_index" => (PG_INDEX, self.pg_index()),
            "pg_constraint" => (PG_CONSTRAINT, self.pg_constraint()),
            "pg_am" => (
                &[
                    ("oid", Oid),
                    ("amname", Text),
                    ("amhandler", Text),
                    ("amtype", Text),
                ],
                vec![
                    vec![
                        V::I(oids::HEAP_AM),
                        "heap".into(),
                        "heap_tableam_handler".into(),
                        "t".into(),
                    ],
                    vec![
                        V::I(oids::BTREE_AM),
                        "btree".into(),
                        "bthandler".into(),
                        "i".into(),
                    ],
                ],
            ),
            "pg_collation" => (
                &[
                    ("oid", Oid),
                    ("collname", Text),
                    ("collnamespace", Oid),
                    ("collowner", Oid),
                    ("collprovider", Text),
                    ("collisdeterministic", Bool),
                    ("collencoding", I32),
                    ("collcollate", Text),
                    ("collctype", Text),
                    ("colliculocale", Text),
                    ("collversion", Text),
                ],
                vec![
                    vec![
                        V::I(oids::DEFAULT_COLLATION),
                        "default".into(),
                        V::I(oids::PG_CATALOG_NS),
                        self.owner_oid(None),
                        "d".into(),
                        true.into(),
                        V::I(-1),
                        V::N,
                        V::N,
                        V::N,
                        V::N,
                    ],
                    vec![
                        V::I(950),
                        "C".into(),
                        V::I(oids::PG_CATALOG_NS),
                        self.owner_oid(None),
                        "c".into(),
                        true.into(),
                        V::I(-1),
                        "C".into(),
                        "C".into(),
                        V::N,
                        V::N,
                    ],
                ],
            ),
            "pg_database" => (
                &[
                    ("oid", Oid),
                    ("datname", Text),
                    ("datdba", Oid),
                    ("encoding", I32),
                    ("datlocprovider", Text),
                    ("datistemplate", Bool),
                    ("datallowconn", Bool),
                    ("datconnlimit", I32),
                    ("datfrozenxid", I64),
                    ("datminmxid", I64),
                    ("dattablespace", Oid),
                    ("datcollate", Text),
                    ("datctype", Text),
                    ("daticulocale", Text),
                    ("datcollversion", Text),
                    ("datacl", TextArr),
                ],
                vec![vec![
                    V::I(oids::DATABASE),
                    self.database.as_str().into(),
                    self.owner_oid(None),
                    V::I(6),
                    "c".into(),
                    false.into(),
                    true.into(),
                    V::I(-1),
                    V::I(0),
                    V::I(1),
                    V::I(1663),
                    "C.UTF-8".into(),
                    "C.UTF-8".into(),
                    V::N,
                    V::N,
                    V::N,
                ]],
            ),
            "pg_roles" | "pg_authid" => {
                let roles = self.roles();
                let rows = roles
                    .iter()
                    .map(|(name, r)| {
                        vec![
                            name.as_str().into(),
                            r.superuser.into(),
                            true.into(),
                            r.superuser.into(),
                            r.superuser.into(),
                            r.login.into(),
                            false.into(),
                            V::I(-1),
                            "********".into(),
                            V::N,
                            r.superuser.into(),
                            V::N,
                            oids::role(name).into(),
                        ]
                    })
                    .collect();
                (PG_ROLES, rows)
            }
            "pg_user" => (
                &[
                    ("usename", Text),
                    ("usesysid", Oid),
                    ("usecreatedb", Bool),
                    ("usesuper", Bool),
                    ("userepl", Bool),
                    ("usebypassrls", Bool),
                    ("passwd", Text),
                    ("valuntil", Text),
                    ("useconfig", TextArr),
                ],
                self.roles()
                    .iter()
                    .filter(|(_, r)| r.login)
                    .map(|(name, r)| {
                        vec![
                            name.as_str().into(),
                            oids::role(name).into(),
                            r.superuser.into(),
                            r.superuser.into(),
                            false.into(),
                            r.superuser.into(),
                            "********".into(),
                            V::N,
                            V::N,
                        ]
                    })
                    .collect(),
            ),
            "pg_auth_members" => (
                &[
                    ("roleid", Oid),
                    ("member", Oid),
                    ("grantor", Oid),
                    ("admin_option", Bool),
                ],
                vec![],
            ),
            "pg_proc" => (
                &[
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
                    ("proargtypes", OidArr),
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
                ],
                vec![],
            ),
            "pg_description" => (
                &[
                    ("objoid", Oid),
                    ("classoid", Oid),
                    ("objsubid", I32),
                    ("description", Text),
                ],
                self.descriptions()
                    .into_iter()
                    .map(|(oid, sub, text)| {
                        vec![
                            oid.into(),
                            V::I(oids::PG_CLASS),
                            V::I(sub as i64),
                            text.into(),
                        ]
                    })
                    .collect(),
            ),
            "pg_shdescription" => (
                &[("objoid", Oid), ("classoid", Oid), ("description", Text)],
                vec![],
            ),
            "pg_sequence" => (
                &[
                    ("seqrelid", Oid),
                    ("seqtypid", Oid),
                    ("seqstart", I64),
                    ("seqincrement", I64),
                    ("seqmax", I64),
                    ("seqmin", I64),
                    ("seqcache", I64),
                    ("seqcycle", Bool),
                ],
                self.sequences()
                    .iter()
                    .map(|s| {
                        vec![
                            oids::sequence(s.id).into(),
                            oids::column_type(&s.ty).0.into(),
                            s.start.into(),
                            s.increment.into(),
                            s.max.into(),
                            s.min.into(),
                            s.cache.into(),
                            s.cycle.into(),
                        ]
                    })
                    .collect(),
            ),
            "pg_sequences" => (
                &[
                    ("schemaname", Text),
                    ("sequencename", Text),
                    ("sequenceowner", Text),
                    ("data_type", Text),
                    ("start_value", I64),
                    ("min_value", I64),
                    ("max_value", I64),
                    ("increment_by", I64),
                    ("cycle", Bool),
                    ("cache_size", I64),
                    ("last_value", I64),
                ],
                self.sequences()
                    .iter()
                    .map(|s| {
                        vec![
                            s.schema.as_str().into(),
                            s.name.as_str().into(),
                            self.user.as_str().into(),
                            s.ty.to_string().into(),
                            s.start.into(),
                            s.min.into(),
                            s.max.into(),
                            s.increment.into(),
                            s.cycle.into(),
                            s.cache.into(),
                            V::N,
                        ]
                    })
                    .collect(),
            ),
            "pg_settings" => (
                &[
                    ("name", Text),
                    ("setting", Text),
                    ("unit", Text),
                    ("category", Text),
                    ("short_desc", Text),
                    ("extra_desc", Text),
                    ("context", Text),
                    ("vartype", Text),
                    ("source", Text),
                    ("min_val", Text),
                    ("max_val", Text),
                    ("enumvals", TextArr),
                    ("boot_val", Text),
                    ("reset_val", Text),
                    ("sourcefile", Text),
                    ("sourceline", I32),
                    ("pending_restart", Bool),
                ],
                super::SERVER_SETTINGS
                    .iter()
                    .map(|(name, value)| {
                        vec![
                            (*name).into(),
                            (*value).into(),
                            V::N,
                            "Tessera".into(),
                            V::N,
                            V::N,
                            "user".into(),
                            "string".into(),
                            "session".into(),
                            V::N,
                            V::N,
                            V::N,
                            (*value).into(),
                            (*value).into(),
                            V::N,
                            V::N,
                            false.into(),
                        ]
                    })
                    .collect(),
            ),
            "pg_tablespace" => (
                &[
                    ("oid", Oid),
                    ("spcname", Text),
                    ("spcowner", Oid),
                    ("spcacl", TextArr),
                    ("spcoptions", TextArr),
                ],
                vec![
                    vec![
                        V::I(1663),
                        "pg_default".into(),
                        self.owner_oid(None),
                        V::N,
                        V::N,
                    ],
                    vec![
                        V::I(1664),
                        "pg_global".into(),
                        self.owner_oid(None),
                        V::N,
                        V::N,
                    ],
                ],
            ),
            "pg_tables" => (
                &[
                    ("schemaname", Text),
                    ("tablename", Text),
                    ("tableowner", Text),
                    ("tablespace", Text),
                    ("hasindexes", Bool),
                    ("hasrules", Bool),
                    ("hastriggers", Bool),
                    ("rowsecurity", Bool),
                ],
                self.tables()
                    .map(|t| {
                        vec![
                            t.schema.as_str().into(),
                            t.name.as_str().into(),
                            self.owner_name(t).into(),
                            V::N,
                            (!indexes(t).is_empty()).into(),
                            false.into(),
                            false.into(),
                            false.into(),
                        ]
                    })
                    .collect(),
            ),
            "pg_indexes" => (
                &[
                    ("schemaname", Text),
                    ("tablename", Text),
                    ("indexname", Text),
                    ("tablespace", Text),
                    ("indexdef", Text),
                ],
                self.tables()
                    .flat_map(|t| {
                        indexes(t).into_iter().map(move |ix| {
                            vec![
                                t.schema.as_str().into(),
                                t.name.as_str().into(),
                                ix.name.as_str().into(),
                                V::N,
                                super::funcs::index_def(&ix).into(),
                            ]
                        })
                    })
                    .collect(),
            ),
            "pg_views" => (
                &[
                    ("schemaname", Text),
                    ("viewname", Text),
                    ("viewowner", Text),
                    ("definition", Text),
                ],
                self.views()
                    .into_iter()
                    .map(|v| {
                        vec![
                            v.schema.as_str().into(),
                            v.name.as_str().into(),
                            self.user.as_str().into(),
                            v.definition.as_str().into(),
                        ]
                    })
                    .collect(),
            ),
            "pg_matviews" => (
                &[
                    ("schemaname", Text),
                    ("matviewname", Text),
                    ("matviewowner", Text),
                    ("tablespace", Text),
                    ("hasindexes", Bool),
                    ("ispopulated", Bool),
                    ("definition", Text),
                ],
                vec![],
            ),
            "pg_inherits" => (
                &[
                    ("inhrelid", Oid),
                    ("inhparent", Oid),
                    ("inhseqno", I32),
                    ("inhdetachpending", Bool),
                ],
                vec![],
            ),
            "pg_partitioned_table" => (
                &[
                    ("partrelid", Oid),
                    ("partstrat", Text),
                    ("partnatts", I16),
                    ("partdefid", Oid),
                    ("partattrs", I16Arr),
                    ("partclass", OidArr),
                    ("partcollation", OidArr),
                    ("partexprs", Text),
                ],
                vec![],
            ),
            "pg_trigger" => (
                &[
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
                    ("tgattr", I16Arr),
                    ("tgargs", Text),
                    ("tgqual", Text),
                    ("tgoldtable", Text),
                    ("tgnewtable", Text),
                ],
                vec![],
            ),
            "pg_policy" => (
                &[
                    ("oid", Oid),
                    ("polname", Text),
                    ("polrelid", Oid),
                    ("polcmd", Text),
                    ("polpermissive", Bool),
                    ("polroles", OidArr),
                    ("polqual", Text),
                    ("polwithcheck", Text),
                ],
                vec![],
            ),
            "pg_statistic_ext" => (
                &[
                    ("oid", Oid),
                    ("stxrelid", Oid),
                    ("stxname", Text),
                    ("stxnamespace", Oid),
                    ("stxowner", Oid),
                    ("stxstattarget", I32),
                    ("stxkeys", I16Arr),
                    ("stxkind", TextArr),
                    ("stxexprs", Text),
                ],
                vec![],
            ),
            "pg_publication" => (
                &[
                    ("oid", Oid),
                    ("pubname", Text),
                    ("pubowner", Oid),
                    ("puballtables", Bool),
                    ("pubinsert", Bool),
                    ("pubupdate", Bool),
                    ("pubdelete", Bool),
                    ("pubtruncate", Bool),
                    ("pubviaroot", Bool),
                ],
                vec![],
            ),
            "pg_publication_rel" => (
                &[
                    ("oid", Oid),
                    ("prpubid", Oid),
                    ("prrelid", Oid),
                    ("prqual", Text),
                    ("prattrs", I16Arr),
                ],
                vec![],
            ),
            "pg_publication_namespace" => {
                (&[("oid", Oid), ("pnpubid", Oid), ("pnnspid", Oid)], vec![])
            }
            "pg_extension" => (
                &[
                    ("oid", Oid),
                    ("extname", Text),
                    ("extowner", Oid),
                    ("extnamespace", Oid),
                    ("extrelocatable", Bool),
                    ("extversion", Text),
                    ("extconfig", OidArr),
                    ("extcondition", TextArr),
                ],
                vec![],
            ),
            "pg_enum" => (
                &[
                    ("oid", Oid),
                    ("enumtypid", Oid),
                    ("enumsortorder", F32),
                    ("enumlabel", Text),
                ],
                vec![],
            ),
            "pg_opclass" => (
                &[
                    ("oid", Oid),
                    ("opcmethod", Oid),
                    ("opcname", Text),
                    ("opcnamespace", Oid),
                    ("opcowner", Oid),
                    ("opcfamily", Oid),
                    ("opcintype", Oid),
                    ("opcdefault", Bool),
                    ("opckeytype", Oid),
                ],
                vec![],
            ),
            "pg_range" => (
                &[
                    ("rngtypid", Oid),
                    ("rngsubtype", Oid),
                    ("rngmultitypid", Oid),
                    ("rngcollation", Oid),
                    ("rngsubopc", Oid),
                    ("rngcanonical", Text),
                    ("rngsubdiff", Text),
                ],
                vec![],
            ),
            "pg_depend" => (
                &[
                    ("classid", Oid),
                    ("objid", Oid),
                    ("objsubid", I32),
                    ("refclassid", Oid),
                    ("refobjid", Oid),
                    ("refobjsubid", I32),
                    ("deptype", Text),
                ],
                self.sequences()
                    .iter()
                    .filter_map(|s| {
                        let (t, c) = s.owned_by.as_ref()?;
                        let t = self.catalog.table_by_id(*t)?;
                        let n = t.column_index(c)?;
                        Some(vec![
                            V::I(oids::PG_CLASS),
                            oids::sequence(s.id).into(),
                            V::I(0),
                            V::I(oids::PG_CLASS),
                            oids::table(t.id).into(),
                            V::I(n as i64 + 1),
                            "a".into(),
                        ])
                    })
                    .collect(),
            ),
            "pg_rewrite" => (
                &[
                    ("oid", Oid),
                    ("rulename", Text),
                    ("ev_class", Oid),
                    ("ev_type", Text),
                    ("ev_enabled", Text),
                    ("is_instead", Bool),
                    ("ev_qual", Text),
                    ("ev_action", Text),
                ],
                vec![],
            ),
            "pg_foreign_table" => (
                &[("ftrelid", Oid), ("ftserver", Oid), ("ftoptions", TextArr)],
                vec![],
            ),
            "pg_language" => (
                &[
                    ("oid", Oid),
                    ("lanname", Text),
                    ("lanowner", Oid),
                    ("lanispl", Bool),
                    ("lanpltrusted", Bool),
                    ("lanplcallfoid", Oid),
                    ("laninline", Oid),
                    ("lanvalidator", Oid),
                    ("lanacl", TextArr),
                ],
                vec![
                    vec![
                        V::I(12),
                        "internal".into(),
                        self.owner_oid(None),
                        false.into(),
                        false.into(),
                        V::I(0),
                        V::I(0),
                        V::I(0),
                        V::N,
                    ],
                    vec![
                        V::I(14),
                        "sql".into(),
                        self.owner_oid(None),
                        false.into(),
                        true.into(),
                        V::I(0),
                        V::I(0),
                        V::I(0),
                        V::N,
                    ],
                ],
            ),
            "pg_stat_activity" => (
                &[
                    ("datid", Oid),
                    ("datname", Text),
                    ("pid", I32),
                    ("leader_pid", I32),
                    ("usesysid", Oid),
                    ("usename", Text),
                    ("application_name", Text),
                    ("client_addr", Text),
                    ("client_hostname", Text),
                    ("client_port", I32),
                    ("backend_start", Ts),
                    ("xact_start", Ts),
                    ("query_start", Ts),
                    ("state_change", Ts),
                    ("wait_event_type", Text),
                    ("wait_event", Text),
                    ("state", Text),
                    ("backend_xid", I64),
                    ("backend_xmin", I64),
                    ("query_id", I64),
                    ("query", Text),
                    ("backend_type", Text),
                ],
                crate::activity::sessions()
                    .into_iter()
                    .map(|a| {
                        let ts = |t: Option<chrono::DateTime<chrono::Utc>>| {
                            t.map(|t| V::I(t.timestamp_micros())).unwrap_or(V::N)
                        };
                        vec![
                            V::I(oids::DATABASE),
                            a.database.into(),
                            V::I(a.pid as i64),
                            V::N,
                            oids::role(&a.user).into(),
                            a.user.into(),
                            a.application_name.into(),
                            a.client_addr.into(),
                            V::N,
                            a.client_port.into(),
                            ts(Some(a.backend_start)),
                            ts(a.xact_start),
                            ts(a.query_start),
                            ts(Some(a.state_change)),
                            V::N,
                            V::N,
                            a.state.into(),
                            V::N,
                            V::N,
                            V::N,
                            a.query.to_string().into(),
                            "client backend".into(),
                        ]
                    })
                    .collect(),
            ),
            "pg_event_trigger" => (
                &[
                    ("oid", Oid),
                    ("evtname", Text),
                    ("evtevent", Text),
                    ("evtowner", Oid),
                    ("evtfoid", Oid),
                    ("evtenabled", Text),
                    ("evttags", TextArr),
                ],
                vec![],
            ),
            _ => return None,
        })
    }
}
