//! Measurement: the sampling loop shared by every bench (warm-up, then timed iterations of
//! `ops` operations each, bounded by a time budget and a sample count, streamed as events),
//! the statistics over its samples, per-phase tracing, and the drivers every harness shares.

pub mod changepoint;
pub mod cost;
mod counting_off;
pub mod crossover;
pub mod drive;
pub mod memory;
pub mod processes;
pub mod scenario;
pub mod significance;
pub mod sqlite_malloc;
pub mod statements;
pub mod stats;
pub mod trace;

/// What a run's `memory` setting says: how its allocations are counted ([`memory::describe`],
/// given what [`memory::start`] returned) and whether SQLite's own are among them.
pub fn memory_setting(counting: bool) -> String {
    let how = memory::describe(counting);
    match sqlite_malloc::described().filter(|_| counting) {
        Some(sqlite) => format!("{how}; {sqlite}"),
        None => how,
    }
}

use std::time::{Duration, Instant};

use crate::error::BenchError;
use crate::protocol::{Budget, Event};
use stats::{LatencyHistogram, Summary, summarize};
use trace::PhaseTotals;

/// What one timed pass reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Iteration {
    pub elapsed_ns: u64,
    /// Per-phase totals of the pass, when traced.
    pub phases: Option<PhaseTotals>,
    /// What the pass read or wrote, folded into one number (see [`Work`]).
    pub work: u64,
}

impl Iteration {
    pub fn new(elapsed_ns: u64, work: u64) -> Iteration {
        Iteration {
            elapsed_ns,
            phases: None,
            work,
        }
    }
}

/// The iteration closure of one bench, as the sampling loop runs it: one pass of `ops`
/// operations, their per-operation latencies recorded into the histogram where the bench
/// records them.
pub type IterFn<'a> = Box<dyn FnMut(&mut LatencyHistogram) -> Result<Iteration, BenchError> + 'a>;

/// The work one pass of a bench must do, as a checksum the runner compares every sample with:
/// a bench that skips its work, or does other work, fails instead of looking fast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// The checksum of one pass.
    pub per_pass: u64,
    /// What is folded, for the error message and the docs.
    pub what: &'static str,
}

/// A bench ready to measure.
pub struct Bench<'a> {
    pub iter: IterFn<'a>,
    pub work: Work,
    /// The SQLite settings read back from the bench's connections (empty where there are none).
    pub settings: std::collections::BTreeMap<String, String>,
    /// Operations in one pass, where this bench's differ from its session's.
    pub ops: Option<u64>,
    /// The backend it runs on, where the run's knobs chose another than its catalog entry's
    /// (the middleware path on another pool).
    pub backend: Option<String>,
    /// Its crate's statement cache counts, where the crate reports them.
    pub statements: Option<std::sync::Arc<statements::StatementCounter>>,
}

impl<'a> Bench<'a> {
    pub fn new(iter: IterFn<'a>, per_pass: u64, what: &'static str) -> Bench<'a> {
        Bench {
            iter,
            work: Work { per_pass, what },
            settings: Default::default(),
            ops: None,
            backend: None,
            statements: None,
        }
    }

    /// The same bench, its crate's statement cache counted by `counter` (read over the
    /// measured samples).
    pub fn with_statements(
        mut self,
        counter: impl Into<Option<std::sync::Arc<statements::StatementCounter>>>,
    ) -> Self {
        self.statements = counter.into();
        self
    }

    /// The same bench, on `backend` rather than its catalog entry's.
    pub fn with_backend(mut self, backend: impl Into<String>) -> Self {
        self.backend = Some(backend.into());
        self
    }

    /// The same bench, with `ops` operations in one pass.
    pub fn with_ops(mut self, ops: u64) -> Self {
        self.ops = Some(ops);
        self
    }

    /// The same bench, reporting the settings its connections run with.
    pub fn with_settings(mut self, settings: std::collections::BTreeMap<String, String>) -> Self {
        self.settings = settings;
        self
    }
}

/// How often traced benches report a window of phase timings.
pub const PHASE_WINDOW: Duration = Duration::from_millis(100);

/// The shortest sample worth timing: passes are grouped until a sample lasts at least this
/// long (or the budget's share per sample, if longer), as Criterion grows iterations.
pub const MIN_SAMPLE: Duration = Duration::from_millis(1);

/// Passes per sample, so that a sample of `bench`'s passes lasting `pass_ns` each takes at
/// least its share of the budget's time per sample.
pub fn passes_per_sample(budget: &Budget, bench: &str, pass_ns: f64) -> u64 {
    let share = budget.time_of(bench) * 1e9 / budget.max_samples.max(1) as f64;
    let target = share.max(MIN_SAMPLE.as_nanos() as f64);
    ((target / pass_ns.max(1.0)).ceil() as u64).clamp(1, 10_000_000)
}

/// One bench's measurement under way: how many passes make a sample, and what its samples
/// gathered so far.
struct Sampler<'n> {
    name: &'n str,
    ops: u64,
    passes: u64,
    latencies: LatencyHistogram,
    samples: Vec<f64>,
    costs: Vec<(u64, u64, cost::SampleCost)>,
    memory: Vec<(u64, memory::SampleMemory)>,
    window: PhaseTotals,
    window_start: Instant,
    iter: u64,
    /// The statement counts when the measured samples began.
    statements_at: Option<statements::StatementCache>,
}

impl<'n> Sampler<'n> {
    fn new(name: &'n str, ops: u64) -> Self {
        Sampler {
            name,
            ops,
            passes: 1,
            latencies: LatencyHistogram::new(),
            samples: Vec::new(),
            costs: Vec::new(),
            memory: Vec::new(),
            window: PhaseTotals::default(),
            window_start: Instant::now(),
            iter: 0,
            statements_at: None,
        }
    }

    fn check(bench: &Bench<'_>, work: u64, passes: u64) -> Result<(), BenchError> {
        let expected = bench.work.per_pass.wrapping_mul(passes);
        if work == expected {
            Ok(())
        } else {
            Err(BenchError::Work {
                what: bench.work.what.to_string(),
                expected,
                got: work,
            })
        }
    }

    /// Warms the bench up for the budget's warm-up time, and sizes its samples.
    fn warm_up(&mut self, budget: &Budget, bench: &mut Bench<'_>) -> Result<(), BenchError> {
        let mut scratch = LatencyHistogram::new();
        let warm_start = Instant::now();
        // Each warm-up pass's wall time: a pass may do untimed work besides what it times (a
        // fresh table, the rest of a replayed mix), and a sample must fit the budget in wall
        // time.
        let mut warm = Vec::new();
        loop {
            let pass_start = Instant::now();
            let it = (bench.iter)(&mut scratch)?;
            Self::check(bench, it.work, 1)?;
            warm.push(trace::ns_between(pass_start, Instant::now()).max(it.elapsed_ns) as f64);
            if warm_start.elapsed().as_secs_f64() >= budget.warmup_s {
                break;
            }
        }
        // The last half of the warm-up passes, past their cold start.
        let settled = &warm[warm.len() / 2..];
        self.passes = passes_per_sample(
            budget,
            self.name,
            settled.iter().sum::<f64>() / settled.len() as f64,
        );
        self.window_start = Instant::now();
        self.statements_at = bench.statements.as_ref().map(|c| c.read());
        Ok(())
    }

    /// Takes one sample (its passes, its work checked) and emits it.
    fn sample(
        &mut self,
        bench: &mut Bench<'_>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<(), BenchError> {
        let (mut elapsed_ns, mut work) = (0u64, 0u64);
        // Usage and memory are read at the sample's edges only: the passes run untouched.
        let memory_before = memory::Reading::start();
        memory::stacks_while_sampling(true);
        let (usage_before, wall_before) = (cost::Usage::now(), Instant::now());
        for _ in 0..self.passes {
            let it = (bench.iter)(&mut self.latencies)?;
            elapsed_ns += it.elapsed_ns;
            work = work.wrapping_add(it.work);
            if let Some(p) = it.phases {
                self.window.merge(&p);
            }
        }
        let wall_ns = trace::ns_between(wall_before, Instant::now());
        memory::stacks_while_sampling(false);
        let spent = usage_before
            .zip(cost::Usage::now())
            .map(|(before, after)| after.since(&before, wall_ns));
        let allocated = memory_before
            .zip(memory::Reading::now())
            .map(|(before, after)| after.since(&before));
        Self::check(bench, work, self.passes)?;
        let sample_ops = self.ops * self.passes;
        if let Some(c) = spent {
            self.costs.push((sample_ops, elapsed_ns, c));
        }
        if let Some(m) = allocated {
            self.memory.push((sample_ops, m));
        }
        emit(Event::Sample {
            bench: self.name.to_string(),
            iter: self.iter,
            ops: sample_ops,
            elapsed_ns,
            work: Some(work),
            cost: spent,
            memory: allocated,
        });
        self.samples.push(elapsed_ns as f64 / sample_ops as f64);
        if self.window.ops > 0 && self.window_start.elapsed() >= PHASE_WINDOW {
            emit(phases_event(self.name, self.iter, &self.window));
            self.window = PhaseTotals::default();
            self.window_start = Instant::now();
        }
        self.iter += 1;
        Ok(())
    }

    /// The summary of the samples taken, emitted (after what the statement cache did over
    /// them, where it is counted).
    fn finish(self, bench: &Bench<'_>, emit: &mut dyn FnMut(Event)) -> Result<Summary, BenchError> {
        if self.window.ops > 0 {
            emit(phases_event(
                self.name,
                self.iter.saturating_sub(1),
                &self.window,
            ));
        }
        let mut summary = summarize(&self.samples, self.latencies.percentiles())
            .ok_or(BenchError::Other("no samples taken".into()))?;
        summary.cost = cost::CostSummary::of(&self.costs);
        summary.memory = memory::MemorySummary::of(&self.memory);
        summary
            .warnings
            .extend(summary.memory.and_then(|m| m.growth_warning()));
        if let (Some(counter), Some(at)) = (&bench.statements, &self.statements_at) {
            emit(Event::Statements {
                bench: self.name.to_string(),
                // Every measured sample is `passes` passes (set by the warm-up) of `ops`.
                cache: counter.since(at, self.ops * self.passes * self.samples.len() as u64),
            });
        }
        emit(Event::Summary {
            bench: self.name.to_string(),
            stats: summary.clone(),
        });
        Ok(summary)
    }
}

/// Runs one bench: warm-up (which also sizes the samples), then samples of one or more passes
/// until the time budget is spent (within the sample count bounds). Every sample's work is
/// checked. Every sample, phase window and the summary go to `emit`.
pub fn run(
    budget: &Budget,
    name: &str,
    ops: u64,
    bench: &mut Bench<'_>,
    emit: &mut dyn FnMut(Event),
) -> Result<Summary, BenchError> {
    let mut s = Sampler::new(name, ops);
    s.warm_up(budget, bench)?;
    let start = Instant::now();
    let time_s = budget.time_of(name);
    while s.samples.len() < budget.max_samples
        && (start.elapsed().as_secs_f64() < time_s || s.samples.len() < budget.min_samples)
    {
        s.sample(bench, emit)?;
    }
    s.finish(bench, emit)
}

/// Paired rounds: every bench is warmed up, then the benches take turns, one sample each per
/// round (in a balanced order, [`crossover`]: every bench in every place alike, none following
/// itself where three or more take turns), for the time
/// budget of all of them together and within the sample bounds per bench. The samples of one
/// round are a pair: what drifts slowly (clock speed, the neighbours on the machine) hits
/// both alike. Returns each bench's summary (a bench that fails drops out; the others go on).
pub fn run_paired(
    budget: &Budget,
    benches: &mut [(&str, u64, &mut Bench<'_>)],
    emit: &mut dyn FnMut(Event),
) -> Vec<Result<(Summary, Vec<f64>), BenchError>> {
    let mut samplers: Vec<Result<Sampler<'_>, BenchError>> = Vec::new();
    for (name, ops, bench) in benches.iter_mut() {
        let mut s = Sampler::new(name, *ops);
        samplers.push(s.warm_up(budget, bench).map(|()| s));
    }
    // Every bench's time, its own where it has one: the benches take turns for all of it.
    let total_s: f64 = benches.iter().map(|(n, ..)| budget.time_of(n)).sum();
    let start = Instant::now();
    let mut round = 0usize;
    loop {
        let live: Vec<usize> = (0..samplers.len())
            .filter(|&i| samplers[i].is_ok())
            .collect();
        let Some(fewest) = live
            .iter()
            .map(|&i| samplers[i].as_ref().map(|s| s.samples.len()).unwrap_or(0))
            .min()
        else {
            break;
        };
        if fewest >= budget.max_samples
            || (start.elapsed().as_secs_f64() >= total_s && fewest >= budget.min_samples)
        {
            break;
        }
        let order: Vec<usize> = crossover::round_order(live.len(), round)
            .into_iter()
            .map(|place| live[place])
            .collect();
        for i in order {
            let bench = &mut *benches[i].2;
            if let Ok(s) = &mut samplers[i]
                && let Err(e) = s.sample(bench, emit)
            {
                samplers[i] = Err(e);
            }
        }
        round += 1;
    }
    samplers
        .into_iter()
        .zip(benches.iter())
        .map(|(s, (_, _, bench))| {
            let s = s?;
            let samples = s.samples.clone();
            Ok((s.finish(bench, emit)?, samples))
        })
        .collect()
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

    fn budget(time_s: f64, max: usize, min: usize) -> Budget {
        Budget {
            warmup_s: 0.0,
            time_s,
            max_samples: max,
            min_samples: min,
            paired: false,
            group: None,
            processes: None,
            times: Default::default(),
        }
    }

    /// A bench whose passes take `pass_ns` (reported, not slept) and do `work` each.
    fn fixed(pass_ns: u64, work: u64, calls: &mut u32) -> Bench<'_> {
        Bench {
            iter: Box::new(move |h| {
                *calls += 1;
                h.record(100);
                let mut p = PhaseTotals {
                    ops: 10,
                    ..Default::default()
                };
                p.add(Phase::Decode, 50);
                Ok(Iteration {
                    elapsed_ns: pass_ns,
                    phases: Some(p),
                    work,
                })
            }),
            work: Work {
                per_pass: 7,
                what: "test",
            },
            settings: Default::default(),
            ops: None,
            backend: None,
            statements: None,
        }
    }

    /// A bench whose crate reports its statement cache: each pass runs BEGIN as text and two
    /// statements, the first pass ever preparing both.
    fn counted(counter: std::sync::Arc<statements::StatementCounter>) -> Bench<'static> {
        let mut first = true;
        let shared = counter.clone();
        Bench::new(
            Box::new(move |_| {
                counter.started(true);
                for _ in 0..2 {
                    counter.started(false);
                    if first {
                        counter.prepared();
                    }
                }
                first = false;
                Ok(Iteration::new(2_000_000, 1))
            }),
            1,
            "test",
        )
        .with_statements(shared)
    }

    #[test]
    fn the_statement_cache_is_counted_over_the_measured_samples_alone() {
        let counter = std::sync::Arc::new(statements::StatementCounter::new("a test double"));
        let mut events = Vec::new();
        // The warm-up (one pass: the misses) is left out; five samples of one pass each.
        run(
            &budget(0.0, 50, 5),
            "b",
            1,
            &mut counted(counter.clone()),
            &mut |e| events.push(e),
        )
        .unwrap();
        let at = events
            .iter()
            .position(|e| matches!(e, Event::Statements { .. }))
            .expect("a statements event");
        let Event::Statements { bench, cache } = &events[at] else {
            unreachable!()
        };
        assert_eq!(bench, "b");
        assert_eq!(
            (cache.run, cache.prepared, cache.text, cache.ops),
            (15, 0, 5, 5)
        );
        assert_eq!(cache.hit_rate(), Some(1.0));
        assert!(
            matches!(events[at + 1], Event::Summary { .. }),
            "just before the summary"
        );
        assert_eq!(counter.read().prepared, 2, "the warm-up's misses happened");
        // In paired rounds each bench's own counts; a bench without a counter says nothing.
        let mut calls = 0;
        let other = std::sync::Arc::new(statements::StatementCounter::new("another"));
        let (mut a, mut b) = (counted(other.clone()), counted(counter.clone()));
        let mut plain = fixed(2_000_000, 7, &mut calls);
        let mut events = Vec::new();
        let mut turns = [
            ("a", 1u64, &mut a),
            ("b", 1u64, &mut b),
            ("c", 1u64, &mut plain),
        ];
        run_paired(&budget(0.0, 4, 4), &mut turns, &mut |e| events.push(e));
        let counts: Vec<(String, u64, u64)> = events
            .iter()
            .filter_map(|e| match e {
                Event::Statements { bench, cache } => {
                    Some((bench.clone(), cache.run, cache.prepared))
                }
                _ => None,
            })
            .collect();
        assert_eq!(counts, [("a".into(), 12, 0), ("b".into(), 12, 0)]);
    }

    #[test]
    fn paired_rounds_alternate_the_benches_and_pair_their_samples() {
        let (mut a_calls, mut b_calls) = (0, 0);
        let mut a = fixed(1000, 7, &mut a_calls);
        let mut b = fixed(3000, 7, &mut b_calls);
        let mut order = Vec::new();
        let mut emit = |e: Event| {
            if let Event::Sample { bench, .. } = e {
                order.push(bench);
            }
        };
        let mut turns = [("a", 10u64, &mut a), ("b", 10u64, &mut b)];
        let out = run_paired(&budget(0.0, 6, 6), &mut turns, &mut emit);
        let out: Vec<(Summary, Vec<f64>)> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            order,
            ["a", "b", "b", "a", "a", "b", "b", "a", "a", "b", "b", "a"]
        );
        assert_eq!((out[0].1.len(), out[1].1.len()), (6, 6));
        let r = stats::paired_ratio(&out[1].1, &out[0].1).unwrap();
        assert!((r.median - 3.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn three_benches_take_turns_in_the_balanced_order() {
        let (mut a_calls, mut b_calls, mut c_calls) = (0, 0, 0);
        let mut a = fixed(1000, 7, &mut a_calls);
        let mut b = fixed(2000, 7, &mut b_calls);
        let mut c = fixed(3000, 7, &mut c_calls);
        let mut order = Vec::new();
        let mut emit = |e: Event| {
            if let Event::Sample { bench, .. } = e {
                order.push(bench);
            }
        };
        let mut turns = [
            ("a", 10u64, &mut a),
            ("b", 10u64, &mut b),
            ("c", 10u64, &mut c),
        ];
        let out = run_paired(&budget(0.0, 6, 6), &mut turns, &mut emit);
        assert!(out.iter().all(Result::is_ok));
        let names = ["a", "b", "c"];
        let want: Vec<&str> = (0..6)
            .flat_map(|r| crossover::round_order(3, r))
            .map(|i| names[i])
            .collect();
        assert_eq!(order, want);
        // The old order (forward, then reversed) had "a" and "c" follow themselves.
        assert!(order.windows(2).all(|w| w[0] != w[1]), "{order:?}");
    }

    #[test]
    fn respects_sample_bounds_and_streams_everything() {
        let mut events = Vec::new();
        let mut calls = 0;
        // A pass of 10 ms is longer than the 1 ms minimum: one pass per sample.
        let s = run(
            &budget(0.0, 50, 5),
            "b",
            10,
            &mut fixed(10_000_000, 7, &mut calls),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(s.samples, 5, "time budget spent: stops at min_samples");
        assert_eq!(calls, 6, "one warm-up pass, five samples of one pass");
        assert_eq!(s.median, 1_000_000.0);
        assert_eq!(
            s.latency.unwrap().count,
            5,
            "warm-up latencies are discarded"
        );
        let works: Vec<Option<u64>> = events
            .iter()
            .filter_map(|e| match e {
                Event::Sample { work, ops, .. } => {
                    assert_eq!(*ops, 10);
                    Some(*work)
                }
                _ => None,
            })
            .collect();
        assert_eq!(works, vec![Some(7); 5], "each sample carries its work");
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
    fn short_passes_are_grouped_so_the_time_budget_binds() {
        // 2 s over at most 100 samples: 20 ms per sample; a 16 µs pass needs 1250 of them.
        let b = budget(2.0, 100, 10);
        assert_eq!(passes_per_sample(&b, "b", 16_000.0), 1250);
        assert_eq!(
            passes_per_sample(&b, "b", 50_000_000.0),
            1,
            "a long pass is a sample"
        );
        // A tiny budget still asks for samples of at least a millisecond.
        assert_eq!(passes_per_sample(&budget(0.0, 100, 1), "b", 1000.0), 1000);
        // A bench with a time of its own (--time-for) sizes its samples by that time.
        let mut own = budget(2.0, 100, 10);
        own.times.insert("bulk".into(), 10.0);
        assert_eq!(passes_per_sample(&own, "bulk", 16_000.0), 6250);
        assert_eq!(passes_per_sample(&own, "b", 16_000.0), 1250);
        let mut events = Vec::new();
        let mut calls = 0;
        let s = run(
            &budget(0.0, 3, 3),
            "b",
            4,
            &mut fixed(100_000, 7, &mut calls),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(s.samples, 3);
        // Passes reported as 100 µs (far longer than the closure's own wall time).
        assert_eq!(calls, 1 + 3 * 10, "100 µs passes, 10 to a 1 ms sample");
        assert!(
            events.iter().all(
                |e| !matches!(e, Event::Sample { ops, work, .. } if *ops != 40 || *work != Some(70))
            ),
            "ops and work of a sample count every pass"
        );
        assert_eq!(s.median, 25_000.0, "ns per operation");
    }

    #[test]
    fn a_bench_with_a_time_of_its_own_samples_for_that_time() {
        // No time but the least samples for every bench; 20 ms of samples for "own". A pass
        // is reported as 100 µs but returns at once, so 20 ms of wall time holds many samples.
        let mut b = budget(0.0, 100_000, 2);
        b.times.insert("own".into(), 0.02);
        let (mut one, mut two) = (0, 0);
        let plain = run(
            &b,
            "plain",
            1,
            &mut fixed(100_000, 7, &mut one),
            &mut |_| {},
        )
        .unwrap();
        let own = run(&b, "own", 1, &mut fixed(100_000, 7, &mut two), &mut |_| {}).unwrap();
        assert_eq!(plain.samples, 2, "the run's time (0 s): its least samples");
        assert!(own.samples > 2, "its own 20 ms: {} samples", own.samples);
        // Paired rounds take turns for the sum of the benches' times: with "own" 20 ms,
        // both take more than their least; with none, their least.
        let paired_counts = |b: &Budget| -> Vec<usize> {
            let (mut c1, mut c2) = (0, 0);
            let (mut f1, mut f2) = (fixed(100_000, 7, &mut c1), fixed(100_000, 7, &mut c2));
            run_paired(
                b,
                &mut [("plain", 1, &mut f1), ("own", 1, &mut f2)],
                &mut |_| {},
            )
            .iter()
            .map(|r| r.as_ref().unwrap().0.samples)
            .collect()
        };
        let counts = paired_counts(&b);
        assert!(counts.iter().all(|&n| n > 2), "{counts:?}");
        b.times.clear();
        assert_eq!(paired_counts(&b), [2, 2]);
    }

    #[test]
    fn a_pass_that_does_other_work_fails_the_bench() {
        let mut calls = 0;
        let e = run(
            &budget(1.0, 3, 1),
            "b",
            1,
            &mut fixed(1000, 6, &mut calls),
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "work check failed: test: expected 7, got 6");
    }

    #[test]
    fn split_covers_every_operation_once() {
        assert_eq!(split(10, 3), vec![(0, 4), (4, 7), (7, 10)]);
        assert_eq!(split(2, 4), vec![(0, 1), (1, 2), (2, 2), (2, 2)]);
        assert_eq!(split(5, 0), vec![(0, 5)]);
    }

    #[test]
    fn max_samples_caps_a_long_budget() {
        let mut calls = 0;
        let s = run(
            &budget(60.0, 3, 1),
            "b",
            1,
            &mut fixed(1_000_000_000, 7, &mut calls),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(s.samples, 3);
    }

    #[test]
    fn iteration_errors_stop_the_bench() {
        let mut b = Bench::new(Box::new(|_| Err("disk on fire".into())), 0, "none");
        let e = run(&budget(1.0, 3, 1), "b", 1, &mut b, &mut |_| {}).unwrap_err();
        assert_eq!(e.to_string(), "disk on fire");
    }
}
