-- Answers a new user found different from PostgreSQL 15 (issue 30); each
-- failed before its fix.
-- Integer constants are integer: their arithmetic overflows as integer's.
SELECT 2147483647 + 1;
SELECT -2147483647 - 2;
SELECT 65536 * 32768;
SELECT 10 / 3 * 3, 7 % 3 * 2;
SELECT 2147483647 + 1::bigint, 3000000000 + 1;
SELECT id + 2147483647 FROM acct WHERE id = 1;
-- Unary minus binds tighter than ^.
SELECT -2 ^ 2, - 2 ^ 2, -(2 ^ 2), -2 ^ 2 ^ 3, 2 ^ -1;
SELECT -id ^ 2 FROM acct WHERE id = 3;
-- round(float8) rounds half to even; round(numeric) half away from zero.
SELECT round(2.5::float8), round(3.5::float8), round(-2.5::float8), round(0.5::float8);
SELECT round(2.5), round(-2.5), round(2.5::real);
-- Timestamps keep microseconds, rounded; timestamp(0) rounds.
SELECT '2024-01-02 10:11:12.123456789'::timestamp;
SELECT '2024-01-02 10:11:12.1234565'::timestamp, '2024-01-02 10:11:12.1234564'::timestamp;
SELECT '2024-01-02 10:11:12.5'::timestamp(0), '2024-01-02 10:11:12.4'::timestamp(0);
SELECT '2024-01-02 10:11:12.5555'::timestamp(3);
-- Year 0 does not exist.
SELECT '0000-06-15'::date;
SELECT '0000-06-15 10:00'::timestamp;
-- generate_series in a SELECT list returns rows.
SELECT generate_series(1, 3);
SELECT generate_series(1, 10, 4) AS g;
SELECT id, generate_series(1, 2) FROM acct WHERE id <= 3;
-- The merged USING column of a FULL JOIN is COALESCE(left, right).
SELECT id, a.owner, b.note FROM (SELECT id, owner FROM acct WHERE id % 2 = 0) a FULL JOIN (SELECT id, note FROM orders WHERE id % 3 = 0) b USING (id) WHERE id <= 40 ORDER BY id; -- ordered
SELECT id + 0 AS k FROM (SELECT id FROM acct WHERE id < 5) a FULL JOIN (SELECT id FROM orders WHERE id > 2 AND id < 8) b USING (id) ORDER BY k; -- ordered
-- extract keeps the fraction of a second.
SELECT extract(second from '2024-01-02 10:11:44.289012'::timestamp), extract(milliseconds from '2024-01-02 10:11:44.289012'::timestamp);
SELECT extract(epoch from '2024-01-02 10:11:44.289012'::timestamp), extract(second from '2024-01-02 10:11:44'::timestamp);
SELECT id, extract(second from ts), date_part('second', ts) FROM orders WHERE id <= 35;
SELECT id FROM orders WHERE extract(second from ts) > 30 AND id <= 100;
-- AT TIME ZONE: a timestamptz becomes a timestamp, a timestamp a timestamptz.
SELECT '2024-01-02 10:00+02'::timestamptz AT TIME ZONE 'UTC';
SELECT '2024-07-02 10:00'::timestamp AT TIME ZONE 'America/New_York';
SELECT '2024-01-02 10:00+00'::timestamptz AT TIME ZONE 'Asia/Kolkata', '2024-01-02 10:00' AT TIME ZONE 'UTC';
SELECT id, ts AT TIME ZONE 'Europe/Paris' FROM orders WHERE id <= 21;
SELECT '2024-01-02 10:00'::timestamp AT TIME ZONE 'No/Such_Zone';
-- Found by PostgreSQL's regression files (pgregress).
SELECT gcd(-2147483648, 0);
SELECT gcd(12, 18), lcm(4, 6), gcd(-2147483648::bigint, 0::bigint);
SELECT lcm(2147483647, 2147483646);
SELECT array_remove(ARRAY[1, 2, 2, 3], 2), array_replace(ARRAY['A', 'B', 'B'], 'B', 'CC');
SELECT date '01-08-99', date '1-8-08', '12-31-69'::date, '01-01-70'::date, '12-31-1999'::date;
SELECT date '99-01-08';
SELECT '01-08-99 10:11:12'::timestamp;
SELECT '2011-03-27 02:00:00'::timestamp AT TIME ZONE 'Europe/Moscow';
SELECT '2024-03-31 02:30'::timestamp AT TIME ZONE 'Europe/Berlin';
-- Found by the expression fuzzer (exprfuzz): a negative pad length is 0
-- (it dropped the connection), a length past 1 GB is 54000.
SELECT lpad('ab', -1, 'x'), rpad('ab', -3), repeat('x', -2), lpad('abc', 2);
SELECT id, lpad(owner, (id % 5) - 2, '*') FROM acct WHERE id <= 8 ORDER BY id;
SELECT id, rpad(note, qty % 4 - 2, 'ab') FROM orders WHERE id <= 12 ORDER BY id;
SELECT repeat('x', 2000000000);
-- Upserts as ORMs write them: INSERT ... ON CONFLICT ... RETURNING shows
-- the row after the insert or the update, DO NOTHING only the rows
-- inserted. (Each statement runs several times here: only EXCLUDED values
-- are assigned, so every run answers alike; the rows go at the end.)
INSERT INTO empty_t VALUES (900, 'a'), (901, 'b') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v RETURNING *;
INSERT INTO empty_t AS t VALUES (901, 'c') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v RETURNING t.id * 2 AS dbl, upper(t.v), v;
INSERT INTO empty_t VALUES (900, 'x'), (901, 'y') ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO empty_t VALUES (901, 'y') ON CONFLICT (id) DO NOTHING RETURNING id;
DELETE FROM empty_t WHERE id >= 900;
-- EXISTS over a set operation: as a select item (how clients compare
-- tables) and in WHERE.
SELECT NOT EXISTS (SELECT id FROM acct EXCEPT SELECT acct_id FROM orders);
SELECT EXISTS (SELECT id FROM acct INTERSECT SELECT acct_id FROM orders), NOT EXISTS (SELECT id FROM acct WHERE id > 1000 UNION SELECT id FROM region WHERE id > 1000);
SELECT NOT EXISTS (SELECT k FROM colo_a EXCEPT SELECT k FROM colo_b) AS same, EXISTS (SELECT 1) AS one, NOT EXISTS (SELECT id FROM region EXCEPT SELECT id FROM acct) AS covered;
SELECT id FROM acct WHERE NOT EXISTS (SELECT id FROM region EXCEPT SELECT id FROM acct) AND id <= 3;
SELECT id FROM acct WHERE EXISTS (SELECT acct_id FROM orders INTERSECT SELECT id FROM acct WHERE id = 62) AND id < 4;
-- pg_typeof: the type's name as regtype prints it.
SELECT pg_typeof(id)::text, pg_typeof(owner)::text, pg_typeof(balance)::text, pg_typeof(opened)::text, pg_typeof(flag)::text, pg_typeof(score)::text FROM acct WHERE id = 1;
SELECT pg_typeof(id)::text, pg_typeof(note)::text, pg_typeof(ts)::text, pg_typeof(qty)::text, pg_typeof(note || '!')::text, pg_typeof(upper(note))::text FROM orders WHERE id = 7;
SELECT pg_typeof(name)::text, pg_typeof(code)::text, pg_typeof(r.id + 1)::text FROM region r WHERE id = 1;
SELECT pg_typeof(at)::text, pg_typeof(local_at)::text FROM events WHERE id = 1;
SELECT pg_typeof(1)::text, pg_typeof(3000000000)::text, pg_typeof(1.5)::text, pg_typeof('a')::text, pg_typeof(NULL)::text, pg_typeof('a'::varchar(3))::text, pg_typeof(2::smallint)::text;
SELECT pg_typeof(now())::text, pg_typeof(date '2024-01-02')::text, pg_typeof(true)::text, pg_typeof(1.5::float8)::text, pg_typeof(interval '1 day')::text, pg_typeof('x'::char(2))::text;
SELECT pg_typeof(count(*))::text, pg_typeof(sum(qty))::text, pg_typeof(max(amount))::text, pg_typeof(min(note))::text FROM orders;
