-- pgbench's tables at scale 1, on SQLite: 1 branch, 10 tellers, 100,000 accounts.
CREATE TABLE pgbench_branches (bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL, filler TEXT);
CREATE TABLE pgbench_tellers (tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, tbalance INTEGER NOT NULL, filler TEXT);
CREATE TABLE pgbench_accounts (aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, abalance INTEGER NOT NULL, filler TEXT);
CREATE TABLE pgbench_history (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TEXT, filler TEXT);
INSERT INTO pgbench_branches VALUES (1, 0, NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
INSERT INTO pgbench_tellers SELECT i, 1, 0, NULL FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO pgbench_accounts SELECT i, 1, 0, printf('%84s', '') FROM n;
