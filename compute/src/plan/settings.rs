//! SET plans: a setting's name and value, SET TIME ZONE, SET [SESSION
//! CHARACTERISTICS AS] TRANSACTION, SET NAMES; isolation level names.

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{Expr, Value};
use shard_router::txn::IsolationLevel;

use super::{object_parts, Plan, PlanKind, Planner};

impl Planner<'_> {
    pub(crate) fn plan_set(&self, set: datafusion::sql::sqlparser::ast::Set) -> Result<Plan> {
        use datafusion::sql::sqlparser::ast::Set as S;
        match set {
            S::SingleAssignment {
                variable, values, ..
            } => {
                let name = object_parts(&variable).join(".");
                if let [Expr::Identifier(i)] = values.as_slice() {
                    if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default") {
                        return Ok(self.plan_of(PlanKind::Reset(Some(name)), "SET"));
                    }
                }
                let value = values
                    .iter()
                    .map(|v| match v {
                        Expr::Value(v) => match &v.value {
                            Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        Expr::Identifier(i) => i.value.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                Ok(self.plan_of(PlanKind::Set { name, value }, "SET"))
            }
            S::SetTimeZone { value, .. } => Ok(self.plan_of(
                PlanKind::Set {
                    name: "timezone".into(),
                    value: value.to_string().trim_matches('\'').to_string(),
                },
                "SET",
            )),
            S::SetTransaction { modes, session, .. } => {
                let mut value = String::new();
                for m in &modes {
                    if let datafusion::sql::sqlparser::ast::TransactionMode::IsolationLevel(l) = m {
                        value = isolation_level(l)?.name().to_string();
                    }
                }
                let name = if session {
                    "default_transaction_isolation"
                } else {
                    "transaction_isolation"
                };
                Ok(self.plan_of(
                    PlanKind::Set {
                        name: name.into(),
                        value,
                    },
                    "SET",
                ))
            }
            S::SetNames { .. } | S::SetNamesDefault {} => Ok(self.plan_of(PlanKind::Noop, "SET")),
            other => Err(Error::unsupported(format!("{other}"))),
        }
    }
}

pub(crate) fn isolation_level(
    l: &datafusion::sql::sqlparser::ast::TransactionIsolationLevel,
) -> Result<IsolationLevel> {
    use datafusion::sql::sqlparser::ast::TransactionIsolationLevel as L;
    Ok(match l {
        L::ReadUncommitted => IsolationLevel::ReadUncommitted,
        L::ReadCommitted => IsolationLevel::ReadCommitted,
        L::RepeatableRead => IsolationLevel::RepeatableRead,
        L::Serializable => IsolationLevel::Serializable,
        _ => return Err(Error::unsupported("this isolation level")),
    })
}
