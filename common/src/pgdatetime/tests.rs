//! Every expected value here is PostgreSQL 15.18's own answer, with
//! DateStyle `ISO, MDY`: `D <days since 2000-01-01>` from
//! `'<text>'::date - date '2000-01-01'`, `T <microseconds>` from
//! `timestamp_send('<text>'::timestamp)`, or `E <SQLSTATE> <message>`.

use super::*;

/// `(text, as a date, as a timestamp)`.
type Case = (&'static str, &'static str, &'static str);

fn show<T>(r: Result<T, Error>, ok: impl Fn(T) -> String) -> String {
    match r {
        Ok(v) => ok(v),
        Err(Error::Sql { state, message }) => format!("E {} {message}", state.0),
        Err(e) => format!("unexpected {e:?}"),
    }
}

fn show_date(text: &str, now: Option<i64>) -> String {
    show(date_in_at(text, now), |d| match d {
        PgDate::Days(n) => format!("D {n}"),
        PgDate::Infinity => "D infinity".into(),
        PgDate::NegInfinity => "D -infinity".into(),
    })
}

fn show_timestamp(text: &str, now: Option<i64>) -> String {
    show(timestamp_in_at(text, now), |t| match t {
        PgTimestamp::Micros(n) => format!("T {n}"),
        PgTimestamp::Infinity => "T infinity".into(),
        PgTimestamp::NegInfinity => "T -infinity".into(),
    })
}

fn check(cases: &[Case]) {
    for &(text, date, timestamp) in cases {
        assert_eq!(show_date(text, None), date, "{text:?} as a date");
        assert_eq!(
            show_timestamp(text, None),
            timestamp,
            "{text:?} as a timestamp"
        );
    }
}

#[test]
fn date_formats() {
    check(&[
        ("1999-01-08", "D -358", "T -30931200000000"),
        ("January 8, 1999", "D -358", "T -30931200000000"),
        ("1999-Jan-08", "D -358", "T -30931200000000"),
        ("08-Jan-1999", "D -358", "T -30931200000000"),
        ("Jan-08-1999", "D -358", "T -30931200000000"),
        ("1/8/1999", "D -358", "T -30931200000000"),
        ("1/18/1999", "D -348", "T -30067200000000"),
        ("19990108", "D -358", "T -30931200000000"),
        ("990108", "D -358", "T -30931200000000"),
        ("1999.008", "D -358", "T -30931200000000"),
        ("J2451187", "D -358", "T -30931200000000"),
        ("1999-01-08 BC", "D -1460232", "T -126164044800000000"),
        (
            "99-01-08",
            "E 22008 date/time field value out of range: \"99-01-08\"",
            "E 22008 date/time field value out of range: \"99-01-08\"",
        ),
        ("08-01-99", "D -153", "T -13219200000000"),
        ("01/02/03", "D 1097", "T 94780800000000"),
        ("January 8, 99 BC", "D -766272", "T -66205900800000000"),
        (
            "Friday 1999-01-08",
            "E 22007 invalid input syntax for type date: \"Friday 1999-01-08\"",
            "E 22007 invalid input syntax for type timestamp: \"Friday 1999-01-08\"",
        ),
        ("1999-01-08 04:05:06", "D -358", "T -30916494000000"),
        ("epoch", "D -10957", "T -946684800000000"),
        ("2000-01-01 America/New_York", "D 0", "T 0"),
        ("4713-01-01 BC", "D -2451507", "T -211810204800000000"),
        ("4714-11-24 BC", "D -2451545", "T -211813488000000000"),
        (
            "5874897-12-31",
            "D 2145031948",
            "E 22008 timestamp out of range: \"5874897-12-31\"",
        ),
        ("0099-01-08", "D -694318", "T -59989075200000000"),
        ("1-8-0069", "D -705275", "T -60935760000000000"),
        ("Jan 8 69", "D 25210", "T 2178144000000000"),
        ("y1999m01d08", "D -358", "T -30931200000000"),
        ("1999-01-08 24:00", "D -358", "T -30844800000000"),
        ("jan08-1999", "D -358", "T -30931200000000"),
        ("at 1999-01-08 on", "D -358", "T -30931200000000"),
    ]);
}

#[test]
fn timestamp_formats() {
    check(&[
        ("1999-01-08 04:05:06", "D -358", "T -30916494000000"),
        ("1999-01-08 04:05:06.789", "D -358", "T -30916493211000"),
        ("1999-01-08T04:05:06", "D -358", "T -30916494000000"),
        ("1999-01-08 04:05:06.1234565", "D -358", "T -30916493876544"),
        ("1999-01-08 04:05:06.1234575", "D -358", "T -30916493876542"),
        ("1999-01-08 04:05:06.9999995", "D -358", "T -30916493000000"),
        ("1999-01-08 23:59:59.9999999", "D -358", "T -30844800000000"),
        ("1999-01-08 24:00:00", "D -358", "T -30844800000000"),
        ("1999-01-08 23:59:60", "D -358", "T -30844800000000"),
        ("2000-01-01 00:00:00+05", "D 0", "T 0"),
        ("2000-01-01 00:00:00 PST", "D 0", "T 0"),
        ("2000-01-01 12:00 am", "D 0", "T 0"),
        ("2000-01-01 12:00 pm", "D 0", "T 43200000000"),
        ("2000-01-01 1:00 PM", "D 0", "T 46800000000"),
        ("1999-01-08 allballs", "D -358", "T -30931200000000"),
        (
            "allballs 1999-01-08",
            "E 22007 invalid input syntax for type date: \"allballs 1999-01-08\"",
            "E 22007 invalid input syntax for type timestamp: \"allballs 1999-01-08\"",
        ),
        ("epoch", "D -10957", "T -946684800000000"),
        ("19990108 040506", "D -358", "T -30916494000000"),
        ("19990108T040506.5", "D -358", "T -30916493500000"),
        ("20011225T040506.789-07", "D 724", "T 62568306789000"),
        ("2001-12-25 040506-07", "D 724", "T 62568306000000"),
        ("J2451187.5", "D -358", "T -30888000000000"),
        ("J2451187 12:00", "D -358", "T -30888000000000"),
        ("julian 2451187", "D -358", "T -30931200000000"),
        ("y2001m02d04h05mm06s07.5", "D 400", "T 34578367500000"),
        ("Jan 8 1999 12:00", "D -358", "T -30888000000000"),
        (
            "Jan 8 040506 1999",
            "E 22007 invalid input syntax for type date: \"Jan 8 040506 1999\"",
            "E 22007 invalid input syntax for type timestamp: \"Jan 8 040506 1999\"",
        ),
        ("1999-01-08 04:05 BC", "D -1460232", "T -126164030100000000"),
        (
            "4714-11-24 00:00:00 BC",
            "D -2451545",
            "T -211813488000000000",
        ),
        (
            "294276-12-31 23:59:59.999999",
            "D 106751982",
            "T 9223371331199999999",
        ),
        ("1999-01-08 12:30.5", "D -358", "T -30930449500000"),
        ("1999-01-08 12::30", "D -358", "T -30887970000000"),
        (
            "Sat Jan 08 04:05:06 1999 PST",
            "D -358",
            "T -30916494000000",
        ),
        ("2000-01-01 Europe/Berlin", "D 0", "T 0"),
        ("2000-01-01 utc+3", "D 0", "T 0"),
        ("2000-01-01 est dst", "D 0", "T 0"),
        ("1999-01-08 04:05:06 -8:00", "D -358", "T -30916494000000"),
        ("1999.008 04:05", "D -358", "T -30916500000000"),
    ]);
}

#[test]
fn refused_text() {
    check(&[
        (
            "1997-02-29",
            "E 22008 date/time field value out of range: \"1997-02-29\"",
            "E 22008 date/time field value out of range: \"1997-02-29\"",
        ),
        (
            "1999-13-01",
            "E 22008 date/time field value out of range: \"1999-13-01\"",
            "E 22008 date/time field value out of range: \"1999-13-01\"",
        ),
        (
            "13/01/1999",
            "E 22008 date/time field value out of range: \"13/01/1999\"",
            "E 22008 date/time field value out of range: \"13/01/1999\"",
        ),
        (
            "1999-12-32",
            "E 22008 date/time field value out of range: \"1999-12-32\"",
            "E 22008 date/time field value out of range: \"1999-12-32\"",
        ),
        (
            "0000-01-01",
            "E 22008 date/time field value out of range: \"0000-01-01\"",
            "E 22008 date/time field value out of range: \"0000-01-01\"",
        ),
        (
            "0000-01-01 BC",
            "E 22008 date/time field value out of range: \"0000-01-01 BC\"",
            "E 22008 date/time field value out of range: \"0000-01-01 BC\"",
        ),
        (
            "junk",
            "E 22007 invalid input syntax for type date: \"junk\"",
            "E 22007 invalid input syntax for type timestamp: \"junk\"",
        ),
        (
            "",
            "E 22007 invalid input syntax for type date: \"\"",
            "E 22007 invalid input syntax for type timestamp: \"\"",
        ),
        (
            "1999-01-08 24:00:01",
            "E 22008 date/time field value out of range: \"1999-01-08 24:00:01\"",
            "E 22008 date/time field value out of range: \"1999-01-08 24:00:01\"",
        ),
        (
            "1999-01-08 25:00",
            "E 22008 date/time field value out of range: \"1999-01-08 25:00\"",
            "E 22008 date/time field value out of range: \"1999-01-08 25:00\"",
        ),
        (
            "12:00",
            "E 22007 invalid input syntax for type date: \"12:00\"",
            "E 22007 invalid input syntax for type timestamp: \"12:00\"",
        ),
        (
            "1999-01-08 13:00 pm",
            "E 22008 date/time field value out of range: \"1999-01-08 13:00 pm\"",
            "E 22008 date/time field value out of range: \"1999-01-08 13:00 pm\"",
        ),
        (
            "2000-01-01 +16",
            "E 22009 time zone displacement out of range: \"2000-01-01 +16\"",
            "E 22009 time zone displacement out of range: \"2000-01-01 +16\"",
        ),
        (
            "2000-01-01 +05:60",
            "E 22009 time zone displacement out of range: \"2000-01-01 +05:60\"",
            "E 22009 time zone displacement out of range: \"2000-01-01 +05:60\"",
        ),
        (
            "2000-01-01 Foo/Bar",
            "E 22023 time zone \"foo/bar\" not recognized",
            "E 22023 time zone \"foo/bar\" not recognized",
        ),
        (
            "2000-01-01 pdt dst",
            "E 22007 invalid input syntax for type date: \"2000-01-01 pdt dst\"",
            "E 22007 invalid input syntax for type timestamp: \"2000-01-01 pdt dst\"",
        ),
    ]);
}

#[test]
fn refused_text_more() {
    check(&[
        (
            "2000-01-01 dst",
            "E 22007 invalid input syntax for type date: \"2000-01-01 dst\"",
            "E 22007 invalid input syntax for type timestamp: \"2000-01-01 dst\"",
        ),
        ("1999-01-08 1999", "D -358", "T -30856860000000"),
        (
            "04:05:06 1999-01-08",
            "E 22007 invalid input syntax for type date: \"04:05:06 1999-01-08\"",
            "E 22007 invalid input syntax for type timestamp: \"04:05:06 1999-01-08\"",
        ),
        (
            "Jan Feb 8 1999",
            "E 22007 invalid input syntax for type date: \"Jan Feb 8 1999\"",
            "E 22007 invalid input syntax for type timestamp: \"Jan Feb 8 1999\"",
        ),
        (
            "1999-01-08 monday tuesday",
            "E 22007 invalid input syntax for type date: \"1999-01-08 monday tuesday\"",
            "E 22007 invalid input syntax for type timestamp: \"1999-01-08 monday tuesday\"",
        ),
        (
            "4714-11-23 BC",
            "E 22008 date out of range: \"4714-11-23 BC\"",
            "E 22008 timestamp out of range: \"4714-11-23 BC\"",
        ),
        (
            "5874898-01-01",
            "E 22008 date out of range: \"5874898-01-01\"",
            "E 22008 timestamp out of range: \"5874898-01-01\"",
        ),
        (
            "294277-01-01",
            "D 106751983",
            "E 22008 timestamp out of range: \"294277-01-01\"",
        ),
        (
            "J-1",
            "E 22007 invalid input syntax for type date: \"J-1\"",
            "E 22007 invalid input syntax for type timestamp: \"J-1\"",
        ),
        (
            "2147483648-01-01",
            "E 22008 date/time field value out of range: \"2147483648-01-01\"",
            "E 22008 date/time field value out of range: \"2147483648-01-01\"",
        ),
        (
            "y2001 dow3",
            "E 22007 invalid input syntax for type date: \"y2001 dow3\"",
            "E 22007 invalid input syntax for type timestamp: \"y2001 dow3\"",
        ),
        (
            "1999-01-08 t",
            "E 22007 invalid input syntax for type date: \"1999-01-08 t\"",
            "E 22007 invalid input syntax for type timestamp: \"1999-01-08 t\"",
        ),
        (
            "1999-01-08 12:60",
            "E 22008 date/time field value out of range: \"1999-01-08 12:60\"",
            "E 22008 date/time field value out of range: \"1999-01-08 12:60\"",
        ),
        (
            "infinity epoch",
            "E 22007 invalid input syntax for type date: \"infinity epoch\"",
            "E 22007 invalid input syntax for type timestamp: \"infinity epoch\"",
        ),
        (
            "1999/01/08/x",
            "E 22007 invalid input syntax for type date: \"1999/01/08/x\"",
            "E 22007 invalid input syntax for type timestamp: \"1999/01/08/x\"",
        ),
        (
            "jan/at/08/1999",
            "E 22007 invalid input syntax for type date: \"jan/at/08/1999\"",
            "E 22007 invalid input syntax for type timestamp: \"jan/at/08/1999\"",
        ),
        (
            "\u{e9}",
            "E 22007 invalid input syntax for type date: \"\u{e9}\"",
            "E 22007 invalid input syntax for type timestamp: \"\u{e9}\"",
        ),
    ]);
}

#[test]
fn infinities() {
    check(&[
        ("infinity", "D infinity", "T infinity"),
        ("-infinity", "D -infinity", "T -infinity"),
        (" Infinity ", "D infinity", "T infinity"),
        ("infinity 12:00", "D infinity", "T infinity"),
        (
            "+infinity",
            "E 22007 invalid input syntax for type date: \"+infinity\"",
            "E 22007 invalid input syntax for type timestamp: \"+infinity\"",
        ),
    ]);
}

#[test]
fn text_longer_than_the_split_buffer() {
    // `date_in` splits into 129 bytes, `timestamp_in` into 153; spaces
    // between fields take no room.
    let spaced = format!("1999-01-08{}04:05", " ".repeat(150));
    assert_eq!(show_date(&spaced, None), "D -358");
    assert_eq!(show_timestamp(&spaced, None), "T -30916500000000");
    for (len, date, timestamp) in [
        (128, "22008", "22008"),
        (129, "22007", "22008"),
        (152, "22007", "22008"),
        (153, "22007", "22007"),
    ] {
        let digits = "1".repeat(len);
        assert_eq!(show_date(&digits, None)[2..7], *date, "{len}");
        assert_eq!(show_timestamp(&digits, None)[2..7], *timestamp, "{len}");
    }
}

#[test]
fn words_meaning_the_current_time() {
    let refused = |text: &str| {
        format!(
            "E 0A000 date/time input \"{text}\" depends on the current time \
             (now, today, tomorrow, yesterday)"
        )
    };
    for text in [
        "today",
        "tomorrow",
        "yesterday",
        "now",
        "today 12:00",
        "epoch today",
    ] {
        assert_eq!(show_date(text, None), refused(text));
        assert_eq!(show_timestamp(text, None), refused(text));
    }
    // PostgreSQL's checks come first; a later special word wins.
    assert_eq!(
        show_date("today today", None),
        "E 22007 invalid input syntax for type date: \"today today\""
    );
    assert_eq!(show_date("today epoch", None), "D -10957");
    // 2026-12-06 03:07:17.5 as the transaction's local start.
    let now = Some(9836 * USECS_PER_DAY + 11_237_500_000);
    check_at(
        now,
        &[
            ("today", "D 9836", "T 849830400000000"),
            ("tomorrow", "D 9837", "T 849916800000000"),
            ("yesterday 04:05", "D 9835", "T 849758700000000"),
            ("now", "D 9836", "T 849841637500000"),
            ("today 11:00 pm", "D 9836", "T 849913200000000"),
        ],
    );
}

fn check_at(now: Option<i64>, cases: &[Case]) {
    for &(text, date, timestamp) in cases {
        assert_eq!(show_date(text, now), date, "{text:?} as a date");
        assert_eq!(
            show_timestamp(text, now),
            timestamp,
            "{text:?} as a timestamp"
        );
    }
}

/// Random text never panics, and whatever is refused is refused with a
/// date/time SQLSTATE.
#[test]
fn random_text_never_panics() {
    let alphabet: Vec<char> = "0123456789-/.:+ ,TJjaBCpmZzxyhdsmeoMSKUTC\t_<>@'\"\u{e9}"
        .chars()
        .collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let len = (next() % 40) as usize;
        let text: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let zone = crate::tz::Zone::named("europe/moscow").unwrap_or_default();
        for r in [
            date_in(&text).map(|_| ()),
            timestamp_in(&text).map(|_| ()),
            super::timestamptz_in_at(&text, Some(0), &zone).map(|_| ()),
            super::date_value(&text).map(|_| ()),
            super::timestamp_value(&text).map(|_| ()),
            super::timestamptz_value(&text).map(|_| ()),
        ] {
            if let Err(Error::Sql { state, .. }) = r {
                assert!(
                    ["22007", "22008", "22009", "22023", "0A000"].contains(&state.0),
                    "{text:?}: {state:?}"
                );
            }
        }
    }
}
