//! What benchscope does through sql-middleware's query builder, whichever database it runs on:
//! a lookup's row decoded, crud_overhead's statements and key_value's store over a held
//! connection. Compiled into bench-core (sql-middleware's sqlite and postgres features) and,
//! by `#[path]`, into the harness of its turso feature, against that build's sql-middleware:
//! nothing is written twice.

use bench_core::BenchError;
use bench_core::dataset::{BenchRow, SELECT_BY_ID};
use bench_core::workloads::crud_overhead::plan::{Answer, Crud, Row, Sql};
use bench_core::workloads::key_value::plan::{self as kv, Kv, NAMESPACE, NOW, TENANT};
use sql_middleware::RowValues as V;

/// A connection of sql-middleware held for a bench: what crud_overhead and key_value run
/// through its query builder, on SQLite, turso or PostgreSQL.
#[allow(async_fn_in_trait)]
pub trait MiddlewareConn {
    /// Whether a bool is bound as an integer (SQLite, turso) or as a boolean (PostgreSQL).
    const BOOL_AS_INT: bool;
    /// SQL text, no parameters and no rows.
    async fn batch(&mut self, sql: &str) -> Result<(), BenchError>;
    async fn begin(&mut self) -> Result<(), BenchError>;
    async fn commit(&mut self) -> Result<(), BenchError>;
    /// Rows changed.
    async fn dml(&mut self, sql: &str, p: &[V]) -> Result<u64, BenchError>;
    async fn rows(&mut self, sql: &str, p: &[V]) -> Result<sql_middleware::ResultSet, BenchError>;
    /// Rows of `sql` (no parameters) with the statement cache left out (SQLite and turso:
    /// the query builder's `StatementCacheMode::Uncached`).
    async fn rows_uncached(&mut self, sql: &str) -> Result<sql_middleware::ResultSet, BenchError>;
}

/// A connection of a pool held for a bench, each statement through the query builder
/// (`query(..).params(..).dml()` / `.select()`, with the statement cache the pool was built
/// with). How SQL text runs differs per database: each build implements [`MiddlewareConn`]
/// for it.
pub struct Held {
    pub conn: sql_middleware::MiddlewarePoolConnection,
}

impl Held {
    pub async fn dml(&mut self, sql: &str, p: &[V]) -> Result<u64, BenchError> {
        Ok(self
            .conn
            .query(sql)
            .params(p)
            .dml()
            .await
            .map_err(BenchError::driver)? as u64)
    }

    pub async fn rows(
        &mut self,
        sql: &str,
        p: &[V],
    ) -> Result<sql_middleware::ResultSet, BenchError> {
        self.conn
            .query(sql)
            .params(p)
            .select()
            .await
            .map_err(BenchError::driver)
    }

    /// Rows of `sql` through the query builder with the statement cache off for it.
    pub async fn rows_uncached(
        &mut self,
        sql: &str,
    ) -> Result<sql_middleware::ResultSet, BenchError> {
        self.conn
            .query(sql)
            .statement_cache(sql_middleware::StatementCacheMode::Uncached)
            .select()
            .await
            .map_err(BenchError::driver)
    }
}

/// The result set of one lookup by id, as the query builder returns it (with the statement
/// cache the pool was built with).
pub async fn select_by_id(
    conn: &mut sql_middleware::MiddlewarePoolConnection,
    id: i64,
) -> Result<sql_middleware::ResultSet, BenchError> {
    conn.query(SELECT_BY_ID)
        .params(&[V::Int(id)])
        .select()
        .await
        .map_err(BenchError::driver)
}

/// One lookup by id, its row decoded.
pub async fn lookup(
    conn: &mut sql_middleware::MiddlewarePoolConnection,
    id: i64,
) -> Result<BenchRow, BenchError> {
    lookup_row(&select_by_id(conn, id).await?)
}

/// The one row of a lookup's result set decoded into the bench's struct.
pub fn lookup_row(rs: &sql_middleware::ResultSet) -> Result<BenchRow, BenchError> {
    let row = rs
        .results
        .first()
        .ok_or_else(|| BenchError::Other("sql-middleware returned no row".into()))?;
    let bad = |what: &str| BenchError::Other(format!("sql-middleware: unexpected {what}"));
    Ok(BenchRow {
        id: match row.get_by_index(0) {
            Some(V::Int(v)) => *v,
            _ => return Err(bad("id")),
        },
        name: match row.get_by_index(1) {
            Some(V::Text(t)) => t.clone(),
            _ => return Err(bad("name")),
        },
        score: match row.get_by_index(2) {
            Some(V::Float(v)) => *v,
            _ => return Err(bad("score")),
        },
        active: match row.get_by_index(3) {
            Some(V::Int(v)) => *v != 0,
            Some(V::Bool(b)) => *b,
            _ => return Err(bad("active")),
        },
    })
}

/// A bulk_insert row as sql-middleware's values for its 16-column insert, the bool as an
/// integer (SQLite, turso) or a boolean (PostgreSQL).
pub fn bulk_values(
    r: &bench_core::workloads::bulk_insert::rows::BulkRow,
    bool_as_int: bool,
) -> Vec<V> {
    let mut p = vec![
        V::Int(r.id),
        V::Text(r.title.clone()),
        V::Text(r.created_at.clone()),
        V::Float(r.amount),
        if bool_as_int {
            V::Int(r.flag as i64)
        } else {
            V::Bool(r.flag)
        },
        V::Blob(r.payload.clone()),
        V::Text(r.meta.clone()),
    ];
    p.extend(r.texts.iter().map(|t| V::Text(t.clone())));
    p
}

/// A crud row as sql-middleware's values, the bool bound as `M` binds one.
fn crud_values<M: MiddlewareConn>(r: &Row) -> [V; 5] {
    [
        V::Int(r.id),
        V::Text(r.text.clone()),
        V::Int(r.int),
        V::Float(r.real),
        if M::BOOL_AS_INT {
            V::Int(r.flag as i64)
        } else {
            V::Bool(r.flag)
        },
    ]
}

/// sql-middleware's rows decoded by position into crud rows.
fn crud_rows(rs: &sql_middleware::ResultSet) -> Result<Vec<Row>, BenchError> {
    let bad = |what: &str| BenchError::Other(format!("sql-middleware: unexpected {what}"));
    rs.results
        .iter()
        .map(|r| {
            let int = |i: usize, what: &str| match r.get_by_index(i) {
                Some(V::Int(n)) => Ok(*n),
                _ => Err(bad(what)),
            };
            Ok(Row {
                id: int(0, "id")?,
                text: match r.get_by_index(1) {
                    Some(V::Text(t)) => t.clone(),
                    _ => return Err(bad("text_col")),
                },
                int: int(2, "int_col")?,
                real: match r.get_by_index(3) {
                    Some(V::Float(f)) => *f,
                    Some(V::Int(n)) => *n as f64,
                    _ => return Err(bad("real_col")),
                },
                flag: match r.get_by_index(4) {
                    Some(V::Bool(b)) => *b,
                    _ => int(4, "bool_col")? != 0,
                },
            })
        })
        .collect()
}

/// crud_overhead through sql-middleware's query builder with `RowValues`.
pub struct MiddlewareCrud<M>(pub M);

impl<M: MiddlewareConn> Crud for MiddlewareCrud<M> {
    async fn drop_table(&mut self, sql: &Sql) -> Result<(), BenchError> {
        self.0.batch(&sql.drop).await
    }
    async fn create_table(&mut self, sql: &Sql) -> Result<(), BenchError> {
        self.0.batch(&sql.create).await
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.0.begin().await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.0.commit().await
    }
    async fn insert(&mut self, sql: &Sql, r: &Row) -> Result<u64, BenchError> {
        self.0.dml(&sql.insert, &crud_values::<M>(r)).await
    }
    async fn update(&mut self, sql: &Sql, id: i64, text: &str) -> Result<u64, BenchError> {
        self.0
            .dml(&sql.update, &[V::Text(text.to_string()), V::Int(id)])
            .await
    }
    async fn delete(&mut self, sql: &Sql, id: i64) -> Result<u64, BenchError> {
        self.0.dml(&sql.delete, &[V::Int(id)]).await
    }
    async fn select(&mut self, sql: &Sql, above: i64) -> Result<Vec<Row>, BenchError> {
        let rs = self.0.rows(&sql.select, &[V::Int(above)]).await?;
        crud_rows(&rs)
    }
    async fn cached(&mut self, sql: &Sql, q: usize, fresh: bool) -> Result<Answer, BenchError> {
        let (text, count) = &sql.cached[q];
        let rs = if fresh {
            self.0.rows_uncached(text).await?
        } else {
            self.0.rows(text, &[]).await?
        };
        Ok(if *count {
            // The count is the row's last column (after an AVG, say).
            match rs.results.first().and_then(|r| r.rows.last()) {
                Some(V::Int(n)) => Answer::Count(*n),
                other => {
                    return Err(BenchError::Other(format!(
                        "a count query returned {other:?}"
                    )));
                }
            }
        } else {
            Answer::Rows(crud_rows(&rs)?)
        })
    }
    async fn insert_values(&mut self, sql: &Sql, rows: &[Row]) -> Result<u64, BenchError> {
        let p: Vec<V> = rows.iter().flat_map(crud_values::<M>).collect();
        self.0.dml(sql.batch(rows.len()), &p).await
    }
}

/// A live key's parameters: tenant, namespace, key, the logical clock.
fn live_key(key: &str) -> [V; 4] {
    [
        V::Text(TENANT.into()),
        V::Text(NAMESPACE.into()),
        V::Text(key.into()),
        V::Int(NOW),
    ]
}

fn blob(v: Option<&V>) -> Result<Vec<u8>, BenchError> {
    match v {
        Some(V::Blob(b)) => Ok(b.clone()),
        other => Err(BenchError::Other(format!("value column holds {other:?}"))),
    }
}

/// key_value's store through sql-middleware's query builder with `RowValues` for every
/// statement.
pub struct MiddlewareKv<M>(pub M);

impl<M: MiddlewareConn> Kv for MiddlewareKv<M> {
    async fn reset(&mut self) -> Result<(), BenchError> {
        self.0.batch(&kv::CREATE.join(";")).await
    }
    async fn clear(&mut self) -> Result<(), BenchError> {
        self.0.dml(kv::CLEAR, &[]).await.map(|_| ())
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.0.begin().await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.0.commit().await
    }
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        let p = [
            V::Text(TENANT.into()),
            V::Text(NAMESPACE.into()),
            V::Text(key.into()),
            V::Blob(value.to_vec()),
            expires_at.map_or(V::Null, V::Int),
            V::Int(NOW),
            V::Int(NOW),
        ];
        self.0.dml(kv::PUT, &p).await
    }
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        let rs = self.0.rows(kv::GET, &live_key(key)).await?;
        rs.results
            .first()
            .map(|r| blob(r.get_by_index(0)))
            .transpose()
    }
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError> {
        let rs = self.0.rows(kv::EXISTS, &live_key(key)).await?;
        Ok(!rs.results.is_empty())
    }
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError> {
        let p = [
            V::Text(TENANT.into()),
            V::Text(NAMESPACE.into()),
            V::Text(key.into()),
        ];
        self.0.dml(kv::DELETE, &p).await
    }
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        let p = [
            V::Text(TENANT.into()),
            V::Text(NAMESPACE.into()),
            V::Text(from.into()),
            V::Text(to.into()),
            V::Int(NOW),
        ];
        let rs = self.0.rows(kv::SCAN, &p).await?;
        rs.results
            .iter()
            .map(|r| match r.get_by_index(0) {
                Some(V::Text(k)) => Ok((k.clone(), blob(r.get_by_index(1))?)),
                other => Err(BenchError::Other(format!("key column holds {other:?}"))),
            })
            .collect()
    }
}

/// A script's statement through the query builder, as shipped: `select()` for what returns
/// rows, `dml()` for the rest (statement cache on), every row's values hashed as the SQLite
/// backends hash theirs; the driver's error is the caller's to tell busy from the rest.
pub async fn script_statement(
    conn: &mut sql_middleware::MiddlewarePoolConnection,
    sql: &str,
    kind: bench_core::script::Kind,
    params: &[bench_core::script::Value],
) -> Result<bench_core::script::replay::StmtOut, sql_middleware::SqlMiddlewareDbError> {
    use bench_core::script::digest::{Cell, Digest};
    use bench_core::script::{Kind, Value};
    let p: Vec<V> = params
        .iter()
        .map(|v| match v {
            Value::Int(n) => V::Int(*n),
            Value::Double(x) => V::Float(*x),
        })
        .collect();
    let mut d = Digest::default();
    let changed = if kind != Kind::Write || bench_core::script::returns_rows(sql) {
        let rs = conn.query(sql).params(&p).select().await?;
        for row in &rs.results {
            for v in &row.rows {
                let text;
                d.cell(match v {
                    V::Null => Cell::Null,
                    V::Int(n) => Cell::Int(*n),
                    V::Bool(b) => Cell::Int(i64::from(*b)),
                    V::Float(x) => Cell::Real(*x),
                    V::Text(t) => Cell::Text(t),
                    V::Blob(b) => Cell::Blob(b),
                    V::Timestamp(t) => {
                        text = t.to_string();
                        Cell::Text(&text)
                    }
                    V::JSON(j) => {
                        text = j.to_string();
                        Cell::Text(&text)
                    }
                });
            }
            d.row();
        }
        if kind == Kind::Write { d.rows() } else { 0 }
    } else {
        conn.query(sql).params(&p).dml().await? as u64
    };
    d.statement(changed);
    Ok(bench_core::script::replay::StmtOut {
        hash: d.finish(),
        rows: d.rows(),
        changed,
    })
}
