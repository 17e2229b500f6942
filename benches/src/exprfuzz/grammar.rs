//! The operators and functions the generator draws from, as data: for each
//! result type, templates with one `{}` per argument and what each
//! argument must be. Comparisons, CASE, COALESCE, NULLIF, GREATEST/LEAST,
//! IN and casts fit every type and are built in `super::gen`.

use super::types::Ty;
use Ty::*;

/// What an argument of a template must be.
#[derive(Debug, Clone, Copy)]
pub enum A {
    /// An expression of this type.
    T(Ty),
    /// An expression of one of these types.
    OneOf(&'static [Ty]),
    /// A small length (a literal, or an integer expression `% 20`), so
    /// that lpad/repeat never ask either server for gigabytes.
    Len,
    /// One of these words, as written.
    Word(&'static [&'static str]),
}

pub type Production = (&'static str, &'static [A]);

const INTS: &[Ty] = &[SmallInt, Int, BigInt];
const SMALL_INT: &[Ty] = &[SmallInt, Int];
const EXACT: &[Ty] = &[SmallInt, Int, BigInt, Numeric];
const FLOATS: &[Ty] = &[Real, Double, Int];
const STRINGS: &[Ty] = &[Text, Char];
const TIMES: &[Ty] = &[Date, Timestamp, Timestamptz];
const EXTRACTABLE: &[Ty] = &[Date, Timestamp, Timestamptz, Interval];

pub const FIELDS: &[&str] = &[
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "epoch",
    "dow",
    "doy",
    "isodow",
    "week",
    "quarter",
    "decade",
    "century",
    "millennium",
    "julian",
    "isoyear",
    "microseconds",
    "milliseconds",
    "timezone",
];
const QUOTED_FIELDS: &[&str] = &[
    "'year'",
    "'month'",
    "'day'",
    "'hour'",
    "'minute'",
    "'second'",
    "'epoch'",
    "'dow'",
    "'doy'",
    "'week'",
    "'quarter'",
    "'century'",
    "'microseconds'",
];
const TRUNC_UNITS: &[&str] = &[
    "'microseconds'",
    "'milliseconds'",
    "'second'",
    "'minute'",
    "'hour'",
    "'day'",
    "'week'",
    "'month'",
    "'quarter'",
    "'year'",
    "'decade'",
    "'century'",
    "'millennium'",
];
const ZONES: &[&str] = &[
    "'UTC'",
    "'America/New_York'",
    "'Europe/Paris'",
    "'Asia/Kathmandu'",
    "'Australia/Lord_Howe'",
    "'UTC+5'",
    "'+05:30'",
];
const PATTERNS: &[&str] = &[
    "'a%'", "'%b%'", "'_b%'", "'%'", "''", "'ab  '", "'a\\%%'", "'日%'", "'%C'", "'a_c'",
];

const fn t(ty: Ty) -> A {
    A::T(ty)
}

pub const SMALLINT: &[Production] = &[
    ("({} + {})", &[t(SmallInt), t(SmallInt)]),
    ("({} - {})", &[t(SmallInt), t(SmallInt)]),
    ("({} * {})", &[t(SmallInt), t(SmallInt)]),
    ("({} / {})", &[t(SmallInt), t(SmallInt)]),
    ("({} % {})", &[t(SmallInt), t(SmallInt)]),
    ("(- {})", &[t(SmallInt)]),
    ("abs({})", &[t(SmallInt)]),
    ("mod({}, {})", &[t(SmallInt), t(SmallInt)]),
];

pub const INTEGER: &[Production] = &[
    ("({} + {})", &[t(Int), A::OneOf(SMALL_INT)]),
    ("({} - {})", &[A::OneOf(SMALL_INT), t(Int)]),
    ("({} * {})", &[t(Int), A::OneOf(SMALL_INT)]),
    ("({} / {})", &[t(Int), A::OneOf(SMALL_INT)]),
    ("({} % {})", &[t(Int), A::OneOf(SMALL_INT)]),
    ("(- {})", &[t(Int)]),
    ("abs({})", &[t(Int)]),
    ("mod({}, {})", &[t(Int), t(Int)]),
    ("({} & {})", &[t(Int), t(Int)]),
    ("length({})", &[A::OneOf(STRINGS)]),
    ("char_length({})", &[t(Text)]),
    ("octet_length({})", &[A::OneOf(STRINGS)]),
    ("position({} in {})", &[t(Text), t(Text)]),
    ("strpos({}, {})", &[t(Text), t(Text)]),
    ("ascii({})", &[t(Text)]),
    ("({} - {})", &[t(Date), t(Date)]),
];

pub const BIGINT: &[Production] = &[
    ("({} + {})", &[t(BigInt), A::OneOf(INTS)]),
    ("({} - {})", &[A::OneOf(INTS), t(BigInt)]),
    ("({} * {})", &[t(BigInt), A::OneOf(INTS)]),
    ("({} / {})", &[t(BigInt), A::OneOf(INTS)]),
    ("({} % {})", &[t(BigInt), A::OneOf(INTS)]),
    ("(- {})", &[t(BigInt)]),
    ("abs({})", &[t(BigInt)]),
    ("mod({}, {})", &[t(BigInt), t(BigInt)]),
];

pub const NUMERIC: &[Production] = &[
    ("({} + {})", &[t(Numeric), A::OneOf(EXACT)]),
    ("({} - {})", &[A::OneOf(EXACT), t(Numeric)]),
    ("({} * {})", &[t(Numeric), A::OneOf(EXACT)]),
    ("({} / {})", &[A::OneOf(EXACT), t(Numeric)]),
    ("({} % {})", &[t(Numeric), A::OneOf(EXACT)]),
    ("({} ^ {})", &[t(Numeric), A::OneOf(EXACT)]),
    ("(- {})", &[t(Numeric)]),
    ("abs({})", &[t(Numeric)]),
    ("round({})", &[t(Numeric)]),
    ("round({}, {})", &[t(Numeric), A::OneOf(SMALL_INT)]),
    ("trunc({})", &[t(Numeric)]),
    ("trunc({}, {})", &[t(Numeric), A::OneOf(SMALL_INT)]),
    ("floor({})", &[t(Numeric)]),
    ("ceil({})", &[t(Numeric)]),
    ("sign({})", &[t(Numeric)]),
    ("mod({}, {})", &[t(Numeric), A::OneOf(EXACT)]),
    ("power({}, {})", &[t(Numeric), A::OneOf(EXACT)]),
    ("sqrt({})", &[t(Numeric)]),
    ("div({}, {})", &[t(Numeric), t(Numeric)]),
    ("scale({})", &[t(Numeric)]),
    ("log({})", &[t(Numeric)]),
    (
        "extract({} from {})",
        &[A::Word(FIELDS), A::OneOf(EXTRACTABLE)],
    ),
];

pub const REAL: &[Production] = &[
    ("({} + {})", &[t(Real), t(Real)]),
    ("({} - {})", &[t(Real), t(Real)]),
    ("({} * {})", &[t(Real), t(Real)]),
    ("({} / {})", &[t(Real), t(Real)]),
    ("(- {})", &[t(Real)]),
    ("abs({})", &[t(Real)]),
];

pub const DOUBLE: &[Production] = &[
    ("({} + {})", &[t(Double), A::OneOf(FLOATS)]),
    ("({} - {})", &[A::OneOf(FLOATS), t(Double)]),
    ("({} * {})", &[t(Double), A::OneOf(FLOATS)]),
    ("({} / {})", &[t(Double), A::OneOf(FLOATS)]),
    ("({} ^ {})", &[t(Double), t(Double)]),
    ("(- {})", &[t(Double)]),
    ("abs({})", &[t(Double)]),
    ("round({})", &[t(Double)]),
    ("trunc({})", &[t(Double)]),
    ("floor({})", &[t(Double)]),
    ("ceil({})", &[t(Double)]),
    ("sign({})", &[t(Double)]),
    ("power({}, {})", &[t(Double), t(Double)]),
    ("sqrt({})", &[t(Double)]),
    ("cbrt({})", &[t(Double)]),
    ("exp({})", &[t(Double)]),
    ("ln({})", &[t(Double)]),
    (
        "date_part({}, {})",
        &[A::Word(QUOTED_FIELDS), A::OneOf(EXTRACTABLE)],
    ),
];

pub const TEXT: &[Production] = &[
    ("({} || {})", &[A::OneOf(STRINGS), A::OneOf(STRINGS)]),
    (
        "({} || {})",
        &[t(Text), A::OneOf(&[Int, Numeric, Double, Date, Bool])],
    ),
    ("upper({})", &[t(Text)]),
    ("lower({})", &[A::OneOf(STRINGS)]),
    ("initcap({})", &[t(Text)]),
    ("substr({}, {})", &[t(Text), t(Int)]),
    ("substr({}, {}, {})", &[t(Text), t(Int), t(Int)]),
    ("substring({} from {} for {})", &[t(Text), t(Int), t(Int)]),
    ("trim({})", &[A::OneOf(STRINGS)]),
    ("trim(both {} from {})", &[t(Text), t(Text)]),
    ("ltrim({})", &[t(Text)]),
    ("rtrim({})", &[A::OneOf(STRINGS)]),
    ("btrim({}, {})", &[t(Text), t(Text)]),
    ("lpad({}, {}, {})", &[t(Text), A::Len, t(Text)]),
    ("rpad({}, {})", &[A::OneOf(STRINGS), A::Len]),
    ("replace({}, {}, {})", &[t(Text), t(Text), t(Text)]),
    ("left({}, {})", &[t(Text), t(Int)]),
    ("right({}, {})", &[t(Text), t(Int)]),
    ("repeat({}, {})", &[t(Text), A::Len]),
    ("reverse({})", &[t(Text)]),
    (
        "concat({}, {})",
        &[A::OneOf(&[Text, Int, Numeric, Date, Bool]), t(Text)],
    ),
    (
        "concat({}, {}, {})",
        &[t(Text), A::OneOf(&[Char, Double, Timestamp]), t(Int)],
    ),
    (
        "concat_ws({}, {}, {})",
        &[t(Text), t(Text), A::OneOf(&[Int, Text])],
    ),
    ("split_part({}, {}, {})", &[t(Text), t(Text), t(Int)]),
    ("translate({}, {}, {})", &[t(Text), t(Text), t(Text)]),
    ("to_hex({})", &[A::OneOf(&[Int, BigInt])]),
    ("md5({})", &[t(Text)]),
];

pub const BOOL: &[Production] = &[
    ("({} AND {})", &[t(Bool), t(Bool)]),
    ("({} OR {})", &[t(Bool), t(Bool)]),
    ("(NOT {})", &[t(Bool)]),
    ("({} IS TRUE)", &[t(Bool)]),
    ("({} IS NOT FALSE)", &[t(Bool)]),
    ("({} IS UNKNOWN)", &[t(Bool)]),
    ("({} LIKE {})", &[A::OneOf(STRINGS), A::Word(PATTERNS)]),
    ("({} NOT LIKE {})", &[t(Text), A::Word(PATTERNS)]),
    ("({} ILIKE {})", &[t(Text), A::Word(PATTERNS)]),
    ("({} LIKE {})", &[t(Text), t(Text)]),
    ("starts_with({}, {})", &[t(Text), t(Text)]),
];

pub const DATE: &[Production] = &[
    ("({} + {})", &[t(Date), t(Int)]),
    ("({} - {})", &[t(Date), t(Int)]),
    ("({} + {})", &[A::OneOf(SMALL_INT), t(Date)]),
    ("make_date({}, {}, {})", &[t(Int), t(Int), t(Int)]),
];

pub const TIMESTAMP: &[Production] = &[
    ("({} + {})", &[A::OneOf(&[Date, Timestamp]), t(Interval)]),
    ("({} - {})", &[A::OneOf(&[Date, Timestamp]), t(Interval)]),
    ("date_trunc({}, {})", &[A::Word(TRUNC_UNITS), t(Timestamp)]),
    ("({} AT TIME ZONE {})", &[t(Timestamptz), A::Word(ZONES)]),
];

pub const TIMESTAMPTZ: &[Production] = &[
    ("({} + {})", &[t(Timestamptz), t(Interval)]),
    ("({} - {})", &[t(Timestamptz), t(Interval)]),
    (
        "date_trunc({}, {})",
        &[A::Word(TRUNC_UNITS), t(Timestamptz)],
    ),
    ("({} AT TIME ZONE {})", &[t(Timestamp), A::Word(ZONES)]),
    ("to_timestamp({})", &[t(Double)]),
];

pub const INTERVAL: &[Production] = &[
    ("({} - {})", &[t(Timestamp), t(Timestamp)]),
    ("({} - {})", &[t(Timestamptz), t(Timestamptz)]),
    ("({} + {})", &[t(Interval), t(Interval)]),
    ("({} - {})", &[t(Interval), t(Interval)]),
    ("({} * {})", &[t(Interval), A::OneOf(&[Int, Double])]),
    ("({} / {})", &[t(Interval), A::OneOf(&[Int, Double])]),
    ("({} * INTERVAL '1 day')", &[t(Int)]),
    ("(- {})", &[t(Interval)]),
    ("age({}, {})", &[t(Timestamp), t(Timestamp)]),
    ("justify_days({})", &[t(Interval)]),
    ("justify_hours({})", &[t(Interval)]),
    ("justify_interval({})", &[t(Interval)]),
];

/// The type-specific productions of `ty`.
pub fn productions(ty: Ty) -> &'static [Production] {
    match ty {
        SmallInt => SMALLINT,
        Int => INTEGER,
        BigInt => BIGINT,
        Numeric => NUMERIC,
        Real => REAL,
        Double => DOUBLE,
        Text => TEXT,
        Char => &[],
        Bool => BOOL,
        Date => DATE,
        Timestamp => TIMESTAMP,
        Timestamptz => TIMESTAMPTZ,
        Interval => INTERVAL,
    }
}

/// Times that compare with each other (for BETWEEN and comparisons).
pub fn comparable_types(ty: Ty) -> &'static [Ty] {
    if ty.is_number() {
        &[SmallInt, Int, BigInt, Numeric, Real, Double]
    } else if ty.is_string() {
        STRINGS
    } else if ty.is_datetime() {
        TIMES
    } else if ty == Bool {
        &[Bool]
    } else {
        &[Interval]
    }
}
