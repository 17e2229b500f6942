//! Untyped string constants in set operations: PostgreSQL resolves a
//! UNION / INTERSECT / EXCEPT column from its typed branches, and an
//! `unknown` constant takes that type (`SELECT 10 UNION SELECT '9' ORDER
//! BY 1` is integers 9, 10; `SELECT 1 UNION SELECT 'a'` is 22P02).
//! DataFusion makes such a column text (so "10" sorted before "9"). Where
//! every other branch's value in that column is a number constant or a
//! cast (a type known before planning), the string constants are cast to
//! it here; other columns are left to DataFusion, and so are numeric ones
//! (each numeric value prints with its own scale, which a cast to the
//! column's type would lose).

use datafusion::sql::sqlparser::ast::{
    CastKind, DataType, Expr, Query, SelectItem, SetExpr, UnaryOperator, Value,
};

use super::spellings::number_type;

/// The leaf SELECT lists of a set operation (`None` when a branch is not
/// a plain SELECT list).
fn leaves<'a>(body: &'a mut SetExpr, out: &mut Vec<&'a mut Vec<SelectItem>>) -> bool {
    match body {
        SetExpr::Select(s) => {
            out.push(&mut s.projection);
            true
        }
        SetExpr::SetOperation { left, right, .. } => leaves(left, out) && leaves(right, out),
        SetExpr::Query(q) => leaves(q.body.as_mut(), out),
        _ => false,
    }
}

fn item_expr(item: &mut SelectItem) -> Option<&mut Expr> {
    match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
        _ => None,
    }
}

/// What a branch's value says of the column's type.
enum Cell {
    /// An untyped string constant.
    Unknown,
    Null,
    Typed(DataType),
    /// Anything else: the type is not known before planning.
    Opaque,
}

fn cell(e: &Expr) -> Cell {
    match e {
        Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_)) => Cell::Unknown,
        Expr::Value(v) if matches!(v.value, Value::Null) => Cell::Null,
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match number_type(expr) {
            Some(t) => Cell::Typed(t),
            None => Cell::Opaque,
        },
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            data_type,
            array: false,
            format: None,
            ..
        } => Cell::Typed(data_type.clone()),
        e => number_type(e).map_or(Cell::Opaque, Cell::Typed),
    }
}

/// Numbers of different kinds resolve to the widest, as PostgreSQL's
/// integer < bigint < numeric; other types must agree.
fn resolve(types: &[DataType]) -> Option<DataType> {
    let rank = |t: &DataType| match t {
        DataType::Int(None) | DataType::Integer(None) | DataType::Int4(None) => Some(0),
        DataType::BigInt(None) | DataType::Int8(None) => Some(1),
        DataType::Numeric(_) | DataType::Decimal(_) => Some(2),
        _ => None,
    };
    let first = types.first()?;
    if types.iter().all(|t| t == first) {
        return Some(first.clone());
    }
    types
        .iter()
        .map(|t| rank(t).map(|r| (r, t)))
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .max_by_key(|(r, _)| *r)
        .map(|(_, t)| t.clone())
}

/// Casts a set operation's untyped string constants to their column's
/// type, where the other branches make it known.
pub(super) fn unknown_constants(q: &mut Query) -> bool {
    if !matches!(q.body.as_ref(), SetExpr::SetOperation { .. }) {
        return false;
    }
    let mut lists = vec![];
    if !leaves(q.body.as_mut(), &mut lists) {
        return false;
    }
    let width = lists.first().map_or(0, |l| l.len());
    if lists.iter().any(|l| l.len() != width) {
        return false;
    }
    let mut changed = false;
    for j in 0..width {
        let mut typed = vec![];
        let mut unknown = false;
        let mut opaque = false;
        for l in lists.iter_mut() {
            match item_expr(&mut l[j]).map(|e| cell(e)) {
                Some(Cell::Unknown) => unknown = true,
                Some(Cell::Null) => {}
                Some(Cell::Typed(t)) => typed.push(t),
                Some(Cell::Opaque) | None => opaque = true,
            }
        }
        if !unknown || opaque {
            continue;
        }
        let Some(to) = resolve(&typed) else { continue };
        // A numeric column prints each value with its own scale in
        // PostgreSQL; a cast here would give the string its column's.
        if matches!(to, DataType::Numeric(_) | DataType::Decimal(_)) {
            continue;
        }
        for l in lists.iter_mut() {
            if let Some(e) = item_expr(&mut l[j]) {
                if matches!(cell(e), Cell::Unknown) {
                    *e = Expr::Cast {
                        kind: CastKind::Cast,
                        expr: Box::new(e.clone()),
                        data_type: to.clone(),
                        array: false,
                        format: None,
                    };
                    changed = true;
                }
            }
        }
    }
    changed
}
