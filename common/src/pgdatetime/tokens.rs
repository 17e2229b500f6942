//! Splitting date/time text into fields (PostgreSQL's `ParseDateTime`),
//! shared by `date`, `timestamp` and `interval` input; each splits into a
//! buffer of its own size, so each refuses text of a different length.

use super::keywords::is_date_keyword;

/// Text the split refuses (PostgreSQL's `DTERR_BAD_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// What a field looks like, which decides how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
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
pub struct Field {
    pub text: String,
    pub kind: FieldKind,
}

/// At most 25 fields; more is refused as badly formed.
const MAX_FIELDS: usize = 25;

struct Splitter<'a> {
    src: &'a [u8],
    buf_len: usize,
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
    fn take(&mut self, lower: bool) -> Result<(), Malformed> {
        if self.used + 1 >= self.buf_len {
            return Err(Malformed);
        }
        self.used += 1;
        let c = self.peek();
        self.cur
            .push(char::from(if lower { c.to_ascii_lowercase() } else { c }));
        self.pos += 1;
        Ok(())
    }

    fn take_while(&mut self, lower: bool, keep: impl Fn(u8) -> bool) -> Result<(), Malformed> {
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
    fn digits_first(&mut self) -> Result<FieldKind, Malformed> {
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
    fn letters_first(&mut self) -> Result<FieldKind, Malformed> {
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
    fn sign_first(&mut self) -> Result<FieldKind, Malformed> {
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
            Err(Malformed)
        }
    }
}

/// C's `isspace` in the C locale.
pub fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Splits `src` into fields as PostgreSQL's `ParseDateTime` does, into a
/// buffer of `buf_len` bytes (each field ends with a NUL there). Other
/// punctuation only separates fields; control and non-ASCII characters
/// are refused.
pub fn split_fields(src: &[u8], buf_len: usize) -> Result<Vec<Field>, Malformed> {
    let mut sp = Splitter {
        src,
        buf_len,
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
            return Err(Malformed);
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
            return Err(Malformed);
        };
        sp.finish(kind);
    }
    Ok(sp.fields)
}
