//! `timestamp with time zone` input (PostgreSQL's `timestamptz_in`): the
//! text is read as a timestamp is, and its zone, if it names one, gives
//! the offset: a number (`-08`, `+05:30`), an abbreviation of the `Default`
//! set (`PST`, `EDT`, `MSK` read as Moscow then read it), a zone name
//! (`America/New_York`, `PST8PDT`) at that local time, or, with none, the
//! session's zone (`DetermineTimeZoneOffset`).

use chrono::{Duration, NaiveDateTime, Offset, TimeZone};
use chrono_tz::OffsetName;

use super::{
    decode, Kind, PgTimestamp, ZoneSpec, MIN_TIMESTAMP, POSTGRES_EPOCH_JDATE, TIMESTAMP_BUF_LEN,
    UNIX_EPOCH_JDATE, USECS_PER_DAY, USECS_PER_SEC,
};
use crate::tz::Zone;
use crate::{Error, SqlState};

/// PostgreSQL's timestamptz input: `'<s>'::timestamptz` as microseconds
/// since 2000-01-01 00:00 UTC, with `today`, `now`... read against `now`
/// (the local time in `session`, as [`super::date_in_at`] takes it).
pub fn timestamptz_in_at(s: &str, now: Option<i64>, session: &Zone) -> Result<PgTimestamp, Error> {
    let s = s.split('\0').next().unwrap_or_default();
    let d = decode::decode(s, TIMESTAMP_BUF_LEN, now)
        .map_err(|e| e.into_error(s, "timestamp with time zone"))?;
    let out_of_range = || Error::Sql {
        state: SqlState("22008"),
        message: format!("timestamp out of range: \"{s}\""),
    };
    let local = match d.kind {
        Kind::Date => d.tm.to_timestamp().ok_or_else(out_of_range)?,
        Kind::Epoch => {
            return Ok(PgTimestamp::Micros(
                -((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) as i64) * USECS_PER_DAY,
            ))
        }
        Kind::Infinity => return Ok(PgTimestamp::Infinity),
        Kind::NegInfinity => return Ok(PgTimestamp::NegInfinity),
    };
    d.check_relative(s)?;
    // Zones are known for chrono's years (to 262,142), past the shards'.
    if naive(local).is_none() {
        return Err(Error::unsupported("dates after 9999-12-31"));
    }
    let west = match &d.zone {
        ZoneSpec::Offset(w) => i64::from(*w),
        ZoneSpec::Session => zone_west(session, local),
        ZoneSpec::Named(name) => zone_west(&named(name)?, local),
        ZoneSpec::Abbrev(abbr, zone) => abbrev_west(abbr, zone, local),
    };
    let utc = local
        .checked_add(west * USECS_PER_SEC)
        .filter(|u| (MIN_TIMESTAMP..super::END_TIMESTAMP).contains(u))
        .ok_or_else(out_of_range)?;
    Ok(PgTimestamp::Micros(utc))
}

/// 2000-01-01 00:00 plus `micros`, within chrono's years (a day short
/// of its ends, so a zone's offset cannot take it past them).
fn naive(micros: i64) -> Option<NaiveDateTime> {
    let epoch = chrono::NaiveDate::from_ymd_opt(2000, 1, 1)?.and_hms_opt(0, 0, 0)?;
    let t = epoch.checked_add_signed(Duration::microseconds(micros))?;
    t.checked_add_signed(Duration::days(2))?;
    t.checked_sub_signed(Duration::days(2))?;
    Some(t)
}

/// Seconds west of UTC of local time `local` (microseconds since
/// 2000-01-01) in `zone`, by PostgreSQL's rules for times skipped or
/// repeated by a change of offset ([`Zone::to_utc`]).
fn zone_west(zone: &Zone, local: i64) -> i64 {
    let Some(l) = naive(local) else {
        return 0;
    };
    (zone.to_utc(&l) - l).num_seconds()
}

/// The zone a name in the text denotes (lowercase, as the split leaves
/// it): an IANA zone, or a POSIX specification of a fixed offset
/// (`utc+3`, hours west); one with daylight-saving rules is refused.
fn named(name: &str) -> Result<Zone, Error> {
    if let Some(z) = Zone::named(name) {
        return Ok(z);
    }
    let at = name
        .find(|c: char| c.is_ascii_digit() || c == '+' || c == '-')
        .unwrap_or(name.len());
    let spec = &name[at..];
    let (sign, digits) = match spec.as_bytes().first() {
        Some(b'-') => (-1, &spec[1..]),
        Some(b'+') => (1, &spec[1..]),
        _ => (1, spec),
    };
    let mut parts = digits.split(':');
    let mut west = 0i64;
    for unit in [3600, 60, 1] {
        match parts.next() {
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                west += p.parse::<i64>().unwrap_or(0) * unit;
            }
            Some(_) => return Err(posix_rules(name)),
            None => break,
        }
    }
    if parts.next().is_some() || at == 0 || digits.is_empty() {
        return Err(posix_rules(name));
    }
    Ok(Zone::Fixed((-sign * west) as i32))
}

fn posix_rules(name: &str) -> Error {
    Error::unsupported(format!(
        "time zone \"{name}\" (POSIX time zone specifications with daylight-saving rules)"
    ))
}

/// Seconds west of UTC that abbreviation `abbr` meant in zone `zone` at
/// local time `local` (PostgreSQL's `DetermineTimeZoneAbbrevOffset`): see
/// [`abbrev_east_at`]; the zone's offset then if it never used it.
fn abbrev_west(abbr: &str, zone: &str, local: i64) -> i64 {
    let Some(Zone::Named(tz)) = Zone::named(zone) else {
        return 0;
    };
    let zone_offset = zone_west(&Zone::Named(tz), local);
    let Some(probe) = naive(local + zone_offset * USECS_PER_SEC) else {
        return zone_offset;
    };
    abbrev_east_at(abbr, zone, &probe).map_or(zone_offset, |e| -i64::from(e))
}

/// A zone abbreviation of PostgreSQL's `Default` set, as `AT TIME ZONE`
/// reads one before zone names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneAbbrev {
    /// A fixed offset, seconds east of UTC.
    Fixed(i32),
    /// Read in this IANA zone at the time ([`abbrev_east_at`]).
    Dynamic(&'static str),
}

/// `name` (any case) as an abbreviation of the `Default` set.
pub fn zone_abbreviation(name: &str) -> Option<ZoneAbbrev> {
    use super::zone_abbrevs::{abbrev, Abbrev};
    Some(match abbrev(&name.to_ascii_lowercase())? {
        Abbrev::Std(e) | Abbrev::Dst(e) => ZoneAbbrev::Fixed(e),
        Abbrev::Dynamic(z) => ZoneAbbrev::Dynamic(z),
    })
}

/// Seconds east of UTC that abbreviation `abbr` meant in zone `zone` at
/// the instant `utc` (PostgreSQL's `pg_interpret_timezone_abbrev`): the
/// latest offset of the zone's history written so, at or before that
/// instant, else the first after it; `None` if the zone never used it.
pub fn abbrev_east_at(abbr: &str, zone: &str, utc: &NaiveDateTime) -> Option<i32> {
    // Abbreviations a zone's data never uses (tzdata writes many as
    // numbers now: Yerevan's AMST is +04), found once: each lookup would
    // otherwise walk three centuries of days.
    static UNUSED: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
    let key = (abbr.to_ascii_lowercase(), zone.to_ascii_lowercase());
    if UNUSED.lock().is_ok_and(|u| u.contains(&key)) {
        return None;
    }
    let found = abbrev_scan(abbr, zone, utc);
    if found.is_none() {
        if let Ok(mut u) = UNUSED.lock() {
            if !u.contains(&key) && u.len() < 1024 {
                u.push(key);
            }
        }
    }
    found
}

fn abbrev_scan(abbr: &str, zone: &str, utc: &NaiveDateTime) -> Option<i32> {
    let Some(Zone::Named(tz)) = Zone::named(zone) else {
        return None;
    };
    let written = |t: NaiveDateTime| {
        let o = tz.offset_from_utc_datetime(&t);
        o.abbreviation()
            .filter(|a| a.eq_ignore_ascii_case(abbr))
            .map(|_| o.fix().local_minus_utc())
    };
    // Offsets change at most a few times a year: a day's steps find each,
    // over the years the zone data describes (past them, its rules
    // repeat): back from the instant, then on from it.
    let day = Duration::days(1);
    let year = |y: i32| chrono::NaiveDate::from_ymd_opt(y, 1, 1)?.and_hms_opt(0, 0, 0);
    let (start, end) = (year(1800)?, year(2100)?);
    let back = std::iter::successors(Some((*utc).min(end)), |t| Some(*t - day))
        .take_while(|t| *t >= start);
    let on = std::iter::successors(Some((*utc).max(start) + day), |t| Some(*t + day))
        .take_while(|t| *t < end);
    back.chain(on).find_map(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str, session: &Zone) -> String {
        match timestamptz_in_at(s, None, session) {
            Ok(PgTimestamp::Micros(m)) => naive(m).map(|t| t.to_string()).unwrap_or_default(),
            Ok(other) => format!("{other:?}"),
            Err(e) => e.sqlstate().code().to_string(),
        }
    }

    #[test]
    fn zones_in_the_text_give_the_offset() {
        let la = Zone::named("america/los_angeles").expect("zone");
        // Each checked against PostgreSQL 15.
        assert_eq!(utc("1997-02-10 17:32:01-08", &la), "1997-02-11 01:32:01");
        assert_eq!(
            utc("1997-02-10 17:32:01 PST", &Zone::default()),
            "1997-02-11 01:32:01"
        );
        assert_eq!(
            utc("1997-07-10 17:32:01 PDT", &Zone::default()),
            "1997-07-11 00:32:01"
        );
        assert_eq!(utc("1997-07-10 17:32:01", &la), "1997-07-11 00:32:01");
        assert_eq!(utc("2011-03-26 21:00:00 UTC", &la), "2011-03-26 21:00:00");
        assert_eq!(
            utc("2011-03-27 00:00:00 Europe/Moscow", &la),
            "2011-03-26 21:00:00"
        );
        assert_eq!(utc("2011-03-27 00:00:00 MSK", &la), "2011-03-26 21:00:00");
        assert_eq!(utc("2011-03-27 04:00:00 MSK", &la), "2011-03-27 00:00:00");
        assert_eq!(utc("2014-10-26 01:00:00 MSK", &la), "2014-10-25 22:00:00");
        // MSK while Moscow kept summer time (MSD): MSK's own offset.
        assert_eq!(utc("2010-07-01 12:00 MSK", &la), "2010-07-01 09:00:00");
        assert_eq!(utc("Feb 10 17:32:01 1997 EST", &la), "1997-02-10 22:32:01");
        assert_eq!(
            utc("1997-02-10 17:32:01 MET DST", &la),
            "1997-02-10 15:32:01"
        );
        assert_eq!(utc("epoch", &la), "1970-01-01 00:00:00");
        assert_eq!(utc("1997-02-10 17:32:01 Mars/Base", &la), "22023");
        assert_eq!(utc("1997-02-10 17:32:01 utc+3", &la), "1997-02-10 20:32:01");
        // An abbreviation the zone's data never writes: the zone's offset.
        assert_eq!(utc("2024-07-01 12:00 AMST", &la), "2024-07-01 08:00:00");
        assert_eq!(utc("1990-07-01 12:00 AMST", &la), "1990-07-01 07:00:00");
        // Past chrono's years: refused, never a panic.
        assert_eq!(utc("294276-12-30 00:00 Europe/Helsinki", &la), "0A000");
        assert_eq!(utc("294276-12-30 00:00 MSK", &la), "0A000");
        // Within chrono's: read (the shards' years are checked later).
        assert_eq!(utc("4713-01-01 00:00 BC", &la), "-4712-01-01 07:52:58");
        for s in [
            "294276-12-31 23:59:59 msk",
            "4714-11-24 00:00:00 bc america/new_york",
            "294277-01-01 00:00:00+15",
            "4714-11-23 00:00:00-15 bc",
            "j0 msk",
            "now utc+3",
            "99999999-01-01 pst8pdt",
        ] {
            let _ = timestamptz_in_at(s, Some(i64::MAX / 2), &la);
            let _ = timestamptz_in_at(s, Some(i64::MIN / 2), &la);
        }
    }
}
