//! The SQL dialect the compute node parses with: PostgreSQL's, with one
//! change. sqlparser's PostgreSQL dialect parses every function argument
//! first as a full expression followed by `=>` and backtracks when there is
//! none, so each level of nested calls doubles the work:
//! `f(f(f(...)))` 25 levels deep kept a worker busy for minutes (found by
//! the wire fuzzer). PostgreSQL names arguments with a plain identifier
//! (`name => value`), which the identifier-only form parses in constant
//! time, so that form is used. `CREATE USER` is read as PostgreSQL reads
//! it (a role that can log in). Everything else is delegated, and
//! `dialect()` reports PostgreSQL so the parser's dialect checks hold.

use std::any::TypeId;

use datafusion::sql::sqlparser::ast::{Expr, Statement};
use datafusion::sql::sqlparser::dialect::{Dialect, PostgreSqlDialect, Precedence};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};

#[derive(Debug, Default, Clone, Copy)]
pub struct TesseraDialect;

impl Dialect for TesseraDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<PostgreSqlDialect>()
    }

    fn supports_named_fn_args_with_expr_name(&self) -> bool {
        false
    }

    /// `CREATE USER name ...` is PostgreSQL's `CREATE ROLE name LOGIN ...`
    /// (sqlparser reads CREATE USER as another dialect's statement).
    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        if !parser.parse_keywords(&[Keyword::CREATE, Keyword::USER]) {
            return None;
        }
        Some(parser.parse_create_role().map(|mut cr| {
            cr.login.get_or_insert(true);
            Statement::CreateRole(cr)
        }))
    }

    /// `a IS [NOT] DISTINCT FROM b AND c` is `(a IS DISTINCT FROM b) AND
    /// c` in PostgreSQL; sqlparser reads the whole `b AND c` as the right
    /// operand. The operand is parsed at IS's precedence instead
    /// (comparisons bind tighter, NOT, AND and OR looser).
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        _precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        let negated = if parser.parse_keywords(&[Keyword::IS, Keyword::DISTINCT, Keyword::FROM]) {
            false
        } else if parser.parse_keywords(&[
            Keyword::IS,
            Keyword::NOT,
            Keyword::DISTINCT,
            Keyword::FROM,
        ]) {
            true
        } else {
            return None;
        };
        let prec = self.prec_value(Precedence::Is);
        Some(parser.parse_subexpr(prec).map(|rhs| {
            let (a, b) = (Box::new(expr.clone()), Box::new(rhs));
            if negated {
                Expr::IsNotDistinctFrom(a, b)
            } else {
                Expr::IsDistinctFrom(a, b)
            }
        }))
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        PostgreSqlDialect {}.identifier_quote_style(identifier)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        PostgreSqlDialect {}.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        PostgreSqlDialect {}.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        PostgreSqlDialect {}.is_identifier_part(ch)
    }

    fn supports_unicode_string_literal(&self) -> bool {
        PostgreSqlDialect {}.supports_unicode_string_literal()
    }

    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        PostgreSqlDialect {}.is_reserved_for_identifier(kw)
    }

    fn is_custom_operator_part(&self, ch: char) -> bool {
        PostgreSqlDialect {}.is_custom_operator_part(ch)
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        PostgreSqlDialect {}.get_next_precedence(parser)
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        PostgreSqlDialect {}.supports_filter_during_aggregation()
    }

    fn supports_group_by_expr(&self) -> bool {
        PostgreSqlDialect {}.supports_group_by_expr()
    }

    fn prec_value(&self, prec: Precedence) -> u8 {
        PostgreSqlDialect {}.prec_value(prec)
    }

    fn allow_extract_custom(&self) -> bool {
        PostgreSqlDialect {}.allow_extract_custom()
    }

    fn allow_extract_single_quotes(&self) -> bool {
        PostgreSqlDialect {}.allow_extract_single_quotes()
    }

    fn supports_create_index_with_clause(&self) -> bool {
        PostgreSqlDialect {}.supports_create_index_with_clause()
    }

    fn supports_explain_with_utility_options(&self) -> bool {
        PostgreSqlDialect {}.supports_explain_with_utility_options()
    }

    fn supports_listen_notify(&self) -> bool {
        PostgreSqlDialect {}.supports_listen_notify()
    }

    fn supports_factorial_operator(&self) -> bool {
        PostgreSqlDialect {}.supports_factorial_operator()
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        PostgreSqlDialect {}.supports_bitwise_shift_operators()
    }

    fn supports_comment_on(&self) -> bool {
        PostgreSqlDialect {}.supports_comment_on()
    }

    fn supports_load_extension(&self) -> bool {
        PostgreSqlDialect {}.supports_load_extension()
    }

    fn supports_named_fn_args_with_colon_operator(&self) -> bool {
        PostgreSqlDialect {}.supports_named_fn_args_with_colon_operator()
    }

    fn supports_empty_projections(&self) -> bool {
        PostgreSqlDialect {}.supports_empty_projections()
    }

    fn supports_nested_comments(&self) -> bool {
        PostgreSqlDialect {}.supports_nested_comments()
    }

    fn supports_string_escape_constant(&self) -> bool {
        PostgreSqlDialect {}.supports_string_escape_constant()
    }

    fn supports_numeric_literal_underscores(&self) -> bool {
        PostgreSqlDialect {}.supports_numeric_literal_underscores()
    }

    fn supports_array_typedef_with_brackets(&self) -> bool {
        PostgreSqlDialect {}.supports_array_typedef_with_brackets()
    }

    fn supports_geometric_types(&self) -> bool {
        PostgreSqlDialect {}.supports_geometric_types()
    }

    fn supports_set_names(&self) -> bool {
        PostgreSqlDialect {}.supports_set_names()
    }

    fn supports_alter_column_type_using(&self) -> bool {
        PostgreSqlDialect {}.supports_alter_column_type_using()
    }

    fn supports_notnull_operator(&self) -> bool {
        PostgreSqlDialect {}.supports_notnull_operator()
    }

    fn supports_interval_options(&self) -> bool {
        PostgreSqlDialect {}.supports_interval_options()
    }

    fn supports_insert_table_alias(&self) -> bool {
        PostgreSqlDialect {}.supports_insert_table_alias()
    }

    fn supports_create_table_like_parenthesized(&self) -> bool {
        PostgreSqlDialect {}.supports_create_table_like_parenthesized()
    }

    fn supports_select_wildcard_with_alias(&self) -> bool {
        PostgreSqlDialect {}.supports_select_wildcard_with_alias()
    }

    fn supports_comma_separated_trim(&self) -> bool {
        PostgreSqlDialect {}.supports_comma_separated_trim()
    }

    fn supports_xml_expressions(&self) -> bool {
        PostgreSqlDialect {}.supports_xml_expressions()
    }

    fn supports_comment_optimizer_hint(&self) -> bool {
        PostgreSqlDialect {}.supports_comment_optimizer_hint()
    }
}

/// Parses SQL text with [`TesseraDialect`].
pub fn parse(sql: &str) -> Result<Vec<Statement>, ParserError> {
    Parser::parse_sql(&TesseraDialect, sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_calls_parse_in_linear_time() {
        let n = 40;
        let sql = format!("SELECT {}1{}", "coalesce(".repeat(n), ")".repeat(n));
        let t = std::time::Instant::now();
        let r = parse(&sql);
        assert!(r.is_ok() || matches!(r, Err(ParserError::RecursionLimitExceeded)));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn named_arguments_still_parse() {
        let s = parse("SELECT f(a => 1, b => 'x')").unwrap();
        assert_eq!(s[0].to_string(), "SELECT f(a => 1, b => 'x')");
        // The same statements as PostgreSqlDialect gives, for the rest.
        for sql in [
            "SELECT x::int, $1, E'\\n', a->>'k', b @> c FROM t WHERE d ~ 'x' ORDER BY 1 NULLS FIRST",
            "SELECT count(*) FILTER (WHERE x > 1) FROM t GROUP BY 1",
            "CREATE TABLE t (id int PRIMARY KEY) PARTITION BY HASH (id)",
        ] {
            let a = parse(sql).unwrap();
            let b = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
            assert_eq!(a, b, "{sql}");
        }
    }
}

#[cfg(test)]
mod create_user_tests {
    use datafusion::sql::sqlparser::ast::Statement;

    #[test]
    fn create_user_is_a_login_role() {
        let s = super::parse("SELECT 1; CREATE USER bob WITH PASSWORD 'x' SUPERUSER").unwrap();
        let Statement::CreateRole(cr) = &s[1] else {
            panic!("{:?}", s[1]);
        };
        assert_eq!(cr.login, Some(true));
        assert_eq!(cr.superuser, Some(true));
        let s = super::parse("CREATE USER carl NOLOGIN").unwrap();
        let Statement::CreateRole(cr) = &s[0] else {
            panic!();
        };
        assert_eq!(cr.login, Some(false));
    }
}
