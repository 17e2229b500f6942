//! The SQL types the fuzzer generates expressions of, and the edge values
//! of each: type bounds, zeros, NaN and infinities, padded and multi-byte
//! text, dates at the ends of the calendar and timestamps in the hours a
//! daylight-saving change skips or repeats. Bugs live at these values, so
//! the generator picks them far more often than a uniform draw would.

/// An expression's result type, as far as generation needs to know it.
/// `varchar(n)` is generated as text (PostgreSQL's operators see text);
/// `char(n)` keeps its own type because its comparisons and casts ignore
/// trailing blanks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    SmallInt,
    Int,
    BigInt,
    Numeric,
    Real,
    Double,
    Text,
    Char,
    Bool,
    Date,
    Timestamp,
    Timestamptz,
    Interval,
}

/// Every type, for drawing one at random.
pub const ALL: [Ty; 13] = [
    Ty::SmallInt,
    Ty::Int,
    Ty::BigInt,
    Ty::Numeric,
    Ty::Real,
    Ty::Double,
    Ty::Text,
    Ty::Char,
    Ty::Bool,
    Ty::Date,
    Ty::Timestamp,
    Ty::Timestamptz,
    Ty::Interval,
];

/// The number types, in PostgreSQL's order of promotion.
pub const NUMBERS: [Ty; 6] = [
    Ty::SmallInt,
    Ty::Int,
    Ty::BigInt,
    Ty::Numeric,
    Ty::Real,
    Ty::Double,
];

impl Ty {
    /// The type's name in a cast.
    pub fn sql(self) -> &'static str {
        match self {
            Ty::SmallInt => "smallint",
            Ty::Int => "integer",
            Ty::BigInt => "bigint",
            Ty::Numeric => "numeric",
            Ty::Real => "real",
            Ty::Double => "double precision",
            Ty::Text => "text",
            Ty::Char => "char(4)",
            Ty::Bool => "boolean",
            Ty::Date => "date",
            Ty::Timestamp => "timestamp",
            Ty::Timestamptz => "timestamptz",
            Ty::Interval => "interval",
        }
    }

    pub fn is_number(self) -> bool {
        NUMBERS.contains(&self)
    }

    pub fn is_integer(self) -> bool {
        matches!(self, Ty::SmallInt | Ty::Int | Ty::BigInt)
    }

    pub fn is_string(self) -> bool {
        matches!(self, Ty::Text | Ty::Char)
    }

    pub fn is_datetime(self) -> bool {
        matches!(self, Ty::Date | Ty::Timestamp | Ty::Timestamptz)
    }

    /// Two types PostgreSQL compares without an explicit cast.
    pub fn comparable(self, other: Ty) -> bool {
        self == other
            || (self.is_number() && other.is_number())
            || (self.is_string() && other.is_string())
            || (self.is_datetime() && other.is_datetime())
    }

    /// A plain value of this type, what the shrinker puts in place of a
    /// subexpression.
    pub fn simple(self) -> &'static str {
        match self {
            Ty::SmallInt => "CAST(1 AS smallint)",
            Ty::Int => "1",
            Ty::BigInt => "CAST(1 AS bigint)",
            Ty::Numeric => "1.5",
            Ty::Real => "CAST(1.5 AS real)",
            Ty::Double => "CAST(1.5 AS double precision)",
            Ty::Text => "'a'",
            Ty::Char => "CAST('a' AS char(4))",
            Ty::Bool => "true",
            Ty::Date => "DATE '2024-01-15'",
            Ty::Timestamp => "TIMESTAMP '2024-01-15 12:00:00'",
            Ty::Timestamptz => "TIMESTAMPTZ '2024-01-15 12:00:00+00'",
            Ty::Interval => "INTERVAL '1 day'",
        }
    }

    /// Edge values as SQL literals of exactly this type (NULL included).
    pub fn edges(self) -> &'static [&'static str] {
        match self {
            Ty::SmallInt => SMALL_INT_EDGES,
            Ty::Int => INT_EDGES,
            Ty::BigInt => BIG_INT_EDGES,
            Ty::Numeric => NUMERIC_EDGES,
            Ty::Real => REAL_EDGES,
            Ty::Double => DOUBLE_EDGES,
            Ty::Text => TEXT_EDGES,
            Ty::Char => CHAR_EDGES,
            Ty::Bool => BOOL_EDGES,
            Ty::Date => DATE_EDGES,
            Ty::Timestamp => TIMESTAMP_EDGES,
            Ty::Timestamptz => TIMESTAMPTZ_EDGES,
            Ty::Interval => INTERVAL_EDGES,
        }
    }
}

/// Cast targets: the column types and a few more type modifiers, each
/// with the type the cast yields.
pub const CAST_TARGETS: &[(&str, Ty)] = &[
    ("smallint", Ty::SmallInt),
    ("integer", Ty::Int),
    ("bigint", Ty::BigInt),
    ("numeric", Ty::Numeric),
    ("numeric(5,2)", Ty::Numeric),
    ("numeric(38,10)", Ty::Numeric),
    ("numeric(3)", Ty::Numeric),
    ("real", Ty::Real),
    ("double precision", Ty::Double),
    ("text", Ty::Text),
    ("varchar(3)", Ty::Text),
    ("varchar(10)", Ty::Text),
    ("char(2)", Ty::Char),
    ("char(6)", Ty::Char),
    ("boolean", Ty::Bool),
    ("date", Ty::Date),
    ("timestamp", Ty::Timestamp),
    ("timestamp(0)", Ty::Timestamp),
    ("timestamptz", Ty::Timestamptz),
    ("interval", Ty::Interval),
];

/// Whether PostgreSQL has a cast from `from` to `to` (most generated casts
/// are valid; a few invalid ones stay in to compare error codes).
pub fn castable(from: Ty, to: Ty) -> bool {
    from == to
        || (from.is_number() && to.is_number())
        || from.is_string()
        || to.is_string()
        || (from.is_datetime() && to.is_datetime() && !(from == Ty::Date && to == Ty::Date))
        || (matches!(from, Ty::Int) && to == Ty::Bool)
        || (from == Ty::Bool && to == Ty::Int)
}

const SMALL_INT_EDGES: &[&str] = &[
    "CAST(-32768 AS smallint)",
    "CAST(32767 AS smallint)",
    "CAST(0 AS smallint)",
    "CAST(-1 AS smallint)",
    "CAST(7 AS smallint)",
    "CAST(NULL AS smallint)",
];

const INT_EDGES: &[&str] = &[
    "2147483647",
    "(-2147483647)",
    "CAST(-2147483648 AS integer)",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "10",
    "100",
    "CAST(NULL AS integer)",
];

const BIG_INT_EDGES: &[&str] = &[
    "9223372036854775807",
    "(-9223372036854775807)",
    "CAST(-9223372036854775808 AS bigint)",
    "2147483648",
    "CAST(0 AS bigint)",
    "CAST(-1 AS bigint)",
    "CAST(NULL AS bigint)",
];

const NUMERIC_EDGES: &[&str] = &[
    "0.0",
    "-0.0",
    "1.5",
    "-2.5",
    "0.5",
    "1.005",
    "2.675",
    "99999999.99",
    "123456789012345678901234567890.123456789",
    "0.00000000000000000001",
    "CAST(1 AS numeric)",
    "1e16",
    "1.5e-3",
    "CAST('NaN' AS numeric)",
    "CAST('Infinity' AS numeric)",
    "CAST('-Infinity' AS numeric)",
    "CAST(NULL AS numeric)",
];

const REAL_EDGES: &[&str] = &[
    "CAST('NaN' AS real)",
    "CAST('Infinity' AS real)",
    "CAST('-Infinity' AS real)",
    "CAST('-0' AS real)",
    "CAST(3.4e38 AS real)",
    "CAST(1e-45 AS real)",
    "CAST(1.1 AS real)",
    "CAST(0.1 AS real)",
    "CAST(NULL AS real)",
];

// A literal with a decimal point or an exponent (`1e16` too)
// is numeric in PostgreSQL: double edges are casts, and bare
// exponent literals are among the numeric edges.
const DOUBLE_EDGES: &[&str] = &[
    "CAST('NaN' AS double precision)",
    "CAST('Infinity' AS double precision)",
    "CAST('-Infinity' AS double precision)",
    "CAST('-0' AS double precision)",
    "CAST(1.7976931348623157e308 AS double precision)",
    "CAST(5e-324 AS double precision)",
    "CAST(0.1 AS double precision)",
    "CAST(1e15 AS double precision)",
    "CAST(123456789.125 AS double precision)",
    "CAST(-2.5 AS double precision)",
    "CAST(NULL AS double precision)",
];

const TEXT_EDGES: &[&str] = &[
    "''",
    "'ab  '",
    "'  ab'",
    "'abc'",
    "'ABC'",
    "'日本'",
    "'Émile'",
    "'a%b_c'",
    "'x''y'",
    "'123'",
    "' 12 '",
    "'true'",
    "'2024-02-29'",
    "CAST(NULL AS text)",
];

const CHAR_EDGES: &[&str] = &[
    "CAST('ab  ' AS char(4))",
    "CAST('' AS char(4))",
    "CAST('abcd' AS char(4))",
    "CAST('日' AS char(4))",
    "CAST(NULL AS char(4))",
];

const BOOL_EDGES: &[&str] = &["true", "false", "CAST(NULL AS boolean)"];

const DATE_EDGES: &[&str] = &[
    "DATE '0001-01-01'",
    "DATE '9999-12-31'",
    "DATE '2000-02-29'",
    "DATE '2024-02-29'",
    "DATE '1970-01-01'",
    "DATE '2024-03-10'",
    "DATE '4713-01-01 BC'",
    "DATE 'infinity'",
    "CAST(NULL AS date)",
];

const TIMESTAMP_EDGES: &[&str] = &[
    "TIMESTAMP '2024-03-10 02:30:00'",
    "TIMESTAMP '2024-10-27 02:30:00'",
    "TIMESTAMP '2024-11-03 01:30:00'",
    "TIMESTAMP '0001-01-01 00:00:00'",
    "TIMESTAMP '9999-12-31 23:59:59.999999'",
    "TIMESTAMP '2000-02-29 12:00:00.5'",
    "TIMESTAMP '1970-01-01 00:00:00'",
    "TIMESTAMP 'infinity'",
    "CAST(NULL AS timestamp)",
];

const TIMESTAMPTZ_EDGES: &[&str] = &[
    "TIMESTAMPTZ '2024-03-10 02:30:00'",
    "TIMESTAMPTZ '2024-10-27 02:30:00 Europe/Paris'",
    "TIMESTAMPTZ '2024-11-03 01:30:00-04'",
    "TIMESTAMPTZ '1970-01-01 00:00:00+00'",
    "TIMESTAMPTZ '0001-01-01 00:00:00+00'",
    "TIMESTAMPTZ '9999-12-31 23:59:59+00'",
    "TIMESTAMPTZ '2000-02-29 23:59:59.999999+05:45'",
    "TIMESTAMPTZ '-infinity'",
    "CAST(NULL AS timestamptz)",
];

const INTERVAL_EDGES: &[&str] = &[
    "INTERVAL '0'",
    "INTERVAL '1 day'",
    "INTERVAL '-1 day'",
    "INTERVAL '1 mon'",
    "INTERVAL '1 year'",
    "INTERVAL '23:59:59.999999'",
    "INTERVAL '1 day -1 hour'",
    "INTERVAL '1 mon -1 day'",
    "INTERVAL '1 year 2 mons 3 days 04:05:06.789'",
    "INTERVAL '178000000 years'",
    "INTERVAL '2147483647 days'",
    "CAST(NULL AS interval)",
];
