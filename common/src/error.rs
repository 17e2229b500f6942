//! One error type for the whole stack, each variant mapped to a PostgreSQL
//! SQLSTATE by an exhaustive match, so adding a variant without a code does
//! not compile.

/// A PostgreSQL SQLSTATE code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlState(pub &'static str);

impl SqlState {
    pub const SYNTAX_ERROR: SqlState = SqlState("42601");
    pub const UNDEFINED_TABLE: SqlState = SqlState("42P01");
    pub const UNDEFINED_COLUMN: SqlState = SqlState("42703");
    pub const UNDEFINED_OBJECT: SqlState = SqlState("42704");
    pub const UNDEFINED_FUNCTION: SqlState = SqlState("42883");
    pub const DUPLICATE_TABLE: SqlState = SqlState("42P07");
    pub const DUPLICATE_OBJECT: SqlState = SqlState("42710");
    pub const DUPLICATE_SCHEMA: SqlState = SqlState("42P06");
    pub const INVALID_SCHEMA: SqlState = SqlState("3F000");
    pub const DATATYPE_MISMATCH: SqlState = SqlState("42804");
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState("22P02");
    pub const FEATURE_NOT_SUPPORTED: SqlState = SqlState("0A000");
    pub const UNIQUE_VIOLATION: SqlState = SqlState("23505");
    pub const NOT_NULL_VIOLATION: SqlState = SqlState("23502");
    pub const FOREIGN_KEY_VIOLATION: SqlState = SqlState("23503");
    pub const CHECK_VIOLATION: SqlState = SqlState("23514");
    pub const DEADLOCK_DETECTED: SqlState = SqlState("40P01");
    pub const LOCK_NOT_AVAILABLE: SqlState = SqlState("55P03");
    pub const STRING_DATA_RIGHT_TRUNCATION: SqlState = SqlState("22001");
    pub const NUMERIC_VALUE_OUT_OF_RANGE: SqlState = SqlState("22003");
    pub const DIVISION_BY_ZERO: SqlState = SqlState("22012");
    pub const INVALID_DATETIME_FORMAT: SqlState = SqlState("22007");
    pub const DATA_EXCEPTION: SqlState = SqlState("22000");
    pub const CONNECTION_FAILURE: SqlState = SqlState("08006");
    pub const PROTOCOL_VIOLATION: SqlState = SqlState("08P01");
    pub const IN_FAILED_TRANSACTION: SqlState = SqlState("25P02");
    pub const ACTIVE_TRANSACTION: SqlState = SqlState("25001");
    pub const NO_ACTIVE_TRANSACTION: SqlState = SqlState("25P01");
    pub const TRANSACTION_RESOLUTION_UNKNOWN: SqlState = SqlState("40003");
    pub const SERIALIZATION_FAILURE: SqlState = SqlState("40001");
    pub const INVALID_PARAMETER_VALUE: SqlState = SqlState("22023");
    pub const UNDEFINED_PARAMETER: SqlState = SqlState("42704");
    pub const QUERY_CANCELED: SqlState = SqlState("57014");
    pub const INVALID_PASSWORD: SqlState = SqlState("28P01");
    pub const INTERNAL_ERROR: SqlState = SqlState("XX000");
    pub const OBJECT_IN_USE: SqlState = SqlState("55006");
    pub const INVALID_CATALOG_NAME: SqlState = SqlState("3D000");
    pub const WRONG_OBJECT_TYPE: SqlState = SqlState("42809");
    pub const INVALID_TABLE_DEFINITION: SqlState = SqlState("42P16");
    pub const AMBIGUOUS_COLUMN: SqlState = SqlState("42702");
    pub const CHARACTER_NOT_IN_REPERTOIRE: SqlState = SqlState("22021");
    pub const STATEMENT_TOO_COMPLEX: SqlState = SqlState("54001");
    pub const PROGRAM_LIMIT_EXCEEDED: SqlState = SqlState("54000");
    pub const TOO_MANY_CONNECTIONS: SqlState = SqlState("53300");
    pub const RESERVED_NAME: SqlState = SqlState("42939");
    pub const INSUFFICIENT_PRIVILEGE: SqlState = SqlState("42501");
    pub const IDLE_IN_TRANSACTION_TIMEOUT: SqlState = SqlState("25P03");
    pub const CANT_CHANGE_RUNTIME_PARAM: SqlState = SqlState("55P02");

    pub fn code(&self) -> &'static str {
        self.0
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("{message}")]
    Syntax {
        message: String,
        position: Option<usize>,
    },
    #[error("relation \"{name}\" does not exist")]
    TableNotFound { name: String },
    #[error("relation \"{name}\" already exists")]
    TableExists { name: String },
    #[error("column \"{name}\" does not exist")]
    ColumnNotFound { name: String },
    #[error("schema \"{name}\" does not exist")]
    SchemaNotFound { name: String },
    #[error("schema \"{name}\" already exists")]
    SchemaExists { name: String },
    #[error("index \"{name}\" does not exist")]
    IndexNotFound { name: String },
    #[error("relation \"{name}\" already exists")]
    IndexExists { name: String },
    #[error("{feature} is not supported yet")]
    Unsupported { feature: String },
    #[error("{message}")]
    InvalidTableDefinition { message: String },
    #[error("invalid input syntax for type {ty}: \"{value}\"")]
    InvalidText { ty: String, value: String },
    #[error("{message}")]
    TypeMismatch { message: String },
    /// No operator (or assignment) for these operand types (42883).
    #[error("{message}")]
    UndefinedOperator { message: String },
    #[error("{message}")]
    InvalidParameter { message: String },
    #[error("unrecognized configuration parameter \"{name}\"")]
    UnknownSetting { name: String },
    #[error("{message}")]
    NumericOutOfRange { message: String },
    /// An error reported by a shard's MariaDB, mapped by its error number.
    #[error("{message}")]
    Shard { code: u16, message: String },
    #[error("could not reach {shard}: {message}")]
    ShardUnavailable { shard: String, message: String },
    #[error("metadata store error: {message}")]
    Meta { message: String },
    #[error("current transaction is aborted, commands ignored until end of transaction block")]
    InFailedTransaction,
    /// A condition PostgreSQL reports with `state` that has no variant of
    /// its own (transaction-state errors, reserved names, privileges...).
    #[error("{message}")]
    Sql { state: SqlState, message: String },
    #[error("division by zero")]
    DivisionByZero,
    #[error("{message}")]
    AmbiguousColumn { message: String },
    #[error("{message}")]
    UndefinedFunction { message: String },
    #[error(
        "null value in column \"{column}\" of relation \"{table}\" violates not-null constraint"
    )]
    NotNullViolation { column: String, table: String },
    #[error("value too long for type {ty}")]
    ValueTooLong { ty: String },
    #[error("could not obtain lock on row")]
    LockNotAvailable,
    #[error("canceling statement due to statement timeout")]
    StatementTimeout,
    #[error("canceling statement due to lock timeout")]
    LockTimeout,
    #[error("terminating connection due to idle-in-transaction timeout")]
    IdleInTransactionTimeout,
    #[error("the outcome of the commit of transaction {xid} is unknown; it will be resolved by recovery")]
    TxnOutcomeUnknown { xid: String },
    #[error("canceling statement due to user request")]
    Canceled,
    #[error("{message}")]
    Execution { message: String },
    #[error("internal error: {message}")]
    Internal { message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn unsupported(feature: impl Into<String>) -> Self {
        Error::Unsupported {
            feature: feature.into(),
        }
    }

    pub fn internal(message: impl std::fmt::Display) -> Self {
        Error::Internal {
            message: message.to_string(),
        }
    }

    pub fn meta(message: impl std::fmt::Display) -> Self {
        Error::Meta {
            message: message.to_string(),
        }
    }

    pub fn sqlstate(&self) -> SqlState {
        match self {
            Error::Syntax { .. } => SqlState::SYNTAX_ERROR,
            Error::TableNotFound { .. } => SqlState::UNDEFINED_TABLE,
            Error::TableExists { .. } => SqlState::DUPLICATE_TABLE,
            Error::ColumnNotFound { .. } => SqlState::UNDEFINED_COLUMN,
            Error::SchemaNotFound { .. } => SqlState::INVALID_SCHEMA,
            Error::SchemaExists { .. } => SqlState::DUPLICATE_SCHEMA,
            Error::IndexNotFound { .. } => SqlState::UNDEFINED_OBJECT,
            Error::IndexExists { .. } => SqlState::DUPLICATE_TABLE,
            Error::Unsupported { .. } => SqlState::FEATURE_NOT_SUPPORTED,
            Error::InvalidTableDefinition { .. } => SqlState::INVALID_TABLE_DEFINITION,
            Error::InvalidText { .. } => SqlState::INVALID_TEXT_REPRESENTATION,
            Error::TypeMismatch { .. } => SqlState::DATATYPE_MISMATCH,
            Error::UndefinedOperator { .. } => SqlState::UNDEFINED_FUNCTION,
            Error::InvalidParameter { .. } => SqlState::INVALID_PARAMETER_VALUE,
            Error::UnknownSetting { .. } => SqlState::UNDEFINED_PARAMETER,
            Error::NumericOutOfRange { .. } => SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            Error::Shard { code, .. } => mariadb_sqlstate(*code),
            Error::ShardUnavailable { .. } => SqlState::CONNECTION_FAILURE,
            Error::Meta { .. } => SqlState::CONNECTION_FAILURE,
            Error::InFailedTransaction => SqlState::IN_FAILED_TRANSACTION,
            Error::Sql { state, .. } => *state,
            Error::DivisionByZero => SqlState::DIVISION_BY_ZERO,
            Error::AmbiguousColumn { .. } => SqlState::AMBIGUOUS_COLUMN,
            Error::UndefinedFunction { .. } => SqlState::UNDEFINED_FUNCTION,
            Error::NotNullViolation { .. } => SqlState::NOT_NULL_VIOLATION,
            Error::ValueTooLong { .. } => SqlState::STRING_DATA_RIGHT_TRUNCATION,
            Error::LockNotAvailable | Error::LockTimeout => SqlState::LOCK_NOT_AVAILABLE,
            Error::StatementTimeout => SqlState::QUERY_CANCELED,
            Error::IdleInTransactionTimeout => SqlState::IDLE_IN_TRANSACTION_TIMEOUT,
            Error::TxnOutcomeUnknown { .. } => SqlState::TRANSACTION_RESOLUTION_UNKNOWN,
            Error::Canceled => SqlState::QUERY_CANCELED,
            Error::Execution { .. } => SqlState::DATA_EXCEPTION,
            Error::Internal { .. } => SqlState::INTERNAL_ERROR,
        }
    }

    /// Error position (1-based character offset) for syntax errors.
    pub fn position(&self) -> Option<usize> {
        match self {
            Error::Syntax { position, .. } => *position,
            _ => None,
        }
    }
}

/// Maps a MariaDB error number to the SQLSTATE PostgreSQL would report for
/// the same condition. Numbers not listed are data exceptions.
pub fn mariadb_sqlstate(code: u16) -> SqlState {
    match code {
        1062 | 1586 => SqlState::UNIQUE_VIOLATION,
        1048 | 1364 => SqlState::NOT_NULL_VIOLATION,
        1451 | 1452 => SqlState::FOREIGN_KEY_VIOLATION,
        // A lock wait that times out on a shard is how a deadlock spanning
        // shards ends (each shard sees only half of the cycle): reported as
        // a deadlock, which clients retry.
        1213 | 1205 => SqlState::DEADLOCK_DETECTED,
        1406 => SqlState::STRING_DATA_RIGHT_TRUNCATION,
        1264 | 1690 => SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        1365 => SqlState::DIVISION_BY_ZERO,
        1292 | 1366 | 1367 => SqlState::INVALID_TEXT_REPRESENTATION,
        3819 | 4025 => SqlState::CHECK_VIOLATION,
        1146 => SqlState::UNDEFINED_TABLE,
        1054 => SqlState::UNDEFINED_COLUMN,
        1064 => SqlState::SYNTAX_ERROR,
        1317 => SqlState::QUERY_CANCELED,
        2002 | 2003 | 2006 | 2013 => SqlState::CONNECTION_FAILURE,
        _ => SqlState::DATA_EXCEPTION,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_codes_map_to_postgres_states() {
        assert_eq!(mariadb_sqlstate(1062).code(), "23505");
        assert_eq!(mariadb_sqlstate(1213).code(), "40P01");
        assert_eq!(mariadb_sqlstate(1205).code(), "40P01");
        assert_eq!(mariadb_sqlstate(2013).code(), "08006");
        let e = Error::Shard {
            code: 1048,
            message: "x".into(),
        };
        assert_eq!(e.sqlstate().code(), "23502");
    }
}
