//! PostgreSQL 15's configuration parameters as data (`pg15_settings.tsv`,
//! from its `pg_settings`) plus Tessera's own (`tessera.*`), and values
//! read as PostgreSQL's `guc.c` reads them: booleans by their prefixes,
//! integers and reals with memory and time units converted to the
//! parameter's base unit and rounded as PostgreSQL rounds, enums by name,
//! the same range checks and messages (22023). ALTER SYSTEM, SET, SHOW
//! and `pg_settings` all ask this table, so a name is known (42704) and a
//! value is valid or not the same way everywhere, and a value prints as
//! SHOW prints it (`128MB`, `100min`) whatever spelling it was given in.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use common::{Error, Result};

/// A parameter's type, as `pg_settings.vartype` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    Bool,
    Integer,
    Real,
    Enum,
    String,
}

impl VarType {
    fn parse(s: &str) -> VarType {
        match s {
            "bool" => VarType::Bool,
            "integer" => VarType::Integer,
            "real" => VarType::Real,
            "enum" => VarType::Enum,
            _ => VarType::String,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            VarType::Bool => "bool",
            VarType::Integer => "integer",
            VarType::Real => "real",
            VarType::Enum => "enum",
            VarType::String => "string",
        }
    }
}

/// One parameter: `pg_settings`' description of it.
#[derive(Debug)]
pub struct Param {
    /// As PostgreSQL spells it (`work_mem`, `DateStyle`, `TimeZone`).
    pub name: &'static str,
    pub vartype: VarType,
    /// `user`, `superuser`, `sighup`, `postmaster`, `internal`, `backend`,
    /// `superuser-backend`.
    pub context: &'static str,
    /// The base unit (`kB`, `8kB`, `ms`, `s`, ...), empty for none.
    pub unit: &'static str,
    pub min: &'static str,
    pub max: &'static str,
    pub enumvals: Vec<&'static str>,
    /// The built-in value, in base units (`pg_settings.boot_val`).
    pub boot: &'static str,
    pub category: &'static str,
    pub short_desc: &'static str,
}

/// A value as PostgreSQL keeps it: the text SHOW prints and the text of
/// `pg_settings.setting` (base units, no unit name).
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub show: String,
    pub setting: String,
}

/// Tessera's own parameters (session settings of `compute::session`).
const TESSERA: &[(&str, &str)] = &[
    (
        "tessera.consistent_reads",
        "Reads of several shards outside a transaction read one consistent cut.",
    ),
    (
        "tessera.pushdown",
        "Pushes filters, aggregates, sorts and joins into the shards' SQL.",
    ),
    (
        "tessera.unenforced_foreign_keys",
        "Accepts foreign keys the shards cannot check (recorded only).",
    ),
];

/// The parameters Tessera reads (the others are kept, shown and have no
/// effect): the session's time zone, schema search path, timeouts,
/// isolation level, application name and Tessera's own.
const EFFECTIVE: &[&str] = &[
    "application_name",
    "default_transaction_isolation",
    "idle_in_transaction_session_timeout",
    "lock_timeout",
    "search_path",
    "statement_timeout",
    "timezone",
    "tessera.consistent_reads",
    "tessera.pushdown",
    "tessera.unenforced_foreign_keys",
];

/// Parameters PostgreSQL refuses in ALTER SYSTEM besides the `internal`
/// ones (55P02): its files' places, the transaction's own modes, and
/// the hidden per-session ones.
const NOT_IN_FILE: &[&str] = &[
    "config_file",
    "data_directory",
    "transaction_deferrable",
    "transaction_isolation",
    "transaction_read_only",
    "role",
    "session_authorization",
    "seed",
];

/// Parameters whose value is a list (PostgreSQL's `GUC_LIST_INPUT`), and
/// those of them whose items are identifiers, quoted where they need it
/// (`GUC_LIST_QUOTE`).
const LIST_INPUT: &[&str] = &[
    "datestyle",
    "listen_addresses",
    "log_destination",
    "unix_socket_directories",
    "wal_consistency_checking",
];
const LIST_QUOTE: &[&str] = &[
    "local_preload_libraries",
    "search_path",
    "session_preload_libraries",
    "shared_preload_libraries",
    "temp_tablespaces",
];

/// Server-wide settings with Tessera's own values (SHOW and `pg_settings`
/// show these where a session has none).
pub const SERVER_SETTINGS: &[(&str, &str)] = &[
    ("server_version", crate::SERVER_VERSION),
    ("server_version_num", "150000"),
    ("server_encoding", "UTF8"),
    ("client_encoding", "UTF8"),
    ("lc_collate", "C.UTF-8"),
    ("lc_ctype", "C.UTF-8"),
    ("standard_conforming_strings", "on"),
    ("integer_datetimes", "on"),
    ("max_identifier_length", "63"),
    ("block_size", "8192"),
    ("default_transaction_isolation", "read committed"),
    ("max_index_keys", "32"),
];

static TABLE: LazyLock<BTreeMap<String, Param>> = LazyLock::new(|| {
    let mut m = BTreeMap::new();
    for line in include_str!("pg15_settings.tsv").lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&'static str> = line.split('\t').collect();
        let [name, vartype, context, unit, min, max, enumvals, boot, category, short_desc] = f[..]
        else {
            continue;
        };
        let p = Param {
            name,
            vartype: VarType::parse(vartype),
            context,
            unit,
            min,
            max,
            enumvals: enumvals.split(',').filter(|v| !v.is_empty()).collect(),
            boot,
            category,
            short_desc,
        };
        m.insert(name.to_ascii_lowercase(), p);
    }
    for (name, desc) in TESSERA {
        let boot = if name.ends_with("unenforced_foreign_keys") {
            "off"
        } else {
            "on"
        };
        let p = Param {
            name,
            vartype: VarType::Bool,
            context: "user",
            unit: "",
            min: "",
            max: "",
            enumvals: vec![],
            boot,
            category: "Tessera",
            short_desc: desc,
        };
        m.insert(name.to_string(), p);
    }
    m
});

/// The parameter of this name (any case), if PostgreSQL 15 or Tessera
/// has one.
pub fn find(name: &str) -> Option<&'static Param> {
    TABLE.get(&name.to_ascii_lowercase())
}

/// Every parameter, in `pg_settings`' order (by name, ignoring case).
pub fn all() -> impl Iterator<Item = &'static Param> {
    TABLE.values()
}

impl Param {
    /// Lower case: the key of the session's settings and of meta's rows.
    pub fn key(&self) -> String {
        self.name.to_ascii_lowercase()
    }

    /// Takes effect only when a node starts (PostgreSQL's `postmaster`
    /// context): ALTER SYSTEM's value waits for a restart.
    pub fn needs_restart(&self) -> bool {
        self.context == "postmaster"
    }

    /// Whether ALTER SYSTEM may not change it (55P02).
    pub fn fixed(&self) -> bool {
        self.context == "internal" || NOT_IN_FILE.contains(&self.key().as_str())
    }

    /// Whether Tessera reads it.
    pub fn has_effect(&self) -> bool {
        EFFECTIVE.contains(&self.key().as_str())
    }

    /// The built-in value.
    pub fn boot_value(&self) -> Value {
        self.parse(self.boot).unwrap_or_else(|_| Value {
            show: self.boot.to_string(),
            setting: self.boot.to_string(),
        })
    }

    /// The items of `SET name = a, b, ...` as one value, as PostgreSQL
    /// flattens them: a list parameter's joined with `, ` (identifiers
    /// quoted where they need it), any other's one item (22023 for more).
    pub fn flatten(&self, items: &[String]) -> Result<String> {
        let key = self.key();
        if LIST_QUOTE.contains(&key.as_str()) {
            return Ok(items
                .iter()
                .map(|i| quote_ident(i))
                .collect::<Vec<_>>()
                .join(", "));
        }
        if items.len() > 1 && !LIST_INPUT.contains(&key.as_str()) {
            return Err(Error::InvalidParameter {
                message: format!("SET {key} takes only one argument"),
            });
        }
        Ok(items.join(", "))
    }

    /// `text` read as PostgreSQL reads a value of this parameter; 22023
    /// with PostgreSQL's message when it does not read or is out of range.
    pub fn parse(&self, text: &str) -> Result<Value> {
        let invalid = || Error::InvalidParameter {
            message: format!("invalid value for parameter \"{}\": \"{text}\"", self.name),
        };
        match self.vartype {
            VarType::Bool => {
                let b = parse_bool(text).ok_or_else(|| Error::InvalidParameter {
                    message: format!("parameter \"{}\" requires a Boolean value", self.name),
                })?;
                let v = if b { "on" } else { "off" };
                Ok(same(v))
            }
            VarType::Integer => {
                let v = self.number(text).ok_or_else(invalid)?.round_ties_even();
                if !(i32::MIN as f64..=i32::MAX as f64).contains(&v) {
                    return Err(invalid());
                }
                let v = v as i64;
                let (min, max) = (self.min.parse().unwrap_or(0), self.max.parse().unwrap_or(0));
                if v < min || v > max {
                    return Err(self.out_of_range(&v.to_string(), self.min, self.max));
                }
                Ok(Value {
                    show: self.show_int(v),
                    setting: v.to_string(),
                })
            }
            VarType::Real => {
                let v = self
                    .number(text)
                    .filter(|v| !v.is_nan())
                    .ok_or_else(invalid)?;
                let (min, max) = (real(self.min), real(self.max));
                if v < min || v > max {
                    return Err(self.out_of_range(&fmt_g(v), &fmt_g(min), &fmt_g(max)));
                }
                Ok(Value {
                    show: self.show_real(v),
                    setting: fmt_g(v),
                })
            }
            VarType::Enum => self.parse_enum(text).map(same).ok_or_else(invalid),
            VarType::String => {
                // The one check hook Tessera has: the zone must be known.
                if self.name == "TimeZone" {
                    return common::tz::Zone::parse(text).map(|z| same(&z.name()));
                }
                Ok(same(text))
            }
        }
    }

    fn out_of_range(&self, v: &str, min: &str, max: &str) -> Error {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        Error::InvalidParameter {
            message: format!(
                "{v}{unit} is outside the valid range for parameter \"{}\" ({min} .. {max})",
                self.name
            ),
        }
    }

    /// An enum's value by name (any case); the boolean spellings for an
    /// enum that has `on` and `off` (PostgreSQL's hidden aliases).
    fn parse_enum(&self, text: &str) -> Option<&'static str> {
        if let Some(v) = self.enumvals.iter().find(|v| v.eq_ignore_ascii_case(text)) {
            return Some(v);
        }
        let has = |s: &str| self.enumvals.contains(&s);
        match parse_bool(text) {
            Some(true) if has("on") => Some("on"),
            Some(false) if has("off") => Some("off"),
            _ => None,
        }
    }

    /// A number with an optional unit, in the base unit (PostgreSQL's
    /// `parse_int`/`parse_real` before rounding).
    fn number(&self, text: &str) -> Option<f64> {
        let (v, rest) = leading_number(text, self.vartype == VarType::Integer)?;
        let unit = rest.trim_matches(|c: char| c.is_ascii_whitespace());
        if unit.is_empty() {
            return Some(v);
        }
        let units = units_of(self.unit)?;
        let i = units.iter().position(|(name, _)| *name == unit)?;
        let mut base = v * units[i].1;
        // A fraction of a unit is rounded to the next smaller unit.
        if let Some((_, smaller)) = units.get(i + 1) {
            base = (base / smaller).round_ties_even() * smaller;
        }
        Some(base)
    }

    /// An integer as SHOW prints it: in the largest unit that divides it.
    fn show_int(&self, v: i64) -> String {
        let Some(units) = units_of(self.unit).filter(|_| v > 0) else {
            return v.to_string();
        };
        for (name, m) in units {
            if m <= 1.0 || v % (m as i64) == 0 {
                return format!("{}{name}", (v as f64 / m).round_ties_even() as i64);
            }
        }
        v.to_string()
    }

    /// A real as SHOW prints it: in the first unit (largest first) that
    /// makes it whole, else the smallest.
    fn show_real(&self, v: f64) -> String {
        let Some(units) = units_of(self.unit).filter(|_| v > 0.0) else {
            return fmt_g(v);
        };
        let mut out = (v, "");
        for (name, m) in units {
            out = (v / m, name);
            if out.0 > 0.0 && (out.0.round_ties_even() / out.0 - 1.0).abs() <= 1e-8 {
                break;
            }
        }
        format!("{}{}", fmt_g(out.0), out.1)
    }
}

/// An identifier as PostgreSQL's `quote_identifier` writes it: bare when
/// it is lower-case letters, digits and underscores not starting with a
/// digit, double-quoted otherwise.
fn quote_ident(s: &str) -> String {
    let bare = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if bare {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// A parameter's value on this node when neither the session nor ALTER
/// SYSTEM gave it one: Tessera's where it has its own (the node's
/// `max_connections`, [`SERVER_SETTINGS`]), else PostgreSQL's
/// built-in one.
pub fn node_default(p: &Param) -> Value {
    if p.name == "max_connections" {
        let n = crate::MAX_CONNECTIONS.load(std::sync::atomic::Ordering::Relaxed);
        return same(&n.to_string());
    }
    match SERVER_SETTINGS.iter().find(|(k, _)| *k == p.name) {
        Some((_, v)) => same(v),
        None => p.boot_value(),
    }
}

fn same(v: &str) -> Value {
    Value {
        show: v.to_string(),
        setting: v.to_string(),
    }
}

fn real(s: &str) -> f64 {
    s.parse().unwrap_or(0.0)
}

/// PostgreSQL's `parse_bool`: `true`/`false`/`yes`/`no` and their
/// prefixes, `on`/`off` (`of` at least), `1`/`0`, any case, no spaces.
pub fn parse_bool(s: &str) -> Option<bool> {
    let l = s.to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| l.len() >= min && word.starts_with(l.as_str());
    if prefix_of("true", 1) || prefix_of("yes", 1) || l == "on" || l == "1" {
        Some(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || l == "0" {
        Some(false)
    } else {
        None
    }
}

/// The number at the start of `text` (after spaces) and what follows it.
/// Integers read as C's `strtol` with base 0 (`0x1F` hex, `017` octal)
/// unless a fraction or exponent follows, then as `strtod`.
fn leading_number(text: &str, integer: bool) -> Option<(f64, &str)> {
    let t = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    if integer {
        let (radix, digits) =
            if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                (16, h)
            } else if body.len() > 1 && body.starts_with('0') {
                (8, &body[1..])
            } else {
                (10, body)
            };
        let end = digits
            .find(|c: char| !c.is_digit(radix))
            .unwrap_or(digits.len());
        let rest = &digits[end..];
        if end > 0 && !(radix == 10 && rest.starts_with(['.', 'e', 'E'])) {
            let v = i64::from_str_radix(&digits[..end], radix).ok()? as f64;
            return Some((sign * v, rest));
        }
    }
    // strtod: digits, an optional fraction, an optional exponent.
    let b = body.as_bytes();
    let mut i = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut seen = i;
    if b.get(i) == Some(&b'.') {
        let frac = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        seen += frac;
        i += 1 + frac;
    }
    if seen == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp > 0 {
            i = j + exp;
        }
    }
    let v: f64 = body[..i].parse().ok()?;
    Some((sign * v, &body[i..]))
}

/// The units a value of base unit `base` may be given in, largest first,
/// each with its size in `base` (PostgreSQL's conversion tables).
fn units_of(base: &str) -> Option<Vec<(&'static str, f64)>> {
    const MEMORY: &[(&str, f64)] = &[
        ("TB", 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("GB", 1024.0 * 1024.0 * 1024.0),
        ("MB", 1024.0 * 1024.0),
        ("kB", 1024.0),
        ("B", 1.0),
    ];
    const TIME: &[(&str, f64)] = &[
        ("d", 86_400_000.0),
        ("h", 3_600_000.0),
        ("min", 60_000.0),
        ("s", 1000.0),
        ("ms", 1.0),
        ("us", 0.001),
    ];
    let (table, size) = match base {
        "B" => (MEMORY, 1.0),
        "kB" => (MEMORY, 1024.0),
        "MB" => (MEMORY, 1024.0 * 1024.0),
        "8kB" => (MEMORY, 8192.0),
        "ms" => (TIME, 1.0),
        "s" => (TIME, 1000.0),
        "min" => (TIME, 60_000.0),
        _ => return None,
    };
    Some(table.iter().map(|(n, s)| (*n, s / size)).collect())
}

/// C's `%g`: six significant digits, exponent form below 1e-4 and from
/// 1e6, trailing zeros dropped.
pub fn fmt_g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim(mantissa.to_string()),
            exp.unsigned_abs()
        )
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::{find, fmt_g, parse_bool};

    fn show(name: &str, v: &str) -> String {
        find(name).unwrap().parse(v).unwrap().show
    }

    fn setting(name: &str, v: &str) -> String {
        find(name).unwrap().parse(v).unwrap().setting
    }

    fn error(name: &str, v: &str) -> String {
        find(name).unwrap().parse(v).unwrap_err().to_string()
    }

    #[test]
    fn the_table_has_postgresql_and_tessera_parameters() {
        assert_eq!(find("WORK_MEM").unwrap().name, "work_mem");
        assert_eq!(find("timezone").unwrap().name, "TimeZone");
        assert!(find("tessera.pushdown").is_some());
        assert!(find("no_such_thing").is_none());
        assert!(find("shared_buffers").unwrap().needs_restart());
        assert!(!find("work_mem").unwrap().needs_restart());
        assert!(find("server_version").unwrap().fixed());
        assert!(find("transaction_isolation").unwrap().fixed());
        assert!(!find("autovacuum").unwrap().fixed());
        assert!(find("statement_timeout").unwrap().has_effect());
        assert!(!find("work_mem").unwrap().has_effect());
        assert!(super::all().count() > 350);
    }

    /// Each case checked against PostgreSQL 15 (`SET`, then SHOW and
    /// `pg_settings.setting`).
    #[test]
    fn values_read_and_print_as_postgresql_prints_them() {
        assert_eq!(show("work_mem", "128MB"), "128MB");
        assert_eq!(setting("work_mem", "128MB"), "131072");
        assert_eq!(show("work_mem", "131072"), "128MB");
        assert_eq!(show("work_mem", "1.5MB"), "1536kB");
        assert_eq!(show("work_mem", " 64 "), "64kB");
        assert_eq!(show("work_mem", "0x100"), "256kB");
        assert_eq!(show("work_mem", "1e3"), "1000kB");
        assert_eq!(show("work_mem", "10 MB"), "10MB");
        assert_eq!(show("statement_timeout", "6000000"), "100min");
        assert_eq!(show("lock_timeout", "1200000"), "20min");
        assert_eq!(show("statement_timeout", "0.5"), "0");
        assert_eq!(show("statement_timeout", "1.5s"), "1500ms");
        assert_eq!(show("statement_timeout", "2500us"), "2ms");
        assert_eq!(show("statement_timeout", "1 d"), "1d");
        assert_eq!(show("log_min_duration_statement", "-1"), "-1");
        assert_eq!(show("effective_cache_size", "100kB"), "96kB");
        assert_eq!(setting("effective_cache_size", "100kB"), "12");
        assert_eq!(show("effective_cache_size", "1"), "8kB");
        assert_eq!(show("shared_buffers", "16384"), "128MB");
        assert_eq!(show("vacuum_cost_delay", "0.5ms"), "500us");
        assert_eq!(setting("vacuum_cost_delay", "0.5ms"), "0.5");
        assert_eq!(show("vacuum_cost_delay", "2000us"), "2ms");
        assert_eq!(show("random_page_cost", "1e20"), "1e+20");
        assert_eq!(show("random_page_cost", "1.23456789"), "1.23457");
        assert_eq!(show("random_page_cost", " 2 "), "2");
        assert_eq!(show("autovacuum", "false"), "off");
        assert_eq!(show("enable_seqscan", "of"), "off");
        assert_eq!(show("enable_seqscan", "YES"), "on");
        assert_eq!(show("client_min_messages", "WARNING"), "warning");
        assert_eq!(show("synchronous_commit", "true"), "on");
        assert_eq!(show("search_path", "a, \"b c\""), "a, \"b c\"");
        assert_eq!(show("autovacuum_naptime", "120"), "2min");
    }

    #[test]
    fn bad_values_get_postgresql_messages() {
        assert_eq!(
            error("work_mem", "abc"),
            "invalid value for parameter \"work_mem\": \"abc\""
        );
        assert_eq!(
            error("work_mem", "1kB"),
            "1 kB is outside the valid range for parameter \"work_mem\" (64 .. 2147483647)"
        );
        assert_eq!(
            error("work_mem", "10ms"),
            "invalid value for parameter \"work_mem\": \"10ms\""
        );
        assert_eq!(
            error("work_mem", "1kb"),
            "invalid value for parameter \"work_mem\": \"1kb\""
        );
        assert_eq!(
            error("work_mem", "99999999TB"),
            "invalid value for parameter \"work_mem\": \"99999999TB\""
        );
        assert_eq!(
            error("statement_timeout", "-5"),
            "-5 ms is outside the valid range for parameter \"statement_timeout\" (0 .. 2147483647)"
        );
        assert_eq!(
            error("vacuum_cost_delay", "1s"),
            "1000 ms is outside the valid range for parameter \"vacuum_cost_delay\" (0 .. 100)"
        );
        assert_eq!(
            error("random_page_cost", "-1"),
            "-1 is outside the valid range for parameter \"random_page_cost\" (0 .. 1.79769e+308)"
        );
        assert_eq!(
            error("geqo_selection_bias", "1"),
            "1 is outside the valid range for parameter \"geqo_selection_bias\" (1.5 .. 2)"
        );
        assert_eq!(
            error("autovacuum", "maybe"),
            "parameter \"autovacuum\" requires a Boolean value"
        );
        assert_eq!(
            error("enable_seqscan", " on"),
            "parameter \"enable_seqscan\" requires a Boolean value"
        );
        assert_eq!(
            error("client_min_messages", " warning"),
            "invalid value for parameter \"client_min_messages\": \" warning\""
        );
        assert_eq!(
            error("random_page_cost", "x"),
            "invalid value for parameter \"random_page_cost\": \"x\""
        );
        assert_eq!(
            error("TimeZone", "Nowhere/X"),
            "invalid value for parameter \"TimeZone\": \"Nowhere/X\""
        );
    }

    #[test]
    fn list_values_flatten_as_postgresql_flattens_them() {
        let items = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let sp = find("search_path").unwrap();
        assert_eq!(
            sp.flatten(&items(&["a, b", "$user", "public", "foo"]))
                .unwrap(),
            "\"a, b\", \"$user\", public, foo"
        );
        let ds = find("DateStyle").unwrap();
        assert_eq!(ds.flatten(&items(&["iso", "dmy"])).unwrap(), "iso, dmy");
        let wm = find("work_mem").unwrap();
        assert_eq!(wm.flatten(&items(&["128MB"])).unwrap(), "128MB");
        assert_eq!(
            wm.flatten(&items(&["1", "2"])).unwrap_err().to_string(),
            "SET work_mem takes only one argument"
        );
    }

    #[test]
    fn booleans_and_g_format_follow_c() {
        assert_eq!(parse_bool("t"), Some(true));
        assert_eq!(parse_bool("o"), None);
        assert_eq!(parse_bool("OFF"), Some(false));
        assert_eq!(parse_bool("n"), Some(false));
        assert_eq!(parse_bool("2"), None);
        assert_eq!(fmt_g(1.79769e308), "1.79769e+308");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(4.0), "4");
        assert_eq!(fmt_g(123456.0), "123456");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_g(0.0001), "0.0001");
        assert_eq!(fmt_g(0.00001), "1e-05");
        assert_eq!(fmt_g(-1.0), "-1");
    }
}
