//! The spread between runs: when a report holds several runs made the same way (same target,
//! knobs and trace; `benchscope run --repeat N`, or runs repeated in the explorer), how far
//! each bench's median, and its ratio to its baseline bench, move from run to run, beside the
//! interval one run's samples give.

use std::fmt::Write;

use bench_core::baselines::Baselines;
use bench_core::compare::{Spread, groups, run_differences, spread};
use bench_core::protocol::results::RunRecord;
use serde::Serialize;

use crate::format;

/// A ratio that moved this much or less between runs reproduced (the `within` count).
pub const REPRODUCED: f64 = 0.03;

/// Runs made the same way, and each bench's spread across them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repeats {
    /// Positions of the runs in the report.
    pub runs: Vec<usize>,
    /// Per bench, in first-seen order.
    pub benches: Vec<BenchSpread>,
}

/// How far one bench moved across runs made the same way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchSpread {
    pub bench: String,
    /// The spread of its median.
    pub median: Spread,
    /// The widest interval of a single run's median, relative to that run's median.
    pub widest_ci: f64,
    /// The spread of its ratio to the bench it is compared with (paired where the run
    /// measured it so), unless it is that bench or fewer than two runs have the ratio.
    pub ratio: Option<Spread>,
}

/// The spread of `bench`'s ratio to its baseline bench across `runs`, as each run's
/// comparison reads it (paired where measured so); `None` for a baseline bench itself or with
/// fewer than two ratios.
pub fn ratio_spread<'r>(
    baselines: &Baselines<'_>,
    runs: impl IntoIterator<Item = &'r RunRecord>,
    bench: &str,
) -> Option<Spread> {
    let ratios = runs
        .into_iter()
        .filter(|r| baselines.base_of(r, bench) != bench)
        .filter_map(|r| baselines.ratio_value(r, bench));
    Spread::of(ratios)
}

/// Every group of two or more runs made the same way, in report order.
pub fn repeats(runs: &[RunRecord], baselines: &Baselines<'_>) -> Vec<Repeats> {
    let mut out = Vec::new();
    for group in groups(runs, |a, b| run_differences(a, b).is_empty()) {
        if group.len() < 2 {
            continue;
        }
        let mut names: Vec<&str> = Vec::new();
        for &j in &group {
            for b in &runs[j].benches {
                if !names.contains(&b.name.raw()) {
                    names.push(b.name.raw());
                }
            }
        }
        let benches = names
            .into_iter()
            .filter_map(|n| {
                let median = spread(group.iter().map(|&j| &runs[j]), n)?;
                let widest_ci = group
                    .iter()
                    .filter_map(|&j| runs[j].bench(n)?.summary.as_ref())
                    .map(|s| (s.ci95_median[1] - s.ci95_median[0]) / s.median)
                    .fold(0.0, f64::max);
                let ratio = ratio_spread(baselines, group.iter().map(|&j| &runs[j]), n);
                Some(BenchSpread {
                    bench: n.to_string(),
                    median,
                    widest_ci,
                    ratio,
                })
            })
            .collect::<Vec<_>>();
        // Scenario benches have no medians to spread: no table of nothing.
        if benches.is_empty() {
            continue;
        }
        out.push(Repeats {
            runs: group,
            benches,
        });
    }
    out
}

impl Repeats {
    fn rows(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let headers = [
            "bench",
            "median of run medians",
            "min – max",
            "spread between runs",
            "widest 95% CI within a run",
            "ratio min – max",
            "ratio spread",
        ]
        .map(String::from)
        .to_vec();
        let rows = self
            .benches
            .iter()
            .map(|b| {
                let (range, moved) = match &b.ratio {
                    Some(r) => (
                        format::ratio_range(r),
                        format!("{:.1}%", r.relative() * 100.0),
                    ),
                    None => ("-".to_string(), "-".to_string()),
                };
                vec![
                    b.bench.clone(),
                    format::ns(b.median.median),
                    format::ci([b.median.min, b.median.max]),
                    format!("{:.1}%", b.median.relative() * 100.0),
                    format!("{:.1}%", b.widest_ci * 100.0),
                    range,
                    moved,
                ]
            })
            .collect();
        (headers, rows)
    }

    /// How many ratios moved [`REPRODUCED`] or less across the runs, of how many, and the
    /// median of their spreads; `None` without ratios.
    pub fn within(&self) -> Option<(usize, usize, f64)> {
        let spreads: Vec<f64> = self
            .benches
            .iter()
            .filter_map(|b| Some(b.ratio?.relative()))
            .collect();
        if spreads.is_empty() {
            return None;
        }
        let within = spreads.iter().filter(|s| **s <= REPRODUCED).count();
        Some((
            within,
            spreads.len(),
            bench_core::compare::median_of(spreads),
        ))
    }

    fn within_line(&self) -> Option<String> {
        let (within, of, median) = self.within()?;
        Some(format!(
            "Ratios that moved {:.0}% or less across the {} runs: {within} of {of} (median spread {:.1}%); spread = (largest - smallest) / median.",
            REPRODUCED * 100.0,
            self.runs.len(),
            median * 100.0
        ))
    }

    fn title(&self, numbers: &dyn Fn(usize) -> usize) -> String {
        let list: Vec<String> = self.runs.iter().map(|i| numbers(*i).to_string()).collect();
        format!(
            "Between runs: {} runs made the same way (runs {})",
            self.runs.len(),
            list.join(", ")
        )
    }

    pub fn text(&self, numbers: &dyn Fn(usize) -> usize) -> String {
        let (headers, rows) = self.rows();
        let mut out = format!("\n{}\n", self.title(numbers));
        out.push_str(&super::layout::align(&headers, &rows, 1));
        if let Some(line) = self.within_line() {
            let _ = writeln!(out, "{line}");
        }
        out
    }

    pub fn markdown(&self, numbers: &dyn Fn(usize) -> usize) -> String {
        let (headers, rows) = self.rows();
        let mut out = String::new();
        let _ = writeln!(out, "\n### {}\n", self.title(numbers));
        super::layout::md_table(&mut out, &headers, &rows, 1);
        if let Some(line) = self.within_line() {
            let _ = writeln!(out, "\n{line}");
        }
        let _ = writeln!(
            out,
            "\nA spread wider than the interval within one run means the run-to-run variation (machine state, memory layout) is larger than one run's samples show: compare such benches only across repeated runs."
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::finished_record;
    use bench_core::measure::stats::PairedRatio;
    use bench_core::protocol::Event;

    /// A run of rusqlite at 1 µs and worker at `worker` ns whose worker ratio was measured in
    /// paired rounds as `paired`.
    fn run(worker: f64, paired: f64) -> RunRecord {
        let mut r = finished_record(
            "single_row_lookup",
            &[("rusqlite", 1000.0), ("middleware/worker", worker)],
        );
        r.apply(Event::Paired {
            bench: "middleware/worker".into(),
            against: "rusqlite".into(),
            ratio: PairedRatio {
                pairs: 12,
                median: paired,
                ci95: [paired * 0.99, paired * 1.01],
                processes: Vec::new(),
            },
        });
        r
    }

    /// Repeated scenario runs have no medians: no "between runs" table is made for them
    /// (an empty one read as if the runs had been compared).
    #[test]
    fn repeated_scenario_runs_make_no_empty_table() {
        let scenario = || {
            let mut r = finished_record("async_contention", &[]);
            for e in crate::testing::scenario_events("spawn_blocking", 1000.0, 1.0, 0.9, 2) {
                r.apply(e);
            }
            r
        };
        let runs = vec![scenario(), scenario()];
        assert!(repeats(&runs, &Baselines::bench("spawn_blocking")).is_empty());
        // Beside a bench with medians, the group is kept, with that bench alone.
        let mut mixed = vec![scenario(), scenario()];
        for r in &mut mixed {
            for e in crate::testing::bench_events(
                "b",
                "b",
                1000,
                &crate::testing::samples(5.0, 12),
                None,
            ) {
                r.apply(e);
            }
        }
        let r = repeats(&mixed, &Baselines::bench("b"));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].benches.len(), 1);
    }

    #[test]
    fn ratios_move_between_runs_as_their_comparison_reads_them() {
        // The medians say 8x, 9x and 8x; the paired rounds said 8.0x, 8.1x and 8.4x: the
        // paired figure is each run's ratio, as the comparison table shows it.
        let runs = vec![run(8000.0, 8.0), run(9000.0, 8.1), run(8000.0, 8.4)];
        let baselines = Baselines::bench("rusqlite");
        let r = repeats(&runs, &baselines);
        assert_eq!(r.len(), 1, "three runs made the same way");
        assert_eq!(r[0].runs, vec![0, 1, 2]);
        let worker = r[0]
            .benches
            .iter()
            .find(|b| b.bench == "middleware/worker")
            .unwrap();
        let ratio = worker.ratio.unwrap();
        assert_eq!(
            (ratio.runs, ratio.min, ratio.max, ratio.median),
            (3, 8.0, 8.4, 8.1)
        );
        assert!((worker.median.relative() - 1000.0 / 8000.0).abs() < 0.01);
        let base = r[0].benches.iter().find(|b| b.bench == "rusqlite").unwrap();
        assert_eq!(base.ratio, None, "the baseline bench has no ratio to move");
        // One ratio, 4.9% apart: not within 3%.
        let (within, of, median) = r[0].within().unwrap();
        assert_eq!((within, of), (0, 1));
        assert!((median - 0.4 / 8.1).abs() < 1e-9);
        let text = r[0].text(&|i| i + 1);
        assert!(text.contains("8.00–8.40x"), "{text}");
        assert!(
            text.contains(
                "Ratios that moved 3% or less across the 3 runs: 0 of 1 (median spread 4.9%)"
            ),
            "{text}"
        );
        // Runs made once each have no spread.
        assert!(repeats(&runs[..1], &baselines).is_empty());
    }

    /// The 3% line itself: a spread of exactly 3% reproduced, a hair more did not.
    #[test]
    fn a_ratio_that_moved_exactly_three_percent_counts_as_reproduced() {
        let baselines = Baselines::bench("rusqlite");
        let within = |ratios: [f64; 3]| {
            let runs: Vec<RunRecord> = ratios.iter().map(|r| run(r * 1000.0, *r)).collect();
            repeats(&runs, &baselines)[0].within().unwrap()
        };
        // (25 - 24.25) / 25 is 0.03 exactly in binary floating point.
        assert_eq!(within([24.25, 25.0, 25.0]).0, 1);
        assert_eq!(within([24.24, 25.0, 25.0]).0, 0);
        assert_eq!(within([25.0, 25.0, 25.0]), (1, 1, 0.0));
    }
}
