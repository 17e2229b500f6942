//! PostgreSQL semantics on the DataFusion path, where DataFusion's differ:
//! an analyzer rule that runs after DataFusion's type coercion and before
//! any optimization (so constant folding evaluates the PostgreSQL
//! version too) and rewrites what DataFusion would compute differently:
//!
//! * integer `+ - *` overflow is an error (22003), not a wrapped value:
//!   Arrow's checked kernels instead of DataFusion's wrapping ones; float
//!   `+ - * /` overflow, underflow and division by zero are errors too,
//!   and `real` with an exact operand is double precision
//!   (`crate::pgfloat`);
//! * a cast of a numeric to an integer rounds half away from zero and of a
//!   float to an integer rounds half to even, as PostgreSQL's casts do
//!   (DataFusion truncates);
//! * `round` of a float rounds half to even (`round(2.5::float8)` is 2);
//! * `floor` and `ceil` of a numeric have scale 0 (`2548`, not `2548.00`);
//! * `to_char` takes PostgreSQL's patterns (`YYYY-MM-DD HH24:MI:SS`);
//!   patterns outside the supported set are refused (0A000) instead of
//!   being printed back as DataFusion does;
//! * a text cast to bytea reads PostgreSQL's bytea input (`\x0102`).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Float64Array};
use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::DFSchema;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    create_udf, BinaryExpr, Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator,
    ScalarUDF, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

/// The rule; see the module documentation.
#[derive(Debug, Default)]
pub struct PgSemantics;

fn is_int(t: &DataType) -> bool {
    matches!(t, DataType::Int16 | DataType::Int32 | DataType::Int64)
}

/// A checked integer operation on two same-typed integer columns.
fn checked_udf(op: Operator, t: &DataType) -> ScalarUDF {
    let name = format!(
        "pg_checked_{}_{}",
        match op {
            Operator::Plus => "add",
            Operator::Minus => "sub",
            _ => "mul",
        },
        t
    );
    let f = Arc::new(move |args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let (a, b): (&ArrayRef, &ArrayRef) = (&arrays[0], &arrays[1]);
        let r = match op {
            Operator::Plus => numeric::add(a, b),
            Operator::Minus => numeric::sub(a, b),
            _ => numeric::mul(a, b),
        };
        let r = r.map_err(|e| match e {
            datafusion::arrow::error::ArrowError::ArithmeticOverflow(_) => {
                DataFusionError::External(Box::new(common::Error::NumericOutOfRange {
                    message: "integer out of range".into(),
                }))
            }
            other => DataFusionError::ArrowError(Box::new(other), None),
        })?;
        Ok(ColumnarValue::Array(r))
    });
    create_udf(
        &name,
        vec![t.clone(), t.clone()],
        t.clone(),
        Volatility::Immutable,
        f,
    )
}

/// Round half to even, as PostgreSQL's float-to-integer casts (`rint`).
fn rint_udf() -> ScalarUDF {
    let f = Arc::new(|args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let a = arrays[0]
            .as_any()
            .downcast_ref::<Float64Array>()
            .ok_or_else(|| DataFusionError::Internal("pg_rint of a non-float".into()))?;
        let out: Float64Array = a.iter().map(|v| v.map(f64::round_ties_even)).collect();
        Ok(ColumnarValue::Array(Arc::new(out) as ArrayRef))
    });
    create_udf(
        "pg_rint",
        vec![DataType::Float64],
        DataType::Float64,
        Volatility::Immutable,
        f,
    )
}

/// A PostgreSQL `to_char` pattern as a chrono format, for the patterns
/// Tessera supports; `None` for any other.
pub fn to_char_format(pg: &str) -> Option<String> {
    const TOKENS: &[(&str, &str)] = &[
        ("YYYY", "%Y"),
        ("HH24", "%H"),
        ("HH12", "%I"),
        ("YY", "%y"),
        ("MM", "%m"),
        ("DD", "%d"),
        ("HH", "%I"),
        ("MI", "%M"),
        ("SS", "%S"),
        ("MS", "%3f"),
        ("US", "%6f"),
        ("AM", "%p"),
        ("PM", "%p"),
    ];
    let mut out = String::new();
    let mut rest = pg;
    'outer: while !rest.is_empty() {
        for (t, f) in TOKENS {
            if let Some(r) = rest.strip_prefix(t) {
                out.push_str(f);
                rest = r;
                continue 'outer;
            }
        }
        let c = rest.chars().next()?;
        if c.is_alphabetic() || c == '"' || c == '\\' {
            return None;
        }
        if c == '%' {
            out.push_str("%%");
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// PostgreSQL's bytea input: `\x` and hex digits, or the escape format
/// (`\\` and `\nnn` octal).
pub fn bytea_in(s: &str) -> std::result::Result<Vec<u8>, String> {
    let bad = || format!("invalid input syntax for type bytea: \"{s}\"");
    if let Some(hex) = s.strip_prefix("\\x") {
        let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        if !digits.len().is_multiple_of(2) {
            return Err(bad());
        }
        return digits
            .chunks(2)
            .map(|p| {
                let h = (p[0] as char).to_digit(16).ok_or_else(bad)?;
                let l = (p[1] as char).to_digit(16).ok_or_else(bad)?;
                Ok((h * 16 + l) as u8)
            })
            .collect();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            let oct = b.get(i + 1..i + 4).ok_or_else(bad)?;
            if !oct.iter().all(|d| (b'0'..=b'7').contains(d)) || oct[0] > b'3' {
                return Err(bad());
            }
            out.push((oct[0] - b'0') * 64 + (oct[1] - b'0') * 8 + (oct[2] - b'0'));
            i += 4;
        }
    }
    Ok(out)
}

fn bytea_udf() -> ScalarUDF {
    let f = Arc::new(|args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let a = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let a = a
            .as_any()
            .downcast_ref::<datafusion::arrow::array::StringArray>()
            .ok_or_else(|| DataFusionError::Internal("pg_bytea_in of a non-string".into()))?;
        let mut out = datafusion::arrow::array::BinaryBuilder::new();
        for v in a.iter() {
            match v {
                None => out.append_null(),
                Some(s) => {
                    let bytes = bytea_in(s).map_err(|m| {
                        DataFusionError::External(Box::new(common::Error::Sql {
                            state: common::SqlState::INVALID_TEXT_REPRESENTATION,
                            message: m,
                        }))
                    })?;
                    out.append_value(bytes);
                }
            }
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish()) as ArrayRef))
    });
    create_udf(
        "pg_bytea_in",
        vec![DataType::Utf8],
        DataType::Binary,
        Volatility::Immutable,
        f,
    )
}

/// The UDFs, made once per process (a plan refers to them by `Arc`).
static RINT: std::sync::LazyLock<Arc<ScalarUDF>> =
    std::sync::LazyLock::new(|| Arc::new(rint_udf()));
static BYTEA: std::sync::LazyLock<Arc<ScalarUDF>> =
    std::sync::LazyLock::new(|| Arc::new(bytea_udf()));
#[allow(clippy::type_complexity)]
static CHECKED: std::sync::LazyLock<Vec<((Operator, DataType), Arc<ScalarUDF>)>> =
    std::sync::LazyLock::new(|| {
        let mut v = vec![];
        for op in [Operator::Plus, Operator::Minus, Operator::Multiply] {
            for t in [DataType::Int16, DataType::Int32, DataType::Int64] {
                let udf = Arc::new(checked_udf(op, &t));
                v.push(((op, t), udf));
            }
        }
        v
    });

/// The checked version of integer `op` on `t` (an integer type).
fn checked(op: Operator, t: &DataType) -> Arc<ScalarUDF> {
    CHECKED
        .iter()
        .find(|((o, ty), _)| *o == op && ty == t)
        .map(|(_, u)| u.clone())
        .unwrap_or_else(|| Arc::new(checked_udf(op, t)))
}

fn is_call(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.func.name() == name)
}

/// The rewrite of one expression over `schema` (its node's inputs).
fn rewrite(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    e.transform_up(|e| {
        Ok(match rewrite_node(&e, schema)? {
            Some(new) => Transformed::yes(new),
            None => Transformed::no(e),
        })
    })
}

/// The PostgreSQL version of node `e`, where DataFusion's differs.
fn rewrite_node(e: &Expr, schema: &DFSchema) -> Result<Option<Expr>> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply) =>
        {
            Ok(checked_arithmetic(left, *op, right, schema)
                .or_else(|| crate::pgfloat::arithmetic(left, *op, right, schema)))
        }
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Divide,
            right,
        }) => Ok(crate::pgfloat::arithmetic(
            left,
            Operator::Divide,
            right,
            schema,
        )),
        Expr::Cast(Cast { expr, field }) if is_int(field.data_type()) => {
            Ok(rounded_int_cast(expr, field, schema))
        }
        Expr::ScalarFunction(f) if f.func.name() == "to_char" && f.args.len() == 2 => {
            to_char_with_pg_pattern(f).map(Some)
        }
        Expr::Cast(Cast { expr, field })
            if *field.data_type() == DataType::Binary
                && matches!(
                    expr.get_type(schema),
                    Ok(DataType::Utf8 | DataType::Utf8View)
                ) =>
        {
            Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(
                BYTEA.clone(),
                vec![(**expr).clone()],
            ))))
        }
        Expr::ScalarFunction(f) if f.func.name() == "signum" && f.args.len() == 1 => {
            Ok(numeric_signum(e, &f.args[0], schema))
        }
        Expr::ScalarFunction(f) if f.func.name() == "round" && f.args.len() == 2 => {
            round_places(f, schema)
        }
        Expr::ScalarFunction(f) if f.func.name() == "round" && f.args.len() == 1 => {
            Ok(float_round(&f.args[0], schema))
        }
        Expr::ScalarFunction(f) if matches!(f.func.name(), "gcd" | "lcm") && f.args.len() == 2 => {
            Ok(narrow_integer_result(e, &f.args, schema))
        }
        Expr::ScalarFunction(f) if matches!(f.func.name(), "concat" | "concat_ws") => {
            concat_pg_text(f, schema)
        }
        Expr::ScalarFunction(f)
            if matches!(f.func.name(), "floor" | "ceil") && f.args.len() == 1 =>
        {
            Ok(integral_numeric(e, &f.args[0], schema))
        }
        _ => Ok(crate::pgbpchar::rewrite(e, schema)),
    }
}

/// `gcd` / `lcm` of `integer` or `smallint` arguments is `integer`
/// (DataFusion computes and answers bigint): the answer is cast back, so
/// `gcd(-2147483648, 0)` is 22003 (integer out of range), as in
/// PostgreSQL.
fn narrow_integer_result(e: &Expr, args: &[Expr], schema: &DFSchema) -> Option<Expr> {
    let integer = args.iter().all(|a| {
        let inner = match a {
            Expr::Cast(c) => c.expr.as_ref(),
            other => other,
        };
        // A constant that fits is PostgreSQL's integer.
        if let Expr::Literal(datafusion::common::ScalarValue::Int64(Some(v)), _) = inner {
            return i32::try_from(*v).is_ok();
        }
        matches!(
            inner.get_type(schema),
            Ok(DataType::Int16 | DataType::Int32)
        )
    });
    // PostgreSQL has gcd(int4, int4) and gcd(int8, int8): smallints
    // promote to integer.
    integer.then(|| Expr::Cast(Cast::new(Box::new(e.clone()), DataType::Int32)))
}

/// `round` of a float rounds half to even, as PostgreSQL's `round(float8)`
/// (C's `rint`) does: `round(2.5::float8)` is 2 (DataFusion's rounds half
/// away from zero, as `round(numeric)` does). A `real` argument is read as
/// `double precision`, PostgreSQL's only float `round`.
fn float_round(arg: &Expr, schema: &DFSchema) -> Option<Expr> {
    if !matches!(
        arg.get_type(schema).ok()?,
        DataType::Float64 | DataType::Float32
    ) {
        return None;
    }
    Some(Expr::ScalarFunction(ScalarFunction::new_udf(
        RINT.clone(),
        vec![Expr::Cast(Cast::new(
            Box::new(arg.clone()),
            DataType::Float64,
        ))],
    )))
}

/// Integer `left op right` (`+ - *`, both of one integer type) as the
/// checked operation: overflow is 22003, not a wrapped value.
fn checked_arithmetic(left: &Expr, op: Operator, right: &Expr, schema: &DFSchema) -> Option<Expr> {
    let (Ok(lt), Ok(rt)) = (left.get_type(schema), right.get_type(schema)) else {
        return None;
    };
    if !(is_int(&lt) && lt == rt) {
        return None;
    }
    let udf = checked(op, &lt);
    let args = vec![left.clone(), right.clone()];
    Some(Expr::ScalarFunction(ScalarFunction::new_udf(udf, args)))
}

/// A cast of a numeric or float to an integer type, rounded first as
/// PostgreSQL's casts round (DataFusion truncates).
fn rounded_int_cast(
    expr: &Expr,
    field: &datafusion::arrow::datatypes::FieldRef,
    schema: &DFSchema,
) -> Option<Expr> {
    if is_call(expr, "pg_rint") || is_call(expr, "round") {
        return None;
    }
    let from = expr.get_type(schema).ok()?;
    let rounded = match from {
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            datafusion::functions::math::expr_fn::round(vec![expr.clone()])
        }
        DataType::Float64 | DataType::Float32 => Expr::ScalarFunction(ScalarFunction::new_udf(
            RINT.clone(),
            vec![Expr::Cast(Cast::new(
                Box::new(expr.clone()),
                DataType::Float64,
            ))],
        )),
        _ => return None,
    };
    Some(Expr::Cast(Cast::new_from_field(
        Box::new(rounded),
        field.clone(),
    )))
}

/// `to_char(x, pattern)` with PostgreSQL's pattern as the chrono format;
/// a pattern that is not a constant, or not supported, is 0A000.
fn to_char_with_pg_pattern(f: &ScalarFunction) -> Result<Expr> {
    use datafusion::common::ScalarValue;
    let pattern = match &f.args[1] {
        Expr::Literal(ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)), _) => p.clone(),
        _ => {
            return Err(DataFusionError::External(Box::new(
                common::Error::unsupported("to_char with a pattern that is not a constant"),
            )))
        }
    };
    let Some(fmt) = to_char_format(&pattern) else {
        return Err(DataFusionError::External(Box::new(
            common::Error::unsupported(format!("the to_char pattern \"{pattern}\"")),
        )));
    };
    let mut args = f.args.clone();
    args[1] = Expr::Literal(ScalarValue::Utf8(Some(fmt)), None);
    Ok(Expr::ScalarFunction(ScalarFunction::new_udf(
        f.func.clone(),
        args,
    )))
}

/// sign(numeric) is numeric in PostgreSQL; DataFusion's signum took a
/// double: `e` (the call) cast back to numeric when `arg` was one.
fn numeric_signum(e: &Expr, arg: &Expr, schema: &DFSchema) -> Option<Expr> {
    match arg {
        Expr::Cast(c) if matches!(c.expr.get_type(schema), Ok(DataType::Decimal128(..))) => Some(
            Expr::Cast(Cast::new(Box::new(e.clone()), DataType::Decimal128(38, 0))),
        ),
        _ => None,
    }
}

/// `round(x, n)`: PostgreSQL has no round(double precision, integer), so
/// a float argument is an error, except a float cast to numeric, which is
/// cast as PostgreSQL's cast (15 significant digits) for `round` to fix.
fn round_places(f: &ScalarFunction, schema: &DFSchema) -> Result<Option<Expr>> {
    let arg = &f.args[0];
    if let Expr::Cast(c) = arg {
        if matches!(
            c.expr.get_type(schema),
            Ok(DataType::Float64 | DataType::Float32)
        ) && matches!(c.field.data_type(), DataType::Decimal128(38, 10))
        {
            let mut args = f.args.clone();
            args[0] = crate::pgcasts::float_to_numeric((*c.expr).clone());
            return Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(
                f.func.clone(),
                args,
            ))));
        }
    }
    if let Some(s) = literal_i64(&f.args[1]) {
        let inner = match arg {
            Expr::Cast(c) if c.expr.get_type(schema).is_ok_and(|t| t.is_integer()) => &c.expr,
            a => a,
        };
        let t = inner.get_type(schema)?;
        if let Some(widened) = crate::numeric::round_scaled_arg(inner, s, &t)? {
            let mut args = f.args.clone();
            args[0] = widened;
            return Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(
                f.func.clone(),
                args,
            ))));
        }
    }
    let from_int =
        matches!(arg, Expr::Cast(c) if c.expr.get_type(schema).is_ok_and(|t| t.is_integer()));
    match arg.get_type(schema) {
        Ok(DataType::Float64 | DataType::Float32) if from_int => Err(DataFusionError::External(
            Box::new(common::Error::unsupported("round(integer, integer)")),
        )),
        Ok(DataType::Float64 | DataType::Float32) => Err(DataFusionError::External(Box::new(
            common::Error::UndefinedFunction {
                message: "function round(double precision, integer) does not exist".into(),
            },
        ))),
        _ => Ok(None),
    }
}

/// An integer constant (perhaps cast).
fn literal_i64(e: &Expr) -> Option<i64> {
    match e {
        Expr::Cast(c) => literal_i64(&c.expr),
        Expr::Literal(v, _) => match v {
            datafusion::common::ScalarValue::Int64(Some(x)) => Some(*x),
            datafusion::common::ScalarValue::Int32(Some(x)) => Some(i64::from(*x)),
            datafusion::common::ScalarValue::Int16(Some(x)) => Some(i64::from(*x)),
            datafusion::common::ScalarValue::Int8(Some(x)) => Some(i64::from(*x)),
            _ => None,
        },
        _ => None,
    }
}

/// concat prints a boolean as PostgreSQL's output function does (`t`),
/// where a cast to text would say `true`, and a char(n) column with its
/// blanks; `None` when no argument is either.
fn concat_pg_text(f: &ScalarFunction, schema: &DFSchema) -> Result<Option<Expr>> {
    let mut changed = false;
    let args = f
        .args
        .iter()
        .map(|a| {
            let inner = match a {
                Expr::Cast(c) => &c.expr,
                other => other,
            };
            // A char(n) column prints with its blanks.
            if let Some(w) = crate::pgresult::bpchar_width(inner, schema) {
                changed = true;
                return Ok(datafusion::functions::unicode::expr_fn::rpad(vec![
                    inner.clone(),
                    datafusion::prelude::lit(w),
                ]));
            }
            if inner.get_type(schema).ok() != Some(DataType::Boolean) {
                return Ok(a.clone());
            }
            changed = true;
            let b = inner.clone();
            datafusion::logical_expr::when(b.clone(), datafusion::prelude::lit("t"))
                .when(datafusion::prelude::not(b), datafusion::prelude::lit("f"))
                .end()
        })
        .collect::<Result<Vec<_>>>()?;
    if !changed {
        return Ok(None);
    }
    Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(
        f.func.clone(),
        args,
    ))))
}

/// `floor` and `ceil` (the call `e`) of a numeric `arg` with a scale have
/// scale 0 (`2548`, not `2548.00`).
fn integral_numeric(e: &Expr, arg: &Expr, schema: &DFSchema) -> Option<Expr> {
    match arg.get_type(schema) {
        Ok(DataType::Decimal128(p, s)) if s > 0 => Some(Expr::Cast(Cast::new(
            Box::new(e.clone()),
            DataType::Decimal128(p, 0),
        ))),
        _ => None,
    }
}

/// The root's result columns typed as PostgreSQL types them
/// ([`crate::pgcasts::rewrite_output`]): the projection under the root's
/// sorts and limits.
fn root_outputs(plan: LogicalPlan) -> Result<LogicalPlan> {
    match plan {
        LogicalPlan::Projection(p) => {
            let schema = p.input.schema().clone();
            for e in &p.expr {
                crate::pgresult::check_mixed_scales(e, &schema)?;
            }
            let node = LogicalPlan::Projection(p);
            let names = NamePreserver::new(&node);
            let t = node.map_expressions(|e| {
                let saved = names.save(&e);
                Ok(crate::pgcasts::rewrite_output(e, &schema)?.update_data(|e| saved.restore(e)))
            })?;
            if t.transformed {
                t.data.recompute_schema()
            } else {
                Ok(t.data)
            }
        }
        LogicalPlan::Sort(_) | LogicalPlan::Limit(_) => {
            let t = plan.map_children(|c| root_outputs(c).map(Transformed::yes))?;
            t.data.recompute_schema()
        }
        other => Ok(other),
    }
}

impl AnalyzerRule for PgSemantics {
    fn name(&self) -> &str {
        "tessera_pg_semantics"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            if let LogicalPlan::Union(u) = &node {
                crate::pgresult::check_union_widths(u)?;
            }
            crate::pgcasts::map_one_input_node(node, |e, schema| {
                rewrite(e, schema)?
                    .transform_data(|e| crate::pgcasts::rewrite(e, schema))?
                    .transform_data(|e| crate::pginterval::compare::rewrite(e, schema))
            })
        })
        .and_then(|t| root_outputs(t.data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;

    async fn run(sql: &str) -> std::result::Result<Vec<String>, String> {
        let ctx = SessionContext::new();
        ctx.add_analyzer_rule(Arc::new(PgSemantics));
        let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
        let batches = df.collect().await.map_err(|e| e.to_string())?;
        let mut out = vec![];
        for b in &batches {
            for r in 0..b.num_rows() {
                let cells: Vec<String> = b
                    .columns()
                    .iter()
                    .map(|c| {
                        datafusion::arrow::util::display::array_value_to_string(c, r)
                            .unwrap_or_default()
                    })
                    .collect();
                out.push(cells.join(","));
            }
        }
        Ok(out)
    }

    #[tokio::test]
    async fn integer_overflow_is_an_error() {
        let e = run("SELECT CAST(9223372036854775807 AS BIGINT) + CAST(1 AS BIGINT)")
            .await
            .unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = run("SELECT x * x FROM (VALUES (CAST(200 AS SMALLINT))) t(x)")
            .await
            .unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        assert_eq!(
            run("SELECT x + 1 FROM (VALUES (CAST(41 AS BIGINT))) t(x)")
                .await
                .unwrap(),
            ["42"]
        );
    }

    #[test]
    fn to_char_patterns_translate_or_are_refused() {
        assert_eq!(
            to_char_format("YYYY-MM-DD HH24:MI:SS").unwrap(),
            "%Y-%m-%d %H:%M:%S"
        );
        assert_eq!(to_char_format("DD/MM/YY").unwrap(), "%d/%m/%y");
        assert_eq!(to_char_format("100%").unwrap(), "100%%");
        assert!(to_char_format("Month DD").is_none());
        assert!(to_char_format("FMDD").is_none());
    }

    #[test]
    fn bytea_input_reads_hex_and_escapes() {
        assert_eq!(bytea_in("\\x0102ff").unwrap(), vec![1, 2, 255]);
        assert_eq!(bytea_in("a\\\\b\\001").unwrap(), b"a\\b\x01".to_vec());
        assert!(bytea_in("\\x0").is_err());
        assert!(bytea_in("\\9").is_err());
    }

    #[tokio::test]
    async fn floor_and_ceil_of_numerics_have_scale_zero() {
        assert_eq!(
            run("SELECT floor(x), ceil(x) FROM (VALUES (CAST(2548.25 AS DECIMAL(12,2)))) t(x)")
                .await
                .unwrap(),
            ["2548,2549"]
        );
    }

    #[tokio::test]
    async fn casts_to_integers_round_as_postgres() {
        assert_eq!(
            run("SELECT CAST(CAST(12.5 AS DECIMAL(4,1)) AS INT), CAST(CAST(-12.5 AS DECIMAL(4,1)) AS INT)")
                .await
                .unwrap(),
            ["13,-13"]
        );
        assert_eq!(
            run("SELECT CAST(CAST(2.5 AS DOUBLE) AS INT), CAST(CAST(3.5 AS DOUBLE) AS INT)")
                .await
                .unwrap(),
            ["2,4"]
        );
    }
}
