//! bench-core's implementation of `single_row_lookup`: raw rusqlite, the middleware path per
//! dispatch strategy, turso, and the micro-benches of each phase.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backends::middleware::value::{self, Value};
use crate::backends::middleware::{self as mw, Middleware};
use crate::backends::raw;
use crate::catalog::{
    BenchSpec, CONCURRENCY, CatalogError, LOOKUPS_PER_CHECKOUT, SPIN_US, Strategy, Subject,
    TRACE_EVERY, Target,
};
use crate::dataset::{BenchRow, SELECT_BY_ID};
use crate::error::BenchError;
use crate::measure::drive::{self, LookupPath};
use crate::measure::trace::{Phase, PhaseTotals, ns_between};
use crate::measure::{IterFn, Iteration};
use crate::protocol::Event;
use crate::workload::{RunContext, Session, Workload};

/// bench-core's `single_row_lookup`.
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
        Ok(Box::new(Ctx {
            path,
            ids: Arc::new(ids),
            pool_size: k.count(&CONCURRENCY) as usize,
            lookups_per_checkout: k.count(&LOOKUPS_PER_CHECKOUT) as usize,
            spin: Duration::from_micros(k.count(&SPIN_US)),
            trace: run.plan.trace,
            trace_every: k.count(&TRACE_EVERY) as usize,
            rt: drive::runtime(None)?,
        }))
    }
}

/// Everything a bench of this target needs.
struct Ctx {
    path: PathBuf,
    /// The ids one pass looks up, in order.
    ids: Arc<Vec<i64>>,
    pool_size: usize,
    lookups_per_checkout: usize,
    spin: Duration,
    trace: bool,
    trace_every: usize,
    rt: tokio::runtime::Runtime,
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.ids.len() as u64
    }

    fn bench(&self, spec: &BenchSpec) -> Result<IterFn<'_>, BenchError> {
        use Phase::*;
        match (spec.subject, spec.phase) {
            (Subject::Rusqlite, None) => rusqlite_lookups(self),
            (Subject::Rusqlite, Some(Prepare)) => prepare_only(self),
            (Subject::Rusqlite, Some(ExecuteMarshal)) => marshal_only(self),
            (Subject::Middleware(s), None) => Ok(path_lookups(self, self.middleware(s)?)),
            (Subject::Middleware(s), Some(Dispatch)) => dispatch_only(self, s),
            (Subject::Pool(p), Some(Checkout)) => checkout_only(self, p.strategy()),
            (Subject::MiddlewareValues, Some(Decode)) => decode_only(self),
            (Subject::MiddlewareValues, Some(Bind)) => param_convert_only(self),
            #[cfg(feature = "turso")]
            (Subject::Turso | Subject::TursoMiddleware, _) => turso_benches::bench(self, spec),
            #[cfg(not(feature = "turso"))]
            (Subject::Turso | Subject::TursoMiddleware, _) => Err(CatalogError::no_implementation(
                super::spec(),
                spec,
                "this build lacks bench-core's `turso` feature",
            )
            .into()),
            _ => {
                Err(CatalogError::no_implementation(super::spec(), spec, "not a core bench").into())
            }
        }
    }
}

impl Ctx {
    fn middleware(&self, strategy: Strategy) -> Result<Arc<Middleware>, BenchError> {
        Ok(Arc::new(Middleware::new(
            self.path.clone(),
            strategy,
            self.pool_size,
            self.spin,
            self.rt.handle().clone(),
        )?))
    }

    /// Runs an iteration future on a runtime worker thread, as a request handler would.
    fn on_runtime<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<T, BenchError>> + Send + 'static,
    ) -> Result<T, BenchError> {
        drive::on_runtime(&self.rt, fut)
    }
}

/// Times `ops` repetitions of a synchronous operation as one sample.
fn timed_loop(
    ids: &[i64],
    mut op: impl FnMut(i64) -> Result<(), BenchError>,
) -> Result<Iteration, BenchError> {
    let start = Instant::now();
    for &id in ids {
        op(id)?;
    }
    Ok(Iteration {
        elapsed_ns: ns_between(start, Instant::now()),
        phases: None,
    })
}

fn rusqlite_lookups(ctx: &Ctx) -> Result<IterFn<'_>, BenchError> {
    let conn = raw::open(&ctx.path)?;
    let ids = ctx.ids.clone();
    Ok(Box::new(move |h| {
        let start = Instant::now();
        let mut prev = start;
        for &id in ids.iter() {
            black_box(raw::lookup(&conn, black_box(id))?);
            let t = Instant::now();
            h.record(ns_between(prev, t));
            prev = t;
        }
        Ok(Iteration {
            elapsed_ns: ns_between(start, prev),
            phases: None,
        })
    }))
}

impl LookupPath for Middleware {
    type Conn = mw::Conn;
    async fn checkout(&self) -> Result<mw::Conn, BenchError> {
        Ok(Middleware::checkout(self).await?)
    }
    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut mw::Conn,
        id: i64,
        phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        Ok(mw::lookup::<TRACE>(self, conn, id, phases).await?)
    }
}

/// The iteration closure of a lookup path, traced or not.
fn path_lookups<'a, P: LookupPath>(ctx: &'a Ctx, path: Arc<P>) -> IterFn<'a> {
    fn traced<'a, P: LookupPath, const TRACE: bool>(ctx: &'a Ctx, path: Arc<P>) -> IterFn<'a> {
        Box::new(move |h| {
            let fut = drive::lookup_iteration::<P, TRACE>(
                path.clone(),
                ctx.ids.clone(),
                ctx.lookups_per_checkout,
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
    if ctx.trace {
        traced::<P, true>(ctx, path)
    } else {
        traced::<P, false>(ctx, path)
    }
}

/// pool.get() and drop, nothing else.
fn checkout_only(ctx: &Ctx, strategy: Strategy) -> Result<IterFn<'_>, BenchError> {
    let mw = ctx.middleware(strategy)?;
    let n = ctx.ids.len();
    Ok(Box::new(move |_| {
        let mw = mw.clone();
        ctx.on_runtime(async move {
            let start = Instant::now();
            for _ in 0..n {
                drop(black_box(mw.checkout().await?));
            }
            Ok(Iteration {
                elapsed_ns: ns_between(start, Instant::now()),
                phases: None,
            })
        })
    }))
}

/// The dispatch hop with an empty closure, on a connection borrowed before the clock starts.
fn dispatch_only(ctx: &Ctx, strategy: Strategy) -> Result<IterFn<'_>, BenchError> {
    let mw = ctx.middleware(strategy)?;
    let n = ctx.ids.len();
    Ok(Box::new(move |_| {
        let mw = mw.clone();
        ctx.on_runtime(async move {
            let mut conn = mw.checkout().await?;
            let start = Instant::now();
            for _ in 0..n {
                mw.call(&mut conn, |c| {
                    black_box(c);
                })
                .await?;
            }
            Ok(Iteration {
                elapsed_ns: ns_between(start, Instant::now()),
                phases: None,
            })
        })
    }))
}

fn prepare_only(ctx: &Ctx) -> Result<IterFn<'_>, BenchError> {
    let conn = raw::open(&ctx.path)?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |_| {
            black_box(conn.prepare_cached(SELECT_BY_ID)?);
            Ok(())
        })
    }))
}

/// Execute a bound statement and build the result set (the statement is prepared once).
fn marshal_only(ctx: &Ctx) -> Result<IterFn<'_>, BenchError> {
    // Leaked so the prepared statement can outlive this function: a runner measures each
    // bench once and exits, so one connection per bench is all it costs.
    let conn = Box::leak(Box::new(raw::open(&ctx.path)?));
    let mut stmt = conn.prepare(SELECT_BY_ID)?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |id| {
            stmt.raw_bind_parameter(1, id)?;
            black_box(value::marshal(&mut stmt)?);
            Ok(())
        })
    }))
}

fn decode_only(ctx: &Ctx) -> Result<IterFn<'_>, BenchError> {
    let mut conn = raw::open(&ctx.path)?;
    let (rs, _) = mw::run_query::<false>(&mut conn, SELECT_BY_ID, &[Value::Integer(ctx.ids[0])]);
    let rs = rs?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |_| {
            black_box(value::decode_bench_row(black_box(&rs)).map_err(mw::MiddlewareError::from)?);
            Ok(())
        })
    }))
}

/// Caller values into driver parameters, bound to a prepared statement.
fn param_convert_only(ctx: &Ctx) -> Result<IterFn<'_>, BenchError> {
    // Leaked so the prepared statement can outlive this function: a runner measures each
    // bench once and exits, so one connection per bench is all it costs.
    let conn = Box::leak(Box::new(raw::open(&ctx.path)?));
    let mut stmt = conn.prepare(SELECT_BY_ID)?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |id| {
            let values = [Value::Integer(black_box(id))];
            value::bind(&mut stmt, &value::to_params(&values))?;
            Ok(())
        })
    }))
}

#[cfg(feature = "turso")]
mod turso_benches {
    //! turso: raw lookups, the middleware path over it, and its micro-benches.
    use super::*;
    use crate::backends::turso as t;

    /// turso has no pool: "checkout" opens a connection from the `Database`.
    pub struct TursoPath {
        db: turso::Database,
    }

    impl LookupPath for TursoPath {
        type Conn = turso::Connection;
        async fn checkout(&self) -> Result<turso::Connection, BenchError> {
            self.db.connect().map_err(BenchError::driver)
        }
        async fn lookup<const TRACE: bool>(
            &self,
            conn: &mut turso::Connection,
            id: i64,
            phases: &mut PhaseTotals,
        ) -> Result<BenchRow, BenchError> {
            t::middleware_lookup::<TRACE>(conn, id, phases).await
        }
    }

    /// Times `ops` async operations on the current thread (turso runs queries on the caller's
    /// task: there is no hop to dispatch to).
    fn timed<'a, S: 'a>(
        ctx: &'a Ctx,
        mut state: S,
        op: impl AsyncFnMut(&mut S, i64) -> Result<(), BenchError> + 'a,
    ) -> IterFn<'a> {
        let mut op = op;
        Box::new(move |_| {
            ctx.rt.block_on(async {
                let start = Instant::now();
                for &id in ctx.ids.iter() {
                    op(&mut state, id).await?;
                }
                Ok(Iteration {
                    elapsed_ns: ns_between(start, Instant::now()),
                    phases: None,
                })
            })
        })
    }

    pub fn bench<'a>(ctx: &'a Ctx, spec: &BenchSpec) -> Result<IterFn<'a>, BenchError> {
        use Phase::*;
        let db = ctx.rt.block_on(t::open(&ctx.path))?;
        let connect = |db: &turso::Database| db.connect().map_err(BenchError::driver);
        match (spec.subject, spec.phase) {
            (Subject::TursoMiddleware, None) => Ok(path_lookups(ctx, Arc::new(TursoPath { db }))),
            (Subject::Turso, None) => {
                let conn = connect(&db)?;
                let mut stmt = ctx
                    .rt
                    .block_on(conn.prepare(SELECT_BY_ID))
                    .map_err(BenchError::driver)?;
                Ok(Box::new(move |h| {
                    let _keep_open = &conn;
                    ctx.rt.block_on(async {
                        let start = Instant::now();
                        let mut prev = start;
                        for &id in ctx.ids.iter() {
                            black_box(t::lookup(&mut stmt, black_box(id)).await?);
                            let now = Instant::now();
                            h.record(ns_between(prev, now));
                            prev = now;
                        }
                        Ok(Iteration {
                            elapsed_ns: ns_between(start, prev),
                            phases: None,
                        })
                    })
                }))
            }
            (Subject::Turso, Some(Checkout)) => {
                Ok(timed(ctx, db, async |db: &mut turso::Database, _| {
                    drop(black_box(db.connect().map_err(BenchError::driver)?));
                    Ok(())
                }))
            }
            (Subject::Turso, Some(Prepare)) => {
                let conn = connect(&db)?;
                Ok(timed(ctx, conn, async |conn: &mut turso::Connection, _| {
                    black_box(
                        conn.prepare_cached(SELECT_BY_ID)
                            .await
                            .map_err(BenchError::driver)?,
                    );
                    Ok(())
                }))
            }
            (Subject::Turso, Some(ExecuteMarshal)) => {
                let conn = connect(&db)?;
                let stmt = ctx
                    .rt
                    .block_on(conn.prepare(SELECT_BY_ID))
                    .map_err(BenchError::driver)?;
                Ok(timed(
                    ctx,
                    (conn, stmt),
                    async |(_, stmt): &mut (turso::Connection, turso::Statement), id| {
                        black_box(
                            t::marshal(stmt.query([id]).await.map_err(BenchError::driver)?).await?,
                        );
                        Ok(())
                    },
                ))
            }
            (Subject::Turso, Some(Decode)) => {
                let conn = connect(&db)?;
                let row = ctx.rt.block_on(async {
                    let mut rows = conn
                        .query(SELECT_BY_ID, [ctx.ids[0]])
                        .await
                        .map_err(BenchError::driver)?;
                    rows.next()
                        .await
                        .map_err(BenchError::driver)?
                        .ok_or_else(|| BenchError::Other("no row returned".into()))
                })?;
                Ok(Box::new(move |_| {
                    timed_loop(&ctx.ids, |_| {
                        black_box(t::decode_row(black_box(&row))?);
                        Ok(())
                    })
                }))
            }
            (Subject::Turso, Some(Bind)) => Ok(Box::new(move |_| {
                timed_loop(&ctx.ids, |id| {
                    black_box(t::to_params(&[Value::Integer(black_box(id))]));
                    Ok(())
                })
            })),
            _ => Err(CatalogError::no_implementation(
                super::super::spec(),
                spec,
                "no turso bench of this phase",
            )
            .into()),
        }
    }
}
