-- 20,000 short documents over a vocabulary of 500 words (w1 ... w500), in an FTS5 table.
CREATE VIRTUAL TABLE docs USING fts5(body);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO docs (rowid, body)
  SELECT i, printf('w%d w%d w%d w%d w%d w%d w%d w%d',
                   1 + (i * 7) % 500, 1 + (i * 11) % 500, 1 + (i * 13) % 97, 1 + (i * 17) % 500,
                   1 + (i * 19) % 31, 1 + (i * 23) % 500, 1 + (i * 29) % 11, 1 + (i * 31) % 500)
  FROM n;
