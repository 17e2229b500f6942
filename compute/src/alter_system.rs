//! `ALTER SYSTEM SET name {= | TO} value [, ...] | DEFAULT` and
//! `ALTER SYSTEM RESET name | ALL`, which sqlparser does not know:
//! parsed here for `crate::dialect`, carried to the planner in a
//! statement of sqlparser's, read back by [`of`].

use datafusion::sql::sqlparser::ast::Statement;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};

/// `ALTER SYSTEM SET name {= | TO} value [, ...] | DEFAULT`,
/// `ALTER SYSTEM RESET name | ALL`, as PostgreSQL's grammar reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterSystem {
    /// The parameter as written (lower case unless quoted); `None`: ALL.
    pub name: Option<String>,
    /// The value's items (`None`: RESET, or SET ... TO DEFAULT).
    pub value: Option<Vec<String>>,
}

/// sqlparser has no ALTER SYSTEM statement: it travels to the planner as
/// Snowflake's `ALTER SESSION` (which this dialect never parses, so the
/// two cannot be confused): SET with the name and its items, UNSET with
/// the name, UNSET of nothing for RESET ALL. [`alter_system_of`] reads
/// it back.
pub(crate) fn parse(p: &mut Parser) -> Result<Statement, ParserError> {
    use datafusion::sql::sqlparser::ast::helpers::key_value_options::{
        KeyValueOption, KeyValueOptionKind, KeyValueOptions, KeyValueOptionsDelimiter,
    };
    use datafusion::sql::sqlparser::ast::Value;
    let name = |p: &mut Parser| -> Result<String, ParserError> {
        Ok(p.parse_object_name(false)?
            .0
            .iter()
            .filter_map(|part| part.as_ident())
            .map(normalized)
            .collect::<Vec<_>>()
            .join("."))
    };
    let option = |name: String, items: Vec<String>| KeyValueOption {
        option_name: name,
        option_value: KeyValueOptionKind::Multi(
            items
                .into_iter()
                .map(|v| Value::SingleQuotedString(v).with_empty_span())
                .collect(),
        ),
    };
    let (set, options) = if p.parse_keyword(Keyword::SET) {
        let name = name(p)?;
        if !p.parse_keyword(Keyword::TO) {
            p.expect_token(&datafusion::sql::sqlparser::tokenizer::Token::Eq)?;
        }
        if p.parse_keyword(Keyword::DEFAULT) {
            (false, vec![option(name, vec![])])
        } else {
            let items = p.parse_comma_separated(parse_setting_item)?;
            (true, vec![option(name, items)])
        }
    } else if p.parse_keyword(Keyword::RESET) {
        if p.parse_keyword(Keyword::ALL) {
            (false, vec![])
        } else {
            (false, vec![option(name(p)?, vec![])])
        }
    } else {
        return p.expected("SET or RESET", p.peek_token());
    };
    Ok(Statement::AlterSession {
        set,
        session_params: KeyValueOptions {
            options,
            delimiter: KeyValueOptionsDelimiter::Comma,
        },
    })
}

/// An identifier as PostgreSQL folds it: lower case unless quoted.
fn normalized(i: &datafusion::sql::sqlparser::ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// One item of a setting's value (PostgreSQL's `var_value`): a string, a
/// signed number, or a word (`on`, `true`, `warning`), folded to lower
/// case unless quoted.
fn parse_setting_item(p: &mut Parser) -> Result<String, ParserError> {
    use datafusion::sql::sqlparser::tokenizer::Token;
    let token = p.next_token();
    Ok(match token.token {
        Token::SingleQuotedString(s) => s,
        Token::Number(n, _) => n,
        Token::Minus | Token::Plus => {
            let sign = if token.token == Token::Minus { "-" } else { "" };
            match p.next_token().token {
                Token::Number(n, _) => format!("{sign}{n}"),
                _ => return p.expected("a number", p.peek_token()),
            }
        }
        Token::Word(w) if w.quote_style.is_some() => w.value,
        Token::Word(w) => w.value.to_lowercase(),
        _ => return p.expected("a setting value", token),
    })
}

/// The ALTER SYSTEM statement `stmt` carries (see [`parse`]).
pub fn of(stmt: &Statement) -> Option<AlterSystem> {
    use datafusion::sql::sqlparser::ast::helpers::key_value_options::KeyValueOptionKind;
    let Statement::AlterSession {
        set,
        session_params,
    } = stmt
    else {
        return None;
    };
    let Some(o) = session_params.options.first() else {
        return Some(AlterSystem {
            name: None,
            value: None,
        });
    };
    let items = match &o.option_value {
        KeyValueOptionKind::Multi(v) => v
            .iter()
            .map(|v| v.clone().into_string().unwrap_or_default())
            .collect(),
        _ => vec![],
    };
    Some(AlterSystem {
        name: Some(o.option_name.clone()),
        value: set.then_some(items),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alter_system_reads_as_postgres() {
        let of = |sql: &str| super::of(&crate::dialect::parse(sql).unwrap()[0]).unwrap();
        let set = |name: &str, items: &[&str]| AlterSystem {
            name: Some(name.into()),
            value: Some(items.iter().map(|s| s.to_string()).collect()),
        };
        let reset = |name: Option<&str>| AlterSystem {
            name: name.map(Into::into),
            value: None,
        };
        assert_eq!(
            of("alter system set statement_timeout=6000000"),
            set("statement_timeout", &["6000000"])
        );
        assert_eq!(
            of("ALTER SYSTEM SET work_mem = '128MB'"),
            set("work_mem", &["128MB"])
        );
        assert_eq!(
            of("alter system set AutoVacuum TO False"),
            set("autovacuum", &["false"])
        );
        assert_eq!(
            of("alter system set search_path = \"$user\", 'a b', Public"),
            set("search_path", &["$user", "a b", "public"])
        );
        assert_eq!(
            of("alter system set lock_timeout = -1"),
            set("lock_timeout", &["-1"])
        );
        assert_eq!(
            of("alter system set tessera.pushdown = off"),
            set("tessera.pushdown", &["off"])
        );
        assert_eq!(
            of("alter system set work_mem to default"),
            reset(Some("work_mem"))
        );
        assert_eq!(of("alter system reset work_mem"), reset(Some("work_mem")));
        assert_eq!(of("ALTER SYSTEM RESET ALL"), reset(None));
        assert!(crate::dialect::parse("alter system work_mem = 1").is_err());
        assert!(crate::dialect::parse("alter system set work_mem").is_err());
        // Other statements are not ALTER SYSTEM.
        assert_eq!(
            super::of(&crate::dialect::parse("set work_mem = 1").unwrap()[0]),
            None
        );
    }
}
