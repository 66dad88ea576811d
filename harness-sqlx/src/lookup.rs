//! `single_row_lookup` through sqlx: the whole lookup and its micro-benches.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use bench_core::catalog::BenchSpec;
use bench_core::dataset::SELECT_BY_ID;
use bench_core::measure::Iteration;
use bench_core::runner::{IterFn, Plan};
use bench_core::trace::{Phase, PhaseTotals, ns_between};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteStatement};
use sqlx::{Executor, SqlSafeStr, Statement};

use crate::dataset::decode;

pub struct Ctx<'rt> {
    pub rt: &'rt tokio::runtime::Runtime,
    pub pool: SqlitePool,
    /// The lookup statement, prepared once.
    stmt: SqliteStatement,
    pub ids: Arc<Vec<i64>>,
    /// Pool size, and tasks of a fan-out.
    pub concurrency: usize,
    per_checkout: usize,
    trace: bool,
    trace_every: usize,
}

pub fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl<'rt> Ctx<'rt> {
    pub fn new(
        rt: &'rt tokio::runtime::Runtime,
        path: PathBuf,
        ids: Vec<i64>,
        plan: &Plan,
    ) -> Result<Self, String> {
        let k = &plan.knobs;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .statement_cache_capacity(k.value("sqlx_statement_cache") as usize);
        let (pool, stmt) = rt.block_on(async {
            let pool = SqlitePoolOptions::new()
                .max_connections(k.value("concurrency") as u32)
                .connect_with(options)
                .await
                .map_err(err)?;
            let stmt = pool
                .prepare(SELECT_BY_ID.into_sql_str())
                .await
                .map_err(err)?;
            Ok::<_, String>((pool, stmt))
        })?;
        Ok(Ctx {
            rt,
            pool,
            stmt,
            ids: Arc::new(ids),
            concurrency: k.value("concurrency") as usize,
            // multithread_pool_checkout has no such knob: one checkout per task there.
            per_checkout: k.get("lookups_per_checkout").unwrap_or(1) as usize,
            trace: plan.trace,
            trace_every: k.get("trace_every").unwrap_or(1) as usize,
        })
    }

    /// Runs an iteration on a runtime worker thread, as a request handler would.
    fn on_runtime<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<T, String>> + Send + 'static,
    ) -> Result<T, String> {
        self.rt.block_on(async {
            tokio::spawn(fut)
                .await
                .map_err(|e| format!("bench task failed: {e}"))?
        })
    }
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        let pool = self.pool.clone();
        self.rt.block_on(pool.close());
    }
}

pub fn iteration<'a>(spec: &BenchSpec, ctx: &'a Ctx<'_>) -> Result<IterFn<'a>, String> {
    match spec.name {
        "sqlx" => Ok(if ctx.trace {
            lookups::<true>(ctx)
        } else {
            lookups::<false>(ctx)
        }),
        "sqlx/pool_acquire" => Ok(async_loop(ctx, |pool, _, _| async move {
            drop(black_box(pool.acquire().await.map_err(err)?));
            Ok(())
        })),
        "sqlx/prepare" => Ok(on_connection(ctx, |conn, _| {
            Box::pin(async move {
                black_box(
                    conn.prepare(SELECT_BY_ID.into_sql_str())
                        .await
                        .map_err(err)?,
                );
                Ok(())
            })
        })),
        "sqlx/marshalling" => Ok(on_connection(ctx, |conn, id| {
            Box::pin(async move {
                black_box(
                    sqlx::query(SELECT_BY_ID)
                        .bind(id)
                        .fetch_one(&mut *conn)
                        .await
                        .map_err(err)?,
                );
                Ok(())
            })
        })),
        "sqlx/decode" => {
            let row = ctx
                .rt
                .block_on(
                    sqlx::query(SELECT_BY_ID)
                        .bind(ctx.ids[0])
                        .fetch_one(&ctx.pool),
                )
                .map_err(err)?;
            let ids = ctx.ids.clone();
            Ok(Box::new(move |_| {
                let start = Instant::now();
                for _ in ids.iter() {
                    black_box(decode(black_box(&row)).map_err(err)?);
                }
                Ok(Iteration {
                    elapsed_ns: ns_between(start, Instant::now()),
                    phases: None,
                })
            }))
        }
        "sqlx/param_convert" => {
            let ids = ctx.ids.clone();
            Ok(Box::new(move |_| {
                let start = Instant::now();
                for &id in ids.iter() {
                    let _ =
                        black_box(sqlx::query::<sqlx::Sqlite>(SELECT_BY_ID).bind(black_box(id)));
                }
                Ok(Iteration {
                    elapsed_ns: ns_between(start, Instant::now()),
                    phases: None,
                })
            }))
        }
        other => Err(format!(
            "bench {other:?} has no implementation in harness-sqlx"
        )),
    }
}

/// Times `ops` runs of an async operation on the pool as one sample.
fn async_loop<'a, F, Fut>(ctx: &'a Ctx<'_>, op: F) -> IterFn<'a>
where
    F: Fn(SqlitePool, SqliteStatement, i64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    Box::new(move |_| {
        let (pool, stmt, ids, op) = (
            ctx.pool.clone(),
            ctx.stmt.clone(),
            ctx.ids.clone(),
            op.clone(),
        );
        ctx.on_runtime(async move {
            let start = Instant::now();
            for &id in ids.iter() {
                op(pool.clone(), stmt.clone(), id).await?;
            }
            Ok(Iteration {
                elapsed_ns: ns_between(start, Instant::now()),
                phases: None,
            })
        })
    })
}

type ConnOp = for<'c> fn(
    &'c mut sqlx::SqliteConnection,
    i64,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<(), String>> + Send + 'c>,
>;

/// Times `ops` runs of an operation on a connection acquired before the clock starts.
fn on_connection<'a>(ctx: &'a Ctx<'_>, op: ConnOp) -> IterFn<'a> {
    Box::new(move |_| {
        let (pool, ids) = (ctx.pool.clone(), ctx.ids.clone());
        ctx.on_runtime(async move {
            let mut conn = pool.acquire().await.map_err(err)?;
            let start = Instant::now();
            for &id in ids.iter() {
                op(&mut conn, id).await?;
            }
            Ok(Iteration {
                elapsed_ns: ns_between(start, Instant::now()),
                phases: None,
            })
        })
    })
}

/// The whole lookup: acquire (every `per_checkout` lookups), bind the prepared statement,
/// fetch_one, decode, give the connection back. One timer read per lookup for latencies; with
/// `TRACE`, every `every`-th lookup and checkout is timed phase by phase and scaled up.
/// sqlx prepares (cache lookup) and hops to its worker thread inside fetch_one, so those two
/// phases are part of execute+marshal here.
async fn lookup_iteration<const TRACE: bool>(
    pool: SqlitePool,
    stmt: SqliteStatement,
    ids: Arc<Vec<i64>>,
    per_checkout: usize,
    every: usize,
) -> Result<(u64, Vec<u64>, PhaseTotals), String> {
    let mut lat = Vec::with_capacity(ids.len());
    let mut checkout = PhaseTotals::default();
    let mut lookups = PhaseTotals::default();
    let (mut chunks, mut traced_chunks) = (0u64, 0u64);
    let start = Instant::now();
    let mut prev = start;
    let mut op = 0usize;
    for chunk in ids.chunks(per_checkout) {
        let trace_chunk = TRACE && (chunks as usize).is_multiple_of(every);
        chunks += 1;
        let t0 = trace_chunk.then(Instant::now);
        let mut conn = pool.acquire().await.map_err(err)?;
        if let Some(t0) = t0 {
            checkout.add(Phase::Checkout, ns_between(t0, Instant::now()));
        }
        for &id in chunk {
            if TRACE && op.is_multiple_of(every) {
                lookups.ops += 1;
                let t0 = Instant::now();
                let query = stmt.query().bind(id);
                let t1 = Instant::now();
                let row = query.fetch_one(&mut *conn).await.map_err(err)?;
                let t2 = Instant::now();
                black_box(decode(&row).map_err(err)?);
                drop(row);
                let t3 = Instant::now();
                lookups.add(Phase::Bind, ns_between(t0, t1));
                lookups.add(Phase::ExecuteMarshal, ns_between(t1, t2));
                lookups.add(Phase::Decode, ns_between(t2, t3));
            } else {
                let row = stmt
                    .query()
                    .bind(id)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(err)?;
                black_box(decode(&row).map_err(err)?);
            }
            op += 1;
            let t = Instant::now();
            lat.push(ns_between(prev, t));
            prev = t;
        }
        drop(conn);
        if trace_chunk {
            traced_chunks += 1;
            checkout.add(Phase::Checkout, ns_between(prev, Instant::now()));
        }
    }
    let end = Instant::now();
    checkout.ops = traced_chunks;
    let mut phases = lookups.scaled(ids.len() as u64);
    if TRACE {
        phases.set(
            Phase::Checkout,
            checkout.scaled(chunks).ns[Phase::Checkout.index()],
        );
    }
    Ok((ns_between(start, end), lat, phases))
}

fn lookups<'a, const TRACE: bool>(ctx: &'a Ctx<'_>) -> IterFn<'a> {
    Box::new(move |h| {
        let fut = lookup_iteration::<TRACE>(
            ctx.pool.clone(),
            ctx.stmt.clone(),
            ctx.ids.clone(),
            ctx.per_checkout,
            ctx.trace_every,
        );
        let (elapsed_ns, lat, phases) = ctx.on_runtime(fut)?;
        for ns in lat {
            h.record(ns);
        }
        Ok(Iteration {
            elapsed_ns,
            phases: TRACE.then_some(phases),
        })
    })
}
