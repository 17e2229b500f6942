//! The `pg_catalog` tables, made from one catalog snapshot: PostgreSQL
//! 15's columns, Tessera's objects as rows (its own partitions are not
//! relations of their own), empty where Tessera has no such objects.
//!
//! A table is its column list (a constant) and a function making its
//! rows; the relation catalogs' are in `relations` and `attributes`, the
//! columns of the always-empty tables in `empty`.

use super::batch::{Col::*, Cols, Table, V};
use super::defs::{default_text, index_def};
use super::index::indexes;
use super::oids;
use super::relations::{PG_ATTRIBUTE, PG_CLASS, PG_CONSTRAINT, PG_INDEX, PG_ROLES, PG_TYPE};
use super::{empty, Snapshot};

impl Snapshot {
    /// A `pg_catalog` table (`None`: no such table).
    pub fn table(&self, name: &str) -> Option<Table> {
        Some(match name {
            "pg_namespace" => (PG_NAMESPACE, self.pg_namespace()),
            "pg_class" => (PG_CLASS, self.pg_class()),
            "pg_attribute" => (PG_ATTRIBUTE, self.pg_attribute()),
            "pg_attrdef" => (PG_ATTRDEF, self.pg_attrdef()),
            "pg_type" => (PG_TYPE, self.pg_type()),
            "pg_index" => (PG_INDEX, self.pg_index()),
            "pg_constraint" => (PG_CONSTRAINT, self.pg_constraint()),
            "pg_am" => (PG_AM, self.pg_am()),
            "pg_collation" => (PG_COLLATION, self.pg_collation()),
            "pg_database" => (PG_DATABASE, self.pg_database()),
            "pg_roles" | "pg_authid" => (PG_ROLES, self.pg_roles()),
            "pg_user" => (PG_USER, self.pg_user()),
            "pg_description" => (PG_DESCRIPTION, self.pg_description()),
            "pg_sequence" => (PG_SEQUENCE, self.pg_sequence()),
            "pg_sequences" => (PG_SEQUENCES, self.pg_sequences()),
            "pg_settings" => (PG_SETTINGS, self.pg_settings()),
            "pg_tablespace" => (PG_TABLESPACE, self.pg_tablespace()),
            "pg_tables" => (PG_TABLES, self.pg_tables()),
            "pg_indexes" => (PG_INDEXES, self.pg_indexes()),
            "pg_views" => (PG_VIEWS, self.pg_views()),
            "pg_depend" => (PG_DEPEND, self.pg_depend()),
            "pg_language" => (PG_LANGUAGE, self.pg_language()),
            "pg_stat_activity" => (PG_STAT_ACTIVITY, self.pg_stat_activity()),
            // Rows read from meta at scan time (`moves::MovesTable`).
            super::moves::NAME => (super::moves::TESSERA_MOVES, vec![]),
            other => (empty::columns(other)?, vec![]),
        })
    }

    fn pg_namespace(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    fn pg_attrdef(&self) -> Vec<Vec<V>> {
        self.tables()
            .flat_map(|t| {
                t.columns.iter().enumerate().filter_map(move |(i, c)| {
                    let d = default_text(t, c)?;
                    Some(vec![
                        V::I(oids::table(t.id) + 32 + i as i64 % 30),
                        oids::table(t.id).into(),
                        V::I(i as i64 + 1),
                        d.into(),
                    ])
                })
            })
            .collect()
    }

    fn pg_am(&self) -> Vec<Vec<V>> {
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
        ]
    }

    fn pg_collation(&self) -> Vec<Vec<V>> {
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
        ]
    }

    fn pg_database(&self) -> Vec<Vec<V>> {
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
        ]]
    }

    fn pg_roles(&self) -> Vec<Vec<V>> {
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
        rows
    }

    fn pg_user(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    fn pg_description(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    fn pg_sequence(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    fn pg_sequences(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    /// Every parameter of PostgreSQL 15 and Tessera (`crate::guc`) with
    /// the session's value where it has one (published by the session,
    /// see `crate::activity`), else the node's.
    fn pg_settings(&self) -> Vec<Vec<V>> {
        let session = crate::activity::settings_of(self.pid).unwrap_or_default();
        let started = crate::NODE_START_SETTINGS.get();
        let text = |s: &str| if s.is_empty() { V::N } else { s.into() };
        crate::guc::all()
            .map(|p| {
                let key = p.key();
                let row = session.get(&key);
                let default = crate::guc::node_default(p).setting;
                // Session values are kept as SHOW prints them.
                let setting = |show: &str| p.parse(show).map_or(show.to_string(), |v| v.setting);
                let value = row.map_or_else(|| default.clone(), |r| setting(&r.value));
                let reset = row
                    .and_then(|r| r.reset.as_deref())
                    .map_or_else(|| default.clone(), setting);
                let pending = p.needs_restart()
                    && self.catalog.system_settings.get(&key) != started.and_then(|m| m.get(&key));
                vec![
                    p.name.into(),
                    value.into(),
                    text(p.unit),
                    p.category.into(),
                    p.short_desc.into(),
                    V::N,
                    p.context.into(),
                    p.vartype.name().into(),
                    row.map_or("default", |r| r.source).into(),
                    text(p.min),
                    text(p.max),
                    if p.enumvals.is_empty() {
                        V::N
                    } else {
                        V::A(p.enumvals.iter().map(|v| v.to_string()).collect())
                    },
                    p.boot.into(),
                    reset.into(),
                    V::N,
                    V::N,
                    pending.into(),
                ]
            })
            .collect()
    }

    fn pg_tablespace(&self) -> Vec<Vec<V>> {
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
        ]
    }

    fn pg_tables(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    fn pg_indexes(&self) -> Vec<Vec<V>> {
        self.tables()
            .flat_map(|t| {
                indexes(t).into_iter().map(move |ix| {
                    vec![
                        t.schema.as_str().into(),
                        t.name.as_str().into(),
                        ix.name.as_str().into(),
                        V::N,
                        index_def(&ix).into(),
                    ]
                })
            })
            .collect()
    }

    fn pg_views(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    fn pg_depend(&self) -> Vec<Vec<V>> {
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
            .collect()
    }

    fn pg_language(&self) -> Vec<Vec<V>> {
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
        ]
    }

    fn pg_stat_activity(&self) -> Vec<Vec<V>> {
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
            .collect()
    }
}

const PG_NAMESPACE: Cols = &[
    ("oid", Oid),
    ("nspname", Text),
    ("nspowner", Oid),
    ("nspacl", TextArr),
];

const PG_ATTRDEF: Cols = &[
    ("oid", Oid),
    ("adrelid", Oid),
    ("adnum", I16),
    ("adbin", Text),
];

const PG_AM: Cols = &[
    ("oid", Oid),
    ("amname", Text),
    ("amhandler", Text),
    ("amtype", Text),
];

const PG_COLLATION: Cols = &[
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
];

const PG_DATABASE: Cols = &[
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
];

const PG_USER: Cols = &[
    ("usename", Text),
    ("usesysid", Oid),
    ("usecreatedb", Bool),
    ("usesuper", Bool),
    ("userepl", Bool),
    ("usebypassrls", Bool),
    ("passwd", Text),
    ("valuntil", Text),
    ("useconfig", TextArr),
];

const PG_DESCRIPTION: Cols = &[
    ("objoid", Oid),
    ("classoid", Oid),
    ("objsubid", I32),
    ("description", Text),
];

const PG_SEQUENCE: Cols = &[
    ("seqrelid", Oid),
    ("seqtypid", Oid),
    ("seqstart", I64),
    ("seqincrement", I64),
    ("seqmax", I64),
    ("seqmin", I64),
    ("seqcache", I64),
    ("seqcycle", Bool),
];

const PG_SEQUENCES: Cols = &[
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
];

const PG_SETTINGS: Cols = &[
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
];

const PG_TABLESPACE: Cols = &[
    ("oid", Oid),
    ("spcname", Text),
    ("spcowner", Oid),
    ("spcacl", TextArr),
    ("spcoptions", TextArr),
];

const PG_TABLES: Cols = &[
    ("schemaname", Text),
    ("tablename", Text),
    ("tableowner", Text),
    ("tablespace", Text),
    ("hasindexes", Bool),
    ("hasrules", Bool),
    ("hastriggers", Bool),
    ("rowsecurity", Bool),
];

const PG_INDEXES: Cols = &[
    ("schemaname", Text),
    ("tablename", Text),
    ("indexname", Text),
    ("tablespace", Text),
    ("indexdef", Text),
];

const PG_VIEWS: Cols = &[
    ("schemaname", Text),
    ("viewname", Text),
    ("viewowner", Text),
    ("definition", Text),
];

const PG_DEPEND: Cols = &[
    ("classid", Oid),
    ("objid", Oid),
    ("objsubid", I32),
    ("refclassid", Oid),
    ("refobjid", Oid),
    ("refobjsubid", I32),
    ("deptype", Text),
];

const PG_LANGUAGE: Cols = &[
    ("oid", Oid),
    ("lanname", Text),
    ("lanowner", Oid),
    ("lanispl", Bool),
    ("lanpltrusted", Bool),
    ("lanplcallfoid", Oid),
    ("laninline", Oid),
    ("lanvalidator", Oid),
    ("lanacl", TextArr),
];

const PG_STAT_ACTIVITY: Cols = &[
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
];
