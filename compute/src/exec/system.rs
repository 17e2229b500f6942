//! ALTER SYSTEM: a parameter's value for the whole cluster, kept in meta
//! (`meta::Catalog::system_settings`) and written like a catalog change
//! (the DDL lock, the DDL log, the catalog version moved), so every
//! compute node has it before the statement answers and its sessions
//! started afterwards begin with it (PostgreSQL applies ALTER SYSTEM at
//! the next `pg_reload_conf()`; Tessera at once, for new sessions). A
//! parameter PostgreSQL reads only when the server starts takes effect on
//! a node when the node restarts (`pending_restart` until then). See
//! docs/design/pg-semantics.md, "Server settings".

use common::{Error, Result, SqlState};

use crate::alter_system::AlterSystem;
use crate::session::{Output, Session};

use super::ddl_change::DdlChange;

impl Session {
    /// Checks in PostgreSQL's order: transaction block (25001), superuser
    /// (42501), known parameter (42704), changeable (55P02), value (22023).
    pub(crate) async fn alter_system(&mut self, a: &AlterSystem) -> Result<Output> {
        if self.txn.is_some() {
            return Err(Error::Sql {
                state: SqlState::ACTIVE_TRANSACTION,
                message: "ALTER SYSTEM cannot run inside a transaction block".into(),
            });
        }
        if !crate::privileges::is_superuser(&self.router.catalog(), &self.user) {
            return Err(Error::Sql {
                state: SqlState::INSUFFICIENT_PRIVILEGE,
                message: match &a.name {
                    None => "permission denied to perform ALTER SYSTEM RESET ALL".into(),
                    Some(n) => format!("permission denied to set parameter \"{n}\""),
                },
            });
        }
        let router = self.router.clone();
        let Some(name) = &a.name else {
            let mut change = DdlChange::begin(&router, "ALTER SYSTEM RESET ALL").await?;
            change.reset_system_settings().await?;
            change.finish().await?;
            return Ok(done());
        };
        let param =
            crate::guc::find(name).ok_or_else(|| Error::UnknownSetting { name: name.clone() })?;
        if param.fixed() {
            return Err(Error::Sql {
                state: SqlState::CANT_CHANGE_RUNTIME_PARAM,
                message: format!("parameter \"{name}\" cannot be changed"),
            });
        }
        let value = match &a.value {
            Some(items) => Some(param.parse(&param.flatten(items)?)?.show),
            None => None,
        };
        let statement = match &value {
            Some(v) => format!(
                "ALTER SYSTEM SET {} = '{}'",
                param.key(),
                v.replace('\'', "''")
            ),
            None => format!("ALTER SYSTEM RESET {}", param.key()),
        };
        let mut change = DdlChange::begin(&router, &statement).await?;
        change
            .set_system_setting(&param.key(), value.as_deref())
            .await?;
        change.finish().await?;
        if value.is_some() && !param.has_effect() {
            self.notices.push(format!(
                "parameter \"{}\" is stored but has no effect in Tessera",
                param.name
            ));
        }
        Ok(done())
    }
}

fn done() -> Output {
    Output::Command {
        tag: "ALTER SYSTEM".into(),
        rows: None,
    }
}
