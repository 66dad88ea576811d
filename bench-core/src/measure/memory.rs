//! Memory per operation: a global allocator that counts what it hands out (allocations,
//! reallocations, bytes, the bytes live and their peak) around the system's, read at sample
//! edges like [`super::cost`]. A binary that runs benches installs it:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: bench_core::measure::memory::Counting = bench_core::measure::memory::Counting::SYSTEM;
//! ```
//!
//! and calls [`start`] before it measures. Every thread of the process counts (a pool's
//! workers, a runtime's blocking threads), so what a bench hands to other threads is its own.
//! Counting is off until [`start`] and where the allocator is not installed (a harness whose
//! driver brings its own global allocator); then nothing is reported rather than zeros.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

/// The environment variable that turns counting off in a runner (`off`), to measure what
/// counting itself costs.
pub const OFF_VAR: &str = "BENCHSCOPE_COUNT_ALLOCS";

static ON: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static REALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
/// Bytes handed out and not yet returned since counting began (below 0 when memory handed
/// out before is returned: only differences are read).
static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

/// A global allocator that counts around another (the system's: [`Counting::SYSTEM`]).
pub struct Counting<A = System>(pub A);

impl Counting<System> {
    pub const SYSTEM: Counting<System> = Counting(System);
}

#[inline]
fn grew(by: usize) {
    let live = LIVE.fetch_add(by as i64, Relaxed) + by as i64;
    // Most calls stay below the peak: one load, no write.
    if live > PEAK.load(Relaxed) {
        PEAK.fetch_max(live, Relaxed);
    }
}

#[inline]
fn handed_out(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size as u64, Relaxed);
    grew(size);
}

// SAFETY: every call is passed to the inner allocator unchanged; the counting only reads the
// layouts and the returned pointer's nullness.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as it is.
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() && ON.load(Relaxed) {
            handed_out(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() && ON.load(Relaxed) {
            handed_out(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { self.0.dealloc(ptr, layout) };
        if ON.load(Relaxed) {
            LIVE.fetch_sub(layout.size() as i64, Relaxed);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() && ON.load(Relaxed) {
            REALLOCS.fetch_add(1, Relaxed);
            let old = layout.size();
            if new_size > old {
                BYTES.fetch_add((new_size - old) as u64, Relaxed);
                grew(new_size - old);
            } else {
                LIVE.fetch_sub((old - new_size) as i64, Relaxed);
            }
        }
        p
    }
}

/// Turns counting on unless [`OFF_VAR`] says `off`; true when the counting allocator is
/// installed and counts (checked by one allocation of its own).
pub fn start() -> bool {
    if std::env::var(OFF_VAR).is_ok_and(|v| v.eq_ignore_ascii_case("off") || v == "0") {
        ON.store(false, Relaxed);
        return false;
    }
    ON.store(true, Relaxed);
    let before = ALLOCS.load(Relaxed);
    drop(std::hint::black_box(Box::new(0u64)));
    if ALLOCS.load(Relaxed) == before {
        // Another global allocator: nothing counts, and nothing is to be reported.
        ON.store(false, Relaxed);
    }
    ON.load(Relaxed)
}

/// What a run says of its memory figures, given what [`start`] returned.
pub fn describe(counting: bool) -> &'static str {
    if counting {
        "allocations counted in every thread of the runner"
    } else if std::env::var(OFF_VAR).is_ok() {
        "not counted: turned off by BENCHSCOPE_COUNT_ALLOCS"
    } else {
        "not counted: this runner's global allocator is its driver's own, not benchscope's counting one"
    }
}

/// Whether allocations are being counted.
pub fn counting() -> bool {
    ON.load(Relaxed)
}

/// The counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    allocs: u64,
    reallocs: u64,
    bytes: u64,
    live: i64,
}

impl Reading {
    /// The counters now, and the peak set to what is live now; None while not counting.
    pub fn start() -> Option<Reading> {
        let r = Self::now()?;
        PEAK.store(r.live, Relaxed);
        Some(r)
    }

    /// The counters now; None while not counting.
    pub fn now() -> Option<Reading> {
        counting().then(|| Reading {
            allocs: ALLOCS.load(Relaxed),
            reallocs: REALLOCS.load(Relaxed),
            bytes: BYTES.load(Relaxed),
            live: LIVE.load(Relaxed),
        })
    }

    /// What was handed out between `earlier` (taken with [`Reading::start`]) and this
    /// reading, with the peak reached in between.
    pub fn since(&self, earlier: &Reading) -> SampleMemory {
        SampleMemory {
            allocs: self.allocs.saturating_sub(earlier.allocs),
            reallocs: self.reallocs.saturating_sub(earlier.reallocs),
            bytes: self.bytes.saturating_sub(earlier.bytes),
            peak: (PEAK.load(Relaxed).max(self.live) - earlier.live).max(0) as u64,
            retained: self.live - earlier.live,
        }
    }
}

/// What the runner process allocated during one sample (protocol 1.13, `sample.memory`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleMemory {
    /// Allocations (`alloc` and `alloc_zeroed`), every thread.
    pub allocs: u64,
    /// Reallocations (growing or shrinking a block in place or by moving it).
    pub reallocs: u64,
    /// Bytes handed out: each allocation's size, and what each reallocation grew by.
    pub bytes: u64,
    /// The most bytes live at once during the sample, above what was live at its start.
    pub peak: u64,
    /// Bytes live at the sample's end less those live at its start: memory the sample kept.
    pub retained: i64,
}

/// Memory per operation over every sample of a bench (`summary.stats.memory`, protocol 1.13).
/// Like the cost, the readings cover whole samples, untimed work of a pass included.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// Allocations per operation.
    pub allocs_per_op: f64,
    /// Reallocations per operation.
    pub reallocs_per_op: f64,
    /// Bytes handed out per operation.
    pub bytes_per_op: f64,
    /// The most bytes live at once above a sample's start, over the samples.
    pub peak_bytes: u64,
    /// Bytes the samples kept, all together (what is live at the end of the samples and was
    /// not at their start): a leak or an unbounded cache grows it with the work.
    pub retained_bytes: i64,
    /// The samples whose end had more bytes live than their start.
    pub samples_retaining: usize,
    /// Samples read.
    pub samples: usize,
}

/// Below this, retained memory is not worth a warning whatever its trend (a cache filled
/// once, a runtime's thread started late).
pub const RETAINED_WARN_BYTES: i64 = 1 << 20;

impl MemorySummary {
    /// The summary of samples given as (operations, memory); None without any.
    pub fn of(samples: &[(u64, SampleMemory)]) -> Option<MemorySummary> {
        let ops: u64 = samples.iter().map(|(o, _)| o).sum();
        if ops == 0 {
            return None;
        }
        let per_op = |f: fn(&SampleMemory) -> u64| {
            samples.iter().map(|(_, m)| f(m)).sum::<u64>() as f64 / ops as f64
        };
        Some(MemorySummary {
            allocs_per_op: per_op(|m| m.allocs),
            reallocs_per_op: per_op(|m| m.reallocs),
            bytes_per_op: per_op(|m| m.bytes),
            peak_bytes: samples.iter().map(|(_, m)| m.peak).max().unwrap_or(0),
            retained_bytes: samples.iter().map(|(_, m)| m.retained).sum(),
            samples_retaining: samples.iter().filter(|(_, m)| m.retained > 0).count(),
            samples: samples.len(),
        })
    }

    /// The first figure that cannot be a count per operation (not finite, or below 0), named
    /// with its value: what a run read from a runner, a file or a store is checked against.
    pub fn check(&self) -> Result<(), String> {
        for (what, v) in [
            ("allocations per operation", self.allocs_per_op),
            ("reallocations per operation", self.reallocs_per_op),
            ("bytes per operation", self.bytes_per_op),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{what} is {v} (allowed: a finite number >= 0)"));
            }
        }
        Ok(())
    }

    /// Retained bytes per operation, over `ops` operations.
    pub fn retained_per_op(&self, ops: u64) -> f64 {
        self.retained_bytes as f64 / ops.max(1) as f64
    }

    /// A warning when memory grows with the work: at least [`RETAINED_WARN_BYTES`] kept, and
    /// most samples (three in four) ending with more live than they began with.
    pub fn growth_warning(&self) -> Option<String> {
        (self.retained_bytes >= RETAINED_WARN_BYTES
            && self.samples_retaining * 4 >= self.samples * 3)
            .then(|| {
                format!(
                    "memory grows with the work: {} kept over {} samples, {} of them ending with more live than they began (a leak or an unbounded cache)",
                    crate::format::bytes(self.retained_bytes as f64),
                    self.samples,
                    self.samples_retaining
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(allocs: u64, bytes: u64, peak: u64, retained: i64) -> SampleMemory {
        SampleMemory {
            allocs,
            reallocs: allocs / 2,
            bytes,
            peak,
            retained,
        }
    }

    #[test]
    fn a_summary_is_totals_over_operations_with_the_highest_peak_and_the_sum_kept() {
        let m = MemorySummary::of(&[
            (10, sample(20, 640, 300, 0)),
            (30, sample(20, 640, 900, 128)),
        ])
        .unwrap();
        assert_eq!(m.allocs_per_op, 1.0);
        assert_eq!(m.reallocs_per_op, 0.5);
        assert_eq!(m.bytes_per_op, 32.0);
        assert_eq!(m.peak_bytes, 900);
        assert_eq!(m.retained_bytes, 128);
        assert_eq!((m.samples_retaining, m.samples), (1, 2));
        assert_eq!(m.retained_per_op(40), 3.2);
        assert_eq!(MemorySummary::of(&[]), None);
        assert_eq!(MemorySummary::of(&[(0, sample(1, 1, 1, 1))]), None);
    }

    #[test]
    fn a_figure_that_cannot_be_a_count_is_named() {
        let good = MemorySummary::of(&[(4, sample(4, 64, 1, 0))]).unwrap();
        assert_eq!(good.check(), Ok(()));
        for (i, bad) in [f64::NAN, -1.0, f64::INFINITY].into_iter().enumerate() {
            let mut m = good;
            match i {
                0 => m.allocs_per_op = bad,
                1 => m.reallocs_per_op = bad,
                _ => m.bytes_per_op = bad,
            }
            let e = m.check().unwrap_err();
            assert!(e.contains(&format!("is {bad}")), "{e}");
            assert!(e.contains("allowed: a finite number >= 0"), "{e}");
        }
    }

    #[test]
    fn growth_is_a_warning_only_when_large_and_steady() {
        let big = RETAINED_WARN_BYTES / 4;
        let of = |kept: &[i64]| {
            MemorySummary::of(
                &kept
                    .iter()
                    .map(|&k| (1, sample(1, 1, 1, k)))
                    .collect::<Vec<_>>(),
            )
            .unwrap()
        };
        // Four samples each keeping a quarter of the threshold: steady, and enough.
        let w = of(&[big, big, big, big]).growth_warning().unwrap();
        assert!(w.contains("4 of them"), "{w}");
        // Three of four is steady enough; two of four is not.
        assert!(of(&[big * 2, big, big, 0]).growth_warning().is_some());
        assert!(of(&[big * 2, big * 2, 0, 0]).growth_warning().is_none());
        // One byte short of the threshold: no warning.
        assert!(
            of(&[big, big, big, big - 1]).growth_warning().is_none(),
            "below the threshold"
        );
    }
}
