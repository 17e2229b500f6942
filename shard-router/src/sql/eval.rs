//! Constant expressions of a client's statement evaluated as PostgreSQL
//! evaluates them (literals, parameters, casts, the current-time
//! functions): routing's key values and the compute node's INSERT values
//! and defaults.

use common::{Datum, Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{CastKind, Expr, UnaryOperator, Value};

use super::ident::placeholder_index;

/// Evaluates a constant expression: literals, parameters, unary minus,
/// casts and typed strings (`DATE '2024-01-01'`).
pub fn eval_const(e: &Expr, params: &[Datum]) -> Result<Datum> {
    eval_value(e, params, None)
}

/// When a row's values are evaluated: the transaction's start (what
/// `now()` and `CURRENT_TIMESTAMP` are in PostgreSQL) and the statement's.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub transaction: chrono::DateTime<chrono::Utc>,
    pub statement: chrono::DateTime<chrono::Utc>,
}

/// [`eval_const`], and with a `clock`, PostgreSQL's current-time
/// functions too: `now()`, `CURRENT_TIMESTAMP`, `transaction_timestamp()`
/// (the transaction's start), `statement_timestamp()`,
/// `clock_timestamp()`, `LOCALTIMESTAMP` and `CURRENT_DATE` (local time in
/// the session's zone).
pub fn eval_value(e: &Expr, params: &[Datum], clock: Option<&Clock>) -> Result<Datum> {
    use datafusion::sql::sqlparser::ast::FunctionArguments;
    if let (Expr::Function(f), Some(clock)) = (e, clock) {
        let no_args = match &f.args {
            FunctionArguments::None => true,
            FunctionArguments::List(l) => l.args.is_empty(),
            FunctionArguments::Subquery(_) => false,
        };
        let name = f.name.to_string().to_ascii_lowercase();
        let name = name.strip_prefix("pg_catalog.").unwrap_or(&name);
        if no_args && f.over.is_none() && f.filter.is_none() {
            let local =
                |t: chrono::DateTime<chrono::Utc>| common::tz::to_session_local(&t.naive_utc()).0;
            match name {
                "now" | "current_timestamp" | "transaction_timestamp" => {
                    return Ok(Datum::TimestampTz(clock.transaction))
                }
                "statement_timestamp" => return Ok(Datum::TimestampTz(clock.statement)),
                "clock_timestamp" => return Ok(Datum::TimestampTz(chrono::Utc::now())),
                "localtimestamp" => return Ok(Datum::Timestamp(local(clock.transaction))),
                "current_date" => return Ok(Datum::Date(local(clock.transaction).date())),
                _ => {}
            }
        }
    }
    // Operands are evaluated with the same clock.
    let operand = |e: &Expr| eval_value(e, params, clock);
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => {
                if let Ok(i) = n.parse::<i64>() {
                    Ok(Datum::Int(i))
                } else {
                    Datum::parse(
                        n,
                        &SqlType::Numeric {
                            precision: 38,
                            scale: 10,
                        },
                    )
                    .or_else(|_| match n.parse::<f64>() {
                        // Past what Decimal holds: a float, unless that
                        // would make it zero or infinite (PostgreSQL's
                        // numeric holds 3e-500 and 1e400 exactly).
                        Ok(f) if f.is_finite() && f != 0.0 => Ok(Datum::Float(f)),
                        Ok(_) => Err(common::Error::unsupported(format!(
                            "the numeric constant {n} (beyond 28 significant digits)"
                        ))),
                        Err(_) => Datum::parse(n, &SqlType::Double),
                    })
                }
            }
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => {
                Ok(Datum::Text(s.clone()))
            }
            Value::Boolean(b) => Ok(Datum::Bool(*b)),
            Value::Null => Ok(Datum::Null),
            Value::Placeholder(p) => {
                let i = placeholder_index(p).ok_or_else(|| Error::InvalidParameter {
                    message: format!("bad parameter {p}"),
                })?;
                params
                    .get(i)
                    .cloned()
                    .ok_or_else(|| Error::InvalidParameter {
                        message: format!("there is no parameter {p}"),
                    })
            }
            other => Err(Error::unsupported(format!("literal {other}"))),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match operand(expr)? {
            Datum::Int(i) => i
                .checked_neg()
                .map(Datum::Int)
                .ok_or(Error::NumericOutOfRange {
                    message: "bigint out of range".into(),
                }),
            Datum::Decimal(d) => Ok(Datum::Decimal(-d)),
            Datum::Float(f) => Ok(Datum::Float(-f)),
            d => Err(Error::TypeMismatch {
                message: format!("operator does not exist: - {d:?}"),
            }),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Plus,
            expr,
        } => operand(expr),
        Expr::Nested(inner) => operand(inner),
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            ..
        } => {
            let ty = SqlType::parse(&data_type.to_string())?;
            operand(expr)?.coerce(&ty)
        }
        Expr::TypedString(ts) => {
            let ty = SqlType::parse(&ts.data_type.to_string())?;
            match &ts.value.value {
                Value::SingleQuotedString(s) => Datum::parse(s, &ty),
                other => Err(Error::unsupported(format!("typed literal {other}"))),
            }
        }
        other => Err(Error::unsupported(format!(
            "expression \"{other}\" where a constant is expected"
        ))),
    }
}
