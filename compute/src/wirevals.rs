//! Values Tessera encodes for the wire itself, in both formats, where the
//! types pgwire encodes do not say what PostgreSQL says:
//!
//! * [`PgNumeric`]: a numeric at its own display scale (rust_decimal drops
//!   the scale of a zero, `0.00` going out as `0`, and holds 28 places);
//! * [`PgInterval`]: months, days and microseconds, PostgreSQL's binary
//!   interval and its text;
//! * [`PgArray`]: a one-dimensional array of already encoded elements
//!   (binary: PostgreSQL's array header, then each element).

use std::error::Error;

use bytes::{BufMut, BytesMut};
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::DataType;
use pgwire::types::format::FormatOptions;
use pgwire::types::ToSqlText;
use postgres_types::{to_sql_checked, IsNull, ToSql, Type};

type Res = Result<IsNull, Box<dyn Error + Sync + Send>>;

/// `v * 10^-scale`, printed with `scale` places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgNumeric {
    pub v: i128,
    pub scale: u32,
}

impl PgNumeric {
    /// The numeric of a decimal text (`-12.340`: scale 3).
    pub fn parse(s: &str) -> Option<PgNumeric> {
        let t = s.trim();
        let (neg, t) = match t.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        if int.is_empty() && frac.is_empty()
            || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        {
            return None;
        }
        let digits = format!("{int}{frac}");
        let v: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        Some(PgNumeric {
            v: if neg { -v } else { v },
            scale: frac.len() as u32,
        })
    }

    /// PostgreSQL's binary numeric: base-10000 digit groups around the
    /// decimal point, the weight of the first, the sign and the scale.
    fn binary(&self) -> Vec<u8> {
        let abs = self.v.unsigned_abs().to_string();
        let scale = self.scale as usize;
        let (int, frac) = if abs.len() > scale {
            (
                abs[..abs.len() - scale].to_string(),
                abs[abs.len() - scale..].to_string(),
            )
        } else {
            ("0".to_string(), format!("{abs:0>scale$}"))
        };
        let int = int.trim_start_matches('0');
        let int_pad = format!("{}{int}", "0".repeat((4 - int.len() % 4) % 4));
        let frac_pad = format!("{frac}{}", "0".repeat((4 - frac.len() % 4) % 4));
        let group = |s: &str| -> Vec<i16> {
            s.as_bytes()
                .chunks(4)
                .map(|c| {
                    std::str::from_utf8(c)
                        .ok()
                        .and_then(|x| x.parse().ok())
                        .unwrap_or(0)
                })
                .collect()
        };
        let int_groups = group(&int_pad);
        let frac_groups = group(&frac_pad);
        let mut weight = int_groups.len() as i16 - 1;
        let mut digits: Vec<i16> = int_groups.into_iter().chain(frac_groups).collect();
        while digits.first() == Some(&0) {
            digits.remove(0);
            weight -= 1;
        }
        while digits.last() == Some(&0) {
            digits.pop();
        }
        if digits.is_empty() {
            weight = 0;
        }
        let mut out = Vec::with_capacity(8 + 2 * digits.len());
        out.extend((digits.len() as i16).to_be_bytes());
        out.extend(weight.to_be_bytes());
        out.extend((if self.v < 0 { 0x4000u16 } else { 0 }).to_be_bytes());
        out.extend((self.scale as i16).to_be_bytes());
        for d in digits {
            out.extend(d.to_be_bytes());
        }
        out
    }
}

impl ToSql for PgNumeric {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Res {
        out.put_slice(&self.binary());
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
    to_sql_checked!();
}

impl ToSqlText for PgNumeric {
    fn to_sql_text(&self, _: &Type, out: &mut BytesMut, _: &FormatOptions) -> Res {
        out.put_slice(crate::pgtext::decimal_text(self.v, self.scale).as_bytes());
        Ok(IsNull::No)
    }
}

/// An interval: PostgreSQL's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgInterval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

impl ToSql for PgInterval {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Res {
        out.put_i64(self.micros);
        out.put_i32(self.days);
        out.put_i32(self.months);
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::INTERVAL
    }
    to_sql_checked!();
}

impl ToSqlText for PgInterval {
    fn to_sql_text(&self, _: &Type, out: &mut BytesMut, _: &FormatOptions) -> Res {
        let t = crate::pgtext::interval_text(self.months as i64, self.days as i64, self.micros);
        out.put_slice(t.as_bytes());
        Ok(IsNull::No)
    }
}

/// A one-dimensional array: its element type, its elements' binary forms
/// (None for NULL) and its text.
#[derive(Debug, Clone)]
pub struct PgArray {
    pub elem: Type,
    pub binary: Vec<Option<Vec<u8>>>,
    pub text: String,
}

impl ToSql for PgArray {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Res {
        let n = self.binary.len() as i32;
        out.put_i32(if n == 0 { 0 } else { 1 });
        out.put_i32(self.binary.iter().any(Option::is_none) as i32);
        out.put_u32(self.elem.oid());
        if n > 0 {
            out.put_i32(n);
            out.put_i32(1);
        }
        for e in &self.binary {
            match e {
                Some(b) => {
                    out.put_i32(b.len() as i32);
                    out.put_slice(b);
                }
                None => out.put_i32(-1),
            }
        }
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        matches!(ty.kind(), postgres_types::Kind::Array(_))
    }
    to_sql_checked!();
}

impl ToSqlText for PgArray {
    fn to_sql_text(&self, _: &Type, out: &mut BytesMut, _: &FormatOptions) -> Res {
        out.put_slice(self.text.as_bytes());
        Ok(IsNull::No)
    }
}

/// A decimal `v * 10^-s` as a wire numeric (a negative scale multiplied
/// out).
pub fn numeric_at(v: i128, s: i8) -> Option<PgNumeric> {
    if s >= 0 {
        return Some(PgNumeric { v, scale: s as u32 });
    }
    let v = 10i128
        .checked_pow((-s) as u32)
        .and_then(|m| v.checked_mul(m))?;
    Some(PgNumeric { v, scale: 0 })
}

/// A list value's elements as a wire array of `elem`s with text `text`,
/// when Tessera encodes the element type in binary (None otherwise).
pub fn array_value(elems: &ArrayRef, elem: Type, text: String) -> Option<PgArray> {
    let binary = (0..elems.len())
        .map(|i| {
            if elems.is_null(i) {
                return Some(None);
            }
            element_binary(elems, i).map(Some)
        })
        .collect::<Option<Vec<_>>>()?;
    Some(PgArray { elem, binary, text })
}

/// The binary form of one array element (not NULL).
fn element_binary(a: &ArrayRef, i: usize) -> Option<Vec<u8>> {
    use datafusion::arrow::datatypes::{
        Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    };
    Some(match a.data_type() {
        DataType::Int16 => a
            .as_primitive_opt::<Int16Type>()?
            .value(i)
            .to_be_bytes()
            .to_vec(),
        DataType::Int32 => a
            .as_primitive_opt::<Int32Type>()?
            .value(i)
            .to_be_bytes()
            .to_vec(),
        DataType::Int64 => a
            .as_primitive_opt::<Int64Type>()?
            .value(i)
            .to_be_bytes()
            .to_vec(),
        DataType::Float32 => a
            .as_primitive_opt::<Float32Type>()?
            .value(i)
            .to_be_bytes()
            .to_vec(),
        DataType::Float64 => a
            .as_primitive_opt::<Float64Type>()?
            .value(i)
            .to_be_bytes()
            .to_vec(),
        DataType::Boolean => vec![a.as_boolean_opt()?.value(i) as u8],
        DataType::Utf8 => a.as_string_opt::<i32>()?.value(i).as_bytes().to_vec(),
        DataType::LargeUtf8 => a.as_string_opt::<i64>()?.value(i).as_bytes().to_vec(),
        DataType::Utf8View => a.as_string_view_opt()?.value(i).as_bytes().to_vec(),
        DataType::Date32 => (a.as_primitive_opt::<Date32Type>()?.value(i) - 10_957)
            .to_be_bytes()
            .to_vec(),
        DataType::Decimal128(_, s) => {
            let v = a
                .as_primitive_opt::<datafusion::arrow::datatypes::Decimal128Type>()?
                .value(i);
            let mut b = BytesMut::new();
            numeric_at(v, *s)?.to_sql(&Type::NUMERIC, &mut b).ok()?;
            b.to_vec()
        }
        _ => return None,
    })
}

/// The array type of an element type (`int4` -> `_int4`).
pub fn array_of(t: &Type) -> Type {
    match *t {
        Type::INT2 => Type::INT2_ARRAY,
        Type::INT4 => Type::INT4_ARRAY,
        Type::INT8 => Type::INT8_ARRAY,
        Type::FLOAT4 => Type::FLOAT4_ARRAY,
        Type::FLOAT8 => Type::FLOAT8_ARRAY,
        Type::NUMERIC => Type::NUMERIC_ARRAY,
        Type::BOOL => Type::BOOL_ARRAY,
        Type::VARCHAR => Type::VARCHAR_ARRAY,
        Type::BPCHAR => Type::BPCHAR_ARRAY,
        Type::DATE => Type::DATE_ARRAY,
        Type::TIME => Type::TIME_ARRAY,
        Type::TIMESTAMP => Type::TIMESTAMP_ARRAY,
        Type::TIMESTAMPTZ => Type::TIMESTAMPTZ_ARRAY,
        Type::INTERVAL => Type::INTERVAL_ARRAY,
        Type::BYTEA => Type::BYTEA_ARRAY,
        _ => Type::TEXT_ARRAY,
    }
}

/// The Arrow type of the elements of an array parameter, by the array's
/// wire type (the client's: psycopg sends a list as `int2[]`, `int8[]`,
/// `text[]`, ...).
pub fn array_element_arrow(t: &Type) -> Option<datafusion::arrow::datatypes::DataType> {
    use datafusion::arrow::datatypes::{DataType, TimeUnit};
    Some(match *t {
        Type::INT2_ARRAY => DataType::Int16,
        Type::INT4_ARRAY => DataType::Int32,
        Type::INT8_ARRAY => DataType::Int64,
        Type::FLOAT4_ARRAY => DataType::Float32,
        Type::FLOAT8_ARRAY => DataType::Float64,
        Type::BOOL_ARRAY => DataType::Boolean,
        Type::TEXT_ARRAY | Type::VARCHAR_ARRAY | Type::BPCHAR_ARRAY => DataType::Utf8,
        Type::DATE_ARRAY => DataType::Date32,
        Type::TIMESTAMP_ARRAY => DataType::Timestamp(TimeUnit::Microsecond, None),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerics_keep_their_scale_in_binary() {
        let n = PgNumeric::parse("0.00").unwrap();
        assert_eq!(n.binary(), [0, 0, 0, 0, 0, 0, 0, 2]);
        let n = PgNumeric::parse("2548.81").unwrap();
        assert_eq!(n.binary(), [0, 2, 0, 0, 0, 0, 0, 2, 0x09, 0xF4, 0x1F, 0xA4]);
        let n = PgNumeric::parse("-0.05").unwrap();
        assert_eq!(n.binary(), [0, 1, 0xFF, 0xFF, 0x40, 0, 0, 2, 0x01, 0xF4]);
        let n = PgNumeric::parse("10000").unwrap();
        assert_eq!(n.binary(), [0, 1, 0, 1, 0, 0, 0, 0, 0, 1]);
        assert_eq!(PgNumeric::parse("x1"), None);
    }
}
