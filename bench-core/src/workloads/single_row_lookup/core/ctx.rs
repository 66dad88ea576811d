//! What every bench of bench-core's `single_row_lookup` shares: the context a session holds
//! (ids, dataset, settings, runtimes), the timed loop and the middleware's lookup path.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backends::middleware::value::{self, Value};
use crate::backends::middleware::{self as mw, Middleware};
use crate::backends::raw;
use crate::catalog::Strategy;
use crate::dataset::{BenchRow, LOOKUP_WORK, lookup_work};
use crate::error::BenchError;
use crate::measure::drive::{self, LookupPath};
use crate::measure::trace::{PhaseTotals, ns_between};
use crate::measure::{Bench, Iteration};
use crate::settings::SqliteSettings;

/// Everything a bench of this target needs.
pub(super) struct Ctx {
    pub(super) path: PathBuf,
    /// The ids one pass looks up, in order.
    pub(super) ids: Arc<Vec<i64>>,
    pub(super) pool_size: usize,
    pub(super) lookups_per_checkout: usize,
    pub(super) spin: Duration,
    pub(super) trace: bool,
    pub(super) trace_every: usize,
    pub(super) settings: SqliteSettings,
    /// The `pool` knob: the pool under the middleware path.
    pub(super) pool: String,
    /// The `values` knob: the middleware path's value layer.
    pub(super) values: mw::Values,
    /// The runtime the crates' and turso's benches share (a middleware bench makes its own:
    /// [`OnRuntime`]). Made when the first bench that needs one asks: in a run of raw benches
    /// alone the runner has no thread but its own, so the raw lookups run on the C library's
    /// single-thread paths, as a plain single-threaded loop (or Criterion) does.
    pub(super) rt: std::sync::OnceLock<Arc<tokio::runtime::Runtime>>,
}

/// A path and the runtime it runs on, dropped after it (a pool gives its connections back
/// on the runtime's blocking threads).
///
/// Each middleware bench has a runtime of its own. The benches of a run take turns, and a
/// bench on a runtime another shares would read what the other does to it: `block_in_place`
/// hands its worker's core to another thread at each call, so the runtime's workers go on on
/// new threads, and a `thread` pool on that runtime opens a connection, cold, on each (7 to
/// 10 where 2 or 3 serve it alone; its ratio to rusqlite rose 3 to 4 points:
/// docs/src/floor.md).
pub(super) struct OnRuntime<P> {
    pub(super) path: Arc<P>,
    pub(super) rt: Arc<tokio::runtime::Runtime>,
}

impl<P> OnRuntime<P> {
    /// `fut` on a worker of this runtime, as a request handler would run it.
    pub(super) fn run<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<T, BenchError>> + Send + 'static,
    ) -> Result<T, BenchError> {
        drive::on_runtime(&self.rt, fut)
    }
}

impl Ctx {
    /// The middleware with `strategy` on the pool the `pool` knob names, on a runtime of its
    /// own.
    pub(super) fn middleware(
        &self,
        strategy: Strategy,
    ) -> Result<OnRuntime<Middleware>, BenchError> {
        self.middleware_on(strategy, crate::catalog::Pool::chosen(&self.pool, strategy))
    }

    pub(super) fn middleware_on(
        &self,
        strategy: Strategy,
        pool: crate::catalog::Pool,
    ) -> Result<OnRuntime<Middleware>, BenchError> {
        let rt = Arc::new(drive::runtime(None)?);
        let mw = Middleware::on_pool(
            self.path.clone(),
            strategy,
            pool,
            self.pool_size,
            self.spin,
            &self.settings,
            rt.handle().clone(),
        )?
        .with_values(self.values);
        Ok(OnRuntime {
            path: Arc::new(mw),
            rt,
        })
    }

    /// The runtime the benches other than the middleware's share, made on first use.
    pub(super) fn rt(&self) -> Result<&Arc<tokio::runtime::Runtime>, BenchError> {
        if let Some(rt) = self.rt.get() {
            return Ok(rt);
        }
        let made = Arc::new(drive::runtime(None)?);
        Ok(self.rt.get_or_init(|| made))
    }

    /// Runs an iteration future on a runtime worker thread, as a request handler would.
    pub(super) fn on_runtime<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<T, BenchError>> + Send + 'static,
    ) -> Result<T, BenchError> {
        drive::on_runtime(self.rt()?, fut)
    }

    /// A rusqlite connection with the run's settings, and what it reads back.
    pub(super) fn connection(
        &self,
    ) -> Result<(rusqlite::Connection, BTreeMap<String, String>), BenchError> {
        let conn = raw::open(&self.path, &self.settings)?;
        let settings = raw::read_back(&conn);
        Ok((conn, settings))
    }

    pub(super) fn pass_work(&self) -> u64 {
        lookup_work(&self.ids)
    }
}

/// Times one pass of a synchronous operation over the ids; each operation returns its work.
pub(super) fn timed_loop(
    ids: &[i64],
    mut op: impl FnMut(i64) -> Result<u64, BenchError>,
) -> Result<Iteration, BenchError> {
    let mut work = 0u64;
    let start = Instant::now();
    for &id in ids {
        work = work.wrapping_add(op(id)?);
    }
    Ok(Iteration::new(ns_between(start, Instant::now()), work))
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

/// The lookups of a path, traced or not; each pass traces other lookups (the seed moves on).
pub(super) fn path_lookups<P: LookupPath>(ctx: &Ctx, on: OnRuntime<P>) -> Bench<'_> {
    timed_path(ctx, on, ctx.trace)
}

/// The lookups of a path, traced when `trace` (a crate's path is not: it hides its phases).
pub(super) fn timed_path<P: LookupPath>(ctx: &Ctx, on: OnRuntime<P>, trace: bool) -> Bench<'_> {
    let plan = drive::LookupPlan {
        ids: ctx.ids.clone(),
        per_checkout: ctx.lookups_per_checkout,
        trace_every: ctx.trace_every,
    };
    let iter = drive::lookup_passes(on.path, on.rt, plan, trace);
    Bench::new(iter, ctx.pass_work(), LOOKUP_WORK)
}

/// A result set's rows plus its first row's id.
pub(super) fn result_set_work(rs: &value::ResultSet) -> u64 {
    let id = match rs.rows.first().and_then(|r| r.first()) {
        Some(Value::Integer(i)) => *i as u64,
        _ => 0,
    };
    rs.rows.len() as u64 + id
}
