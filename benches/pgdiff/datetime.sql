-- Dates and timestamps.
SELECT id, opened FROM acct WHERE id < 20;
SELECT id, ts FROM orders WHERE id < 100;
SELECT id, extract(year from ts), extract(month from ts), extract(day from ts) FROM orders WHERE id < 60;
SELECT id, date_trunc('month', ts) FROM orders WHERE id < 60;
SELECT id, opened + 30 FROM acct WHERE id < 10;
SELECT id, opened - DATE '2023-01-01' FROM acct WHERE id < 10;
SELECT id FROM orders WHERE ts BETWEEN '2024-03-01' AND '2024-03-31 23:59:59';
SELECT count(*) FROM orders WHERE ts >= TIMESTAMP '2024-06-01';
SELECT DATE '2024-02-29', TIMESTAMP '2024-02-29 12:34:56';
SELECT id, ts::date FROM orders WHERE id < 50;
SELECT id, CAST(ts AS date) FROM orders WHERE id < 30;
SELECT max(ts) - min(ts) FROM orders;
SELECT id, opened < '2023-07-01' FROM acct WHERE id < 15;
SELECT extract(dow from DATE '2024-01-01'), extract(doy from DATE '2024-12-31');
SELECT date_part('hour', ts), count(*) FROM orders GROUP BY 1 ORDER BY 1; -- ordered
SELECT to_char(ts, 'YYYY-MM-DD') FROM orders WHERE id < 30;
SELECT now() IS NOT NULL, current_date IS NOT NULL;
SELECT '2024-01-01'::date + INTERVAL '1 day';
SELECT INTERVAL '1 day' * 2;
SELECT id, age(TIMESTAMP '2024-12-31', ts) FROM orders WHERE id < 20;
SELECT TIMESTAMP '2024-03-01 10:00:00' - TIMESTAMP '2024-02-28 08:30:00';
SELECT acct_id, max(ts) - min(ts) FROM orders WHERE acct_id < 6 GROUP BY acct_id;
SELECT INTERVAL '1 year 2 months 3 days';
SELECT INTERVAL '90 minutes', INTERVAL '1.5 seconds';
