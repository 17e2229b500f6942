//! Session settings: their defaults, PostgreSQL's reading and printing of
//! time values, and SET / SHOW. Every value that can reach a shard is
//! checked against its allowed values here (22023).

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Datum, Error, Result};
use shard_router::txn::IsolationLevel;

use super::Session;

/// The session's settings: the text of each, as SHOW prints it and RESET
/// restores it, and the values statements read, typed once when set (an
/// execution parses nothing).
#[derive(Default)]
pub struct Settings {
    values: BTreeMap<String, String>,
    /// Where each value came from (absent: the default).
    pub(crate) sources: BTreeMap<String, Source>,
    typed: Typed,
    /// The schema `search_path` resolves to, at a catalog version (see
    /// `Session::current_schema`); forgotten when `search_path` is set.
    schema: parking_lot::Mutex<Option<(u64, String)>>,
}

/// The settings statements read at every execution, typed. Their
/// defaults come from `default_settings`' text, like every later value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Typed {
    pub statement_timeout: Option<Duration>,
    pub lock_timeout: Option<Duration>,
    pub idle_in_transaction_timeout: Option<Duration>,
    /// `tessera.pushdown` (on unless set off).
    pub pushdown: bool,
    /// `tessera.consistent_reads` (on unless set off).
    pub consistent_reads: bool,
    /// `tessera.unenforced_foreign_keys` (off unless set on).
    pub unenforced_foreign_keys: bool,
    /// `default_transaction_isolation`, validated when set.
    pub default_isolation: Option<IsolationLevel>,
}

/// A time setting's value; `None` for 0 (off) or what does not read.
fn duration(v: &str) -> Option<Duration> {
    let ms = parse_duration_ms(v).ok()?;
    (ms > 0).then(|| Duration::from_millis(ms))
}

impl Typed {
    fn update(&mut self, key: &str, value: &str) {
        match key {
            "statement_timeout" => self.statement_timeout = duration(value),
            "lock_timeout" => self.lock_timeout = duration(value),
            "idle_in_transaction_session_timeout" => {
                self.idle_in_transaction_timeout = duration(value)
            }
            "tessera.pushdown" => self.pushdown = !value.eq_ignore_ascii_case("off"),
            "tessera.consistent_reads" => {
                self.consistent_reads = !value.eq_ignore_ascii_case("off")
            }
            "tessera.unenforced_foreign_keys" => self.unenforced_foreign_keys = value == "on",
            "default_transaction_isolation" => {
                self.default_isolation = IsolationLevel::parse(value).ok()
            }
            _ => {}
        }
    }
}

impl Clone for Settings {
    fn clone(&self) -> Self {
        Settings {
            values: self.values.clone(),
            sources: self.sources.clone(),
            typed: self.typed.clone(),
            schema: Default::default(),
        }
    }
}

impl Settings {
    pub fn get(&self, key: &str) -> Option<&String> {
        self.values.get(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.values.keys()
    }

    /// Sets `key` (in the canonical form `Session::set` gives it).
    pub fn insert(&mut self, key: String, value: String) {
        self.typed.update(&key, &value);
        if key == "search_path" {
            *self.schema.get_mut() = None;
        }
        self.values.insert(key, value);
    }

    /// Forgets a parameter set in the session, back to its default
    /// (none of the typed ones: they are always present).
    pub fn remove(&mut self, key: &str) {
        self.values.remove(key);
        self.sources.remove(key);
    }

    /// Where `key`'s value came from.
    pub fn source(&self, key: &str) -> Source {
        self.sources.get(key).copied().unwrap_or_default()
    }

    /// The typed values.
    pub fn typed(&self) -> &Typed {
        &self.typed
    }

    /// The schema `search_path` resolved to at catalog `version`, if known.
    pub(crate) fn resolved_schema(&self, version: u64) -> Option<String> {
        match &*self.schema.lock() {
            Some((v, s)) if *v == version => Some(s.clone()),
            _ => None,
        }
    }

    pub(crate) fn remember_schema(&self, version: u64, schema: &str) {
        *self.schema.lock() = Some((version, schema.to_string()));
    }
}

pub fn default_settings() -> Settings {
    // Inserted one by one: each typed value is read from its text.
    let mut m = Settings::default();
    for (k, v) in [
        ("server_version", crate::SERVER_VERSION),
        ("server_version_num", "150000"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("datestyle", "ISO, MDY"),
        ("timezone", "UTC"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("search_path", "\"$user\", public"),
        ("transaction_isolation", "read committed"),
        ("default_transaction_isolation", "read committed"),
        ("max_identifier_length", "63"),
        ("application_name", ""),
        ("extra_float_digits", "1"),
        ("lc_collate", "C"),
        ("is_superuser", "on"),
        // Off: every shard scan is a plain table scan, all else DataFusion.
        ("tessera.pushdown", "on"),
        // Off: a read of several shards reads each at its own moment and
        // may see part of a distributed commit (shard_router::txn).
        ("tessera.consistent_reads", "on"),
        ("lock_timeout", "0"),
        // Off: a foreign key the shards cannot check is refused (0A000).
        ("tessera.unenforced_foreign_keys", "off"),
    ] {
        m.insert(k.to_string(), v.to_string());
    }
    use std::sync::atomic::Ordering::Relaxed;
    m.insert(
        "statement_timeout".into(),
        format_duration_ms(crate::DEFAULT_STATEMENT_TIMEOUT_MS.load(Relaxed)),
    );
    m.insert(
        "idle_in_transaction_session_timeout".into(),
        format_duration_ms(crate::DEFAULT_IDLE_TXN_TIMEOUT_MS.load(Relaxed)),
    );
    m
}

/// A time setting as PostgreSQL reads it: a number of milliseconds, or a
/// number with a unit (us, ms, s, min, h, d); 22023 otherwise.
pub fn parse_duration_ms(v: &str) -> Result<u64> {
    let t = v.trim();
    let bad = || Error::InvalidParameter {
        message: format!("invalid value for a time parameter: \"{v}\""),
    };
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let factor = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return Err(bad()),
    };
    let ms = (n * factor).round();
    if !(0.0..=i32::MAX as f64).contains(&ms) {
        return Err(Error::InvalidParameter {
            message: format!("{v} is outside the valid range for a time parameter"),
        });
    }
    Ok(ms as u64)
}

/// PostgreSQL's SHOW text of a time setting in ms: `0`, `1500ms`, `5s`,
/// `2min`, `3h`, `1d`.
pub fn format_duration_ms(ms: u64) -> String {
    if ms == 0 {
        return "0".into();
    }
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1000),
    ] {
        if ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

impl Session {
    /// `SET name = value`.
    pub(crate) fn set(&mut self, name: &str, value: &str) -> Result<crate::session::Output> {
        let key = canonical_key(name);
        if let Some(p) = crate::guc::find(&key) {
            self.may_set(p, &key, false)?;
        }
        self.assign(&key, value, Source::Session)?;
        self.publish_settings();
        Ok(crate::session::Output::Command {
            tag: "SET".into(),
            rows: None,
        })
    }

    /// A setting of the startup packet (`options`, `TimeZone`).
    pub(crate) fn set_at_start(&mut self, name: &str, value: &str) -> Result<()> {
        let key = canonical_key(name);
        if let Some(p) = crate::guc::find(&key) {
            self.may_set(p, &key, true)?;
        }
        self.assign(&key, value, Source::Client)
    }

    /// Whether the session may change parameter `p` now, as PostgreSQL's
    /// `set_config_option` decides from its context (55P02, 42501);
    /// `at_start`: from the startup packet, where `backend` ones may be.
    pub(crate) fn may_set(&self, p: &crate::guc::Param, key: &str, at_start: bool) -> Result<()> {
        let cant = |why: &str| {
            Err(Error::Sql {
                state: common::SqlState::CANT_CHANGE_RUNTIME_PARAM,
                message: format!("parameter \"{key}\" cannot be {why}"),
            })
        };
        match p.context {
            "internal" => cant("changed"),
            "postmaster" => cant("changed without restarting the server"),
            "sighup" => cant("changed now"),
            "backend" | "superuser-backend" if !at_start => cant("set after connection start"),
            "superuser" | "superuser-backend"
                if !crate::privileges::is_superuser(&self.router.catalog(), &self.user) =>
            {
                Err(Error::Sql {
                    state: common::SqlState::INSUFFICIENT_PRIVILEGE,
                    message: format!("permission denied to set parameter \"{key}\""),
                })
            }
            _ => Ok(()),
        }
    }

    /// Gives setting `key` (canonical) its value from `source`: a
    /// parameter PostgreSQL knows is read as PostgreSQL reads it (22023)
    /// and kept as SHOW prints it; every value that can reach a shard is
    /// checked against its allowed values.
    pub(crate) fn assign(&mut self, key: &str, value: &str, source: Source) -> Result<()> {
        let read;
        let value = match crate::guc::find(key) {
            Some(p) => {
                read = p.parse(value)?.show;
                read.as_str()
            }
            None => value,
        };
        if key == "transaction_isolation" {
            self.set_transaction_isolation(value)?;
        }
        // Values print in one style only: another would print them wrong.
        match key {
            "intervalstyle" if !value.eq_ignore_ascii_case("postgres") => {
                return Err(Error::unsupported(format!("IntervalStyle {value}")));
            }
            _ => {}
        }
        let value = &match key {
            "statement_timeout" | "idle_in_transaction_session_timeout" | "lock_timeout" => {
                format_duration_ms(parse_duration_ms(value)?)
            }
            _ => value.to_string(),
        };
        // Every value that can reach a shard is checked against its
        // allowed values and stored in canonical form (22023).
        let value = &if key == "transaction_isolation" || key == "default_transaction_isolation" {
            IsolationLevel::parse(value)?.name().to_string()
        } else {
            value.clone()
        };
        // The zone lives in the connection's task (`common::tz`), where
        // the encoders and parsers read it; SHOW prints its name.
        let value = &if key == "timezone" {
            let zone = common::tz::Zone::parse(value)?;
            common::tz::set_session_zone(zone);
            zone.name()
        } else if key == "datestyle" {
            // Date input reads the order in the connection's task too.
            let current = common::tz::session_date_order();
            let (canonical, order) = common::tz::parse_datestyle(value, current)?;
            common::tz::set_session_date_order(order);
            canonical
        } else {
            value.clone()
        };
        if key == "extra_float_digits" {
            // Checked in -15..=3 above; read by the encoders in the task.
            crate::pgtext::set_extra_float_digits(value.parse().unwrap_or(1));
        }
        if key == "tessera.pushdown" {
            // The DataFusion context carries the rule: rebuild it.
            self.df_ctx = None;
        }
        if key == "application_name" {
            if let Some(a) = &self.activity {
                a.set_application_name(value);
            }
        }
        self.settings.insert(key.to_string(), value.clone());
        self.settings.sources.insert(key.to_string(), source);
        Ok(())
    }

    /// `RESET name` (and `SET name TO DEFAULT`): the value the session
    /// started with; `RESET ALL` (`None`): every setting's.
    pub(crate) fn reset(
        &mut self,
        name: Option<&str>,
        tag: &str,
    ) -> Result<crate::session::Output> {
        let names: Vec<String> = match name {
            Some(n) => {
                let key = canonical_key(n);
                let known = crate::guc::find(&key);
                if !self.settings.contains_key(&key) && !key.contains('.') && known.is_none() {
                    return Err(Error::UnknownSetting {
                        name: n.to_string(),
                    });
                }
                if let Some(p) = known {
                    self.may_set(p, &key, false)?;
                }
                vec![key]
            }
            // PostgreSQL's RESET ALL leaves the transaction's own level.
            None => self
                .settings
                .keys()
                .filter(|k| k.as_str() != "transaction_isolation")
                .cloned()
                .collect(),
        };
        for key in names {
            match self.startup_settings.get(&key).cloned() {
                Some(v) => {
                    if self.settings.get(&key) != Some(&v) {
                        let source = self.startup_settings.source(&key);
                        self.assign(&key, &v, source)?;
                    }
                }
                // A parameter PostgreSQL knows goes back to its default.
                None if crate::guc::find(&key).is_some() => self.settings.remove(&key),
                // A placeholder (`myapp.name`) set in the session reads
                // as empty once reset, as in PostgreSQL.
                None => {
                    self.settings.insert(key, String::new());
                }
            }
        }
        self.publish_settings();
        Ok(crate::session::Output::Command {
            tag: tag.into(),
            rows: None,
        })
    }

    /// `SHOW name`.
    pub(crate) fn show(&self, name: &str) -> Result<crate::session::Output> {
        let key = match name.to_ascii_lowercase().as_str() {
            "time zone" => "timezone".to_string(),
            "transaction isolation level" => "transaction_isolation".to_string(),
            k => k.to_string(),
        };
        if key == "transaction_isolation" {
            let level = self
                .txn
                .as_ref()
                .and_then(|t| t.isolation.map(|l| l.name().to_string()))
                .or_else(|| self.settings.get("default_transaction_isolation").cloned())
                .unwrap_or_else(|| "read committed".into());
            return Ok(crate::session::Output::Rows(vec![vec![Datum::Text(
                level.to_ascii_lowercase(),
            )]]));
        }
        if key == "tessera.logical_plans" {
            let n = crate::plan::df::LOGICAL_PLANS.load(std::sync::atomic::Ordering::Relaxed);
            return Ok(crate::session::Output::Rows(vec![vec![Datum::Text(
                n.to_string(),
            )]]));
        }
        if key == "tessera.statement_cache" {
            let stats = self.statements.stats().to_string();
            return Ok(crate::session::Output::Rows(vec![vec![Datum::Text(stats)]]));
        }
        if key == "all" {
            return Err(Error::unsupported("SHOW ALL"));
        }
        let v = match (self.settings.get(&key), crate::guc::find(&key)) {
            (Some(v), _) => v.clone(),
            (None, Some(p)) => crate::guc::node_default(p).show,
            (None, None) => {
                return Err(Error::UnknownSetting {
                    name: name.to_string(),
                })
            }
        };
        Ok(crate::session::Output::Rows(vec![vec![Datum::Text(v)]]))
    }

    /// Starts the session's settings from ALTER SYSTEM's values (the
    /// catalog's, or for a parameter read at node start the values this
    /// node started with); a value this build cannot take is skipped.
    pub(crate) fn apply_system_settings(&mut self, catalog: &meta::Catalog) {
        let at_start = crate::NODE_START_SETTINGS.get();
        let now = catalog.system_settings.iter();
        let started = at_start.into_iter().flatten();
        let values = now
            .filter(|(k, _)| crate::guc::find(k).is_some_and(|p| !p.needs_restart()))
            .chain(started.filter(|(k, _)| crate::guc::find(k).is_some_and(|p| p.needs_restart())));
        let values: Vec<(String, String)> = values.map(|(k, v)| (k.clone(), v.clone())).collect();
        for (k, v) in values {
            if let Err(e) = self.assign(&k, &v, Source::File) {
                tracing::debug!("ALTER SYSTEM value {k}={v} not applied: {e}");
            }
        }
    }

    /// Makes the session's settings what `pg_settings` shows for it
    /// (`crate::activity`): each value, where it came from and what RESET
    /// goes back to.
    pub(crate) fn publish_settings(&self) {
        let Some(slot) = &self.activity else {
            return;
        };
        let rows = self
            .settings
            .values
            .iter()
            .map(|(k, v)| {
                let row = crate::activity::SettingRow {
                    value: v.clone(),
                    source: self.settings.source(k).name(),
                    reset: self.startup_settings.get(k).cloned(),
                };
                (k.clone(), row)
            })
            .collect();
        slot.set_settings(std::sync::Arc::new(rows));
    }
}

/// A setting's name as the session keeps it: lower case, `time zone` is
/// `timezone`.
fn canonical_key(name: &str) -> String {
    match name.to_ascii_lowercase().as_str() {
        "time zone" => "timezone".to_string(),
        k => k.to_string(),
    }
}

/// Where a setting's value came from, as `pg_settings.source` names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Source {
    #[default]
    Default,
    /// ALTER SYSTEM (PostgreSQL's `postgresql.auto.conf`).
    File,
    /// The startup packet.
    Client,
    Session,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::File => "configuration file",
            Source::Client => "client",
            Source::Session => "session",
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_settings_read_and_print_like_postgres() {
        use super::{format_duration_ms, parse_duration_ms};
        assert_eq!(parse_duration_ms("1500").unwrap(), 1500);
        assert_eq!(parse_duration_ms("5s").unwrap(), 5000);
        assert_eq!(parse_duration_ms(" 2min").unwrap(), 120_000);
        assert!(parse_duration_ms("5 parsecs").is_err());
        assert!(parse_duration_ms("-1").is_err());
        assert_eq!(format_duration_ms(5000), "5s");
        assert_eq!(format_duration_ms(1500), "1500ms");
        assert_eq!(format_duration_ms(0), "0");
    }

    #[test]
    fn typed_settings_follow_their_text() {
        use super::{default_settings, Typed};
        use std::time::Duration;
        let mut s = default_settings();
        let defaults = s.typed().clone();
        assert!(defaults.pushdown && defaults.consistent_reads);
        assert!(!defaults.unenforced_foreign_keys);
        assert_eq!(defaults.lock_timeout, None);
        s.insert("lock_timeout".into(), "1500ms".into());
        s.insert("statement_timeout".into(), "5s".into());
        s.insert("tessera.pushdown".into(), "OFF".into());
        s.insert("tessera.consistent_reads".into(), "off".into());
        s.insert("tessera.unenforced_foreign_keys".into(), "on".into());
        s.insert(
            "default_transaction_isolation".into(),
            "REPEATABLE READ".into(),
        );
        let t: &Typed = s.typed();
        assert_eq!(t.lock_timeout, Some(Duration::from_millis(1500)));
        assert_eq!(t.statement_timeout, Some(Duration::from_secs(5)));
        assert!(!t.pushdown && !t.consistent_reads && t.unenforced_foreign_keys);
        assert!(t.default_isolation.is_some());
        // 0 turns a timeout off; a copy keeps the values.
        s.insert("statement_timeout".into(), "0".into());
        assert_eq!(s.typed().statement_timeout, None);
        assert_eq!(s.clone().typed(), s.typed());
        // The schema search_path resolved to is forgotten when it is set.
        s.remember_schema(7, "app");
        assert_eq!(s.resolved_schema(7).as_deref(), Some("app"));
        assert_eq!(s.resolved_schema(8), None);
        s.insert("search_path".into(), "other".into());
        assert_eq!(s.resolved_schema(7), None);
    }
}
