//! Backends driven the middleware's way: the caller's generic values in, a generic result set
//! out. The pooled middleware (per strategy) and turso both are, so a workload writes its
//! operations once over [`Statements`] and runs them on either.

use std::sync::Arc;

use super::middleware::value::{self, ResultSet, Value};
use super::middleware::{Conn, Middleware};
use crate::error::BenchError;

/// One statement at a time with generic values, and transactions.
#[allow(async_fn_in_trait)]
pub trait Statements {
    async fn begin(&mut self) -> Result<(), BenchError>;
    async fn commit(&mut self) -> Result<(), BenchError>;
    /// Runs a schema statement as it is, outside the statement cache (as rusqlite's
    /// `execute_batch` does).
    async fn ddl<S: AsRef<str> + Send + 'static>(&mut self, sql: S) -> Result<(), BenchError>;
    /// Runs `sql` with `values`; the rows it changed.
    async fn changed<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
        values: Vec<Value>,
    ) -> Result<u64, BenchError>;
    /// Runs `sql` with `values`; every row it returns.
    async fn rows<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
        values: Vec<Value>,
    ) -> Result<ResultSet, BenchError>;
    /// Runs `sql` (no parameters) prepared anew, the statement cache left out; every row.
    async fn rows_fresh<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
    ) -> Result<ResultSet, BenchError>;
}

/// The middleware: a connection checked out per transaction (per statement outside one),
/// each statement dispatched by the strategy, prepared from the connection's cache, its rows
/// materialised on the connection's side.
pub struct Pooled {
    mw: Arc<Middleware>,
    held: Option<Conn>,
}

impl Pooled {
    pub fn new(mw: Arc<Middleware>) -> Pooled {
        Pooled { mw, held: None }
    }

    /// Runs `sql` with `values` on the held connection (or one checked out for it), its
    /// statement from the cache or (`fresh`) prepared anew; its rows, or the rows it changed.
    async fn run<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
        values: Vec<Value>,
        rows: bool,
        fresh: bool,
    ) -> Result<Result<ResultSet, u64>, BenchError> {
        let job = move |c: &mut rusqlite::Connection| -> rusqlite::Result<Result<ResultSet, u64>> {
            let go =
                |stmt: &mut rusqlite::Statement<'_>| -> rusqlite::Result<Result<ResultSet, u64>> {
                    value::bind(stmt, &value::to_params(&values))?;
                    if rows {
                        value::marshal(stmt).map(Ok)
                    } else {
                        stmt.raw_execute().map(|n| Err(n as u64))
                    }
                };
            if fresh {
                go(&mut c.prepare(sql.as_ref())?)
            } else {
                go(&mut *c.prepare_cached(sql.as_ref())?)
            }
        };
        let out = match self.held.as_mut() {
            Some(conn) => self.mw.run_own(conn, job).await?,
            None => {
                let mut conn = self.mw.checkout().await?;
                self.mw.run_own(&mut conn, job).await?
            }
        };
        Ok(out?)
    }
}

impl Statements for Pooled {
    async fn ddl<S: AsRef<str> + Send + 'static>(&mut self, sql: S) -> Result<(), BenchError> {
        let job = move |c: &mut rusqlite::Connection| c.execute_batch(sql.as_ref());
        match self.held.as_mut() {
            Some(conn) => self.mw.run_own(conn, job).await??,
            None => {
                let mut conn = self.mw.checkout().await?;
                self.mw.run_own(&mut conn, job).await??
            }
        }
        Ok(())
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.held = Some(self.mw.checkout().await?);
        self.changed("BEGIN", vec![]).await.map(|_| ())
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.changed("COMMIT", vec![]).await?;
        self.held = None;
        Ok(())
    }
    async fn changed<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
        values: Vec<Value>,
    ) -> Result<u64, BenchError> {
        match self.run(sql, values, false, false).await? {
            Err(n) => Ok(n),
            Ok(_) => Err(BenchError::Other("asked for rows changed, got rows".into())),
        }
    }
    async fn rows<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
        values: Vec<Value>,
    ) -> Result<ResultSet, BenchError> {
        rows_only(self.run(sql, values, true, false).await?)
    }
    async fn rows_fresh<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
    ) -> Result<ResultSet, BenchError> {
        rows_only(self.run(sql, vec![], true, true).await?)
    }
}

/// The rows a statement asked for rows returned.
fn rows_only(out: Result<ResultSet, u64>) -> Result<ResultSet, BenchError> {
    out.map_err(|_| BenchError::Other("asked for rows, got a count".into()))
}

/// turso on one connection, statements from its cache, values converted to turso's.
#[cfg(feature = "turso")]
pub struct Turso {
    /// Kept open as long as the connection.
    pub db: turso::Database,
    pub conn: turso::Connection,
}

#[cfg(feature = "turso")]
impl Statements for Turso {
    async fn ddl<S: AsRef<str> + Send + 'static>(&mut self, sql: S) -> Result<(), BenchError> {
        self.conn
            .execute(sql.as_ref(), ())
            .await
            .map(|_| ())
            .map_err(BenchError::driver)
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.changed("BEGIN", vec![]).await.map(|_| ())
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.changed("COMMIT", vec![]).await.map(|_| ())
    }
    async fn changed<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
        values: Vec<Value>,
    ) -> Result<u64, BenchError> {
        let mut stmt = self
            .conn
            .prepare_cached(sql.as_ref())
            .await
            .map_err(BenchError::driver)?;
        stmt.execute(super::turso::to_params(&values))
            .await
            .map_err(BenchError::driver)
    }
    async fn rows<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
        values: Vec<Value>,
    ) -> Result<ResultSet, BenchError> {
        let mut stmt = self
            .conn
            .prepare_cached(sql.as_ref())
            .await
            .map_err(BenchError::driver)?;
        let rows = stmt
            .query(super::turso::to_params(&values))
            .await
            .map_err(BenchError::driver)?;
        super::turso::marshal(rows).await
    }
    async fn rows_fresh<S: AsRef<str> + Send + 'static>(
        &mut self,
        sql: S,
    ) -> Result<ResultSet, BenchError> {
        let mut stmt = self
            .conn
            .prepare(sql.as_ref())
            .await
            .map_err(BenchError::driver)?;
        let rows = stmt.query(()).await.map_err(BenchError::driver)?;
        super::turso::marshal(rows).await
    }
}
