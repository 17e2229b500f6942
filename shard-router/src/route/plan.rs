//! Routing: which partitions a statement must touch. Decisions are named
//! variants, pinned by the golden tests below.

use std::collections::BTreeMap;

use common::{hash, Datum, Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr, UnaryOperator, Value};
use meta::{Distribution, TableDef};

use crate::sql::{eval_const, normalize_ident, placeholder_index};

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

fn column_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(i) => Some(normalize_ident(i)),
        Expr::CompoundIdentifier(parts) => parts.last().map(normalize_ident),
        Expr::Nested(inner) => column_name(inner),
        _ => None,
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
            // One value per key column (a point statement): its partition,
            // without the pruner's combinations.
            RoutePlan::Keys(per_key) if per_key.iter().all(|vals| vals.len() == 1) => {
                let mut key = Vec::with_capacity(per_key.len());
                for (vals, i) in per_key.iter().zip(table.key_columns()) {
                    match eval_key(&vals[0], params, &table.columns[i].ty) {
                        Ok(d) => key.push(d),
                        // As below: look everywhere, the shard compares.
                        Err(_) => return Ok(Route::Scatter),
                    }
                }
                if key.len() != per_key.len() {
                    return Ok(Route::Scatter);
                }
                Ok(Route::SinglePartition(hash::partition_of(
                    &key,
                    table.hash_partitions(),
                )))
            }
            RoutePlan::Keys(per_key) => {
                let key_types: Vec<SqlType> =
                    table.key_columns().map(|i| table.columns[i].ty).collect();
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
                let Some(parts) = super::partition::prune(table, &values) else {
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
