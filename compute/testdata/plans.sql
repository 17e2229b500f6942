# Golden plan tests: one statement per line, optional parameters after
# `--` (integers or 'text'). The expected plans are in plans.golden;
# TESSERA_BLESS=1 cargo test -p compute golden rewrites it.
SELECT id, v FROM t WHERE id = $1 -- 5
SELECT id, v FROM t WHERE id = 5
SELECT v FROM t WHERE id IN ($1, 2, 3) -- 1
SELECT count(*), sum(n), min(v) FROM t WHERE v > 'a'
SELECT v FROM t WHERE id BETWEEN $1 AND $2 ORDER BY id LIMIT 10 -- 1, 20
SELECT DISTINCT v FROM t WHERE d >= '2024-01-01'
SELECT * FROM m WHERE id = 1
SELECT * FROM t WHERE id = 1 FOR UPDATE
SELECT v, count(*) FROM t GROUP BY v
SELECT t.v, m.v FROM t JOIN m ON t.id = m.id
UPDATE t SET v = $2, n = n + 1 WHERE id = $1 -- 7, 'x'
UPDATE t SET v = 'y' WHERE v = 'x'
DELETE FROM t WHERE id = 5 AND v = 'it''s'
DELETE FROM m WHERE id = 3
INSERT INTO t (id, v) VALUES ($1, $2) -- 9, 'a'
INSERT INTO t (id, v, n, d) VALUES (1, 'a', 1.5, '2024-01-01'), (2, E'\\', -3, NULL)
INSERT INTO m (id, v) VALUES (4, 'mirror')
BEGIN ISOLATION LEVEL REPEATABLE READ
SET transaction_isolation = 'serializable'
SHOW tessera.pushdown
COPY t (id, v) FROM STDIN WITH (FORMAT csv)
