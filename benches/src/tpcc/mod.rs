//! TPC-C (the seeds' second workload): the schema for PostgreSQL and for
//! Tessera (every table hash-partitioned by its warehouse id, so a home
//! warehouse's rows share a shard, and `item` mirrored), the random
//! numbers of the specification (NURand, last names) and the initial
//! database's rows as COPY text; the transactions in [`txn`], over either
//! protocol ([`db`]). Loading,
//! terminals and the consistency checks are in `bin/tpcc.rs`.

use std::fmt::Write as _;

pub mod db;
pub mod faults;
pub mod report;
pub mod setup;
pub mod statements;
pub mod txn;

/// TPC-C 2.1.6's NURand constants (C for the run; the load uses its own).
pub const C_LAST: u64 = 157;
pub const C_ID: u64 = 259;
pub const OL_I_ID: u64 = 7911;

pub const ITEMS: u32 = 100_000;
pub const DISTRICTS: u32 = 10;
pub const CUSTOMERS: u32 = 3_000;
pub const ORDERS: u32 = 3_000;
/// Orders 2,101..3,000 of each district start undelivered.
pub const FIRST_NEW_ORDER: u32 = 2_101;

/// xorshift64*: fast, seedable, good enough for keying.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    pub fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// TPC-C 2.1.6: NURand(A, x, y) with run constant `c`.
    pub fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> u64 {
        (((self.int(0, a) | self.int(x, y)) + c) % (y - x + 1)) + x
    }

    pub fn astring(&mut self, lo: u64, hi: u64) -> String {
        let n = self.int(lo, hi);
        (0..n)
            .map(|_| (b'a' + self.int(0, 25) as u8) as char)
            .collect()
    }

    pub fn nstring(&mut self, lo: u64, hi: u64) -> String {
        let n = self.int(lo, hi);
        (0..n)
            .map(|_| (b'0' + self.int(0, 9) as u8) as char)
            .collect()
    }

    /// `*_data` with "ORIGINAL" in 10 % of the rows (4.3.3.1).
    pub fn data(&mut self, lo: u64, hi: u64) -> String {
        let mut s = self.astring(lo, hi);
        if self.int(1, 10) == 1 && s.len() >= 8 {
            let at = self.int(0, s.len() as u64 - 8) as usize;
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }

    pub fn zip(&mut self) -> String {
        format!("{}11111", self.nstring(4, 4))
    }
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999), TPC-C 4.3.2.3.
pub fn last_name(n: u64) -> String {
    format!(
        "{}{}{}",
        SYLLABLES[(n / 100) as usize % 10],
        SYLLABLES[(n / 10) as usize % 10],
        SYLLABLES[n as usize % 10]
    )
}

/// Whose schema: PostgreSQL's plain tables, Tessera's partitioned ones,
/// or MariaDB's (datetime for timestamp: MariaDB's timestamp updates
/// itself).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flavor {
    Postgres,
    Tessera,
    Mariadb,
}

/// The tables and indexes of `flavor`. `kit`: as a user's kit writes them
/// (BenchmarkSQL), without a Tessera clause: the default placement.
pub fn schema(flavor: Flavor, kit: bool) -> Vec<String> {
    let tessera = flavor == Flavor::Tessera && !kit;
    let by = |col: &str| {
        if tessera {
            format!(" PARTITION BY HASH ({col})")
        } else {
            String::new()
        }
    };
    let mirror = if tessera {
        " WITH (distribution = mirror)"
    } else {
        ""
    };
    vec![
        format!("CREATE TABLE warehouse (w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2), PRIMARY KEY (w_id)){}", by("w_id")),
        format!("CREATE TABLE district (d_w_id int NOT NULL, d_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int, PRIMARY KEY (d_w_id, d_id)){}", by("d_w_id")),
        format!("CREATE TABLE customer (c_w_id int NOT NULL, c_d_id int NOT NULL, c_id int NOT NULL, c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500), PRIMARY KEY (c_w_id, c_d_id, c_id)){}", by("c_w_id")),
        "CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)".into(),
        format!("CREATE TABLE history (h_w_id int NOT NULL, h_id bigint NOT NULL, h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_date timestamp, h_amount numeric(6,2), h_data varchar(24), PRIMARY KEY (h_w_id, h_id)){}", by("h_w_id")),
        format!("CREATE TABLE orders (o_w_id int NOT NULL, o_d_id int NOT NULL, o_id int NOT NULL, o_c_id int, o_entry_d timestamp, o_carrier_id int, o_ol_cnt int, o_all_local int, PRIMARY KEY (o_w_id, o_d_id, o_id)){}", by("o_w_id")),
        "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)".into(),
        format!("CREATE TABLE new_order (no_w_id int NOT NULL, no_d_id int NOT NULL, no_o_id int NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id)){}", by("no_w_id")),
        format!("CREATE TABLE order_line (ol_w_id int NOT NULL, ol_d_id int NOT NULL, ol_o_id int NOT NULL, ol_number int NOT NULL, ol_i_id int, ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2), ol_dist_info char(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)){}", by("ol_w_id")),
        format!("CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50), PRIMARY KEY (i_id)){mirror}"),
        format!("CREATE TABLE stock (s_w_id int NOT NULL, s_i_id int NOT NULL, s_quantity int, s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50), PRIMARY KEY (s_w_id, s_i_id)){}", by("s_w_id")),
    ]
    .into_iter()
    .map(|ddl| match flavor {
        Flavor::Mariadb => ddl.replace(" timestamp", " datetime"),
        _ => ddl,
    })
    .collect()
}

/// BenchmarkSQL 5.0's ten foreign keys (foreignKeys.sql) on this schema's
/// tables, added after the load as the kit does.
pub fn foreign_keys() -> Vec<&'static str> {
    vec![
        "ALTER TABLE district ADD CONSTRAINT d_warehouse_fkey FOREIGN KEY (d_w_id) REFERENCES warehouse (w_id)",
        "ALTER TABLE customer ADD CONSTRAINT c_district_fkey FOREIGN KEY (c_w_id, c_d_id) REFERENCES district (d_w_id, d_id)",
        "ALTER TABLE history ADD CONSTRAINT h_customer_fkey FOREIGN KEY (h_c_w_id, h_c_d_id, h_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)",
        "ALTER TABLE history ADD CONSTRAINT h_district_fkey FOREIGN KEY (h_w_id, h_d_id) REFERENCES district (d_w_id, d_id)",
        "ALTER TABLE new_order ADD CONSTRAINT no_order_fkey FOREIGN KEY (no_w_id, no_d_id, no_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)",
        "ALTER TABLE orders ADD CONSTRAINT o_customer_fkey FOREIGN KEY (o_w_id, o_d_id, o_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)",
        "ALTER TABLE order_line ADD CONSTRAINT ol_order_fkey FOREIGN KEY (ol_w_id, ol_d_id, ol_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)",
        "ALTER TABLE order_line ADD CONSTRAINT ol_stock_fkey FOREIGN KEY (ol_supply_w_id, ol_i_id) REFERENCES stock (s_w_id, s_i_id)",
        "ALTER TABLE stock ADD CONSTRAINT s_warehouse_fkey FOREIGN KEY (s_w_id) REFERENCES warehouse (w_id)",
        "ALTER TABLE stock ADD CONSTRAINT s_item_fkey FOREIGN KEY (s_i_id) REFERENCES item (i_id)",
    ]
}

pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "orders",
    "new_order",
    "order_line",
    "item",
    "stock",
];

/// Rows of one table as COPY text, built in chunks by `rows` (called with
/// a buffer; returns false when done).
pub struct CopyText {
    pub table: &'static str,
    pub buf: String,
}

fn line(buf: &mut String, cells: &[&dyn std::fmt::Display]) {
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            buf.push('\t');
        }
        let _ = write!(buf, "{c}");
    }
    buf.push('\n');
}

/// The `item` table.
pub fn items(rng: &mut Rng) -> CopyText {
    let mut buf = String::new();
    for i in 1..=ITEMS {
        let price = rng.int(100, 10_000) as f64 / 100.0;
        let name = rng.astring(14, 24);
        let data = rng.data(26, 50);
        line(
            &mut buf,
            &[
                &i,
                &rng.int(1, 10_000),
                &name,
                &format!("{price:.2}"),
                &data,
            ],
        );
    }
    CopyText { table: "item", buf }
}

type NameAddressTax = (String, String, String, String, String, String, String);

/// A warehouse's or district's name, street 1 and 2, city, state, zip and
/// tax (4.3.3.1).
fn name_address_tax(rng: &mut Rng) -> NameAddressTax {
    (
        rng.astring(6, 10),
        rng.astring(10, 20),
        rng.astring(10, 20),
        rng.astring(10, 20),
        rng.astring(2, 2),
        rng.zip(),
        format!("{:.4}", rng.int(0, 2000) as f64 / 10_000.0),
    )
}

/// One warehouse's rows, table by table (`now`: the load's timestamp).
pub fn warehouse(w: u32, rng: &mut Rng, now: &str) -> Vec<CopyText> {
    let mut out = vec![];
    let mut b = String::new();
    let (n, s1, s2, c, st, z, t) = name_address_tax(rng);
    line(&mut b, &[&w, &n, &s1, &s2, &c, &st, &z, &t, &"300000.00"]);
    out.push(CopyText {
        table: "warehouse",
        buf: std::mem::take(&mut b),
    });
    for d in 1..=DISTRICTS {
        let (n, s1, s2, c, st, z, t) = name_address_tax(rng);
        line(
            &mut b,
            &[
                &w,
                &d,
                &n,
                &s1,
                &s2,
                &c,
                &st,
                &z,
                &t,
                &"30000.00",
                &(ORDERS + 1),
            ],
        );
    }
    out.push(CopyText {
        table: "district",
        buf: std::mem::take(&mut b),
    });
    let mut hist = String::new();
    for d in 1..=DISTRICTS {
        for c in 1..=CUSTOMERS {
            let last = if c <= 1000 {
                last_name(c as u64 - 1)
            } else {
                last_name(rng.nurand(255, 0, 999, 223))
            };
            let credit = if rng.int(1, 10) == 1 { "BC" } else { "GC" };
            let (first, s1, s2, city, st, zip, phone, data) = (
                rng.astring(8, 16),
                rng.astring(10, 20),
                rng.astring(10, 20),
                rng.astring(10, 20),
                rng.astring(2, 2),
                rng.zip(),
                rng.nstring(16, 16),
                rng.astring(300, 500),
            );
            let discount = format!("{:.4}", rng.int(0, 5000) as f64 / 10_000.0);
            line(
                &mut b,
                &[
                    &w,
                    &d,
                    &c,
                    &first,
                    &"OE",
                    &last,
                    &s1,
                    &s2,
                    &city,
                    &st,
                    &zip,
                    &phone,
                    &now,
                    &credit,
                    &"50000.00",
                    &discount,
                    &"-10.00",
                    &"10.00",
                    &1,
                    &0,
                    &data,
                ],
            );
            let h_id = ((d - 1) * CUSTOMERS + c) as u64;
            let hdata = rng.astring(12, 24);
            line(
                &mut hist,
                &[&w, &h_id, &c, &d, &w, &d, &now, &"10.00", &hdata],
            );
        }
    }
    out.push(CopyText {
        table: "customer",
        buf: std::mem::take(&mut b),
    });
    out.push(CopyText {
        table: "history",
        buf: hist,
    });
    let (mut orders, mut lines, mut new) = (String::new(), String::new(), String::new());
    for d in 1..=DISTRICTS {
        // A random permutation of the customers (4.3.3.1).
        let mut perm: Vec<u32> = (1..=CUSTOMERS).collect();
        for i in (1..perm.len()).rev() {
            let j = rng.int(0, i as u64) as usize;
            perm.swap(i, j);
        }
        for o in 1..=ORDERS {
            let delivered = o < FIRST_NEW_ORDER;
            let ol_cnt = rng.int(5, 15);
            let carrier: String = if delivered {
                rng.int(1, 10).to_string()
            } else {
                "\\N".into()
            };
            line(
                &mut orders,
                &[
                    &w,
                    &d,
                    &o,
                    &perm[o as usize - 1],
                    &now,
                    &carrier,
                    &ol_cnt,
                    &1,
                ],
            );
            if !delivered {
                line(&mut new, &[&w, &d, &o]);
            }
            for n in 1..=ol_cnt {
                let (ddate, amount): (&str, String) = if delivered {
                    (now, "0.00".into())
                } else {
                    ("\\N", format!("{:.2}", rng.int(1, 999_999) as f64 / 100.0))
                };
                let info = rng.astring(24, 24);
                line(
                    &mut lines,
                    &[
                        &w,
                        &d,
                        &o,
                        &n,
                        &rng.int(1, ITEMS as u64),
                        &w,
                        &ddate,
                        &5,
                        &amount,
                        &info,
                    ],
                );
            }
        }
    }
    out.push(CopyText {
        table: "orders",
        buf: orders,
    });
    out.push(CopyText {
        table: "new_order",
        buf: new,
    });
    out.push(CopyText {
        table: "order_line",
        buf: lines,
    });
    for i in 1..=ITEMS {
        let q = rng.int(10, 100);
        let dists: Vec<String> = (0..10).map(|_| rng.astring(24, 24)).collect();
        let data = rng.data(26, 50);
        let mut cells: Vec<&dyn std::fmt::Display> = vec![&w, &i, &q];
        for s in &dists {
            cells.push(s);
        }
        cells.extend([&0 as &dyn std::fmt::Display, &0, &0, &data]);
        line(&mut b, &cells);
    }
    out.push(CopyText {
        table: "stock",
        buf: b,
    });
    out
}
