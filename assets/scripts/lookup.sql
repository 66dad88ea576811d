-- Read-mostly key lookup: nine reads of a skewed key for every write of a uniform one is the
-- mix of lookup.sql@9 and touch.sql@1; alone, this script only reads.
-- Build the database with lookup-init.sql; -D keys=100000 says how many keys it holds.
\set k random_zipfian(1, :keys, 1.1)
SELECT id, name, score FROM items WHERE id = :k;
