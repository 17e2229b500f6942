//! PostgreSQL spellings DataFusion plans differently or not at all,
//! rewritten in the copy of a statement that DataFusion plans (never in
//! SQL sent to a shard, which is rendered from Tessera's own plan):
//!
//! * `mod(a, b)` is `a % b`, `sign(x)` is DataFusion's `signum(x)`,
//!   `every(x)` is `bool_and(x)`, `date_part()` is double precision;
//! * `~x` (bitwise not) is `x # -1`;
//! * `FETCH FIRST n ROWS ONLY` is `LIMIT n`;
//! * `SUBSTRING(...)` calls the session's `substr` (PostgreSQL's errors);
//! * `x SIMILAR TO 'p'` is the regular expression PostgreSQL makes of `p`;
//! * `x::varchar(n)` cuts to n characters, `x::char(n)` cuts and, as a
//!   result column, pads to n;
//! * `'1' + 1`: an untyped string takes the other constant's type;
//! * VALUES rows of `n::numeric` constants of one scale are typed with it;
//! * a set operation's untyped string constants take their column's type
//!   where the other branches make it known ([`setops`]);
//! * USING columns in WHERE are qualified (DataFusion finds them ambiguous);
//! * a scalar subquery that does not aggregate gets `pg_one_row`;
//! * `generate_series(...)` in a SELECT list returns rows (`unnest`);
//! * `pg_typeof(x)` of a literal, NULL or a cast is the type's name;
//! * `EXISTS (q)` in the select list of a statement without tables is a
//!   count of q's first row ([`exists`]);
//! * result columns and set-returning functions in FROM get the names
//!   PostgreSQL gives them (`colnames`);
//! * correlated scalar subqueries DataFusion cannot decorrelate, in
//!   equivalent shapes it can ([`subquery`]);
//! * catalog queries' spellings ([`catalog`]): `pg_catalog.f()`,
//!   `OPERATOR(pg_catalog.~)`, `COLLATE pg_catalog.default`, `::regclass`.
//!
//! [`check`] runs first, on the client's statement: PostgreSQL's errors
//! and Tessera's refusals before anything is planned.

mod catalog;
mod check;
mod exists;
mod pieces;
mod setops;
mod spellings;
mod subquery;
mod temporal;

pub use check::check;
pub use pieces::similar_to_regex;
use pieces::{call, pad_root_chars, qualify_using_columns, set_returning_items, unaggregated_item};

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, LimitClause, Query, SetExpr, Statement, Value, VisitMut, VisitorMut,
};

use super::colnames;

/// The statement DataFusion should plan for `stmt`, when it differs.
pub fn for_datafusion(stmt: &Statement) -> Option<Statement> {
    let (mut st, mut changed) = match colnames::with_unique_names(stmt) {
        Some(s) => (s, true),
        None => (stmt.clone(), false),
    };
    changed |= colnames::name_table_functions(&mut st);
    changed |= pad_root_chars(&mut st);
    changed |= exists::exists_items(&mut st);
    let mut r = Rewriter(false, vec![]);
    let _ = VisitMut::visit(&mut st, &mut r);
    (changed || r.0).then_some(st)
}

/// Whether anything changed, and the subqueries of `ANY`/`ALL`/`IN`
/// comparisons seen (by address while the tree is visited): those are
/// not scalar subqueries.
struct Rewriter(bool, Vec<*const Query>);

impl VisitorMut for Rewriter {
    type Break = ();

    fn pre_visit_table_factor(
        &mut self,
        f: &mut datafusion::sql::sqlparser::ast::TableFactor,
    ) -> ControlFlow<()> {
        self.0 |= catalog::table_function(f);
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        self.0 |= subquery::over_empty_catalog(q);
        self.0 |= spellings::numeric_values(q);
        self.0 |= setops::unknown_constants(q);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Select(sel) = q.body.as_mut() {
            self.0 |= qualify_using_columns(sel);
            self.0 |= set_returning_items(sel);
        }
        let Some(fetch) = q.fetch.as_ref() else {
            return ControlFlow::Continue(());
        };
        if fetch.with_ties || fetch.percent {
            return ControlFlow::Continue(());
        }
        let n = fetch
            .quantity
            .clone()
            .unwrap_or_else(|| Expr::value(Value::Number("1".into(), false)));
        match &mut q.limit_clause {
            None => {
                q.limit_clause = Some(LimitClause::LimitOffset {
                    limit: Some(n),
                    offset: None,
                    limit_by: vec![],
                })
            }
            Some(LimitClause::LimitOffset {
                limit: l @ None, ..
            }) => *l = Some(n),
            // LIMIT and FETCH together: left for DataFusion to refuse.
            Some(_) => return ControlFlow::Continue(()),
        }
        q.fetch = None;
        self.0 = true;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        self.0 |= spellings::pg_typeof(e);
        if let Expr::AnyOp { right, .. } | Expr::AllOp { right, .. } = e {
            if let Expr::Subquery(q) = right.as_ref() {
                self.1.push(q.as_ref() as *const Query);
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        self.0 |= catalog::rewrite(e);
        if let Expr::Subquery(q) = e {
            if !self.in_comparison(q) {
                self.0 |= subquery::rewrite(e);
            }
        }
        self.0 |= match e {
            Expr::Subquery(q) if !self.in_comparison(q) => one_row(q),
            other => spellings::rewrite(other),
        };
        ControlFlow::Continue(())
    }
}

impl Rewriter {
    /// Whether `q` is the subquery of an `ANY`/`ALL`/`IN` comparison.
    fn in_comparison(&self, q: &Query) -> bool {
        self.1.contains(&(q as *const Query))
    }
}

/// A scalar subquery that does not aggregate: its item through
/// `pg_one_row` (more than one row is an error). Whether it changed.
fn one_row(q: &mut Query) -> bool {
    let Some(item) = unaggregated_item(q) else {
        return false;
    };
    let x = std::mem::replace(item, Expr::value(Value::Null));
    *item = call(crate::onerow::NAME, vec![x]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn rewritten(sql: &str) -> String {
        let stmt = crate::parse::parse_sql(sql).unwrap().pop().unwrap();
        for_datafusion(&stmt)
            .map(|s| s.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn like_escapes_become_backslashes() {
        let b =
            |p: &str, c: &str| spellings::backslash_pattern(p, c).map_err(|e| e.sqlstate().code());
        assert_eq!(b("h#%", "#"), Ok("h\\%".into()));
        assert_eq!(b("m%a%%a", "%"), Ok("ma\\%a".into()));
        assert_eq!(b("b_ear", "_"), Ok("bear".into()));
        assert_eq!(b("a\\b%", "$"), Ok("a\\\\b%".into()));
        assert_eq!(b("a\\b%", ""), Ok("a\\\\b%".into()));
        assert_eq!(b("ab#", "#"), Err("22025"));
        assert_eq!(b("ab", "##"), Err("22019"));
        assert!(rewritten("SELECT 'h%' LIKE 'h#%' ESCAPE '#'").contains("LIKE 'h\\%'"));
    }

    #[test]
    fn postgres_spellings_become_datafusion_ones() {
        assert_eq!(
            rewritten("SELECT mod(a, 7), sign(b), ~c FROM t"),
            "SELECT ((a) % (7)) AS \"?column 1?\", signum(b) AS \"?column 2?\", ((c) # (-1)) AS \"?column 3?\" FROM t"
        );
        assert_eq!(
            rewritten("SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY"),
            "SELECT a FROM t ORDER BY a LIMIT 3"
        );
        assert_eq!(
            rewritten("SELECT * FROM generate_series(1, 3)"),
            "SELECT * FROM generate_series(1, 3) AS \"generate_series\" (\"generate_series\")"
        );
        assert_eq!(rewritten("SELECT a FROM t"), "");
        assert_eq!(
            rewritten("SELECT 'abc'::varchar(2), x::char(3) FROM t"),
            "SELECT substr(CAST('abc' AS TEXT), 1, 2) AS \"?column 1?\", rpad(CAST(x AS TEXT), 3) AS \"?column 2?\" FROM t"
        );
        assert_eq!(
            rewritten("SELECT 1 FROM t WHERE x::char(3) = 'a' AND '2' + 1 > 0"),
            "SELECT 1 FROM t WHERE rtrim(substr(CAST(x AS TEXT), 1, 3)) = 'a' AND CAST('2' AS INT) + 1 > 0"
        );
        assert_eq!(
            rewritten("SELECT a FROM t JOIN u USING (id) WHERE id < 3 AND EXISTS (SELECT 1 FROM v WHERE id = 1)"),
            "SELECT a FROM t JOIN u USING(id) WHERE t.id < 3 AND EXISTS (SELECT 1 FROM v WHERE id = 1)"
        );
    }

    #[test]
    fn set_operations_type_their_string_constants() {
        let r = rewritten("SELECT 10 UNION SELECT '9' ORDER BY 1");
        assert!(r.contains("CAST('9' AS INT)"), "{r}");
        let r = rewritten("SELECT '9' UNION ALL SELECT 2 UNION SELECT NULL");
        assert!(r.contains("CAST('9' AS INT)"), "{r}");
        // A column of unknown type, or all strings: left to DataFusion.
        for sql in [
            "SELECT a FROM t UNION SELECT '9'",
            "SELECT 'a' UNION SELECT 'b'",
            "SELECT '9' UNION SELECT 2.5",
        ] {
            assert!(!rewritten(sql).contains("CAST('"), "{sql}");
        }
    }

    #[test]
    fn values_of_numeric_constants_of_one_scale_keep_it() {
        let r = rewritten("SELECT x FROM (VALUES (-2.5::numeric), (0.0::numeric), (NULL)) t(x)");
        assert_eq!(r.matches("NUMERIC(38,1)").count(), 2, "{r}");
        // Different scales, or something else in the column: left alone.
        for sql in [
            "SELECT x FROM (VALUES (2.5::numeric), (1.25::numeric)) t(x)",
            "SELECT x FROM (VALUES (2.5::numeric), (y)) t(x)",
        ] {
            let r = rewritten(sql);
            assert!(!r.contains("NUMERIC(38"), "{r}");
        }
    }

    #[test]
    fn pg_typeof_of_what_the_text_types_is_its_name() {
        assert_eq!(
            rewritten("SELECT pg_typeof(1), pg_typeof(-2147483648), pg_typeof(2147483648), pg_typeof(1.5), pg_typeof('a'), pg_typeof(NULL), pg_typeof(x::varchar(3)), pg_typeof(date '2024-01-02'), pg_typeof(x) FROM t"),
            "SELECT pg_typeof(1, 'integer') AS \"?column 1?\", pg_typeof(-2147483648, 'integer') AS \"?column 2?\", pg_typeof(2147483648, 'bigint') AS \"?column 3?\", pg_typeof(1.5, 'numeric') AS \"?column 4?\", pg_typeof('a', 'unknown') AS \"?column 5?\", pg_typeof(NULL, 'unknown') AS \"?column 6?\", pg_typeof(substr(CAST(x AS TEXT), 1, 3), 'character varying') AS \"?column 7?\", pg_typeof(DATE '2024-01-02', 'date') AS \"?column 8?\", pg_typeof(x) AS \"?column 9?\" FROM t"
        );
    }

    #[test]
    fn similar_to_translates_as_postgres() {
        assert_eq!(similar_to_regex("%(a|o)%"), "^(?:.*(a|o).*)$");
        assert_eq!(similar_to_regex("a_b.c"), "^(?:a.b\\.c)$");
        assert_eq!(similar_to_regex("[%_]x\\%"), "^(?:[%_]x\\%)$");
    }
}
