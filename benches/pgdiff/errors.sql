-- Errors and their SQLSTATEs.
SELECT * FROM no_such_table;
SELECT no_such_column FROM acct;
SELECT 1 / 0;
SELECT 'abc'::int;
SELECT '2024-13-01'::date;
SELECT (SELECT id FROM acct);
SELECT id FROM acct WHERE owner = 1;
SELECT sum(owner) FROM acct;
SELECT acct.id, orders.id FROM acct, orders WHERE id = 1;
SELEC 1;
SELECT no_such_function(1);
