//! One expression node's PostgreSQL spelling as DataFusion plans it, one
//! function per spelling; [`rewrite`] picks the one for the node's kind
//! (scalar subqueries are the visitor's, in `mod.rs`).

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, CharacterLength, DataType, ExactNumberInfo, Expr, Ident, ObjectName,
    ObjectNamePart, Query, SetExpr, UnaryOperator, Value,
};

use super::pieces::{as_text, binary, call, cast, plain_args, similar_to_regex, take};
use super::temporal;

/// Rewrites node `e` by the spelling for its kind; whether it changed.
pub(super) fn rewrite(e: &mut Expr) -> bool {
    match e {
        Expr::Substring { .. } => substring_as_substr(e),
        Expr::Function(_) => function_spelling(e),
        Expr::SimilarTo { .. } => similar_to_as_regex(e),
        Expr::Like { .. } | Expr::ILike { .. } => like_escape(e),
        Expr::Cast { .. } => {
            char_cast(e) || float_cast_of_wide_number(e) || numeric_cast_of_number(e)
        }
        Expr::BinaryOp { .. } => untyped_operand(e),
        Expr::UnaryOp { .. } => bitwise_not_as_xor(e),
        Expr::AtTimeZone { .. } => temporal::at_time_zone(e),
        Expr::Extract { .. } => temporal::extract(e),
        Expr::Interval(_) => temporal::interval_literal(e),
        _ => false,
    }
}

/// The number literal `n`.
fn number(n: &str) -> Expr {
    Expr::value(Value::Number(n.into(), false))
}

/// DataFusion plans SUBSTRING(...) with its own substr, not the session's
/// (which has PostgreSQL's errors): `substr(x, from, for)`.
fn substring_as_substr(e: &mut Expr) -> bool {
    let Expr::Substring {
        expr,
        substring_from,
        substring_for,
        ..
    } = e
    else {
        return false;
    };
    let from = substring_from
        .take()
        .map(|b| *b)
        .unwrap_or_else(|| number("1"));
    let mut args = vec![take(expr.as_mut()), from];
    if let Some(n) = substring_for.take() {
        args.push(*n);
    }
    *e = call("substr", args);
    true
}

/// `mod(a, b)` as `a % b`, `date_part()` as `pg_extract` read as double
/// precision (EXTRACT is numeric), `every()` (the standard's name) as `bool_and()`, `sign()` as
/// `signum()`, `array_remove` / `array_replace` of every match; plain
/// calls only (no OVER or FILTER).
fn function_spelling(e: &mut Expr) -> bool {
    let Expr::Function(f) = e else {
        return false;
    };
    if f.over.is_some() || f.filter.is_some() {
        return false;
    }
    let name = crate::plan::object_parts(&f.name);
    let unqualified = match name.as_slice() {
        [n] => n.as_str(),
        [s, n] if s == "pg_catalog" => n.as_str(),
        _ => return false,
    };
    let Some(args) = plain_args(&f.args) else {
        return false;
    };
    let rename = |f: &mut datafusion::sql::sqlparser::ast::Function, to: &str| {
        f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(to))]);
    };
    match (unqualified, args.len()) {
        ("mod", 2) => {
            let mut it = args.into_iter();
            let (Some(a), Some(b)) = (it.next(), it.next()) else {
                return false;
            };
            *e = binary(a, BinaryOperator::Modulo, b);
        }
        ("date_part", 2) => {
            let mut args = args;
            args.push(Expr::value(Value::Boolean(true)));
            *e = cast(
                call(crate::pgextract::NAME, args),
                DataType::DoublePrecision,
            );
        }
        ("every", 1) => rename(f, "bool_and"),
        ("variance", 1) => rename(f, "var_samp"),
        ("stddev", 1) => rename(f, "stddev_samp"),
        ("sign", 1) => rename(f, "signum"),
        // PostgreSQL's remove and replace every match; DataFusion's
        // `array_remove` / `array_replace` only the first.
        ("array_remove", 2) => rename(f, "array_remove_all"),
        ("array_replace", 3) => rename(f, "array_replace_all"),
        _ => return false,
    }
    true
}

/// `x LIKE 'p' ESCAPE 'c'`: the pattern with backslash escapes, the only
/// ones DataFusion's LIKE knows (in PostgreSQL a backslash is then an
/// ordinary character, and `ESCAPE ''` means no escape at all). `check`
/// refuses other patterns with ESCAPE and raises PostgreSQL's errors.
fn like_escape(e: &mut Expr) -> bool {
    let (Expr::Like {
        pattern,
        escape_char,
        ..
    }
    | Expr::ILike {
        pattern,
        escape_char,
        ..
    }) = e
    else {
        return false;
    };
    let Some(Value::SingleQuotedString(c)) = escape_char.as_ref().map(|v| &v.value) else {
        return false;
    };
    let Expr::Value(v) = pattern.as_ref() else {
        return false;
    };
    let Value::SingleQuotedString(p) = &v.value else {
        return false;
    };
    let Ok(rewritten) = backslash_pattern(p, c) else {
        return false;
    };
    **pattern = Expr::value(Value::SingleQuotedString(rewritten));
    *escape_char = None;
    true
}

/// A LIKE pattern whose escape character is `escape` (empty: none) with
/// backslash escapes instead; PostgreSQL's error when it cannot be (an
/// escape of more than one character, a pattern ending in its escape).
pub(super) fn backslash_pattern(p: &str, escape: &str) -> Result<String, common::Error> {
    let mut chars = escape.chars();
    let esc = chars.next();
    if chars.next().is_some() {
        return Err(common::Error::Sql {
            state: common::SqlState("22019"),
            message: "invalid escape string".into(),
        });
    }
    let mut out = String::with_capacity(p.len() + 4);
    let mut it = p.chars();
    while let Some(ch) = it.next() {
        if Some(ch) == esc {
            let Some(next) = it.next() else {
                return Err(common::Error::Sql {
                    state: common::SqlState("22025"),
                    message: "LIKE pattern must not end with escape character".into(),
                });
            };
            if matches!(next, '%' | '_' | '\\') {
                out.push('\\');
            }
            out.push(next);
        } else if ch == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(ch);
        }
    }
    Ok(out)
}

/// SIMILAR TO as the regular expression PostgreSQL translates it to
/// (DataFusion's answers false); other patterns are refused in `check`.
fn similar_to_as_regex(e: &mut Expr) -> bool {
    let Expr::SimilarTo {
        negated,
        expr,
        pattern,
        escape_char: None,
    } = e
    else {
        return false;
    };
    let Expr::Value(v) = pattern.as_ref() else {
        return false;
    };
    let Value::SingleQuotedString(p) = &v.value else {
        return false;
    };
    let re = similar_to_regex(p);
    let op = if *negated {
        BinaryOperator::PGRegexNotMatch
    } else {
        BinaryOperator::PGRegexMatch
    };
    let x = take(expr.as_mut());
    *e = binary(x, op, Expr::value(Value::SingleQuotedString(re)));
    true
}

/// The length a cast to `varchar(n)` or `char(n)` cuts to, and whether
/// it pads (char); `None` for any other type.
fn char_length(t: &DataType) -> Option<(u64, bool)> {
    match t {
        DataType::Varchar(Some(CharacterLength::IntegerLength { length, .. }))
        | DataType::CharacterVarying(Some(CharacterLength::IntegerLength { length, .. })) => {
            Some((*length, false))
        }
        DataType::Char(l) | DataType::Character(l) => match l {
            Some(CharacterLength::IntegerLength { length, .. }) => Some((*length, true)),
            None => Some((1, true)),
            Some(CharacterLength::Max) => None,
        },
        _ => None,
    }
}

/// `x::varchar(n)` cuts to n characters, `x::char(n)` cuts or pads with
/// blanks to n (DataFusion drops the length).
fn char_cast(e: &mut Expr) -> bool {
    let Expr::Cast {
        kind: CastKind::Cast | CastKind::DoubleColon,
        expr,
        data_type,
        array: false,
        format: None,
    } = e
    else {
        return false;
    };
    let Some((n, pad)) = char_length(data_type) else {
        return false;
    };
    let text = as_text(expr);
    let n = number(&n.to_string());
    let cut = call("substr", vec![text, number("1"), n]);
    *e = if pad {
        // Its blanks do not count in comparisons; a result column shows
        // them (`pad_root_chars`).
        call("rtrim", vec![cut])
    } else {
        cut
    };
    true
}

/// `1e300::float8`: a number literal with an exponent (or past 38 digits)
/// cast to a float is read as the float's text (the same value: the
/// nearest float to the exact decimal); DataFusion would first make it a
/// decimal, which holds 38 digits at most (`1e300`, `1e-300` failed).
fn float_cast_of_wide_number(e: &mut Expr) -> bool {
    let Expr::Cast {
        kind: CastKind::Cast | CastKind::DoubleColon,
        expr,
        data_type:
            t @ (DataType::Double(_)
            | DataType::DoublePrecision
            | DataType::Float8
            | DataType::Float64
            | DataType::Real
            | DataType::Float4
            | DataType::Float32
            | DataType::Float(_)),
        array: false,
        format: None,
    } = e
    else {
        return false;
    };
    // `5::real` is read from text too: an integer cast to `real` in the
    // plan is then type coercion's, whose operator PostgreSQL computes in
    // double precision (`crate::pgfloat`).
    let real_of_integer = matches!(t, DataType::Real | DataType::Float4 | DataType::Float32);
    let Expr::Value(v) = expr.as_mut() else {
        return false;
    };
    let Value::Number(n, _) = &v.value else {
        return false;
    };
    let digits = n.bytes().filter(u8::is_ascii_digit).count();
    let integer = !n.contains(['e', 'E', '.']);
    if !n.contains(['e', 'E']) && digits <= 38 && !(real_of_integer && integer) {
        return false;
    }
    v.value = Value::SingleQuotedString(n.clone());
    true
}

/// `1.5::numeric(10,3)`: a number literal cast to a numeric with a
/// typmod is read as the cast's text (the same value), so that a cast of
/// a number literal in the plan is type coercion's, which keeps the
/// literal's own scale where PostgreSQL's numeric does (`coalesce(price,
/// 0)` prints `0`, `crate::dscale`), while this one prints `1.500`.
fn numeric_cast_of_number(e: &mut Expr) -> bool {
    let Expr::Cast {
        kind: CastKind::Cast | CastKind::DoubleColon,
        expr,
        data_type:
            DataType::Numeric(ExactNumberInfo::Precision(_) | ExactNumberInfo::PrecisionAndScale(..))
            | DataType::Decimal(ExactNumberInfo::Precision(_) | ExactNumberInfo::PrecisionAndScale(..))
            | DataType::Dec(ExactNumberInfo::Precision(_) | ExactNumberInfo::PrecisionAndScale(..)),
        array: false,
        format: None,
    } = e
    else {
        return false;
    };
    let Expr::Value(v) = expr.as_mut() else {
        return false;
    };
    let Value::Number(n, _) = &v.value else {
        return false;
    };
    v.value = Value::SingleQuotedString(n.clone());
    true
}

/// The type PostgreSQL gives the number literal `x`; `None` when `x` is
/// not one.
pub(super) fn number_type(x: &Expr) -> Option<DataType> {
    let Expr::Value(v) = x else {
        return None;
    };
    match &v.value {
        Value::Number(n, _) if n.contains(['.', 'e', 'E']) => {
            Some(DataType::Numeric(ExactNumberInfo::None))
        }
        Value::Number(n, _) if n.parse::<i32>().is_ok() => Some(DataType::Int(None)),
        Value::Number(n, _) if n.parse::<i64>().is_ok() => Some(DataType::BigInt(None)),
        Value::Number(..) => Some(DataType::Numeric(ExactNumberInfo::None)),
        _ => None,
    }
}

/// The type of `x::t` when `t` is a number type (`'1e300'::float8 *
/// '1e300'` multiplies two doubles).
fn cast_number_type(x: &Expr) -> Option<DataType> {
    let Expr::Cast { data_type, .. } = x else {
        return None;
    };
    matches!(
        data_type,
        DataType::SmallInt(_)
            | DataType::Int(_)
            | DataType::Integer(_)
            | DataType::BigInt(_)
            | DataType::Int2(_)
            | DataType::Int4(_)
            | DataType::Int8(_)
            | DataType::Real
            | DataType::Float4
            | DataType::Float8
            | DataType::Double(_)
            | DataType::DoublePrecision
            | DataType::Numeric(_)
            | DataType::Decimal(_)
    )
    .then(|| data_type.clone())
}

/// Whether `x` is an untyped string literal (`'abc'`).
fn is_untyped_string(x: &Expr) -> bool {
    matches!(x, Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_)))
}

/// `'abc' + 1`: the untyped string takes the number's type, as PostgreSQL
/// resolves an unknown literal (so `'1' + 1` is 2 and `'abc' + 1` is
/// 22P02).
fn untyped_operand(e: &mut Expr) -> bool {
    let Expr::BinaryOp {
        left,
        op:
            BinaryOperator::Plus
            | BinaryOperator::Minus
            | BinaryOperator::Multiply
            | BinaryOperator::Divide
            | BinaryOperator::Modulo,
        right,
    } = e
    else {
        return false;
    };
    let (string, other) = if is_untyped_string(left) {
        (left, right)
    } else if is_untyped_string(right) {
        (right, left)
    } else {
        return false;
    };
    let Some(t) = number_type(other).or_else(|| cast_number_type(other)) else {
        return false;
    };
    let x = take(string.as_mut());
    **string = cast(x, t);
    true
}

/// `~x` (bitwise not) as `x # -1`.
fn bitwise_not_as_xor(e: &mut Expr) -> bool {
    let Expr::UnaryOp {
        op: UnaryOperator::BitwiseNot,
        expr,
    } = e
    else {
        return false;
    };
    let x = take(expr.as_mut());
    let minus_one = Expr::UnaryOp {
        op: UnaryOperator::Minus,
        expr: Box::new(number("1")),
    };
    *e = binary(x, BinaryOperator::PGBitwiseXor, minus_one);
    true
}

/// `pg_typeof(x)` where the statement's text says the type (see
/// `crate::pgtypeof`): an untyped literal or NULL is `unknown`, a cast or
/// a typed literal names its type; the name is passed as a second
/// argument. Seen before the argument is rewritten
/// (a cast to varchar becomes a cut of text). Whether it changed.
pub(super) fn pg_typeof(e: &mut Expr) -> bool {
    let Expr::Function(f) = e else {
        return false;
    };
    let name = crate::plan::object_parts(&f.name);
    if !matches!(name.as_slice(), [n] | [_, n] if n == crate::pgtypeof::NAME)
        || (name.len() == 2 && name[0] != "pg_catalog")
    {
        return false;
    }
    let Some(args) = plain_args(&f.args) else {
        return false;
    };
    let Ok([mut arg]) = <[Expr; 1]>::try_from(args) else {
        return false;
    };
    while let Expr::Nested(x) = arg {
        arg = *x;
    }
    let named = match &arg {
        Expr::Value(v) => match &v.value {
            Value::Null
            | Value::SingleQuotedString(_)
            | Value::EscapedStringLiteral(_)
            | Value::NationalStringLiteral(_)
            | Value::DollarQuotedString(_) => Some("unknown".to_string()),
            Value::Number(..) => number_type(&arg).and_then(|t| type_named(&t)),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::Number(n, l) => {
                    number_type(&Expr::value(Value::Number(format!("-{n}"), *l)))
                        .and_then(|t| type_named(&t))
                }
                _ => None,
            },
            _ => None,
        },
        Expr::Cast { data_type, .. } => type_named(data_type),
        Expr::TypedString(t) => type_named(&t.data_type),
        _ => None,
    };
    match named {
        Some(n) => {
            *e = call(
                crate::pgtypeof::NAME,
                vec![arg, Expr::value(Value::SingleQuotedString(n))],
            );
            true
        }
        None => false,
    }
}

/// The regtype name of a type written in the statement, if it is a catalog
/// type.
fn type_named(t: &DataType) -> Option<String> {
    common::SqlType::parse(&t.to_string().to_lowercase())
        .ok()
        .map(|t| crate::pgtypeof::sql_type_name(&t))
}

/// `VALUES (-2.5::numeric), (0.5::numeric)`: a column whose rows are all
/// number constants cast to `numeric` without a scale (or NULL), each with
/// the same number of decimals, is typed with that scale
/// (`numeric(38, 1)`), so it prints as PostgreSQL prints each value
/// (`-2.5`). DataFusion types such a column with 10 decimals. Rows of
/// different scales are left as they are (PostgreSQL prints each row
/// with its own).
pub(super) fn numeric_values(q: &mut Query) -> bool {
    let SetExpr::Values(v) = q.body.as_mut() else {
        return false;
    };
    let width = v.rows.first().map_or(0, |r| r.len());
    let mut changed = false;
    for j in 0..width {
        let scales: Option<Vec<Option<i64>>> = v
            .rows
            .iter()
            .map(|r| r.get(j).and_then(unscaled_numeric_cast))
            .collect();
        let Some(scales) = scales else { continue };
        let mut given = scales.iter().flatten();
        let Some(&s) = given.next() else { continue };
        if given.any(|&x| x != s) {
            continue;
        }
        for r in &mut v.rows {
            let cell = match r.get_mut(j) {
                Some(Expr::UnaryOp { expr, .. }) => Some(expr.as_mut()),
                other => other,
            };
            if let Some(Expr::Cast { data_type, .. }) = cell {
                *data_type = DataType::Numeric(ExactNumberInfo::PrecisionAndScale(38, s));
                changed = true;
            }
        }
    }
    changed
}

/// For a VALUES cell: `Some(Some(scale))` for a number constant (maybe
/// negated) cast to `numeric`/`decimal` without a scale, `Some(None)` for
/// NULL, `None` for anything else.
fn unscaled_numeric_cast(e: &Expr) -> Option<Option<i64>> {
    match e {
        Expr::Value(v) if matches!(v.value, Value::Null) => Some(None),
        // `-2.5::numeric` is `-(2.5::numeric)`.
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } if matches!(expr.as_ref(), Expr::Cast { .. }) => {
            unscaled_numeric_cast(expr).filter(Option::is_some)
        }
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type:
                DataType::Numeric(ExactNumberInfo::None)
                | DataType::Decimal(ExactNumberInfo::None)
                | DataType::Dec(ExactNumberInfo::None),
            array: false,
            format: None,
        } => {
            let inner = match expr.as_ref() {
                Expr::UnaryOp {
                    op: UnaryOperator::Minus | UnaryOperator::Plus,
                    expr,
                } => expr.as_ref(),
                e => e,
            };
            let Expr::Value(v) = inner else { return None };
            let Value::Number(n, _) = &v.value else {
                return None;
            };
            let digits = n.bytes().filter(u8::is_ascii_digit).count();
            if n.contains(['e', 'E']) || digits > 38 {
                return None;
            }
            Some(Some(n.split_once('.').map_or(0, |(_, f)| f.len() as i64)))
        }
        _ => None,
    }
}
