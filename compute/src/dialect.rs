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
//!
//! sqlparser backtracks in more places than named arguments (after each
//! `.` of a compound name it tries a whole expression first, so
//! `t.a.a.a ... ..a` doubles its work per dot), so no list of shapes can
//! be complete. [`parse`] therefore gives every statement a budget of
//! expression starts proportional to its tokens, which a linear parse never
//! reaches; once it is spent every further expression fails at once, the
//! backtracking collapses to linear time, and the statement is refused as
//! too complex (54001) instead of holding a worker for minutes.

use std::any::TypeId;
use std::cell::Cell;

use datafusion::sql::sqlparser::ast::{Expr, Statement};
use datafusion::sql::sqlparser::dialect::{Dialect, PostgreSqlDialect, Precedence};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};

#[derive(Debug, Default, Clone, Copy)]
pub struct TesseraDialect;

/// Expression starts a statement may make per token, beyond
/// [`PREFIX_BUDGET_BASE`]. Measured: the TPC-H queries make under one per
/// five tokens, a 20,000-row INSERT one per value, 45 nested parentheses,
/// calls, ARRAYs or CASTs one per level; the shapes that double per token
/// spend any linear budget.
const PREFIX_BUDGET_PER_TOKEN: u64 = 8;
const PREFIX_BUDGET_BASE: u64 = 10_000;

thread_local! {
    /// Expression starts left to the statement this thread is parsing
    /// (unbounded outside [`parse`]).
    static PREFIX_BUDGET: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Sets this thread's budget for the length of one [`parse`], whatever
/// way it ends.
struct Budget;

impl Budget {
    fn start(tokens: usize) -> Budget {
        let n = PREFIX_BUDGET_BASE
            .saturating_add((tokens as u64).saturating_mul(PREFIX_BUDGET_PER_TOKEN));
        PREFIX_BUDGET.with(|b| b.set(n));
        Budget
    }

    fn spent(&self) -> bool {
        PREFIX_BUDGET.with(|b| b.get() == 0)
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        PREFIX_BUDGET.with(|b| b.set(u64::MAX));
    }
}

/// The start of a parser error that is a feature Tessera does not have
/// (0A000), not a syntax error.
pub const UNSUPPORTED: &str = "unsupported: ";

/// The message of the error a statement gets when it spends its budget.
pub const TOO_COMPLEX: &str = "statement too complex: the parser's work exceeds its budget";

impl Dialect for TesseraDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<PostgreSqlDialect>()
    }

    fn supports_named_fn_args_with_expr_name(&self) -> bool {
        false
    }

    /// `CREATE USER name ...` is PostgreSQL's `CREATE ROLE name LOGIN ...`
    /// (sqlparser reads CREATE USER as another dialect's statement), and
    /// `VACUUM` is PostgreSQL's (sqlparser reads Redshift's).
    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        if parser.parse_keyword(Keyword::VACUUM) {
            return Some(parse_vacuum(parser));
        }
        // `RESET TIME ZONE` is PostgreSQL's spelling of `RESET timezone`
        // (sqlparser reads one name after RESET).
        if parser.parse_keywords(&[Keyword::RESET, Keyword::TIME, Keyword::ZONE]) {
            use datafusion::sql::sqlparser::ast::{Ident, ObjectName, Reset, ResetStatement};
            return Some(Ok(Statement::Reset(ResetStatement {
                reset: Reset::ConfigurationParameter(ObjectName::from(vec![Ident::new(
                    "timezone",
                )])),
            })));
        }
        if parser.parse_keywords(&[Keyword::ALTER, Keyword::SYSTEM]) {
            return Some(crate::alter_system::parse(parser));
        }
        // PostgreSQL statements sqlparser has no statement for: refused by
        // name (0A000) rather than as a syntax error.
        if parser.parse_keywords(&[Keyword::ALTER, Keyword::SEQUENCE]) {
            return Some(Err(ParserError::ParserError(format!(
                "{UNSUPPORTED}ALTER SEQUENCE (drop and create the sequence, or use setval)"
            ))));
        }
        if !parser.parse_keywords(&[Keyword::CREATE, Keyword::USER]) {
            return None;
        }
        Some(parser.parse_create_role().map(|mut cr| {
            cr.login.get_or_insert(true);
            Statement::CreateRole(cr)
        }))
    }

    /// Counts an expression start against the statement's budget (module
    /// comment); a spent budget fails every expression, with the error
    /// `maybe_parse` does not swallow.
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let spent = PREFIX_BUDGET.with(|b| match b.get() {
            0 => true,
            n => {
                b.set(n - 1);
                false
            }
        });
        if spent {
            return Some(Err(ParserError::RecursionLimitExceeded));
        }
        unary_sign(parser)
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

/// Parses SQL text with [`TesseraDialect`], within the work budget of the
/// module comment: a statement that spends it fails with
/// `ParserError::ParserError(TOO_COMPLEX)`.
/// A unary `-` or `+` binds tighter than `^` in PostgreSQL (`-2 ^ 2` is
/// `(-2) ^ 2`, 4), where sqlparser reads its operand up to `*`'s
/// precedence (`-(2 ^ 2)`, -4). The operand is parsed at `^`'s
/// precedence instead: `::`, `[]` and `.` still bind tighter.
fn unary_sign(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    use datafusion::sql::sqlparser::ast::UnaryOperator;
    use datafusion::sql::sqlparser::tokenizer::Token;
    let op = match parser.peek_token_ref().token {
        Token::Minus => UnaryOperator::Minus,
        Token::Plus => UnaryOperator::Plus,
        _ => return None,
    };
    parser.advance_token();
    let prec = TesseraDialect.prec_value(Precedence::Caret);
    Some(parser.parse_subexpr(prec).map(|e| Expr::UnaryOp {
        op,
        expr: Box::new(e),
    }))
}

pub fn parse(sql: &str) -> Result<Vec<Statement>, ParserError> {
    use datafusion::sql::sqlparser::tokenizer::Tokenizer;
    let starts_with_copy = sql
        .trim_start()
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("copy"));
    let mut tokens = Tokenizer::new(&TesseraDialect, sql).tokenize_with_location()?;
    if starts_with_copy {
        crate::tokens::copy_booleans(&mut tokens);
        crate::tokens::copy_force_quote_all(&mut tokens);
    }
    crate::tokens::sequence_options_in_order(&mut tokens);
    let budget = Budget::start(tokens.len());
    let r = Parser::new(&TesseraDialect)
        .with_tokens_with_locations(tokens)
        .parse_statements();
    match r {
        Err(_) if budget.spent() => Err(ParserError::ParserError(TOO_COMPLEX.into())),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_and_vacuum_read_as_postgres() {
        use datafusion::sql::sqlparser::ast::CopyOption;
        match &parse("copy t from stdin with (freeze on, header 0, format csv)").unwrap()[0] {
            Statement::Copy { options, .. } => {
                assert!(options.contains(&CopyOption::Freeze(true)), "{options:?}");
                assert!(options.contains(&CopyOption::Header(false)), "{options:?}");
            }
            other => panic!("{other}"),
        }
        assert!(matches!(
            &parse("vacuum analyze pgbench_branches").unwrap()[0],
            Statement::Analyze(a) if a.compute_statistics && a.table_name.is_some()
        ));
        assert!(matches!(
            &parse("VACUUM (VERBOSE, ANALYZE false) t (a, b)").unwrap()[0],
            Statement::Vacuum(v) if v.table_name.is_some()
        ));
        assert!(matches!(&parse("vacuum").unwrap()[0], Statement::Vacuum(_)));
        assert!(matches!(
            &parse("analyze t").unwrap()[0],
            Statement::Analyze(a) if !a.compute_statistics
        ));
        assert!(parse("vacuum a, b").is_err());
    }

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

    /// Shapes the planner fuzzer found where sqlparser's backtracking
    /// doubles per token: the budget ends them (a hang here would be the
    /// bug; the bound is a hang detector, not a performance target).
    #[test]
    fn backtracking_is_bounded() {
        let chains = [
            format!("SELECT t.v FROM t WHERE t{}..id = 1", ".it".repeat(40)),
            format!("SELECT t.v FROM t WHERE t{}..id = 1", ". t".repeat(40)),
            format!("SELECT {}1{} ..x", "t.f(".repeat(30), ")".repeat(30)),
        ];
        for sql in &chains {
            let t = std::time::Instant::now();
            let r = parse(sql);
            assert!(r.is_err(), "{sql}");
            assert!(
                t.elapsed() < std::time::Duration::from_secs(20),
                "{:?}: {sql}",
                t.elapsed()
            );
        }
        match parse(&chains[0]) {
            Err(ParserError::ParserError(m)) => assert_eq!(m, TOO_COMPLEX),
            other => panic!("{other:?}"),
        }
        // Long but linear statements stay within the budget, and the
        // budget does not outlive the statement.
        let wide = format!("SELECT {}", vec!["a.b.c"; 20_000].join(", "));
        assert!(parse(&wide).is_ok());
        assert_eq!(PREFIX_BUDGET.with(|b| b.get()), u64::MAX);
        assert!(parse("SELECT t.a.b.c FROM t").is_ok());
    }

    #[test]
    fn sequence_options_in_any_order() {
        for (sql, want) in [
            (
                "CREATE SEQUENCE s START WITH 5 INCREMENT BY -1 NO MINVALUE NO MAXVALUE CACHE 1",
                "CREATE SEQUENCE s INCREMENT BY -1 NO MINVALUE NO MAXVALUE START WITH 5 CACHE 1",
            ),
            (
                "CREATE SEQUENCE IF NOT EXISTS x.s CYCLE START 3 AS integer",
                "CREATE SEQUENCE IF NOT EXISTS x.s AS INTEGER START 3 CYCLE",
            ),
            (
                "CREATE TABLE t (id int GENERATED BY DEFAULT AS IDENTITY (START WITH 100 INCREMENT BY 5) PRIMARY KEY)",
                "CREATE TABLE t (id INT GENERATED BY DEFAULT AS IDENTITY ( INCREMENT BY 5 START WITH 100 ) PRIMARY KEY)",
            ),
            (
                "CREATE SEQUENCE s START 1 OWNED BY t.id",
                "CREATE SEQUENCE s START 1 OWNED BY t.id",
            ),
        ] {
            let s = parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(s[0].to_string(), want, "{sql}");
        }
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

/// PostgreSQL's `VACUUM [ ( option [, ...] ) ] [ FULL ] [ FREEZE ]
/// [ VERBOSE ] [ ANALYZE ] [ table [ ( column [, ...] ) ] ]`, after the
/// keyword. A plain VACUUM is sqlparser's `Statement::Vacuum`; with
/// ANALYZE it is a `Statement::Analyze` whose `compute_statistics` says it
/// came from VACUUM (its command tag is VACUUM). One table at most.
fn parse_vacuum(p: &mut Parser) -> Result<Statement, ParserError> {
    use datafusion::sql::sqlparser::ast::{Analyze, VacuumStatement};
    use datafusion::sql::sqlparser::tokenizer::Token;
    let mut full = false;
    let mut analyze = false;
    if p.consume_token(&Token::LParen) {
        loop {
            let option = p.parse_identifier()?.value.to_ascii_lowercase();
            // An option's optional value: a boolean or a number.
            let on = if matches!(p.peek_token().token, Token::Comma | Token::RParen) {
                true
            } else {
                let v = p.next_token().token.to_string().to_ascii_lowercase();
                !matches!(v.as_str(), "false" | "off" | "0" | "no")
            };
            match option.as_str() {
                "full" => full = on,
                "analyze" | "analyse" => analyze = on,
                _ => {}
            }
            if !p.consume_token(&Token::Comma) {
                p.expect_token(&Token::RParen)?;
                break;
            }
        }
    } else {
        full = p.parse_keyword(Keyword::FULL);
        let _ = p.parse_keyword(Keyword::FREEZE);
        let _ = p.parse_keyword(Keyword::VERBOSE);
        analyze = p.parse_keyword(Keyword::ANALYZE);
    }
    let mut table_name = None;
    if !matches!(p.peek_token().token, Token::EOF | Token::SemiColon) {
        table_name = Some(p.parse_object_name(false)?);
        if p.consume_token(&Token::LParen) {
            p.parse_comma_separated(|p| p.parse_identifier())?;
            p.expect_token(&Token::RParen)?;
        }
        if p.peek_token().token == Token::Comma {
            return p.expected(
                "one table (VACUUM of several tables at once is not supported)",
                p.peek_token(),
            );
        }
    }
    Ok(if analyze {
        Statement::Analyze(Analyze {
            table_name,
            partitions: None,
            for_columns: false,
            columns: vec![],
            cache_metadata: false,
            noscan: false,
            compute_statistics: true,
            has_table_keyword: false,
        })
    } else {
        Statement::Vacuum(VacuumStatement {
            full,
            sort_only: false,
            delete_only: false,
            reindex: false,
            recluster: false,
            table_name,
            threshold: None,
            boost: false,
        })
    })
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
