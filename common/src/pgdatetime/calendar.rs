//! Julian day numbers and the final check of a date's parts
//! (PostgreSQL's `date2j`, `j2date` and `ValidateDate`), with
//! PostgreSQL's wrapping integer arithmetic.

use super::{DtErr, Tm};

/// The Julian day of a proleptic Gregorian date (year 0 is 1 BC).
pub(super) fn date2j(year: i32, month: i32, day: i32) -> i32 {
    let (m, y) = if month > 2 {
        (month.wrapping_add(1), year.wrapping_add(4800))
    } else {
        (month.wrapping_add(13), year.wrapping_add(4799))
    };
    let century = y / 100;
    let mut julian = y.wrapping_mul(365).wrapping_sub(32167);
    julian = julian
        .wrapping_add(y / 4)
        .wrapping_sub(century)
        .wrapping_add(century / 4);
    julian
        .wrapping_add(7834_i32.wrapping_mul(m) / 256)
        .wrapping_add(day)
}

/// The date of a Julian day: `(year, month, day)`.
pub(super) fn j2date(jd: i32) -> (i32, i32, i32) {
    let mut julian = (jd as u32).wrapping_add(32044);
    let mut quad = julian / 146_097;
    let extra = julian
        .wrapping_sub(quad.wrapping_mul(146_097))
        .wrapping_mul(4)
        .wrapping_add(3);
    julian = julian
        .wrapping_add(60)
        .wrapping_add(quad.wrapping_mul(3))
        .wrapping_add(extra / 146_097);
    quad = julian / 1461;
    julian = julian.wrapping_sub(quad.wrapping_mul(1461));
    let mut y = (julian.wrapping_mul(4) / 1461) as i32;
    julian = if y != 0 {
        julian.wrapping_add(305) % 365
    } else {
        julian.wrapping_add(306) % 366
    }
    .wrapping_add(123);
    y = y.wrapping_add(quad.wrapping_mul(4) as i32);
    let year = y.wrapping_sub(4800);
    let q = julian.wrapping_mul(2141) / 65536;
    let day = julian.wrapping_sub(7834 * q / 256) as i32;
    let month = ((q + 10) % 12 + 1) as i32;
    (year, month, day)
}

/// Whether Julian day arithmetic is safe for the date (a slightly wider
/// range than the types allow, checked to the month).
pub(super) fn is_valid_julian(year: i32, month: i32, _day: i32) -> bool {
    (year > -4713 || (year == -4713 && month >= 11))
        && (year < 5_874_898 || (year == 5_874_898 && month < 6))
}

fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

const DAYS_IN_MONTH: [i32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/// Which date parts the text gave, besides the year, month and day.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct DateFlags {
    pub has_year: bool,
    pub has_month: bool,
    pub has_day: bool,
    pub has_doy: bool,
    pub julian: bool,
    pub two_digit_year: bool,
    pub bc: bool,
}

/// Fixes up the year (BC, two-digit years), resolves a day of the year
/// and checks the month and day (PostgreSQL's `ValidateDate`).
pub(super) fn validate_date(tm: &mut Tm, f: DateFlags) -> Result<(), DtErr> {
    if f.has_year {
        if f.julian {
            // The Julian day gave the year as it is kept.
        } else if f.bc {
            if tm.year <= 0 {
                return Err(DtErr::FieldOverflow);
            }
            tm.year = -(tm.year - 1);
        } else if f.two_digit_year {
            if tm.year < 0 {
                return Err(DtErr::FieldOverflow);
            }
            if tm.year < 70 {
                tm.year += 2000;
            } else if tm.year < 100 {
                tm.year += 1900;
            }
        } else if tm.year <= 0 {
            return Err(DtErr::FieldOverflow);
        }
    }
    if f.has_doy {
        let jd = date2j(tm.year, 1, 1).wrapping_add(tm.yday).wrapping_sub(1);
        (tm.year, tm.mon, tm.mday) = j2date(jd);
    }
    if f.has_month && !(1..=12).contains(&tm.mon) {
        return Err(DtErr::MdFieldOverflow);
    }
    if f.has_day && !(1..=31).contains(&tm.mday) {
        return Err(DtErr::MdFieldOverflow);
    }
    if f.has_year && f.has_month && f.has_day {
        let mut days = DAYS_IN_MONTH[(tm.mon - 1) as usize];
        if tm.mon == 2 && is_leap(tm.year) {
            days += 1;
        }
        if tm.mday > days {
            return Err(DtErr::FieldOverflow);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn julian_days_round_trip() {
        assert_eq!(date2j(2000, 1, 1), 2_451_545);
        assert_eq!(date2j(1970, 1, 1), 2_440_588);
        assert_eq!(date2j(-4713, 11, 24), 0);
        for jd in [0, 1, 2_451_545, 2_440_588, 109_203_528, 2_147_483_493] {
            let (y, m, d) = j2date(jd);
            assert_eq!(date2j(y, m, d), jd);
        }
    }
}
