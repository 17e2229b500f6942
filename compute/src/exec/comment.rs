//! COMMENT ON: what a statement names (the catalog change itself is in
//! `ddl`, its undo inside a block in `block_ddl`).

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::Statement;

use crate::plan::{object_parts, resolve_table};
use crate::session::Session;

impl Session {
    /// What a COMMENT ON names: (kind, object id, column); `None` for a
    /// missing object under IF EXISTS.
    pub(crate) fn comment_target(
        &self,
        catalog: &meta::Catalog,
        stmt: &Statement,
    ) -> Result<Option<(&'static str, u64, String)>> {
        use datafusion::sql::sqlparser::ast::CommentObject as O;
        let Statement::Comment {
            object_type,
            object_name,
            if_exists,
            ..
        } = stmt
        else {
            return Err(Error::internal("not a COMMENT"));
        };
        let schema = self.current_schema();
        let found = match object_type {
            O::Table => resolve_table(catalog, object_name, &schema)
                .map(|t| ("table", t.id.0, String::new())),
            O::Column => {
                let mut parts = object_name.clone();
                let Some(last) = parts.0.pop() else {
                    return Err(Error::internal("empty column name"));
                };
                let column = object_parts(&datafusion::sql::sqlparser::ast::ObjectName(vec![last]))
                    .pop()
                    .unwrap_or_default();
                let t = resolve_table(catalog, &parts, &schema);
                match t {
                    Ok(t) => {
                        if t.column_index(&column).is_none() {
                            return Err(Error::ColumnNotFound { name: column });
                        }
                        Ok(("table", t.id.0, column))
                    }
                    Err(e) => Err(e),
                }
            }
            O::Sequence => {
                let parts = object_parts(object_name);
                let (s, n) = match parts.as_slice() {
                    [n] => (schema.clone(), n.clone()),
                    [.., s, n] => (s.clone(), n.clone()),
                    [] => (schema.clone(), String::new()),
                };
                catalog
                    .sequence(&s, &n)
                    .map(|q| ("sequence", q.id, String::new()))
                    .ok_or(Error::Sql {
                        state: SqlState::UNDEFINED_TABLE,
                        message: format!("relation \"{n}\" does not exist"),
                    })
            }
            other => return Err(Error::unsupported(format!("COMMENT ON {other}"))),
        };
        match found {
            Ok(t) => Ok(Some(t)),
            Err(_) if *if_exists => Ok(None),
            Err(e) => Err(e),
        }
    }
}
