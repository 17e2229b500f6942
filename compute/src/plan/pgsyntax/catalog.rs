//! The spellings of catalog queries (psql's, the drivers'): functions
//! qualified with `pg_catalog.`, `OPERATOR(pg_catalog.~)`, `COLLATE
//! pg_catalog.default`, and casts to the object identifier types, which
//! become the catalog functions of `pgcatalog::funcs`.

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, DataType, Expr, FunctionArguments, ObjectName, ObjectNamePart,
    OrderByKind, Query, SelectItem, SetExpr, Value,
};

use super::pieces::call;
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
    let agg = datafusion::sql::sqlparser::parser::Parser::new(&crate::dialect::TesseraDialect)
        .try_with_sql(&agg)
        .ok()?
        .parse_expr()
        .ok()?;
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
    match e {
        Expr::Function(f)
            if crate::plan::object_parts(&f.name) == ["array"]
                && matches!(f.args, FunctionArguments::Subquery(_)) =>
        {
            let FunctionArguments::Subquery(q) = &f.args else {
                return false;
            };
            match array_of_subquery(q) {
                Some(new) => {
                    *e = new;
                    true
                }
                None => false,
            }
        }
        // `(x).f`: a field of a composite value.
        Expr::CompoundFieldAccess { root, access_chain }
            if matches!(root.as_ref(), Expr::Nested(_))
                && access_chain.iter().all(|a| {
                    matches!(
                        a,
                        datafusion::sql::sqlparser::ast::AccessExpr::Dot(Expr::Identifier(_))
                    )
                }) =>
        {
            let x = std::mem::replace(root.as_mut(), Expr::value(Value::Null));
            let mut x = match x {
                Expr::Nested(inner) => *inner,
                other => other,
            };
            for a in access_chain.iter() {
                if let datafusion::sql::sqlparser::ast::AccessExpr::Dot(Expr::Identifier(i)) = a {
                    x = call(
                        "get_field",
                        vec![
                            x,
                            Expr::value(Value::SingleQuotedString(
                                crate::plan::object_parts(&ObjectName(vec![
                                    ObjectNamePart::Identifier(i.clone()),
                                ]))
                                .pop()
                                .unwrap_or_default(),
                            )),
                        ],
                    );
                }
            }
            *e = x;
            true
        }
        // Set-returning functions of a select list, zipped with the others
        // there as unnest is: `information_schema._pg_expandarray(a)` and
        // `generate_subscripts(a, 1)` as unnest of a list.
        Expr::Function(f) if set_returning(f).is_some() => {
            let Some((udf, arity)) = set_returning(f) else {
                return false;
            };
            let FunctionArguments::List(list) = &f.args else {
                return false;
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
                return false;
            }
            *e = call("unnest", vec![call(udf, args)]);
            true
        }
        Expr::Function(f) => {
            if f.name.0.len() == 2
                && matches!(&f.name.0[0], ObjectNamePart::Identifier(i) if i.value.eq_ignore_ascii_case("pg_catalog"))
            {
                let last = f.name.0[1].clone();
                f.name = ObjectName(vec![last]);
                return true;
            }
            false
        }
        Expr::BinaryOp { left, op, right }
            if matches!(op, BinaryOperator::Eq | BinaryOperator::NotEq)
                && (array_literal(left).is_some() || array_literal(right).is_some()) =>
        {
            for side in [left, right] {
                if let Some(a) = array_literal(side) {
                    **side = a;
                }
            }
            true
        }
        Expr::BinaryOp { op, .. } => {
            let BinaryOperator::PGCustomBinaryOperator(parts) = op else {
                return false;
            };
            let name = match parts.as_slice() {
                [schema, n] if schema.eq_ignore_ascii_case("pg_catalog") => n.as_str(),
                [n] => n.as_str(),
                _ => return false,
            };
            *op = match name {
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
                _ => return false,
            };
            true
        }
        // Tessera compares text in one collation (C order).
        Expr::Collate { expr, collation } => {
            let c = collation.to_string().to_ascii_lowercase().replace('"', "");
            let c = c.strip_prefix("pg_catalog.").unwrap_or(&c);
            if !matches!(c, "default" | "c" | "posix" | "ucs_basic") {
                return false;
            }
            let x = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
            *e = x;
            true
        }
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            array: false,
            format: None,
        } => {
            let word = type_word(data_type);
            let handled = matches!(
                word.as_str(),
                "regclass"
                    | "regtype"
                    | "regnamespace"
                    | "regrole"
                    | "regproc"
                    | "regprocedure"
                    | "oid"
                    | "regoper"
                    | "xid"
                    | "cid"
                    | "tid"
                    | "name"
                    | "char"
                    | "information_schema.sql_identifier"
                    | "information_schema.character_data"
            ) || (word == "text" && !matches!(data_type, DataType::Text));
            if !handled {
                return false;
            }
            let x = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
            let new = match word.as_str() {
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
            };
            *e = new;
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    fn rewritten(sql: &str) -> String {
        let stmt = crate::parse::parse_sql(sql).unwrap().pop().unwrap();
        super::super::for_datafusion(&stmt)
            .map(|s| s.to_string())
            .unwrap_or_default()
    }

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
