-- Window functions: ranking, offsets, frames, partitions, named windows.
SELECT id, row_number() OVER (ORDER BY id) FROM acct WHERE id < 10;
SELECT id, rank() OVER (ORDER BY owner) FROM acct WHERE id < 20;
SELECT id, dense_rank() OVER (ORDER BY owner) FROM acct WHERE id < 20;
SELECT id, owner, row_number() OVER (PARTITION BY owner ORDER BY id) FROM acct WHERE id < 40;
SELECT id, sum(balance) OVER (ORDER BY id) FROM acct WHERE id < 15;
SELECT id, sum(balance) OVER (PARTITION BY owner) FROM acct WHERE id < 30;
SELECT id, count(*) OVER () FROM acct WHERE id < 6;
SELECT id, count(*) OVER (PARTITION BY flag) FROM acct WHERE id < 20;
SELECT id, lag(id) OVER (ORDER BY id), lead(id) OVER (ORDER BY id) FROM acct WHERE id < 8;
SELECT id, lag(balance, 2) OVER (ORDER BY id) FROM acct WHERE id < 8;
SELECT id, first_value(id) OVER (PARTITION BY owner ORDER BY id) FROM acct WHERE id < 30;
SELECT id, last_value(id) OVER (PARTITION BY owner ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM acct WHERE id < 30;
SELECT id, nth_value(id, 2) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM acct WHERE id < 6;
SELECT id, sum(id) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM acct WHERE id < 10;
SELECT id, avg(balance) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM acct WHERE id < 10;
SELECT id, avg(balance) OVER (PARTITION BY flag) FROM acct WHERE id < 12;
SELECT id, max(balance) OVER (PARTITION BY owner) FROM acct WHERE id < 20;
SELECT id, min(id) OVER (ORDER BY id DESC) FROM acct WHERE id < 8;
SELECT id, ntile(3) OVER (ORDER BY id) FROM acct WHERE id < 11;
SELECT id, percent_rank() OVER (ORDER BY id) FROM acct WHERE id < 6;
SELECT id, cume_dist() OVER (ORDER BY id) FROM acct WHERE id < 6;
SELECT acct_id, id, row_number() OVER (PARTITION BY acct_id ORDER BY id DESC) FROM orders WHERE acct_id < 4;
SELECT acct_id, sum(qty) OVER (PARTITION BY acct_id) FROM orders WHERE acct_id < 4;
SELECT * FROM (SELECT id, row_number() OVER (ORDER BY balance DESC NULLS LAST, id) rn FROM acct) s WHERE rn <= 3;
SELECT owner, count(*), rank() OVER (ORDER BY count(*) DESC) FROM acct GROUP BY owner;
SELECT k, v, sum(v) OVER (ORDER BY k RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM colo_a WHERE k < 12;
SELECT k, count(v) OVER (PARTITION BY region_id ORDER BY k) FROM colo_a WHERE k < 20;
SELECT id, row_number() OVER w, rank() OVER w FROM acct WHERE id < 6 WINDOW w AS (ORDER BY id);
SELECT id, avg(qty) OVER (PARTITION BY acct_id) FROM orders WHERE acct_id < 3;
SELECT id, sum(amount) OVER (ORDER BY id) FROM orders WHERE id < 100;
-- A window ordered by a numeric quotient (its display scale rewritten
-- beneath), the rank then sorted by its name (TPC-DS q36 failed so).
SELECT acct_id, sum(amount) / sum(amount + 100) AS share, rank() OVER (ORDER BY sum(amount) / sum(amount + 100) DESC) AS r FROM orders WHERE acct_id < 12 GROUP BY acct_id ORDER BY r, acct_id;
SELECT acct_id, rank() OVER (PARTITION BY acct_id % 2 ORDER BY sum(amount) / sum(amount + 100)) AS r FROM orders GROUP BY acct_id ORDER BY acct_id % 2, r, acct_id LIMIT 10;
