//! Literals that meet a column, typed the way PostgreSQL types them before
//! a statement goes to a shard.
//!
//! PostgreSQL reads a quoted literal compared with a column (`id = '7'`,
//! `d BETWEEN '2024-01-01' AND '2024-02-01'`, `flag IN ('t', 'f')`) as a
//! value of the column's type and rejects one that does not parse
//! (`id = 'abc'` is 22P02). MariaDB instead converts the string at
//! comparison time with its own rules (`'abc'` becomes 0, `'t'` is not
//! true, a timestamp with a zone offset is compared as text), which would
//! answer such statements differently. [`type_literals`] parses each such
//! literal as the column's type and rewrites it into the literal MariaDB
//! reads as that exact value; a number compared with a text, boolean, date
//! or bytea column is rejected as PostgreSQL rejects it (42883).

use std::ops::ControlFlow;

use common::{Datum, Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{visit_expressions_mut, BinaryOperator, Expr, Value};
use meta::TableDef;

use super::ident::normalize_ident;

/// The type of the table column `e` names, if it names one.
fn column_type(e: &Expr, table: &TableDef) -> Option<SqlType> {
    let name = match e {
        Expr::Identifier(i) => normalize_ident(i),
        Expr::CompoundIdentifier(parts) => normalize_ident(parts.last()?),
        Expr::Nested(inner) => return column_type(inner, table),
        _ => return None,
    };
    table.column_index(&name).map(|i| table.columns[i].ty)
}

/// The literal MariaDB reads as exactly `d`.
fn mariadb_literal(d: Datum) -> Result<Value> {
    use storage_adapter::convert::{temporal_text, to_sql_literal};
    let unsupported = |d: &Datum| {
        Error::unsupported(format!(
            "comparing a column with the value {d:?} on a shard"
        ))
    };
    Ok(match d {
        Datum::Null => Value::Null,
        Datum::Bool(b) => Value::Boolean(b),
        Datum::Text(s) => Value::SingleQuotedString(s),
        Datum::Bytes(b) => {
            Value::HexStringLiteral(b.iter().map(|byte| format!("{byte:02X}")).collect())
        }
        Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_) => {
            Value::SingleQuotedString(temporal_text(&d).ok_or_else(|| unsupported(&d))?)
        }
        // Integers and decimals exactly, doubles in exponent form (MariaDB
        // reads that as an approximate value).
        Datum::Int(_) | Datum::Decimal(_) | Datum::Float(_) => {
            Value::Number(to_sql_literal(&d).ok_or_else(|| unsupported(&d))?, false)
        }
    })
}

/// Types `lit` as a value of `ty` where PostgreSQL would. `op` is the
/// comparison operator, `None` for an assignment (`SET col = lit`), where
/// PostgreSQL also converts a number to text.
fn type_literal(lit: &mut Expr, ty: &SqlType, op: Option<&str>) -> Result<()> {
    let assignment = op.is_none();
    let Expr::Value(v) = lit else {
        return Ok(());
    };
    match &v.value {
        Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => {
            if ty.is_string() {
                return Ok(());
            }
            let d = Datum::parse(s, ty)?;
            v.value = mariadb_literal(d)?;
        }
        Value::Number(n, _) if !(ty.is_numeric() || assignment && ty.is_string()) => {
            let number = if n.parse::<i64>().is_ok() {
                "integer"
            } else {
                "numeric"
            };
            return Err(if assignment {
                Error::TypeMismatch {
                    message: format!("column is of type {ty} but expression is of type {number}"),
                }
            } else {
                Error::UndefinedOperator {
                    message: format!(
                        "operator does not exist: {ty} {} {number}",
                        op.unwrap_or("=")
                    ),
                }
            });
        }
        _ => {}
    }
    Ok(())
}

fn is_comparison(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::Eq
            | BinaryOperator::NotEq
            | BinaryOperator::Lt
            | BinaryOperator::LtEq
            | BinaryOperator::Gt
            | BinaryOperator::GtEq
    )
}

/// Rewrites, in place, every literal compared with a column of `table` in
/// `e` (`=`, `<>`, `<`, `<=`, `>`, `>=`, `IN`, `BETWEEN`) into the MariaDB
/// literal of the value PostgreSQL reads; fails with 22P02 on a literal that
/// is not a value of the column's type and 42883 on a number compared with
/// a non-numeric column.
pub fn type_literals(e: &mut Expr, table: &TableDef) -> Result<()> {
    let mut err = None;
    let _ = visit_expressions_mut(e, |x| {
        let r = match x {
            Expr::BinaryOp { left, op, right } if is_comparison(op) => {
                match (column_type(left, table), column_type(right, table)) {
                    (Some(ty), None) => type_literal(right, &ty, Some(&op.to_string())),
                    (None, Some(ty)) => type_literal(left, &ty, Some(&op.to_string())),
                    // PostgreSQL reads the timestamp as local time in the
                    // session's zone; the shard compares stored UTC.
                    (Some(a), Some(b))
                        if matches!(
                            (a, b),
                            (SqlType::Timestamp, SqlType::TimestampTz)
                                | (SqlType::TimestampTz, SqlType::Timestamp)
                        ) && !common::tz::session_zone().is_utc() =>
                    {
                        Err(Error::unsupported(
                            "comparing timestamp with and without time zone in a session time zone other than UTC",
                        ))
                    }
                    _ => Ok(()),
                }
            }
            Expr::InList { expr, list, .. } => match column_type(expr, table) {
                Some(ty) => list
                    .iter_mut()
                    .try_for_each(|item| type_literal(item, &ty, Some("="))),
                None => Ok(()),
            },
            Expr::Between {
                expr, low, high, ..
            } => match column_type(expr, table) {
                Some(ty) => type_literal(low, &ty, Some(">="))
                    .and_then(|_| type_literal(high, &ty, Some("<="))),
                None => Ok(()),
            },
            _ => Ok(()),
        };
        match r {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                err = Some(e);
                ControlFlow::Break(())
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Types a literal assigned to a column (`UPDATE ... SET col = lit`).
pub fn type_assigned_literal(value: &mut Expr, ty: &SqlType) -> Result<()> {
    type_literal(value, ty, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::TableId;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    use meta::{ColumnDef, Distribution};

    fn table() -> TableDef {
        let col = |name: &str, ty: SqlType| ColumnDef {
            name: name.into(),
            ty,
            not_null: false,
            default: None,
            sequence: None,
            identity: None,
        };
        TableDef {
            id: TableId(1),
            schema: "public".into(),
            name: "t".into(),
            columns: vec![
                col("id", SqlType::BigInt),
                col("flag", SqlType::Boolean),
                col("name", SqlType::Text),
                col("ts", SqlType::TimestampTz),
                col("b", SqlType::Bytea),
                col(
                    "n",
                    SqlType::Numeric {
                        precision: 10,
                        scale: 2,
                    },
                ),
            ],
            primary_key: vec!["id".into()],
            distribution: Distribution::Hash {
                columns: vec!["id".into()],
                partitions: 3,
            },
            indexes: vec![],
        }
    }

    fn typed(where_: &str) -> Result<String> {
        let mut e = Parser::new(&PostgreSqlDialect {})
            .try_with_sql(where_)
            .and_then(|mut p| p.parse_expr())
            .map_err(Error::internal)?;
        type_literals(&mut e, &table())?;
        Ok(e.to_string())
    }

    #[test]
    fn literals_take_the_column_type() {
        assert_eq!(typed("id = '7'").unwrap(), "id = 7");
        assert_eq!(typed("'7' = id").unwrap(), "7 = id");
        assert_eq!(typed("id IN ('1', ' 2 ', 3)").unwrap(), "id IN (1, 2, 3)");
        assert_eq!(typed("flag = 't'").unwrap(), "flag = true");
        assert_eq!(
            typed("flag IN ('yes', 'off')").unwrap(),
            "flag IN (true, false)"
        );
        assert_eq!(
            typed("ts BETWEEN '2024-01-01 02:00:00+02' AND '2024-01-02'").unwrap(),
            "ts BETWEEN '2024-01-01 00:00:00.000000' AND '2024-01-02 00:00:00.000000'"
        );
        assert_eq!(typed("b = '\\x6869'").unwrap(), "b = X'6869'");
        assert_eq!(typed("n >= '1.50'").unwrap(), "n >= 1.50");
        // Text columns and non-literal sides are left alone.
        assert_eq!(
            typed("name = 'abc' AND id = id + 1").unwrap(),
            "name = 'abc' AND id = id + 1"
        );
        // Numbers against numeric columns stay as written.
        assert_eq!(typed("id = 5.5").unwrap(), "id = 5.5");
    }

    /// A typed value can be negative: the renderer takes its sign (it
    /// refused `-5` as a numeral before, so `id = '-5'` failed with 42601
    /// where PostgreSQL answers).
    #[test]
    fn negative_typed_values_render() {
        let mut stmt = Parser::parse_sql(
            &PostgreSqlDialect {},
            "SELECT id FROM t WHERE id = '-5' AND n > '-1.50' AND n < '-1e3'",
        )
        .unwrap()
        .remove(0);
        let datafusion::sql::sqlparser::ast::Statement::Query(q) = &mut stmt else {
            panic!("not a query");
        };
        let datafusion::sql::sqlparser::ast::SetExpr::Select(sel) = q.body.as_mut() else {
            panic!("not a select");
        };
        type_literals(sel.selection.as_mut().unwrap(), &table()).unwrap();
        let (sql, _) = super::super::render(&stmt, "public", "t_p0").unwrap();
        assert_eq!(
            sql,
            "SELECT \"id\" FROM \"tsr_public\".\"t_p0\" WHERE (((\"id\" = -5) AND (\"n\" > -1.50)) AND (\"n\" < -1000))"
        );
    }

    #[test]
    fn literals_that_are_not_values_of_the_type_fail_like_postgres() {
        let e = typed("id = 'abc'").unwrap_err();
        assert_eq!(e.sqlstate().code(), "22P02", "{e}");
        let e = typed("id IN (1, '2x')").unwrap_err();
        assert_eq!(e.sqlstate().code(), "22P02", "{e}");
        let e = typed("flag = 'maybe'").unwrap_err();
        assert_eq!(e.sqlstate().code(), "22P02", "{e}");
        let e = typed("name = 5").unwrap_err();
        assert_eq!(e.sqlstate().code(), "42883", "{e}");
        let e = typed("flag = 1").unwrap_err();
        assert_eq!(e.sqlstate().code(), "42883", "{e}");
    }
}
