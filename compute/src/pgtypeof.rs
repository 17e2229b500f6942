//! `pg_typeof(x)`: the type of `x` as a `regtype` (its text is the name
//! PostgreSQL prints, `integer`, `character varying`, `timestamp without
//! time zone`, ...; its binary form the OID). Answered where the type is
//! known for certain (the planner passes the name as a second argument;
//! a third marks an answer cast to text):
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
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "pg_typeof";

/// Arrow field metadata of a `regtype` result column (the function's):
/// its text is the name, its binary form the type's OID.
pub const REGTYPE: &str = "tessera.regtype";

/// Whether a field is a regtype (this function's answer): marked, and of
/// the Arrow type the function returns, a string type no other value of
/// Tessera has, so a cast to text is a cast that leaves it text.
pub fn is_regtype(f: &Field) -> bool {
    f.data_type() == &DataType::Utf8View && f.metadata().contains_key(REGTYPE)
}

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
            // `pg_typeof(x)`, or `pg_typeof(x, 'name')` where the planner
            // knew the name (`plan::pgsyntax`, `plan::pgtypeof`).
            signature: Signature::one_of(
                vec![
                    TypeSignature::Any(1),
                    TypeSignature::Any(2),
                    TypeSignature::Any(3),
                ],
                Volatility::Immutable,
            ),
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
        Ok(DataType::Utf8View)
    }
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let f = Field::new(NAME, DataType::Utf8View, false);
        // A third argument: the answer is cast to a string type (its
        // text), no longer a regtype (`plan::pgtypeof`).
        Ok(Arc::new(if args.arg_fields.len() == 3 {
            f
        } else {
            f.with_metadata([(REGTYPE.to_string(), String::new())].into())
        }))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if let Some(ColumnarValue::Scalar(ScalarValue::Utf8(Some(name)))) = args.args.get(1) {
            return Ok(ColumnarValue::Scalar(ScalarValue::Utf8View(Some(
                name.clone(),
            ))));
        }
        let f = args
            .arg_fields
            .first()
            .ok_or_else(|| DataFusionError::Internal("pg_typeof without an argument".into()))?;
        let bpchar = f.metadata().contains_key(shard_router::sql::BPCHAR_WIDTH);
        let name = if is_regtype(f) {
            Some("regtype".to_string())
        } else {
            arrow_type_name(f.data_type(), bpchar)
        };
        match name {
            Some(name) => Ok(ColumnarValue::Scalar(ScalarValue::Utf8View(Some(name)))),
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
