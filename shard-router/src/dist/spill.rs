//! The rest of a shard scan's rows, read off its connection early so
//! another read of the same shard can have it (`crate::txn`'s connection
//! slot): kept in memory up to [`IN_MEMORY`] bytes, the rest in an unnamed
//! temporary file as Arrow IPC, then handed to the scan's consumer in order.

use std::collections::VecDeque;
use std::io::{BufReader, BufWriter, Seek, SeekFrom};

use common::{Error, Result};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::common::DataFusionError;

/// Bytes of batches one drained scan keeps in memory.
const IN_MEMORY: usize = 16 << 20;

pub(crate) type BatchSender =
    tokio::sync::mpsc::Sender<std::result::Result<RecordBatch, DataFusionError>>;

pub(crate) struct Spill {
    schema: SchemaRef,
    memory: VecDeque<RecordBatch>,
    bytes: usize,
    file: Option<StreamWriter<BufWriter<std::fs::File>>>,
}

impl Spill {
    pub(crate) fn new(schema: SchemaRef) -> Spill {
        Spill {
            schema,
            memory: VecDeque::new(),
            bytes: 0,
            file: None,
        }
    }

    pub(crate) fn push(&mut self, batch: RecordBatch) -> Result<()> {
        let size = batch.get_array_memory_size();
        if self.file.is_none() && self.bytes + size <= IN_MEMORY {
            self.bytes += size;
            self.memory.push_back(batch);
            return Ok(());
        }
        if self.file.is_none() {
            let f = tempfile::tempfile().map_err(|e| io_error("create", e))?;
            self.file = Some(
                StreamWriter::try_new(BufWriter::new(f), &self.schema).map_err(Error::internal)?,
            );
        }
        if let Some(w) = self.file.as_mut() {
            w.write(&batch).map_err(Error::internal)?;
        }
        Ok(())
    }

    /// Sends every batch to `tx`, in the order pushed; stops early if the
    /// consumer has gone.
    pub(crate) async fn forward(self, tx: &BatchSender) -> Result<()> {
        for b in self.memory {
            if tx.send(Ok(b)).await.is_err() {
                return Ok(());
            }
        }
        let Some(mut w) = self.file else {
            return Ok(());
        };
        w.finish().map_err(Error::internal)?;
        let mut f = w
            .into_inner()
            .map_err(Error::internal)?
            .into_inner()
            .map_err(|e| io_error("flush", e.into_error()))?;
        f.seek(SeekFrom::Start(0))
            .map_err(|e| io_error("rewind", e))?;
        let tx = tx.clone();
        // File reads block: on a blocking thread, one batch at a time.
        tokio::task::spawn_blocking(move || {
            let reader = StreamReader::try_new(BufReader::new(f), None).map_err(Error::internal)?;
            for b in reader {
                let b = b.map_err(DataFusionError::from);
                if tx.blocking_send(b).is_err() {
                    break;
                }
            }
            Ok(())
        })
        .await
        .map_err(Error::internal)?
    }
}

fn io_error(what: &str, e: std::io::Error) -> Error {
    Error::Sql {
        state: common::SqlState("58030"),
        message: format!("could not {what} a temporary file for a shard scan's rows: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    #[tokio::test]
    async fn batches_come_back_in_order_from_memory_and_file() {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let mut spill = Spill::new(schema.clone());
        // 16 MiB in memory, then the file: 40 batches of 1 MiB.
        let n = 131_072i64;
        for i in 0..40i64 {
            let col = Int64Array::from_iter_values((0..n).map(|j| i * n + j));
            spill
                .push(RecordBatch::try_new(schema.clone(), vec![Arc::new(col)]).unwrap())
                .unwrap();
        }
        assert!(spill.file.is_some() && !spill.memory.is_empty());
        let (tx, mut rx) = tokio::sync::mpsc::channel(2);
        let fwd = tokio::spawn(async move { spill.forward(&tx).await });
        let mut next = 0i64;
        while let Some(b) = rx.recv().await {
            let b = b.unwrap();
            let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            for v in col.values() {
                assert_eq!(*v, next);
                next += 1;
            }
        }
        fwd.await.unwrap().unwrap();
        assert_eq!(next, 40 * n);
    }
}
