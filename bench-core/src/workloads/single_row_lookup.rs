//! `single_row_lookup`: one row by primary key, decoded into `BenchRow`, over shuffled ids;
//! raw rusqlite, the middleware path per dispatch strategy, and one micro-bench per phase.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backends::middleware::value::{self, Value};
use crate::backends::middleware::{self as mw, Middleware, Strategy};
use crate::backends::raw;
use crate::catalog::BenchSpec;
use crate::dataset::SELECT_BY_ID;
use crate::knobs::Knobs;
use crate::measure::Iteration;
use crate::trace::{PhaseTotals, ns_between};

/// Everything a bench of this target needs.
pub struct Ctx {
    pub path: PathBuf,
    /// The ids one sample iteration looks up, in order.
    pub ids: Arc<Vec<i64>>,
    pub pool_size: usize,
    pub lookups_per_checkout: usize,
    pub spin: Duration,
    pub trace: bool,
    pub trace_every: usize,
    pub rt: tokio::runtime::Runtime,
}

impl Ctx {
    pub fn new(path: PathBuf, ids: Vec<i64>, knobs: &Knobs, trace: bool) -> Result<Ctx, String> {
        let rt = crate::drive::runtime(None)?;
        Ok(Ctx {
            path,
            ids: Arc::new(ids),
            pool_size: knobs.value("concurrency") as usize,
            lookups_per_checkout: knobs.value("lookups_per_checkout") as usize,
            spin: Duration::from_micros(knobs.value("spin_us")),
            trace,
            trace_every: knobs.value("trace_every") as usize,
            rt,
        })
    }

    fn middleware(&self, strategy: Strategy) -> Result<Arc<Middleware>, String> {
        Middleware::new(
            self.path.clone(),
            strategy,
            self.pool_size,
            self.spin,
            self.rt.handle().clone(),
        )
        .map(Arc::new)
        .map_err(|e| e.to_string())
    }

    /// Runs an iteration future on a runtime worker thread, as a request handler would.
    fn on_runtime<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<T, String>> + Send + 'static,
    ) -> Result<T, String> {
        crate::drive::on_runtime(&self.rt, fut)
    }
}

use crate::drive::LookupPath;
use crate::runner::IterFn;

/// Builds the iteration closure of one bench; `None` if the bench is not of this target.
pub fn iteration<'a>(spec: &BenchSpec, ctx: &'a Ctx) -> Result<IterFn<'a>, String> {
    let name = spec.name;
    if name == "turso_raw" || name == "middleware/turso" || name.starts_with("turso/") {
        #[cfg(feature = "turso")]
        return turso_benches::iteration(name, ctx);
        #[cfg(not(feature = "turso"))]
        return Err(format!(
            "bench {name:?} needs bench-core's `turso` feature, which this build lacks"
        ));
    }
    if name == "rusqlite" {
        return rusqlite_lookups(ctx);
    }
    if let Some(s) = name.strip_prefix("middleware/") {
        let strategy: Strategy = s.parse()?;
        return Ok(path_lookups(ctx, ctx.middleware(strategy)?));
    }
    if let Some(s) = name.strip_prefix("interact/") {
        return dispatch_only(ctx, s.parse()?);
    }
    match name {
        "pool_acquire" => checkout_only(ctx, Strategy::Interact),
        "pool_acquire/workers" => checkout_only(ctx, Strategy::Worker),
        "prepare" => prepare_only(ctx),
        "marshalling" => marshal_only(ctx),
        "decode" => decode_only(ctx),
        "param_convert" => param_convert_only(ctx),
        other => Err(format!(
            "bench {other:?} has no implementation in single_row_lookup"
        )),
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Times `ops` repetitions of a synchronous operation as one sample.
fn timed_loop(
    ids: &[i64],
    mut op: impl FnMut(i64) -> Result<(), String>,
) -> Result<Iteration, String> {
    let start = Instant::now();
    for &id in ids {
        op(id)?;
    }
    Ok(Iteration {
        elapsed_ns: ns_between(start, Instant::now()),
        phases: None,
    })
}

fn rusqlite_lookups(ctx: &Ctx) -> Result<IterFn<'_>, String> {
    let conn = raw::open(&ctx.path).map_err(err)?;
    let ids = ctx.ids.clone();
    Ok(Box::new(move |h| {
        let start = Instant::now();
        let mut prev = start;
        for &id in ids.iter() {
            black_box(raw::lookup(&conn, black_box(id)).map_err(err)?);
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
    async fn checkout(&self) -> Result<mw::Conn, String> {
        Middleware::checkout(self).await.map_err(err)
    }
    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut mw::Conn,
        id: i64,
        phases: &mut PhaseTotals,
    ) -> Result<crate::dataset::BenchRow, String> {
        mw::lookup::<TRACE>(self, conn, id, phases)
            .await
            .map_err(err)
    }
}

/// The iteration closure of a lookup path, traced or not.
fn path_lookups<'a, P: LookupPath>(ctx: &'a Ctx, path: Arc<P>) -> IterFn<'a> {
    fn traced<'a, P: LookupPath, const TRACE: bool>(ctx: &'a Ctx, path: Arc<P>) -> IterFn<'a> {
        Box::new(move |h| {
            let fut = crate::drive::lookup_iteration::<P, TRACE>(
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
fn checkout_only(ctx: &Ctx, strategy: Strategy) -> Result<IterFn<'_>, String> {
    let mw = ctx.middleware(strategy)?;
    let n = ctx.ids.len();
    Ok(Box::new(move |_| {
        let mw = mw.clone();
        ctx.on_runtime(async move {
            let start = Instant::now();
            for _ in 0..n {
                drop(black_box(mw.checkout().await.map_err(err)?));
            }
            Ok(Iteration {
                elapsed_ns: ns_between(start, Instant::now()),
                phases: None,
            })
        })
    }))
}

/// The dispatch hop with an empty closure, on a connection borrowed before the clock starts.
fn dispatch_only(ctx: &Ctx, strategy: Strategy) -> Result<IterFn<'_>, String> {
    let mw = ctx.middleware(strategy)?;
    let n = ctx.ids.len();
    Ok(Box::new(move |_| {
        let mw = mw.clone();
        ctx.on_runtime(async move {
            let mut conn = mw.checkout().await.map_err(err)?;
            let start = Instant::now();
            for _ in 0..n {
                mw.call(&mut conn, |c| {
                    black_box(c);
                })
                .await
                .map_err(err)?;
            }
            Ok(Iteration {
                elapsed_ns: ns_between(start, Instant::now()),
                phases: None,
            })
        })
    }))
}

fn prepare_only(ctx: &Ctx) -> Result<IterFn<'_>, String> {
    let conn = raw::open(&ctx.path).map_err(err)?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |_| {
            black_box(conn.prepare_cached(SELECT_BY_ID).map_err(err)?);
            Ok(())
        })
    }))
}

/// Execute a bound statement and build the result set (the statement is prepared once).
fn marshal_only(ctx: &Ctx) -> Result<IterFn<'_>, String> {
    // Leaked so the prepared statement can outlive this function: a runner measures each
    // bench once and exits, so one connection per bench is all it costs.
    let conn = Box::leak(Box::new(raw::open(&ctx.path).map_err(err)?));
    let mut stmt = conn.prepare(SELECT_BY_ID).map_err(err)?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |id| {
            stmt.raw_bind_parameter(1, id).map_err(err)?;
            black_box(value::marshal(&mut stmt).map_err(err)?);
            Ok(())
        })
    }))
}

fn decode_only(ctx: &Ctx) -> Result<IterFn<'_>, String> {
    let mut conn = raw::open(&ctx.path).map_err(err)?;
    let (rs, _) = mw::run_query::<false>(&mut conn, SELECT_BY_ID, &[Value::Integer(ctx.ids[0])]);
    let rs = rs.map_err(err)?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |_| {
            black_box(value::decode_bench_row(black_box(&rs)).map_err(err)?);
            Ok(())
        })
    }))
}

/// Caller values into driver parameters, bound to a prepared statement.
fn param_convert_only(ctx: &Ctx) -> Result<IterFn<'_>, String> {
    // Leaked so the prepared statement can outlive this function: a runner measures each
    // bench once and exits, so one connection per bench is all it costs.
    let conn = Box::leak(Box::new(raw::open(&ctx.path).map_err(err)?));
    let mut stmt = conn.prepare(SELECT_BY_ID).map_err(err)?;
    Ok(Box::new(move |_| {
        timed_loop(&ctx.ids, |id| {
            let values = [Value::Integer(black_box(id))];
            value::bind(&mut stmt, &value::to_params(&values)).map_err(err)?;
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
        async fn checkout(&self) -> Result<turso::Connection, String> {
            self.db.connect().map_err(err)
        }
        async fn lookup<const TRACE: bool>(
            &self,
            conn: &mut turso::Connection,
            id: i64,
            phases: &mut PhaseTotals,
        ) -> Result<crate::dataset::BenchRow, String> {
            t::middleware_lookup::<TRACE>(conn, id, phases).await
        }
    }

    /// Times `ops` async operations on the current thread (turso runs queries on the caller's
    /// task: there is no hop to dispatch to).
    fn timed<'a, S: 'a>(
        ctx: &'a Ctx,
        mut state: S,
        op: impl AsyncFnMut(&mut S, i64) -> Result<(), String> + 'a,
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

    pub fn iteration<'a>(name: &str, ctx: &'a Ctx) -> Result<IterFn<'a>, String> {
        let db = ctx.rt.block_on(t::open(&ctx.path))?;
        match name {
            "middleware/turso" => Ok(path_lookups(ctx, Arc::new(TursoPath { db }))),
            "turso_raw" => {
                let conn = db.connect().map_err(err)?;
                let mut stmt = ctx.rt.block_on(conn.prepare(SELECT_BY_ID)).map_err(err)?;
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
            "turso/pool_acquire" => Ok(timed(ctx, db, async |db: &mut turso::Database, _| {
                drop(black_box(db.connect().map_err(err)?));
                Ok(())
            })),
            "turso/prepare" => {
                let conn = db.connect().map_err(err)?;
                Ok(timed(ctx, conn, async |conn: &mut turso::Connection, _| {
                    black_box(conn.prepare_cached(SELECT_BY_ID).await.map_err(err)?);
                    Ok(())
                }))
            }
            "turso/marshalling" => {
                let conn = db.connect().map_err(err)?;
                let stmt = ctx.rt.block_on(conn.prepare(SELECT_BY_ID)).map_err(err)?;
                Ok(timed(
                    ctx,
                    (conn, stmt),
                    async |(_, stmt): &mut (turso::Connection, turso::Statement), id| {
                        black_box(t::marshal(stmt.query([id]).await.map_err(err)?).await?);
                        Ok(())
                    },
                ))
            }
            "turso/decode" => {
                let conn = db.connect().map_err(err)?;
                let row = ctx.rt.block_on(async {
                    let mut rows = conn.query(SELECT_BY_ID, [ctx.ids[0]]).await.map_err(err)?;
                    rows.next()
                        .await
                        .map_err(err)?
                        .ok_or_else(|| "no row".to_string())
                })?;
                Ok(Box::new(move |_| {
                    timed_loop(&ctx.ids, |_| {
                        black_box(t::decode_row(black_box(&row))?);
                        Ok(())
                    })
                }))
            }
            "turso/param_convert" => Ok(Box::new(move |_| {
                timed_loop(&ctx.ids, |id| {
                    black_box(t::to_params(&[Value::Integer(black_box(id))]));
                    Ok(())
                })
            })),
            other => Err(format!("bench {other:?} has no turso implementation")),
        }
    }
}
