-- A full-text search with FTS5: the ten best matches for a word, ranked by bm25. Build with
-- fts-init.sql (-D words=500: the vocabulary the documents are written in).
\set w random_zipfian(1, :words, 1.05)
SELECT rowid, snippet(docs, 0, '[', ']', '...', 6) FROM docs
  WHERE docs MATCH 'w' || :w ORDER BY rank LIMIT 10;
