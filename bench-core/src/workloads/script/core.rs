//! bench-core's `script`: the scripts replayed through rusqlite (a thread and a connection per
//! client) and through the middleware path per strategy (a task per client on a pool of
//! `clients` connections, one checkout per transaction, one dispatch per statement).
//!
//! Each bench starts from the same database: the user's file is copied once into the cache
//! (see [`crate::script::db`]), and a script that writes runs each bench on a fresh copy of
//! that copy. Every client replays its own seeded stream, so two benches send the same
//! statements with the same values; what they return is hashed per transaction and compared.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::backends::middleware::Middleware;
use crate::catalog::Pool;
use crate::catalog::{BenchSpec, CatalogError, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::measure::trace::ns_between;
use crate::measure::{Bench, IterFn, Iteration};
use crate::protocol::{DatasetStatus, Event};
use crate::script::replay::{ClientAcc, Exec, Replay, describe};
use crate::script::{Client, Kind, Step};
use crate::settings::SqliteSettings;
use crate::workload::{RunContext, Session, Workload};

use super::paths::*;
use crate::catalog::POOL;
use crate::on_rusqlite::script::{classify, exec_statement, rollback};

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
        let mut mix = super::check_inputs(&run.script)?;
        let db = run.script.db.clone().expect("checked");
        let dir = run.scratch_dir()?;
        if super::needs_init(&db)? {
            let init = run.script.init.as_ref().expect("checked");
            emit(Event::Dataset {
                status: DatasetStatus::Building,
                rows: 0,
                path: db.display().to_string(),
                build_ms: None,
            });
            crate::script::db::init(&db, init, &run.cache_dir)?;
        }
        let started = Instant::now();
        let mode = crate::script::db::SnapshotMode::for_journal(&run.sqlite.journal_mode);
        let (snapshot, sha256) = crate::script::db::snapshot(&db, &run.cache_dir, mode)?;
        // SQLite judges every statement on the snapshot before anything runs.
        crate::script::judge::judge(&snapshot, &mut mix)
            .map_err(|e| BenchError::Invalid(e.to_string()))?;
        emit(Event::Dataset {
            status: DatasetStatus::Built,
            rows: 0,
            path: snapshot.display().to_string(),
            build_ms: Some(started.elapsed().as_secs_f64() * 1000.0),
        });
        let k = &run.plan.knobs;
        let mut settings = run.sqlite.clone();
        // Scripts that only read share the snapshot, which every backend opens read-only: a
        // statement judged wrongly fails instead of changing what later runs read. In exclusive
        // locking mode a read-only connection cannot read a WAL file (SQLite keeps its index
        // in the connection's memory, which it must write): there each bench runs on a copy of
        // its own, as for a script that writes.
        settings.read_only = mix.read_only() && settings.locking_mode != "exclusive";
        Ok(Box::new(Ctx {
            replay: super::replay_for(run, mix)?,
            pool: k.word(&POOL).to_string(),
            postgres_url: run.postgres_url.clone(),
            pg_schemas: RefCell::new(Vec::new()),
            snapshot,
            original: db,
            sha256,
            dir,
            spin: Duration::from_micros(k.count(&SPIN_US)),
            settings,
            rt: crate::measure::drive::runtime(None)?,
            working: RefCell::new(Vec::new()),
        }))
    }
}

struct Ctx {
    replay: Replay,
    /// The `pool` knob: the pool under the middleware path.
    pool: String,
    /// The PostgreSQL server's URL, for the tokio-postgres bench.
    postgres_url: Option<crate::secret::PgUrl>,
    /// The schemas made on it for this run's benches, dropped when it ends.
    pg_schemas: RefCell<Vec<String>>,
    snapshot: PathBuf,
    original: PathBuf,
    sha256: String,
    dir: PathBuf,
    spin: Duration,
    settings: SqliteSettings,
    rt: tokio::runtime::Runtime,
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

/// One client's share of a sample on its own connection.
fn client_sync(
    exec: &Exec,
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
                        let r =
                            exec_statement(conn, &exec.sql[s.index], s.kind, v).map_err(classify);
                        if let Err(f) = exec.took(s.index, t0, r, &mut done) {
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
            match exec.after_failure(f, acc, &mut attempts)? {
                Some(wait) => std::thread::sleep(wait),
                None => break,
            }
        }
    }
    Ok(())
}

impl Ctx {
    /// The database a bench's SQLite connections open, named through the jail of its folder
    /// (a `file:` URI, which every binding here opens by name): the snapshot itself, read-only,
    /// when the scripts only read, else a fresh copy of it in the run's folder.
    fn database_for(&self, bench: &str) -> Result<PathBuf, BenchError> {
        if self.settings.read_only {
            return crate::scratch::jailed_uri(&self.snapshot, true);
        }
        crate::scratch::jailed_uri(&self.own_copy(bench)?, false)
    }

    /// A fresh copy of the snapshot in the run's folder, for `bench` alone (by plain path:
    /// turso, which is no SQLite, opens it by its own means).
    fn own_copy(&self, bench: &str) -> Result<PathBuf, BenchError> {
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

    /// Statement `index` alone on rusqlite (a `stmt/FILE:LINE` micro-bench): each sample
    /// runs it `transactions` times on one connection with values drawn as the scripts draw
    /// them (before the sample's clock starts); a write runs inside a transaction whose
    /// BEGIN and COMMIT are outside the clock, so that the figure is the statement's, as
    /// the statements table's is inside a script's transaction.
    fn statement_bench(&self, name: &str, index: usize) -> Result<Bench<'_>, BenchError> {
        let exec = &self.replay.exec;
        let Some(kind) = exec
            .mix
            .statements()
            .find(|s| s.index == index)
            .map(|s| s.kind)
        else {
            return Err(BenchError::Invalid(format!(
                "{name}: no such statement in the scripts"
            )));
        };
        let path = if kind == Kind::Write {
            crate::scratch::jailed_uri(&self.own_copy(name)?, false)?
        } else {
            self.database_for(name)?
        };
        let mut settings = self.settings.clone();
        settings.read_only &= kind != Kind::Write;
        let conn = crate::backends::raw::open(&path, &settings)?;
        let settings = crate::backends::raw::read_back(&conn);
        let mut client = Client::new(exec.mix.clone(), self.replay.seed, 0);
        let n = self.replay.per_pass;
        let sql = exec.sql[index].clone();
        let mut steps = Vec::new();
        let label = name.to_string();
        let iter: IterFn<'_> = Box::new(move |hist| {
            // This sample's values: the statement's step of the next transactions that run it.
            let mut values = Vec::with_capacity(n as usize);
            let mut draws = 0u64;
            while (values.len() as u64) < n {
                client.next(&mut steps).map_err(BenchError::Invalid)?;
                draws += 1;
                if draws > n.saturating_mul(1000).max(10_000) {
                    return Err(BenchError::Invalid(format!(
                        "{label}: its script is drawn too seldom in the mix to time it alone"
                    )));
                }
                values.extend(steps.iter().filter_map(|st| match st {
                    Step::Sql(s, v) if s.index == index => Some(v.clone()),
                    _ => None,
                }));
            }
            values.truncate(n as usize);
            let write = kind == Kind::Write;
            if write {
                conn.execute_batch("BEGIN")?;
            }
            let mut rows = 0u64;
            let start = Instant::now();
            for v in &values {
                let t0 = Instant::now();
                let out = exec_statement(&conn, &sql, kind, v).map_err(|e| {
                    BenchError::Invalid(crate::script::replay::describe(&exec.mix, index, e))
                })?;
                hist.record(ns_between(t0, Instant::now()));
                rows += out.rows + out.changed;
            }
            let elapsed = ns_between(start, Instant::now());
            if write {
                conn.execute_batch("COMMIT")?;
            }
            std::hint::black_box(rows);
            Ok(Iteration::new(elapsed, n))
        });
        Ok(Bench::new(iter, n, "statements run in the sample").with_settings(settings))
    }

    fn rusqlite_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        let path = self.database_for(name)?;
        let mut conns = (0..self.replay.clients)
            .map(|_| crate::backends::raw::open(&path, &self.settings))
            .collect::<Result<Vec<_>, _>>()?;
        let settings = crate::backends::raw::read_back(&conns[0]);
        let mut clients = self.replay.clients_of_run();
        let acc = self.replay.new_acc(name);
        let shares = crate::script::replay::shares(self.replay.per_pass, self.replay.clients);
        let exec = &*self.replay.exec;
        let iter: IterFn<'_> = Box::new(move |hist| {
            let mut a = acc.borrow_mut();
            let start = Instant::now();
            if shares.len() == 1 {
                client_sync(
                    exec,
                    &mut conns[0],
                    &mut clients[0],
                    &mut a.clients[0],
                    shares[0],
                )?;
            } else {
                std::thread::scope(|s| {
                    let handles: Vec<_> = conns
                        .iter_mut()
                        .zip(clients.iter_mut())
                        .zip(a.clients.iter_mut())
                        .zip(shares.iter())
                        .map(|(((c, cl), ac), n)| s.spawn(move || client_sync(exec, c, cl, ac, *n)))
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
            Ok(Iteration::new(
                elapsed,
                crate::script::replay::sample_done(&mut a, hist),
            ))
        });
        Ok(
            Bench::new(iter, self.replay.per_pass, crate::script::replay::WORK)
                .with_settings(settings),
        )
    }

    fn middleware_bench(
        &self,
        name: &str,
        strategy: crate::catalog::Strategy,
    ) -> Result<Bench<'_>, BenchError> {
        let pool = Pool::chosen(&self.pool, strategy);
        let mw = Middleware::on_pool(
            self.database_for(name)?,
            strategy,
            pool,
            self.replay.clients,
            self.spin,
            &self.settings,
            self.rt.handle().clone(),
        )?;
        let settings = self.rt.block_on(mw.read_back())?;
        Ok(self
            .replay
            .async_bench(&self.rt, name, OnMiddleware(mw), settings)?
            .with_backend(pool.label()))
    }

    #[cfg(feature = "crates")]
    fn tokio_rusqlite_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        use crate::backends::crates::TokioRusqlite;
        let path = self.database_for(name)?;
        let crate_path = self.rt.block_on(TokioRusqlite::open(
            &path,
            &self.settings,
            self.replay.clients,
        ))?;
        let settings = self.rt.block_on(crate_path.read_back())?;
        self.replay
            .async_bench(&self.rt, name, OnTokioRusqlite(crate_path), settings)
    }

    #[cfg(feature = "crates")]
    fn r2d2_bench(
        &self,
        name: &str,
        krate: crate::catalog::Shipped,
    ) -> Result<Bench<'_>, BenchError> {
        use crate::backends::crates as c;
        let path = self.database_for(name)?;
        let pool = c::R2d2::open(&path, &self.settings, self.replay.clients, c::hop(krate))?;
        let settings = pool.read_back()?;
        self.replay
            .async_bench(&self.rt, name, OnR2d2(pool), settings)
    }

    #[cfg(feature = "crates")]
    fn sql_middleware_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        use crate::backends::crates::SqlMiddleware;
        // sql-middleware as shipped puts every database it opens in WAL mode (its pool runs
        // `PRAGMA journal_mode = WAL` on its first connection), which a read-only connection
        // cannot do outside WAL mode: there it runs on a copy of its own, opened read-write,
        // and the settings it reads back say what it did to it.
        let mut settings = self.settings.clone();
        let path = if settings.read_only && !settings.wal() {
            settings.read_only = false;
            crate::scratch::jailed_uri(&self.own_copy(name)?, false)?
        } else {
            self.database_for(name)?
        };
        let (mw, settings) = self.rt.block_on(async {
            let mw = SqlMiddleware::open(&path, &settings).await?;
            let settings = mw.read_back().await?;
            Ok::<_, BenchError>((mw, settings))
        })?;
        self.replay
            .async_bench(&self.rt, name, OnSqlMiddleware(mw), settings)
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
            .replay
            .exec
            .mix
            .statements()
            .map(|s| (Arc::from(s.sql(Placeholders::Dollar)), s.kind))
            .collect();
        let (prepared, notes) = self.rt.block_on(async {
            let notes = super::pg::copy_database(&url, &self.snapshot, &schema).await?;
            let prepared =
                super::pg::prepare(&url, &schema, self.replay.clients, &statements).await?;
            Ok::<_, BenchError>((prepared, notes))
        })?;
        let mut skipped: Vec<String> = prepared
            .skipped
            .iter()
            .map(|(i, why)| describe(&self.replay.exec.mix, *i, why))
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
        let bench = self
            .replay
            .async_bench(&self.rt, name, OnPostgres(prepared), settings)?;
        if let Some(acc) = self.replay.acc(name) {
            acc.borrow_mut().skipped = skipped;
        }
        Ok(bench)
    }

    /// turso locks its file for itself: it always runs on a copy of its own.
    #[cfg(feature = "turso")]
    fn turso_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        use crate::backends::turso as t;
        let path = self.own_copy(name)?;
        let (db, conns, settings) = self.rt.block_on(async {
            let db = t::open(&path).await?;
            let mut conns = Vec::with_capacity(self.replay.clients);
            for _ in 0..self.replay.clients {
                conns.push(t::connect(&db, &self.settings).await?);
            }
            let settings = t::read_back(&conns[0]).await;
            Ok::<_, BenchError>((db, conns, settings))
        })?;
        self.replay
            .async_bench(&self.rt, name, OnTurso { conns, _db: db }, settings)
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.replay.per_pass
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        if let Some(why) = crate::mirror::postgres_skip(bench.subject, self.postgres_url.as_ref()) {
            return Some(why);
        }
        if let Subject::Middleware(s) = bench.subject {
            if let Some(why) = crate::catalog::pool_mismatch(&self.pool, s) {
                return Some(why);
            }
            if crate::catalog::Pool::chosen(&self.pool, s) == crate::catalog::Pool::Thread {
                return Some(
                    "a script runs BEGIN, each statement and COMMIT as calls of their own, which pool=thread may run on different threads' connections (it has no checkout that holds one)".into(),
                );
            }
        }
        crate::settings::skip_reason(bench.subject, self.replay.clients, &self.settings)
    }

    fn report(&self, spec: &BenchSpec) -> Vec<Event> {
        self.replay.report(spec.name, &self.original, &self.sha256)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        match spec.subject {
            Subject::Rusqlite if spec.kind == crate::catalog::BenchKind::Micro => {
                self.statement_bench(spec.name, spec.variant as usize)
            }
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
}
