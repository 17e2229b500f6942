//! Queries: the single-table fast path (rendered per partition, merged on
//! the node) or the DataFusion path, FOR UPDATE / FOR SHARE.

use std::sync::Arc;

use common::{Error, Result, SqlType};
use datafusion::sql::sqlparser::ast::{
    Expr, GroupByExpr, ObjectName, Query, Select, SelectItem, SetExpr, Statement, TableFactor,
    Value,
};
use meta::TableDef;
use pgwire::api::Type;
use shard_router::route::RoutePlan;
use shard_router::sql::is_safe_expr;
use shard_router::sql::type_literals;
use shard_router::sql::{normalize_ident, placeholder_index};

use super::dml::{check_columns, fast_item_type, infer_params, param_types, per_partition_sql};
use super::*;
use crate::pgtypes::pg_type;

impl Planner<'_> {
    pub(crate) fn plan_query(&self, mut q: Box<Query>) -> Result<Plan> {
        if let Some(fast) = self.try_fast_select(&q)? {
            return Ok(fast);
        }
        let lock = lock_clause(&q)?;
        q.locks.clear();
        Ok(self.plan_of(
            PlanKind::DataFusion(Arc::new(Statement::Query(q)), lock),
            "SELECT",
        ))
    }

    /// A SELECT that one partition can answer exactly as PostgreSQL would.
    pub(crate) fn try_fast_select(&self, q: &Query) -> Result<Option<Plan>> {
        let Some(select) = fast_query_shape(q) else {
            return Ok(None);
        };
        let Some(name) = single_table(select) else {
            return Ok(None);
        };
        let Ok(table) = resolve_table(self.catalog, name, self.schema) else {
            return Ok(None);
        };
        if !plain_select(select) {
            return Ok(None);
        }
        let mut selection = select.selection.clone();
        if let Some(sel) = &mut selection {
            if !is_safe_expr(sel) || check_columns(sel, &table).is_err() {
                return Ok(None);
            }
            // Literals meeting a column take its type before MariaDB sees
            // them (`id = 'abc'` fails here with 22P02, as in PostgreSQL).
            type_literals(sel, &table)?;
        }
        let route = RoutePlan::from_where(&table, selection.as_ref());
        let Some(projection) = fast_projection(select, &table) else {
            return Ok(None);
        };
        // ORDER BY beside aggregates is PostgreSQL's grouping error, which
        // DataFusion's plan raises.
        let aggregates = projection.aggs.iter().any(|a| a.is_some());
        if !order_by_fits(q, select, &table)
            || !limit_fits(q)
            || (aggregates && q.order_by.is_some())
        {
            return Ok(None);
        }
        let merge = merge_of(q, select, &projection.sources, &projection.aggs);
        if !routes_to_one(&route) && merge.is_none() {
            return Ok(None);
        }
        let Some(sql) = fast_sql(&self.catalog.placement, q, &table, selection)? else {
            return Ok(None);
        };
        let ptypes = self.fast_param_types(q, select, &table, &sql);
        let origins = projection
            .sources
            .iter()
            .map(|src| {
                src.as_ref()
                    .and_then(|c| table.column_index(c))
                    .and_then(|i| super::origins::of_column(&table, i))
            })
            .collect();
        Ok(Some(Plan {
            kind: PlanKind::FastSelect(Arc::new(FastSelect {
                table,
                route,
                sql,
                types: projection.types,
                merge,
                locking: !q.locks.is_empty(),
                read_micros: Default::default(),
            })),
            param_types: ptypes,
            fields: projection.fields,
            tag: "SELECT",
            catalog_version: self.catalog.version,
            described: Default::default(),
            logical: None,
            origins,
        }))
    }

    /// The parameter types of a fast-path SELECT: inferred from the columns
    /// they meet in WHERE, else the client's, else text; LIMIT/OFFSET
    /// parameters bigint.
    fn fast_param_types(
        &self,
        q: &Query,
        select: &Select,
        table: &TableDef,
        sql: &[(String, Vec<usize>)],
    ) -> Vec<Type> {
        let mut inferred = vec![];
        if let Some(sel) = &select.selection {
            infer_params(sel, table, &mut inferred);
        }
        let n = sql
            .first()
            .map(|(_, o)| o.iter().map(|i| i + 1).max().unwrap_or(0))
            .unwrap_or(0);
        let mut ptypes = param_types(n, &inferred, self.client_types);
        // LIMIT/OFFSET parameters are bigint.
        for (i, t) in ptypes.iter_mut().enumerate() {
            if inferred.get(i).cloned().flatten().is_none() && *t == Type::TEXT {
                if let Some(limit) = &q.limit_clause {
                    if limit.to_string().contains(&format!("${}", i + 1)) {
                        *t = Type::INT8;
                    }
                }
            }
        }
        ptypes
    }
}

/// The SELECT of a query whose shape the fast path may take: no WITH or
/// FETCH, at most one `FOR UPDATE [NOWAIT | SKIP LOCKED]` (it renders as is
/// for MariaDB), a plain SELECT body.
fn fast_query_shape(q: &Query) -> Option<&Select> {
    if q.with.is_some() || q.fetch.is_some() {
        return None;
    }
    if q.locks.len() > 1
        || q.locks.iter().any(|l| {
            l.of.is_some() || l.lock_type != datafusion::sql::sqlparser::ast::LockType::Update
        })
    {
        return None;
    }
    match q.body.as_ref() {
        SetExpr::Select(select) => Some(select),
        _ => None,
    }
}

/// Whether a SELECT has none of the clauses the fast path does not render
/// (HAVING, GROUP BY, TOP, INTO, LATERAL VIEW, QUALIFY, DISTINCT ON).
fn plain_select(select: &Select) -> bool {
    !(select.having.is_some()
        || !matches!(&select.group_by, GroupByExpr::Expressions(g, _) if g.is_empty())
        || select.top.is_some()
        || select.into.is_some()
        || !select.lateral_views.is_empty()
        || select.qualify.is_some()
        || select
            .distinct
            .as_ref()
            .is_some_and(|d| !matches!(d, datafusion::sql::sqlparser::ast::Distinct::Distinct)))
}

/// The result columns of a fast-path SELECT.
struct FastProjection {
    fields: Vec<(String, Type)>,
    /// Catalog type of each result column.
    types: Vec<SqlType>,
    /// Per result column: the table column it is (`None`: an aggregate).
    sources: Vec<Option<String>>,
    aggs: Vec<Option<Partial>>,
}

/// The projection of a fast-path SELECT: columns, *, and simple aggregates
/// over columns, not aggregates mixed with columns (`None` otherwise).
fn fast_projection(select: &Select, table: &TableDef) -> Option<FastProjection> {
    let mut p = FastProjection {
        fields: vec![],
        types: vec![],
        sources: vec![],
        aggs: vec![],
    };
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) => {
                for c in &table.columns {
                    p.fields.push((c.name.clone(), pg_type(&c.ty)));
                    p.types.push(c.ty);
                    p.sources.push(Some(c.name.clone()));
                    p.aggs.push(None);
                }
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let alias = match item {
                    SelectItem::ExprWithAlias { alias, .. } => Some(normalize_ident(alias)),
                    _ => None,
                };
                let (name, ty) = fast_item_type(e, table)?;
                let agg = match e {
                    Expr::Function(_) => Some(Partial::of_name(&name)?),
                    _ => None,
                };
                p.sources.push(agg.is_none().then(|| name.clone()));
                p.aggs.push(agg);
                p.types.push(ty);
                p.fields.push((alias.unwrap_or(name), pg_type(&ty)));
            }
            _ => return None,
        }
    }
    let has_agg = select.projection.iter().any(|i| {
        matches!(
            i,
            SelectItem::UnnamedExpr(Expr::Function(_))
                | SelectItem::ExprWithAlias {
                    expr: Expr::Function(_),
                    ..
                }
        )
    });
    if has_agg
        && select.projection.iter().any(|i| {
            matches!(
                i,
                SelectItem::UnnamedExpr(Expr::Identifier(_)) | SelectItem::Wildcard(_)
            )
        })
    {
        return None;
    }
    Some(p)
}

/// Whether ORDER BY is only on columns, without NULLS FIRST/LAST, and,
/// under DISTINCT, only on NOT NULL ones (a nullable key is rendered with
/// its own `IS NULL` key first: see `nulls_as_postgres`).
fn order_by_fits(q: &Query, select: &Select, table: &TableDef) -> bool {
    use datafusion::sql::sqlparser::ast::OrderByKind;
    let Some(ob) = &q.order_by else {
        return true;
    };
    let OrderByKind::Expressions(exprs) = &ob.kind else {
        return false;
    };
    exprs.iter().all(|o| {
        let Expr::Identifier(i) = &o.expr else {
            return false;
        };
        matches!(
            table.column(&normalize_ident(i)),
            Ok(c) if (c.not_null || select.distinct.is_none()) && o.options.nulls_first.is_none()
        )
    })
}

/// PostgreSQL's place for NULLs in the shard's ORDER BY: MariaDB sorts a
/// NULL below every value, PostgreSQL above, so each nullable key `c` is
/// preceded by `c IS NULL` in the same direction (`ASC`: the NULLs last,
/// `DESC`: first, as PostgreSQL's defaults are). The node's merge
/// (`Datum::sort_cmp`) already places NULLs as PostgreSQL does.
fn nulls_as_postgres(q: &mut Query, table: &TableDef) {
    use datafusion::sql::sqlparser::ast::OrderByKind;
    let Some(ob) = &mut q.order_by else {
        return;
    };
    let OrderByKind::Expressions(exprs) = &mut ob.kind else {
        return;
    };
    let mut keys = Vec::with_capacity(exprs.len());
    for o in exprs.drain(..) {
        let nullable = matches!(&o.expr, Expr::Identifier(i)
            if table.column(&normalize_ident(i)).is_ok_and(|c| !c.not_null));
        if nullable {
            let mut is_null = o.clone();
            is_null.expr = Expr::IsNull(Box::new(o.expr.clone()));
            keys.push(is_null);
        }
        keys.push(o);
    }
    *exprs = keys;
}

/// Whether LIMIT and OFFSET are numbers or parameters (no LIMIT BY).
fn limit_fits(q: &Query) -> bool {
    use datafusion::sql::sqlparser::ast::LimitClause;
    match &q.limit_clause {
        None => true,
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            let ok = |e: &Expr| matches!(e, Expr::Value(v) if matches!(v.value, Value::Number(..) | Value::Placeholder(_)));
            limit_by.is_empty()
                && limit.as_ref().is_none_or(&ok)
                && offset.as_ref().is_none_or(|o| ok(&o.value))
        }
        Some(_) => false,
    }
}

/// Whether a route reaches at most one partition.
fn routes_to_one(route: &RoutePlan) -> bool {
    match route {
        RoutePlan::Keys(k) => k.iter().all(|v| v.len() == 1),
        RoutePlan::Single | RoutePlan::Mirror => true,
        RoutePlan::Scatter => false,
    }
}

/// MySQL SQL per partition and the client parameter order for its `?`s.
type PartitionSql = Vec<(String, Vec<usize>)>;

/// The per-partition SQL of the query with its typed WHERE (`None`: a
/// shape the shard renderer does not know, which goes to DataFusion).
fn fast_sql(
    placement: &meta::Placement,
    q: &Query,
    table: &TableDef,
    selection: Option<Expr>,
) -> Result<Option<PartitionSql>> {
    let mut typed = q.clone();
    if let SetExpr::Select(s) = typed.body.as_mut() {
        s.selection = selection;
    }
    nulls_as_postgres(&mut typed, table);
    let stmt = Statement::Query(Box::new(typed));
    match per_partition_sql(placement, table, &stmt) {
        Ok(sql) => Ok(Some(sql)),
        Err(Error::Unsupported { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

pub(crate) fn single_table(select: &Select) -> Option<&ObjectName> {
    if select.from.len() != 1 || !select.from[0].joins.is_empty() {
        return None;
    }
    match &select.from[0].relation {
        // Column aliases rename the result columns: DataFusion's plan.
        TableFactor::Table {
            name,
            args: None,
            with_hints,
            alias,
            ..
        } if with_hints.is_empty() && alias.as_ref().is_none_or(|a| a.columns.is_empty()) => {
            Some(name)
        }
        _ => None,
    }
}

/// How the answers of several partitions to this SELECT combine, if they
/// can be combined exactly: plain columns (with DISTINCT, ORDER BY on result
/// columns and LIMIT without OFFSET redone over the union), or aggregates
/// alone without GROUP BY, DISTINCT, ORDER BY or LIMIT.
pub(crate) fn merge_of(
    q: &Query,
    select: &Select,
    sources: &[Option<String>],
    aggs: &[Option<Partial>],
) -> Option<Merge> {
    use datafusion::sql::sqlparser::ast::{LimitClause, OrderByKind};
    let distinct = select.distinct.is_some();
    let limit = match &q.limit_clause {
        None => None,
        Some(LimitClause::LimitOffset {
            limit,
            offset: None,
            limit_by,
        }) if limit_by.is_empty() => match limit {
            None => None,
            Some(Expr::Value(v)) => Some(match &v.value {
                Value::Number(n, _) => LimitValue::Const(n.parse().ok()?),
                Value::Placeholder(p) => LimitValue::Param(placeholder_index(p)?),
                _ => return None,
            }),
            Some(_) => return None,
        },
        Some(_) => return None,
    };
    if aggs.iter().all(|a| a.is_some()) {
        if distinct || q.order_by.is_some() || q.limit_clause.is_some() {
            return None;
        }
        return Some(Merge::Aggregates(aggs.iter().flatten().copied().collect()));
    }
    if aggs.iter().any(|a| a.is_some()) {
        return None;
    }
    let mut order = vec![];
    if let Some(ob) = &q.order_by {
        let OrderByKind::Expressions(exprs) = &ob.kind else {
            return None;
        };
        for o in exprs {
            let Expr::Identifier(i) = &o.expr else {
                return None;
            };
            let name = normalize_ident(i);
            let idx = sources.iter().position(|s| s.as_deref() == Some(&name))?;
            order.push((idx, o.options.asc == Some(false)));
        }
    }
    Some(Merge::Rows {
        order,
        distinct,
        limit,
    })
}

/// The MariaDB lock clause for a query's `FOR UPDATE` / `FOR SHARE`.
pub(crate) fn lock_clause(q: &Query) -> Result<Option<&'static str>> {
    use datafusion::sql::sqlparser::ast::{LockType, NonBlock};
    match q.locks.as_slice() {
        [] => Ok(None),
        [l] if l.of.is_none() => Ok(Some(match (l.lock_type, l.nonblock) {
            (LockType::Update, None) => " FOR UPDATE",
            (LockType::Update, Some(NonBlock::Nowait)) => " FOR UPDATE NOWAIT",
            (LockType::Update, Some(NonBlock::SkipLocked)) => " FOR UPDATE SKIP LOCKED",
            (LockType::Share, None) => " LOCK IN SHARE MODE",
            (LockType::Share, Some(_)) => {
                return Err(Error::unsupported("FOR SHARE NOWAIT / SKIP LOCKED"))
            }
        })),
        _ => Err(Error::unsupported(
            "FOR UPDATE OF / several locking clauses",
        )),
    }
}
