//! `multithread_pool_checkout`: `concurrency` tasks fan out over the shuffled ids, each on a
//! pooled connection; the whole fan-out is one sample (wall time / operations, so the median
//! reads as throughput), and every task records its operations' latencies.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backends::middleware::{self as mw, Middleware, Strategy};
use crate::backends::raw;
use crate::catalog::BenchSpec;
use crate::knobs::Knobs;
use crate::measure::Iteration;
use crate::runner::IterFn;
use crate::trace::{PhaseTotals, ns_between};

pub struct Ctx {
    pub path: PathBuf,
    pub ids: Arc<Vec<i64>>,
    pub concurrency: usize,
    pub spin: Duration,
    pub rt: tokio::runtime::Runtime,
}

impl Ctx {
    pub fn new(path: PathBuf, ids: Vec<i64>, knobs: &Knobs) -> Result<Ctx, String> {
        // Enough blocking threads for every task of the fan-out to hold one.
        let rt = crate::drive::runtime(Some(knobs.value("concurrency") as usize + 16))?;
        Ok(Ctx {
            path,
            ids: Arc::new(ids),
            concurrency: knobs.value("concurrency") as usize,
            spin: Duration::from_micros(knobs.value("spin_us")),
            rt,
        })
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// One fan-out over this context's ids and tasks.
fn fan_out<F, Fut>(
    ctx: &Ctx,
    h: &mut crate::stats::LatencyHistogram,
    task: F,
) -> Result<Iteration, String>
where
    F: Fn(usize, usize) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<u64>, String>> + Send + 'static,
{
    crate::drive::fan_out(&ctx.rt, ctx.ids.len(), ctx.concurrency, h, task)
}

pub fn iteration<'a>(spec: &BenchSpec, ctx: &'a Ctx) -> Result<IterFn<'a>, String> {
    if let Some(s) = spec.name.strip_prefix("middleware_parallel_select/") {
        let mw = middleware(ctx, s.parse()?)?;
        return Ok(Box::new(move |h| {
            fan_out(ctx, h, |a, b| {
                let (mw, ids) = (mw.clone(), ctx.ids.clone());
                async move {
                    let mut conn = mw.checkout().await.map_err(err)?;
                    let mut lat = Vec::with_capacity(b - a);
                    let mut phases = PhaseTotals::default();
                    let mut prev = Instant::now();
                    for &id in &ids[a..b] {
                        black_box(
                            mw::lookup::<false>(&mw, &mut conn, id, &mut phases)
                                .await
                                .map_err(err)?,
                        );
                        let t = Instant::now();
                        lat.push(ns_between(prev, t));
                        prev = t;
                    }
                    Ok(lat)
                }
            })
        }));
    }
    match spec.name {
        "rusqlite_blocking" => {
            // A plain pool: connections in a mutex-guarded stack, borrowed inside spawn_blocking.
            let pool: Arc<Mutex<Vec<rusqlite::Connection>>> = Arc::new(Mutex::new(
                (0..ctx.concurrency)
                    .map(|_| raw::open(&ctx.path))
                    .collect::<Result<_, _>>()
                    .map_err(err)?,
            ));
            Ok(Box::new(move |h| {
                fan_out(ctx, h, |a, b| {
                    let (pool, ids) = (pool.clone(), ctx.ids.clone());
                    async move {
                        tokio::task::spawn_blocking(move || {
                            let conn = pool.lock().map_err(err)?.pop().ok_or("pool is empty")?;
                            let mut lat = Vec::with_capacity(b - a);
                            let mut prev = Instant::now();
                            let result = (|| {
                                for &id in &ids[a..b] {
                                    black_box(raw::lookup(&conn, id).map_err(err)?);
                                    let t = Instant::now();
                                    lat.push(ns_between(prev, t));
                                    prev = t;
                                }
                                Ok(lat)
                            })();
                            pool.lock().map_err(err)?.push(conn);
                            result
                        })
                        .await
                        .map_err(err)?
                    }
                })
            }))
        }
        "middleware_pool_checkout" | "middleware_pool_checkout/workers" => {
            let strategy = if spec.name.ends_with("/workers") {
                Strategy::Worker
            } else {
                Strategy::Interact
            };
            let mw = middleware(ctx, strategy)?;
            Ok(Box::new(move |h| {
                fan_out(ctx, h, |a, b| {
                    let mw = mw.clone();
                    async move {
                        let mut lat = Vec::with_capacity(b - a);
                        let mut prev = Instant::now();
                        for _ in a..b {
                            drop(black_box(mw.checkout().await.map_err(err)?));
                            let t = Instant::now();
                            lat.push(ns_between(prev, t));
                            prev = t;
                        }
                        Ok(lat)
                    }
                })
            }))
        }
        other => Err(format!(
            "bench {other:?} has no implementation in multithread_pool_checkout"
        )),
    }
}

fn middleware(ctx: &Ctx, strategy: Strategy) -> Result<Arc<Middleware>, String> {
    Middleware::new(
        ctx.path.clone(),
        strategy,
        ctx.concurrency,
        ctx.spin,
        ctx.rt.handle().clone(),
    )
    .map(Arc::new)
    .map_err(err)
}
