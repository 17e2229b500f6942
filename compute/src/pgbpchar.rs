//! `char(n)` (bpchar) semantics on the DataFusion path (part of the
//! `semantics` analyzer rule). A char(n) column's values arrive without
//! their trailing blanks (MariaDB strips them; `scan::BPCHAR_WIDTH` keeps
//! the width), which is PostgreSQL's answer wherever it reads bpchar as
//! text (`length`, `||`, casts). Where PostgreSQL reads the padded value
//! or ignores trailing blanks, this rewrites the expression:
//!
//! * comparing with a string constant (`=`, `<>`, `<`, ..., `IS
//!   DISTINCT FROM` and `IN`)
//!   ignores the constant's trailing blanks, as bpchar comparison does
//!   (`c = 'ab  '` is true for `ab`);
//! * `LIKE` / `ILIKE` and `octet_length` read the value padded to its
//!   width (`'ab'::char(10) LIKE 'ab'` is false, `octet_length` is 10).

use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::expr::{InList, Like, ScalarFunction};
use datafusion::logical_expr::{lit, BinaryExpr, Cast, Expr};

use crate::pgresult::bpchar_width;

/// A string constant (under a cast type coercion put on it) without its
/// trailing blanks; `None` for anything else, or when nothing changes.
fn trimmed(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Cast(Cast { expr, field }) => {
            trimmed(expr).map(|t| Expr::Cast(Cast::new(Box::new(t), field.data_type().clone())))
        }
        Expr::Literal(v, meta) => {
            let s = v.try_as_str().flatten()?;
            let t = s.trim_end_matches(' ');
            if t.len() == s.len() {
                return None;
            }
            let v = match v {
                ScalarValue::Utf8View(_) => ScalarValue::Utf8View(Some(t.into())),
                ScalarValue::LargeUtf8(_) => ScalarValue::LargeUtf8(Some(t.into())),
                _ => ScalarValue::Utf8(Some(t.into())),
            };
            Some(Expr::Literal(v, meta.clone()))
        }
        _ => None,
    }
}

/// A pattern `prefix%` whose prefix has no wildcard or escape and does
/// not end in a blank: the padded and the stripped value match it alike
/// (`hd_buy_potential LIKE 'Unknown%'` stays as it is, and on the shards).
fn prefix_pattern(p: &Expr) -> bool {
    let p = match p {
        Expr::Cast(Cast { expr, .. }) => expr.as_ref(),
        other => other,
    };
    let Some(s) = (match p {
        Expr::Literal(v, _) => v.try_as_str().flatten(),
        _ => None,
    }) else {
        return false;
    };
    let Some(prefix) = s.strip_suffix('%') else {
        return false;
    };
    !prefix.is_empty() && !prefix.ends_with(' ') && !prefix.contains(['%', '_', '\\'])
}

/// `e` padded to `width` characters.
fn padded(e: &Expr, width: i64) -> Expr {
    datafusion::functions::unicode::expr_fn::rpad(vec![e.clone(), lit(width), lit(" ")])
}

/// The PostgreSQL version of node `e` over `schema`, where bpchar's
/// semantics differ from text's.
pub(crate) fn rewrite(e: &Expr, schema: &DFSchema) -> Option<Expr> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if shard_router::sql::is_comparison(op) =>
        {
            if bpchar_width(left, schema).is_some() {
                let r = trimmed(right)?;
                Some(Expr::BinaryExpr(BinaryExpr::new(
                    left.clone(),
                    *op,
                    Box::new(r),
                )))
            } else if bpchar_width(right, schema).is_some() {
                let l = trimmed(left)?;
                Some(Expr::BinaryExpr(BinaryExpr::new(
                    Box::new(l),
                    *op,
                    right.clone(),
                )))
            } else {
                None
            }
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) if bpchar_width(expr, schema).is_some() => {
            let mut changed = false;
            let list = list
                .iter()
                .map(|x| match trimmed(x) {
                    Some(t) => {
                        changed = true;
                        t
                    }
                    None => x.clone(),
                })
                .collect();
            changed.then(|| {
                Expr::InList(InList {
                    expr: expr.clone(),
                    list,
                    negated: *negated,
                })
            })
        }
        Expr::Like(like) if !prefix_pattern(&like.pattern) => {
            let w = bpchar_width(&like.expr, schema)?;
            Some(Expr::Like(Like {
                expr: Box::new(padded(&like.expr, w)),
                ..like.clone()
            }))
        }
        Expr::ScalarFunction(f) if f.func.name() == "octet_length" && f.args.len() == 1 => {
            let w = bpchar_width(&f.args[0], schema)?;
            Some(Expr::ScalarFunction(ScalarFunction::new_udf(
                f.func.clone(),
                vec![padded(&f.args[0], w)],
            )))
        }
        _ => None,
    }
}
