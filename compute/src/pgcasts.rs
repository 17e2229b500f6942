//! Casts, literals and datetime operators typed as PostgreSQL types them,
//! where DataFusion's differ (part of the `semantics` analyzer rule):
//!
//! * a cast to `numeric` without a scale keeps the value's own scale
//!   (`1::numeric` is `1`, `'3.14'::numeric` is `3.14`, `'1e3'::numeric`
//!   is `1000`), where DataFusion gives every such value 10 places (a
//!   float still gets 10: right under `round(x, n)`, a known difference
//!   alone, where PostgreSQL keeps 15 significant digits);
//! * decimal literals with a negative scale (`1e2`) become scale 0;
//! * `trunc` of a numeric has scale 0, like `floor` and `ceil`;
//! * a timestamp cast to text is PostgreSQL's text (`2024-01-02
//!   03:04:05`, not ISO's `T`), and so is a float (`3`, not `3.0`);
//! * as result columns ([`rewrite_output`]): `date ± interval` a
//!   timestamp, and `date_trunc` of a date a timestamp with time zone.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, TimeUnit, TimestampMicrosecondType};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    create_udf, BinaryExpr, Cast, ColumnarValue, Expr, ExprSchemable, Operator, ScalarUDF,
    Volatility,
};

/// The type DataFusion gives `numeric` written without precision.
const UNCONSTRAINED: DataType = DataType::Decimal128(38, 10);

/// An analyzer rule run *before* DataFusion's type coercion: an integer
/// constant in arithmetic with an `integer` or `smallint` operand is
/// PostgreSQL's `integer` (DataFusion reads every one as `bigint` and so
/// widens the operation), so `2147483647::int + 1` and `2147483647 + 1`
/// overflow (22003) and `int_col * 2` and `10 / 3 * 3` stay `integer`, as
/// in PostgreSQL. Other constants keep
/// DataFusion's type (their text is the same; a recursive CTE's columns
/// are typed by then).
#[derive(Debug, Default)]
pub struct PgIntLiterals;

impl datafusion::optimizer::AnalyzerRule for PgIntLiterals {
    fn name(&self) -> &str {
        "tessera_pg_int_literals"
    }

    fn analyze(
        &self,
        plan: datafusion::logical_expr::LogicalPlan,
        _config: &datafusion::common::config::ConfigOptions,
    ) -> Result<datafusion::logical_expr::LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            map_one_input_node(node, |e, schema| {
                let small = |e: &Expr| {
                    matches!(e, Expr::Literal(ScalarValue::Int64(Some(v)), _) if i32::try_from(*v).is_ok())
                };
                // A small constant with an integer operand, or two small
                // constants (`2147483647 + 1`, `10 / 3`): both integer.
                let narrow = |lit: &Expr, other: &Expr| {
                    small(lit)
                        && (small(other)
                            || matches!(
                                other.get_type(schema),
                                Ok(DataType::Int32 | DataType::Int16)
                            ))
                };
                let to_i32 = |e: Expr| match e {
                    Expr::Literal(ScalarValue::Int64(Some(v)), m) => {
                        Expr::Literal(ScalarValue::Int32(Some(v as i32)), m)
                    }
                    other => other,
                };
                e.transform_up(|x| match x {
                    Expr::BinaryExpr(BinaryExpr { left, op, right })
                        if matches!(
                            op,
                            Operator::Plus
                                | Operator::Minus
                                | Operator::Multiply
                                | Operator::Divide
                                | Operator::Modulo
                        ) && (narrow(&left, &right) || narrow(&right, &left)) =>
                    {
                        Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
                            Box::new(to_i32(*left)),
                            op,
                            Box::new(to_i32(*right)),
                        ))))
                    }
                    other => Ok(Transformed::no(other)),
                })
            })
        })
        .map(|t| t.data)
    }
}

/// Rewrites each expression of a node that evaluates expressions over one
/// input (a projection, filter or aggregate) with `f`, given the input's
/// schema, keeping the expressions' result names; a changed node's schema
/// is recomputed. Other nodes are left as they are. The analyzer rules of
/// the PostgreSQL-semantics layer run through here.
pub(crate) fn map_one_input_node(
    node: datafusion::logical_expr::LogicalPlan,
    mut f: impl FnMut(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<Transformed<datafusion::logical_expr::LogicalPlan>> {
    use datafusion::logical_expr::expr_rewriter::NamePreserver;
    use datafusion::logical_expr::LogicalPlan;
    if !matches!(
        node,
        LogicalPlan::Projection(_) | LogicalPlan::Filter(_) | LogicalPlan::Aggregate(_)
    ) {
        return Ok(Transformed::no(node));
    }
    let inputs = node.inputs();
    let [input] = inputs.as_slice() else {
        return Ok(Transformed::no(node));
    };
    let schema = input.schema().clone();
    let names = NamePreserver::new(&node);
    let t = node.map_expressions(|e| {
        let saved = names.save(&e);
        Ok(f(e, &schema)?.update_data(|e| saved.restore(e)))
    })?;
    if t.transformed {
        t.map_data(|p| p.recompute_schema())
    } else {
        Ok(t)
    }
}

fn unsupported(what: &str) -> DataFusionError {
    DataFusionError::External(Box::new(common::Error::unsupported(what)))
}

/// A numeric literal's text as a decimal with its own scale.
fn numeric_literal(text: &str) -> Result<ScalarValue> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("nan") || t.to_ascii_lowercase().contains("inf") {
        return Err(unsupported("numeric NaN and Infinity"));
    }
    let d = if t.contains(['e', 'E']) {
        rust_decimal::Decimal::from_scientific(t)
    } else {
        t.parse::<rust_decimal::Decimal>()
    }
    .map_err(|_| {
        DataFusionError::External(Box::new(common::Error::InvalidText {
            ty: "numeric".into(),
            value: text.into(),
        }))
    })?;
    Ok(ScalarValue::Decimal128(
        Some(d.mantissa()),
        38,
        d.scale() as i8,
    ))
}

/// PostgreSQL's float-to-numeric cast: the float's 15 significant digits
/// (`702.005`, not the binary value's `702.00499999999999545`), held at
/// 15 places.
pub fn float_to_numeric(e: Expr) -> Expr {
    static F: std::sync::LazyLock<Arc<ScalarUDF>> = std::sync::LazyLock::new(|| {
        Arc::new(create_udf(
            "pg_float8_numeric",
            vec![DataType::Float64],
            DataType::Decimal128(38, 15),
            Volatility::Immutable,
            Arc::new(|args: &[ColumnarValue]| -> Result<ColumnarValue> {
                let a = ColumnarValue::values_to_arrays(args)?;
                let f = a[0].as_primitive::<datafusion::arrow::datatypes::Float64Type>();
                let mut b = datafusion::arrow::array::Decimal128Builder::with_capacity(f.len());
                for v in f.iter() {
                    let Some(v) = v else {
                        b.append_null();
                        continue;
                    };
                    if !v.is_finite() {
                        return Err(unsupported("numeric NaN and Infinity"));
                    }
                    let d = rust_decimal::Decimal::from_scientific(&format!("{v:.14e}"))
                        .ok()
                        .and_then(|mut d| {
                            d.rescale(15);
                            (d.scale() == 15).then(|| d.mantissa())
                        })
                        .filter(|m| m.unsigned_abs() < 10u128.pow(38))
                        .ok_or_else(|| unsupported("a float this large cast to numeric"))?;
                    b.append_value(d);
                }
                Ok(ColumnarValue::Array(Arc::new(
                    b.finish().with_precision_and_scale(38, 15)?,
                )))
            }),
        ))
    });
    Expr::ScalarFunction(ScalarFunction::new_udf(
        F.clone(),
        vec![Expr::Cast(Cast::new(Box::new(e), DataType::Float64))],
    ))
}

/// PostgreSQL's range check of float input: `'1e400'::float8` is an
/// error (22003), where Arrow reads Infinity, and so is a nonzero number
/// too small to be anything but zero (`'10e-400'::float8`; a denormal is
/// accepted, as PostgreSQL's `float8in` does).
fn check_float_text(t: &str, to: &DataType) -> Result<()> {
    let v = t.trim();
    let Ok(f) = v.parse::<f64>() else {
        return Ok(());
    };
    if common::value::float_text_out_of_range(v, f, *to == DataType::Float32) {
        let ty = if *to == DataType::Float32 {
            "real"
        } else {
            "double precision"
        };
        return Err(DataFusionError::External(Box::new(
            common::Error::NumericOutOfRange {
                message: format!("\"{v}\" is out of range for type {ty}"),
            },
        )));
    }
    Ok(())
}

/// `pg_timestamp_text` of a timestamp in microseconds (the argument cast
/// to that first), or, `tz`, `pg_timestamptz_text(ts, zone)` of a
/// timestamptz in the zone named by its second argument (the session's
/// zone when the statement was planned).
fn timestamp_text_udf(tz: bool) -> ScalarUDF {
    let f = Arc::new(move |args: &[ColumnarValue]| -> Result<ColumnarValue> {
        let zone = match args.get(1) {
            Some(ColumnarValue::Scalar(ScalarValue::Utf8(Some(z)))) => {
                Some(common::tz::Zone::from_arrow_name(z).ok_or_else(|| {
                    datafusion::error::DataFusionError::Internal(format!("time zone {z}"))
                })?)
            }
            _ => None,
        };
        let arrays = ColumnarValue::values_to_arrays(&args[..1])?;
        let a = datafusion::arrow::compute::cast(
            &arrays[0],
            &DataType::Timestamp(TimeUnit::Microsecond, None),
        )?;
        let a = a.as_primitive::<TimestampMicrosecondType>();
        let mut out = StringBuilder::with_capacity(a.len(), a.len() * 20);
        for i in 0..a.len() {
            if a.is_null(i) {
                out.append_null();
                continue;
            }
            let dt = chrono::DateTime::from_timestamp_micros(a.value(i)).unwrap_or_default();
            out.append_value(match &zone {
                Some(z) => crate::pgtypes::timestamptz_text_in(&dt.naive_utc(), z),
                None => crate::pgtypes::timestamp_text(&dt.naive_utc(), false),
            });
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    });
    create_udf(
        if tz {
            "pg_timestamptz_text"
        } else {
            "pg_timestamp_text"
        },
        if tz {
            vec![
                DataType::Timestamp(TimeUnit::Microsecond, None),
                DataType::Utf8,
            ]
        } else {
            vec![DataType::Timestamp(TimeUnit::Microsecond, None)]
        },
        DataType::Utf8,
        Volatility::Immutable,
        f,
    )
}

static TIMESTAMP_TEXT: std::sync::LazyLock<Arc<ScalarUDF>> =
    std::sync::LazyLock::new(|| Arc::new(timestamp_text_udf(false)));
static TIMESTAMPTZ_TEXT: std::sync::LazyLock<Arc<ScalarUDF>> =
    std::sync::LazyLock::new(|| Arc::new(timestamp_text_udf(true)));

fn literal_text(e: &Expr) -> Option<&str> {
    match e {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        ) => Some(s),
        _ => None,
    }
}

fn to_timestamp(e: Expr) -> Expr {
    Expr::Cast(Cast::new(
        Box::new(e),
        DataType::Timestamp(TimeUnit::Microsecond, None),
    ))
}

pub fn rewrite(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    e.transform_up(|e| {
        if let Some(lit) = crate::pgzone::timestamp_literal(&e)? {
            return Ok(Transformed::yes(lit));
        }
        crate::pgzone::check(&e, schema)?;
        match &e {
            Expr::Literal(ScalarValue::Decimal128(Some(v), p, s), m) if *s < 0 => {
                // Beyond 38 digits it stays as DataFusion has it (a float
                // context reads it so; 3.4e38::real).
                let p = *p as i32 - *s as i32;
                let v = 10i128
                    .checked_pow((-*s) as u32)
                    .and_then(|m| v.checked_mul(m))
                    .filter(|_| p <= 38);
                let Some(v) = v else {
                    return Ok(Transformed::no(e));
                };
                let p = p as u8;
                return Ok(Transformed::yes(Expr::Literal(
                    ScalarValue::Decimal128(Some(v), p, 0),
                    m.clone(),
                )));
            }
            Expr::Cast(Cast { expr, field }) if *field.data_type() == UNCONSTRAINED => {
                if let Some(t) = literal_text(expr) {
                    return Ok(Transformed::yes(Expr::Literal(numeric_literal(t)?, None)));
                }
                let to = match expr.get_type(schema)? {
                    t if t.is_integer() => DataType::Decimal128(38, 0),
                    DataType::Decimal128(_, s) => DataType::Decimal128(38, s),
                    // PostgreSQL keeps 15 significant digits, a scale
                    // per value.
                    DataType::Float64 | DataType::Float32 => {
                        return Err(unsupported(
                            "a cast of double precision to numeric without a scale",
                        ))
                    }
                    _ => return Ok(Transformed::no(e)),
                };
                return Ok(Transformed::yes(Expr::Cast(Cast::new(expr.clone(), to))));
            }
            Expr::Cast(Cast { expr, field })
                if matches!(field.data_type(), DataType::Utf8 | DataType::Utf8View)
                    && matches!(expr.get_type(schema)?, DataType::Timestamp(..)) =>
            {
                let tz = matches!(expr.get_type(schema)?, DataType::Timestamp(_, Some(_)));
                let call = if tz {
                    // In the session's zone at planning (a statement is
                    // planned again when the zone changes).
                    let zone = common::tz::session_zone().arrow_name();
                    Expr::ScalarFunction(ScalarFunction::new_udf(
                        TIMESTAMPTZ_TEXT.clone(),
                        vec![
                            to_timestamp((**expr).clone()),
                            Expr::Literal(ScalarValue::Utf8(Some(zone)), None),
                        ],
                    ))
                } else {
                    Expr::ScalarFunction(ScalarFunction::new_udf(
                        TIMESTAMP_TEXT.clone(),
                        vec![to_timestamp((**expr).clone())],
                    ))
                };
                return Ok(Transformed::yes(if *field.data_type() == DataType::Utf8 {
                    call
                } else {
                    Expr::Cast(Cast::new(Box::new(call), field.data_type().clone()))
                }));
            }
            Expr::Cast(Cast { expr, field })
                if matches!(field.data_type(), DataType::Utf8 | DataType::Utf8View)
                    && crate::textcast::udf_for(&expr.get_type(schema)?).is_some() =>
            {
                let udf = crate::textcast::udf_for(&expr.get_type(schema)?)
                    .ok_or_else(|| DataFusionError::Internal("no text cast".into()))?;
                let call =
                    Expr::ScalarFunction(ScalarFunction::new_udf(udf, vec![(**expr).clone()]));
                return Ok(Transformed::yes(if *field.data_type() == DataType::Utf8 {
                    call
                } else {
                    Expr::Cast(Cast::new(Box::new(call), field.data_type().clone()))
                }));
            }
            Expr::Cast(Cast { expr, field })
                if matches!(field.data_type(), DataType::Float64 | DataType::Float32) =>
            {
                if let Some(t) = literal_text(expr) {
                    check_float_text(t, field.data_type())?;
                }
            }
            Expr::Cast(Cast { expr, field })
                if matches!(
                    field.data_type(),
                    DataType::Interval(_) | DataType::Date32 | DataType::Timestamp(..)
                ) =>
            {
                if let Some(x) = text_input(expr, field.data_type(), schema)? {
                    return Ok(Transformed::yes(x));
                }
            }
            Expr::ScalarFunction(f) if f.func.name() == "trunc" && f.args.len() == 1 => {
                if let DataType::Decimal128(p, s) = f.args[0].get_type(schema)? {
                    if s > 0 {
                        return Ok(Transformed::yes(Expr::Cast(Cast::new(
                            Box::new(e.clone()),
                            DataType::Decimal128(p, 0),
                        ))));
                    }
                }
            }
            _ => {}
        }
        Ok(Transformed::no(e))
    })
}

/// A cast of text to interval, date or timestamp read by PostgreSQL's
/// input instead of Arrow's: constant interval text now, as PostgreSQL
/// folds it (`crate::pginterval`; constant dates and timestamps are read
/// in `crate::pgzone`), text of rows by a call (`pg_interval_in`,
/// `crate::textdates`). `None`: the cast stays.
fn text_input(expr: &Expr, to: &DataType, schema: &DFSchema) -> Result<Option<Expr>> {
    if let (DataType::Interval(_), Some(t)) = (to, literal_text(expr)) {
        let v = crate::pginterval::interval_in(t)
            .and_then(|v| v.to_arrow())
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let v = ScalarValue::IntervalMonthDayNano(Some(v)).cast_to(to)?;
        return Ok(Some(Expr::Literal(v, None)));
    }
    let text = matches!(
        expr.get_type(schema)?,
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    );
    if !text || literal_text(expr).is_some() {
        return Ok(None);
    }
    // Text read as timestamptz depends on the session's zone: outside UTC
    // the cast stays, and `crate::pgzone::check` refuses it (the plan is
    // made and kept per session zone).
    if matches!(to, DataType::Timestamp(_, Some(_))) && !common::tz::session_zone().is_utc() {
        return Ok(None);
    }
    // Likewise the date order: the call runs where the session's is not
    // known. Outside MDY the cast stays Arrow's, which reads only ISO
    // text (the same in every order) and refuses the rest.
    if matches!(to, DataType::Timestamp(..) | DataType::Date32)
        && common::tz::session_date_order() != common::tz::DateOrder::Mdy
    {
        return Ok(None);
    }
    let call = match to {
        DataType::Interval(_) => crate::pginterval::udf::call(expr.clone()),
        to => match crate::textdates::call(expr.clone(), to) {
            Some(call) => call,
            None => return Ok(None),
        },
    };
    Ok(Some(if *to == call.get_type(schema)? {
        call
    } else {
        Expr::Cast(Cast::new(Box::new(call), to.clone()))
    }))
}

/// PostgreSQL's type of a result column that DataFusion types otherwise:
/// `date ± interval` a timestamp, `date_trunc` of a date a timestamp with time zone. Only
/// the top of an output expression of the root: below it, and in
/// filters, the operands were coerced for DataFusion's type (`l_shipdate
/// <= date '1998-12-01' - interval '90 days'` compares dates, which for
/// whole days is PostgreSQL's answer and stays pushed down).
pub fn rewrite_output(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match e {
        Expr::Alias(mut a) => Ok(match output_type(&a.expr, schema)? {
            Some(x) => {
                a.expr = Box::new(x);
                Transformed::yes(Expr::Alias(a))
            }
            None => Transformed::no(Expr::Alias(a)),
        }),
        e => Ok(match output_type(&e, schema)? {
            Some(x) => Transformed::yes(x),
            None => Transformed::no(e),
        }),
    }
}

fn output_type(e: &Expr, schema: &DFSchema) -> Result<Option<Expr>> {
    match e {
        // Type coercion made the date argument `CAST(d AS Timestamp(ns))`.
        Expr::ScalarFunction(f)
            if f.func.name() == "date_trunc"
                && f.args.len() == 2
                && match &f.args[1] {
                    Expr::Cast(c) => c.expr.get_type(schema)? == DataType::Date32,
                    a => a.get_type(schema)? == DataType::Date32,
                } =>
        {
            let mut args = f.args.clone();
            args[1] = to_timestamp(args[1].clone());
            let call = Expr::ScalarFunction(ScalarFunction::new_udf(f.func.clone(), args));
            return Ok(Some(Expr::Cast(Cast::new(
                Box::new(call),
                DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
            ))));
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus) =>
        {
            let (lt, rt) = (left.get_type(schema)?, right.get_type(schema)?);
            // Only an interval literal (a constant text was read into one
            // above) or column: DataFusion's own `date + 1`, which reaches
            // here as `date + CAST(1 AS interval)`, stays a date.
            let interval = |t: &DataType, e: &Expr| {
                let real = matches!(
                    e,
                    Expr::Column(_)
                        | Expr::Literal(
                            ScalarValue::IntervalMonthDayNano(Some(_))
                                | ScalarValue::IntervalDayTime(Some(_))
                                | ScalarValue::IntervalYearMonth(Some(_)),
                            _,
                        )
                );
                matches!(t, DataType::Interval(_)) && real
            };
            if lt == DataType::Date32 && interval(&rt, right) {
                return Ok(Some(Expr::BinaryExpr(BinaryExpr::new(
                    Box::new(to_timestamp((**left).clone())),
                    *op,
                    right.clone(),
                ))));
            }
            if *op == Operator::Plus && interval(&lt, left) && rt == DataType::Date32 {
                return Ok(Some(Expr::BinaryExpr(BinaryExpr::new(
                    left.clone(),
                    *op,
                    Box::new(to_timestamp((**right).clone())),
                ))));
            }
        }
        _ => {}
    }
    Ok(None)
}
