//! The five TPC-C transactions (2.4-2.8) over the prepared statements of
//! [`super::statements`], as a terminal runs them; each is one transaction
//! block. The same logic runs over either protocol ([`Db`]).

use rust_decimal::Decimal;

use super::db::{Db, DbError, Row, V};
use super::{Rng, CUSTOMERS, C_ID, C_LAST, DISTRICTS, ITEMS, OL_I_ID};
use V::I32;

/// Outcome of one transaction.
pub enum Done {
    /// `remote`: the transaction touched another warehouse (remote order
    /// lines, a remote customer's payment) - a distributed transaction on
    /// a cluster when that warehouse lives on another shard.
    Committed {
        remote: bool,
    },
    RolledBack,
}

pub type TxResult = Result<Done, DbError>;

async fn opt<D: Db>(c: &mut D, k: &'static str, p: &[V]) -> Result<Option<Row>, DbError> {
    Ok(c.exec(k, p).await?.into_iter().next())
}

/// Exactly one row, as `query_one`.
async fn one<D: Db>(c: &mut D, k: &'static str, p: &[V]) -> Result<Row, DbError> {
    opt(c, k, p).await?.ok_or_else(|| DbError {
        sqlstate: "result".into(),
        message: format!("{k}: no row"),
    })
}

/// A customer by id (40 %) or by last name (60 %): the middle one in
/// c_first order (2.5.2.2).
async fn customer<D: Db>(c: &mut D, rng: &mut Rng, w: i32, d: i32) -> Result<Option<i32>, DbError> {
    if rng.int(1, 100) <= 60 {
        let last = super::last_name(rng.nurand(255, 0, 999, C_LAST));
        let rows = c.exec("byname", &[I32(w), I32(d), V::Text(last)]).await?;
        match rows.get(rows.len().saturating_sub(1) / 2) {
            Some(r) => Ok(Some(r[0].i32()?)),
            None => Ok(None),
        }
    } else {
        Ok(Some(rng.nurand(1023, 1, CUSTOMERS as u64, C_ID) as i32))
    }
}

/// Another warehouse than `w`, uniformly.
fn other(rng: &mut Rng, w: i32, ws: u32) -> i32 {
    let o = rng.int(1, ws as u64 - 1) as i32;
    if o >= w {
        o + 1
    } else {
        o
    }
}

pub async fn new_order<D: Db>(c: &mut D, rng: &mut Rng, w: i32, ws: u32) -> TxResult {
    let d = rng.int(1, 10) as i32;
    let cid = rng.nurand(1023, 1, CUSTOMERS as u64, C_ID) as i32;
    let n = rng.int(5, 15) as usize;
    let rollback = rng.int(1, 100) == 1;
    let mut lines = vec![];
    for i in 0..n {
        let item = if rollback && i == n - 1 {
            ITEMS as i32 + 1
        } else {
            rng.nurand(8191, 1, ITEMS as u64, OL_I_ID) as i32
        };
        let supply = if ws > 1 && rng.int(1, 100) == 1 {
            other(rng, w, ws)
        } else {
            w
        };
        lines.push((item, supply, rng.int(1, 10) as i32));
    }
    let all_local = lines.iter().all(|l| l.1 == w) as i32;
    c.batch("BEGIN").await?;
    one(c, "cust", &[I32(w), I32(d), I32(cid)]).await?;
    one(c, "wtax", &[I32(w)]).await?;
    let o_id = one(c, "dist", &[I32(w), I32(d)]).await?[0].i32()?;
    c.exec("dnext", &[I32(w), I32(d)]).await?;
    c.exec(
        "oins",
        &[
            I32(w),
            I32(d),
            I32(o_id),
            I32(cid),
            I32(n as i32),
            I32(all_local),
        ],
    )
    .await?;
    c.exec("noins", &[I32(w), I32(d), I32(o_id)]).await?;
    for (num, &(item, supply, qty)) in lines.iter().enumerate() {
        let Some(irow) = opt(c, "item", &[I32(item)]).await? else {
            c.batch("ROLLBACK").await?;
            return Ok(Done::RolledBack);
        };
        let price = irow[0].dec()?.unwrap_or_default();
        let srow = one(c, "stock", &[I32(supply), I32(item)]).await?;
        let q = srow[0].i32()?;
        let info = srow[2].text()?;
        let nq = if q - qty >= 10 { q - qty } else { q - qty + 91 };
        let remote = (supply != w) as i32;
        c.exec(
            "supd",
            &[I32(nq), I32(qty), I32(remote), I32(supply), I32(item)],
        )
        .await?;
        let amount = price * Decimal::from(qty);
        c.exec(
            "olins",
            &[
                I32(w),
                I32(d),
                I32(o_id),
                I32(num as i32 + 1),
                I32(item),
                I32(supply),
                I32(qty),
                V::Dec(amount),
                V::Text(info),
            ],
        )
        .await?;
    }
    c.batch("COMMIT").await?;
    Ok(Done::Committed {
        remote: all_local == 0,
    })
}

pub async fn payment<D: Db>(c: &mut D, rng: &mut Rng, w: i32, ws: u32, h_id: i64) -> TxResult {
    let d = rng.int(1, 10) as i32;
    let (cw, cd) = if ws > 1 && rng.int(1, 100) > 85 {
        (other(rng, w, ws), rng.int(1, 10) as i32)
    } else {
        (w, d)
    };
    let amount = V::Dec(Decimal::new(rng.int(100, 500_000) as i64, 2));
    c.batch("BEGIN").await?;
    c.exec("wpay", &[amount.clone(), I32(w)]).await?;
    c.exec("dpay", &[amount.clone(), I32(w), I32(d)]).await?;
    let Some(cid) = customer(c, rng, cw, cd).await? else {
        c.batch("ROLLBACK").await?;
        return Ok(Done::RolledBack);
    };
    one(c, "cpay", &[I32(cw), I32(cd), I32(cid)]).await?;
    c.exec("cupd", &[amount.clone(), I32(cw), I32(cd), I32(cid)])
        .await?;
    let data = V::Text(rng.astring(12, 24));
    c.exec(
        "hins",
        &[
            I32(w),
            V::I64(h_id),
            I32(cid),
            I32(cd),
            I32(cw),
            I32(d),
            amount,
            data,
        ],
    )
    .await?;
    c.batch("COMMIT").await?;
    Ok(Done::Committed { remote: cw != w })
}

pub async fn order_status<D: Db>(c: &mut D, rng: &mut Rng, w: i32) -> TxResult {
    let d = rng.int(1, 10) as i32;
    c.batch("BEGIN").await?;
    if let Some(cid) = customer(c, rng, w, d).await? {
        one(c, "cbal", &[I32(w), I32(d), I32(cid)]).await?;
        if let Some(o) = opt(c, "olast", &[I32(w), I32(d), I32(cid)]).await? {
            let o_id = o[0].i32()?;
            c.exec("olines", &[I32(w), I32(d), I32(o_id)]).await?;
        }
    }
    c.batch("COMMIT").await?;
    Ok(Done::Committed { remote: false })
}

pub async fn delivery<D: Db>(c: &mut D, rng: &mut Rng, w: i32) -> TxResult {
    let carrier = rng.int(1, 10) as i32;
    c.batch("BEGIN").await?;
    for d in 1..=DISTRICTS as i32 {
        let Some(no) = opt(c, "nofirst", &[I32(w), I32(d)]).await? else {
            continue;
        };
        let o = I32(no[0].i32()?);
        let (w, d) = (I32(w), I32(d));
        c.exec("nodel", &[w.clone(), d.clone(), o.clone()]).await?;
        c.exec("ocarrier", &[I32(carrier), w.clone(), d.clone(), o.clone()])
            .await?;
        let cid = one(c, "ocust", &[w.clone(), d.clone(), o.clone()]).await?[0].i32()?;
        c.exec("oldeliv", &[w.clone(), d.clone(), o.clone()])
            .await?;
        let sum = one(c, "olsum", &[w.clone(), d.clone(), o]).await?[0]
            .dec()?
            .unwrap_or_default();
        c.exec("cdeliv", &[V::Dec(sum), w, d, I32(cid)]).await?;
    }
    c.batch("COMMIT").await?;
    Ok(Done::Committed { remote: false })
}

pub async fn stock_level<D: Db>(c: &mut D, rng: &mut Rng, w: i32) -> TxResult {
    let d = rng.int(1, 10) as i32;
    let threshold = rng.int(10, 20) as i32;
    c.batch("BEGIN").await?;
    let next = one(c, "dnextr", &[I32(w), I32(d)]).await?[0].i32()?;
    one(
        c,
        "slevel",
        &[I32(w), I32(d), I32(next - 20), I32(next), I32(threshold)],
    )
    .await?;
    c.batch("COMMIT").await?;
    Ok(Done::Committed { remote: false })
}
