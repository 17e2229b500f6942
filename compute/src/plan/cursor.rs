//! Cursor statements: DECLARE (its query is prepared with it, see
//! `prepare`), FETCH and CLOSE.

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{Ident, Statement, Value};
use shard_router::sql::normalize_ident;

use super::{Plan, PlanKind, Planner};

impl Planner<'_> {
    pub(crate) fn plan_declare(
        &self,
        stmts: &[datafusion::sql::sqlparser::ast::Declare],
    ) -> Result<Plan> {
        use datafusion::sql::sqlparser::ast::DeclareType;
        let [d] = stmts else {
            return Err(Error::unsupported("DECLARE of several cursors"));
        };
        let (Some(DeclareType::Cursor), [name], Some(q)) =
            (&d.declare_type, d.names.as_slice(), &d.for_query)
        else {
            return Err(Error::unsupported("DECLARE other than a cursor"));
        };
        if d.scroll == Some(true) {
            return Err(Error::unsupported("SCROLL cursors"));
        }
        Ok(self.plan_of(
            PlanKind::DeclareCursor {
                name: normalize_ident(name),
                hold: d.hold == Some(true),
                query: Box::new(Statement::Query(q.clone())),
                prepared: None,
            },
            "DECLARE CURSOR",
        ))
    }

    pub(crate) fn plan_fetch(
        &self,
        name: &Ident,
        direction: &datafusion::sql::sqlparser::ast::FetchDirection,
    ) -> Result<Plan> {
        use datafusion::sql::sqlparser::ast::FetchDirection as D;
        let number = |v: &datafusion::sql::sqlparser::ast::ValueWithSpan| -> Result<u64> {
            match &v.value {
                Value::Number(n, _) => n
                    .parse::<u64>()
                    .map_err(|_| Error::unsupported("FETCH with a negative or backward count")),
                _ => Err(Error::unsupported("FETCH with this count")),
            }
        };
        let count = match direction {
            D::Next | D::Forward { limit: None } => Some(1),
            D::Count { limit } | D::Forward { limit: Some(limit) } => Some(number(limit)?),
            D::All | D::ForwardAll => None,
            _ => {
                return Err(Error::unsupported(
                    "FETCH in this direction (cursors are forward only)",
                ))
            }
        };
        Ok(self.plan_of(
            PlanKind::Fetch {
                name: normalize_ident(name),
                count,
            },
            "FETCH",
        ))
    }

    pub(crate) fn plan_close(&self, cursor: &datafusion::sql::sqlparser::ast::CloseCursor) -> Plan {
        use datafusion::sql::sqlparser::ast::CloseCursor as C;
        let name = match cursor {
            C::All => None,
            C::Specific { name } => Some(normalize_ident(name)),
        };
        self.plan_of(PlanKind::CloseCursor(name), "CLOSE CURSOR")
    }
}
