//! The crates people choose between, used the way their READMEs show, each opening its
//! connections with the run's SQLite settings and reading them back:
//!
//! - tokio-rusqlite: a background thread per connection, `Connection::call`;
//! - r2d2 + r2d2_sqlite: a blocking pool, reached with `spawn_blocking` (checkout and query in
//!   one hop) or `block_in_place` (on the runtime thread);
//! - diesel (sqlite, its r2d2 pool): the query DSL (whose statements diesel caches) under
//!   `spawn_blocking`;
//! - sql-middleware: its SQLite pool (bb8 over a worker thread per connection) and its query
//!   builder with the statement cache on, as shipped.
//!
//! Only public API. A phase a crate does not let one separate is not measured apart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::backends::raw;
use crate::dataset::{BenchRow, SELECT_BY_ID};
use crate::error::BenchError;
use crate::measure::drive::LookupPath;
use crate::measure::trace::PhaseTotals;
use crate::on_rusqlite::cached_lookup;
use crate::settings::{self, SqliteSettings};

fn joined(e: tokio::task::JoinError) -> BenchError {
    BenchError::Other(format!("a blocking task failed: {e}"))
}

// ---------------------------------------------------------------------------------------------
// tokio-rusqlite

/// `pool` connections of tokio-rusqlite (it has no pool: a "checkout" takes the next handle
/// round robin, a clone of its sender, as an application sharing a few handles would).
pub struct TokioRusqlite {
    conns: Vec<tokio_rusqlite::Connection>,
    next: AtomicUsize,
}

impl TokioRusqlite {
    pub async fn open(path: &Path, s: &SqliteSettings, n: usize) -> Result<Self, BenchError> {
        let mut conns = Vec::with_capacity(n.max(1));
        for _ in 0..n.max(1) {
            let c = tokio_rusqlite::Connection::open_with_flags(path, raw::flags(s))
                .await
                .map_err(BenchError::from)?;
            let s = s.clone();
            c.call(move |c| raw::configure(c, &s))
                .await
                .map_err(BenchError::driver)?;
            conns.push(c);
        }
        Ok(TokioRusqlite {
            conns,
            next: AtomicUsize::new(0),
        })
    }

    /// What the first connection runs with.
    pub async fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        self.conns[0]
            .call(|c| Ok::<_, rusqlite::Error>(raw::read_back(c)))
            .await
            .map_err(BenchError::driver)
    }

    /// One round trip to the connection's thread with an empty closure: the dispatch alone.
    pub async fn dispatch(conn: &tokio_rusqlite::Connection) -> Result<u64, BenchError> {
        conn.call(|c| Ok::<_, rusqlite::Error>(c.is_autocommit() as u64))
            .await
            .map_err(BenchError::driver)
    }
}

impl LookupPath for TokioRusqlite {
    type Conn = tokio_rusqlite::Connection;
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len();
        Ok(self.conns[i].clone())
    }
    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        conn.call(move |c| cached_lookup(c, id))
            .await
            .map_err(BenchError::driver)
    }
}

// ---------------------------------------------------------------------------------------------
// r2d2 + r2d2_sqlite

/// How the blocking pool is reached from async code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// `tokio::task::spawn_blocking`: checkout and query in one closure on a blocking thread.
    SpawnBlocking,
    /// `tokio::task::block_in_place`: on the runtime thread, which tokio hands off first.
    BlockInPlace,
}

pub type R2d2Pool = r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>;
pub type R2d2Conn = r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>;

/// An r2d2 pool of `n` rusqlite connections (at least one), each opened with the run's
/// settings: the crate's pool, and the middleware path's `pool=r2d2`.
pub fn r2d2_pool(path: &Path, s: &SqliteSettings, n: usize) -> Result<R2d2Pool, r2d2::Error> {
    let init = s.clone();
    let manager = r2d2_sqlite::SqliteConnectionManager::file(path)
        .with_flags(raw::flags(s))
        .with_init(move |c| raw::configure(c, &init));
    r2d2::Pool::builder()
        .max_size(n.max(1) as u32)
        .build(manager)
}

/// An r2d2 pool of `n` rusqlite connections, each opened with the run's settings.
pub struct R2d2 {
    pool: R2d2Pool,
    hop: Hop,
}

impl R2d2 {
    pub fn open(path: &Path, s: &SqliteSettings, n: usize, hop: Hop) -> Result<Self, BenchError> {
        let pool = r2d2_pool(path, s, n).map_err(BenchError::driver)?;
        Ok(R2d2 { pool, hop })
    }

    pub fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        let c = self.pool.get().map_err(BenchError::driver)?;
        Ok(raw::read_back(&c))
    }

    /// A connection taken from the pool (blocking) and held by the caller, with the hop.
    pub fn hold(&self) -> Result<(R2d2Conn, Hop), BenchError> {
        Ok((self.pool.get().map_err(BenchError::driver)?, self.hop))
    }

    /// Runs `f` on a pooled connection, reached with the pool's hop (checkout, `f`, return).
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, BenchError> {
        let pool = self.pool.clone();
        let work = move || -> Result<T, BenchError> {
            let mut c = pool.get().map_err(BenchError::driver)?;
            Ok(f(&mut c)?)
        };
        match self.hop {
            Hop::SpawnBlocking => tokio::task::spawn_blocking(work).await.map_err(joined)?,
            Hop::BlockInPlace => tokio::task::block_in_place(work),
        }
    }

    /// A checkout and its return, reached with the pool's hop.
    pub async fn checkout_and_return(&self) -> Result<(), BenchError> {
        let pool = self.pool.clone();
        match self.hop {
            Hop::SpawnBlocking => tokio::task::spawn_blocking(move || pool.get().map(drop))
                .await
                .map_err(joined)?
                .map_err(BenchError::driver),
            Hop::BlockInPlace => {
                tokio::task::block_in_place(|| pool.get().map(drop)).map_err(BenchError::driver)
            }
        }
    }
}

impl crate::on_rusqlite::OnConn for tokio_rusqlite::Connection {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError> {
        self.call(move |c| f(c)).await.map_err(|e| match e {
            tokio_rusqlite::Error::Error(e) => e,
            other => BenchError::driver(other),
        })
    }
}

/// r2d2's connection, held for the bench (its pool holds one) and reached with the hop.
pub struct R2d2Held {
    pub conn: Option<r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>>,
    pub hop: Hop,
}

impl crate::on_rusqlite::OnConn for R2d2Held {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError> {
        match self.hop {
            Hop::SpawnBlocking => {
                let c = self.conn.take().ok_or_else(|| {
                    BenchError::Other("connection lost by an earlier failed hop".into())
                })?;
                let (c, out) = tokio::task::spawn_blocking(move || {
                    let out = f(&c);
                    (c, out)
                })
                .await
                .map_err(BenchError::other)?;
                self.conn = Some(c);
                out
            }
            Hop::BlockInPlace => {
                let c = self.conn.as_ref().ok_or_else(|| {
                    BenchError::Other("connection lost by an earlier failed hop".into())
                })?;
                tokio::task::block_in_place(|| f(c))
            }
        }
    }
}

/// A connection of the r2d2 pool; under `spawn_blocking` it is first taken inside the first
/// lookup's closure (one hop for checkout and query, as such code is written).
pub struct R2d2Lease {
    pool: R2d2Pool,
    conn: Option<R2d2Conn>,
}

impl LookupPath for R2d2 {
    type Conn = R2d2Lease;
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        let pool = self.pool.clone();
        let conn = match self.hop {
            Hop::SpawnBlocking => None,
            Hop::BlockInPlace => {
                Some(tokio::task::block_in_place(|| pool.get()).map_err(BenchError::driver)?)
            }
        };
        Ok(R2d2Lease { pool, conn })
    }
    async fn lookup<const TRACE: bool>(
        &self,
        lease: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        match self.hop {
            Hop::SpawnBlocking => {
                let pool = lease.pool.clone();
                let held = lease.conn.take();
                let (conn, row) = tokio::task::spawn_blocking(move || {
                    let conn = match held {
                        Some(c) => c,
                        None => pool.get().map_err(BenchError::driver)?,
                    };
                    let row = cached_lookup(&conn, id);
                    Ok::<_, BenchError>((conn, row))
                })
                .await
                .map_err(joined)??;
                lease.conn = Some(conn);
                Ok(row?)
            }
            Hop::BlockInPlace => {
                let conn = lease.conn.as_ref().expect("checked out above");
                Ok(tokio::task::block_in_place(|| cached_lookup(conn, id))?)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// diesel

mod schema {
    diesel::table! {
        test (id) {
            id -> BigInt,
            name -> Text,
            score -> Double,
            active -> Bool,
        }
    }
}

#[derive(diesel::Queryable)]
struct DieselRow {
    id: i64,
    name: String,
    score: f64,
    active: bool,
}

type DieselManager = diesel::r2d2::ConnectionManager<diesel::SqliteConnection>;
type DieselPool = diesel::r2d2::Pool<DieselManager>;
type DieselConn = diesel::r2d2::PooledConnection<DieselManager>;

/// Applies the run's pragmas to each connection diesel's pool opens.
#[derive(Debug)]
struct DieselSettings(SqliteSettings);

impl diesel::r2d2::CustomizeConnection<diesel::SqliteConnection, diesel::r2d2::Error>
    for DieselSettings
{
    fn on_acquire(&self, c: &mut diesel::SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        use diesel::connection::SimpleConnection;
        let sql: String = self
            .0
            .pragmas()
            .iter()
            .map(|(name, value)| format!("PRAGMA {name} = {value};"))
            .collect();
        c.batch_execute(&sql)
            .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// diesel's r2d2 pool of `n` SQLite connections, reached with `spawn_blocking`.
pub struct Diesel {
    pool: DieselPool,
}

macro_rules! pragma_rows {
    ($($name:ident: $ty:ty),*) => {
        $(
            #[derive(diesel::QueryableByName)]
            #[allow(non_camel_case_types)]
            struct $name {
                #[diesel(sql_type = $ty)]
                $name: String,
            }
        )*
    };
}

pragma_rows!(
    journal_mode: diesel::sql_types::Text,
    locking_mode: diesel::sql_types::Text,
    synchronous: diesel::sql_types::Text,
    cache_size: diesel::sql_types::Text,
    mmap_size: diesel::sql_types::Text
);

impl Diesel {
    pub fn open(path: &Path, s: &SqliteSettings, n: usize) -> Result<Self, BenchError> {
        let url = path
            .to_str()
            .ok_or_else(|| BenchError::Other(format!("{} is not UTF-8", path.display())))?;
        let pool = diesel::r2d2::Pool::builder()
            .max_size(n.max(1) as u32)
            .connection_customizer(Box::new(DieselSettings(s.clone())))
            .build(DieselManager::new(url))
            .map_err(BenchError::driver)?;
        Ok(Diesel { pool })
    }

    /// The pragmas read back through diesel; the mutex cannot be (diesel keeps its handle to
    /// itself), so it reads as unsupported.
    pub fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        use diesel::RunQueryDsl;
        let mut c = self.pool.get().map_err(BenchError::driver)?;
        let mut out = BTreeMap::new();
        macro_rules! read {
            ($name:ident) => {{
                let v = diesel::sql_query(concat!("PRAGMA ", stringify!($name)))
                    .get_result::<$name>(&mut c)
                    .map(|r| r.$name)
                    .unwrap_or_else(|e| format!("error: {e}"));
                out.insert(
                    stringify!($name).to_string(),
                    settings::normalize(stringify!($name), &v),
                );
            }};
        }
        read!(journal_mode);
        read!(locking_mode);
        read!(synchronous);
        read!(cache_size);
        read!(mmap_size);
        out.insert("mutex".into(), settings::UNSUPPORTED.into());
        Ok(out)
    }

    pub async fn checkout_and_return(&self) -> Result<(), BenchError> {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || pool.get().map(drop))
            .await
            .map_err(joined)?
            .map_err(BenchError::driver)
    }
}

pub struct DieselLease {
    pool: DieselPool,
    conn: Option<DieselConn>,
}

fn diesel_lookup(c: &mut DieselConn, id: i64) -> Result<BenchRow, BenchError> {
    use diesel::{QueryDsl, RunQueryDsl};
    let r: DieselRow = schema::test::table
        .find(id)
        .get_result(c)
        .map_err(BenchError::driver)?;
    Ok(BenchRow {
        id: r.id,
        name: r.name,
        score: r.score,
        active: r.active,
    })
}

impl LookupPath for Diesel {
    type Conn = DieselLease;
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        Ok(DieselLease {
            pool: self.pool.clone(),
            conn: None,
        })
    }
    async fn lookup<const TRACE: bool>(
        &self,
        lease: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        let pool = lease.pool.clone();
        let held = lease.conn.take();
        let (conn, row) = tokio::task::spawn_blocking(move || {
            let mut conn = match held {
                Some(c) => c,
                None => pool.get().map_err(BenchError::driver)?,
            };
            let row = diesel_lookup(&mut conn, id);
            Ok::<_, BenchError>((conn, row))
        })
        .await
        .map_err(joined)??;
        lease.conn = Some(conn);
        row
    }
}

// ---------------------------------------------------------------------------------------------
// sql-middleware

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
        conn.query(SELECT_BY_ID)
            .params(&[sql_middleware::RowValues::Int(id)])
            .select()
            .await
            .map_err(BenchError::driver)
    }
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

/// One row of sql-middleware's result set decoded into the bench's struct.
pub fn middleware_row(rs: &sql_middleware::ResultSet) -> Result<BenchRow, BenchError> {
    use sql_middleware::RowValues;
    let row = rs
        .results
        .first()
        .ok_or_else(|| BenchError::Other("sql-middleware returned no row".into()))?;
    let bad = |what: &str| BenchError::Other(format!("sql-middleware: unexpected {what}"));
    Ok(BenchRow {
        id: match row.get_by_index(0) {
            Some(RowValues::Int(v)) => *v,
            _ => return Err(bad("id")),
        },
        name: match row.get_by_index(1) {
            Some(RowValues::Text(t)) => t.clone(),
            _ => return Err(bad("name")),
        },
        score: match row.get_by_index(2) {
            Some(RowValues::Float(v)) => *v,
            _ => return Err(bad("score")),
        },
        active: match row.get_by_index(3) {
            Some(RowValues::Int(v)) => *v != 0,
            Some(RowValues::Bool(b)) => *b,
            _ => return Err(bad("active")),
        },
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
        let params = [sql_middleware::RowValues::Int(id)];
        let rs = conn
            .query(SELECT_BY_ID)
            .params(&params)
            .select()
            .await
            .map_err(BenchError::driver)?;
        middleware_row(&rs)
    }
}

// ---------------------------------------------------------------------------------------------
// Opening a crate's path by its catalog identity, for every workload.

/// What a workload does with a crate's lookup path once it is open: called with the concrete
/// path type (each crate's is its own), so the workload's loops stay generic over
/// [`LookupPath`].
pub trait PathUser {
    type Out;
    fn with<P: LookupPath>(
        self,
        path: std::sync::Arc<P>,
        settings: BTreeMap<String, String>,
    ) -> Self::Out;
}

/// Opens `krate`'s lookup path on `path` with `n` connections (the crate's own pool size
/// where it has no knob), reads its settings back, and hands both to `user`.
pub fn open_path<U: PathUser>(
    krate: crate::catalog::Shipped,
    path: &Path,
    s: &SqliteSettings,
    n: usize,
    rt: &tokio::runtime::Runtime,
    user: U,
) -> Result<U::Out, BenchError> {
    use std::sync::Arc;
    let Some((pool, settings)) = Pooled::open(krate, path, s, n, rt)? else {
        // The one crate without a pool.
        let p = rt.block_on(TokioRusqlite::open(path, s, n))?;
        let settings = rt.block_on(p.read_back())?;
        return Ok(user.with(Arc::new(p), settings));
    };
    Ok(match pool {
        Pooled::R2d2(p) => user.with(Arc::new(p), settings),
        Pooled::Diesel(p) => user.with(Arc::new(p), settings),
        Pooled::SqlMiddleware(p) => user.with(Arc::new(p), settings),
    })
}

/// The error for a crate another harness links (its libsqlite3-sys is not this build's), or
/// one on PostgreSQL where a SQLite bench was asked for.
pub fn elsewhere(krate: crate::catalog::Shipped) -> BenchError {
    if krate == crate::catalog::Shipped::SqlMiddlewarePostgres {
        return BenchError::Other(format!("{} runs on PostgreSQL, not SQLite", krate.name()));
    }
    BenchError::Other(format!(
        "{} is measured by the {} harness, not bench-core",
        krate.name(),
        krate.harness().name()
    ))
}

/// How r2d2 is reached for `krate` (its two benches differ by that alone).
pub fn hop(krate: crate::catalog::Shipped) -> Hop {
    if krate == crate::catalog::Shipped::R2d2SpawnBlocking {
        Hop::SpawnBlocking
    } else {
        Hop::BlockInPlace
    }
}

/// The settings a connection reads back, by name.
pub type ReadBack = BTreeMap<String, String>;

/// A crate's pool, for its checkout and return alone.
pub enum Pooled {
    R2d2(R2d2),
    Diesel(Diesel),
    SqlMiddleware(SqlMiddleware),
}

impl Pooled {
    /// The pool of `krate`, or `None` for a crate without one (tokio-rusqlite).
    pub fn open(
        krate: crate::catalog::Shipped,
        path: &Path,
        s: &SqliteSettings,
        n: usize,
        rt: &tokio::runtime::Runtime,
    ) -> Result<Option<(Pooled, ReadBack)>, BenchError> {
        use crate::catalog::Shipped;
        Ok(Some(match krate {
            Shipped::TokioRusqlite => return Ok(None),
            Shipped::AsyncSqlite | Shipped::SqlMiddlewarePostgres => return Err(elsewhere(krate)),
            Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => {
                let p = R2d2::open(path, s, n, hop(krate))?;
                let settings = p.read_back()?;
                (Pooled::R2d2(p), settings)
            }
            Shipped::Diesel => {
                let p = Diesel::open(path, s, n)?;
                let settings = p.read_back()?;
                (Pooled::Diesel(p), settings)
            }
            Shipped::SqlMiddleware => {
                let p = rt.block_on(SqlMiddleware::open(path, s))?;
                let settings = rt.block_on(p.read_back())?;
                (Pooled::SqlMiddleware(p), settings)
            }
        }))
    }

    /// One checkout and its return, the crate's way.
    pub async fn checkout_and_return(&self) -> Result<(), BenchError> {
        match self {
            Pooled::R2d2(p) => p.checkout_and_return().await,
            Pooled::Diesel(p) => p.checkout_and_return().await,
            Pooled::SqlMiddleware(p) => p.checkout_and_return().await,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// bulk_insert through diesel and sql-middleware

mod bulk_schema {
    diesel::table! {
        benchscope_bulk_insert (id) {
            id -> BigInt,
            title -> Text,
            created_at -> Text,
            amount -> Double,
            flag -> Bool,
            payload -> Binary,
            meta -> Text,
            c1 -> Text,
            c2 -> Text,
            c3 -> Text,
            c4 -> Text,
            c5 -> Text,
            c6 -> Text,
            c7 -> Text,
            c8 -> Text,
            c9 -> Text,
        }
    }
}

/// One row as diesel inserts it (borrowing the generated row).
#[derive(diesel::Insertable)]
#[diesel(table_name = bulk_schema::benchscope_bulk_insert)]
struct NewBulk<'a> {
    id: i64,
    title: &'a str,
    created_at: &'a str,
    amount: f64,
    flag: bool,
    payload: &'a [u8],
    meta: &'a str,
    c1: &'a str,
    c2: &'a str,
    c3: &'a str,
    c4: &'a str,
    c5: &'a str,
    c6: &'a str,
    c7: &'a str,
    c8: &'a str,
    c9: &'a str,
}

impl<'a> From<&'a crate::workloads::bulk_insert::rows::BulkRow> for NewBulk<'a> {
    fn from(r: &'a crate::workloads::bulk_insert::rows::BulkRow) -> Self {
        let t = &r.texts;
        NewBulk {
            id: r.id,
            title: &r.title,
            created_at: &r.created_at,
            amount: r.amount,
            flag: r.flag,
            payload: &r.payload,
            meta: &r.meta,
            c1: &t[0],
            c2: &t[1],
            c3: &t[2],
            c4: &t[3],
            c5: &t[4],
            c6: &t[5],
            c7: &t[6],
            c8: &t[7],
            c9: &t[8],
        }
    }
}

impl Diesel {
    /// Runs `f` on a pooled connection in `spawn_blocking` (checkout, `f`, return).
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut diesel::SqliteConnection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError> {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = pool.get().map_err(BenchError::driver)?;
            f(&mut c)
        })
        .await
        .map_err(joined)?
    }
}

/// Runs SQL text through diesel (several statements, rows ignored): the fresh table.
pub fn diesel_batch(c: &mut diesel::SqliteConnection, sql: &str) -> Result<(), BenchError> {
    use diesel::connection::SimpleConnection;
    c.batch_execute(sql).map_err(BenchError::driver)
}

/// The rows inserted one statement each (diesel caches it) in one diesel transaction.
pub fn diesel_insert_all(
    c: &mut diesel::SqliteConnection,
    rows: &[crate::workloads::bulk_insert::rows::BulkRow],
) -> Result<u64, BenchError> {
    use diesel::{Connection, RunQueryDsl};
    c.transaction::<u64, diesel::result::Error, _>(|c| {
        let mut changed = 0u64;
        for r in rows {
            changed += diesel::insert_into(bulk_schema::benchscope_bulk_insert::table)
                .values(NewBulk::from(r))
                .execute(c)? as u64;
        }
        Ok(changed)
    })
    .map_err(BenchError::driver)
}

impl SqlMiddleware {
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
        use sql_middleware::RowValues as V;
        let mut c = self.checkout().await?;
        c.with_blocking_sqlite(move |raw| {
            fresh(raw).map_err(sql_middleware::SqlMiddlewareDbError::SqliteError)
        })
        .await
        .map_err(BenchError::driver)?;
        let start = std::time::Instant::now();
        let mut tx = sql_middleware::sqlite::begin_transaction(&mut c)
            .await
            .map_err(BenchError::driver)?;
        let stmt = tx.prepare(sql).map_err(BenchError::driver)?;
        let mut changed = 0u64;
        for r in rows {
            let mut p = vec![
                V::Int(r.id),
                V::Text(r.title.clone()),
                V::Text(r.created_at.clone()),
                V::Float(r.amount),
                V::Int(r.flag as i64),
                V::Blob(r.payload.clone()),
                V::Text(r.meta.clone()),
            ];
            p.extend(r.texts.iter().map(|t| V::Text(t.clone())));
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

/// One connection of sql-middleware's pool, held for a bench (crud_overhead's, key_value's):
/// its query builder with `RowValues` (statement cache on), SQL text run on its worker for the
/// rest.
pub struct SqlMiddlewareHeld {
    pub conn: sql_middleware::MiddlewarePoolConnection,
}

impl SqlMiddlewareHeld {
    /// SQL text run as is on the connection's worker (`with_blocking_sqlite`): the crate's
    /// own `execute_batch` wraps its statements in a transaction, which BEGIN cannot be in.
    pub async fn batch(&mut self, sql: &str) -> Result<(), BenchError> {
        let sql = sql.to_string();
        self.conn
            .with_blocking_sqlite(move |raw| {
                raw.execute_batch(&sql)
                    .map_err(sql_middleware::SqlMiddlewareDbError::SqliteError)
            })
            .await
            .map_err(BenchError::driver)
    }
    pub async fn dml(
        &mut self,
        sql: &str,
        p: &[sql_middleware::RowValues],
    ) -> Result<u64, BenchError> {
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
        p: &[sql_middleware::RowValues],
    ) -> Result<sql_middleware::ResultSet, BenchError> {
        self.conn
            .query(sql)
            .params(p)
            .select()
            .await
            .map_err(BenchError::driver)
    }
}

// ---------------------------------------------------------------------------------------------
// crud_overhead through diesel

mod crud_schema {
    diesel::table! {
        benchscope_crud (id) {
            id -> BigInt,
            text_col -> Text,
            int_col -> BigInt,
            real_col -> Double,
            bool_col -> Bool,
        }
    }
}

#[derive(diesel::Queryable, diesel::Insertable)]
#[diesel(table_name = crud_schema::benchscope_crud)]
struct CrudRow {
    id: i64,
    text_col: String,
    int_col: i64,
    real_col: f64,
    bool_col: bool,
}

impl From<CrudRow> for crate::workloads::crud_overhead::plan::Row {
    fn from(r: CrudRow) -> Self {
        crate::workloads::crud_overhead::plan::Row {
            id: r.id,
            text: r.text_col,
            int: r.int_col,
            real: r.real_col,
            flag: r.bool_col,
        }
    }
}

impl From<&crate::workloads::crud_overhead::plan::Row> for CrudRow {
    fn from(r: &crate::workloads::crud_overhead::plan::Row) -> Self {
        CrudRow {
            id: r.id,
            text_col: r.text.clone(),
            int_col: r.int,
            real_col: r.real,
            bool_col: r.flag,
        }
    }
}

/// crud_overhead's operations in diesel's query DSL (its statement cache holds every one of
/// them: none is built from SQL text), BEGIN and COMMIT through diesel's transaction manager,
/// each operation in a `spawn_blocking` closure on one connection of diesel's r2d2 pool held
/// for the bench.
pub struct DieselCrud {
    conn: Option<DieselConn>,
}

impl Diesel {
    /// One connection of the pool, held by the crud replay.
    pub fn crud(&self) -> Result<DieselCrud, BenchError> {
        Ok(DieselCrud {
            conn: Some(self.pool.get().map_err(BenchError::driver)?),
        })
    }
}

impl DieselCrud {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut diesel::SqliteConnection) -> diesel::QueryResult<T> + Send + 'static,
    ) -> Result<T, BenchError> {
        let mut c = self
            .conn
            .take()
            .ok_or_else(|| BenchError::Other("connection lost by an earlier failed hop".into()))?;
        let (c, out) = tokio::task::spawn_blocking(move || {
            let out = f(&mut c);
            (c, out)
        })
        .await
        .map_err(joined)?;
        self.conn = Some(c);
        out.map_err(BenchError::driver)
    }
}

impl crate::workloads::crud_overhead::plan::Crud for DieselCrud {
    async fn drop_table(
        &mut self,
        sql: &crate::workloads::crud_overhead::plan::Sql,
    ) -> Result<(), BenchError> {
        use diesel::connection::SimpleConnection;
        let text = sql.drop.clone();
        self.on(move |c| c.batch_execute(&text)).await
    }
    async fn create_table(
        &mut self,
        sql: &crate::workloads::crud_overhead::plan::Sql,
    ) -> Result<(), BenchError> {
        use diesel::connection::SimpleConnection;
        let text = sql.create.clone();
        self.on(move |c| c.batch_execute(&text)).await
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        use diesel::connection::{Connection, TransactionManager};
        self.on(|c| {
            <diesel::SqliteConnection as Connection>::TransactionManager::begin_transaction(c)
        })
        .await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        use diesel::connection::{Connection, TransactionManager};
        self.on(|c| {
            <diesel::SqliteConnection as Connection>::TransactionManager::commit_transaction(c)
        })
        .await
    }
    async fn insert(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        r: &crate::workloads::crud_overhead::plan::Row,
    ) -> Result<u64, BenchError> {
        use diesel::RunQueryDsl;
        let row = CrudRow::from(r);
        self.on(move |c| {
            diesel::insert_into(crud_schema::benchscope_crud::table)
                .values(&row)
                .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
    async fn update(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        id: i64,
        text: &str,
    ) -> Result<u64, BenchError> {
        use crud_schema::benchscope_crud::dsl;
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
        let text = text.to_string();
        self.on(move |c| {
            diesel::update(dsl::benchscope_crud.find(id))
                .set(dsl::text_col.eq(text))
                .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
    async fn delete(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        id: i64,
    ) -> Result<u64, BenchError> {
        use crud_schema::benchscope_crud::dsl;
        use diesel::{QueryDsl, RunQueryDsl};
        self.on(move |c| diesel::delete(dsl::benchscope_crud.find(id)).execute(c))
            .await
            .map(|n| n as u64)
    }
    async fn select(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        above: i64,
    ) -> Result<Vec<crate::workloads::crud_overhead::plan::Row>, BenchError> {
        use crud_schema::benchscope_crud::dsl;
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
        let rows: Vec<CrudRow> = self
            .on(move |c| dsl::benchscope_crud.filter(dsl::int_col.gt(above)).load(c))
            .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }
    async fn cached(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        q: usize,
    ) -> Result<crate::workloads::crud_overhead::plan::Answer, BenchError> {
        use crate::workloads::crud_overhead::plan::Answer;
        use crud_schema::benchscope_crud::dsl;
        use diesel::dsl::{avg, count_star};
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl, TextExpressionMethods};
        let rows = |v: Vec<CrudRow>| Answer::Rows(v.into_iter().map(Into::into).collect());
        // The same five queries as Sql::cached, in the DSL.
        Ok(match q {
            0 => rows(
                self.on(|c| {
                    dsl::benchscope_crud
                        .filter(dsl::int_col.between(4000, 4500))
                        .load(c)
                })
                .await?,
            ),
            1 => rows(
                self.on(|c| dsl::benchscope_crud.filter(dsl::bool_col.eq(true)).load(c))
                    .await?,
            ),
            2 => Answer::Count(
                self.on(|c| {
                    dsl::benchscope_crud
                        .filter(dsl::text_col.like("a%"))
                        .select(count_star())
                        .first::<i64>(c)
                })
                .await?,
            ),
            3 => Answer::Count(
                self.on(|c| {
                    dsl::benchscope_crud
                        .filter(dsl::int_col.between(2000, 4000))
                        .select((avg(dsl::real_col), count_star()))
                        .first::<(Option<f64>, i64)>(c)
                })
                .await?
                .1,
            ),
            4 => rows(
                self.on(|c| {
                    dsl::benchscope_crud
                        .order((dsl::real_col.desc(), dsl::id))
                        .limit(10)
                        .load(c)
                })
                .await?,
            ),
            other => return Err(BenchError::Other(format!("no cached query {other}"))),
        })
    }
    async fn insert_values(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        rows: &[crate::workloads::crud_overhead::plan::Row],
    ) -> Result<u64, BenchError> {
        use diesel::RunQueryDsl;
        let rows: Vec<CrudRow> = rows.iter().map(CrudRow::from).collect();
        // One multi-row INSERT (diesel batches a Vec on SQLite).
        self.on(move |c| {
            diesel::insert_into(crud_schema::benchscope_crud::table)
                .values(&rows)
                .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
}

// ---------------------------------------------------------------------------------------------
// sql-middleware on PostgreSQL

/// sql-middleware's PostgreSQL pool (its postgres feature: bb8 over tokio-postgres) on the
/// server `url` names; errors carry the URL with its password redacted.
pub struct SqlMiddlewarePg {
    cap: sql_middleware::ConfigAndPool,
    url: String,
}

use crate::redact::pg_error as pg_err;

/// How long sql-middleware's PostgreSQL pool may take to make its first connection.
const PG_CONNECT_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

impl SqlMiddlewarePg {
    pub async fn open(url: &str) -> Result<Self, BenchError> {
        // sql-middleware takes the parts, not a connection string: a URL's, its query
        // parameters (`?user=..&password=..`) included.
        let u = url::Url::parse(url)
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
            .map_err(|e| pg_err(url, e))?;
        let p = SqlMiddlewarePg {
            cap,
            url: url.to_string(),
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
            .map_err(|e| pg_err(&self.url, e))
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
        use sql_middleware::RowValues as V;
        let e = |e| pg_err(&self.url, e);
        let mut conn = self.connection().await?;
        conn.execute_batch(fresh).await.map_err(e)?;
        let sql_middleware::MiddlewarePoolConnection::Postgres { client, .. } = &mut conn else {
            return Err(BenchError::Other(
                "sql-middleware gave a connection that is not PostgreSQL's".into(),
            ));
        };
        let start = std::time::Instant::now();
        let tx = sql_middleware::postgres::begin_transaction(client)
            .await
            .map_err(e)?;
        let stmt = tx.prepare(insert).await.map_err(e)?;
        let mut changed = 0u64;
        for r in rows {
            let mut p = vec![
                V::Int(r.id),
                V::Text(r.title.clone()),
                V::Text(r.created_at.clone()),
                V::Float(r.amount),
                V::Bool(r.flag),
                V::Blob(r.payload.clone()),
                V::Text(r.meta.clone()),
            ];
            p.extend(r.texts.iter().map(|t| V::Text(t.clone())));
            changed += tx.execute(&stmt).params(&p).run().await.map_err(e)? as u64;
        }
        tx.commit().await.map_err(e)?;
        let elapsed = crate::measure::trace::ns_between(start, std::time::Instant::now());
        Ok((changed, elapsed))
    }

    /// Drops the bench's table (at the bench's end: no other table is touched).
    pub async fn drop_table(&self, drop: &str) -> Result<(), BenchError> {
        let mut conn = self.connection().await?;
        conn.execute_batch(drop)
            .await
            .map_err(|e| pg_err(&self.url, e))
    }
}
