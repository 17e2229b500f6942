//! The session time zone, PostgreSQL's `TimeZone` setting: what a
//! `timestamptz` prints in and what a `timestamptz` written without an
//! offset means. Values are stored and computed in UTC; only text in and
//! out depends on the zone.
//!
//! Each client connection runs in one task, which holds its zone in a
//! task-local cell ([`with_session_zone`]): the wire's encoders, the
//! parsers of literals, parameters and COPY, and the planner's checks all
//! read it there, without the zone threaded through every signature. Code
//! outside a connection's task (tests, tools) sees UTC.

use std::sync::{Arc, RwLock};

use chrono::{NaiveDateTime, Offset, TimeZone};

/// A time zone a session can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// An IANA zone (`Europe/Berlin`, `UTC`), with its daylight-saving
    /// rules and history.
    Named(chrono_tz::Tz),
    /// A fixed offset, seconds east of UTC (`SET TIME ZONE -7`).
    Fixed(i32),
}

impl Default for Zone {
    fn default() -> Zone {
        Zone::Named(chrono_tz::Tz::UTC)
    }
}

impl Zone {
    /// A `SET TIME ZONE` value: an IANA name (any case, as PostgreSQL
    /// reads them), `LOCAL`/`DEFAULT` (UTC, the server's zone), or a number
    /// of hours east of UTC (`-7`, `5.5`). An unknown name is 22023, as in
    /// PostgreSQL; a POSIX zone specification (`'+05:30'`, `'UTC+5'`,
    /// which count hours west) is refused (0A000).
    pub fn parse(value: &str) -> crate::Result<Zone> {
        let v = value.trim();
        if v.eq_ignore_ascii_case("local") || v.eq_ignore_ascii_case("default") {
            return Ok(Zone::default());
        }
        let invalid = || crate::Error::InvalidParameter {
            message: format!("invalid value for parameter \"TimeZone\": \"{value}\""),
        };
        if let Ok(h) = v.parse::<f64>() {
            let secs = (h * 3600.0).round();
            // PostgreSQL's limit for a numeric zone.
            if secs.abs() > 15.0 * 3600.0 || !secs.is_finite() {
                return Err(invalid());
            }
            return Ok(Zone::Fixed(secs as i32));
        }
        if let Some(z) = Zone::own_fixed_name(v) {
            return Ok(z);
        }
        match Zone::named(v) {
            Some(z) => Ok(z),
            None if v.contains(|c: char| c.is_ascii_digit() || c == '+' || c == '-') => {
                Err(crate::Error::unsupported(format!(
                    "time zone \"{value}\" (POSIX time zone specifications; use an IANA name or a number of hours)"
                )))
            }
            None => Err(invalid()),
        }
    }

    /// What [`Zone::name`] prints for a numeric zone (`<-07>+07`), read
    /// back: the setting is stored in that form and read again.
    fn own_fixed_name(v: &str) -> Option<Zone> {
        let (abbrev, posix) = v.strip_prefix('<')?.split_once('>')?;
        let west = |t: &str| -> Option<i32> {
            let (sign, rest) = match t.as_bytes().first()? {
                b'-' => (-1, &t[1..]),
                b'+' => (1, &t[1..]),
                _ => return None,
            };
            let mut parts = rest.split(':').map(|p| p.parse::<i32>().ok());
            let h = parts.next()??;
            let m = parts.next().unwrap_or(Some(0))?;
            let s = parts.next().unwrap_or(Some(0))?;
            Some(sign * (h * 3600 + m * 60 + s))
        };
        let east = -west(posix)?;
        (west(abbrev)? == east && east.abs() <= 15 * 3600).then_some(Zone::Fixed(east))
    }

    /// An IANA zone by name, in any case.
    pub fn named(v: &str) -> Option<Zone> {
        v.parse::<chrono_tz::Tz>()
            .ok()
            .or_else(|| {
                chrono_tz::TZ_VARIANTS
                    .iter()
                    .find(|tz| tz.name().eq_ignore_ascii_case(v))
                    .copied()
            })
            .map(Zone::Named)
    }

    /// The zone's name as `SHOW TimeZone` prints it: the IANA name, or
    /// PostgreSQL's POSIX form of a numeric zone (`-7` is `<-07>+07`).
    pub fn name(&self) -> String {
        match self {
            Zone::Named(tz) => tz.name().to_string(),
            Zone::Fixed(secs) => {
                format!("<{}>{}", offset_text(*secs), offset_text(-*secs))
            }
        }
    }

    pub fn is_utc(&self) -> bool {
        match self {
            Zone::Named(tz) => matches!(
                tz,
                chrono_tz::Tz::UTC
                    | chrono_tz::Tz::Etc__UTC
                    | chrono_tz::Tz::Etc__UCT
                    | chrono_tz::Tz::Etc__Universal
                    | chrono_tz::Tz::Etc__Zulu
                    | chrono_tz::Tz::Etc__GMT
                    | chrono_tz::Tz::Etc__GMT0
                    | chrono_tz::Tz::Etc__GMTPlus0
                    | chrono_tz::Tz::Etc__GMTMinus0
                    | chrono_tz::Tz::Etc__Greenwich
                    | chrono_tz::Tz::GMT
                    | chrono_tz::Tz::UCT
                    | chrono_tz::Tz::Universal
                    | chrono_tz::Tz::Zulu
            ),
            Zone::Fixed(s) => *s == 0,
        }
    }

    /// Seconds east of UTC at the instant `utc`.
    pub fn offset_at(&self, utc: &NaiveDateTime) -> i32 {
        match self {
            Zone::Named(tz) => tz.offset_from_utc_datetime(utc).fix().local_minus_utc(),
            Zone::Fixed(s) => *s,
        }
    }

    /// The UTC instant of local time `local` in this zone. As PostgreSQL:
    /// an ambiguous time (clocks set back) takes the offset in force after
    /// the change, a skipped one (clocks set forward) the offset in force
    /// before it.
    pub fn to_utc(&self, local: &NaiveDateTime) -> NaiveDateTime {
        match self {
            Zone::Fixed(s) => *local - chrono::Duration::seconds(*s as i64),
            Zone::Named(tz) => match tz.offset_from_local_datetime(local) {
                chrono::LocalResult::Single(o) => {
                    *local - chrono::Duration::seconds(o.fix().local_minus_utc() as i64)
                }
                chrono::LocalResult::Ambiguous(a, b) => {
                    let (ea, eb) = (a.fix().local_minus_utc(), b.fix().local_minus_utc());
                    // After the change: the smaller offset east.
                    *local - chrono::Duration::seconds(ea.min(eb) as i64)
                }
                chrono::LocalResult::None => {
                    // Before the change: the offset a day earlier (read
                    // as UTC, `local` less a few hours can already be past
                    // a change made at night east of Greenwich: Moscow's
                    // 2011-03-27 02:00 is 23:00 UTC the day before).
                    let before = *local - chrono::Duration::hours(24);
                    let o = tz.offset_from_utc_datetime(&before).fix().local_minus_utc();
                    *local - chrono::Duration::seconds(o as i64)
                }
            },
        }
    }

    /// The zone of an [`Zone::arrow_name`].
    pub fn from_arrow_name(s: &str) -> Option<Zone> {
        match s.as_bytes().first() {
            Some(b'+') | Some(b'-') => {
                let (h, m) = s[1..].split_once(':')?;
                let secs = h.parse::<i32>().ok()? * 3600 + m.parse::<i32>().ok()? * 60;
                Some(Zone::Fixed(if s.starts_with('-') { -secs } else { secs }))
            }
            _ => Zone::named(s),
        }
    }

    /// The zone as DataFusion and Arrow name one.
    pub fn arrow_name(&self) -> String {
        match self {
            Zone::Named(tz) => tz.name().to_string(),
            Zone::Fixed(s) => {
                let a = s.unsigned_abs();
                format!(
                    "{}{:02}:{:02}",
                    if *s < 0 { '-' } else { '+' },
                    a / 3600,
                    a % 3600 / 60
                )
            }
        }
    }
}

/// An offset as PostgreSQL prints it after a time: `+00`, `-07`, `+05:30`,
/// `+00:53:28`.
pub fn offset_text(secs: i32) -> String {
    let a = secs.unsigned_abs();
    let sign = if secs < 0 { '-' } else { '+' };
    let (h, m, s) = (a / 3600, a % 3600 / 60, a % 60);
    match (m, s) {
        (0, 0) => format!("{sign}{h:02}"),
        (_, 0) => format!("{sign}{h:02}:{m:02}"),
        _ => format!("{sign}{h:02}:{m:02}:{s:02}"),
    }
}

tokio::task_local! {
    static SESSION_ZONE: Arc<RwLock<Zone>>;
    static DATE_ORDER: Arc<RwLock<DateOrder>>;
}

/// Runs `f` (a client connection) with a session zone of its own, UTC at
/// first, and a date order of its own, MDY at first.
pub async fn with_session_zone<F: std::future::Future>(f: F) -> F::Output {
    let order = DATE_ORDER.scope(Arc::new(RwLock::new(DateOrder::default())), f);
    SESSION_ZONE
        .scope(Arc::new(RwLock::new(Zone::default())), order)
        .await
}

/// The order date input reads day, month and year in when the text does
/// not say (DateStyle's second part: `1/2/2024` is January 2 in MDY,
/// February 1 in DMY).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DateOrder {
    #[default]
    Mdy,
    Dmy,
    Ymd,
}

impl DateOrder {
    pub fn name(self) -> &'static str {
        match self {
            DateOrder::Mdy => "MDY",
            DateOrder::Dmy => "DMY",
            DateOrder::Ymd => "YMD",
        }
    }
}

/// A `SET DateStyle` value as PostgreSQL's `check_datestyle` reads it:
/// an output style and an order, in any case, separated by commas or
/// blanks, each optional (the order stays `current`'s when not given).
/// Output styles other than ISO are refused (0A000): values print in ISO
/// only. The canonical setting (`ISO, DMY`) and the order.
pub fn parse_datestyle(value: &str, current: DateOrder) -> crate::Result<(String, DateOrder)> {
    let invalid = |detail: String| crate::Error::InvalidParameter {
        message: format!("invalid value for parameter \"DateStyle\": \"{value}\" ({detail})"),
    };
    let mut order: Option<DateOrder> = None;
    let mut set = |o: DateOrder| match order {
        Some(prev) if prev != o => Err(invalid("conflicting \"datestyle\" specifications".into())),
        _ => {
            order = Some(o);
            Ok(())
        }
    };
    for word in value.split([',', ' ', '\t']).filter(|w| !w.is_empty()) {
        match word.to_ascii_lowercase().as_str() {
            "iso" => {}
            "ymd" => set(DateOrder::Ymd)?,
            "dmy" | "euro" | "european" => set(DateOrder::Dmy)?,
            "mdy" | "us" | "noneuro" | "noneuropean" => set(DateOrder::Mdy)?,
            "default" => set(DateOrder::Mdy)?,
            "sql" | "postgres" | "german" => {
                return Err(crate::Error::unsupported(format!("DateStyle {value}")))
            }
            other => return Err(invalid(format!("unrecognized key word: \"{other}\""))),
        }
    }
    let order = order.unwrap_or(current);
    Ok((format!("ISO, {}", order.name()), order))
}

/// The running connection's date order (MDY outside a connection).
pub fn session_date_order() -> DateOrder {
    DATE_ORDER
        .try_with(|o| o.read().map(|o| *o).unwrap_or_default())
        .unwrap_or_default()
}

/// Sets the running connection's date order.
pub fn set_session_date_order(order: DateOrder) {
    let _ = DATE_ORDER.try_with(|o| {
        if let Ok(mut w) = o.write() {
            *w = order;
        }
    });
}

/// What a compiled statement depends on of the session's date and time
/// settings (the plan cache's key): the zone and the date order.
pub fn session_input_key() -> String {
    let mut key = session_zone().arrow_name();
    key.push(' ');
    key.push_str(session_date_order().name());
    key
}

/// The running connection's time zone (UTC outside a connection).
pub fn session_zone() -> Zone {
    SESSION_ZONE
        .try_with(|z| z.read().map(|z| *z).unwrap_or_default())
        .unwrap_or_default()
}

/// Sets the running connection's time zone; `false` outside a connection.
pub fn set_session_zone(zone: Zone) -> bool {
    SESSION_ZONE
        .try_with(|z| {
            if let Ok(mut w) = z.write() {
                *w = zone;
            }
        })
        .is_ok()
}

/// A timestamptz as local time in the session's zone and that zone's
/// offset then.
pub fn to_session_local(utc: &NaiveDateTime) -> (NaiveDateTime, i32) {
    let z = session_zone();
    let off = z.offset_at(utc);
    (*utc + chrono::Duration::seconds(off as i64), off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_opt(h, mi, 0)
            .unwrap()
    }

    #[test]
    fn names_and_numbers() {
        assert_eq!(
            Zone::parse("europe/berlin").unwrap().name(),
            "Europe/Berlin"
        );
        assert_eq!(Zone::parse("-7").unwrap().name(), "<-07>+07");
        assert_eq!(Zone::parse("5.5").unwrap().name(), "<+05:30>-05:30");
        // The stored setting is the name, read again.
        for z in ["-7", "5.5", "-3.25", "0"] {
            let zone = Zone::parse(z).unwrap();
            assert_eq!(Zone::parse(&zone.name()).unwrap(), zone, "{z}");
        }
        assert!(Zone::parse("<+05>-06").is_err());
        assert_eq!(
            Zone::parse("Mars/Olympus").unwrap_err().sqlstate().code(),
            "22023"
        );
        assert_eq!(
            Zone::parse("+05:30").unwrap_err().sqlstate().code(),
            "0A000"
        );
        assert!(Zone::parse("UTC").unwrap().is_utc());
        assert!(!Zone::parse("Asia/Tokyo").unwrap().is_utc());
        assert_eq!(Zone::parse("-3.5").unwrap().arrow_name(), "-03:30");
        for z in ["-3.5", "5", "Europe/Berlin", "UTC"] {
            let z = Zone::parse(z).unwrap();
            assert_eq!(Zone::from_arrow_name(&z.arrow_name()), Some(z));
        }
    }

    #[test]
    fn datestyle_reads_as_postgresql() {
        let p = |v: &str| parse_datestyle(v, DateOrder::Mdy).map_err(|e| e.sqlstate().code());
        assert_eq!(p("dmy"), Ok(("ISO, DMY".into(), DateOrder::Dmy)));
        assert_eq!(p("ISO, YMD"), Ok(("ISO, YMD".into(), DateOrder::Ymd)));
        assert_eq!(p("iso"), Ok(("ISO, MDY".into(), DateOrder::Mdy)));
        assert_eq!(p("European"), Ok(("ISO, DMY".into(), DateOrder::Dmy)));
        assert_eq!(
            parse_datestyle("iso", DateOrder::Dmy).map(|v| v.1).ok(),
            Some(DateOrder::Dmy)
        );
        assert_eq!(p("sql, dmy"), Err("0A000"));
        assert_eq!(p("foo"), Err("22023"));
        assert_eq!(p("ymd, dmy"), Err("22023"));
    }

    #[test]
    fn offsets_follow_the_rules() {
        let berlin = Zone::parse("Europe/Berlin").unwrap();
        assert_eq!(berlin.offset_at(&at(2024, 1, 15, 12, 0)), 3600);
        assert_eq!(berlin.offset_at(&at(2024, 7, 15, 12, 0)), 7200);
        assert_eq!(offset_text(3600), "+01");
        assert_eq!(offset_text(-12600), "-03:30");
        assert_eq!(offset_text(3208), "+00:53:28");
        // 2024-03-31 02:30 does not exist in Berlin: read as +01.
        assert_eq!(
            berlin.to_utc(&at(2024, 3, 31, 2, 30)),
            at(2024, 3, 31, 1, 30)
        );
        // 2024-10-27 02:30 happens twice: read as the second (+01).
        assert_eq!(
            berlin.to_utc(&at(2024, 10, 27, 2, 30)),
            at(2024, 10, 27, 1, 30)
        );
        assert_eq!(berlin.to_utc(&at(2024, 7, 1, 12, 0)), at(2024, 7, 1, 10, 0));
        // Moscow skipped 02:00-03:00 on 2011-03-27 (+03 to +04), at 23:00
        // UTC the day before: read as +03, as PostgreSQL does.
        let moscow = Zone::parse("Europe/Moscow").unwrap();
        assert_eq!(
            moscow.to_utc(&at(2011, 3, 27, 2, 0)),
            at(2011, 3, 26, 23, 0)
        );
    }
}
