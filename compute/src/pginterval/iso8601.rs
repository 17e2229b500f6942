//! ISO 8601 durations (PostgreSQL's `DecodeISO8601Interval`): the format
//! with designators (`P1Y2M3DT4H5M6.5S`, `P1W`) and the alternative
//! format (`P0001-02-03T04:05:06`, `P00010203T040506`). Numbers are read
//! with C's `strtod`, as PostgreSQL reads them, so `P1e2D` and even hex
//! `P0x10W` are accepted.

use super::{
    DtErr, Parts, Step, DAYS_PER_MONTH, USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE,
    USECS_PER_SEC,
};

/// How reading goes on after a field.
enum Flow {
    /// A field was read; look for the next.
    Field,
    /// The alternative format's date ended with `T`: the time follows.
    Time,
    /// The text is complete.
    Done,
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
    parts: Parts,
    /// Whether a designated field came before in this part (date or time),
    /// which the alternative format may not follow.
    have_field: bool,
}

/// Reads `s` as an ISO 8601 duration.
pub(super) fn decode_iso8601(s: &[u8]) -> Result<Parts, DtErr> {
    if s.len() < 2 || s[0] != b'P' {
        return Err(DtErr::BadFormat);
    }
    let mut r = Reader {
        s,
        pos: 1,
        parts: Parts::default(),
        have_field: false,
    };
    let mut in_date = true;
    while r.pos < s.len() {
        if s[r.pos] == b'T' {
            in_date = false;
            r.have_field = false;
            r.pos += 1;
            continue;
        }
        let start = r.pos;
        let (val, frac) = r.number()?;
        let unit = s.get(r.pos).copied().unwrap_or(0);
        r.pos += 1;
        let flow = if in_date {
            r.date_unit(unit, start, val, frac)?
        } else {
            r.time_unit(unit, start, val, frac)?
        };
        match flow {
            Flow::Field => r.have_field = true,
            Flow::Time => {
                in_date = false;
                r.have_field = false;
            }
            Flow::Done => break,
        }
    }
    Ok(r.parts)
}

impl Reader<'_> {
    fn at(&self) -> u8 {
        self.s.get(self.pos).copied().unwrap_or(0)
    }

    /// A number (PostgreSQL's `ParseISO8601Number`): its whole part and
    /// its fraction, both with its sign.
    fn number(&mut self) -> Result<(i64, f64), DtErr> {
        let c = self.at();
        if !(c.is_ascii_digit() || c == b'-' || c == b'.') {
            return Err(DtErr::BadFormat);
        }
        let (val, len, out_of_range) = c_strtod(&self.s[self.pos..]).ok_or(DtErr::BadFormat)?;
        if out_of_range {
            return Err(DtErr::BadFormat);
        }
        self.pos += len;
        if val.is_nan() || !(-1.0e15..=1.0e15).contains(&val) {
            return Err(DtErr::FieldOverflow);
        }
        let whole = val.trunc() as i64;
        Ok((whole, val - whole as f64))
    }

    /// Digits of the whole part of the number at `start` (sign and
    /// fraction aside), which tell the alternative format's basic form.
    fn int_width(&self, start: usize) -> usize {
        let rest = &self.s[start..];
        let rest = rest.strip_prefix(b"-").unwrap_or(rest);
        rest.iter().take_while(|c| c.is_ascii_digit()).count()
    }

    fn date_unit(&mut self, unit: u8, start: usize, val: i64, frac: f64) -> Result<Flow, DtErr> {
        let basic = self.int_width(start) == 8 && !self.have_field;
        let p = &mut self.parts;
        match unit {
            b'Y' => years(p, val, frac)?,
            b'M' => months(p, val, frac)?,
            b'W' => p.add_days(val, 7).and_then(|_| p.add_fract_days(frac, 7))?,
            b'D' => days(p, val, frac)?,
            b'T' | 0 if basic => {
                // Basic alternative format: YYYYMMDD.
                p.add_years(val / 10000, 1)?;
                p.add_months((val / 100) % 100)?;
                days(p, val % 100, frac)?;
                return Ok(if unit == 0 { Flow::Done } else { Flow::Time });
            }
            b'T' | 0 | b'-' => return self.extended_date(unit, val, frac),
            _ => return Err(DtErr::BadFormat),
        }
        Ok(Flow::Field)
    }

    /// Extended alternative format: `Y-M-D`, any of them cut short.
    fn extended_date(&mut self, unit: u8, val: i64, frac: f64) -> Result<Flow, DtErr> {
        if self.have_field {
            return Err(DtErr::BadFormat);
        }
        years(&mut self.parts, val, frac)?;
        match unit {
            0 => return Ok(Flow::Done),
            b'T' => return Ok(Flow::Time),
            _ => {}
        }
        let (val, frac) = self.number()?;
        months(&mut self.parts, val, frac)?;
        match self.at() {
            0 => return Ok(Flow::Done),
            b'T' => return Ok(Flow::Time),
            b'-' => self.pos += 1,
            _ => return Err(DtErr::BadFormat),
        }
        let (val, frac) = self.number()?;
        days(&mut self.parts, val, frac)?;
        match self.at() {
            0 => Ok(Flow::Done),
            b'T' => Ok(Flow::Time),
            _ => Err(DtErr::BadFormat),
        }
    }

    fn time_unit(&mut self, unit: u8, start: usize, val: i64, frac: f64) -> Result<Flow, DtErr> {
        let basic = self.int_width(start) == 6 && !self.have_field;
        let p = &mut self.parts;
        match unit {
            b'H' => p.add_micros(val, frac, USECS_PER_HOUR)?,
            b'M' => p.add_micros(val, frac, USECS_PER_MINUTE)?,
            b'S' => p.add_micros(val, frac, USECS_PER_SEC)?,
            0 if basic => {
                // Basic alternative format: hhmmss. PostgreSQL scales the
                // fraction by one microsecond here, so it rounds away.
                p.add_micros(val / 10000, 0.0, USECS_PER_HOUR)?;
                p.add_micros((val / 100) % 100, 0.0, USECS_PER_MINUTE)?;
                p.add_micros(val % 100, 0.0, USECS_PER_SEC)?;
                p.add_fract_micros(frac, 1)?;
                return Ok(Flow::Done);
            }
            0 | b':' => return self.extended_time(unit, val, frac),
            _ => return Err(DtErr::BadFormat),
        }
        Ok(Flow::Field)
    }

    /// Extended alternative format: `h:m:s`, any of them cut short.
    fn extended_time(&mut self, unit: u8, val: i64, frac: f64) -> Result<Flow, DtErr> {
        if self.have_field {
            return Err(DtErr::BadFormat);
        }
        self.parts.add_micros(val, frac, USECS_PER_HOUR)?;
        if unit == 0 {
            return Ok(Flow::Done);
        }
        let (val, frac) = self.number()?;
        self.parts.add_micros(val, frac, USECS_PER_MINUTE)?;
        match self.at() {
            0 => return Ok(Flow::Done),
            b':' => self.pos += 1,
            _ => return Err(DtErr::BadFormat),
        }
        let (val, frac) = self.number()?;
        self.parts.add_micros(val, frac, USECS_PER_SEC)?;
        match self.at() {
            0 => Ok(Flow::Done),
            _ => Err(DtErr::BadFormat),
        }
    }
}

fn years(p: &mut Parts, val: i64, frac: f64) -> Step {
    p.add_years(val, 1).and_then(|_| p.add_fract_years(frac, 1))
}

fn months(p: &mut Parts, val: i64, frac: f64) -> Step {
    p.add_months(val)
        .and_then(|_| p.add_fract_days(frac, DAYS_PER_MONTH))
}

fn days(p: &mut Parts, val: i64, frac: f64) -> Step {
    p.add_days(val, 1)
        .and_then(|_| p.add_fract_micros(frac, USECS_PER_DAY))
}

/// C's `strtod` (glibc, C locale) at the start of `b`: the value, how many
/// bytes it took and whether it was out of range (`ERANGE`: too large, or
/// too small to be a normal double). `None` when there is no number.
fn c_strtod(b: &[u8]) -> Option<(f64, usize, bool)> {
    let mut i = b
        .iter()
        .take_while(|c| super::tokens::is_c_space(**c))
        .count();
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    let word = |at: usize, w: &[u8]| {
        b.get(at..at + w.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(w))
    };
    if word(i, b"inf") {
        let len = if word(i, b"infinity") { 8 } else { 3 };
        return Some((sign * f64::INFINITY, i + len, false));
    }
    if word(i, b"nan") {
        let mut end = i + 3;
        if b.get(end) == Some(&b'(') {
            let inner = b[end + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            if b.get(end + 1 + inner) == Some(&b')') {
                end += inner + 2;
            }
        }
        return Some((f64::NAN, end, false));
    }
    let (magnitude, end, nonzero) = if word(i, b"0x") {
        hex_float(b, i + 2).unwrap_or((0.0, i + 1, false))
    } else {
        decimal_float(b, i)?
    };
    let value = sign * magnitude;
    let tiny = value != 0.0 && value.abs() < f64::MIN_POSITIVE;
    let lost = value == 0.0 && nonzero;
    Some((value, end, value.is_infinite() || tiny || lost))
}

/// Digits, an optional point and digits (at least one digit in all), an
/// optional exponent: the value, where it ends, whether any digit of the
/// mantissa is not zero.
fn decimal_float(b: &[u8], start: usize) -> Option<(f64, usize, bool)> {
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = start + digits(start);
    if b.get(i) == Some(&b'.') {
        i += 1 + digits(i + 1);
    }
    let mantissa = &b[start..i];
    if !mantissa.iter().any(u8::is_ascii_digit) {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp_digits = digits(i + 1 + sign);
        if exp_digits > 0 {
            i += 1 + sign + exp_digits;
        }
    }
    let value = std::str::from_utf8(&b[start..i])
        .ok()?
        .parse::<f64>()
        .ok()?;
    let nonzero = mantissa.iter().any(|c| (b'1'..=b'9').contains(c));
    Some((value, i, nonzero))
}

/// Hex digits with an optional point and a binary exponent `p`, after
/// `0x`, as [`decimal_float`] reads decimals; `None` when no hex digit
/// follows.
fn hex_float(b: &[u8], start: usize) -> Option<(f64, usize, bool)> {
    let mut mant: u128 = 0;
    let mut exp: i64 = 0;
    let mut count = 0;
    let mut i = start;
    let mut seen_point = false;
    while let Some(&c) = b.get(i) {
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = char::from(c).to_digit(16) {
            count += 1;
            if mant >> 120 == 0 {
                mant = mant << 4 | u128::from(d);
                exp -= if seen_point { 4 } else { 0 };
            } else {
                // Beyond the precision: keep a sticky bit for rounding.
                mant |= u128::from(d != 0);
                exp += if seen_point { 0 } else { 4 };
            }
        } else {
            break;
        }
        i += 1;
    }
    if count == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'p' | b'P')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp_digits = b[i + 1 + sign..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if exp_digits > 0 {
            let (e, len) = super::decode::c_strtol(&b[i + 1..]);
            let huge = if b[i + 1] == b'-' { -100_000 } else { 100_000 };
            exp = exp.saturating_add(e.unwrap_or(huge));
            i += 1 + len;
        }
    }
    // Scaled in steps, so that a large mantissa with a very negative
    // exponent does not underflow on the way.
    let mut value = mant as f64;
    let mut exp = exp.clamp(-100_000, 100_000);
    while exp != 0 {
        let step = exp.clamp(-1000, 1000);
        value *= 2f64.powi(step as i32);
        exp -= step;
    }
    Some((value, i, mant != 0))
}
