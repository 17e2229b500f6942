//! Session settings: their defaults, PostgreSQL's reading and printing of
//! time values, and SET / SHOW. Every value that can reach a shard is
//! checked against its allowed values here (22023).

use std::collections::BTreeMap;

use common::{Datum, Error, Result};
use shard_router::txn::IsolationLevel;

use super::Session;

pub fn default_settings() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
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
        let key = name.to_ascii_lowercase();
        let key = if key == "time zone" {
            "timezone".to_string()
        } else {
            key
        };
        if key == "transaction_isolation" {
            self.set_transaction_isolation(value)?;
        }
        let value = &match key.as_str() {
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
        } else {
            value.clone()
        };
        let value =
            &if key == "tessera.unenforced_foreign_keys" || key == "tessera.consistent_reads" {
                match value.to_ascii_lowercase().as_str() {
                    "on" | "true" | "1" | "yes" => "on".to_string(),
                    "off" | "false" | "0" | "no" => "off".to_string(),
                    _ => {
                        return Err(Error::InvalidParameter {
                            message: format!("parameter \"{key}\" requires a Boolean value"),
                        })
                    }
                }
            } else {
                value.clone()
            };
        if key == "tessera.pushdown" {
            if !matches!(value.to_ascii_lowercase().as_str(), "on" | "off") {
                return Err(Error::InvalidText {
                    ty: "boolean".into(),
                    value: value.clone(),
                });
            }
            // The DataFusion context carries the rule: rebuild it.
            self.df_ctx = None;
        }
        if key == "application_name" {
            crate::activity::set_application_name(self.pid, value);
        }
        self.settings.insert(key, value.clone());
        Ok(crate::session::Output::Command {
            tag: "SET".into(),
            rows: None,
        })
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
                let key = match n.to_ascii_lowercase().as_str() {
                    "time zone" => "timezone".to_string(),
                    k => k.to_string(),
                };
                if !self.settings.contains_key(&key) && !key.contains('.') {
                    return Err(Error::UnknownSetting {
                        name: n.to_string(),
                    });
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
                        self.set(&key, &v)?;
                    }
                }
                // A placeholder (`myapp.name`) set in the session reads
                // as empty once reset, as in PostgreSQL.
                None => {
                    self.settings.insert(key, String::new());
                }
            }
        }
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
        if key == "all" {
            return Err(Error::unsupported("SHOW ALL"));
        }
        let v = self
            .settings
            .get(&key)
            .cloned()
            .ok_or(Error::UnknownSetting {
                name: name.to_string(),
            })?;
        Ok(crate::session::Output::Rows(vec![vec![Datum::Text(v)]]))
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
}
