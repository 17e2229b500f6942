//! The cluster's administrative functions, called as `SELECT f(...)`
//! without FROM (issue 33): `tessera_move_partition(table, partition,
//! to_shard)` moves one partition (with its co-location group) online, as
//! `tessera cluster move` does; `tessera_undo_move(move_id)` undoes a
//! switched move whose retired copy is kept, as `tessera cluster
//! undo-move`. Pure recognition here; `exec::admin` runs them.

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Query, SelectItem, SetExpr,
    Value,
};
use pgwire::api::Type;

use crate::plan::names::object_parts;

/// An administrative function call.
#[derive(Debug, Clone)]
pub enum AdminCall {
    /// table, partition, shard
    MovePartition(Box<[Expr; 3]>),
    UndoMove(Box<Expr>),
}

impl AdminCall {
    pub fn name(&self) -> &'static str {
        match self {
            AdminCall::MovePartition(_) => "tessera_move_partition",
            AdminCall::UndoMove(_) => "tessera_undo_move",
        }
    }
}

impl AdminCall {
    /// The types of the statement's parameters (`$n` as an argument, or
    /// cast): the table's name text, numbers bigint unless cast.
    pub fn param_types(&self) -> Vec<Type> {
        let args: Vec<(&Expr, Type)> = match self {
            AdminCall::MovePartition(a) => vec![
                (&a[0], Type::TEXT),
                (&a[1], Type::INT8),
                (&a[2], Type::INT8),
            ],
            AdminCall::UndoMove(id) => vec![(id, Type::INT8)],
        };
        let mut out: Vec<Type> = vec![];
        for (e, default) in args {
            let (inner, ty) = match e {
                Expr::Cast {
                    expr, data_type, ..
                } => (
                    expr.as_ref(),
                    match data_type {
                        DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => Type::INT4,
                        DataType::Text | DataType::Varchar(_) => Type::TEXT,
                        DataType::Custom(..) => Type::TEXT,
                        _ => Type::INT8,
                    },
                ),
                e => (e, default),
            };
            let Expr::Value(v) = inner else { continue };
            let Value::Placeholder(p) = &v.value else {
                continue;
            };
            let Some(n) = p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) else {
                continue;
            };
            if n == 0 || n > 16 {
                continue;
            }
            if out.len() < n {
                out.resize(n, Type::TEXT);
            }
            out[n - 1] = ty;
        }
        out
    }
}

/// The function `e` calls, if it is an administrative one.
fn admin_name(e: &Expr) -> Option<String> {
    let Expr::Function(f) = e else { return None };
    let parts = object_parts(&f.name);
    let n = parts.last()?;
    (matches!(n.as_str(), "tessera_move_partition" | "tessera_undo_move")
        && (parts.len() == 1 || parts[0] == "pg_catalog"))
        .then(|| n.clone())
}

/// Whether `q` is a SELECT list that calls an administrative function.
pub fn calls_admin_function(q: &Query) -> bool {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return false;
    };
    s.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            admin_name(e).is_some()
        }
        _ => false,
    })
}

/// `SELECT f(...) [AS alias]`: the call and its result column's name.
pub fn admin_select(q: &Query) -> Result<(String, AdminCall)> {
    let refuse = || {
        Error::unsupported(
            "tessera_move_partition and tessera_undo_move alone in a SELECT without FROM",
        )
    };
    let s = crate::plan::sequence::bare_select(q)
        .filter(|s| s.projection.len() == 1)
        .ok_or_else(refuse)?;
    let (e, alias) = match &s.projection[0] {
        SelectItem::UnnamedExpr(e) => (e, None),
        SelectItem::ExprWithAlias { expr, alias } => {
            (expr, Some(shard_router::sql::normalize_ident(alias)))
        }
        _ => return Err(refuse()),
    };
    let name = admin_name(e).ok_or_else(refuse)?;
    let Expr::Function(f) = e else {
        return Err(refuse());
    };
    let mut args = vec![];
    if let FunctionArguments::List(l) = &f.args {
        for a in &l.args {
            match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e.clone()),
                _ => return Err(Error::unsupported(format!("this argument of {name}()"))),
            }
        }
    }
    let call = match (name.as_str(), args.as_slice()) {
        ("tessera_move_partition", [t, p, to]) => {
            AdminCall::MovePartition(Box::new([t.clone(), p.clone(), to.clone()]))
        }
        ("tessera_undo_move", [id]) => AdminCall::UndoMove(Box::new(id.clone())),
        _ => {
            return Err(Error::Sql {
                state: SqlState::UNDEFINED_FUNCTION,
                message: format!(
                    "function {name} with {} arguments does not exist",
                    args.len()
                ),
            })
        }
    };
    Ok((alias.unwrap_or(name), call))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::ast::Statement;

    fn query(sql: &str) -> Query {
        match crate::dialect::parse(sql).expect("parse").remove(0) {
            Statement::Query(q) => *q,
            other => panic!("not a query: {other}"),
        }
    }

    #[test]
    fn admin_calls_are_recognised_alone() {
        let q = query("SELECT tessera_move_partition('t', 3, 4)");
        assert!(calls_admin_function(&q));
        let (col, call) = admin_select(&q).expect("a call");
        assert_eq!(col, "tessera_move_partition");
        assert!(matches!(call, AdminCall::MovePartition(_)));
        let (col, call) =
            admin_select(&query("SELECT pg_catalog.tessera_undo_move($1) AS r")).expect("a call");
        assert_eq!(col, "r");
        assert!(matches!(call, AdminCall::UndoMove(_)));
        assert!(!calls_admin_function(&query("SELECT now()")));
        assert!(admin_select(&query("SELECT tessera_undo_move(1) FROM t")).is_err());
        assert!(admin_select(&query("SELECT tessera_undo_move(1), 2")).is_err());
        let wrong = admin_select(&query("SELECT tessera_undo_move()")).unwrap_err();
        assert!(wrong.to_string().contains("0 arguments"), "{wrong}");
    }
}
