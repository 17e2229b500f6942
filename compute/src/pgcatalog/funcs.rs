//! The functions catalog queries call (`format_type`, `pg_get_indexdef`,
//! `pg_table_is_visible`, the `reg*` conversions, ...), answered from the
//! same snapshot as the catalog tables.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::ScalarValue;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{ScalarUDF, Signature, Volatility};
use datafusion::prelude::SessionContext;
use meta::ColumnDef;

use super::oids;
use super::tables::{indexes, Index};
use super::Snapshot;

use super::udf::{
    expand_array, expanded_type, flag, int, json_string, json_value, list_len, s, text, undefined,
    Body, CatalogFn,
};

/// A column's default as `pg_attrdef.adbin` and `information_schema`
/// show it: its sequence's `nextval(...)`, else its expression.
pub fn default_text(t: &meta::TableDef, c: &ColumnDef) -> Option<String> {
    // An identity column has no default (its sequence is the identity's).
    if c.identity.is_some() {
        return None;
    }
    if let Some(seq) = &c.sequence {
        // A SERIAL column's counter is shown under the name PostgreSQL
        // gives its sequence.
        let name = seq
            .strip_prefix(meta::SEQUENCE_SOURCE_PREFIX)
            .map(|q| match q.split_once('.') {
                Some(("public", n)) => n.to_string(),
                _ => q.to_string(),
            })
            .unwrap_or_else(|| format!("{}_{}_seq", t.name, c.name));
        return Some(format!("nextval('{}'::regclass)", name.replace('\'', "''")));
    }
    c.default.clone()
}

fn quote(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$');
    if plain && !is_reserved(name) {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

fn is_reserved(w: &str) -> bool {
    matches!(
        w,
        "all"
            | "analyse"
            | "analyze"
            | "and"
            | "any"
            | "array"
            | "as"
            | "asc"
            | "asymmetric"
            | "both"
            | "case"
            | "cast"
            | "check"
            | "collate"
            | "column"
            | "constraint"
            | "create"
            | "current_catalog"
            | "current_date"
            | "current_role"
            | "current_time"
            | "current_timestamp"
            | "current_user"
            | "default"
            | "deferrable"
            | "desc"
            | "distinct"
            | "do"
            | "else"
            | "end"
            | "except"
            | "false"
            | "fetch"
            | "for"
            | "foreign"
            | "from"
            | "grant"
            | "group"
            | "having"
            | "in"
            | "initially"
            | "intersect"
            | "into"
            | "lateral"
            | "leading"
            | "limit"
            | "localtime"
            | "localtimestamp"
            | "not"
            | "null"
            | "offset"
            | "on"
            | "only"
            | "or"
            | "order"
            | "placing"
            | "primary"
            | "references"
            | "returning"
            | "select"
            | "session_user"
            | "some"
            | "symmetric"
            | "table"
            | "then"
            | "to"
            | "trailing"
            | "true"
            | "union"
            | "unique"
            | "user"
            | "using"
            | "variadic"
            | "when"
            | "where"
            | "window"
            | "with"
    )
}

/// `pg_get_indexdef` of an index.
pub fn index_def(ix: &Index<'_>) -> String {
    format!(
        "CREATE {}INDEX {} ON {}.{} USING btree ({})",
        if ix.unique { "UNIQUE " } else { "" },
        quote(&ix.name),
        quote(&ix.table.schema),
        quote(&ix.table.name),
        ix.columns
            .iter()
            .map(|c| quote(c))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn cols(c: &[String]) -> String {
    c.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ")
}

impl Snapshot {
    fn index_by_oid(&self, oid: i64) -> Option<Index<'_>> {
        self.tables().flat_map(indexes).find(|i| i.oid == oid)
    }

    /// The schema and name of a relation OID.
    pub fn relation(&self, oid: i64) -> Option<(String, String)> {
        if let Some(n) = super::tables::NAMES
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
            super::tables::NAMES
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
        if !fk.enforced {
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
    let text_list = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    // `text_arg`: the result type and body when the first argument is
    // text (see `CatalogFn`).
    let register =
        |name: &'static str, ret: DataType, body: Body, text_arg: Option<(DataType, Body)>| {
            ctx.register_udf(ScalarUDF::new_from_impl(CatalogFn {
                name,
                ret,
                signature: Signature::one_of(
                    vec![
                        datafusion::logical_expr::TypeSignature::Nullary,
                        datafusion::logical_expr::TypeSignature::VariadicAny,
                    ],
                    Volatility::Stable,
                ),
                snapshot: snapshot.clone(),
                body,
                text_arg,
            }));
        };
    let f = |name: &'static str, ret: DataType, body: Body| register(name, ret, body, None);
    let dual =
        |name: &'static str, ret: DataType, body: Body, text_ret: DataType, text_body: Body| {
            register(name, ret, body, Some((text_ret, text_body)))
        };
    use DataType::{Boolean, Int64, Utf8};
    f(
        "format_type",
        Utf8,
        Arc::new(|_, a| {
            Ok(s(
                int(a.first()).and_then(|oid| oids::format_type(oid, int(a.get(1))))
            ))
        }),
    );
    f("pg_get_expr", Utf8, Arc::new(|_, a| Ok(s(text(a.first())))));
    f(
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
    f(
        "pg_get_constraintdef",
        Utf8,
        Arc::new(|sn, a| Ok(s(int(a.first()).and_then(|o| sn.constraint_def(o))))),
    );
    f(
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
    f(
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
        f(
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
        f(
            name,
            Boolean,
            Arc::new(|_, _| Ok(ScalarValue::Boolean(Some(true)))),
        );
    }
    f(
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
    // COMMENT ON texts: `obj_description(oid[, catalog])` of a relation,
    // `col_description(oid, column number)`.
    f(
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
    // A view's query as Tessera stores it (its table names qualified).
    f(
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
    f(
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
    f("shobj_description", Utf8, Arc::new(|_, _| Ok(s(None))));
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
        f(name, Utf8, Arc::new(|_, _| Ok(s(None))));
    }
    f(
        "pg_encoding_to_char",
        Utf8,
        Arc::new(|_, a| {
            Ok(s(
                int(a.first()).map(|e| if e == 6 { "UTF8" } else { "" }.to_string())
            ))
        }),
    );
    f(
        "current_schemas",
        text_list.clone(),
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
    f(
        "to_regclass",
        Int64,
        Arc::new(|sn, a| {
            Ok(ScalarValue::Int64(
                text(a.first()).and_then(|n| sn.relation_oid(&n)),
            ))
        }),
    );
    f(
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
    dual(super::REGCLASS, Utf8, regclass_out, Int64, regclass_in);
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
    dual(super::REGTYPE, Utf8, regtype_out, Int64, regtype_in);
    f(
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
    f(
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
    f(
        "quote_ident",
        Utf8,
        Arc::new(|_, a| Ok(s(text(a.first()).map(|n| quote(&n))))),
    );
    f(
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
    f(
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
    f(
        super::EXPANDARRAY,
        DataType::List(Arc::new(Field::new("item", expanded_type(), true))),
        Arc::new(|_, a| Ok(expand_array(a.first()))),
    );
    f(
        super::PREFIX_ELEMENTS,
        text_list.clone(),
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
    f(
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
    f(
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
    f(
        "pg_relation_is_publishable",
        Boolean,
        Arc::new(|_, _| Ok(ScalarValue::Boolean(Some(false)))),
    );
    f(
        "pg_backend_pid",
        DataType::Int32,
        Arc::new(|sn, _| Ok(ScalarValue::Int32(Some(sn.pid)))),
    );
    f(
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
        f(name, Int64, Arc::new(|_, _| Ok(ScalarValue::Int64(None))));
    }
    f(
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
    fn names_are_quoted_as_postgresql_quotes_them() {
        assert_eq!(quote("abc_1"), "abc_1");
        assert_eq!(quote("Abc"), "\"Abc\"");
        assert_eq!(quote("user"), "\"user\"");
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
        assert_eq!(size_pretty(8192), "8192 bytes");
        assert_eq!(size_pretty(10 * 1024 * 1024), "10 MB");
        assert_eq!(size_pretty(123_456_789), "118 MB");
        assert_eq!(
            split_name("Public.\"T\"\"x\""),
            Some(vec!["public".into(), "T\"x".into()])
        );
    }
}
