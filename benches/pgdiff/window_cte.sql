-- Window functions, CTEs, VALUES, ordering.
SELECT id, row_number() OVER (ORDER BY id) FROM acct WHERE id < 20;
SELECT id, rank() OVER (ORDER BY owner) FROM acct WHERE id < 30;
SELECT acct_id, id, sum(amount) OVER (PARTITION BY acct_id ORDER BY id) FROM orders WHERE acct_id < 10;
SELECT acct_id, count(*) OVER (PARTITION BY acct_id) FROM orders WHERE acct_id < 10;
SELECT id, lag(id) OVER (ORDER BY id), lead(id) OVER (ORDER BY id) FROM acct WHERE id < 15;
SELECT id, first_value(owner) OVER (ORDER BY id) FROM acct WHERE id < 10;
SELECT id, dense_rank() OVER (ORDER BY flag) FROM acct WHERE id < 20;
SELECT id, ntile(3) OVER (ORDER BY id) FROM acct WHERE id < 13;
SELECT id, avg(qty) OVER () FROM orders WHERE id < 70;
WITH t AS (SELECT acct_id, count(*) AS n FROM orders GROUP BY acct_id) SELECT n, count(*) FROM t GROUP BY n;
WITH a AS (SELECT id FROM acct WHERE id < 10), b AS (SELECT id FROM acct WHERE id > 5 AND id < 15) SELECT * FROM a JOIN b USING (id);
SELECT * FROM (VALUES (1), (2), (NULL)) t(x) ORDER BY x NULLS FIRST; -- ordered
SELECT id FROM acct ORDER BY balance DESC NULLS LAST, id LIMIT 10; -- ordered
SELECT id, balance FROM acct ORDER BY balance NULLS FIRST, id LIMIT 10; -- ordered
SELECT owner FROM acct WHERE owner IS NOT NULL ORDER BY owner, id LIMIT 10; -- ordered
SELECT DISTINCT ON (acct_id) acct_id, id FROM orders ORDER BY acct_id, id; -- ordered
SELECT count(*) FROM (SELECT DISTINCT acct_id FROM orders) s;
SELECT x, x * 2 FROM generate_series(1, 5) AS g(x);
SELECT k, v FROM colo_a ORDER BY v DESC NULLS LAST, k LIMIT 5; -- ordered
SELECT acct_id, max(id) FROM orders GROUP BY acct_id ORDER BY acct_id LIMIT 10; -- ordered
