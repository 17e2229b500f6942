//! Result column names as PostgreSQL derives them for a SELECT list
//! (`FigureColname` in its parser): a column's name, a function's name, the
//! type name of a cast constant (`12.5::int` is `int4`), `case`,
//! `coalesce`, `btrim` for `trim(...)`, a scalar subquery's own column
//! name, `exists`; `?column?` for operators and constants. DataFusion names
//! columns after whole expressions (`count(*)`, `CAST(x AS Int32)`).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    CastKind, DataType, Expr, Ident, Query, SelectItem, SetExpr, Statement, TableAlias,
    TableAliasColumnDef, TableFactor, Value, VisitMut, VisitorMut,
};

use shard_router::sql::normalize_ident;

/// The names of a query's result columns, when every item of its SELECT
/// list has one (`None` for `*`, set operations and other shapes).
pub fn pg_column_names(stmt: &Statement) -> Option<Vec<String>> {
    let Statement::Query(q) = stmt else {
        return None;
    };
    query_names(q)
}

fn query_names(q: &Query) -> Option<Vec<String>> {
    set_expr_names(q.body.as_ref())
}

/// A set operation's columns are named after its leftmost SELECT's.
fn set_expr_names(body: &SetExpr) -> Option<Vec<String>> {
    let sel = match body {
        SetExpr::Select(sel) => sel,
        SetExpr::SetOperation { left, .. } => return set_expr_names(left),
        SetExpr::Query(q) => return query_names(q),
        _ => return None,
    };
    sel.projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => Some(name_of(e).unwrap_or_else(|| "?column?".into())),
            SelectItem::ExprWithAlias { alias, .. } => Some(normalize_ident(alias)),
            _ => None,
        })
        .collect()
}

/// Marks an internal name given to a column beside a wildcard: the
/// column's own name follows, then the mark and its position.
pub const RENAMED: char = '\u{1}';

/// A result column's name with an internal rename taken back.
pub fn restore_name(name: &str) -> &str {
    match name.strip_prefix(RENAMED) {
        Some(rest) => rest.split(RENAMED).next().unwrap_or(rest),
        None => name,
    }
}

/// `stmt` with an internal alias on every SELECT-list expression (not
/// plain columns) when the list has several items: DataFusion names
/// `x::int, x::bigint` both after `x` and `NULL::int, NULL::text` both
/// "NULL", and refuses duplicate names, where PostgreSQL answers. The wire still shows
/// PostgreSQL's names ([`pg_column_names`] of the original statement).
pub fn with_unique_names(stmt: &Statement) -> Option<Statement> {
    let Statement::Query(q) = stmt else {
        return None;
    };
    // `SELECT n.oid, n.*` (DBeaver's): PostgreSQL allows an output name
    // twice, DataFusion does not. The named columns beside a wildcard get
    // internal names carrying theirs (`restore_name` gives it back).
    if let SetExpr::Select(sel) = q.body.as_ref() {
        let wildcard = sel.projection.iter().any(|i| {
            matches!(
                i,
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
            )
        });
        let named = |i: &SelectItem| {
            matches!(
                i,
                SelectItem::UnnamedExpr(Expr::Identifier(_) | Expr::CompoundIdentifier(_))
            )
        };
        if wildcard && sel.projection.iter().any(named) {
            let mut q = q.clone();
            if let SetExpr::Select(sel) = q.body.as_mut() {
                for (i, item) in sel.projection.iter_mut().enumerate() {
                    let name = match item {
                        SelectItem::UnnamedExpr(Expr::Identifier(id)) => normalize_ident(id),
                        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(p)) => {
                            p.last().map(normalize_ident).unwrap_or_default()
                        }
                        _ => continue,
                    };
                    let SelectItem::UnnamedExpr(e) = item else {
                        continue;
                    };
                    *item = SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: datafusion::sql::sqlparser::ast::Ident::with_quote(
                            '"',
                            format!("{RENAMED}{name}{RENAMED}{i}"),
                        ),
                    };
                }
            }
            return Some(Statement::Query(q));
        }
    }
    if !matches!(q.body.as_ref(), SetExpr::Select(_)) {
        // A set operation takes its names from its first branch; the
        // others only need names DataFusion finds unique.
        let mut q = q.clone();
        return alias_later_branches(&mut q.body, false).then_some(Statement::Query(q));
    }
    let names = query_names(q)?;
    // PostgreSQL allows an output name twice (`SELECT g, g FROM
    // generate_series(1, 3) g`, `SELECT 1 AS x, 2 AS x`), DataFusion does
    // not: every item gets an internal name carrying its own.
    // Among columns and aliases only: other expressions get their own
    // aliases below.
    let mut seen = std::collections::HashSet::new();
    let twice = match q.body.as_ref() {
        SetExpr::Select(sel) if names.len() == sel.projection.len() => {
            sel.projection.iter().zip(&names).any(|(item, n)| {
                matches!(
                    item,
                    SelectItem::ExprWithAlias { .. }
                        | SelectItem::UnnamedExpr(
                            Expr::Identifier(_) | Expr::CompoundIdentifier(_)
                        )
                ) && !seen.insert(n.as_str())
            })
        }
        _ => false,
    };
    if twice {
        let mut q = q.clone();
        if let SetExpr::Select(sel) = q.body.as_mut() {
            for (i, (item, name)) in sel.projection.iter_mut().zip(&names).enumerate() {
                let e = match item {
                    SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                        e.clone()
                    }
                    _ => continue,
                };
                *item = SelectItem::ExprWithAlias {
                    expr: e,
                    alias: datafusion::sql::sqlparser::ast::Ident::with_quote(
                        '"',
                        format!("{RENAMED}{name}{RENAMED}{i}"),
                    ),
                };
            }
        }
        return Some(Statement::Query(q));
    }
    // DataFusion's own names can collide where PostgreSQL's do not
    // (`NULL::int, NULL::text` are both "NULL" to it): with more than one
    // item, every expression gets an internal alias.
    let aliasable = |item: &SelectItem| {
        matches!(item, SelectItem::UnnamedExpr(e)
            if !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)))
    };
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    if names.len() < 2 || !sel.projection.iter().any(aliasable) {
        return None;
    }
    let mut q = q.clone();
    let SetExpr::Select(sel) = q.body.as_mut() else {
        return None;
    };
    for (i, item) in sel.projection.iter_mut().enumerate() {
        if let SelectItem::UnnamedExpr(e) = item {
            if !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                *item = SelectItem::ExprWithAlias {
                    expr: e.clone(),
                    alias: datafusion::sql::sqlparser::ast::Ident::with_quote(
                        '"',
                        format!("?column {}?", i + 1),
                    ),
                };
            }
        }
    }
    Some(Statement::Query(q))
}

/// Aliases the unnamed expressions of every SELECT of a set operation
/// but its first (`first`: `body` is the leftmost branch). Whether any
/// changed.
fn alias_later_branches(body: &mut SetExpr, first: bool) -> bool {
    match body {
        SetExpr::SetOperation { left, right, .. } => {
            let l = alias_later_branches(left, first);
            alias_later_branches(right, false) || l
        }
        SetExpr::Select(sel) if !first => {
            let mut changed = false;
            for (i, item) in sel.projection.iter_mut().enumerate() {
                if let SelectItem::UnnamedExpr(e) = item {
                    if !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                        *item = SelectItem::ExprWithAlias {
                            expr: e.clone(),
                            alias: datafusion::sql::sqlparser::ast::Ident::with_quote(
                                '"',
                                format!("?column {}?", i + 1),
                            ),
                        };
                        changed = true;
                    }
                }
            }
            changed
        }
        SetExpr::Query(q) => alias_later_branches(&mut q.body, first),
        _ => false,
    }
}

/// Set-returning functions in FROM named as PostgreSQL names them: the
/// column of `generate_series(1, 5)` is `generate_series`, and of
/// `generate_series(1, 5) g` is `g` (a scalar function's alias names its
/// column too), where DataFusion calls it `value`. Returns whether
/// anything changed.
pub fn name_table_functions(stmt: &mut Statement) -> bool {
    struct Namer(bool);
    impl VisitorMut for Namer {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &mut TableFactor) -> ControlFlow<()> {
            let (func, alias) = match f {
                TableFactor::Table {
                    name,
                    args: Some(_),
                    alias,
                    ..
                } => {
                    let parts = crate::plan::object_parts(name);
                    if parts.last().map(String::as_str) != Some("generate_series") {
                        return ControlFlow::Continue(());
                    }
                    ("generate_series", alias)
                }
                TableFactor::UNNEST {
                    alias,
                    array_exprs,
                    with_offset: false,
                    with_ordinality: false,
                    ..
                } if array_exprs.len() == 1 => ("unnest", alias),
                _ => return ControlFlow::Continue(()),
            };
            let alias = alias.get_or_insert_with(|| TableAlias {
                explicit: true,
                name: Ident::with_quote('"', func),
                columns: vec![],
                at: None,
            });
            if alias.columns.is_empty() {
                alias.columns.push(TableAliasColumnDef {
                    name: alias.name.clone(),
                    data_type: None,
                });
                self.0 = true;
            }
            ControlFlow::Continue(())
        }
    }
    let mut namer = Namer(false);
    let _ = stmt.visit(&mut namer);
    namer.0
}

/// The result column names of a derived table's query, when known (its
/// SELECT list has no `*`; a VALUES list's are `column1`, ...).
pub fn derived_names(subquery: &Query) -> Option<Vec<String>> {
    match subquery.body.as_ref() {
        SetExpr::Values(v) => v
            .rows
            .first()
            .map(|r| (1..=r.len()).map(|i| format!("column{i}")).collect()),
        _ => query_names(subquery),
    }
}

/// PostgreSQL's name of one expression, if it has one.
fn name_of(e: &Expr) -> Option<String> {
    Some(match e {
        Expr::Identifier(i) => normalize_ident(i),
        Expr::CompoundIdentifier(p) => p.last().map(normalize_ident)?,
        Expr::Function(f) => crate::plan::object_parts(&f.name).last().cloned()?,
        Expr::Nested(x) => return name_of(x),
        Expr::Cast {
            expr,
            data_type,
            kind,
            ..
        } => {
            // A column's or function's name wins over the cast's type
            // name; a constant's or CASE's does not (`true::text` is
            // "text"), as in PostgreSQL's FigureColname strengths.
            let cast_name = || {
                matches!(kind, CastKind::Cast | CastKind::DoubleColon)
                    .then(|| type_name(data_type))
                    .flatten()
            };
            return if strong(expr) {
                name_of(expr)
            } else {
                cast_name().or_else(|| name_of(expr))
            };
        }
        Expr::Value(v) if matches!(v.value, Value::Boolean(_)) => "bool".into(),
        Expr::TypedString(t) => return type_name(&t.data_type),
        Expr::Interval(_) => "interval".into(),
        // An ELSE with a strong name names the CASE (PostgreSQL's
        // FigureColname): `CASE WHEN b IS NULL THEN 0 ELSE b END` is "b".
        Expr::Case {
            else_result: Some(x),
            ..
        } if strong(x) => return name_of(x),
        Expr::Case { .. } => "case".into(),
        Expr::AtTimeZone { .. } => "timezone".into(),
        Expr::Trim { .. } => "btrim".into(),
        Expr::Substring { shorthand, .. } => if *shorthand { "substr" } else { "substring" }.into(),
        Expr::Position { .. } => "position".into(),
        Expr::Extract { .. } => "extract".into(),
        Expr::Ceil { .. } => "ceil".into(),
        Expr::Floor { .. } => "floor".into(),
        Expr::Overlay { .. } => "overlay".into(),
        // `NOT EXISTS (...)` is an operator over it: "?column?".
        Expr::Exists { negated: false, .. } => "exists".into(),
        Expr::Subquery(q) => return query_names(q)?.into_iter().next(),
        Expr::Array(_) => "array".into(),
        // `arr[1]` is named after `arr`, `(ARRAY[1, 2])[1]` "array".
        Expr::CompoundFieldAccess { root, .. } => return name_of(root),
        _ => return None,
    })
}

/// Whether an expression's name is a strong one (a column's or a
/// function's), which a cast around it keeps.
fn strong(e: &Expr) -> bool {
    match e {
        Expr::Nested(x) => strong(x),
        Expr::Cast { expr, .. } => strong(expr),
        Expr::Case {
            else_result: Some(x),
            ..
        } => strong(x),
        Expr::Identifier(_)
        | Expr::CompoundIdentifier(_)
        | Expr::Function(_)
        | Expr::Trim { .. }
        | Expr::Substring { .. }
        | Expr::Position { .. }
        | Expr::Extract { .. }
        | Expr::Ceil { .. }
        | Expr::Floor { .. }
        | Expr::Overlay { .. }
        | Expr::Array(_)
        | Expr::Exists { negated: false, .. }
        | Expr::Subquery(_) => true,
        _ => false,
    }
}

/// PostgreSQL's internal name of a type, as a cast of a constant is named.
fn type_name(t: &DataType) -> Option<String> {
    Some(
        match t {
            DataType::SmallInt(_) | DataType::Int2(_) => "int2",
            DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => "int4",
            DataType::BigInt(_) | DataType::Int8(_) => "int8",
            DataType::Real | DataType::Float4 => "float4",
            DataType::Double(_) | DataType::DoublePrecision | DataType::Float8 => "float8",
            DataType::Numeric(_) | DataType::Decimal(_) | DataType::Dec(_) => "numeric",
            DataType::Boolean | DataType::Bool => "bool",
            DataType::Text => "text",
            DataType::Varchar(_) | DataType::CharacterVarying(_) => "varchar",
            DataType::Char(_) | DataType::Character(_) => "bpchar",
            DataType::Date => "date",
            DataType::Time(_, tz) => match tz {
                datafusion::sql::sqlparser::ast::TimezoneInfo::WithTimeZone
                | datafusion::sql::sqlparser::ast::TimezoneInfo::Tz => "timetz",
                _ => "time",
            },
            DataType::Timestamp(_, tz) => match tz {
                datafusion::sql::sqlparser::ast::TimezoneInfo::WithTimeZone
                | datafusion::sql::sqlparser::ast::TimezoneInfo::Tz => "timestamptz",
                _ => "timestamp",
            },
            DataType::Bytea => "bytea",
            DataType::Interval { .. } => "interval",
            _ => return None,
        }
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str) -> Option<Vec<String>> {
        let stmt = crate::parse::parse_sql(sql).ok()?.pop()?;
        pg_column_names(&stmt)
    }

    #[test]
    fn names_follow_postgres() {
        let n = |sql: &str| names(sql).unwrap_or_default().join(",");
        assert_eq!(
            n("SELECT id, t.v, count(*), max(x) FROM t"),
            "id,v,count,max"
        );
        assert_eq!(
            n("SELECT 1, 1 + 2, 'a', NULL"),
            "?column?,?column?,?column?,?column?"
        );
        assert_eq!(
            n("SELECT 12.5::int, CAST(1 AS bigint), '1'::numeric(5,2)"),
            "int4,int8,numeric"
        );
        assert_eq!(n("SELECT id::text, CAST(v AS int) FROM t"), "id,v");
        assert_eq!(n("SELECT true, false"), "bool,bool");
        assert_eq!(
            n("SELECT true::text, false::int, NULL::int"),
            "text,int4,int4"
        );
        assert_eq!(n("SELECT (CASE WHEN a THEN 1 END)::text FROM t"), "text");
        assert_eq!(
            n("SELECT CASE WHEN a THEN 1 END, trim(x), substring(x from 1 for 2), position('o' in x) FROM t"),
            "case,btrim,substring,position"
        );
        assert_eq!(
            n("SELECT floor(x), ceil(x), coalesce(a, b), nullif(a, b) FROM t"),
            "floor,ceil,coalesce,nullif"
        );
        assert_eq!(
            n("SELECT (SELECT count(*) FROM u), EXISTS (SELECT 1) FROM t"),
            "count,exists"
        );
        assert_eq!(n("SELECT x AS \"Mixed\", y AS z FROM t"), "Mixed,z");
        assert_eq!(names("SELECT * FROM t"), None);
        assert_eq!(n("SELECT 1 UNION SELECT 2 AS b"), "?column?");
        assert_eq!(n("(SELECT a FROM t) UNION ALL SELECT NULL::int"), "a");
        assert_eq!(n("SELECT substr(x, 2), '1:00'::time FROM t"), "substr,time");
        assert_eq!(
            n("SELECT ARRAY[1, 2]::text, EXISTS (SELECT 1)::int"),
            "array,exists"
        );
    }

    #[test]
    fn duplicate_names_get_internal_aliases() {
        let stmt = crate::parse::parse_sql("SELECT id, id::text, id::bigint, v FROM t")
            .unwrap()
            .pop()
            .unwrap();
        let aliased = with_unique_names(&stmt).unwrap();
        assert_eq!(
            aliased.to_string(),
            "SELECT id, id::TEXT AS \"?column 2?\", id::BIGINT AS \"?column 3?\", v FROM t"
        );
        assert_eq!(pg_column_names(&stmt).unwrap(), ["id", "id", "id", "v"]);
        let plain = crate::parse::parse_sql("SELECT a, b FROM t")
            .unwrap()
            .pop()
            .unwrap();
        assert!(with_unique_names(&plain).is_none());
        // A column or alias named twice: every item renamed, names kept.
        let twice = crate::parse::parse_sql("SELECT g, g, 1 AS x, 2 AS x FROM t")
            .unwrap()
            .pop()
            .unwrap();
        let renamed = with_unique_names(&twice).unwrap().to_string();
        let names: Vec<&str> = renamed
            .split(" AS ")
            .skip(1)
            .map(|a| restore_name(a.trim_start_matches('"')))
            .collect();
        assert_eq!(names, ["g", "g", "x", "x"]);
        assert_eq!(pg_column_names(&twice).unwrap(), ["g", "g", "x", "x"]);
    }
}
