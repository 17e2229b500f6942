//! Checks before planning: PostgreSQL's errors for statements sqlparser
//! accepts, and refusals of what DataFusion answers wrongly.

use std::ops::ControlFlow;

use common::{Error, SqlState};
use datafusion::sql::sqlparser::ast::{
    Expr, JoinConstraint, JoinOperator, LimitClause, Query, Select, SelectItem, SetExpr,
    SetOperator, SetQuantifier, Statement, TableFactor, UnaryOperator, Value, Visit, Visitor,
};

/// PostgreSQL's errors for statements sqlparser accepts and DataFusion
/// or a shard would answer differently, raised before planning:
/// a subscript right after an `ARRAY[...]` constructor (PostgreSQL's
/// grammar requires `(ARRAY[1, 2])[1]`, 42601), a negative LIMIT (2201W)
/// or OFFSET (2201X) constant; and what Tessera refuses (0A000) because
/// DataFusion answers it wrongly: `INTERSECT ALL` and `EXCEPT ALL`.
pub fn check(stmt: &Statement) -> common::Result<()> {
    struct Checker(Option<Error>);
    impl Checker {
        fn stop(&mut self, e: Error) -> ControlFlow<()> {
            self.0 = Some(e);
            ControlFlow::Break(())
        }
    }
    impl Visitor for Checker {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            if let Some(LimitClause::LimitOffset { limit, offset, .. }) = &q.limit_clause {
                if limit.as_ref().is_some_and(negative) {
                    return self.stop(Error::Sql {
                        state: SqlState("2201W"),
                        message: "LIMIT must not be negative".into(),
                    });
                }
                if offset.as_ref().is_some_and(|o| negative(&o.value)) {
                    return self.stop(Error::Sql {
                        state: SqlState("2201X"),
                        message: "OFFSET must not be negative".into(),
                    });
                }
            }
            if let SetExpr::Select(sel) = q.body.as_ref() {
                if whole_row_function_alias(sel) {
                    return self.stop(Error::unsupported(
                        "a function's alias used as a column (a whole-row reference)",
                    ));
                }
                if natural_with_unqualified_where(sel) {
                    return self.stop(Error::unsupported(
                        "unqualified columns in WHERE over a NATURAL JOIN",
                    ));
                }
            }
            if multiset(&q.body) {
                return self.stop(Error::unsupported("INTERSECT ALL and EXCEPT ALL"));
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::CompoundFieldAccess { root, .. }
                    if matches!(root.as_ref(), Expr::Array(_)) =>
                {
                    self.stop(Error::Syntax {
                        message: "syntax error at or near \"[\"".into(),
                        position: None,
                    })
                }
                Expr::Like {
                    pattern,
                    escape_char: Some(esc),
                    ..
                }
                | Expr::ILike {
                    pattern,
                    escape_char: Some(esc),
                    ..
                } => match like_escape_error(pattern, &esc.value) {
                    Some(e) => self.stop(e),
                    None => ControlFlow::Continue(()),
                },
                Expr::SimilarTo {
                    pattern,
                    escape_char,
                    ..
                } if escape_char.is_some()
                    || !matches!(pattern.as_ref(), Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_))) =>
                {
                    self.stop(Error::unsupported(
                        "SIMILAR TO with a pattern that is not a constant or with ESCAPE",
                    ))
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    let mut c = Checker(None);
    let _ = stmt.visit(&mut c);
    c.0.map_or(Ok(()), Err)
}

/// PostgreSQL's error for `x LIKE pattern ESCAPE escape` (an escape of
/// more than one character, a pattern ending in it), or Tessera's refusal
/// of a pattern or escape that is not a constant, if any.
fn like_escape_error(pattern: &Expr, escape: &Value) -> Option<Error> {
    let refused =
        || Error::unsupported("LIKE ... ESCAPE with a pattern or escape that is not a constant");
    let Value::SingleQuotedString(c) = escape else {
        return Some(refused());
    };
    match pattern {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(p) => super::spellings::backslash_pattern(p, c).err(),
            _ => None,
        },
        _ => Some(refused()),
    }
}

/// A NATURAL JOIN whose WHERE names a column without its table: DataFusion
/// finds a merged column ambiguous there (see `qualify_using_columns`,
/// which does the same for USING, whose columns are known before planning).
fn natural_with_unqualified_where(sel: &Select) -> bool {
    let natural = sel.from.iter().flat_map(|t| &t.joins).any(|j| {
        matches!(
            &j.join_operator,
            JoinOperator::Join(JoinConstraint::Natural)
                | JoinOperator::Inner(JoinConstraint::Natural)
                | JoinOperator::Left(JoinConstraint::Natural)
                | JoinOperator::LeftOuter(JoinConstraint::Natural)
                | JoinOperator::Right(JoinConstraint::Natural)
                | JoinOperator::RightOuter(JoinConstraint::Natural)
                | JoinOperator::FullOuter(JoinConstraint::Natural)
        )
    });
    natural
        && sel.selection.as_ref().is_some_and(|w| {
            datafusion::sql::sqlparser::ast::visit_expressions(w, |e| {
                if matches!(e, Expr::Identifier(_)) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .is_break()
        })
}

/// `SELECT g FROM generate_series(1, 5) AS g(n)`: PostgreSQL reads `g` as
/// the function's whole row (its one value); DataFusion has no such
/// reference.
fn whole_row_function_alias(sel: &Select) -> bool {
    let factors = sel
        .from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)));
    let aliases: Vec<String> = factors
        .filter_map(|f| match f {
            TableFactor::Table {
                args: Some(_),
                alias: Some(a),
                ..
            }
            | TableFactor::UNNEST { alias: Some(a), .. }
            | TableFactor::Function { alias: Some(a), .. }
                if !a.columns.is_empty()
                    && a.columns.iter().all(|c| c.name.value != a.name.value) =>
            {
                Some(shard_router::sql::normalize_ident(&a.name))
            }
            _ => None,
        })
        .collect();
    if aliases.is_empty() {
        return false;
    }
    let named = |e: &Expr| {
        datafusion::sql::sqlparser::ast::visit_expressions(e, |x| match x {
            Expr::Identifier(i) if aliases.contains(&shard_router::sql::normalize_ident(i)) => {
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        })
        .is_break()
    };
    sel.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => named(e),
        _ => false,
    }) || sel.selection.as_ref().is_some_and(named)
}

/// Whether a query body holds an `INTERSECT ALL` or `EXCEPT ALL`.
fn multiset(body: &SetExpr) -> bool {
    match body {
        SetExpr::SetOperation {
            op,
            set_quantifier,
            left,
            right,
        } => {
            (matches!(op, SetOperator::Intersect | SetOperator::Except)
                && *set_quantifier == SetQuantifier::All)
                || multiset(left)
                || multiset(right)
        }
        _ => false,
    }
}

/// A negative number constant (`-1`).
fn negative(e: &Expr) -> bool {
    match e {
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => {
            matches!(expr.as_ref(), Expr::Value(v) if matches!(&v.value, Value::Number(n, _) if n.parse::<f64>().is_ok_and(|n| n > 0.0)))
        }
        Expr::Value(v) => matches!(&v.value, Value::Number(n, _) if n.starts_with('-')),
        Expr::Nested(x) => negative(x),
        _ => false,
    }
}
