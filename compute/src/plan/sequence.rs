//! Sequences: CREATE SEQUENCE options into a `SequenceDef` (PostgreSQL's
//! defaults and checks), the sequence functions (`nextval`, `currval`,
//! `setval`, `lastval`) recognised in statements, and sequence names
//! resolved as PostgreSQL resolves a `regclass` text. Pure; `exec::sequence`
//! runs them.

use common::{Error, Result, SqlState, SqlType};
use datafusion::sql::sqlparser::ast::{
    DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectName, Query, SelectItem,
    SequenceOptions, SetExpr, Value,
};
use meta::{Catalog, SequenceDef};
use shard_router::sql::eval_const;

use crate::plan::names::object_parts;

/// A sequence function call.
#[derive(Debug, Clone)]
pub enum SeqCall {
    Nextval(Expr),
    Currval(Expr),
    /// name, value, is_called (default true)
    Setval(Box<(Expr, Expr, Option<Expr>)>),
    Lastval,
}

impl SeqCall {
    pub fn name(&self) -> &'static str {
        match self {
            SeqCall::Nextval(_) => "nextval",
            SeqCall::Currval(_) => "currval",
            SeqCall::Setval(..) => "setval",
            SeqCall::Lastval => "lastval",
        }
    }
}

fn is_sequence_function(name: &ObjectName) -> bool {
    let parts = object_parts(name);
    let n = parts.last().map(String::as_str).unwrap_or("");
    matches!(n, "nextval" | "currval" | "setval" | "lastval")
        && (parts.len() == 1 || parts[0] == "pg_catalog")
}

/// The sequence function call `e` is, if it is one.
pub fn sequence_call(e: &Expr) -> Option<Result<SeqCall>> {
    let Expr::Function(f) = e else { return None };
    if !is_sequence_function(&f.name) {
        return None;
    }
    let parts = object_parts(&f.name);
    let name = parts.last().cloned().unwrap_or_default();
    let args: Vec<Expr> = match &f.args {
        FunctionArguments::None => vec![],
        FunctionArguments::List(l) => {
            let mut v = vec![];
            for a in &l.args {
                match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => v.push(e.clone()),
                    _ => {
                        return Some(Err(Error::unsupported(format!(
                            "this argument of {name}()"
                        ))))
                    }
                }
            }
            v
        }
        FunctionArguments::Subquery(_) => {
            return Some(Err(Error::unsupported(format!("{name}() of a subquery"))))
        }
    };
    let wrong = || {
        Err(Error::Sql {
            state: SqlState::UNDEFINED_FUNCTION,
            message: format!(
                "function {name} with {} arguments does not exist",
                args.len()
            ),
        })
    };
    Some(match (name.as_str(), args.as_slice()) {
        ("nextval", [n]) => Ok(SeqCall::Nextval(n.clone())),
        ("currval", [n]) => Ok(SeqCall::Currval(n.clone())),
        ("setval", [n, v]) => Ok(SeqCall::Setval(Box::new((n.clone(), v.clone(), None)))),
        ("setval", [n, v, c]) => Ok(SeqCall::Setval(Box::new((
            n.clone(),
            v.clone(),
            Some(c.clone()),
        )))),
        ("lastval", []) => Ok(SeqCall::Lastval),
        _ => wrong(),
    })
}

/// Whether a statement calls a sequence function anywhere.
pub fn calls_sequence_function<T: datafusion::sql::sqlparser::ast::Visit>(node: &T) -> bool {
    use datafusion::sql::sqlparser::ast::visit_expressions;
    use std::ops::ControlFlow;
    visit_expressions(node, |e| match e {
        Expr::Function(f) if is_sequence_function(&f.name) => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// `q`'s SELECT when it is a bare SELECT list: no FROM, WHERE, GROUP
/// clause, ORDER BY, LIMIT, DISTINCT or WITH (the shape of a function
/// call statement such as `SELECT nextval('s')`).
pub fn bare_select(q: &Query) -> Option<&datafusion::sql::sqlparser::ast::Select> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let bare = s.from.is_empty()
        && s.selection.is_none()
        && q.order_by.is_none()
        && q.limit_clause.is_none()
        && s.having.is_none()
        && s.distinct.is_none()
        && q.with.is_none();
    bare.then_some(s.as_ref())
}

/// The calls of `SELECT nextval('s'), setval('s', 5), ...` (no FROM, no
/// other clause, nothing else selected), with their column names. Other
/// queries calling sequence functions are refused (0A000).
pub fn sequence_select(q: &Query) -> Result<Vec<(String, SeqCall)>> {
    let refuse = || {
        Error::unsupported("sequence functions in a query that reads tables or has clauses (call them in SELECT without FROM, in INSERT VALUES or a column DEFAULT)")
    };
    let s = bare_select(q).ok_or_else(refuse)?;
    let mut out = vec![];
    for item in &s.projection {
        let (e, alias) = match item {
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => {
                (expr, Some(shard_router::sql::normalize_ident(alias)))
            }
            _ => return Err(refuse()),
        };
        let call = sequence_call(e).ok_or_else(refuse)??;
        out.push((alias.unwrap_or_else(|| call.name().to_string()), call));
    }
    Ok(out)
}

/// The sequence a `regclass` text names ('s', 'public.s', '"S"'), as
/// PostgreSQL resolves it: unquoted parts folded to lower case, the
/// session's schema when unqualified. 42P01 if there is none.
pub fn resolve_sequence(
    catalog: &Catalog,
    text: &str,
    schema: &str,
) -> Result<std::sync::Arc<SequenceDef>> {
    let (s, n) = regclass_parts(text, schema)?;
    catalog.sequence(&s, &n).cloned().ok_or_else(|| Error::Sql {
        state: SqlState::UNDEFINED_TABLE,
        message: format!("relation \"{n}\" does not exist"),
    })
}

/// A relation named by text as `regclass` reads it: `name`,
/// `schema.name` or `db.schema.name`, unquoted parts folded to lower
/// case; `schema` when none is named. Returns (schema, name).
pub fn regclass_parts(text: &str, schema: &str) -> Result<(String, String)> {
    let mut parts = vec![];
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = text.trim().chars().peekable();
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => {
                quoted = !quoted;
                was_quoted = true;
            }
            '.' if !quoted => {
                parts.push(std::mem::take(&mut cur));
                was_quoted = false;
            }
            c if quoted || was_quoted => cur.push(c),
            c => cur.extend(c.to_lowercase()),
        }
    }
    parts.push(cur);
    let (s, n) = match parts.as_slice() {
        [n] => (schema.to_string(), n.clone()),
        [s, n] => (s.clone(), n.clone()),
        [_, s, n] => (s.clone(), n.clone()),
        _ => {
            return Err(Error::Sql {
                state: SqlState("42601"),
                message: format!("improper relation name (too many dotted names): {text}"),
            })
        }
    };
    Ok((s, n))
}

/// The text of a sequence-name argument: a string literal, optionally
/// cast to `regclass` (as PostgreSQL prints defaults: `'s'::regclass`).
pub fn sequence_name_text(e: &Expr) -> Result<String> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => Ok(s.clone()),
            _ => Err(Error::unsupported(
                "a sequence named by something else than text",
            )),
        },
        Expr::Cast {
            expr, data_type, ..
        } if data_type.to_string().eq_ignore_ascii_case("regclass")
            || data_type.to_string().eq_ignore_ascii_case("text") =>
        {
            sequence_name_text(expr)
        }
        Expr::Nested(e) => sequence_name_text(e),
        _ => Err(Error::unsupported("a sequence named by an expression")),
    }
}

/// The column source (`SequenceDef::column_source`) of a column default
/// that is `nextval('s')`, if it is one.
pub fn nextval_default(e: &Expr, catalog: &Catalog, schema: &str) -> Result<Option<String>> {
    match sequence_call(e) {
        Some(Ok(SeqCall::Nextval(n))) => {
            let def = resolve_sequence(catalog, &sequence_name_text(&n)?, schema)?;
            Ok(Some(def.column_source()))
        }
        Some(Ok(_)) => Err(Error::unsupported(
            "a column default calling a sequence function other than nextval",
        )),
        Some(Err(e)) => Err(e),
        None => Ok(None),
    }
}

fn option_value(e: &Expr, what: &str) -> Result<i64> {
    match eval_const(e, &[])? {
        common::Datum::Int(i) => Ok(i),
        other => Err(Error::InvalidParameter {
            message: format!("{what} must be an integer, not {other:?}"),
        }),
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidParameter { message }
}

/// A new sequence from CREATE SEQUENCE, with PostgreSQL's defaults and
/// checks (22023).
pub fn sequence_def(
    schema: &str,
    name: &str,
    data_type: Option<&DataType>,
    options: &[SequenceOptions],
) -> Result<SequenceDef> {
    let ty = match data_type {
        None => SqlType::BigInt,
        Some(t) => match SqlType::parse(&t.to_string().to_lowercase())? {
            t @ (SqlType::SmallInt | SqlType::Integer | SqlType::BigInt) => t,
            _ => {
                return Err(invalid(
                    "sequence type must be smallint, integer, or bigint".into(),
                ))
            }
        },
    };
    let (type_min, type_max) = match ty {
        SqlType::SmallInt => (i16::MIN as i64, i16::MAX as i64),
        SqlType::Integer => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    };
    let (mut inc, mut min, mut max, mut start, mut cache, mut cycle) =
        (1i64, None, None, None, 1i64, false);
    for o in options {
        match o {
            SequenceOptions::IncrementBy(e, _) => inc = option_value(e, "INCREMENT")?,
            SequenceOptions::MinValue(e) => {
                min = e
                    .as_ref()
                    .map(|e| option_value(e, "MINVALUE"))
                    .transpose()?
            }
            SequenceOptions::MaxValue(e) => {
                max = e
                    .as_ref()
                    .map(|e| option_value(e, "MAXVALUE"))
                    .transpose()?
            }
            SequenceOptions::StartWith(e, _) => start = Some(option_value(e, "START")?),
            SequenceOptions::Cache(e) => cache = option_value(e, "CACHE")?,
            // sqlparser's flag is "NO CYCLE".
            SequenceOptions::Cycle(no) => cycle = !*no,
        }
    }
    if inc == 0 {
        return Err(invalid("INCREMENT must not be zero".into()));
    }
    let min = min.unwrap_or(if inc > 0 { 1 } else { type_min });
    let max = max.unwrap_or(if inc > 0 { type_max } else { -1 });
    if min < type_min || max > type_max {
        let (which, v) = if min < type_min {
            ("MINVALUE", min)
        } else {
            ("MAXVALUE", max)
        };
        return Err(invalid(format!(
            "{which} ({v}) is out of range for sequence data type {ty}"
        )));
    }
    if min >= max {
        return Err(invalid(format!(
            "MINVALUE ({min}) must be less than MAXVALUE ({max})"
        )));
    }
    let start = start.unwrap_or(if inc > 0 { min } else { max });
    if start < min {
        return Err(invalid(format!(
            "START value ({start}) cannot be less than MINVALUE ({min})"
        )));
    }
    if start > max {
        return Err(invalid(format!(
            "START value ({start}) cannot be greater than MAXVALUE ({max})"
        )));
    }
    if cache < 1 {
        return Err(invalid(format!(
            "CACHE ({cache}) must be greater than zero"
        )));
    }
    Ok(SequenceDef {
        id: 0,
        schema: schema.to_string(),
        name: name.to_string(),
        ty,
        increment: inc,
        min,
        max,
        start,
        cache,
        cycle,
        owned_by: None,
        generation: 0,
    })
}
