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
use bench_core::dataset::{BenchRow, DatasetKey, LOOKUP_WORK, SELECT_BY_ID, lookup_work};
use bench_core::measure::drive::{self, LookupPath, on_runtime};
use bench_core::measure::trace::{Phase, PhaseTotals, ns_between, traced};
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::protocol::Event;
use bench_core::settings::SqliteSettings;
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
    pub settings: SqliteSettings,
    /// What the pool's connections read back.
    pub read_back: std::collections::BTreeMap<String, String>,
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
        let options = crate::settings::apply(
            SqliteConnectOptions::new()
                .filename(path)
                .statement_cache_capacity(k.count(&SQLX_STATEMENT_CACHE) as usize),
            &run.sqlite,
        );
        let (pool, stmt, read_back) = rt.block_on(async {
            let pool = SqlitePoolOptions::new()
                .max_connections(k.count(&CONCURRENCY) as u32)
                .connect_with(options)
                .await
                .map_err(err)?;
            let stmt = pool
                .prepare(SELECT_BY_ID.into_sql_str())
                .await
                .map_err(err)?;
            let mut conn = pool.acquire().await.map_err(err)?;
            let read_back = crate::settings::read_back(&mut conn).await?;
            Ok::<_, BenchError>((pool, stmt, read_back))
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
            settings: run.sqlite.clone(),
            read_back,
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

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(bench.subject, self.concurrency, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        Ok(self.bench_iter(spec)?.with_settings(self.read_back.clone()))
    }
}

impl Ctx {
    fn bench_iter(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        use Phase::*;
        if spec.subject != Subject::SqlxSqlite {
            return Err(
                CatalogError::no_implementation(self_spec(), spec, "not a sqlx bench").into(),
            );
        }
        let n = self.ids.len() as u64;
        let ids_work: u64 = self.ids.iter().map(|id| *id as u64).sum();
        Ok(match spec.phase {
            None => Bench::new(
                if self.trace {
                    lookups::<true>(self)
                } else {
                    lookups::<false>(self)
                },
                lookup_work(&self.ids),
                LOOKUP_WORK,
            ),
            Some(Checkout) => Bench::new(
                async_loop(self, |pool, _, _| async move {
                    drop(black_box(pool.acquire().await.map_err(err)?));
                    Ok(1)
                }),
                n,
                "connections checked out",
            ),
            Some(Prepare) => Bench::new(
                on_connection(self, |conn, _| {
                    Box::pin(async move {
                        let stmt = black_box(
                            conn.prepare(SELECT_BY_ID.into_sql_str())
                                .await
                                .map_err(err)?,
                        );
                        Ok(stmt.columns().len() as u64)
                    })
                }),
                4 * n,
                "statements prepared (their column count)",
            ),
            Some(ExecuteMarshal) => Bench::new(
                on_connection(self, |conn, id| {
                    Box::pin(async move {
                        let row = black_box(
                            sqlx::query(SELECT_BY_ID)
                                .bind(id)
                                .fetch_one(&mut *conn)
                                .await
                                .map_err(err)?,
                        );
                        Ok(1 + sqlx::Row::try_get::<i64, _>(&row, 0).map_err(err)? as u64)
                    })
                }),
                self.ids.iter().map(|id| *id as u64 + 1).sum(),
                "result sets fetched (rows + first id)",
            ),
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
                let iter: IterFn<'_> = Box::new(move |_| {
                    let mut work = 0u64;
                    let start = Instant::now();
                    for _ in ids.iter() {
                        work = work.wrapping_add(
                            black_box(decode(black_box(&row)).map_err(err)?).checksum(),
                        );
                    }
                    Ok(Iteration::new(ns_between(start, Instant::now()), work))
                });
                let per_pass = bench_core::dataset::row(self.ids[0])
                    .checksum()
                    .wrapping_mul(n);
                Bench::new(iter, per_pass, "rows decoded (their checksum)")
            }
            Some(Bind) => {
                let ids = self.ids.clone();
                let iter: IterFn<'_> = Box::new(move |_| {
                    let mut work = 0u64;
                    let start = Instant::now();
                    for &id in ids.iter() {
                        let q = black_box(
                            sqlx::query::<sqlx::Sqlite>(SELECT_BY_ID).bind(black_box(id)),
                        );
                        // The bound value itself is sqlx's business; that a query was built
                        // per id is what is checked.
                        drop(q);
                        work = work.wrapping_add(id as u64);
                    }
                    Ok(Iteration::new(ns_between(start, Instant::now()), work))
                });
                Bench::new(iter, ids_work, "queries built and bound (their ids)")
            }
            Some(Dispatch) => {
                return Err(CatalogError::no_implementation(
                    self_spec(),
                    spec,
                    "sqlx has no dispatch step a caller can isolate",
                )
                .into());
            }
        })
    }
}

fn self_spec() -> &'static Target {
    bench_core::workloads::single_row_lookup::spec()
}

/// Times a pass of an async operation on the pool; each operation returns its work.
fn async_loop<F, Fut>(ctx: &Ctx, op: F) -> IterFn<'_>
where
    F: Fn(SqlitePool, SqliteStatement, i64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<u64, BenchError>> + Send,
{
    Box::new(move |_| {
        let (pool, stmt, ids, op) = (
            ctx.pool.clone(),
            ctx.stmt.clone(),
            ctx.ids.clone(),
            op.clone(),
        );
        on_runtime(&ctx.rt, async move {
            let mut work = 0u64;
            let start = Instant::now();
            for &id in ids.iter() {
                work = work.wrapping_add(op(pool.clone(), stmt.clone(), id).await?);
            }
            Ok(Iteration::new(ns_between(start, Instant::now()), work))
        })
    })
}

type ConnOp = for<'c> fn(
    &'c mut sqlx::SqliteConnection,
    i64,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<u64, BenchError>> + Send + 'c>,
>;

/// Times a pass of an operation on a connection acquired before the clock starts.
fn on_connection(ctx: &Ctx, op: ConnOp) -> IterFn<'_> {
    Box::new(move |_| {
        let (pool, ids) = (ctx.pool.clone(), ctx.ids.clone());
        on_runtime(&ctx.rt, async move {
            let mut conn = pool.acquire().await.map_err(err)?;
            let mut work = 0u64;
            let start = Instant::now();
            for &id in ids.iter() {
                work = work.wrapping_add(op(&mut conn, id).await?);
            }
            Ok(Iteration::new(ns_between(start, Instant::now()), work))
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
        phases.add(Phase::Bind, traced(t0, t1));
        phases.add(Phase::ExecuteMarshal, traced(t1, t2));
        phases.add(Phase::Decode, traced(t2, t3));
        Ok(decoded)
    }
}

fn lookups<const TRACE: bool>(ctx: &Ctx) -> IterFn<'_> {
    let path = Arc::new(SqlxPath {
        pool: ctx.pool.clone(),
        stmt: ctx.stmt.clone(),
    });
    let plan = drive::LookupPlan {
        ids: ctx.ids.clone(),
        per_checkout: ctx.per_checkout,
        trace_every: ctx.trace_every,
    };
    drive::lookup_passes(path, &ctx.rt, plan, TRACE)
}
