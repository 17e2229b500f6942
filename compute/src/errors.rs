//! DataFusion errors as Tessera errors (and so SQLSTATEs): the one place
//! a DataFusion error is classified. Errors Tessera raised inside a plan
//! (shard errors, value errors) travel as `DataFusionError::External` and
//! come back as they were; the rest are classified by kind.

use common::{Error, SqlState};
use datafusion::common::DataFusionError;

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
        DataFusionError::SchemaError(e, _) => {
            let m = e.to_string();
            if m.contains("No field named") {
                let name = m.split("No field named ").nth(1).unwrap_or(&m);
                let name = name
                    .split(['.', '\n'])
                    .next()
                    .unwrap_or(name)
                    .trim_matches('"');
                Error::ColumnNotFound {
                    name: name.to_string(),
                }
            } else if m.contains("mbiguous") {
                Error::TxnState {
                    state: SqlState::AMBIGUOUS_COLUMN,
                    message: m,
                }
            } else {
                Error::Execution { message: m }
            }
        }
        DataFusionError::ArrowError(e, _) => {
            let m = e.to_string();
            if m.contains("Divide by zero") {
                Error::TxnState {
                    state: SqlState::DIVISION_BY_ZERO,
                    message: "division by zero".into(),
                }
            } else if m.contains("overflow") {
                Error::NumericOutOfRange { message: m }
            } else if m.contains("Cast error") || m.contains("Cannot cast") {
                Error::InvalidText {
                    ty: "value".into(),
                    value: m,
                }
            } else {
                Error::Execution { message: m }
            }
        }
        DataFusionError::Execution(m) => {
            if m.contains("Divide by zero") || m.contains("Division by zero") {
                Error::TxnState {
                    state: SqlState::DIVISION_BY_ZERO,
                    message: "division by zero".into(),
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
        return Error::TxnState {
            state: SqlState::UNDEFINED_FUNCTION,
            message: m,
        };
    }
    if m.contains("Cannot infer common argument type")
        || m.contains("Cannot coerce")
        || m.contains("There isn't a common type")
        || m.contains("No function matches")
    {
        return Error::TypeMismatch { message: m };
    }
    Error::TxnState {
        state: SqlState::DATATYPE_MISMATCH,
        message: m,
    }
}
