//! `single_row_lookup` through sqlx: the whole lookup and its micro-benches.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use bench_core::catalog::BenchSpec;
use bench_core::dataset::BenchRow;
use bench_core::dataset::SELECT_BY_ID;
use bench_core::drive::{LookupPath, lookup_iteration, on_runtime};
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
        on_runtime(ctx.rt, async move {
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
        on_runtime(ctx.rt, async move {
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

/// The sqlx lookup path: pool acquire, then `fetch_one` of the statement prepared once and a
/// manual decode. sqlx prepares (a cache lookup) and hops to its worker thread inside
/// `fetch_one`, so with `TRACE` those are part of execute+marshal.
pub struct SqlxPath {
    pool: SqlitePool,
    stmt: SqliteStatement,
}

impl LookupPath for SqlxPath {
    type Conn = sqlx::pool::PoolConnection<sqlx::Sqlite>;

    async fn checkout(&self) -> Result<Self::Conn, String> {
        self.pool.acquire().await.map_err(err)
    }

    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut Self::Conn,
        id: i64,
        phases: &mut PhaseTotals,
    ) -> Result<BenchRow, String> {
        if !TRACE {
            let row = self
                .stmt
                .query()
                .bind(id)
                .fetch_one(&mut **conn)
                .await
                .map_err(err)?;
            return decode(&row).map_err(err);
        }
        let t0 = Instant::now();
        let query = self.stmt.query().bind(id);
        let t1 = Instant::now();
        let row = query.fetch_one(&mut **conn).await.map_err(err)?;
        let t2 = Instant::now();
        let decoded = decode(&row).map_err(err)?;
        drop(row);
        let t3 = Instant::now();
        phases.add(Phase::Bind, ns_between(t0, t1));
        phases.add(Phase::ExecuteMarshal, ns_between(t1, t2));
        phases.add(Phase::Decode, ns_between(t2, t3));
        Ok(decoded)
    }
}

fn lookups<'a, const TRACE: bool>(ctx: &'a Ctx<'_>) -> IterFn<'a> {
    let path = Arc::new(SqlxPath {
        pool: ctx.pool.clone(),
        stmt: ctx.stmt.clone(),
    });
    Box::new(move |h| {
        let fut = lookup_iteration::<SqlxPath, TRACE>(
            path.clone(),
            ctx.ids.clone(),
            ctx.per_checkout,
            ctx.trace_every,
        );
        let (elapsed_ns, lat, phases) = on_runtime(ctx.rt, fut)?;
        for ns in lat {
            h.record(ns);
        }
        Ok(Iteration {
            elapsed_ns,
            phases: TRACE.then_some(phases),
        })
    })
}
