//! DataFusion errors as Tessera errors (and so SQLSTATEs): the one place
//! a DataFusion error is classified. Errors Tessera raised inside a plan
//! (shard errors, value errors) travel as `DataFusionError::External` and
//! come back as they were; the rest are classified by their typed variants
//! (schema and Arrow errors), and by message only where DataFusion has no
//! variant (plan and execution errors carry a string).

use common::{Error, SqlState};
use datafusion::arrow::error::ArrowError;
use datafusion::common::{DataFusionError, SchemaError};

/// The Tessera error (and so the SQLSTATE) of a DataFusion error.
pub fn map_df_error(e: DataFusionError) -> Error {
    // A call no signature accepts can surface as an internal error that
    // wraps the planner's: PostgreSQL's "function f(text) does not exist".
    let whole = e.to_string();
    if let Some(call) = whole
        .split("No function matches the given name and argument types '")
        .nth(1)
        .and_then(|r| r.split('\'').next())
    {
        return Error::UndefinedFunction {
            message: format!("function {} does not exist", pg_signature(call)),
        };
    }
    // generate_series(a, b, 0): PostgreSQL's words and SQLSTATE.
    if whole.contains("Step cannot be zero") {
        return Error::Sql {
            state: SqlState::INVALID_PARAMETER_VALUE,
            message: "step size cannot equal zero".into(),
        };
    }
    map_df_root(e.find_root())
}

/// `sum(Utf8)` as PostgreSQL names the signature: `sum(text)`.
fn pg_signature(call: &str) -> String {
    let Some((name, args)) = call.split_once('(') else {
        return call.to_string();
    };
    let args: Vec<&str> = args
        .trim_end_matches(')')
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| pg_type_name(a).unwrap_or(a))
        .collect();
    format!("{name}({})", args.join(", "))
}

/// PostgreSQL's name for an Arrow type as DataFusion prints it.
fn pg_type_name(arrow: &str) -> Option<&'static str> {
    Some(match arrow {
        "Int16" => "smallint",
        "Int32" => "integer",
        "Int64" => "bigint",
        "Float32" => "real",
        "Float64" => "double precision",
        "Utf8" | "Utf8View" | "LargeUtf8" => "text",
        "Boolean" => "boolean",
        "Date32" => "date",
        "Binary" => "bytea",
        a if a.starts_with("Decimal128") => "numeric",
        a if a.starts_with("Timestamp") => "timestamp without time zone",
        _ => return None,
    })
}

/// Arrow's failed cast of a string (`Cannot cast string 'x' to value of
/// Date32 type`) as PostgreSQL reports bad input: 22008 for a date or
/// timestamp whose fields are out of range, 22007 for one that is not a
/// date at all, 22P02 for other types.
fn cast_error(m: &str) -> Error {
    if m.contains("Overflowing on") || m.contains("too large to store in a Decimal") {
        return Error::NumericOutOfRange {
            message: "numeric field overflow".into(),
        };
    }
    if m.contains("Can't cast value") || m.contains("out of range") {
        return Error::NumericOutOfRange {
            message: if m.contains("Int16") {
                "smallint out of range".into()
            } else {
                "integer out of range".into()
            },
        };
    }
    let parsed = m.split("Cannot cast string '").nth(1).and_then(|r| {
        let (value, rest) = r.split_once("' to value of ")?;
        Some((value, rest.split(' ').next()?))
    });
    let Some((value, arrow)) = parsed else {
        return Error::InvalidText {
            ty: "value".into(),
            value: m.to_string(),
        };
    };
    let ty = pg_type_name(arrow).unwrap_or("value");
    // Digits that do not fit the integer type: PostgreSQL's int2in,
    // int4in and int8in say out of range (22003), not invalid syntax.
    if matches!(arrow, "Int16" | "Int32" | "Int64") && common::value::is_integer_text(value.trim())
    {
        return Error::NumericOutOfRange {
            message: format!("value \"{value}\" is out of range for type {ty}"),
        };
    }
    if matches!(arrow, "Date32" | "Date64") || arrow.starts_with("Timestamp") {
        let shaped = value.len() >= 8
            && value
                .chars()
                .all(|c| c.is_ascii_digit() || "-:. T+".contains(c));
        return if shaped {
            Error::Sql {
                state: SqlState("22008"),
                message: format!("date/time field value out of range: \"{value}\""),
            }
        } else {
            Error::Sql {
                state: SqlState::INVALID_DATETIME_FORMAT,
                message: format!("invalid input syntax for type {ty}: \"{value}\""),
            }
        };
    }
    Error::InvalidText {
        ty: ty.to_string(),
        value: value.to_string(),
    }
}

fn map_df_root(e: &DataFusionError) -> Error {
    match e {
        DataFusionError::External(inner) => match inner.downcast_ref::<Error>() {
            Some(e) => e.clone(),
            None => Error::Execution {
                message: inner.to_string(),
            },
        },
        // A subquery DataFusion could not turn into a join (`x > ANY
        // (...)` or `x IN (...)` in a select list) reaches the physical
        // planner as a bare Exists or subquery expression.
        DataFusionError::NotImplemented(m)
            if m.starts_with("Physical plan does not support logical expression")
                && m.contains("ScalarSubquery") =>
        {
            Error::unsupported("this correlated scalar subquery (outside WHERE)")
        }
        DataFusionError::NotImplemented(m)
            if m.starts_with("Physical plan does not support logical expression")
                && ["Exists", "InSubquery", "SetComparison"]
                    .iter()
                    .any(|k| m.contains(k)) =>
        {
            Error::unsupported(
                "a subquery with IN, EXISTS, ANY or ALL in this part of the statement (outside WHERE)",
            )
        }
        DataFusionError::NotImplemented(m) => Error::unsupported(m.clone()),
        DataFusionError::SQL(e, _) => Error::Syntax {
            message: e.to_string(),
            position: None,
        },
        DataFusionError::Plan(m) => plan_error(m.clone()),
        DataFusionError::SchemaError(e, _) => match e.as_ref() {
            // `sum(id::bigint), sum(id::smallint)`: DataFusion names both
            // after `id` and refuses the pair.
            SchemaError::DuplicateUnqualifiedField { .. }
            | SchemaError::DuplicateQualifiedField { .. } => Error::unsupported(
                "two result columns that DataFusion names alike (casts of one column in aggregates)",
            ),
            SchemaError::FieldNotFound { field, .. } => Error::ColumnNotFound {
                name: field.name().to_string(),
            },
            SchemaError::AmbiguousReference { field } => Error::AmbiguousColumn {
                message: format!("column reference \"{}\" is ambiguous", field.name()),
            },
        },
        DataFusionError::ArrowError(e, _) => match e.as_ref() {
            ArrowError::DivideByZero => Error::DivisionByZero,
            ArrowError::ArithmeticOverflow(m) => Error::NumericOutOfRange { message: m.clone() },
            ArrowError::CastError(m) => cast_error(m),
            ArrowError::InvalidArgumentError(m)
                if m.contains("too large to store in a Decimal") =>
            {
                cast_error(m)
            }
            // Arrow's compute kernels report overflow as a ComputeError
            // with no variant of its own.
            ArrowError::ComputeError(m) if m.contains("overflow") => {
                Error::NumericOutOfRange { message: m.clone() }
            }
            other => Error::Execution {
                message: other.to_string(),
            },
        },
        // DataFusion's own kernels: an untyped message.
        DataFusionError::Execution(m) => {
            if m.contains("Divide by zero") || m.contains("Division by zero") {
                Error::DivisionByZero
            } else if m.contains("Scalar subquery returned more than one row") {
                Error::Sql {
                    state: SqlState("21000"),
                    message: "more than one row returned by a subquery used as an expression"
                        .into(),
                }
            } else {
                Error::Execution { message: m.clone() }
            }
        }
        other => Error::Execution {
            message: other.to_string(),
        },
    }
}

/// Whether PostgreSQL 15 has a built-in function of this name
/// (`pg15_functions.txt`, from its `pg_proc`).
fn is_postgresql_function(name: &str) -> bool {
    static NAMES: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            include_str!("pg15_functions.txt")
                .lines()
                .filter(|l| !l.starts_with('#'))
                .collect()
        })
        .contains(name)
}

fn plan_error(m: String) -> Error {
    if let Some(rest) = m
        .split("table '")
        .nth(1)
        .filter(|_| m.contains("not found"))
    {
        let name = rest.split('\'').next().unwrap_or(rest);
        return Error::TableNotFound {
            name: name.rsplit('.').next().unwrap_or(name).to_string(),
        };
    }
    if m.contains("Invalid function") || m.contains("not found in registry") {
        // A name DataFusion does not know: a PostgreSQL function Tessera
        // does not have yet (age, pg_typeof...) is refused as a feature;
        // any other name does not exist, as in PostgreSQL.
        let name = m.split('\'').nth(1).unwrap_or("this function").to_string();
        if !is_postgresql_function(&name) {
            return Error::Sql {
                state: SqlState("42883"),
                message: format!("function {name} does not exist"),
            };
        }
        return Error::unsupported(format!("function {name}()"));
    }
    if let Some(rest) = m.split("Order by column out of bounds, specified: ").nth(1) {
        let n = rest.split(',').next().unwrap_or(rest);
        return Error::Sql {
            state: SqlState("42P10"),
            message: format!("ORDER BY position {n} is not in select list"),
        };
    }
    if m.contains("Order by index starts at 1") {
        return Error::Sql {
            state: SqlState("42P10"),
            message: "ORDER BY position 0 is not in select list".into(),
        };
    }
    if let Some(col) = m
        .split("must appear in the GROUP BY clause")
        .next()
        .filter(|_| m.contains("must appear in the GROUP BY clause"))
        .and_then(|head| head.rsplit("column \"").next())
    {
        let col = col.trim_end_matches([' ', '"']);
        return Error::Sql {
            state: SqlState("42803"),
            message: format!(
                "column \"{col}\" must appear in the GROUP BY clause or be used in an aggregate function"
            ),
        };
    }
    // DataFusion has no interval * number.
    if m.contains("Interval")
        && (m.contains("Cannot coerce arithmetic") || m.contains("Cannot get result type"))
    {
        return Error::unsupported("arithmetic between an interval and a number");
    }
    if m.contains("Cannot infer common argument type")
        || m.contains("Cannot coerce")
        || m.contains("There isn't a common type")
        || m.contains("No function matches")
    {
        return Error::TypeMismatch { message: m };
    }
    Error::Sql {
        state: SqlState::DATATYPE_MISMATCH,
        message: m,
    }
}

/// A shard's foreign-key error in PostgreSQL's words, naming the logical
/// tables and constraint instead of the physical ones (InnoDB names the
/// constraint `tsr_fk<id>_p<n>`, see `meta::ForeignKeyDef::physical_name`).
pub fn foreign_key_error(e: Error, catalog: &meta::Catalog) -> Error {
    let Error::Shard { code, message } = &e else {
        return e;
    };
    if !matches!(code, 1451 | 1452) {
        return e;
    }
    let Some(id) = message
        .split("tsr_fk")
        .nth(1)
        .and_then(|rest| rest.split('_').next())
        .and_then(|n| n.parse::<u64>().ok())
    else {
        return e;
    };
    let Some(fk) = catalog.foreign_keys.iter().find(|f| f.id == id) else {
        return e;
    };
    let name = |t| {
        catalog
            .table_by_id(t)
            .map(|t| t.name.clone())
            .unwrap_or_default()
    };
    let message = if *code == 1452 {
        format!(
            "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
            name(fk.table),
            fk.name
        )
    } else {
        format!(
            "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
            name(fk.ref_table),
            fk.name,
            name(fk.table)
        )
    };
    Error::Shard {
        code: *code,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_errors_read_like_postgres() {
        let e = cast_error("Cannot cast string '2024-13-01' to value of Date32 type");
        assert_eq!(e.sqlstate().code(), "22008");
        let e = cast_error("Cannot cast string 'abc' to value of Date32 type");
        assert_eq!(e.sqlstate().code(), "22007");
        assert_eq!(e.to_string(), "invalid input syntax for type date: \"abc\"");
        let e = cast_error("Cannot cast string 'x1' to value of Int32 type");
        assert_eq!(e.sqlstate().code(), "22P02");
        assert_eq!(
            e.to_string(),
            "invalid input syntax for type integer: \"x1\""
        );
        let e = cast_error("Cannot cast string '-9223372036854775809' to value of Int64 type");
        assert_eq!(e.sqlstate().code(), "22003");
        assert_eq!(
            e.to_string(),
            "value \"-9223372036854775809\" is out of range for type bigint"
        );
    }

    #[test]
    fn unmatched_calls_are_undefined_functions() {
        let e = map_df_error(DataFusionError::Plan(
            "No function matches the given name and argument types 'sum(Utf8)'. You might need to add explicit type casts.".into(),
        ));
        assert_eq!(e.sqlstate().code(), "42883");
        assert_eq!(e.to_string(), "function sum(text) does not exist");
    }

    #[test]
    fn subqueries_left_undecorrelated_are_refused_by_shape() {
        let e = map_df_error(DataFusionError::NotImplemented(
            "Physical plan does not support logical expression Exists(Exists { subquery: <subquery>, negated: false })".into(),
        ));
        assert_eq!(e.sqlstate().code(), "0A000");
        assert!(e.to_string().contains("IN, EXISTS, ANY or ALL"), "{e}");
    }

    #[test]
    fn unknown_names_do_not_exist_and_postgresql_ones_are_refused() {
        let e = map_df_error(DataFusionError::Plan(
            "Invalid function 'no_such_function'.\nDid you mean 'to_hex'?".into(),
        ));
        assert_eq!(e.sqlstate().code(), "42883");
        assert_eq!(e.to_string(), "function no_such_function does not exist");
        let e = map_df_error(DataFusionError::Plan(
            "Invalid function 'pg_typeof'.\nDid you mean 'typeof'?".into(),
        ));
        assert_eq!(e.sqlstate().code(), "0A000");
        assert!(is_postgresql_function("RI_FKey_check_ins") && is_postgresql_function("age"));
    }
}
