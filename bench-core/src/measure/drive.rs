//! Drivers every harness shares: the runtime, the sampled-trace lookup loop over any
//! [`LookupPath`], and the fan-out of concurrent tasks. No SQLite driver here.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use super::stats::LatencyHistogram;
use super::trace::{Phase, PhaseTotals, ns_between};
use super::{Iteration, split};
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
}

/// Each lookup: borrow (every `lookups_per_checkout` lookups), dispatch, decode, give back.
/// Per-op latency takes one timer read per lookup, traced or not. With `TRACE`, every
/// `every`-th checkout and every `every`-th lookup is timed phase by phase; the totals are
/// scaled to all operations (systematic sampling over shuffled ids), which keeps the cost of
/// tracing to a few timer reads per `every` lookups.
pub async fn lookup_iteration<P: LookupPath, const TRACE: bool>(
    path: Arc<P>,
    ids: Arc<Vec<i64>>,
    per_checkout: usize,
    every: usize,
) -> Result<(u64, Vec<u64>, PhaseTotals), BenchError> {
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
        let mut conn = path.checkout().await?;
        if let Some(t0) = t0 {
            checkout.add(Phase::Checkout, ns_between(t0, Instant::now()));
        }
        for &id in chunk {
            let row = if TRACE && op.is_multiple_of(every) {
                lookups.ops += 1;
                path.lookup::<true>(&mut conn, id, &mut lookups).await
            } else {
                path.lookup::<false>(&mut conn, id, &mut lookups).await
            };
            black_box(row?);
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
    Ok((ns_between(start, end), lat, phases))
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
    Fut: std::future::Future<Output = Result<Vec<u64>, BenchError>> + Send + 'static,
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
    for l in lats.into_iter().flatten() {
        h.record(l);
    }
    Ok(Iteration {
        elapsed_ns: elapsed,
        phases: None,
    })
}
