//! Measurement: the sampling loop shared by every bench (warm-up, then timed iterations of
//! `ops` operations each, bounded by a time budget and a sample count, streamed as events),
//! the statistics over its samples, per-phase tracing, and the drivers every harness shares.

pub mod drive;
pub mod stats;
pub mod trace;

use std::time::{Duration, Instant};

use crate::error::BenchError;
use crate::protocol::{Budget, Event};
use stats::{LatencyHistogram, Summary, summarize};
use trace::PhaseTotals;

/// What one timed iteration reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Iteration {
    pub elapsed_ns: u64,
    /// Per-phase totals of the iteration, when traced.
    pub phases: Option<PhaseTotals>,
}

/// The iteration closure of one bench, as the sampling loop runs it: `ops` operations, their
/// per-operation latencies recorded into the histogram where the bench records them.
pub type IterFn<'a> = Box<dyn FnMut(&mut LatencyHistogram) -> Result<Iteration, BenchError> + 'a>;

/// How often traced benches report a window of phase timings.
pub const PHASE_WINDOW: Duration = Duration::from_millis(100);

/// Runs one bench. `iteration` runs `ops` operations, recording per-operation latencies into the
/// histogram when the bench records them. Every sample, phase window and the summary go to `emit`.
pub fn run(
    budget: &Budget,
    bench: &str,
    ops: u64,
    emit: &mut dyn FnMut(Event),
    iteration: &mut dyn FnMut(&mut LatencyHistogram) -> Result<Iteration, BenchError>,
) -> Result<Summary, BenchError> {
    let mut scratch = LatencyHistogram::new();
    let warm_start = Instant::now();
    loop {
        iteration(&mut scratch)?;
        if warm_start.elapsed().as_secs_f64() >= budget.warmup_s {
            break;
        }
    }

    let mut latencies = LatencyHistogram::new();
    let mut samples = Vec::new();
    let mut window = PhaseTotals::default();
    let mut window_start = Instant::now();
    let start = Instant::now();
    let mut iter = 0u64;
    while samples.len() < budget.max_samples
        && (start.elapsed().as_secs_f64() < budget.time_s || samples.len() < budget.min_samples)
    {
        let it = iteration(&mut latencies)?;
        emit(Event::Sample {
            bench: bench.to_string(),
            iter,
            ops,
            elapsed_ns: it.elapsed_ns,
        });
        samples.push(it.elapsed_ns as f64 / ops as f64);
        if let Some(p) = it.phases {
            window.merge(&p);
            if window_start.elapsed() >= PHASE_WINDOW {
                emit(phases_event(bench, iter, &window));
                window = PhaseTotals::default();
                window_start = Instant::now();
            }
        }
        iter += 1;
    }
    if window.ops > 0 {
        emit(phases_event(bench, iter.saturating_sub(1), &window));
    }
    let summary = summarize(&samples, latencies.percentiles())
        .ok_or(BenchError::Other("no samples taken".into()))?;
    emit(Event::Summary {
        bench: bench.to_string(),
        stats: summary.clone(),
    });
    Ok(summary)
}

fn phases_event(bench: &str, iter: u64, totals: &PhaseTotals) -> Event {
    Event::Phases {
        bench: bench.to_string(),
        iter,
        ops: totals.ops,
        ns_per_op: totals.per_op().into_iter().collect(),
    }
}

/// Splits `n` operations over `tasks` as evenly as possible (the first ones take the rest).
pub fn split(n: usize, tasks: usize) -> Vec<(usize, usize)> {
    let tasks = tasks.max(1);
    let (base, extra) = (n / tasks, n % tasks);
    let mut out = Vec::with_capacity(tasks);
    let mut start = 0;
    for i in 0..tasks {
        let len = base + usize::from(i < extra);
        out.push((start, start + len));
        start += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::Phase;

    #[test]
    fn respects_sample_bounds_and_streams_everything() {
        let budget = Budget {
            warmup_s: 0.0,
            time_s: 0.0,
            max_samples: 50,
            min_samples: 5,
        };
        let mut events = Vec::new();
        let mut calls = 0;
        let s = run(&budget, "b", 10, &mut |e| events.push(e), &mut |h| {
            calls += 1;
            h.record(100);
            let mut p = PhaseTotals {
                ops: 10,
                ..Default::default()
            };
            p.add(Phase::Decode, 50);
            Ok(Iteration {
                elapsed_ns: 1000,
                phases: Some(p),
            })
        })
        .unwrap();
        assert_eq!(s.samples, 5, "time budget spent: stops at min_samples");
        assert_eq!(calls, 6, "one warm-up iteration, five samples");
        assert_eq!(s.median, 100.0);
        assert_eq!(
            s.latency.unwrap().count,
            5,
            "warm-up latencies are discarded"
        );
        let samples = events
            .iter()
            .filter(|e| matches!(e, Event::Sample { .. }))
            .count();
        assert_eq!(samples, 5);
        let Some(Event::Phases { ns_per_op, ops, .. }) =
            events.iter().find(|e| matches!(e, Event::Phases { .. }))
        else {
            panic!("no phases event")
        };
        assert_eq!(*ops, 50);
        assert_eq!(ns_per_op[&Phase::Decode], 5.0);
        assert!(matches!(events.last(), Some(Event::Summary { .. })));
    }

    #[test]
    fn split_covers_every_operation_once() {
        assert_eq!(split(10, 3), vec![(0, 4), (4, 7), (7, 10)]);
        assert_eq!(split(2, 4), vec![(0, 1), (1, 2), (2, 2), (2, 2)]);
        assert_eq!(split(5, 0), vec![(0, 5)]);
    }

    #[test]
    fn max_samples_caps_a_long_budget() {
        let budget = Budget {
            warmup_s: 0.0,
            time_s: 60.0,
            max_samples: 3,
            min_samples: 1,
        };
        let s = run(&budget, "b", 1, &mut |_| {}, &mut |_| {
            Ok(Iteration {
                elapsed_ns: 7,
                phases: None,
            })
        })
        .unwrap();
        assert_eq!(s.samples, 3);
        assert!(s.latency.is_none());
    }

    #[test]
    fn iteration_errors_stop_the_bench() {
        let budget = Budget {
            warmup_s: 0.0,
            time_s: 1.0,
            max_samples: 3,
            min_samples: 1,
        };
        let e = run(&budget, "b", 1, &mut |_| {}, &mut |_| {
            Err("disk on fire".into())
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "disk on fire");
    }
}
