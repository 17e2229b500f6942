-- Numeric quotients and averages in report shapes: PostgreSQL's per-value result scale.
SELECT avg(balance) FROM acct;
SELECT round(avg(balance), 2) FROM acct;
SELECT avg(balance) * 2 FROM acct;
SELECT sum(balance) / count(*) FROM acct;
SELECT count(*) FROM acct WHERE balance > (SELECT avg(balance) FROM acct);
SELECT max(balance) / 3, min(balance) / 7 FROM acct;
SELECT avg(balance) FILTER (WHERE balance > 0) FROM acct;
SELECT avg(amount) FROM orders;
SELECT round(avg(amount), 2) FROM orders;
SELECT avg(amount) * 2 FROM orders;
SELECT sum(amount) / count(*) FROM orders;
SELECT count(*) FROM orders WHERE amount > (SELECT avg(amount) FROM orders);
SELECT max(amount) / 3, min(amount) / 7 FROM orders;
SELECT avg(amount) FILTER (WHERE amount > 0) FROM orders;
SELECT round(avg(score), 2) FROM acct;
SELECT max(score) / 3, min(score) / 7 FROM acct;
SELECT avg(qty) FROM orders;
SELECT round(avg(qty), 2) FROM orders;
SELECT avg(qty) * 2 FROM orders;
SELECT sum(qty) / count(*) FROM orders;
SELECT count(*) FROM orders WHERE qty > (SELECT avg(qty) FROM orders);
SELECT max(qty) / 3, min(qty) / 7 FROM orders;
SELECT avg(qty) FILTER (WHERE qty > 0) FROM orders;
SELECT avg(v) FROM colo_a;
SELECT round(avg(v), 2) FROM colo_a;
SELECT avg(v) * 2 FROM colo_a;
SELECT sum(v) / count(*) FROM colo_a;
SELECT count(*) FROM colo_a WHERE v > (SELECT avg(v) FROM colo_a);
SELECT max(v) / 3, min(v) / 7 FROM colo_a;
SELECT avg(v) FILTER (WHERE v > 0) FROM colo_a;
SELECT owner, avg(balance), sum(balance) / 4 FROM acct GROUP BY owner;
SELECT owner, avg(balance) a FROM acct GROUP BY owner ORDER BY a NULLS LAST, 1 NULLS FIRST; -- ordered
SELECT owner, round(avg(balance), 3), count(*) FROM acct GROUP BY owner HAVING avg(balance) > 0;
SELECT owner, sum(balance / 3) FROM acct GROUP BY owner;
SELECT flag, avg(balance), sum(balance) / 4 FROM acct GROUP BY flag;
SELECT flag, avg(balance) a FROM acct GROUP BY flag ORDER BY a NULLS LAST, 1 NULLS FIRST; -- ordered
SELECT flag, round(avg(balance), 3), count(*) FROM acct GROUP BY flag HAVING avg(balance) > 0;
SELECT flag, sum(balance / 3) FROM acct GROUP BY flag;
SELECT note, avg(amount), sum(amount) / 4 FROM orders GROUP BY note;
SELECT note, avg(amount) a FROM orders GROUP BY note ORDER BY a NULLS LAST, 1 NULLS FIRST; -- ordered
SELECT note, round(avg(amount), 3), count(*) FROM orders GROUP BY note HAVING avg(amount) > 0;
SELECT note, sum(amount / 3) FROM orders GROUP BY note;
SELECT acct_id % 5, avg(qty), sum(qty) / 4 FROM orders GROUP BY acct_id % 5;
SELECT acct_id % 5, avg(qty) a FROM orders GROUP BY acct_id % 5 ORDER BY a NULLS LAST, 1 NULLS FIRST; -- ordered
SELECT acct_id % 5, round(avg(qty), 3), count(*) FROM orders GROUP BY acct_id % 5 HAVING avg(qty) > 0;
SELECT acct_id % 5, sum(qty / 3) FROM orders GROUP BY acct_id % 5;
SELECT region_id, avg(v), sum(v) / 4 FROM colo_a GROUP BY region_id;
SELECT region_id, avg(v) a FROM colo_a GROUP BY region_id ORDER BY a NULLS LAST, 1 NULLS FIRST; -- ordered
SELECT region_id, round(avg(v), 3), count(*) FROM colo_a GROUP BY region_id HAVING avg(v) > 0;
SELECT region_id, sum(v / 3) FROM colo_a GROUP BY region_id;
SELECT id, balance / 3, balance / 7.0, balance / 0.25 FROM acct WHERE id < 12;
SELECT id, amount / qty FROM orders WHERE qty > 0 AND id < 200;
SELECT id, 1.0 / id, 100 / id::numeric FROM acct WHERE id < 12;
SELECT id, balance / 3 AS third FROM acct WHERE id < 40 ORDER BY third DESC NULLS LAST, id LIMIT 5; -- ordered
SELECT a.id, a.balance / r.id FROM acct a JOIN region r ON r.id = a.id % 5 + 1 WHERE a.id < 10;
SELECT s.x FROM (SELECT balance / 3 AS x FROM acct WHERE id < 8) s;
SELECT s.x * 2 FROM (SELECT avg(balance) x FROM acct) s;
SELECT id, sum(balance / 3) OVER (ORDER BY id) FROM acct WHERE id < 8;
SELECT id, avg(amount) OVER (PARTITION BY acct_id) FROM orders WHERE acct_id < 4;
SELECT id, -(balance / 3), abs(balance / 3) FROM acct WHERE id < 8;
SELECT id, (balance / 3)::numeric(12,2), round(balance / 3, 1) FROM acct WHERE id < 8;
SELECT avg(balance) - min(balance), max(balance) / avg(balance) FROM acct;
SELECT avg(id), avg(id::numeric(10,2)), avg(id * 1.5) FROM acct;
SELECT 2548.81 / 3, 3.5 / 3, 7.0 / 6, 10 / 4.0, 0 / 3.0;
SELECT 1 / 3::numeric, 2 / 3::numeric(5,2), 100::numeric / 7;
SELECT count(*) FROM acct WHERE balance / 3 > 1000;
SELECT id FROM acct WHERE balance / 7 BETWEEN 100 AND 200;
SELECT avg(qty) FROM orders WHERE qty > 1000;
SELECT avg(balance) FROM empty_t e JOIN acct a ON a.id = e.id;
SELECT flag, avg(balance) FROM acct GROUP BY flag ORDER BY flag NULLS FIRST; -- ordered
SELECT acct_id, avg(amount) FROM orders WHERE acct_id IN (1, 2, 3) GROUP BY acct_id;
SELECT avg(balance) FROM acct WHERE id = 1;
SELECT avg(balance) FROM acct WHERE id IN (1, 2);
SELECT id, balance / 3 FROM acct WHERE id = 5;
SELECT count(*), avg(qty), sum(qty) / count(*) FROM orders WHERE note = 'gift';
SELECT owner, avg(balance) FROM acct WHERE owner IS NOT NULL GROUP BY owner HAVING count(*) > 10;
SELECT avg(k), avg(v) FROM colo_a a JOIN colo_b b USING (k);
SELECT r.name, avg(a.v) FROM region r JOIN colo_a a ON a.region_id = r.id GROUP BY r.name;
SELECT avg(amount) FROM orders WHERE ts >= '2024-06-01';
SELECT avg(x) FROM (VALUES (1.5), (2.25), (NULL)) v(x);
SELECT avg(balance) FROM acct GROUP BY flag HAVING flag;
SELECT id, amount / 3 FROM orders WHERE id IN (7, 14, 21);
SELECT 0 / 123456.78, 1 / 40000::numeric, 0.0 / 7;
SELECT sum(amount) FILTER (WHERE qty > 1000) / sum(amount) FROM orders;
SELECT sum(CASE WHEN note = 'gift' THEN amount ELSE 0 END) / sum(amount) FROM orders;
-- Quotients through DISTINCT, UNION and scalar subqueries in a select list.
SELECT DISTINCT amount / 3 FROM orders WHERE id < 200 ORDER BY 1;
SELECT DISTINCT acct_id % 5, round(amount, 0) / 7 FROM orders WHERE id < 400 ORDER BY 1, 2;
SELECT balance / 3 FROM acct WHERE id < 20 UNION SELECT amount / 3 FROM orders WHERE id < 100 ORDER BY 1;
SELECT (SELECT avg(amount) FROM orders) AS a, (SELECT avg(balance) FROM acct WHERE id > 1000) AS none;
SELECT CASE WHEN (SELECT count(*) FROM orders) > 100 THEN (SELECT avg(amount) FROM orders WHERE qty > 100) ELSE (SELECT avg(amount) FROM orders) END AS c;
SELECT id, balance - (SELECT avg(balance) FROM acct) AS diff, (SELECT avg(qty) FROM orders) * 2 AS twice FROM acct WHERE id < 6 ORDER BY id;
SELECT owner, sum(balance) FROM acct GROUP BY owner HAVING sum(balance) > (SELECT avg(balance) FROM acct) ORDER BY 1;
-- sqrt of a numeric is numeric, at PostgreSQL's scale for each value.
SELECT pg_typeof(sqrt(2.0)), sqrt(2.0), sqrt(16.00), sqrt(0.00), sqrt(10000::numeric), sqrt(123456789012.34), sqrt(1e-10), sqrt(2), sqrt(4::float8);
SELECT id, balance, sqrt(balance), sqrt(balance) * 2, round(sqrt(balance), 3) FROM acct WHERE balance > 0 AND id < 30 ORDER BY id;
SELECT id, sqrt(amount / qty) FROM orders WHERE qty > 0 AND id < 300 ORDER BY id;
SELECT sum(sqrt(amount)) FROM orders WHERE amount > 0;
SELECT sqrt(balance) FROM acct WHERE balance < 0;
-- max and min of quotients keep the chosen value's scale; lead/lag's
-- default prints with its own.
SELECT max(balance / 3), min(balance / 3), max(sqrt(balance)) FROM acct WHERE balance > 0;
SELECT acct_id % 3, max(amount / 7), min(amount / 7) FROM orders WHERE amount > 0 GROUP BY 1 ORDER BY 1;
SELECT id, amount, lead(amount, 1, 0) OVER (ORDER BY id), lag(amount, 2, 0.5) OVER (ORDER BY id), lead(amount) OVER (ORDER BY id) FROM orders WHERE id < 60 ORDER BY id;
SELECT id, qty, lead(qty, 1, 0.5) OVER (ORDER BY id) FROM orders WHERE id < 40 ORDER BY id;
-- VALUES and chains of unions keep each value's scale.
SELECT * FROM (VALUES (1.5), (2.25), (3)) v(x);
SELECT x, x * 2, x + 1.25 FROM (VALUES (1.5, 'a'), (2.25, 'b'), (NULL, 'c'), (3, 'd')) v(x, y) ORDER BY y;
SELECT 1.5 AS x UNION ALL SELECT 2.25 UNION ALL SELECT 3;
SELECT 1.5 UNION SELECT 2.25 UNION SELECT 3 ORDER BY 1;
SELECT DISTINCT x FROM (VALUES (1.5), (1.50), (3)) v(x) ORDER BY 1;
SELECT sum(x), max(x) FROM (VALUES (1.5), (2.25), (3)) v(x);
SELECT x::numeric(10,2) FROM (SELECT 1.5 AS x UNION ALL SELECT 2.25) t;
