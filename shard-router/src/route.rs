//! Routing: which partitions a statement must touch. Decisions are named
//! variants, pinned by the golden tests below.

use std::collections::BTreeMap;

use common::{hash, Datum, Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{BinaryOperator, CastKind, Expr, UnaryOperator, Value};
use meta::{Distribution, TableDef};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Exactly one partition (equality on the whole partition key).
    SinglePartition(u32),
    /// A set of partitions (IN lists on the key).
    Partitions(Vec<u32>),
    /// Every partition.
    Scatter,
    /// A mirror table: reads go to any one copy, writes to all.
    Mirror,
}

/// A value that will be known at execution: a literal or a parameter.
#[derive(Debug, Clone)]
pub enum KeyValue {
    Literal(Box<Expr>),
    Param(usize),
}

/// Route facts derived once from a WHERE clause, resolved per execution.
#[derive(Debug, Clone)]
pub enum RoutePlan {
    /// Candidate values per partition key column.
    Keys(Vec<Vec<KeyValue>>),
    Scatter,
    Mirror,
    Single,
}

pub use crate::partition::MAX_ROUTE_COMBOS;

/// Returns the 0-based index of a `$n` placeholder.
pub fn placeholder_index(s: &str) -> Option<usize> {
    s.strip_prefix('$')?.parse::<usize>().ok()?.checked_sub(1)
}

fn column_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(i) => Some(normalize_ident(i)),
        Expr::CompoundIdentifier(parts) => parts.last().map(normalize_ident),
        Expr::Nested(inner) => column_name(inner),
        _ => None,
    }
}

/// PostgreSQL identifier folding: unquoted names are lower-cased.
pub fn normalize_ident(i: &datafusion::sql::sqlparser::ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

fn key_value(e: &Expr) -> Option<KeyValue> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Placeholder(p) => placeholder_index(p).map(KeyValue::Param),
            Value::Number(..) | Value::SingleQuotedString(_) | Value::Boolean(_) => {
                Some(KeyValue::Literal(Box::new(e.clone())))
            }
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } if matches!(**expr, Expr::Value(_)) => Some(KeyValue::Literal(Box::new(e.clone()))),
        Expr::Cast { expr, .. } => match key_value(expr)? {
            KeyValue::Param(i) => Some(KeyValue::Param(i)),
            KeyValue::Literal(_) => Some(KeyValue::Literal(Box::new(e.clone()))),
        },
        Expr::Nested(inner) => key_value(inner),
        _ => None,
    }
}

/// Collects `col = value` and `col IN (values)` conjuncts.
fn collect(e: &Expr, out: &mut Vec<(String, Vec<KeyValue>)>) {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            collect(left, out);
            collect(right, out);
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } => {
            if let (Some(c), Some(v)) = (column_name(left), key_value(right)) {
                out.push((c, vec![v]));
            } else if let (Some(c), Some(v)) = (column_name(right), key_value(left)) {
                out.push((c, vec![v]));
            }
        }
        Expr::InList {
            expr,
            list,
            negated: false,
        } => {
            if let Some(c) = column_name(expr) {
                let vals: Option<Vec<KeyValue>> = list.iter().map(key_value).collect();
                if let Some(vals) = vals {
                    out.push((c, vals));
                }
            }
        }
        Expr::Nested(inner) => collect(inner, out),
        _ => {}
    }
}

impl RoutePlan {
    /// Derives the route plan of a statement on `table` with this WHERE.
    pub fn from_where(table: &TableDef, selection: Option<&Expr>) -> RoutePlan {
        let columns = match &table.distribution {
            Distribution::Hash { columns, .. } => columns,
            Distribution::Mirror => return RoutePlan::Mirror,
            Distribution::Single => return RoutePlan::Single,
        };
        let Some(sel) = selection else {
            return RoutePlan::Scatter;
        };
        let mut found = vec![];
        collect(sel, &mut found);
        let mut per_key = vec![];
        for key in columns {
            match found.iter().find(|(c, _)| c == key) {
                Some((_, vals)) => per_key.push(vals.clone()),
                None => return RoutePlan::Scatter,
            }
        }
        RoutePlan::Keys(per_key)
    }

    /// Resolves the route with this execution's parameters.
    pub fn resolve(&self, table: &TableDef, params: &[Datum]) -> Result<Route> {
        match self {
            RoutePlan::Scatter => Ok(Route::Scatter),
            RoutePlan::Mirror => Ok(Route::Mirror),
            RoutePlan::Single => Ok(Route::SinglePartition(0)),
            RoutePlan::Keys(per_key) => {
                let key_types: Vec<SqlType> = table
                    .key_indexes()
                    .iter()
                    .map(|i| table.columns[*i].ty)
                    .collect();
                let mut values = Vec::with_capacity(per_key.len());
                for (vals, ty) in per_key.iter().zip(&key_types) {
                    let mut typed = Vec::with_capacity(vals.len());
                    for v in vals {
                        match eval_key(v, params, ty) {
                            Ok(d) => typed.push(d),
                            // A value that cannot be of the key's type
                            // cannot be routed: look everywhere and let
                            // the shard compare.
                            Err(_) => return Ok(Route::Scatter),
                        }
                    }
                    values.push(typed);
                }
                let Some(parts) = crate::partition::prune(table, &values) else {
                    return Ok(Route::Scatter);
                };
                Ok(match parts.len() {
                    1 => Route::SinglePartition(parts.into_iter().next().unwrap_or(0)),
                    _ => Route::Partitions(parts.into_iter().collect()),
                })
            }
        }
    }
}

fn eval_key(v: &KeyValue, params: &[Datum], ty: &SqlType) -> Result<Datum> {
    match v {
        KeyValue::Param(i) => params
            .get(*i)
            .cloned()
            .ok_or_else(|| Error::InvalidParameter {
                message: format!("there is no parameter ${}", i + 1),
            })?
            .coerce(ty),
        KeyValue::Literal(e) => eval_const(e, params)?.coerce(ty),
    }
}

/// Groups full table rows (in column order) by the partition that stores
/// them; a mirror table's rows go to every copy.
pub fn rows_by_partition(
    placement: &meta::Placement,
    table: &TableDef,
    rows: &[Vec<Datum>],
) -> common::Result<BTreeMap<u32, Vec<usize>>> {
    let mut by_part: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    match &table.distribution {
        Distribution::Hash { .. } => {
            let keys = table.key_indexes();
            let n = table.hash_partitions();
            for (i, r) in rows.iter().enumerate() {
                let p = hash::partition_of(keys.iter().map(|k| &r[*k]), n);
                by_part.entry(p).or_default().push(i);
            }
        }
        Distribution::Single => {
            by_part.insert(0, (0..rows.len()).collect());
        }
        Distribution::Mirror => {
            for p in 0..placement.partition_count(table)? {
                by_part.insert(p, (0..rows.len()).collect());
            }
        }
    }
    Ok(by_part)
}

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
                    .or_else(|_| Datum::parse(n, &SqlType::Double))
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

#[cfg(test)]
mod tests {
    use super::*;
    use common::TableId;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    use meta::ColumnDef;

    fn table() -> TableDef {
        TableDef {
            id: TableId(1),
            schema: "public".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: SqlType::Integer,
                    not_null: true,
                    default: None,
                    sequence: None,
                    identity: None,
                },
                ColumnDef {
                    name: "v".into(),
                    ty: SqlType::Text,
                    not_null: false,
                    default: None,
                    sequence: None,
                    identity: None,
                },
            ],
            primary_key: vec!["id".into()],
            distribution: Distribution::Hash {
                columns: vec!["id".into()],
                partitions: 3,
            },
            indexes: vec![],
        }
    }

    fn route(where_sql: &str, params: &[Datum]) -> Route {
        let e = Parser::new(&PostgreSqlDialect {})
            .try_with_sql(where_sql)
            .unwrap()
            .parse_expr()
            .unwrap();
        let t = table();
        RoutePlan::from_where(&t, Some(&e))
            .resolve(&t, params)
            .unwrap()
    }

    #[test]
    fn golden_routes() {
        let p5 = hash::partition_of(&[Datum::Int(5)], 3);
        assert_eq!(route("id = 5", &[]), Route::SinglePartition(p5));
        assert_eq!(route("5 = id AND v = 'x'", &[]), Route::SinglePartition(p5));
        assert_eq!(
            route("id = $1", &[Datum::Int(5)]),
            Route::SinglePartition(p5)
        );
        assert_eq!(
            route("id = $1", &[Datum::Text("5".into())]),
            Route::SinglePartition(p5)
        );
        assert_eq!(route("id = 5::bigint", &[]), Route::SinglePartition(p5));
        assert_eq!(route("id = '5'", &[]), Route::SinglePartition(p5));
        assert_eq!(route("id > 5", &[]), Route::Scatter);
        assert_eq!(route("id = 5 OR id = 6", &[]), Route::Scatter);
        assert_eq!(route("v = 'a'", &[]), Route::Scatter);
        match route("id IN (1, 2, 3, 4, 5, 6, 7, 8, 9)", &[]) {
            Route::Partitions(p) => assert_eq!(p.len(), 3),
            other => panic!("{other:?}"),
        }
    }
}
