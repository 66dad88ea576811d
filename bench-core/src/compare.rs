//! The one comparison model: a bench against the baseline bench of its run (a ratio with its
//! error), and a run against a baseline run (a change with its verdict). The explorer, the
//! headless table and every export read these, so they always say the same thing.

use serde::{Deserialize, Serialize};

use crate::measure::stats::{Summary, bootstrap_ratio};
use crate::protocol::results::{BenchResult, RunRecord};

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

/// The verdict of a change against a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    WithinNoise,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
        }
    }

    /// The mark the explorer and the exports put beside a figure.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Improved => "▼",
            Verdict::Regressed => "▲",
            Verdict::WithinNoise => "≈",
        }
    }
}

/// How changes are judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Relative changes up to this are "within noise" whatever the intervals say (0.02 = 2%).
    pub noise: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { noise: 0.02 }
    }
}

/// A bench's median against the same bench in a baseline run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Relative change of the median, in percent (negative is faster).
    pub pct: f64,
    pub verdict: Verdict,
}

/// A change counts only when the median CIs do not overlap and the relative change exceeds the
/// noise threshold.
pub fn change(current: &Summary, baseline: &Summary, settings: &Settings) -> Change {
    let rel = current.median / baseline.median - 1.0;
    let overlap = current.ci95_median[0] <= baseline.ci95_median[1]
        && baseline.ci95_median[0] <= current.ci95_median[1];
    let verdict = if overlap || rel.abs() <= settings.noise {
        Verdict::WithinNoise
    } else if rel < 0.0 {
        Verdict::Improved
    } else {
        Verdict::Regressed
    };
    Change {
        pct: rel * 100.0,
        verdict,
    }
}

/// One row of a comparison: a bench's figures, its ratio to the baseline bench and, when a
/// baseline run is given, its change against that run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    pub bench: String,
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Ratio>,
    /// Against the same bench of the baseline run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
}

/// What a comparison is made against.
#[derive(Debug, Clone, Copy)]
pub struct Baselines<'a> {
    /// The bench every ratio is relative to.
    pub bench: &'a str,
    /// The run every change is relative to (none for a single run).
    pub run: Option<&'a RunRecord>,
    pub settings: Settings,
}

impl<'a> Baselines<'a> {
    pub fn bench(bench: &'a str) -> Self {
        Baselines {
            bench,
            run: None,
            settings: Settings::default(),
        }
    }

    /// The bench `bench`'s ratio is taken against: the one its catalog entry names (the same
    /// operation on the baseline backend, say), else the baseline bench.
    pub fn base_of(&self, run: &RunRecord, bench: &str) -> &'a str {
        run.start
            .as_ref()
            .and_then(|s| crate::workloads::find(&s.target).ok())
            .and_then(|t| t.spec(bench).ok())
            .and_then(|s| s.vs)
            .unwrap_or(self.bench)
    }

    /// The ratio of `bench`'s median in `run` to its baseline bench's, with its interval.
    pub fn ratio(&self, run: &RunRecord, bench: &str) -> Option<Ratio> {
        let b = run.bench(bench)?;
        b.summary.as_ref()?;
        let base = self.base_of(run, bench);
        if bench == base {
            // Against itself the ratio is exactly 1: the errors are perfectly correlated.
            return Some(Ratio {
                value: 1.0,
                err: 0.0,
                ci95: Some([1.0, 1.0]),
            });
        }
        ratio_of(b, run.bench(base)?)
    }

    /// The ratio's value alone (no resampling: cheap enough for every cell of every frame).
    pub fn ratio_value(&self, run: &RunRecord, bench: &str) -> Option<f64> {
        let s = run.bench(bench)?.summary.as_ref()?;
        let base = run.bench(self.base_of(run, bench))?.summary.as_ref()?;
        (s.median > 0.0 && base.median > 0.0).then(|| s.median / base.median)
    }

    /// The change of `bench` in `run` against the baseline run, unless `run` is that run.
    pub fn change(&self, run: &RunRecord, bench: &str) -> Option<Change> {
        let base = self.run.filter(|b| !std::ptr::eq(*b, run))?;
        // A profiled run's timings include the profiler: no verdict either way.
        if base.profiled || run.profiled {
            return None;
        }
        let s = run.bench(bench)?.summary.as_ref()?;
        Some(change(
            s,
            base.bench(bench)?.summary.as_ref()?,
            &self.settings,
        ))
    }
}

/// The SQLite settings a bench's connections read back that differ from what its run asked
/// for (`name: got (asked want)`); empty when they match or the bench has no connection.
pub fn settings_differences(run: &RunRecord, bench: &str) -> Vec<String> {
    let (Some(b), Some(start)) = (run.bench(bench), run.start.as_ref()) else {
        return Vec::new();
    };
    if b.sqlite.is_empty() {
        return Vec::new();
    }
    let asked = crate::settings::SqliteSettings::from_knobs(&start.knobs).expected();
    crate::settings::differences(&asked, &b.sqlite)
}

/// How a bench's median varies between runs made with the same settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Runs with a result for the bench.
    pub runs: usize,
    /// The median of the runs' medians.
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// (max - min) / median.
    pub fn relative(&self) -> f64 {
        (self.max - self.min) / self.median
    }
}

/// The spread of `bench`'s median across `runs` (which the caller picks as comparable: same
/// target, knobs and trace). `None` with fewer than two results.
pub fn spread<'a>(runs: impl IntoIterator<Item = &'a RunRecord>, bench: &str) -> Option<Spread> {
    let mut medians: Vec<f64> = runs
        .into_iter()
        .filter_map(|r| r.bench(bench)?.summary.as_ref().map(|s| s.median))
        .collect();
    if medians.len() < 2 {
        return None;
    }
    medians.sort_by(f64::total_cmp);
    let n = medians.len();
    let median = if n % 2 == 1 {
        medians[n / 2]
    } else {
        (medians[n / 2 - 1] + medians[n / 2]) / 2.0
    };
    Some(Spread {
        runs: n,
        median,
        min: medians[0],
        max: medians[n - 1],
    })
}

/// Whether two runs measured the same thing the same way: same target, knobs and trace.
/// Returns what differs, or nothing when they are comparable.
pub fn run_differences(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    match (&a.start, &b.start) {
        (Some(x), Some(y)) => {
            let mut d = Vec::new();
            if x.target != y.target {
                d.push(format!("target {} vs {}", x.target, y.target));
            }
            if x.trace != y.trace {
                d.push(format!("trace {} vs {}", x.trace, y.trace));
            }
            if a.profiled != b.profiled {
                d.push(format!("profiled {} vs {}", a.profiled, b.profiled));
            }
            d.extend(x.knobs.differences(&y.knobs));
            d
        }
        _ => vec!["a run without a start".into()],
    }
}

/// Rows for every finished bench of a run.
pub fn comparison(run: &RunRecord, baselines: &Baselines<'_>) -> Vec<ComparisonRow> {
    run.benches
        .iter()
        .filter_map(|b| {
            let s = b.summary.as_ref()?;
            Some(ComparisonRow {
                bench: b.name.clone(),
                backend: b.backend.clone(),
                strategy: b.strategy.clone(),
                median_ns: s.median,
                ci95_ns: s.ci95_median,
                ops_per_s: if s.median > 0.0 { 1e9 / s.median } else { 0.0 },
                p99_ns: s.latency.map(|l| l.p99),
                samples: s.samples,
                cost: s.cost,
                ratio: baselines.ratio(run, &b.name),
                change: baselines.change(run, &b.name),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::summarize;
    use crate::protocol::Event;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn with_ci(m: f64, lo: f64, hi: f64) -> Summary {
        let mut s = summarize(&[m], None).unwrap();
        s.ci95_median = [lo, hi];
        s
    }

    #[test]
    fn ratio_propagates_relative_errors() {
        let r = ratio_of_medians(&with_ci(10.0, 9.0, 11.0), &with_ci(2.0, 1.8, 2.2)).unwrap();
        assert!(close(r.value, 5.0));
        assert!(close(r.err, 5.0 * (0.02f64).sqrt()));
        assert_eq!(r.ci95, None);
    }

    #[test]
    fn verdicts() {
        let base = with_ci(100.0, 98.0, 102.0);
        let s = Settings::default();
        let v = |m, lo, hi| change(&with_ci(m, lo, hi), &base, &s).verdict;
        assert_eq!(v(80.0, 79.0, 81.0), Verdict::Improved);
        assert_eq!(v(120.0, 119.0, 121.0), Verdict::Regressed);
        assert_eq!(v(101.0, 99.0, 103.0), Verdict::WithinNoise);
        assert_eq!(
            v(101.5, 102.5, 102.6),
            Verdict::WithinNoise,
            "under the threshold"
        );
        assert!(close(
            change(&with_ci(80.0, 79.0, 81.0), &base, &s).pct,
            -20.0
        ));
    }

    fn record(benches: &[(&str, f64, f64, f64)]) -> RunRecord {
        let mut r = RunRecord::default();
        for (name, m, lo, hi) in benches {
            r.apply(Event::Sample {
                bench: name.to_string(),
                iter: 0,
                ops: 1,
                elapsed_ns: *m as u64,
                work: None,
                cost: None,
            });
            r.apply(Event::Summary {
                bench: name.to_string(),
                stats: with_ci(*m, *lo, *hi),
            });
        }
        r
    }

    #[test]
    fn spread_across_runs_and_settings_that_differ() {
        let runs = [
            record(&[("a", 4040.0, 4020.0, 4050.0)]),
            record(&[("a", 3050.0, 3040.0, 3070.0)]),
            record(&[("a", 3100.0, 3090.0, 3120.0), ("b", 1.0, 1.0, 1.0)]),
        ];
        let s = spread(&runs, "a").unwrap();
        assert_eq!(
            (s.runs, s.median, s.min, s.max),
            (3, 3100.0, 3050.0, 4040.0)
        );
        assert!((s.relative() - 990.0 / 3100.0).abs() < 1e-12);
        assert!(spread(&runs, "b").is_none(), "one result is no spread");

        let mut r = RunRecord::default();
        let mut knobs = crate::knobs::Knobs::default();
        knobs.set("locking_mode", "normal");
        r.apply(Event::Start(crate::protocol::Start {
            run: "r".into(),
            target: "t".into(),
            benches: vec![],
            harness: "core".into(),
            knobs: knobs.clone(),
            seed: 0,
            trace: false,
            budget: crate::protocol::Budget {
                warmup_s: 0.0,
                time_s: 0.0,
                max_samples: 1,
                min_samples: 1,
            },
            env: Default::default(),
        }));
        let mut got = crate::settings::SqliteSettings::default().expected();
        got.insert("locking_mode".into(), "exclusive".into());
        r.apply(Event::BenchStart {
            bench: "turso".into(),
            backend: "turso".into(),
            strategy: None,
            ops: 1,
            work: None,
            sqlite: got,
        });
        assert_eq!(
            settings_differences(&r, "turso"),
            vec!["locking_mode: exclusive (asked normal)"]
        );
        let mut other = r.clone();
        other.start.as_mut().unwrap().knobs.set("rows", 5u64);
        assert_eq!(run_differences(&r, &other), vec!["rows - vs 5"]);
        assert!(run_differences(&r, &r).is_empty());
    }

    #[test]
    fn rows_carry_ratios_and_changes() {
        let base_run = record(&[
            ("rusqlite", 100.0, 95.0, 105.0),
            ("mw", 300.0, 285.0, 315.0),
        ]);
        let run = record(&[
            ("rusqlite", 100.0, 95.0, 105.0),
            ("mw", 200.0, 198.0, 202.0),
        ]);
        let mut b = Baselines::bench("rusqlite");
        let rows = comparison(&base_run, &b);
        assert_eq!(rows.len(), 2);
        let r = rows[1].ratio.unwrap();
        assert!(close(r.value, 3.0));
        assert_eq!(
            r.ci95,
            Some([3.0, 3.0]),
            "one sample each: no spread to resample"
        );
        assert_eq!(rows[0].ratio.unwrap().ci95, Some([1.0, 1.0]));
        assert_eq!(b.ratio_value(&base_run, "mw"), Some(3.0));
        assert!(rows.iter().all(|r| r.change.is_none()), "no baseline run");
        b.run = Some(&base_run);
        assert!(
            comparison(&base_run, &b).iter().all(|r| r.change.is_none()),
            "not against itself"
        );
        let rows = comparison(&run, &b);
        assert_eq!(rows[1].change.unwrap().verdict, Verdict::Improved);
        assert_eq!(rows[0].change.unwrap().verdict, Verdict::WithinNoise);
        assert!(
            comparison(&run, &Baselines::bench("missing"))
                .iter()
                .all(|row| row.ratio.is_none())
        );
    }
}
