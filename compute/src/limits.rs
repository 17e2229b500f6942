//! Bounds on what one client statement may cost before anything walks it:
//! its size in bytes and the depth of its expression trees.
//!
//! sqlparser bounds the nesting it parses recursively (parentheses,
//! subqueries, function calls: 50 levels), but a chain of infix operators
//! (`a = 0 OR a = 1 OR ...`, `x::int::int...`) is parsed in a loop into a
//! left-deep tree of any depth. Every later walk over such a tree
//! (planning, rendering, `Clone`, `Drop`) recurses once per level, and a few
//! thousand levels overflowed a worker's stack and aborted the node.
//! [`check_statement`] measures depth with a visitor that stops at the
//! limit, and a statement past it is taken apart iteratively (never dropped
//! recursively) and refused with 54001, PostgreSQL's "stack depth limit
//! exceeded".
//!
//! Memory goes with the number of expressions a statement holds (the
//! parsed tree, its copies for planning, the logical plan): past
//! [`MAX_EXPRS`] a statement is refused with 54001 ("statement too
//! complex") before it is planned, so the memory one statement can take
//! while planning is bounded whatever its text (at most
//! `2 * cores` statements over 16 KiB are planned at once, see
//! `compute::heavy_permit`).

use std::ops::ControlFlow;

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    Expr, Statement, Value, Visit, VisitMut, Visitor, VisitorMut,
};

/// Deepest expression tree a statement may have. Planning walks it a few
/// times recursively; at this depth that is well inside a worker's stack.
pub const MAX_EXPR_DEPTH: usize = 1000;

/// Stack of every compute node worker thread: room for planning a
/// statement of [`MAX_EXPR_DEPTH`] in any build profile.
pub const WORKER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Longest statement text accepted (PostgreSQL's limit is 1 GB; sysbench's
/// bulk_insert sends 512 KiB).
pub const MAX_STATEMENT_BYTES: usize = 64 * 1024 * 1024;

/// Most expressions one statement may hold (a multi-row INSERT of
/// 100,000 rows of 5 columns; sysbench's bulk_insert sends about 13,000).
pub const MAX_EXPRS: usize = 500_000;

fn too_complex(why: Limit) -> Error {
    Error::Sql {
        state: SqlState::STATEMENT_TOO_COMPLEX,
        message: match why {
            Limit::Depth => format!(
                "stack depth limit exceeded: expressions nest deeper than {MAX_EXPR_DEPTH} levels"
            ),
            Limit::Count => {
                format!("statement too complex: more than {MAX_EXPRS} expressions")
            }
        },
    }
}

/// Which bound a statement crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Depth,
    Count,
}

/// Refuses statement text over [`MAX_STATEMENT_BYTES`] (54000).
pub fn check_size(sql: &str) -> Result<()> {
    if sql.len() > MAX_STATEMENT_BYTES {
        return Err(Error::Sql {
            state: SqlState::PROGRAM_LIMIT_EXCEEDED,
            message: format!(
                "statement of {} bytes is longer than the limit of {MAX_STATEMENT_BYTES}",
                sql.len()
            ),
        });
    }
    Ok(())
}

struct Depth {
    now: usize,
    limit: usize,
    count: usize,
    max_count: usize,
}

impl Visitor for Depth {
    type Break = Limit;
    fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<Limit> {
        self.now += 1;
        self.count += 1;
        if self.now > self.limit {
            ControlFlow::Break(Limit::Depth)
        } else if self.count > self.max_count {
            ControlFlow::Break(Limit::Count)
        } else {
            ControlFlow::Continue(())
        }
    }
    fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<Limit> {
        self.now -= 1;
        ControlFlow::Continue(())
    }
}

/// The first bound `node` crosses: an expression nesting deeper than
/// `depth`, or more than `count` expressions. The walk itself never goes
/// deeper than `depth + 1` nor past `count + 1` expressions.
pub fn crosses<V: Visit>(node: &V, depth: usize, count: usize) -> Option<Limit> {
    match node.visit(&mut Depth {
        now: 0,
        limit: depth,
        count: 0,
        max_count: count,
    }) {
        ControlFlow::Break(l) => Some(l),
        ControlFlow::Continue(()) => None,
    }
}

/// Cuts every subtree at depth `at` out of the tree (replacing it by NULL)
/// into `out`.
struct Cut<'a> {
    now: usize,
    at: usize,
    out: &'a mut Vec<Expr>,
}

impl VisitorMut for Cut<'_> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        self.now += 1;
        if self.now >= self.at {
            self.out
                .push(std::mem::replace(e, Expr::value(Value::Null)));
        }
        ControlFlow::Continue(())
    }
    fn post_visit_expr(&mut self, _: &mut Expr) -> ControlFlow<()> {
        self.now -= 1;
        ControlFlow::Continue(())
    }
}

/// Drops a statement of any depth without deep recursion: subtrees are
/// cut off at a bounded depth and dismantled from a work list.
pub fn dismantle(mut stmt: Statement) {
    const AT: usize = 64;
    let mut work = vec![];
    let _ = VisitMut::visit(
        &mut stmt,
        &mut Cut {
            now: 0,
            at: AT,
            out: &mut work,
        },
    );
    drop(stmt);
    while let Some(mut e) = work.pop() {
        let mut more = vec![];
        // The root itself is depth 1: `e` keeps at most AT levels.
        let _ = VisitMut::visit(
            &mut e,
            &mut Cut {
                now: 0,
                at: AT,
                out: &mut more,
            },
        );
        drop(e);
        work.append(&mut more);
    }
}

/// Highest `$n` a statement may name: the protocol counts parameters in 16
/// bits, so no Bind can supply more.
pub const MAX_PARAMS: usize = 65_535;

/// The first placeholder past [`MAX_PARAMS`] (or malformed) in `stmt`.
fn bad_placeholder(stmt: &Statement) -> Option<String> {
    let mut bad = None;
    let _ = datafusion::sql::sqlparser::ast::visit_expressions(stmt, |e| {
        if let Expr::Value(v) = e {
            if let Value::Placeholder(p) = &v.value {
                let ok = p
                    .strip_prefix('$')
                    .and_then(|n| n.parse::<usize>().ok())
                    .is_some_and(|n| (1..=MAX_PARAMS).contains(&n));
                if !ok {
                    bad = Some(p.clone());
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    bad
}

/// Refuses (54001) a statement whose expressions nest deeper than
/// [`MAX_EXPR_DEPTH`] or number more than [`MAX_EXPRS`], disposing of it safely, and (42P02) one naming a
/// parameter no Bind can supply (`$8888888888888888888` made the planner
/// allocate a parameter list that large and abort the node).
pub fn check_statement(stmt: Statement) -> Result<Statement> {
    if let Some(why) = crosses(&stmt, MAX_EXPR_DEPTH, MAX_EXPRS) {
        dismantle(stmt);
        return Err(too_complex(why));
    }
    if let Some(p) = bad_placeholder(&stmt) {
        return Err(Error::Sql {
            state: SqlState("42P02"),
            message: format!("there is no parameter {p}"),
        });
    }
    Ok(stmt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn or_chain(n: usize) -> String {
        let mut s = String::from("SELECT * FROM t WHERE id = 0");
        for i in 1..n {
            s.push_str(&format!(" OR id = {i}"));
        }
        s
    }

    #[test]
    fn shallow_statements_pass() {
        let stmt = Parser::parse_sql(&PostgreSqlDialect {}, &or_chain(100))
            .unwrap()
            .remove(0);
        assert!(check_statement(stmt).is_ok());
    }

    #[test]
    fn deep_chains_are_refused_and_dropped_safely() {
        // Run on a small stack: a recursive drop of 20,000 levels would
        // overflow it.
        let h = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let sql = or_chain(20_000);
                let stmt = Parser::parse_sql(&PostgreSqlDialect {}, &sql)
                    .unwrap()
                    .remove(0);
                let e = check_statement(stmt).unwrap_err();
                e.sqlstate().code()
            })
            .unwrap();
        assert_eq!(h.join().unwrap(), "54001");
    }

    #[test]
    fn wide_statements_are_refused() {
        let mut sql = String::from("SELECT * FROM t WHERE id IN (0");
        for i in 1..MAX_EXPRS {
            sql.push_str(&format!(",{i}"));
        }
        let ok = Parser::parse_sql(&PostgreSqlDialect {}, &format!("{sql})"))
            .unwrap()
            .remove(0);
        // The IN list, its items and `id`: one past the bound.
        let e = check_statement(ok).unwrap_err();
        assert_eq!(e.sqlstate().code(), "54001");
        assert!(e.to_string().contains("too complex"), "{e}");
        let small = Parser::parse_sql(&PostgreSqlDialect {}, "SELECT * FROM t WHERE id IN (1, 2)")
            .unwrap()
            .remove(0);
        assert!(check_statement(small).is_ok());
    }

    #[test]
    fn placeholders_are_bounded() {
        for (sql, ok) in [
            ("SELECT $1, $65535", true),
            ("SELECT $65536", false),
            ("SELECT $8888888888888888888", false),
            ("SELECT $0", false),
        ] {
            let stmt = Parser::parse_sql(&PostgreSqlDialect {}, sql)
                .unwrap()
                .remove(0);
            let r = check_statement(stmt);
            assert_eq!(r.is_ok(), ok, "{sql}");
            if let Err(e) = r {
                assert_eq!(e.sqlstate().code(), "42P02");
            }
        }
    }

    #[test]
    fn size_is_bounded() {
        assert!(check_size("SELECT 1").is_ok());
        let big = "x".repeat(MAX_STATEMENT_BYTES + 1);
        assert_eq!(check_size(&big).unwrap_err().sqlstate().code(), "54000");
    }
}
