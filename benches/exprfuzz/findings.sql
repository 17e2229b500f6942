-- scan row 6 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, -19737 days -12:34:54.5) (3, -19792 days -10:29:58.5) | tessera: error 22000: Cannot cast Timestamp(µs, "+00:00") value 2534023007990000... (272 characters)
(to_timestamp(1.5e0) - c_tstz)
-- constant row 11 | postgres: 1 rows ["?column?"] (NULL) | tessera: error 42804: Cannot coerce arithmetic expression Duration(ns) / Int64 to valid types
((CAST(NULL AS timestamptz) - CAST(NULL AS timestamptz)) / 1)
-- constant row 3 | postgres: error 22008: date field value out of range: 1-01-2147483647 | tessera: error 22000: Day value '2147483647' is out of range
make_date(1, 1, 2147483647)
-- constant row 1 | postgres: 1 rows ["case"] (NULL) | tessera: error 22003: numeric field overflow
CASE 1e16 WHEN CAST('NaN' AS double precision) THEN CAST(1 AS bigint) END
-- constant row 5 | postgres: error 22008: date/time field value out of range: "0 " | tessera: error 22007: invalid input syntax for type date: "0"
(CAST(c_int AS char(2)))::date
-- constant row 6 | postgres: (1969-12-31 16:00:06.200271-08) | tessera: (1969-12-31 16:00:06.20027-08)
to_timestamp((c_double ^ c_double))
-- scan row 2 | postgres: 14 rows ["id", "case"] (1, NULL) (2, NULL) (3,     ) | tessera: error 22000: Cannot cast Timestamp(µs, "+00:00") value 253402300799000000 to Timestamp(ns): converted value excee... (230 characters)
CASE c_tstz WHEN TIMESTAMPTZ '2024-03-10 02:30:00' THEN CAST('' AS char(4)) END
-- constant row 2 | postgres: error 22008: date field value out of range: 1-01-42 | tessera: error 22000: Day value '42' is out of range
make_date(1, 1, c_int)
-- constant row 5 | postgres: 1 rows ["interval"] (1 year 2 mons 3 days 04:05:06.789) | tessera: error 22000: Parser error: Invalid input syntax for type interval: "1 year 2 mons 3 days 04:05:06.789"
INTERVAL '1 year 2 mons 3 days 04:05:06.789'
-- constant row 14 | postgres: (    ) | tessera: ()
COALESCE(CAST('' AS char(4)), CAST('' AS char(4)))
-- scan row 7 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22000: Month value '0' is out of range
((CAST(NULL AS integer) * (- c_smallint)) + make_date(2, c_int, GREATEST(c_int, c_int, (-2147483647))))
-- scan row 10 | postgres: error 22003: smallint out of range | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, -7) (3, -32768)
(- c_smallint)
-- scan row 12 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 2.25) (3, 2.25)
(c_real * c_real)
-- scan row 6 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, t) (3, t) | tessera: error 22000: Cannot cast Date32 value -719162 to Timestamp(ns): converted value exceeds the representable i64 range
(c_date < TIMESTAMP '2024-01-15 12:00:00')
-- constant row 4 | postgres: (10089-09-16) | tessera: (+10089-09-16)
(c_smallint + c_date)
-- constant row 6 | postgres: error 2201F: a negative number raised to a non-integer power yields a complex result | tessera: 1 rows ["?column?"] (NaN)
(-2.5e0 ^ 1.5e0)
-- constant row 13 | postgres: (    1) | tessera: (1)
concat('', CAST('' AS char(4)), 1)
-- constant row 2 | postgres: (ab  ) | tessera: (ab)
GREATEST(c_char, c_char, c_char)
-- constant row 8 | postgres: error 22003: value out of range: underflow | tessera: 1 rows ["?column?"] (0)
(c_real * CAST(0.1 AS real))
-- constant row 13 | postgres: 1 rows ["timestamptz"] (9999-12-31 15:59:59-08) | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59+00"
TIMESTAMPTZ '9999-12-31 23:59:59+00'
-- constant row 5 | postgres: 1 rows ["date_trunc"] (0001-01-01 00:00:00) | tessera: error 22008: timestamp out of range: "0001-01-01 00:00:00"
date_trunc('century', c_ts)
-- constant row 7 | postgres: error 22003: value out of range: overflow | tessera: 1 rows ["?column?"] (Infinity)
(c_real * CAST(1.5 AS real))
-- constant row 2 | postgres: 1 rows ["?column?"] (NULL) | tessera: error 22007: invalid input syntax for type timestamp without time zone: "infinity"
(CAST((TIMESTAMP 'infinity')::char(6) AS bigint) + CAST(NULL AS bigint))
-- scan row 10 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 3) (3, 3)
(c_real + c_real)
-- scan row 10 | postgres: error 22003: bigint out of range | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, -1000) (3, -9223372036854775807)
(- c_bigint)
-- scan row 12 | postgres: 14 rows ["id", "substring"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
substring(CAST(NULL AS text) from (c_int * CAST(32767 AS smallint)) for 1)
-- constant row 6 | postgres: 1 rows ["date"] (infinity) | tessera: error 22007: invalid input syntax for type date: "infinity"
DATE 'infinity'
-- point row 10 | postgres: 1 rows ["id", "case"] (10, NULL) | tessera: error 22003: smallint out of range
CASE CAST(c_double AS smallint) WHEN CAST(NULL AS smallint) THEN 1.5 END
-- constant row 3 | postgres: error 22008: date field value out of range: 0-01-2147483647 | tessera: error 22000: Day value '2147483647' is out of range
make_date(0, 1, 2147483647)
-- constant row 9 | postgres: error 22008: date field value out of range: 1-03-100 | tessera: error 22000: Day value '100' is out of range
make_date(1, 3, 100)
-- constant row 8 | postgres: 1 rows ["timestamp"] (9999-12-31 23:59:59.999999) | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59.999999"
TIMESTAMP '9999-12-31 23:59:59.999999'
-- constant row 6 | postgres: 1 rows ["timestamp"] (9999-12-31 23:59:59.999999) | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59.999999"
c_ts
-- point row 13 | postgres: error 22003: value out of range: overflow | tessera: 1 rows ["id", "?column?"] (13, Infinity)
(CAST(1.1 AS real) / CAST(1e-45 AS real))
-- constant row 4 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on -185542587187200
(c_int + c_date)
-- scan row 14 | postgres: error 22008: timestamp out of range: "1e+16" | tessera: 14 rows ["id", "to_timestamp"] (1, NULL) (2, 1969-12-31 16:00:02.25-08) (3, 1969-12-31 16:00:02.25-08)
to_timestamp(c_double)
-- constant row 8 | postgres: 1 rows ["timestamptz"] (9999-12-31 15:59:59-08) | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59+00"
c_tstz
-- constant row 3 | postgres: error 22P02: invalid input syntax for type integer: "" | tessera: error 22007: invalid input syntax for type timestamp with time zone: "2024-10-27 02:30:00 Europe/Paris"
(TIMESTAMPTZ '2024-10-27 02:30:00 Europe/Paris' > CAST(CAST('' AS integer) AS varchar(3)))
-- scan row 9 | postgres: 14 rows ["id", "case"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22000: Cannot cast Timestamp(µs) value -62135596800000000 to Timestamp(ns): converted value exceeds the rep... (220 characters)
CASE c_ts WHEN CAST(NULL AS timestamp) THEN CAST(1 AS smallint) END
-- constant row 13 | postgres: error 22007: invalid input syntax for type interval: "    " | tessera: error 22000: Parser error: Invalid input syntax for type interval: ""
CAST(c_char AS interval)
-- constant row 10 | postgres: error 22003: value out of range: overflow | tessera: 1 rows ["?column?"] (Infinity)
(CAST(3.4e38 AS real) * c_real)
-- constant row 10 | postgres: 1 rows ["date"] (4713-01-01 BC) | tessera: error 22007: invalid input syntax for type date: "4713-01-01 BC"
DATE '4713-01-01 BC'
-- constant row 13 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(c_date - 2147483647)
-- constant row 14 | postgres: 1 rows ["timestamptz"] (0001-12-31 16:07:02-07:52:58 BC) | tessera: error 22008: timestamp out of range: "0001-01-01 00:00:00+00"
TIMESTAMPTZ '0001-01-01 00:00:00+00'
-- constant row 13 | postgres: 1 rows ["interval"] (23:59:59.999999) | tessera: error 22000: Parser error: Invalid input syntax for type interval: "23:59:59.999999"
INTERVAL '23:59:59.999999'
-- constant row 12 | postgres: error 22007: invalid input syntax for type timestamp: "    " | tessera: error 22000: Parser error: Error parsing timestamp from '': timestamp must contain at least 10 chara... (205 characters)
CAST(CAST('' AS char(4)) AS timestamp(0))
-- constant row 4 | postgres: 1 rows ["case"] (NULL) | tessera: error 22000: Invalid argument error: Invalid comparison operation: Decimal128(38, 3) == Decimal128(38, 1)
CASE 1.5 WHEN c_numeric THEN c_char END
-- constant row 9 | postgres: error 22008: cannot subtract infinite timestamps | tessera: error 22000: Parser error: Invalid input syntax for type interval: "23:59:59.999999"
((TIMESTAMPTZ '-infinity' - INTERVAL '23:59:59.999999') - TIMESTAMPTZ '2024-03-10 02:30:00')
-- constant row 9 | postgres: error 42846: cannot cast type interval to date | tessera: error 22P02: invalid input syntax for type numeric: ""
CASE 1.5 WHEN CAST(CAST('' AS char(4)) AS numeric(3)) THEN CAST(INTERVAL '-1 day' AS date) END
-- constant row 7 | postgres: (ab  ) | tessera: (ab)
NULLIF(c_char, CAST('' AS char(4)))
-- constant row 3 | postgres: (123456789012345678901234567890) | tessera: (123456789012345678901234567890.000000000)
trunc(123456789012345678901234567890.123456789)
-- constant row 4 | postgres: (    ) | tessera: ()
CASE WHEN true THEN CAST('' AS char(4)) ELSE CAST('' AS char(4)) END
-- constant row 10 | postgres: error 22008: date field value out of range: 1-01--2147483648 | tessera: error 22P02: invalid input syntax for type integer: "日本"
(make_date(1, 1, c_int) + CAST(c_char AS integer))
-- scan row 3 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 0.15) (3, 0.15)
(CAST(0.1 AS real) * c_real)
-- point row 10 | postgres: error 22008: date field value out of range: 1-01-00 | tessera: error 22012: division by zero
((c_smallint / CAST(0 AS smallint)) + make_date(1, 1, (c_smallint)::integer))
-- constant row 10 | postgres: (0.0000000000) | tessera: (0)
CAST(c_smallint AS numeric(38,10))
-- scan row 8 | postgres: 14 rows ["id", "rpad"] (1, NULL) (2, ab) (3,        ) | tessera: error client: connection closed
rpad(c_char, (c_int % 20))
-- constant row 13 | postgres: error 42846: cannot cast type interval to bigint | tessera: error 22000: Parser error: Invalid input syntax for type interval: "--83 days -11 hours 23 minutes"
CAST((- INTERVAL '-83 days -11 hours 23 minutes') AS bigint)
-- constant row 11 | postgres: (    ) | tessera: ()
COALESCE(CAST('' AS char(4)), c_char)
-- scan row 11 | postgres: (2, ab  ) | tessera: (2, ab)
CASE WHEN true THEN c_char ELSE CAST('' AS char(4)) END
-- scan row 4 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 5.623413251903491e+33) (3, 5.623413251903491e+33)
(1e15 ^ c_double)
-- constant row 14 | postgres: 1 rows ["extract"] (NULL) | tessera: error 22000: Date part '''' not supported
extract('' from CAST(NULL AS timestamp))
-- constant row 9 | postgres: (-257 days -23:23:00) | tessera: (-257 days +23:23:00)
(- INTERVAL '257 days 23 hours 23 minutes')
-- constant row 5 | postgres: 1 rows ["coalesce"] (0.0) | tessera: error 42804: CASE expression 'then' values had multiple data types: Decimal128(2, 1), Decimal128(2, 0)
COALESCE(0.0, ceil(1.5))
-- constant row 12 | postgres: (    ) | tessera: ()
LEAST(CAST('' AS char(4)), CAST('' AS char(4)), CAST('' AS char(4)))
-- constant row 14 | postgres: 1 rows ["timestamp"] (infinity) | tessera: error 22007: invalid input syntax for type timestamp without time zone: "infinity"
TIMESTAMP 'infinity'
-- scan row 10 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
((CAST(1 AS smallint) - c_smallint) % CASE WHEN (CAST(NULL AS text) ILIKE 'a%') THEN COALESCE(c_smallint, CAST(-32768 AS smallint)) ELSE (CAST(-1 AS smallint) + CAST(NULL AS smallint)) END)
-- constant row 14 | postgres: error 42846: cannot cast type boolean to smallint | tessera: 1 rows ["int2"] (1)
CAST(true AS smallint)
-- constant row 1 | postgres: (00:00:) | tessera: (0 secs)
CAST(INTERVAL '0' AS char(6))
-- scan row 5 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 3.4e+38) (3, 3.4e+38)
(CAST(3.4e38 AS real) + c_real)
-- constant row 14 | postgres: error 0A000: unit "hour" not supported for type date | tessera: 1 rows ["extract"] (0)
extract(hour from DATE '9999-12-31')
-- constant row 7 | postgres: (4) | tessera: (0)
octet_length(CAST('' AS char(4)))
-- point row 4 | postgres: error 22003: integer out of range | tessera: error 22000: Unable to parse date from -2147483648, 1, 1
make_date((- c_int), 1, 1)
-- constant row 2 | postgres: error 22008: date field value out of range: 1--392-01 | tessera: error 22000: Month value '-392' is out of range
make_date(1, -392, 1)
-- scan row 12 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 1.6500001) (3, 1.6500001)
(c_real * CAST(1.1 AS real))
-- constant row 1 | postgres: 1 rows ["?column?"] (t) | tessera: error 22003: numeric field overflow
(1 NOT BETWEEN CAST('NaN' AS double precision) AND 1.5e0)
-- scan row 14 | postgres: error 22003: integer out of range | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, -42) (3, -2147483647)
(- c_int)
-- constant row 10 | postgres: error 22008: timestamp out of range | tessera: error 22000: Compute error: Timestamp out of range
(c_date + INTERVAL '2147483647 days')
-- constant row 6 | postgres: 1 rows ["case"] (NULL) | tessera: error 22000: Invalid argument error: Invalid comparison operation: Decimal128(38, 20) == Decimal128(38, 1)
CASE 1.5 WHEN c_numeric THEN c_smallint END
-- constant row 12 | postgres: (17.0859375000000000) | tessera: (17.0859375)
(1.5 ^ c_smallint)
-- constant row 12 | postgres: error 22008: date field value out of range: 1-01--1 | tessera: error 22000: Day value '-1' is out of range
make_date(1, 1, -1)
-- constant row 2 | postgres: (1.5000000000000000) | tessera: (1.5)
(1.5 ^ CAST(1 AS smallint))
-- scan row 10 | postgres: 14 rows ["id", "c_ts"] (1, NULL) (2, 2024-01-15 12:34:56) (3, 2024-03-10 02:30:00) | tessera: error 22000: Cannot cast Timestamp(µs) value 253402300799999999 to Timestamp(ns): ... (251 characters)
CASE WHEN false THEN CAST(NULL AS timestamp) ELSE c_ts END
-- constant row 10 | postgres: (0.0000000000) | tessera: (0)
CAST(c_bigint AS numeric(38,10))
-- scan row 1 | postgres: (2, 4) | tessera: (2, 2)
octet_length(c_char)
-- constant row 8 | postgres: 1 rows ["?column?"] (f) | tessera: error 22003: numeric field overflow
(1.5 = CAST('NaN' AS real))
-- scan row 8 | postgres: (4, 10000-01-01) | tessera: (4, +10000-01-01)
(1 + c_date)
-- constant row 10 | postgres: (10000-01-01) | tessera: (+10000-01-01)
(c_date + 1)
-- constant row 7 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(c_date + 2147483647)
-- constant row 14 | postgres: 1 rows ["timestamptz"] (2024-10-26 18:30:00-07) | tessera: error 22007: invalid input syntax for type timestamp with time zone: "2024-10-27 02:30:00 Europe/Paris"
TIMESTAMPTZ '2024-10-27 02:30:00 Europe/Paris'
-- constant row 11 | postgres: error 22003: smallint out of range | tessera: 1 rows ["?column?"] (NULL)
(CAST(NULL AS bigint) / (CAST(-32768 AS smallint) + c_smallint))
-- point row 7 | postgres: error 22003: value out of range: overflow | tessera: 1 rows ["id", "exp"] (7, Infinity)
exp(c_double)
-- scan row 2 | postgres: 14 rows ["id", "date_trunc"] (1, NULL) (2, 2024-01-15 00:00:00) (3, 2024-03-04 00:00:00) | tessera: error 22000: Timestamp 253402300799999999 out of range
date_trunc('week', c_ts)
-- constant row 13 | postgres: error 22008: date field value out of range: 1-2147483647-02 | tessera: error 22000: Month value '2147483647' is out of range
make_date(1, 2147483647, 2)
-- scan row 10 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 0.0035415865) (3, 0.0035415865)
(c_real / CAST(423.539 AS real))
-- scan row 7 | postgres: (8, 10000-01-01 05:44:59) | tessera: (8, +10000-01-01 05:44:59)
(c_tstz AT TIME ZONE 'Asia/Kathmandu')
-- constant row 5 | postgres: 1 rows ["?column?"] (0) | tessera: error 22000: Invalid argument error: Invalid arithmetic operation: Float64 - Decimal128(38, 0)
(1 - sign(1.5))
-- constant row 9 | postgres: (0.999999985098839) | tessera: (1)
(0.1e0 / c_real)
-- constant row 12 | postgres: 1 rows ["round"] (1.8) | tessera: error 42883: function round(double precision, integer) does not exist
round(power(1.5, 1.5), CAST(1 AS smallint))
-- constant row 13 | postgres: 1 rows ["?column?"] (t) | tessera: error 22003: numeric field overflow
(1.5 IN (CAST('NaN' AS real), CAST(1.5 AS real), c_real))
-- constant row 13 | postgres: error 22003: integer out of range | tessera: error 22000: Parser error: Invalid input syntax for type interval: "1 year 2 mons 3 days 04:05:06.789"
(INTERVAL '1 year 2 mons 3 days 04:05:06.789' / abs(CAST(-2147483648 AS integer)))
-- constant row 12 | postgres: (-1 mons +1 day) | tessera: (-1 mons -1 days)
(- INTERVAL '1 mon -1 day')
-- constant row 10 | postgres: error 22P02: invalid input syntax for type numeric: "日本  " | tessera: error 22007: invalid input syntax for type timestamp with time zone: "2024-10-27 02:30:00 Europe/Paris... (201 characters)
CAST(COALESCE(CASE TIMESTAMPTZ '2024-10-27 02:30:00 Europe/Paris' WHEN c_tstz THEN CAST('' AS char(4)) END, c_char) AS numeric(38,10))
-- constant row 12 | postgres: error 2201F: a negative number raised to a non-integer power yields a complex result | tessera: 1 rows ["power"] (NaN)
power((- CAST(7 AS smallint)), 1.5e0)
-- point row 8 | postgres: 1 rows ["id", "case"] (8, NULL) | tessera: error 22000: Cannot cast Timestamp(µs, "+00:00") value 253402300799000000 to Timestamp(ns): converted value exceeds the representable... (210 characters)
CASE c_tstz WHEN to_timestamp(1.5e0) THEN true END
-- constant row 1 | postgres: 1 rows ["date_trunc"] (NULL) | tessera: error 22000: Unsupported date_trunc granularity: ''. Supported values are: microsecond, millisecond, second, minute, hour, day, week,... (221 characters)
date_trunc('', CAST(NULL AS timestamp))
-- constant row 7 | postgres: (Inf) | tessera: (inf)
CAST(CAST('Infinity' AS real) AS varchar(3))
-- constant row 2 | postgres: 1 rows ["timezone"] (NULL) | tessera: error 42883: function timezone(text, date) does not exist
(DATE '2065-03-16' AT TIME ZONE CAST(NULL AS text))
-- constant row 2 | postgres: (ab  ) | tessera: (ab)
COALESCE(c_char, c_char)
-- constant row 14 | postgres: error 22003: value overflows numeric format | tessera: 1 rows ["exp"] (Infinity)
exp(736908.1157e0)
-- constant row 10 | postgres: error 22012: division by zero | tessera: error 42883: function scale(double precision) does not exist
scale(sqrt((1.5 % c_bigint)))
-- constant row 10 | postgres: error 22012: division by zero | tessera: 1 rows ["?column?"] (-Infinity)
(c_real / CAST('-0' AS real))
-- constant row 6 | postgres: error 22003: integer out of range | tessera: 1 rows ["?column?"] (NULL)
(CAST(NULL AS integer) & (- CAST(-2147483648 AS integer)))
-- constant row 1 | postgres: 1 rows ["?column?"] (NULL) | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(CAST(NULL AS date) + 2147483647)
-- scan row 11 | postgres: 14 rows ["id", "date_trunc"] (1, NULL) (2, 2024-01-01 00:00:00) (3, 2024-01-01 00:00:00) | tessera: error 22000: Timestamp 253402300799999999 out of range
date_trunc('quarter', c_ts)
-- constant row 2 | postgres: 1 rows ["timestamp"] (0001-01-01 00:00:00) | tessera: error 22008: timestamp out of range: "0001-01-01 00:00:00"
TIMESTAMP '0001-01-01 00:00:00'
-- point row 13 | postgres: 1 rows ["id", "div"] (13, NULL) | tessera: error 22P02: invalid input syntax for type numeric: ""
div(CAST(c_char AS numeric(3)), CAST(NULL AS numeric))
-- constant row 12 | postgres: 1 rows ["div"] (NULL) | tessera: error 42883: function div(numeric, 10), double precision) does not exist
div(CAST(NULL AS numeric), power(0.0, 1.5))
-- constant row 4 | postgres: (1.5000000000000000) | tessera: (1.5)
power(1.5, CAST(1 AS smallint))
-- constant row 13 | postgres: (0.1760912590556812) | tessera: (0.17609125905568124)
log(1.5)
-- constant row 11 | postgres: 1 rows ["timezone"] (9999-12-31 23:59:59) | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59+00"
(TIMESTAMPTZ '9999-12-31 23:59:59+00' AT TIME ZONE 'UTC')
-- point row 2 | postgres: (2, 12.5) | tessera: (2, 12.500000000000000000)
abs(c_numeric)
-- scan row 5 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 2.25) (3, 2.25)
(CAST(1.5 AS real) * c_real)
-- constant row 3 | postgres: error 22007: invalid input syntax for type timestamp: "" | tessera: error 22000: Parser error: Error parsing timestamp from '': timestamp must contain at least 10 characters
CAST(c_varchar AS timestamp(0))
-- scan row 9 | postgres: (1,     ) | tessera: (1, )
NULLIF(CAST('' AS char(4)), CAST('a' AS char(4)))
-- constant row 12 | postgres: (    ) | tessera: ()
LEAST(c_char, CAST('' AS char(4)), CAST('' AS char(4)))
-- constant row 14 | postgres: error 22012: division by zero | tessera: 1 rows ["?column?"] (-Infinity)
(CAST(1.1 AS real) / CAST('-0' AS real))
-- scan row 13 | postgres: (4, 80000000) | tessera: (4, ffffffff80000000)
to_hex(c_int)
-- scan row 6 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 2.4900343193257237) (3, 2.4900343193257237)
(1.5e0 ^ c_double)
-- constant row 13 | postgres: 1 rows ["round"] (0) | tessera: error 42883: function round(double precision, integer) does not exist
round((1.5 ^ CAST(1 AS smallint)), c_smallint)
-- scan row 13 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, 0) (3, 0) | tessera: error 22003: numeric field overflow
(c_real - LEAST(1.5e0, 1.5e0, c_double))
-- constant row 9 | postgres: 1 rows ["sign"] (1) | tessera: error 22000: Internal error: Unexpected scalar type for signum: Decimal128(38, 0).\nThis issue was likely caused by a bug in DataFusion's code... (278 characters)
sign(sign(1.5))
-- constant row 12 | postgres: error 42846: cannot cast type interval to date | tessera: error 22000: Parser error: Invalid input syntax for type interval: "ab"
(CAST(c_char AS interval))::date
-- constant row 8 | postgres: error 22007: invalid input syntax for type interval: "    " | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59+00"
(c_tstz < (DATE '2024-01-15' + CAST(CAST('' AS char(4)) AS interval)))
-- constant row 2 | postgres: (Infini) | tessera: (inf   )
CAST(CAST('Infinity' AS real) AS char(6))
-- constant row 8 | postgres: 1 rows ["trunc"] (1.0) | tessera: error 42804: CASE expression 'then' values had multiple data types: Decimal128(38, 0), Decimal128(38, 1)
trunc(COALESCE(CAST(1 AS numeric), 1.5), CAST(1 AS smallint))
-- scan row 14 | postgres: (5, 0001-12-31 16:07:02-07:52:58 BC) | tessera: (5, 0000-12-31 16:07:02-07:52:58)
(c_ts AT TIME ZONE 'UTC')
-- constant row 13 | postgres: error 22P02: invalid input syntax for type integer: "ab  " | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59.999999"
CASE WHEN starts_with(concat('', c_ts, 586), 'ABC') THEN mod(c_int, 215) ELSE mod(CAST(CAST('ab ' AS char(4)) AS integer), (c_int % 60)) END
-- constant row 9 | postgres: error 22003: smallint out of range | tessera: error 22007: invalid input syntax for type date: ""
((c_smallint + c_smallint) + (CAST('' AS char(4)))::date)
-- constant row 10 | postgres: error 22003: smallint out of range | tessera: 1 rows ["?column?"] (-32768)
(- (- CAST(-32768 AS smallint)))
-- constant row 9 | postgres: error 22003: value out of range: overflow | tessera: 1 rows ["?column?"] (Infinity)
(CAST(3.4e38 AS real) / c_real)
-- constant row 6 | postgres: error 22007: invalid input syntax for type interval: "" | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59.999999"
(c_ts + CAST('' AS interval))
-- constant row 12 | postgres: error 22008: date field value out of range: 1-01--2 | tessera: error 22000: Day value '-2' is out of range
make_date(1, 1, (- 2))
-- constant row 2 | postgres: error 22008: timestamp cannot be NaN | tessera: error 22007: invalid input syntax for type timestamp with time zone: "2024-10-27 02:30:00 Europe/Paris"
(TIMESTAMPTZ '2024-10-27 02:30:00 Europe/Paris' - to_timestamp(CAST('NaN' AS double precision)))
-- constant row 10 | postgres: error 2201F: a negative number raised to a non-integer power yields a complex result | tessera: 1 rows ["?column?"] (NaN)
(c_numeric_10_2 ^ 1.5)
-- constant row 14 | postgres: error 22012: division by zero | tessera: 1 rows ["mod"] (NULL)
mod((CAST(1 AS smallint) % CAST(0 AS smallint)), c_smallint)
-- constant row 10 | postgres: (00) | tessera: (0 )
CAST(INTERVAL '0' AS char(2))
-- constant row 4 | postgres: error 22003: integer out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on -185542587187200
((DATE '0001-01-01' - (- CAST(-2147483648 AS integer))) - c_int)
-- constant row 8 | postgres: (    ) | tessera: ()
COALESCE(c_char, CAST('' AS char(4)))
-- constant row 10 | postgres: error 22003: integer out of range | tessera: error 22007: invalid input syntax for type date: "日本語テキスト"
(CAST(c_varchar AS date) + (- CAST(-2147483648 AS integer)))
-- scan row 3 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 0.0247631) (3, 0.0247631)
(c_real / CAST(60.574 AS real))
-- scan row 3 | postgres: 14 rows ["id", "date_trunc"] (1, NULL) (2, 2024-01-01 00:00:00) (3, 2024-03-01 00:00:00) | tessera: error 22000: Timestamp -62135596800000000 out of range
date_trunc('month', c_ts)
-- constant row 2 | postgres: error 2201F: zero raised to a negative power is undefined | tessera: error 22000: Compute error: zero raised to a negative power is undefined
power(0.0, -540)
-- constant row 3 | postgres: error 22008: date field value out of range: 1-01-2147483647 | tessera: 1 rows ["?column?"] (NULL)
(make_date(1, 1, c_int) - CAST(NULL AS integer))
-- constant row 1 | postgres: error 2201F: cannot take square root of a negative number | tessera: 1 rows ["?column?"] (NULL)
(sqrt(CAST('-Infinity' AS double precision)) + CAST(NULL AS double precision))
-- constant row 7 | postgres: error 22008: date field value out of range: 1-00-01 | tessera: error 22000: Month value '0' is out of range
make_date(1, 0, 1)
-- point row 4 | postgres: 1 rows ["id", "?column?"] (4, NULL) | tessera: error 22003: integer out of range
((CAST(32767 AS smallint) * c_smallint) * CAST(NULL AS smallint))
-- constant row 2 | postgres: (1) | tessera: (1.0)
concat(sign(123456789012345678901234567890.123456789), '')
-- scan row 1 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
(CASE 1.5e0 WHEN 123456789.125e0 THEN c_date END + (c_int + c_smallint))
-- constant row 5 | postgres: error 22012: division by zero | tessera: error 42883: function div(double precision, numeric, 1) does not exist
div(power(1.5, c_bigint), 0.0)
-- constant row 8 | postgres: error 22008: date field value out of range: 1-01--54 | tessera: error 22000: Day value '-54' is out of range
make_date(1, 1, -54)
-- point row 13 | postgres: 1 rows ["id", "?column?"] (13, NULL) | tessera: error 22003: Int16Array overflow on abs(-32768)
(CAST(NULL AS integer) + abs(c_smallint))
-- scan row 9 | postgres: (3, 0001-12-31 BC) | tessera: (3, 0000-12-31)
(c_date - 1)
-- constant row 2 | postgres: 1 rows ["?column?"] (t) | tessera: error 22003: numeric field overflow
(CAST('NaN' AS real) >= 1.5)
-- scan row 7 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, 285 days 13:55:04) (3, 231 days) | tessera: error 22000: Cannot cast Timestamp(µs) value -62135596800000000 to Timestamp(ns): converted ... (241 characters)
(TIMESTAMP '2024-10-27 02:30:00' - c_ts)
-- constant row 5 | postgres: error 42846: cannot cast type timestamp with time zone to real | tessera: error 22007: invalid input syntax for type timestamp with time zone: "2024-10-27 02:30:00 Europe/Pa... (204 characters)
(TIMESTAMPTZ '2024-10-27 02:30:00 Europe/Paris')::real
-- scan row 6 | postgres: (4, a) | tessera: (4, )
right('a', c_int)
-- constant row 13 | postgres: (0.000000000000000) | tessera: (0)
sqrt(0.0)
-- constant row 12 | postgres: 1 rows ["timestamp"] (9999-12-31 00:00:00) | tessera: error 22000: Cannot cast Date32 value 2932896 to Timestamp(ns): converted value exceeds the representable i64 range
CAST(DATE '9999-12-31' AS timestamp)
-- scan row 2 | postgres: 14 rows ["id", "greatest"] (1, NULL) (2, 2024-01-15 12:34:56) (3, 2024-03-10 02:30:00) | tessera: error 22000: Cannot cast Timestamp(µs) value -62135596800000000 to Timestamp(ns... (254 characters)
GREATEST(c_ts, CAST(NULL AS timestamp), CAST(NULL AS timestamp))
-- constant row 6 | postgres: 1 rows ["timestamptz"] (-infinity) | tessera: error 22007: invalid input syntax for type timestamp with time zone: "-infinity"
TIMESTAMPTZ '-infinity'
-- constant row 7 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(2147483647 + DATE '2024-02-29')
-- constant row 14 | postgres: error 22008: cannot subtract infinite dates | tessera: error 22003: smallint out of range
(CASE WHEN false THEN (CAST(9223372036854775807 AS smallint) + c_date) ELSE DATE 'infinity' END - DATE '2024-01-15')
-- constant row 12 | postgres: error 22003: integer out of range | tessera: 1 rows ["?column?"] (NULL)
(CAST(NULL AS integer) & (CAST(-2147483648 AS integer) / c_int))
-- constant row 5 | postgres: error 22012: division by zero | tessera: error 22000: Parser error: Invalid input syntax for type interval: "--1 day"
CASE WHEN (1 IN ((c_smallint / c_smallint), CAST(1 AS smallint), (c_smallint + (CAST(NULL AS smallint) + c_smallint)))) THEN (- INTERVAL '-1 day') ELSE (justify_days(INTERVAL '0') * exp(1.7976931348623157e308)) END
-- point row 5 | postgres: 1 rows ["id", "power"] (5, NULL) | tessera: error 22P02: invalid input syntax for type double precision: "日本"
power(CAST(NULL AS double precision), CAST(c_char AS double precision))
-- constant row 8 | postgres: 1 rows ["case"] (NULL) | tessera: error 22003: smallint out of range
CASE INTERVAL '0' WHEN INTERVAL '1 mon' THEN CAST(9223372036854775807 AS smallint) END
-- constant row 3 | postgres: error 22008: timestamp out of range | tessera: error 22000: Compute error: Timestamp out of range
(c_ts + INTERVAL '178000000 years')
-- constant row 7 | postgres: 1 rows ["date_trunc"] (2000-01-01 00:00:00) | tessera: error 22000: Unsupported date_trunc granularity: 'decade'. Supported values are: microsecond, millisecond, second, min... (242 characters)
date_trunc('decade', c_ts)
-- scan row 13 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 15) (3, 15)
(c_real / CAST(0.1 AS real))
-- constant row 7 | postgres: (0.3628873693012116) | tessera: (0.36288736930121157)
(1.5e0 ^ -2.5e0)
-- constant row 8 | postgres: error 22008: timestamp cannot be NaN | tessera: 1 rows ["to_timestamp"] (1969-12-31 16:00:00-08)
to_timestamp(CAST('NaN' AS double precision))
-- constant row 2 | postgres: error 22008: date field value out of range: 1-01-42 | tessera: error 22P02: invalid input syntax for type integer: ""
(make_date(1, 1, c_int) + (CAST('' AS char(4)))::integer)
-- constant row 3 | postgres: error 22012: division by zero | tessera: 1 rows ["?column?"] (NaN)
(1.5 % power(0.0, CAST(1 AS bigint)))
-- constant row 13 | postgres: error 22008: date field value out of range: 1-2147483647-01 | tessera: error 22000: Month value '2147483647' is out of range
make_date(1, 2147483647, 1)
-- scan row 2 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "c_double"] (1, NULL) (2, 2.25) (3, 2.25)
CAST(c_double AS real)
-- scan row 12 | postgres: (8, 10000-01-01 10:59:59) | tessera: (8, +10000-01-01 10:59:59)
(c_tstz AT TIME ZONE 'Australia/Lord_Howe')
-- constant row 14 | postgres: (ab  ) | tessera: (ab)
GREATEST(c_char, c_char, CAST('' AS char(4)))
-- constant row 5 | postgres: 1 rows ["scale"] (16) | tessera: error 42883: function scale(double precision) does not exist
scale(power(1.5, CAST(1 AS smallint)))
-- constant row 13 | postgres: error 22008: timestamp out of range | tessera: error 22000: Compute error: Timestamp out of range
(TIMESTAMP '2024-01-15 12:00:00' + INTERVAL '2147483647 days')
-- constant row 14 | postgres: 1 rows ["scale"] (0) | tessera: error 42883: function scale(double precision) does not exist
scale(sign(0.0))
-- constant row 8 | postgres: error 22003: value overflows numeric format | tessera: 1 rows ["exp"] (Infinity)
exp(123456789.125e0)
-- constant row 10 | postgres: error 2201F: a negative number raised to a non-integer power yields a complex result | tessera: 1 rows ["power"] (Infinity)
power(CAST('-Infinity' AS real), 1.5e0)
-- constant row 11 | postgres: error 22012: division by zero | tessera: error 42883: function div(Decimal256(39, 9), numeric, 1) does not exist
(div(123456789012345678901234567890.123456789, 1.5) % mod(9223372036854775807, c_bigint))
-- constant row 9 | postgres: error 22003: smallint out of range | tessera: 1 rows ["mod"] (NULL)
mod(CAST(NULL AS smallint), (c_smallint * c_smallint))
-- scan row 5 | postgres: 14 rows ["id", "nullif"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
NULLIF(CAST(NULL AS bigint), (c_smallint + c_smallint))
-- constant row 13 | postgres: 1 rows ["case"] (    ) | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
CASE WHEN false THEN CAST((c_date + 2147483647) AS char(2)) ELSE CAST('' AS char(4)) END
-- scan row 1 | postgres: (8, 10000-01-01 00:59:59) | tessera: (8, +10000-01-01 00:59:59)
(c_tstz AT TIME ZONE 'Europe/Paris')
-- constant row 3 | postgres: error 22003: smallint out of range | tessera: 1 rows ["mod"] (NULL)
mod((CAST(-1 AS smallint) + c_smallint), CAST(NULL AS smallint))
-- constant row 4 | postgres: (1e) | tessera: (10)
CAST(NULLIF(1e15, c_double) AS char(2))
-- constant row 4 | postgres: 1 rows ["greatest"] (NaN) | tessera: error 22003: numeric field overflow
GREATEST(CAST('NaN' AS double precision), c_double, CASE WHEN true THEN 1.5e0 ELSE c_double END)
-- constant row 10 | postgres: (100000000.0000000) | tessera: (100000000)
sqrt(1e16)
-- constant row 8 | postgres: 1 rows ["?column?"] (1 day) | tessera: error 22000: Parser error: Invalid input syntax for type interval: "--1 day"
(- INTERVAL '-1 day')
-- scan row 6 | postgres: 14 rows ["id", "case"] (1, NULL) (2, 2024-01-15 04:34:56-08) (3, 2024-03-10 03:30:00-07) | tessera: error 22000: Cannot cast Timestamp(µs, "+00:00") value 253402300799000000 to ... (266 characters)
CASE WHEN true THEN c_tstz ELSE TIMESTAMPTZ '2024-03-10 02:30:00' END
-- constant row 12 | postgres: error 22003: smallint out of range | tessera: 1 rows ["?column?"] (NULL)
(CAST(NULL AS smallint) / (CAST(-32768 AS smallint) / CAST(-1 AS smallint)))
-- scan row 2 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
((CAST(NULL AS smallint) * c_smallint) / (c_bigint * c_bigint))
-- constant row 12 | postgres: (1.5000000) | tessera: (1.5)
trunc(1.5, c_smallint)
-- scan row 14 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, 292 days 12:55:04) (3, 237 days 23:00:00) | tessera: error 22000: Cannot cast Timestamp(µs) value -62135596800000000 to Timestamp(ns): ... (251 characters)
(TIMESTAMP '2024-11-03 01:30:00' - c_ts)
-- scan row 9 | postgres: 14 rows ["id", "nullif"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22012: division by zero
NULLIF(CAST(NULL AS smallint), (CAST(1 AS smallint) % c_smallint))
-- scan row 8 | postgres: 14 rows ["id", "rpad"] (1, NULL) (2,   ) (3,        ) | tessera: error client: connection closed
rpad('', (c_int % 20))
-- constant row 11 | postgres: 1 rows ["date_part"] (21) | tessera: error 22000: Date part 'century' not supported
date_part('century', c_ts)
-- constant row 6 | postgres: error 22007: invalid input syntax for type interval: "" | tessera: error 22000: Parser error: Invalid input syntax for type interval: "23:59:59.999999"
('' - INTERVAL '23:59:59.999999')
-- point row 7 | postgres: error 22003: smallint out of range | tessera: 1 rows ["id", "coalesce"] (7, 7)
COALESCE(c_smallint, (- CAST(-32768 AS smallint)))
-- constant row 13 | postgres: error 42846: cannot cast type timestamp without time zone to integer | tessera: error 22003: integer out of range
CAST(TIMESTAMP '2024-01-15 12:00:00' AS integer)
-- constant row 11 | postgres: error 22008: date field value out of range: 1-01-100 | tessera: error 22000: Day value '100' is out of range
make_date(1, 1, 100)
-- constant row 12 | postgres: (    ) | tessera: ()
NULLIF(CAST('' AS char(4)), c_char)
-- constant row 5 | postgres: (    ) | tessera: ()
CASE WHEN true THEN CAST('' AS char(4)) ELSE c_char END
-- scan row 7 | postgres: (1, 1.1447142425533317) | tessera: (1, 1.1447142425533319)
cbrt(1.5e0)
-- point row 9 | postgres: error 22012: division by zero | tessera: error client: connection closed
(CAST(1 AS bigint) / octet_length(lpad('', -1, c_text)))
-- constant row 10 | postgres: error 42846: cannot cast type interval to timestamp without time zone | tessera: error 22000: Parser error: Invalid input syntax for type interval: "1 year 2 mons 3 days 04... (211 characters)
(INTERVAL '1 year 2 mons 3 days 04:05:06.789')::timestamp
-- scan row 12 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(make_date(CAST(NULL AS integer), (c_date - c_date), 1) + c_int)
-- constant row 4 | postgres: error 22007: invalid input syntax for type interval: "    " | tessera: error 22000: Parser error: Invalid input syntax for type interval: ""
CAST(CAST('' AS char(4)) AS interval)
-- constant row 12 | postgres: error 22012: division by zero | tessera: 1 rows ["?column?"] (Infinity)
(1 / sqrt(0.0))
-- point row 12 | postgres: (12, 0) | tessera: (12, 0.000000000000000000)
CAST(c_numeric AS text)
-- constant row 3 | postgres: 1 rows ["?column?"] (00:00:00) | tessera: error 42804: Cannot coerce arithmetic expression Duration(ns) * Int64 to valid types
((c_tstz - c_tstz) * 1)
-- scan row 7 | postgres: 14 rows ["id", "coalesce"] (1, 2024-03-10 03:30:00-07) (2, 2024-01-15 04:34:56-08) (3, 2024-03-10 03:30:00-07) | tessera: error 22000: Cannot cast Timestamp(µs, "+00:00") value ... (288 characters)
COALESCE(c_tstz, TIMESTAMPTZ '2024-03-10 02:30:00')
-- constant row 10 | postgres: error 22003: value overflows numeric format | tessera: 1 rows ["?column?"] (Infinity)
(1.5e0 ^ 34865.0749e0)
-- constant row 4 | postgres: error 22008: date field value out of range: 1-2147483647-03 | tessera: error 22000: Month value '2147483647' is out of range
make_date(1, 2147483647, 3)
-- constant row 7 | postgres: error 22007: invalid input syntax for type timestamp: "ab  " | tessera: error 22000: Parser error: Error parsing timestamp from 'ab': timestamp must contain at least 10 char... (206 characters)
CAST(c_char AS timestamp(0))
-- scan row 1 | postgres: 14 rows ["id", "make_date"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
make_date((c_int * c_int), 1, CAST(NULL AS integer))
-- scan row 12 | postgres: error 22012: division by zero | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, Infinity) (3, Infinity)
(c_double / length(''))
-- scan row 6 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22012: division by zero
(mod(c_bigint, c_bigint) / (c_bigint - CAST(NULL AS bigint)))
-- constant row 3 | postgres: error 22008: timestamp out of range: "1e+15" | tessera: error 22000: Decimal value 1000000000000000 with scale 0 overflows timestamp nanoseconds
to_timestamp(1e15)
-- constant row 14 | postgres: error 22008: cannot subtract infinite dates | tessera: error 22007: invalid input syntax for type date: "infinity"
(DATE '2066-04-16' - DATE 'infinity')
-- constant row 11 | postgres: error 22007: invalid input syntax for type interval: "" | tessera: error 22000: Parser error: Invalid input syntax for type interval: ""
CAST('' AS interval)
-- constant row 5 | postgres: (日本  ) | tessera: (日本)
GREATEST(CAST('' AS char(4)), c_char, c_char)
-- constant row 9 | postgres: (    ) | tessera: ()
LEAST(CAST('' AS char(4)), c_char, CAST('' AS char(4)))
-- point row 9 | postgres: (9, -2.5  ) | tessera: (9, -2.500)
CAST(c_numeric AS char(6))
-- scan row 2 | postgres: (5, 0001-12-31 05:30:42-07:52:58 BC) | tessera: (5, 0000-12-31 05:30:42-07:52:58)
(c_ts AT TIME ZONE 'Australia/Lord_Howe')
-- constant row 14 | postgres: 1 rows ["scale"] (16) | tessera: error 42883: function scale(double precision) does not exist
scale((1.5 ^ CAST(1 AS smallint)))
-- constant row 2 | postgres: 1 rows ["date_trunc"] (2024-01-15 12:34:56) | tessera: error 22000: Unsupported date_trunc granularity: 'milliseconds'. Supported values are: microsecond, millisecond, secon... (248 characters)
date_trunc('milliseconds', c_ts)
-- scan row 7 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, f) (3, f) | tessera: error 22000: Cannot cast Date32 value -719162 to Timestamp(ns): converted value exceeds the representable i64 range
(TIMESTAMP '2024-01-15 12:00:00' IN (DATE '1918-01-11', c_date))
-- constant row 10 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(DATE '1916-03-23' + 2147483647)
-- constant row 10 | postgres: error 22008: timestamp out of range | tessera: error 22000: Compute error: Timestamp out of range
(DATE '1901-11-26' + INTERVAL '2147483647 days')
-- constant row 4 | postgres: (-1 days +01:00:00) | tessera: (-1 days -01:00:00)
(- INTERVAL '1 day -1 hour')
-- constant row 3 | postgres: (    ) | tessera: ()
LEAST(c_char, c_char, c_char)
-- point row 7 | postgres: (7, 1.7976931348623157e+308) | tessera: (7, 1.7976931348623157e308)
('' || c_double)
-- scan row 8 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "power"] (1, NULL) (2, 2.4900343193257237) (3, 2.4900343193257237)
power(1.5e0, c_double)
-- constant row 13 | postgres: 1 rows ["date_part"] (NULL) | tessera: error 22000: date_part requires non-empty constant string
date_part('', CAST(NULL AS interval))
-- constant row 2 | postgres: error 42846: cannot cast type interval to timestamp with time zone | tessera: error 22007: invalid input syntax for type timestamp with time zone: ""
LEAST(TIMESTAMPTZ '2024-03-10 02:30:00', '', CAST(INTERVAL '0' AS timestamptz))
-- point row 10 | postgres: 1 rows ["id", "lpad"] (10, ) | tessera: error client: connection closed
lpad('', -1, c_text)
-- scan row 1 | postgres: (1,     ) | tessera: (1, )
GREATEST(c_char, CAST('' AS char(4)), CAST('' AS char(4)))
-- constant row 5 | postgres: error 42846: cannot cast type timestamp without time zone to real | tessera: 1 rows ["float4"] (NULL)
CAST(CAST(NULL AS timestamp) AS real)
-- point row 14 | postgres: error 22008: date field value out of range: 1-2147483647-03 | tessera: 1 rows ["id", "case"] (14, 2024-02-29)
CASE WHEN (c_numeric >= 1e16) THEN make_date(1, 2147483647, 3) ELSE DATE '2024-02-29' END
-- constant row 10 | postgres: 1 rows ["?column?"] (NULL) | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on -185542587187200
(CAST(NULL AS date) - c_int)
-- constant row 10 | postgres: error 22008: date field value out of range: 1--2147483648-01 | tessera: 1 rows ["?column?"] (NULL)
(CAST(NULL AS smallint) + make_date(1, c_int, 1))
-- scan row 10 | postgres: (4, 10000-01-03) | tessera: (4, +10000-01-03)
(c_date + 3)
-- constant row 2 | postgres: error 22003: smallint out of range | tessera: error 22P02: invalid input syntax for type bigint: "hello"
mod((CAST(32767 AS smallint) + c_smallint), CAST(c_text AS bigint))
-- constant row 2 | postgres: (In) | tessera: (in)
CAST(CAST('Infinity' AS real) AS char(2))
-- constant row 2 | postgres: error 22008: date field value out of range: 1-01--618 | tessera: error 42804: Cannot coerce arithmetic expression Date32 - Duration(ns) to valid types
(make_date(1, 1, -618) - (c_ts - c_ts))
-- constant row 8 | postgres: (6) | tessera: (4)
octet_length((true)::char(6))
-- point row 13 | postgres: (13, 1.500000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000... (268 characters)
trunc(1.5, CAST(32767 AS smallint))
-- constant row 1 | postgres: 1 rows ["date_trunc"] (NULL) | tessera: error 22000: Unsupported date_trunc granularity: ''. Supported values are: microsecond, millisecond, second, minute, hour, day, week,... (221 characters)
date_trunc('', c_ts)
-- constant row 3 | postgres: 1 rows ["?column?"] (00:00:00) | tessera: error 42804: Cannot coerce arithmetic expression Duration(ns) / Decimal128(2, 1) to valid types
((c_ts - c_ts) / 1.5e0)
-- constant row 9 | postgres: error 2201E: cannot take logarithm of a negative number | tessera: error 22000: Parser error: Invalid input syntax for type interval: "23:59:59.999999"
(INTERVAL '23:59:59.999999' / ln(c_bigint))
-- constant row 5 | postgres: 1 rows ["?column?"] (NaN) | tessera: error 22003: numeric field overflow
(COALESCE(CAST('NaN' AS double precision), 1e15) * 1)
-- point row 10 | postgres: (10, 0.005) | tessera: (10, 0.005000000000000000)
mod(c_numeric, CAST(1 AS bigint))
-- constant row 3 | postgres: error 22008: timestamp out of range | tessera: 1 rows ["?column?"] (NULL)
((c_date - INTERVAL '2147483647 days') >= CAST(NULL AS timestamp))
-- constant row 11 | postgres: (00:00:20) | tessera: (1 year 8 mons)
CAST(CAST(c_date AS char(2)) AS interval)
-- point row 13 | postgres: error 22008: timestamp out of range | tessera: error 22000: Compute error: Timestamp out of range
(c_ts + INTERVAL '2147483647 days')
-- scan row 3 | postgres: 14 rows ["id", "date_trunc"] (1, NULL) (2, 2024-01-01 00:00:00) (3, 2024-01-01 00:00:00) | tessera: error 22000: Timestamp 253402300799999999 out of range
date_trunc('year', c_ts)
-- scan row 8 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: Int32Array overflow on abs(-2147483648)
(CAST(NULL AS smallint) * abs(c_int))
-- constant row 10 | postgres: error 22008: date field value out of range: 1-01--2147483648 | tessera: error 22003: smallint out of range
CASE c_date WHEN make_date(1, 1, c_int) THEN (CAST(64303.50 AS smallint) + (CAST(32767 AS smallint) % c_smallint)) END
-- constant row 12 | postgres: (1.5   ) | tessera: (1.5)
NULLIF((c_real)::char(6), CAST('' AS char(4)))
-- scan row 5 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 0.6666666666666666) (3, 0.6666666666666666)
(1.5e0 / c_double)
-- constant row 6 | postgres: error 22007: invalid input syntax for type timestamp: "" | tessera: error 22000: Parser error: Error parsing timestamp from '': timestamp must contain at least 10 characters
CAST(NULLIF('', 'a') AS timestamp(0))
-- constant row 9 | postgres: error 22003: bigint out of range | tessera: 1 rows ["?column?"] (-9223372036854775808)
(- (- CAST(-9223372036854775808 AS bigint)))
-- scan row 12 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 4.411765e-39) (3, 4.411765e-39)
(c_real / CAST(3.4e38 AS real))
-- constant row 6 | postgres: 1 rows ["?column?"] (1965-12-20 00:00:00) | tessera: error 42804: Cannot coerce arithmetic expression Date32 + Duration(ns) to valid types
(DATE '1965-12-20' + (c_ts - c_ts))
-- constant row 8 | postgres: error 22003: value out of range: overflow | tessera: 1 rows ["?column?"] (Infinity)
(CAST(1.5 AS real) / c_real)
-- constant row 10 | postgres: error 42846: cannot cast type boolean to bigint | tessera: error 22012: division by zero
mod(CAST(1 AS bigint), CAST(false AS bigint))
-- constant row 9 | postgres: error 2201F: a negative number raised to a non-integer power yields a complex result | tessera: 1 rows ["?column?"] (NaN)
((- c_real) ^ 1.5e0)
-- constant row 4 | postgres: 1 rows ["div"] (0) | tessera: error 42883: function div(double precision, numeric, 0) does not exist
div(CASE WHEN false THEN (1.5 ^ 84726.44) ELSE trunc(c_numeric, c_smallint) END, div(CAST('Infinity' AS numeric), 1.005))
-- constant row 5 | postgres: error 22008: date/time field value out of range: "0     " | tessera: error 22007: invalid input syntax for type date: "0"
CAST(CAST(CAST(0 AS smallint) AS char(6)) AS date)
-- constant row 13 | postgres: error 22008: date field value out of range: 3-00-01 | tessera: error 22000: Month value '0' is out of range
make_date(3, 0, 1)
-- point row 7 | postgres: error 22012: division by zero | tessera: 1 rows ["id", "?column?"] (7, Infinity)
(1.5e0 / CAST((9223372036854775807 - 9223372036854775807) AS double precision))
-- scan row 10 | postgres: error 22012: division by zero | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, Infinity) (3, Infinity)
(CAST(1.5 AS real) / (c_real - CAST(1.5 AS real)))
-- constant row 2 | postgres: (1.5000000000) | tessera: (1.5)
CAST(1.5e0 AS numeric(38,10))
-- constant row 6 | postgres: error 22008: cannot subtract infinite timestamps | tessera: error 22007: invalid input syntax for type timestamp without time zone: "infinity"
(TIMESTAMP 'infinity' - c_ts)
-- point row 7 | postgres: error 22003: value out of range: overflow | tessera: error 22000: Cannot cast Date32 value -719162 to Timestamp(ns): converted value exceeds the representable i64 range
(date_part('epoch', date_trunc('month', DATE '0001-01-01')) ^ c_double)
-- constant row 3 | postgres: error 22008: timestamp out of range | tessera: error 22000: Compute error: Timestamp out of range
(TIMESTAMP '2024-01-15 12:00:00' + INTERVAL '178000000 years')
-- constant row 10 | postgres: 1 rows ["?column?"] (2024-11-06 18:42:17) | tessera: error 22000: Compute error: Timestamp out of range
(TIMESTAMP '2024-10-27 02:30:00' + CAST(CAST(9223372036854775807 AS char(6)) AS interval))
-- constant row 4 | postgres: error 22007: invalid input syntax for type timestamp: "    " | tessera: error 22000: Parser error: Error parsing timestamp from '': timestamp must contain at least 10 charac... (204 characters)
(CAST('' AS char(4)))::timestamp
-- constant row 2 | postgres: (0.000) | tessera: (0)
extract(milliseconds from INTERVAL '0')
-- constant row 4 | postgres: error 22007: invalid input syntax for type timestamp: "    " | tessera: error 22000: Parser error: Error parsing timestamp from '': timestamp must contain at least 10 charac... (204 characters)
CAST(CAST('' AS char(4)) AS timestamp)
-- constant row 4 | postgres: error 42846: cannot cast type boolean to double precision | tessera: 1 rows ["float8"] (1)
CAST(true AS double precision)
-- scan row 6 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 1.125) (3, 1.125)
(c_double / 2)
-- constant row 5 | postgres: error 22003: integer out of range | tessera: 1 rows ["concat_ws"] (NULL)
concat_ws(CAST(NULL AS text), '', (1 - CAST(-2147483648 AS integer)))
-- scan row 10 | postgres: 14 rows ["id", "make_date"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
make_date(1, (c_int + c_smallint), CAST(NULL AS integer))
-- scan row 12 | postgres: (10, 1e+16 ) | tessera: (10, 1e16  )
CAST(c_double AS char(6))
-- constant row 12 | postgres: (ab  ) | tessera: (ab)
GREATEST(CAST('' AS char(4)), c_char, CAST('' AS char(4)))
-- scan row 1 | postgres: 14 rows ["id", "substr"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22011: negative substring length not allowed
substr(substring('' from 1 for c_int), (c_int & NULLIF(c_int, c_int)), length(CASE WHEN false THEN c_char ELSE CAST(NULL AS char(4)) END))
-- constant row 9 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(c_int + DATE '1970-01-01')
-- constant row 10 | postgres: error 22003: numeric field overflow | tessera: error 22000: Invalid argument error: -2147483648 is too small to store in a Decimal128 of precision 3. Min is -999
CAST(c_int AS numeric(3))
-- constant row 13 | postgres: error 22003: integer out of range | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59.999999"
make_date(CAST(date_part('year', c_ts) AS integer), 1, CAST(c_bigint AS integer))
-- scan row 5 | postgres: 14 rows ["id", "case"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22003: integer out of range
CASE (c_double)::integer WHEN CAST(NULL AS integer) THEN 1.5 END
-- constant row 4 | postgres: error 0A000: unit "doy" not supported for type interval | tessera: error 22000: Compute error: DayOfYear does not support: Interval(MonthDayNano)
extract(doy from INTERVAL '0')
-- constant row 14 | postgres: error 22007: invalid input syntax for type timestamp with time zone: "ab  " | tessera: error 22008: timestamp out of range: "0001-01-01 00:00:00+00"
GREATEST(TIMESTAMPTZ '0001-01-01 00:00:00+00', c_tstz, CAST(c_char AS timestamptz))
-- constant row 9 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(c_date + c_int)
-- constant row 9 | postgres: (00) | tessera: (0 )
(INTERVAL '0')::char(2)
-- scan row 13 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22012: division by zero
(CAST(NULL AS smallint) * (c_smallint / c_smallint))
-- constant row 3 | postgres: 1 rows ["timezone"] (2024-01-15 03:00:00) | tessera: error 42883: function timezone(text, date) does not exist
(DATE '2024-01-15' AT TIME ZONE 'UTC+5')
-- point row 2 | postgres: (2, 1.5000000000000000) | tessera: (2, 1.5)
power(1.5, 1)
-- constant row 12 | postgres: (1.0000000000000000) | tessera: (1)
(1.5 ^ 0.0)
-- scan row 1 | postgres: (2, 1.3103706971044484) | tessera: (2, 1.3103706971044482)
cbrt(c_double)
-- constant row 13 | postgres: error 22003: value overflows numeric format | tessera: 1 rows ["?column?"] (Infinity)
(1.5e0 ^ 1e15)
-- point row 3 | postgres: 1 rows ["id", "?column?"] (3, NULL) | tessera: error 22012: division by zero
((c_smallint / (c_smallint % c_smallint)) - CAST(NULL AS integer))
-- constant row 2 | postgres: error 22008: timestamp out of range | tessera: error 22000: Compute error: Timestamp out of range
(DATE '2024-01-15' - INTERVAL '178000000 years')
-- scan row 8 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "power"] (1, NULL) (2, 1e+36) (3, 1e+36)
power(1e16, c_double)
-- point row 8 | postgres: 1 rows ["id", "lpad"] (8, NULL) | tessera: error client: connection closed
lpad('', -1, CAST(NULL AS text))
-- constant row 4 | postgres: (3 ) | tessera: (3.)
(ceil(c_double))::char(2)
-- scan row 14 | postgres: error 22003: value out of range: overflow | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, -3) (3, -3)
((- c_real) - c_real)
-- constant row 13 | postgres: error 22003: value overflows numeric format | tessera: 1 rows ["power"] (Infinity)
power(1.5e0, 123456789.125e0)
-- constant row 11 | postgres: error 22003: value overflows numeric format | tessera: error 22P02: invalid input syntax for type bigint: ""
(power(c_numeric, 612916.0) % CAST(CAST('' AS char(4)) AS bigint))
-- constant row 1 | postgres: (1.5000000000) | tessera: (1.5)
CAST(1.5 AS numeric(38,10))
-- scan row 4 | postgres: 14 rows ["id", "ln"] (1, NULL) (2, 0.8109302162163288) (3, 0.8109302162163288) | tessera: error 2201E: cannot take logarithm of zero
ln(CASE WHEN true THEN c_double ELSE 0.1e0 END)
-- constant row 3 | postgres: 1 rows ["abs"] (NaN) | tessera: error 22003: numeric field overflow
abs(COALESCE(CAST('NaN' AS double precision), 1.5e0))
-- constant row 2 | postgres: error 22012: division by zero | tessera: 1 rows ["?column?"] (NULL)
(CAST(NULL AS real) <> (c_smallint / CAST(0 AS smallint)))
-- scan row 12 | postgres: error 22003: integer out of range | tessera: 14 rows ["id", "?column?"] (1, NULL) (2, 4200) (3, 214748364700)
(COALESCE(100, 1) * c_int)
-- constant row 12 | postgres: (    ) | tessera: ()
LEAST(CAST('' AS char(4)), '', CAST('' AS char(4)))
-- constant row 5 | postgres: error 22023: field position must not be zero | tessera: error 22000: field position must not be zero
split_part('', '', c_int)
-- scan row 1 | postgres: error 2201F: a negative number raised to a non-integer power yields a complex result | tessera: 14 rows ["id", "power"] (1, NaN) (2, NaN) (3, NaN)
power(-2.5e0, 1.5e0)
-- constant row 14 | postgres: 1 rows ["?column?"] (NULL) | tessera: error 42804: Cannot coerce arithmetic expression Date32 - Duration(ns) to valid types
(DATE 'infinity' - (c_ts - TIMESTAMP 'infinity'))
-- point row 12 | postgres: error 22P02: invalid input syntax for type integer: "ab  " | tessera: error 22007: invalid input syntax for type date: "4713-01-01 BC"
LEAST((DATE '2024-03-10' + (c_char)::integer), DATE '2000-02-29', (c_smallint + DATE '4713-01-01 BC'))
-- constant row 10 | postgres: error 22003: value out of range: overflow | tessera: 1 rows ["?column?"] (Infinity)
(1e16 ^ c_double)
-- constant row 13 | postgres: error 22008: interval out of range | tessera: error 22000: Parser error: Invalid input syntax for type interval: "23:59:59.999999"
GREATEST((INTERVAL '178000000 years' * 1.5e0), INTERVAL '0', (INTERVAL '23:59:59.999999' - INTERVAL '178000000 years'))
-- scan row 1 | postgres: 14 rows ["id", "?column?"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22P02: invalid input syntax for type bigint: "abc"
(CAST(c_varchar AS bigint) - CAST(NULL AS smallint))
-- constant row 14 | postgres: 1 rows ["nullif"] (NULL) | tessera: error 22000: Parser error: Error parsing timestamp from '1': timestamp must contain at least 10 characters
NULLIF(c_ts, CAST(CAST(1 AS varchar(10)) AS timestamp(0)))
-- constant row 8 | postgres: error 22003: smallint out of range | tessera: 1 rows ["?column?"] (-32768)
(- (- c_smallint))
-- constant row 7 | postgres: error 22008: timestamp cannot be NaN | tessera: error 22000: Parser error: Invalid input syntax for type interval: "1 year 2 mons 3 days 04:05:06.789"
NULLIF(to_timestamp(CAST('NaN' AS double precision)), (c_tstz - INTERVAL '1 year 2 mons 3 days 04:05:06.789'))
-- constant row 11 | postgres: error 22003: value overflows numeric format | tessera: 1 rows ["power"] (Infinity)
power(1.5e0, 1e16)
-- constant row 3 | postgres: error 22008: date field value out of range: 1-2147483647--749 | tessera: error 22007: invalid input syntax for type date: "infinity"
CASE 1 WHEN (c_date - make_date(1, c_int, -749)) THEN (c_smallint + DATE 'infinity') END
-- constant row 4 | postgres: 1 rows ["?column?"] (NULL) | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on -185542587187200
(c_int + CAST(NULL AS date))
-- scan row 1 | postgres: 14 rows ["id", "case"] (1, NULL) (2, NULL) (3, NULL) | tessera: error 22000: Cannot cast Timestamp(µs) value -62135596800000000 to Timestamp(ns): converted value exceeds the rep... (220 characters)
CASE TIMESTAMP '2024-10-27 02:30:00' WHEN c_ts THEN CAST('' AS char(4)) END
-- constant row 7 | postgres: error 22003: value out of range: underflow | tessera: 1 rows ["?column?"] (0)
(CAST(1e-45 AS real) / c_real)
-- scan row 3 | postgres: error 22003: value out of range: underflow | tessera: 14 rows ["id", "c_double"] (1, NULL) (2, 2.25) (3, 2.25)
(c_double)::real
-- point row 8 | postgres: 1 rows ["id", "div"] (8, 82304526008230452600823045260) | tessera: error 42883: function div(Decimal256(39, 9), numeric, 1) does not exist
div(123456789012345678901234567890.123456789, 1.5)
-- constant row 3 | postgres: error 22003: smallint out of range | tessera: 1 rows ["mod"] (0)
mod((- c_smallint), CAST(1 AS smallint))
-- constant row 2 | postgres: error 22008: date field value out of range: 1-01-42 | tessera: error 22007: invalid input syntax for type date: "4713-01-01 BC"
GREATEST(DATE '4713-01-01 BC', make_date(1, 1, c_int), c_date)
-- constant row 4 | postgres: 1 rows ["timezone"] (2009-10-19 12:45:00) | tessera: error 42883: function timezone(text, date) does not exist
(DATE '2009-10-19' AT TIME ZONE 'Asia/Kathmandu')
-- constant row 3 | postgres: error 22003: smallint out of range | tessera: 1 rows ["mod"] (NULL)
mod((CAST(-103 AS smallint) * CAST(32767 AS smallint)), CAST(NULL AS smallint))
-- constant row 13 | postgres: error 22003: smallint out of range | tessera: error 22000: Parser error: Invalid input syntax for type interval: "23:59:59.999999"
mod((- c_smallint), CASE INTERVAL '23:59:59.999999' WHEN INTERVAL '0' THEN c_smallint END)
-- constant row 3 | postgres: error 22008: date field value out of range: 1-2147483647-01 | tessera: error 22000: Month value '2147483647' is out of range
make_date(1, c_int, 1)
-- constant row 11 | postgres: error 42846: cannot cast type boolean to double precision | tessera: 1 rows ["float8"] (1)
(true)::double precision
-- constant row 9 | postgres: error 42846: cannot cast type timestamp without time zone to real | tessera: 1 rows ["float4"] (1.705322e+18)
CAST(c_ts AS real)
-- constant row 6 | postgres: error 22008: timestamp out of range | tessera: error 22000: Parser error: Invalid input syntax for type interval: "1 year 2 mons 3 days 04:05:06.789"
GREATEST((TIMESTAMPTZ '2024-03-10 02:30:00' - INTERVAL '2147483647 days'), CAST(NULL AS timestamptz), ((DATE '0001-01-01' - INTERVAL '1 year 2 mons 3 days 04:05:06.789') AT TIME ZONE 'America/New_York'))
-- constant row 4 | postgres: 1 rows ["sign"] (1) | tessera: error 42804: CASE expression 'then' values had multiple data types: Decimal128(38, 10), Decimal128(38, 1)
sign(COALESCE(1.5, CAST(NULL AS numeric)))
-- constant row 13 | postgres: error 22008: date field value out of range: 1--32768-01 | tessera: error 22000: Month value '-32768' is out of range
make_date(1, c_smallint, 1)
-- constant row 1 | postgres: 1 rows ["timezone"] (NULL) | tessera: error 42883: function timezone(text, date) does not exist
(c_date AT TIME ZONE '')
-- constant row 12 | postgres: (-178000000 years +1 day) | tessera: (-178000000 years 1 day)
(INTERVAL '1 day' - INTERVAL '178000000 years')
-- constant row 5 | postgres: error 22003: value overflows numeric format | tessera: error 22000: date_part requires non-empty constant string
GREATEST(exp(123456789.125e0), 1.5e0, date_part('', INTERVAL '0'))
-- point row 10 | postgres: 1 rows ["id", "lpad"] (10, ) | tessera: error client: connection closed
lpad('', (-1 % 20), c_text)
-- point row 8 | postgres: 1 rows ["id", "lpad"] (8, NULL) | tessera: error client: connection closed
lpad('', (-1 % 20), CAST(NULL AS text))
-- scan row 4 | postgres: 14 rows ["id", "ln"] (1, -2.3025850929940455) (2, 0.8109302162163288) (3, -2.3025850929940455) | tessera: error 2201E: cannot take logarithm of zero
ln(CASE WHEN c_bool THEN c_double ELSE 0.1e0 END)
-- point row 13 | postgres: 1 rows ["id", "lpad"] (13, ) | tessera: error client: connection closed
lpad('', (-1 % 20), c_varchar)
-- constant row 6 | postgres: error 2201F: cannot take square root of a negative number | tessera: error 42883: function scale(double precision) does not exist
scale(sqrt(CAST((-9223372036854775807) AS numeric)))
-- constant row 9 | postgres: error 2201E: cannot take logarithm of zero | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
((c_int + CAST(NULL AS date)) - CAST(log(0.0) AS integer))
-- constant row 12 | postgres: error 22003: value out of range: underflow | tessera: 1 rows ["?column?"] (0)
(CAST(2 AS double precision) ^ -702863.2050e0)
-- constant row 5 | postgres: (    ) | tessera: ()
LEAST(CAST('' AS char(4)), c_char, c_char)
-- constant row 6 | postgres: 1 rows ["case"] (NULL) | tessera: error 22P02: invalid input syntax for type double precision: ""
CASE WHEN false THEN CAST(CAST('' AS char(4)) AS double precision) ELSE CAST(NULL AS double precision) END
-- constant row 3 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(DATE '2037-09-15' + c_int)
-- scan row 10 | postgres: (2, 1.500000000000000000000000000000000000000000) | tessera: (2, 1.5)
round(1.5, c_int)
-- constant row 6 | postgres: error 22008: date out of range | tessera: error 22000: Compute error: Cannot cast to Interval(MonthDayNano). Overflowing on 185542587100800
(2147483647 + c_date)
-- constant row 14 | postgres: error 22008: date field value out of range: 1-01-377 | tessera: error 22000: Day value '377' is out of range
make_date(1, 1, 377)
-- scan row 12 | postgres: 14 rows ["id", "coalesce"] (1, NULL) (2, hello) (3, ) | tessera: error 22011: negative substring length not allowed
COALESCE(c_text, substring('' from c_int for -606))
-- constant row 2 | postgres: 1 rows ["coalesce"] (2024-01-15 04:34:56-08) | tessera: error 22008: timestamp out of range: "9999-12-31 23:59:59+00"
COALESCE(c_tstz, (c_tstz - (TIMESTAMPTZ '9999-12-31 23:59:59+00' - c_tstz)))
-- constant row 7 | postgres: error 22008: timestamp out of range | tessera: error 22000: Parser error: Invalid input syntax for type interval: "--1 day"
((c_tstz - INTERVAL '178000000 years') - (- INTERVAL '-1 day'))
-- constant row 14 | postgres: error 22008: date field value out of range: 1--153-01 | tessera: 1 rows ["?column?"] (NULL)
(CASE c_date WHEN make_date(1, -153, 1) THEN strpos('abc', 'a%b_c') END >= c_bigint)
-- point row 11 | postgres: 1 rows ["id", "?column?"] (11, NULL) | tessera: error 22012: division by zero
(CAST(NULL AS numeric) ^ (2147483648 / mod(9223372036854775807, c_bigint)))
