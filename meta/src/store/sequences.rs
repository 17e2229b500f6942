//! Sequence reservations (ranges cached per node) and setval.

use common::{Error, Result};
use mysql_async::prelude::*;

use super::{me, MetaStore};

/// Values handed out by one reservation of a sequence: `count` values
/// from `first`, `increment` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceRange {
    pub first: i64,
    pub count: i64,
    pub increment: i64,
}

fn sequence_error(state: &'static str, message: String) -> Error {
    Error::Sql {
        state: common::SqlState(state),
        message,
    }
}

impl MetaStore {
    /// Reserves `count` values of a sequence; returns the first one.
    pub async fn reserve_sequence(&self, name: &str, count: i64) -> Result<i64> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            "UPDATE sequences SET next_value = LAST_INSERT_ID(next_value + ?) WHERE sequence_name = ?",
            (count, name),
        )
        .await
        .map_err(me)?;
        if conn.affected_rows() == 0 {
            return Err(Error::Execution {
                message: format!("sequence \"{name}\" does not exist"),
            });
        }
        let next: Option<i64> = conn
            .query_first("SELECT LAST_INSERT_ID()")
            .await
            .map_err(me)?;
        let next = next.ok_or_else(|| Error::meta("LAST_INSERT_ID() returned nothing"))?;
        Ok(next - count)
    }

    /// Reserves up to `count` values of sequence `id` (fewer near its
    /// bound), as PostgreSQL's `nextval` hands them out: from its start,
    /// `increment` apart, wrapping at the bound if it cycles, else 2200H.
    pub async fn reserve_sequence_values(&self, id: u64, count: i64) -> Result<SequenceRange> {
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(mysql_async::TxOpts::default())
            .await
            .map_err(me)?;
        type State = (String, String, i64, i64, i64, bool, i64, bool);
        let row: Option<State> = tx
            .exec_first(
                "SELECT schema_name, seq_name, increment_by, min_value, max_value, cycle, last_value, is_called FROM cat_sequences WHERE seq_id = ? FOR UPDATE",
                (id,),
            )
            .await
            .map_err(me)?;
        let Some((schema, name, inc, min, max, cycle, last, called)) = row else {
            return Err(sequence_error(
                "42P01",
                format!("sequence {id} does not exist"),
            ));
        };
        let (inc, min, max) = (inc as i128, min as i128, max as i128);
        let mut next = if called {
            last as i128 + inc
        } else {
            last as i128
        };
        if next > max || next < min {
            if !cycle {
                let (which, bound) = if inc > 0 {
                    ("maximum", max)
                } else {
                    ("minimum", min)
                };
                return Err(sequence_error(
                    "2200H",
                    format!("nextval: reached {which} value of sequence \"{name}\" ({bound})"),
                ));
            }
            next = if inc > 0 { min } else { max };
        }
        let room = if inc > 0 {
            (max - next) / inc + 1
        } else {
            (min - next) / inc + 1
        };
        let n = room.min(count.max(1) as i128);
        let last_given = next + (n - 1) * inc;
        tx.exec_drop(
            "UPDATE cat_sequences SET last_value = ?, is_called = TRUE WHERE seq_id = ?",
            (last_given as i64, id),
        )
        .await
        .map_err(me)?;
        tx.commit().await.map_err(me)?;
        let _ = schema;
        Ok(SequenceRange {
            first: next as i64,
            count: n as i64,
            increment: inc as i64,
        })
    }

    /// `setval`: the sequence's state set (bounds checked, 22003), and the
    /// catalog version moved so every node drops its cached range of it.
    pub async fn set_sequence_value(&self, id: u64, value: i64, is_called: bool) -> Result<()> {
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(mysql_async::TxOpts::default())
            .await
            .map_err(me)?;
        let row: Option<(String, i64, i64)> = tx
            .exec_first(
                "SELECT seq_name, min_value, max_value FROM cat_sequences WHERE seq_id = ? FOR UPDATE",
                (id,),
            )
            .await
            .map_err(me)?;
        let Some((name, min, max)) = row else {
            return Err(sequence_error(
                "42P01",
                format!("sequence {id} does not exist"),
            ));
        };
        if value < min || value > max {
            return Err(sequence_error(
                "22003",
                format!(
                    "setval: value {value} is out of bounds for sequence \"{name}\" ({min}..{max})"
                ),
            ));
        }
        tx.exec_drop(
            "UPDATE cat_sequences SET last_value = ?, is_called = ?, generation = generation + 1 WHERE seq_id = ?",
            (value, is_called, id),
        )
        .await
        .map_err(me)?;
        tx.query_drop("UPDATE catalog_version SET version = version + 1 WHERE id = 1")
            .await
            .map_err(me)?;
        tx.commit().await.map_err(me)
    }
}
