//! async_contention on rusqlite connections, whichever rusqlite links them: the schema's
//! statements, a bench's databases on one runtime of `workers` threads, the writers, the
//! readers, the canary and the work check. bench-core runs it through the middleware's
//! strategies and the crates on its rusqlite; harness-async-sqlite through async-sqlite's
//! clients on its own. Only how a task reaches its connection ([`Reach`]) differs.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, POOL, SPIN_US};
use bench_core::measure::scenario::{Counters, Meter, ScenarioStats, canary, ensure_open_files};
use bench_core::protocol::Event;
use bench_core::settings::SqliteSettings;
use bench_core::workload::{RunContext, ScenarioRun};
use bench_core::workloads::async_contention::schema::{
    self, Block, COUNT_BLOCKS, CREATE, INSERT_BLOCK, INSERT_TRANSACTION, SEED_BLOCKS,
    WRITE_TRANSACTIONS,
};
use bench_core::workloads::async_contention::{
    DATABASES, DURATION, READ, READ_ROWS, READERS, STORAGE, WORKERS, WRITE_DELAY_MS, WRITE_ROWS,
    WRITER,
};
use rusqlite::{Connection, params};

use super::{configure, err, flags};

/// A database as the scenario's tasks reach it.
pub trait Reach: Send + Sync + 'static {
    type Held: Send + 'static;
    /// The connection a task holds for the whole scenario.
    fn hold(&self) -> impl Future<Output = Result<Self::Held, BenchError>> + Send;
    /// `f` run on the held connection, where this way runs queries.
    fn run<T: Send + 'static>(
        &self,
        held: &mut Self::Held,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> impl Future<Output = Result<T, BenchError>> + Send;
    /// A reader's query ([`read`]) on the held connection: as `run` runs a closure, unless
    /// this way runs its own statements otherwise (the middleware's `wait_aside`, in place).
    fn read_recent(
        &self,
        held: &mut Self::Held,
    ) -> impl Future<Output = Result<u64, BenchError>> + Send {
        self.run(held, read)
    }
    /// What its connections run with.
    fn read_back(
        &self,
    ) -> impl Future<Output = Result<BTreeMap<String, String>, BenchError>> + Send;
}

/// What a database is opened with: its path (or memdb URI), the connections it needs (one per
/// task), the run's settings and the runtime its tasks run on.
pub struct Open<'a> {
    pub path: &'a Path,
    pub connections: usize,
    pub settings: &'a SqliteSettings,
    pub rt: &'a tokio::runtime::Runtime,
}

/// Creates the tables and the seed on an empty database, in one transaction.
pub fn create(conn: &mut Connection, seed: u64) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute_batch(CREATE)?;
    for b in schema::seed_blocks(seed) {
        insert_in(&tx, &b)?;
    }
    tx.commit()
}

fn insert_in(conn: &Connection, b: &Block) -> rusqlite::Result<()> {
    conn.prepare_cached(INSERT_BLOCK)?.execute(params![
        b.hash,
        b.parent_hash,
        b.timestamp,
        b.data
    ])?;
    let id = conn.last_insert_rowid();
    let mut stmt = conn.prepare_cached(INSERT_TRANSACTION)?;
    for (from, to, amount) in &b.transactions {
        stmt.execute(params![id, from, to, amount])?;
    }
    Ok(())
}

/// A writer's write: one block and its transactions in one transaction. Returns the
/// transactions written.
pub fn insert_block(conn: &Connection, b: &Block) -> rusqlite::Result<u64> {
    let tx = conn.unchecked_transaction()?;
    insert_in(&tx, b)?;
    tx.commit()?;
    Ok(b.transactions.len() as u64)
}

/// A reader's read: the rows of the JOIN, on the cached statement. Returns how many.
pub fn read(conn: &Connection) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare_cached(READ)?;
    let mut rows = stmt.query([])?;
    let mut n = 0u64;
    while let Some(r) = rows.next()? {
        std::hint::black_box(r.get_ref(5)?);
        n += 1;
    }
    Ok(n)
}

pub fn count_blocks(conn: &Connection) -> rusqlite::Result<u64> {
    conn.query_row(COUNT_BLOCKS, [], |r| r.get::<_, i64>(0))
        .map(|n| n as u64)
}

/// A connection opened as every rusqlite bench opens one.
fn open(path: &Path, s: &SqliteSettings) -> Result<Connection, BenchError> {
    let conn = Connection::open_with_flags(path, flags(s)).map_err(err)?;
    configure(&conn, s).map_err(err)?;
    Ok(conn)
}

/// The run's knobs, as the scenario uses them.
#[derive(Debug, Clone)]
pub struct Params {
    pub databases: usize,
    pub readers: usize,
    pub delay: Duration,
    pub workers: usize,
    pub duration: Duration,
    pub memory: bool,
    /// Rows of each write transaction when the writer does real work instead of sleeping.
    pub large_writes: Option<u64>,
    pub spin: Duration,
    pub seed: u64,
    /// The `pool` knob: the pool under each database's middleware.
    pub pool: String,
}

impl Params {
    /// Connections per database: one per task.
    pub fn pool(&self) -> usize {
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

/// One run's scenario: its knobs, settings and scratch folder with the seeded template.
pub struct Setup {
    dir: Scratch,
    pub params: Params,
    pub settings: SqliteSettings,
}

impl Setup {
    /// The run's folder (named for `harness`, so that two harnesses never share one) and,
    /// for file storage, the seeded template every database of every bench starts from.
    pub fn open(run: &RunContext<'_>, harness: &str) -> Result<Setup, BenchError> {
        let k = &run.plan.knobs;
        let dir = run
            .cache_dir
            .join(format!("async-contention-{harness}-{}", std::process::id()));
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
            pool: k.word(&POOL).to_string(),
        };
        let setup = Setup {
            dir: Scratch(dir),
            params,
            settings: run.sqlite.clone(),
        };
        if !setup.params.memory {
            let mut conn = open(&setup.template(), &setup.settings)?;
            create(&mut conn, setup.params.seed).map_err(err)?;
            if setup.settings.wal() {
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .map_err(err)?;
            }
        }
        Ok(setup)
    }

    fn template(&self) -> PathBuf {
        self.dir.0.join("template.sqlite")
    }

    /// A fresh copy of the template at `path` (whatever was there, and its journals, removed).
    fn copy_to(&self, path: &Path) -> Result<(), BenchError> {
        bench_core::dataset::remove_db_files(path);
        bench_core::opener::copy(
            &self.template(),
            path,
            "",
            bench_core::opener::Kind::Database,
        )?;
        Ok(())
    }
}

/// One database of a running scenario.
struct Db<R: Reach> {
    mw: Arc<R>,
    /// Where it lives: a file, or a memdb URI.
    path: PathBuf,
    /// For memdb: a connection that keeps the database alive and counts its rows at the end.
    keeper: Option<Connection>,
    /// Writes this database's writer finished.
    writes: Arc<AtomicU64>,
}

/// A bench's databases, opened and ready to run.
pub struct Prepared<'a, R: Reach> {
    setup: &'a Setup,
    /// The bench's name and backend, for its events and its backend column.
    bench: &'static str,
    backend: String,
    rt: tokio::runtime::Runtime,
    dbs: Vec<Db<R>>,
    settings: BTreeMap<String, String>,
    /// One write, alone, on a quiet database: what the writer needs besides its sleep.
    write_alone: Duration,
}

impl<'a, R: Reach> Prepared<'a, R> {
    /// The bench's databases, each opened by `open`, on a runtime of `workers` threads.
    pub fn new(
        setup: &'a Setup,
        spec: &BenchSpec,
        backend: String,
        open_db: impl Fn(&Open<'_>) -> Result<R, BenchError>,
    ) -> Result<Self, BenchError> {
        let bench = spec.name;
        let p = &setup.params;
        let blocking = (p.databases * p.pool() + 64).max(512);
        // The thread pool opens a connection a database on each thread that reaches it: at
        // worst every thread the runtime may run.
        let thread_pool = matches!(spec.subject, bench_core::catalog::Subject::Middleware(s)
            if bench_core::catalog::Pool::chosen(&p.pool, s) == bench_core::catalog::Pool::Thread);
        let (per_db, what) = if thread_pool {
            (
                p.workers + blocking,
                "databases x the runtime's threads x 3 for WAL: pool=thread opens a connection a database on every thread that reaches it",
            )
        } else {
            (p.pool(), "databases x connections x 3 for WAL")
        };
        ensure_open_files((p.databases * per_db * 3 + 256) as u64, what)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(p.workers)
            .max_blocking_threads(blocking)
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
                let mut keeper = open(&uri, &setup.settings)?;
                create(&mut keeper, p.seed).map_err(err)?;
                (uri, Some(keeper))
            } else {
                let path = setup
                    .dir
                    .0
                    .join(format!("{}-{i}.sqlite", bench.replace('/', "_")));
                setup.copy_to(&path)?;
                (path, None)
            };
            let mw = open_db(&Open {
                path: &path,
                connections: p.pool(),
                settings: &setup.settings,
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
        let write_alone = calibrate(setup)?;
        Ok(Prepared {
            setup,
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
        self.setup.params.sleep().unwrap_or_default() + self.write_alone
    }
}

/// The median time of one write, alone, on a fresh copy of the database.
fn calibrate(setup: &Setup) -> Result<Duration, BenchError> {
    let p = &setup.params;
    let path = setup.dir.0.join("calibrate.sqlite");
    let conn = if p.memory {
        let mut c = open(
            Path::new("file:/benchscope-calibrate?vfs=memdb"),
            &setup.settings,
        )?;
        if count_blocks(&c).is_err() {
            create(&mut c, p.seed).map_err(err)?;
        }
        c
    } else {
        setup.copy_to(&path)?;
        open(&path, &setup.settings)?
    };
    let mut times: Vec<Duration> = (0..3)
        .map(|i| {
            let b = schema::written_block(1_000_000 + i, p.transactions_per_write());
            let t = Instant::now();
            insert_block(&conn, &b).map(|_| t.elapsed())
        })
        .collect::<Result<_, _>>()
        .map_err(err)?;
    drop(conn);
    bench_core::dataset::remove_db_files(&path);
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
        let p = this.setup.params.clone();
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
            Some(k) => count_blocks(k).map_err(err)?,
            None => {
                let c = Connection::open(&db.path).map_err(err)?;
                c.busy_timeout(Duration::from_secs(5)).map_err(err)?;
                count_blocks(&c).map_err(err)?
            }
        };
        let done = db.writes.load(Ordering::Relaxed);
        let written = count.saturating_sub(SEED_BLOCKS);
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
                    insert_block(c, &block)
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
            let rows = mw.read_recent(&mut conn).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::workloads::async_contention::schema::{
        SEED_TRANSACTIONS_PER_BLOCK, seed_blocks, written_block,
    };

    #[test]
    fn the_seed_is_fixed_and_reads_see_fifty_rows() {
        assert_eq!(seed_blocks(1), seed_blocks(1));
        assert_ne!(seed_blocks(1), seed_blocks(2));
        let mut c = Connection::open_in_memory().unwrap();
        create(&mut c, 7).unwrap();
        assert_eq!(count_blocks(&c).unwrap(), SEED_BLOCKS);
        assert_eq!(read(&c).unwrap(), READ_ROWS);
        let n = insert_block(&c, &written_block(1, WRITE_TRANSACTIONS)).unwrap();
        assert_eq!(n, WRITE_TRANSACTIONS);
        assert_eq!(count_blocks(&c).unwrap(), SEED_BLOCKS + 1);
        let txs: i64 = c
            .query_row("SELECT count(*) FROM transactions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(txs as u64, SEED_BLOCKS * SEED_TRANSACTIONS_PER_BLOCK + 3);
    }
}
