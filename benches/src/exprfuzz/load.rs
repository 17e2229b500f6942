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
    for (side, a) in [("postgres", &p), ("tessera", &t)] {
        if a.code().is_none() {
            let _ = sides
                .both(&format!("DELETE FROM fz WHERE id = {}", row.id))
                .await;
            return Some(format!("{side} stored it, the other side: {}", a.short()));
        }
    }
    Some(format!("postgres: {}; tessera: {}", p.short(), t.short()))
}

/// Inserts `row`, taking out the edge values that keep it from loading:
/// first one value alone (the usual case), else one more at a time.
async fn load_row(sides: &mut Sides, mut row: Row, notes: &mut Vec<String>) -> Result<Row, String> {
    loop {
        let Some(why) = insert_both(sides, &row).await else {
            return Ok(row);
        };
        let edges: Vec<usize> = (0..COLUMNS.len())
            .filter(|k| row.values[*k].is_some_and(|v| v != COLUMNS[*k].values[0]))
            .collect();
        let Some(first) = edges.first().copied() else {
            return Err(format!("row {} does not load: {why}", row.id));
        };
        let ordinary = |r: &Row, k: usize| {
            let mut r = r.clone();
            r.values[k] = Some(COLUMNS[k].values[0]);
            r
        };
        let mut taken = None;
        for k in &edges {
            if insert_both(sides, &ordinary(&row, *k)).await.is_none() {
                taken = Some(*k);
                break;
            }
        }
        let k = taken.unwrap_or(first);
        notes.push(format!(
            "row {}: {} = {} left out ({why})",
            row.id,
            COLUMNS[k].name,
            row.values[k].unwrap_or("NULL")
        ));
        row = ordinary(&row, k);
        if taken.is_some() {
            return Ok(row);
        }
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
    notes.extend(read_back(sides).await);
    Ok(Loaded {
        rows: loaded,
        notes,
    })
}

/// Cells the two servers read back differently.
async fn read_back(sides: &mut Sides) -> Vec<String> {
    let (p, t) = sides.both("SELECT * FROM fz ORDER BY id").await;
    let (Answer::Rows { rows: pr, .. }, Answer::Rows { rows: tr, .. }) = (&p, &t) else {
        return vec![format!(
            "reading fz back: postgres {}, tessera {}",
            class(&p),
            class(&t)
        )];
    };
    let mut out = vec![];
    for (prow, trow) in pr.iter().zip(tr) {
        let id = prow.first().cloned().flatten().unwrap_or_default();
        for (k, (pv, tv)) in prow.iter().zip(trow).enumerate().skip(1) {
            if pv != tv {
                out.push(format!(
                    "row {id}: {} reads back as {:?} on postgres, {:?} on tessera",
                    COLUMNS.get(k - 1).map(|c| c.name).unwrap_or("?"),
                    pv,
                    tv
                ));
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
    out
}
