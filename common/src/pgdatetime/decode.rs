//! Reading the fields of date/time text left to right (PostgreSQL's
//! `DecodeDateTime`): each field sets some parts of the date and time,
//! and a part set twice makes the text badly formed.

use super::calendar::{j2date, validate_date, DateFlags};
use super::fields::*;
use super::keywords::{date_keyword, is_zone_name, zone_abbrev, Label, Special, Word};
use super::tokens::{split_fields, Field, FieldKind};
use super::{
    Decoded, DtErr, Kind, Tm, ZoneSpec, POSTGRES_EPOCH_JDATE, USECS_PER_DAY, USECS_PER_SEC,
};

use super::mask::*;

/// Splits and decodes `text`; `now` is the local time `now`, `today`...
/// mean (none: they are only marked).
pub(super) fn decode(text: &str, buf_len: usize, now: Option<i64>) -> Result<Decoded, DtErr> {
    let fields = split_fields(text.as_bytes(), buf_len).map_err(|_| DtErr::BadFormat)?;
    let mut d = Decoder {
        fields: &fields,
        fmask: 0,
        label: None,
        tm: Tm::default(),
        pm: None,
        have_text_month: false,
        julian: false,
        is2digits: false,
        bc: false,
        kind: Kind::Date,
        named_zone: false,
        dynamic_zone: false,
        relative: false,
        now,
        tz: 0,
        zone: ZoneSpec::Session,
        now_zone: false,
    };
    for i in 0..fields.len() {
        let Some(tmask) = d.field(i)? else {
            continue;
        };
        if tmask & d.fmask != 0 {
            return Err(DtErr::BadFormat);
        }
        d.fmask |= tmask;
    }
    d.finish()
}

struct Decoder<'a> {
    fields: &'a [Field],
    fmask: u32,
    /// The label the next number carries (PostgreSQL's `ptype`).
    label: Option<Label>,
    tm: Tm,
    /// `am` (false) or `pm` (true) was given.
    pm: Option<bool>,
    have_text_month: bool,
    julian: bool,
    is2digits: bool,
    bc: bool,
    kind: Kind,
    named_zone: bool,
    dynamic_zone: bool,
    relative: bool,
    now: Option<i64>,
    /// The offset read, in seconds west of UTC (PostgreSQL's `*tzp`).
    tz: i32,
    zone: ZoneSpec,
    /// `now` was read: the session's zone.
    now_zone: bool,
}

impl Decoder<'_> {
    /// Decodes field `i`: the parts it set, or `None` for a word that is
    /// ignored.
    fn field(&mut self, i: usize) -> Result<Option<u32>, DtErr> {
        let f = &self.fields[i];
        let text = f.text.as_bytes();
        let tmask = match f.kind {
            FieldKind::Date => self.date_field(text)?,
            FieldKind::Time => {
                if let Some(label) = self.label.take() {
                    if label != Label::Time {
                        return Err(DtErr::BadFormat);
                    }
                }
                let tmask = decode_time(text, &mut self.tm)?;
                if time_overflows(&self.tm) {
                    return Err(DtErr::FieldOverflow);
                }
                tmask
            }
            FieldKind::Signed => {
                self.tz = decode_timezone(text)?;
                TZ
            }
            FieldKind::Number if self.label.is_some() => self.labelled_number(text)?,
            FieldKind::Number => self.number(text)?,
            FieldKind::Word | FieldKind::SignedWord => return self.word(i),
        };
        Ok(Some(tmask))
    }

    /// A field with date separators: a date, a Julian day or run-together
    /// time with a zone, or a zone name.
    fn date_field(&mut self, text: &[u8]) -> Result<u32, DtErr> {
        if self.label == Some(Label::Julian) {
            let (val, end, overflow) = strtoint(text);
            if overflow || val < 0 {
                return Err(DtErr::FieldOverflow);
            }
            (self.tm.year, self.tm.mon, self.tm.mday) = j2date(val);
            self.julian = true;
            self.tz = decode_timezone(&text[end..])?;
            self.label = None;
            return Ok(DATE | TIME | TZ);
        }
        if self.label.is_none() && self.fmask & (MONTH | DAY) != MONTH | DAY {
            return decode_date(text, self.fmask, &mut self.tm, &mut self.is2digits);
        }
        if !text[0].is_ascii_digit() && self.label.is_none() {
            let name = String::from_utf8_lossy(text).into_owned();
            if !is_zone_name(&name) {
                return Err(DtErr::UnknownZone(name));
            }
            self.named_zone = true;
            self.zone = ZoneSpec::Named(name);
            return Ok(TZ);
        }
        if let Some(label) = self.label.take() {
            if label != Label::Time {
                return Err(DtErr::BadFormat);
            }
        }
        if self.fmask & TIME == TIME {
            return Err(DtErr::BadFormat);
        }
        let dash = text
            .iter()
            .position(|&c| c == b'-')
            .ok_or(DtErr::BadFormat)?;
        self.tz = decode_timezone(&text[dash..])?;
        let mut fsec = self.tm.fsec;
        let tmask = decode_number_field(
            &text[..dash],
            self.fmask,
            &mut self.tm,
            &mut fsec,
            &mut self.is2digits,
        )?;
        self.tm.fsec = fsec;
        Ok(tmask | TZ)
    }

    /// A number after a label (`y2001`, `j2451187.5`, `t040506`).
    fn labelled_number(&mut self, text: &[u8]) -> Result<u32, DtErr> {
        let label = self.label.take().unwrap_or(Label::Unusable);
        let (val, end, overflow) = strtoint(text);
        if overflow {
            return Err(DtErr::FieldOverflow);
        }
        let dot = text.get(end) == Some(&b'.');
        if dot && !matches!(label, Label::Julian | Label::Time | Label::Second) {
            return Err(DtErr::BadFormat);
        }
        if !dot && end != text.len() {
            return Err(DtErr::BadFormat);
        }
        let tm = &mut self.tm;
        let tmask = match label {
            Label::Year => {
                tm.year = val;
                YEAR
            }
            Label::Month if self.fmask & MONTH != 0 && self.fmask & HOUR != 0 => {
                tm.min = val;
                MINUTE
            }
            Label::Month => {
                tm.mon = val;
                MONTH
            }
            Label::Day => {
                tm.mday = val;
                DAY
            }
            Label::Hour => {
                tm.hour = val;
                HOUR
            }
            Label::Minute => {
                tm.min = val;
                MINUTE
            }
            Label::Second => {
                tm.sec = val;
                if dot {
                    tm.fsec = fraction_micros(parse_fraction(&text[end..])?);
                    ALL_SECS
                } else {
                    SECOND
                }
            }
            Label::Julian => self.julian_day(val, dot.then(|| &text[end..]))?,
            Label::Time => {
                let mut fsec = self.tm.fsec;
                let tmask = decode_number_field(
                    text,
                    self.fmask | DATE,
                    &mut self.tm,
                    &mut fsec,
                    &mut self.is2digits,
                )?;
                self.tm.fsec = fsec;
                if tmask != TIME {
                    return Err(DtErr::BadFormat);
                }
                tmask
            }
            Label::Unusable => return Err(DtErr::BadFormat),
        };
        self.kind = Kind::Date;
        Ok(tmask)
    }

    /// A Julian day, perhaps with a fraction of a day.
    fn julian_day(&mut self, val: i32, fraction: Option<&[u8]>) -> Result<u32, DtErr> {
        if val < 0 {
            return Err(DtErr::FieldOverflow);
        }
        (self.tm.year, self.tm.mon, self.tm.mday) = j2date(val);
        self.julian = true;
        let Some(fraction) = fraction else {
            return Ok(DATE);
        };
        let time = (parse_fraction(fraction)? * USECS_PER_DAY as f64) as i64;
        self.set_time_of_day(time);
        Ok(DATE | TIME)
    }

    /// Sets the time of day from microseconds (PostgreSQL's `dt2time`).
    fn set_time_of_day(&mut self, time: i64) {
        let hour = time / 3_600_000_000;
        let rest = time - hour * 3_600_000_000;
        let min = rest / 60_000_000;
        let rest = rest - min * 60_000_000;
        let sec = rest / USECS_PER_SEC;
        self.tm.hour = hour as i32;
        self.tm.min = min as i32;
        self.tm.sec = sec as i32;
        self.tm.fsec = (rest - sec * USECS_PER_SEC) as i32;
    }

    /// An unlabelled number: part of a date, run-together digits, or one
    /// date or time part.
    fn number(&mut self, text: &[u8]) -> Result<u32, DtErr> {
        let dot = text.iter().position(|&c| c == b'.');
        let (tm, is2digits) = (&mut self.tm, &mut self.is2digits);
        let mut fsec = tm.fsec;
        let tmask = match dot {
            Some(_) if self.fmask & DATE == 0 => decode_date(text, self.fmask, tm, is2digits),
            Some(at) if at > 2 => decode_number_field(text, self.fmask, tm, &mut fsec, is2digits),
            _ if text.len() >= 6 && (self.fmask & DATE == 0 || self.fmask & TIME == 0) => {
                decode_number_field(text, self.fmask, tm, &mut fsec, is2digits)
            }
            _ => decode_number(
                text,
                self.have_text_month,
                self.fmask,
                tm,
                &mut fsec,
                is2digits,
            ),
        }?;
        self.tm.fsec = fsec;
        Ok(tmask)
    }

    /// A word: a zone abbreviation, a keyword or a zone name; `None` for
    /// a word that is ignored.
    fn word(&mut self, i: usize) -> Result<Option<u32>, DtErr> {
        let text = self.fields[i].text.as_str();
        let Some(word) = zone_abbrev(text).or_else(|| date_keyword(text)) else {
            if !is_zone_name(text) {
                return Err(DtErr::BadFormat);
            }
            self.named_zone = true;
            self.zone = ZoneSpec::Named(text.to_string());
            return Ok(Some(TZ));
        };
        let tmask = match word {
            Word::Ignore => return Ok(None),
            Word::Special(s) => self.special(s),
            Word::Month(m) => {
                let mut tmask = MONTH;
                if self.fmask & MONTH != 0
                    && !self.have_text_month
                    && self.fmask & DAY == 0
                    && (1..=31).contains(&self.tm.mon)
                {
                    // The number read as the month was the day.
                    self.tm.mday = self.tm.mon;
                    tmask = DAY;
                }
                self.have_text_month = true;
                self.tm.mon = m;
                tmask
            }
            Word::DstModifier => {
                self.tz -= 3600;
                DTZMOD | DTZ
            }
            Word::ZoneDst(east) => {
                self.tz = -east;
                DTZ | TZ
            }
            Word::ZoneStd(east) => {
                self.tz = -east;
                TZ
            }
            Word::ZoneDynamic(zone) => {
                self.dynamic_zone = true;
                self.zone = ZoneSpec::Abbrev(text.to_string(), zone);
                DYNTZ | TZ
            }
            Word::Meridian(pm) => {
                self.pm = Some(pm);
                AMPM
            }
            Word::Era(bc) => {
                self.bc = bc;
                ADBC
            }
            Word::Weekday => DOW,
            Word::Label(label) => {
                self.label = Some(label);
                0
            }
            Word::IsoTime => {
                let next = self.fields.get(i + 1).map(|f| f.kind);
                let timeish = matches!(
                    next,
                    Some(FieldKind::Number | FieldKind::Time | FieldKind::Date)
                );
                if self.fmask & DATE != DATE || !timeish {
                    return Err(DtErr::BadFormat);
                }
                self.label = Some(Label::Time);
                0
            }
        };
        Ok(Some(tmask))
    }

    /// A reserved word: the parts it sets.
    fn special(&mut self, s: Special) -> u32 {
        let day_offset = match s {
            Special::Infinity | Special::NegInfinity | Special::Epoch => {
                self.kind = match s {
                    Special::Infinity => Kind::Infinity,
                    Special::NegInfinity => Kind::NegInfinity,
                    _ => Kind::Epoch,
                };
                return RESERVED;
            }
            Special::Zulu => {
                self.kind = Kind::Date;
                (self.tm.hour, self.tm.min, self.tm.sec) = (0, 0, 0);
                self.tz = 0;
                return TIME | TZ;
            }
            Special::Now => {
                self.kind = Kind::Date;
                let now = self.current_time();
                self.set_date(now.div_euclid(USECS_PER_DAY));
                self.set_time_of_day(now.rem_euclid(USECS_PER_DAY));
                // The session's offset now, as PostgreSQL's
                // GetCurrentTimeUsec gives it.
                self.now_zone = true;
                return DATE | TIME | TZ;
            }
            Special::Today => 0,
            Special::Tomorrow => 1,
            Special::Yesterday => -1,
        };
        self.kind = Kind::Date;
        let today = self.current_time().div_euclid(USECS_PER_DAY);
        self.set_date(today + day_offset);
        DATE
    }

    /// The local time `now` means; without one, a stand-in, and the text
    /// is marked as relative.
    fn current_time(&mut self) -> i64 {
        self.relative = self.now.is_none();
        self.now.unwrap_or(0)
    }

    /// Sets the date from days since 2000-01-01.
    fn set_date(&mut self, days: i64) {
        let jd = days + i64::from(POSTGRES_EPOCH_JDATE);
        (self.tm.year, self.tm.mon, self.tm.mday) = j2date(jd as i32);
    }

    /// The checks after the last field.
    fn finish(mut self) -> Result<Decoded, DtErr> {
        let flags = DateFlags {
            has_year: self.fmask & YEAR != 0,
            has_month: self.fmask & MONTH != 0,
            has_day: self.fmask & DAY != 0,
            has_doy: self.fmask & DOY != 0,
            julian: self.julian,
            two_digit_year: self.is2digits,
            bc: self.bc,
        };
        validate_date(&mut self.tm, flags)?;
        if let Some(pm) = self.pm {
            if self.tm.hour > 12 {
                return Err(DtErr::FieldOverflow);
            }
            if !pm && self.tm.hour == 12 {
                self.tm.hour = 0;
            } else if pm && self.tm.hour != 12 {
                self.tm.hour += 12;
            }
        }
        if self.kind == Kind::Date {
            let dst_modifier = self.fmask & DTZMOD != 0;
            if self.fmask & DATE != DATE
                || (dst_modifier && (self.named_zone || self.dynamic_zone || self.fmask & TZ == 0))
            {
                return Err(DtErr::BadFormat);
            }
        }
        let zone = match self.zone {
            _ if self.fmask & TZ == 0 || self.now_zone => ZoneSpec::Session,
            ZoneSpec::Session => ZoneSpec::Offset(self.tz),
            z => z,
        };
        Ok(Decoded {
            kind: self.kind,
            tm: self.tm,
            relative: self.relative && self.kind == Kind::Date,
            zone,
        })
    }
}

/// Whether a time of day is beyond 24:00:00 (PostgreSQL's
/// `time_overflows`).
fn time_overflows(tm: &Tm) -> bool {
    if !(0..=24).contains(&tm.hour)
        || !(0..60).contains(&tm.min)
        || !(0..=60).contains(&tm.sec)
        || !(0..=1_000_000).contains(&tm.fsec)
    {
        return true;
    }
    let secs = i64::from((tm.hour * 60 + tm.min) * 60 + tm.sec);
    secs * USECS_PER_SEC + i64::from(tm.fsec) > USECS_PER_DAY
}
