//! Literal extraction for the simple query protocol. Clients that do not
//! prepare (`sysbench --db-ps-mode=disable`, psql, most ORMs' "simple"
//! mode) send the same statement shapes with different constants. Taking
//! the number and string literals out as `$n` parameters gives a key under
//! which the plan of the shape is cached per session, so each execution
//! binds values to a ready plan (and the shards reuse their prepared
//! statements) instead of planning and rendering again.
//!
//! The parameterized plan is used only when it is equivalent to planning
//! the statement with its literals: the caller accepts only fast-path plan
//! kinds, and [`bind`] accepts a literal only where PostgreSQL would read it
//! as the parameter's type (a string literal is an untyped constant; a
//! number only binds to a numeric type).

use common::Datum;
use datafusion::sql::sqlparser::ast::{
    visit_expressions, visit_expressions_mut, Expr, Statement, UnaryOperator, Value, ValueWithSpan,
};
use pgwire::api::Type;
use std::ops::ControlFlow;

use crate::pgtypes::sql_type_of_pg;

/// More literals than this (multi-row INSERTs) are not worth a cache entry.
pub const MAX_LITERALS: usize = 256;

/// A constant taken out of a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Number(String),
    String(String),
}

/// A copy of the statement with its number and string literals replaced by
/// `$1..$n` in order of appearance, and the literals. `None` when the
/// statement has no literals, too many (counted before anything is copied),
/// or already has placeholders.
pub fn parameterize(stmt: &Statement) -> Option<(Statement, Vec<Literal>)> {
    let mut n = 0usize;
    let _ = visit_expressions(stmt, |e| {
        if matches!(e, Expr::Value(_)) {
            n += 1;
        }
        if n > MAX_LITERALS {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    if n == 0 || n > MAX_LITERALS {
        return None;
    }
    let mut stmt = stmt.clone();
    let lits = parameterize_in_place(&mut stmt)?;
    Some((stmt, lits))
}

fn parameterize_in_place(stmt: &mut Statement) -> Option<Vec<Literal>> {
    let mut lits: Vec<Literal> = vec![];
    let mut refuse = false;
    let _ = visit_expressions_mut(stmt, |e| {
        // Post-order: a literal's parent sees the placeholder already.
        if let Expr::Value(v) = e {
            let lit = match &v.value {
                Value::Number(n, false) => Some(Literal::Number(n.clone())),
                Value::SingleQuotedString(s) => Some(Literal::String(s.clone())),
                Value::Placeholder(_) => {
                    refuse = true;
                    None
                }
                _ => None,
            };
            if let Some(l) = lit {
                lits.push(l);
                v.value = Value::Placeholder(format!("${}", lits.len()));
            }
        } else if let Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } = e
        {
            // -5 is one constant, as PostgreSQL's parser folds it.
            let mut fold = false;
            if let Expr::Value(ValueWithSpan {
                value: Value::Placeholder(p),
                ..
            }) = expr.as_ref()
            {
                let idx = p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok());
                if let Some(i) = idx.filter(|i| *i == lits.len()) {
                    if let Some(Literal::Number(n)) = lits.get_mut(i - 1) {
                        if !n.starts_with('-') {
                            *n = format!("-{n}");
                            fold = true;
                        }
                    }
                }
            }
            if fold {
                let inner = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
                *e = inner;
            }
        }
        if lits.len() > MAX_LITERALS {
            refuse = true;
            return ControlFlow::Break(());
        }
        ControlFlow::<()>::Continue(())
    });
    (!refuse && !lits.is_empty()).then_some(lits)
}

/// The literals as values of the plan's parameter types, or `None` when
/// one of them would not read as that type exactly as PostgreSQL reads the
/// literal (the caller then plans the statement with its literals).
pub fn bind(lits: &[Literal], types: &[Type]) -> Option<Vec<Datum>> {
    if lits.len() != types.len() {
        return None;
    }
    lits.iter()
        .zip(types)
        .map(|(l, t)| {
            let ty = sql_type_of_pg(t)?;
            match l {
                Literal::String(s) => Datum::parse(s, &ty).ok(),
                Literal::Number(n) => {
                    // A number literal with a fraction or exponent is
                    // numeric in PostgreSQL; it never binds to an integer.
                    ty.is_numeric().then(|| Datum::parse(n, &ty).ok()).flatten()
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn one(sql: &str) -> Statement {
        Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .unwrap()
            .remove(0)
    }

    #[test]
    fn literals_become_parameters() {
        let (s, lits) = parameterize(&one(
            "SELECT c FROM t WHERE id = -5 AND c = 'it''s' AND k BETWEEN 1 AND 2.5 LIMIT 10",
        ))
        .unwrap();
        assert_eq!(
            s.to_string(),
            "SELECT c FROM t WHERE id = $1 AND c = $2 AND k BETWEEN $3 AND $4 LIMIT $5"
        );
        assert_eq!(
            lits,
            vec![
                Literal::Number("-5".into()),
                Literal::String("it's".into()),
                Literal::Number("1".into()),
                Literal::Number("2.5".into()),
                Literal::Number("10".into()),
            ]
        );
        // Same shape, same key.
        let (t, _) = parameterize(&one(
            "SELECT c FROM t WHERE id = 7 AND c = 'x' AND k BETWEEN 3 AND 4 LIMIT 1",
        ))
        .unwrap();
        assert_eq!(s.to_string(), t.to_string());
    }

    #[test]
    fn refused_shapes() {
        assert!(parameterize(&one("SELECT c FROM t WHERE id = $1")).is_none());
        assert!(parameterize(&one("SELECT c FROM t")).is_none());
        let rows: Vec<String> = (0..=MAX_LITERALS).map(|i| format!("({i})")).collect();
        let big = one(&format!("INSERT INTO t VALUES {}", rows.join(",")));
        assert!(parameterize(&big).is_none());
        // 5 - 3 keeps its minus as an operator.
        let (s, _) = parameterize(&one("SELECT c FROM t WHERE k = 5 - 3")).unwrap();
        assert_eq!(s.to_string(), "SELECT c FROM t WHERE k = $1 - $2");
    }

    #[test]
    fn binding_follows_postgres_literal_typing() {
        let s = |v: &str| Literal::String(v.into());
        let n = |v: &str| Literal::Number(v.into());
        assert_eq!(
            bind(
                &[n("5"), s("abc"), s("7")],
                &[Type::INT4, Type::TEXT, Type::INT8]
            ),
            Some(vec![
                Datum::Int(5),
                Datum::Text("abc".into()),
                Datum::Int(7)
            ])
        );
        // 5.5 is not an integer; a number is not text; out of range.
        assert_eq!(bind(&[n("5.5")], &[Type::INT4]), None);
        assert_eq!(bind(&[n("5")], &[Type::TEXT]), None);
        assert_eq!(bind(&[n("3000000000")], &[Type::INT4]), None);
        assert_eq!(bind(&[s("x")], &[Type::INT4]), None);
        assert_eq!(bind(&[n("1"), n("2")], &[Type::INT4]), None);
        // Backslashes are data under standard_conforming_strings.
        assert_eq!(
            bind(&[s("a\\nb")], &[Type::VARCHAR]),
            Some(vec![Datum::Text("a\\nb".into())])
        );
    }
}
