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
    map_df_root(e.find_root())
}

fn map_df_root(e: &DataFusionError) -> Error {
    match e {
        DataFusionError::External(inner) => match inner.downcast_ref::<Error>() {
            Some(e) => e.clone(),
            None => Error::Execution {
                message: inner.to_string(),
            },
        },
        DataFusionError::NotImplemented(m) => Error::unsupported(m.clone()),
        DataFusionError::SQL(e, _) => Error::Syntax {
            message: e.to_string(),
            position: None,
        },
        DataFusionError::Plan(m) => plan_error(m.clone()),
        DataFusionError::SchemaError(e, _) => match e.as_ref() {
            SchemaError::FieldNotFound { field, .. } => Error::ColumnNotFound {
                name: field.name().to_string(),
            },
            SchemaError::AmbiguousReference { field } => Error::AmbiguousColumn {
                message: format!("column reference \"{}\" is ambiguous", field.name()),
            },
            other => Error::Execution {
                message: other.to_string(),
            },
        },
        DataFusionError::ArrowError(e, _) => match e.as_ref() {
            ArrowError::DivideByZero => Error::DivisionByZero,
            ArrowError::ArithmeticOverflow(m) => Error::NumericOutOfRange { message: m.clone() },
            ArrowError::CastError(m) => Error::InvalidText {
                ty: "value".into(),
                value: m.clone(),
            },
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
            } else {
                Error::Execution { message: m.clone() }
            }
        }
        other => Error::Execution {
            message: other.to_string(),
        },
    }
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
        return Error::UndefinedFunction { message: m };
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
