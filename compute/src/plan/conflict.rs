//! `INSERT ... ON CONFLICT`: PostgreSQL's arbiter (the conflict target must
//! be the primary key or a unique constraint, 42P10), its action as MariaDB
//! runs it (`shard_router::route::OnConflict`), and where the two would
//! answer differently, 0A000: MariaDB resolves a conflict on any unique
//! key, so a target among several is refused; `INSERT IGNORE` would also
//! skip foreign-key failures, so DO NOTHING on a table with enforced keys
//! is refused; `ON DUPLICATE KEY UPDATE` assigns left to right (a later
//! assignment sees an earlier one's value, PostgreSQL's all see the old
//! row), so an assignment reading a column assigned before it is refused.
//! With RETURNING the shards give back the rows as they stand afterwards
//! (`Session::write_returning`).

use common::{Datum, Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    AssignmentTarget, BinaryOperator, ConflictTarget, Expr, OnConflictAction, OnInsert,
};
use meta::{Catalog, TableDef};
use shard_router::route::{OnConflict, UpdateValue};
use shard_router::sql::normalize_ident;

use crate::plan::{object_parts, InsertPlan};

fn value(e: &Expr, table: &TableDef, alias: &str) -> Result<UpdateValue> {
    let column = |c: &str| -> Result<String> {
        table
            .column(c)
            .map(|_| c.to_string())
            .map_err(|_| Error::Sql {
                state: SqlState::UNDEFINED_COLUMN,
                message: format!("column \"{c}\" does not exist"),
            })
    };
    Ok(match e {
        Expr::Nested(e) => value(e, table, alias)?,
        Expr::Identifier(i) => UpdateValue::Current(column(&normalize_ident(i))?),
        Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
            let q = normalize_ident(&parts[0]);
            let c = column(&normalize_ident(&parts[1]))?;
            if q == "excluded" {
                UpdateValue::Excluded(c)
            } else if q == alias {
                UpdateValue::Current(c)
            } else {
                return Err(Error::Sql {
                    state: SqlState("42P01"),
                    message: format!("missing FROM-clause entry for table \"{q}\""),
                });
            }
        }
        Expr::Value(v) => match &v.value {
            datafusion::sql::sqlparser::ast::Value::Placeholder(p) => UpdateValue::Param(
                shard_router::sql::placeholder_index(p)
                    .ok_or_else(|| Error::unsupported("this parameter"))?,
            ),
            _ => UpdateValue::Const(shard_router::sql::eval_const(e, &[])?),
        },
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Plus => '+',
                BinaryOperator::Minus => '-',
                BinaryOperator::Multiply => '*',
                other => {
                    return Err(Error::unsupported(format!(
                        "operator {other} in ON CONFLICT DO UPDATE SET"
                    )))
                }
            };
            UpdateValue::Arith(
                op,
                Box::new(value(left, table, alias)?),
                Box::new(value(right, table, alias)?),
            )
        }
        other => {
            return Err(Error::unsupported(format!(
                "the expression {other} in ON CONFLICT DO UPDATE SET (columns, EXCLUDED columns, constants, + - *)"
            )))
        }
    })
}

fn reads(v: &UpdateValue, c: &str) -> bool {
    match v {
        UpdateValue::Current(x) => x == c,
        UpdateValue::Arith(_, a, b) => reads(a, c) || reads(b, c),
        _ => false,
    }
}

/// The action and arbiter key (column indexes) of an ON CONFLICT clause.
pub fn on_conflict(
    on: &OnInsert,
    table: &TableDef,
    catalog: &Catalog,
    alias: &str,
) -> Result<(OnConflict, Vec<usize>)> {
    let OnInsert::OnConflict(oc) = on else {
        return Err(Error::unsupported("ON DUPLICATE KEY UPDATE (MySQL's)"));
    };
    let mut keys: Vec<(String, Vec<String>)> = vec![];
    if !table.primary_key.is_empty() {
        keys.push((format!("{}_pkey", table.name), table.primary_key.clone()));
    }
    for ix in table.indexes.iter().filter(|i| i.unique) {
        keys.push((ix.name.clone(), ix.columns.clone()));
    }
    let arbiter: Option<Vec<String>> = match &oc.conflict_target {
        None => None,
        Some(ConflictTarget::Columns(cols)) => {
            let cols: Vec<String> = cols.iter().map(normalize_ident).collect();
            let found = keys
                .iter()
                .find(|(_, k)| k.len() == cols.len() && k.iter().all(|c| cols.contains(c)));
            match found {
                Some((_, k)) => Some(k.clone()),
                None => {
                    return Err(Error::Sql {
                        state: SqlState("42P10"),
                        message: "there is no unique or exclusion constraint matching the ON CONFLICT specification".into(),
                    })
                }
            }
        }
        Some(ConflictTarget::OnConstraint(name)) => {
            let n = object_parts(name).last().cloned().unwrap_or_default();
            match keys.iter().find(|(k, _)| *k == n) {
                Some((_, k)) => Some(k.clone()),
                None => {
                    return Err(Error::Sql {
                        state: SqlState::UNDEFINED_OBJECT,
                        message: format!(
                            "constraint \"{n}\" for table \"{}\" does not exist",
                            table.name
                        ),
                    })
                }
            }
        }
    };
    if arbiter.is_some() && keys.len() > 1 {
        return Err(Error::unsupported(
            "ON CONFLICT on one of several unique constraints of a table (the shards resolve a conflict on any of them)",
        ));
    }
    match &oc.action {
        OnConflictAction::DoNothing => {
            if catalog
                .foreign_keys_of(table.id, true)
                .iter()
                .any(|f| f.enforcement != meta::Enforcement::Recorded)
            {
                return Err(Error::unsupported(
                    "ON CONFLICT DO NOTHING on a table with foreign keys",
                ));
            }
            Ok((OnConflict::Ignore, vec![]))
        }
        OnConflictAction::DoUpdate(du) => {
            let Some(arbiter) = arbiter else {
                return Err(Error::Sql {
                    state: SqlState("42601"),
                    message:
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name"
                            .into(),
                });
            };
            if du.selection.is_some() {
                return Err(Error::unsupported("ON CONFLICT DO UPDATE ... WHERE"));
            }
            let key = table.key_indexes();
            let mut set: Vec<(String, UpdateValue)> = vec![];
            for a in &du.assignments {
                let AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(Error::unsupported(
                        "a tuple assignment in ON CONFLICT DO UPDATE",
                    ));
                };
                let c = object_parts(n).last().cloned().unwrap_or_default();
                let i = table.column_index(&c).ok_or_else(|| Error::Sql {
                    state: SqlState::UNDEFINED_COLUMN,
                    message: format!(
                        "column \"{c}\" of relation \"{}\" does not exist",
                        table.name
                    ),
                })?;
                if key.contains(&i) {
                    return Err(Error::unsupported(
                        "ON CONFLICT DO UPDATE of a partition key column",
                    ));
                }
                let v = value(&a.value, table, alias)?;
                for (prev, _) in &set {
                    if reads(&v, prev) {
                        return Err(Error::unsupported(format!(
                            "ON CONFLICT DO UPDATE reading column \"{prev}\" after assigning it"
                        )));
                    }
                }
                set.push((c, v));
            }
            let idx = arbiter
                .iter()
                .filter_map(|c| table.column_index(c))
                .collect();
            Ok((OnConflict::Update(set), idx))
        }
    }
}

/// The plan's action with parameters bound; for DO UPDATE, 21000 when two
/// rows of the statement share an arbiter key.
pub fn bind(p: &InsertPlan, rows: &[Vec<Datum>], params: &[Datum]) -> Result<OnConflict> {
    Ok(match &p.on_conflict {
        OnConflict::Update(set) => {
            let mut seen = std::collections::HashSet::new();
            for r in rows {
                let key = format!(
                    "{:?}",
                    p.conflict_key.iter().map(|i| &r[*i]).collect::<Vec<_>>()
                );
                if !seen.insert(key) {
                    return Err(Error::Sql {
                        state: SqlState("21000"),
                        message: "ON CONFLICT DO UPDATE command cannot affect row a second time"
                            .into(),
                    });
                }
            }
            OnConflict::Update(
                set.iter()
                    .map(|(c, v)| Ok((c.clone(), v.bind(params)?)))
                    .collect::<Result<_>>()?,
            )
        }
        other => other.clone(),
    })
}

/// The row count PostgreSQL reports: every row for DO UPDATE (inserted or
/// updated), the rows inserted for DO NOTHING (what the shards wrote; a
/// mirror table's copies each count), all rows otherwise.
pub fn inserted(placement: &meta::Placement, p: &InsertPlan, rows: usize, written: u64) -> usize {
    match p.on_conflict {
        OnConflict::Ignore => {
            let copies = if matches!(p.table.distribution, meta::Distribution::Mirror) {
                placement.partition_count(&p.table).unwrap_or(1).max(1) as u64
            } else {
                1
            };
            (written / copies) as usize
        }
        _ => rows,
    }
}
