//! The statement front-end of the one shard SQL renderer: a client's
//! single-table SELECT, UPDATE or DELETE of the fast path (a sqlparser
//! tree) becomes MariaDB SQL through [`ShardSql`].
//!
//! [`render_statement`] walks the parsed statement and emits only the
//! shapes it knows, clause by clause; any clause, expression or literal it
//! does not know is an error (0A000), never passed through. Names and
//! values go through `ShardSql`'s quoters and checked literals, the same
//! methods the DataFusion front-end (`expr_sql`) uses. The sqlparser AST's
//! `Display` is not used: it does not escape a `'` after a `\`, which,
//! under `NO_BACKSLASH_ESCAPES`, let a string literal end early and the
//! rest run as SQL.

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{
    AssignmentTarget, Distinct, Expr, FromTable, FunctionArg, FunctionArgExpr, FunctionArguments,
    GroupByExpr, LimitClause, LockType, NonBlock, ObjectNamePart, OrderByKind, Query, Select,
    SelectFlavor, SelectItem, SetExpr, Statement, TableFactor, UnaryOperator, Value,
};

use super::ident::{normalize_ident, placeholder_index};
use super::shard_sql::ShardSql;

fn unsupported(what: &str) -> Error {
    Error::unsupported(format!("{what} on the shard fast path"))
}

/// Renders a single-table SELECT, UPDATE or DELETE of the fast path for
/// the partition `schema.table`. Every part of the statement is either
/// rendered from its typed pieces or refused.
pub fn render_statement(stmt: &Statement, schema: &str, table: &str) -> Result<ShardSql> {
    let mut out = ShardSql::new();
    match stmt {
        Statement::Query(q) => render_query(&mut out, q, schema, table)?,
        Statement::Update(u) => {
            if !u.optimizer_hints.is_empty()
                || u.from.is_some()
                || !u.table.joins.is_empty()
                || u.returning.is_some()
                || u.output.is_some()
                || u.or.is_some()
                || !u.order_by.is_empty()
                || u.limit.is_some()
            {
                return Err(unsupported("this UPDATE"));
            }
            single_table_factor(&u.table.relation)?;
            out.keyword("UPDATE ").table(schema, table).keyword(" SET ");
            for (i, a) in u.assignments.iter().enumerate() {
                if i > 0 {
                    out.keyword(", ");
                }
                let AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(unsupported("UPDATE of a column tuple"));
                };
                let Some(ObjectNamePart::Identifier(col)) = n.0.last() else {
                    return Err(unsupported("this UPDATE target"));
                };
                out.ident(&normalize_ident(col)).keyword(" = ");
                render_expr(&mut out, &a.value)?;
            }
            where_clause(&mut out, u.selection.as_ref())?;
        }
        Statement::Delete(d) => {
            if !d.optimizer_hints.is_empty()
                || !d.tables.is_empty()
                || d.using.is_some()
                || d.returning.is_some()
                || d.output.is_some()
                || !d.order_by.is_empty()
                || d.limit.is_some()
            {
                return Err(unsupported("this DELETE"));
            }
            let from = match &d.from {
                FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
            };
            match from.as_slice() {
                [t] if t.joins.is_empty() => single_table_factor(&t.relation)?,
                _ => return Err(unsupported("DELETE from several tables")),
            }
            out.keyword("DELETE FROM ").table(schema, table);
            where_clause(&mut out, d.selection.as_ref())?;
        }
        _ => return Err(unsupported("this statement")),
    }
    Ok(out)
}

fn single_table_factor(t: &TableFactor) -> Result<()> {
    match t {
        TableFactor::Table {
            args: None,
            with_hints,
            version: None,
            partitions,
            with_ordinality: false,
            json_path: None,
            sample: None,
            index_hints,
            ..
        } if with_hints.is_empty() && partitions.is_empty() && index_hints.is_empty() => Ok(()),
        _ => Err(unsupported("this FROM item")),
    }
}

fn where_clause(out: &mut ShardSql, selection: Option<&Expr>) -> Result<()> {
    if let Some(w) = selection {
        out.keyword(" WHERE ");
        render_expr(out, w)?;
    }
    Ok(())
}

fn render_query(out: &mut ShardSql, q: &Query, schema: &str, table: &str) -> Result<()> {
    if q.with.is_some()
        || q.fetch.is_some()
        || q.for_clause.is_some()
        || q.settings.is_some()
        || q.format_clause.is_some()
        || !q.pipe_operators.is_empty()
    {
        return Err(unsupported("this query clause"));
    }
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Err(unsupported("this query"));
    };
    render_select(out, s, schema, table)?;
    if let Some(ob) = &q.order_by {
        let OrderByKind::Expressions(exprs) = &ob.kind else {
            return Err(unsupported("ORDER BY ALL"));
        };
        if ob.interpolate.is_some() {
            return Err(unsupported("ORDER BY ... INTERPOLATE"));
        }
        for (i, o) in exprs.iter().enumerate() {
            if o.with_fill.is_some() || o.options.nulls_first.is_some() {
                return Err(unsupported("this ORDER BY"));
            }
            out.keyword(if i == 0 { " ORDER BY " } else { ", " });
            render_expr(out, &o.expr)?;
            match o.options.asc {
                Some(true) => out.keyword(" ASC"),
                Some(false) => out.keyword(" DESC"),
                None => out,
            };
        }
    }
    match &q.limit_clause {
        None => {}
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) if limit_by.is_empty() => {
            match (limit, offset) {
                (Some(l), _) => {
                    out.keyword(" LIMIT ");
                    limit_value(out, l)?;
                }
                // MariaDB has no OFFSET without LIMIT.
                (None, Some(_)) => {
                    out.keyword(" LIMIT 18446744073709551615");
                }
                (None, None) => {}
            }
            if let Some(o) = offset {
                out.keyword(" OFFSET ");
                limit_value(out, &o.value)?;
            }
        }
        Some(_) => return Err(unsupported("this LIMIT")),
    }
    match q.locks.as_slice() {
        [] => {}
        [l] if l.of.is_none() && l.lock_type == LockType::Update => {
            out.keyword(match l.nonblock {
                None => " FOR UPDATE",
                Some(NonBlock::Nowait) => " FOR UPDATE NOWAIT",
                Some(NonBlock::SkipLocked) => " FOR UPDATE SKIP LOCKED",
            });
        }
        _ => return Err(unsupported("this locking clause")),
    }
    Ok(())
}

fn limit_value(out: &mut ShardSql, e: &Expr) -> Result<()> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => {
                let n: u64 = n.parse().map_err(|_| unsupported("this LIMIT value"))?;
                out.int(n);
                Ok(())
            }
            Value::Placeholder(p) => {
                let i = placeholder_index(p).ok_or_else(|| unsupported("this placeholder"))?;
                out.param(i);
                Ok(())
            }
            _ => Err(unsupported("this LIMIT value")),
        },
        _ => Err(unsupported("this LIMIT value")),
    }
}

fn render_select(out: &mut ShardSql, s: &Select, schema: &str, table: &str) -> Result<()> {
    if !s.optimizer_hints.is_empty()
        || s.select_modifiers.is_some()
        || s.top.is_some()
        || s.exclude.is_some()
        || s.into.is_some()
        || !s.lateral_views.is_empty()
        || s.prewhere.is_some()
        || !s.connect_by.is_empty()
        || !matches!(&s.group_by, GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty())
        || !s.cluster_by.is_empty()
        || !s.distribute_by.is_empty()
        || !s.sort_by.is_empty()
        || s.having.is_some()
        || !s.named_window.is_empty()
        || s.qualify.is_some()
        || s.value_table_mode.is_some()
        || !matches!(s.flavor, SelectFlavor::Standard)
    {
        return Err(unsupported("this SELECT clause"));
    }
    out.keyword("SELECT ");
    match &s.distinct {
        None => {}
        Some(Distinct::Distinct) => {
            out.keyword("DISTINCT ");
        }
        Some(_) => return Err(unsupported("DISTINCT ON")),
    }
    for (i, item) in s.projection.iter().enumerate() {
        if i > 0 {
            out.keyword(", ");
        }
        match item {
            SelectItem::Wildcard(opts) if opts.opt_exclude.is_none() => {
                out.keyword("*");
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                // Result names come from the plan, not the shard.
                render_item(out, e)?
            }
            _ => return Err(unsupported("this select item")),
        }
    }
    match s.from.as_slice() {
        [t] if t.joins.is_empty() => single_table_factor(&t.relation)?,
        _ => return Err(unsupported("a FROM list")),
    }
    out.keyword(" FROM ").table(schema, table);
    where_clause(out, s.selection.as_ref())
}

/// A projection item: an expression or `count/sum/min/max` of a column.
fn render_item(out: &mut ShardSql, e: &Expr) -> Result<()> {
    let Expr::Function(f) = e else {
        return render_expr(out, e);
    };
    if f.filter.is_some()
        || f.over.is_some()
        || !f.within_group.is_empty()
        || f.null_treatment.is_some()
        || f.uses_odbc_syntax
        || !matches!(f.parameters, FunctionArguments::None)
    {
        return Err(unsupported("this function call"));
    }
    let name = match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(i)] => normalize_ident(i),
        _ => return Err(unsupported("this function")),
    };
    out.keyword(match name.as_str() {
        "count" => "COUNT(",
        "sum" => "SUM(",
        "min" => "MIN(",
        "max" => "MAX(",
        _ => return Err(unsupported("this function")),
    });
    let FunctionArguments::List(list) = &f.args else {
        return Err(unsupported("this function call"));
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return Err(unsupported("this aggregate"));
    }
    match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if name == "count" => {
            out.keyword("*");
        }
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(x))] => render_expr(out, x)?,
        _ => return Err(unsupported("this aggregate")),
    }
    out.keyword(")");
    Ok(())
}

/// Expressions of the fast-path subset ([`super::render::is_safe_expr`]).
/// The walk is bounded by the statement's depth, which the compute node
/// checks before planning (54001).
pub fn render_expr(out: &mut ShardSql, e: &Expr) -> Result<()> {
    match e {
        Expr::Identifier(i) => {
            out.ident(&normalize_ident(i));
        }
        // Qualifiers name the logical table; the shard knows only the
        // physical one, so keep just the column.
        Expr::CompoundIdentifier(parts) => {
            let last = parts.last().ok_or_else(|| unsupported("empty name"))?;
            out.ident(&normalize_ident(last));
        }
        Expr::Value(v) => match &v.value {
            // A client's token, or a value `typing` gave the column's type
            // (`id = '-5'` becomes `-5`).
            Value::Number(n, false) => {
                out.number(n)?;
            }
            // The tokenizer has already read the escapes of E'...'.
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => {
                out.string(s)?;
            }
            Value::HexStringLiteral(h) => {
                out.hex(h)?;
            }
            Value::Boolean(b) => {
                out.boolean(*b);
            }
            Value::Null => {
                out.null();
            }
            Value::Placeholder(p) => {
                let i = placeholder_index(p).ok_or_else(|| unsupported("this placeholder"))?;
                out.param(i);
            }
            _ => return Err(unsupported("this literal")),
        },
        Expr::BinaryOp { left, op, right } => {
            let op = super::compat::Op::of_sql(op).ok_or_else(|| unsupported("this operator"))?;
            out.keyword("(");
            render_expr(out, left)?;
            out.keyword(" ");
            out.keyword(op.sql());
            out.keyword(" ");
            render_expr(out, right)?;
            out.keyword(")");
        }
        Expr::UnaryOp { op, expr } => {
            out.keyword(match op {
                UnaryOperator::Not => "(NOT ",
                UnaryOperator::Minus => "(- ",
                _ => return Err(unsupported("this operator")),
            });
            render_expr(out, expr)?;
            out.keyword(")");
        }
        Expr::IsNull(x) => {
            out.keyword("(");
            render_expr(out, x)?;
            out.keyword(" IS NULL)");
        }
        Expr::IsNotNull(x) => {
            out.keyword("(");
            render_expr(out, x)?;
            out.keyword(" IS NOT NULL)");
        }
        Expr::Nested(x) => render_expr(out, x)?,
        Expr::Tuple(items) => {
            out.keyword("(");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.keyword(", ");
                }
                render_expr(out, item)?;
            }
            out.keyword(")");
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            out.keyword("(");
            render_expr(out, expr)?;
            out.keyword(if *negated { " NOT IN (" } else { " IN (" });
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    out.keyword(", ");
                }
                render_expr(out, item)?;
            }
            out.keyword("))");
        }
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            out.keyword("(");
            render_expr(out, expr)?;
            out.keyword(if *negated {
                " NOT BETWEEN "
            } else {
                " BETWEEN "
            });
            render_expr(out, low)?;
            out.keyword(" AND ");
            render_expr(out, high)?;
            out.keyword(")");
        }
        _ => return Err(unsupported("this expression")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn render(sql: &str) -> Result<(String, Vec<usize>)> {
        let stmt = Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .map_err(Error::internal)?
            .remove(0);
        Ok(render_statement(&stmt, "public", "t_p1")?.into_parts())
    }

    #[test]
    fn renders_physical_names_quotes_and_placeholders() {
        let (sql, order) = render(
            "SELECT c, t.Pad FROM t WHERE id = $2 AND k BETWEEN $1 AND 10 AND c = '$3 it''s'",
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT \"c\", \"pad\" FROM \"tsr_public\".\"t_p1\" WHERE (((\"id\" = ?) AND (\"k\" BETWEEN ? AND 10)) AND (\"c\" = '$3 it''s'))"
        );
        assert_eq!(order, vec![1, 0]);
    }

    #[test]
    fn backslash_quote_cannot_end_a_string() {
        // sqlparser's Display prints this literal as '\'' followed by the
        // rest: under NO_BACKSLASH_ESCAPES that ended the string.
        let (sql, _) =
            render("UPDATE acct SET name = E'\\'; CREATE DATABASE pwned3; -- ' WHERE id = 4")
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            sql,
            "UPDATE \"tsr_public\".\"t_p1\" SET \"name\" = '''; CREATE DATABASE pwned3; -- ' WHERE (\"id\" = 4)"
        );
        let (sql, _) = render("UPDATE acct SET name = '\\''; DROP TABLE x; --' WHERE id = 4")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(sql.contains("'\\'';"), "{sql}");
    }

    #[test]
    fn identifiers_are_quoted_whatever_they_hold() {
        let (sql, _) = render("DELETE FROM t WHERE \"a\"\"b; DROP\" = 'é'").unwrap();
        assert_eq!(
            sql,
            "DELETE FROM \"tsr_public\".\"t_p1\" WHERE (\"a\"\"b; DROP\" = 'é')"
        );
    }

    #[test]
    fn unknown_shapes_are_refused() {
        for sql in [
            "SELECT f(c) FROM t",
            "SELECT c FROM t WHERE c LIKE 'a%'",
            "SELECT c FROM t GROUP BY c",
            "SELECT c FROM t, u",
            "UPDATE t SET c = 1 FROM u",
        ] {
            let e = render(sql).unwrap_err();
            assert!(
                matches!(e.sqlstate().code(), "0A000" | "22021"),
                "{sql}: {e}"
            );
        }
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;
        use storage_adapter::quote_str;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            /// Whatever literal a client writes, the statement renders to
            /// one UPDATE: the literal's text appears only inside quotes.
            #[test]
            fn client_literals_stay_literals(s in "[\\\\';\"a-z -]{0,30}") {
                let pg = format!("UPDATE t SET name = E'{}' WHERE id = 1", s.replace('\\', "\\\\").replace('\'', "\\'"));
                let stmt = Parser::parse_sql(&PostgreSqlDialect {}, &pg).unwrap().remove(0);
                let (sql, _) = render_statement(&stmt, "public", "t_p0").unwrap().into_parts();
                let expect = format!(
                    "UPDATE \"tsr_public\".\"t_p0\" SET \"name\" = {} WHERE (\"id\" = 1)",
                    quote_str(&s)
                );
                prop_assert_eq!(sql, expect);
            }
        }
    }
}
