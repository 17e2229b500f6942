//! INSERT ... RETURNING items other than columns (`RETURNING id * 2,
//! upper(v)`): computed by a query over the rows the statement stored,
//! `SELECT <items> FROM (VALUES (CAST($1 AS <type>), ...), ...) AS
//! <table>(<columns>)`, so every expression has PostgreSQL's semantics as
//! any query's do. The skeleton is Tessera's text (quoted names, catalog
//! types); the client's items are put into its parse as they are.

use std::sync::Arc;

use common::{Datum, Error, Result};
use datafusion::sql::sqlparser::ast::{Expr, Ident, SelectItem, SetExpr, Statement};
use meta::TableDef;
use shard_router::sql::normalize_ident;

use super::Plan;

/// Most parameters one query takes (the wire's limit).
const MAX_PARAMS: usize = 65_535;

#[derive(Debug)]
pub struct ReturningExprs {
    /// The items, wildcards expanded, each aliased uniquely for the query
    /// engine.
    items: Vec<SelectItem>,
    /// PostgreSQL's names of the items.
    pub names: Vec<String>,
    alias: String,
    /// The one-row query planned (by `plan_statement`), for the result
    /// columns' types; `None` until then.
    pub described: Option<Arc<Plan>>,
}

use super::quoted_ident as quote;

impl ReturningExprs {
    pub fn new(table: &TableDef, alias: &str, items: &[SelectItem]) -> Result<ReturningExprs> {
        let mut expanded = vec![];
        for it in items {
            match it {
                SelectItem::Wildcard(_) => expanded.extend(table.columns.iter().map(|c| {
                    SelectItem::UnnamedExpr(Expr::Identifier(Ident::with_quote('"', &c.name)))
                })),
                SelectItem::QualifiedWildcard(k, _)
                    if normalize_ident(&Ident::new(k.to_string().trim_end_matches(".*")))
                        == alias =>
                {
                    expanded.extend(table.columns.iter().map(|c| {
                        SelectItem::UnnamedExpr(Expr::Identifier(Ident::with_quote('"', &c.name)))
                    }))
                }
                SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. } => {
                    expanded.push(it.clone())
                }
                _ => return Err(Error::unsupported("this RETURNING item")),
            }
        }
        let probe = Statement::Query(Box::new({
            let mut q = skeleton(table, alias, 0, 0)?;
            if let SetExpr::Select(s) = q.body.as_mut() {
                s.projection = expanded.clone();
            }
            q
        }));
        let names = super::colnames::pg_column_names(&probe)
            .ok_or_else(|| Error::internal("RETURNING names"))?;
        let items = expanded
            .into_iter()
            .enumerate()
            .map(|(i, it)| match it {
                SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => {
                    Ok(SelectItem::ExprWithAlias {
                        expr,
                        alias: Ident::new(format!("__tessera_ret_{i}")),
                    })
                }
                _ => Err(Error::internal("RETURNING item")),
            })
            .collect::<Result<_>>()?;
        Ok(ReturningExprs {
            items,
            names,
            alias: alias.to_string(),
            described: None,
        })
    }

    /// The query over `rows` rows (parameters: the statement's own
    /// `statement_params`, which the items may read, then the rows' values
    /// in order).
    pub fn query(
        &self,
        table: &TableDef,
        rows: usize,
        statement_params: usize,
    ) -> Result<Statement> {
        let mut q = skeleton(table, &self.alias, rows.max(1), statement_params)?;
        if let SetExpr::Select(s) = q.body.as_mut() {
            s.projection = self.items.clone();
        }
        Ok(Statement::Query(Box::new(q)))
    }

    /// Rows per query, so its parameters stay within the wire's limit.
    pub fn rows_per_query(table: &TableDef, statement_params: usize) -> usize {
        (MAX_PARAMS.saturating_sub(statement_params) / table.columns.len().max(1)).max(1)
    }

    pub fn with_description(&self, plan: Plan) -> ReturningExprs {
        ReturningExprs {
            items: self.items.clone(),
            names: self.names.clone(),
            alias: self.alias.clone(),
            described: Some(Arc::new(plan)),
        }
    }
}

/// `SELECT 1 FROM (VALUES (CAST($1 AS t1), ...) x rows) AS alias(cols)`.
fn skeleton(
    table: &TableDef,
    alias: &str,
    rows: usize,
    first: usize,
) -> Result<datafusion::sql::sqlparser::ast::Query> {
    let n = table.columns.len();
    let row = |r: usize| {
        let cells: Vec<String> = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| format!("CAST(${} AS {})", first + r * n + i + 1, c.ty))
            .collect();
        format!("({})", cells.join(", "))
    };
    let values: Vec<String> = (0..rows.max(1)).map(row).collect();
    let cols: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
    let sql = format!(
        "SELECT 1 FROM (VALUES {}) AS {}({})",
        values.join(", "),
        quote(alias),
        cols.join(", ")
    );
    match crate::dialect::parse(&sql).map_err(Error::internal)?.pop() {
        Some(Statement::Query(q)) => Ok(*q),
        _ => Err(Error::internal("RETURNING skeleton")),
    }
}

/// The parameters of a chunk of stored rows after the statement's own.
pub fn params(statement: &[Datum], rows: &[Vec<Datum>]) -> Vec<Datum> {
    statement
        .iter()
        .chain(rows.iter().flatten())
        .cloned()
        .collect()
}

/// RETURNING items: table columns, plain or qualified by the table's
/// name, with their output names (an alias, else the column's name).
pub(crate) fn returning_columns(
    table: &TableDef,
    items: &[SelectItem],
) -> Result<Vec<(usize, String)>> {
    let column = |e: &Expr| -> Result<Option<usize>> {
        let name = match e {
            Expr::Identifier(i) => normalize_ident(i),
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                if normalize_ident(&parts[parts.len() - 2]) != table.name {
                    return Ok(None);
                }
                normalize_ident(&parts[parts.len() - 1])
            }
            _ => return Ok(None),
        };
        Ok(Some(
            table
                .column_index(&name)
                .ok_or(Error::ColumnNotFound { name })?,
        ))
    };
    let mut out = vec![];
    for item in items {
        match item {
            SelectItem::Wildcard(_) => {
                out.extend((0..table.columns.len()).map(|i| (i, table.columns[i].name.clone())))
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let Some(i) = column(e)? else {
                    return Err(Error::unsupported(
                        "RETURNING expressions other than columns",
                    ));
                };
                let name = match item {
                    SelectItem::ExprWithAlias { alias, .. } => normalize_ident(alias),
                    _ => table.columns[i].name.clone(),
                };
                out.push((i, name));
            }
            _ => {
                return Err(Error::unsupported(
                    "RETURNING expressions other than columns",
                ))
            }
        }
    }
    Ok(out)
}
