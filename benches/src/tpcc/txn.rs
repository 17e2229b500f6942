//! The five TPC-C transactions (2.4-2.8) over prepared statements, as a
//! terminal runs them; each is one transaction block.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use tokio_postgres::{Client, Statement};

use super::{Rng, CUSTOMERS, C_ID, C_LAST, DISTRICTS, ITEMS, OL_I_ID};

pub struct Statements {
    s: BTreeMap<&'static str, Statement>,
}

impl Statements {
    fn get(&self, k: &str) -> &Statement {
        &self.s[k]
    }
}

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

pub async fn prepare(c: &Client) -> Result<Statements, String> {
    let mut s = BTreeMap::new();
    for (k, sql) in SQL {
        s.insert(*k, c.prepare(sql).await.map_err(|e| format!("{k}: {e}"))?);
    }
    Ok(Statements { s })
}

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

pub type TxResult = Result<Done, tokio_postgres::Error>;

/// A customer by id (40 %) or by last name (60 %): the middle one in
/// c_first order (2.5.2.2).
async fn customer(
    c: &Client,
    st: &Statements,
    rng: &mut Rng,
    w: i32,
    d: i32,
) -> Result<Option<i32>, tokio_postgres::Error> {
    if rng.int(1, 100) <= 60 {
        let last = super::last_name(rng.nurand(255, 0, 999, C_LAST));
        let rows = c.query(st.get("byname"), &[&w, &d, &last]).await?;
        if rows.is_empty() {
            return Ok(None);
        }
        Ok(Some(rows[(rows.len() - 1) / 2].get(0)))
    } else {
        Ok(Some(rng.nurand(1023, 1, CUSTOMERS as u64, C_ID) as i32))
    }
}

pub async fn new_order(c: &Client, st: &Statements, rng: &mut Rng, w: i32, ws: u32) -> TxResult {
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
            let mut o = rng.int(1, ws as u64 - 1) as i32;
            if o >= w {
                o += 1;
            }
            o
        } else {
            w
        };
        lines.push((item, supply, rng.int(1, 10) as i32));
    }
    let all_local = lines.iter().all(|l| l.1 == w) as i32;
    c.batch_execute("BEGIN").await?;
    c.query_one(st.get("cust"), &[&w, &d, &cid]).await?;
    c.query_one(st.get("wtax"), &[&w]).await?;
    let drow = c.query_one(st.get("dist"), &[&w, &d]).await?;
    let o_id: i32 = drow.get(0);
    c.execute(st.get("dnext"), &[&w, &d]).await?;
    c.execute(
        st.get("oins"),
        &[&w, &d, &o_id, &cid, &(n as i32), &all_local],
    )
    .await?;
    c.execute(st.get("noins"), &[&w, &d, &o_id]).await?;
    for (num, (item, supply, qty)) in lines.iter().enumerate() {
        let Some(irow) = c.query_opt(st.get("item"), &[item]).await? else {
            c.batch_execute("ROLLBACK").await?;
            return Ok(Done::RolledBack);
        };
        let price: Decimal = irow.get(0);
        let srow = c.query_one(st.get("stock"), &[supply, item]).await?;
        let q: i32 = srow.get(0);
        let info: String = srow.get(2);
        let nq = if q - qty >= 10 { q - qty } else { q - qty + 91 };
        let remote = (*supply != w) as i32;
        c.execute(st.get("supd"), &[&nq, qty, &remote, supply, item])
            .await?;
        let amount = price * Decimal::from(*qty);
        c.execute(
            st.get("olins"),
            &[
                &w,
                &d,
                &o_id,
                &(num as i32 + 1),
                item,
                supply,
                qty,
                &amount,
                &info,
            ],
        )
        .await?;
    }
    c.batch_execute("COMMIT").await?;
    Ok(Done::Committed {
        remote: all_local == 0,
    })
}

pub async fn payment(
    c: &Client,
    st: &Statements,
    rng: &mut Rng,
    w: i32,
    ws: u32,
    h_id: i64,
) -> TxResult {
    let d = rng.int(1, 10) as i32;
    let (cw, cd) = if ws > 1 && rng.int(1, 100) > 85 {
        let mut o = rng.int(1, ws as u64 - 1) as i32;
        if o >= w {
            o += 1;
        }
        (o, rng.int(1, 10) as i32)
    } else {
        (w, d)
    };
    let amount = Decimal::new(rng.int(100, 500_000) as i64, 2);
    c.batch_execute("BEGIN").await?;
    c.execute(st.get("wpay"), &[&amount, &w]).await?;
    c.execute(st.get("dpay"), &[&amount, &w, &d]).await?;
    let Some(cid) = customer(c, st, rng, cw, cd).await? else {
        c.batch_execute("ROLLBACK").await?;
        return Ok(Done::RolledBack);
    };
    c.query_one(st.get("cpay"), &[&cw, &cd, &cid]).await?;
    c.execute(st.get("cupd"), &[&amount, &cw, &cd, &cid])
        .await?;
    let data = rng.astring(12, 24);
    c.execute(
        st.get("hins"),
        &[&w, &h_id, &cid, &cd, &cw, &d, &amount, &data],
    )
    .await?;
    c.batch_execute("COMMIT").await?;
    Ok(Done::Committed { remote: cw != w })
}

pub async fn order_status(c: &Client, st: &Statements, rng: &mut Rng, w: i32) -> TxResult {
    let d = rng.int(1, 10) as i32;
    c.batch_execute("BEGIN").await?;
    if let Some(cid) = customer(c, st, rng, w, d).await? {
        c.query_one(st.get("cbal"), &[&w, &d, &cid]).await?;
        if let Some(o) = c.query_opt(st.get("olast"), &[&w, &d, &cid]).await? {
            let o_id: i32 = o.get(0);
            c.query(st.get("olines"), &[&w, &d, &o_id]).await?;
        }
    }
    c.batch_execute("COMMIT").await?;
    Ok(Done::Committed { remote: false })
}

pub async fn delivery(c: &Client, st: &Statements, rng: &mut Rng, w: i32) -> TxResult {
    let carrier = rng.int(1, 10) as i32;
    c.batch_execute("BEGIN").await?;
    for d in 1..=DISTRICTS as i32 {
        let Some(no) = c.query_opt(st.get("nofirst"), &[&w, &d]).await? else {
            continue;
        };
        let o_id: i32 = no.get(0);
        c.execute(st.get("nodel"), &[&w, &d, &o_id]).await?;
        c.execute(st.get("ocarrier"), &[&carrier, &w, &d, &o_id])
            .await?;
        let cid: i32 = c.query_one(st.get("ocust"), &[&w, &d, &o_id]).await?.get(0);
        c.execute(st.get("oldeliv"), &[&w, &d, &o_id]).await?;
        let sum: Option<Decimal> = c.query_one(st.get("olsum"), &[&w, &d, &o_id]).await?.get(0);
        c.execute(st.get("cdeliv"), &[&sum.unwrap_or_default(), &w, &d, &cid])
            .await?;
    }
    c.batch_execute("COMMIT").await?;
    Ok(Done::Committed { remote: false })
}

pub async fn stock_level(c: &Client, st: &Statements, rng: &mut Rng, w: i32) -> TxResult {
    let d = rng.int(1, 10) as i32;
    let threshold = rng.int(10, 20) as i32;
    c.batch_execute("BEGIN").await?;
    let next: i32 = c.query_one(st.get("dnextr"), &[&w, &d]).await?.get(0);
    c.query_one(st.get("slevel"), &[&w, &d, &(next - 20), &next, &threshold])
        .await?;
    c.batch_execute("COMMIT").await?;
    Ok(Done::Committed { remote: false })
}
