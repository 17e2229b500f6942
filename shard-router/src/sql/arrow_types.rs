//! The one map between catalog types and Arrow types: the Arrow type a
//! column of each `SqlType` is scanned into, and the `SqlType` an Arrow
//! type of a plan's output is decoded from (pushed fragments). The wire
//! types of `compute::pgtypes` are derived from it.

use common::SqlType;
use datafusion::arrow::datatypes::{DataType, TimeUnit};

/// The Arrow precision and scale of `numeric(precision, scale)`: Arrow's
/// Decimal128 holds 38 digits; wider (and unconstrained) numerics are
/// read as (38, 18).
/// Arrow field metadata of a `char(n)` column: its width `n`.
pub const BPCHAR_WIDTH: &str = "tessera.bpchar";

pub fn decimal_params(precision: u8, scale: u8) -> (u8, u8) {
    if precision > 38 {
        (38, 18)
    } else {
        (precision, scale)
    }
}

/// The Arrow type of a column of type `t`.
pub fn arrow_type(t: &SqlType) -> DataType {
    match t {
        SqlType::SmallInt => DataType::Int16,
        SqlType::Integer => DataType::Int32,
        SqlType::BigInt => DataType::Int64,
        SqlType::Numeric { precision, scale } => {
            let (p, s) = decimal_params(*precision, *scale);
            DataType::Decimal128(p, s as i8)
        }
        SqlType::Real => DataType::Float32,
        SqlType::Double => DataType::Float64,
        SqlType::Boolean => DataType::Boolean,
        SqlType::Char(_) | SqlType::Varchar(_) | SqlType::Text => DataType::Utf8,
        SqlType::Date => DataType::Date32,
        SqlType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        SqlType::TimestampTz => DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
        SqlType::Bytea => DataType::Binary,
    }
}

/// The catalog type whose values an Arrow `t` holds exactly: the inverse
/// of [`arrow_type`] on its image (`None` for any other Arrow type, which
/// a shard's answer cannot be decoded into).
pub fn sql_type_of(t: &DataType) -> Option<SqlType> {
    Some(match t {
        DataType::Int16 => SqlType::SmallInt,
        DataType::Int32 => SqlType::Integer,
        DataType::Int64 => SqlType::BigInt,
        DataType::Float32 => SqlType::Real,
        DataType::Float64 => SqlType::Double,
        DataType::Decimal128(p, s) if *s >= 0 && *s as u8 <= *p => SqlType::Numeric {
            precision: *p,
            scale: *s as u8,
        },
        DataType::Utf8 => SqlType::Text,
        DataType::Boolean => SqlType::Boolean,
        DataType::Date32 => SqlType::Date,
        DataType::Timestamp(TimeUnit::Microsecond, None) => SqlType::Timestamp,
        DataType::Timestamp(TimeUnit::Microsecond, Some(tz)) if tz.as_ref() == "+00:00" => {
            SqlType::TimestampTz
        }
        DataType::Binary => SqlType::Bytea,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every catalog type, with the edges of numeric.
    pub fn all_types() -> Vec<SqlType> {
        vec![
            SqlType::SmallInt,
            SqlType::Integer,
            SqlType::BigInt,
            SqlType::Numeric {
                precision: 12,
                scale: 2,
            },
            SqlType::Numeric {
                precision: 38,
                scale: 0,
            },
            SqlType::Numeric {
                precision: 38,
                scale: 38,
            },
            SqlType::Numeric {
                precision: 65,
                scale: 30,
            },
            SqlType::Real,
            SqlType::Double,
            SqlType::Boolean,
            SqlType::Char(4),
            SqlType::Varchar(Some(20)),
            SqlType::Varchar(None),
            SqlType::Text,
            SqlType::Date,
            SqlType::Timestamp,
            SqlType::TimestampTz,
            SqlType::Bytea,
        ]
    }

    #[test]
    fn every_column_type_round_trips_through_arrow() {
        for t in all_types() {
            let a = arrow_type(&t);
            let back = sql_type_of(&a).unwrap_or_else(|| panic!("{t:?} -> {a:?} has no way back"));
            assert_eq!(arrow_type(&back), a, "{t:?}");
        }
    }

    #[test]
    fn only_arrow_types_of_columns_are_decodable() {
        for a in [
            DataType::Int8,
            DataType::UInt64,
            DataType::Float16,
            DataType::LargeUtf8,
            DataType::Utf8View,
            DataType::Date64,
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            DataType::Timestamp(TimeUnit::Microsecond, Some("+02:00".into())),
            DataType::Decimal128(10, -2),
        ] {
            assert_eq!(sql_type_of(&a), None, "{a:?}");
        }
    }
}
