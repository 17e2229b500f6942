//! Analysis of DDL statements into catalog definitions: CREATE TABLE into
//! a `TableDef`, schema names, unique keys against the partition key, role
//! passwords and GRANT/REVOKE into privilege rows. Pure functions of the
//! statement and the catalog; `exec::ddl` applies them.

use common::config::DefaultDistribution;
use common::{Error, Result, ShardId, SqlState, SqlType};
use datafusion::sql::sqlparser::ast::{
    ColumnOption, CreateTable, Expr, GeneratedAs, TableConstraint,
};
use meta::{ColumnDef, Distribution, IndexDef, TableDef};
use shard_router::sql::normalize_ident;

use crate::plan::{object_parts, resolve_table};

/// The definition of a new table and its slots' shards (the placement
/// map's policy for new tables).
pub fn table_def(
    ct: &CreateTable,
    default_schema: &str,
    catalog: &meta::Catalog,
    default: DefaultDistribution,
    default_partitions: Option<u32>,
) -> Result<(TableDef, Vec<ShardId>)> {
    let parts = object_parts(&ct.name);
    let (schema, name) = match parts.as_slice() {
        [t] => (default_schema.to_string(), t.clone()),
        [s, t] => (s.clone(), t.clone()),
        _ => return Err(Error::unsupported("three-part table names")),
    };
    if !catalog.schemas.contains(&schema) {
        return Err(Error::SchemaNotFound { name: schema });
    }
    if ct.query.is_some() || ct.like.is_some() || ct.partition_of.is_some() {
        return Err(Error::unsupported("CREATE TABLE AS / LIKE / PARTITION OF"));
    }
    // Refused, never dropped: a child table without its parent's columns
    // would answer other rows than PostgreSQL's.
    if ct.inherits.as_ref().is_some_and(|i| !i.is_empty()) {
        return Err(Error::unsupported("table inheritance (INHERITS)"));
    }
    if name.len() > 56 {
        return Err(Error::InvalidTableDefinition {
            message: "table names are limited to 56 characters".into(),
        });
    }
    let mut columns = vec![];
    let mut primary_key: Vec<String> = vec![];
    let mut uniques: Vec<Vec<String>> = vec![];
    for c in &ct.columns {
        let (col, key) = column_def(c, &schema, &name, catalog)?;
        match key {
            Some(ColumnKey::Primary) => primary_key = vec![col.name.clone()],
            Some(ColumnKey::Unique) => uniques.push(vec![col.name.clone()]),
            None => {}
        }
        columns.push(col);
    }
    let idx_cols = |cols: &[datafusion::sql::sqlparser::ast::IndexColumn]| -> Result<Vec<String>> {
        cols.iter()
            .map(|c| match &c.column.expr {
                Expr::Identifier(i) => Ok(normalize_ident(i)),
                other => Err(Error::unsupported(format!(
                    "constraint on expression {other}"
                ))),
            })
            .collect()
    };
    for tc in &ct.constraints {
        match tc {
            TableConstraint::PrimaryKey(pk) => primary_key = idx_cols(&pk.columns)?,
            TableConstraint::Unique(u) => uniques.push(idx_cols(&u.columns)?),
            other => return Err(Error::unsupported(format!("table constraint {other}"))),
        }
    }
    for k in &primary_key {
        let i = columns
            .iter()
            .position(|c| &c.name == k)
            .ok_or(Error::ColumnNotFound { name: k.clone() })?;
        columns[i].not_null = true;
    }
    // Distribution: PARTITION BY HASH (cols), WITH (distribution=..., partitions=N).
    let options = match &ct.table_options {
        datafusion::sql::sqlparser::ast::CreateTableOptions::With(o) => o.clone(),
        datafusion::sql::sqlparser::ast::CreateTableOptions::None => vec![],
        other => return Err(Error::unsupported(format!("table options {other}"))),
    };
    let TableOptions {
        distribution: dist_kind,
        partitions,
        key: option_key,
    } = table_options(&options)?;
    let mut hash_cols: Option<Vec<String>> = option_key;
    if let Some(pb) = &ct.partition_by {
        match pb.as_ref() {
            Expr::Function(f) if object_parts(&f.name).join(".") == "hash" => {
                let datafusion::sql::sqlparser::ast::FunctionArguments::List(l) = &f.args else {
                    return Err(Error::unsupported("PARTITION BY HASH without columns"));
                };
                let mut cols = vec![];
                for a in &l.args {
                    match a {
                        datafusion::sql::sqlparser::ast::FunctionArg::Unnamed(
                            datafusion::sql::sqlparser::ast::FunctionArgExpr::Expr(
                                Expr::Identifier(i),
                            ),
                        ) => cols.push(normalize_ident(i)),
                        other => return Err(Error::unsupported(format!("partition key {other}"))),
                    }
                }
                hash_cols = Some(cols);
            }
            other => {
                return Err(Error::unsupported(format!(
                    "PARTITION BY {other} (only HASH)"
                )))
            }
        }
    }
    let distribution = chosen_distribution(
        dist_kind.as_deref(),
        hash_cols,
        &primary_key,
        &uniques,
        &columns,
        default,
    )?;
    check_partition_key(&columns, &distribution)?;
    let layout = catalog.layout_for_new(&distribution, partitions.or(default_partitions))?;
    let distribution = match distribution {
        Distribution::Hash { columns, .. } => Distribution::Hash {
            columns,
            partitions: layout.len() as u32,
        },
        d => d,
    };
    let mut def = TableDef {
        id: common::TableId(0),
        schema,
        name: name.clone(),
        columns,
        primary_key,
        distribution,
        indexes: vec![],
    };
    if !def.primary_key.is_empty() {
        check_unique_includes_key(&def, &def.primary_key.clone())?;
    }
    for (i, u) in uniques.into_iter().enumerate() {
        check_unique_includes_key(&def, &u)?;
        def.indexes.push(IndexDef {
            name: format!("{name}_key{i}"),
            columns: u,
            unique: true,
        });
    }
    Ok((def, layout))
}

/// The distribution a CREATE TABLE asks for (`kind` from `WITH
/// (distribution = ...)`, `hash_cols` from `PARTITION BY HASH`), or the
/// cluster's default.
fn chosen_distribution(
    kind: Option<&str>,
    hash_cols: Option<Vec<String>>,
    primary_key: &[String],
    uniques: &[Vec<String>],
    columns: &[ColumnDef],
    default: DefaultDistribution,
) -> Result<Distribution> {
    Ok(match (kind, hash_cols) {
        (Some("mirror"), None) => Distribution::Mirror,
        (Some("single"), None) => Distribution::Single,
        (Some("hash") | None, Some(cols)) => Distribution::Hash { columns: cols, partitions: 0 },
        (Some("hash"), None) | (None, None)
            if !primary_key.is_empty() && (kind.is_some() || default != DefaultDistribution::Single) =>
        {
            Distribution::Hash {
                columns: meta::table::default_hash_key(primary_key, uniques, columns, default),
                partitions: 0,
            }
        }
        (None, None) => Distribution::Single,
        (Some(k), _) => {
            return Err(Error::InvalidParameter {
                message: format!("distribution '{k}' is not one of hash, mirror, single (and cannot be combined with PARTITION BY)"),
            })
        }
    })
}

/// A hash distribution's key columns exist and can be hashed alike
/// whichever way a value arrives (not floating point).
pub fn check_partition_key(columns: &[ColumnDef], distribution: &Distribution) -> Result<()> {
    if let Distribution::Hash { columns: keys, .. } = distribution {
        for k in keys {
            let c = columns
                .iter()
                .find(|c| &c.name == k)
                .ok_or(Error::ColumnNotFound { name: k.clone() })?;
            if matches!(c.ty, SqlType::Real | SqlType::Double) {
                return Err(Error::unsupported("floating-point partition keys"));
            }
        }
    }
    Ok(())
}

/// Tessera's options among a table's `WITH (...)` / `SET (...)`
/// parameters: `distribution` (hash, mirror, single), `distribution_key`
/// ('a, b'), `partitions` (1..1024). PostgreSQL's storage parameters are
/// checked as PostgreSQL checks them and have no effect (InnoDB on the
/// shards manages pages and purging itself); others are 22023.
#[derive(Default)]
pub struct TableOptions {
    pub distribution: Option<String>,
    pub partitions: Option<u32>,
    pub key: Option<Vec<String>>,
}

pub fn table_options(
    options: &[datafusion::sql::sqlparser::ast::SqlOption],
) -> Result<TableOptions> {
    let mut out = TableOptions::default();
    for o in options {
        let datafusion::sql::sqlparser::ast::SqlOption::KeyValue { key, value } = o else {
            return Err(Error::unsupported(format!("table option {o}")));
        };
        let v = match value {
            Expr::Value(v) => match &v.value {
                datafusion::sql::sqlparser::ast::Value::SingleQuotedString(s) => s.clone(),
                other => other.to_string(),
            },
            Expr::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        };
        match key.value.to_lowercase().as_str() {
            "distribution" => out.distribution = Some(v.to_lowercase()),
            "distribution_key" => {
                out.key = Some(
                    v.split(',')
                        .map(|c| c.trim().to_lowercase())
                        .filter(|c| !c.is_empty())
                        .collect(),
                )
            }
            "partitions" => {
                out.partitions = Some(v.parse().ok().filter(|n| (1..=1024).contains(n)).ok_or(
                    Error::InvalidParameter {
                        message: "partitions must be an integer between 1 and 1024".into(),
                    },
                )?)
            }
            "fillfactor" => {
                if !v.parse::<i64>().is_ok_and(|n| (10..=100).contains(&n)) {
                    return Err(Error::InvalidParameter {
                        message: format!("value {v} out of bounds for option \"fillfactor\""),
                    });
                }
            }
            other if storage_parameter(other) => {}
            other => {
                return Err(Error::InvalidParameter {
                    message: format!("unrecognized parameter \"{other}\""),
                })
            }
        }
    }
    Ok(out)
}

/// Where a column definition puts a key (`PRIMARY KEY`, `UNIQUE`).
pub enum ColumnKey {
    Primary,
    Unique,
}

/// One column of CREATE TABLE or ALTER TABLE ADD COLUMN in table
/// `schema.table`: its catalog definition (SERIAL types with their
/// sequence, a default checked by evaluating it now) and the key it
/// declares.
pub fn column_def(
    c: &datafusion::sql::sqlparser::ast::ColumnDef,
    schema: &str,
    table: &str,
    catalog: &meta::Catalog,
) -> Result<(ColumnDef, Option<ColumnKey>)> {
    let cname = normalize_ident(&c.name);
    let type_text = c.data_type.to_string().to_lowercase();
    let (ty, serial) = match type_text.as_str() {
        "serial" | "serial4" => (SqlType::Integer, true),
        "bigserial" | "serial8" => (SqlType::BigInt, true),
        "smallserial" | "serial2" => (SqlType::SmallInt, true),
        _ => (SqlType::parse(&type_text)?, false),
    };
    let mut col = ColumnDef {
        name: cname.clone(),
        ty,
        not_null: serial,
        default: None,
        sequence: if serial {
            Some(format!("{schema}.{table}.{cname}"))
        } else {
            None
        },
        identity: None,
    };
    let mut key = None;
    for opt in &c.options {
        match &opt.option {
            ColumnOption::NotNull => col.not_null = true,
            ColumnOption::Null => {}
            ColumnOption::Default(_) if col.identity.is_some() => {
                return Err(Error::Sql {
                    state: SqlState("42601"),
                    message: format!(
                        "both default and identity specified for column \"{cname}\" of table \"{table}\""
                    ),
                })
            }
            ColumnOption::Default(e) => {
                if let Some(source) = crate::plan::sequence::nextval_default(e, catalog, schema)? {
                    col.sequence = Some(source);
                    col.default = Some(e.to_string());
                    continue;
                }
                // Constants and the current-time functions only:
                // evaluated now to check them.
                let now = chrono::Utc::now();
                let clock = shard_router::sql::Clock {
                    transaction: now,
                    statement: now,
                };
                shard_router::sql::eval_value(e, &[], Some(&clock))?.coerce(&col.ty)?;
                col.default = Some(e.to_string());
            }
            ColumnOption::PrimaryKey(_) => {
                col.not_null = true;
                key = Some(ColumnKey::Primary);
            }
            ColumnOption::Unique(_) => key = Some(ColumnKey::Unique),
            // An identity column: fed by a sequence OWNED BY it, made with
            // the table (`exec::ddl`, which names it in `sequence`).
            ColumnOption::Generated {
                generated_as: g @ (GeneratedAs::Always | GeneratedAs::ByDefault),
                generation_expr: None,
                ..
            } => {
                if !matches!(
                    col.ty,
                    SqlType::SmallInt | SqlType::Integer | SqlType::BigInt
                ) || serial
                {
                    return Err(Error::Sql {
                        state: SqlState("22023"),
                        message: format!(
                            "identity column type must be smallint, integer, or bigint (column \"{cname}\")"
                        ),
                    });
                }
                if col.identity.is_some() || col.default.is_some() {
                    return Err(Error::Sql {
                        state: SqlState("42601"),
                        message: format!(
                            "both default and identity specified for column \"{cname}\" of table \"{table}\""
                        ),
                    });
                }
                col.identity = Some(match g {
                    GeneratedAs::Always => meta::Identity::Always,
                    _ => meta::Identity::ByDefault,
                });
                col.not_null = true;
            }
            other => return Err(Error::unsupported(format!("column option {other}"))),
        }
    }
    Ok((col, key))
}

/// 42703 for a column a DDL statement names on a table.
pub fn missing_column(c: &str, t: &str) -> Error {
    Error::Sql {
        state: SqlState::UNDEFINED_COLUMN,
        message: format!("column \"{c}\" of relation \"{t}\" does not exist"),
    }
}

pub fn check_unique_includes_key(t: &TableDef, cols: &[String]) -> Result<()> {
    if let Distribution::Hash { columns, .. } = &t.distribution {
        if !columns.iter().all(|k| cols.contains(k)) {
            return Err(Error::unsupported(format!(
                "a unique constraint on ({}) that does not include the partition key ({}): uniqueness is enforced per partition",
                cols.join(", "),
                columns.join(", ")
            )));
        }
    }
    Ok(())
}

/// Schema names PostgreSQL or the shards reserve (42939): `pg_*`,
/// `information_schema`, MariaDB's own databases and Tessera's; and names
/// too long for a shard database once prefixed (42622).
pub fn check_schema_name(name: &str) -> Result<()> {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("pg_")
        || lower.starts_with("tessera")
        || lower.starts_with(meta::PHYSICAL_DB_PREFIX)
        || matches!(
            lower.as_str(),
            "information_schema" | "performance_schema" | "mysql" | "sys"
        )
    {
        return Err(Error::Sql {
            state: SqlState::RESERVED_NAME,
            message: format!(
                "unacceptable schema name \"{name}\": the name is reserved for system schemas"
            ),
        });
    }
    if name.chars().count() + meta::PHYSICAL_DB_PREFIX.len() > 64 {
        return Err(Error::Sql {
            state: SqlState("42622"),
            message: format!("schema name \"{name}\" is too long (at most 60 characters)"),
        });
    }
    Ok(())
}

/// The SCRAM material of a role's `PASSWORD` option: `Some(None)` for
/// `PASSWORD NULL`.
pub fn role_password(
    p: Option<&datafusion::sql::sqlparser::ast::Password>,
) -> Result<Option<Option<meta::ScramVerifier>>> {
    use datafusion::sql::sqlparser::ast::{Password, Value};
    Ok(match p {
        None => None,
        Some(Password::NullPassword) => Some(None),
        Some(Password::Password(Expr::Value(v))) => match &v.value {
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => {
                Some(Some(crate::scram::password_verifier(s)))
            }
            Value::Null => Some(None),
            _ => {
                return Err(Error::unsupported(
                    "a password that is not a string literal",
                ))
            }
        },
        Some(_) => {
            return Err(Error::unsupported(
                "a password that is not a string literal",
            ))
        }
    })
}

/// The privileges a GRANT or REVOKE names, one row each.
pub fn grant_list(
    catalog: &meta::Catalog,
    schema: &str,
    privileges: &datafusion::sql::sqlparser::ast::Privileges,
    objects: Option<&datafusion::sql::sqlparser::ast::GrantObjects>,
    grantees: &[datafusion::sql::sqlparser::ast::Grantee],
) -> Result<Vec<meta::Privilege>> {
    use datafusion::sql::sqlparser::ast::{
        Action, GrantObjects, GranteeName, GranteesType, Privileges,
    };
    let mut roles = vec![];
    for g in grantees {
        let name = match (&g.grantee_type, &g.name) {
            (GranteesType::Public, _) => "public".to_string(),
            (_, Some(GranteeName::ObjectName(n))) => object_parts(n).join("."),
            _ => return Err(Error::unsupported("this grantee")),
        };
        if name != "public" && !catalog.roles.contains_key(&name) {
            return Err(Error::Sql {
                state: SqlState::UNDEFINED_OBJECT,
                message: format!("role \"{name}\" does not exist"),
            });
        }
        roles.push(name);
    }
    // (kind, schema, object) targets
    let mut targets = vec![];
    let on_schema;
    match objects {
        Some(GrantObjects::Tables(names)) => {
            on_schema = false;
            for n in names {
                let t = resolve_table(catalog, n, schema)?;
                targets.push(("table", t.schema.clone(), t.name.clone()));
            }
        }
        Some(GrantObjects::AllTablesInSchema { schemas }) => {
            on_schema = false;
            for s in schemas {
                let s = object_parts(s).join(".");
                if !catalog.schemas.contains(&s) {
                    return Err(Error::SchemaNotFound { name: s });
                }
                for t in catalog.tables.values().filter(|t| t.schema == s) {
                    targets.push(("table", t.schema.clone(), t.name.clone()));
                }
            }
        }
        Some(GrantObjects::Schemas(names)) => {
            on_schema = true;
            for n in names {
                let s = object_parts(n).join(".");
                if !catalog.schemas.contains(&s) {
                    return Err(Error::SchemaNotFound { name: s });
                }
                targets.push(("schema", s, String::new()));
            }
        }
        _ => return Err(Error::unsupported("GRANT on this kind of object")),
    }
    let all_table = ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE"];
    let all_schema = ["USAGE", "CREATE"];
    let names: Vec<&str> = match privileges {
        Privileges::All { .. } => {
            if on_schema {
                all_schema.to_vec()
            } else {
                all_table.to_vec()
            }
        }
        Privileges::Actions(actions) => {
            let mut v = vec![];
            for a in actions {
                let n = match a {
                    Action::Select { columns: None } => "SELECT",
                    Action::Insert { columns: None } => "INSERT",
                    Action::Update { columns: None } => "UPDATE",
                    Action::Delete => "DELETE",
                    Action::Truncate => "TRUNCATE",
                    Action::Usage => "USAGE",
                    Action::Create { obj_type: None } => "CREATE",
                    other => return Err(Error::unsupported(format!("privilege {other}"))),
                };
                let fits = if on_schema {
                    all_schema.contains(&n)
                } else {
                    all_table.contains(&n)
                };
                if !fits {
                    return Err(Error::Sql {
                        state: SqlState("0LP01"),
                        message: format!(
                            "invalid privilege type {n} for {}",
                            if on_schema { "schema" } else { "table" }
                        ),
                    });
                }
                v.push(n);
            }
            v
        }
    };
    let mut out = vec![];
    for r in &roles {
        for (kind, s, o) in &targets {
            for p in &names {
                out.push(meta::Privilege {
                    grantee: r.clone(),
                    kind: kind.to_string(),
                    schema: s.clone(),
                    object: o.clone(),
                    privilege: p.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// A table storage parameter PostgreSQL 15 accepts (`WITH (...)` of CREATE
/// TABLE), other than `fillfactor`.
fn storage_parameter(name: &str) -> bool {
    let name = name.strip_prefix("toast.").unwrap_or(name);
    name.starts_with("autovacuum_")
        || matches!(
            name,
            "toast_tuple_target"
                | "parallel_workers"
                | "user_catalog_table"
                | "vacuum_index_cleanup"
                | "vacuum_truncate"
                | "log_autovacuum_min_duration"
        )
}
