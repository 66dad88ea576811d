//! The one comparison model: a bench against the baseline bench of its run (a ratio with its
//! error), and a run against a baseline run (a change with its verdict). The explorer, the
//! headless table and every export read these, so they always say the same thing.
//!
//! - here: ratios of medians and their intervals, the spread of a figure across runs, the
//!   grouping of runs made the same way, and the comparison row every view prints;
//! - [`significance`]: the tests of difference (Welch, Mann-Whitney, Student's t quantiles);
//! - [`verdict`]: a change against a baseline and its verdict, from samples, repeated runs
//!   or interleaved rounds;
//! - [`setup`]: what differs between two runs that makes their timings incomparable.

use serde::{Deserialize, Serialize};

use crate::measure::stats::{Summary, bootstrap_ratio};
use crate::protocol::results::{BenchResult, RunRecord};

pub mod setup;
/// The tests of difference, kept with the statistics they read (`measure/`).
pub use crate::measure::significance;
pub mod verdict;

pub use setup::{run_differences, settings_differences, setup_differences};
pub use significance::{mann_whitney, median_of, welch};
pub use verdict::{
    ALLOC_STEP, AllocChange, Change, ROUND_OUTLIER_FLOOR, ROUND_OUTLIER_Z, ROUNDS_MAX_DISTURBED,
    ROUNDS_NOISE_REACH, Settings, Verdict, change, fastest, judge, judge_rounds,
};

/// A ratio of two medians with its 95% interval, e.g. `2.86x [2.84–2.88]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub value: f64,
    /// Half the width of the interval (kept for readers of reports that predate `ci95`).
    pub err: f64,
    /// Bootstrap 95% interval of the ratio, from both benches' samples; asymmetric where the
    /// samples are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
}

pub use crate::sections::Band;

/// Ratio of two medians; the error is the first-order propagation of each median's CI
/// half-width (relative errors added in quadrature). What reports made before the ratio
/// bootstrap carried; kept for summaries without samples.
pub fn ratio_of_medians(num: &Summary, den: &Summary) -> Option<Ratio> {
    if den.median <= 0.0 || num.median <= 0.0 {
        return None;
    }
    let value = num.median / den.median;
    let rel = |s: &Summary| (s.ci95_median[1] - s.ci95_median[0]) / 2.0 / s.median;
    let err = value * (rel(num).powi(2) + rel(den).powi(2)).sqrt();
    Some(Ratio {
        value,
        err,
        ci95: None,
    })
}

/// The ratio of two finished benches' medians with a bootstrap 95% interval from their samples.
pub fn ratio_of(num: &BenchResult, den: &BenchResult) -> Option<Ratio> {
    let (ns, ds) = (num.summary.as_ref()?, den.summary.as_ref()?);
    let mut r = ratio_of_medians(ns, ds)?;
    if let Some([lo, hi]) = bootstrap_ratio(&num.samples, &den.samples) {
        r.ci95 = Some([lo.min(r.value), hi.max(r.value)]);
        r.err = (hi - lo) / 2.0;
    }
    Some(r)
}

/// One row of a comparison: a bench's figures, its ratio to the baseline bench and, when a
/// baseline run is given, its change against that run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    pub bench: crate::text::Text,
    pub backend: crate::text::Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<crate::text::Text>,
    pub median_ns: f64,
    pub ci95_ns: [f64; 2],
    /// Operations per second at the median (1e9 / median ns).
    pub ops_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
    pub samples: usize,
    /// CPU time and context switches per operation (runs from protocol 1.3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::measure::cost::CostSummary>,
    /// Allocations, bytes and peak memory per operation (runs from protocol 1.13 on, where the
    /// runner counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::measure::memory::MemorySummary>,
    /// The memory per operation against the baseline bench's, where both were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_vs_base: Option<MemoryVsBase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Ratio>,
    /// Against the same bench of the baseline run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
}

/// A bench's allocations and bytes per operation against the baseline bench's: counts, so no
/// interval; a ratio where the baseline allocates at all, and always the difference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemoryVsBase {
    /// Allocations per operation over the baseline's (None where the baseline makes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs_ratio: Option<f64>,
    /// Allocations per operation more than the baseline's (below 0: fewer).
    pub allocs_more: f64,
    /// Bytes per operation over the baseline's (None where the baseline hands out none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_ratio: Option<f64>,
    /// Bytes per operation more than the baseline's.
    pub bytes_more: f64,
}

impl MemoryVsBase {
    pub fn of(
        m: &crate::measure::memory::MemorySummary,
        base: &crate::measure::memory::MemorySummary,
    ) -> MemoryVsBase {
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        MemoryVsBase {
            allocs_ratio: ratio(m.allocs_per_op, base.allocs_per_op),
            allocs_more: m.allocs_per_op - base.allocs_per_op,
            bytes_ratio: ratio(m.bytes_per_op, base.bytes_per_op),
            bytes_more: m.bytes_per_op - base.bytes_per_op,
        }
    }
}

/// How a bench's figure (its median, or its ratio) varies between runs made with the same
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Runs with the figure.
    pub runs: usize,
    /// The median of the runs' figures.
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` with fewer than two.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut values: Vec<f64> = values.into_iter().collect();
        if values.len() < 2 {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        Some(Spread {
            runs: n,
            min: values[0],
            max: values[n - 1],
            median: median_of(values),
        })
    }

    /// (max - min) / median.
    pub fn relative(&self) -> f64 {
        (self.max - self.min) / self.median
    }
}

/// The spread of `bench`'s median across `runs` (which the caller picks as comparable: same
/// target, knobs and trace). `None` with fewer than two results.
pub fn spread<'a>(runs: impl IntoIterator<Item = &'a RunRecord>, bench: &str) -> Option<Spread> {
    Spread::of(
        runs.into_iter()
            .filter_map(|r| r.bench(bench)?.summary.as_ref().map(|s| s.median)),
    )
}

/// `runs` in groups of runs made the same way (`same`: [`run_differences`] or
/// [`setup_differences`] empty, say), each group the positions of its runs in order, groups in
/// the order of their first runs. Runs without a start belong to no group. The one grouping of
/// runs every view uses (repeats, verdicts against a baseline, spreads).
pub fn groups<R: std::borrow::Borrow<RunRecord>>(
    runs: &[R],
    same: impl Fn(&RunRecord, &RunRecord) -> bool,
) -> Vec<Vec<usize>> {
    let mut seen = vec![false; runs.len()];
    let mut out = Vec::new();
    for i in 0..runs.len() {
        if seen[i] || runs[i].borrow().start.is_none() {
            continue;
        }
        let group: Vec<usize> = (i..runs.len())
            .filter(|&j| !seen[j] && same(runs[i].borrow(), runs[j].borrow()))
            .collect();
        for &j in &group {
            seen[j] = true;
        }
        out.push(group);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
