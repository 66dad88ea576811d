//! The pooled async "middleware" path: caller values -> driver parameters -> dispatch to the
//! thread that owns the connection -> execute and materialise a generic result set -> decode.
//! The dispatch is a strategy; see [`Strategy`].

mod error;
pub mod per_thread;
pub mod slots;
pub mod value;
pub mod workers;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rusqlite::Connection;

pub use crate::catalog::Strategy;
use crate::dataset::{BenchRow, SELECT_BY_ID};
use crate::measure::trace::{Phase, PhaseTotals, timer_cost, traced};
use crate::settings::SqliteSettings;
pub use error::MiddlewareError;
use value::{ResultSet, Value};
use workers::{HandOff, WorkerObject, WorkerPool};

enum PoolKind {
    Deadpool(deadpool_sqlite::Pool),
    Workers(WorkerPool),
    #[cfg(feature = "crates")]
    R2d2(r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>),
    #[cfg(feature = "crates")]
    Bb8(bb8::Pool<Bb8Rusqlite>),
    /// No pool: connections opened up front, taken round robin.
    Fixed(Vec<Shared>, std::sync::atomic::AtomicUsize),
    /// Connections opened up front, one slot each; the lowest free one is taken.
    Slots(std::sync::Arc<slots::SlotPool>),
    /// A connection per thread, opened on the thread's first use.
    Thread(std::sync::Arc<per_thread::ThreadPool>),
}

/// A connection several tasks may take (the `none` pool's), locked while a query runs.
type Shared = std::sync::Arc<std::sync::Mutex<Connection>>;

#[cfg(feature = "crates")]
type R2d2Conn = r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>;

/// bb8's manager for rusqlite connections opened with the run's settings. bb8 checks a
/// connection on every checkout (its default): here, that it is out of any transaction (an
/// in-process connection cannot lose its server; one left inside a transaction is broken for
/// the next user), which asks SQLite without running SQL.
#[cfg(feature = "crates")]
pub struct Bb8Rusqlite {
    path: PathBuf,
    settings: SqliteSettings,
}

#[cfg(feature = "crates")]
impl bb8::ManageConnection for Bb8Rusqlite {
    type Connection = Connection;
    type Error = rusqlite::Error;

    async fn connect(&self) -> Result<Connection, rusqlite::Error> {
        super::raw::open(&self.path, &self.settings)
    }

    async fn is_valid(&self, conn: &mut Connection) -> Result<(), rusqlite::Error> {
        if conn.is_autocommit() {
            Ok(())
        } else {
            Err(rusqlite::Error::InvalidQuery)
        }
    }

    fn has_broken(&self, _conn: &mut Connection) -> bool {
        false
    }
}

/// The value layer a lookup goes through (the `values` knob).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Values {
    /// Caller values in [`Value`], rows materialised into a [`ResultSet`] on the connection's
    /// thread, decoded by column name on the caller's.
    #[default]
    Generic,
    /// The closure binds the id and reads the row into the caller's struct on the
    /// connection's thread, as code written against rusqlite does: no value layer.
    Typed,
    /// Typed, on a statement prepared once per connection and held beside it (the `thread`
    /// pool's; see [`Middleware::call_statement`]).
    Prepared,
}

impl Values {
    /// The `values` knob's word.
    pub fn chosen(knob: &str) -> Values {
        match knob {
            "typed" => Values::Typed,
            "prepared" => Values::Prepared,
            _ => Values::Generic,
        }
    }

    /// Its word in the `values` knob.
    pub fn word(self) -> &'static str {
        match self {
            Values::Generic => "generic",
            Values::Typed => "typed",
            Values::Prepared => "prepared",
        }
    }
}

/// A pool plus a dispatch strategy.
pub struct Middleware {
    pool: Option<PoolKind>,
    pub strategy: Strategy,
    /// The value layer of [`lookup`].
    pub values: Values,
    /// deadpool-sqlite closes connections with `spawn_blocking`, so the pool is dropped
    /// inside the runtime it was used with.
    runtime: tokio::runtime::Handle,
}

impl Drop for Middleware {
    fn drop(&mut self) {
        let _guard = self.runtime.enter();
        self.pool.take();
    }
}

/// A borrowed connection; given back to the pool on drop.
pub enum Conn {
    Deadpool(Option<deadpool_sqlite::Object>),
    Worker(WorkerObject),
    #[cfg(feature = "crates")]
    R2d2(Option<R2d2Conn>),
    #[cfg(feature = "crates")]
    Bb8(Option<bb8::PooledConnection<'static, Bb8Rusqlite>>),
    Fixed(Shared),
    Slots(Option<slots::SlotConn>),
    /// The `thread` pool's: nothing is taken, a call reaches the connection of the thread it
    /// runs on.
    Thread,
}

impl Middleware {
    /// `size` connections (and, for worker strategies, as many threads), each opened with the
    /// run's SQLite `settings`; `spin` is the spin budget of the `Spin` strategy. `runtime` is
    /// the runtime the middleware is used on.
    pub fn new(
        path: PathBuf,
        strategy: Strategy,
        size: usize,
        spin: Duration,
        settings: &SqliteSettings,
        runtime: tokio::runtime::Handle,
    ) -> Result<Self, MiddlewareError> {
        Self::on_pool(
            path,
            strategy,
            strategy.pool(),
            size,
            spin,
            settings,
            runtime,
        )
    }

    /// The same, on `pool` rather than the strategy's own; a strategy that does not dispatch
    /// on that pool is refused (see [`crate::catalog::Pool::runs`]).
    pub fn on_pool(
        path: PathBuf,
        strategy: Strategy,
        pool: crate::catalog::Pool,
        size: usize,
        spin: Duration,
        settings: &SqliteSettings,
        runtime: tokio::runtime::Handle,
    ) -> Result<Self, MiddlewareError> {
        use crate::catalog::Pool;
        if !pool.runs(strategy) {
            return Err(MiddlewareError::Pool(format!(
                "{} does not dispatch on {}",
                strategy.name(),
                pool.label()
            )));
        }
        let mut s = settings.clone();
        // wait_aside's connections wait for SQLite's locks in block_in_place.
        s.wait_aside = strategy == Strategy::WaitAside;
        let pool = match (pool, strategy) {
            (_, Strategy::Worker) => {
                PoolKind::Workers(workers::pool(path, HandOff::Channel, size, s))
            }
            (_, Strategy::Spin) => {
                PoolKind::Workers(workers::pool(path, HandOff::Spin { spin }, size, s))
            }
            #[cfg(feature = "crates")]
            (Pool::R2d2, _) => PoolKind::R2d2(
                super::crates::r2d2_pool(&path, &s, size)
                    .map_err(|e| MiddlewareError::Pool(e.to_string()))?,
            ),
            #[cfg(feature = "crates")]
            (Pool::Bb8, _) => {
                let manager = Bb8Rusqlite { path, settings: s };
                // Connections open on first checkout (bb8 spawns its reaper on the runtime).
                let _in = runtime.enter();
                PoolKind::Bb8(
                    bb8::Pool::builder()
                        .max_size(size.max(1) as u32)
                        .build_unchecked(manager),
                )
            }
            #[cfg(not(feature = "crates"))]
            (Pool::R2d2 | Pool::Bb8, _) => {
                return Err(MiddlewareError::Pool(
                    "this build lacks bench-core's `crates` feature (r2d2, bb8)".into(),
                ));
            }
            (Pool::Thread, _) if s.locking_mode == "exclusive" => {
                return Err(MiddlewareError::Pool(
                    "pool=thread opens a connection per thread, and locking_mode=exclusive keeps the file to one connection".into(),
                ));
            }
            (Pool::Thread, _) => PoolKind::Thread(per_thread::ThreadPool::new(move || {
                super::raw::open(&path, &s)
            })),
            (Pool::Slots, _) => PoolKind::Slots(slots::SlotPool::new(
                (0..size.max(1))
                    .map(|_| super::raw::open(&path, &s))
                    .collect::<Result<_, _>>()?,
            )),
            (Pool::None, _) => PoolKind::Fixed(
                (0..size.max(1))
                    .map(|_| {
                        super::raw::open(&path, &s)
                            .map(|c| std::sync::Arc::new(std::sync::Mutex::new(c)))
                    })
                    .collect::<Result<_, _>>()?,
                std::sync::atomic::AtomicUsize::new(0),
            ),
            _ => PoolKind::Deadpool(
                deadpool_sqlite::Config::new(path)
                    .builder(deadpool_sqlite::Runtime::Tokio1)
                    .map_err(|e| MiddlewareError::Pool(e.to_string()))?
                    .max_size(size)
                    // deadpool-sqlite opens with rusqlite's default flags (no SQLite mutex);
                    // the run's pragmas are applied to every connection it creates.
                    .post_create(deadpool_sqlite::Hook::async_fn(move |conn, _| {
                        let s = s.clone();
                        Box::pin(async move {
                            conn.interact(move |c| super::raw::apply(c, &s))
                                .await
                                .map_err(|e| deadpool_sqlite::HookError::message(e.to_string()))?
                                .map_err(deadpool_sqlite::HookError::Backend)
                        })
                    }))
                    .build()
                    .map_err(|e| MiddlewareError::Pool(e.to_string()))?,
            ),
        };
        Ok(Middleware {
            pool: Some(pool),
            strategy,
            values: Values::Generic,
            runtime,
        })
    }

    /// The same middleware with lookups through `values`.
    pub fn with_values(mut self, values: Values) -> Self {
        self.values = values;
        self
    }

    /// The SQLite settings a pooled connection runs with, read back from it.
    pub async fn read_back(
        &self,
    ) -> Result<std::collections::BTreeMap<String, String>, MiddlewareError> {
        let mut conn = self.checkout().await?;
        self.call(&mut conn, |c| super::raw::read_back(c)).await
    }

    pub async fn checkout(&self) -> Result<Conn, MiddlewareError> {
        match self.pool.as_ref().expect("pool lives until drop") {
            PoolKind::Deadpool(p) => p
                .get()
                .await
                .map(|o| Conn::Deadpool(Some(o)))
                .map_err(|e| MiddlewareError::Pool(e.to_string())),
            PoolKind::Workers(p) => p
                .get()
                .await
                .map(Conn::Worker)
                .map_err(|e| MiddlewareError::Pool(e.to_string())),
            // r2d2's checkout blocks: reached the way the strategy reaches the connection.
            #[cfg(feature = "crates")]
            PoolKind::R2d2(p) => {
                let pool = p.clone();
                let get = move || pool.get().map_err(|e| MiddlewareError::Pool(e.to_string()));
                let conn = match self.strategy {
                    Strategy::SpawnBlocking => tokio::task::spawn_blocking(get)
                        .await
                        .map_err(|e| MiddlewareError::Dispatch(e.to_string()))??,
                    Strategy::BlockInPlace => tokio::task::block_in_place(get)?,
                    // A free connection is taken in place; waiting for one, aside.
                    Strategy::WaitAside => match p.try_get() {
                        Some(c) => c,
                        None => tokio::task::block_in_place(get)?,
                    },
                    _ => get()?,
                };
                Ok(Conn::R2d2(Some(conn)))
            }
            #[cfg(feature = "crates")]
            PoolKind::Bb8(p) => p
                .get_owned()
                .await
                .map(|c| Conn::Bb8(Some(c)))
                .map_err(|e| MiddlewareError::Pool(e.to_string())),
            PoolKind::Slots(p) => Ok(Conn::Slots(Some(p.get().await))),
            PoolKind::Thread(_) => Ok(Conn::Thread),
            PoolKind::Fixed(conns, next) => {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % conns.len();
                Ok(Conn::Fixed(conns[i].clone()))
            }
        }
    }

    /// Runs the caller's `f` with the connection, dispatched by this middleware's strategy.
    /// `f` may do anything, block included, so `wait_aside` runs it as `block_in_place` does.
    pub async fn call<R, F>(&self, conn: &mut Conn, f: F) -> Result<R, MiddlewareError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> R + Send + 'static,
    {
        self.dispatch(self.for_closures(), conn, f).await
    }

    /// Runs `f`, the middleware's own work on the connection (a statement prepared or taken,
    /// bound, stepped and its rows read: nothing that waits but SQLite), dispatched by this
    /// middleware's strategy; `wait_aside` runs it in place, SQLite's lock waits aside.
    pub(crate) async fn run_own<R, F>(&self, conn: &mut Conn, f: F) -> Result<R, MiddlewareError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> R + Send + 'static,
    {
        self.dispatch(self.strategy, conn, f).await
    }

    /// The strategy a caller's closure runs by: its own, but `block_in_place` for
    /// `wait_aside` (a closure can block where no busy handler sees it).
    fn for_closures(&self) -> Strategy {
        match self.strategy {
            Strategy::WaitAside => Strategy::BlockInPlace,
            s => s,
        }
    }

    async fn dispatch<R, F>(
        &self,
        strategy: Strategy,
        conn: &mut Conn,
        f: F,
    ) -> Result<R, MiddlewareError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> R + Send + 'static,
    {
        match conn {
            Conn::Worker(w) => Ok(w.call(f).await?),
            #[cfg(feature = "crates")]
            Conn::R2d2(slot) => on_owned(strategy, slot, f).await,
            #[cfg(feature = "crates")]
            Conn::Bb8(slot) => on_owned(strategy, slot, f).await,
            Conn::Slots(slot) => on_owned(strategy, slot, f).await,
            Conn::Thread => on_thread(strategy, self.thread_pool()?, move |p| p.with(f)).await,
            Conn::Fixed(shared) => {
                let locked = |c: &Shared, f: F| {
                    c.lock()
                        .map(|mut g| f(&mut g))
                        .map_err(|_| MiddlewareError::Dispatch("connection mutex poisoned".into()))
                };
                match strategy {
                    Strategy::SpawnBlocking => {
                        let c = shared.clone();
                        tokio::task::spawn_blocking(move || locked(&c, f))
                            .await
                            .map_err(|e| MiddlewareError::Dispatch(e.to_string()))?
                    }
                    Strategy::BlockInPlace => tokio::task::block_in_place(|| locked(shared, f)),
                    // Another task's query holds the lock: waited for aside.
                    Strategy::WaitAside => match shared.try_lock() {
                        Ok(mut g) => Ok(f(&mut g)),
                        Err(std::sync::TryLockError::WouldBlock) => {
                            tokio::task::block_in_place(|| locked(shared, f))
                        }
                        Err(std::sync::TryLockError::Poisoned(_)) => Err(
                            MiddlewareError::Dispatch("connection mutex poisoned".into()),
                        ),
                    },
                    _ => locked(shared, f),
                }
            }
            Conn::Deadpool(slot) => match strategy {
                // The object is this checkout's alone: its lock is free.
                Strategy::Inline | Strategy::WaitAside => {
                    let obj = slot.as_ref().ok_or_else(gone)?;
                    let mut guard = obj.lock().map_err(|_| {
                        MiddlewareError::Dispatch("connection mutex poisoned".into())
                    })?;
                    Ok(f(&mut guard))
                }
                Strategy::SpawnBlocking => {
                    let obj = slot.take().ok_or_else(gone)?;
                    let (obj, out) = tokio::task::spawn_blocking(move || {
                        let out = obj.lock().map(|mut g| f(&mut g)).map_err(|_| ());
                        (obj, out)
                    })
                    .await
                    .map_err(|e| MiddlewareError::Dispatch(e.to_string()))?;
                    *slot = Some(obj);
                    out.map_err(|_| MiddlewareError::Dispatch("connection mutex poisoned".into()))
                }
                Strategy::Interact => {
                    let obj = slot.as_ref().ok_or_else(gone)?;
                    obj.interact(f)
                        .await
                        .map_err(|e| MiddlewareError::Dispatch(e.to_string()))
                }
                Strategy::BlockInPlace => {
                    let obj = slot.as_ref().ok_or_else(gone)?;
                    tokio::task::block_in_place(|| {
                        let mut guard = obj.lock().map_err(|_| {
                            MiddlewareError::Dispatch("connection mutex poisoned".into())
                        })?;
                        Ok(f(&mut guard))
                    })
                }
                Strategy::Worker | Strategy::Spin => {
                    unreachable!("worker strategies use the worker pool")
                }
            },
        }
    }
}

impl Middleware {
    /// Runs `f` on the statement of `sql`, prepared once per connection and held beside it,
    /// dispatched by this middleware's strategy: the `thread` pool's (no other pool can hold a
    /// rusqlite statement, which cannot leave its thread).
    ///
    /// `f` is the caller's: `wait_aside` runs it as `block_in_place` does (see
    /// [`Middleware::call`]).
    pub async fn call_statement<R, F>(
        &self,
        conn: &mut Conn,
        sql: &'static str,
        f: F,
    ) -> Result<R, MiddlewareError>
    where
        R: Send + 'static,
        F: FnOnce(&mut rusqlite::Statement<'_>) -> R + Send + 'static,
    {
        self.on_statement(self.for_closures(), conn, sql, f).await
    }

    /// The middleware's own work on the held statement (bind, step, read the row): `wait_aside`
    /// runs it in place (see [`Middleware::run_own`]).
    pub(crate) async fn run_own_statement<R, F>(
        &self,
        conn: &mut Conn,
        sql: &'static str,
        f: F,
    ) -> Result<R, MiddlewareError>
    where
        R: Send + 'static,
        F: FnOnce(&mut rusqlite::Statement<'_>) -> R + Send + 'static,
    {
        self.on_statement(self.strategy, conn, sql, f).await
    }

    async fn on_statement<R, F>(
        &self,
        strategy: Strategy,
        conn: &mut Conn,
        sql: &'static str,
        f: F,
    ) -> Result<R, MiddlewareError>
    where
        R: Send + 'static,
        F: FnOnce(&mut rusqlite::Statement<'_>) -> R + Send + 'static,
    {
        match conn {
            Conn::Thread => {
                on_thread(strategy, self.thread_pool()?, move |p| {
                    p.with_statement(sql, f)
                })
                .await
            }
            _ => Err(MiddlewareError::Pool(
                "only pool=thread holds a statement beside its connection".into(),
            )),
        }
    }

    /// The connections the `thread` pool has opened so far, one per thread that used it
    /// (`None` on another pool).
    pub fn thread_connections(&self) -> Option<usize> {
        self.thread_pool().ok().map(|p| p.opened())
    }

    fn thread_pool(&self) -> Result<&std::sync::Arc<per_thread::ThreadPool>, MiddlewareError> {
        match &self.pool {
            Some(PoolKind::Thread(p)) => Ok(p),
            _ => Err(MiddlewareError::Pool(
                "a thread connection used with a middleware on another pool".into(),
            )),
        }
    }
}

/// `job` on the thread pool, on the thread `strategy` runs it on: this one (in place or in
/// `block_in_place`, which keeps the thread) or a blocking thread of `spawn_blocking`.
async fn on_thread<R, J>(
    strategy: Strategy,
    pool: &std::sync::Arc<per_thread::ThreadPool>,
    job: J,
) -> Result<R, MiddlewareError>
where
    R: Send + 'static,
    J: FnOnce(&std::sync::Arc<per_thread::ThreadPool>) -> Result<R, MiddlewareError>
        + Send
        + 'static,
{
    match strategy {
        Strategy::SpawnBlocking => {
            let p = pool.clone();
            tokio::task::spawn_blocking(move || job(&p))
                .await
                .map_err(|e| MiddlewareError::Dispatch(e.to_string()))?
        }
        Strategy::BlockInPlace => tokio::task::block_in_place(|| job(pool)),
        _ => job(pool),
    }
}

/// A pooled connection the caller holds, used where it is.
trait Held: Send + 'static {
    fn with<R>(&mut self, f: impl FnOnce(&mut Connection) -> R) -> R;
}

#[cfg(feature = "crates")]
impl Held for R2d2Conn {
    fn with<R>(&mut self, f: impl FnOnce(&mut Connection) -> R) -> R {
        f(self)
    }
}

#[cfg(feature = "crates")]
impl Held for bb8::PooledConnection<'static, Bb8Rusqlite> {
    fn with<R>(&mut self, f: impl FnOnce(&mut Connection) -> R) -> R {
        f(self)
    }
}

impl Held for slots::SlotConn {
    fn with<R>(&mut self, f: impl FnOnce(&mut Connection) -> R) -> R {
        slots::SlotConn::with(self, f)
    }
}

/// `f` on a pooled connection the caller holds (r2d2's, bb8's, a slot), reached by
/// `strategy`: moved into `spawn_blocking` and back, used in `block_in_place`, or used in place.
async fn on_owned<C, R, F>(
    strategy: Strategy,
    slot: &mut Option<C>,
    f: F,
) -> Result<R, MiddlewareError>
where
    C: Held,
    R: Send + 'static,
    F: FnOnce(&mut Connection) -> R + Send + 'static,
{
    match strategy {
        Strategy::SpawnBlocking => {
            let mut c = slot.take().ok_or_else(gone)?;
            let (c, out) = tokio::task::spawn_blocking(move || {
                let out = c.with(f);
                (c, out)
            })
            .await
            .map_err(|e| MiddlewareError::Dispatch(e.to_string()))?;
            *slot = Some(c);
            Ok(out)
        }
        Strategy::BlockInPlace => {
            let c = slot.as_mut().ok_or_else(gone)?;
            Ok(tokio::task::block_in_place(|| c.with(f)))
        }
        _ => Ok(slot.as_mut().ok_or_else(gone)?.with(f)),
    }
}

fn gone() -> MiddlewareError {
    MiddlewareError::Dispatch("connection lost by an earlier failed dispatch".into())
}

/// Time spent inside the connection's thread, per phase (zero when not traced).
#[derive(Debug, Clone, Copy, Default)]
pub struct InnerTimes {
    pub prepare: u64,
    pub bind: u64,
    pub execute_marshal: u64,
}

impl InnerTimes {
    fn total(&self) -> u64 {
        self.prepare + self.bind + self.execute_marshal
    }

    /// The hop: what a round trip of `round_trip` ns took beyond the work on the connection's
    /// thread and the `reads` timer reads made there, each `timer` ns.
    fn hop(&self, round_trip: u64, reads: u64, timer: u64) -> u64 {
        round_trip
            .saturating_sub(self.total())
            .saturating_sub(reads * timer)
    }
}

/// Timer reads on the connection's thread inside a traced dispatch (`run_query`'s four,
/// `run_typed`'s three, `run_prepared`'s two).
const INNER_READS: u64 = 4;
const INNER_READS_TYPED: u64 = 3;
const INNER_READS_PREPARED: u64 = 2;

/// What runs on the connection's thread: prepare (cached), convert the caller's values into
/// driver parameters (the bind phase, as every driver's mirror measures it), then bind them to
/// the statement, execute and marshal (execute+marshal).
pub fn run_query<const TRACE: bool>(
    conn: &mut Connection,
    sql: &str,
    values: &[Value],
) -> (rusqlite::Result<ResultSet>, InnerTimes) {
    let mut times = InnerTimes::default();
    let t0 = TRACE.then(Instant::now);
    let out = (|| {
        let mut stmt = conn.prepare_cached(sql)?;
        let t1 = TRACE.then(Instant::now);
        let params = value::to_params(values);
        let t2 = TRACE.then(Instant::now);
        value::bind(&mut stmt, &params)?;
        let rs = value::marshal(&mut stmt);
        if let (Some(t0), Some(t1), Some(t2)) = (t0, t1, t2) {
            let t3 = Instant::now();
            times = InnerTimes {
                prepare: traced(t0, t1),
                bind: traced(t1, t2),
                execute_marshal: traced(t2, t3),
            };
        }
        rs
    })();
    (out, times)
}

/// The typed lookup on the connection's thread: prepare (cached), then bind the id, step and
/// read the row into `BenchRow` (execute+marshal; nothing to convert or decode after).
pub fn run_typed<const TRACE: bool>(
    conn: &mut Connection,
    id: i64,
) -> (rusqlite::Result<BenchRow>, InnerTimes) {
    let mut times = InnerTimes::default();
    let t0 = TRACE.then(Instant::now);
    let out = (|| {
        let mut stmt = conn.prepare_cached(SELECT_BY_ID)?;
        let t1 = TRACE.then(Instant::now);
        let row = super::raw::lookup(&mut stmt, id);
        if let (Some(t0), Some(t1)) = (t0, t1) {
            let t2 = Instant::now();
            times.prepare = traced(t0, t1);
            times.execute_marshal = traced(t1, t2);
        }
        row
    })();
    (out, times)
}

/// The typed lookup on a statement held with its connection: bind the id, step and read the
/// row (execute+marshal; nothing prepared).
pub fn run_prepared<const TRACE: bool>(
    stmt: &mut rusqlite::Statement<'_>,
    id: i64,
) -> (rusqlite::Result<BenchRow>, InnerTimes) {
    let t0 = TRACE.then(Instant::now);
    let row = super::raw::lookup(stmt, id);
    let mut times = InnerTimes::default();
    if let Some(t0) = t0 {
        times.execute_marshal = traced(t0, Instant::now());
    }
    (row, times)
}

/// One lookup through the middleware on a borrowed connection, through its value layer
/// ([`Middleware::values`]). With `TRACE`, adds the time of each phase to `phases` (the caller
/// accounts for checkout).
pub async fn lookup<const TRACE: bool>(
    mw: &Middleware,
    conn: &mut Conn,
    id: i64,
    phases: &mut PhaseTotals,
) -> Result<BenchRow, MiddlewareError> {
    match mw.values {
        Values::Typed => return lookup_typed::<TRACE>(mw, conn, id, phases).await,
        Values::Prepared => return lookup_prepared::<TRACE>(mw, conn, id, phases).await,
        Values::Generic => {}
    }
    let values = [Value::Integer(id)];
    let t0 = TRACE.then(Instant::now);
    let (rs, inner) = mw
        .run_own(conn, move |c| run_query::<TRACE>(c, SELECT_BY_ID, &values))
        .await?;
    let t1 = TRACE.then(Instant::now);
    let row = value::decode_bench_row(&rs?)?;
    if let (Some(t0), Some(t1)) = (t0, t1) {
        let t2 = Instant::now();
        phases.add(Phase::Prepare, inner.prepare);
        phases.add(Phase::Bind, inner.bind);
        phases.add(Phase::ExecuteMarshal, inner.execute_marshal);
        phases.add(
            Phase::Dispatch,
            inner.hop(traced(t0, t1), INNER_READS, timer_cost()),
        );
        phases.add(Phase::Decode, traced(t1, t2));
    }
    Ok(row)
}

async fn lookup_typed<const TRACE: bool>(
    mw: &Middleware,
    conn: &mut Conn,
    id: i64,
    phases: &mut PhaseTotals,
) -> Result<BenchRow, MiddlewareError> {
    let t0 = TRACE.then(Instant::now);
    let done = mw.run_own(conn, move |c| run_typed::<TRACE>(c, id)).await;
    typed_row(t0, done, true, phases)
}

/// The typed lookup on the statement held with the connection: nothing prepared, nothing
/// looked up in a cache.
async fn lookup_prepared<const TRACE: bool>(
    mw: &Middleware,
    conn: &mut Conn,
    id: i64,
    phases: &mut PhaseTotals,
) -> Result<BenchRow, MiddlewareError> {
    let t0 = TRACE.then(Instant::now);
    let done = mw
        .run_own_statement(conn, SELECT_BY_ID, move |st| run_prepared::<TRACE>(st, id))
        .await;
    typed_row(t0, done, false, phases)
}

/// The row of a typed lookup begun at `t0`, its phases added when traced: prepare (where
/// the call `prepares`: a held statement is not), execute+marshal, and the dispatch hop
/// around them.
fn typed_row(
    t0: Option<Instant>,
    done: Result<(rusqlite::Result<BenchRow>, InnerTimes), MiddlewareError>,
    prepares: bool,
    phases: &mut PhaseTotals,
) -> Result<BenchRow, MiddlewareError> {
    let (row, inner) = done?;
    if let Some(t0) = t0 {
        let t1 = Instant::now();
        let reads = if prepares {
            phases.add(Phase::Prepare, inner.prepare);
            INNER_READS_TYPED
        } else {
            INNER_READS_PREPARED
        };
        phases.add(Phase::ExecuteMarshal, inner.execute_marshal);
        phases.add(
            Phase::Dispatch,
            inner.hop(traced(t0, t1), reads, timer_cost()),
        );
    }
    Ok(row?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{DatasetKey, row};
    use crate::on_rusqlite::ensure;

    /// A dataset of `rows` in a folder of its own (kept while the first value lives) and a
    /// runtime of `workers` threads.
    fn fixture(
        rows: u64,
        workers: usize,
    ) -> (
        tempfile::TempDir,
        crate::dataset::DatasetReady,
        tokio::runtime::Runtime,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let ds = ensure(dir.path(), &DatasetKey::new("mw", rows, 1), &mut |_| {}).unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap();
        (dir, ds, rt)
    }

    #[test]
    fn every_strategy_returns_the_right_rows() {
        let (_dir, ds, rt) = fixture(64, 2);
        let every = every_pool_and_strategy().into_iter().flat_map(|(p, s)| {
            let held = (p == crate::catalog::Pool::Thread).then_some((p, s, Values::Prepared));
            [(p, s, Values::Generic), (p, s, Values::Typed)]
                .into_iter()
                .chain(held)
        });
        for (pool, strategy, values) in every {
            let strategy_on_pool = (pool, strategy, values);
            let mw = Middleware::on_pool(
                ds.path.clone(),
                strategy,
                pool,
                2,
                Duration::from_micros(20),
                &SqliteSettings::default(),
                rt.handle().clone(),
            )
            .unwrap()
            .with_values(values);
            let strategy = strategy_on_pool;
            rt.block_on(async {
                let mut phases = PhaseTotals::default();
                for id in [1, 17, 64] {
                    let mut conn = mw.checkout().await.unwrap();
                    assert_eq!(
                        lookup::<false>(&mw, &mut conn, id, &mut phases)
                            .await
                            .unwrap(),
                        row(id),
                        "{strategy:?}"
                    );
                    assert_eq!(
                        lookup::<true>(&mw, &mut conn, id, &mut phases)
                            .await
                            .unwrap(),
                        row(id),
                        "{strategy:?}"
                    );
                }
                assert!(
                    phases.ns[Phase::ExecuteMarshal.index()] > 0,
                    "{strategy:?} traced execute"
                );
                if values != Values::Generic {
                    // Nothing to convert before the call or decode after it.
                    assert_eq!(phases.ns[Phase::Bind.index()], 0, "{strategy:?}");
                    assert_eq!(phases.ns[Phase::Decode.index()], 0, "{strategy:?}");
                }
                if values == Values::Prepared {
                    // The statement is held: nothing prepared, not even from a cache.
                    assert_eq!(phases.ns[Phase::Prepare.index()], 0, "{strategy:?}");
                } else {
                    assert!(phases.ns[Phase::Prepare.index()] > 0, "{strategy:?}");
                }
                let mut conn = mw.checkout().await.unwrap();
                let err = lookup::<false>(&mw, &mut conn, 65, &mut phases)
                    .await
                    .unwrap_err();
                assert!(err.to_string().contains("no row"), "{strategy:?}: {err}");
            });
        }
    }

    /// On two workers, one task holds a pool's only connection for 300 ms inside a call (so
    /// it holds its worker too) while a second task waits for that connection: how often a
    /// ticker task (every 5 ms) ran meanwhile.
    fn ticks_while_a_task_waits_for_the_connection(
        pool: crate::catalog::Pool,
        strategy: Strategy,
    ) -> u64 {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        let (_dir, ds, rt) = fixture(8, 2);
        let mw = std::sync::Arc::new(
            Middleware::on_pool(
                ds.path.clone(),
                strategy,
                pool,
                1,
                Duration::from_micros(20),
                &SqliteSettings::default(),
                rt.handle().clone(),
            )
            .unwrap(),
        );
        let held = std::sync::Arc::new(AtomicBool::new(false));
        rt.block_on(async {
            let ticker = crate::testing::Ticker::spawn(Duration::from_millis(5), false);
            let (m, h) = (mw.clone(), held.clone());
            let holder = tokio::spawn(async move {
                let mut c = m.checkout().await.unwrap();
                // The middleware's own work runs in place under wait_aside: this sleep holds
                // the worker, as a long statement would.
                m.run_own(&mut c, move |_| {
                    h.store(true, SeqCst);
                    std::thread::sleep(Duration::from_millis(300));
                })
                .await
                .unwrap();
            });
            let (m, h, w) = (mw.clone(), held.clone(), ticker.counting.clone());
            let waiter = tokio::spawn(async move {
                while !h.load(SeqCst) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                w.store(true, SeqCst);
                let mut c = m.checkout().await.unwrap();
                let one = m
                    .run_own(&mut c, |c| {
                        c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))
                    })
                    .await
                    .unwrap()
                    .unwrap();
                w.store(false, SeqCst);
                one
            });
            holder.await.unwrap();
            assert_eq!(waiter.await.unwrap(), 1);
            ticker.ticks()
        })
    }

    #[test]
    fn a_wait_for_a_taken_connection_leaves_the_workers_free_but_inline() {
        use crate::catalog::Pool;
        // pool=none locks its connection while a call runs; r2d2's checkout blocks while none
        // is free. Both waits go to block_in_place under wait_aside and hold the worker inline.
        let pools = if cfg!(feature = "crates") {
            vec![Pool::None, Pool::R2d2]
        } else {
            vec![Pool::None]
        };
        for pool in pools {
            // block_in_place and spawn_blocking run the holder's call and the waiter's wait off
            // the workers too; wait_aside the waiter's wait alone, which is enough.
            for strategy in [
                Strategy::WaitAside,
                Strategy::BlockInPlace,
                Strategy::SpawnBlocking,
            ] {
                let aside = ticks_while_a_task_waits_for_the_connection(pool, strategy);
                // About 60 at most (300 ms at one tick every 5 ms); a loaded machine sees fewer.
                assert!(
                    aside >= 10,
                    "{strategy:?} on {pool:?}: the ticker ran while the task waited: {aside}"
                );
            }
            let inline = ticks_while_a_task_waits_for_the_connection(pool, Strategy::Inline);
            assert!(
                inline <= 2,
                "{pool:?}: inline holds both workers: {inline} ticks"
            );
        }
    }

    #[test]
    fn wait_aside_runs_a_caller_s_closure_aside_and_its_own_statements_in_place() {
        // One worker: while a call sleeps 200 ms, a ticker runs only if the call gave the
        // worker's other tasks away.
        let ticks_during = |own: bool| {
            let (_dir, ds, rt) = fixture(8, 1);
            let mw = Middleware::on_pool(
                ds.path.clone(),
                Strategy::WaitAside,
                crate::catalog::Pool::Slots,
                1,
                Duration::from_micros(20),
                &SqliteSettings::default(),
                rt.handle().clone(),
            )
            .unwrap();
            rt.block_on(async {
                let ticker = crate::testing::Ticker::spawn(Duration::from_millis(5), true);
                tokio::time::sleep(Duration::from_millis(20)).await;
                let before = ticker.ticks();
                // On the worker, as a task's call runs (block_on's own future would not be).
                tokio::spawn(async move {
                    let mut c = mw.checkout().await.unwrap();
                    let sleep = |_: &mut Connection| std::thread::sleep(Duration::from_millis(200));
                    if own {
                        mw.run_own(&mut c, sleep).await.unwrap();
                    } else {
                        mw.call(&mut c, sleep).await.unwrap();
                    }
                })
                .await
                .unwrap();
                ticker.ticks() - before
            })
        };
        let aside = ticks_during(false);
        assert!(
            aside >= 10,
            "a caller's closure ran in block_in_place: {aside} ticks"
        );
        let in_place = ticks_during(true);
        assert!(
            in_place <= 1,
            "the middleware's own work ran in place: {in_place} ticks"
        );
    }

    #[test]
    fn every_pool_applies_the_settings_to_its_connections() {
        let (_dir, ds, rt) = fixture(8, 2);
        let knobs = crate::knobs::resolve(
            &crate::settings::KNOBS,
            &|_| None,
            &[
                ("synchronous".into(), "full".into()),
                ("cache_size".into(), "3000".into()),
                ("mmap_size".into(), "1m".into()),
            ],
        )
        .unwrap();
        let settings = SqliteSettings::from_knobs(&knobs);
        for (pool, strategy) in every_pool_and_strategy() {
            let mw = Middleware::on_pool(
                ds.path.clone(),
                strategy,
                pool,
                2,
                Duration::from_micros(20),
                &settings,
                rt.handle().clone(),
            )
            .unwrap();
            let got = rt.block_on(mw.read_back()).unwrap();
            assert_eq!(got, settings.expected(), "{strategy:?} on {pool:?}");
            // wait_aside's connections wait in a busy handler of their own, which clears
            // SQLite's busy timeout; the others keep rusqlite's 5 s.
            let busy_timeout = rt
                .block_on(async {
                    let mut c = mw.checkout().await?;
                    mw.call(&mut c, |c| {
                        c.query_row("PRAGMA busy_timeout", [], |r| r.get::<_, i64>(0))
                    })
                    .await
                })
                .unwrap()
                .unwrap();
            let expected = if strategy == Strategy::WaitAside {
                0
            } else {
                5000
            };
            assert_eq!(busy_timeout, expected, "{strategy:?} on {pool:?}");
        }
    }

    /// Every strategy on every pool it dispatches on (the matrix the `pool` knob spans).
    fn every_pool_and_strategy() -> Vec<(crate::catalog::Pool, Strategy)> {
        let all: Vec<_> = crate::catalog::Pool::ALL
            .into_iter()
            .flat_map(|p| {
                Strategy::ALL
                    .into_iter()
                    .filter(move |s| p.runs(*s))
                    .map(move |s| (p, s))
            })
            .collect();
        assert_eq!(all.len(), 5 + 4 * 5 + 2, "{all:?}");
        all
    }

    fn thread_middleware(
        ds: &std::path::Path,
        strategy: Strategy,
        settings: &SqliteSettings,
        rt: &tokio::runtime::Runtime,
    ) -> Result<Middleware, MiddlewareError> {
        Middleware::on_pool(
            ds.to_path_buf(),
            strategy,
            crate::catalog::Pool::Thread,
            2,
            Duration::ZERO,
            settings,
            rt.handle().clone(),
        )
    }

    #[test]
    fn the_thread_pool_opens_a_connection_per_thread_not_per_task_or_lookup() {
        let (_dir, ds, rt) = fixture(64, 2);
        for strategy in [Strategy::Inline, Strategy::BlockInPlace] {
            let mw = std::sync::Arc::new(
                thread_middleware(&ds.path, strategy, &SqliteSettings::default(), &rt)
                    .unwrap()
                    .with_values(Values::Prepared),
            );
            // The threads the lookups ran on: a lookup's call runs on the task's thread (in
            // place, or in block_in_place, which keeps the thread), so the task sees it after.
            let threads =
                std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
            let tasks: Vec<_> = (0..16)
                .map(|t| {
                    let (mw, threads) = (mw.clone(), threads.clone());
                    rt.spawn(async move {
                        for i in 0..64 {
                            let id = (i + t) % 64 + 1;
                            let mut conn = mw.checkout().await.unwrap();
                            let mut phases = PhaseTotals::default();
                            let got = lookup::<false>(&mw, &mut conn, id, &mut phases)
                                .await
                                .unwrap();
                            threads.lock().unwrap().insert(std::thread::current().id());
                            assert_eq!(got, row(id));
                            tokio::task::yield_now().await;
                        }
                    })
                })
                .collect();
            rt.block_on(async {
                for t in tasks {
                    t.await.unwrap();
                }
            });
            let opened = mw.thread_pool().unwrap().opened();
            let threads = threads.lock().unwrap().len();
            assert_eq!(opened, threads, "{strategy:?}: one connection a thread");
            if strategy == Strategy::Inline {
                // In place, the lookups run on the runtime's 2 workers alone.
                assert!(threads <= 2, "{strategy:?}: {threads}");
            }
        }
    }

    /// On the thread pool a call runs on the task's own thread in place and in
    /// block_in_place, and on another in spawn_blocking; in place it holds the runtime's only
    /// worker while it blocks, the other two let a second task run meanwhile.
    #[test]
    fn the_thread_pool_reaches_a_connection_as_its_strategy_says() {
        use std::sync::Arc;
        use std::sync::atomic::Ordering;
        let (_dir, ds, rt) = fixture(8, 1);
        for strategy in [
            Strategy::Inline,
            Strategy::BlockInPlace,
            Strategy::SpawnBlocking,
        ] {
            let mw = Arc::new(
                thread_middleware(&ds.path, strategy, &SqliteSettings::default(), &rt).unwrap(),
            );
            let task = rt.spawn(async move {
                let ticker = crate::testing::Ticker::spawn(Duration::from_millis(1), true);
                tokio::time::sleep(Duration::from_millis(20)).await;
                let mut conn = mw.checkout().await.unwrap();
                let here = std::thread::current().id();
                let seen = ticker.ticks.clone();
                let (there, ticked) = mw
                    .call(&mut conn, move |c| {
                        let before = seen.load(Ordering::Relaxed);
                        // A call that blocks its thread, as a lock wait does.
                        std::thread::sleep(Duration::from_millis(100));
                        assert!(c.is_autocommit());
                        (
                            std::thread::current().id(),
                            seen.load(Ordering::Relaxed) - before,
                        )
                    })
                    .await
                    .unwrap();
                drop(ticker);
                (here == there, ticked)
            });
            let (same_thread, ticked) = rt.block_on(task).unwrap();
            match strategy {
                Strategy::Inline => {
                    assert!(same_thread, "{strategy:?}");
                    assert_eq!(ticked, 0, "{strategy:?}: the only worker was held");
                }
                Strategy::BlockInPlace => {
                    assert!(same_thread, "{strategy:?}");
                    assert!(ticked > 0, "{strategy:?}: the other task ran meanwhile");
                }
                _ => {
                    assert!(!same_thread, "{strategy:?}: a blocking thread of its own");
                    assert!(ticked > 0, "{strategy:?}: the other task ran meanwhile");
                }
            }
        }
    }

    #[test]
    fn only_the_thread_pool_holds_a_statement_and_the_knobs_say_so() {
        let (_dir, ds, rt) = fixture(8, 2);
        let slots = Middleware::on_pool(
            ds.path.clone(),
            Strategy::BlockInPlace,
            crate::catalog::Pool::Slots,
            2,
            Duration::ZERO,
            &SqliteSettings::default(),
            rt.handle().clone(),
        )
        .unwrap();
        let err = rt
            .block_on(async {
                let mut conn = slots.checkout().await?;
                slots.call_statement(&mut conn, SELECT_BY_ID, |_| ()).await
            })
            .unwrap_err();
        assert!(err.to_string().contains("only pool=thread"), "{err}");
        // The knobs refuse the same pairing before any bench runs, naming the pool asked.
        let why = crate::catalog::values_mismatch("slots", "prepared", Strategy::BlockInPlace)
            .expect("refused");
        assert!(why.contains("pool=slots is lock-free slots"), "{why}");
        let auto = crate::catalog::values_mismatch("auto", "prepared", Strategy::Inline)
            .expect("auto is deadpool-sqlite for inline");
        assert!(auto.contains("deadpool-sqlite"), "{auto}");
        for s in [
            Strategy::Inline,
            Strategy::SpawnBlocking,
            Strategy::BlockInPlace,
        ] {
            assert_eq!(
                crate::catalog::values_mismatch("thread", "prepared", s),
                None
            );
            for v in ["generic", "typed"] {
                assert_eq!(crate::catalog::values_mismatch("slots", v, s), None);
                assert_eq!(crate::catalog::values_mismatch("thread", v, s), None);
            }
        }
    }

    #[test]
    fn the_thread_pool_is_refused_where_the_file_is_kept_to_one_connection() {
        let dir = tempfile::tempdir().unwrap();
        let ds = ensure(dir.path(), &DatasetKey::new("mw", 8, 1), &mut |_| {}).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let knobs = crate::knobs::resolve(
            &crate::settings::KNOBS,
            &|_| None,
            &[("locking_mode".into(), "exclusive".into())],
        )
        .unwrap();
        let exclusive = SqliteSettings::from_knobs(&knobs);
        let err = thread_middleware(&ds.path, Strategy::BlockInPlace, &exclusive, &rt)
            .err()
            .expect("refused");
        assert!(err.to_string().contains("locking_mode=exclusive"), "{err}");
        assert!(
            thread_middleware(
                &ds.path,
                Strategy::BlockInPlace,
                &SqliteSettings::default(),
                &rt
            )
            .is_ok()
        );
    }

    #[test]
    fn the_hop_is_the_round_trip_less_the_work_and_timer_reads_there() {
        let inner = InnerTimes {
            prepare: 1_000,
            bind: 200,
            execute_marshal: 2_000,
        };
        assert_eq!(inner.hop(10_000, 4, 25), 10_000 - 3_200 - 100);
        assert_eq!(inner.hop(10_000, 3, 30), 10_000 - 3_200 - 90);
        // Never below zero when the timer reads cost more than the gap.
        assert_eq!(inner.hop(3_250, 4, 25), 0);
    }

    #[test]
    fn the_values_knob_names_each_layer() {
        let crate::knobs::KnobKind::Choice { default, choices } = crate::catalog::VALUES.kind
        else {
            panic!("a choice knob")
        };
        assert_eq!(choices, ["generic", "typed", "prepared"]);
        assert_eq!(Values::chosen("generic"), Values::Generic);
        assert_eq!(Values::chosen("typed"), Values::Typed);
        assert_eq!(Values::chosen("prepared"), Values::Prepared);
        for w in choices {
            assert_eq!(Values::chosen(w).word(), *w);
        }
        assert_eq!(Values::chosen(default), Values::default());
    }

    #[test]
    fn a_pool_refuses_a_strategy_that_does_not_dispatch_on_it() {
        let dir = tempfile::tempdir().unwrap();
        let ds = ensure(dir.path(), &DatasetKey::new("mw", 8, 1), &mut |_| {}).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        for pool in [
            crate::catalog::Pool::Bb8,
            crate::catalog::Pool::None,
            crate::catalog::Pool::Slots,
            crate::catalog::Pool::Thread,
        ] {
            let e = Middleware::on_pool(
                ds.path.clone(),
                Strategy::Interact,
                pool,
                2,
                Duration::ZERO,
                &SqliteSettings::default(),
                rt.handle().clone(),
            )
            .err()
            .expect("refused");
            assert!(
                e.to_string().contains("interact does not dispatch on"),
                "{e}"
            );
        }
    }

    #[test]
    fn spin_worker_parks_and_wakes() {
        // With a zero spin budget every hand-off goes through park/unpark and the waker.
        let (_dir, ds, rt) = fixture(8, 1);
        let mw = Middleware::new(
            ds.path,
            Strategy::Spin,
            1,
            Duration::ZERO,
            &SqliteSettings::default(),
            rt.handle().clone(),
        )
        .unwrap();
        rt.block_on(async {
            let mut conn = mw.checkout().await.unwrap();
            for id in 1..=8 {
                std::thread::sleep(Duration::from_millis(1));
                let mut p = PhaseTotals::default();
                assert_eq!(
                    lookup::<false>(&mw, &mut conn, id, &mut p).await.unwrap(),
                    row(id)
                );
            }
            let r: Result<(), _> = mw.call(&mut conn, |_| panic!("boom")).await;
            assert!(matches!(r, Err(MiddlewareError::Dispatch(_))));
            let mut p = PhaseTotals::default();
            assert_eq!(
                lookup::<false>(&mw, &mut conn, 3, &mut p).await.unwrap(),
                row(3),
                "worker survives a panicking job"
            );
        });
    }
}
