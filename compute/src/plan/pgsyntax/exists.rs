//! `EXISTS (q)` in the select list of a statement that reads no table
//! (`SELECT NOT EXISTS (SELECT a FROM t1 EXCEPT SELECT a FROM t2)`, how
//! clients compare tables): DataFusion turns EXISTS into a join only in
//! WHERE, so here it is a count of at most one row of `q`,
//! `(SELECT count(*) FROM (SELECT 1 FROM (q) LIMIT 1)) > 0` (`= 0` for NOT
//! EXISTS), which DataFusion plans as any uncorrelated scalar subquery.
//! With no table around it `q` cannot be correlated, so moving it into a
//! derived table changes nothing it can see; elsewhere EXISTS in a select
//! list stays DataFusion's (refused, 0A000).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{Expr, Query, SelectItem, SetExpr, Statement};
use datafusion::sql::sqlparser::ast::{VisitMut, VisitorMut};

use super::pieces::parse_expr;

/// Rewrites the EXISTS items of `stmt`'s top query when it reads no
/// table; whether it changed.
pub(super) fn exists_items(stmt: &mut Statement) -> bool {
    let Statement::Query(q) = stmt else {
        return false;
    };
    let SetExpr::Select(sel) = q.body.as_mut() else {
        return false;
    };
    if !sel.from.is_empty() {
        return false;
    }
    let mut v = TopExists {
        depth: 0,
        changed: false,
    };
    for item in sel.projection.iter_mut() {
        if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
            let _ = e.visit(&mut v);
        }
    }
    v.changed
}

/// Rewrites EXISTS nodes outside any subquery (one inside `q` belongs to
/// `q`'s own WHERE, which DataFusion plans).
struct TopExists {
    depth: usize,
    changed: bool,
}

impl VisitorMut for TopExists {
    type Break = ();

    fn pre_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        if let Expr::Exists { subquery, negated } = e {
            let sql = format!(
                "((SELECT count(*) FROM (SELECT 1 FROM ({subquery}) AS __tessera_exists LIMIT 1) AS __tessera_exists) {} 0)",
                if *negated { "=" } else { ">" }
            );
            if let Some(x) = parse_expr(&sql) {
                *e = x;
                self.changed = true;
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::rewritten;

    #[test]
    fn exists_items_of_a_statement_without_tables_count_a_row() {
        assert_eq!(
            rewritten("SELECT NOT EXISTS (SELECT a FROM t1 EXCEPT SELECT a FROM t2)"),
            "SELECT ((SELECT count(*) FROM (SELECT 1 FROM (SELECT a FROM t1 EXCEPT SELECT a FROM t2) AS __tessera_exists LIMIT 1) AS __tessera_exists) = 0)"
        );
        // Inside the subquery, and with a table around it: DataFusion's.
        assert_eq!(
            rewritten("SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u)"),
            ""
        );
        assert_eq!(rewritten("SELECT EXISTS (SELECT 1 FROM u) FROM t"), "");
        assert!(
            !rewritten("SELECT EXISTS (SELECT 1 FROM u WHERE EXISTS (SELECT 1 FROM v))")
                .contains("FROM v) AS __tessera_exists")
        );
    }
}
