//! bench-core's implementation of `multithread_pool_checkout`.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backends::middleware::{Middleware, Strategy};
use crate::backends::raw;
use crate::catalog::{BenchSpec, CONCURRENCY, CatalogError, SPIN_US, Subject, Target};
use crate::dataset::{LOOKUP_WORK, lookup_work};
use crate::error::BenchError;
use crate::measure::drive::{self, LookupPath, TaskResult};
use crate::measure::stats::LatencyHistogram;
use crate::measure::trace::ns_between;
use crate::measure::{Bench, IterFn, Iteration};
use crate::protocol::Event;
use crate::settings::SqliteSettings;
use crate::workload::{RunContext, Session, Workload};

/// bench-core's `multithread_pool_checkout`.
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
        let k = &run.plan.knobs;
        let (path, ids) = run.lookup_dataset(emit, &crate::on_rusqlite::ensure)?;
        let concurrency = k.count(&CONCURRENCY) as usize;
        Ok(Box::new(Ctx {
            path,
            ids: Arc::new(ids),
            concurrency,
            spin: Duration::from_micros(k.count(&SPIN_US)),
            settings: run.sqlite.clone(),
            pool: k.word(&crate::catalog::POOL).to_string(),
            values: crate::backends::middleware::Values::chosen(k.word(&crate::catalog::VALUES)),
            // Enough blocking threads for every task of the fan-out to hold one.
            rt: drive::runtime(Some(concurrency + 16))?,
        }))
    }
}

struct Ctx {
    path: PathBuf,
    ids: Arc<Vec<i64>>,
    concurrency: usize,
    spin: Duration,
    settings: SqliteSettings,
    /// The `pool` knob: the pool under the middleware path.
    pool: String,
    /// The `values` knob: the middleware path's value layer.
    values: crate::backends::middleware::Values,
    rt: tokio::runtime::Runtime,
}

impl Ctx {
    /// One fan-out over this context's ids and tasks.
    fn fan_out<F, Fut>(&self, h: &mut LatencyHistogram, task: F) -> Result<Iteration, BenchError>
    where
        F: Fn(usize, usize) -> Fut,
        Fut: std::future::Future<Output = Result<TaskResult, BenchError>> + Send + 'static,
    {
        drive::fan_out(&self.rt, self.ids.len(), self.concurrency, h, task)
    }

    /// The middleware with `strategy` on the pool the `pool` knob names.
    fn middleware(&self, strategy: Strategy) -> Result<Arc<Middleware>, BenchError> {
        self.middleware_on(strategy, crate::catalog::Pool::chosen(&self.pool, strategy))
    }

    fn middleware_on(
        &self,
        strategy: Strategy,
        pool: crate::catalog::Pool,
    ) -> Result<Arc<Middleware>, BenchError> {
        Ok(Arc::new(
            Middleware::on_pool(
                self.path.clone(),
                strategy,
                pool,
                self.concurrency,
                self.spin,
                &self.settings,
                self.rt.handle().clone(),
            )?
            .with_values(self.values),
        ))
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.ids.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        if let (Subject::Middleware(s), None) = (bench.subject, bench.phase)
            && let Some(why) = crate::catalog::pool_mismatch(&self.pool, s)
                .or_else(|| crate::catalog::values_mismatch(&self.pool, self.values.word(), s))
        {
            return Some(why);
        }
        // The plain pool of rusqlite connections is a pool too.
        let subject = match bench.subject {
            Subject::Rusqlite => Subject::Pool(crate::catalog::Pool::Workers),
            s => s,
        };
        crate::settings::skip_reason(subject, self.concurrency, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let lookups = |iter| Bench::new(iter, lookup_work(&self.ids), LOOKUP_WORK);
        match spec.subject {
            Subject::Rusqlite => {
                let (iter, settings) = rusqlite_blocking(self)?;
                Ok(lookups(iter).with_settings(settings))
            }
            Subject::Middleware(s) => {
                let mw = self.middleware(s)?;
                let settings = self.rt.block_on(mw.read_back())?;
                let pool = crate::catalog::Pool::chosen(&self.pool, s);
                Ok(lookups(parallel_select(self, mw))
                    .with_settings(settings)
                    .with_backend(pool.label()))
            }
            // A checkout bench is of its own pool, whatever the knob names.
            Subject::Pool(p) => {
                let mw = self.middleware_on(p.strategy(), p)?;
                let settings = self.rt.block_on(mw.read_back())?;
                let n = self.ids.len() as u64;
                let iter = pool_checkout(self, move || {
                    let mw = mw.clone();
                    async move { mw.checkout().await.map(drop).map_err(BenchError::from) }
                });
                Ok(Bench::new(iter, n, "connections checked out").with_settings(settings))
            }
            #[cfg(feature = "crates")]
            Subject::Crate(c) => crates::bench(self, c, spec),
            _ => {
                Err(CatalogError::no_implementation(super::spec(), spec, "not a core bench").into())
            }
        }
    }
}

type Settings = std::collections::BTreeMap<String, String>;

/// A plain pool: connections in a mutex-guarded stack, borrowed inside spawn_blocking; each
/// task prepares the statement once and looks its chunk up with it, as sqlx's mirror does.
fn rusqlite_blocking(ctx: &Ctx) -> Result<(IterFn<'_>, Settings), BenchError> {
    let conns: Vec<rusqlite::Connection> = (0..ctx.concurrency)
        .map(|_| raw::open(&ctx.path, &ctx.settings))
        .collect::<Result<_, _>>()?;
    let settings = raw::read_back(&conns[0]);
    let pool = Arc::new(Mutex::new(conns));
    let iter: IterFn<'_> = Box::new(move |h| {
        ctx.fan_out(h, |a, b| {
            let (pool, ids) = (pool.clone(), ctx.ids.clone());
            async move {
                tokio::task::spawn_blocking(move || {
                    let conn = pool
                        .lock()
                        .map_err(BenchError::other)?
                        .pop()
                        .ok_or_else(|| BenchError::Other("pool is empty".into()))?;
                    let result = (|| {
                        let mut stmt = raw::prepare(&conn)?;
                        let mut out = TaskResult {
                            latencies: Vec::with_capacity(b - a),
                            work: 0,
                        };
                        let mut prev = Instant::now();
                        for &id in &ids[a..b] {
                            let row = black_box(raw::lookup(&mut stmt, id)?);
                            out.work = out.work.wrapping_add(row.checksum());
                            let t = Instant::now();
                            out.latencies.push(ns_between(prev, t));
                            prev = t;
                        }
                        Ok(out)
                    })();
                    pool.lock().map_err(BenchError::other)?.push(conn);
                    result
                })
                .await
                .map_err(BenchError::other)?
            }
        })
    });
    Ok((iter, settings))
}

/// Each task checks a connection out of `path` and looks its chunk up on it.
fn parallel_select<P: LookupPath>(ctx: &Ctx, path: Arc<P>) -> IterFn<'_> {
    drive::parallel_select(&ctx.rt, ctx.ids.clone(), ctx.concurrency, path)
}

/// Each task checks connections out and gives them back (`once`), nothing else.
fn pool_checkout<F, Fut>(ctx: &Ctx, once: F) -> IterFn<'_>
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(), BenchError>> + Send + 'static,
{
    drive::checkouts(&ctx.rt, ctx.ids.len(), ctx.concurrency, once)
}

#[cfg(feature = "crates")]
mod crates {
    //! The crates as they ship, fanned out like the middleware path.
    use super::*;
    use crate::backends::crates::{self as c, PathUser, Pooled};
    use crate::catalog::Shipped;

    struct Fan<'a>(&'a Ctx);

    impl<'a> PathUser for Fan<'a> {
        type Out = Bench<'a>;
        fn with<P: LookupPath>(self, path: Arc<P>, settings: Settings) -> Bench<'a> {
            let ctx = self.0;
            let statements = path.statements();
            Bench::new(
                parallel_select(ctx, path),
                lookup_work(&ctx.ids),
                LOOKUP_WORK,
            )
            .with_settings(settings)
            .with_statements(statements)
        }
    }

    pub fn bench<'a>(
        ctx: &'a Ctx,
        krate: Shipped,
        spec: &BenchSpec,
    ) -> Result<Bench<'a>, BenchError> {
        let (n, s, path) = (ctx.concurrency, &ctx.settings, ctx.path.as_path());
        match spec.phase {
            None => c::open_path(krate, path, s, n, &ctx.rt, Fan(ctx)),
            Some(_) => {
                let Some((pool, settings)) = Pooled::open(krate, path, s, n, &ctx.rt)? else {
                    return Err(CatalogError::no_implementation(
                        super::super::spec(),
                        spec,
                        "the crate has no pool",
                    )
                    .into());
                };
                let pool = Arc::new(pool);
                let iter = pool_checkout(ctx, move || {
                    let pool = pool.clone();
                    async move { pool.checkout_and_return().await }
                });
                Ok(
                    Bench::new(iter, ctx.ids.len() as u64, "connections checked out")
                        .with_settings(settings),
                )
            }
        }
    }
}
