//! [`ShardSql`]: the one renderer of shard SQL. Every byte of a query or
//! statement that comes from an expression, a value or a name reaches a
//! shard through it, from either front-end: client statements
//! (`stmt_sql`, over sqlparser trees, for the fast path) and DataFusion
//! expressions and plan fragments (`expr_sql`, for scans and pushdown,
//! composed by `crate::dist`).
//!
//! A `ShardSql` can only grow by fixed keywords (`&'static str`, so never
//! text that came from a client or a plan), identifiers (through
//! [`storage_adapter::quote_ident`]), checked literals (strings through
//! [`storage_adapter::quote_str`], numerals, `X'..'`, dates, booleans,
//! NULL), `?` placeholders, and other `ShardSql` fragments. Each kind of
//! literal has one method, used by both front-ends; a value it cannot
//! spell exactly is refused, never passed through as text.

use chrono::NaiveDate;
use common::{Datum, Error, Result, SqlState};
use storage_adapter::{quote_ident, quote_str};

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

    /// `"qualifier"."name"`: a column of a FROM item.
    pub fn column(&mut self, qualifier: &str, name: &str) -> &mut Self {
        self.ident(qualifier).keyword(".").ident(name)
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

    /// A numeric literal, checked to be one: an optional `-`, digits with
    /// at most one `.`, and an optional exponent. Every numeral of both
    /// front-ends passes here: a client's token as the tokenizer read it
    /// (unsigned), a value typed as its column (`typing`, which may be
    /// negative), and DataFusion's floats and decimals.
    pub fn number(&mut self, n: &str) -> Result<&mut Self> {
        if !is_number(n.strip_prefix('-').unwrap_or(n)) {
            return Err(Error::Syntax {
                message: format!("invalid numeric literal \"{n}\""),
                position: None,
            });
        }
        self.text.push_str(n);
        Ok(self)
    }

    /// An integer (a literal, a LIMIT count, an ordinal): its decimal
    /// digits, which are always a numeral.
    pub fn int(&mut self, n: impl Into<i128>) -> &mut Self {
        self.text.push_str(&n.into().to_string());
        self
    }

    /// A double in exponent form, the shortest digits that read back as
    /// the same value (MariaDB reads an exponent as an approximate value,
    /// as PostgreSQL's float8). NaN and infinities have no literal (0A000).
    pub fn float(&mut self, f: f64) -> Result<&mut Self> {
        if !f.is_finite() {
            return Err(Error::unsupported(format!(
                "the float value {f} on a shard"
            )));
        }
        self.number(&format!("{f:e}"))
    }

    /// An exact decimal `unscaled * 10^-scale`, with all `scale` digits
    /// after the point (MariaDB, like PostgreSQL, keeps a literal's scale).
    pub fn decimal(&mut self, unscaled: i128, scale: i8) -> Result<&mut Self> {
        self.number(&decimal_text(unscaled, scale))
    }

    /// `DATE 'YYYY-MM-DD'`; dates outside MariaDB's years 1 to 9999 are
    /// refused (0A000), as `storage_adapter::convert::temporal_text` does.
    pub fn date(&mut self, d: NaiveDate) -> Result<&mut Self> {
        let text = storage_adapter::convert::temporal_text(&Datum::Date(d))
            .ok_or_else(|| Error::unsupported(format!("the date {d} on a shard")))?;
        self.keyword("DATE ").string(&text)
    }

    /// `TRUE` or `FALSE`.
    pub fn boolean(&mut self, b: bool) -> &mut Self {
        self.keyword(if b { "TRUE" } else { "FALSE" })
    }

    pub fn null(&mut self) -> &mut Self {
        self.keyword("NULL")
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

    /// Another fragment, with its placeholders (they keep their order).
    pub fn push(&mut self, other: &ShardSql) -> &mut Self {
        self.text.push_str(&other.text);
        self.params.extend_from_slice(&other.params);
        self
    }

    /// Another fragment, consumed.
    pub fn append(&mut self, other: ShardSql) -> &mut Self {
        self.text.push_str(&other.text);
        self.params.extend(other.params);
        self
    }

    /// Fragments separated by `sep` (`", "`, `" AND "`).
    pub fn list<'a>(
        &mut self,
        items: impl IntoIterator<Item = &'a ShardSql>,
        sep: &'static str,
    ) -> &mut Self {
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.keyword(sep);
            }
            self.push(item);
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The SQL and, for each `?`, the client parameter it stands for.
    pub fn into_parts(self) -> (String, Vec<usize>) {
        (self.text, self.params)
    }

    /// The SQL of a query without placeholders (DataFusion's scans), where
    /// it is handed to a shard scan.
    pub fn into_query(self) -> Result<String> {
        if !self.params.is_empty() {
            return Err(Error::internal("a shard scan query with placeholders"));
        }
        Ok(self.text)
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

/// The digits of `unscaled * 10^-scale`: `scale` digits after the point
/// (none for a scale <= 0, which appends zeros), `0.` before a fraction.
fn decimal_text(unscaled: i128, scale: i8) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let digits = unscaled.unsigned_abs().to_string();
    if scale <= 0 {
        return format!(
            "{sign}{digits}{}",
            "0".repeat(scale.unsigned_abs() as usize)
        );
    }
    let scale = scale as usize;
    if digits.len() > scale {
        let (whole, fraction) = digits.split_at(digits.len() - scale);
        format!("{sign}{whole}.{fraction}")
    } else {
        format!("{sign}0.{digits:0>scale$}")
    }
}

/// `CAST(s AS DOUBLE)`: a FLOAT (`real`) read exactly over the text
/// protocol, which prints a FLOAT with six significant digits (widening is
/// exact; the reader narrows it back).
pub fn widened_float(s: ShardSql) -> ShardSql {
    let mut out = ShardSql::new();
    out.keyword("CAST(").append(s).keyword(" AS DOUBLE)");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let number = |n: &str| ShardSql::new().number(n).map(|s| s.as_str().to_string());
        assert_eq!(number("-5").unwrap(), "-5");
        assert_eq!(number("-1.50").unwrap(), "-1.50");
        for bad in ["--5", "-", "5-", "- 5", "-e5", "1;--"] {
            assert!(number(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn typed_literals() {
        let sql = |f: &dyn Fn(&mut ShardSql) -> Result<&mut ShardSql>| {
            let mut s = ShardSql::new();
            f(&mut s).map(|s| s.as_str().to_string())
        };
        assert_eq!(sql(&|s| s.float(1.5)).unwrap(), "1.5e0");
        assert_eq!(sql(&|s| s.float(-0.000125)).unwrap(), "-1.25e-4");
        assert_eq!(sql(&|s| s.float(1e300)).unwrap(), "1e300");
        for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(sql(&|s| s.float(f)).unwrap_err().sqlstate().code(), "0A000");
        }
        assert_eq!(sql(&|s| s.decimal(12345, 2)).unwrap(), "123.45");
        assert_eq!(sql(&|s| s.decimal(-5, 3)).unwrap(), "-0.005");
        assert_eq!(sql(&|s| s.decimal(0, 2)).unwrap(), "0.00");
        assert_eq!(sql(&|s| s.decimal(-12, -2)).unwrap(), "-1200");
        assert_eq!(
            sql(&|s| s.decimal(i128::MIN, 38)).unwrap(),
            "-1.70141183460469231731687303715884105728"
        );
        let date = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(
            sql(&|s| s.date(date(1994, 1, 1))).unwrap(),
            "DATE '1994-01-01'"
        );
        assert_eq!(
            sql(&|s| s.date(date(1, 2, 3))).unwrap(),
            "DATE '0001-02-03'"
        );
        for d in [date(0, 12, 31), date(10000, 1, 1), date(-44, 3, 15)] {
            assert_eq!(sql(&|s| s.date(d)).unwrap_err().sqlstate().code(), "0A000");
        }
        let mut s = ShardSql::new();
        s.boolean(true)
            .keyword(", ")
            .boolean(false)
            .keyword(", ")
            .null();
        s.keyword(", ")
            .int(-9223372036854775808i64)
            .keyword(", ")
            .int(u64::MAX);
        assert_eq!(
            s.as_str(),
            "TRUE, FALSE, NULL, -9223372036854775808, 18446744073709551615"
        );
    }

    #[test]
    fn fragments_keep_their_placeholders_in_order() {
        let mut a = ShardSql::new();
        a.ident("x").keyword(" = ").param(1);
        let mut b = ShardSql::new();
        b.ident("y").keyword(" = ").param(0);
        let mut all = ShardSql::new();
        all.keyword("(").list([&a, &b], " AND ").keyword(")");
        let mut c = ShardSql::new();
        c.keyword(" OR ").param(2);
        all.append(c);
        assert_eq!(all.as_str(), "(\"x\" = ? AND \"y\" = ?) OR ?");
        assert!(all.clone().into_query().is_err());
        assert_eq!(all.into_parts().1, vec![1, 0, 2]);
        let mut q = ShardSql::new();
        q.keyword("SELECT ").column("t1", "c\"0");
        assert_eq!(q.into_query().unwrap(), "SELECT \"t1\".\"c\"\"0\"");
    }

    mod prop {
        use super::*;
        use datafusion::common::ScalarValue;
        use proptest::prelude::*;

        /// Where the string literal opening at `text[0]` ends (the index of
        /// its closing quote), read as MariaDB reads it under
        /// NO_BACKSLASH_ESCAPES: `''` is a quote, `\` is a character.
        fn literal_end(text: &str) -> Option<usize> {
            let b = text.as_bytes();
            let mut i = 1;
            while i < b.len() {
                if b[i] == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return Some(i);
                }
                i += 1;
            }
            None
        }

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

            /// A string literal cannot end early: in `s <literal> AND x`,
            /// MariaDB's tokenizer ends the literal exactly where it was
            /// rendered to end, whatever quotes, backslashes or comment
            /// marks it holds.
            #[test]
            fn string_literals_cannot_end_early(s in "[\\\\'\";a-z -]{0,40}") {
                let mut out = ShardSql::new();
                out.string(&s).unwrap();
                let literal_len = out.as_str().len();
                out.keyword(" AND x");
                prop_assert_eq!(literal_end(out.as_str()), Some(literal_len - 1));
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

            /// Every finite double is a numeral that reads back as itself.
            #[test]
            fn floats_round_trip(f in any::<f64>()) {
                let mut out = ShardSql::new();
                match out.float(f) {
                    Err(_) => prop_assert!(!f.is_finite()),
                    Ok(_) => {
                        let t = out.as_str();
                        prop_assert!(is_number(t.strip_prefix('-').unwrap_or(t)));
                        prop_assert_eq!(t.parse::<f64>().unwrap().to_bits(), f.to_bits());
                    }
                }
            }

            /// Decimals within DataFusion's precision are spelled as
            /// DataFusion prints them, and their digits are the value's.
            #[test]
            fn decimals_are_exact(v in -(10i128.pow(38) - 1)..10i128.pow(38), scale in -4i8..=38) {
                let mut out = ShardSql::new();
                out.decimal(v, scale).unwrap();
                let t = out.as_str();
                prop_assert!(is_number(t.strip_prefix('-').unwrap_or(t)));
                prop_assert_eq!(t, ScalarValue::Decimal128(Some(v), 38, scale).to_string());
                let fraction = t.split_once('.').map_or(0, |(_, f)| f.len());
                prop_assert_eq!(fraction, scale.max(0) as usize);
            }

            /// Dates in years 1 to 9999 are spelled as DataFusion prints
            /// them; others are refused.
            #[test]
            fn dates_match_datafusion(days in -800_000i32..=3_000_000) {
                let d = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()
                    + chrono::Duration::days(days as i64);
                let mut out = ShardSql::new();
                match out.date(d) {
                    Ok(_) => prop_assert_eq!(
                        out.as_str(),
                        format!("DATE '{}'", ScalarValue::Date32(Some(days)))
                    ),
                    Err(_) => prop_assert!(!(1..=9999).contains(&chrono::Datelike::year(&d))),
                }
            }

            #[test]
            fn integers_are_numerals(i in any::<i64>(), u in any::<u64>()) {
                let mut out = ShardSql::new();
                out.int(i);
                prop_assert_eq!(out.as_str(), i.to_string());
                let mut out = ShardSql::new();
                out.int(u);
                prop_assert!(is_number(out.as_str()));
            }
        }
    }
}
