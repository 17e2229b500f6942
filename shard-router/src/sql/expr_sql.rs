//! The DataFusion front-end of the one shard SQL renderer: DataFusion
//! `Expr`s become [`ShardSql`] fragments, only where MariaDB evaluates them
//! exactly like PostgreSQL (and DataFusion); `compat` decides which
//! operators may go. Literals, names and keywords go through the same
//! `ShardSql` methods as the statement front-end (`stmt_sql`): one spelling
//! for each kind of value. Column references arrive as fragments too (a
//! scan's quoted column names, a pushed fragment's `"alias"."column"` or a
//! whole sub-expression), and `crate::dist` composes the results into
//! queries (scan filters, the pushdown's select lists, joins and tails).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::{Expr, ExprSchemable};

use super::shard_sql::ShardSql;

/// Renders a DataFusion literal as MariaDB SQL, when it means the same
/// (a value `ShardSql` cannot spell exactly, or NULL, is not rendered).
fn literal_sql(out: &mut ShardSql, v: &ScalarValue) -> Option<()> {
    match v {
        ScalarValue::Int8(Some(i)) => out.int(*i),
        ScalarValue::Int16(Some(i)) => out.int(*i),
        ScalarValue::Int32(Some(i)) => out.int(*i),
        ScalarValue::Int64(Some(i)) => out.int(*i),
        ScalarValue::UInt8(Some(i)) => out.int(*i),
        ScalarValue::UInt16(Some(i)) => out.int(*i),
        ScalarValue::UInt32(Some(i)) => out.int(*i),
        ScalarValue::UInt64(Some(i)) => out.int(*i),
        ScalarValue::Float64(Some(f)) => out.float(*f).ok()?,
        ScalarValue::Float32(Some(f)) => out.float(*f as f64).ok()?,
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => out.string(s).ok()?,
        ScalarValue::Boolean(Some(b)) => out.boolean(*b),
        ScalarValue::Date32(Some(days)) => {
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
            let d = epoch.checked_add_signed(chrono::Duration::try_days(*days as i64)?)?;
            out.date(d).ok()?
        }
        ScalarValue::Decimal128(Some(v), _, scale) => out.decimal(*v, *scale).ok()?,
        _ => return None,
    };
    Some(())
}

pub(crate) fn is_exact_numeric(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Decimal128(..))
}

/// Renders `e` (over `input`, whose columns are the fragments `cols`) as
/// MariaDB SQL, or None when MariaDB could evaluate it differently from
/// PostgreSQL (and DataFusion).
pub fn render(e: &Expr, input: &DFSchema, cols: &[ShardSql]) -> Option<ShardSql> {
    let mut out = ShardSql::new();
    render_into(&mut out, e, input, cols)?;
    Some(out)
}

fn render_into(out: &mut ShardSql, e: &Expr, input: &DFSchema, cols: &[ShardSql]) -> Option<()> {
    let r = |out: &mut ShardSql, x: &Expr| render_into(out, x, input, cols);
    let ty = |x: &Expr| x.get_type(input).ok();
    let not = |negated: bool| if negated { " NOT" } else { "" };
    match e {
        Expr::Column(c) => {
            out.push(cols.get(input.index_of_column(c).ok()?)?);
        }
        Expr::Literal(v, _) => literal_sql(out, v)?,
        Expr::Alias(a) => r(out, &a.expr)?,
        Expr::BinaryExpr(b) => {
            let op = super::compat::Op::of_datafusion(&b.op)?;
            // Exact arithmetic only (see `compat::Op::is_arithmetic`).
            if op.is_arithmetic()
                && !(is_exact_numeric(&ty(&b.left)?) && is_exact_numeric(&ty(&b.right)?))
            {
                return None;
            }
            let (mut l, mut rt) = (
                render(&b.left, input, cols)?,
                render(&b.right, input, cols)?,
            );
            if super::compat::is_comparison(&b.op) {
                l = compared_as_text(l, &b.left, input, &b.right, input);
                rt = compared_as_text(rt, &b.right, input, &b.left, input);
            }
            out.keyword("(").append(l).keyword(" ").keyword(op.sql());
            out.keyword(" ").append(rt).keyword(")");
        }
        Expr::Not(x) => {
            out.keyword("(NOT ");
            r(out, x)?;
            out.keyword(")");
        }
        Expr::IsNull(x) => {
            out.keyword("(");
            r(out, x)?;
            out.keyword(" IS NULL)");
        }
        Expr::IsNotNull(x) => {
            out.keyword("(");
            r(out, x)?;
            out.keyword(" IS NOT NULL)");
        }
        Expr::Negative(x) if is_exact_numeric(&ty(x)?) => {
            out.keyword("(-");
            r(out, x)?;
            out.keyword(")");
        }
        Expr::InList(l) => {
            out.keyword("(");
            r(out, &l.expr)?;
            out.keyword(not(l.negated)).keyword(" IN (");
            for (i, item) in l.list.iter().enumerate() {
                if i > 0 {
                    out.keyword(", ");
                }
                r(out, item)?;
            }
            out.keyword("))");
        }
        Expr::Between(b) => {
            out.keyword("(");
            r(out, &b.expr)?;
            out.keyword(not(b.negated)).keyword(" BETWEEN ");
            r(out, &b.low)?;
            out.keyword(" AND ");
            r(out, &b.high)?;
            out.keyword(")");
        }
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
            out.keyword("(");
            r(out, &l.expr)?;
            out.keyword(not(l.negated)).keyword(" LIKE ");
            r(out, &l.pattern)?;
            out.keyword(")");
        }
        Expr::Case(c) => {
            out.keyword("(CASE");
            if let Some(x) = &c.expr {
                out.keyword(" ");
                r(out, x)?;
            }
            for (w, t) in &c.when_then_expr {
                out.keyword(" WHEN ");
                r(out, w)?;
                out.keyword(" THEN ");
                r(out, t)?;
            }
            if let Some(x) = &c.else_expr {
                out.keyword(" ELSE ");
                r(out, x)?;
            }
            out.keyword(" END)");
        }
        Expr::Cast(c) if same_value(&ty(&c.expr)?, c.field.data_type()) => r(out, &c.expr)?,
        Expr::ScalarFunction(f) => function(out, f, input, cols)?,
        _ => return None,
    }
    Some(())
}

/// Whether every value of `from` is the same value of `to`, so a cast
/// between them can be left out of the shard SQL.
fn same_value(from: &DataType, to: &DataType) -> bool {
    match (from, to) {
        (f, t) if f == t => true,
        (f, t) if f.is_integer() && t.is_integer() => {
            matches!((int_width(f), int_width(t)), (Some(a), Some(b)) if a <= b)
                && f.is_signed_integer()
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
    }
}

/// The scalar functions MariaDB computes as PostgreSQL does: `EXTRACT` of
/// a date's year, month or day, and `SUBSTRING` with a literal start >= 1
/// and length >= 0.
fn function(
    out: &mut ShardSql,
    f: &datafusion::logical_expr::expr::ScalarFunction,
    input: &DFSchema,
    cols: &[ShardSql],
) -> Option<()> {
    let ty = |x: &Expr| x.get_type(input).ok();
    let name = f.func.name().to_ascii_lowercase();
    match (name.as_str(), f.args.as_slice()) {
        ("pg_extract", [Expr::Literal(part, _), x, ..]) if matches!(ty(x)?, DataType::Date32) => {
            let unit = match part.to_string().to_ascii_lowercase().as_str() {
                "year" => "EXTRACT(YEAR FROM ",
                "month" => "EXTRACT(MONTH FROM ",
                "day" => "EXTRACT(DAY FROM ",
                _ => return None,
            };
            out.keyword(unit);
            render_into(out, x, input, cols)?;
            out.keyword(")");
        }
        ("substr" | "substring", [x, Expr::Literal(start, _), Expr::Literal(len, _)])
            if matches!(ty(x)?, DataType::Utf8 | DataType::Utf8View) =>
        {
            let (s, n) = (int_literal(start)?, int_literal(len)?);
            if s < 1 || n < 0 {
                return None;
            }
            out.keyword("SUBSTRING(");
            render_into(out, x, input, cols)?;
            out.keyword(", ").int(s).keyword(", ").int(n).keyword(")");
        }
        _ => return None,
    }
    Some(())
}

/// `sql`, the rendering of `e`, as compared with `other`: a char(n)
/// column (PAD SPACE on the shard) compared with text (NO PAD) compares
/// as text, as PostgreSQL casts bpchar to text; MariaDB refuses the mix
/// of collations otherwise. A literal stays a bpchar comparison.
pub fn compared_as_text(
    sql: ShardSql,
    e: &Expr,
    schema: &DFSchema,
    other: &Expr,
    other_schema: &DFSchema,
) -> ShardSql {
    let text = matches!(
        other.get_type(other_schema),
        Ok(DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
    );
    if is_bpchar(e, schema)
        && !is_bpchar(other, other_schema)
        && text
        && !matches!(other, Expr::Literal(..))
    {
        let mut out = ShardSql::new();
        out.keyword("(")
            .append(sql)
            .keyword(" COLLATE utf8mb4_nopad_bin)");
        out
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

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::logical_expr::{col, lit, Expr};

    fn sql(e: Expr) -> Option<String> {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Date32, true),
            Field::new("n", DataType::Decimal128(12, 2), true),
            Field::new("f", DataType::Float64, true),
        ]);
        let input = DFSchema::try_from(schema).ok()?;
        let cols: Vec<ShardSql> = ["i", "s", "d", "n", "f"]
            .iter()
            .map(|c| {
                let mut out = ShardSql::new();
                out.column("t1", c);
                out
            })
            .collect();
        render(&e, &input, &cols).map(|s| s.into_query().unwrap())
    }

    /// Each kind of DataFusion literal through its `ShardSql` method, and
    /// the shapes around them, spelled as the shards have always received.
    #[test]
    fn literals_and_shapes() {
        assert_eq!(
            sql(col("i").eq(lit(-5i64)).and(col("s").not_eq(lit("it's")))).unwrap(),
            "((\"t1\".\"i\" = -5) AND (\"t1\".\"s\" <> 'it''s'))"
        );
        assert_eq!(
            sql(col("f").gt(lit(-0.25f64))).unwrap(),
            "(\"t1\".\"f\" > -2.5e-1)"
        );
        assert_eq!(
            sql(col("n").lt_eq(lit(ScalarValue::Decimal128(Some(-150), 12, 2)))).unwrap(),
            "(\"t1\".\"n\" <= -1.50)"
        );
        assert_eq!(
            sql(col("d").between(
                lit(ScalarValue::Date32(Some(8766))),
                lit(ScalarValue::Date32(Some(9131)))
            ))
            .unwrap(),
            "(\"t1\".\"d\" BETWEEN DATE '1994-01-01' AND DATE '1995-01-01')"
        );
        assert_eq!(
            sql(col("i")
                .in_list(vec![lit(1i64), lit(2i64)], true)
                .or(lit(true)))
            .unwrap(),
            "((\"t1\".\"i\" NOT IN (1, 2)) OR TRUE)"
        );
        assert_eq!(
            sql(col("s").like(lit("a%")).and(col("i").is_not_null())).unwrap(),
            "((\"t1\".\"s\" LIKE 'a%') AND (\"t1\".\"i\" IS NOT NULL))"
        );
        // Values without an exact spelling stay on the compute node.
        assert_eq!(sql(col("f").eq(lit(f64::NAN))), None);
        assert_eq!(sql(col("s").eq(lit("a\0b"))), None);
        assert_eq!(
            sql(col("d").eq(lit(ScalarValue::Date32(Some(3_000_000))))),
            None
        );
        assert_eq!(sql(col("s").like(lit("a\\%"))), None);
        // Float arithmetic is not exact on MariaDB.
        assert_eq!(sql(col("f") + lit(1.0f64)), None);
    }
}
