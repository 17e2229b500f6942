-- Session time zones: timestamptz printed and read in the session's zone
-- (IANA names in any case, daylight saving, local mean time before 1893,
-- numeric zones), on the fast path and the distributed path; what depends
-- on local time is refused on the distributed path outside UTC (0A000).
SET TIME ZONE 'Europe/Berlin';
SHOW TIME ZONE;
SELECT id, at FROM events ORDER BY id; -- ordered
SELECT id, at FROM events WHERE id = 3;
SELECT id, at, local_at FROM events WHERE id IN (3, 4, 5, 6);
SELECT id FROM events WHERE at >= '2024-03-31 03:00';
SELECT id FROM events WHERE at = '2024-10-27 02:30';
SELECT id FROM events WHERE at = '2024-03-31 02:30';
SELECT id FROM events WHERE at > '2024-07-16 01:00+02';
SELECT id FROM events WHERE at BETWEEN '2024-01-15 13:00' AND '2024-07-16';
SELECT id, at::text FROM events WHERE id < 8;
SELECT max(at), min(at), count(at) FROM events;
SELECT id, at + interval '1 hour', at - interval '1 day' FROM events WHERE id < 8;
SELECT e.id, e.at + interval '2 hours', e.at - interval '00:30:00' FROM events e JOIN events f ON f.id = e.id WHERE e.id < 8 ORDER BY e.id;
SELECT count(*) FROM events WHERE at < now();
SELECT id, at FROM events WHERE at IS NULL;
SELECT id, local_at FROM events WHERE id < 5;
SELECT e.id, e.at FROM events e JOIN acct a ON a.id = e.id WHERE a.id < 6;
SELECT id, at FROM events ORDER BY at DESC NULLS LAST LIMIT 3; -- ordered
SELECT id, date_trunc('day', at) FROM events;
SELECT id, extract(hour from at) FROM events;
SELECT id, at::date FROM events;
SELECT id, to_char(at, 'YYYY-MM-DD HH24') FROM events;
SELECT id FROM events WHERE at > local_at;
SELECT id FROM events WHERE at < '2024-01-15 13:00' AND at > '2024-01-15 12:59:59.9+01';
SET TIME ZONE 'america/new_york';
SHOW TIME ZONE;
SELECT id, at FROM events;
SELECT id, at::text FROM events WHERE at IS NOT NULL;
SELECT id FROM events WHERE at < '2024-07-15 19:30:01' AND at > '2024-07-15 19:29:59';
SET TIME ZONE 'Asia/Kathmandu';
SELECT id, at FROM events;
SELECT timestamptz '2024-01-01 00:00+00', '2024-01-01 12:00'::timestamptz, timestamp '2024-01-01 00:00';
SELECT id FROM events WHERE at > '2024-01-15 17:45' AND id > 0;
SELECT 'garbage'::timestamptz;
SET TIME ZONE -7;
SHOW TIME ZONE;
SELECT id, at FROM events;
SELECT id FROM events WHERE at = '2024-01-15 05:00';
SET TIME ZONE 5.5;
SHOW TIME ZONE;
SELECT id, at FROM events WHERE id = 1;
SET TIME ZONE 'Mars/Olympus';
SET TIME ZONE 'UTC';
SHOW TIME ZONE;
SELECT id, at FROM events;
SELECT id, at::text, date_trunc('day', at), extract(hour from at) FROM events;
SELECT id FROM events WHERE at > local_at;
-- timestamptz input naming its zone: abbreviations of the Default set
-- (fixed, or read in their zone at the time: MSK), zone names, DST.
SET TIME ZONE 'America/Los_Angeles';
SELECT '1997-02-10 17:32:01 PST'::timestamptz, '1997-07-10 17:32:01 PDT'::timestamptz, 'Feb 10 17:32:01 1997 America/New_York'::timestamptz;
SELECT '2011-03-27 04:00:00 MSK'::timestamptz, '2010-07-01 12:00 MSK'::timestamptz, '1997-02-10 17:32:01 MET DST'::timestamptz, '19970210 173201 -0330'::timestamptz;
SELECT '2024-07-01 12:00'::timestamp AT TIME ZONE 'CET', '2011-03-27 03:00:00'::timestamp AT TIME ZONE 'MSK', '2014-10-26 00:00:00 UTC'::timestamptz AT TIME ZONE 'MSK';
SELECT id FROM events WHERE at > '2024-07-15 16:00 PDT' ORDER BY id;
SELECT '1997-02-10 17:32:01 Mars/Base'::timestamptz;
SET TIME ZONE 'UTC';
SELECT v, v::timestamptz FROM (VALUES ('1997-02-10 17:32:01 PST'), ('2024-07-01 12:00+02'), ('Feb 10 17:32:01 1997 America/New_York'), ('2010-07-01 12:00 MSK')) t(v) ORDER BY 1;
SELECT id, (note || ' 2024-01-01')::text FROM orders WHERE id < 20 ORDER BY id;
