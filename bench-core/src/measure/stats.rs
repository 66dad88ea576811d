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
    let mad = median_sorted(&sorted(
        &s.iter().map(|x| (x - median_v).abs()).collect::<Vec<_>>(),
    ));
    let q1 = quantile_sorted(&s, 0.25);
    let q3 = quantile_sorted(&s, 0.75);
    let iqr = q3 - q1;
    let mut outliers = Outliers::default();
    for &x in &s {
        if x < q1 - 3.0 * iqr {
            outliers.low_severe += 1;
        } else if x < q1 - 1.5 * iqr {
            outliers.low_mild += 1;
        } else if x > q3 + 3.0 * iqr {
            outliers.high_severe += 1;
        } else if x > q3 + 1.5 * iqr {
            outliers.high_mild += 1;
        }
    }
    let (ci95_mean, ci95_median) = bootstrap(&s);
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
    })
}

/// Percentile bootstrap of the mean and the median.
fn bootstrap(s: &[f64]) -> ([f64; 2], [f64; 2]) {
    let n = s.len();
    if n == 1 {
        return ([s[0], s[0]], [s[0], s[0]]);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut means = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut resample = vec![0.0; n];
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for slot in resample.iter_mut() {
            *slot = s[rng.random_range(0..n)];
        }
        means.push(mean(&resample));
        resample.sort_by(f64::total_cmp);
        medians.push(median_sorted(&resample));
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
    let lo = ((n / 2.0 - half).floor().max(1.0) as usize - 1).min(s.len() - 1);
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

    pub fn percentiles(&self) -> Option<Percentiles> {
        let h = &self.0;
        (!h.is_empty()).then(|| Percentiles {
            count: h.len(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
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
        assert!(s.ci95_median[0] <= 3.0 && 3.0 <= s.ci95_median[1]);
        assert!(s.ci95_mean[0] >= 1.0 && s.ci95_mean[1] <= 100.0);
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

    #[test]
    fn constant_samples_have_degenerate_intervals() {
        let s = summarize(&[5.0; 8], None).unwrap();
        assert_eq!(s.ci95_mean, [5.0, 5.0]);
        assert_eq!(s.ci95_median, [5.0, 5.0]);
        assert_eq!(s.std_dev, 0.0);
        assert!(summarize(&[], None).is_none());
        let one = summarize(&[7.0], None).unwrap();
        assert_eq!(one.ci95_median, [7.0, 7.0]);
    }

    #[test]
    fn bootstrap_is_deterministic() {
        let xs: Vec<f64> = (0..40).map(|i| 100.0 + (i * 37 % 11) as f64).collect();
        assert_eq!(summarize(&xs, None), summarize(&xs, None));
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
