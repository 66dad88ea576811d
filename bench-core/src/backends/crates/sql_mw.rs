//! sql-middleware: its SQLite pool (bb8 over a worker thread per connection) and its query
//! builder with the statement cache on, as shipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::backends::raw;
use crate::dataset::BenchRow;
use crate::error::BenchError;
use crate::measure::drive::LookupPath;
use crate::measure::trace::PhaseTotals;
use crate::settings::SqliteSettings;

/// sql-middleware's SQLite pool as shipped (bb8, at most 10 connections, checked on checkout,
/// statement cache on), every connection given the run's pragmas once.
pub struct SqlMiddleware {
    cap: sql_middleware::ConfigAndPool,
}

/// bb8's default pool size, which sql-middleware 0.9 does not let one change.
pub const SQL_MIDDLEWARE_POOL: usize = 10;

impl SqlMiddleware {
    pub async fn open(path: &Path, s: &SqliteSettings) -> Result<Self, BenchError> {
        let cap = sql_middleware::ConfigAndPool::sqlite_path_builder(PathBuf::from(path))
            .build()
            .await
            .map_err(BenchError::driver)?;
        // Every connection the pool will hold, checked out at once, each given the settings
        // (the crate opens them itself, with rusqlite's default flags).
        let mut held = Vec::new();
        for _ in 0..SQL_MIDDLEWARE_POOL {
            let mut c = cap.get_connection().await.map_err(BenchError::driver)?;
            let s = s.clone();
            c.with_blocking_sqlite(move |raw| {
                raw::apply(raw, &s).map_err(sql_middleware::SqlMiddlewareDbError::SqliteError)
            })
            .await
            .map_err(BenchError::driver)?;
            held.push(c);
        }
        drop(held);
        Ok(SqlMiddleware { cap })
    }

    pub async fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        let mut c = self
            .cap
            .get_connection()
            .await
            .map_err(BenchError::driver)?;
        c.with_blocking_sqlite(|raw| Ok(raw::read_back(raw)))
            .await
            .map_err(BenchError::driver)
    }

    pub async fn checkout_and_return(&self) -> Result<(), BenchError> {
        drop(
            self.cap
                .get_connection()
                .await
                .map_err(BenchError::driver)?,
        );
        Ok(())
    }
}

impl SqlMiddleware {
    /// One round trip to a connection's worker thread with an empty closure.
    pub async fn dispatch(
        conn: &mut sql_middleware::MiddlewarePoolConnection,
    ) -> Result<u64, BenchError> {
        conn.with_blocking_sqlite(|raw| Ok(raw.is_autocommit() as u64))
            .await
            .map_err(BenchError::driver)
    }

    /// The result set of one lookup, as the query builder returns it.
    pub async fn result_set(&self, id: i64) -> Result<sql_middleware::ResultSet, BenchError> {
        let mut conn = self.checkout().await?;
        crate::on_sql_middleware::select_by_id(&mut conn, id).await
    }
}

impl SqlMiddleware {
    /// One pass of lookups the way sql-middleware's own lookup bench makes them: per checkout
    /// (every `per_checkout` ids), the statement prepared once with `prepare_sqlite_statement`,
    /// then per id its `select().params(..).all()` with one `RowValues` buffer reused, each row
    /// decoded. The ids [`timed_ops`](crate::measure::drive::timed_ops) picks for `seed` are
    /// also timed on their own (a checkout and prepare counted with the first lookup after it).
    pub async fn prepared_pass(
        &self,
        ids: &[i64],
        per_checkout: usize,
        seed: u64,
    ) -> Result<crate::measure::drive::LookupPass, BenchError> {
        use crate::measure::trace::ns_between;
        use std::time::Instant;
        let timed = crate::measure::drive::timed_ops(ids.len(), seed);
        let mut latencies = Vec::with_capacity(ids.len() / 4 + 16);
        let mut params = [sql_middleware::RowValues::Int(0)];
        let (mut work, mut k) = (0u64, 0usize);
        let start = Instant::now();
        for chunk in ids.chunks(per_checkout.max(1)) {
            let t0 = timed[k].then(Instant::now);
            let mut conn = self.checkout().await?;
            let mut prepared = conn
                .prepare_sqlite_statement(crate::dataset::SELECT_BY_ID)
                .await
                .map_err(BenchError::driver)?;
            for (i, &id) in chunk.iter().enumerate() {
                let from = if i == 0 {
                    t0
                } else {
                    timed[k].then(Instant::now)
                };
                params[0] = sql_middleware::RowValues::Int(id);
                let rs = prepared
                    .select()
                    .params(&params)
                    .all()
                    .await
                    .map_err(BenchError::driver)?;
                let row = crate::on_sql_middleware::lookup_row(&rs)?;
                work = work.wrapping_add(std::hint::black_box(row).checksum());
                if let Some(from) = from {
                    latencies.push(ns_between(from, Instant::now()));
                }
                k += 1;
            }
        }
        Ok(crate::measure::drive::LookupPass {
            elapsed_ns: ns_between(start, Instant::now()),
            latencies,
            phases: Default::default(),
            work,
        })
    }

    /// `prepare_sqlite_statement` on a held connection, the statement dropped: the crate's
    /// prepare step as its own bench measures it (the statement cache on, as shipped).
    pub async fn prepare_once(
        conn: &mut sql_middleware::MiddlewarePoolConnection,
    ) -> Result<u64, BenchError> {
        let prepared = conn
            .prepare_sqlite_statement(crate::dataset::SELECT_BY_ID)
            .await
            .map_err(BenchError::driver)?;
        drop(std::hint::black_box(prepared));
        Ok(1)
    }
}

/// The lookup's parameters as sql-middleware converts them for SQLite, made before a pass so
/// that [`marshal`] times the result set alone.
pub fn marshal_params(ids: &[i64]) -> Result<Vec<sql_middleware::sqlite::Params>, BenchError> {
    ids.iter()
        .map(|&id| {
            sql_middleware::convert_sql_params::<sql_middleware::sqlite::Params>(
                &[sql_middleware::RowValues::Int(id)],
                sql_middleware::ConversionMode::Query,
            )
            .map_err(BenchError::driver)
        })
        .collect()
}

/// sql-middleware's `build_result_set` on a prepared rusqlite statement: the statement run
/// and its rows materialised as the crate's `ResultSet` (what its marshalling bench times);
/// returns the rows built plus the first row's id.
pub fn marshal(
    stmt: &mut rusqlite::Statement<'_>,
    params: &sql_middleware::sqlite::Params,
) -> Result<u64, BenchError> {
    let rs = sql_middleware::sqlite::build_result_set(stmt, params.as_values())
        .map_err(BenchError::driver)?;
    let rs = std::hint::black_box(rs);
    let id = match rs.results.first().and_then(|r| r.get_by_index(0)) {
        Some(sql_middleware::RowValues::Int(i)) => *i as u64,
        _ => 0,
    };
    Ok(rs.results.len() as u64 + id)
}

/// The caller's id as sql-middleware's SQLite parameters (`convert_sql_params`), read back.
pub fn middleware_param(id: i64) -> Result<u64, BenchError> {
    use sql_middleware::sqlite::Params;
    let values = [sql_middleware::RowValues::Int(id)];
    let p: Params = sql_middleware::convert_sql_params::<Params>(
        &values,
        sql_middleware::ConversionMode::Query,
    )
    .map_err(BenchError::driver)?;
    Ok(match std::hint::black_box(&p).as_values().first() {
        Some(rusqlite::types::Value::Integer(i)) => *i as u64,
        _ => 0,
    })
}

impl LookupPath for SqlMiddleware {
    type Conn = sql_middleware::MiddlewarePoolConnection;
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        self.cap.get_connection().await.map_err(BenchError::driver)
    }
    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        crate::on_sql_middleware::lookup(conn, id).await
    }
}

impl SqlMiddleware {
    /// A connection of the pool with `fresh` run on it first (the bulk table made anew).
    async fn fresh(
        &self,
        fresh: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<()> + Send + 'static,
    ) -> Result<sql_middleware::MiddlewarePoolConnection, BenchError> {
        let mut c = self.checkout().await?;
        c.with_blocking_sqlite(move |raw| {
            fresh(raw).map_err(sql_middleware::SqlMiddlewareDbError::SqliteError)
        })
        .await
        .map_err(BenchError::driver)?;
        Ok(c)
    }

    /// The rows inserted in one transaction of sql-middleware's (`begin_transaction`, one
    /// prepared insert executed per row with its `RowValues`, commit), as its README writes one.
    /// `fresh` runs first on the same connection, untimed (the pool holds 10: another would
    /// find its schema stale); returns the rows changed and the ns from the transaction's
    /// start to its commit.
    pub async fn insert_all(
        &self,
        sql: &str,
        rows: &[crate::workloads::bulk_insert::rows::BulkRow],
        fresh: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<()> + Send + 'static,
    ) -> Result<(u64, u64), BenchError> {
        let mut c = self.fresh(fresh).await?;
        let start = std::time::Instant::now();
        let mut tx = sql_middleware::sqlite::begin_transaction(&mut c)
            .await
            .map_err(BenchError::driver)?;
        let stmt = tx.prepare(sql).map_err(BenchError::driver)?;
        let mut changed = 0u64;
        for r in rows {
            let p = crate::on_sql_middleware::bulk_values(r, true);
            changed += tx
                .execute(&stmt)
                .params(&p)
                .run()
                .await
                .map_err(BenchError::driver)? as u64;
        }
        tx.commit().await.map_err(BenchError::driver)?;
        let elapsed = crate::measure::trace::ns_between(start, std::time::Instant::now());
        Ok((changed, elapsed))
    }
}

impl SqlMiddleware {
    /// bulk_insert `method=batch_text` as the crate's own insert bench runs it: on a connection
    /// of its pool, `with_blocking_sqlite` runs a rusqlite transaction of `execute_batch` on the
    /// rows' INSERT text. `fresh` runs first on the same connection, untimed; returns the rows
    /// changed and the ns from the hop's start to its return.
    pub async fn batch_all(
        &self,
        text: std::sync::Arc<String>,
        fresh: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<()> + Send + 'static,
    ) -> Result<(u64, u64), BenchError> {
        let mut c = self.fresh(fresh).await?;
        let start = std::time::Instant::now();
        let changed = c
            .with_blocking_sqlite(move |raw| {
                crate::on_rusqlite::bulk_batch_all(raw, &text)
                    .map_err(sql_middleware::SqlMiddlewareDbError::SqliteError)
            })
            .await
            .map_err(BenchError::driver)?;
        let elapsed = crate::measure::trace::ns_between(start, std::time::Instant::now());
        Ok((changed, elapsed))
    }
}

/// One connection of sql-middleware's SQLite pool, held for a bench (crud_overhead's,
/// key_value's): its query builder with `RowValues` (statement cache on), SQL text run on its
/// worker.
pub type SqlMiddlewareHeld = crate::on_sql_middleware::Held;

/// SQL text run as is on the connection's worker (`with_blocking_sqlite`): the crate's own
/// `execute_batch` wraps what it runs in a transaction of its own, which BEGIN cannot be in.
async fn run_text(held: &mut SqlMiddlewareHeld, sql: &str) -> Result<(), BenchError> {
    let sql = sql.to_string();
    held.conn
        .with_blocking_sqlite(move |raw| {
            raw.execute_batch(&sql)
                .map_err(sql_middleware::SqlMiddlewareDbError::SqliteError)
        })
        .await
        .map_err(BenchError::driver)
}

impl crate::on_sql_middleware::MiddlewareConn for SqlMiddlewareHeld {
    const BOOL_AS_INT: bool = true;

    async fn batch(&mut self, sql: &str) -> Result<(), BenchError> {
        run_text(self, sql).await
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        run_text(self, "BEGIN").await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        run_text(self, "COMMIT").await
    }
    async fn dml(&mut self, sql: &str, p: &[sql_middleware::RowValues]) -> Result<u64, BenchError> {
        SqlMiddlewareHeld::dml(self, sql, p).await
    }
    async fn rows(
        &mut self,
        sql: &str,
        p: &[sql_middleware::RowValues],
    ) -> Result<sql_middleware::ResultSet, BenchError> {
        SqlMiddlewareHeld::rows(self, sql, p).await
    }
    async fn rows_uncached(&mut self, sql: &str) -> Result<sql_middleware::ResultSet, BenchError> {
        SqlMiddlewareHeld::rows_uncached(self, sql).await
    }
}
