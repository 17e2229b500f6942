# Statements of compute/testdata/distributed.golden beside the 22 TPC-H
# queries (benches/tpch/queries): sysbench's oltp statements on sbtest1,
# one per line, parameters after ` -- `.
# point select
SELECT c FROM sbtest1 WHERE id = $1 -- 42
# simple ranges
SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 -- 100, 199
# sum ranges
SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN $1 AND $2 -- 100, 199
# order ranges
SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c -- 100, 199
# distinct ranges
SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c -- 100, 199
# index update
UPDATE sbtest1 SET k = k + 1 WHERE id = $1 -- 42
# non-index update
UPDATE sbtest1 SET c = $1 WHERE id = $2 -- 'x', 42
# delete
DELETE FROM sbtest1 WHERE id = $1 -- 42
# insert
INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4) -- 42, 7, 'c', 'pad'
