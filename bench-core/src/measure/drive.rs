//! Drivers every harness shares: the runtime, the sampled-trace lookup loop over any
//! [`LookupPath`], and the fan-out of concurrent tasks. No SQLite driver here.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use super::stats::LatencyHistogram;
use super::trace::{Phase, PhaseTotals, Sampler, ns_between, traced};
use super::{IterFn, Iteration, split};
use crate::dataset::BenchRow;
use crate::error::BenchError;

/// The multi-thread runtime benches run on: one worker per core, and at least
/// `blocking_threads` blocking threads when given.
pub fn runtime(blocking_threads: Option<usize>) -> Result<tokio::runtime::Runtime, BenchError> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.worker_threads(
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2),
    )
    .enable_all();
    if let Some(n) = blocking_threads {
        b.max_blocking_threads(n.max(1));
    }
    b.build()
        .map_err(|e| BenchError::Other(format!("starting the tokio runtime: {e}")))
}

/// Runs a future on a runtime worker thread, as a request handler would, and waits for it.
pub fn on_runtime<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    fut: impl std::future::Future<Output = Result<T, BenchError>> + Send + 'static,
) -> Result<T, BenchError> {
    rt.block_on(async {
        tokio::spawn(fut)
            .await
            .map_err(|e| BenchError::Other(format!("bench task failed: {e}")))?
    })
}

/// A way to borrow a connection and look a row up on it: the middleware's pool and dispatch
/// strategy, or turso's `Database`.
pub trait LookupPath: Send + Sync + 'static {
    type Conn: Send;
    fn checkout(&self) -> impl std::future::Future<Output = Result<Self::Conn, BenchError>> + Send;
    fn lookup<const TRACE: bool>(
        &self,
        conn: &mut Self::Conn,
        id: i64,
        phases: &mut PhaseTotals,
    ) -> impl std::future::Future<Output = Result<BenchRow, BenchError>> + Send;
    /// Its crate's statement cache counts, where the crate reports them.
    fn statements(&self) -> Option<std::sync::Arc<super::statements::StatementCounter>> {
        None
    }
}

/// What a lookup bench's passes go over: the ids in order, the lookups made on one checkout,
/// and one checkout in how many traced (when traced).
#[derive(Debug, Clone)]
pub struct LookupPlan {
    pub ids: Arc<Vec<i64>>,
    pub per_checkout: usize,
    pub trace_every: usize,
}

/// A lookup bench's iterations, every subject's alike: each one pass of `path` over the plan
/// (a [`lookup_iteration`]) on a worker of `rt`, as a request handler would run it, with the
/// next seed (so each pass traces and times other lookups), its timed lookups recorded in the
/// bench's histogram, its phases kept when `trace`.
pub fn lookup_passes<'a, P, R>(path: Arc<P>, rt: R, plan: LookupPlan, trace: bool) -> IterFn<'a>
where
    P: LookupPath,
    R: std::borrow::Borrow<tokio::runtime::Runtime> + 'a,
{
    /// The path and its runtime, dropped in this order (the path's connections before the
    /// runtime they may run on).
    struct On<P, R> {
        path: Arc<P>,
        rt: R,
    }
    fn passes<'a, P: LookupPath, R, const TRACE: bool>(on: On<P, R>, plan: LookupPlan) -> IterFn<'a>
    where
        R: std::borrow::Borrow<tokio::runtime::Runtime> + 'a,
    {
        let seeds = std::sync::atomic::AtomicU64::new(0);
        Box::new(move |h| {
            let on = &on;
            let seed = seeds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let fut = lookup_iteration::<P, TRACE>(
                on.path.clone(),
                plan.ids.clone(),
                plan.per_checkout,
                plan.trace_every,
                seed,
            );
            let pass = on_runtime(on.rt.borrow(), fut)?;
            for ns in pass.latencies {
                h.record(ns);
            }
            Ok(Iteration {
                elapsed_ns: pass.elapsed_ns,
                phases: TRACE.then_some(pass.phases),
                work: pass.work,
            })
        })
    }
    let on = On { path, rt };
    if trace {
        passes::<P, R, true>(on, plan)
    } else {
        passes::<P, R, false>(on, plan)
    }
}

/// What one pass of lookups reports.
#[derive(Debug, Clone)]
pub struct LookupPass {
    pub elapsed_ns: u64,
    /// The latencies of the lookups timed on their own (one in [`LATENCY_EVERY`]), in order.
    pub latencies: Vec<u64>,
    /// Phase totals scaled to every lookup of the pass (traced passes only).
    pub phases: PhaseTotals,
    /// The sum of the rows' checksums.
    pub work: u64,
}

/// One operation in this many is also timed on its own, for the latency percentiles: two clock
/// reads around it. The others carry none, so a pass's time (one read at each end, as
/// Criterion times an iteration) is the operations' alone, within a fraction of a read each.
pub const LATENCY_EVERY: usize = 8;

/// Which operations of a pass of `n` are timed on their own: each with probability
/// 1 / [`LATENCY_EVERY`], drawn from `seed` before the pass's clock starts (at least one).
pub fn timed_ops(n: usize, seed: u64) -> Vec<bool> {
    let mut pick = Sampler::new(seed ^ 0x1A7E_5EED, LATENCY_EVERY);
    let mut timed: Vec<bool> = (0..n).map(|_| pick.pick()).collect();
    // A pass too short to have drawn one still times one, so that every pass has a latency.
    if n > 0 && !timed.contains(&true) {
        timed[(seed % n as u64) as usize] = true;
    }
    timed
}

/// A pass of synchronous operations over `ids` (one per id), timed as a whole; the operations
/// [`timed_ops`] picks are also timed on their own and recorded into `h` once the pass has
/// ended. `seed` should differ from pass to pass, so that every operation is timed in time.
pub fn sampled_pass(
    ids: &[i64],
    h: &mut LatencyHistogram,
    seed: u64,
    mut op: impl FnMut(i64) -> Result<u64, BenchError>,
) -> Result<super::Iteration, BenchError> {
    let timed = timed_ops(ids.len(), seed);
    let mut lat = Vec::with_capacity(ids.len() / LATENCY_EVERY + 16);
    let mut work = 0u64;
    let start = Instant::now();
    for (&id, &timed) in ids.iter().zip(&timed) {
        if timed {
            let t0 = Instant::now();
            work = work.wrapping_add(op(black_box(id))?);
            lat.push(ns_between(t0, Instant::now()));
        } else {
            work = work.wrapping_add(op(black_box(id))?);
        }
    }
    let end = Instant::now();
    for ns in lat {
        h.record(ns);
    }
    Ok(super::Iteration::new(ns_between(start, end), work))
}

/// Each lookup: borrow (every `lookups_per_checkout` lookups), dispatch, decode, give back.
/// The pass is timed as a whole; the lookups [`timed_ops`] picks are also timed on their own
/// (from just before them, their checkout included when they are the first of one, to their
/// end). With `TRACE`, each checkout and each lookup is timed phase by phase with probability
/// 1 / `every`, drawn from `seed` independently of its place in the pass (so
/// first-after-checkout lookups are traced no more often than others, whatever
/// `lookups_per_checkout` is); the totals are scaled to all operations, which keeps the cost
/// of tracing to a few timer reads per `every` lookups.
pub async fn lookup_iteration<P: LookupPath, const TRACE: bool>(
    path: Arc<P>,
    ids: Arc<Vec<i64>>,
    per_checkout: usize,
    every: usize,
    seed: u64,
) -> Result<LookupPass, BenchError> {
    let mut sampler = Sampler::new(seed, every);
    let timed = timed_ops(ids.len(), seed);
    let mut lat = Vec::with_capacity(ids.len() / LATENCY_EVERY + 16);
    let mut checkout = PhaseTotals::default();
    let mut lookups = PhaseTotals::default();
    let (mut chunks, mut traced_chunks) = (0u64, 0u64);
    let mut work = 0u64;
    let mut k = 0usize;
    let start = Instant::now();
    for chunk in ids.chunks(per_checkout) {
        let trace_chunk = TRACE && sampler.pick();
        chunks += 1;
        let t0 = (trace_chunk || timed[k]).then(Instant::now);
        let mut conn = path.checkout().await?;
        if trace_chunk && let Some(t0) = t0 {
            checkout.add(Phase::Checkout, traced(t0, Instant::now()));
        }
        for (i, &id) in chunk.iter().enumerate() {
            let from = if i == 0 {
                t0.filter(|_| timed[k])
            } else {
                timed[k].then(Instant::now)
            };
            let row = if TRACE && sampler.pick() {
                lookups.ops += 1;
                path.lookup::<true>(&mut conn, id, &mut lookups).await
            } else {
                path.lookup::<false>(&mut conn, id, &mut lookups).await
            };
            work = work.wrapping_add(black_box(row?).checksum());
            if let Some(from) = from {
                lat.push(ns_between(from, Instant::now()));
            }
            k += 1;
        }
        let before_return = trace_chunk.then(Instant::now);
        drop(conn);
        if let Some(t) = before_return {
            traced_chunks += 1;
            checkout.add(Phase::Checkout, traced(t, Instant::now()));
        }
    }
    let end = Instant::now();
    let ops = ids.len() as u64;
    // Sampled totals scaled up to every operation; checkouts are sampled per chunk.
    checkout.ops = traced_chunks;
    let mut phases = lookups.scaled(ops);
    if TRACE {
        phases.set(
            Phase::Checkout,
            checkout.scaled(chunks).ns[Phase::Checkout.index()],
        );
    }
    Ok(LookupPass {
        elapsed_ns: ns_between(start, end),
        latencies: lat,
        phases,
        work,
    })
}

/// What one task of a fan-out reports: its operations' latencies and its work.
#[derive(Debug, Clone, Default)]
pub struct TaskResult {
    pub latencies: Vec<u64>,
    pub work: u64,
}

/// One fan-out: a task per chunk of `ops` operations over `tasks` tasks, all spawned at once;
/// the sample is the wall time until the last one finishes, and every task's per-operation
/// latencies go into the histogram.
pub fn fan_out<F, Fut>(
    rt: &tokio::runtime::Runtime,
    ops: usize,
    tasks: usize,
    h: &mut LatencyHistogram,
    task: F,
) -> Result<Iteration, BenchError>
where
    F: Fn(usize, usize) -> Fut,
    Fut: std::future::Future<Output = Result<TaskResult, BenchError>> + Send + 'static,
{
    let bounds = split(ops, tasks);
    let (elapsed, lats) = rt.block_on(async {
        let start = Instant::now();
        let handles: Vec<_> = bounds
            .iter()
            .map(|&(a, b)| tokio::spawn(task(a, b)))
            .collect();
        let mut lats = Vec::new();
        for handle in handles {
            lats.push(
                handle
                    .await
                    .map_err(|e| BenchError::Other(format!("task failed: {e}")))??,
            );
        }
        Ok::<_, BenchError>((ns_between(start, Instant::now()), lats))
    })?;
    let mut work = 0u64;
    for t in lats {
        work = work.wrapping_add(t.work);
        for l in t.latencies {
            h.record(l);
        }
    }
    Ok(Iteration::new(elapsed, work))
}

/// One fan-out of `tasks` tasks over `ids`: each checks a connection out of `path` and looks
/// its chunk up on it (multithread_pool_checkout's parallel select, for every harness).
pub fn parallel_select<P: LookupPath>(
    rt: &tokio::runtime::Runtime,
    ids: Arc<Vec<i64>>,
    tasks: usize,
    path: Arc<P>,
) -> super::IterFn<'_> {
    Box::new(move |h| {
        fan_out(rt, ids.len(), tasks, h, |a, b| {
            let (path, ids) = (path.clone(), ids.clone());
            async move {
                let mut conn = path.checkout().await?;
                let mut out = TaskResult {
                    latencies: Vec::with_capacity(b - a),
                    work: 0,
                };
                let mut phases = PhaseTotals::default();
                let mut prev = Instant::now();
                for &id in &ids[a..b] {
                    let row = black_box(path.lookup::<false>(&mut conn, id, &mut phases).await?);
                    out.work = out.work.wrapping_add(row.checksum());
                    let t = Instant::now();
                    out.latencies.push(ns_between(prev, t));
                    prev = t;
                }
                Ok(out)
            }
        })
    })
}

/// One fan-out of `tasks` tasks making `ops` checkouts in all, each a checkout and its return
/// (`once`), nothing else.
pub fn checkouts<F, Fut>(
    rt: &tokio::runtime::Runtime,
    ops: usize,
    tasks: usize,
    once: F,
) -> super::IterFn<'_>
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(), BenchError>> + Send + 'static,
{
    Box::new(move |h| {
        fan_out(rt, ops, tasks, h, |a, b| {
            let once = once.clone();
            async move {
                let mut out = TaskResult {
                    latencies: Vec::with_capacity(b - a),
                    work: 0,
                };
                let mut prev = Instant::now();
                for _ in a..b {
                    black_box(once().await?);
                    out.work += 1;
                    let t = Instant::now();
                    out.latencies.push(ns_between(prev, t));
                    prev = t;
                }
                Ok(out)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{lookup_work, row};
    use std::sync::Mutex;

    /// A path that records, for each traced lookup, its place after the last checkout.
    struct Recorder {
        since_checkout: Mutex<usize>,
        traced_places: Mutex<Vec<usize>>,
        traced_ids: Mutex<Vec<i64>>,
    }

    impl LookupPath for Recorder {
        type Conn = ();
        async fn checkout(&self) -> Result<(), BenchError> {
            *self.since_checkout.lock().unwrap() = 0;
            Ok(())
        }
        async fn lookup<const TRACE: bool>(
            &self,
            _: &mut (),
            id: i64,
            phases: &mut PhaseTotals,
        ) -> Result<BenchRow, BenchError> {
            let mut n = self.since_checkout.lock().unwrap();
            if TRACE {
                self.traced_places.lock().unwrap().push(*n);
                self.traced_ids.lock().unwrap().push(id);
                phases.add(Phase::Decode, 10);
            }
            *n += 1;
            Ok(row(id))
        }
    }

    fn pass(per_checkout: usize, every: usize, seed: u64) -> (LookupPass, Vec<usize>) {
        let (p, places, _) = pass_ids(per_checkout, every, seed);
        (p, places)
    }

    /// A traced pass over ids 1 ..= 4096: what it reports, the traced lookups' places after
    /// their checkout, and their ids.
    fn pass_ids(
        per_checkout: usize,
        every: usize,
        seed: u64,
    ) -> (LookupPass, Vec<usize>, Vec<i64>) {
        let path = Arc::new(Recorder {
            since_checkout: Mutex::new(0),
            traced_places: Mutex::new(Vec::new()),
            traced_ids: Mutex::new(Vec::new()),
        });
        let ids: Arc<Vec<i64>> = Arc::new((1..=4096).collect());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let p = rt
            .block_on(lookup_iteration::<_, true>(
                path.clone(),
                ids.clone(),
                per_checkout,
                every,
                seed,
            ))
            .unwrap();
        assert_eq!(p.work, lookup_work(&ids), "every row read");
        // One lookup in LATENCY_EVERY timed on its own, the ones timed_ops picks.
        let timed = timed_ops(4096, seed).iter().filter(|t| **t).count();
        assert_eq!(p.latencies.len(), timed);
        assert!((timed as f64 - 512.0).abs() < 512.0 * 0.15, "{timed} timed");
        let places = path.traced_places.lock().unwrap().clone();
        let ids = path.traced_ids.lock().unwrap().clone();
        (p, places, ids)
    }

    /// The lookups a traced pass traces are the ones a sampler of its seed picks, drawing once
    /// for each checkout and then once for each of its lookups, in turn: a seed always traces
    /// the same operations.
    #[test]
    fn a_traced_pass_draws_for_each_checkout_then_each_lookup() {
        let ids: Vec<i64> = (1..=4096).collect();
        for (per_checkout, every, seed) in [(4, 4, 21), (1, 8, 3), (16, 2, 8)] {
            let mut draw = Sampler::new(seed, every);
            let mut want: Vec<i64> = Vec::new();
            for chunk in ids.chunks(per_checkout) {
                draw.pick();
                want.extend(chunk.iter().copied().filter(|_| draw.pick()));
            }
            let (_, _, got) = pass_ids(per_checkout, every, seed);
            assert_eq!(
                got, want,
                "{per_checkout} a checkout, every {every}, seed {seed}"
            );
        }
    }

    #[test]
    fn first_after_checkout_lookups_are_traced_in_their_share() {
        for per_checkout in [1, 2, 4, 8] {
            for every in [1, 4, 8] {
                let (_, places) = pass(per_checkout, every, 42);
                let traced = places.len() as f64;
                assert!(
                    (traced - 4096.0 / every as f64).abs() < 4096.0 / every as f64 * 0.15,
                    "lpc {per_checkout} every {every}: {traced} traced"
                );
                let first = places.iter().filter(|p| **p == 0).count() as f64 / traced;
                let want = 1.0 / per_checkout as f64;
                assert!(
                    (first - want).abs() < 0.06,
                    "lpc {per_checkout} every {every}: {first:.3} of traced lookups come first after a checkout, want {want:.3}"
                );
            }
        }
    }

    #[test]
    fn sampled_phases_are_scaled_to_every_lookup() {
        let (p, places) = pass(4, 4, 9);
        // Each traced lookup adds 10 ns of decode: scaled to 4096 lookups, 10 ns per lookup.
        assert_eq!(p.phases.ops, 4096);
        let decode = p.phases.ns[Phase::Decode.index()];
        assert_eq!(decode, 10 * 4096, "{} traced", places.len());
        assert!(
            p.phases.seen[Phase::Checkout.index()],
            "checkouts traced too"
        );
        let (other_seed, _) = pass(4, 4, 10);
        assert_ne!(
            pass(4, 4, 9).1,
            pass(4, 4, 10).1,
            "another seed traces other lookups"
        );
        assert_eq!(other_seed.work, p.work);
    }

    #[test]
    fn a_fan_out_runs_every_operation_once_and_sums_work() {
        let rt = runtime(None).unwrap();
        let mut h = LatencyHistogram::new();
        let it = fan_out(&rt, 10, 3, &mut h, |a, b| async move {
            Ok(TaskResult {
                latencies: (a..b).map(|i| i as u64 + 1).collect(),
                work: (a..b).map(|i| i as u64).sum(),
            })
        })
        .unwrap();
        assert_eq!(it.work, 45, "0 + 1 + ... + 9: every operation once");
        assert_eq!(h.percentiles().unwrap().count, 10);
        assert_eq!(h.percentiles().unwrap().max, 10);
        let e = fan_out(&rt, 4, 2, &mut h, |a, _| async move {
            if a == 0 {
                Err(BenchError::Other("task 0 broke".into()))
            } else {
                Ok(TaskResult::default())
            }
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "task 0 broke");
        // Checkouts: one latency and one unit of work per checkout, over every task.
        let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = made.clone();
        let mut once = checkouts(&rt, 10, 3, move || {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
        });
        let mut h = LatencyHistogram::new();
        let it = once(&mut h).unwrap();
        assert_eq!(it.work, 10);
        assert_eq!(made.load(std::sync::atomic::Ordering::Relaxed), 10);
        assert_eq!(h.percentiles().unwrap().count, 10);
    }

    /// Passes are numbered 0, 1, 2, ... and each times other operations; a pass too short to
    /// have drawn one still times exactly one (and an empty one none); a pass that drew some
    /// times those alone, whatever its length.
    #[test]
    fn every_pass_times_its_own_draw_and_at_least_one() {
        let draws: Vec<Vec<bool>> = (0..64).map(|pass| timed_ops(256, pass)).collect();
        for (i, a) in draws.iter().enumerate() {
            for (j, b) in draws.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "passes {i} and {j} time the same operations");
            }
        }
        assert!(timed_ops(0, 3).is_empty());
        for pass in 0..200 {
            assert_eq!(timed_ops(1, pass), [true], "pass {pass}");
            let three = timed_ops(3, pass);
            assert!(three.contains(&true), "pass {pass}");
            let long = timed_ops(4000, pass);
            assert_eq!(timed_ops(1000, pass), long[..1000], "pass {pass}");
        }
    }

    /// A path whose checkout takes at least a millisecond.
    struct SlowCheckout;

    impl LookupPath for SlowCheckout {
        type Conn = ();
        async fn checkout(&self) -> Result<(), BenchError> {
            std::thread::sleep(std::time::Duration::from_millis(1));
            Ok(())
        }
        async fn lookup<const TRACE: bool>(
            &self,
            _: &mut (),
            id: i64,
            _: &mut PhaseTotals,
        ) -> Result<BenchRow, BenchError> {
            Ok(row(id))
        }
    }

    /// The checkouts traced (about one in four) are scaled up to every checkout of the pass:
    /// 32 checkouts of 1 ms or more add up to 32 ms or more.
    #[test]
    fn traced_checkouts_are_scaled_to_every_checkout() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let ids: Arc<Vec<i64>> = Arc::new((1..=256).collect());
        let p = rt
            .block_on(lookup_iteration::<_, true>(
                Arc::new(SlowCheckout),
                ids,
                8,
                4,
                5,
            ))
            .unwrap();
        let checkout = p.phases.ns[Phase::Checkout.index()];
        assert!(checkout >= 32_000_000, "{checkout} ns for 32 checkouts");
    }

    /// A sampled pass runs every operation once, times the pass as a whole, and records one
    /// operation in LATENCY_EVERY (other ones from another seed), each no longer than the pass.
    #[test]
    fn a_sampled_pass_times_a_share_of_its_operations() {
        let ids: Vec<i64> = (1..=4000).collect();
        let mut h = LatencyHistogram::new();
        let mut seen = 0u64;
        let it = sampled_pass(&ids, &mut h, 7, |id| {
            seen += 1;
            Ok(id as u64)
        })
        .unwrap();
        assert_eq!(seen, 4000, "every operation once");
        assert_eq!(it.work, (1..=4000u64).sum::<u64>());
        let recorded = h.percentiles().unwrap();
        let want = timed_ops(4000, 7).iter().filter(|t| **t).count() as u64;
        assert_eq!(recorded.count, want);
        assert!((want as f64 - 500.0).abs() < 75.0, "{want} of 4000 timed");
        assert!(
            recorded.max <= it.elapsed_ns,
            "no operation outlasts its pass"
        );
        assert_ne!(
            timed_ops(4000, 7),
            timed_ops(4000, 8),
            "another seed, other operations"
        );
    }
}
