//! The crates as they ship: their lookups through the same driver as the middleware path
//! (untraced: a crate hides its phases), and the phases each lets one measure apart.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use super::ctx::*;
use crate::backends::crates::{self as c, PathUser, Pooled};
use crate::catalog::Shipped;
use crate::catalog::{BenchSpec, CatalogError};
use crate::dataset::{LOOKUP_WORK, SELECT_BY_ID, row};
use crate::error::BenchError;
use crate::measure::drive::LookupPath;
use crate::measure::trace::{Phase, ns_between};
use crate::measure::{Bench, IterFn, Iteration};

/// The whole lookups of a crate's path, on the runtime the crates' benches share.
struct Lookups<'a>(&'a Ctx, Arc<tokio::runtime::Runtime>);

impl<'a> PathUser for Lookups<'a> {
    type Out = Bench<'a>;
    fn with<P: LookupPath>(self, path: Arc<P>, settings: BTreeMap<String, String>) -> Bench<'a> {
        let statements = path.statements();
        timed_path(self.0, OnRuntime { path, rt: self.1 }, false)
            .with_settings(settings)
            .with_statements(statements)
    }
}

/// `count` round trips of `op` on one connection, timed as a pass.
fn repeated<'a, T, F, Fut>(ctx: &'a Ctx, conn: Arc<T>, what: &'static str, op: F) -> Bench<'a>
where
    T: Send + Sync + 'static,
    F: Fn(Arc<T>) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<u64, BenchError>> + Send,
{
    let count = ctx.ids.len();
    let iter: IterFn<'a> = Box::new(move |_| {
        let (conn, op) = (conn.clone(), op.clone());
        ctx.on_runtime(async move {
            let mut work = 0u64;
            let start = Instant::now();
            for _ in 0..count {
                work += op(conn.clone()).await?;
            }
            Ok(Iteration::new(ns_between(start, Instant::now()), work))
        })
    });
    Bench::new(iter, count as u64, what)
}

pub fn bench<'a>(ctx: &'a Ctx, krate: Shipped, spec: &BenchSpec) -> Result<Bench<'a>, BenchError> {
    use Phase::*;
    let (n, s, path) = (ctx.pool_size, &ctx.settings, ctx.path.as_path());
    Ok(match (krate, spec.phase) {
        (Shipped::SqlMiddleware, None)
            if spec.variant == crate::workloads::single_row_lookup::PREPARED =>
        {
            let p = Arc::new(ctx.rt()?.block_on(c::SqlMiddleware::open(path, s))?);
            let settings = ctx.rt()?.block_on(p.read_back())?;
            let passes = std::sync::atomic::AtomicU64::new(0);
            let iter: IterFn<'a> = Box::new(move |h| {
                let seed = passes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let (p, ids) = (p.clone(), ctx.ids.clone());
                let per = ctx.lookups_per_checkout;
                let pass = ctx.on_runtime(async move { p.prepared_pass(&ids, per, seed).await })?;
                for ns in pass.latencies {
                    h.record(ns);
                }
                Ok(Iteration::new(pass.elapsed_ns, pass.work))
            });
            Bench::new(iter, ctx.pass_work(), LOOKUP_WORK).with_settings(settings)
        }
        (_, None) => {
            let rt = ctx.rt()?;
            c::open_path(krate, path, s, n, rt, Lookups(ctx, rt.clone()))?
        }
        (_, Some(Checkout)) => {
            let Some((pool, settings)) = Pooled::open(krate, path, s, n, ctx.rt()?)? else {
                return Err(no_bench(spec));
            };
            repeated(
                ctx,
                Arc::new(pool),
                "connections checked out",
                |p| async move { p.checkout_and_return().await.map(|()| 1) },
            )
            .with_settings(settings)
        }
        (Shipped::TokioRusqlite, Some(Dispatch)) => {
            let p = ctx.rt()?.block_on(c::TokioRusqlite::open(path, s, 1))?;
            let settings = ctx.rt()?.block_on(p.read_back())?;
            let conn = Arc::new(ctx.rt()?.block_on(p.checkout())?);
            repeated(
                ctx,
                conn,
                "closures run on the connection's thread",
                |c| async move { c::TokioRusqlite::dispatch(&c).await },
            )
            .with_settings(settings)
        }
        (Shipped::SqlMiddleware, Some(Dispatch)) => {
            let p = ctx.rt()?.block_on(c::SqlMiddleware::open(path, s))?;
            let settings = ctx.rt()?.block_on(p.read_back())?;
            let conn = Arc::new(tokio::sync::Mutex::new(ctx.rt()?.block_on(p.checkout())?));
            repeated(
                ctx,
                conn,
                "closures run on the connection's worker",
                |c| async move { c::SqlMiddleware::dispatch(&mut *c.lock().await).await },
            )
            .with_settings(settings)
        }
        (Shipped::SqlMiddleware, Some(Decode)) => {
            let p = ctx.rt()?.block_on(c::SqlMiddleware::open(path, s))?;
            let settings = ctx.rt()?.block_on(p.read_back())?;
            let rs = ctx.rt()?.block_on(p.result_set(ctx.ids[0]))?;
            let iter: IterFn<'a> = Box::new(move |_| {
                timed_loop(&ctx.ids, |_| {
                    Ok(black_box(crate::on_sql_middleware::lookup_row(black_box(&rs))?).checksum())
                })
            });
            let per_pass = row(ctx.ids[0])
                .checksum()
                .wrapping_mul(ctx.ids.len() as u64);
            Bench::new(iter, per_pass, "rows decoded (their checksum)").with_settings(settings)
        }
        (Shipped::SqlMiddleware, Some(Prepare)) => {
            let p = ctx.rt()?.block_on(c::SqlMiddleware::open(path, s))?;
            let settings = ctx.rt()?.block_on(p.read_back())?;
            let conn = Arc::new(tokio::sync::Mutex::new(ctx.rt()?.block_on(p.checkout())?));
            repeated(ctx, conn, "statements prepared", |c| async move {
                c::SqlMiddleware::prepare_once(&mut *c.lock().await).await
            })
            .with_settings(settings)
        }
        (Shipped::SqlMiddleware, Some(ExecuteMarshal)) => {
            let (conn, settings) = ctx.connection()?;
            let params = c::marshal_params(&ctx.ids)?;
            // The bench owns its connection; each pass takes the statement from its cache,
            // untimed, as the crate's own bench prepares outside its clock.
            let iter: IterFn<'a> = Box::new(move |_| {
                let mut stmt = conn.prepare_cached(SELECT_BY_ID)?;
                let mut work = 0u64;
                let start = Instant::now();
                for p in &params {
                    work = work.wrapping_add(c::marshal(&mut stmt, p)?);
                }
                Ok(Iteration::new(ns_between(start, Instant::now()), work))
            });
            let per_pass = ctx.ids.iter().map(|id| *id as u64 + 1).sum();
            Bench::new(iter, per_pass, "result sets built (rows + first id)")
                .with_settings(settings)
        }
        (Shipped::SqlMiddleware, Some(Bind)) => {
            let iter: IterFn<'a> =
                Box::new(move |_| timed_loop(&ctx.ids, |id| c::middleware_param(black_box(id))));
            let per_pass = ctx.ids.iter().map(|id| *id as u64).sum();
            Bench::new(iter, per_pass, "parameters converted (their values)")
        }
        _ => return Err(no_bench(spec)),
    })
}

fn no_bench(spec: &BenchSpec) -> BenchError {
    CatalogError::no_implementation(
        crate::workloads::single_row_lookup::spec(),
        spec,
        "no bench of this crate and phase",
    )
    .into()
}
