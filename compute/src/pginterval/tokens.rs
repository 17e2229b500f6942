//! Splitting interval text into fields (PostgreSQL's `ParseDateTime`,
//! shared with date/time input in `common::pgdatetime::tokens`) and the interval
//! unit words.

use super::DtErr;

pub(super) use common::pgdatetime::tokens::{is_c_space, Field, FieldKind};

/// `interval_in` splits into a buffer of 256 bytes.
const WORKBUF_LEN: usize = 256;
/// Keywords compare on their first ten characters.
const TOKMAXLEN: usize = 10;

/// Splits `src` into fields as PostgreSQL's `ParseDateTime` does.
pub(super) fn split_fields(src: &[u8]) -> Result<Vec<Field>, DtErr> {
    common::pgdatetime::tokens::split_fields(src, WORKBUF_LEN).map_err(|_| DtErr::BadFormat)
}

/// A word as PostgreSQL looks it up: its first ten characters.
fn keyword(word: &str) -> &str {
    word.get(..TOKMAXLEN).unwrap_or(word)
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
