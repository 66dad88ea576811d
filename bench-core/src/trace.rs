//! Per-phase tracing. The phases are the stages of one query's path; each micro-bench isolates
//! one of them. Timer reads sit at phase edges only, and traced code is a separate
//! monomorphisation (`const TRACE: bool`) so the untraced path carries no timer reads at all.

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
}

impl PhaseTotals {
    #[inline]
    pub fn add(&mut self, phase: Phase, ns: u64) {
        self.ns[phase.index()] += ns;
    }

    pub fn merge(&mut self, other: &PhaseTotals) {
        for (a, b) in self.ns.iter_mut().zip(other.ns) {
            *a += b;
        }
        self.ops += other.ops;
    }

    /// Mean ns per operation for each phase that saw any time.
    pub fn per_op(&self) -> Vec<(Phase, f64)> {
        if self.ops == 0 {
            return Vec::new();
        }
        Phase::ALL
            .iter()
            .map(|p| (*p, self.ns[p.index()] as f64 / self.ops as f64))
            .collect()
    }
}

/// Nanoseconds between two instants, saturating at zero.
#[inline]
pub fn ns_between(a: Instant, b: Instant) -> u64 {
    b.saturating_duration_since(a).as_nanos() as u64
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
        assert_eq!(per[0], (Phase::Checkout, 100.0));
        assert_eq!(per[5], (Phase::Decode, 22.5));
        assert_eq!(PhaseTotals::default().per_op(), vec![]);
    }

    #[test]
    fn timer_calibration_is_positive_and_sane() {
        let ns = calibrate_timer();
        assert!(ns > 0.0 && ns < 10_000.0, "{ns}");
    }
}
