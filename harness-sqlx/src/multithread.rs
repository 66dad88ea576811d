//! `multithread_pool_checkout` through sqlx: the fan-out mirrors of bench-core's benches.

use std::hint::black_box;
use std::time::Instant;

use bench_core::catalog::BenchSpec;
use bench_core::dataset::SELECT_BY_ID;
use bench_core::measure::Iteration;
use bench_core::runner::IterFn;
use bench_core::stats::LatencyHistogram;
use bench_core::trace::ns_between;
use sqlx::{Executor, SqlSafeStr, Statement};

use crate::dataset::decode;
use crate::lookup::{Ctx, err};

/// One fan-out of `concurrency` tasks (the pool's size) over the ids.
fn fan_out<F, Fut>(ctx: &Ctx<'_>, h: &mut LatencyHistogram, task: F) -> Result<Iteration, String>
where
    F: Fn(usize, usize) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<u64>, String>> + Send + 'static,
{
    bench_core::drive::fan_out(ctx.rt, ctx.ids.len(), ctx.concurrency, h, task)
}

pub fn iteration<'a>(spec: &BenchSpec, ctx: &'a Ctx<'_>) -> Result<IterFn<'a>, String> {
    match spec.name {
        "sqlx_parallel_select" => Ok(Box::new(move |h| {
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
        "sqlx_pool_checkout" => Ok(Box::new(move |h| {
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
        other => Err(format!(
            "bench {other:?} has no implementation in harness-sqlx"
        )),
    }
}
