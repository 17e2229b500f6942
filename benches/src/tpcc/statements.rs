//! The statements of the five transactions, by key: [`super::db`]
//! prepares them once per connection, [`super::txn`] runs them by key.

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
