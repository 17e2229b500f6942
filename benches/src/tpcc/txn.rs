//! The five TPC-C transactions (2.4-2.8) over prepared statements, as a
//! terminal runs them; each is one transaction block. The same logic runs
//! over either protocol ([`Db`]).

use rust_decimal::Decimal;

use super::db::{Db, DbError, Row, V};
use super::{Rng, CUSTOMERS, C_ID, C_LAST, DISTRICTS, ITEMS, OL_I_ID};
use V::I32;

/// The statements, in PostgreSQL's notation (`$n`; the MySQL side
/// rewrites the placeholders).
pub const SQL: &[(&str, &str)] = &[
    ("cust", "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"),
    ("wtax", "SELECT w_tax FROM warehouse WHERE w_id = $1"),
    ("dist", "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = $1 AND d_id = $2 FOR UPDATE"),
    ("dnext", "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2"),
    ("oins", "INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES ($1, $2, $3, $4, now(), $5, $6)"),
    ("noins", "INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES ($1, $2, $3)"),
    ("item", "SELECT i_price, i_name, i_data FROM item WHERE i_id = $1"),
    ("stock", "SELECT s_quantity, s_data, s_dist_01 FROM stock WHERE s_w_id = $1 AND s_i_id = $2 FOR UPDATE"),
    ("supd", "UPDATE stock SET s_quantity = $1, s_ytd = s_ytd + $2, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $3 WHERE s_w_id = $4 AND s_i_id = $5"),
    ("olins", "INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
    ("wpay", "UPDATE warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2"),
    ("dpay", "UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3"),
    ("byname", "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first"),
    ("cpay", "SELECT c_credit, c_balance FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 FOR UPDATE"),
    ("cupd", "UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4"),
    ("hins", "INSERT INTO history (h_w_id, h_id, h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_date, h_amount, h_data) VALUES ($1, $2, $3, $4, $5, $6, now(), $7, $8)"),
    ("cbal", "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"),
    ("olast", "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1"),
    ("olines", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"),
    ("nofirst", "SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 ORDER BY no_o_id LIMIT 1 FOR UPDATE"),
    ("nodel", "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3"),
    ("ocarrier", "UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4"),
    ("ocust", "SELECT o_c_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3"),
    ("oldeliv", "UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"),
    ("olsum", "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"),
    ("cdeliv", "UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4"),
    ("dnextr", "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2"),
    ("slevel", "SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3 AND ol_o_id < $4 AND s_quantity < $5"),
];

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
