//! Reading the fields of postgres-style interval text (PostgreSQL's
//! `DecodeInterval`): right to left, so that a unit word is known before
//! the number it follows.

use super::tokens::{interval_word, Field, FieldKind, Unit, Word};
use super::{
    overflow_if, DtErr, Fields, Parts, Step, DAYS_PER_MONTH, MONTHS_PER_YEAR, USECS_PER_DAY,
    USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC,
};

/// One bit per kind of field already given, so that a second `day` (or a
/// number of hours next to a `hh:mm` time) is refused.
mod mask {
    pub const MONTH: u32 = 1 << 1;
    pub const YEAR: u32 = 1 << 2;
    pub const DAY: u32 = 1 << 3;
    pub const HOUR: u32 = 1 << 10;
    pub const MINUTE: u32 = 1 << 11;
    pub const SECOND: u32 = 1 << 12;
    pub const MILLISECOND: u32 = 1 << 13;
    pub const MICROSECOND: u32 = 1 << 14;
    pub const WEEK: u32 = 1 << 24;
    pub const DECADE: u32 = 1 << 25;
    pub const CENTURY: u32 = 1 << 26;
    pub const MILLENNIUM: u32 = 1 << 27;
    pub const ALL_SECONDS: u32 = SECOND | MILLISECOND | MICROSECOND;
    pub const TIME: u32 = HOUR | MINUTE | ALL_SECONDS;
}

/// What unit the next number (to the left) takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Nothing seen yet: the range decides.
    Unset,
    Unit(Unit),
    /// Right after `ago`: a number here is refused.
    NoNumber,
}

struct Decoder {
    range: Fields,
    parts: Parts,
    seen: u32,
    next: Next,
    ago: bool,
}

/// Reads `fields` as postgres-style interval text.
pub(super) fn decode_fields(fields: &[Field], range: Fields) -> Result<Parts, DtErr> {
    let mut d = Decoder {
        range,
        parts: Parts::default(),
        seen: 0,
        next: Next::Unset,
        ago: false,
    };
    for field in fields.iter().rev() {
        let given = d.field(field)?;
        if given & d.seen != 0 {
            return Err(DtErr::BadFormat);
        }
        d.seen |= given;
    }
    if d.seen == 0 {
        return Err(DtErr::BadFormat);
    }
    if d.ago {
        d.parts.negate()?;
    }
    Ok(d.parts)
}

impl Decoder {
    /// Reads one field; returns the mask of what it gave.
    fn field(&mut self, field: &Field) -> Result<u32, DtErr> {
        let text = field.text.as_str();
        match field.kind {
            FieldKind::Time => {
                self.parts.micros = time_micros(text, self.range)?;
                self.next = Next::Unit(Unit::Day);
                Ok(mask::TIME)
            }
            FieldKind::Signed => {
                // A signed `hh:mm[:ss]` is a time; anything else signed is
                // read as a number below.
                if text[1..].contains(':') {
                    if let Ok(micros) = time_micros(&text[1..], self.range) {
                        self.parts.micros = if text.starts_with('-') {
                            micros.checked_neg().ok_or(DtErr::FieldOverflow)?
                        } else {
                            micros
                        };
                        self.next = Next::Unit(Unit::Day);
                        return Ok(mask::TIME);
                    }
                }
                self.number(text)
            }
            FieldKind::Date | FieldKind::Number => self.number(text),
            FieldKind::Word | FieldKind::SignedWord => {
                match interval_word(text).ok_or(DtErr::BadFormat)? {
                    Word::Unit(unit) => self.next = Next::Unit(unit),
                    Word::Ago => {
                        self.ago = true;
                        self.next = Next::NoNumber;
                    }
                }
                Ok(0)
            }
        }
    }

    /// The unit a number without a unit word to its right takes.
    fn default_unit(&self) -> Unit {
        match self.range {
            Fields::Year => Unit::Year,
            Fields::Month | Fields::YearToMonth => Unit::Month,
            Fields::Day => Unit::Day,
            Fields::Hour | Fields::DayToHour => Unit::Hour,
            Fields::Minute | Fields::HourToMinute | Fields::DayToMinute => Unit::Minute,
            Fields::All
            | Fields::Second
            | Fields::MinuteToSecond
            | Fields::HourToSecond
            | Fields::DayToSecond => Unit::Second,
        }
    }

    /// A number (`12`, `-1.5`, `.5`) or an SQL year-month (`1-2`).
    fn number(&mut self, text: &str) -> Result<u32, DtErr> {
        if self.next == Next::Unset {
            self.next = Next::Unit(self.default_unit());
        }
        let (val, end) = c_strtol(text.as_bytes());
        let val = val.ok_or(DtErr::FieldOverflow)?;
        let rest = &text[end..];
        let negative = text.starts_with('-');
        let (val, frac) = if let Some(months) = rest.strip_prefix('-') {
            self.next = Next::Unit(Unit::Month);
            (year_month(val, months, negative)?, 0.0)
        } else if rest.starts_with('.') {
            let frac = parse_fraction(rest)?;
            (val, if negative { -frac } else { frac })
        } else if rest.is_empty() {
            (val, 0.0)
        } else {
            return Err(DtErr::BadFormat);
        };
        let Next::Unit(unit) = self.next else {
            return Err(DtErr::BadFormat);
        };
        self.add(unit, val, frac)
    }

    /// Adds `val + frac` of `unit`; returns the mask of what it gave.
    fn add(&mut self, unit: Unit, val: i64, frac: f64) -> Result<u32, DtErr> {
        let p = &mut self.parts;
        let given = match unit {
            Unit::Microsecond => p.add_micros(val, frac, 1).map(|_| mask::MICROSECOND),
            Unit::Millisecond => p.add_micros(val, frac, 1000).map(|_| mask::MILLISECOND),
            Unit::Second => p.add_micros(val, frac, USECS_PER_SEC).map(|_| {
                // A fraction of a second gives the milli- and microseconds.
                if frac == 0.0 {
                    mask::SECOND
                } else {
                    mask::ALL_SECONDS
                }
            }),
            Unit::Minute => p
                .add_micros(val, frac, USECS_PER_MINUTE)
                .map(|_| mask::MINUTE),
            Unit::Hour => {
                self.next = Next::Unit(Unit::Day);
                p.add_micros(val, frac, USECS_PER_HOUR).map(|_| mask::HOUR)
            }
            Unit::Day => both(p.add_days(val, 1), || {
                p.add_fract_micros(frac, USECS_PER_DAY)
            })
            .map(|_| mask::DAY),
            Unit::Week => {
                both(p.add_days(val, 7), || p.add_fract_days(frac, 7)).map(|_| mask::WEEK)
            }
            Unit::Month => both(p.add_months(val), || p.add_fract_days(frac, DAYS_PER_MONTH))
                .map(|_| mask::MONTH),
            Unit::Year => years(p, val, frac, 1).map(|_| mask::YEAR),
            Unit::Decade => years(p, val, frac, 10).map(|_| mask::DECADE),
            Unit::Century => years(p, val, frac, 100).map(|_| mask::CENTURY),
            Unit::Millennium => years(p, val, frac, 1000).map(|_| mask::MILLENNIUM),
            Unit::Unusable => Err(DtErr::BadFormat),
        }?;
        Ok(given)
    }
}

fn both(first: Step, second: impl FnOnce() -> Step) -> Step {
    first.and_then(|_| second())
}

fn years(p: &mut Parts, val: i64, frac: f64, scale: i32) -> Step {
    both(p.add_years(val, scale), || p.add_fract_years(frac, scale))
}

/// The months of an SQL `years-months` field: `years` and the text after
/// its `-` (`0` to `11`, taking the field's sign).
fn year_month(years: i64, months: &str, negative: bool) -> Result<i64, DtErr> {
    let (month, end) = c_strtoint(months.as_bytes());
    let month = month.filter(|m| (0..MONTHS_PER_YEAR).contains(m));
    let month = i64::from(month.ok_or(DtErr::FieldOverflow)?);
    if end != months.len() {
        return Err(DtErr::BadFormat);
    }
    let month = if negative { -month } else { month };
    years
        .checked_mul(i64::from(MONTHS_PER_YEAR))
        .and_then(|m| m.checked_add(month))
        .ok_or(DtErr::FieldOverflow)
}

/// A time `h:m`, `h:m:s[.f]` or `m:s.f` in microseconds (PostgreSQL's
/// `DecodeTimeCommon` and `DecodeTimeForInterval`). Two fields are
/// minutes and seconds under `MINUTE TO SECOND`.
fn time_micros(text: &str, range: Fields) -> Result<i64, DtErr> {
    let b = text.as_bytes();
    let (hour, end) = c_strtol(b);
    let hour = hour.ok_or(DtErr::FieldOverflow)?;
    if b.get(end) != Some(&b':') {
        return Err(DtErr::BadFormat);
    }
    let start = end + 1;
    let (min, len) = c_strtoint(&b[start..]);
    let min = min.ok_or(DtErr::FieldOverflow)?;
    let rest = &text[start + len..];
    let clock = Clock {
        hour,
        min,
        sec: 0,
        usec: 0,
    };
    let clock = if rest.is_empty() {
        if range == Fields::MinuteToSecond {
            clock.minutes_seconds()?
        } else {
            clock
        }
    } else if rest.starts_with('.') {
        let usec = fraction_micros(rest)?;
        Clock { usec, ..clock }.minutes_seconds()?
    } else if let Some(secs) = rest.strip_prefix(':') {
        let (sec, len) = c_strtoint(secs.as_bytes());
        let sec = sec.ok_or(DtErr::FieldOverflow)?;
        let usec = match &secs[len..] {
            "" => 0,
            tail if tail.starts_with('.') => fraction_micros(tail)?,
            _ => return Err(DtErr::BadFormat),
        };
        Clock { sec, usec, ..clock }
    } else {
        return Err(DtErr::BadFormat);
    };
    clock.micros()
}

/// The parts of a time as written, before they are checked.
#[derive(Clone, Copy)]
struct Clock {
    hour: i64,
    min: i32,
    sec: i32,
    usec: i64,
}

impl Clock {
    /// Read as `m:s`: the hours are the minutes, the minutes the seconds.
    fn minutes_seconds(self) -> Result<Clock, DtErr> {
        Ok(Clock {
            hour: 0,
            min: i32::try_from(self.hour).map_err(|_| DtErr::FieldOverflow)?,
            sec: self.min,
            usec: self.usec,
        })
    }

    /// Minutes up to 59, seconds up to 60 (a leap second) and a fraction
    /// up to one second, in microseconds.
    fn micros(self) -> Result<i64, DtErr> {
        overflow_if(
            self.hour < 0
                || !(0..60).contains(&self.min)
                || !(0..=60).contains(&self.sec)
                || !(0..=USECS_PER_SEC).contains(&self.usec),
        )?;
        [
            (self.hour, USECS_PER_HOUR),
            (i64::from(self.min), USECS_PER_MINUTE),
            (i64::from(self.sec), USECS_PER_SEC),
        ]
        .into_iter()
        .try_fold(self.usec, |acc, (n, per)| {
            n.checked_mul(per).and_then(|v| v.checked_add(acc))
        })
        .ok_or(DtErr::FieldOverflow)
    }
}

/// `.ddd` (or a lone `.`) as a fraction; anything after the digits is
/// badly formed.
fn parse_fraction(text: &str) -> Result<f64, DtErr> {
    common::pgdatetime::fraction(text.as_bytes()).ok_or(DtErr::BadFormat)
}

/// `.ddd` as whole microseconds, rounded half to even.
fn fraction_micros(text: &str) -> Result<i64, DtErr> {
    let frac = parse_fraction(text)?;
    Ok((frac * 1_000_000.0).round_ties_even() as i64)
}

/// C's `strtol` in base 10: the value (`None` when out of range) and
/// where the number ends (0 when there is none).
pub(super) fn c_strtol(b: &[u8]) -> (Option<i64>, usize) {
    let (val, end, overflow) = common::pgdatetime::strtol(b);
    ((!overflow).then_some(val), end)
}

/// PostgreSQL's `strtoint`: `strtol` limited to `i32`.
fn c_strtoint(b: &[u8]) -> (Option<i32>, usize) {
    let (val, end, overflow) = common::pgdatetime::strtoint(b);
    ((!overflow).then_some(val), end)
}
