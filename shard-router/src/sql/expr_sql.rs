//! SQL for expressions: DataFusion `Expr`s rendered as MariaDB SQL, only
//! where MariaDB evaluates them exactly like PostgreSQL (and DataFusion).
//! Shared by the table scans' filter pushdown and the fragment pushdown.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::{Expr, ExprSchemable};
use storage_adapter::quote_str;

/// Renders a DataFusion literal as MariaDB SQL, when it means the same.
fn literal_sql(v: &ScalarValue) -> Option<String> {
    Some(match v {
        ScalarValue::Int8(Some(i)) => i.to_string(),
        ScalarValue::Int16(Some(i)) => i.to_string(),
        ScalarValue::Int32(Some(i)) => i.to_string(),
        ScalarValue::Int64(Some(i)) => i.to_string(),
        ScalarValue::UInt8(Some(i)) => i.to_string(),
        ScalarValue::UInt16(Some(i)) => i.to_string(),
        ScalarValue::UInt32(Some(i)) => i.to_string(),
        ScalarValue::UInt64(Some(i)) => i.to_string(),
        ScalarValue::Float64(Some(f)) if f.is_finite() => format!("{f:e}"),
        ScalarValue::Float32(Some(f)) if f.is_finite() => format!("{:e}", *f as f64),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => quote_str(s),
        ScalarValue::Boolean(Some(b)) => {
            if *b {
                "TRUE".into()
            } else {
                "FALSE".into()
            }
        }
        ScalarValue::Date32(Some(_)) => format!("DATE '{v}'"),
        ScalarValue::Decimal128(Some(_), _, _) => v.to_string(),
        _ => return None,
    })
}

pub(crate) fn is_exact_numeric(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Decimal128(..))
}

/// Renders `e` (over `input`, whose columns are `cols` in SQL) as MariaDB
/// SQL, or None when MariaDB could evaluate it differently from PostgreSQL
/// (and DataFusion).
pub fn render(e: &Expr, input: &DFSchema, cols: &[String]) -> Option<String> {
    let r = |x: &Expr| render(x, input, cols);
    let ty = |x: &Expr| x.get_type(input).ok();
    Some(match e {
        Expr::Column(c) => cols.get(input.index_of_column(c).ok()?)?.clone(),
        Expr::Literal(v, _) => literal_sql(v)?,
        Expr::Alias(a) => r(&a.expr)?,
        Expr::BinaryExpr(b) => {
            let op = super::compat::Op::of_datafusion(&b.op)?;
            // Exact arithmetic only (see `compat::Op::is_arithmetic`).
            if op.is_arithmetic()
                && !(is_exact_numeric(&ty(&b.left)?) && is_exact_numeric(&ty(&b.right)?))
            {
                return None;
            }
            let (mut l, mut rt) = (r(&b.left)?, r(&b.right)?);
            if super::compat::is_comparison(&b.op) {
                l = compared_as_text(l, &b.left, input, &b.right, input);
                rt = compared_as_text(rt, &b.right, input, &b.left, input);
            }
            format!("({l} {} {rt})", op.sql())
        }
        Expr::Not(x) => format!("(NOT {})", r(x)?),
        Expr::IsNull(x) => format!("({} IS NULL)", r(x)?),
        Expr::IsNotNull(x) => format!("({} IS NOT NULL)", r(x)?),
        Expr::Negative(x) if is_exact_numeric(&ty(x)?) => format!("(-{})", r(x)?),
        Expr::InList(l) => {
            let items: Option<Vec<String>> = l.list.iter().map(r).collect();
            format!(
                "({} {}IN ({}))",
                r(&l.expr)?,
                if l.negated { "NOT " } else { "" },
                items?.join(", ")
            )
        }
        Expr::Between(b) => format!(
            "({} {}BETWEEN {} AND {})",
            r(&b.expr)?,
            if b.negated { "NOT " } else { "" },
            r(&b.low)?,
            r(&b.high)?
        ),
        Expr::Like(l) => {
            // No escapes in the pattern: MariaDB's and PostgreSQL's default
            // escape handling then cannot differ.
            let Expr::Literal(
                ScalarValue::Utf8(Some(p))
                | ScalarValue::Utf8View(Some(p))
                | ScalarValue::LargeUtf8(Some(p)),
                _,
            ) = l.pattern.as_ref()
            else {
                return None;
            };
            if l.case_insensitive || l.escape_char.is_some() || p.contains('\\') {
                return None;
            }
            format!(
                "({} {}LIKE {})",
                r(&l.expr)?,
                if l.negated { "NOT " } else { "" },
                r(&l.pattern)?
            )
        }
        Expr::Case(c) => {
            let mut s = "(CASE".to_string();
            if let Some(x) = &c.expr {
                s.push(' ');
                s.push_str(&r(x)?);
            }
            for (w, t) in &c.when_then_expr {
                s.push_str(&format!(" WHEN {} THEN {}", r(w)?, r(t)?));
            }
            if let Some(x) = &c.else_expr {
                s.push_str(&format!(" ELSE {}", r(x)?));
            }
            s.push_str(" END)");
            s
        }
        Expr::Cast(c) => {
            let from = ty(&c.expr)?;
            let same = match (&from, c.field.data_type()) {
                (f, t) if f == t => true,
                (f, t) if f.is_integer() && t.is_integer() => {
                    int_width(f)? <= int_width(t)? && f.is_signed_integer()
                }
                (f, &DataType::Decimal128(p, s)) if f.is_integer() => (p as i32 - s as i32) >= 19,
                (&DataType::Decimal128(p1, s1), &DataType::Decimal128(p2, s2)) => {
                    s2 >= s1 && (p2 as i32 - s2 as i32) >= (p1 as i32 - s1 as i32)
                }
                (
                    DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8,
                    DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8,
                ) => true,
                _ => false,
            };
            if !same {
                return None;
            }
            r(&c.expr)?
        }
        Expr::ScalarFunction(f) => {
            let name = f.func.name().to_ascii_lowercase();
            match (name.as_str(), f.args.as_slice()) {
                ("date_part", [Expr::Literal(part, _), x])
                    if matches!(ty(x)?, DataType::Date32) =>
                {
                    let unit = match part.to_string().to_ascii_lowercase().as_str() {
                        "year" => "YEAR",
                        "month" => "MONTH",
                        "day" => "DAY",
                        _ => return None,
                    };
                    format!("EXTRACT({unit} FROM {})", r(x)?)
                }
                ("substr" | "substring", [x, Expr::Literal(start, _), Expr::Literal(len, _)])
                    if matches!(ty(x)?, DataType::Utf8 | DataType::Utf8View) =>
                {
                    let (s, n) = (int_literal(start)?, int_literal(len)?);
                    if s < 1 || n < 0 {
                        return None;
                    }
                    format!("SUBSTRING({}, {s}, {n})", r(x)?)
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// `sql`, the rendering of `e`, as compared with `other`: a char(n)
/// column (PAD SPACE on the shard) compared with text (NO PAD) compares
/// as text, as PostgreSQL casts bpchar to text; MariaDB refuses the mix
/// of collations otherwise. A literal stays a bpchar comparison.
pub fn compared_as_text(
    sql: String,
    e: &Expr,
    schema: &DFSchema,
    other: &Expr,
    other_schema: &DFSchema,
) -> String {
    let text = matches!(
        other.get_type(other_schema),
        Ok(DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
    );
    if is_bpchar(e, schema)
        && !is_bpchar(other, other_schema)
        && text
        && !matches!(other, Expr::Literal(..))
    {
        format!("({sql} COLLATE utf8mb4_nopad_bin)")
    } else {
        sql
    }
}

/// Whether `e` is a char(n) column (see `arrow_types::BPCHAR_WIDTH`).
fn is_bpchar(e: &Expr, input: &DFSchema) -> bool {
    let Expr::Column(c) = e else {
        return false;
    };
    datafusion::common::ExprSchema::field_from_column(input, c)
        .is_ok_and(|f| f.metadata().contains_key(super::arrow_types::BPCHAR_WIDTH))
}

fn int_width(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int8 => 8,
        DataType::Int16 => 16,
        DataType::Int32 => 32,
        DataType::Int64 => 64,
        _ => return None,
    })
}

fn int_literal(v: &ScalarValue) -> Option<i64> {
    match v {
        ScalarValue::Int64(Some(i)) => Some(*i),
        ScalarValue::Int32(Some(i)) => Some(*i as i64),
        _ => None,
    }
}
