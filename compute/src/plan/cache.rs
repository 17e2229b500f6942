//! The node-wide cache of compiled statements: one plan per statement
//! text, shared by every session of the node (see
//! `docs/rfcs/2026-12-02-placement-and-compiled-statements.md`).
//!
//! A statement's plan ([`Prepared`]) is made once per (text, schema the
//! names resolve in, session time zone, client parameter types) and kept
//! while the catalog version it was made at is current. Only plans that
//! carry nothing of the session that made them are shared
//! ([`Plan::session_free`]): the planner sees the catalog, the schema and
//! the client's types, never the user or the backend; plans holding a
//! DataFusion logical plan (made in a session's context: `current_user`,
//! `pg_backend_pid`, the catalog snapshot) stay with their session.
//! Privileges are checked at every execution, for the executing user.
//!
//! Bounded: least recently used entries go first past [`MAX_BYTES`]
//! (an estimate of each entry's size) or [`MAX_ENTRIES`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use lru::LruCache;
use parking_lot::Mutex;
use pgwire::api::Type;

use super::{Plan, PlanKind, Prepared};

/// Entries kept at most.
pub const MAX_ENTRIES: usize = 16_384;
/// Estimated bytes kept at most (keys, texts and plans).
pub const MAX_BYTES: usize = 32 << 20;
/// A plan's estimated size beyond its text (its trees, fields, SQL).
const PLAN_OVERHEAD: usize = 2048;

/// Where a statement text came from: a Parse (the client's text) or the
/// shape of a simple-protocol statement (literals taken out, see
/// `crate::literals`), whose plan is kept only if it runs on the fast path.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Source {
    Parse,
    SimpleShape,
}

/// What a statement's plan was made for, beside the catalog version.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Key {
    pub source: Source,
    pub text: Arc<str>,
    pub schema: Arc<str>,
    pub zone: Arc<str>,
    /// The client's parameter types (Parse), by OID; 0 where unspecified.
    pub types: Vec<u32>,
}

impl Key {
    pub fn new(
        source: Source,
        text: &str,
        schema: &str,
        zone: &str,
        types: &[Option<Type>],
    ) -> Key {
        Key {
            source,
            text: Arc::from(text),
            schema: Arc::from(schema),
            zone: Arc::from(zone),
            types: types
                .iter()
                .map(|t| t.as_ref().map_or(0, |t| t.oid()))
                .collect(),
        }
    }

    fn bytes(&self) -> usize {
        self.text.len() + self.schema.len() + self.zone.len() + 4 * self.types.len() + 64
    }
}

/// A cached answer: the statement's plan, or (a simple-protocol shape)
/// the knowledge that it is planned with its literals instead.
#[derive(Clone)]
pub enum Compiled {
    Plan(Arc<Prepared>),
    WithLiterals,
}

struct Entry {
    version: u64,
    compiled: Compiled,
    bytes: usize,
}

/// The cache's counters, as `SHOW tessera.statement_cache` prints them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub entries: usize,
    pub bytes: usize,
    pub evictions: u64,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let looked = self.hits + self.misses;
        let rate = if looked == 0 {
            0.0
        } else {
            100.0 * self.hits as f64 / looked as f64
        };
        write!(
            f,
            "hits={} misses={} hit_rate={rate:.1}% entries={} bytes={} evictions={}",
            self.hits, self.misses, self.entries, self.bytes, self.evictions
        )
    }
}

/// The node's compiled statements.
pub struct StatementCache {
    entries: Mutex<(LruCache<Key, Entry>, usize)>,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

impl Default for StatementCache {
    fn default() -> Self {
        StatementCache {
            entries: Mutex::new((LruCache::unbounded(), 0)),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }
}

impl StatementCache {
    /// The statement's compiled form made at catalog `version`, if cached.
    /// One made at another version is a miss (and is replaced by the
    /// caller's [`StatementCache::insert`]).
    pub fn get(&self, key: &Key, version: u64) -> Option<Compiled> {
        let found = {
            let mut guard = self.entries.lock();
            guard
                .0
                .get(key)
                .filter(|e| e.version == version)
                .map(|e| e.compiled.clone())
        };
        match &found {
            Some(_) => self.hits.fetch_add(1, Relaxed),
            None => self.misses.fetch_add(1, Relaxed),
        };
        found
    }

    /// Keeps `compiled`, made at catalog `version`, if it can be shared
    /// (see the module's doc); evicts the least recently used past the
    /// bounds.
    pub fn insert(&self, key: Key, version: u64, compiled: Compiled) {
        if let Compiled::Plan(p) = &compiled {
            if !p.plan.session_free() {
                return;
            }
        }
        let bytes = key.bytes()
            + PLAN_OVERHEAD
            + match &compiled {
                Compiled::Plan(p) => p.text.len(),
                Compiled::WithLiterals => 0,
            };
        let mut guard = self.entries.lock();
        let (map, total) = &mut *guard;
        if let Some(old) = map.put(
            key,
            Entry {
                version,
                compiled,
                bytes,
            },
        ) {
            *total -= old.bytes;
        }
        *total += bytes;
        while *total > MAX_BYTES || map.len() > MAX_ENTRIES {
            match map.pop_lru() {
                Some((_, e)) => {
                    *total -= e.bytes;
                    self.evictions.fetch_add(1, Relaxed);
                }
                None => break,
            }
        }
    }

    pub fn stats(&self) -> Stats {
        let guard = self.entries.lock();
        Stats {
            hits: self.hits.load(Relaxed),
            misses: self.misses.load(Relaxed),
            entries: guard.0.len(),
            bytes: guard.1,
            evictions: self.evictions.load(Relaxed),
        }
    }
}

impl Plan {
    /// Whether the plan carries nothing of the session it was made in, so
    /// that any session of the node may run it: no DataFusion logical
    /// plan (made in a session's context), at any depth.
    pub fn session_free(&self) -> bool {
        if self.logical.is_some() {
            return false;
        }
        match &self.kind {
            PlanKind::DataFusion(..)
            | PlanKind::CopyOut(..)
            | PlanKind::ReadWrite(_)
            | PlanKind::DeclareCursor { .. } => false,
            PlanKind::Insert(ins) => ins.source_plan.is_none() && ins.returning_exprs.is_none(),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::ast::Statement;

    fn prepared_as(sql: &str, kind: impl Fn(&Statement) -> PlanKind) -> Arc<Prepared> {
        let stmt = crate::parse::parse_sql(sql)
            .expect("parses")
            .pop()
            .expect("one statement");
        let plan = Plan {
            kind: kind(&stmt),
            param_types: vec![],
            fields: vec![],
            tag: "SET",
            catalog_version: 1,
            described: Default::default(),
            origins: vec![],
            logical: None,
        };
        let mut p = Prepared::new("public".into(), stmt, plan, vec![]);
        p.text = Arc::from(sql);
        Arc::new(p)
    }

    fn prepared(sql: &str) -> Arc<Prepared> {
        prepared_as(sql, |_| PlanKind::Noop)
    }

    fn key(text: &str) -> Key {
        Key::new(Source::Parse, text, "public", "UTC", &[None])
    }

    #[test]
    fn a_plan_is_shared_at_its_catalog_version_only() {
        let cache = StatementCache::default();
        let k = key("SET a = 1");
        assert!(cache.get(&k, 1).is_none());
        cache.insert(k.clone(), 1, Compiled::Plan(prepared("SET a = 1")));
        assert!(matches!(cache.get(&k, 1), Some(Compiled::Plan(_))));
        // DDL moved the catalog: made again.
        assert!(cache.get(&k, 2).is_none());
        let other_schema = Key::new(Source::Parse, "SET a = 1", "s2", "UTC", &[None]);
        assert!(cache.get(&other_schema, 1).is_none());
        let typed = Key::new(
            Source::Parse,
            "SET a = 1",
            "public",
            "UTC",
            &[Some(Type::INT4)],
        );
        assert!(cache.get(&typed, 1).is_none());
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.entries), (1, 4, 1));
        assert!(s.to_string().starts_with("hits=1 misses=4 hit_rate=20.0%"));
    }

    #[test]
    fn the_least_recently_used_go_first_past_the_bound() {
        let cache = StatementCache::default();
        let n = MAX_ENTRIES + 10;
        for i in 0..n {
            cache.insert(key(&format!("q{i}")), 1, Compiled::WithLiterals);
        }
        let s = cache.stats();
        assert!(s.entries <= MAX_ENTRIES && s.bytes <= MAX_BYTES);
        assert_eq!(s.evictions as usize, n - s.entries);
        assert!(cache.get(&key("q0"), 1).is_none());
        assert!(cache.get(&key(&format!("q{}", n - 1)), 1).is_some());
    }

    #[test]
    fn a_plan_made_in_a_session_context_is_not_shared() {
        let cache = StatementCache::default();
        let session_bound = prepared_as("SELECT 1", |s| {
            PlanKind::DataFusion(Arc::new(s.clone()), None)
        });
        cache.insert(key("SELECT 1"), 1, Compiled::Plan(session_bound));
        assert_eq!(cache.stats().entries, 0);
    }
}
