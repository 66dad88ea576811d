//! bench-core's implementation of `multithread_pool_checkout`.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backends::middleware::{self as mw, Middleware, Strategy};
use crate::backends::raw;
use crate::catalog::{BenchSpec, CONCURRENCY, CatalogError, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::measure::drive;
use crate::measure::stats::LatencyHistogram;
use crate::measure::trace::{PhaseTotals, ns_between};
use crate::measure::{IterFn, Iteration};
use crate::protocol::Event;
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
        let (path, ids) = run.lookup_dataset(emit, &crate::dataset::ensure)?;
        let concurrency = k.count(&CONCURRENCY) as usize;
        Ok(Box::new(Ctx {
            path,
            ids: Arc::new(ids),
            concurrency,
            spin: Duration::from_micros(k.count(&SPIN_US)),
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
    rt: tokio::runtime::Runtime,
}

impl Ctx {
    /// One fan-out over this context's ids and tasks.
    fn fan_out<F, Fut>(&self, h: &mut LatencyHistogram, task: F) -> Result<Iteration, BenchError>
    where
        F: Fn(usize, usize) -> Fut,
        Fut: std::future::Future<Output = Result<Vec<u64>, BenchError>> + Send + 'static,
    {
        drive::fan_out(&self.rt, self.ids.len(), self.concurrency, h, task)
    }

    fn middleware(&self, strategy: Strategy) -> Result<Arc<Middleware>, BenchError> {
        Ok(Arc::new(Middleware::new(
            self.path.clone(),
            strategy,
            self.concurrency,
            self.spin,
            self.rt.handle().clone(),
        )?))
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.ids.len() as u64
    }

    fn bench(&self, spec: &BenchSpec) -> Result<IterFn<'_>, BenchError> {
        match spec.subject {
            Subject::Rusqlite => rusqlite_blocking(self),
            Subject::Middleware(s) => parallel_select(self, s),
            Subject::Pool(p) => pool_checkout(self, p.strategy()),
            _ => {
                Err(CatalogError::no_implementation(super::spec(), spec, "not a core bench").into())
            }
        }
    }
}

/// A plain pool: connections in a mutex-guarded stack, borrowed inside spawn_blocking.
fn rusqlite_blocking(ctx: &Ctx) -> Result<IterFn<'_>, BenchError> {
    let pool: Arc<Mutex<Vec<rusqlite::Connection>>> = Arc::new(Mutex::new(
        (0..ctx.concurrency)
            .map(|_| raw::open(&ctx.path))
            .collect::<Result<_, _>>()?,
    ));
    Ok(Box::new(move |h| {
        ctx.fan_out(h, |a, b| {
            let (pool, ids) = (pool.clone(), ctx.ids.clone());
            async move {
                tokio::task::spawn_blocking(move || {
                    let conn = pool
                        .lock()
                        .map_err(BenchError::other)?
                        .pop()
                        .ok_or_else(|| BenchError::Other("pool is empty".into()))?;
                    let mut lat = Vec::with_capacity(b - a);
                    let mut prev = Instant::now();
                    let result = (|| {
                        for &id in &ids[a..b] {
                            black_box(raw::lookup(&conn, id)?);
                            let t = Instant::now();
                            lat.push(ns_between(prev, t));
                            prev = t;
                        }
                        Ok(lat)
                    })();
                    pool.lock().map_err(BenchError::other)?.push(conn);
                    result
                })
                .await
                .map_err(BenchError::other)?
            }
        })
    }))
}

fn parallel_select(ctx: &Ctx, strategy: Strategy) -> Result<IterFn<'_>, BenchError> {
    let mw = ctx.middleware(strategy)?;
    Ok(Box::new(move |h| {
        ctx.fan_out(h, |a, b| {
            let (mw, ids) = (mw.clone(), ctx.ids.clone());
            async move {
                let mut conn = mw.checkout().await?;
                let mut lat = Vec::with_capacity(b - a);
                let mut phases = PhaseTotals::default();
                let mut prev = Instant::now();
                for &id in &ids[a..b] {
                    black_box(mw::lookup::<false>(&mw, &mut conn, id, &mut phases).await?);
                    let t = Instant::now();
                    lat.push(ns_between(prev, t));
                    prev = t;
                }
                Ok(lat)
            }
        })
    }))
}

fn pool_checkout(ctx: &Ctx, strategy: Strategy) -> Result<IterFn<'_>, BenchError> {
    let mw = ctx.middleware(strategy)?;
    Ok(Box::new(move |h| {
        ctx.fan_out(h, |a, b| {
            let mw = mw.clone();
            async move {
                let mut lat = Vec::with_capacity(b - a);
                let mut prev = Instant::now();
                for _ in a..b {
                    drop(black_box(mw.checkout().await?));
                    let t = Instant::now();
                    lat.push(ns_between(prev, t));
                    prev = t;
                }
                Ok(lat)
            }
        })
    }))
}
