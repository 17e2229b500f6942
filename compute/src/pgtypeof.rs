//! `pg_typeof(x)`: the name PostgreSQL prints for the type of `x` (its
//! regtype as text: `integer`, `character varying`, `timestamp without
//! time zone`, ...). Answered where the type is known for certain:
//!
//! * in the statement's text (`plan::pgsyntax`): an untyped literal or
//!   NULL is `unknown`, a cast or typed literal names its type;
//! * in the logical plan (`plan::pgtypeof`): a table column by its catalog
//!   type, a string built by an operator or function by `text`;
//! * else by this function, from the Arrow type of its argument. Strings
//!   are one Arrow type for text, varchar and char (char columns carry
//!   their width in the field's metadata): a string the steps above did
//!   not name, and an array, are refused (0A000) rather than guessed.

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "pg_typeof";

/// PostgreSQL's name of a catalog type (without its modifier, as regtype
/// prints it).
pub fn sql_type_name(t: &common::SqlType) -> String {
    let oid = crate::pgtypes::pg_type(t).oid();
    crate::pgcatalog::oids::format_type(i64::from(oid), None).unwrap_or_else(|| t.to_string())
}

/// PostgreSQL's name of the type of values of Arrow type `t` (`bpchar`: a
/// char(n) column's); `None` where it is not known for certain.
pub fn arrow_type_name(t: &DataType, bpchar: bool) -> Option<String> {
    Some(
        match t {
            DataType::Int16 => "smallint",
            DataType::Int32 => "integer",
            DataType::Int64 => "bigint",
            DataType::Float32 => "real",
            DataType::Float64 => "double precision",
            DataType::Decimal128(..) | DataType::Decimal256(..) => "numeric",
            DataType::Boolean => "boolean",
            DataType::Date32 => "date",
            DataType::Timestamp(_, None) => "timestamp without time zone",
            DataType::Timestamp(_, Some(_)) => "timestamp with time zone",
            DataType::Time64(_) => "time without time zone",
            DataType::Interval(_) => "interval",
            DataType::Binary => "bytea",
            DataType::Utf8 if bpchar => "character",
            _ => return None,
        }
        .to_string(),
    )
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PgTypeof {
    signature: Signature,
}

impl Default for PgTypeof {
    fn default() -> Self {
        PgTypeof {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for PgTypeof {
    fn name(&self) -> &str {
        NAME
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn return_field_from_args(&self, _args: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(NAME, DataType::Utf8, false)))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let f = args
            .arg_fields
            .first()
            .ok_or_else(|| DataFusionError::Internal("pg_typeof without an argument".into()))?;
        let bpchar = f.metadata().contains_key(shard_router::sql::BPCHAR_WIDTH);
        match arrow_type_name(f.data_type(), bpchar) {
            Some(name) => Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(name)))),
            None => Err(DataFusionError::External(Box::new(
                common::Error::unsupported(
                    "pg_typeof of this expression (its type is not tracked here: a character string that is not a table's column, an array, or a value of no declared type)",
                ),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::SqlType;

    #[test]
    fn names_are_postgres_regtype_text() {
        assert_eq!(
            sql_type_name(&SqlType::Varchar(Some(20))),
            "character varying"
        );
        assert_eq!(sql_type_name(&SqlType::Char(3)), "character");
        assert_eq!(
            sql_type_name(&SqlType::Numeric {
                precision: 10,
                scale: 2
            }),
            "numeric"
        );
        assert_eq!(
            sql_type_name(&SqlType::TimestampTz),
            "timestamp with time zone"
        );
        assert_eq!(sql_type_name(&SqlType::Double), "double precision");
        // An array's elements may be typed otherwise than PostgreSQL's
        // (`ARRAY[1, 2]` of bigint): not named.
        let list = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
        assert_eq!(arrow_type_name(&list, false), None);
        assert_eq!(arrow_type_name(&DataType::Utf8, false), None);
        assert_eq!(
            arrow_type_name(&DataType::Utf8, true).as_deref(),
            Some("character")
        );
    }
}
