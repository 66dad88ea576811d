//! `multithread_pool_checkout` through sqlx: the fan-out mirrors of bench-core's benches.

use std::hint::black_box;
use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Subject, Target};
use bench_core::dataset::SELECT_BY_ID;
use bench_core::measure::stats::LatencyHistogram;
use bench_core::measure::trace::{Phase, ns_between};
use bench_core::measure::{IterFn, Iteration};
use bench_core::protocol::Event;
use bench_core::workload::{RunContext, Session, Workload};
use sqlx::{Executor, SqlSafeStr, Statement};

use crate::dataset::decode;
use crate::lookup::{Ctx, err};

/// sqlx's `multithread_pool_checkout`.
pub struct Multithread;

fn spec() -> &'static Target {
    bench_core::workloads::multithread::spec()
}

impl Workload for Multithread {
    fn spec(&self) -> &'static Target {
        spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(FanOuts(Ctx::open(run, emit)?)))
    }
}

struct FanOuts(Ctx);

/// One fan-out of `concurrency` tasks (the pool's size) over the ids.
fn fan_out<F, Fut>(ctx: &Ctx, h: &mut LatencyHistogram, task: F) -> Result<Iteration, BenchError>
where
    F: Fn(usize, usize) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<u64>, BenchError>> + Send + 'static,
{
    bench_core::measure::drive::fan_out(&ctx.rt, ctx.ids.len(), ctx.concurrency, h, task)
}

impl Session for FanOuts {
    fn ops(&self) -> u64 {
        self.0.ids.len() as u64
    }

    fn bench(&self, spec: &BenchSpec) -> Result<IterFn<'_>, BenchError> {
        iteration(spec, &self.0)
    }
}

fn iteration<'a>(bench: &BenchSpec, ctx: &'a Ctx) -> Result<IterFn<'a>, BenchError> {
    match (bench.subject, bench.phase) {
        (Subject::SqlxSqlite, None) => Ok(Box::new(move |h| {
            fan_out(ctx, h, |a, b| {
                let (pool, ids) = (ctx.pool.clone(), ctx.ids.clone());
                async move {
                    let mut conn = pool.acquire().await.map_err(err)?;
                    let stmt = (&mut *conn)
                        .prepare(SELECT_BY_ID.into_sql_str())
                        .await
                        .map_err(err)?;
                    let mut lat = Vec::with_capacity(b - a);
                    let mut prev = Instant::now();
                    for &id in &ids[a..b] {
                        let row = stmt
                            .query()
                            .bind(id)
                            .fetch_one(&mut *conn)
                            .await
                            .map_err(err)?;
                        black_box(decode(&row).map_err(err)?);
                        let t = Instant::now();
                        lat.push(ns_between(prev, t));
                        prev = t;
                    }
                    Ok(lat)
                }
            })
        })),
        (Subject::SqlxSqlite, Some(Phase::Checkout)) => Ok(Box::new(move |h| {
            fan_out(ctx, h, |a, b| {
                let pool = ctx.pool.clone();
                async move {
                    let mut lat = Vec::with_capacity(b - a);
                    let mut prev = Instant::now();
                    for _ in a..b {
                        drop(black_box(pool.acquire().await.map_err(err)?));
                        let t = Instant::now();
                        lat.push(ns_between(prev, t));
                        prev = t;
                    }
                    Ok(lat)
                }
            })
        })),
        _ => Err(CatalogError::no_implementation(spec(), bench, "not a sqlx bench").into()),
    }
}
