-- ORDER BY (directions, NULLS FIRST/LAST, expressions, ordinals), LIMIT, OFFSET, FETCH FIRST; compared in order.
SELECT id, owner FROM acct ORDER BY id LIMIT 5; -- ordered
SELECT id FROM acct ORDER BY id DESC LIMIT 5; -- ordered
SELECT id FROM acct ORDER BY id LIMIT 5 OFFSET 10; -- ordered
SELECT id, balance FROM acct ORDER BY balance DESC NULLS LAST, id LIMIT 8; -- ordered
SELECT id, balance FROM acct ORDER BY balance NULLS FIRST, id LIMIT 8; -- ordered
SELECT id, balance FROM acct ORDER BY balance, id LIMIT 8; -- ordered
SELECT id, balance FROM acct ORDER BY balance DESC, id LIMIT 8; -- ordered
SELECT id, owner FROM acct WHERE id < 30 ORDER BY owner, id; -- ordered
SELECT id, owner FROM acct WHERE id < 30 ORDER BY owner DESC, id; -- ordered
SELECT id, owner FROM acct WHERE id < 30 ORDER BY owner NULLS FIRST, id; -- ordered
SELECT id, score FROM acct ORDER BY score DESC NULLS LAST LIMIT 5; -- ordered
SELECT id, opened FROM acct ORDER BY opened, id LIMIT 10; -- ordered
SELECT id, opened FROM acct ORDER BY opened DESC, id LIMIT 10; -- ordered
SELECT id, flag FROM acct ORDER BY flag, id LIMIT 12; -- ordered
SELECT id, flag FROM acct ORDER BY flag DESC, id LIMIT 12; -- ordered
SELECT id, ts FROM orders ORDER BY ts LIMIT 5; -- ordered
SELECT id, ts FROM orders ORDER BY ts DESC LIMIT 5; -- ordered
SELECT id, amount FROM orders ORDER BY amount DESC NULLS LAST, id LIMIT 10; -- ordered
SELECT id, qty FROM orders ORDER BY qty, id DESC LIMIT 10; -- ordered
SELECT id, note FROM orders WHERE id < 200 ORDER BY note, id; -- ordered
SELECT id, name FROM region ORDER BY name; -- ordered
SELECT id, code FROM region ORDER BY code DESC; -- ordered
SELECT k, v FROM colo_a ORDER BY v NULLS FIRST, k LIMIT 10; -- ordered
SELECT k, v FROM colo_a ORDER BY v DESC, k LIMIT 10; -- ordered
SELECT id, owner FROM acct ORDER BY length(owner), id LIMIT 10; -- ordered
SELECT id, balance * 2 AS b2 FROM acct ORDER BY b2, id LIMIT 6; -- ordered
SELECT id FROM acct ORDER BY id % 7, id LIMIT 10; -- ordered
SELECT id FROM acct ORDER BY 1 DESC LIMIT 3; -- ordered
SELECT owner, count(*) FROM acct GROUP BY owner ORDER BY 2 DESC, 1 NULLS FIRST; -- ordered
SELECT id FROM acct ORDER BY id FETCH FIRST 3 ROWS ONLY; -- ordered
SELECT id FROM acct ORDER BY id OFFSET 118; -- ordered
SELECT id FROM acct ORDER BY id LIMIT 0; -- ordered
SELECT id FROM acct ORDER BY id LIMIT ALL OFFSET 117; -- ordered
SELECT id FROM empty_t ORDER BY id LIMIT 3; -- ordered
SELECT id, label FROM single_t ORDER BY label NULLS FIRST; -- ordered
SELECT id, owner FROM acct WHERE owner IN ('日本', 'Émile', 'alice') ORDER BY owner, id; -- ordered
SELECT acct_id, id FROM orders WHERE acct_id < 4 ORDER BY acct_id, id DESC; -- ordered
SELECT id FROM (SELECT id FROM acct ORDER BY id DESC LIMIT 10) s ORDER BY id; -- ordered
SELECT a.id, o.id FROM acct a JOIN orders o ON o.acct_id = a.id ORDER BY o.id LIMIT 10; -- ordered
SELECT id, balance FROM acct ORDER BY abs(balance) DESC NULLS LAST, id LIMIT 5; -- ordered
SELECT id FROM acct WHERE id = 5 ORDER BY owner; -- ordered
SELECT id, balance FROM acct WHERE id IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12) ORDER BY balance DESC, id; -- ordered
SELECT id, note FROM orders WHERE id < 50 ORDER BY note DESC, id LIMIT 7; -- ordered
SELECT id, note FROM orders WHERE id < 50 ORDER BY note, id LIMIT 7; -- ordered
SELECT DISTINCT owner FROM acct WHERE id < 40 ORDER BY owner; -- ordered
SELECT count(*) FROM acct WHERE id = 3 ORDER BY owner;
