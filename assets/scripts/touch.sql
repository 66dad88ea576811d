-- The write of the read-mostly mix (lookup.sql@9 --script touch.sql@1).
\set k random(1, :keys)
UPDATE items SET score = score + 1 WHERE id = :k;
