//! Statistics over samples (ns/op of each timed iteration) and per-operation latencies.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Resamples drawn for the bootstrap confidence intervals.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Fixed so that the same samples always give the same intervals.
const BOOTSTRAP_SEED: u64 = 0xB007_57A9;

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Outliers {
    pub low_severe: usize,
    pub low_mild: usize,
    pub high_mild: usize,
    pub high_severe: usize,
}

impl Outliers {
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }
}

/// Latency percentiles of single operations, in ns, from an HDR histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// One process's estimate and the 95% interval its own samples give it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub ci95: [f64; 2],
}

impl Estimate {
    /// Half the width of its own interval, in logs.
    pub(super) fn half_log(&self) -> f64 {
        (self.ci95[1] / self.ci95[0]).ln() / 2.0
    }
}

/// Summary of one bench's samples. All values in ns per operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub samples: usize,
    pub mean: f64,
    pub median: f64,
    pub std_dev: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    pub min: f64,
    pub max: f64,
    /// Bootstrap 95% percentile interval of the mean.
    pub ci95_mean: [f64; 2],
    /// Bootstrap 95% percentile interval of the median.
    pub ci95_median: [f64; 2],
    /// Tukey fences on the samples (mild: beyond 1.5 IQR, severe: beyond 3 IQR).
    pub outliers: Outliers,
    /// Per-operation latency percentiles, where the workload records them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Percentiles>,
    /// What a reader should know before trusting the figures: many outliers, or samples that
    /// fall into two groups (a bimodal bench: the median depends on which group wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// CPU time and context switches per operation over the samples (since protocol 1.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<super::cost::CostSummary>,
    /// Allocations, bytes and peak memory per operation over the samples, where the runner
    /// counts them (since 1.13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<super::memory::MemorySummary>,
    /// Each runner process's median and its own interval, where the bench was measured in
    /// several (since 1.10): the median above is then their geometric mean and its interval
    /// the next run's ([`super::processes`]). Empty: one process, intervals from its samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<Estimate>,
}

/// Median of sorted data (mean of the two middle values for an even count).
fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Quantile by linear interpolation between closest ranks (R type 7).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Summarises samples. Returns `None` for no samples.
pub fn summarize(samples: &[f64], latency: Option<Percentiles>) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let s = sorted(samples);
    let n = s.len();
    let mean_v = mean(&s);
    let median_v = median_sorted(&s);
    let std_dev = if n > 1 {
        (s.iter().map(|x| (x - mean_v).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let mad = select_median(&mut s.iter().map(|x| (x - median_v).abs()).collect::<Vec<_>>());
    let q1 = quantile_sorted(&s, 0.25);
    let q3 = quantile_sorted(&s, 0.75);
    let iqr = q3 - q1;
    let mut outliers = Outliers::default();
    // Outliers more than OUTLIER_DISTANCE off the median, which the warning counts.
    let mut far = 0;
    for &x in &s {
        let kind = if x < q1 - 3.0 * iqr {
            &mut outliers.low_severe
        } else if x < q1 - 1.5 * iqr {
            &mut outliers.low_mild
        } else if x > q3 + 3.0 * iqr {
            &mut outliers.high_severe
        } else if x > q3 + 1.5 * iqr {
            &mut outliers.high_mild
        } else {
            continue;
        };
        *kind += 1;
        if (x - median_v).abs() > OUTLIER_DISTANCE * median_v.abs() {
            far += 1;
        }
    }
    let (ci95_mean, ci95_median) = bootstrap(&s);
    let warnings = warnings(&s, far);
    Some(Summary {
        samples: n,
        mean: mean_v,
        median: median_v,
        std_dev,
        mad,
        min: s[0],
        max: s[n - 1],
        ci95_mean,
        ci95_median,
        outliers,
        latency,
        warnings,
        cost: None,
        memory: None,
        processes: Vec::new(),
    })
}

/// Outlier share at which a summary warns.
pub const OUTLIER_WARNING: f64 = 0.05;

/// How far from the median an outlier must lie to count toward the warning: a tight
/// distribution has Tukey outliers a fraction of a percent away, which mislead nobody.
pub const OUTLIER_DISTANCE: f64 = 0.05;

/// Warnings about a bench's samples (sorted): outliers (beyond the Tukey fences and more than
/// 5% off the median, `far` of them, counted by [`summarize`]) making up 5% or more of the
/// samples, and two groups of samples separated by a gap far wider than the spread within each
/// group.
fn warnings(s: &[f64], far: usize) -> Vec<String> {
    let n = s.len();
    let mut out = Vec::new();
    let share = far as f64 / n as f64;
    if share >= OUTLIER_WARNING {
        out.push(format!(
            "found {far} outliers among {n} samples ({:.0}%) more than 5% off the median",
            share * 100.0
        ));
    }
    if let Some((k, gap)) = bimodal_split(s) {
        out.push(format!(
            "bimodal: {k} samples around {} and {} around {} (gap {:.1}% of the median)",
            crate::units::ns(median_sorted(&s[..k])),
            n - k,
            crate::units::ns(median_sorted(&s[k..])),
            gap * 100.0
        ));
    }
    out
}

/// Where sorted samples split into two groups, if they do: the largest gap between neighbours
/// with at least a tenth of the samples on each side, when it is wider than 2% of the median and
/// more than five times the spread (MAD) inside either group. Returns the size of the lower
/// group and the gap relative to the median.
pub fn bimodal_split(s: &[f64]) -> Option<(usize, f64)> {
    let n = s.len();
    if n < 10 {
        return None;
    }
    let lo = (n / 10).max(2);
    let (k, gap) = (lo..=n - lo)
        .map(|k| (k, s[k] - s[k - 1]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let mad = |g: &[f64]| {
        let m = median_sorted(g);
        median_sorted(&sorted(
            &g.iter().map(|x| (x - m).abs()).collect::<Vec<_>>(),
        ))
    };
    let spread = mad(&s[..k]).max(mad(&s[k..]));
    let median = median_sorted(s);
    let rel = gap / median.abs().max(f64::MIN_POSITIVE);
    (rel > 0.02 && gap > 5.0 * spread).then_some((k, rel))
}

/// Resamples of the ratio bootstrap (fewer than the summaries': it runs per view).
const RATIO_RESAMPLES: usize = 1000;

/// Percentile bootstrap 95% interval of median(num) / median(den), resampling both sides
/// independently; asymmetric where the samples are. `None` without samples or with a
/// non-positive median.
pub fn bootstrap_ratio(num: &[f64], den: &[f64]) -> Option<[f64; 2]> {
    if num.is_empty() || den.is_empty() {
        return None;
    }
    if num.len().max(den.len()) > LARGE_SAMPLE {
        return large_ratio(num, den);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut a = vec![0.0; num.len()];
    let mut b = vec![0.0; den.len()];
    let mut ratios = Vec::with_capacity(RATIO_RESAMPLES);
    for _ in 0..RATIO_RESAMPLES {
        for slot in a.iter_mut() {
            *slot = num[rng.random_range(0..num.len())];
        }
        for slot in b.iter_mut() {
            *slot = den[rng.random_range(0..den.len())];
        }
        let d = select_median(&mut b);
        if d <= 0.0 {
            return None;
        }
        ratios.push(select_median(&mut a) / d);
    }
    ratios.sort_by(f64::total_cmp);
    Some([
        quantile_sorted(&ratios, 0.025),
        quantile_sorted(&ratios, 0.975),
    ])
}

/// The median, by selection (reorders `xs`).
fn select_median(xs: &mut [f64]) -> f64 {
    let n = xs.len();
    let (_, hi, _) = xs.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        hi
    } else {
        let lo = xs[..n / 2].iter().copied().fold(f64::MIN, f64::max);
        (lo + hi) / 2.0
    }
}

/// Above this many samples (a Criterion import can hold millions; a run's bench holds at most
/// [`crate::service`]'s `--samples`, a million), intervals come from what the bootstrap tends
/// to as samples grow, in time linear in the samples after one sort: the median's from order
/// statistics (the ranks n/2 ± 1.96·√n/2), the mean's from the normal approximation
/// (± 1.96·sd/√n), a ratio's by the delta method from both. Below it, the bootstrap resamples
/// (2000 times: linear in the samples, each resample's median by selection).
pub const LARGE_SAMPLE: usize = 20_000;

/// The 95% interval of the median of sorted samples from order statistics.
fn median_interval_sorted(s: &[f64]) -> [f64; 2] {
    let n = s.len() as f64;
    let half = 1.96 * n.sqrt() / 2.0;
    let lo = ((n / 2.0 - half).floor().max(1.0) as usize).min(s.len()) - 1;
    let hi = ((n / 2.0 + half).ceil().max(1.0) as usize).min(s.len()) - 1;
    [s[lo], s[hi]]
}

/// The 95% interval of the mean from the normal approximation.
fn mean_interval(s: &[f64]) -> [f64; 2] {
    let n = s.len() as f64;
    let m = mean(s);
    let sd = (s.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
    let half = 1.96 * sd / n.sqrt();
    [m - half, m + half]
}

/// [`bootstrap_ratio`] for large samples: each median's standard error from its order-statistic
/// interval, the ratio's by the delta method, the interval on the log scale (so it stays
/// positive and asymmetric as the bootstrap's is).
fn large_ratio(num: &[f64], den: &[f64]) -> Option<[f64; 2]> {
    let (a, b) = (sorted(num), sorted(den));
    let (ma, mb) = (median_sorted(&a), median_sorted(&b));
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let rel = |s: &[f64], m: f64| {
        let [lo, hi] = median_interval_sorted(s);
        (hi - lo) / (2.0 * 1.96) / m
    };
    let se = (rel(&a, ma).powi(2) + rel(&b, mb).powi(2)).sqrt();
    let r = ma / mb;
    Some([r * (-1.96 * se).exp(), r * (1.96 * se).exp()])
}

/// Percentile bootstrap of the mean and the median (sorted samples).
fn bootstrap(s: &[f64]) -> ([f64; 2], [f64; 2]) {
    let n = s.len();
    if n == 1 {
        return ([s[0], s[0]], [s[0], s[0]]);
    }
    if n > LARGE_SAMPLE {
        return (mean_interval(s), median_interval_sorted(s));
    }
    resampled(s)
}

/// The percentile bootstrap itself.
fn resampled(s: &[f64]) -> ([f64; 2], [f64; 2]) {
    let n = s.len();
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut means = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut resample = vec![0.0; n];
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for slot in resample.iter_mut() {
            *slot = s[rng.random_range(0..n)];
        }
        means.push(mean(&resample));
        medians.push(select_median(&mut resample));
    }
    means.sort_by(f64::total_cmp);
    medians.sort_by(f64::total_cmp);
    let ci = |v: &[f64]| [quantile_sorted(v, 0.025), quantile_sorted(v, 0.975)];
    (ci(&means), ci(&medians))
}

/// A cheap running estimate for live views: the median and a distribution-free ~95% interval
/// from order statistics (normal approximation of the binomial ranks). No resampling, so it can
/// be recomputed on every frame; the final summary uses the bootstrap.
pub fn quick_median(samples: &[f64]) -> Option<(f64, [f64; 2])> {
    if samples.is_empty() {
        return None;
    }
    let s = sorted(samples);
    let n = s.len() as f64;
    let half = 1.96 * n.sqrt() / 2.0;
    // 1-based ranks; the lower is at most n/2, so inside the samples.
    let lo = (n / 2.0 - half).floor().max(1.0) as usize - 1;
    let hi = ((n / 2.0 + half).ceil().max(1.0) as usize).min(s.len()) - 1;
    Some((median_sorted(&s), [s[lo], s[hi]]))
}

/// A histogram of per-operation latencies in ns.
pub struct LatencyHistogram(hdrhistogram::Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        // 1 ns .. 100 s at 3 significant digits.
        Self(hdrhistogram::Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid bounds"))
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    /// Adds `other`'s records to these.
    pub fn add(&mut self, other: &LatencyHistogram) {
        self.0.add(&other.0).expect("histograms of the same bounds");
    }

    pub fn percentiles(&self) -> Option<Percentiles> {
        percentiles_of(&self.0)
    }
}

fn percentiles_of<T: hdrhistogram::Counter>(h: &hdrhistogram::Histogram<T>) -> Option<Percentiles> {
    (!h.is_empty()).then(|| Percentiles {
        count: h.len(),
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
    })
}

/// Latencies kept where there are many of them (one per statement of a script, per client
/// and bench): nothing until the first record, then `digits` significant digits (2: within
/// 1%, a few KB; 1: within 10%, about 1 KB) with 32-bit counts, grown only as far as the
/// largest latency recorded; or not kept at all ([`CompactLatency::off`]). A
/// [`LatencyHistogram`] costs about 470 KB.
#[derive(Debug, Clone)]
pub struct CompactLatency {
    /// 0: not kept.
    digits: u8,
    hist: Option<hdrhistogram::Histogram<u32>>,
}

impl Default for CompactLatency {
    fn default() -> Self {
        Self::with_digits(2)
    }
}

impl CompactLatency {
    /// Kept at `digits` significant digits (1 or 2).
    pub fn with_digits(digits: u8) -> Self {
        CompactLatency {
            digits: digits.clamp(1, 2),
            hist: None,
        }
    }

    /// Latencies not kept: nothing recorded, no percentiles.
    pub fn off() -> Self {
        CompactLatency {
            digits: 0,
            hist: None,
        }
    }

    fn made(&mut self) -> &mut hdrhistogram::Histogram<u32> {
        let digits = self.digits;
        self.hist.get_or_insert_with(|| {
            let mut h = hdrhistogram::Histogram::new(digits).expect("valid precision");
            h.auto(true);
            h
        })
    }

    pub fn record(&mut self, ns: u64) {
        if self.digits == 0 {
            return;
        }
        // Grows to fit; a count past u32 saturates.
        let _ = self.made().record(ns.max(1));
    }

    pub fn add(&mut self, other: &CompactLatency) {
        if self.digits == 0 {
            return;
        }
        if let Some(o) = &other.hist {
            self.made()
                .add(o)
                .expect("auto-resizing histograms take any range");
        }
    }

    pub fn percentiles(&self) -> Option<Percentiles> {
        self.hist.as_ref().and_then(percentiles_of)
    }

    pub fn digits(&self) -> u8 {
        self.digits
    }

    /// Bytes its counts take.
    pub fn heap_bytes(&self) -> usize {
        self.hist
            .as_ref()
            .map_or(0, |h| h.distinct_values() * std::mem::size_of::<u32>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// A statement's latencies from 1 µs to 1 ms, at 1%: a few KB, and nothing when nothing
    /// was recorded; the percentiles within 1% of the exact ones.
    #[test]
    fn compact_latency_is_small_and_within_one_percent() {
        let mut c = CompactLatency::default();
        assert_eq!(c.heap_bytes(), 0);
        assert_eq!(c.percentiles(), None);
        let values: Vec<u64> = (1..=1000u64).map(|i| i * 1000).collect();
        for v in &values {
            c.record(*v);
        }
        assert!(c.heap_bytes() < 16 * 1024, "{} bytes", c.heap_bytes());
        // Four bytes (a u32 count) for each of the counters a histogram of that range holds.
        let mut same = hdrhistogram::Histogram::<u32>::new(2).unwrap();
        same.auto(true);
        same.record(1_000_000).unwrap();
        assert_eq!(c.heap_bytes(), 4 * same.distinct_values());
        let p = c.percentiles().unwrap();
        assert_eq!(p.count, 1000);
        // Exact: the 500th, 900th and 990th of 1000 values.
        for (got, exact) in [(p.p50, 500_000u64), (p.p90, 900_000), (p.p99, 990_000)] {
            let err = (got as f64 - exact as f64).abs() / exact as f64;
            assert!(err <= 0.01, "{got} against {exact}");
        }
        let mut merged = CompactLatency::default();
        merged.add(&c);
        merged.add(&CompactLatency::default());
        assert_eq!(merged.percentiles(), c.percentiles());
        // At one digit: about a KB, within 10%.
        let mut coarse = CompactLatency::with_digits(1);
        for v in &values {
            coarse.record(*v);
        }
        assert!(coarse.heap_bytes() <= 2048, "{} bytes", coarse.heap_bytes());
        assert!(
            0 < coarse.heap_bytes() && coarse.heap_bytes() < c.heap_bytes(),
            "{} < {}",
            coarse.heap_bytes(),
            c.heap_bytes()
        );
        let digits = |c: CompactLatency| c.digits();
        assert_eq!(
            [
                digits(CompactLatency::default()),
                digits(CompactLatency::with_digits(0)),
                digits(CompactLatency::with_digits(1)),
                digits(CompactLatency::with_digits(5)),
                digits(CompactLatency::off()),
            ],
            [2, 1, 1, 2, 0]
        );
        let mut off = CompactLatency::off();
        off.record(5);
        off.add(&c);
        assert_eq!((off.percentiles(), off.heap_bytes()), (None, 0));
        let p = coarse.percentiles().unwrap();
        for (got, exact) in [(p.p50, 500_000u64), (p.p99, 990_000)] {
            let err = (got as f64 - exact as f64).abs() / exact as f64;
            assert!(err <= 0.1, "{got} against {exact}");
        }
    }

    #[test]
    fn hand_computed_summary() {
        // sorted: 1 2 3 4 100; mean 22, median 3, sample std dev sqrt(7610/4)
        let s = summarize(&[3.0, 1.0, 100.0, 2.0, 4.0], None).unwrap();
        assert_eq!(s.samples, 5);
        assert!(close(s.mean, 22.0));
        assert!(close(s.median, 3.0));
        let var = ((1.0f64 - 22.0).powi(2)
            + (2.0f64 - 22.0).powi(2)
            + (3.0f64 - 22.0).powi(2)
            + (4.0f64 - 22.0).powi(2)
            + (100.0f64 - 22.0).powi(2))
            / 4.0;
        assert!(close(s.std_dev, var.sqrt()));
        // |x - 3| = 2 1 0 1 97 -> sorted 0 1 1 2 97 -> 1
        assert!(close(s.mad, 1.0));
        assert_eq!((s.min, s.max), (1.0, 100.0));
        // q1 = 2, q3 = 4, iqr = 2: 100 > 4 + 6 -> high severe
        assert_eq!(
            s.outliers,
            Outliers {
                high_severe: 1,
                ..Default::default()
            }
        );
        // Against the exact bootstrap distribution (every one of the 5^5 resamples of these
        // five values enumerated in Python, its 2.5% and 97.5% points): the mean's interval
        // [1.8, 61.2], the median's [1, 100]. 2000 seeded resamples land within a resample's
        // step of them. With five samples the median's interval spans the data: what a reader
        // must be told by the sample count beside it.
        assert_eq!(s.ci95_median, [1.0, 100.0]);
        let [lo, hi] = s.ci95_mean;
        assert!(
            (lo - 1.8).abs() <= 0.2 && (hi - 61.2).abs() <= 1.0,
            "{lo} {hi}"
        );
        // 101 evenly spread samples (1 to 101), against derivations by hand: the median's
        // distribution-free 95% interval is between the order statistics of ranks
        // 50.5 -+ 1.96 * sqrt(101) / 2 = 40.7 and 60.3, that is 41 and 61; the mean's, by the
        // normal approximation with the plug-in variance (101^2 - 1) / 12 = 850, is
        // 51 -+ 1.96 * sqrt(850 / 101) = [45.31, 56.69]. The percentile bootstrap agrees to
        // within its resampling error.
        let wide = summarize(&(1..=101).map(f64::from).collect::<Vec<_>>(), None).unwrap();
        let [lo, hi] = wide.ci95_median;
        assert!(
            (40.0..=42.0).contains(&lo) && (60.0..=62.0).contains(&hi),
            "{lo} {hi}"
        );
        let [lo, hi] = wide.ci95_mean;
        assert!(
            (lo - 45.31).abs() < 0.4 && (hi - 56.69).abs() < 0.4,
            "{lo} {hi}"
        );
        assert!(
            s.warnings[0].starts_with("found 1 outliers among 5 samples (20%)"),
            "{:?}",
            s.warnings
        );
        // Outliers a hair off a tight median are no warning.
        let mut tight: Vec<f64> = (0..97).map(|i| 1000.0 + (i % 5) as f64).collect();
        tight.extend([1010.0, 1011.0, 1012.0]);
        let t = summarize(&tight, None).unwrap();
        assert!(t.outliers.total() >= 3 && t.warnings.is_empty(), "{t:?}");
    }

    #[test]
    fn two_groups_of_samples_are_called_bimodal() {
        let mut two: Vec<f64> = (0..60).map(|i| 3050.0 + (i % 7) as f64).collect();
        two.extend((0..40).map(|i| 4040.0 + (i % 5) as f64));
        let s = summarize(&two, None).unwrap();
        assert!(
            s.warnings
                .iter()
                .any(|w| w == "bimodal: 60 samples around 3.05 µs and 40 around 4.04 µs (gap 32.2% of the median)"),
            "{:?}",
            s.warnings
        );
        // One group with a tail is not two groups.
        let one: Vec<f64> = (0..100).map(|i| 3000.0 + (i * i) as f64 / 50.0).collect();
        assert!(bimodal_split(&sorted(&one)).is_none());
        assert!(summarize(&one, None).unwrap().warnings.is_empty());
    }

    #[test]
    fn ratio_interval_brackets_the_ratio_and_can_be_lopsided() {
        let num: Vec<f64> = (0..50).map(|i| 300.0 + (i % 10) as f64).collect();
        let den: Vec<f64> = (0..50).map(|i| 100.0 + (i % 10) as f64).collect();
        let [lo, hi] = bootstrap_ratio(&num, &den).unwrap();
        let value = 304.5 / 104.5;
        assert!(lo < value && value < hi && hi - lo < 0.2, "[{lo}, {hi}]");
        // A slow tail on the numerator pulls the upper end out further than the lower.
        let mut tail = vec![100.0; 30];
        tail.extend(vec![150.0; 20]);
        let [lo, hi] = bootstrap_ratio(&tail, &[50.0; 20]).unwrap();
        assert_eq!(lo, 2.0);
        assert!(hi >= 2.5, "[{lo}, {hi}]");
        assert!(bootstrap_ratio(&[], &[1.0]).is_none());
        assert!(bootstrap_ratio(&[1.0], &[0.0]).is_none());
        let mut even = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(select_median(&mut even), 2.5);
    }

    /// Quantiles by R's type 7 (R's default, NumPy's "linear"): h = (n - 1) q, then linear
    /// between the values of ranks floor(h) and ceil(h). By hand for 10 11 12 13 14 15 16 17 18
    /// 22: q = 0.25 gives h = 2.25, 12 + 0.25 = 12.25; q = 0.9 gives h = 8.1, 18 + 0.1 * 4 = 18.4.
    /// Python's `statistics.quantiles(xs, n=20, method="inclusive")` gives the same three.
    #[test]
    fn quantiles_interpolate_as_r_type_7() {
        let xs = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 22.0];
        assert!(close(quantile_sorted(&xs, 0.25), 12.25));
        assert!(close(quantile_sorted(&xs, 0.9), 18.4));
        assert!(close(quantile_sorted(&xs, 0.05), 10.45));
        assert_eq!(
            (quantile_sorted(&xs, 0.0), quantile_sorted(&xs, 1.0)),
            (10.0, 22.0)
        );
    }

    #[test]
    fn even_count_median_and_mild_outlier() {
        // 10 11 12 13 14 15 16 17 18 22: q1 = 12.25, q3 = 16.75, iqr 4.5
        // mild fence 23.5, so 22 is not an outlier; add 25 -> mild
        let xs = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 22.0];
        let s = summarize(&xs, None).unwrap();
        assert!(close(s.median, 14.5));
        assert_eq!(s.outliers.total(), 0);
        let mut ys = xs.to_vec();
        ys.push(26.0); // q1 12.5, q3 17.5, iqr 5: mild fence 25, severe 32.5
        let s = summarize(&ys, None).unwrap();
        assert_eq!(
            s.outliers,
            Outliers {
                high_mild: 1,
                ..Default::default()
            }
        );
    }

    /// The low fences as the high ones: the mirror images of the cases above.
    #[test]
    fn low_outliers_are_counted_as_high_ones_are() {
        let s = summarize(&[100.0, 99.0, 98.0, 97.0, 1.0], None).unwrap();
        assert_eq!(
            s.outliers,
            Outliers {
                low_severe: 1,
                ..Default::default()
            }
        );
        // 40 - (10 .. 18, 22, 26): q1 22.5, q3 27.5, iqr 5: mild fence 15, severe 7.5.
        let xs: Vec<f64> = [
            10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 22.0, 26.0,
        ]
        .iter()
        .map(|x| 40.0 - x)
        .collect();
        assert_eq!(
            summarize(&xs, None).unwrap().outliers,
            Outliers {
                low_mild: 1,
                ..Default::default()
            }
        );
    }

    /// A sample on a fence is inside it: with 10 .. 18, 22 and one more value v >= 18, q1 is
    /// 12.5 and q3 17.5 (iqr 5), so the mild fence is at 25 and the severe one at 32.5; the
    /// mirror image (40 - x) puts them at 15 and 7.5 below.
    #[test]
    fn a_sample_on_a_fence_is_inside_it() {
        let base = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 22.0];
        let fenced = |v: f64, mirror: bool| {
            let mut xs = base.to_vec();
            xs.push(v);
            if mirror {
                xs.iter_mut().for_each(|x| *x = 40.0 - *x);
            }
            let o = summarize(&xs, None).unwrap().outliers;
            if mirror {
                (o.low_mild, o.low_severe, o.high_mild + o.high_severe)
            } else {
                (o.high_mild, o.high_severe, o.low_mild + o.low_severe)
            }
        };
        for mirror in [false, true] {
            assert_eq!(fenced(25.0, mirror), (0, 0, 0), "mirror {mirror}");
            assert_eq!(fenced(25.5, mirror), (1, 0, 0), "mirror {mirror}");
            assert_eq!(fenced(32.5, mirror), (1, 0, 0), "mirror {mirror}");
            assert_eq!(fenced(33.0, mirror), (0, 1, 0), "mirror {mirror}");
        }
        // The MAD of 2 4 6 8 200: |x - 6| = 4 2 0 2 194, whose median is 2.
        assert!(close(
            summarize(&[2.0, 4.0, 6.0, 8.0, 200.0], None).unwrap().mad,
            2.0
        ));
    }

    /// The outlier warning: 5% of the samples or more, each more than 5% off the median (both
    /// bounds exact: 5 of 100 warns, 4 of 100 does not; 5% off does not count, 5.1% does).
    #[test]
    fn the_outlier_warning_starts_at_five_percent() {
        // 95 samples 998 ..= 1002 (median 1000, q1 999, q3 1001), then 5 or 4 far ones.
        let with = |far: &[f64]| {
            let mut xs: Vec<f64> = (0..95).map(|i| 998.0 + (i % 5) as f64).collect();
            xs.extend(far);
            xs.resize(100, 1000.0);
            summarize(&xs, None).unwrap()
        };
        let s = with(&[1051.0; 5]);
        assert_eq!(s.median, 1000.0);
        assert_eq!(s.outliers.high_severe, 5);
        assert_eq!(
            s.warnings,
            ["found 5 outliers among 100 samples (5%) more than 5% off the median"]
        );
        assert!(with(&[1051.0; 4]).warnings.is_empty());
        let at_five = with(&[1050.0; 5]);
        assert_eq!(at_five.outliers.high_severe, 5);
        assert!(at_five.warnings.is_empty(), "{:?}", at_five.warnings);
        // The warning counts samples beyond a fence, not on it, nor inside it however far off
        // the median: 10 ..= 27 with 38.5 and 100 has q1 14.75, q3 24.25 (iqr 9.5), a mild
        // fence at 38.5 and a median of 19.5, so only 100 counts; the same mirrored (50 - x).
        for mirror in [false, true] {
            let mut xs: Vec<f64> = (10..=27).map(f64::from).collect();
            xs.extend([38.5, 100.0]);
            if mirror {
                xs.iter_mut().for_each(|x| *x = 50.0 - *x);
            }
            assert_eq!(
                summarize(&xs, None).unwrap().warnings,
                ["found 1 outliers among 20 samples (5%) more than 5% off the median"],
                "mirror {mirror}"
            );
        }
        // Below the median as above it, and both sides together.
        assert_eq!(with(&[949.0; 5]).warnings.len(), 1);
        let both = with(&[949.0, 949.0, 1051.0, 1051.0, 1051.0]);
        assert_eq!((both.outliers.total(), both.warnings.len()), (5, 1));
        let each = Outliers {
            low_severe: 1,
            low_mild: 2,
            high_mild: 3,
            high_severe: 4,
        };
        assert_eq!(each.total(), 10);
    }

    /// Ten samples are enough to be called two groups, nine are not; each group keeps a tenth
    /// of the samples (two at least). The gap is given over the median of all samples.
    #[test]
    fn two_groups_need_ten_samples_and_a_tenth_each() {
        let two = |low: usize, high: usize| {
            let mut xs = vec![100.0; low];
            xs.extend(vec![200.0; high]);
            bimodal_split(&xs)
        };
        assert_eq!(two(5, 5), Some((5, 100.0 / 150.0)));
        assert_eq!(two(5, 4), None);
        assert_eq!(two(2, 18), Some((2, 0.5)));
        assert_eq!(two(1, 19), None);
        assert_eq!(two(18, 2), Some((18, 1.0)));
        assert_eq!(two(19, 1), None);
        // A tenth of 30 is 3.
        assert_eq!(two(2, 28), None);
        assert_eq!(two(3, 27), Some((3, 0.5)));
    }

    /// Two groups need a gap wider than 2% of the median and more than five times the spread
    /// (MAD) inside either group; both bounds are exclusive.
    #[test]
    fn two_groups_need_a_gap_wider_than_both_bounds() {
        let levels = |low: &[f64], high: &[f64]| {
            let mut xs: Vec<f64> = low.iter().chain(high).copied().collect();
            xs.sort_by(f64::total_cmp);
            bimodal_split(&xs)
        };
        // No spread: six at 100 and four at 102 (median 100) is a gap of exactly 2%.
        assert_eq!(levels(&[100.0; 6], &[102.0; 4]), None);
        let (k, rel) = levels(&[100.0; 6], &[102.1; 4]).unwrap();
        assert!(k == 6 && (rel - 0.021).abs() < 1e-12, "{k} {rel}");
        // A spread of 1 (99 100 101, twice): a gap of 5 is not enough, 5.5 is.
        let low = [99.0, 100.0, 101.0, 99.0, 100.0, 101.0];
        let high = |gap: f64| low.map(|x| x + 2.0 + gap);
        assert_eq!(levels(&low, &high(5.0)), None);
        assert_eq!(levels(&low, &high(5.5)).map(|(k, _)| k), Some(6));
        // A spread of 10 (90 100 110, ...) and a gap of 40: wide but not wide enough.
        let low = [90.0, 100.0, 110.0, 90.0, 100.0, 110.0];
        assert_eq!(levels(&low, &low.map(|x| x + 60.0)), None);
        assert_eq!(
            levels(&low, &low.map(|x| x + 80.0)).map(|(k, _)| k),
            Some(6)
        );
    }

    #[test]
    fn constant_samples_have_degenerate_intervals() {
        let s = summarize(&[5.0; 8], None).unwrap();
        assert_eq!(s.ci95_mean, [5.0, 5.0]);
        assert_eq!(s.ci95_median, [5.0, 5.0]);
        assert_eq!(s.std_dev, 0.0);
        assert!(summarize(&[], None).is_none());
        let one = summarize(&[7.0], None).unwrap();
        assert_eq!(one.ci95_median, [7.0, 7.0]);
        assert_eq!(
            (one.ci95_mean, one.std_dev, one.mad),
            ([7.0, 7.0], 0.0, 0.0)
        );
    }

    /// The bootstrap draws from a seeded stream: the same samples give the same intervals in
    /// every process and on every machine, the ones recorded here once (a draw from the
    /// thread's or the OS's randomness, or a changed seed, would not give them).
    #[test]
    fn bootstrap_is_deterministic() {
        let xs: Vec<f64> = (0..40).map(|i| 100.0 + (i * 37 % 11) as f64).collect();
        let s = summarize(&xs, None).unwrap();
        assert!(s.ci95_median[0] <= s.median && s.median <= s.ci95_median[1]);
        insta::assert_debug_snapshot!((s.median, s.ci95_median, s.ci95_mean));
    }

    #[test]
    fn quick_median_brackets_the_median() {
        assert_eq!(quick_median(&[]), None);
        assert_eq!(quick_median(&[5.0]), Some((5.0, [5.0, 5.0])));
        let xs: Vec<f64> = (1..=100).map(|i| i as f64).collect();
        let (m, [lo, hi]) = quick_median(&xs).unwrap();
        assert_eq!(m, 50.5);
        // n=100: ranks 50 -+ 9.8 -> 41st and 60th values
        assert_eq!((lo, hi), (40.0, 60.0));
    }

    #[test]
    fn histograms_added_hold_the_records_of_both() {
        let (mut a, mut b) = (LatencyHistogram::new(), LatencyHistogram::new());
        for v in 1..=100u64 {
            a.record(v);
            b.record(1000 + v);
        }
        a.add(&b);
        let p = a.percentiles().unwrap();
        assert_eq!(p.count, 200);
        assert_eq!((p.p50, p.max), (100, 1100));
        // The one added to is unchanged.
        assert_eq!(b.percentiles().unwrap().count, 100);
    }

    #[test]
    fn hdr_percentiles() {
        let mut h = LatencyHistogram::new();
        assert!(h.percentiles().is_none());
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p = h.percentiles().unwrap();
        assert_eq!(p.count, 1000);
        // 3 significant digits: within 0.1%
        assert!(
            (p.p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.002,
            "{}",
            p.p50
        );
        assert!(
            (p.p99 as f64 - 990_000.0).abs() / 990_000.0 < 0.002,
            "{}",
            p.p99
        );
        assert!((p.max as f64 - 1_000_000.0).abs() / 1_000_000.0 < 0.002);
    }
}

/// A ratio from paired rounds: the median of the per-round ratios of two benches' samples, with
/// a distribution-free 95% interval of that median (order statistics of the ratios).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRatio {
    pub pairs: usize,
    pub median: f64,
    pub ci95: [f64; 2],
    /// Each runner process's ratio and its own interval, where the bench was measured in
    /// several (since 1.10): the ratio above is their geometric mean and its interval the
    /// next run's. Empty: one process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<Estimate>,
}

/// Pairs `num[i]` with `den[i]` (samples of the same round) and summarizes their ratios.
/// `None` with fewer than 6 pairs (no 95% interval from order statistics below that).
pub fn paired_ratio(num: &[f64], den: &[f64]) -> Option<PairedRatio> {
    let mut r: Vec<f64> = num
        .iter()
        .zip(den)
        .filter(|(_, d)| **d > 0.0)
        .map(|(n, d)| n / d)
        .collect();
    let n = r.len();
    if n < 6 {
        return None;
    }
    r.sort_by(f64::total_cmp);
    // The median's interval from the binomial(n, 1/2) law of how many ratios fall below it
    // (normal approximation, rounded outwards).
    let half = 1.96 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - half).floor().max(0.0)) as usize;
    let hi = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
    Some(PairedRatio {
        pairs: n,
        median: median_sorted(&r),
        ci95: [r[lo], r[hi]],
        processes: Vec::new(),
    })
}

#[cfg(test)]
mod paired_tests {
    use super::*;

    #[test]
    fn paired_ratios_cancel_drift_that_hits_both_sides() {
        // Both benches drift together by up to 40%; the second is always 3x the first.
        let den: Vec<f64> = (0..40)
            .map(|i| 100.0 * (1.0 + (i % 10) as f64 * 0.04))
            .collect();
        let num: Vec<f64> = den.iter().map(|d| d * 3.0).collect();
        let p = paired_ratio(&num, &den).unwrap();
        assert_eq!(p.pairs, 40);
        assert!((p.median - 3.0).abs() < 1e-12);
        assert_eq!(p.ci95, [3.0, 3.0]);
        assert_eq!(paired_ratio(&num[..5], &den[..5]), None);
        // Noisy pairs: the interval holds the median and is ordered.
        let num: Vec<f64> = den
            .iter()
            .enumerate()
            .map(|(i, d)| d * (3.0 + ((i * 7) % 5) as f64 * 0.05))
            .collect();
        let p = paired_ratio(&num, &den).unwrap();
        assert!(p.ci95[0] <= p.median && p.median <= p.ci95[1], "{p:?}");
        assert!(p.ci95[0] >= 3.0 && p.ci95[1] <= 3.2, "{p:?}");
    }

    /// The interval's ranks by hand: of n = 40 sorted ratios, 20 -+ 1.96 * sqrt(40) / 2 =
    /// 13.8 and 26.2, rounded outwards to the 14th and 28th (indices 13 and 27). Six pairs are
    /// the fewest with an interval (their ranks 0.6 and 5.4 span them all); a pair whose
    /// denominator is not positive is left out.
    #[test]
    fn the_paired_interval_takes_the_ranks_the_binomial_law_gives() {
        let den = vec![1.0; 40];
        let num: Vec<f64> = (1..=40).rev().map(f64::from).collect();
        let p = paired_ratio(&num, &den).unwrap();
        assert_eq!((p.pairs, p.median, p.ci95), (40, 20.5, [14.0, 28.0]));
        let p = paired_ratio(
            &[6.0, 2.0, 4.0, 1.0, 5.0, 3.0, 9.0],
            &[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
        );
        assert_eq!(
            p,
            Some(PairedRatio {
                pairs: 6,
                median: 3.5,
                ci95: [1.0, 6.0],
                processes: Vec::new(),
            })
        );
        assert_eq!(
            paired_ratio(&[1.0; 6], &[1.0, 1.0, 1.0, 1.0, 1.0, -1.0]),
            None
        );
    }
}

#[cfg(test)]
mod large_sample_tests {
    use super::*;

    /// Samples like a bench's: a skewed spread around 1000 ns (log-normal, seeded).
    fn skewed(n: usize, seed: u64, scale: f64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                // Box-Muller.
                let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random());
                let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
                scale * (0.2 * z).exp()
            })
            .collect()
    }

    /// Past [`LARGE_SAMPLE`], the intervals are what the bootstrap itself gives on the same
    /// samples, to within a tenth of the interval's width: the bootstrap (resampled here on
    /// purpose) is the oracle.
    #[test]
    fn large_samples_get_the_bootstraps_intervals_without_resampling() {
        let s = sorted(&skewed(LARGE_SAMPLE + 1, 7, 1000.0));
        let (mean_b, median_b) = resampled(&s);
        let (mean_l, median_l) = bootstrap(&s);
        for (b, l) in [(mean_b, mean_l), (median_b, median_l)] {
            let width = b[1] - b[0];
            assert!(width > 0.0);
            for i in 0..2 {
                assert!(
                    (b[i] - l[i]).abs() < 0.1 * width,
                    "bootstrap {b:?}, large {l:?}"
                );
            }
        }
        // A ratio of two such benches: the delta method against the resampled ratio.
        let other = skewed(LARGE_SAMPLE + 1, 8, 1300.0);
        let small_num: Vec<f64> = other.iter().step_by(2).copied().collect();
        let small_den: Vec<f64> = s.iter().step_by(2).copied().collect();
        let b = bootstrap_ratio(&small_num, &small_den).unwrap();
        let l = large_ratio(&small_num, &small_den).unwrap();
        let width = b[1] - b[0];
        for i in 0..2 {
            assert!(
                (b[i] - l[i]).abs() < 0.15 * width,
                "bootstrap {b:?}, delta {l:?}"
            );
        }
        let big = summarize(&s, None).unwrap();
        assert!(big.ci95_median[0] < big.median && big.median < big.ci95_median[1]);
    }
}
