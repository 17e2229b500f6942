//! The `pg_catalog` tables, made from one catalog snapshot: PostgreSQL
//! 15's columns, Tessera's objects as rows (its own partitions are not
//! relations of their own), empty where Tessera has no such objects.

use meta::{Distribution, TableDef};

use super::batch::{Col, Col::*, V};
use super::oids;
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

fn attnums(t: &TableDef, cols: &[String]) -> Vec<i64> {
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
                vec![],
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

    /// COMMENT ON texts as `pg_description` keys them: the relation's
    /// OID and the column number (0: the relation).
    pub fn descriptions(&self) -> Vec<(i64, i32, String)> {
        let mut out = vec![];
        for ((kind, id, column), text) in &self.catalog.comments {
            match kind.as_str() {
                "table" => {
                    let Some(t) = self.catalog.table_by_id(common::TableId(*id)) else {
                        continue;
                    };
                    let sub = if column.is_empty() {
                        0
                    } else {
                        match t.column_index(column) {
                            Some(i) => i as i32 + 1,
                            None => continue,
                        }
                    };
                    out.push((oids::table(t.id), sub, text.clone()));
                }
                "sequence" => out.push((oids::sequence(*id), 0, text.clone())),
                _ => {}
            }
        }
        out.sort();
        out
    }

    fn pg_class(&self) -> Vec<Vec<V>> {
        let mut rows = vec![];
        for t in self.tables() {
            let ixs = indexes(t);
            let options = match &t.distribution {
                Distribution::Hash {
                    columns,
                    partitions,
                } => vec![
                    "distribution=hash".to_string(),
                    format!("distribution_key={}", columns.join(",")),
                    format!("partitions={partitions}"),
                ],
                d => vec![format!("distribution={}", d.kind())],
            };
            rows.push(self.class_row(
                oids::table(t.id),
                &t.name,
                &t.schema,
                "r",
                oids::HEAP_AM,
                t.columns.len(),
                !ixs.is_empty(),
                Some(self.owner_name(t)),
                V::A(options),
            ));
            for ix in &ixs {
                rows.push(self.class_row(
                    ix.oid,
                    &ix.name,
                    &t.schema,
                    "i",
                    oids::BTREE_AM,
                    ix.columns.len(),
                    false,
                    Some(self.owner_name(t)),
                    V::N,
                ));
            }
        }
        for s in self.sequences() {
            rows.push(self.class_row(
                oids::sequence(s.id),
                &s.name,
                &s.schema,
                "S",
                0,
                3,
                false,
                None,
                V::N,
            ));
        }
        rows
    }

    #[allow(clippy::too_many_arguments)]
    fn class_row(
        &self,
        oid: i64,
        name: &str,
        schema: &str,
        kind: &str,
        am: i64,
        natts: usize,
        has_index: bool,
        owner: Option<&str>,
        options: V,
    ) -> Vec<V> {
        vec![
            oid.into(),
            name.into(),
            oids::namespace(schema).into(),
            V::I(0),
            V::I(0),
            self.owner_oid(owner),
            V::I(am),
            oid.into(),
            V::I(0),
            V::I(0),
            V::F(-1.0),
            V::I(0),
            V::I(0),
            has_index.into(),
            false.into(),
            "p".into(),
            kind.into(),
            V::I(natts as i64),
            V::I(0),
            false.into(),
            false.into(),
            false.into(),
            false.into(),
            false.into(),
            true.into(),
            "d".into(),
            false.into(),
            V::I(0),
            V::I(0),
            V::I(0),
            V::N,
            options,
            V::N,
        ]
    }

    fn pg_attribute(&self) -> Vec<Vec<V>> {
        let mut rows = vec![];
        let mut attr = |relid: i64,
                        name: &str,
                        ty: &common::SqlType,
                        num: usize,
                        not_null: bool,
                        has_def: bool| {
            let (oid, typmod) = oids::column_type(ty);
            // PostgreSQL's storage of the type: numeric "main", other
            // variable-width types "extended", fixed-width ones "plain".
            let storage = match ty {
                common::SqlType::Numeric { .. } => "m",
                common::SqlType::Text
                | common::SqlType::Varchar(_)
                | common::SqlType::Char(_)
                | common::SqlType::Bytea => "x",
                _ => "p",
            };
            let collation = match ty {
                common::SqlType::Text | common::SqlType::Varchar(_) | common::SqlType::Char(_) => {
                    oids::DEFAULT_COLLATION
                }
                _ => 0,
            };
            rows.push(vec![
                relid.into(),
                name.into(),
                oid.into(),
                V::I(-1),
                V::I(-1),
                V::I(num as i64),
                V::I(0),
                V::I(-1),
                V::I(typmod as i64),
                false.into(),
                "i".into(),
                storage.into(),
                "".into(),
                not_null.into(),
                has_def.into(),
                false.into(),
                "".into(),
                "".into(),
                false.into(),
                true.into(),
                V::I(0),
                V::I(collation),
                V::N,
                V::N,
                V::N,
                V::N,
            ]);
        };
        for t in self.tables() {
            for (i, c) in t.columns.iter().enumerate() {
                attr(
                    oids::table(t.id),
                    &c.name,
                    &c.ty,
                    i + 1,
                    c.not_null,
                    super::funcs::default_text(t, c).is_some(),
                );
            }
            for ix in indexes(t) {
                for (i, name) in ix.columns.iter().enumerate() {
                    if let Ok(c) = t.column(name) {
                        attr(ix.oid, name, &c.ty, i + 1, false, false);
                    }
                }
            }
        }
        for s in self.sequences() {
            for (i, (name, ty)) in [
                ("last_value", common::SqlType::BigInt),
                ("log_cnt", common::SqlType::BigInt),
                ("is_called", common::SqlType::Boolean),
            ]
            .iter()
            .enumerate()
            {
                attr(oids::sequence(s.id), name, ty, i + 1, true, false);
            }
        }
        rows
    }

    fn pg_type(&self) -> Vec<Vec<V>> {
        oids::builtin_types()
            .into_iter()
            .map(|t| {
                vec![
                    t.oid.into(),
                    t.name.into(),
                    V::I(oids::PG_CATALOG_NS),
                    self.owner_oid(None),
                    V::I(t.len as i64),
                    t.byval.into(),
                    t.kind.into(),
                    t.category.into(),
                    matches!(t.oid, 25 | 701 | 1184 | 26 | 16).into(),
                    true.into(),
                    ",".into(),
                    V::I(0),
                    V::I(0),
                    t.elem.into(),
                    t.array.into(),
                    t.input.into(),
                    t.output.into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    if t.len == 8 || t.len == -1 { "d" } else { "i" }.into(),
                    if t.len == -1 { "x" } else { "p" }.into(),
                    false.into(),
                    V::I(0),
                    V::I(-1),
                    V::I(0),
                    V::I(if matches!(t.oid, 25 | 1042 | 1043 | 19) {
                        oids::DEFAULT_COLLATION
                    } else {
                        0
                    }),
                    V::N,
                    V::N,
                    V::N,
                ]
            })
            .collect()
    }

    fn pg_index(&self) -> Vec<Vec<V>> {
        self.tables()
            .flat_map(|t| {
                indexes(t).into_iter().map(move |ix| {
                    let n = ix.columns.len() as i64;
                    vec![
                        ix.oid.into(),
                        oids::table(t.id).into(),
                        V::I(n),
                        V::I(n),
                        ix.unique.into(),
                        false.into(),
                        ix.primary.into(),
                        false.into(),
                        true.into(),
                        false.into(),
                        true.into(),
                        false.into(),
                        true.into(),
                        true.into(),
                        false.into(),
                        V::IA(attnums(t, &ix.columns)),
                        V::IA(vec![0; n as usize]),
                        V::IA(vec![0; n as usize]),
                        V::IA(vec![0; n as usize]),
                        V::N,
                        V::N,
                    ]
                })
            })
            .collect()
    }

    fn pg_constraint(&self) -> Vec<Vec<V>> {
        let mut rows = vec![];
        let row = |oid: i64,
                   name: &str,
                   schema: &str,
                   kind: &str,
                   rel: i64,
                   index: i64,
                   frel: i64,
                   actions: (&str, &str),
                   key: Vec<i64>,
                   fkey: Option<Vec<i64>>| {
            vec![
                oid.into(),
                name.into(),
                oids::namespace(schema).into(),
                kind.into(),
                false.into(),
                false.into(),
                true.into(),
                rel.into(),
                V::I(0),
                index.into(),
                V::I(0),
                frel.into(),
                actions.0.into(),
                actions.1.into(),
                if kind == "f" { "s" } else { " " }.into(),
                true.into(),
                V::I(0),
                true.into(),
                V::IA(key),
                fkey.map(V::IA).unwrap_or(V::N),
                V::N,
                V::N,
                V::N,
                V::N,
                V::N,
                V::N,
            ]
        };
        for t in self.tables() {
            for ix in indexes(t).into_iter().filter(|i| i.constraint) {
                rows.push(row(
                    oids::index_constraint(ix.oid),
                    &ix.name,
                    &t.schema,
                    if ix.primary { "p" } else { "u" },
                    oids::table(t.id),
                    ix.oid,
                    0,
                    (" ", " "),
                    attnums(t, &ix.columns),
                    None,
                ));
            }
        }
        for fk in &self.catalog.foreign_keys {
            let (Some(t), Some(r)) = (
                self.catalog.table_by_id(fk.table),
                self.catalog.table_by_id(fk.ref_table),
            ) else {
                continue;
            };
            let action = |a: &str| match a.to_ascii_uppercase().as_str() {
                "CASCADE" => "c",
                "RESTRICT" => "r",
                "SET NULL" => "n",
                "SET DEFAULT" => "d",
                _ => "a",
            };
            // The referenced key's index: the primary key when it is it.
            let ref_index = indexes(r)
                .into_iter()
                .find(|i| i.unique && i.columns == fk.ref_columns)
                .map(|i| i.oid)
                .unwrap_or(0);
            rows.push(row(
                oids::foreign_key(fk.id),
                &fk.name,
                &t.schema,
                "f",
                oids::table(t.id),
                ref_index,
                oids::table(r.id),
                (action(&fk.on_update), action(&fk.on_delete)),
                attnums(t, &fk.columns),
                Some(attnums(r, &fk.ref_columns)),
            ));
        }
        rows
    }
}

const PG_CLASS: &[(&str, Col)] = &[
    ("oid", Oid),
    ("relname", Text),
    ("relnamespace", Oid),
    ("reltype", Oid),
    ("reloftype", Oid),
    ("relowner", Oid),
    ("relam", Oid),
    ("relfilenode", Oid),
    ("reltablespace", Oid),
    ("relpages", I32),
    ("reltuples", F32),
    ("relallvisible", I32),
    ("reltoastrelid", Oid),
    ("relhasindex", Bool),
    ("relisshared", Bool),
    ("relpersistence", Text),
    ("relkind", Text),
    ("relnatts", I16),
    ("relchecks", I16),
    ("relhasrules", Bool),
    ("relhastriggers", Bool),
    ("relhassubclass", Bool),
    ("relrowsecurity", Bool),
    ("relforcerowsecurity", Bool),
    ("relispopulated", Bool),
    ("relreplident", Text),
    ("relispartition", Bool),
    ("relrewrite", Oid),
    ("relfrozenxid", I64),
    ("relminmxid", I64),
    ("relacl", TextArr),
    ("reloptions", TextArr),
    ("relpartbound", Text),
];

const PG_ATTRIBUTE: &[(&str, Col)] = &[
    ("attrelid", Oid),
    ("attname", Text),
    ("atttypid", Oid),
    ("attstattarget", I32),
    ("attlen", I16),
    ("attnum", I16),
    ("attndims", I32),
    ("attcacheoff", I32),
    ("atttypmod", I32),
    ("attbyval", Bool),
    ("attalign", Text),
    ("attstorage", Text),
    ("attcompression", Text),
    ("attnotnull", Bool),
    ("atthasdef", Bool),
    ("atthasmissing", Bool),
    ("attidentity", Text),
    ("attgenerated", Text),
    ("attisdropped", Bool),
    ("attislocal", Bool),
    ("attinhcount", I32),
    ("attcollation", Oid),
    ("attacl", TextArr),
    ("attoptions", TextArr),
    ("attfdwoptions", TextArr),
    ("attmissingval", Text),
];

const PG_TYPE: &[(&str, Col)] = &[
    ("oid", Oid),
    ("typname", Text),
    ("typnamespace", Oid),
    ("typowner", Oid),
    ("typlen", I16),
    ("typbyval", Bool),
    ("typtype", Text),
    ("typcategory", Text),
    ("typispreferred", Bool),
    ("typisdefined", Bool),
    ("typdelim", Text),
    ("typrelid", Oid),
    ("typsubscript", Oid),
    ("typelem", Oid),
    ("typarray", Oid),
    ("typinput", Text),
    ("typoutput", Text),
    ("typreceive", Text),
    ("typsend", Text),
    ("typmodin", Text),
    ("typmodout", Text),
    ("typanalyze", Text),
    ("typalign", Text),
    ("typstorage", Text),
    ("typnotnull", Bool),
    ("typbasetype", Oid),
    ("typtypmod", I32),
    ("typndims", I32),
    ("typcollation", Oid),
    ("typdefaultbin", Text),
    ("typdefault", Text),
    ("typacl", TextArr),
];

const PG_INDEX: &[(&str, Col)] = &[
    ("indexrelid", Oid),
    ("indrelid", Oid),
    ("indnatts", I16),
    ("indnkeyatts", I16),
    ("indisunique", Bool),
    ("indnullsnotdistinct", Bool),
    ("indisprimary", Bool),
    ("indisexclusion", Bool),
    ("indimmediate", Bool),
    ("indisclustered", Bool),
    ("indisvalid", Bool),
    ("indcheckxmin", Bool),
    ("indisready", Bool),
    ("indislive", Bool),
    ("indisreplident", Bool),
    ("indkey", I16Arr),
    ("indcollation", OidArr),
    ("indclass", OidArr),
    ("indoption", I16Arr),
    ("indexprs", Text),
    ("indpred", Text),
];

const PG_CONSTRAINT: &[(&str, Col)] = &[
    ("oid", Oid),
    ("conname", Text),
    ("connamespace", Oid),
    ("contype", Text),
    ("condeferrable", Bool),
    ("condeferred", Bool),
    ("convalidated", Bool),
    ("conrelid", Oid),
    ("contypid", Oid),
    ("conindid", Oid),
    ("conparentid", Oid),
    ("confrelid", Oid),
    ("confupdtype", Text),
    ("confdeltype", Text),
    ("confmatchtype", Text),
    ("conislocal", Bool),
    ("coninhcount", I32),
    ("connoinherit", Bool),
    ("conkey", I16Arr),
    ("confkey", I16Arr),
    ("conpfeqop", OidArr),
    ("conppeqop", OidArr),
    ("conffeqop", OidArr),
    ("confdelsetcols", I16Arr),
    ("conexclop", OidArr),
    ("conbin", Text),
];

const PG_ROLES: &[(&str, Col)] = &[
    ("rolname", Text),
    ("rolsuper", Bool),
    ("rolinherit", Bool),
    ("rolcreaterole", Bool),
    ("rolcreatedb", Bool),
    ("rolcanlogin", Bool),
    ("rolreplication", Bool),
    ("rolconnlimit", I32),
    ("rolpassword", Text),
    ("rolvaliduntil", Text),
    ("rolbypassrls", Bool),
    ("rolconfig", TextArr),
    ("oid", Oid),
];
