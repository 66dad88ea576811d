//! bench-core's `script`: the scripts replayed through rusqlite (a thread and a connection per
//! client) and through the middleware path per strategy (a task per client on a pool of
//! `clients` connections, one checkout per transaction, one dispatch per statement).
//!
//! Each bench starts from the same database: the user's file is copied once into the cache
//! (see [`crate::script::db`]), and a script that writes runs each bench on a fresh copy of
//! that copy. Every client replays its own seeded stream, so two benches send the same
//! statements with the same values; what they return is hashed per transaction and compared.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::backends::middleware::Middleware;
use crate::catalog::Pool;
use crate::catalog::{BenchSpec, CatalogError, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::measure::stats::LatencyHistogram;
use crate::measure::trace::ns_between;
use crate::measure::{Bench, IterFn, Iteration};
use crate::protocol::{DatasetStatus, Event};
use crate::script::digest::{Cell, Digest};
use crate::script::report::{RowsCheck, ScriptReport, StatementAcc};
use crate::script::{Client, Kind, Mix, Placeholders, Step, Value};
use crate::settings::SqliteSettings;
use crate::workload::{RunContext, Session, Workload};

use super::{CLIENTS, ON_BUSY, TRANSACTIONS};
use crate::catalog::POOL;

/// What the work check of a script bench counts.
pub const WORK: &str = "transactions finished or given up (on_busy=fail) in the sample";

/// Transactions per client whose results are kept to compare backends.
const COMPARED: usize = 1000;
/// A transaction run again this many times without getting through fails its bench.
const MAX_RETRIES: u32 = 10_000;

/// bench-core's `script`.
pub struct Core;

impl Workload for Core {
    fn spec(&self) -> &'static Target {
        super::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        let mix = super::check_inputs(&run.script)?;
        let db = run.script.db.clone().expect("checked");
        let dir = run.scratch_dir()?;
        crate::script::db::remove_orphans(&dir);
        if !db.exists() {
            let init = run.script.init.as_ref().expect("checked");
            emit(Event::Dataset {
                status: DatasetStatus::Building,
                rows: 0,
                path: db.display().to_string(),
                build_ms: None,
            });
            crate::script::db::init(&db, init)?;
        }
        let started = Instant::now();
        let (snapshot, sha256) = crate::script::db::snapshot(&db, &dir)?;
        emit(Event::Dataset {
            status: DatasetStatus::Built,
            rows: 0,
            path: snapshot.display().to_string(),
            build_ms: Some(started.elapsed().as_secs_f64() * 1000.0),
        });
        let k = &run.plan.knobs;
        let sql = mix
            .statements()
            .map(|s| Arc::<str>::from(s.sql(Placeholders::Numbered)))
            .collect();
        Ok(Box::new(Ctx {
            exec: Arc::new(Exec {
                sql,
                retry: k.word(&ON_BUSY) == "retry",
                mix: Arc::new(mix),
            }),
            pool: k.word(&POOL).to_string(),
            postgres_url: run.postgres_url.clone(),
            pg_schemas: RefCell::new(Vec::new()),
            snapshot,
            original: db,
            sha256,
            dir,
            clients: k.count(&CLIENTS) as usize,
            per_pass: k.count(&TRANSACTIONS),
            spin: Duration::from_micros(k.count(&SPIN_US)),
            settings: run.sqlite.clone(),
            seed: run.plan.target.seed,
            rt: crate::measure::drive::runtime(None)?,
            states: RefCell::new(BTreeMap::new()),
            working: RefCell::new(Vec::new()),
            reference: RefCell::new(None),
        }))
    }
}

/// What the clients share while they run (threads of their own for rusqlite, tasks of the
/// bench's runtime for the async paths).
struct Exec {
    mix: Arc<Mix>,
    /// Each statement's SQL with numbered placeholders, by statement index.
    sql: Vec<Arc<str>>,
    retry: bool,
}

struct Ctx {
    exec: Arc<Exec>,
    /// The `pool` knob: the pool under the middleware path.
    pool: String,
    /// The PostgreSQL server's URL, for the tokio-postgres bench.
    postgres_url: Option<String>,
    /// The schemas made on it for this run's benches, dropped when it ends.
    pg_schemas: RefCell<Vec<String>>,
    snapshot: PathBuf,
    original: PathBuf,
    sha256: String,
    dir: PathBuf,
    clients: usize,
    per_pass: u64,
    spin: Duration,
    settings: SqliteSettings,
    seed: u64,
    rt: tokio::runtime::Runtime,
    /// Each bench's figures, filled while it runs and reported when it ends.
    states: RefCell<BTreeMap<String, Rc<RefCell<Acc>>>>,
    /// The first bench reported: the others' results are compared with its.
    reference: RefCell<Option<(String, Vec<Vec<TxResult>>)>>,
    /// The working copies made for this run's benches, removed when it ends.
    working: RefCell<Vec<PathBuf>>,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        for p in self.working.borrow().iter() {
            crate::dataset::remove_db_files(p);
        }
        #[cfg(feature = "crates")]
        if let (Some(url), false) = (&self.postgres_url, self.pg_schemas.borrow().is_empty()) {
            self.rt
                .block_on(super::pg::drop_schemas(url, &self.pg_schemas.borrow()));
        }
    }
}

/// What one statement returned.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StmtOut {
    hash: u64,
    rows: u64,
    changed: u64,
}

/// What one transaction returned, statement by statement.
#[derive(Debug, Clone, PartialEq)]
struct TxResult {
    script: usize,
    statements: Vec<(usize, StmtOut)>,
}

/// One client's running figures.
struct ClientAcc {
    statements: Vec<StatementAcc>,
    transactions: u64,
    tx_sum_ns: u64,
    failed: u64,
    busy: u64,
    retries: u64,
    kept: Vec<TxResult>,
    /// Transaction latencies of the current sample.
    latencies: LatencyHistogram,
    /// Transactions finished or given up in the current sample.
    in_sample: u64,
}

impl ClientAcc {
    fn new(statements: usize) -> Self {
        ClientAcc {
            statements: (0..statements).map(|_| StatementAcc::default()).collect(),
            transactions: 0,
            tx_sum_ns: 0,
            failed: 0,
            busy: 0,
            retries: 0,
            kept: Vec::new(),
            latencies: LatencyHistogram::new(),
            in_sample: 0,
        }
    }

    /// A transaction that got through: its statements' figures and results.
    fn finished(&mut self, script: usize, done: Vec<(usize, u64, StmtOut)>, ns: u64) {
        for (i, ns, out) in &done {
            self.statements[*i].record(*ns, out.rows);
        }
        self.transactions += 1;
        self.tx_sum_ns += ns;
        self.in_sample += 1;
        self.latencies.record(ns);
        if self.kept.len() < COMPARED {
            self.kept.push(TxResult {
                script,
                statements: done.into_iter().map(|(i, _, o)| (i, o)).collect(),
            });
        }
    }
}

struct Acc {
    clients: Vec<ClientAcc>,
    /// Statements this bench's backend does not run, each with its place and why.
    skipped: Vec<String>,
}

/// The transactions each client runs in one sample: `per_pass` shared out, the first
/// clients taking one more when it does not divide.
fn shares(per_pass: u64, clients: usize) -> Vec<u64> {
    let c = clients as u64;
    (0..c)
        .map(|i| per_pass / c + u64::from(i < per_pass % c))
        .collect()
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Runs one statement on a connection: its values bound, every row read and hashed.
fn exec_statement(
    c: &Connection,
    sql: &str,
    kind: Kind,
    params: &[Value],
) -> rusqlite::Result<StmtOut> {
    let mut stmt = c.prepare_cached(sql)?;
    for (i, v) in params.iter().enumerate() {
        match v {
            Value::Int(n) => stmt.raw_bind_parameter(i + 1, n)?,
            Value::Double(d) => stmt.raw_bind_parameter(i + 1, d)?,
        }
    }
    let cols = stmt.column_count();
    let mut d = Digest::default();
    {
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            for i in 0..cols {
                use rusqlite::types::ValueRef as V;
                d.cell(match row.get_ref(i)? {
                    V::Null => Cell::Null,
                    V::Integer(n) => Cell::Int(n),
                    V::Real(r) => Cell::Real(r),
                    V::Text(t) => Cell::Text(std::str::from_utf8(t).unwrap_or("\u{fffd}")),
                    V::Blob(b) => Cell::Blob(b),
                });
            }
            d.row();
        }
    }
    drop(stmt);
    let changed = if kind == Kind::Write { c.changes() } else { 0 };
    d.statement(changed);
    Ok(StmtOut {
        hash: d.finish(),
        rows: d.rows(),
        changed,
    })
}

/// Why a statement failed, as a driver says it.
enum StmtError {
    /// SQLITE_BUSY or SQLITE_LOCKED (or the driver's own busy): the transaction is tried
    /// again after a backoff, or given up, as `on_busy` says.
    Busy,
    Other(String),
}

fn classify(e: rusqlite::Error) -> StmtError {
    if is_busy(&e) {
        StmtError::Busy
    } else {
        StmtError::Other(e.to_string())
    }
}

/// What a statement gives an async path: its figures, or why it failed (`Ok(Err(..))`, the
/// transaction's business), or a failure of the path itself (`Err`, the bench's).
type Outcome = Result<Result<StmtOut, StmtError>, BenchError>;

/// How an async backend runs one client's transactions: the connection a transaction runs
/// on, a statement on it, and a rollback after a failure. Each client is a task of the
/// bench's runtime, so the futures are `Send`.
trait AsyncPath: Send + Sync + 'static {
    type Conn: Send;
    fn checkout(
        &self,
        client: usize,
    ) -> impl Future<Output = Result<Self::Conn, BenchError>> + Send;
    /// Runs statement `index` of the mix (`sql` is its SQLite text).
    fn exec(
        &self,
        conn: &mut Self::Conn,
        index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> impl Future<Output = Outcome> + Send;
    /// Whether statement `index` runs on this path (PostgreSQL skips what it cannot prepare).
    fn runs(&self, _index: usize) -> bool {
        true
    }
    fn rollback(
        &self,
        conn: &mut Self::Conn,
    ) -> impl Future<Output = Result<(), BenchError>> + Send;
}

/// The middleware path: a checkout per transaction, a dispatch per statement.
struct OnMiddleware(Middleware);

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
struct OnTokioRusqlite(crate::backends::crates::TokioRusqlite);

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
struct OnR2d2(crate::backends::crates::R2d2);

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
struct OnSqlMiddleware(crate::backends::crates::SqlMiddleware);

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

/// A statement through sql-middleware's query builder: every row's values (its `RowValues`)
/// hashed as [`exec_statement`] hashes rusqlite's.
#[cfg(feature = "crates")]
async fn sql_middleware_statement(
    conn: &mut sql_middleware::MiddlewarePoolConnection,
    sql: Arc<str>,
    kind: Kind,
    params: &[Value],
) -> Outcome {
    use sql_middleware::{RowValues as V, SqlMiddlewareDbError as E};
    let classify_mw = |e: E| match e {
        E::SqliteError(e) => classify(e),
        other => StmtError::Other(other.to_string()),
    };
    let mut d = Digest::default();
    if matches!(kind, Kind::Begin | Kind::Commit | Kind::Rollback) {
        let r = conn
            .with_blocking_sqlite(move |c| Ok(c.execute_batch(&sql)))
            .await
            .map_err(BenchError::driver)?;
        if let Err(e) = r {
            return Ok(Err(classify(e)));
        }
        d.statement(0);
        return Ok(Ok(StmtOut {
            hash: d.finish(),
            rows: 0,
            changed: 0,
        }));
    }
    let p: Vec<V> = params
        .iter()
        .map(|v| match v {
            Value::Int(n) => V::Int(*n),
            Value::Double(x) => V::Float(*x),
        })
        .collect();
    let changed = if kind != Kind::Write || returning(&sql) {
        let rs = match conn.query(&sql).params(&p).select().await {
            Ok(rs) => rs,
            Err(e) => return Ok(Err(classify_mw(e))),
        };
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
        match conn.query(&sql).params(&p).dml().await {
            Ok(n) => n as u64,
            Err(e) => return Ok(Err(classify_mw(e))),
        }
    };
    d.statement(changed);
    Ok(Ok(StmtOut {
        hash: d.finish(),
        rows: d.rows(),
        changed,
    }))
}

/// turso: each client its own connection on one `Database`, statements prepared once
/// (turso's statement cache) and run on the calling task.
#[cfg(feature = "turso")]
struct OnTurso {
    conns: Vec<turso::Connection>,
    /// Kept for as long as its connections run.
    _db: turso::Database,
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
struct OnPostgres(super::pg::Prepared);

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
            let mut d = Digest::default();
            d.statement(0);
            return Ok(Ok(StmtOut {
                hash: d.finish(),
                rows: 0,
                changed: 0,
            }));
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
    let mut stmt = c.prepare_cached(sql).await?;
    let values: Vec<turso::Value> = params
        .iter()
        .map(|v| match v {
            Value::Int(n) => turso::Value::Integer(*n),
            Value::Double(d) => turso::Value::Real(*d),
        })
        .collect();
    let mut d = Digest::default();
    let returns = kind != Kind::Write || returning(sql);
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

/// Whether a write statement returns rows (`RETURNING`).
fn returning(sql: &str) -> bool {
    sql.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w.eq_ignore_ascii_case("returning"))
}

fn rollback(c: &Connection) {
    if !c.is_autocommit() {
        let _ = c.execute_batch("ROLLBACK");
    }
}

fn describe(mix: &Mix, index: usize, e: impl std::fmt::Display) -> String {
    let (script, s) = mix.statement(index);
    format!("{}: {e}", script.place(s.at))
}

impl Exec {
    /// After a failed attempt: the backoff before the next, or None when the transaction is
    /// given up (counted) or the bench must fail.
    fn after_failure(
        &self,
        f: StmtError,
        acc: &mut ClientAcc,
        attempts: &mut u32,
    ) -> Result<Option<Duration>, BenchError> {
        match f {
            StmtError::Other(m) => Err(BenchError::Invalid(m)),
            StmtError::Busy => {
                acc.busy += 1;
                if !self.retry {
                    acc.failed += 1;
                    acc.in_sample += 1;
                    return Ok(None);
                }
                *attempts += 1;
                if *attempts > MAX_RETRIES {
                    return Err(BenchError::Invalid(format!(
                        "a transaction met SQLITE_BUSY {MAX_RETRIES} times in a row; give up with on_busy=fail, or lower clients"
                    )));
                }
                acc.retries += 1;
                Ok(Some(Duration::from_micros(
                    (50u64 << (*attempts).min(8)).min(10_000),
                )))
            }
        }
    }

    /// A statement's outcome, started at `t0`: its figures kept, or why the attempt ends
    /// (another error than busy named by the statement's place).
    fn took(
        &self,
        index: usize,
        t0: Instant,
        r: Result<StmtOut, StmtError>,
        done: &mut Vec<(usize, u64, StmtOut)>,
    ) -> Result<(), StmtError> {
        match r {
            Ok(out) => {
                done.push((index, ns_between(t0, Instant::now()), out));
                Ok(())
            }
            Err(StmtError::Other(e)) => Err(StmtError::Other(describe(&self.mix, index, e))),
            Err(busy) => Err(busy),
        }
    }

    /// One client's share of a sample on its own connection.
    fn client_sync(
        &self,
        conn: &mut Connection,
        client: &mut Client,
        acc: &mut ClientAcc,
        n: u64,
    ) -> Result<(), BenchError> {
        let mut steps = Vec::new();
        for _ in 0..n {
            let script = client.next(&mut steps).map_err(BenchError::Invalid)?;
            let mut attempts = 0;
            loop {
                let start = Instant::now();
                let mut done = Vec::with_capacity(steps.len());
                let mut failed = None;
                for step in &steps {
                    match step {
                        Step::Sleep(d) => std::thread::sleep(*d),
                        Step::Sql(s, v) => {
                            let t0 = Instant::now();
                            let r = exec_statement(conn, &self.sql[s.index], s.kind, v)
                                .map_err(classify);
                            if let Err(f) = self.took(s.index, t0, r, &mut done) {
                                failed = Some(f);
                                break;
                            }
                        }
                    }
                }
                let Some(f) = failed else {
                    acc.finished(script, done, ns_between(start, Instant::now()));
                    break;
                };
                rollback(conn);
                match self.after_failure(f, acc, &mut attempts)? {
                    Some(wait) => std::thread::sleep(wait),
                    None => break,
                }
            }
        }
        Ok(())
    }
}

/// One client's share of a sample through an async path, as a task of its own: a checkout
/// per transaction, a dispatch per statement. Gives back what it was lent.
async fn client_async<P: AsyncPath>(
    exec: Arc<Exec>,
    path: Arc<P>,
    id: usize,
    mut client: Client,
    mut acc: ClientAcc,
    n: u64,
) -> (Client, ClientAcc, Result<(), BenchError>) {
    let r = exec
        .transactions_async(&*path, id, &mut client, &mut acc, n)
        .await;
    (client, acc, r)
}

impl Exec {
    async fn transactions_async<P: AsyncPath>(
        &self,
        path: &P,
        id: usize,
        client: &mut Client,
        acc: &mut ClientAcc,
        n: u64,
    ) -> Result<(), BenchError> {
        let mut steps = Vec::new();
        for _ in 0..n {
            let script = client.next(&mut steps).map_err(BenchError::Invalid)?;
            let mut attempts = 0;
            loop {
                let start = Instant::now();
                let mut conn = path.checkout(id).await?;
                let mut done = Vec::with_capacity(steps.len());
                let mut failed = None;
                for step in &steps {
                    match step {
                        Step::Sleep(d) => tokio::time::sleep(*d).await,
                        Step::Sql(s, _) if !path.runs(s.index) => {}
                        Step::Sql(s, v) => {
                            let t0 = Instant::now();
                            let r = path
                                .exec(
                                    &mut conn,
                                    s.index,
                                    self.sql[s.index].clone(),
                                    s.kind,
                                    v.clone(),
                                )
                                .await?;
                            if let Err(f) = self.took(s.index, t0, r, &mut done) {
                                failed = Some(f);
                                break;
                            }
                        }
                    }
                }
                let Some(f) = failed else {
                    drop(conn);
                    acc.finished(script, done, ns_between(start, Instant::now()));
                    break;
                };
                path.rollback(&mut conn).await?;
                drop(conn);
                match self.after_failure(f, acc, &mut attempts)? {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => break,
                }
            }
        }
        Ok(())
    }
}

impl Ctx {
    /// The file a bench runs on: the snapshot itself when the scripts only read, else a
    /// fresh copy of it.
    fn database_for(&self, bench: &str, own: bool) -> Result<PathBuf, BenchError> {
        if self.exec.mix.read_only() && !own {
            return Ok(self.snapshot.clone());
        }
        let name = format!(
            "script-work-{}-{}.sqlite",
            bench.replace('/', "-"),
            std::process::id()
        );
        let path = self.dir.join(name);
        crate::script::db::working_copy(&self.snapshot, &path)?;
        self.working.borrow_mut().push(path.clone());
        Ok(path)
    }

    fn new_acc(&self, bench: &str) -> Rc<RefCell<Acc>> {
        let n = self.exec.sql.len();
        let acc = Rc::new(RefCell::new(Acc {
            clients: (0..self.clients).map(|_| ClientAcc::new(n)).collect(),
            skipped: Vec::new(),
        }));
        self.states
            .borrow_mut()
            .insert(bench.to_string(), acc.clone());
        acc
    }

    fn rusqlite_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        let path = self.database_for(name, false)?;
        let mut conns = (0..self.clients)
            .map(|_| crate::backends::raw::open(&path, &self.settings))
            .collect::<Result<Vec<_>, _>>()?;
        let settings = crate::backends::raw::read_back(&conns[0]);
        let mut clients = self.clients_of_run();
        let acc = self.new_acc(name);
        let shares = shares(self.per_pass, self.clients);
        let exec = &*self.exec;
        let iter: IterFn<'_> = Box::new(move |hist| {
            let mut a = acc.borrow_mut();
            let start = Instant::now();
            if shares.len() == 1 {
                exec.client_sync(&mut conns[0], &mut clients[0], &mut a.clients[0], shares[0])?;
            } else {
                std::thread::scope(|s| {
                    let handles: Vec<_> = conns
                        .iter_mut()
                        .zip(clients.iter_mut())
                        .zip(a.clients.iter_mut())
                        .zip(shares.iter())
                        .map(|(((c, cl), ac), n)| s.spawn(move || exec.client_sync(c, cl, ac, *n)))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| {
                            h.join()
                                .map_err(|_| BenchError::other("a client thread panicked"))?
                        })
                        .collect::<Result<Vec<()>, BenchError>>()
                })?;
            }
            let elapsed = ns_between(start, Instant::now());
            Ok(Iteration::new(elapsed, sample_done(&mut a, hist)))
        });
        Ok(Bench::new(iter, self.per_pass, WORK).with_settings(settings))
    }

    fn middleware_bench(
        &self,
        name: &str,
        strategy: crate::catalog::Strategy,
    ) -> Result<Bench<'_>, BenchError> {
        let pool = Pool::chosen(&self.pool, strategy);
        let mw = Middleware::on_pool(
            self.database_for(name, false)?,
            strategy,
            pool,
            self.clients,
            self.spin,
            &self.settings,
            self.rt.handle().clone(),
        )?;
        let settings = self.rt.block_on(mw.read_back())?;
        Ok(self
            .async_bench(name, OnMiddleware(mw), settings)?
            .with_backend(pool.label()))
    }

    #[cfg(feature = "crates")]
    fn tokio_rusqlite_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        use crate::backends::crates::TokioRusqlite;
        let path = self.database_for(name, false)?;
        let crate_path =
            self.rt
                .block_on(TokioRusqlite::open(&path, &self.settings, self.clients))?;
        let settings = self.rt.block_on(crate_path.read_back())?;
        self.async_bench(name, OnTokioRusqlite(crate_path), settings)
    }

    #[cfg(feature = "crates")]
    fn r2d2_bench(
        &self,
        name: &str,
        krate: crate::catalog::Shipped,
    ) -> Result<Bench<'_>, BenchError> {
        use crate::backends::crates as c;
        let path = self.database_for(name, false)?;
        let pool = c::R2d2::open(&path, &self.settings, self.clients, c::hop(krate))?;
        let settings = pool.read_back()?;
        self.async_bench(name, OnR2d2(pool), settings)
    }

    #[cfg(feature = "crates")]
    fn sql_middleware_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        use crate::backends::crates::SqlMiddleware;
        let path = self.database_for(name, false)?;
        let (mw, settings) = self.rt.block_on(async {
            let mw = SqlMiddleware::open(&path, &self.settings).await?;
            let settings = mw.read_back().await?;
            Ok::<_, BenchError>((mw, settings))
        })?;
        self.async_bench(name, OnSqlMiddleware(mw), settings)
    }

    /// PostgreSQL: the run's database copied into a schema of this bench's own.
    #[cfg(feature = "crates")]
    fn postgres_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        use crate::script::Placeholders;
        let url = self
            .postgres_url
            .clone()
            .ok_or_else(|| BenchError::Invalid(crate::mirror::NO_POSTGRES.into()))?;
        let schema = format!(
            "benchscope_script_{}_{}",
            std::process::id(),
            self.pg_schemas.borrow().len()
        );
        self.pg_schemas.borrow_mut().push(schema.clone());
        let statements: Vec<(Arc<str>, Kind)> = self
            .exec
            .mix
            .statements()
            .map(|s| (Arc::from(s.sql(Placeholders::Dollar)), s.kind))
            .collect();
        let (prepared, notes) = self.rt.block_on(async {
            let notes = super::pg::copy_database(&url, &self.snapshot, &schema).await?;
            let prepared = super::pg::prepare(&url, &schema, self.clients, &statements).await?;
            Ok::<_, BenchError>((prepared, notes))
        })?;
        let mut skipped: Vec<String> = prepared
            .skipped
            .iter()
            .map(|(i, why)| describe(&self.exec.mix, *i, why))
            .collect();
        let runs = statements
            .iter()
            .filter(|(_, k)| !matches!(k, Kind::Begin | Kind::Commit | Kind::Rollback))
            .count();
        if skipped.len() >= runs {
            return Err(BenchError::Invalid(format!(
                "no statement of the scripts runs on PostgreSQL: {}",
                skipped.join("; ")
            )));
        }
        if !skipped.is_empty() {
            skipped.extend(notes);
        }
        let settings = prepared.settings.clone();
        let bench = self.async_bench(name, OnPostgres(prepared), settings)?;
        self.states.borrow()[name].borrow_mut().skipped = skipped;
        Ok(bench)
    }

    /// turso locks its file for itself: it always runs on a copy of its own.
    #[cfg(feature = "turso")]
    fn turso_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        use crate::backends::turso as t;
        let path = self.database_for(name, true)?;
        let (db, conns, settings) = self.rt.block_on(async {
            let db = t::open(&path).await?;
            let mut conns = Vec::with_capacity(self.clients);
            for _ in 0..self.clients {
                conns.push(t::connect(&db, &self.settings).await?);
            }
            let settings = t::read_back(&conns[0]).await;
            Ok::<_, BenchError>((db, conns, settings))
        })?;
        self.async_bench(name, OnTurso { conns, _db: db }, settings)
    }

    /// Each client's replay of the mix, seeded by the run's seed and its id.
    fn clients_of_run(&self) -> Vec<Client> {
        (0..self.clients)
            .map(|i| Client::new(self.exec.mix.clone(), self.seed, i as u64))
            .collect()
    }

    /// A bench of an async path: each client a task of the bench's runtime (spawned per
    /// sample, so that clients run on the runtime's worker threads as request handlers do).
    fn async_bench<P: AsyncPath>(
        &self,
        name: &str,
        path: P,
        settings: BTreeMap<String, String>,
    ) -> Result<Bench<'_>, BenchError> {
        let path = Arc::new(path);
        let mut clients = self.clients_of_run();
        let acc = self.new_acc(name);
        let shares = shares(self.per_pass, self.clients);
        let iter: IterFn<'_> = Box::new(move |hist| {
            let mut a = acc.borrow_mut();
            let lent = std::mem::take(&mut a.clients);
            let start = Instant::now();
            let back = self.rt.block_on(async {
                let tasks: Vec<_> = std::mem::take(&mut clients)
                    .into_iter()
                    .zip(lent)
                    .zip(shares.iter())
                    .enumerate()
                    .map(|(id, ((cl, ac), n))| {
                        tokio::spawn(client_async(
                            self.exec.clone(),
                            path.clone(),
                            id,
                            cl,
                            ac,
                            *n,
                        ))
                    })
                    .collect();
                futures_util::future::join_all(tasks).await
            });
            let elapsed = ns_between(start, Instant::now());
            let mut first_error = None;
            for joined in back {
                let (cl, ac, r) =
                    joined.map_err(|e| BenchError::Other(format!("a client task failed: {e}")))?;
                clients.push(cl);
                a.clients.push(ac);
                if let Err(e) = r {
                    first_error.get_or_insert(e);
                }
            }
            if let Some(e) = first_error {
                return Err(e);
            }
            Ok(Iteration::new(elapsed, sample_done(&mut a, hist)))
        });
        Ok(Bench::new(iter, self.per_pass, WORK).with_settings(settings))
    }

    fn compare(&self, name: &str, acc: &Acc) -> RowsCheck {
        let failed: u64 = acc.clients.iter().map(|c| c.failed).sum();
        let mix = &self.exec.mix;
        if !acc.skipped.is_empty() {
            return RowsCheck::NotCompared {
                reason: format!("statements skipped here: {}", acc.skipped.join("; ")),
            };
        }
        if !mix.read_only() && self.clients > 1 {
            return RowsCheck::NotCompared {
                reason: format!(
                    "{} clients write: the order their transactions reach the database differs from one backend to the next",
                    self.clients
                ),
            };
        }
        if !mix.read_only() && failed > 0 {
            return RowsCheck::NotCompared {
                reason: format!(
                    "{failed} transactions were given up (on_busy=fail), so the rows that followed differ"
                ),
            };
        }
        let mine: Vec<Vec<TxResult>> = acc.clients.iter().map(|c| c.kept.clone()).collect();
        let mut reference = self.reference.borrow_mut();
        let Some((against, theirs)) = reference.as_ref() else {
            let n = mine.iter().map(|k| k.len() as u64).sum();
            *reference = Some((name.to_string(), mine));
            return RowsCheck::Reference { transactions: n };
        };
        let mut compared = 0u64;
        for (client, (a, b)) in mine.iter().zip(theirs).enumerate() {
            for (t, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    return RowsCheck::Differ {
                        against: against.clone(),
                        first: self.difference(client, t, x, y, against),
                    };
                }
                compared += 1;
            }
        }
        RowsCheck::Same {
            against: against.clone(),
            transactions: compared,
        }
    }

    fn difference(
        &self,
        client: usize,
        t: usize,
        x: &TxResult,
        y: &TxResult,
        against: &str,
    ) -> String {
        let mix = &self.exec.mix;
        let script = &mix.scripts[x.script];
        let head = format!("client {client}, transaction {} ({})", t + 1, script.name);
        if x.script != y.script {
            return format!("{head}: {against} ran {} there", mix.scripts[y.script].name);
        }
        for ((i, a), (_, b)) in x.statements.iter().zip(&y.statements) {
            if a != b {
                let (_, s) = mix.statement(*i);
                return format!(
                    "{head}, {}:{} `{}`: {} rows, {} changed; {against}: {} rows, {} changed{}",
                    script.name,
                    s.at.line,
                    s.text,
                    a.rows,
                    a.changed,
                    b.rows,
                    b.changed,
                    if a.rows == b.rows && a.changed == b.changed {
                        " (other values)"
                    } else {
                        ""
                    }
                );
            }
        }
        format!(
            "{head}: {} statements ran; {against}: {}",
            x.statements.len(),
            y.statements.len()
        )
    }
}

/// After a sample: its transaction latencies into the run's histogram; the transactions it
/// finished or gave up, for the work check.
fn sample_done(a: &mut Acc, hist: &mut LatencyHistogram) -> u64 {
    let mut work = 0;
    for c in &mut a.clients {
        hist.add(&c.latencies);
        c.latencies = LatencyHistogram::new();
        work += std::mem::take(&mut c.in_sample);
    }
    work
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.per_pass
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        if let Some(why) = crate::mirror::postgres_skip(bench.subject, self.postgres_url.as_deref())
        {
            return Some(why);
        }
        if let Subject::Middleware(s) = bench.subject
            && let Some(why) = crate::catalog::pool_mismatch(&self.pool, s)
        {
            return Some(why);
        }
        crate::settings::skip_reason(bench.subject, self.clients, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        match spec.subject {
            Subject::Rusqlite => self.rusqlite_bench(spec.name),
            Subject::Middleware(s) => self.middleware_bench(spec.name, s),
            #[cfg(feature = "crates")]
            Subject::Crate(crate::catalog::Shipped::TokioRusqlite) => {
                self.tokio_rusqlite_bench(spec.name)
            }
            #[cfg(feature = "crates")]
            Subject::Crate(
                k @ (crate::catalog::Shipped::R2d2SpawnBlocking
                | crate::catalog::Shipped::R2d2BlockInPlace),
            ) => self.r2d2_bench(spec.name, k),
            #[cfg(feature = "crates")]
            Subject::Crate(crate::catalog::Shipped::SqlMiddleware) => {
                self.sql_middleware_bench(spec.name)
            }
            #[cfg(feature = "crates")]
            Subject::Postgres => self.postgres_bench(spec.name),
            #[cfg(feature = "turso")]
            Subject::Turso => self.turso_bench(spec.name),
            _ => {
                Err(CatalogError::no_implementation(super::spec(), spec, "not a core bench").into())
            }
        }
    }

    fn report(&self, spec: &BenchSpec) -> Vec<Event> {
        let Some(acc) = self.states.borrow().get(spec.name).cloned() else {
            return Vec::new();
        };
        let acc = acc.borrow();
        let mut merged: Vec<StatementAcc> = (0..self.exec.sql.len())
            .map(|_| StatementAcc::default())
            .collect();
        for c in &acc.clients {
            for (m, s) in merged.iter_mut().zip(&c.statements) {
                m.add(s);
            }
        }
        let sum = |f: fn(&ClientAcc) -> u64| acc.clients.iter().map(f).sum::<u64>();
        let rows = self.compare(spec.name, &acc);
        let differ = match &rows {
            RowsCheck::Differ { against, first } => Some(Event::Error {
                bench: Some(spec.name.to_string()),
                message: format!("returned other rows than {against}: {first}"),
            }),
            _ => None,
        };
        let report = Event::Script {
            bench: spec.name.to_string(),
            report: ScriptReport {
                clients: self.clients as u64,
                transactions: sum(|c| c.transactions),
                tx_mean_ns: sum(|c| c.tx_sum_ns) as f64 / sum(|c| c.transactions).max(1) as f64,
                failed: sum(|c| c.failed),
                busy: sum(|c| c.busy),
                retries: sum(|c| c.retries),
                statements: crate::script::report::statements(&self.exec.mix, &merged),
                rows,
                db: self.original.display().to_string(),
                db_sha256: self.sha256.clone(),
            },
        };
        std::iter::once(report).chain(differ).collect()
    }
}
