//! Views (CREATE VIEW), expanded at plan time: every reference to a view
//! in a statement becomes the view's query as a derived table with the
//! view's name and column names, before any other planning; views read
//! through views expand in turn. The definition is stored with every
//! relation name qualified by the schema it resolved to at creation, so a
//! view reads the same tables whatever the reader's `search_path`, as in
//! PostgreSQL (which binds the names when the view is made).
//!
//! Views are read-only: INSERT, UPDATE, DELETE and COPY naming one are
//! refused (PostgreSQL's automatically updatable views are not modelled).
//!
//! The same pass completes a table's column aliases: `FROM t AS f(a)`
//! renames t's first column and keeps the others' names, and more aliases
//! than columns is 42P10, as in PostgreSQL (DataFusion wants one alias per
//! column).

use std::ops::ControlFlow;

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    visit_relations, CopySource, FromTable, Ident, ObjectName, ObjectNamePart, Query, Statement,
    TableAlias, TableAliasColumnDef, TableFactor, TableObject, VisitMut, VisitorMut,
};
use meta::{Catalog, ViewDef};
use std::sync::Arc;

use super::object_parts;

/// Views one statement may expand, counting views read through views: a
/// bound on the work, and what ends a cycle made by CREATE OR REPLACE.
const MAX_EXPANSIONS: usize = 1_000;

/// (schema, name) a relation name means for `schema` as the search path.
fn relation(name: &ObjectName, schema: &str) -> Option<(String, String)> {
    let parts = object_parts(name);
    match parts.as_slice() {
        [n] => Some((schema.to_string(), n.clone())),
        [s, n] | [_, s, n] => Some((s.clone(), n.clone())),
        _ => None,
    }
}

/// The view a relation name means for `schema` as the search path.
pub fn view_named<'c>(
    catalog: &'c Catalog,
    name: &ObjectName,
    schema: &str,
) -> Option<&'c Arc<ViewDef>> {
    view_of(catalog, name, schema)
}

fn view_of<'c>(catalog: &'c Catalog, name: &ObjectName, schema: &str) -> Option<&'c Arc<ViewDef>> {
    let (s, n) = relation(name, schema)?;
    catalog.view(&s, &n)
}

fn read_only(what: &str, view: &ViewDef) -> Error {
    Error::unsupported(format!(
        "{what} a view (\"{}\"): Tessera's views are read-only",
        view.name
    ))
}

/// The CTE names in scope while a visitor walks a statement: a CTE named
/// like a view hides the view inside its query.
#[derive(Default)]
struct Scopes(Vec<Vec<String>>);

impl Scopes {
    fn enter(&mut self, q: &Query) {
        let names = q
            .with
            .as_ref()
            .map(|w| {
                w.cte_tables
                    .iter()
                    .map(|c| shard_router::sql::normalize_ident(&c.alias.name))
                    .collect()
            })
            .unwrap_or_default();
        self.0.push(names);
    }

    fn leave(&mut self) {
        self.0.pop();
    }

    fn hides(&self, name: &ObjectName) -> bool {
        let parts = object_parts(name);
        parts.len() == 1 && self.0.iter().flatten().any(|c| *c == parts[0])
    }
}

struct Expander<'a> {
    catalog: &'a Catalog,
    schema: &'a str,
    scopes: Scopes,
    expanded: usize,
    error: Option<Error>,
}

impl Expander<'_> {
    fn derived(&mut self, view: &ViewDef, alias: Option<TableAlias>) -> Result<TableFactor> {
        self.expanded += 1;
        if self.expanded > MAX_EXPANSIONS {
            return Err(Error::Sql {
                state: SqlState("42P17"),
                message: format!(
                    "infinite recursion detected in rules for relation \"{}\"",
                    view.name
                ),
            });
        }
        let query = match crate::dialect::parse(&view.definition)
            .map_err(Error::internal)?
            .pop()
        {
            Some(Statement::Query(q)) => q,
            _ => {
                return Err(Error::internal(format!(
                    "view {} has no query",
                    view.qualified_name()
                )))
            }
        };
        // The view's column names, renamed from the left by the reader's
        // alias columns (`FROM v AS x(a)` renames the first).
        let mut alias = alias.unwrap_or(TableAlias {
            explicit: false,
            name: Ident::new(view.name.clone()),
            columns: vec![],
            at: None,
        });
        complete_alias(&mut alias, &view.columns)?;
        Ok(TableFactor::Derived {
            lateral: false,
            subquery: query,
            alias: Some(alias),
            sample: None,
        })
    }
}

/// Alias columns for every one of `columns`: those given rename the first
/// ones, the rest keep their names; more than there are columns is 42P10.
fn complete_alias(alias: &mut TableAlias, columns: &[String]) -> Result<()> {
    if alias.columns.len() > columns.len() {
        return Err(Error::Sql {
            state: SqlState("42P10"),
            message: format!(
                "table \"{}\" has {} columns available but {} columns specified",
                alias.name.value,
                columns.len(),
                alias.columns.len()
            ),
        });
    }
    let given = alias.columns.len();
    alias
        .columns
        .extend(columns[given..].iter().map(|c| TableAliasColumnDef {
            name: Ident::with_quote('"', c.clone()),
            data_type: None,
        }));
    Ok(())
}

/// Whether some table or derived table in the statement has column
/// aliases (`t AS f(a)`, `(SELECT ...) AS s(a)`).
fn has_alias_columns(stmt: &Statement) -> bool {
    struct Find;
    impl datafusion::sql::sqlparser::ast::Visitor for Find {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &TableFactor) -> ControlFlow<()> {
            match f {
                TableFactor::Table {
                    args: None,
                    alias: Some(a),
                    ..
                }
                | TableFactor::Derived { alias: Some(a), .. }
                    if !a.columns.is_empty() =>
                {
                    ControlFlow::Break(())
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    datafusion::sql::sqlparser::ast::Visit::visit(stmt, &mut Find).is_break()
}

impl VisitorMut for Expander<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        self.scopes.enter(q);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.scopes.leave();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Derived {
            subquery,
            alias: Some(alias),
            ..
        } = tf
        {
            // A derived table's column aliases, completed when fewer than
            // its columns (`(SELECT 1 AS x, 2 AS y) AS s(a)` has `a` and
            // `y`; DataFusion wants every column named); more is 42P10.
            let known = super::colnames::derived_names(subquery);
            if let Some(names) = known.filter(|n| n.len() != alias.columns.len()) {
                if let Err(e) = complete_alias(alias, &names) {
                    self.error = Some(e);
                    return ControlFlow::Break(());
                }
            }
            return ControlFlow::Continue(());
        }
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = tf
        else {
            return ControlFlow::Continue(());
        };
        if self.scopes.hides(name) {
            return ControlFlow::Continue(());
        }
        let Some(view) = view_of(self.catalog, name, self.schema).cloned() else {
            // A table's column aliases, completed.
            let Some(alias) = alias.as_mut().filter(|a| !a.columns.is_empty()) else {
                return ControlFlow::Continue(());
            };
            let Ok(t) = super::resolve_table(self.catalog, name, self.schema) else {
                return ControlFlow::Continue(());
            };
            let names: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
            if let Err(e) = complete_alias(alias, &names) {
                self.error = Some(e);
                return ControlFlow::Break(());
            }
            return ControlFlow::Continue(());
        };
        match self.derived(&view, alias.take()) {
            Ok(d) => {
                // The visitor goes on into the view's query: views it reads
                // expand in turn.
                *tf = d;
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.error = Some(e);
                ControlFlow::Break(())
            }
        }
    }
}

/// Whether the statement names any view of the catalog (a cheap check
/// before a copy is made).
fn names_a_view(catalog: &Catalog, schema: &str, stmt: &Statement) -> bool {
    let found = visit_relations(stmt, |name| {
        if view_of(catalog, name, schema).is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    found.is_break()
}

/// The statement with every view it reads expanded, or `None` when it
/// reads none. Writes to a view are refused.
pub fn expand(catalog: &Catalog, schema: &str, stmt: &Statement) -> Result<Option<Statement>> {
    // Statements that read relations; DDL keeps the names it was given
    // (CREATE VIEW stores its query unexpanded).
    let reads = matches!(
        stmt,
        Statement::Query(_)
            | Statement::Insert(_)
            | Statement::Update(_)
            | Statement::Delete(_)
            | Statement::Copy { .. }
            | Statement::Declare { .. }
            | Statement::Explain { .. }
    );
    if !reads {
        return Ok(None);
    }
    let aliased = has_alias_columns(stmt);
    if catalog.views.is_empty() && !aliased {
        return Ok(None);
    }
    match stmt {
        Statement::Insert(ins) => {
            if let TableObject::TableName(n) = &ins.table {
                if let Some(v) = view_of(catalog, n, schema) {
                    return Err(read_only("INSERT into", v));
                }
            }
        }
        Statement::Update(u) => {
            if let TableFactor::Table { name, .. } = &u.table.relation {
                if let Some(v) = view_of(catalog, name, schema) {
                    return Err(read_only("UPDATE of", v));
                }
            }
        }
        Statement::Delete(d) => {
            let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &d.from;
            for t in from {
                if let TableFactor::Table { name, .. } = &t.relation {
                    if let Some(v) = view_of(catalog, name, schema) {
                        return Err(read_only("DELETE from", v));
                    }
                }
            }
        }
        Statement::Copy {
            source: CopySource::Table { table_name, .. },
            to,
            ..
        } => {
            if let Some(v) = view_of(catalog, table_name, schema) {
                return Err(Error::Sql {
                    state: SqlState("42809"),
                    message: if *to {
                        format!("cannot copy from view \"{}\"", v.name)
                    } else {
                        format!("cannot copy to view \"{}\"", v.name)
                    },
                });
            }
        }
        _ => {}
    }
    if !aliased && !names_a_view(catalog, schema, stmt) {
        return Ok(None);
    }
    let mut out = stmt.clone();
    let mut ex = Expander {
        catalog,
        schema,
        scopes: Scopes::default(),
        expanded: 0,
        error: None,
    };
    let _ = VisitMut::visit(&mut out, &mut ex);
    match ex.error {
        Some(e) => Err(e),
        None => Ok(Some(out)),
    }
}

/// A view's definition as stored: its query printed with every relation
/// name that resolves in `schema` (a table, view or sequence of the
/// catalog) qualified, and the relations it reads.
pub fn definition(
    catalog: &Catalog,
    schema: &str,
    query: &Query,
) -> Result<(String, Vec<(String, String)>)> {
    struct Qualify<'a> {
        catalog: &'a Catalog,
        schema: &'a str,
        scopes: Scopes,
        reads: Vec<(String, String)>,
    }
    impl VisitorMut for Qualify<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            self.scopes.enter(q);
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
            self.scopes.leave();
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
            let TableFactor::Table {
                name, args: None, ..
            } = tf
            else {
                return ControlFlow::Continue(());
            };
            if self.scopes.hides(name) {
                return ControlFlow::Continue(());
            }
            let Some((s, n)) = relation(name, self.schema) else {
                return ControlFlow::Continue(());
            };
            if self.catalog.table(&s, &n).is_some() || self.catalog.view(&s, &n).is_some() {
                *name = ObjectName(vec![
                    ObjectNamePart::Identifier(Ident::with_quote('"', s.clone())),
                    ObjectNamePart::Identifier(Ident::with_quote('"', n.clone())),
                ]);
                if !self.reads.contains(&(s.clone(), n.clone())) {
                    self.reads.push((s, n));
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut q = query.clone();
    let mut v = Qualify {
        catalog,
        schema,
        scopes: Scopes::default(),
        reads: vec![],
    };
    let _ = VisitMut::visit(&mut q, &mut v);
    Ok((q.to_string(), v.reads))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog_with_views() -> Catalog {
        let mut c = super::super::fuzz::catalog();
        let q = |sql: &str| match crate::dialect::parse(sql).unwrap().pop() {
            Some(Statement::Query(q)) => q,
            _ => panic!("{sql}"),
        };
        let (text, reads) =
            super::definition(&c, "public", &q("SELECT id, v FROM t WHERE id > 1")).unwrap();
        assert_eq!(reads, vec![("public".to_string(), "t".to_string())]);
        assert!(text.contains("\"public\".\"t\""), "{text}");
        c.views.insert(
            ("public".into(), "v1".into()),
            Arc::new(ViewDef {
                id: 1,
                schema: "public".into(),
                name: "v1".into(),
                definition: text,
                columns: vec!["id".into(), "v".into()],
                type_oids: vec![20, 25],
                reads,
            }),
        );
        let (text, reads) = super::definition(&c, "public", &q("SELECT id FROM v1")).unwrap();
        c.views.insert(
            ("public".into(), "v2".into()),
            Arc::new(ViewDef {
                id: 2,
                schema: "public".into(),
                name: "v2".into(),
                definition: text,
                columns: vec!["k".into()],
                type_oids: vec![20],
                reads,
            }),
        );
        c
    }

    fn one(sql: &str) -> Statement {
        crate::dialect::parse(sql).unwrap().pop().unwrap()
    }

    #[test]
    fn views_expand_through_views() {
        let c = catalog_with_views();
        assert!(expand(&c, "public", &one("SELECT * FROM t"))
            .unwrap()
            .is_none());
        let e = expand(&c, "public", &one("SELECT k FROM v2 WHERE k = 3"))
            .unwrap()
            .unwrap()
            .to_string();
        assert!(e.contains(") v2 (\"k\")"), "{e}");
        assert!(e.contains(") v1 (\"id\", \"v\")"), "{e}");
        assert!(e.contains("\"public\".\"t\""), "{e}");
        // A CTE named like a view hides it; an alias renames from the left.
        let e = expand(
            &c,
            "public",
            &one("WITH v1 AS (SELECT 1 AS id) SELECT * FROM v1"),
        )
        .unwrap()
        .unwrap()
        .to_string();
        assert!(!e.contains("\"public\".\"t\""), "{e}");
        let e = expand(&c, "public", &one("SELECT x.a, x.v FROM v1 AS x (a)"))
            .unwrap()
            .unwrap()
            .to_string();
        assert!(e.contains("AS x (a, \"v\")"), "{e}");
        // A derived table's aliases, completed from its SELECT list or
        // VALUES (none: a `*`).
        let derived = |sql: &str| {
            expand(&c, "public", &one(sql))
                .unwrap()
                .unwrap()
                .to_string()
        };
        let e = derived("SELECT * FROM (SELECT 1 AS x, 2 AS y) AS s (a)");
        assert!(e.contains("AS s (a, \"y\")"), "{e}");
        let e = derived("SELECT * FROM (VALUES (1, 2)) AS s (a)");
        assert!(e.contains("AS s (a, \"column2\")"), "{e}");
        let e = derived("SELECT * FROM (SELECT * FROM t) AS s (a)");
        assert!(e.contains("AS s (a)"), "{e}");
        // Writes and COPY refused; too many alias columns 42P10.
        for (sql, state) in [
            ("INSERT INTO v1 VALUES (1, 'a')", "0A000"),
            ("UPDATE v1 SET v = 'a'", "0A000"),
            ("DELETE FROM v2", "0A000"),
            ("COPY v1 TO STDOUT", "42809"),
            ("SELECT * FROM v2 AS x (a, b)", "42P10"),
            (
                "SELECT * FROM (SELECT 1 AS x, 2 AS y) AS s (a, b, c)",
                "42P10",
            ),
            ("SELECT * FROM (VALUES (1)) AS s (a, b)", "42P10"),
        ] {
            let e = expand(&c, "public", &one(sql)).unwrap_err();
            assert_eq!(e.sqlstate().code(), state, "{sql}: {e}");
        }
    }

    #[test]
    fn a_cycle_ends_in_42p17() {
        let mut c = catalog_with_views();
        let v1 = c
            .views
            .get(&("public".into(), "v1".into()))
            .cloned()
            .unwrap();
        let mut cyclic = (*v1).clone();
        cyclic.definition = "SELECT k AS id, 'x' AS v FROM public.v2".into();
        c.views
            .insert(("public".into(), "v1".into()), Arc::new(cyclic));
        let e = expand(&c, "public", &one("SELECT * FROM v2")).unwrap_err();
        assert_eq!(e.sqlstate().code(), "42P17", "{e}");
    }
}
