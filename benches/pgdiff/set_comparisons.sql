-- ANY / ALL / NOT IN with subqueries: the same table outside and inside
-- (DataFusion compared the inner column with itself), correlated NOT IN
-- over NULLs (DataFusion ignored them), ALL's three-valued answers.
SELECT count(*) FROM acct WHERE balance > ANY (SELECT balance FROM acct WHERE id < 5);
SELECT count(*) FROM acct WHERE balance <= ANY (SELECT balance FROM acct WHERE id < 5);
SELECT count(*) FROM acct WHERE balance = ANY (SELECT balance FROM acct WHERE id < 5);
SELECT count(*) FROM acct WHERE NOT (balance > ANY (SELECT balance FROM acct WHERE id < 5));
SELECT count(*) FROM acct WHERE balance > ANY (SELECT score FROM acct WHERE id < 5);
SELECT count(*) FROM acct a WHERE 3 NOT IN (SELECT o.amount FROM orders o WHERE o.acct_id = a.id);
SELECT count(*) FROM acct a WHERE 3 NOT IN (SELECT o.qty FROM orders o WHERE o.acct_id = a.id);
SELECT count(*) FROM acct a WHERE a.balance > ANY (SELECT o.amount*5 FROM orders o WHERE o.acct_id = a.id);
SELECT count(*) FROM acct WHERE balance > ANY (SELECT balance FROM acct b WHERE b.id < acct.id AND b.id > acct.id - 3);
SELECT count(*) FROM acct WHERE id NOT IN (SELECT acct_id FROM orders);
SELECT count(*) FROM acct WHERE id NOT IN (SELECT acct_id FROM orders WHERE amount IS NULL);
SELECT count(*) FROM acct WHERE balance IN (SELECT balance FROM acct WHERE id < 5);
SELECT count(*) FROM acct a WHERE a.id NOT IN (SELECT o.acct_id FROM orders o WHERE o.qty > a.id);
SELECT count(*) FROM acct a WHERE a.balance NOT IN (SELECT o.amount * 4 FROM orders o WHERE o.acct_id = a.id);
SELECT count(*) FROM acct a WHERE a.balance > ANY (SELECT balance FROM acct WHERE acct.id < a.id AND acct.id > a.id - 3);
SELECT count(*) FROM acct WHERE balance > ANY (SELECT o.amount FROM orders o JOIN acct ON acct.id = o.acct_id WHERE o.id < 100);
SELECT id FROM acct WHERE balance > ALL (SELECT balance FROM acct WHERE id < 5);
SELECT count(*) FROM acct WHERE balance > ALL (SELECT balance FROM acct WHERE id < 20);
SELECT count(*) FROM acct WHERE balance > ALL (SELECT balance FROM acct WHERE id > 1000);
SELECT count(*) FROM acct WHERE NOT (balance > ALL (SELECT balance FROM acct WHERE id < 20));
SELECT count(*) FROM acct WHERE NOT (balance > ALL (SELECT balance FROM acct WHERE id < 5));
SELECT count(*) FROM acct WHERE id > ALL (SELECT acct_id FROM orders);
SELECT count(*) FROM acct WHERE id <> ALL (SELECT acct_id FROM orders);
SELECT count(*) FROM acct WHERE id = ALL (SELECT 7);
SELECT count(*) FROM acct WHERE balance <= ALL (SELECT amount FROM orders WHERE id < 50);
SELECT count(*) FROM acct WHERE balance <= ALL (SELECT amount * 10 FROM orders WHERE id < 50);
SELECT count(*) FROM acct WHERE score >= ALL (SELECT score FROM acct);
SELECT count(*) FROM acct WHERE score >= ALL (SELECT score FROM acct WHERE score IS NOT NULL);
SELECT count(*) FROM acct a WHERE a.balance > ALL (SELECT o.amount*5 FROM orders o WHERE o.acct_id = a.id);
SELECT count(*) FROM acct a WHERE NOT (a.balance > ALL (SELECT o.amount*5 FROM orders o WHERE o.acct_id = a.id));
SELECT count(*) FROM acct a WHERE a.balance < ALL (SELECT o.amount FROM orders o WHERE o.acct_id = a.id);
SELECT count(*) FROM acct WHERE NULL::int > ALL (SELECT acct_id FROM orders WHERE id > 100000);
SELECT count(*) FROM acct WHERE id > ALL (SELECT NULL::int);
SELECT count(*) FROM acct WHERE NOT (id > ALL (SELECT NULL::int));
SELECT id FROM acct WHERE id > ALL (SELECT acct_id FROM orders);
SELECT id FROM acct WHERE id > ALL (SELECT id FROM acct WHERE id < 118);
