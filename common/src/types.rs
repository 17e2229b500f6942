//! The SQL column types Tessera supports, with their spelling in the catalog,
//! in PostgreSQL and in MariaDB DDL.

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    SmallInt,
    Integer,
    BigInt,
    /// `numeric(p, s)`; `numeric` without a precision is stored as (65, 30).
    Numeric {
        precision: u8,
        scale: u8,
    },
    Real,
    Double,
    Boolean,
    Char(u32),
    Varchar(Option<u32>),
    Text,
    Date,
    Timestamp,
    TimestampTz,
    Bytea,
}

impl SqlType {
    /// Parses the canonical catalog spelling produced by `Display`, and the
    /// common PostgreSQL aliases.
    pub fn parse(s: &str) -> Result<SqlType> {
        let lower = s.trim().to_ascii_lowercase();
        let (base, args) = match lower.find('(') {
            Some(i) => {
                let end = lower.rfind(')').unwrap_or(lower.len());
                (
                    lower[..i].trim().to_string(),
                    Some(lower[i + 1..end].to_string()),
                )
            }
            None => (lower.clone(), None),
        };
        let nums: Vec<u32> = match &args {
            Some(a) => a
                .split(',')
                .map(|x| x.trim().parse::<u32>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| Error::TypeMismatch {
                    message: format!("invalid type modifier in \"{s}\""),
                })?,
            None => vec![],
        };
        let ty = match base.as_str() {
            "smallint" | "int2" => SqlType::SmallInt,
            "integer" | "int" | "int4" => SqlType::Integer,
            "bigint" | "int8" => SqlType::BigInt,
            "numeric" | "decimal" => match nums.as_slice() {
                [] => SqlType::Numeric {
                    precision: 65,
                    scale: 30,
                },
                [p] => SqlType::numeric(*p, 0)?,
                [p, s] => SqlType::numeric(*p, *s)?,
                _ => {
                    return Err(Error::TypeMismatch {
                        message: format!("invalid numeric type \"{s}\""),
                    })
                }
            },
            "real" | "float4" => SqlType::Real,
            "double precision" | "float8" | "double" | "float" => SqlType::Double,
            "boolean" | "bool" => SqlType::Boolean,
            "char" | "character" | "bpchar" => SqlType::Char(nums.first().copied().unwrap_or(1)),
            "varchar" | "character varying" => SqlType::Varchar(nums.first().copied()),
            "text" => SqlType::Text,
            "date" => SqlType::Date,
            "timestamp" | "timestamp without time zone" => SqlType::Timestamp,
            "timestamptz" | "timestamp with time zone" => SqlType::TimestampTz,
            "bytea" => SqlType::Bytea,
            _ => {
                return Err(Error::unsupported(format!("type \"{s}\"")));
            }
        };
        Ok(ty)
    }

    fn numeric(p: u32, s: u32) -> Result<SqlType> {
        if p == 0 || p > 65 || s > 30 || s > p {
            return Err(Error::unsupported(format!(
                "numeric({p},{s}): precision must be 1..65 and scale 0..min(30, precision) on MariaDB shards"
            )));
        }
        Ok(SqlType::Numeric {
            precision: p as u8,
            scale: s as u8,
        })
    }

    /// Column type in the MariaDB DDL of a partition.
    pub fn mysql_ddl(&self) -> String {
        match self {
            SqlType::SmallInt => "SMALLINT".into(),
            SqlType::Integer => "INT".into(),
            SqlType::BigInt => "BIGINT".into(),
            SqlType::Numeric { precision, scale } => format!("DECIMAL({precision},{scale})"),
            SqlType::Real => "FLOAT".into(),
            SqlType::Double => "DOUBLE".into(),
            SqlType::Boolean => "BOOLEAN".into(),
            // PAD SPACE collation: trailing blanks are insignificant, as for bpchar.
            SqlType::Char(n) => format!("CHAR({n}) COLLATE utf8mb4_bin"),
            SqlType::Varchar(Some(n)) => format!("VARCHAR({n})"),
            SqlType::Varchar(None) | SqlType::Text => "LONGTEXT".into(),
            SqlType::Date => "DATE".into(),
            SqlType::Timestamp | SqlType::TimestampTz => "DATETIME(6)".into(),
            SqlType::Bytea => "LONGBLOB".into(),
        }
    }

    /// PostgreSQL type OID.
    pub fn pg_oid(&self) -> u32 {
        match self {
            SqlType::SmallInt => 21,
            SqlType::Integer => 23,
            SqlType::BigInt => 20,
            SqlType::Numeric { .. } => 1700,
            SqlType::Real => 700,
            SqlType::Double => 701,
            SqlType::Boolean => 16,
            SqlType::Char(_) => 1042,
            SqlType::Varchar(_) => 1043,
            SqlType::Text => 25,
            SqlType::Date => 1082,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::Bytea => 17,
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, SqlType::SmallInt | SqlType::Integer | SqlType::BigInt)
    }

    /// The integer, numeric and floating-point types.
    pub fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self,
                SqlType::Numeric { .. } | SqlType::Real | SqlType::Double
            )
    }

    pub fn is_string(&self) -> bool {
        matches!(self, SqlType::Char(_) | SqlType::Varchar(_) | SqlType::Text)
    }
}

impl std::fmt::Display for SqlType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SqlType::SmallInt => write!(f, "smallint"),
            SqlType::Integer => write!(f, "integer"),
            SqlType::BigInt => write!(f, "bigint"),
            SqlType::Numeric { precision, scale } => write!(f, "numeric({precision},{scale})"),
            SqlType::Real => write!(f, "real"),
            SqlType::Double => write!(f, "double precision"),
            SqlType::Boolean => write!(f, "boolean"),
            SqlType::Char(n) => write!(f, "character({n})"),
            SqlType::Varchar(Some(n)) => write!(f, "character varying({n})"),
            SqlType::Varchar(None) => write!(f, "character varying"),
            SqlType::Text => write!(f, "text"),
            SqlType::Date => write!(f, "date"),
            SqlType::Timestamp => write!(f, "timestamp without time zone"),
            SqlType::TimestampTz => write!(f, "timestamp with time zone"),
            SqlType::Bytea => write!(f, "bytea"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_round_trips() {
        for t in [
            SqlType::SmallInt,
            SqlType::Integer,
            SqlType::BigInt,
            SqlType::Numeric {
                precision: 12,
                scale: 2,
            },
            SqlType::Real,
            SqlType::Double,
            SqlType::Boolean,
            SqlType::Char(3),
            SqlType::Varchar(Some(20)),
            SqlType::Varchar(None),
            SqlType::Text,
            SqlType::Date,
            SqlType::Timestamp,
            SqlType::TimestampTz,
            SqlType::Bytea,
        ] {
            assert_eq!(SqlType::parse(&t.to_string()).unwrap(), t);
        }
    }
}
