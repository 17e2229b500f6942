//! Reading one field of date/time text: a date with separators
//! (`DecodeDate`), a lone number (`DecodeNumber`), run-together digits
//! (`DecodeNumberField`), a time with colons (`DecodeTime`) and a numeric
//! zone (`DecodeTimezone`). Each returns the mask of the parts it set,
//! which the caller checks against the parts already set.

use super::keywords::{date_keyword, Word};
use super::mask::*;
use super::{DtErr, Tm};
use crate::tz::DateOrder;

/// C's `strtol` over `s`: the value (saturated to `i64`), where the
/// number ended (0 when there were no digits) and whether it overflowed
/// a `long`.
pub fn strtol(s: &[u8]) -> (i64, usize, bool) {
    let mut i = s
        .iter()
        .take_while(|&&c| super::tokens::is_c_space(c))
        .count();
    let negative = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let start = i;
    let mut value: i64 = 0;
    let mut overflow = false;
    while let Some(d) = s.get(i).filter(|c| c.is_ascii_digit()) {
        let digit = i64::from(d - b'0');
        let next = value.checked_mul(10).and_then(|v| {
            if negative {
                v.checked_sub(digit)
            } else {
                v.checked_add(digit)
            }
        });
        match next {
            Some(v) => value = v,
            None => {
                overflow = true;
                value = if negative { i64::MIN } else { i64::MAX };
            }
        }
        i += 1;
    }
    if i == start {
        return (0, 0, false);
    }
    (value, i, overflow)
}

/// PostgreSQL's `strtoint`: `strtol` that also overflows outside `i32`.
pub fn strtoint(s: &[u8]) -> (i32, usize, bool) {
    let (v, end, overflow) = strtol(s);
    (v as i32, end, overflow || i32::try_from(v).is_err())
}

/// C's `atoi` (glibc: `strtol` cast to `int`).
fn atoi(s: &[u8]) -> i32 {
    strtol(s).0 as i32
}

/// The value of a fraction `.ddd` (PostgreSQL's `ParseFraction`): it must
/// be all of `s`.
pub(super) fn parse_fraction(s: &[u8]) -> Result<f64, DtErr> {
    fraction(s).ok_or(DtErr::BadFormat)
}

/// [`parse_fraction`] for other readers (intervals): `None` when `s` is
/// not `.` and digits.
pub fn fraction(s: &[u8]) -> Option<f64> {
    let digits = s[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if s.len() == 1 {
        return Some(0.0);
    }
    if digits == 0 || 1 + digits != s.len() {
        return None;
    }
    Some(leading_fraction(s))
}

/// The fraction at the start of `s` (a `.` and digits), as `strtod` reads
/// it; 0 without digits.
fn leading_fraction(s: &[u8]) -> f64 {
    let digits = s[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    let text = format!("0.{}", String::from_utf8_lossy(&s[1..1 + digits]));
    text.parse().unwrap_or(0.0)
}

/// A fraction of a second as microseconds, rounded half to even.
pub(super) fn fraction_micros(frac: f64) -> i32 {
    (frac * 1_000_000.0).round_ties_even() as i32
}

/// A date with separators (`1999-01-08`, `jan-08-1999`, `1999.008`):
/// the text fields are month names, the numbers are read in turn with
/// [`decode_number`].
pub(super) fn decode_date(
    s: &[u8],
    mut fmask: u32,
    tm: &mut Tm,
    is2digits: &mut bool,
) -> Result<u32, DtErr> {
    let mut parts: Vec<&[u8]> = vec![];
    let mut i = 0;
    while i < s.len() && parts.len() < 25 {
        while i < s.len() && !s[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if i == s.len() {
            return Err(DtErr::BadFormat);
        }
        let start = i;
        let digit = s[i].is_ascii_digit();
        while i < s.len()
            && (if digit {
                s[i].is_ascii_digit()
            } else {
                s[i].is_ascii_alphabetic()
            })
        {
            i += 1;
        }
        parts.push(&s[start..i]);
        // PostgreSQL ends the part by overwriting the character after
        // it, whatever it was.
        if i < s.len() {
            i += 1;
        }
    }
    let mut tmask = 0;
    let mut have_text_month = false;
    let mut numbers = vec![];
    for part in parts {
        if !part[0].is_ascii_alphabetic() {
            numbers.push(part);
            continue;
        }
        let word = String::from_utf8_lossy(part);
        let dmask = match date_keyword(&word) {
            // PostgreSQL skips an ignorable word here without marking it
            // read, so it is then refused as a number.
            Some(Word::Ignore) => {
                numbers.push(part);
                continue;
            }
            Some(Word::Month(m)) => {
                tm.mon = m;
                have_text_month = true;
                MONTH
            }
            _ => return Err(DtErr::BadFormat),
        };
        if fmask & dmask != 0 {
            return Err(DtErr::BadFormat);
        }
        fmask |= dmask;
        tmask |= dmask;
    }
    for part in numbers {
        let mut fsec = 0;
        let dmask = decode_number(part, have_text_month, fmask, tm, &mut fsec, is2digits)?;
        if fmask & dmask != 0 {
            return Err(DtErr::BadFormat);
        }
        fmask |= dmask;
        tmask |= dmask;
    }
    if fmask & !(DOY | TZ) != DATE {
        return Err(DtErr::BadFormat);
    }
    Ok(tmask)
}

/// A lone number, placed by what the text has given so far and the
/// session's date order (PostgreSQL's `DecodeNumber`).
pub(super) fn decode_number(
    s: &[u8],
    have_text_month: bool,
    fmask: u32,
    tm: &mut Tm,
    fsec: &mut i32,
    is2digits: &mut bool,
) -> Result<u32, DtErr> {
    let flen = s.len();
    let (val, end, overflow) = strtoint(s);
    if overflow {
        return Err(DtErr::FieldOverflow);
    }
    if end == 0 {
        return Err(DtErr::BadFormat);
    }
    if s.get(end) == Some(&b'.') {
        if end > 2 {
            return decode_number_field(s, fmask | DATE, tm, fsec, is2digits);
        }
        *fsec = fraction_micros(parse_fraction(&s[end..])?);
    } else if end != s.len() {
        return Err(DtErr::BadFormat);
    }
    if flen == 3 && fmask & DATE == YEAR && (1..=366).contains(&val) {
        tm.yday = val;
        return Ok(DOY | MONTH | DAY);
    }
    let order = crate::tz::session_date_order();
    let tmask = match fmask & DATE {
        0 if flen >= 3 || order == DateOrder::Ymd => {
            tm.year = val;
            YEAR
        }
        0 if order == DateOrder::Dmy => {
            tm.mday = val;
            DAY
        }
        0 => {
            tm.mon = val;
            MONTH
        }
        YEAR => {
            tm.mon = val;
            MONTH
        }
        MONTH if have_text_month && (flen >= 3 || order == DateOrder::Ymd) => {
            tm.year = val;
            YEAR
        }
        MONTH => {
            tm.mday = val;
            DAY
        }
        m if m == YEAR | MONTH && have_text_month && flen >= 3 && *is2digits => {
            // The first number was the day after all (DD-MON-YYYY).
            tm.mday = tm.year;
            tm.year = val;
            *is2digits = false;
            DAY
        }
        m if m == YEAR | MONTH => {
            tm.mday = val;
            DAY
        }
        DAY => {
            tm.mon = val;
            MONTH
        }
        m if m == MONTH | DAY => {
            tm.year = val;
            YEAR
        }
        DATE => return decode_number_field(s, fmask, tm, fsec, is2digits),
        _ => return Err(DtErr::BadFormat),
    };
    if tmask == YEAR {
        *is2digits = flen <= 2;
    }
    Ok(tmask)
}

/// Run-together digits: `yyyymmdd`, `yymmdd`, `hhmmss`, `hhmm`, perhaps
/// with a fraction of a second (PostgreSQL's `DecodeNumberField`).
pub(super) fn decode_number_field(
    s: &[u8],
    fmask: u32,
    tm: &mut Tm,
    fsec: &mut i32,
    is2digits: &mut bool,
) -> Result<u32, DtErr> {
    let mut len = s.len();
    if let Some(dot) = s.iter().position(|&c| c == b'.') {
        *fsec = if dot + 1 == s.len() {
            0
        } else {
            fraction_micros(leading_fraction(&s[dot..]))
        };
        len = dot;
    } else if fmask & DATE != DATE && len >= 6 {
        tm.mday = atoi(&s[len - 2..len]);
        tm.mon = atoi(&s[len - 4..len - 2]);
        tm.year = atoi(&s[..len - 4]);
        if len - 4 == 2 {
            *is2digits = true;
        }
        return Ok(DATE);
    }
    if fmask & TIME != TIME {
        if len == 6 {
            tm.sec = atoi(&s[4..6]);
            tm.min = atoi(&s[2..4]);
            tm.hour = atoi(&s[..2]);
            return Ok(TIME);
        }
        if len == 4 {
            tm.sec = 0;
            tm.min = atoi(&s[2..4]);
            tm.hour = atoi(&s[..2]);
            return Ok(TIME);
        }
    }
    Err(DtErr::BadFormat)
}

/// A time with colons: `hh:mm`, `hh:mm:ss[.f]`, or `mm:ss.f`
/// (PostgreSQL's `DecodeTime`).
pub(super) fn decode_time(s: &[u8], tm: &mut Tm) -> Result<u32, DtErr> {
    let (hour, end, overflow) = strtol(s);
    if overflow {
        return Err(DtErr::FieldOverflow);
    }
    if s.get(end) != Some(&b':') {
        return Err(DtErr::BadFormat);
    }
    let mut at = end + 1;
    let (min, end, overflow) = strtoint(&s[at..]);
    if overflow {
        return Err(DtErr::FieldOverflow);
    }
    at += end;
    let (mut hour, mut min, mut sec, mut fsec) = (hour, min, 0, 0);
    match s.get(at) {
        None => {}
        Some(b'.') => {
            fsec = fraction_micros(parse_fraction(&s[at..])?);
            if i32::try_from(hour).is_err() {
                return Err(DtErr::FieldOverflow);
            }
            sec = min;
            min = hour as i32;
            hour = 0;
        }
        Some(b':') => {
            at += 1;
            let (v, end, overflow) = strtoint(&s[at..]);
            if overflow {
                return Err(DtErr::FieldOverflow);
            }
            sec = v;
            at += end;
            match s.get(at) {
                None => {}
                Some(b'.') => fsec = fraction_micros(parse_fraction(&s[at..])?),
                Some(_) => return Err(DtErr::BadFormat),
            }
        }
        Some(_) => return Err(DtErr::BadFormat),
    }
    if hour < 0
        || !(0..60).contains(&min)
        || !(0..=60).contains(&sec)
        || !(0..=1_000_000).contains(&fsec)
    {
        return Err(DtErr::FieldOverflow);
    }
    tm.hour = i32::try_from(hour).map_err(|_| DtErr::FieldOverflow)?;
    tm.min = min;
    tm.sec = sec;
    tm.fsec = fsec;
    Ok(TIME)
}

/// A numeric zone (`+05`, `-0830`, `+05:30:15`): seconds west of UTC
/// (PostgreSQL's `DecodeTimezone`).
pub(super) fn decode_timezone(s: &[u8]) -> Result<i32, DtErr> {
    let negative = match s.first() {
        Some(b'+') => false,
        Some(b'-') => true,
        _ => return Err(DtErr::BadFormat),
    };
    let (mut hr, end, overflow) = strtoint(&s[1..]);
    if overflow {
        return Err(DtErr::TzDispOverflow);
    }
    let mut at = 1 + end;
    let (mut min, mut sec) = (0, 0);
    if s.get(at) == Some(&b':') {
        at += 1;
        let (v, end, overflow) = strtoint(&s[at..]);
        if overflow {
            return Err(DtErr::TzDispOverflow);
        }
        min = v;
        at += end;
        if s.get(at) == Some(&b':') {
            at += 1;
            let (v, end, overflow) = strtoint(&s[at..]);
            if overflow {
                return Err(DtErr::TzDispOverflow);
            }
            sec = v;
            at += end;
        }
    } else if at == s.len() && s.len() > 3 {
        min = hr % 100;
        hr /= 100;
    }
    if !(0..=15).contains(&hr) || !(0..60).contains(&min) || !(0..60).contains(&sec) {
        return Err(DtErr::TzDispOverflow);
    }
    if at != s.len() {
        return Err(DtErr::BadFormat);
    }
    let tz = (hr * 60 + min) * 60 + sec;
    Ok(if negative { tz } else { -tz })
}
