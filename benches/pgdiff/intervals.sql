-- Interval input as PostgreSQL's interval_in reads it, interval comparisons by span, and text rows cast to interval.
SELECT interval '1:20:05', interval '1 day 02:03:04.5', interval '-1 +02:03', interval '1.5 weeks';
SELECT interval '1-2', interval '+1 -1:00:00', interval '-1 days +1 hours', interval '@ 1 minute ago';
SELECT interval 'P1Y2M3DT4H5M6.5S', interval 'PT1.5H', interval 'P1W', interval 'P0001-02-03T04:05:06';
SELECT interval '4 millenniums 5 centuries 4 decades 1 year 4 months 4 days 17 minutes 31 seconds';
SELECT interval '10 milliseconds 20 microseconds', interval '1.5 months', interval '0.1 years', interval '10mon';
SELECT interval '-10 mons -3 days +03:55:06.70', interval '-1 year 2 months 1 day 23 hours 45 min 12.34 sec';
SELECT interval '1 day 1 day';
SELECT interval '1:20:05 5 microseconds';
SELECT interval '';
SELECT interval '2147483648 days';
SELECT interval '-2147483649 months';
SELECT interval '1' day, interval '2' hour, interval '1:30' minute to second, interval '1 2:03:04' day to second;
SELECT interval '123 11' day;
SELECT interval '30 days' = interval '1 month', interval '1 day' = interval '24 hours', interval '1 day' < interval '23 hours';
SELECT interval '25 hours' BETWEEN interval '1 day' AND interval '2 days', interval '1 mon' <> interval '30 days';
SELECT x::interval FROM (VALUES ('1 day 02:00'), ('P1Y'), ('-1:30'), (NULL)) v(x);
SELECT x::interval FROM (VALUES ('1 fortnight')) v(x);
SELECT x, x::interval > interval '1 day' FROM (VALUES ('25 hours'), ('1 mon'), ('23:59:59')) v(x);
