//! `information_schema`: the SQL standard's views of the catalog, with
//! PostgreSQL 15's columns and spellings.

use common::SqlType;

use super::batch::{Col::*, Cols, Table, V};
use super::defs::default_text;
use super::index::indexes;
use super::typefacts::{column_row, oid_facts, type_facts};
use super::Snapshot;

pub const NAMES: &[&str] = &[
    "tables",
    "columns",
    "schemata",
    "table_constraints",
    "key_column_usage",
    "referential_constraints",
    "views",
    "sequences",
];

fn yes(b: bool) -> V {
    if b { "YES" } else { "NO" }.into()
}

impl Snapshot {
    /// An `information_schema` view (`None`: no such view).
    pub fn info_table(&self, name: &str) -> Option<Table> {
        Some(match name {
            "tables" => (TABLES, self.info_tables()),
            "columns" => (COLUMNS, self.info_columns()),
            "schemata" => (SCHEMATA, self.info_schemata()),
            "table_constraints" => (TABLE_CONSTRAINTS, self.info_table_constraints()),
            "key_column_usage" => (KEY_COLUMN_USAGE, self.info_key_column_usage()),
            "referential_constraints" => {
                (REFERENTIAL_CONSTRAINTS, self.info_referential_constraints())
            }
            "views" => (VIEWS, self.info_views()),
            "sequences" => (SEQUENCES, self.info_sequences()),
            _ => return None,
        })
    }

    /// `*_catalog`: the database.
    fn db(&self) -> V {
        V::from(self.database.as_str())
    }

    fn info_tables(&self) -> Vec<Vec<V>> {
        let mut rows: Vec<(String, String, &str)> = self
            .tables()
            .map(|t| (t.schema.clone(), t.name.clone(), "BASE TABLE"))
            .chain(
                self.views()
                    .into_iter()
                    .map(|v| (v.schema.clone(), v.name.clone(), "VIEW")),
            )
            .collect();
        rows.sort();
        rows.into_iter()
            .map(|(schema, name, kind)| {
                vec![
                    self.db(),
                    schema.into(),
                    name.into(),
                    kind.into(),
                    V::N,
                    V::N,
                    V::N,
                    V::N,
                    V::N,
                    yes(kind == "BASE TABLE"),
                    "NO".into(),
                    V::N,
                ]
            })
            .collect()
    }

    fn info_columns(&self) -> Vec<Vec<V>> {
        self.tables()
            .flat_map(|t| {
                t.columns.iter().enumerate().map(move |(i, c)| {
                    let (dt, len, prec, radix, scale, dtp, udt) = type_facts(&c.ty);
                    let octets = match &len {
                        V::I(l) => V::I(l * 4),
                        _ if matches!(c.ty, SqlType::Text | SqlType::Varchar(None)) => {
                            V::I(1_073_741_824)
                        }
                        _ => V::N,
                    };
                    column_row(
                        &self.database,
                        (&t.schema, &t.name, &c.name, i),
                        default_text(t, c).into(),
                        !c.not_null,
                        (dt, len, octets, prec, radix, scale, dtp, udt.to_string()),
                        true,
                        c.identity.zip(self.sequence_of_column(c)),
                    )
                })
            })
            .chain(self.views().into_iter().flat_map(|v| {
                v.columns
                    .iter()
                    .zip(&v.type_oids)
                    .enumerate()
                    .map(move |(i, (c, oid))| {
                        column_row(
                            &self.database,
                            (&v.schema, &v.name, c, i),
                            V::N,
                            true,
                            oid_facts(*oid),
                            false,
                            None,
                        )
                    })
            }))
            .collect()
    }

    fn info_schemata(&self) -> Vec<Vec<V>> {
        self.schemas()
            .into_iter()
            .map(|s| {
                vec![
                    self.db(),
                    s.into(),
                    self.user.as_str().into(),
                    V::N,
                    V::N,
                    V::N,
                    V::N,
                ]
            })
            .collect()
    }

    fn info_table_constraints(&self) -> Vec<Vec<V>> {
        self.constraints()
            .into_iter()
            .map(|c| {
                vec![
                    self.db(),
                    c.schema.clone().into(),
                    c.name.clone().into(),
                    self.db(),
                    c.schema.clone().into(),
                    c.table.clone().into(),
                    c.kind.into(),
                    "NO".into(),
                    "NO".into(),
                    "YES".into(),
                    if c.kind == "FOREIGN KEY" {
                        V::N
                    } else {
                        "YES".into()
                    },
                ]
            })
            .collect()
    }

    fn info_key_column_usage(&self) -> Vec<Vec<V>> {
        self.constraints()
            .into_iter()
            .flat_map(|c| {
                let db = self.db();
                c.columns
                    .iter()
                    .enumerate()
                    .map(|(i, col)| {
                        vec![
                            db.clone(),
                            c.schema.clone().into(),
                            c.name.clone().into(),
                            db.clone(),
                            c.schema.clone().into(),
                            c.table.clone().into(),
                            col.clone().into(),
                            V::I(i as i64 + 1),
                            if c.kind == "FOREIGN KEY" {
                                V::I(i as i64 + 1)
                            } else {
                                V::N
                            },
                        ]
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn info_referential_constraints(&self) -> Vec<Vec<V>> {
        self.catalog
            .foreign_keys
            .iter()
            .filter_map(|fk| {
                let t = self.catalog.table_by_id(fk.table)?;
                let r = self.catalog.table_by_id(fk.ref_table)?;
                let unique = indexes(r)
                    .into_iter()
                    .find(|i| i.unique && i.columns == fk.ref_columns)
                    .map(|i| i.name);
                let rule = |a: &str| {
                    if a.is_empty() {
                        "NO ACTION".to_string()
                    } else {
                        a.to_ascii_uppercase()
                    }
                };
                Some(vec![
                    self.db(),
                    t.schema.as_str().into(),
                    fk.name.as_str().into(),
                    self.db(),
                    r.schema.as_str().into(),
                    unique.into(),
                    "NONE".into(),
                    rule(&fk.on_update).into(),
                    rule(&fk.on_delete).into(),
                ])
            })
            .collect()
    }

    fn info_views(&self) -> Vec<Vec<V>> {
        self.views()
            .into_iter()
            .map(|v| {
                vec![
                    self.db(),
                    v.schema.as_str().into(),
                    v.name.as_str().into(),
                    v.definition.as_str().into(),
                    "NONE".into(),
                    "NO".into(),
                    "NO".into(),
                    "NO".into(),
                    "NO".into(),
                    "NO".into(),
                ]
            })
            .collect()
    }

    fn info_sequences(&self) -> Vec<Vec<V>> {
        self.sequences()
            .iter()
            .map(|s| {
                let (dt, _, prec, radix, scale, _, _) = type_facts(&s.ty);
                vec![
                    self.db(),
                    s.schema.as_str().into(),
                    s.name.as_str().into(),
                    dt.into(),
                    prec,
                    radix,
                    scale,
                    s.start.to_string().into(),
                    s.min.to_string().into(),
                    s.max.to_string().into(),
                    s.increment.to_string().into(),
                    yes(s.cycle),
                ]
            })
            .collect()
    }

    /// Primary keys, unique constraints and foreign keys.
    fn constraints(&self) -> Vec<Constraint> {
        let mut out = vec![];
        for t in self.tables() {
            for ix in indexes(t).into_iter().filter(|i| i.constraint) {
                out.push(Constraint {
                    schema: t.schema.clone(),
                    table: t.name.clone(),
                    name: ix.name.clone(),
                    kind: if ix.primary { "PRIMARY KEY" } else { "UNIQUE" },
                    columns: ix.columns.clone(),
                });
            }
        }
        for fk in &self.catalog.foreign_keys {
            if let Some(t) = self.catalog.table_by_id(fk.table) {
                out.push(Constraint {
                    schema: t.schema.clone(),
                    table: t.name.clone(),
                    name: fk.name.clone(),
                    kind: "FOREIGN KEY",
                    columns: fk.columns.clone(),
                });
            }
        }
        out
    }
}

struct Constraint {
    schema: String,
    table: String,
    name: String,
    kind: &'static str,
    columns: Vec<String>,
}

const TABLES: Cols = &[
    ("table_catalog", Text),
    ("table_schema", Text),
    ("table_name", Text),
    ("table_type", Text),
    ("self_referencing_column_name", Text),
    ("reference_generation", Text),
    ("user_defined_type_catalog", Text),
    ("user_defined_type_schema", Text),
    ("user_defined_type_name", Text),
    ("is_insertable_into", Text),
    ("is_typed", Text),
    ("commit_action", Text),
];

const COLUMNS: Cols = &[
    ("table_catalog", Text),
    ("table_schema", Text),
    ("table_name", Text),
    ("column_name", Text),
    ("ordinal_position", I32),
    ("column_default", Text),
    ("is_nullable", Text),
    ("data_type", Text),
    ("character_maximum_length", I32),
    ("character_octet_length", I32),
    ("numeric_precision", I32),
    ("numeric_precision_radix", I32),
    ("numeric_scale", I32),
    ("datetime_precision", I32),
    ("interval_type", Text),
    ("interval_precision", I32),
    ("character_set_catalog", Text),
    ("character_set_schema", Text),
    ("character_set_name", Text),
    ("collation_catalog", Text),
    ("collation_schema", Text),
    ("collation_name", Text),
    ("domain_catalog", Text),
    ("domain_schema", Text),
    ("domain_name", Text),
    ("udt_catalog", Text),
    ("udt_schema", Text),
    ("udt_name", Text),
    ("scope_catalog", Text),
    ("scope_schema", Text),
    ("scope_name", Text),
    ("maximum_cardinality", I32),
    ("dtd_identifier", Text),
    ("is_self_referencing", Text),
    ("is_identity", Text),
    ("identity_generation", Text),
    ("identity_start", Text),
    ("identity_increment", Text),
    ("identity_maximum", Text),
    ("identity_minimum", Text),
    ("identity_cycle", Text),
    ("is_generated", Text),
    ("generation_expression", Text),
    ("is_updatable", Text),
];

const SCHEMATA: Cols = &[
    ("catalog_name", Text),
    ("schema_name", Text),
    ("schema_owner", Text),
    ("default_character_set_catalog", Text),
    ("default_character_set_schema", Text),
    ("default_character_set_name", Text),
    ("sql_path", Text),
];

const TABLE_CONSTRAINTS: Cols = &[
    ("constraint_catalog", Text),
    ("constraint_schema", Text),
    ("constraint_name", Text),
    ("table_catalog", Text),
    ("table_schema", Text),
    ("table_name", Text),
    ("constraint_type", Text),
    ("is_deferrable", Text),
    ("initially_deferred", Text),
    ("enforced", Text),
    ("nulls_distinct", Text),
];

const KEY_COLUMN_USAGE: Cols = &[
    ("constraint_catalog", Text),
    ("constraint_schema", Text),
    ("constraint_name", Text),
    ("table_catalog", Text),
    ("table_schema", Text),
    ("table_name", Text),
    ("column_name", Text),
    ("ordinal_position", I32),
    ("position_in_unique_constraint", I32),
];

const REFERENTIAL_CONSTRAINTS: Cols = &[
    ("constraint_catalog", Text),
    ("constraint_schema", Text),
    ("constraint_name", Text),
    ("unique_constraint_catalog", Text),
    ("unique_constraint_schema", Text),
    ("unique_constraint_name", Text),
    ("match_option", Text),
    ("update_rule", Text),
    ("delete_rule", Text),
];

const VIEWS: Cols = &[
    ("table_catalog", Text),
    ("table_schema", Text),
    ("table_name", Text),
    ("view_definition", Text),
    ("check_option", Text),
    ("is_updatable", Text),
    ("is_insertable_into", Text),
    ("is_trigger_updatable", Text),
    ("is_trigger_deletable", Text),
    ("is_trigger_insertable_into", Text),
];

const SEQUENCES: Cols = &[
    ("sequence_catalog", Text),
    ("sequence_schema", Text),
    ("sequence_name", Text),
    ("data_type", Text),
    ("numeric_precision", I32),
    ("numeric_precision_radix", I32),
    ("numeric_scale", I32),
    ("start_value", Text),
    ("minimum_value", Text),
    ("maximum_value", Text),
    ("increment", Text),
    ("cycle_option", Text),
];
