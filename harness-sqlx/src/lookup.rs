//! `single_row_lookup` through sqlx: the whole lookup and its micro-benches. The pool and the
//! shared dataset are also what the multithread mirrors use.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{
    BenchSpec, CONCURRENCY, CatalogError, LOOKUPS_PER_CHECKOUT, SQLX_STATEMENT_CACHE, Subject,
    TRACE_EVERY, Target,
};
use bench_core::dataset::{BenchRow, DatasetKey, SELECT_BY_ID};
use bench_core::measure::drive::{self, LookupPath, lookup_iteration, on_runtime};
use bench_core::measure::trace::{Phase, PhaseTotals, ns_between};
use bench_core::measure::{IterFn, Iteration};
use bench_core::protocol::Event;
use bench_core::workload::{RunContext, Session, Workload};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteStatement};
use sqlx::{Executor, SqlSafeStr, Statement};

use crate::dataset::decode;

pub fn err(e: impl std::fmt::Display) -> BenchError {
    BenchError::driver(e)
}

/// sqlx's `single_row_lookup`.
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

/// A pool on the shared dataset, the lookup statement prepared once, and the ids of a pass.
pub struct Ctx {
    pub rt: tokio::runtime::Runtime,
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

impl Ctx {
    /// Builds or reuses the target's dataset with sqlx and opens a pool on it.
    pub fn open(run: &RunContext<'_>, emit: &mut dyn FnMut(Event)) -> Result<Ctx, BenchError> {
        let rt = drive::runtime(None)?;
        let k = &run.plan.knobs;
        let ensure = |dir: &std::path::Path,
                      key: &DatasetKey,
                      on_build: &mut dyn FnMut(&std::path::Path)| {
            bench_core::dataset::ensure_with(
                dir,
                key,
                on_build,
                &|p| rt.block_on(crate::dataset::validate(p, key)),
                &|p| rt.block_on(crate::dataset::write(p, key)),
            )
        };
        let (path, ids) = run.lookup_dataset(emit, &ensure)?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .statement_cache_capacity(k.count(&SQLX_STATEMENT_CACHE) as usize);
        let (pool, stmt) = rt.block_on(async {
            let pool = SqlitePoolOptions::new()
                .max_connections(k.count(&CONCURRENCY) as u32)
                .connect_with(options)
                .await
                .map_err(err)?;
            let stmt = pool
                .prepare(SELECT_BY_ID.into_sql_str())
                .await
                .map_err(err)?;
            Ok::<_, BenchError>((pool, stmt))
        })?;
        Ok(Ctx {
            rt,
            pool,
            stmt,
            ids: Arc::new(ids),
            concurrency: k.count(&CONCURRENCY) as usize,
            // multithread_pool_checkout has no such knob: one checkout per task there.
            per_checkout: k.count_if(&LOOKUPS_PER_CHECKOUT).unwrap_or(1) as usize,
            trace: run.plan.trace,
            trace_every: k.count_if(&TRACE_EVERY).unwrap_or(1) as usize,
        })
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        let pool = self.pool.clone();
        self.rt.block_on(pool.close());
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.ids.len() as u64
    }

    fn bench(&self, spec: &BenchSpec) -> Result<IterFn<'_>, BenchError> {
        use Phase::*;
        if spec.subject != Subject::SqlxSqlite {
            return Err(
                CatalogError::no_implementation(self_spec(), spec, "not a sqlx bench").into(),
            );
        }
        match spec.phase {
            None => Ok(if self.trace {
                lookups::<true>(self)
            } else {
                lookups::<false>(self)
            }),
            Some(Checkout) => Ok(async_loop(self, |pool, _, _| async move {
                drop(black_box(pool.acquire().await.map_err(err)?));
                Ok(())
            })),
            Some(Prepare) => Ok(on_connection(self, |conn, _| {
                Box::pin(async move {
                    black_box(
                        conn.prepare(SELECT_BY_ID.into_sql_str())
                            .await
                            .map_err(err)?,
                    );
                    Ok(())
                })
            })),
            Some(ExecuteMarshal) => Ok(on_connection(self, |conn, id| {
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
            Some(Decode) => {
                let row = self
                    .rt
                    .block_on(
                        sqlx::query(SELECT_BY_ID)
                            .bind(self.ids[0])
                            .fetch_one(&self.pool),
                    )
                    .map_err(err)?;
                let ids = self.ids.clone();
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
            Some(Bind) => {
                let ids = self.ids.clone();
                Ok(Box::new(move |_| {
                    let start = Instant::now();
                    for &id in ids.iter() {
                        let _ = black_box(
                            sqlx::query::<sqlx::Sqlite>(SELECT_BY_ID).bind(black_box(id)),
                        );
                    }
                    Ok(Iteration {
                        elapsed_ns: ns_between(start, Instant::now()),
                        phases: None,
                    })
                }))
            }
            Some(Dispatch) => Err(CatalogError::no_implementation(
                self_spec(),
                spec,
                "sqlx has no dispatch step a caller can isolate",
            )
            .into()),
        }
    }
}

fn self_spec() -> &'static Target {
    bench_core::workloads::single_row_lookup::spec()
}

/// Times `ops` runs of an async operation on the pool as one sample.
fn async_loop<F, Fut>(ctx: &Ctx, op: F) -> IterFn<'_>
where
    F: Fn(SqlitePool, SqliteStatement, i64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(), BenchError>> + Send,
{
    Box::new(move |_| {
        let (pool, stmt, ids, op) = (
            ctx.pool.clone(),
            ctx.stmt.clone(),
            ctx.ids.clone(),
            op.clone(),
        );
        on_runtime(&ctx.rt, async move {
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
    Box<dyn std::future::Future<Output = Result<(), BenchError>> + Send + 'c>,
>;

/// Times `ops` runs of an operation on a connection acquired before the clock starts.
fn on_connection(ctx: &Ctx, op: ConnOp) -> IterFn<'_> {
    Box::new(move |_| {
        let (pool, ids) = (ctx.pool.clone(), ctx.ids.clone());
        on_runtime(&ctx.rt, async move {
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

    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        self.pool.acquire().await.map_err(err)
    }

    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut Self::Conn,
        id: i64,
        phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
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

fn lookups<const TRACE: bool>(ctx: &Ctx) -> IterFn<'_> {
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
        let (elapsed_ns, lat, phases) = on_runtime(&ctx.rt, fut)?;
        for ns in lat {
            h.record(ns);
        }
        Ok(Iteration {
            elapsed_ns,
            phases: TRACE.then_some(phases),
        })
    })
}
