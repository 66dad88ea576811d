//! bench-core's implementation of `single_row_lookup`: raw rusqlite, the middleware path per
//! dispatch strategy, turso, and the micro-benches of each phase. Every bench folds what it
//! read into a checksum the runner checks against the dataset.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::backends::middleware::value::{self, Value};
use crate::backends::middleware::{self as mw};
use crate::backends::raw;
use crate::catalog::{
    BenchSpec, CONCURRENCY, CatalogError, LOOKUPS_PER_CHECKOUT, SPIN_US, Strategy, Subject,
    TRACE_EVERY, Target,
};
use crate::dataset::{LOOKUP_WORK, SELECT_BY_ID, row};
use crate::error::BenchError;
use crate::measure::drive;
use crate::measure::trace::{Phase, ns_between};
use crate::measure::{Bench, IterFn, Iteration};
use crate::protocol::Event;
use crate::workload::{RunContext, Session, Workload};
use ctx::*;

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
        let (path, ids) = run.lookup_dataset(emit, &crate::on_rusqlite::ensure)?;
        Ok(Box::new(Ctx {
            path,
            ids: Arc::new(ids),
            pool_size: k.count(&CONCURRENCY) as usize,
            lookups_per_checkout: k.count(&LOOKUPS_PER_CHECKOUT) as usize,
            spin: Duration::from_micros(k.count(&SPIN_US)),
            trace: run.plan.trace,
            trace_every: k.count(&TRACE_EVERY) as usize,
            settings: run.sqlite.clone(),
            pool: k.word(&crate::catalog::POOL).to_string(),
            values: mw::Values::chosen(k.word(&crate::catalog::VALUES)),
            rt: std::sync::OnceLock::new(),
        }))
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.ids.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        if let (Subject::Middleware(s), None) = (bench.subject, bench.phase)
            && let Some(why) = crate::catalog::pool_mismatch(&self.pool, s)
                .or_else(|| crate::catalog::values_mismatch(&self.pool, self.values.word(), s))
        {
            return Some(why);
        }
        crate::settings::skip_reason(bench.subject, self.pool_size, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        use Phase::*;
        match (spec.subject, spec.phase) {
            (Subject::SqliteC, None) => c_lookups(self),
            (Subject::Rusqlite, None) => rusqlite_lookups(self),
            (Subject::Rusqlite, Some(Prepare)) => prepare_only(self),
            (Subject::Rusqlite, Some(ExecuteMarshal)) => marshal_only(self),
            (Subject::Middleware(s), None) => {
                let on = self.middleware(s)?;
                let settings = on.rt.block_on(on.path.read_back())?;
                let pool = crate::catalog::Pool::chosen(&self.pool, s);
                Ok(path_lookups(self, on)
                    .with_settings(settings)
                    .with_backend(pool.label()))
            }
            (Subject::Middleware(s), Some(Dispatch)) => dispatch_only(self, s),
            (Subject::Pool(p), Some(Checkout)) => checkout_only(self, p),
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
            #[cfg(feature = "crates")]
            (Subject::Crate(c), _) => crate_benches::bench(self, c, spec),
            #[cfg(not(feature = "crates"))]
            (Subject::Crate(_), _) => Err(CatalogError::no_implementation(
                super::spec(),
                spec,
                "this build lacks bench-core's `crates` feature",
            )
            .into()),
            _ => {
                Err(CatalogError::no_implementation(super::spec(), spec, "not a core bench").into())
            }
        }
    }
}

/// Statement prepared once; per lookup: bind, step, decode. The bench owns its connection
/// (closed when the bench ends, so a `locking_mode=exclusive` lock does not outlive it); each
/// pass takes the statement from the connection's cache once, before its clock starts.
fn rusqlite_lookups(ctx: &Ctx) -> Result<Bench<'_>, BenchError> {
    let (conn, settings) = ctx.connection()?;
    let ids = ctx.ids.clone();
    let mut pass = 0u64;
    let iter: IterFn<'_> = Box::new(move |h| {
        let mut stmt = conn.prepare_cached(SELECT_BY_ID)?;
        pass += 1;
        drive::sampled_pass(&ids, h, pass, |id| {
            Ok(raw::lookup(&mut stmt, id)?.checksum())
        })
    });
    Ok(Bench::new(iter, ctx.pass_work(), LOOKUP_WORK).with_settings(settings))
}

/// The same lookups through SQLite's C API on a connection opened as rusqlite's is.
fn c_lookups(ctx: &Ctx) -> Result<Bench<'_>, BenchError> {
    let (conn, settings) = ctx.connection()?;
    let mut stmt = crate::backends::c_api::Lookup::prepare(conn)?;
    let ids = ctx.ids.clone();
    let mut pass = 0u64;
    let iter: IterFn<'_> = Box::new(move |h| {
        pass += 1;
        drive::sampled_pass(&ids, h, pass, |id| stmt.lookup(id))
    });
    Ok(Bench::new(iter, ctx.pass_work(), LOOKUP_WORK).with_settings(settings))
}

/// pool.get() and drop, nothing else, on pool `p` whatever the `pool` knob names.
fn checkout_only(ctx: &Ctx, p: crate::catalog::Pool) -> Result<Bench<'_>, BenchError> {
    let on = ctx.middleware_on(p.strategy(), p)?;
    let settings = on.rt.block_on(on.path.read_back())?;
    let n = ctx.ids.len();
    let iter: IterFn<'_> = Box::new(move |_| {
        let on = &on;
        let mw = on.path.clone();
        on.run(async move {
            let start = Instant::now();
            for _ in 0..n {
                drop(black_box(mw.checkout().await?));
            }
            Ok(Iteration::new(ns_between(start, Instant::now()), n as u64))
        })
    });
    Ok(Bench::new(iter, n as u64, "connections checked out").with_settings(settings))
}

/// The dispatch hop with an empty closure, on a connection borrowed before the clock starts.
fn dispatch_only(ctx: &Ctx, strategy: Strategy) -> Result<Bench<'_>, BenchError> {
    let on = ctx.middleware(strategy)?;
    let settings = on.rt.block_on(on.path.read_back())?;
    let n = ctx.ids.len();
    let iter: IterFn<'_> = Box::new(move |_| {
        let on = &on;
        let mw = on.path.clone();
        on.run(async move {
            let mut conn = mw.checkout().await?;
            let mut work = 0u64;
            let start = Instant::now();
            // Dispatched as the lookups are (the middleware's own work: wait_aside's in place).
            for _ in 0..n {
                work += mw
                    .run_own(&mut conn, |c| black_box(c).is_autocommit() as u64)
                    .await?;
            }
            Ok(Iteration::new(ns_between(start, Instant::now()), work))
        })
    });
    Ok(
        Bench::new(iter, n as u64, "closures run on the connection's thread")
            .with_settings(settings),
    )
}

/// `prepare_cached` of the lookup statement (a cache hit after the first).
fn prepare_only(ctx: &Ctx) -> Result<Bench<'_>, BenchError> {
    let (conn, settings) = ctx.connection()?;
    let iter: IterFn<'_> = Box::new(move |_| {
        timed_loop(&ctx.ids, |_| {
            Ok(black_box(conn.prepare_cached(SELECT_BY_ID)?).parameter_count() as u64)
        })
    });
    Ok(Bench::new(
        iter,
        ctx.ids.len() as u64,
        "statements prepared (their parameter count)",
    )
    .with_settings(settings))
}

/// Bind, execute and build the result set, on a statement prepared once.
fn marshal_only(ctx: &Ctx) -> Result<Bench<'_>, BenchError> {
    let (conn, settings) = ctx.connection()?;
    // The bench owns its connection; each pass takes the statement from its cache, untimed.
    let iter: IterFn<'_> = Box::new(move |_| {
        let mut stmt = conn.prepare_cached(SELECT_BY_ID)?;
        timed_loop(&ctx.ids, |id| {
            stmt.raw_bind_parameter(1, id)?;
            let rs = black_box(value::marshal(&mut stmt)?);
            Ok(result_set_work(&rs))
        })
    });
    let per_pass = ctx.ids.iter().map(|id| *id as u64 + 1).sum();
    Ok(Bench::new(iter, per_pass, "result sets built (rows + first id)").with_settings(settings))
}

fn decode_only(ctx: &Ctx) -> Result<Bench<'_>, BenchError> {
    let (mut conn, settings) = ctx.connection()?;
    let (rs, _) = mw::run_query::<false>(&mut conn, SELECT_BY_ID, &[Value::Integer(ctx.ids[0])]);
    let rs = rs?;
    let iter: IterFn<'_> = Box::new(move |_| {
        timed_loop(&ctx.ids, |_| {
            Ok(black_box(value::decode_bench_row(black_box(&rs))?).checksum())
        })
    });
    let per_pass = row(ctx.ids[0])
        .checksum()
        .wrapping_mul(ctx.ids.len() as u64);
    Ok(Bench::new(iter, per_pass, "rows decoded (their checksum)").with_settings(settings))
}

/// The caller's value into a driver parameter: what the bind phase measures on every driver
/// (binding it to the statement happens inside execute, as in sqlx and turso).
fn param_convert_only(ctx: &Ctx) -> Result<Bench<'_>, BenchError> {
    let iter: IterFn<'_> = Box::new(move |_| {
        timed_loop(&ctx.ids, |id| {
            let values = [Value::Integer(black_box(id))];
            let params = black_box(value::to_params(&values));
            Ok(match params.first() {
                Some(ToSqlOutput::Borrowed(ValueRef::Integer(i))) => *i as u64,
                _ => 0,
            })
        })
    });
    let per_pass = ctx.ids.iter().map(|id| *id as u64).sum();
    Ok(Bench::new(
        iter,
        per_pass,
        "parameters converted (their values)",
    ))
}

mod ctx;
#[cfg(feature = "turso")]
mod turso_benches;

#[cfg(feature = "crates")]
mod crate_benches;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::middleware::Middleware;
    use crate::dataset::DatasetKey;
    use crate::on_rusqlite::ensure;
    use crate::settings::SqliteSettings;

    /// Two benches taking turns, one of them `block_in_place`: the other's `thread` pool keeps
    /// to its runtime's workers (on a runtime they shared, the hand-offs would move them to
    /// new threads and the pool would open a connection on each).
    #[test]
    fn a_middleware_bench_s_workers_stay_its_own_beside_block_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let ds = ensure(dir.path(), &DatasetKey::new("own_rt", 500, 1), &mut |_| {}).unwrap();
        let ctx = Ctx {
            path: ds.path.clone(),
            ids: Arc::new((1..=500).collect()),
            pool_size: 2,
            lookups_per_checkout: 1,
            spin: Duration::from_micros(20),
            trace: false,
            trace_every: 4,
            settings: SqliteSettings::default(),
            pool: "thread".into(),
            values: mw::Values::Prepared,
            rt: std::sync::OnceLock::new(),
        };
        let aside = ctx.middleware(Strategy::BlockInPlace).unwrap();
        let in_place = ctx.middleware(Strategy::WaitAside).unwrap();
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        for seed in 0..40 {
            for on in [&aside, &in_place] {
                let pass = drive::lookup_iteration::<Middleware, false>(
                    on.path.clone(),
                    ctx.ids.clone(),
                    1,
                    4,
                    seed,
                );
                assert_eq!(on.run(pass).unwrap().work, ctx.pass_work());
            }
        }
        let opened = in_place.path.thread_connections().unwrap();
        assert!(
            (1..=workers).contains(&opened),
            "{opened} connections for {workers} workers"
        );
    }
}
