//! bench-core's implementation of `async_contention`: every strategy of the middleware and the
//! crates that run rusqlite closures, each database with its own pool (one connection per task), one tokio runtime with `workers`
//! threads for all of them, and the canary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::reach::{Open, Reach};
use super::schema::{self, WRITE_TRANSACTIONS};
use super::{
    DATABASES, DURATION, READ_ROWS, READERS, STORAGE, WORKERS, WRITE_DELAY_MS, WRITE_ROWS, WRITER,
};
use crate::backends::middleware::Middleware;
use crate::backends::raw;
use crate::catalog::{BenchSpec, CatalogError, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::measure::Bench;
use crate::measure::scenario::{Counters, Meter, ScenarioStats, canary};
use crate::protocol::Event;
use crate::settings::SqliteSettings;
use crate::workload::{RunContext, ScenarioRun, Session, Workload};

/// bench-core's `async_contention`.
pub struct Core;

impl Workload for Core {
    fn spec(&self) -> &'static Target {
        super::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        let k = &run.plan.knobs;
        let dir = run
            .cache_dir
            .join(format!("async-contention-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| BenchError::Invalid(format!("cannot create {}: {e}", dir.display())))?;
        let params = Params {
            databases: k.count(&DATABASES) as usize,
            readers: k.count(&READERS) as usize,
            delay: Duration::from_millis(k.count(&WRITE_DELAY_MS)),
            workers: k.count(&WORKERS) as usize,
            duration: Duration::from_secs(k.count(&DURATION)),
            memory: k.word(&STORAGE) == "memory",
            large_writes: (k.word(&WRITER) == "write").then(|| k.count(&WRITE_ROWS)),
            spin: Duration::from_micros(k.count(&SPIN_US)),
            seed: run.plan.target.seed,
            pool: k.word(&crate::catalog::POOL).to_string(),
        };
        let ctx = Ctx {
            dir: Scratch(dir),
            params,
            settings: run.sqlite.clone(),
        };
        if !ctx.params.memory {
            // One seeded file; each database of each bench starts as a copy of it.
            let mut conn = raw::open(&ctx.template(), &ctx.settings)?;
            schema::create(&mut conn, ctx.params.seed)?;
            if ctx.settings.wal() {
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            }
        }
        Ok(Box::new(ctx))
    }
}

#[derive(Debug, Clone)]
struct Params {
    databases: usize,
    readers: usize,
    delay: Duration,
    workers: usize,
    duration: Duration,
    memory: bool,
    /// Rows of each write transaction when the writer does real work instead of sleeping.
    large_writes: Option<u64>,
    spin: Duration,
    seed: u64,
    /// The `pool` knob: the pool under each database's middleware.
    pool: String,
}

impl Params {
    /// Connections per database: one per task.
    fn pool(&self) -> usize {
        self.readers + 1
    }

    fn transactions_per_write(&self) -> u64 {
        self.large_writes.unwrap_or(WRITE_TRANSACTIONS)
    }

    /// The writer's sleep, in sleep mode.
    fn sleep(&self) -> Option<Duration> {
        self.large_writes
            .is_none()
            .then_some(self.delay)
            .filter(|d| !d.is_zero())
    }
}

/// The scenario's folder, removed with everything in it when the run ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Ctx {
    dir: Scratch,
    params: Params,
    settings: SqliteSettings,
}

impl Ctx {
    fn template(&self) -> PathBuf {
        self.dir.0.join("template.sqlite")
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        1
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        if let Subject::Middleware(s) = bench.subject
            && let Some(why) = crate::catalog::pool_mismatch(&self.params.pool, s)
        {
            return Some(why);
        }
        #[cfg(feature = "crates")]
        if bench.subject == Subject::Crate(crate::catalog::Shipped::SqlMiddleware)
            && self.params.pool() > crate::backends::crates::SQL_MIDDLEWARE_POOL
        {
            return Some(format!(
                "sql-middleware's pool holds {} connections a database, and {} readers and a writer each hold one (lower readers)",
                crate::backends::crates::SQL_MIDDLEWARE_POOL,
                self.params.readers
            ));
        }
        crate::settings::skip_reason(bench.subject, self.params.pool(), &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        Err(CatalogError::no_implementation(super::spec(), spec, "a scenario, not sampled").into())
    }

    fn scenario(&self, spec: &BenchSpec) -> Result<Box<dyn ScenarioRun + '_>, BenchError> {
        match spec.subject {
            Subject::Middleware(strategy) => {
                // The middleware names the pool it runs on.
                let pool = crate::catalog::Pool::chosen(&self.params.pool, strategy);
                let backend = pool.label().to_string();
                Ok(Box::new(Prepared::new(self, spec, backend, |o| {
                    Ok(Middleware::on_pool(
                        o.path.to_path_buf(),
                        strategy,
                        pool,
                        o.connections,
                        self.params.spin,
                        o.settings,
                        o.rt.handle().clone(),
                    )?)
                })?))
            }
            #[cfg(feature = "crates")]
            Subject::Crate(krate) => {
                use crate::backends::crates as c;
                use crate::catalog::Shipped;
                // A crate names itself.
                let backend = spec.backend().to_string();
                match krate {
                    Shipped::TokioRusqlite => {
                        Ok(Box::new(Prepared::new(self, spec, backend, |o| {
                            o.rt.block_on(c::TokioRusqlite::open(o.path, o.settings, o.connections))
                        })?))
                    }
                    Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => {
                        Ok(Box::new(Prepared::new(self, spec, backend, |o| {
                            c::R2d2::open(o.path, o.settings, o.connections, c::hop(krate))
                        })?))
                    }
                    Shipped::SqlMiddleware => {
                        Ok(Box::new(Prepared::new(self, spec, backend, |o| {
                            o.rt.block_on(c::SqlMiddleware::open(o.path, o.settings))
                        })?))
                    }
                    _ => Err(c::elsewhere(krate)),
                }
            }
            _ => {
                Err(CatalogError::no_implementation(super::spec(), spec, "not a core bench").into())
            }
        }
    }
}

/// One database of a running scenario.
struct Db<R: Reach> {
    mw: Arc<R>,
    /// Where it lives: a file, or a memdb URI.
    path: PathBuf,
    /// For memdb: a connection that keeps the database alive and counts its rows at the end.
    keeper: Option<rusqlite::Connection>,
    /// Writes this database's writer finished.
    writes: Arc<AtomicU64>,
}

struct Prepared<'a, R: Reach> {
    ctx: &'a Ctx,
    /// The bench's name and backend, for its events and its backend column.
    bench: &'static str,
    backend: String,
    rt: tokio::runtime::Runtime,
    dbs: Vec<Db<R>>,
    settings: BTreeMap<String, String>,
    /// One write, alone, on a quiet database: what the writer needs besides its sleep.
    write_alone: Duration,
}

/// Raises the soft limit of open files to the hard one, and says so if even that is too low.
fn ensure_open_files(needed: u64) -> Result<(), BenchError> {
    // SAFETY: get/setrlimit read and write a plain struct we own.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(());
    }
    if (lim.rlim_cur as u64) < needed && lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
    if (lim.rlim_cur as u64) < needed {
        return Err(BenchError::Invalid(format!(
            "this scenario opens about {needed} files (databases x connections x 3 for WAL), more than the open-file limit {} (raise it with ulimit -n, or lower databases or readers)",
            lim.rlim_cur
        )));
    }
    Ok(())
}

impl<'a, R: Reach> Prepared<'a, R> {
    /// The bench's databases, each opened by `open`, on a runtime of `workers` threads.
    fn new(
        ctx: &'a Ctx,
        spec: &BenchSpec,
        backend: String,
        open: impl Fn(&Open<'_>) -> Result<R, BenchError>,
    ) -> Result<Self, BenchError> {
        let bench = spec.name;
        let p = &ctx.params;
        ensure_open_files((p.databases * p.pool() * 3 + 256) as u64)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(p.workers)
            .max_blocking_threads((p.databases * p.pool() + 64).max(512))
            .enable_all()
            .build()
            .map_err(|e| BenchError::Other(format!("starting the measured runtime: {e}")))?;
        let mut dbs = Vec::with_capacity(p.databases);
        for i in 0..p.databases {
            let (path, keeper) = if p.memory {
                let uri = PathBuf::from(format!(
                    "file:/benchscope-{}-{}-{i}?vfs=memdb",
                    std::process::id(),
                    bench.replace('/', "_")
                ));
                let mut keeper = raw::open(&uri, &ctx.settings)?;
                schema::create(&mut keeper, p.seed)?;
                (uri, Some(keeper))
            } else {
                let path = ctx
                    .dir
                    .0
                    .join(format!("{}-{i}.sqlite", bench.replace('/', "_")));
                crate::dataset::remove_db_files(&path);
                std::fs::copy(ctx.template(), &path)?;
                (path, None)
            };
            let mw = open(&Open {
                path: &path,
                connections: p.pool(),
                settings: &ctx.settings,
                rt: &rt,
            })?;
            dbs.push(Db {
                mw: Arc::new(mw),
                path,
                keeper,
                writes: Arc::new(AtomicU64::new(0)),
            });
        }
        let settings = rt.block_on(dbs[0].mw.read_back())?;
        let write_alone = calibrate(ctx)?;
        Ok(Prepared {
            ctx,
            bench,
            backend,
            rt,
            dbs,
            settings,
            write_alone,
        })
    }

    /// One writer's cycle when nothing holds it up: its sleep plus the time the write itself
    /// takes on a quiet database.
    fn cycle(&self) -> Duration {
        self.ctx.params.sleep().unwrap_or_default() + self.write_alone
    }
}

/// The median time of one write, alone, on a fresh copy of the database.
fn calibrate(ctx: &Ctx) -> Result<Duration, BenchError> {
    let p = &ctx.params;
    let path = ctx.dir.0.join("calibrate.sqlite");
    let conn = if p.memory {
        let mut c = raw::open(
            Path::new("file:/benchscope-calibrate?vfs=memdb"),
            &ctx.settings,
        )?;
        if schema::count_blocks(&c).is_err() {
            schema::create(&mut c, p.seed)?;
        }
        c
    } else {
        crate::dataset::remove_db_files(&path);
        std::fs::copy(ctx.template(), &path)?;
        raw::open(&path, &ctx.settings)?
    };
    let mut times: Vec<Duration> = (0..3)
        .map(|i| {
            let b = schema::written_block(1_000_000 + i, p.transactions_per_write());
            let t = Instant::now();
            schema::insert_block(&conn, &b).map(|_| t.elapsed())
        })
        .collect::<Result<_, _>>()?;
    drop(conn);
    crate::dataset::remove_db_files(&path);
    times.sort();
    Ok(times[1])
}

/// The first error any task met; the scenario fails with it.
type FirstError = Arc<Mutex<Option<String>>>;

fn keep_first(e: &FirstError, message: String) {
    if let Ok(mut slot) = e.lock() {
        slot.get_or_insert(message);
    }
}

impl<R: Reach> ScenarioRun for Prepared<'_, R> {
    fn settings(&self) -> BTreeMap<String, String> {
        self.settings.clone()
    }

    fn backend(&self) -> Option<String> {
        Some(self.backend.clone())
    }

    fn run(self: Box<Self>, emit: &mut dyn FnMut(Event)) -> Result<ScenarioStats, BenchError> {
        let this = *self;
        let p = this.ctx.params.clone();
        let bench = this.bench.to_string();
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let failed: FirstError = Arc::new(Mutex::new(None));
        let mut meter = Meter::start(p.databases as u64, this.cycle());
        let mut tasks = vec![this.rt.spawn(canary(counters.clone(), stop.clone()))];
        for (d, db) in this.dbs.iter().enumerate() {
            tasks.push(this.rt.spawn(writer(
                db.mw.clone(),
                d as u64,
                p.clone(),
                db.writes.clone(),
                counters.clone(),
                stop.clone(),
                failed.clone(),
            )));
            for _ in 0..p.readers {
                tasks.push(this.rt.spawn(reader(
                    db.mw.clone(),
                    counters.clone(),
                    stop.clone(),
                    failed.clone(),
                )));
            }
        }
        // The runner's own thread keeps time: it is not one of the measured runtime's.
        let end = Instant::now() + p.duration;
        let mut next = Instant::now() + Duration::from_secs(1);
        loop {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep(next.min(end).saturating_duration_since(now));
            if Instant::now() >= next {
                emit(Event::Tick {
                    bench: bench.clone(),
                    window: meter.window(&counters),
                });
                next += Duration::from_secs(1);
            }
            if failed.lock().map(|f| f.is_some()).unwrap_or(false) {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let stats = meter.finish(&counters);
        emit(Event::Tick {
            bench: bench.clone(),
            window: meter.window(&counters),
        });
        // Tasks stop at their next await; blocked ones finish what they hold first.
        for t in &tasks {
            t.abort();
        }
        let settle = Instant::now() + p.sleep().unwrap_or_default() + Duration::from_secs(5);
        while tasks.iter().any(|t| !t.is_finished()) && Instant::now() < settle {
            std::thread::sleep(Duration::from_millis(10));
        }
        let checked = check_writes(&this.dbs);
        let Prepared { dbs, rt, .. } = this;
        {
            let _guard = rt.enter();
            drop(dbs);
        }
        rt.shutdown_timeout(Duration::from_secs(2));
        if let Some(e) = failed.lock().ok().and_then(|mut f| f.take()) {
            return Err(BenchError::Other(e));
        }
        checked?;
        Ok(stats)
    }
}

/// The work check: every database holds its seed blocks plus the writes its writer counted
/// (one more when the last write committed as its task was stopped).
fn check_writes<R: Reach>(dbs: &[Db<R>]) -> Result<(), BenchError> {
    for (i, db) in dbs.iter().enumerate() {
        let count = match &db.keeper {
            Some(k) => schema::count_blocks(k)?,
            None => {
                let c = rusqlite::Connection::open(&db.path)?;
                c.busy_timeout(Duration::from_secs(5))?;
                schema::count_blocks(&c)?
            }
        };
        let done = db.writes.load(Ordering::Relaxed);
        let written = count.saturating_sub(schema::SEED_BLOCKS);
        if written < done || written > done + 1 {
            return Err(BenchError::Work {
                what: format!("blocks written to database {i}"),
                expected: done,
                got: written,
            });
        }
    }
    Ok(())
}

/// One database's writer: holds its connection, and in a loop sleeps the delay (where the
/// strategy runs the call: the runtime's thread for inline) and writes a block with its
/// transactions in one transaction.
async fn writer<R: Reach>(
    mw: Arc<R>,
    db: u64,
    p: Params,
    writes: Arc<AtomicU64>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    failed: FirstError,
) {
    let result: Result<(), BenchError> = async {
        let mut conn = mw.hold().await?;
        let mut n = db * 10_000_000;
        while !stop.load(Ordering::Relaxed) {
            n += 1;
            let block = schema::written_block(n, p.transactions_per_write());
            let sleep = p.sleep();
            let written = mw
                .run(&mut conn, move |c| {
                    if let Some(d) = sleep {
                        std::thread::sleep(d);
                    }
                    schema::insert_block(c, &block)
                })
                .await?;
            if written != p.transactions_per_write() {
                return Err(BenchError::Work {
                    what: "transactions of a write".into(),
                    expected: p.transactions_per_write(),
                    got: written,
                });
            }
            writes.fetch_add(1, Ordering::Relaxed);
            counters.write();
        }
        Ok(())
    }
    .await;
    if let Err(e) = result {
        keep_first(&failed, format!("writer: {e}"));
    }
}

/// One reader: holds its connection, reads the JOIN, pauses 1 ms, in a loop.
async fn reader<R: Reach>(
    mw: Arc<R>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    failed: FirstError,
) {
    let result: Result<(), BenchError> = async {
        let mut conn = mw.hold().await?;
        while !stop.load(Ordering::Relaxed) {
            let t = Instant::now();
            let rows = mw.run(&mut conn, schema::read).await?;
            if rows != READ_ROWS {
                return Err(BenchError::Work {
                    what: "rows of a read".into(),
                    expected: READ_ROWS,
                    got: rows,
                });
            }
            counters.read(t.elapsed().as_nanos() as u64);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(())
    }
    .await;
    if let Err(e) = result {
        keep_first(&failed, format!("reader: {e}"));
    }
}
