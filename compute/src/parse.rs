//! Client statement text to sqlparser statements: the size and depth
//! limits of [`crate::limits`] are applied before anything else walks a
//! tree, and parser errors become 42601 with PostgreSQL's position.

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::Statement;
use datafusion::sql::sqlparser::parser::ParserError;

fn parse_error(sql: &str, e: ParserError) -> Error {
    match &e {
        ParserError::ParserError(m) if m == crate::dialect::TOO_COMPLEX => {
            return Error::Sql {
                state: common::SqlState::STATEMENT_TOO_COMPLEX,
                message: m.clone(),
            }
        }
        ParserError::ParserError(m) if m.starts_with(crate::dialect::UNSUPPORTED) => {
            return Error::unsupported(m.trim_start_matches(crate::dialect::UNSUPPORTED));
        }
        ParserError::RecursionLimitExceeded => {
            return Error::Sql {
                state: common::SqlState::STATEMENT_TOO_COMPLEX,
                message: "stack depth limit exceeded: the statement nests too deeply".into(),
            }
        }
        _ => {}
    }
    let msg = e.to_string();
    // "... at Line: 1, Column: 8" -> character position in the query.
    let position = msg.rsplit("Line: ").next().and_then(|rest| {
        let mut it = rest.split(", Column: ");
        let line: usize = it.next()?.trim().parse().ok()?;
        let col: usize = it.next()?.trim().parse().ok()?;
        let before: usize = sql
            .lines()
            .take(line.saturating_sub(1))
            .map(|l| l.chars().count() + 1)
            .sum();
        Some(before + col)
    });
    let message = msg
        .trim_start_matches("sql parser error: ")
        .split(" at Line:")
        .next()
        .unwrap_or(&msg)
        .to_string();
    Error::Syntax {
        message: format!("syntax error: {message}"),
        position,
    }
}

/// Parses a client's statement text, refusing text or expression trees
/// over the limits of [`crate::limits`] before anything else walks them.
pub fn parse_sql(sql: &str) -> Result<Vec<Statement>> {
    crate::limits::check_size(sql)?;
    parse_checked(sql)
}

fn parse_checked(sql: &str) -> Result<Vec<Statement>> {
    let stmts = crate::dialect::parse(sql).map_err(|e| parse_error(sql, e))?;
    let mut out = Vec::with_capacity(stmts.len());
    let mut err = None;
    for s in stmts {
        if err.is_some() {
            crate::limits::dismantle(s);
            continue;
        }
        match crate::limits::check_statement(s) {
            Ok(s) => out.push(s),
            Err(e) => err = Some(e),
        }
    }
    match err {
        Some(e) => {
            out.into_iter().for_each(crate::limits::dismantle);
            Err(e)
        }
        None => Ok(out),
    }
}

/// Parses an expression Tessera stored in its catalog (a column default,
/// written from a parsed client expression).
pub fn parse_stored_expr(text: &str) -> Result<datafusion::sql::sqlparser::ast::Expr> {
    datafusion::sql::sqlparser::parser::Parser::new(&crate::dialect::TesseraDialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(Error::internal)
}
