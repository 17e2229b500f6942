//! Every expected value here is PostgreSQL 15.18's own answer
//! (`interval_send('<text>'::interval)`, or the SQLSTATE it raised).

use super::*;

/// `(text, months, days, micros)`.
type Case = (&'static str, i32, i32, i64);

/// `(fields, text, Ok((months, days, micros)) or Err(SQLSTATE))`.
type FieldsCase = (Fields, &'static str, Result<(i32, i32, i64), &'static str>);

fn check_ok(cases: &[Case]) {
    for &(text, months, days, micros) in cases {
        let want = PgInterval {
            months,
            days,
            micros,
        };
        match interval_in(text) {
            Ok(got) => assert_eq!(got, want, "{text:?}"),
            Err(e) => panic!("{text:?}: {e}"),
        }
    }
}

fn check_err(cases: &[(&str, &str)]) {
    for &(text, code) in cases {
        match interval_in(text) {
            Err(Error::Sql { state, .. }) => assert_eq!(state.0, code, "{text:?}"),
            other => panic!("{text:?}: expected {code}, got {other:?}"),
        }
    }
}

#[test]
fn postgres_style_words_and_signs() {
    check_ok(&[
        ("1 day", 0, 1, 0),
        ("@ 1 minute", 0, 0, 60000000),
        ("5 hour", 0, 0, 18000000000),
        ("-10 day", 0, -10, 0),
        ("-1 hours", 0, 0, -3600000000),
        ("1 day ago ago", 0, -1, 0),
        ("@ 3 hours ago", 0, 0, -10800000000),
        ("10mon", 10, 0, 0),
        ("1d2h", 0, 1, 7200000000),
        ("1y2m", 12, 0, 120000000),
        ("1D", 0, 1, 0),
        ("+1 day -2 hours", 0, 1, -7200000000),
        ("- 1", 0, 0, -1000000),
    ]);
    check_err(&[
        ("1 day 1 day", "22007"),
        ("1 ago", "22007"),
        ("1day2hours", "22007"),
    ]);
}

#[test]
fn every_unit_spelling() {
    check_ok(&[
        ("1 microsecond", 0, 0, 1),
        ("1 usec", 0, 0, 1),
        ("1 us", 0, 0, 1),
        ("2 microsecondsxyz", 0, 0, 2),
        ("1 millisecond", 0, 0, 1000),
        ("1 ms", 0, 0, 1000),
        ("1 msec", 0, 0, 1000),
        ("1 sec", 0, 0, 1000000),
        ("1 s", 0, 0, 1000000),
        ("1 min", 0, 0, 60000000),
        ("1 m", 0, 0, 60000000),
        ("1 hr", 0, 0, 3600000000),
        ("1 h", 0, 0, 3600000000),
        ("1 d", 0, 1, 0),
        ("1 w", 0, 7, 0),
        ("1 mon", 1, 0, 0),
        ("1 yr", 12, 0, 0),
        ("1 y", 12, 0, 0),
        ("1 dec", 120, 0, 0),
        ("1 decade", 120, 0, 0),
        ("1 c", 1200, 0, 0),
        ("1 cent", 1200, 0, 0),
        ("1 century", 1200, 0, 0),
        ("1 mil", 12000, 0, 0),
        ("1 millennia", 12000, 0, 0),
    ]);
    check_err(&[("1 qtr", "22007"), ("1 timezone", "22007")]);
}

#[test]
fn fractions_spill_into_smaller_units() {
    check_ok(&[
        ("1.5 months", 1, 15, 0),
        ("0.5 years", 6, 0, 0),
        ("0.04 years", 0, 0, 0),
        ("1.5 weeks", 0, 10, 43200000000),
        ("0.1 days", 0, 0, 8640000000),
        ("1.123456789 seconds", 0, 0, 1123457),
        ("1.5 us", 0, 0, 1),
        ("2.5 us", 0, 0, 2),
        ("-1.5 us", 0, 0, -1),
        ("0.0000005 seconds", 0, 0, 0),
        ("0.0000015 seconds", 0, 0, 1),
        ("0.3333333 months", 0, 9, 86399913600),
        ("0.01 decade", 1, 0, 0),
        ("1.5 days ago", 0, -1, -43200000000),
    ]);
}

#[test]
fn times_of_day() {
    check_ok(&[
        ("1:2:3.9999995", 0, 0, 3724000000),
        ("1:2:3.9999994", 0, 0, 3723999999),
        ("12:34:56.7890125", 0, 0, 45296789012),
        ("1:2.5", 0, 0, 62500000),
        ("1:2:60", 0, 0, 3780000000),
        ("1::", 0, 0, 3600000000),
        ("1:", 0, 0, 3600000000),
        ("-1:2.5", 0, 0, -62500000),
    ]);
    check_err(&[
        ("100:30.5", "22015"),
        ("1:60", "22015"),
        ("+1:60", "22007"),
        ("1:2:3:4", "22007"),
    ]);
}

#[test]
fn sql_standard_forms() {
    check_ok(&[
        ("1-2", 14, 0, 0),
        ("-1-11", -23, 0, 0),
        ("1-", 12, 0, 0),
        ("1-2 ago", -14, 0, 0),
        ("1 2:03:04", 0, 1, 7384000000),
        ("-1 +02:03", 0, -1, 7380000000),
        ("-1 2:03:04", 0, -1, 7384000000),
        ("1 2 hours", 0, 1, 7200000000),
        // The time replaces the half day, as in PostgreSQL.
        ("01:02 2.5 days", 0, 2, 3720000000),
    ]);
    check_err(&[
        ("1-12", "22015"),
        ("1--2", "22015"),
        ("1-13-5", "22015"),
        ("1-5-5", "22007"),
        ("123 11", "22007"),
        ("1 2 3", "22007"),
        ("1 second 01:02", "22007"),
    ]);
}

#[test]
fn bare_numbers() {
    check_ok(&[(".", 0, 0, 0), ("1.", 0, 0, 1000000), (".5", 0, 0, 500000)]);
    check_err(&[
        ("-.5", "22007"),
        ("1.5.5", "22007"),
        ("1/2", "22007"),
        ("9223372036854775807", "22015"),
        ("99999999999999999999", "22015"),
    ]);
}

#[test]
fn iso_8601() {
    check_ok(&[
        ("P1Y2M3DT4H5M6.5S", 14, 3, 14706500000),
        ("PT1.5H", 0, 0, 5400000000),
        ("P1W", 0, 7, 0),
        ("P-1Y-2M-3DT-4H-5M-6S", -14, -3, -14706000000),
        ("P0001-02-03T04:05:06", 14, 3, 14706000000),
        ("P00010203T040506", 14, 3, 14706000000),
        ("PT010203.5", 0, 0, 3723000000),
        ("P1", 12, 0, 0),
        ("PT", 0, 0, 0),
        ("P1e2D", 0, 100, 0),
        ("P0x10W", 0, 112, 0),
        ("P1DT2:30:15.5", 0, 1, 9015500000),
        ("P1Y1Y", 24, 0, 0),
    ]);
    check_err(&[
        ("P", "22007"),
        ("P-inf", "22015"),
        ("P1e400D", "22007"),
        ("p1d", "22007"),
        ("P1D1Y-2", "22007"),
    ]);
}

#[test]
fn junk_is_refused() {
    check_err(&[
        ("", "22007"),
        ("   ", "22007"),
        ("1 day -", "22007"),
        ("1 day \u{e9}", "22007"),
        ("today", "22007"),
        ("1 day 1.5 seconds 1 ms", "22007"),
        (
            "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26",
            "22007",
        ),
    ]);
}

#[test]
fn range_limits() {
    check_ok(&[
        ("2147483647 days", 0, 2147483647, 0),
        ("178956970 years 7 months", 2147483647, 0, 0),
        (
            "9223372036854775807 microseconds",
            0,
            0,
            9223372036854775807,
        ),
        ("2562047788:00:54.775807", 0, 0, 9223372036854775807),
        ("9223372036.854775807 seconds", 0, 0, 9223372036854776),
    ]);
    check_err(&[
        ("2147483648 days", "22015"),
        ("-2147483649 months", "22015"),
        ("-2147483648 days ago", "22015"),
        ("178956970 years 8 months", "22008"),
        ("306783379 weeks", "22015"),
        ("2147483647 days 0.5 weeks", "22015"),
        ("9223372036854775807 microseconds 1 second", "22015"),
        ("-9223372036854775808 us ago", "22015"),
        ("2562047788:00:54.775808", "22015"),
        ("+2562047788:00:54.775808", "22007"),
    ]);
}

#[test]
fn messages_are_postgres_messages() {
    let message = |text: &str| match interval_in(text) {
        Err(Error::Sql { message, .. }) => message,
        other => panic!("{text:?}: {other:?}"),
    };
    assert_eq!(
        message("1 fortnight"),
        "invalid input syntax for type interval: \"1 fortnight\""
    );
    assert_eq!(
        message("2147483648 days"),
        "interval field value out of range: \"2147483648 days\""
    );
    assert_eq!(message("178956971 years"), "interval out of range");
}

#[test]
fn field_restrictions() {
    use Fields::*;
    let cases: &[FieldsCase] = &[
        (MinuteToSecond, "1:30", Ok((0, 0, 90000000))),
        (HourToSecond, "1:30", Ok((0, 0, 5400000000))),
        (MinuteToSecond, "1:30:15.5", Ok((0, 0, 5415500000))),
        (Day, "1 2", Err("22007")),
        (Day, "5", Ok((0, 5, 0))),
        (Hour, "5", Ok((0, 0, 18000000000))),
        (HourToMinute, "5", Ok((0, 0, 300000000))),
        (Year, "5", Ok((60, 0, 0))),
        (YearToMonth, "5", Ok((5, 0, 0))),
        (Year, "1 year 11 months 3 days", Ok((12, 0, 0))),
        (Day, "1 day 10:00", Ok((0, 1, 0))),
        (Hour, "1 day 10:59:59", Ok((0, 1, 36000000000))),
        (Minute, "10:59:59.9", Ok((0, 0, 39540000000))),
        (Second, "10:59:59.9", Ok((0, 0, 39599900000))),
        (DayToHour, "2 3", Ok((0, 2, 10800000000))),
        (DayToMinute, "2 3", Err("22007")),
        (Year, "P1Y11M", Ok((12, 0, 0))),
        (MinuteToSecond, "100:30", Err("22015")),
    ];
    for (range, text, want) in cases {
        let got = interval_in_fields(text, *range);
        match (want, got) {
            (Ok((months, days, micros)), Ok(i)) => {
                assert_eq!(
                    (i.months, i.days, i.micros),
                    (*months, *days, *micros),
                    "{text}"
                )
            }
            (Err(code), Err(Error::Sql { state, .. })) => assert_eq!(state.0, *code, "{text}"),
            (want, got) => panic!("{range:?} {text:?}: want {want:?}, got {got:?}"),
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// Any text gives an interval or an error, never a panic.
    #[test]
    fn any_text_is_answered(s in "[0-9PTYMWDHSex .:+@,/-]{0,40}|\\PC{0,40}") {
        let _ = interval_in(&s);
        let _ = interval_in_fields(&s, Fields::MinuteToSecond);
    }
}
