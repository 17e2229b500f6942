//! Loading `fz` into both servers. A row a server refuses (a value
//! MariaDB cannot store, say) is retried with its edge values replaced by
//! the column's ordinary value one column at a time, so one unstorable
//! value costs one cell, not the row; what was taken out is reported, and
//! so is every stored value the two servers read back differently (an
//! expression over such a column would differ for that reason alone).

use super::check::{class, Sides};
use super::table::{create_table, insert, rows, Row, COLUMNS};
use crate::answer::Answer;

/// What loading left behind.
pub struct Loaded {
    pub rows: Vec<Row>,
    /// Values taken out, and values read back differently.
    pub notes: Vec<String>,
}

async fn insert_both(sides: &mut Sides, row: &Row) -> Option<String> {
    let (p, t) = sides.both(&insert(row)).await;
    if p.code().is_none() && t.code().is_none() {
        return None;
    }
    if p.code().is_none() || t.code().is_none() {
        // One side stored it: take it out there, so both hold the same.
        let _ = sides
            .both(&format!("DELETE FROM fz WHERE id = {}", row.id))
            .await;
    }
    Some(format!("postgres: {}; tessera: {}", p.short(), t.short()))
}

/// Inserts `row`; if a server refuses it, each edge value is tried alone
/// in an otherwise ordinary row, and the values refused that way are
/// taken out (replaced by the column's ordinary value).
async fn load_row(sides: &mut Sides, mut row: Row, notes: &mut Vec<String>) -> Result<Row, String> {
    let Some(why) = insert_both(sides, &row).await else {
        return Ok(row);
    };
    let ordinary = Row {
        id: row.id,
        values: COLUMNS.iter().map(|c| Some(c.values[0])).collect(),
    };
    for (k, col) in COLUMNS.iter().enumerate() {
        let Some(v) = row.values[k].filter(|v| *v != col.values[0]) else {
            continue;
        };
        let mut probe = ordinary.clone();
        probe.values[k] = Some(v);
        match insert_both(sides, &probe).await {
            None => {
                let _ = sides
                    .both(&format!("DELETE FROM fz WHERE id = {}", row.id))
                    .await;
            }
            Some(alone) => {
                notes.push(format!(
                    "row {}: {} = {v} left out: {alone}",
                    row.id, col.name
                ));
                row.values[k] = Some(col.values[0]);
            }
        }
    }
    match insert_both(sides, &row).await {
        None => Ok(row),
        Some(still) => Err(format!(
            "row {} does not load ({why}); without the values refused alone: {still}",
            row.id
        )),
    }
}

pub async fn load(sides: &mut Sides) -> Result<Loaded, String> {
    for sql in ["DROP TABLE IF EXISTS fz", &create_table()] {
        let (p, t) = sides.both(sql).await;
        if let Some(e) = [p, t].iter().find(|a| a.code().is_some()) {
            return Err(format!("{sql}: {}", e.short()));
        }
    }
    let mut notes = vec![];
    let mut loaded = vec![];
    for row in rows() {
        loaded.push(load_row(sides, row, &mut notes).await?);
    }
    // A value read back differently would make every expression over it
    // differ: it is reported once here and replaced by the ordinary value.
    let (cells, more) = read_back(sides).await;
    notes.extend(more);
    for (id, k) in cells {
        let col = &COLUMNS[k];
        let sql = format!(
            "UPDATE fz SET {} = {} WHERE id = {id}",
            col.name, col.values[0]
        );
        let _ = sides.both(&sql).await;
        if let Some(r) = loaded.iter_mut().find(|r| r.id == id) {
            r.values[k] = Some(col.values[0]);
        }
    }
    let (cells, more) = read_back(sides).await;
    if !cells.is_empty() {
        return Err(format!("fz still reads back differently: {more:?}"));
    }
    Ok(Loaded {
        rows: loaded,
        notes,
    })
}

/// Cells (id, column) the two servers read back differently, and notes.
async fn read_back(sides: &mut Sides) -> (Vec<(usize, usize)>, Vec<String>) {
    let (p, t) = sides.both("SELECT * FROM fz ORDER BY id").await;
    let (Answer::Rows { rows: pr, .. }, Answer::Rows { rows: tr, .. }) = (&p, &t) else {
        let note = format!(
            "reading fz back: postgres {}, tessera {}",
            class(&p),
            class(&t)
        );
        return (vec![], vec![note]);
    };
    let mut cells = vec![];
    let mut out = vec![];
    for (prow, trow) in pr.iter().zip(tr) {
        let id = prow.first().cloned().flatten().unwrap_or_default();
        for (k, (pv, tv)) in prow.iter().zip(trow).enumerate().skip(1) {
            if pv != tv {
                out.push(format!(
                    "row {id}: {} reads back as {:?} on postgres, {:?} on tessera (replaced)",
                    COLUMNS.get(k - 1).map(|c| c.name).unwrap_or("?"),
                    pv,
                    tv
                ));
                if let Ok(id) = id.parse() {
                    cells.push((id, k - 1));
                }
            }
        }
    }
    if pr.len() != tr.len() {
        out.push(format!(
            "fz has {} rows on postgres, {} on tessera",
            pr.len(),
            tr.len()
        ));
    }
    (cells, out)
}
