//! Shard SQL built from typed fragments: the one way a client's statement
//! becomes MariaDB SQL.
//!
//! A [`ShardSql`] can only grow by fixed keywords (`&'static str`, so never
//! text that came from a client), identifiers (through
//! [`storage_adapter::quote_ident`]), values (through
//! [`storage_adapter::quote_str`] or as validated numbers) and `?`
//! placeholders. [`render_statement`] walks the parsed statement and emits
//! only the shapes it knows, clause by clause; any clause, expression or
//! literal it does not know is an error (0A000), never passed through. The
//! sqlparser AST's `Display` is not used: it does not escape a `'` after a
//! `\`, which, under `NO_BACKSLASH_ESCAPES`, let a string literal end early
//! and the rest run as SQL.

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    AssignmentTarget, Distinct, Expr, FromTable, FunctionArg, FunctionArgExpr, FunctionArguments,
    GroupByExpr, LimitClause, LockType, NonBlock, ObjectNamePart, OrderByKind, Query, Select,
    SelectFlavor, SelectItem, SetExpr, Statement, TableFactor, UnaryOperator, Value,
};
use storage_adapter::{quote_ident, quote_str};

use super::ident::{normalize_ident, placeholder_index};

/// MariaDB SQL for one shard, with the client parameter index of each `?`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardSql {
    text: String,
    params: Vec<usize>,
}

impl ShardSql {
    pub fn new() -> ShardSql {
        ShardSql::default()
    }

    /// Fixed SQL text: keywords, operators, punctuation. `'static` so it
    /// cannot be text a client sent.
    pub fn keyword(&mut self, k: &'static str) -> &mut Self {
        self.text.push_str(k);
        self
    }

    /// A quoted identifier (ANSI_QUOTES).
    pub fn ident(&mut self, name: &str) -> &mut Self {
        self.text.push_str(&quote_ident(name));
        self
    }

    /// `"<schema database>"."table"` (see [`meta::physical_database`]).
    pub fn table(&mut self, schema: &str, table: &str) -> &mut Self {
        self.ident(&meta::physical_database(schema))
            .keyword(".")
            .ident(table)
    }

    /// A string literal (NO_BACKSLASH_ESCAPES: only `'` is doubled).
    /// PostgreSQL text cannot hold NUL (22021).
    pub fn string(&mut self, s: &str) -> Result<&mut Self> {
        if s.contains('\0') {
            return Err(Error::Sql {
                state: SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                message: "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
            });
        }
        self.text.push_str(&quote_str(s));
        Ok(self)
    }

    /// A numeric literal as the tokenizer read it, checked to be one:
    /// digits with at most one `.` and an optional exponent.
    pub fn number(&mut self, n: &str) -> Result<&mut Self> {
        if !is_number(n) {
            return Err(Error::Syntax {
                message: format!("invalid numeric literal \"{n}\""),
                position: None,
            });
        }
        self.text.push_str(n);
        Ok(self)
    }

    /// An unsigned integer (LIMIT counts).
    pub fn uint(&mut self, n: u64) -> &mut Self {
        self.text.push_str(&n.to_string());
        self
    }

    /// A byte string literal `X'..'`.
    pub fn hex(&mut self, hex: &str) -> Result<&mut Self> {
        if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::internal("invalid hex literal"));
        }
        self.text.push_str("X'");
        self.text.push_str(hex);
        self.text.push('\'');
        Ok(self)
    }

    /// A `?` standing for the client's parameter `index` (0-based).
    pub fn param(&mut self, index: usize) -> &mut Self {
        self.text.push('?');
        self.params.push(index);
        self
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The SQL and, for each `?`, the client parameter it stands for.
    pub fn into_parts(self) -> (String, Vec<usize>) {
        (self.text, self.params)
    }
}

fn is_number(n: &str) -> bool {
    let (mant, exp) = match n.find(['e', 'E']) {
        Some(i) => (&n[..i], Some(&n[i + 1..])),
        None => (n, None),
    };
    let mut dots = 0;
    let mut digits = 0;
    for b in mant.bytes() {
        match b {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    if digits == 0 || dots > 1 {
        return false;
    }
    match exp {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
        }
    }
}

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
                out.uint(n);
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
            Value::Boolean(true) => {
                out.keyword("TRUE");
            }
            Value::Boolean(false) => {
                out.keyword("FALSE");
            }
            Value::Null => {
                out.keyword("NULL");
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

    #[test]
    fn nul_is_refused() {
        let e = ShardSql::new().string("a\0b").map(|_| ()).unwrap_err();
        assert_eq!(e.sqlstate().code(), "22021");
    }

    #[test]
    fn numbers_are_checked() {
        assert!(is_number("1"));
        assert!(is_number("1.5e-3"));
        assert!(is_number(".5"));
        assert!(!is_number("1;"));
        assert!(!is_number("1e"));
        assert!(!is_number("0x1f"));
        assert!(!is_number("1.2.3"));
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            /// Any string, rendered as a literal, is one token that MariaDB
            /// (NO_BACKSLASH_ESCAPES) reads back as exactly that string.
            #[test]
            fn string_literals_round_trip(s in any::<String>()) {
                let mut out = ShardSql::new();
                match out.string(&s) {
                    Err(_) => prop_assert!(s.contains('\0')),
                    Ok(_) => {
                        let t = out.as_str();
                        prop_assert!(t.starts_with('\'') && t.ends_with('\''));
                        let inner = &t[1..t.len() - 1];
                        // No lone quote inside: every ' is doubled.
                        prop_assert!(!inner.replace("''", "").contains('\''));
                        prop_assert_eq!(inner.replace("''", "'"), s);
                    }
                }
            }

            #[test]
            fn identifiers_round_trip(s in any::<String>()) {
                let mut out = ShardSql::new();
                out.ident(&s);
                let t = out.as_str();
                let inner = &t[1..t.len() - 1];
                prop_assert!(!inner.replace("\"\"", "").contains('"'));
                prop_assert_eq!(inner.replace("\"\"", "\""), s);
            }

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
