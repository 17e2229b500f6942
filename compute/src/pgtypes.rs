//! Mapping between Tessera values and the PostgreSQL wire: type OIDs, result
//! encoding (text and binary, from `Datum`s or Arrow arrays) and parameter
//! decoding.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use common::{Datum, Error, Result, SqlType};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Date32Array, Decimal128Array,
    Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeStringArray,
    StringArray, StringViewArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array,
};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions as ArrowFormat};
use pgwire::api::portal::Portal;
use pgwire::api::results::{DataRowEncoder, FieldFormat, FieldInfo};
use pgwire::api::Type;
use pgwire::error::PgWireResult;
use pgwire::types::ToSqlText;
use postgres_types::ToSql;
use rust_decimal::Decimal;

use crate::pgtext::{float_text, interval_of, interval_parts};
use crate::wirevals::{PgInterval, PgNumeric};

/// The catalog type a wire type stands for, where one does exactly
/// (numeric without its typmod, and types Tessera does not store, do not).
pub fn sql_type_of(t: &Type) -> Option<SqlType> {
    Some(match t {
        t if *t == Type::INT2 => SqlType::SmallInt,
        t if *t == Type::INT4 => SqlType::Integer,
        t if *t == Type::INT8 => SqlType::BigInt,
        t if *t == Type::FLOAT4 => SqlType::Real,
        t if *t == Type::FLOAT8 => SqlType::Double,
        t if *t == Type::BOOL => SqlType::Boolean,
        t if *t == Type::TEXT => SqlType::Text,
        t if *t == Type::VARCHAR => SqlType::Varchar(None),
        t if *t == Type::DATE => SqlType::Date,
        t if *t == Type::TIMESTAMP => SqlType::Timestamp,
        t if *t == Type::TIMESTAMPTZ => SqlType::TimestampTz,
        t if *t == Type::BYTEA => SqlType::Bytea,
        _ => return None,
    })
}

pub fn pg_type(t: &SqlType) -> Type {
    match t {
        SqlType::SmallInt => Type::INT2,
        SqlType::Integer => Type::INT4,
        SqlType::BigInt => Type::INT8,
        SqlType::Numeric { .. } => Type::NUMERIC,
        SqlType::Real => Type::FLOAT4,
        SqlType::Double => Type::FLOAT8,
        SqlType::Boolean => Type::BOOL,
        SqlType::Char(_) => Type::BPCHAR,
        SqlType::Varchar(_) => Type::VARCHAR,
        SqlType::Text => Type::TEXT,
        SqlType::Date => Type::DATE,
        SqlType::Timestamp => Type::TIMESTAMP,
        SqlType::TimestampTz => Type::TIMESTAMPTZ,
        SqlType::Bytea => Type::BYTEA,
    }
}

pub fn sql_type_of_pg(t: &Type) -> Option<SqlType> {
    Some(match *t {
        Type::INT2 => SqlType::SmallInt,
        Type::INT4 => SqlType::Integer,
        Type::INT8 => SqlType::BigInt,
        Type::NUMERIC => SqlType::Numeric {
            precision: 38,
            scale: 10,
        },
        Type::FLOAT4 => SqlType::Real,
        Type::FLOAT8 => SqlType::Double,
        Type::BOOL => SqlType::Boolean,
        Type::BPCHAR => SqlType::Char(1),
        Type::VARCHAR => SqlType::Varchar(None),
        Type::TEXT => SqlType::Text,
        Type::DATE => SqlType::Date,
        Type::TIMESTAMP => SqlType::Timestamp,
        Type::TIMESTAMPTZ => SqlType::TimestampTz,
        Type::BYTEA => SqlType::Bytea,
        _ => return None,
    })
}

/// The wire type of an Arrow result column: the catalog type's
/// (`shard_router::sql`, text for every string), else the
/// PostgreSQL type that holds the Arrow type's values.
pub fn arrow_to_pg(t: &DataType) -> Type {
    if let Some(s) = shard_router::sql::sql_type_of(t) {
        return pg_type(&s);
    }
    match t {
        DataType::Int8 | DataType::Int16 | DataType::UInt8 => Type::INT2,
        DataType::Int32 | DataType::UInt16 => Type::INT4,
        DataType::Int64 | DataType::UInt32 | DataType::UInt64 => Type::INT8,
        DataType::Float16 | DataType::Float32 => Type::FLOAT4,
        DataType::Float64 => Type::FLOAT8,
        DataType::Decimal128(..) | DataType::Decimal256(..) => Type::NUMERIC,
        DataType::Boolean => Type::BOOL,
        DataType::Date32 | DataType::Date64 => Type::DATE,
        DataType::Timestamp(_, None) => Type::TIMESTAMP,
        DataType::Timestamp(_, Some(_)) => Type::TIMESTAMPTZ,
        DataType::Time32(_) | DataType::Time64(_) => Type::TIME,
        DataType::Interval(_) | DataType::Duration(_) => Type::INTERVAL,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Type::BYTEA,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            crate::wirevals::array_of(&arrow_to_pg(f.data_type()))
        }
        _ => Type::TEXT,
    }
}

pub fn field(name: &str, ty: Type, format: FieldFormat) -> FieldInfo {
    FieldInfo::new(name.to_string(), None, None, ty, format)
}

pub use crate::pgtext::decimal_text;

/// PostgreSQL's text form of a timestamp: fractional seconds without
/// trailing zeros.
/// `s` (ending in `.ffffff`) without the fraction's trailing zeros, or
/// without the fraction when it is zero, as PostgreSQL prints seconds.
fn trim_fraction(mut s: String) -> String {
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    s
}

pub fn timestamp_text(t: &NaiveDateTime, tz: bool) -> String {
    if tz {
        return timestamptz_text_in(t, &common::tz::session_zone());
    }
    trim_fraction(t.format("%Y-%m-%d %H:%M:%S%.6f").to_string())
}

/// A timestamptz (`utc`) as PostgreSQL prints it in `zone`: local time and
/// the offset then (`2024-07-01 14:00:00+02`).
pub fn timestamptz_text_in(utc: &NaiveDateTime, zone: &common::tz::Zone) -> String {
    let off = zone.offset_at(utc);
    let local = *utc + chrono::Duration::seconds(off as i64);
    let mut s = trim_fraction(local.format("%Y-%m-%d %H:%M:%S%.6f").to_string());
    s.push_str(&common::tz::offset_text(off));
    s
}

/// Encodes one Datum into the row being built.
pub fn encode_datum(enc: &mut DataRowEncoder, d: &Datum, f: &FieldInfo) -> PgWireResult<()> {
    let ty = f.datatype();
    let fmt = f.format();
    let opts = f.format_options().clone();
    macro_rules! put {
        ($v:expr) => {
            enc.encode_field_with_type_and_format($v, ty, fmt, &opts)
        };
    }
    match d {
        Datum::Null => put!(&None::<i32>),
        Datum::Bool(b) => put!(b),
        Datum::Int(i) => match *ty {
            Type::INT2 => put!(&(*i as i16)),
            Type::INT4 => put!(&(*i as i32)),
            Type::NUMERIC => put!(&Decimal::from(*i)),
            Type::FLOAT8 => put!(&(*i as f64)),
            Type::TEXT | Type::VARCHAR => put!(&i.to_string()),
            _ => put!(i),
        },
        Datum::Float(v) if fmt == FieldFormat::Text => {
            put!(&float_text(*v, *ty == Type::FLOAT4))
        }
        Datum::Float(v) => match *ty {
            Type::FLOAT4 => put!(&(*v as f32)),
            _ => put!(v),
        },
        Datum::Decimal(v) => match *ty {
            Type::INT8 => put!(&i64::try_from(*v).unwrap_or_default()),
            _ => put!(v),
        },
        Datum::Text(s) => put!(s),
        Datum::Bytes(b) => put!(b),
        Datum::Date(v) => put!(v),
        Datum::Timestamp(v) if fmt == FieldFormat::Text => put!(&timestamp_text(v, false)),
        Datum::TimestampTz(v) if fmt == FieldFormat::Text => {
            put!(&timestamp_text(&v.naive_utc(), true))
        }
        Datum::Timestamp(v) => put!(v),
        Datum::TimestampTz(v) => put!(v),
    }
}

/// Encodes row `row` of an Arrow column.
pub fn encode_arrow(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let ty = f.datatype();
    let fmt = f.format();
    if col.is_null(row) || col.data_type() == &DataType::Null {
        return put(enc, &None::<i32>, f);
    }
    macro_rules! prim {
        ($arr:ty, $conv:expr) => {{
            let a = col.as_any().downcast_ref::<$arr>();
            match a {
                Some(a) => {
                    let v = a.value(row);
                    put(enc, &$conv(v), f)
                }
                None => put(enc, &"?".to_string(), f),
            }
        }};
    }
    match col.data_type() {
        DataType::Int8 => prim!(Int8Array, |v: i8| v as i16),
        DataType::Int16 => prim!(Int16Array, |v: i16| v),
        DataType::Int32 => prim!(Int32Array, |v: i32| v),
        DataType::Int64 => prim!(Int64Array, |v: i64| v),
        DataType::UInt8 => prim!(UInt8Array, |v: u8| v as i16),
        DataType::UInt16 => prim!(UInt16Array, |v: u16| v as i32),
        DataType::UInt32 => prim!(UInt32Array, |v: u32| v as i64),
        DataType::UInt64 => prim!(UInt64Array, |v: u64| v as i64),
        DataType::Interval(_) | DataType::Duration(_) => encode_interval(enc, col, row, f),
        DataType::Float32 if fmt == FieldFormat::Text => {
            prim!(Float32Array, |v: f32| float_text(v as f64, true))
        }
        DataType::Float64 if fmt == FieldFormat::Text => {
            prim!(Float64Array, |v: f64| float_text(v, false))
        }
        DataType::Float32 => prim!(Float32Array, |v: f32| v),
        DataType::Float64 => prim!(Float64Array, |v: f64| v),
        DataType::Boolean => prim!(BooleanArray, |v: bool| v),
        DataType::Utf8 if *ty == Type::NUMERIC && fmt == FieldFormat::Binary => {
            encode_numeric_text(enc, col, row, f)
        }
        DataType::Utf8View if *ty == Type::REGTYPE => encode_regtype(enc, col, row, f),
        DataType::Utf8 => prim!(StringArray, |v: &str| v.to_string()),
        DataType::LargeUtf8 => prim!(LargeStringArray, |v: &str| v.to_string()),
        DataType::Utf8View => prim!(StringViewArray, |v: &str| v.to_string()),
        DataType::Binary => prim!(BinaryArray, |v: &[u8]| v.to_vec()),
        DataType::Date32 => prim!(Date32Array, |v: i32| {
            NaiveDate::from_num_days_from_ce_opt(v + 719_163).unwrap_or_default()
        }),
        DataType::Decimal128(_, s) => encode_decimal(enc, col, row, *s, f),
        DataType::List(_) if fmt == FieldFormat::Text && is_vector(ty) => {
            encode_vector(enc, col, row, f)
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            encode_list(enc, col, row, f)
        }
        DataType::Time64(_) | DataType::Time32(_) => encode_time(enc, col, row, f),
        DataType::Timestamp(unit, tz) => {
            let micros = timestamp_micros(col, unit, row);
            encode_timestamp(enc, micros, tz.is_some(), f)
        }
        _ => encode_formatted(enc, col, row, f),
    }
}

/// A regtype (`pg_typeof`'s answer, a type's name): as text the name, in
/// binary the type's OID.
fn encode_regtype(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let name = arrow_text(col, row).unwrap_or_default();
    match f.format() {
        FieldFormat::Binary => {
            let oid = crate::regtype::oid_of(&name).ok_or_else(|| {
                pgwire::error::PgWireError::ApiError(format!("no OID for type \"{name}\"").into())
            })?;
            enc.encode_field_with_type_and_format(&oid, &Type::OID, f.format(), f.format_options())
        }
        FieldFormat::Text => enc.encode_field_with_type_and_format(
            &name,
            &Type::TEXT,
            f.format(),
            f.format_options(),
        ),
    }
}

fn is_vector(t: &Type) -> bool {
    *t == Type::INT2_VECTOR || *t == Type::OID_VECTOR
}

/// An `int2vector` / `oidvector` as PostgreSQL writes it: the elements
/// separated by spaces (`1 2`), no braces.
fn encode_vector(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let Some(list) = col
        .as_any()
        .downcast_ref::<datafusion::arrow::array::ListArray>()
    else {
        return put(enc, &None::<String>, f);
    };
    let items = list.value(row);
    let text: Vec<String> = (0..items.len())
        .filter_map(|i| arrow_text(&items, i))
        .collect();
    // Written as text: pgwire would quote a value of an array-kind type
    // (int2vector is one to it) that holds a blank.
    enc.encode_field_with_type_and_format(
        &text.join(" "),
        &Type::TEXT,
        f.format(),
        f.format_options(),
    )
}

/// Encodes `v` as field `f` says: its type, format and format options.
fn put<T: ToSql + ToSqlText>(enc: &mut DataRowEncoder, v: &T, f: &FieldInfo) -> PgWireResult<()> {
    enc.encode_field_with_type_and_format(v, f.datatype(), f.format(), f.format_options())
}

/// Encodes an interval or duration value.
fn encode_interval(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    match interval_parts(col, row) {
        Some((months, days, micros)) => put(
            enc,
            &PgInterval {
                months,
                days,
                micros,
            },
            f,
        ),
        None => Err(pgwire::error::PgWireError::ApiError(
            "interval out of range".into(),
        )),
    }
}

/// Encodes a numeric quotient held as text, in binary at its own scale
/// (`dscale`).
fn encode_numeric_text(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let text = col
        .as_any()
        .downcast_ref::<StringArray>()
        .map(|a| a.value(row))
        .unwrap_or_default();
    match PgNumeric::parse(text) {
        Some(n) => put(enc, &n, f),
        None => Err(pgwire::error::PgWireError::ApiError(
            format!("not a numeric: {text}").into(),
        )),
    }
}

/// Encodes a decimal of scale `s` as a numeric.
fn encode_decimal(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    s: i8,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let Some(a) = col.as_any().downcast_ref::<Decimal128Array>() else {
        return Err(pgwire::error::PgWireError::ApiError(
            "numeric column of an unexpected array type".into(),
        ));
    };
    match crate::wirevals::numeric_at(a.value(row), s) {
        Some(n) => put(enc, &n, f),
        None => Err(pgwire::error::PgWireError::ApiError(
            "numeric out of range".into(),
        )),
    }
}

/// Encodes a list value as a PostgreSQL array.
fn encode_list(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let elems = match col.data_type() {
        DataType::List(_) => col.as_list::<i32>().value(row),
        DataType::LargeList(_) => col.as_list::<i64>().value(row),
        _ => col.as_fixed_size_list().value(row),
    };
    let elem = arrow_to_pg(elems.data_type());
    let text = arrow_text(col, row).unwrap_or_default();
    match crate::wirevals::array_value(&elems, elem, text) {
        Some(a) => put(enc, &a, f),
        None => Err(pgwire::error::PgWireError::ApiError(
            "arrays of this element type are sent in text format only".into(),
        )),
    }
}

/// Encodes a time of day (text without the fraction's trailing zeros).
fn encode_time(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    use datafusion::arrow::datatypes::{
        Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    };
    let micros = match col.data_type() {
        DataType::Time64(TimeUnit::Nanosecond) => col
            .as_primitive_opt::<Time64NanosecondType>()
            .map(|a| a.value(row) / 1000),
        DataType::Time64(_) => col
            .as_primitive_opt::<Time64MicrosecondType>()
            .map(|a| a.value(row)),
        DataType::Time32(TimeUnit::Second) => col
            .as_primitive_opt::<Time32SecondType>()
            .map(|a| a.value(row) as i64 * 1_000_000),
        _ => col
            .as_primitive_opt::<Time32MillisecondType>()
            .map(|a| a.value(row) as i64 * 1000),
    }
    .unwrap_or_default();
    let t = chrono::NaiveTime::from_num_seconds_from_midnight_opt(
        (micros / 1_000_000) as u32,
        ((micros % 1_000_000) * 1000) as u32,
    )
    .unwrap_or_default();
    if f.format() == FieldFormat::Text {
        put(enc, &trim_fraction(t.format("%H:%M:%S%.6f").to_string()), f)
    } else {
        put(enc, &t, f)
    }
}

/// Row `row` of a timestamp column of `unit`, in microseconds since the
/// epoch (0 when the array is not the unit's).
fn timestamp_micros(col: &ArrayRef, unit: &TimeUnit, row: usize) -> i64 {
    match unit {
        TimeUnit::Second => col
            .as_any()
            .downcast_ref::<TimestampSecondArray>()
            .map(|a| a.value(row) * 1_000_000),
        TimeUnit::Millisecond => col
            .as_any()
            .downcast_ref::<TimestampMillisecondArray>()
            .map(|a| a.value(row) * 1000),
        TimeUnit::Microsecond => col
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .map(|a| a.value(row)),
        TimeUnit::Nanosecond => col
            .as_any()
            .downcast_ref::<TimestampNanosecondArray>()
            .map(|a| a.value(row) / 1000),
    }
    .unwrap_or_default()
}

/// Encodes a timestamp (`tz`: a timestamptz) given in microseconds.
fn encode_timestamp(
    enc: &mut DataRowEncoder,
    micros: i64,
    tz: bool,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let dt: DateTime<Utc> = DateTime::from_timestamp_micros(micros).unwrap_or_default();
    if f.format() == FieldFormat::Text {
        put(enc, &timestamp_text(&dt.naive_utc(), tz), f)
    } else if tz {
        put(enc, &dt, f)
    } else {
        let n: NaiveDateTime = dt.naive_utc();
        put(enc, &n, f)
    }
}

/// Encodes any other value as Arrow's display of it.
fn encode_formatted(
    enc: &mut DataRowEncoder,
    col: &ArrayRef,
    row: usize,
    f: &FieldInfo,
) -> PgWireResult<()> {
    let fo = ArrowFormat::default();
    let s = ArrayFormatter::try_new(col.as_ref(), &fo)
        .map(|f| f.value(row).to_string())
        .unwrap_or_default();
    let _ = col.as_string_opt::<i32>();
    put(enc, &s, f)
}

/// PostgreSQL text form of an Arrow value (COPY TO), or None for NULL.
pub fn arrow_text(col: &ArrayRef, row: usize) -> Option<String> {
    if col.is_null(row) || col.data_type() == &DataType::Null {
        return None;
    }
    Some(match col.data_type() {
        DataType::Boolean => {
            let v = col
                .as_any()
                .downcast_ref::<BooleanArray>()
                .map(|a| a.value(row))
                .unwrap_or(false);
            if v {
                "t".into()
            } else {
                "f".into()
            }
        }
        DataType::Binary => {
            let v = col
                .as_any()
                .downcast_ref::<BinaryArray>()
                .map(|a| a.value(row).to_vec())
                .unwrap_or_default();
            let mut s = String::from("\\x");
            for b in v {
                s.push_str(&format!("{b:02x}"));
            }
            s
        }
        DataType::Float64 => {
            let v = col
                .as_any()
                .downcast_ref::<Float64Array>()
                .map(|a| a.value(row))
                .unwrap_or_default();
            float_text(v, false)
        }
        DataType::Float32 => {
            let v = col
                .as_any()
                .downcast_ref::<Float32Array>()
                .map(|a| a.value(row))
                .unwrap_or_default();
            float_text(v as f64, true)
        }
        DataType::Interval(_) | DataType::Duration(_) => interval_of(col, row).unwrap_or_default(),
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            let elems = match col.data_type() {
                DataType::List(_) => col.as_list::<i32>().value(row),
                DataType::LargeList(_) => col.as_list::<i64>().value(row),
                _ => col.as_fixed_size_list().value(row),
            };
            let nested = matches!(
                elems.data_type(),
                DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
            );
            crate::pgtext::array_text((0..elems.len()).map(|i| arrow_text(&elems, i)), !nested)
        }
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            let micros = col
                .as_any()
                .downcast_ref::<TimestampMicrosecondArray>()
                .map(|a| a.value(row))
                .unwrap_or_default();
            let dt = DateTime::from_timestamp_micros(micros).unwrap_or_default();
            timestamp_text(&dt.naive_utc(), tz.is_some())
        }
        _ => {
            let fo = ArrowFormat::default();
            ArrayFormatter::try_new(col.as_ref(), &fo)
                .map(|f| f.value(row).to_string())
                .unwrap_or_default()
        }
    })
}

/// Decodes parameter `idx` of a portal to a Datum of the given wire type.
pub fn decode_param<S: Clone>(portal: &Portal<S>, idx: usize, ty: &Type) -> Result<Datum> {
    let bad = |e: pgwire::error::PgWireError| Error::InvalidText {
        ty: ty.name().to_string(),
        value: e.to_string(),
    };
    // Dates and times sent as text are read by PostgreSQL's input, as
    // constants, INSERT and COPY are (`Datum::parse`): zones, month names,
    // the session's DateStyle order.
    let text_input = match *ty {
        Type::DATE => Some(SqlType::Date),
        Type::TIMESTAMP => Some(SqlType::Timestamp),
        Type::TIMESTAMPTZ => Some(SqlType::TimestampTz),
        _ => None,
    };
    if let Some(sql_type) = text_input.filter(|_| !portal.parameter_format.is_binary(idx)) {
        let Some(Some(raw)) = portal.parameters.get(idx) else {
            return Ok(Datum::Null);
        };
        let text = std::str::from_utf8(raw).map_err(|_| Error::InvalidText {
            ty: ty.name().to_string(),
            value: "not UTF-8".into(),
        })?;
        return Datum::parse(text, &sql_type);
    }
    let d = match *ty {
        Type::INT2 => portal
            .parameter::<i16>(idx, ty)
            .map_err(bad)?
            .map(|v| Datum::Int(v as i64)),
        Type::INT4 => portal
            .parameter::<i32>(idx, ty)
            .map_err(bad)?
            .map(|v| Datum::Int(v as i64)),
        Type::INT8 => portal
            .parameter::<i64>(idx, ty)
            .map_err(bad)?
            .map(Datum::Int),
        Type::FLOAT4 => portal
            .parameter::<f32>(idx, ty)
            .map_err(bad)?
            .map(|v| Datum::Float(v as f64)),
        Type::FLOAT8 => portal
            .parameter::<f64>(idx, ty)
            .map_err(bad)?
            .map(Datum::Float),
        Type::BOOL => portal
            .parameter::<bool>(idx, ty)
            .map_err(bad)?
            .map(Datum::Bool),
        Type::NUMERIC => portal
            .parameter::<Decimal>(idx, ty)
            .map_err(bad)?
            .map(Datum::Decimal),
        Type::DATE => portal
            .parameter::<NaiveDate>(idx, ty)
            .map_err(bad)?
            .map(Datum::Date),
        Type::TIMESTAMP => portal
            .parameter::<NaiveDateTime>(idx, ty)
            .map_err(bad)?
            .map(Datum::Timestamp),
        Type::TIMESTAMPTZ => portal
            .parameter::<DateTime<chrono::FixedOffset>>(idx, ty)
            .map_err(bad)?
            .map(|t| Datum::TimestampTz(t.with_timezone(&Utc))),
        Type::BYTEA => portal
            .parameter::<Vec<u8>>(idx, ty)
            .map_err(bad)?
            .map(Datum::Bytes),
        _ => portal
            .parameter::<String>(idx, &Type::TEXT)
            .map_err(bad)?
            .map(Datum::Text),
    };
    Ok(d.unwrap_or(Datum::Null))
}

#[cfg(test)]
mod decimal_tests {
    #[test]
    fn decimal_text_keeps_every_place() {
        use super::decimal_text;
        assert_eq!(decimal_text(15, 1), "1.5");
        assert_eq!(decimal_text(-5, 3), "-0.005");
        assert_eq!(decimal_text(123, 0), "123");
        assert_eq!(
            decimal_text(12_345_678_901_250_000_000_000_000_000_000, 20),
            "123456789012.50000000000000000000"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shard_router::sql::arrow_type;

    #[test]
    fn result_columns_get_their_catalog_wire_type() {
        for t in [
            SqlType::SmallInt,
            SqlType::Integer,
            SqlType::BigInt,
            SqlType::Numeric {
                precision: 10,
                scale: 2,
            },
            SqlType::Real,
            SqlType::Double,
            SqlType::Boolean,
            SqlType::Text,
            SqlType::Date,
            SqlType::Timestamp,
            SqlType::TimestampTz,
            SqlType::Bytea,
        ] {
            assert_eq!(arrow_to_pg(&arrow_type(&t)), pg_type(&t), "{t:?}");
        }
        // Strings are text whatever their declared length.
        assert_eq!(
            arrow_to_pg(&arrow_type(&SqlType::Varchar(Some(3)))),
            Type::TEXT
        );
        // Arrow types no column has still get the type that holds them.
        assert_eq!(arrow_to_pg(&DataType::UInt32), Type::INT8);
        assert_eq!(arrow_to_pg(&DataType::Utf8View), Type::TEXT);
    }

    #[test]
    fn wire_types_read_back_as_their_catalog_type() {
        for t in [
            Type::INT2,
            Type::INT4,
            Type::INT8,
            Type::BOOL,
            Type::DATE,
            Type::BYTEA,
        ] {
            let s = sql_type_of_pg(&t).unwrap();
            assert_eq!(pg_type(&s), t);
        }
    }
}
