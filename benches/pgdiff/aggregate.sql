-- Aggregates, GROUP BY, HAVING, ORDER BY.
SELECT count(*) FROM acct;
SELECT count(*) FROM empty_t;
SELECT sum(balance), min(balance), max(balance) FROM acct;
SELECT avg(balance) FROM acct;
SELECT avg(qty) FROM orders;
SELECT sum(qty) FROM orders;
SELECT sum(amount) FROM empty_t e JOIN orders o ON o.id = e.id;
SELECT acct_id, count(*), sum(amount) FROM orders GROUP BY acct_id;
SELECT acct_id, count(*) FROM orders GROUP BY acct_id HAVING count(*) > 4;
SELECT flag, count(*) FROM acct GROUP BY flag;
SELECT note, count(*), max(amount) FROM orders GROUP BY note;
SELECT count(DISTINCT acct_id) FROM orders;
SELECT count(DISTINCT owner) FROM acct;
SELECT acct_id, sum(qty) FROM orders GROUP BY acct_id ORDER BY sum(qty) DESC, acct_id LIMIT 5; -- ordered
SELECT extract(month from ts) AS m, count(*) FROM orders GROUP BY m ORDER BY m; -- ordered
SELECT min(ts), max(ts) FROM orders;
SELECT min(opened), max(opened) FROM acct;
SELECT bool_and(flag), bool_or(flag) FROM acct;
SELECT max(score), min(score) FROM acct;
SELECT sum(score) > 0 FROM acct;
SELECT count(*) FILTER (WHERE qty > 100) FROM orders;
SELECT string_agg(owner, ',' ORDER BY id) FROM acct WHERE id < 10;
SELECT acct_id, avg(amount) FROM orders GROUP BY acct_id HAVING acct_id < 10;
SELECT region_id, count(*), sum(v) FROM colo_a GROUP BY region_id;
SELECT count(*) FROM orders WHERE amount IS NULL;
SELECT var_pop(qty), var_samp(qty), stddev_pop(qty), stddev_samp(qty), variance(qty), stddev(qty) FROM orders;
SELECT acct_id, var_pop(amount), stddev_samp(amount), variance(qty) FROM orders WHERE acct_id < 8 GROUP BY acct_id ORDER BY acct_id;
SELECT acct_id, stddev_pop(amount) FROM orders WHERE acct_id < 4 AND id < 300 GROUP BY acct_id ORDER BY acct_id;
SELECT var_samp(balance), stddev_pop(balance) FROM acct WHERE id = 1;
SELECT var_pop(balance), var_samp(id) FROM acct WHERE id < 0;
SELECT var_pop(x), stddev_samp(x), var_samp(x::float8) FROM (VALUES (1), (2), (4)) v(x);
SELECT var_pop(x::float8), var_samp(x::float8) FROM (VALUES ('inf'), ('1')) v(x);
SELECT var_pop('nan'::float8), stddev_pop('inf'::float8), stddev_samp('inf'::float8);
SELECT variance(amount) * 2, stddev(amount) + 1 FROM orders WHERE acct_id = 3;
SELECT acct_id, stddev_samp(amount::numeric(20,10)), var_pop(amount::numeric(20,10)) FROM orders WHERE acct_id < 6 GROUP BY acct_id ORDER BY acct_id;
