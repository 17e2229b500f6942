//! Roles and privileges: CREATE / ALTER / DROP ROLE, GRANT and REVOKE,
//! catalog-only changes (the shards know one user, Tessera's) under the
//! DDL lock and log.

use common::{Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{
    AlterRoleOperation, CreateRole, GrantObjects, Grantee, Ident, ObjectName, Privileges,
};
use meta::Catalog;
use shard_router::sql::normalize_ident;

use crate::plan::ddl::{grant_list, role_password};
use crate::plan::object_parts;
use crate::session::Session;

use super::ddl_change::DdlChange;

/// What a GRANT or REVOKE names: privileges, objects, grantees.
pub(crate) type GrantTarget<'a> = (&'a Privileges, Option<&'a GrantObjects>, &'a [Grantee]);

impl Session {
    pub(crate) async fn create_role(&mut self, cr: &CreateRole, catalog: &Catalog) -> Result<()> {
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, "CREATE ROLE").await?;
        for n in &cr.names {
            let name = object_parts(n).join(".");
            if catalog.roles.contains_key(&name) {
                if cr.if_not_exists {
                    continue;
                }
                return Err(Error::Sql {
                    state: SqlState::DUPLICATE_OBJECT,
                    message: format!("role \"{name}\" already exists"),
                });
            }
            if name.starts_with("pg_") || name == "public" || name == "none" {
                return Err(Error::Sql {
                    state: SqlState::RESERVED_NAME,
                    message: format!("role name \"{name}\" is reserved"),
                });
            }
            let password = role_password(cr.password.as_ref())?;
            txn.put_role(
                &name,
                Some(cr.superuser.unwrap_or(false)),
                Some(cr.login.unwrap_or(false)),
                password,
            )
            .await?;
        }
        txn.finish().await
    }

    pub(crate) async fn alter_role(
        &mut self,
        name: &Ident,
        operation: &AlterRoleOperation,
        catalog: &Catalog,
    ) -> Result<()> {
        use datafusion::sql::sqlparser::ast::RoleOption;
        let name = normalize_ident(name);
        if !catalog.roles.contains_key(&name) {
            return Err(Error::Sql {
                state: SqlState::UNDEFINED_OBJECT,
                message: format!("role \"{name}\" does not exist"),
            });
        }
        let AlterRoleOperation::WithOptions { options } = operation else {
            return Err(Error::unsupported("this ALTER ROLE"));
        };
        let (mut su, mut login, mut pw) = (None, None, None);
        for o in options {
            match o {
                RoleOption::SuperUser(b) => su = Some(*b),
                RoleOption::Login(b) => login = Some(*b),
                RoleOption::Password(p) => pw = role_password(Some(p))?,
                other => return Err(Error::unsupported(format!("role option {other}"))),
            }
        }
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, "ALTER ROLE").await?;
        txn.put_role(&name, su, login, pw).await?;
        txn.finish().await
    }

    /// DROP ROLE names...: one change for them all.
    pub(crate) async fn drop_roles(
        &mut self,
        names: &[ObjectName],
        if_exists: bool,
        catalog: &Catalog,
    ) -> Result<()> {
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, "DROP ROLE").await?;
        for n in names {
            let name = object_parts(n).join(".");
            if !catalog.roles.contains_key(&name) {
                if if_exists {
                    continue;
                }
                return Err(Error::Sql {
                    state: SqlState::UNDEFINED_OBJECT,
                    message: format!("role \"{name}\" does not exist"),
                });
            }
            if name == self.user {
                return Err(Error::Sql {
                    state: SqlState::OBJECT_IN_USE,
                    message: "current user cannot be dropped".into(),
                });
            }
            txn.drop_role(&name).await?;
        }
        txn.finish().await
    }

    /// GRANT (`grant`) or REVOKE of what `target` names.
    pub(crate) async fn grant_or_revoke(
        &mut self,
        grant: bool,
        (privileges, objects, grantees): GrantTarget<'_>,
        catalog: &Catalog,
        schema: &str,
    ) -> Result<()> {
        let privs = grant_list(catalog, schema, privileges, objects, grantees)?;
        let tag = if grant { "GRANT" } else { "REVOKE" };
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, tag).await?;
        for p in &privs {
            txn.set_grant(p, grant).await?;
        }
        txn.finish().await
    }
}
