//! The DDL routine, written once: every catalog change takes meta's DDL
//! lock and opens the catalog transaction ([`DdlChange::begin`]), writes
//! its rows (and does its shard work) through it, commits it with the
//! statement in the DDL log, and reloads this node's catalog
//! ([`DdlChange::finish`]) so the statement's answer comes after every
//! node sees the change (see ARCHITECTURE.md, "DDL protocol").
//!
//! A guard rather than a closure: a statement that finds nothing to do
//! after the lock is held (`IF NOT EXISTS`, an ALTER that changes nothing)
//! returns early, and `?` anywhere before the commit drops the guard,
//! which rolls the catalog change back and releases the lock
//! (`meta::DdlTxn`'s `Drop`), as it always did.

use std::sync::Arc;

use common::Result;
use meta::{Catalog, DdlTxn};
use shard_router::Router;

/// One open DDL change on `router`'s meta: derefs to the catalog
/// transaction ([`DdlTxn`]) its rows are written through.
pub(crate) struct DdlChange<'r> {
    router: &'r Router,
    txn: DdlTxn,
}

impl<'r> DdlChange<'r> {
    /// Takes the cluster DDL lock and opens the catalog transaction;
    /// `statement` is what the DDL log records.
    pub(crate) async fn begin(router: &'r Router, statement: &str) -> Result<Self> {
        let txn = router.meta.begin_ddl(router.node_id, statement).await?;
        Ok(Self { router, txn })
    }

    /// The catalog as of the lock: no other DDL can change it until this
    /// change ends.
    pub(crate) async fn catalog(&self) -> Result<Arc<Catalog>> {
        self.router.check_version().await
    }

    /// Commits the catalog change (logged, the catalog version bumped, the
    /// lock released) without reloading: for a statement with work after
    /// the commit (physical tables dropped or unqueued, several changes in
    /// one statement), which reloads when that is done.
    pub(crate) async fn commit(self) -> Result<()> {
        self.txn.commit().await?;
        Ok(())
    }

    /// Commits, then reloads this node's catalog: the whole routine.
    pub(crate) async fn finish(self) -> Result<()> {
        let router = self.router;
        self.commit().await?;
        router.reload().await?;
        Ok(())
    }
}

impl std::ops::Deref for DdlChange<'_> {
    type Target = DdlTxn;
    fn deref(&self) -> &DdlTxn {
        &self.txn
    }
}

impl std::ops::DerefMut for DdlChange<'_> {
    fn deref_mut(&mut self) -> &mut DdlTxn {
        &mut self.txn
    }
}
