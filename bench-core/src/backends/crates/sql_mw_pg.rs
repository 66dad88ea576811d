//! sql-middleware's postgres feature, for bulk_insert and crud_overhead on PostgreSQL.

use crate::error::BenchError;

/// sql-middleware's PostgreSQL pool (its postgres feature: bb8 over tokio-postgres) on the
/// server `url` names; errors carry the URL with its password redacted.
pub struct SqlMiddlewarePg {
    cap: sql_middleware::ConfigAndPool,
    url: PgUrl,
}

use crate::secret::PgUrl;
use crate::secret::pg_error as pg_err;
use crate::secret::pg_error_chain;

/// How long sql-middleware's PostgreSQL pool may take to make its first connection.
const PG_CONNECT_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

impl SqlMiddlewarePg {
    pub async fn open(url: &PgUrl) -> Result<Self, BenchError> {
        // sql-middleware takes the parts, not a connection string: a URL's, its query
        // parameters (`?user=..&password=..`) included.
        let u = url::Url::parse(url.expose())
            .ok()
            .filter(|u| matches!(u.scheme(), "postgres" | "postgresql"))
            .ok_or_else(|| {
                pg_err(
                    url,
                    "sql-middleware/postgres needs a postgres:// URL (keyword=value strings are read by sqlx alone)",
                )
            })?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let mut cfg = sql_middleware::PgConfig::new();
        cfg.host = u.host_str().map(str::to_string);
        cfg.port = u.port();
        cfg.user = Some(decode(u.username())).filter(|s| !s.is_empty());
        cfg.password = u.password().map(decode);
        cfg.dbname = Some(decode(u.path().trim_start_matches('/'))).filter(|s| !s.is_empty());
        for (k, v) in u.query_pairs() {
            let v = Some(v.into_owned());
            match k.as_ref() {
                "user" => cfg.user = v,
                "password" => cfg.password = v,
                "dbname" => cfg.dbname = v,
                "host" => cfg.host = v,
                "port" => cfg.port = v.and_then(|p| p.parse().ok()),
                _ => {}
            }
        }
        if cfg.port.is_none() {
            cfg.port = Some(5432);
        }
        let cap = sql_middleware::ConfigAndPool::postgres_builder(cfg)
            .build()
            .await
            .map_err(|e| pg_error_chain(url, &e))?;
        let p = SqlMiddlewarePg {
            cap,
            url: url.clone(),
        };
        // The first connection now, so that a server that cannot be had fails the bench
        // before its first sample.
        drop(p.connection().await?);
        Ok(p)
    }

    /// A connection of the pool. Its bb8 pool retries a refused connection or a failed login
    /// for 30 s before it says "Timed out": give up sooner, and say what that means.
    async fn connection(&self) -> Result<sql_middleware::MiddlewarePoolConnection, BenchError> {
        tokio::time::timeout(PG_CONNECT_WITHIN, self.cap.get_connection())
            .await
            .map_err(|_| {
                pg_err(
                    &self.url,
                    format!(
                        "sql-middleware's pool made no connection within {} s (it retries a refused connection or a failed login until then; sqlx's postgres bench shows the server's own error)",
                        PG_CONNECT_WITHIN.as_secs()
                    ),
                )
            })?
            .map_err(|e| pg_error_chain(&self.url, &e))
    }

    /// The bench's table made afresh (untimed), then the rows inserted in one transaction of
    /// sql-middleware's (`begin_transaction`, one prepared insert executed per row with its
    /// `RowValues`, commit); the rows changed and the ns from the transaction's start to its
    /// commit. The statement casts the timestamp and JSON from text, as sqlx's binds them.
    pub async fn insert_all(
        &self,
        fresh: &str,
        insert: &str,
        rows: &[crate::workloads::bulk_insert::rows::BulkRow],
    ) -> Result<(u64, u64), BenchError> {
        let e = |e: sql_middleware::SqlMiddlewareDbError| pg_error_chain(&self.url, &e);
        let mut conn = self.fresh(fresh).await?;
        let client = client_of(&mut conn)?;
        let start = std::time::Instant::now();
        let tx = sql_middleware::postgres::begin_transaction(client)
            .await
            .map_err(e)?;
        let stmt = tx.prepare(insert).await.map_err(e)?;
        let mut changed = 0u64;
        for r in rows {
            let p = crate::on_sql_middleware::bulk_values(r, false);
            changed += tx.execute(&stmt).params(&p).run().await.map_err(e)? as u64;
        }
        tx.commit().await.map_err(e)?;
        let elapsed = crate::measure::trace::ns_between(start, std::time::Instant::now());
        Ok((changed, elapsed))
    }

    /// bulk_insert `method=batch_text`: the bench's table made afresh (untimed), then the rows'
    /// INSERT text run by the transaction's `execute_batch` (tokio-postgres's simple query
    /// protocol: the text goes to the server as it is) between `begin_transaction` and commit;
    /// the rows the table holds, counted after the clock stops (the batch call reports none),
    /// and the ns from the transaction's start to its commit.
    pub async fn batch_all(&self, fresh: &str, text: &str) -> Result<(u64, u64), BenchError> {
        let e = |e: sql_middleware::SqlMiddlewareDbError| pg_error_chain(&self.url, &e);
        let mut conn = self.fresh(fresh).await?;
        let client = client_of(&mut conn)?;
        let start = std::time::Instant::now();
        let tx = sql_middleware::postgres::begin_transaction(client)
            .await
            .map_err(e)?;
        tx.execute_batch(std::hint::black_box(text))
            .await
            .map_err(e)?;
        tx.commit().await.map_err(e)?;
        let elapsed = crate::measure::trace::ns_between(start, std::time::Instant::now());
        // Counted through the driver beneath (an unnamed statement): the crate's query builder
        // would run its statement cached from an earlier sample, on a table since dropped.
        let rows: i64 = client
            .query_one(crate::workloads::bulk_insert::rows::COUNT, &[])
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|x| pg_error_chain(&self.url, &x))?;
        Ok((rows as u64, elapsed))
    }

    /// A connection of the pool, `fresh` (the bench's table made afresh) run on it first.
    async fn fresh(
        &self,
        fresh: &str,
    ) -> Result<sql_middleware::MiddlewarePoolConnection, BenchError> {
        let mut conn = self.connection().await?;
        conn.execute_batch(fresh)
            .await
            .map_err(|e| pg_error_chain(&self.url, &e))?;
        Ok(conn)
    }

    /// Drops the bench's table (at the bench's end: no other table is touched).
    pub async fn drop_table(&self, drop: &str) -> Result<(), BenchError> {
        let mut conn = self.connection().await?;
        conn.execute_batch(drop)
            .await
            .map_err(|e| pg_error_chain(&self.url, &e))
    }
}

/// The PostgreSQL client beneath a connection of sql-middleware's pool.
fn client_of(
    conn: &mut sql_middleware::MiddlewarePoolConnection,
) -> Result<&mut bb8::PooledConnection<'static, sql_middleware::postgres::PgManager>, BenchError> {
    match conn {
        sql_middleware::MiddlewarePoolConnection::Postgres { client, .. } => Ok(client),
        _ => Err(BenchError::Other(
            "sql-middleware gave a connection that is not PostgreSQL's".into(),
        )),
    }
}

/// What one statement sent to a held PostgreSQL connection is.
enum PgJob {
    /// SQL text, no parameters, no rows (a schema made or dropped).
    Batch(String),
    Begin,
    Commit,
    Dml(String, Vec<sql_middleware::RowValues>),
    Rows(String, Vec<sql_middleware::RowValues>),
}

/// What a held connection answers.
enum PgAnswer {
    Done,
    Changed(u64),
    Rows(sql_middleware::ResultSet),
}

type PgReply = tokio::sync::oneshot::Sender<Result<PgAnswer, BenchError>>;

/// One connection of sql-middleware's PostgreSQL pool held for a bench (crud_overhead's), in
/// a task of its own on the bench's runtime: sql-middleware's transaction (`Tx`) borrows the
/// connection, so the task holds both while a BEGIN ... COMMIT lasts. Outside a transaction a
/// statement goes through its query builder (`query(..).params(..).dml()` / `.select()`, which
/// run it in a transaction of their own, as shipped); inside one through the `Tx`
/// (`prepare`, then `execute(..).params(..).run()` / `select(..).params(..).all()`), each
/// statement prepared once per transaction. A statement costs one hand-over between two tasks
/// of one runtime on top of the crate's own work (a few µs against a round trip to the server).
pub struct SqlMiddlewarePgHeld {
    jobs: Option<tokio::sync::mpsc::UnboundedSender<(PgJob, PgReply)>>,
    /// Said by the task once its last SQL has run and the connection is back in the pool.
    ended: Option<tokio::sync::oneshot::Receiver<()>>,
    rt: tokio::runtime::Handle,
    url: PgUrl,
}

impl SqlMiddlewarePg {
    /// A connection of the pool, held by a task of its own on the current runtime until the
    /// returned handle is dropped; then `at_end` runs on it (any transaction left open
    /// rolled back first), e.g. the bench's table dropped.
    pub async fn hold(&self, at_end: String) -> Result<SqlMiddlewarePgHeld, BenchError> {
        let conn = self.connection().await?;
        let (jobs, rx) = tokio::sync::mpsc::unbounded_channel();
        let (end_tx, ended) = tokio::sync::oneshot::channel();
        let url = self.url.clone();
        tokio::spawn(async move {
            serve_pg(conn, rx, &url, &at_end).await;
            let _ = end_tx.send(());
        });
        Ok(SqlMiddlewarePgHeld {
            jobs: Some(jobs),
            ended: Some(ended),
            rt: tokio::runtime::Handle::current(),
            url: self.url.clone(),
        })
    }
}

impl Drop for SqlMiddlewarePgHeld {
    /// Ends the task and, outside the runtime (where a bench's iteration is dropped), waits
    /// for its last SQL, so that the table is gone when the bench is.
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(ended) = self.ended.take()
            && tokio::runtime::Handle::try_current().is_err()
        {
            let _ = self.rt.block_on(ended);
        }
    }
}

/// The task that holds the connection: jobs one at a time until the handle is dropped, then
/// `at_end`.
async fn serve_pg(
    mut conn: sql_middleware::MiddlewarePoolConnection,
    mut jobs: tokio::sync::mpsc::UnboundedReceiver<(PgJob, PgReply)>,
    url: &PgUrl,
    at_end: &str,
) {
    let e = |e: sql_middleware::SqlMiddlewareDbError| pg_error_chain(url, &e);
    while let Some((job, reply)) = jobs.recv().await {
        let answer = match job {
            PgJob::Begin => {
                let sql_middleware::MiddlewarePoolConnection::Postgres { client, .. } = &mut conn
                else {
                    let _ = reply.send(Err(BenchError::Other(
                        "sql-middleware gave a connection that is not PostgreSQL's".into(),
                    )));
                    continue;
                };
                match sql_middleware::postgres::begin_transaction(client).await {
                    Ok(tx) => {
                        let _ = reply.send(Ok(PgAnswer::Done));
                        in_transaction(tx, &mut jobs, url).await;
                        continue;
                    }
                    Err(err) => Err(e(err)),
                }
            }
            PgJob::Commit => Err(BenchError::Other("COMMIT with no transaction open".into())),
            PgJob::Batch(sql) => conn
                .execute_batch(&sql)
                .await
                .map(|()| PgAnswer::Done)
                .map_err(e),
            PgJob::Dml(sql, p) => conn
                .query(&sql)
                .params(&p)
                .dml()
                .await
                .map(|n| PgAnswer::Changed(n as u64))
                .map_err(e),
            PgJob::Rows(sql, p) => conn
                .query(&sql)
                .params(&p)
                .select()
                .await
                .map(PgAnswer::Rows)
                .map_err(e),
        };
        let _ = reply.send(answer);
    }
    if let Err(err) = conn.execute_batch(at_end).await {
        tracing::warn!("sql-middleware/postgres at the bench's end: {}", e(err));
    }
}

/// Jobs inside a transaction until its COMMIT (or until the handle is dropped: the
/// transaction then rolls back).
async fn in_transaction(
    tx: sql_middleware::postgres::Tx<'_>,
    jobs: &mut tokio::sync::mpsc::UnboundedReceiver<(PgJob, PgReply)>,
    url: &PgUrl,
) {
    let e = |e: sql_middleware::SqlMiddlewareDbError| pg_error_chain(url, &e);
    let mut prepared: std::collections::HashMap<String, sql_middleware::postgres::Prepared> =
        Default::default();
    while let Some((job, reply)) = jobs.recv().await {
        let answer = match job {
            PgJob::Commit => {
                let _ = reply.send(tx.commit().await.map(|_| PgAnswer::Done).map_err(e));
                return;
            }
            PgJob::Begin => Err(BenchError::Other("BEGIN inside a transaction".into())),
            PgJob::Batch(sql) => tx
                .execute_batch(&sql)
                .await
                .map(|()| PgAnswer::Done)
                .map_err(e),
            PgJob::Dml(sql, p) => match statement(&tx, &mut prepared, sql, url).await {
                Ok(stmt) => tx
                    .execute(stmt)
                    .params(&p)
                    .run()
                    .await
                    .map(|n| PgAnswer::Changed(n as u64))
                    .map_err(e),
                Err(err) => Err(err),
            },
            PgJob::Rows(sql, p) => match statement(&tx, &mut prepared, sql, url).await {
                Ok(stmt) => tx
                    .select(stmt)
                    .params(&p)
                    .all()
                    .await
                    .map(PgAnswer::Rows)
                    .map_err(e),
                Err(err) => Err(err),
            },
        };
        let _ = reply.send(answer);
    }
}

/// `sql` prepared in the transaction, once.
async fn statement<'p>(
    tx: &sql_middleware::postgres::Tx<'_>,
    prepared: &'p mut std::collections::HashMap<String, sql_middleware::postgres::Prepared>,
    sql: String,
    url: &PgUrl,
) -> Result<&'p sql_middleware::postgres::Prepared, BenchError> {
    use std::collections::hash_map::Entry;
    match prepared.entry(sql) {
        Entry::Occupied(o) => Ok(o.into_mut()),
        Entry::Vacant(v) => {
            let stmt = tx
                .prepare(v.key())
                .await
                .map_err(|e| pg_error_chain(url, &e))?;
            Ok(v.insert(stmt))
        }
    }
}

impl SqlMiddlewarePgHeld {
    async fn ask(&self, job: PgJob) -> Result<PgAnswer, BenchError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let gone = || pg_err(&self.url, "the task holding the connection has ended");
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send((job, reply)).map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

impl crate::on_sql_middleware::MiddlewareConn for SqlMiddlewarePgHeld {
    const BOOL_AS_INT: bool = false;

    async fn batch(&mut self, sql: &str) -> Result<(), BenchError> {
        self.ask(PgJob::Batch(sql.to_string())).await.map(drop)
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.ask(PgJob::Begin).await.map(drop)
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.ask(PgJob::Commit).await.map(drop)
    }
    async fn dml(&mut self, sql: &str, p: &[sql_middleware::RowValues]) -> Result<u64, BenchError> {
        match self.ask(PgJob::Dml(sql.to_string(), p.to_vec())).await? {
            PgAnswer::Changed(n) => Ok(n),
            _ => Err(BenchError::Other(
                "a statement answered no row count".into(),
            )),
        }
    }
    async fn rows(
        &mut self,
        sql: &str,
        p: &[sql_middleware::RowValues],
    ) -> Result<sql_middleware::ResultSet, BenchError> {
        match self.ask(PgJob::Rows(sql.to_string(), p.to_vec())).await? {
            PgAnswer::Rows(rs) => Ok(rs),
            _ => Err(BenchError::Other("a query answered no rows".into())),
        }
    }
    /// The query builder's cache mode is SQLite's and turso's; on PostgreSQL there is no
    /// uncached path to measure (crud_overhead skips select_first there, saying so).
    async fn rows_uncached(&mut self, _: &str) -> Result<sql_middleware::ResultSet, BenchError> {
        Err(BenchError::Other(
            "sql-middleware on PostgreSQL has no uncached query path".into(),
        ))
    }
}
