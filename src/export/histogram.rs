//! A bench's distribution as text, in the manner of oha's response-time histogram: its samples
//! (ns per operation, one per sample) in equal-width buckets with a bar each, and the latency
//! percentiles of single operations where the workload records them.

use std::fmt::Write;

use bench_core::protocol::results::BenchResult;

use crate::format;

/// Buckets of the sample histogram.
pub const BUCKETS: usize = 12;

/// Counts of `samples` in `n` equal-width buckets from the smallest to the largest, with
/// each bucket's upper edge; one bucket when every sample is the same.
pub fn buckets(samples: &[f64], n: usize) -> Vec<(f64, usize)> {
    let (lo, hi) = samples
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    if samples.is_empty() {
        return vec![];
    }
    if hi <= lo || n <= 1 {
        return vec![(hi, samples.len())];
    }
    let width = (hi - lo) / n as f64;
    let mut counts = vec![0usize; n];
    for x in samples {
        let i = (((x - lo) / width) as usize).min(n - 1);
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + width * (i + 1) as f64, c))
        .collect()
}

/// The histogram of one bench, bars at most `bar` characters wide.
pub fn text(title: &str, b: &BenchResult, bar: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{title}: {} samples, ns/op of each (bucket: its upper edge)",
        b.samples.len()
    );
    let hist = buckets(&b.samples, BUCKETS);
    let most = hist.iter().map(|(_, c)| *c).max().unwrap_or(0).max(1);
    let mut labels: Vec<String> = hist.iter().map(|(edge, _)| format::ns(*edge)).collect();
    // Narrow buckets whose short labels would repeat get their edges in ns, to a tenth.
    if labels.windows(2).any(|w| w[0] == w[1]) {
        labels = hist
            .iter()
            .map(|(edge, _)| format!("{edge:.1} ns"))
            .collect();
    }
    let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let count_w = most.to_string().len();
    for ((_, count), label) in hist.iter().zip(&labels) {
        let n = (count * bar).div_ceil(most);
        let bars = "■".repeat(if *count == 0 { 0 } else { n.max(1) });
        let _ = writeln!(
            out,
            "{}",
            format!("  {label:>label_w$} [{count:>count_w$}] {bars}").trim_end()
        );
    }
    if let Some(s) = &b.summary {
        let _ = writeln!(
            out,
            "median {} · mean {} ± {} · min {} · max {}",
            format::ns(s.median),
            format::ns(s.mean),
            format::ns(s.std_dev),
            format::ns(s.min),
            format::ns(s.max)
        );
        match s.latency {
            Some(l) => {
                let _ = writeln!(
                    out,
                    "single operations ({} recorded): p50 {} · p90 {} · p99 {} · p99.9 {} · max {}",
                    l.count,
                    format::ns(l.p50 as f64),
                    format::ns(l.p90 as f64),
                    format::ns(l.p99 as f64),
                    format::ns(l.p999 as f64),
                    format::ns(l.max as f64)
                );
            }
            None => {
                let _ = writeln!(out, "(this bench records no per-operation latency)");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_the_range_and_count_every_sample() {
        let xs = [10.0, 11.0, 12.0, 19.0, 20.0];
        let b = buckets(&xs, 5);
        assert_eq!(b.len(), 5);
        assert_eq!(b.iter().map(|(_, c)| c).sum::<usize>(), 5);
        assert_eq!(b[0], (12.0, 2));
        assert_eq!(b[4], (20.0, 2));
        assert_eq!(buckets(&[3.0, 3.0], 5), vec![(3.0, 2)]);
        assert!(buckets(&[], 5).is_empty());
    }

    #[test]
    fn a_bench_histogram() {
        let mut r = bench_core::protocol::results::RunRecord::default();
        let xs: Vec<f64> = (0..40)
            .map(|i| 1400.0 + ((i * 37) % 23) as f64 * 10.0 + if i % 9 == 0 { 400.0 } else { 0.0 })
            .collect();
        for e in crate::testing::bench_events("rusqlite", "rusqlite", 1000, &xs, Some(1.1)) {
            r.apply(e);
        }
        insta::assert_snapshot!(text("rusqlite · run 1", r.bench("rusqlite").unwrap(), 30));
    }
}
