-- A query over JSON documents with SQLite's JSON functions: one customer's orders above an
-- amount, each order's first item extracted. Build with json-init.sql (-D customers=2000).
\set c random(1, :customers)
\set min random(0, 500)
SELECT id, json_extract(doc, '$.items[0].sku') AS first_sku, json_extract(doc, '$.total') AS total
  FROM orders
  WHERE customer = :c AND json_extract(doc, '$.total') > :min
  ORDER BY id;
