//! `single_row_lookup` through async-sqlite: the lookup and the dispatch it lets one separate.
//! The pool on the shared dataset is also what the multithread fan-out uses.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use async_sqlite::{Pool, PoolBuilder};
use bench_core::BenchError;
use bench_core::catalog::{
    BenchSpec, CONCURRENCY, CatalogError, LOOKUPS_PER_CHECKOUT, Shipped, Subject, TRACE_EVERY,
    Target,
};
use bench_core::dataset::{BenchRow, LOOKUP_WORK, lookup_work};
use bench_core::measure::drive::{self, LookupPath, on_runtime};
use bench_core::measure::trace::{Phase, PhaseTotals, ns_between};
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::protocol::Event;
use bench_core::settings::SqliteSettings;
use bench_core::workload::{RunContext, Session, Workload};

use crate::on_rusqlite;

pub fn err(e: impl std::fmt::Display) -> BenchError {
    BenchError::driver(e)
}

/// The subject every bench of this harness measures.
pub const SUBJECT: Subject = Subject::Crate(Shipped::AsyncSqlite);

/// async-sqlite's `single_row_lookup`.
pub struct Lookup;

impl Workload for Lookup {
    fn spec(&self) -> &'static Target {
        bench_core::workloads::single_row_lookup::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(Ctx::open(run, emit)?))
    }
}

/// A pool of `n` connections on `path`, each opened with the run's settings (the mutex as open
/// flags, then the pragmas) and the statement cache sized as bench-core's connections are; and
/// what one of them reads back.
pub async fn open_pool(
    path: &Path,
    s: &SqliteSettings,
    n: usize,
) -> Result<(Pool, BTreeMap<String, String>), BenchError> {
    let pool = PoolBuilder::new()
        .path(path)
        .flags(on_rusqlite::flags(s))
        .num_conns(n.max(1))
        .open()
        .await
        .map_err(err)?;
    let s = s.clone();
    for applied in pool
        .conn_for_each(move |c| on_rusqlite::configure(c, &s))
        .await
    {
        applied.map_err(err)?;
    }
    let read_back = pool
        .conn(|c| Ok(on_rusqlite::read_back(c)))
        .await
        .map_err(err)?;
    Ok((pool, read_back))
}

/// A client on `path` (a file, or a memdb URI) with the run's settings, the statement cache
/// sized as bench-core's connections are; and what its connection reads back.
pub async fn open_client(
    path: &Path,
    s: &SqliteSettings,
) -> Result<(async_sqlite::Client, BTreeMap<String, String>), BenchError> {
    let client = async_sqlite::ClientBuilder::new()
        .path(path)
        .flags(on_rusqlite::flags(s))
        .open()
        .await
        .map_err(err)?;
    let s = s.clone();
    let settings = client
        .conn(move |c| {
            on_rusqlite::configure(c, &s)?;
            Ok(on_rusqlite::read_back(c))
        })
        .await
        .map_err(err)?;
    Ok((client, settings))
}

/// A pool on the shared dataset and the ids of a pass.
pub struct Ctx {
    pub rt: tokio::runtime::Runtime,
    pub pool: Pool,
    pub ids: Arc<Vec<i64>>,
    /// Connections of the pool, and tasks of a fan-out.
    pub concurrency: usize,
    per_checkout: usize,
    trace_every: usize,
    pub settings: SqliteSettings,
    /// What the pool's connections read back.
    pub read_back: BTreeMap<String, String>,
}

impl Ctx {
    /// Builds or reuses the target's dataset (with async-sqlite's rusqlite) and opens a pool.
    pub fn open(run: &RunContext<'_>, emit: &mut dyn FnMut(Event)) -> Result<Ctx, BenchError> {
        let rt = drive::runtime(None)?;
        let k = &run.plan.knobs;
        let (path, ids) = run.lookup_dataset(emit, &on_rusqlite::ensure)?;
        let concurrency = k.count(&CONCURRENCY) as usize;
        let (pool, read_back) = rt.block_on(open_pool(&path, &run.sqlite, concurrency))?;
        Ok(Ctx {
            rt,
            pool,
            ids: Arc::new(ids),
            concurrency,
            // multithread_pool_checkout has no such knob: one "checkout" per task there.
            per_checkout: k.count_if(&LOOKUPS_PER_CHECKOUT).unwrap_or(1) as usize,
            trace_every: k.count_if(&TRACE_EVERY).unwrap_or(1) as usize,
            settings: run.sqlite.clone(),
            read_back,
        })
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        let pool = self.pool.clone();
        let _ = self.rt.block_on(pool.close());
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.ids.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(bench.subject, self.concurrency, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let bench = match (spec.subject, spec.phase) {
            (SUBJECT, None) => Bench::new(lookups(self), lookup_work(&self.ids), LOOKUP_WORK),
            (SUBJECT, Some(Phase::Dispatch)) => Bench::new(
                dispatches(self),
                self.ids.len() as u64,
                "closures run on a connection's thread",
            ),
            _ => {
                return Err(CatalogError::no_implementation(
                    bench_core::workloads::single_row_lookup::spec(),
                    spec,
                    "not an async-sqlite bench",
                )
                .into());
            }
        };
        Ok(bench.with_settings(self.read_back.clone()))
    }
}

/// The async-sqlite lookup path: `pool.conn` with the lookup as code on a rusqlite connection
/// writes it. The pool hides its checkout (a round-robin pick inside each call), so a
/// "checkout" here is a clone of the pool handle.
pub struct AsyncSqlitePath {
    pub pool: Pool,
}

impl LookupPath for AsyncSqlitePath {
    type Conn = Pool;

    async fn checkout(&self) -> Result<Pool, BenchError> {
        Ok(self.pool.clone())
    }

    async fn lookup<const TRACE: bool>(
        &self,
        pool: &mut Pool,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        pool.conn(move |c| on_rusqlite::cached_lookup(c, id))
            .await
            .map_err(err)
    }
}

/// Whole lookups, untraced: the crate hides its phases.
fn lookups(ctx: &Ctx) -> IterFn<'_> {
    let path = Arc::new(AsyncSqlitePath {
        pool: ctx.pool.clone(),
    });
    drive::lookup_passes(path, &ctx.rt, ctx.plan(), false)
}

impl Ctx {
    /// What each lookup pass goes over.
    fn plan(&self) -> drive::LookupPlan {
        drive::LookupPlan {
            ids: self.ids.clone(),
            per_checkout: self.per_checkout,
            trace_every: self.trace_every,
        }
    }
}

/// One `pool.conn` round trip with an empty closure per id: the hop alone.
fn dispatches(ctx: &Ctx) -> IterFn<'_> {
    Box::new(move |_| {
        let (pool, count) = (ctx.pool.clone(), ctx.ids.len());
        on_runtime(&ctx.rt, async move {
            let mut work = 0u64;
            let start = Instant::now();
            for _ in 0..count {
                work += pool
                    .conn(|c| Ok(c.is_autocommit() as u64))
                    .await
                    .map_err(err)?;
            }
            Ok(Iteration::new(ns_between(start, Instant::now()), work))
        })
    })
}

/// The client's connection, reached with `conn` (its errors kept as the operation's own).
pub struct OnClient(pub async_sqlite::Client);

impl crate::on_rusqlite::OnConn for OnClient {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError> {
        // The closure's own error travels inside the Ok: async-sqlite's error type carries
        // rusqlite's alone.
        self.0.conn(move |c| Ok(f(c))).await.map_err(err)?
    }
}
