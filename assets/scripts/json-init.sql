-- 20,000 orders of 2,000 customers, each a JSON document (-D customers=2000).
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER NOT NULL, doc TEXT NOT NULL);
CREATE INDEX orders_customer ON orders (customer);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO orders
  SELECT i, 1 + (i * 7) % 2000,
         json_object('total', (i * 37) % 1000,
                     'items', json_array(json_object('sku', printf('SKU-%05d', (i * 13) % 5000), 'qty', 1 + i % 4),
                                         json_object('sku', printf('SKU-%05d', (i * 17) % 5000), 'qty', 1)))
  FROM n;
