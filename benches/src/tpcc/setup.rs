//! The initial database (schema, rows, the kit's foreign keys) and the
//! consistency conditions checked after a run (TPC-C 3.3.2).

use std::time::Instant;

use super::db::{Db, DbError};
use super::{Flavor, Rng};

/// Schema and initial database.
pub async fn load<D: Db>(
    url: &str,
    flavor: Flavor,
    warehouses: u32,
    kit: bool,
) -> Result<(), String> {
    let mut c = D::connect(url, false).await?;
    // Referencing tables first (the kit's foreign keys).
    for t in [
        "order_line",
        "new_order",
        "history",
        "orders",
        "customer",
        "stock",
        "district",
        "item",
        "warehouse",
    ] {
        c.batch(&format!("DROP TABLE IF EXISTS {t}"))
            .await
            .map_err(|e| e.to_string())?;
    }
    for ddl in super::schema(flavor, kit) {
        c.batch(&ddl).await.map_err(|e| format!("{ddl}: {e}"))?;
    }
    let now = chrono::Utc::now()
        .naive_utc()
        .format("%Y-%m-%d %H:%M:%S")
        .to_string();
    let mut rng = Rng::new(42);
    let mut chunks = vec![super::items(&mut rng)];
    let start = Instant::now();
    for w in 1..=warehouses {
        chunks.extend(super::warehouse(w, &mut rng, &now));
        for ch in chunks.drain(..) {
            c.load(&ch).await?;
        }
        eprintln!(
            "  loaded warehouse {w}/{warehouses} ({:.1} s)",
            start.elapsed().as_secs_f64()
        );
    }
    if kit {
        let start = Instant::now();
        for fk in super::foreign_keys() {
            c.batch(fk).await.map_err(|e| format!("{fk}: {e}"))?;
        }
        eprintln!(
            "  foreign keys added ({:.1} s)",
            start.elapsed().as_secs_f64()
        );
    }
    if flavor != Flavor::Mariadb {
        c.batch("ANALYZE").await.ok();
    }
    Ok(())
}

/// TPC-C 3.3.2.1-4 on the database as it is; the failures, if any.
pub async fn consistency<D: Db>(url: &str) -> Result<Vec<String>, String> {
    let mut c = D::connect(url, false).await?;
    let checks = [
        ("CC1 w_ytd = sum(d_ytd)", "SELECT count(*) FROM warehouse w WHERE w.w_ytd <> (SELECT sum(d_ytd) FROM district d WHERE d.d_w_id = w.w_id)"),
        ("CC2 d_next_o_id - 1 = max(o_id)", "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT max(o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id)"),
        ("CC2 d_next_o_id - 1 = max(no_o_id)", "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT max(no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id)"),
        ("CC3 new_order ids contiguous", "SELECT count(*) FROM (SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1 - count(*) AS gap FROM new_order GROUP BY no_w_id, no_d_id) x WHERE gap <> 0"),
        ("CC4 sum(o_ol_cnt) = count(order_line)", "SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS n FROM orders GROUP BY o_w_id, o_d_id) o JOIN (SELECT ol_w_id, ol_d_id, count(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE o.n <> l.n"),
    ];
    let mut failed = vec![];
    for (name, sql) in checks {
        let bad = c
            .scalar(sql)
            .await
            .map_err(|e: DbError| format!("{name}: {e}"))?;
        if bad != 0 {
            failed.push(format!("{name}: {bad} districts or warehouses fail"));
        }
    }
    Ok(failed)
}
