//! Per-phase tracing. The phases are the stages of one query's path; each micro-bench isolates
//! one of them. Timer reads sit at phase edges only, and traced code is a separate
//! monomorphisation (`const TRACE: bool`) so the untraced path carries no timer reads at all.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Checkout,
    Prepare,
    Bind,
    Dispatch,
    ExecuteMarshal,
    Decode,
}

impl Phase {
    pub const ALL: [Phase; 6] = [
        Phase::Checkout,
        Phase::Prepare,
        Phase::Bind,
        Phase::Dispatch,
        Phase::ExecuteMarshal,
        Phase::Decode,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Phase::Checkout => "checkout",
            Phase::Prepare => "prepare",
            Phase::Bind => "bind",
            Phase::Dispatch => "dispatch",
            Phase::ExecuteMarshal => "execute+marshal",
            Phase::Decode => "decode",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Nanoseconds spent per phase, summed over `ops` operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhaseTotals {
    pub ns: [u64; 6],
    pub ops: u64,
    /// Which phases were measured (a harness may not see every phase).
    pub seen: [bool; 6],
}

impl PhaseTotals {
    #[inline]
    pub fn add(&mut self, phase: Phase, ns: u64) {
        self.ns[phase.index()] += ns;
        self.seen[phase.index()] = true;
    }

    /// Sets a phase's total (e.g. after scaling a sampled total up to every operation).
    pub fn set(&mut self, phase: Phase, ns: u64) {
        self.ns[phase.index()] = ns;
        self.seen[phase.index()] = true;
    }

    /// Totals measured on a sample of `self.ops` operations, scaled up to `all` operations.
    pub fn scaled(&self, all: u64) -> PhaseTotals {
        let mut out = PhaseTotals {
            ops: all,
            seen: self.seen,
            ..Default::default()
        };
        if self.ops > 0 {
            for i in 0..6 {
                out.ns[i] = (self.ns[i] as u128 * all as u128 / self.ops as u128) as u64;
            }
        }
        out
    }

    pub fn merge(&mut self, other: &PhaseTotals) {
        for i in 0..6 {
            self.ns[i] += other.ns[i];
            self.seen[i] |= other.seen[i];
        }
        self.ops += other.ops;
    }

    /// Mean ns per operation of each measured phase.
    pub fn per_op(&self) -> Vec<(Phase, f64)> {
        if self.ops == 0 {
            return Vec::new();
        }
        Phase::ALL
            .iter()
            .filter(|p| self.seen[p.index()])
            .map(|p| (*p, self.ns[p.index()] as f64 / self.ops as f64))
            .collect()
    }
}

/// Nanoseconds between two instants, saturating at zero.
#[inline]
pub fn ns_between(a: Instant, b: Instant) -> u64 {
    b.saturating_duration_since(a).as_nanos() as u64
}

/// The calibrated cost of one timer read, which every traced interval is corrected by.
static TIMER_COST_NS: AtomicU64 = AtomicU64::new(0);

/// Sets the cost of a timer read that [`traced`] subtracts (the runner calibrates it at start).
pub fn set_timer_cost(ns: f64) {
    TIMER_COST_NS.store(ns.max(0.0).round() as u64, Ordering::Relaxed);
}

/// The cost of one timer read traced intervals are corrected by, in ns.
pub fn timer_cost() -> u64 {
    TIMER_COST_NS.load(Ordering::Relaxed)
}

/// A traced phase: the time between two timer reads, less the cost of one read, which each
/// phase edge adds to what it measures. Without this, the phases of a lookup would sum to
/// about one timer read per phase more than the lookup takes untraced.
#[inline]
pub fn traced(a: Instant, b: Instant) -> u64 {
    ns_between(a, b).saturating_sub(timer_cost())
}

/// A small, fast, seeded generator (SplitMix64) for choosing which operations to trace.
#[derive(Debug, Clone)]
pub struct Sampler {
    state: u64,
    every: u64,
}

impl Sampler {
    /// Picks each operation with probability 1 / `every`, independently of where it stands
    /// (first after a checkout or not), from `seed`.
    pub fn new(seed: u64, every: usize) -> Sampler {
        Sampler {
            state: seed,
            every: every.max(1) as u64,
        }
    }

    #[inline]
    pub fn pick(&mut self) -> bool {
        if self.every == 1 {
            return true;
        }
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)).is_multiple_of(self.every)
    }
}

/// Cost of one `Instant::now()` on this machine, in ns (median of several batches).
pub fn calibrate_timer() -> f64 {
    const BATCH: u32 = 20_000;
    let mut per_read: Vec<f64> = (0..9)
        .map(|_| {
            let start = Instant::now();
            let mut last = start;
            for _ in 0..BATCH {
                last = std::hint::black_box(Instant::now());
            }
            ns_between(start, last) as f64 / BATCH as f64
        })
        .collect();
    per_read.sort_by(f64::total_cmp);
    per_read[per_read.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_per_op_and_merge() {
        let mut a = PhaseTotals::default();
        a.add(Phase::Checkout, 300);
        a.add(Phase::Decode, 90);
        a.ops = 3;
        let mut b = PhaseTotals::default();
        b.add(Phase::Checkout, 100);
        b.ops = 1;
        a.merge(&b);
        let per = a.per_op();
        assert_eq!(
            per,
            vec![(Phase::Checkout, 100.0), (Phase::Decode, 22.5)],
            "only measured phases"
        );
        a.set(Phase::Bind, 0);
        assert_eq!(
            a.per_op()[1],
            (Phase::Bind, 0.0),
            "a measured zero is reported"
        );
        assert_eq!(PhaseTotals::default().per_op(), vec![]);
        let mut sampled = PhaseTotals {
            ops: 2,
            ..Default::default()
        };
        sampled.add(Phase::Dispatch, 300);
        let all = sampled.scaled(8);
        assert_eq!((all.ops, all.ns[Phase::Dispatch.index()]), (8, 1200));
        assert_eq!(all.per_op(), vec![(Phase::Dispatch, 150.0)]);
    }

    #[test]
    fn the_sampler_picks_one_in_every() {
        let mut s = Sampler::new(7, 4);
        let picked = (0..40_000).filter(|_| s.pick()).count();
        assert!((9_000..11_000).contains(&picked), "{picked}");
        let mut all = Sampler::new(7, 1);
        assert!((0..10).all(|_| all.pick()));
    }

    #[test]
    fn timer_calibration_is_positive_and_sane() {
        let ns = calibrate_timer();
        assert!(ns > 0.0 && ns < 10_000.0, "{ns}");
    }
}
