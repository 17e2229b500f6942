//! Loading Arrow batches into a server over the PostgreSQL wire with
//! `COPY ... FROM STDIN` (text format), as `tpch` and `tpcds` do for
//! Tessera and PostgreSQL alike.

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use futures::SinkExt;

/// COPY text-format lines for a batch (`\N` for NULL, backslash escapes).
pub fn copy_text(batch: &RecordBatch) -> Result<String, String> {
    let fo = FormatOptions::default();
    let fmts = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &fo))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    for r in 0..batch.num_rows() {
        for (i, f) in fmts.iter().enumerate() {
            if i > 0 {
                out.push('\t');
            }
            if batch.column(i).is_null(r) {
                out.push_str("\\N");
                continue;
            }
            for ch in f.value(r).to_string().chars() {
                match ch {
                    '\\' => out.push_str("\\\\"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    c => out.push(c),
                }
            }
        }
        out.push('\n');
    }
    Ok(out)
}

/// Streams batches into `table` (its columns named from the batches'
/// schema) with one COPY; returns the rows the server reported, which
/// must be the rows sent. `expected` rows drive a percentage on stderr.
pub async fn copy_batches(
    client: &tokio_postgres::Client,
    table: &str,
    batches: impl Iterator<Item = Result<RecordBatch, ArrowError>>,
    expected: u64,
) -> Result<u64, String> {
    let mut batches = batches.peekable();
    let columns = match batches.peek() {
        Some(Ok(b)) => b
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect::<Vec<_>>()
            .join(", "),
        Some(Err(e)) => return Err(format!("{table}: {e}")),
        None => return Ok(0),
    };
    let sink = client
        .copy_in::<_, bytes::Bytes>(&format!("COPY {table} ({columns}) FROM STDIN"))
        .await
        .map_err(|e| format!("COPY {table}: {e}"))?;
    futures::pin_mut!(sink);
    let mut sent = 0u64;
    for b in batches {
        let b = b.map_err(|e| format!("{table}: {e}"))?;
        sink.send(bytes::Bytes::from(copy_text(&b)?))
            .await
            .map_err(|e| format!("COPY {table}: {e}"))?;
        let before = sent * 10 / expected.max(1);
        sent += b.num_rows() as u64;
        // `expected` may count fewer than the rows (a TPC-DS sales table's
        // tickets): no percentage past 100.
        if expected > 100_000 && sent <= expected && sent * 10 / expected.max(1) > before {
            eprint!(" {}%", sent * 100 / expected.max(1));
        }
    }
    let n = sink
        .finish()
        .await
        .map_err(|e| format!("COPY {table}: {e}"))?;
    if n != sent {
        return Err(format!("COPY {table} reported {n} rows, sent {sent}"));
    }
    Ok(n)
}
