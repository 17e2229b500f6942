//! PostgreSQL's binary result format decoded to comparable text, for the
//! differential suite's extended-protocol runs: each value is read as the
//! type its RowDescription names (integers of any width alike, numerics
//! at their own scale, dates and times from 2000-01-01, arrays element by
//! element), so two servers' answers compare by value while each server's
//! binary encoding is exercised. Unknown types compare by their bytes.

use tokio_postgres::types::{FromSql, Kind, Type};

/// One result value: its type and bytes (None for NULL).
#[derive(Debug)]
pub struct Raw(pub Option<String>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(Some(text_of(ty, raw)?)))
    }
    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(None))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

type E = Box<dyn std::error::Error + Sync + Send>;

fn take<const N: usize>(b: &[u8], at: usize) -> Result<[u8; N], E> {
    b.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| "short binary value".into())
}

fn i16_at(b: &[u8], at: usize) -> Result<i16, E> {
    Ok(i16::from_be_bytes(take(b, at)?))
}

fn i32_at(b: &[u8], at: usize) -> Result<i32, E> {
    Ok(i32::from_be_bytes(take(b, at)?))
}

fn i64_at(b: &[u8], at: usize) -> Result<i64, E> {
    Ok(i64::from_be_bytes(take(b, at)?))
}

/// The comparable text of one binary value of type `ty`.
pub fn text_of(ty: &Type, b: &[u8]) -> Result<String, E> {
    if let Kind::Array(elem) = ty.kind() {
        return array_text(elem, b);
    }
    Ok(match *ty {
        Type::INT2 => i16_at(b, 0)?.to_string(),
        Type::INT4 | Type::OID => i32_at(b, 0)?.to_string(),
        Type::INT8 => i64_at(b, 0)?.to_string(),
        Type::FLOAT4 => format!("{:?}", f32::from_be_bytes(take(b, 0)?)),
        Type::FLOAT8 => format!("{:?}", f64::from_be_bytes(take(b, 0)?)),
        Type::BOOL => if b.first() == Some(&1) { "t" } else { "f" }.into(),
        Type::NUMERIC => numeric_text(b)?,
        Type::DATE => date_text(i32_at(b, 0)? as i64),
        Type::TIMESTAMP => timestamp_text(i64_at(b, 0)?),
        Type::TIMESTAMPTZ => format!("{}+00", timestamp_text(i64_at(b, 0)?)),
        Type::TIME => time_text(i64_at(b, 0)?),
        Type::INTERVAL => format!(
            "{} months {} days {} us",
            i32_at(b, 12)?,
            i32_at(b, 8)?,
            i64_at(b, 0)?
        ),
        Type::BYTEA => hex(b),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
            String::from_utf8(b.to_vec())?
        }
        _ => format!("{}:{}", ty.name(), hex(b)),
    })
}

fn hex(b: &[u8]) -> String {
    let mut s = String::from("\\x");
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// PostgreSQL's numeric binary form (base-10000 digits, weight, sign,
/// display scale) as its text.
fn numeric_text(b: &[u8]) -> Result<String, E> {
    let ndigits = i16_at(b, 0)? as usize;
    let weight = i16_at(b, 2)? as i64;
    let sign = i16_at(b, 4)? as u16;
    let dscale = i16_at(b, 6)? as usize;
    if sign == 0xC000 {
        return Ok("NaN".into());
    }
    let digits: Vec<i64> = (0..ndigits)
        .map(|i| i16_at(b, 8 + 2 * i).map(|d| d as i64))
        .collect::<Result<_, _>>()?;
    let digit = |pos: i64| -> i64 {
        // Group `pos` (weight 0 is the units group).
        let idx = weight - pos;
        if idx < 0 || idx as usize >= digits.len() {
            0
        } else {
            digits[idx as usize]
        }
    };
    let mut int = String::new();
    if weight < 0 {
        int.push('0');
    } else {
        for pos in (0..=weight).rev() {
            let d = digit(pos);
            if int.is_empty() {
                int.push_str(&d.to_string());
            } else {
                int.push_str(&format!("{d:04}"));
            }
        }
    }
    let mut frac = String::new();
    let mut pos = -1;
    while frac.len() < dscale {
        frac.push_str(&format!("{:04}", digit(pos)));
        pos -= 1;
    }
    frac.truncate(dscale);
    let neg = if sign == 0x4000 { "-" } else { "" };
    Ok(if dscale == 0 {
        format!("{neg}{int}")
    } else {
        format!("{neg}{int}.{frac}")
    })
}

const EPOCH_DAYS_FROM_CE: i64 = 730_120; // 2000-01-01

fn date_text(days: i64) -> String {
    chrono::NaiveDate::from_num_days_from_ce_opt((days + EPOCH_DAYS_FROM_CE) as i32)
        .map(|d| d.to_string())
        .unwrap_or_else(|| format!("day {days}"))
}

fn timestamp_text(us: i64) -> String {
    let days = us.div_euclid(86_400_000_000);
    let rest = us.rem_euclid(86_400_000_000);
    format!("{} {}", date_text(days), time_text(rest))
}

fn time_text(us: i64) -> String {
    let (s, frac) = (us / 1_000_000, us % 1_000_000);
    let base = format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    if frac == 0 {
        base
    } else {
        format!("{base}.{}", format!("{frac:06}").trim_end_matches('0'))
    }
}

/// A binary array (`ndim`, flags, element OID, dimensions, elements) as
/// `{a,b,NULL}` of its elements' texts.
fn array_text(elem: &Type, b: &[u8]) -> Result<String, E> {
    let ndim = i32_at(b, 0)?;
    if ndim == 0 {
        return Ok("{}".into());
    }
    let mut at = 12;
    let mut n = 1usize;
    for _ in 0..ndim {
        n *= i32_at(b, at)?.max(0) as usize;
        at += 8;
    }
    let mut items = vec![];
    for _ in 0..n {
        let len = i32_at(b, at)?;
        at += 4;
        if len < 0 {
            items.push("NULL".to_string());
            continue;
        }
        let v = b.get(at..at + len as usize).ok_or("short array element")?;
        items.push(text_of(elem, v)?);
        at += len as usize;
    }
    Ok(format!("{{{}}}", items.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerics_decode_at_their_scale() {
        // 2548.81: ndigits 2, weight 0, sign +, dscale 2, digits 2548 8100.
        let b = [0, 2, 0, 0, 0, 0, 0, 2, 0x09, 0xF4, 0x1F, 0xA4];
        assert_eq!(numeric_text(&b).unwrap(), "2548.81");
        // -0.05: ndigits 1, weight -1, sign -, dscale 2, digits 500.
        let b = [0, 1, 0xFF, 0xFF, 0x40, 0, 0, 2, 0x01, 0xF4];
        assert_eq!(numeric_text(&b).unwrap(), "-0.05");
        // 10000: ndigits 1, weight 1, dscale 0, digits 1.
        let b = [0, 1, 0, 1, 0, 0, 0, 0, 0, 1];
        assert_eq!(numeric_text(&b).unwrap(), "10000");
    }

    #[test]
    fn dates_and_times_count_from_2000() {
        assert_eq!(date_text(0), "2000-01-01");
        assert_eq!(
            timestamp_text(86_400_000_000 + 1_500_000),
            "2000-01-02 00:00:01.5"
        );
        assert_eq!(date_text(-1), "1999-12-31");
    }
}
