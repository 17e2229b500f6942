//! Expressions of numeric quotients: which carry a per-row scale, the
//! expression of that scale, and decimal division made PostgreSQL's.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{cast, lit, BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};

use crate::numeric::{div_scale_udf, div_udf};
use crate::numeric_sqrt::{root_scale_udf, root_value_udf};

/// Output columns of a node whose display scale varies per row, and the
/// expression (over that node's output) that gives it.
pub(super) type Companions = HashMap<Column, Expr>;

pub(super) fn refuse(what: &str) -> DataFusionError {
    DataFusionError::External(Box::new(common::Error::Unsupported {
        feature: format!(
            "{what} of a numeric quotient (its per-row scale, as PostgreSQL prints it)"
        ),
    }))
}

/// A quotient or a numeric square root: a value whose scale varies per
/// row.
pub(super) fn is_div_call(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f)
        if matches!(f.func.name(), "pg_numeric_div" | "pg_numeric_root"))
}

/// Whether `e` holds a quotient, a column with a companion, or a CASE or
/// COALESCE whose values keep different scales ([`mixed`]).
pub(super) fn dynamic(e: &Expr, schema: &DFSchema, comps: &Companions) -> bool {
    let mut found = false;
    let _ = e.apply(|x| {
        if is_div_call(x)
            || matches!(x, Expr::Column(c) if comps.contains_key(c))
            || mixed(x, schema)
        {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}

/// The values a CASE or COALESCE may take.
fn branches(e: &Expr) -> Option<Vec<&Expr>> {
    match e {
        Expr::Case(c) => Some(
            c.when_then_expr
                .iter()
                .map(|(_, t)| t.as_ref())
                .chain(c.else_expr.as_deref())
                .collect(),
        ),
        Expr::ScalarFunction(f) if f.func.name() == "coalesce" => Some(f.args.iter().collect()),
        _ => None,
    }
}

/// A number literal's own scale, under the casts type coercion put on it
/// (a client's cast of a number literal is spelled from text, so it is not
/// one of those): `0` in `coalesce(price, 0)` is printed `0`, as
/// PostgreSQL's CASE and COALESCE of numerics keep each value's scale.
/// `Some(None)`: a NULL, which has none.
pub(super) fn literal_scale(e: &Expr) -> Option<Option<i8>> {
    let Expr::Literal(v, _) = unfolded(e) else {
        return None;
    };
    if v.is_null() {
        return Some(None);
    }
    decimal_scale(&v.data_type()).map(Some)
}

/// The scale a value of a CASE or COALESCE keeps whatever the row: a
/// number literal's own, else its type's (`None`: a NULL or not a number).
fn own_scale(v: &Expr, schema: &DFSchema) -> Option<i8> {
    match literal_scale(v) {
        Some(s) => s,
        None => v.get_type(schema).ok().and_then(|t| decimal_scale(&t)),
    }
}

/// Whether `e` is a decimal CASE or COALESCE two of whose values keep
/// different scales (a branch that holds a quotient makes `e` dynamic
/// anyway).
fn mixed(e: &Expr, schema: &DFSchema) -> bool {
    let Some(values) = branches(e) else {
        return false;
    };
    if !matches!(e.get_type(schema), Ok(DataType::Decimal128(..))) {
        return false;
    }
    let mut scales = values.iter().filter_map(|v| own_scale(v, schema));
    let first = scales.next();
    scales.any(|s| Some(s) != first)
}

/// The scale of one value of a CASE or COALESCE, per row (a literal is not
/// dynamic, so [`scale_of`] leaves it to [`own_scale`]).
fn value_scale(e: &Expr, schema: &DFSchema, comps: &Companions) -> Result<Expr> {
    let s = match scale_of(e, schema, comps)? {
        Some(s) => s,
        None => lit(own_scale(e, schema).unwrap_or(0) as i32),
    };
    Ok(cast(s, DataType::Int32))
}

/// The per-row scale of a CASE or COALESCE (`e`, one of [`branches`]'s
/// shapes): the same choice made over its values' scales.
fn choice_scale(e: &Expr, schema: &DFSchema, comps: &Companions) -> Result<Expr> {
    let s = |x: &Expr| value_scale(x, schema, comps).map(Box::new);
    let (expr, when_then_expr, else_expr) = match e {
        Expr::Case(c) => (
            c.expr.clone(),
            c.when_then_expr
                .iter()
                .map(|(w, t)| Ok((w.clone(), s(t)?)))
                .collect::<Result<_>>()?,
            c.else_expr.as_deref().map(s).transpose()?,
        ),
        Expr::ScalarFunction(f) => (
            None,
            f.args
                .iter()
                .map(|a| Ok((Box::new(a.clone().is_not_null()), s(a)?)))
                .collect::<Result<_>>()?,
            None,
        ),
        _ => {
            return Err(DataFusionError::Internal(
                "CASE or coalesce expected".into(),
            ))
        }
    };
    Ok(Expr::Case(datafusion::logical_expr::Case {
        expr,
        when_then_expr,
        else_expr,
    }))
}

/// A literal under the casts type coercion put on it.
pub(super) fn unfolded(e: &Expr) -> &Expr {
    match e {
        Expr::Cast(c) => unfolded(&c.expr),
        Expr::TryCast(c) => unfolded(&c.expr),
        e => e,
    }
}

pub(super) fn output_columns(schema: &DFSchema) -> Vec<Expr> {
    schema
        .iter()
        .map(|(q, f)| Expr::Column(Column::new(q.cloned(), f.name())))
        .collect()
}

/// A decimal's scale, 0 for an integer.
pub(crate) fn decimal_scale(t: &DataType) -> Option<i8> {
    match t {
        DataType::Decimal128(_, s) => Some(*s),
        t if t.is_integer() => Some(0),
        _ => None,
    }
}

/// The scale `e` is printed with, per row: `None` where it is the type's.
pub(super) fn scale_of(e: &Expr, schema: &DFSchema, comps: &Companions) -> Result<Option<Expr>> {
    if !dynamic(e, schema, comps) {
        return Ok(None);
    }
    let fixed = |x: &Expr| -> Result<Expr> {
        Ok(match scale_of(x, schema, comps)? {
            Some(s) => s,
            None => lit(decimal_scale(&x.get_type(schema)?).unwrap_or(0) as i32),
        })
    };
    match e {
        Expr::Alias(a) => scale_of(&a.expr, schema, comps),
        Expr::Column(c) => Ok(comps.get(c).cloned()),
        // The type's name does not depend on the scale.
        Expr::ScalarFunction(f) if f.func.name() == "pg_typeof" => Ok(None),
        Expr::ScalarFunction(f) if f.func.name() == "pg_numeric_root" => Ok(Some(
            Expr::ScalarFunction(ScalarFunction::new_udf(root_scale_udf(), f.args.clone())),
        )),
        Expr::ScalarFunction(f) if is_div_call(e) => Ok(Some(Expr::ScalarFunction(
            ScalarFunction::new_udf(div_scale_udf(), f.args.clone()),
        ))),
        Expr::ScalarFunction(f) if f.func.name() == "abs" && f.args.len() == 1 => {
            scale_of(&f.args[0], schema, comps)
        }
        Expr::ScalarFunction(f)
            if matches!(f.func.name(), "round" | "trunc")
                && f.args
                    .get(1)
                    .is_none_or(|d| matches!(unfolded(d), Expr::Literal(..))) =>
        {
            Ok(None)
        }
        Expr::Negative(x) => scale_of(x, schema, comps),
        Expr::BinaryExpr(b) => {
            if decimal_scale(&e.get_type(schema)?).is_none()
                || matches!(e.get_type(schema)?, DataType::Boolean)
            {
                return Ok(None);
            }
            let (l, r) = (fixed(&b.left)?, fixed(&b.right)?);
            match b.op {
                Operator::Plus | Operator::Minus | Operator::Modulo => {
                    Ok(Some(datafusion::functions::expr_fn::greatest(vec![l, r])))
                }
                Operator::Multiply => Ok(Some(Expr::BinaryExpr(BinaryExpr::new(
                    Box::new(l),
                    Operator::Plus,
                    Box::new(r),
                )))),
                _ => Err(refuse(&format!("the operator {}", b.op))),
            }
        }
        Expr::Cast(c) if !matches!(c.field.data_type(), DataType::Utf8 | DataType::Utf8View) => {
            Ok(None)
        }
        Expr::TryCast(c) if !matches!(c.field.data_type(), DataType::Utf8 | DataType::Utf8View) => {
            Ok(None)
        }
        Expr::Cast(_) | Expr::TryCast(_) => Err(refuse("a text cast")),
        Expr::Case(_) => choice_scale(e, schema, comps).map(Some),
        Expr::ScalarFunction(f) if f.func.name() == "coalesce" => {
            choice_scale(e, schema, comps).map(Some)
        }
        Expr::ScalarFunction(f) => Err(refuse(&format!("the function {}", f.func.name()))),
        _ => Err(refuse("an expression")),
    }
}

/// `e` with every decimal division made PostgreSQL's.
pub(super) fn divisions(
    e: Expr,
    schema: &DFSchema,
    comps: &Companions,
) -> Result<Transformed<Expr>> {
    e.transform_up(|x| {
        if let Expr::ScalarFunction(f) = &x {
            if let (true, [arg]) = (f.func.name() == "sqrt", f.args.as_slice()) {
                if matches!(arg.get_type(schema)?, DataType::Decimal128(..)) {
                    let s = match scale_of(arg, schema, comps)? {
                        Some(s) => s,
                        None => lit(decimal_scale(&arg.get_type(schema)?).unwrap_or(0) as i32),
                    };
                    return Ok(Transformed::yes(Expr::ScalarFunction(
                        ScalarFunction::new_udf(root_value_udf(), vec![arg.clone(), s]),
                    )));
                }
            }
        }
        let Expr::BinaryExpr(b) = &x else {
            return Ok(Transformed::no(x));
        };
        // A comparison with a quotient (now stored at 20 places) compares
        // at one decimal type, as type coercion made it before.
        if shard_router::sql::is_comparison(&b.op) {
            let (lt, rt) = (b.left.get_type(schema)?, b.right.get_type(schema)?);
            if let (DataType::Decimal128(_, ls), DataType::Decimal128(_, rs)) = (&lt, &rt) {
                if lt != rt {
                    let to = DataType::Decimal128(38, (*ls).max(*rs));
                    return Ok(Transformed::yes(Expr::BinaryExpr(
                        datafusion::logical_expr::BinaryExpr::new(
                            Box::new(cast((*b.left).clone(), to.clone())),
                            b.op,
                            Box::new(cast((*b.right).clone(), to)),
                        ),
                    )));
                }
            }
            return Ok(Transformed::no(x));
        }
        if b.op != Operator::Divide || !matches!(x.get_type(schema)?, DataType::Decimal128(..)) {
            return Ok(Transformed::no(x));
        }
        let operand = |o: &Expr| -> Result<(Expr, Expr)> {
            let t = o.get_type(schema)?;
            let s = match scale_of(o, schema, comps)? {
                Some(s) => s,
                None => lit(decimal_scale(&t).unwrap_or(0) as i32),
            };
            let v = match t {
                DataType::Decimal128(..) => o.clone(),
                _ => cast(o.clone(), DataType::Decimal128(38, 0)),
            };
            Ok((v, s))
        };
        let (a, sa) = operand(&b.left)?;
        let (d, sd) = operand(&b.right)?;
        Ok(Transformed::yes(Expr::ScalarFunction(
            ScalarFunction::new_udf(div_udf(), vec![a, d, sa, sd]),
        )))
    })
}

/// Rewrites every expression of `node` with [`divisions`], names kept.
pub(super) fn node_divisions(node: LogicalPlan, comps: &Companions) -> Result<LogicalPlan> {
    let inputs = node.inputs();
    let schema = match inputs.as_slice() {
        [input] => input.schema().clone(),
        _ => Arc::new(node.schema().as_ref().clone()),
    };
    let names = NamePreserver::new(&node);
    let t = node.map_expressions(|e| {
        let saved = names.save(&e);
        Ok(divisions(e, &schema, comps)?.update_data(|e| saved.restore(e)))
    })?;
    if t.transformed {
        t.data.recompute_schema()
    } else {
        Ok(t.data)
    }
}
