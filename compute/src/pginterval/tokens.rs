//! Splitting date/time text into fields (PostgreSQL's `ParseDateTime`),
//! and the words PostgreSQL knows: interval units and, for the split
//! itself, the core date keywords.

use super::DtErr;

/// What a field looks like, which decides how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldKind {
    /// Digits, perhaps with a decimal point (`12`, `1.5`, `.5`).
    Number,
    /// Letters only (`days`, `ago`).
    Word,
    /// Digits or letters with `-`, `/` or `.` inside (`1-2`, `1.2.3`, `p1d`).
    Date,
    /// Digits with colons (`1:02:03.5`).
    Time,
    /// A sign and digits, perhaps with `:`, `.` or `-` (`-1:30`, `+2-3`).
    Signed,
    /// A sign and letters (`-infinity`).
    SignedWord,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Field {
    pub text: String,
    pub kind: FieldKind,
}

/// PostgreSQL splits into a 256-byte buffer (each field ends with a NUL)
/// of at most 25 fields; longer text is refused as badly formed.
const WORKBUF_LEN: usize = 256;
const MAX_FIELDS: usize = 25;
/// Keywords compare on their first ten characters.
const TOKMAXLEN: usize = 10;

struct Splitter<'a> {
    src: &'a [u8],
    pos: usize,
    used: usize,
    fields: Vec<Field>,
    cur: String,
}

impl Splitter<'_> {
    fn peek(&self) -> u8 {
        self.src.get(self.pos).copied().unwrap_or(0)
    }

    /// Moves the next character into the current field, lowercased if
    /// `lower`.
    fn take(&mut self, lower: bool) -> Result<(), DtErr> {
        if self.used + 1 >= WORKBUF_LEN {
            return Err(DtErr::BadFormat);
        }
        self.used += 1;
        let c = self.peek();
        self.cur
            .push(char::from(if lower { c.to_ascii_lowercase() } else { c }));
        self.pos += 1;
        Ok(())
    }

    fn take_while(&mut self, lower: bool, keep: impl Fn(u8) -> bool) -> Result<(), DtErr> {
        while keep(self.peek()) {
            self.take(lower)?;
        }
        Ok(())
    }

    fn finish(&mut self, kind: FieldKind) {
        self.used += 1;
        let text = std::mem::take(&mut self.cur);
        self.fields.push(Field { text, kind });
    }

    /// A field starting with a digit: a number, a time or a date.
    fn digits_first(&mut self) -> Result<FieldKind, DtErr> {
        self.take_while(false, |c| c.is_ascii_digit())?;
        let delim = self.peek();
        if delim == b':' {
            self.take(false)?;
            self.take_while(false, |c| c.is_ascii_digit() || c == b':' || c == b'.')?;
            return Ok(FieldKind::Time);
        }
        if !matches!(delim, b'-' | b'/' | b'.') {
            return Ok(FieldKind::Number);
        }
        self.take(false)?;
        if !self.peek().is_ascii_digit() {
            self.take_while(true, |c| c.is_ascii_alphanumeric() || c == delim)?;
            return Ok(FieldKind::Date);
        }
        self.take_while(false, |c| c.is_ascii_digit())?;
        if self.peek() == delim {
            self.take(false)?;
            self.take_while(false, |c| c.is_ascii_digit() || c == delim)?;
            return Ok(FieldKind::Date);
        }
        Ok(if delim == b'.' {
            FieldKind::Number
        } else {
            FieldKind::Date
        })
    }

    /// A field starting with a letter: a word, or (followed by a date
    /// separator, or by a digit or `+` when the word is no core keyword)
    /// something date- or zone-like.
    fn letters_first(&mut self) -> Result<FieldKind, DtErr> {
        self.take_while(true, |c| c.is_ascii_alphabetic())?;
        let next = self.peek();
        let dateish = matches!(next, b'-' | b'/' | b'.')
            || ((next == b'+' || next.is_ascii_digit()) && !is_date_keyword(&self.cur));
        if !dateish {
            return Ok(FieldKind::Word);
        }
        loop {
            self.take(true)?;
            let c = self.peek();
            let more = matches!(c, b'+' | b'-' | b'/' | b'_' | b'.' | b':');
            if !(more || c.is_ascii_alphanumeric()) {
                return Ok(FieldKind::Date);
            }
        }
    }

    /// A field starting with a sign: signed digits or a signed word.
    fn sign_first(&mut self) -> Result<FieldKind, DtErr> {
        self.take(false)?;
        while is_c_space(self.peek()) {
            self.pos += 1;
        }
        let c = self.peek();
        if c.is_ascii_digit() {
            self.take(false)?;
            self.take_while(false, |c| {
                c.is_ascii_digit() || c == b':' || c == b'.' || c == b'-'
            })?;
            Ok(FieldKind::Signed)
        } else if c.is_ascii_alphabetic() {
            self.take_while(true, |c| c.is_ascii_alphabetic())?;
            Ok(FieldKind::SignedWord)
        } else {
            Err(DtErr::BadFormat)
        }
    }
}

/// C's `isspace` in the C locale.
pub(super) fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Splits `src` into fields as PostgreSQL's `ParseDateTime` does. Other
/// punctuation only separates fields; control and non-ASCII characters
/// are refused.
pub(super) fn split_fields(src: &[u8]) -> Result<Vec<Field>, DtErr> {
    let mut sp = Splitter {
        src,
        pos: 0,
        used: 0,
        fields: vec![],
        cur: String::new(),
    };
    while sp.pos < src.len() {
        let c = sp.peek();
        if is_c_space(c) {
            sp.pos += 1;
            continue;
        }
        if sp.fields.len() >= MAX_FIELDS {
            return Err(DtErr::BadFormat);
        }
        let kind = if c.is_ascii_digit() {
            sp.digits_first()?
        } else if c == b'.' {
            sp.take(false)?;
            sp.take_while(false, |c| c.is_ascii_digit())?;
            FieldKind::Number
        } else if c.is_ascii_alphabetic() {
            sp.letters_first()?
        } else if c == b'+' || c == b'-' {
            sp.sign_first()?
        } else if c.is_ascii_punctuation() {
            sp.pos += 1;
            continue;
        } else {
            return Err(DtErr::BadFormat);
        };
        sp.finish(kind);
    }
    Ok(sp.fields)
}

/// A word as PostgreSQL looks it up: its first ten characters.
fn keyword(word: &str) -> &str {
    word.get(..TOKMAXLEN).unwrap_or(word)
}

/// Whether `word` is in PostgreSQL's core date keyword table
/// (`datetktbl`); only the split asks.
fn is_date_keyword(word: &str) -> bool {
    const WORDS: &[&str] = &[
        "-infinity",
        "ad",
        "allballs",
        "am",
        "apr",
        "april",
        "at",
        "aug",
        "august",
        "bc",
        "d",
        "dec",
        "december",
        "dow",
        "doy",
        "dst",
        "epoch",
        "feb",
        "february",
        "fri",
        "friday",
        "h",
        "infinity",
        "isodow",
        "isoyear",
        "j",
        "jan",
        "january",
        "jd",
        "jul",
        "julian",
        "july",
        "jun",
        "june",
        "m",
        "mar",
        "march",
        "may",
        "mm",
        "mon",
        "monday",
        "nov",
        "november",
        "now",
        "oct",
        "october",
        "on",
        "pm",
        "s",
        "sat",
        "saturday",
        "sep",
        "sept",
        "september",
        "sun",
        "sunday",
        "t",
        "thu",
        "thur",
        "thurs",
        "thursday",
        "today",
        "tomorrow",
        "tue",
        "tues",
        "tuesday",
        "wed",
        "wednesday",
        "weds",
        "y",
        "yesterday",
    ];
    WORDS.contains(&keyword(word))
}

/// An interval unit word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
    /// Units PostgreSQL knows but a number may not carry in an interval
    /// (`quarter`, `timezone`).
    Unusable,
}

/// What a word means in an interval (PostgreSQL's `deltatktbl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Word {
    Unit(Unit),
    Ago,
}

pub(super) fn interval_word(word: &str) -> Option<Word> {
    use Unit::*;
    let unit = match keyword(word) {
        "ago" => return Some(Word::Ago),
        "c" | "cent" | "centuries" | "century" => Century,
        "d" | "day" | "days" => Day,
        "dec" | "decade" | "decades" | "decs" => Decade,
        "h" | "hour" | "hours" | "hr" | "hrs" => Hour,
        "m" | "min" | "mins" | "minute" | "minutes" => Minute,
        "microsecon" | "us" | "usec" | "usecond" | "useconds" | "usecs" => Microsecond,
        "mil" | "millennia" | "millennium" | "mils" => Millennium,
        "millisecon" | "ms" | "msec" | "msecond" | "mseconds" | "msecs" => Millisecond,
        "mon" | "mons" | "month" | "months" => Month,
        "qtr" | "quarter" | "timezone" | "timezone_h" | "timezone_m" => Unusable,
        "s" | "sec" | "second" | "seconds" | "secs" => Second,
        "w" | "week" | "weeks" => Week,
        "y" | "year" | "years" | "yr" | "yrs" => Year,
        _ => return None,
    };
    Some(Word::Unit(unit))
}
