//! The spellings of catalog queries (psql's, the drivers'): functions
//! qualified with `pg_catalog.`, `OPERATOR(pg_catalog.~)`, `COLLATE
//! pg_catalog.default`, and casts to the object identifier types, which
//! become the catalog functions of `pgcatalog::funcs`.

use datafusion::sql::sqlparser::ast::{
    AccessExpr, BinaryOperator, CastKind, DataType, Expr, FunctionArguments, ObjectName,
    ObjectNamePart, OrderByKind, Query, SelectItem, SetExpr, Value,
};

use super::pieces::{call, parse_expr};
use crate::pgcatalog::{REGCLASS, REGNAMESPACE_OUT, REGROLE_OUT, REGTYPE};

/// A type name without `pg_catalog.` and quotes, in lower case.
fn type_word(t: &DataType) -> String {
    let s = t.to_string().to_ascii_lowercase().replace('"', "");
    s.strip_prefix("pg_catalog.").unwrap_or(&s).to_string()
}

fn cast(e: Expr, t: DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(e),
        data_type: t,
        array: false,
        format: None,
    }
}

/// `ARRAY(SELECT x FROM ... ORDER BY o)` as `coalesce((SELECT
/// array_agg(x ORDER BY o) FROM ...), make_array())` (an empty result is
/// an empty array).
fn array_of_subquery(q: &Query) -> Option<Expr> {
    if q.with.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return None;
    }
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    let [item] = sel.projection.as_slice() else {
        return None;
    };
    let x = match item {
        SelectItem::UnnamedExpr(x) | SelectItem::ExprWithAlias { expr: x, .. } => x,
        _ => return None,
    };
    // `ARRAY(SELECT 'p' || x FROM unnest(a) x)` (psql's `\\d+`): the
    // elements of `a` with a prefix.
    if let Some(e) = prefixed_elements(sel, x) {
        if q.order_by.is_none() && sel.selection.is_none() {
            return Some(e);
        }
    }
    let mut order = vec![];
    if let Some(ob) = &q.order_by {
        let OrderByKind::Expressions(exprs) = &ob.kind else {
            return None;
        };
        for o in exprs {
            let key = match &o.expr {
                Expr::Value(v) if matches!(&v.value, Value::Number(n, _) if n == "1") => {
                    x.to_string()
                }
                Expr::Value(_) => return None,
                other => other.to_string(),
            };
            order.push(format!("{key}{}", o.options));
        }
    }
    let agg = if order.is_empty() {
        format!("array_agg({x})")
    } else {
        format!("array_agg({x} ORDER BY {})", order.join(", "))
    };
    let agg = parse_expr(&agg)?;
    let mut q = q.clone();
    q.order_by = None;
    if let SetExpr::Select(sel) = q.body.as_mut() {
        sel.projection = vec![SelectItem::UnnamedExpr(agg)];
    }
    Some(call(
        "coalesce",
        vec![Expr::Subquery(Box::new(q)), call("make_array", vec![])],
    ))
}

/// An array's text as an untyped literal (`'{0}'`, `'{a,b}'`) compared
/// with an array: `make_array(...)` of its elements (numbers when they
/// all are).
fn array_literal(e: &Expr) -> Option<Expr> {
    let Expr::Value(v) = e else {
        return None;
    };
    let Value::SingleQuotedString(s) = &v.value else {
        return None;
    };
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    if inner.contains(['"', '{', '\\']) {
        return None;
    }
    let items: Vec<&str> = if inner.trim().is_empty() {
        vec![]
    } else {
        inner.split(',').map(str::trim).collect()
    };
    let numeric = items.iter().all(|i| i.parse::<i64>().is_ok());
    Some(call(
        "make_array",
        items
            .into_iter()
            .map(|i| {
                Expr::value(if numeric {
                    Value::Number(i.to_string(), false)
                } else {
                    Value::SingleQuotedString(i.to_string())
                })
            })
            .collect(),
    ))
}

/// A table function in FROM: `pg_catalog.f(...)` is `f(...)`, and
/// `generate_series` takes the array functions' integers as bigint (its
/// arguments must fold to bigint constants). Whether it changed.
pub fn table_function(f: &mut datafusion::sql::sqlparser::ast::TableFactor) -> bool {
    use datafusion::sql::sqlparser::ast::{FunctionArg, FunctionArgExpr, TableFactor};
    let TableFactor::Table {
        name,
        args: Some(args),
        ..
    } = f
    else {
        return false;
    };
    let mut changed = false;
    if name.0.len() == 2
        && matches!(&name.0[0], ObjectNamePart::Identifier(i) if i.value.eq_ignore_ascii_case("pg_catalog"))
    {
        let last = name.0[1].clone();
        *name = ObjectName(vec![last]);
        changed = true;
    }
    if crate::plan::object_parts(name) == ["generate_series"] {
        for a in &mut args.args {
            if let FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) = a {
                let is_array_fn = matches!(x, Expr::Function(g) if matches!(
                    crate::plan::object_parts(&g.name).last().map(String::as_str),
                    Some("array_upper" | "array_lower" | "array_length" | "cardinality")
                ));
                if is_array_fn {
                    let inner = std::mem::replace(x, Expr::value(Value::Null));
                    *x = cast(inner, DataType::BigInt(None));
                    changed = true;
                }
            }
        }
    }
    changed
}

fn prefixed_elements(sel: &datafusion::sql::sqlparser::ast::Select, item: &Expr) -> Option<Expr> {
    use datafusion::sql::sqlparser::ast::{FunctionArg, FunctionArgExpr, TableFactor};
    let [twj] = sel.from.as_slice() else {
        return None;
    };
    let TableFactor::Table {
        name,
        args: Some(args),
        alias: Some(alias),
        ..
    } = &twj.relation
    else {
        return None;
    };
    if !twj.joins.is_empty()
        || crate::plan::object_parts(name).last().map(String::as_str) != Some("unnest")
    {
        return None;
    }
    let [FunctionArg::Unnamed(FunctionArgExpr::Expr(array))] = args.args.as_slice() else {
        return None;
    };
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::StringConcat,
        right,
    } = item
    else {
        return None;
    };
    let (Expr::Value(prefix), Expr::Identifier(x)) = (left.as_ref(), right.as_ref()) else {
        return None;
    };
    if !matches!(prefix.value, Value::SingleQuotedString(_))
        || !x.value.eq_ignore_ascii_case(&alias.name.value)
    {
        return None;
    }
    Some(call(
        crate::pgcatalog::PREFIX_ELEMENTS,
        vec![Expr::Value(prefix.clone()), array.clone()],
    ))
}

/// A set-returning function rewritten as unnest of a list: the function
/// making the list and its argument count.
fn set_returning(f: &datafusion::sql::sqlparser::ast::Function) -> Option<(&'static str, usize)> {
    match crate::plan::object_parts(&f.name)
        .last()
        .map(String::as_str)
    {
        Some("_pg_expandarray") => Some((crate::pgcatalog::EXPANDARRAY, 1)),
        Some("generate_subscripts") => Some((crate::pgcatalog::SUBSCRIPTS, 2)),
        _ => None,
    }
}

/// Rewrites `e` in place; whether it changed.
pub fn rewrite(e: &mut Expr) -> bool {
    let new = match e {
        Expr::Function(f) if is_array_of_subquery(f) => {
            let FunctionArguments::Subquery(q) = &f.args else {
                return false;
            };
            array_of_subquery(q)
        }
        Expr::CompoundFieldAccess { root, access_chain } if is_field_access(root, access_chain) => {
            Some(field_access(root, access_chain))
        }
        Expr::Function(f) if set_returning(f).is_some() => set_returning_as_unnest(f),
        Expr::Function(f) => return unqualify(&mut f.name),
        Expr::BinaryOp { left, op, right }
            if matches!(op, BinaryOperator::Eq | BinaryOperator::NotEq)
                && (array_literal(left).is_some() || array_literal(right).is_some()) =>
        {
            for side in [left, right] {
                if let Some(a) = array_literal(side) {
                    **side = a;
                }
            }
            return true;
        }
        Expr::BinaryOp { op, .. } => return custom_operator(op),
        Expr::Collate { expr, collation } => without_collation(expr, collation),
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            array: false,
            format: None,
        } => catalog_cast(expr, data_type),
        _ => None,
    };
    match new {
        Some(new) => {
            *e = new;
            true
        }
        None => false,
    }
}

/// Whether `f` is `ARRAY(subquery)`.
fn is_array_of_subquery(f: &datafusion::sql::sqlparser::ast::Function) -> bool {
    crate::plan::object_parts(&f.name) == ["array"]
        && matches!(f.args, FunctionArguments::Subquery(_))
}

/// Whether `root` and `chain` are `(x).f`: a field of a composite value.
fn is_field_access(root: &Expr, chain: &[AccessExpr]) -> bool {
    matches!(root, Expr::Nested(_))
        && chain
            .iter()
            .all(|a| matches!(a, AccessExpr::Dot(Expr::Identifier(_))))
}

/// `(x).f.g` as `get_field(get_field(x, 'f'), 'g')` (`root` is taken).
fn field_access(root: &mut Expr, chain: &[AccessExpr]) -> Expr {
    let x = std::mem::replace(root, Expr::value(Value::Null));
    let mut x = match x {
        Expr::Nested(inner) => *inner,
        other => other,
    };
    for a in chain {
        if let AccessExpr::Dot(Expr::Identifier(i)) = a {
            let field =
                crate::plan::object_parts(&ObjectName(vec![ObjectNamePart::Identifier(i.clone())]))
                    .pop()
                    .unwrap_or_default();
            x = call(
                "get_field",
                vec![x, Expr::value(Value::SingleQuotedString(field))],
            );
        }
    }
    x
}

/// Set-returning functions of a select list, zipped with the others
/// there as unnest is: `information_schema._pg_expandarray(a)` and
/// `generate_subscripts(a, 1)` as unnest of a list.
fn set_returning_as_unnest(f: &datafusion::sql::sqlparser::ast::Function) -> Option<Expr> {
    let (udf, arity) = set_returning(f)?;
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let args: Vec<Expr> = list
        .args
        .iter()
        .filter_map(|a| match a {
            datafusion::sql::sqlparser::ast::FunctionArg::Unnamed(
                datafusion::sql::sqlparser::ast::FunctionArgExpr::Expr(x),
            ) => Some(x.clone()),
            _ => None,
        })
        .collect();
    if args.len() != arity {
        return None;
    }
    Some(call("unnest", vec![call(udf, args)]))
}

/// `pg_catalog.f` as `f`; whether it changed.
fn unqualify(name: &mut ObjectName) -> bool {
    if name.0.len() == 2
        && matches!(&name.0[0], ObjectNamePart::Identifier(i) if i.value.eq_ignore_ascii_case("pg_catalog"))
    {
        let last = name.0[1].clone();
        *name = ObjectName(vec![last]);
        return true;
    }
    false
}

/// `OPERATOR(pg_catalog.op)` as the operator `op`; whether it changed.
fn custom_operator(op: &mut BinaryOperator) -> bool {
    let BinaryOperator::PGCustomBinaryOperator(parts) = op else {
        return false;
    };
    let name = match parts.as_slice() {
        [schema, n] if schema.eq_ignore_ascii_case("pg_catalog") => n.as_str(),
        [n] => n.as_str(),
        _ => return false,
    };
    match operator_named(name) {
        Some(o) => {
            *op = o;
            true
        }
        None => false,
    }
}

/// The operator PostgreSQL names `name`, of those catalog queries use.
fn operator_named(name: &str) -> Option<BinaryOperator> {
    Some(match name {
        "~" => BinaryOperator::PGRegexMatch,
        "~*" => BinaryOperator::PGRegexIMatch,
        "!~" => BinaryOperator::PGRegexNotMatch,
        "!~*" => BinaryOperator::PGRegexNotIMatch,
        "=" => BinaryOperator::Eq,
        "<>" | "!=" => BinaryOperator::NotEq,
        "<" => BinaryOperator::Lt,
        "<=" => BinaryOperator::LtEq,
        ">" => BinaryOperator::Gt,
        ">=" => BinaryOperator::GtEq,
        "||" => BinaryOperator::StringConcat,
        "+" => BinaryOperator::Plus,
        "-" => BinaryOperator::Minus,
        _ => return None,
    })
}

/// `x COLLATE c` as `x` for the collations that are C order: Tessera
/// compares text in one collation (`expr` is taken).
fn without_collation(expr: &mut Expr, collation: &ObjectName) -> Option<Expr> {
    let c = collation.to_string().to_ascii_lowercase().replace('"', "");
    let c = c.strip_prefix("pg_catalog.").unwrap_or(&c);
    if !matches!(c, "default" | "c" | "posix" | "ucs_basic") {
        return None;
    }
    Some(std::mem::replace(expr, Expr::value(Value::Null)))
}

/// The object identifier and catalog name types a cast can name, which
/// become catalog functions or plain types.
const CATALOG_TYPES: &[&str] = &[
    "regclass",
    "regtype",
    "regnamespace",
    "regrole",
    "regproc",
    "regprocedure",
    "oid",
    "regoper",
    "xid",
    "cid",
    "tid",
    "name",
    "char",
    "information_schema.sql_identifier",
    "information_schema.character_data",
];

/// A cast to an object identifier or catalog name type as what it
/// computes (`expr` is taken); `None` for other types.
fn catalog_cast(expr: &mut Expr, data_type: &DataType) -> Option<Expr> {
    let word = type_word(data_type);
    let handled = CATALOG_TYPES.contains(&word.as_str())
        || (word == "text" && !matches!(data_type, DataType::Text));
    if !handled {
        return None;
    }
    let x = std::mem::replace(expr, Expr::value(Value::Null));
    Some(match word.as_str() {
        "regclass" => call(REGCLASS, vec![x]),
        "regtype" => call(REGTYPE, vec![x]),
        "regnamespace" => call(REGNAMESPACE_OUT, vec![x]),
        "regrole" => call(REGROLE_OUT, vec![x]),
        // A function's name: `pg_proc` holds names, not OIDs.
        "regproc" | "regprocedure" => match x {
            Expr::Value(v) => match v.value {
                Value::SingleQuotedString(s) => Expr::value(Value::SingleQuotedString(
                    s.strip_prefix("pg_catalog.").unwrap_or(&s).to_string(),
                )),
                other => Expr::value(other),
            },
            other => cast(other, DataType::Text),
        },
        "oid" | "regoper" | "xid" | "cid" | "tid" => cast(x, DataType::BigInt(None)),
        _ => cast(x, DataType::Text),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::rewritten;

    #[test]
    fn catalog_spellings_become_functions() {
        let s = rewritten(
            "SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid) AND c.oid = 't'::regclass",
        );
        assert!(s.contains("c.relname ~ '^(t)$'"), "{s}");
        assert!(s.contains("AND pg_table_is_visible(c.oid)"), "{s}");
        assert!(s.contains("tessera_regclass('t')"), "{s}");
        let s = rewritten(
            "SELECT c.reloftype::pg_catalog.regtype::pg_catalog.text, 'x'::name FROM pg_class c",
        );
        assert!(
            s.contains("CAST(tessera_regtype(c.reloftype) AS TEXT)"),
            "{s}"
        );
        assert!(s.contains("CAST('x' AS TEXT)"), "{s}");
    }
}
