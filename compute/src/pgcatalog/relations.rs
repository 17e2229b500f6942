//! The rows of the relation catalogs (pg_class, pg_attribute, pg_type,
//! pg_index, pg_constraint, pg_description) and their column lists;
//! `tables` dispatches to them.

use meta::Distribution;

use super::batch::{Col::*, Cols, V};
use super::index::{attnums, indexes};
use super::oids;
use super::Snapshot;

impl Snapshot {
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

    pub(super) fn pg_class(&self) -> Vec<Vec<V>> {
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
        for v in self.views() {
            rows.push(self.class_row(
                oids::view(v.id),
                &v.name,
                &v.schema,
                "v",
                0,
                v.columns.len(),
                false,
                None,
                V::N,
            ));
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

    pub(super) fn pg_type(&self) -> Vec<Vec<V>> {
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

    pub(super) fn pg_index(&self) -> Vec<Vec<V>> {
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

    pub(super) fn pg_constraint(&self) -> Vec<Vec<V>> {
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

pub(super) const PG_CLASS: Cols = &[
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

pub(super) const PG_ATTRIBUTE: Cols = &[
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

pub(super) const PG_TYPE: Cols = &[
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

pub(super) const PG_INDEX: Cols = &[
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
    ("indkey", I16Vec),
    ("indcollation", OidVec),
    ("indclass", OidVec),
    ("indoption", I16Vec),
    ("indexprs", Text),
    ("indpred", Text),
];

pub(super) const PG_CONSTRAINT: Cols = &[
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

pub(super) const PG_ROLES: Cols = &[
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
