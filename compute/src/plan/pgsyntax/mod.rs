//! PostgreSQL spellings DataFusion plans differently or not at all,
//! rewritten in the copy of a statement that DataFusion plans (never in
//! SQL sent to a shard, which is rendered from Tessera's own plan):
//!
//! * `mod(a, b)` is `a % b`, `sign(x)` is DataFusion's `signum(x)`,
//!   `every(x)` is `bool_and(x)`, `date_part()` is double precision;
//! * `~x` (bitwise not) is `x # -1`;
//! * `FETCH FIRST n ROWS ONLY` is `LIMIT n`;
//! * `SUBSTRING(...)` calls the session's `substr` (PostgreSQL's errors);
//! * `x SIMILAR TO 'p'` is the regular expression PostgreSQL makes of `p`;
//! * `x::varchar(n)` cuts to n characters, `x::char(n)` cuts and, as a
//!   result column, pads to n;
//! * `'1' + 1`: an untyped string takes the other constant's type;
//! * USING columns in WHERE are qualified (DataFusion finds them ambiguous);
//! * a scalar subquery that does not aggregate gets `pg_one_row`;
//! * result columns and set-returning functions in FROM get the names
//!   PostgreSQL gives them (`colnames`);
//! * correlated scalar subqueries DataFusion cannot decorrelate, in
//!   equivalent shapes it can ([`subquery`]);
//! * catalog queries' spellings ([`catalog`]): `pg_catalog.f()`,
//!   `OPERATOR(pg_catalog.~)`, `COLLATE pg_catalog.default`, `::regclass`.
//!
//! [`check`] runs first, on the client's statement: PostgreSQL's errors
//! and Tessera's refusals before anything is planned.

mod catalog;
mod check;
mod pieces;
mod subquery;

pub use check::check;
pub use pieces::similar_to_regex;
use pieces::{
    as_text, binary, call, pad_root_chars, plain_args, qualify_using_columns, unaggregated_item,
};

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, CharacterLength, DataType, Expr, Ident, LimitClause, ObjectName,
    ObjectNamePart, Query, SetExpr, Statement, UnaryOperator, Value, VisitMut, VisitorMut,
};

use super::colnames;

/// The statement DataFusion should plan for `stmt`, when it differs.
pub fn for_datafusion(stmt: &Statement) -> Option<Statement> {
    let (mut st, mut changed) = match colnames::with_unique_names(stmt) {
        Some(s) => (s, true),
        None => (stmt.clone(), false),
    };
    changed |= colnames::name_table_functions(&mut st);
    changed |= pad_root_chars(&mut st);
    let mut r = Rewriter(false, vec![]);
    let _ = VisitMut::visit(&mut st, &mut r);
    (changed || r.0).then_some(st)
}

/// Whether anything changed, and the subqueries of `ANY`/`ALL`/`IN`
/// comparisons seen (by address while the tree is visited): those are
/// not scalar subqueries.
struct Rewriter(bool, Vec<*const Query>);

impl VisitorMut for Rewriter {
    type Break = ();

    fn pre_visit_table_factor(
        &mut self,
        f: &mut datafusion::sql::sqlparser::ast::TableFactor,
    ) -> ControlFlow<()> {
        self.0 |= catalog::table_function(f);
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        self.0 |= subquery::over_empty_catalog(q);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Select(sel) = q.body.as_mut() {
            self.0 |= qualify_using_columns(sel);
        }
        let Some(fetch) = q.fetch.as_ref() else {
            return ControlFlow::Continue(());
        };
        if fetch.with_ties || fetch.percent {
            return ControlFlow::Continue(());
        }
        let n = fetch
            .quantity
            .clone()
            .unwrap_or_else(|| Expr::value(Value::Number("1".into(), false)));
        match &mut q.limit_clause {
            None => {
                q.limit_clause = Some(LimitClause::LimitOffset {
                    limit: Some(n),
                    offset: None,
                    limit_by: vec![],
                })
            }
            Some(LimitClause::LimitOffset {
                limit: l @ None, ..
            }) => *l = Some(n),
            // LIMIT and FETCH together: left for DataFusion to refuse.
            Some(_) => return ControlFlow::Continue(()),
        }
        q.fetch = None;
        self.0 = true;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::AnyOp { right, .. } | Expr::AllOp { right, .. } = e {
            if let Expr::Subquery(q) = right.as_ref() {
                self.1.push(q.as_ref() as *const Query);
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        self.0 |= catalog::rewrite(e);
        if let Expr::Subquery(q) = e {
            if !self.1.contains(&(q.as_ref() as *const Query)) {
                self.0 |= subquery::rewrite(e);
            }
        }
        match e {
            Expr::Subquery(q) if !self.1.contains(&(q.as_ref() as *const Query)) => {
                if let Some(item) = unaggregated_item(q) {
                    let x = std::mem::replace(item, Expr::value(Value::Null));
                    *item = call(crate::onerow::NAME, vec![x]);
                    self.0 = true;
                }
            }
            // DataFusion plans SUBSTRING(...) with its own substr, not the
            // session's (which has PostgreSQL's errors).
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let from = substring_from
                    .take()
                    .map(|b| *b)
                    .unwrap_or_else(|| Expr::value(Value::Number("1".into(), false)));
                let mut args = vec![
                    std::mem::replace(expr.as_mut(), Expr::value(Value::Null)),
                    from,
                ];
                if let Some(n) = substring_for.take() {
                    args.push(*n);
                }
                *e = call("substr", args);
                self.0 = true;
            }
            Expr::Function(f) if f.over.is_none() && f.filter.is_none() => {
                let name = crate::plan::object_parts(&f.name);
                let unqualified = match name.as_slice() {
                    [n] => Some(n.as_str()),
                    [s, n] if s == "pg_catalog" => Some(n.as_str()),
                    _ => None,
                };
                match (unqualified, plain_args(&f.args)) {
                    (Some("mod"), Some(args)) if args.len() == 2 => {
                        let mut it = args.into_iter();
                        if let (Some(a), Some(b)) = (it.next(), it.next()) {
                            *e = binary(a, BinaryOperator::Modulo, b);
                            self.0 = true;
                        }
                    }
                    // date_part() is double precision in PostgreSQL
                    // (EXTRACT is numeric).
                    (Some("date_part"), Some(args)) if args.len() == 2 => {
                        let call = Expr::Function(f.clone());
                        *e = Expr::Cast {
                            kind: CastKind::Cast,
                            expr: Box::new(call),
                            data_type: DataType::DoublePrecision,
                            array: false,
                            format: None,
                        };
                        self.0 = true;
                    }
                    // every() is the standard's name of bool_and().
                    (Some("every"), Some(args)) if args.len() == 1 => {
                        f.name =
                            ObjectName(vec![ObjectNamePart::Identifier(Ident::new("bool_and"))]);
                        self.0 = true;
                    }
                    (Some("sign"), Some(args)) if args.len() == 1 => {
                        f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("signum"))]);
                        self.0 = true;
                    }
                    _ => {}
                }
            }
            // SIMILAR TO as the regular expression PostgreSQL translates
            // it to (DataFusion's answers false); other patterns are
            // refused in `check`.
            Expr::SimilarTo {
                negated,
                expr,
                pattern,
                escape_char: None,
            } => {
                if let Expr::Value(v) = pattern.as_ref() {
                    if let Value::SingleQuotedString(p) = &v.value {
                        let re = similar_to_regex(p);
                        let op = if *negated {
                            BinaryOperator::PGRegexNotMatch
                        } else {
                            BinaryOperator::PGRegexMatch
                        };
                        let x = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
                        *e = binary(x, op, Expr::value(Value::SingleQuotedString(re)));
                        self.0 = true;
                    }
                }
            }
            // `x::varchar(n)` cuts to n characters, `x::char(n)` cuts or
            // pads with blanks to n (DataFusion drops the length).
            Expr::Cast {
                kind: CastKind::Cast | CastKind::DoubleColon,
                expr,
                data_type,
                array: false,
                format: None,
            } => {
                let (n, pad) = match data_type {
                    DataType::Varchar(Some(CharacterLength::IntegerLength { length, .. }))
                    | DataType::CharacterVarying(Some(CharacterLength::IntegerLength {
                        length,
                        ..
                    })) => (*length, false),
                    DataType::Char(l) | DataType::Character(l) => match l {
                        Some(CharacterLength::IntegerLength { length, .. }) => (*length, true),
                        None => (1, true),
                        Some(CharacterLength::Max) => return ControlFlow::Continue(()),
                    },
                    _ => return ControlFlow::Continue(()),
                };
                let text = as_text(expr);
                let n = Expr::value(Value::Number(n.to_string(), false));
                let one = Expr::value(Value::Number("1".into(), false));
                *e = if pad {
                    // Its blanks do not count in comparisons; a result
                    // column shows them (`pad_root_chars`).
                    call("rtrim", vec![call("substr", vec![text, one, n])])
                } else {
                    call("substr", vec![text, one, n])
                };
                self.0 = true;
            }
            // `'abc' + 1`: the untyped string takes the number's type, as
            // PostgreSQL resolves an unknown literal (so `'1' + 1` is 2
            // and `'abc' + 1` is 22P02).
            Expr::BinaryOp {
                left,
                op:
                    BinaryOperator::Plus
                    | BinaryOperator::Minus
                    | BinaryOperator::Multiply
                    | BinaryOperator::Divide
                    | BinaryOperator::Modulo,
                right,
            } => {
                let num_type = |x: &Expr| match x {
                    Expr::Value(v) => match &v.value {
                        Value::Number(n, _) if n.contains(['.', 'e', 'E']) => {
                            Some(DataType::Numeric(
                                datafusion::sql::sqlparser::ast::ExactNumberInfo::None,
                            ))
                        }
                        Value::Number(n, _) if n.parse::<i32>().is_ok() => {
                            Some(DataType::Int(None))
                        }
                        Value::Number(n, _) if n.parse::<i64>().is_ok() => {
                            Some(DataType::BigInt(None))
                        }
                        Value::Number(..) => Some(DataType::Numeric(
                            datafusion::sql::sqlparser::ast::ExactNumberInfo::None,
                        )),
                        _ => None,
                    },
                    _ => None,
                };
                let is_str = |x: &Expr| matches!(x, Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_)));
                let typed = |s: &mut Box<Expr>, t: DataType| {
                    let x = std::mem::replace(s.as_mut(), Expr::value(Value::Null));
                    **s = Expr::Cast {
                        kind: CastKind::Cast,
                        expr: Box::new(x),
                        data_type: t,
                        array: false,
                        format: None,
                    };
                };
                if is_str(left) {
                    if let Some(t) = num_type(right) {
                        typed(left, t);
                        self.0 = true;
                    }
                } else if is_str(right) {
                    if let Some(t) = num_type(left) {
                        typed(right, t);
                        self.0 = true;
                    }
                }
            }
            Expr::UnaryOp {
                op: UnaryOperator::BitwiseNot,
                expr,
            } => {
                let x = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
                let minus_one = Expr::UnaryOp {
                    op: UnaryOperator::Minus,
                    expr: Box::new(Expr::value(Value::Number("1".into(), false))),
                };
                *e = binary(x, BinaryOperator::PGBitwiseXor, minus_one);
                self.0 = true;
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let stmt = crate::parse::parse_sql(sql).unwrap().pop().unwrap();
        for_datafusion(&stmt)
            .map(|s| s.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn postgres_spellings_become_datafusion_ones() {
        assert_eq!(
            rewritten("SELECT mod(a, 7), sign(b), ~c FROM t"),
            "SELECT ((a) % (7)) AS \"?column 1?\", signum(b) AS \"?column 2?\", ((c) # (-1)) AS \"?column 3?\" FROM t"
        );
        assert_eq!(
            rewritten("SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY"),
            "SELECT a FROM t ORDER BY a LIMIT 3"
        );
        assert_eq!(
            rewritten("SELECT * FROM generate_series(1, 3)"),
            "SELECT * FROM generate_series(1, 3) AS \"generate_series\" (\"generate_series\")"
        );
        assert_eq!(rewritten("SELECT a FROM t"), "");
        assert_eq!(
            rewritten("SELECT 'abc'::varchar(2), x::char(3) FROM t"),
            "SELECT substr(CAST('abc' AS TEXT), 1, 2) AS \"?column 1?\", rpad(CAST(x AS TEXT), 3) AS \"?column 2?\" FROM t"
        );
        assert_eq!(
            rewritten("SELECT 1 FROM t WHERE x::char(3) = 'a' AND '2' + 1 > 0"),
            "SELECT 1 FROM t WHERE rtrim(substr(CAST(x AS TEXT), 1, 3)) = 'a' AND CAST('2' AS INT) + 1 > 0"
        );
        assert_eq!(
            rewritten("SELECT a FROM t JOIN u USING (id) WHERE id < 3 AND EXISTS (SELECT 1 FROM v WHERE id = 1)"),
            "SELECT a FROM t JOIN u USING(id) WHERE t.id < 3 AND EXISTS (SELECT 1 FROM v WHERE id = 1)"
        );
    }

    #[test]
    fn similar_to_translates_as_postgres() {
        assert_eq!(similar_to_regex("%(a|o)%"), "^(?:.*(a|o).*)$");
        assert_eq!(similar_to_regex("a_b.c"), "^(?:a.b\\.c)$");
        assert_eq!(similar_to_regex("[%_]x\\%"), "^(?:[%_]x\\%)$");
    }
}
