//! Shard rows into Arrow: the rows of a query streamed from a leased
//! connection as Arrow batches of `BATCH_ROWS`, each value decoded as its
//! column's catalog type (exact decimals, bpchar without trailing blanks).

use std::sync::Arc;

use common::{Datum, Result as TResult, SqlType};
use datafusion::arrow::array::*;
use datafusion::arrow::datatypes::SchemaRef;
use storage_adapter::convert::from_mysql;

use super::spill::{BatchSender, Spill};
use crate::sql::decimal_params;
use crate::txn::Lease;

const BATCH_ROWS: usize = 8192;

/// The i128 mantissa of `d` at `scale` for an Arrow `Decimal128(precision,
/// scale)`, exactly: digits are added without limit of rust_decimal's 28
/// places (its `rescale` clamps the scale and so changed values: a
/// numeric(38,20) 123456789012.5 became 123456789.0125); 22003 past the
/// precision, 0A000 for more places than `scale`.
pub fn decimal_mantissa(
    d: &rust_decimal::Decimal,
    precision: u8,
    scale: u8,
) -> common::Result<i128> {
    let overflow = || {
        common::Error::NumericOutOfRange {
        message: format!("numeric field overflow: a value of precision {precision}, scale {scale} must round to an absolute value less than 10^{}", precision as i32 - scale as i32),
    }
    };
    let m = d.mantissa();
    let ds = d.scale();
    let s = scale as u32;
    let v = if s >= ds {
        m.checked_mul(10i128.checked_pow(s - ds).ok_or_else(overflow)?)
            .ok_or_else(overflow)?
    } else {
        // Shards store a numeric(p, s) column with exactly s places, so
        // only an unconstrained numeric can have more: refused, since
        // rounding it would change the value.
        let div = 10i128.pow(ds - s);
        if m % div != 0 {
            return Err(common::Error::unsupported(format!(
                "unconstrained numeric values with more than {scale} decimal places on the distributed path"
            )));
        }
        m / div
    };
    if v.unsigned_abs() >= 10u128.pow(precision.min(38) as u32) {
        return Err(overflow());
    }
    Ok(v)
}

/// How a shard scan's stream ended (rows and bytes read).
pub(crate) enum Streamed {
    Done(u64, u64),
    /// The consumer went away before the last row (the query is still
    /// running: the caller kills it).
    Gone,
    /// Another read waited for the connection while the consumer was not
    /// reading: the rest of the rows were read off it into a [`Spill`] for
    /// the caller to send once the connection is let go.
    Drained(u64, u64, Box<Spill>),
}

/// What became of a batch offered to the consumer.
enum Offered {
    Sent,
    Gone,
    Wanted(RecordBatch),
}

/// Sends `batch` when the consumer has room; gives it back instead if
/// another read waits for the connection before then.
async fn offer(
    tx: &BatchSender,
    batch: RecordBatch,
    contention: Option<&crate::txn::Contention>,
) -> Offered {
    let permit = match contention {
        None => tx.reserve().await,
        Some(c) => tokio::select! {
            biased;
            p = tx.reserve() => p,
            () = c.wanted() => return Offered::Wanted(batch),
        },
    };
    match permit {
        Ok(p) => {
            p.send(Ok(batch));
            Offered::Sent
        }
        Err(_) => Offered::Gone,
    }
}

/// Streams the rows of `sql` run on the leased connection as Arrow batches
/// to `tx`. The connection is held to the last row unless another read of
/// the same connection waits while the consumer is not reading: then the
/// rest is drained (see [`Streamed::Drained`]).
pub(crate) async fn stream_rows(
    lease: &mut Lease,
    sql: &str,
    schema: SchemaRef,
    types: &[SqlType],
    tx: &BatchSender,
) -> TResult<Streamed> {
    use mysql_async::prelude::Queryable;
    let mut total_rows = 0u64;
    let mut total_bytes = 0u64;
    let shard = lease.shard();
    let contention = lease.contention();
    let mut pin = lease.take_view_pin();
    let conn = lease.conn()?;
    let mut result = conn
        .query_iter(sql)
        .await
        .map_err(|e| super::exec::statement_error(shard, e, sql))?;
    let mut builders: Vec<ColumnBuilder> = types.iter().map(ColumnBuilder::new).collect();
    let mut rows = 0usize;
    let mut spill: Option<Spill> = None;
    loop {
        let row = result
            .next()
            .await
            .map_err(|e| super::exec::statement_error(shard, e, sql))?;
        // A row (or the end) came: the statement's read view is open.
        if let Some(p) = pin.take() {
            p.opened()?;
        }
        let last = row.is_none();
        if let Some(row) = row {
            // Values never taken out of the row: each is present.
            let values: Vec<mysql_async::Value> = row
                .unwrap_raw()
                .into_iter()
                .map(|v| v.unwrap_or(mysql_async::Value::NULL))
                .collect();
            total_rows += 1;
            for v in &values {
                total_bytes += match v {
                    mysql_async::Value::Bytes(b) => b.len() as u64,
                    _ => 8,
                };
            }
            for ((b, v), ty) in builders.iter_mut().zip(values).zip(types) {
                let d = match (ty, from_mysql(v, ty)?) {
                    // bpchar semantics in DataFusion: trailing blanks do not
                    // count (comparisons, joins, grouping).
                    (SqlType::Char(_), Datum::Text(s)) => {
                        Datum::Text(s.trim_end_matches(' ').to_string())
                    }
                    (_, d) => d,
                };
                b.append(d)?;
            }
            rows += 1;
        }
        if rows == BATCH_ROWS || (last && rows > 0) {
            let batch = finish(&schema, &mut builders, rows)?;
            rows = 0;
            match &mut spill {
                Some(s) => s.push(batch)?,
                None => match offer(tx, batch, contention.as_ref()).await {
                    Offered::Sent => {}
                    // The consumer is gone: the caller kills the query.
                    Offered::Gone => return Ok(Streamed::Gone),
                    Offered::Wanted(batch) => {
                        let mut s = Spill::new(schema.clone());
                        s.push(batch)?;
                        spill = Some(s);
                    }
                },
            }
        }
        if last {
            break;
        }
    }
    Ok(match spill {
        Some(s) => Streamed::Drained(total_rows, total_bytes, Box::new(s)),
        None => Streamed::Done(total_rows, total_bytes),
    })
}

fn finish(schema: &SchemaRef, builders: &mut [ColumnBuilder], rows: usize) -> TResult<RecordBatch> {
    let arrays: Vec<ArrayRef> = builders.iter_mut().map(|b| b.finish()).collect();
    RecordBatch::try_new_with_options(
        schema.clone(),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(common::Error::internal)
}

/// An Arrow array builder for one column type.
pub enum ColumnBuilder {
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
    Str(StringBuilder),
    Bin(BinaryBuilder),
    Date(Date32Builder),
    Ts(TimestampMicrosecondBuilder, bool),
    Dec(Decimal128Builder, u8, u8),
}

impl ColumnBuilder {
    pub fn new(t: &SqlType) -> ColumnBuilder {
        match t {
            SqlType::SmallInt => ColumnBuilder::I16(Int16Builder::new()),
            SqlType::Integer => ColumnBuilder::I32(Int32Builder::new()),
            SqlType::BigInt => ColumnBuilder::I64(Int64Builder::new()),
            SqlType::Real => ColumnBuilder::F32(Float32Builder::new()),
            SqlType::Double => ColumnBuilder::F64(Float64Builder::new()),
            SqlType::Boolean => ColumnBuilder::Bool(BooleanBuilder::new()),
            SqlType::Char(_) | SqlType::Varchar(_) | SqlType::Text => {
                ColumnBuilder::Str(StringBuilder::new())
            }
            SqlType::Bytea => ColumnBuilder::Bin(BinaryBuilder::new()),
            SqlType::Date => ColumnBuilder::Date(Date32Builder::new()),
            SqlType::Timestamp => ColumnBuilder::Ts(TimestampMicrosecondBuilder::new(), false),
            SqlType::TimestampTz => ColumnBuilder::Ts(TimestampMicrosecondBuilder::new(), true),
            SqlType::Numeric { precision, scale } => {
                let (p, s) = decimal_params(*precision, *scale);
                ColumnBuilder::Dec(Decimal128Builder::new(), p, s)
            }
        }
    }

    pub fn append(&mut self, d: Datum) -> TResult<()> {
        let bad = |d: &Datum| common::Error::internal(format!("unexpected value {d:?}"));
        match (self, d) {
            (ColumnBuilder::I16(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::I32(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::I64(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::F32(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::F64(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Bool(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Str(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Bin(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Date(b), Datum::Null) => b.append_null(),
            (ColumnBuilder::Ts(b, _), Datum::Null) => b.append_null(),
            (ColumnBuilder::Dec(b, _, _), Datum::Null) => b.append_null(),
            (ColumnBuilder::I16(b), Datum::Int(i)) => b.append_value(i as i16),
            (ColumnBuilder::I32(b), Datum::Int(i)) => b.append_value(i as i32),
            (ColumnBuilder::I64(b), Datum::Int(i)) => b.append_value(i),
            (ColumnBuilder::F32(b), Datum::Float(f)) => b.append_value(f as f32),
            (ColumnBuilder::F64(b), Datum::Float(f)) => b.append_value(f),
            (ColumnBuilder::Bool(b), Datum::Bool(v)) => b.append_value(v),
            (ColumnBuilder::Str(b), Datum::Text(s)) => b.append_value(s),
            (ColumnBuilder::Bin(b), Datum::Bytes(v)) => b.append_value(v),
            (ColumnBuilder::Date(b), Datum::Date(d)) => {
                b.append_value(common::value::days_since_epoch(d) as i32)
            }
            (ColumnBuilder::Ts(b, _), Datum::Timestamp(t)) => {
                b.append_value(t.and_utc().timestamp_micros())
            }
            (ColumnBuilder::Ts(b, _), Datum::TimestampTz(t)) => {
                b.append_value(t.timestamp_micros())
            }
            (ColumnBuilder::Dec(b, p, s), Datum::Decimal(d)) => {
                b.append_value(decimal_mantissa(&d, *p, *s)?)
            }
            (_, d) => return Err(bad(&d)),
        }
        Ok(())
    }

    pub fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::I16(b) => Arc::new(b.finish()),
            ColumnBuilder::I32(b) => Arc::new(b.finish()),
            ColumnBuilder::I64(b) => Arc::new(b.finish()),
            ColumnBuilder::F32(b) => Arc::new(b.finish()),
            ColumnBuilder::F64(b) => Arc::new(b.finish()),
            ColumnBuilder::Bool(b) => Arc::new(b.finish()),
            ColumnBuilder::Str(b) => Arc::new(b.finish()),
            ColumnBuilder::Bin(b) => Arc::new(b.finish()),
            ColumnBuilder::Date(b) => Arc::new(b.finish()),
            ColumnBuilder::Ts(b, tz) => {
                let a = b.finish();
                if *tz {
                    Arc::new(a.with_timezone("+00:00"))
                } else {
                    Arc::new(a)
                }
            }
            ColumnBuilder::Dec(b, p, s) => {
                let a = b.finish();
                match a.clone().with_precision_and_scale(*p, *s as i8) {
                    Ok(x) => Arc::new(x),
                    Err(_) => Arc::new(a),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::decimal_mantissa;
    use rust_decimal::Decimal;
    use std::str::FromStr;

    #[test]
    fn decimal_mantissa_is_exact_at_any_scale() {
        let d = Decimal::from_str("123456789012.5").unwrap();
        assert_eq!(
            decimal_mantissa(&d, 38, 20).unwrap(),
            12_345_678_901_250_000_000_000_000_000_000
        );
        let d = Decimal::from_str("1.5").unwrap();
        assert_eq!(decimal_mantissa(&d, 38, 30).unwrap(), 15 * 10i128.pow(29));
        let d = Decimal::from_str("-2.340").unwrap();
        assert_eq!(decimal_mantissa(&d, 10, 2).unwrap(), -234);
        let d = Decimal::from_str("-2.345").unwrap();
        assert!(decimal_mantissa(&d, 10, 2).is_err());
        let d = Decimal::from_str("1000").unwrap();
        assert!(decimal_mantissa(&d, 5, 2).is_err());
    }
}
