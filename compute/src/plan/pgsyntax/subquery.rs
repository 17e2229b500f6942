//! Correlated scalar subqueries in shapes DataFusion 55 cannot
//! decorrelate, or decorrelates wrongly, rewritten into equivalent ones it
//! can (catalog queries are full of them: psql's `\d`):
//!
//! * a condition on outer columns only (`... AND a.atthasdef`) leaves the
//!   subquery: `CASE WHEN cond THEN (subquery) END` (no row and a false
//!   condition both give NULL);
//! * an inner column of a table bound to one row by an equality with the
//!   outer query (`t.oid = a.atttypid`) in a condition that also reads
//!   outer columns (`a.attcollation <> t.typcollation`) is read by its own
//!   subquery on that equality, so the condition reads outer columns only
//!   and leaves too (a binding that is not to one row fails with 21000);
//! * two inner columns of one name bound to the outer query (`c.oid =
//!   a.attcollation AND t.oid = a.atttypid`) are given distinct names in
//!   derived tables (DataFusion joins on one of them twice otherwise).
//!
//! Only subqueries that select one unaggregated value over plain tables
//! are rewritten; anything else is left for DataFusion (or its guard,
//! `crate::decorrelation`).

use std::collections::{HashMap, HashSet};

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, Ident, ObjectName, Query, Select, SetExpr, TableFactor,
};

use super::pieces::{call, parse_expr, unaggregated_item};

/// The subquery's tables by alias; `None` when it is not plain tables.
fn inner_tables(q: &Query) -> Option<HashMap<String, ObjectName>> {
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    let mut out = HashMap::new();
    for twj in &sel.from {
        if !twj.joins.is_empty() {
            return None;
        }
        let TableFactor::Table { name, alias, .. } = &twj.relation else {
            return None;
        };
        let key = match alias {
            Some(a) => a.name.value.to_lowercase(),
            None => crate::plan::object_parts(name).last()?.clone(),
        };
        out.insert(key, name.clone());
    }
    Some(out)
}

/// The qualifiers of the columns `e` reads; `None` if it reads an
/// unqualified column or holds a subquery (it cannot be classified).
fn qualifiers(e: &Expr) -> Option<HashSet<String>> {
    let mut out = HashSet::new();
    let mut ok = true;
    let _ = datafusion::sql::sqlparser::ast::visit_expressions(e, |x| {
        match x {
            // `t.c`, or `pg_catalog.t.c`: the table's name qualifies.
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                out.insert(parts[parts.len() - 2].value.to_lowercase());
            }
            Expr::Identifier(_)
            | Expr::CompoundIdentifier(_)
            | Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::InSubquery { .. } => ok = false,
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    ok.then_some(out)
}

fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            conjuncts(*left, out);
            conjuncts(*right, out);
        }
        Expr::Nested(x)
            if matches!(
                x.as_ref(),
                Expr::BinaryOp {
                    op: BinaryOperator::And,
                    ..
                }
            ) =>
        {
            conjuncts(*x, out)
        }
        other => out.push(other),
    }
}

fn and_all(v: Vec<Expr>) -> Option<Expr> {
    v.into_iter().reduce(|a, b| Expr::BinaryOp {
        left: Box::new(a),
        op: BinaryOperator::And,
        right: Box::new(b),
    })
}

/// `inner.col = outer-expr` (either way round): (alias, column, outer).
fn binding(e: &Expr, inner: &HashMap<String, ObjectName>) -> Option<Binding> {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right,
    } = e
    else {
        return None;
    };
    let side = |a: &Expr, b: &Expr| {
        let Expr::CompoundIdentifier(p) = a else {
            return None;
        };
        let n = p.len();
        if n < 2 || !inner.contains_key(&p[n - 2].value.to_lowercase()) {
            return None;
        }
        let q = qualifiers(b)?;
        if q.is_empty() || q.iter().any(|x| inner.contains_key(x)) {
            return None;
        }
        Some((
            p[0].value.to_lowercase(),
            p[1].value.to_lowercase(),
            b.clone(),
        ))
    };
    side(left, right).or_else(|| side(right, left))
}

/// Rewrites a scalar subquery expression in place; whether it changed.
pub fn rewrite(e: &mut Expr) -> bool {
    let Expr::Subquery(q) = e else {
        return false;
    };
    let Some(inner) = inner_tables(q) else {
        return false;
    };
    if unaggregated_item(q).is_none() {
        return false;
    }
    let SetExpr::Select(sel) = q.body.as_mut() else {
        return false;
    };
    // A copy: every early return leaves the subquery as it was.
    let Some(selection) = sel.selection.clone() else {
        return false;
    };
    let mut parts = vec![];
    conjuncts(selection, &mut parts);
    let bindings: Vec<Binding> = parts.iter().filter_map(|c| binding(c, &inner)).collect();
    let Some((mut kept, hoisted)) = split_conditions(parts, &inner, &bindings) else {
        return false;
    };
    let clashing = clashing_bindings(sel, &bindings);
    if !rename_clashing_tables(sel, &clashing) {
        return false;
    }
    rename_clashing_columns(&mut kept, &clashing);
    sel.selection = and_all(kept);
    // Outer columns in the select list (DataFusion decorrelates none):
    // each inner column read by its own copy of the subquery, the value
    // made only when the subquery has a row.
    let outer_in_item = unaggregated_item(q)
        .and_then(|item| qualifiers(item))
        .is_some_and(|qs| qs.iter().any(|x| !inner.contains_key(x)));
    let changed = !hoisted.is_empty() || !clashing.is_empty() || outer_in_item;
    if !changed {
        return false;
    }
    if outer_in_item {
        let Some(value) = outer_item(q, &inner) else {
            return false;
        };
        *e = value;
    } else if let Some(item) = unaggregated_item(q) {
        let x = std::mem::replace(
            item,
            Expr::value(datafusion::sql::sqlparser::ast::Value::Null),
        );
        *item = call(crate::onerow::NAME, vec![x]);
    }
    if let Some(cond) = and_all(hoisted) {
        let sub = std::mem::replace(e, Expr::value(datafusion::sql::sqlparser::ast::Value::Null));
        *e = case_when(cond, sub);
    }
    true
}

/// An inner column bound to the outer query: (alias, column, outer).
type Binding = (String, String, Expr);

/// The subquery's conditions split into those it keeps and those that
/// leave it (they read outer columns only, or do once each inner column
/// is read through its table's binding); `None` when a condition mixes
/// in an inner column of a table without a binding.
fn split_conditions(
    parts: Vec<Expr>,
    inner: &HashMap<String, ObjectName>,
    bindings: &[Binding],
) -> Option<(Vec<Expr>, Vec<Expr>)> {
    let is_inner = |x: &String| inner.contains_key(x);
    let mut kept = vec![];
    let mut hoisted = vec![];
    for mut c in parts {
        let Some(qs) = qualifiers(&c) else {
            kept.push(c);
            continue;
        };
        if qs.is_empty() || qs.iter().all(is_inner) || binding(&c, inner).is_some() {
            kept.push(c);
            continue;
        }
        if !qs.iter().any(is_inner) {
            hoisted.push(c);
            continue;
        }
        // Mixed: each inner column read through its table's binding.
        if !read_through_bindings(&mut c, inner, bindings) {
            return None;
        }
        hoisted.push(c);
    }
    Some((kept, hoisted))
}

/// Replaces each inner column in `c` by a subquery that reads it from
/// the row its table's binding selects; whether every one had a binding.
fn read_through_bindings(
    c: &mut Expr,
    inner: &HashMap<String, ObjectName>,
    bindings: &[Binding],
) -> bool {
    let mut all_bound = true;
    let _ = datafusion::sql::sqlparser::ast::visit_expressions_mut(c, |x| {
        if let Expr::CompoundIdentifier(p) = x {
            let alias = p[p.len() - 2].value.to_lowercase();
            if let Some(table) = inner.get(&alias) {
                let col = &p[p.len() - 1];
                let found = bindings
                    .iter()
                    .find(|(a, _, _)| *a == alias)
                    .and_then(|(_, k, outer)| {
                        parse_expr(&format!(
                            "(SELECT {} FROM {table} AS \"__bound\" WHERE \"__bound\".{} = {outer})",
                            call(
                                crate::onerow::NAME,
                                vec![Expr::CompoundIdentifier(vec![
                                    Ident::with_quote('"', "__bound"),
                                    col.clone()
                                ])]
                            ),
                            Ident::with_quote('"', k.as_str()),
                        ))
                    });
                match found {
                    Some(sub) => *x = sub,
                    None => all_bound = false,
                }
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    all_bound
}

/// The (alias, column) of bound inner columns that share their column's
/// name with another table's bound column (tables with an alias only: a
/// derived table is named by it).
fn clashing_bindings(sel: &Select, bindings: &[Binding]) -> HashSet<(String, String)> {
    let mut by_name: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (a, k, _) in bindings {
        by_name.entry(k.as_str()).or_default().insert(a.as_str());
    }
    let aliased: HashSet<String> = sel
        .from
        .iter()
        .filter_map(|t| match &t.relation {
            TableFactor::Table { alias: Some(a), .. } => Some(a.name.value.to_lowercase()),
            _ => None,
        })
        .collect();
    bindings
        .iter()
        .filter(|(a, k, _)| {
            aliased.contains(a) && by_name.get(k.as_str()).is_some_and(|s| s.len() > 1)
        })
        .map(|(a, k, _)| (a.clone(), k.clone()))
        .collect()
}

/// Each table with clashing columns replaced by a derived table of its
/// alias that adds them under distinct names (`"__a_k"`); false when one
/// could not be built (the tables before it are already replaced).
fn rename_clashing_tables(sel: &mut Select, clashing: &HashSet<(String, String)>) -> bool {
    for twj in &mut sel.from {
        let TableFactor::Table { name, alias, .. } = &twj.relation else {
            continue;
        };
        let a = match alias {
            Some(a) => a.name.value.to_lowercase(),
            None => crate::plan::object_parts(name)
                .last()
                .cloned()
                .unwrap_or_default(),
        };
        let cols: Vec<&String> = clashing
            .iter()
            .filter(|(x, _)| *x == a)
            .map(|(_, k)| k)
            .collect();
        if cols.is_empty() {
            continue;
        }
        let Some(relation) = derived_table(name, &a, &cols) else {
            return false;
        };
        twj.relation = relation;
    }
    true
}

/// `(SELECT *, k AS "__a_k", ... FROM name) AS a`.
fn derived_table(name: &ObjectName, a: &str, cols: &[&String]) -> Option<TableFactor> {
    let extra: Vec<String> = cols
        .iter()
        .map(|k| format!("{} AS \"__{a}_{k}\"", Ident::with_quote('"', k.as_str())))
        .collect();
    let sql = format!(
        "SELECT * FROM (SELECT *, {} FROM {name}) AS {}",
        extra.join(", "),
        Ident::with_quote('"', a)
    );
    let mut parsed = datafusion::sql::sqlparser::parser::Parser::parse_sql(
        &crate::dialect::TesseraDialect,
        &sql,
    )
    .ok()?;
    let Some(datafusion::sql::sqlparser::ast::Statement::Query(pq)) = parsed.pop() else {
        return None;
    };
    let SetExpr::Select(ps) = *pq.body else {
        return None;
    };
    Some(ps.from.into_iter().next()?.relation)
}

/// The clashing columns in the kept conditions read under their derived
/// table's names.
fn rename_clashing_columns(kept: &mut [Expr], clashing: &HashSet<(String, String)>) {
    for c in kept {
        let _ = datafusion::sql::sqlparser::ast::visit_expressions_mut(c, |x| {
            if let Expr::CompoundIdentifier(p) = x {
                let n = p.len();
                if n >= 2 {
                    let a = p[n - 2].value.to_lowercase();
                    let k = p[n - 1].value.to_lowercase();
                    if clashing.contains(&(a.clone(), k.clone())) {
                        // The derived table is named after the alias.
                        *p = vec![
                            Ident::with_quote('"', a.as_str()),
                            Ident::with_quote('"', format!("__{a}_{k}")),
                        ];
                    }
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
}

/// `CASE WHEN cond THEN result END`.
fn case_when(cond: Expr, result: Expr) -> Expr {
    Expr::Case {
        case_token: datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken::empty(
        ),
        end_token: datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
        operand: None,
        conditions: vec![datafusion::sql::sqlparser::ast::CaseWhen {
            condition: cond,
            result,
        }],
        else_result: None,
    }
}

/// `(SELECT g(o, i1, i2) FROM F WHERE P)` with outer columns `o` as
/// `CASE WHEN (SELECT count(*) FROM F WHERE P) > 0 THEN g(o, (SELECT
/// pg_one_row(i1) FROM F WHERE P), ...) END`: the same value, NULL without
/// a row, 21000 with more than one.
fn outer_item(q: &mut Query, inner: &HashMap<String, ObjectName>) -> Option<Expr> {
    let item = unaggregated_item(q)?.clone();
    let copy_with = |projection: Expr| {
        let mut c = q.clone();
        if let SetExpr::Select(sel) = c.body.as_mut() {
            sel.projection = vec![datafusion::sql::sqlparser::ast::SelectItem::UnnamedExpr(
                projection,
            )];
        }
        Expr::Subquery(Box::new(c))
    };
    let mut value = item;
    let _ = datafusion::sql::sqlparser::ast::visit_expressions_mut(&mut value, |x| {
        if let Expr::CompoundIdentifier(p) = x {
            if p.len() >= 2 && inner.contains_key(&p[p.len() - 2].value.to_lowercase()) {
                let col =
                    std::mem::replace(x, Expr::value(datafusion::sql::sqlparser::ast::Value::Null));
                *x = copy_with(call(crate::onerow::NAME, vec![col]));
                return std::ops::ControlFlow::<()>::Continue(());
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    let count = copy_with(parse_expr("count(*)")?);
    let has_row = Expr::BinaryOp {
        left: Box::new(count),
        op: BinaryOperator::Gt,
        right: Box::new(Expr::value(datafusion::sql::sqlparser::ast::Value::Number(
            "0".into(),
            false,
        ))),
    };
    Some(case_when(has_row, value))
}

/// `pg_catalog` tables that never hold a row in Tessera.
const EMPTY_CATALOGS: &[&str] = &[
    "pg_policy",
    "pg_trigger",
    "pg_inherits",
    "pg_partitioned_table",
    "pg_statistic_ext",
    "pg_publication",
    "pg_publication_rel",
    "pg_publication_namespace",
    "pg_rewrite",
    "pg_enum",
    "pg_opclass",
    "pg_range",
    "pg_foreign_table",
    "pg_event_trigger",
    "pg_auth_members",
];

/// A SELECT that reads (or inner-joins) a `pg_catalog` table that is
/// always empty never
/// evaluates its select list: subqueries there (psql's, correlated in
/// ways DataFusion cannot plan) become NULL. Whether it changed.
pub fn over_empty_catalog(q: &mut Query) -> bool {
    over_empty_catalog_in(q.body.as_mut())
}

fn over_empty_catalog_in(body: &mut SetExpr) -> bool {
    let sel = match body {
        SetExpr::Select(sel) => sel,
        SetExpr::SetOperation { left, right, .. } => {
            let l = over_empty_catalog_in(left);
            return over_empty_catalog_in(right) || l;
        }
        _ => return false,
    };
    let is_empty = |f: &TableFactor| match f {
        TableFactor::Table { name, .. } => matches!(
            crate::plan::object_parts(name).as_slice(),
            [s, t] if s == "pg_catalog" && EMPTY_CATALOGS.contains(&t.as_str())
        ),
        _ => false,
    };
    // An empty table in the FROM list or inner-joined: no rows.
    let empty = sel.from.iter().any(|twj| {
        is_empty(&twj.relation)
            || twj.joins.iter().any(|j| {
                matches!(
                    j.join_operator,
                    datafusion::sql::sqlparser::ast::JoinOperator::Join(_)
                        | datafusion::sql::sqlparser::ast::JoinOperator::Inner(_)
                ) && is_empty(&j.relation)
            })
    });
    if !empty {
        return false;
    }
    let mut changed = false;
    for item in &mut sel.projection {
        let _ = datafusion::sql::sqlparser::ast::visit_expressions_mut(item, |x| {
            let sub = match x {
                Expr::Subquery(_) => true,
                Expr::Function(f) => matches!(
                    f.args,
                    datafusion::sql::sqlparser::ast::FunctionArguments::Subquery(_)
                ),
                _ => false,
            };
            if sub {
                *x = Expr::value(datafusion::sql::sqlparser::ast::Value::Null);
                changed = true;
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::super::tests::rewritten;

    #[test]
    fn outer_conditions_leave_the_subquery() {
        let s = rewritten("SELECT (SELECT d.v FROM d WHERE d.k = a.k AND a.flag) FROM a");
        assert!(
            s.contains("CASE WHEN a.flag THEN (SELECT pg_one_row(d.v) FROM d WHERE d.k = a.k) END"),
            "{s}"
        );
    }

    #[test]
    fn same_named_bound_columns_are_renamed() {
        let s =
            rewritten("SELECT (SELECT c.n FROM c c, t t WHERE c.oid = a.x AND t.oid = a.y) FROM a");
        assert!(s.contains("\"__c_oid\""), "{s}");
        assert!(s.contains("\"__t_oid\""), "{s}");
    }

    #[test]
    fn mixed_conditions_read_bound_rows() {
        let s = rewritten(
            "SELECT (SELECT c.n FROM c c, t t WHERE c.oid = a.x AND t.oid = a.y AND a.z <> t.w) FROM a",
        );
        assert!(s.contains("CASE WHEN a.z <> (SELECT"), "{s}");
    }
}
