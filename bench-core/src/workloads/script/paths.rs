//! How each backend of the script target runs a statement: rusqlite's (on a connection of
//! its own, through the middleware path, tokio-rusqlite or r2d2), sql-middleware's query
//! builder, turso's and PostgreSQL's (tokio-postgres), each an [`AsyncPath`] the replay
//! drives (see [`crate::script::replay`]), every row read and hashed the same way.

use std::sync::Arc;

use crate::backends::middleware::Middleware;
use crate::error::BenchError;
use crate::on_rusqlite::script::{classify, exec_statement, rollback};
use crate::script::replay::{AsyncPath, Outcome, StmtError, StmtOut};
use crate::script::{Kind, Value};

/// The middleware path: a checkout per transaction, a dispatch per statement.
pub(super) struct OnMiddleware(pub(super) Middleware);

impl AsyncPath for OnMiddleware {
    type Conn = crate::backends::middleware::Conn;
    async fn checkout(&self, _client: usize) -> Result<Self::Conn, BenchError> {
        Ok(self.0.checkout().await?)
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        Ok(self
            .0
            .call(conn, move |c| {
                exec_statement(c, &sql, kind, &params).map_err(classify)
            })
            .await?)
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        Ok(self.0.call(conn, |c| rollback(c)).await?)
    }
}

/// tokio-rusqlite as it ships: each client its own `Connection` (a thread of its own), one
/// `call` per statement.
#[cfg(feature = "crates")]
pub(super) struct OnTokioRusqlite(pub(super) crate::backends::crates::TokioRusqlite);

#[cfg(feature = "crates")]
impl AsyncPath for OnTokioRusqlite {
    type Conn = tokio_rusqlite::Connection;
    /// Client `i`'s own connection (not the crate path's round robin: a transaction must
    /// stay on one connection).
    async fn checkout(&self, client: usize) -> Result<Self::Conn, BenchError> {
        Ok(self.0.connections()[client].clone())
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        conn.call(move |c| {
            Ok::<_, rusqlite::Error>(exec_statement(c, &sql, kind, &params).map_err(classify))
        })
        .await
        .map_err(BenchError::driver)
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        conn.call(|c| {
            rollback(c);
            Ok::<_, rusqlite::Error>(())
        })
        .await
        .map_err(BenchError::driver)
    }
}

/// r2d2 + r2d2_sqlite: a pool of `clients` connections, a checkout per transaction and every
/// statement on the held connection, each reached with the crate path's hop.
#[cfg(feature = "crates")]
pub(super) struct OnR2d2(pub(super) crate::backends::crates::R2d2);

#[cfg(feature = "crates")]
impl AsyncPath for OnR2d2 {
    type Conn = crate::backends::crates::R2d2Held;
    async fn checkout(&self, _client: usize) -> Result<Self::Conn, BenchError> {
        self.0.checkout().await
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        use crate::on_rusqlite::OnConn;
        conn.on(move |c| Ok(exec_statement(c, &sql, kind, &params).map_err(classify)))
            .await
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        use crate::on_rusqlite::OnConn;
        conn.on(|c| {
            rollback(c);
            Ok(())
        })
        .await
    }
}

/// sql-middleware as shipped: its SQLite pool (10 connections), a checkout per transaction,
/// every statement through its query builder (`select()` for what returns rows, `dml()` for
/// the rest); BEGIN, COMMIT and ROLLBACK as text on the connection's worker (its own batch
/// wraps what it runs in a transaction, which BEGIN cannot be in).
#[cfg(feature = "crates")]
pub(super) struct OnSqlMiddleware(pub(super) crate::backends::crates::SqlMiddleware);

#[cfg(feature = "crates")]
impl AsyncPath for OnSqlMiddleware {
    type Conn = sql_middleware::MiddlewarePoolConnection;
    async fn checkout(&self, _client: usize) -> Result<Self::Conn, BenchError> {
        crate::measure::drive::LookupPath::checkout(&self.0).await
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        sql_middleware_statement(conn, sql, kind, &params).await
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        conn.with_blocking_sqlite(|c| {
            rollback(c);
            Ok(())
        })
        .await
        .map_err(BenchError::driver)
    }
}

/// A statement through sql-middleware's query builder (see
/// [`crate::on_sql_middleware::script_statement`]); BEGIN, COMMIT and ROLLBACK as text on the
/// connection's worker.
#[cfg(feature = "crates")]
async fn sql_middleware_statement(
    conn: &mut sql_middleware::MiddlewarePoolConnection,
    sql: Arc<str>,
    kind: Kind,
    params: &[Value],
) -> Outcome {
    use sql_middleware::SqlMiddlewareDbError as E;
    if matches!(kind, Kind::Begin | Kind::Commit | Kind::Rollback) {
        let r = conn
            .with_blocking_sqlite(move |c| Ok(c.execute_batch(&sql)))
            .await
            .map_err(BenchError::driver)?;
        return Ok(r.map(|()| StmtOut::control()).map_err(classify));
    }
    Ok(
        crate::on_sql_middleware::script_statement(conn, &sql, kind, params)
            .await
            .map_err(|e| match e {
                E::SqliteError(e) => classify(e),
                other => StmtError::Other(other.to_string()),
            }),
    )
}

/// turso: each client its own connection on one `Database`, statements prepared once
/// (turso's statement cache) and run on the calling task.
#[cfg(feature = "turso")]
pub(super) struct OnTurso {
    pub(super) conns: Vec<turso::Connection>,
    /// Kept for as long as its connections run.
    pub(super) _db: turso::Database,
}

#[cfg(feature = "turso")]
impl AsyncPath for OnTurso {
    type Conn = usize;
    async fn checkout(&self, client: usize) -> Result<Self::Conn, BenchError> {
        Ok(client)
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        Ok(turso_statement(&self.conns[*conn], &sql, kind, &params)
            .await
            .map_err(|e| match e {
                turso::Error::Busy(_) | turso::Error::BusySnapshot(_) => StmtError::Busy,
                other => StmtError::Other(other.to_string()),
            }))
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        let c = &self.conns[*conn];
        if !c.is_autocommit().map_err(BenchError::driver)? {
            let _ = c.execute("ROLLBACK", ()).await;
        }
        Ok(())
    }
}

/// PostgreSQL through tokio-postgres: each client its own connection on the bench's copy of
/// the database, every statement prepared once per connection (see [`super::pg`]).
#[cfg(feature = "crates")]
pub(super) struct OnPostgres(pub(super) super::pg::Prepared);

#[cfg(feature = "crates")]
impl AsyncPath for OnPostgres {
    type Conn = usize;
    async fn checkout(&self, client: usize) -> Result<Self::Conn, BenchError> {
        Ok(client)
    }
    fn runs(&self, index: usize) -> bool {
        !self.0.skipped.iter().any(|(i, _)| *i == index)
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        index: usize,
        _sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        use super::pg::{self, PgVal};
        let c = &self.0.clients[*conn];
        let fail = |e: tokio_postgres::Error| {
            if pg::is_busy(&e) {
                StmtError::Busy
            } else {
                StmtError::Other(pg::message(&e))
            }
        };
        let text = match kind {
            Kind::Begin => Some("BEGIN"),
            Kind::Commit => Some("COMMIT"),
            Kind::Rollback => Some("ROLLBACK"),
            _ => None,
        };
        if let Some(text) = text {
            if let Err(e) = c.batch_execute(text).await {
                return Ok(Err(fail(e)));
            }
            return Ok(Ok(StmtOut::control()));
        }
        let stmt = self.0.stmts[*conn][index]
            .as_ref()
            .expect("a statement that runs was prepared");
        let values: Vec<PgVal> = params
            .iter()
            .map(|v| match v {
                Value::Int(n) => PgVal::Int(*n),
                Value::Double(x) => PgVal::Real(*x),
            })
            .collect();
        Ok(match pg::statement(c, stmt, kind, &values).await {
            Ok(Ok((hash, rows, changed))) => Ok(StmtOut {
                hash,
                rows,
                changed,
            }),
            Ok(Err(m)) => Err(StmtError::Other(m)),
            Err(e) => Err(fail(e)),
        })
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        let _ = self.0.clients[*conn].batch_execute("ROLLBACK").await;
        Ok(())
    }
}

/// A statement on a turso connection: its values bound, every row read and hashed as
/// [`exec_statement`] does; rows changed from `execute` (or, with RETURNING, the rows).
#[cfg(feature = "turso")]
async fn turso_statement(
    c: &turso::Connection,
    sql: &str,
    kind: Kind,
    params: &[Value],
) -> Result<StmtOut, turso::Error> {
    use crate::script::digest::{Cell, Digest};
    use crate::script::returns_rows;
    let mut stmt = c.prepare_cached(sql).await?;
    let values: Vec<turso::Value> = params
        .iter()
        .map(|v| match v {
            Value::Int(n) => turso::Value::Integer(*n),
            Value::Double(d) => turso::Value::Real(*d),
        })
        .collect();
    let mut d = Digest::default();
    let returns = kind != Kind::Write || returns_rows(sql);
    let changed = if returns {
        let mut rows = stmt.query(values).await?;
        while let Some(row) = rows.next().await? {
            for i in 0..row.column_count() {
                d.cell(match &row.get_value(i)? {
                    turso::Value::Null => Cell::Null,
                    turso::Value::Integer(n) => Cell::Int(*n),
                    turso::Value::Real(r) => Cell::Real(*r),
                    turso::Value::Text(t) => Cell::Text(t),
                    turso::Value::Blob(b) => Cell::Blob(b),
                });
            }
            d.row();
        }
        if kind == Kind::Write { d.rows() } else { 0 }
    } else {
        stmt.execute(values).await?
    };
    d.statement(changed);
    Ok(StmtOut {
        hash: d.finish(),
        rows: d.rows(),
        changed,
    })
}
