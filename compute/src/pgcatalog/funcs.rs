//! The functions catalog queries call (`format_type`, `pg_get_indexdef`,
//! `pg_table_is_visible`, the `reg*` conversions, ...), answered from the
//! same snapshot as the catalog tables.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::ScalarValue;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{ScalarUDF, Signature, Volatility};
use datafusion::prelude::SessionContext;

use super::defs::{index_def, quote};
use super::index::{indexes, Index};
use super::oids;
use super::Snapshot;

use super::udf::{
    expand_array, expanded_type, flag, int, json_string, json_value, list_len, s, text, undefined,
    Body, CatalogFn,
};

fn cols(c: &[String]) -> String {
    c.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ")
}

impl Snapshot {
    fn index_by_oid(&self, oid: i64) -> Option<Index<'_>> {
        self.tables().flat_map(indexes).find(|i| i.oid == oid)
    }

    /// The schema and name of a relation OID.
    pub fn relation(&self, oid: i64) -> Option<(String, String)> {
        if let Some(n) = oids::CATALOG_TABLES
            .iter()
            .find(|n| oids::catalog_relation(n) == Some(oid))
        {
            return Some(("pg_catalog".into(), n.to_string()));
        }
        for t in self.tables() {
            if oids::table(t.id) == oid {
                return Some((t.schema.clone(), t.name.clone()));
            }
            if let Some(ix) = indexes(t).into_iter().find(|i| i.oid == oid) {
                return Some((t.schema.clone(), ix.name));
            }
        }
        if let Some(v) = self.views().into_iter().find(|v| oids::view(v.id) == oid) {
            return Some((v.schema.clone(), v.name.clone()));
        }
        self.sequences()
            .iter()
            .find(|s| oids::sequence(s.id) == oid)
            .map(|s| (s.schema.clone(), s.name.clone()))
    }

    /// A relation name (`t` or `s.t`) to its OID, as `'t'::regclass`.
    pub fn relation_oid(&self, name: &str) -> Option<i64> {
        let parts = split_name(name)?;
        let (schema, rel) = match parts.as_slice() {
            [r] => (None, r.clone()),
            [s, r] => (Some(s.clone()), r.clone()),
            _ => return None,
        };
        let schemas = match &schema {
            Some(s) => vec![s.clone()],
            None => vec![self.schema.clone()],
        };
        let system = || {
            oids::CATALOG_TABLES
                .contains(&rel.as_str())
                .then(|| oids::catalog_relation(&rel))
                .flatten()
        };
        if schema.as_deref() == Some("pg_catalog") {
            return system();
        }
        for t in self.tables() {
            if !schemas.contains(&t.schema) {
                continue;
            }
            if t.name == rel {
                return Some(oids::table(t.id));
            }
            if let Some(ix) = indexes(t).into_iter().find(|i| i.name == rel) {
                return Some(ix.oid);
            }
        }
        if let Some(v) = self
            .views()
            .into_iter()
            .find(|v| schemas.contains(&v.schema) && v.name == rel)
        {
            return Some(oids::view(v.id));
        }
        self.sequences()
            .iter()
            .find(|s| schemas.contains(&s.schema) && s.name == rel)
            .map(|s| oids::sequence(s.id))
            .or_else(|| if schema.is_none() { system() } else { None })
    }

    fn visible(&self, oid: i64) -> bool {
        match self.relation(oid) {
            Some((schema, _)) => schema == self.schema,
            None => oid < 16_384,
        }
    }

    fn constraint_def(&self, oid: i64) -> Option<String> {
        for t in self.tables() {
            for ix in indexes(t) {
                if ix.constraint && oids::index_constraint(ix.oid) == oid {
                    let kind = if ix.primary { "PRIMARY KEY" } else { "UNIQUE" };
                    return Some(format!("{kind} ({})", cols(&ix.columns)));
                }
            }
        }
        let fk = self
            .catalog
            .foreign_keys
            .iter()
            .find(|f| oids::foreign_key(f.id) == oid)?;
        let r = self.catalog.table_by_id(fk.ref_table)?;
        let mut def = format!(
            "FOREIGN KEY ({}) REFERENCES {}({})",
            cols(&fk.columns),
            if r.schema == self.schema {
                quote(&r.name)
            } else {
                format!("{}.{}", quote(&r.schema), quote(&r.name))
            },
            cols(&fk.ref_columns)
        );
        for (what, a) in [("UPDATE", &fk.on_update), ("DELETE", &fk.on_delete)] {
            let a = a.to_ascii_uppercase();
            if !a.is_empty() && a != "NO ACTION" {
                def.push_str(&format!(" ON {what} {a}"));
            }
        }
        if fk.enforcement == meta::Enforcement::Recorded {
            def.push_str(" NOT VALID");
        }
        Some(def)
    }

    fn type_oid(&self, name: &str) -> Option<i64> {
        let n = name.trim().to_ascii_lowercase();
        let n = n.strip_prefix("pg_catalog.").unwrap_or(&n);
        if let Ok(t) = common::SqlType::parse(n) {
            return Some(crate::pgtypes::pg_type(&t).oid() as i64);
        }
        let alias = match n {
            "int" | "int4" => "int4",
            "int8" => "int8",
            "int2" => "int2",
            "float8" => "float8",
            "float4" => "float4",
            "bool" => "bool",
            other => other,
        };
        oids::builtin_types()
            .into_iter()
            .find(|t| t.name == alias)
            .map(|t| t.oid)
    }
}

/// Registers the catalog functions on `ctx`, answering from `snapshot`.
pub fn register(ctx: &SessionContext, snapshot: &Arc<Snapshot>) {
    let r = Registrar { ctx, snapshot };
    definitions(&r);
    comments(&r);
    names(&r);
    reg_casts(&r);
    visibility_and_privileges(&r);
    arrays_and_json(&r);
    server(&r);
}

/// Registers catalog functions on a context, answering from a snapshot.
struct Registrar<'a> {
    ctx: &'a SessionContext,
    snapshot: &'a Arc<Snapshot>,
}

impl Registrar<'_> {
    /// `text_arg`: the result type and body when the first argument is
    /// text (see `CatalogFn`).
    fn register(
        &self,
        name: &'static str,
        ret: DataType,
        body: Body,
        text_arg: Option<(DataType, Body)>,
    ) {
        self.ctx.register_udf(ScalarUDF::new_from_impl(CatalogFn {
            name,
            ret,
            signature: Signature::one_of(
                vec![
                    datafusion::logical_expr::TypeSignature::Nullary,
                    datafusion::logical_expr::TypeSignature::VariadicAny,
                ],
                Volatility::Stable,
            ),
            snapshot: self.snapshot.clone(),
            body,
            text_arg,
        }));
    }

    fn f(&self, name: &'static str, ret: DataType, body: Body) {
        self.register(name, ret, body, None)
    }

    fn dual(
        &self,
        name: &'static str,
        ret: DataType,
        body: Body,
        text_ret: DataType,
        text_body: Body,
    ) {
        self.register(name, ret, body, Some((text_ret, text_body)))
    }
}

/// `text[]`.
fn text_list() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

/// Definitions: `format_type`, `pg_get_indexdef`, `pg_get_constraintdef`,
/// `pg_get_viewdef`, ... (NULL for objects Tessera does not have).
fn definitions(r: &Registrar) {
    use DataType::Utf8;
    r.f(
        "format_type",
        Utf8,
        Arc::new(|_, a| {
            Ok(s(
                int(a.first()).and_then(|oid| oids::format_type(oid, int(a.get(1))))
            ))
        }),
    );
    r.f("pg_get_expr", Utf8, Arc::new(|_, a| Ok(s(text(a.first())))));
    r.f(
        "pg_get_indexdef",
        Utf8,
        Arc::new(|sn, a| {
            let Some(ix) = int(a.first()).and_then(|o| sn.index_by_oid(o)) else {
                return Ok(s(None));
            };
            Ok(s(Some(match int(a.get(1)).unwrap_or(0) {
                0 => index_def(&ix),
                n => ix
                    .columns
                    .get(n as usize - 1)
                    .map(|c| quote(c))
                    .unwrap_or_default(),
            })))
        }),
    );
    r.f(
        "pg_get_constraintdef",
        Utf8,
        Arc::new(|sn, a| Ok(s(int(a.first()).and_then(|o| sn.constraint_def(o))))),
    );
    // A view's query as Tessera stores it (its table names qualified).
    r.f(
        "pg_get_viewdef",
        Utf8,
        Arc::new(|sn, a| {
            let Some(oid) = int(a.first()) else {
                return Ok(s(None));
            };
            Ok(s(sn
                .views()
                .into_iter()
                .find(|v| super::oids::view(v.id) == oid)
                .map(|v| v.definition.clone())))
        }),
    );
    for name in [
        "pg_get_partkeydef",
        "pg_get_triggerdef",
        "pg_get_ruledef",
        "pg_get_statisticsobjdef_columns",
        "pg_get_function_arguments",
        "pg_get_function_result",
        "pg_get_function_identity_arguments",
        "pg_get_functiondef",
    ] {
        r.f(name, Utf8, Arc::new(|_, _| Ok(s(None))));
    }
}

/// COMMENT ON texts: `obj_description(oid[, catalog])` of a relation,
/// `col_description(oid, column number)`.
fn comments(r: &Registrar) {
    use DataType::Utf8;
    r.f(
        "obj_description",
        Utf8,
        Arc::new(|sn, a| {
            let (Some(oid), catalog) = (int(a.first()), text(a.get(1))) else {
                return Ok(s(None));
            };
            if catalog.is_some_and(|c| c != "pg_class") {
                return Ok(s(None));
            }
            Ok(s(sn
                .descriptions()
                .into_iter()
                .find(|(o, sub, _)| *o == oid && *sub == 0)
                .map(|(_, _, t)| t)))
        }),
    );
    r.f(
        "col_description",
        Utf8,
        Arc::new(|sn, a| {
            let (Some(oid), Some(n)) = (int(a.first()), int(a.get(1))) else {
                return Ok(s(None));
            };
            Ok(s(sn
                .descriptions()
                .into_iter()
                .find(|(o, sub, _)| *o == oid && *sub as i64 == n)
                .map(|(_, _, t)| t)))
        }),
    );
    r.f("shobj_description", Utf8, Arc::new(|_, _| Ok(s(None))));
}

/// Names of roles, sequences, schemas and identifiers.
fn names(r: &Registrar) {
    use DataType::Utf8;
    r.f(
        "pg_get_userbyid",
        Utf8,
        Arc::new(|sn, a| {
            let oid = int(a.first());
            Ok(s(Some(
                sn.roles()
                    .iter()
                    .find(|(n, _)| Some(oids::role(n)) == oid)
                    .map(|(n, _)| n.clone())
                    .unwrap_or_else(|| format!("unknown (OID={})", oid.unwrap_or(0))),
            )))
        }),
    );
    r.f(
        "pg_get_serial_sequence",
        Utf8,
        Arc::new(|sn, a| {
            let (Some(t), Some(c)) = (text(a.first()), text(a.get(1))) else {
                return Ok(s(None));
            };
            let Some(oid) = sn.relation_oid(&t) else {
                return Err(undefined("relation", &t));
            };
            let Some(def) = sn.tables().find(|x| oids::table(x.id) == oid) else {
                return Ok(s(None));
            };
            let column = c.to_lowercase();
            if def.column(&column).is_err() {
                return Err(DataFusionError::External(Box::new(common::Error::Sql {
                    state: common::SqlState::UNDEFINED_COLUMN,
                    message: format!(
                        "column \"{column}\" of relation \"{}\" does not exist",
                        def.name
                    ),
                })));
            }
            // As PostgreSQL: the sequence OWNED BY the column.
            let seq = sn
                .sequences()
                .into_iter()
                .find(|q| q.owned_by.as_ref() == Some(&(def.id, column.clone())))
                .map(|q| format!("{}.{}", quote(&q.schema), quote(&q.name)));
            Ok(s(seq))
        }),
    );
    r.f(
        "current_schemas",
        text_list(),
        Arc::new(|sn, a| {
            let mut v = vec![];
            if flag(a.first()) {
                v.push(ScalarValue::Utf8(Some("pg_catalog".into())));
            }
            if sn.catalog.schemas.contains(&sn.schema) {
                v.push(ScalarValue::Utf8(Some(sn.schema.clone())));
            }
            Ok(ScalarValue::List(ScalarValue::new_list_nullable(&v, &Utf8)))
        }),
    );
    r.f(
        "quote_ident",
        Utf8,
        Arc::new(|_, a| Ok(s(text(a.first()).map(|n| quote(&n))))),
    );
}

/// Relation and type names to OIDs and back (`to_regclass`, the `reg*`
/// casts).
fn reg_casts(r: &Registrar) {
    use DataType::{Int64, Utf8};
    r.f(
        "to_regclass",
        Int64,
        Arc::new(|sn, a| {
            Ok(ScalarValue::Int64(
                text(a.first()).and_then(|n| sn.relation_oid(&n)),
            ))
        }),
    );
    r.f(
        "to_regtype",
        Int64,
        Arc::new(|sn, a| {
            Ok(ScalarValue::Int64(
                text(a.first()).and_then(|n| sn.type_oid(&n)),
            ))
        }),
    );
    // `'t'::regclass` is an OID, `oid::regclass` a name (see
    // `plan::pgsyntax::catalog`); likewise regtype.
    let regclass_in: Body = Arc::new(|sn, a| match text(a.first()) {
        None => Ok(ScalarValue::Int64(None)),
        Some(n) => match n.parse::<i64>() {
            Ok(oid) => Ok(ScalarValue::Int64(Some(oid))),
            Err(_) => sn
                .relation_oid(&n)
                .map(|o| ScalarValue::Int64(Some(o)))
                .ok_or_else(|| undefined("relation", &n)),
        },
    });
    let regclass_out: Body = Arc::new(|sn, a| {
        Ok(s(int(a.first()).map(|oid| match sn.relation(oid) {
            Some((schema, name)) if schema == sn.schema || schema == "pg_catalog" => quote(&name),
            Some((schema, name)) => format!("{}.{}", quote(&schema), quote(&name)),
            None => oid.to_string(),
        })))
    });
    r.dual(super::REGCLASS, Utf8, regclass_out, Int64, regclass_in);
    let regtype_in: Body = Arc::new(|sn, a| match text(a.first()) {
        None => Ok(ScalarValue::Int64(None)),
        Some(n) => sn
            .type_oid(&n)
            .map(|o| ScalarValue::Int64(Some(o)))
            .ok_or_else(|| undefined("type", &n)),
    });
    let regtype_out: Body = Arc::new(|_, a| {
        Ok(s(int(a.first()).map(|oid| {
            oids::format_type(oid, None).unwrap_or_else(|| oid.to_string())
        })))
    });
    r.dual(super::REGTYPE, Utf8, regtype_out, Int64, regtype_in);
    r.f(
        super::REGNAMESPACE_OUT,
        Utf8,
        Arc::new(|sn, a| {
            Ok(s(int(a.first()).map(|oid| {
                sn.schemas()
                    .into_iter()
                    .find(|n| oids::namespace(n) == oid)
                    .unwrap_or_else(|| oid.to_string())
            })))
        }),
    );
    r.f(
        super::REGROLE_OUT,
        Utf8,
        Arc::new(|sn, a| {
            Ok(s(int(a.first()).map(|oid| {
                sn.roles()
                    .into_iter()
                    .find(|(n, _)| oids::role(n) == oid)
                    .map(|(n, _)| n)
                    .unwrap_or_else(|| oid.to_string())
            })))
        }),
    );
}

/// Visibility in the search path and privileges (every privilege is held).
fn visibility_and_privileges(r: &Registrar) {
    use DataType::Boolean;
    r.f(
        "pg_table_is_visible",
        Boolean,
        Arc::new(|sn, a| Ok(ScalarValue::Boolean(int(a.first()).map(|o| sn.visible(o))))),
    );
    for name in [
        "pg_type_is_visible",
        "pg_function_is_visible",
        "pg_collation_is_visible",
        "pg_opclass_is_visible",
        "pg_conversion_is_visible",
        "pg_ts_config_is_visible",
        "pg_statistics_obj_is_visible",
    ] {
        r.f(
            name,
            Boolean,
            Arc::new(|_, a| Ok(ScalarValue::Boolean(int(a.first()).map(|_| true)))),
        );
    }
    for name in [
        "has_table_privilege",
        "has_schema_privilege",
        "has_database_privilege",
        "has_column_privilege",
        "has_sequence_privilege",
        "has_function_privilege",
        "has_any_column_privilege",
        "has_tablespace_privilege",
    ] {
        r.f(
            name,
            Boolean,
            Arc::new(|_, _| Ok(ScalarValue::Boolean(Some(true)))),
        );
    }
}

/// Arrays (the helpers `plan::pgsyntax::catalog` rewrites into) and
/// `json_build_object`.
fn arrays_and_json(r: &Registrar) {
    use DataType::Utf8;
    r.f(
        "json_build_object",
        Utf8,
        Arc::new(|_, a| {
            if a.len() % 2 != 0 {
                return Err(DataFusionError::External(Box::new(common::Error::Sql {
                    state: common::SqlState("22023"),
                    message: "argument list must have even number of elements".into(),
                })));
            }
            let items: Vec<String> = a
                .chunks(2)
                .map(|kv| {
                    format!(
                        "{} : {}",
                        json_string(&text(kv.first()).unwrap_or_default()),
                        json_value(&kv[1])
                    )
                })
                .collect();
            Ok(s(Some(format!("{{{}}}", items.join(", ")))))
        }),
    );
    // `generate_subscripts(a, 1)` in a select list is
    // `unnest(tessera_subscripts(a, 1))` (see `plan::pgsyntax::catalog`).
    r.f(
        super::SUBSCRIPTS,
        DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
        Arc::new(|_, a| {
            let n = match (list_len(a.first()), int(a.get(1))) {
                (Some(n), Some(1)) => n,
                _ => 0,
            };
            let v: Vec<ScalarValue> = (1..=n as i32)
                .map(|i| ScalarValue::Int32(Some(i)))
                .collect();
            Ok(ScalarValue::List(ScalarValue::new_list_nullable(
                &v,
                &DataType::Int32,
            )))
        }),
    );
    // `information_schema._pg_expandarray(a)`: (x, n) per element, as
    // `unnest(tessera_expandarray(a))` (see `plan::pgsyntax::catalog`).
    r.f(
        super::EXPANDARRAY,
        DataType::List(Arc::new(Field::new("item", expanded_type(), true))),
        Arc::new(|_, a| Ok(expand_array(a.first()))),
    );
    r.f(
        super::PREFIX_ELEMENTS,
        text_list(),
        Arc::new(|_, a| {
            use datafusion::arrow::array::Array;
            let prefix = text(a.first()).unwrap_or_default();
            let items: Vec<ScalarValue> = match a.get(1) {
                Some(ScalarValue::List(l)) if !l.is_null(0) => {
                    let values = l.value(0);
                    (0..values.len())
                        .map(|i| {
                            let v = ScalarValue::try_from_array(&values, i).ok();
                            ScalarValue::Utf8(text(v.as_ref()).map(|t| format!("{prefix}{t}")))
                        })
                        .collect()
                }
                _ => vec![],
            };
            Ok(ScalarValue::List(ScalarValue::new_list_nullable(
                &items, &Utf8,
            )))
        }),
    );
    r.f(
        "array_upper",
        DataType::Int32,
        Arc::new(|_, a| {
            Ok(ScalarValue::Int32(
                match (list_len(a.first()), int(a.get(1))) {
                    (Some(n), Some(1)) if n > 0 => Some(n as i32),
                    _ => None,
                },
            ))
        }),
    );
    r.f(
        "array_lower",
        DataType::Int32,
        Arc::new(|_, a| {
            Ok(ScalarValue::Int32(
                match (list_len(a.first()), int(a.get(1))) {
                    (Some(n), Some(1)) if n > 0 => Some(1),
                    _ => None,
                },
            ))
        }),
    );
}

/// The server and its relations' sizes.
fn server(r: &Registrar) {
    use DataType::{Boolean, Int64, Utf8};
    r.f(
        "pg_encoding_to_char",
        Utf8,
        Arc::new(|_, a| {
            Ok(s(
                int(a.first()).map(|e| if e == 6 { "UTF8" } else { "" }.to_string())
            ))
        }),
    );
    r.f(
        "pg_relation_is_publishable",
        Boolean,
        Arc::new(|_, _| Ok(ScalarValue::Boolean(Some(false)))),
    );
    r.f(
        "pg_backend_pid",
        DataType::Int32,
        Arc::new(|sn, _| Ok(ScalarValue::Int32(Some(sn.pid)))),
    );
    r.f(
        "pg_is_in_recovery",
        Boolean,
        Arc::new(|_, _| Ok(ScalarValue::Boolean(Some(false)))),
    );
    for name in [
        "pg_table_size",
        "pg_relation_size",
        "pg_total_relation_size",
        "pg_indexes_size",
    ] {
        r.f(name, Int64, Arc::new(|_, _| Ok(ScalarValue::Int64(None))));
    }
    r.f(
        "pg_size_pretty",
        Utf8,
        Arc::new(|_, a| Ok(s(int(a.first()).map(size_pretty)))),
    );
}

/// PostgreSQL's `pg_size_pretty(bigint)`.
fn size_pretty(mut size: i64) -> String {
    let limit = 10 * 1024;
    let limit2 = limit * 2 - 1;
    let half_rounded = |x: i64| (x + if x < 0 { -1 } else { 1 }) / 2;
    if size.abs() < limit {
        return format!("{size} bytes");
    }
    // One extra bit for rounding.
    size >>= 9;
    for unit in ["kB", "MB", "GB", "TB"] {
        if size.abs() < limit2 {
            return format!("{} {unit}", half_rounded(size));
        }
        size >>= 10;
    }
    format!("{} PB", half_rounded(size))
}

/// `name`, `schema.name`, with double-quoted parts kept as they are and
/// the others folded to lower case (as a `regclass` input is read).
fn split_name(s: &str) -> Option<Vec<String>> {
    let mut parts = vec![];
    let mut cur = String::new();
    let mut chars = s.trim().chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c if quoted => cur.push(c),
            c => cur.extend(c.to_lowercase()),
        }
    }
    if quoted {
        return None;
    }
    parts.push(cur);
    parts.iter().all(|p| !p.is_empty()).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_names_read_as_postgresql_reads_them() {
        assert_eq!(size_pretty(8192), "8192 bytes");
        assert_eq!(size_pretty(10 * 1024 * 1024), "10 MB");
        assert_eq!(size_pretty(123_456_789), "118 MB");
        assert_eq!(
            split_name("Public.\"T\"\"x\""),
            Some(vec!["public".into(), "T\"x".into()])
        );
    }
}
