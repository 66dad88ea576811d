-- 100,000 items keyed by id, for lookup.sql and touch.sql (-D keys=100000).
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO items SELECT i, printf('item %06d', i), (i * 7919) % 1000 FROM n;
