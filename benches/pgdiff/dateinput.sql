-- Date and timestamp input as PostgreSQL's date_in and timestamp_in read it (DateStyle ISO, MDY).
SELECT DATE 'January 8, 1999', DATE '1999-Jan-08', DATE '08-Jan-1999', DATE 'Jan-08-1999', DATE '1/8/1999';
SELECT DATE '19990108', DATE '990108', DATE '1999.008', DATE 'J2451187', DATE 'epoch';
SELECT DATE '1997-02-29';
SELECT DATE '0000-06-15';
SELECT DATE 'junk';
SELECT date 'yesterday' - date 'tomorrow' AS "Two days";
SELECT TIMESTAMP '1999-01-08 04:05:06.7894567', TIMESTAMP 'epoch', TIMESTAMP '19990108 040506', TIMESTAMP 'Jan 8 04:05:06 1999';
SELECT TIMESTAMP '2000-01-01 00:00:00+05', TIMESTAMP '1999-01-08T04:05:06', TIMESTAMP 'Friday January 8 1999 4:05 PM';
SELECT TIMESTAMP '1999-13-08 04:05:06';
SELECT '2001-02-29'::date;
SELECT x::date FROM (VALUES ('2001-02-03'), ('Feb 3, 2001')) v(x);
SELECT id, opened FROM acct WHERE opened > 'January 1, 2021' ORDER BY id LIMIT 5; -- ordered
SELECT count(*) FROM acct WHERE opened BETWEEN '2020-01-01' AND 'Dec 31 2021';
-- DateStyle's order: ISO output, input read DMY or YMD.
SET datestyle TO dmy;
SHOW datestyle;
SELECT '1/2/2024'::date, date '08 Jan 99', date 'Jan 08 99', '2024-01-02 10:00'::timestamp, '1/2/2024 10:00 PST'::timestamptz;
SELECT id FROM acct WHERE opened > '15/11/2023' ORDER BY id;
SET datestyle = 'ISO, YMD';
SELECT '99/1/2'::date, date '99 Jan 08', '2024-01-02'::date;
SET datestyle = 'ymd, dmy';
SET datestyle = 'foo';
RESET datestyle;
SHOW datestyle;
SELECT '1/2/2024'::date;
