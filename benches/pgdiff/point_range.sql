-- Point lookups, ranges, IN lists, LIMIT.
SELECT * FROM acct WHERE id = 7;
SELECT id, owner FROM acct WHERE id = 1000;
SELECT id, balance FROM acct WHERE id IN (1, 2, 3, 50, 999);
SELECT id FROM acct WHERE id BETWEEN 10 AND 20;
SELECT id FROM acct WHERE id > 100;
SELECT id, amount FROM orders WHERE id >= 700 AND id < 800;
SELECT count(*) FROM orders WHERE acct_id = 5;
SELECT id FROM orders WHERE acct_id IN (1, 2, 3) AND qty > 100;
SELECT * FROM region WHERE id = 3;
SELECT * FROM region;
SELECT * FROM single_t WHERE id = 2;
SELECT id, v FROM empty_t WHERE id = 1;
SELECT id FROM acct WHERE id NOT IN (1, 2, 3) AND id < 10;
SELECT id FROM acct ORDER BY id LIMIT 5; -- ordered
SELECT id FROM acct ORDER BY id DESC LIMIT 3 OFFSET 2; -- ordered
SELECT id, owner FROM acct WHERE owner = 'alice' ORDER BY id; -- ordered
SELECT id FROM acct WHERE flag;
SELECT id FROM acct WHERE NOT flag;
SELECT id FROM acct WHERE flag IS NULL;
SELECT id FROM acct WHERE opened > '2023-06-01';
SELECT id FROM orders WHERE ts < '2024-02-01 00:00:00';
SELECT count(*) FROM orders WHERE note = 'trailing  ';
SELECT k, v FROM colo_a WHERE k = 10;
