//! `multithread_pool_checkout` through sqlx: the fan-out mirrors of bench-core's benches.

use std::hint::black_box;
use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Subject, Target};
use bench_core::dataset::{LOOKUP_WORK, SELECT_BY_ID, lookup_work};
use bench_core::measure::drive::TaskResult;
use bench_core::measure::stats::LatencyHistogram;
use bench_core::measure::trace::{Phase, ns_between};
use bench_core::measure::{Bench, IterFn, Iteration};
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
    Fut: std::future::Future<Output = Result<TaskResult, BenchError>> + Send + 'static,
{
    bench_core::measure::drive::fan_out(&ctx.rt, ctx.ids.len(), ctx.concurrency, h, task)
}

impl Session for FanOuts {
    fn ops(&self) -> u64 {
        self.0.ids.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(bench.subject, self.0.concurrency, &self.0.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let ctx = &self.0;
        let iter = iteration(spec, ctx)?;
        let bench = if spec.phase.is_some() {
            Bench::new(iter, ctx.ids.len() as u64, "connections checked out")
        } else {
            Bench::new(iter, lookup_work(&ctx.ids), LOOKUP_WORK)
        };
        Ok(bench.with_settings(ctx.read_back.clone()))
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
                    let mut out = TaskResult {
                        latencies: Vec::with_capacity(b - a),
                        work: 0,
                    };
                    let mut prev = Instant::now();
                    for &id in &ids[a..b] {
                        let row = stmt
                            .query()
                            .bind(id)
                            .fetch_one(&mut *conn)
                            .await
                            .map_err(err)?;
                        let decoded = black_box(decode(&row).map_err(err)?);
                        out.work = out.work.wrapping_add(decoded.checksum());
                        let t = Instant::now();
                        out.latencies.push(ns_between(prev, t));
                        prev = t;
                    }
                    Ok(out)
                }
            })
        })),
        (Subject::SqlxSqlite, Some(Phase::Checkout)) => Ok(Box::new(move |h| {
            fan_out(ctx, h, |a, b| {
                let pool = ctx.pool.clone();
                async move {
                    let mut out = TaskResult {
                        latencies: Vec::with_capacity(b - a),
                        work: 0,
                    };
                    let mut prev = Instant::now();
                    for _ in a..b {
                        drop(black_box(pool.acquire().await.map_err(err)?));
                        out.work += 1;
                        let t = Instant::now();
                        out.latencies.push(ns_between(prev, t));
                        prev = t;
                    }
                    Ok(out)
                }
            })
        })),
        _ => Err(CatalogError::no_implementation(spec(), bench, "not a sqlx bench").into()),
    }
}
