//! ALTER SYSTEM's values in meta's `settings` table: written as a catalog
//! change under the DDL lock (so the catalog version moves and every node
//! reloads), read with the catalog (`load`).

use common::Result;
use mysql_async::prelude::*;

use super::ddl::DdlTxn;
use super::me;

impl DdlTxn {
    /// ALTER SYSTEM SET (`Some(value)`, as SHOW prints it) or RESET
    /// (`None`) of one parameter (lower case).
    pub async fn set_system_setting(&mut self, name: &str, value: Option<&str>) -> Result<()> {
        let conn = self.c()?;
        match value {
            Some(v) => conn.exec_drop(
                "REPLACE INTO settings (name, value) VALUES (?, ?)",
                (name, v),
            ),
            None => conn.exec_drop("DELETE FROM settings WHERE name = ?", (name,)),
        }
        .await
        .map_err(me)
    }

    /// ALTER SYSTEM RESET ALL.
    pub async fn reset_system_settings(&mut self) -> Result<()> {
        self.c()?
            .query_drop("DELETE FROM settings")
            .await
            .map_err(me)
    }
}
