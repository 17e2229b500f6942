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
# a table with two partitions per shard: a point read, a scatter read
# (one statement per shard, its partitions joined by UNION ALL), a write
SELECT v FROM wide WHERE id = $1 -- 42
SELECT count(*) FROM wide WHERE v > $1 -- 3
UPDATE wide SET v = v + 1 WHERE id = $1 -- 42
# two-step UPDATE/DELETE: a partition key assigned (the row moves), a
# DELETE ... USING
UPDATE sbtest1 SET id = id + 1000000 WHERE id = $1 -- 42
DELETE FROM sbtest1 USING wide WHERE sbtest1.k = wide.v AND wide.id = $1 -- 42
