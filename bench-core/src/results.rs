//! Folding an event stream into the results of one run: what the TUI, the headless CLI and
//! the exporters all read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::{DatasetStatus, Event, Start};
use crate::stats::{Ratio, Summary, ratio_of_medians};
use crate::trace::Phase;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BenchResult {
    pub name: String,
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// Operations per sample.
    pub ops: u64,
    /// ns per operation of each sample, in order.
    pub samples: Vec<f64>,
    /// Phase timings, ns/op, weighted over every traced window.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub phases: BTreeMap<Phase, f64>,
    /// Each window's phase timings, in order (what sparklines draw).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase_windows: Vec<BTreeMap<Phase, f64>>,
    #[serde(skip)]
    phase_ops: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl BenchResult {
    pub fn status(&self) -> BenchStatus {
        if self.error.is_some() {
            BenchStatus::Failed
        } else if self.skipped.is_some() {
            BenchStatus::Skipped
        } else if self.summary.is_some() {
            BenchStatus::Finished
        } else {
            BenchStatus::Running
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchStatus {
    Running,
    Finished,
    Failed,
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DatasetInfo {
    pub status: Option<DatasetStatus>,
    pub rows: u64,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_ms: Option<f64>,
}

/// Everything one runner process reported.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunRecord {
    /// The first harness's start event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    /// Start events of the harnesses that ran after the first (e.g. sqlx after core).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_starts: Vec<Start>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<DatasetInfo>,
    pub benches: Vec<BenchResult>,
    /// The runner said `done`.
    pub done: bool,
    /// A failure of the whole run (not of one bench).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RunRecord {
    fn bench_mut(&mut self, name: &str) -> &mut BenchResult {
        if let Some(i) = self.benches.iter().position(|b| b.name == name) {
            return &mut self.benches[i];
        }
        self.benches.push(BenchResult {
            name: name.to_string(),
            ..Default::default()
        });
        self.benches.last_mut().expect("just pushed")
    }

    pub fn bench(&self, name: &str) -> Option<&BenchResult> {
        self.benches.iter().find(|b| b.name == name)
    }

    /// Folds one event into the record.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Start(s) if self.start.is_none() => self.start = Some(s),
            Event::Start(s) => self.more_starts.push(s),
            Event::Dataset {
                status,
                rows,
                path,
                build_ms,
            } => {
                self.dataset = Some(DatasetInfo {
                    status: Some(status),
                    rows,
                    path,
                    build_ms,
                })
            }
            Event::BenchStart {
                bench,
                backend,
                strategy,
                ops,
            } => {
                let b = self.bench_mut(&bench);
                b.backend = backend;
                b.strategy = strategy;
                b.ops = ops;
            }
            Event::Sample {
                bench,
                ops,
                elapsed_ns,
                ..
            } => {
                let b = self.bench_mut(&bench);
                b.samples.push(elapsed_ns as f64 / ops.max(1) as f64);
            }
            Event::Phases {
                bench,
                ops,
                ns_per_op,
                ..
            } => {
                let b = self.bench_mut(&bench);
                let total = b.phase_ops + ops;
                for (phase, ns) in &ns_per_op {
                    let prev = b.phases.get(phase).copied().unwrap_or(0.0);
                    let merged = if total == 0 {
                        0.0
                    } else {
                        (prev * b.phase_ops as f64 + ns * ops as f64) / total as f64
                    };
                    b.phases.insert(*phase, merged);
                }
                b.phase_ops = total;
                b.phase_windows.push(ns_per_op);
            }
            Event::Summary { bench, stats } => self.bench_mut(&bench).summary = Some(stats),
            Event::Skipped { bench, reason } => self.bench_mut(&bench).skipped = Some(reason),
            Event::Error {
                bench: Some(bench),
                message,
            } => self.bench_mut(&bench).error = Some(message),
            Event::Error {
                bench: None,
                message,
            } => self.error = Some(message),
            Event::Done => self.done = true,
            Event::Unknown => {}
        }
    }

    /// Every harness's start event, in order.
    pub fn starts(&self) -> impl Iterator<Item = &Start> {
        self.start.iter().chain(&self.more_starts)
    }

    pub fn is_debug(&self) -> bool {
        self.starts().any(|s| s.env.is_debug())
    }
}

/// One row of a comparison: a bench's figures and its ratio to the baseline.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Ratio>,
}

/// Rows for every finished bench of a run, with ratios to `baseline` when it finished.
pub fn comparison(run: &RunRecord, baseline: &str) -> Vec<ComparisonRow> {
    let base = run.bench(baseline).and_then(|b| b.summary.as_ref());
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
                // Against itself the ratio is exactly 1: the errors are perfectly correlated.
                ratio: if b.name == baseline {
                    Some(Ratio {
                        value: 1.0,
                        err: 0.0,
                    })
                } else {
                    base.and_then(|base| ratio_of_medians(s, base))
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    #[test]
    fn folds_a_stream() {
        let mut r = RunRecord::default();
        r.apply(Event::BenchStart {
            bench: "a".into(),
            backend: "rusqlite".into(),
            strategy: None,
            ops: 10,
        });
        r.apply(Event::Sample {
            bench: "a".into(),
            iter: 0,
            ops: 10,
            elapsed_ns: 1000,
        });
        r.apply(Event::Phases {
            bench: "a".into(),
            iter: 0,
            ops: 10,
            ns_per_op: [(Phase::Decode, 10.0)].into(),
        });
        r.apply(Event::Phases {
            bench: "a".into(),
            iter: 1,
            ops: 30,
            ns_per_op: [(Phase::Decode, 30.0)].into(),
        });
        assert_eq!(r.bench("a").unwrap().status(), BenchStatus::Running);
        r.apply(Event::Summary {
            bench: "a".into(),
            stats: summarize(&[100.0], None).unwrap(),
        });
        r.apply(Event::Error {
            bench: Some("b".into()),
            message: "x".into(),
        });
        r.apply(Event::Skipped {
            bench: "c".into(),
            reason: "no url".into(),
        });
        r.apply(Event::Done);
        let a = r.bench("a").unwrap();
        assert_eq!(a.samples, vec![100.0]);
        assert_eq!(a.phases[&Phase::Decode], 25.0, "weighted by ops");
        assert_eq!(a.phase_windows.len(), 2);
        assert_eq!(a.status(), BenchStatus::Finished);
        assert_eq!(r.bench("b").unwrap().status(), BenchStatus::Failed);
        assert_eq!(r.bench("c").unwrap().status(), BenchStatus::Skipped);
        assert!(r.done);
    }

    #[test]
    fn comparison_has_ratios_to_the_baseline() {
        let mut r = RunRecord::default();
        let mut base = summarize(&[100.0; 5], None).unwrap();
        base.ci95_median = [95.0, 105.0];
        let mut other = summarize(&[300.0; 5], None).unwrap();
        other.ci95_median = [285.0, 315.0];
        r.apply(Event::Summary {
            bench: "rusqlite".into(),
            stats: base,
        });
        r.apply(Event::Summary {
            bench: "mw".into(),
            stats: other,
        });
        let rows = comparison(&r, "rusqlite");
        assert_eq!(rows.len(), 2);
        let ratio = rows[1].ratio.unwrap();
        assert!((ratio.value - 3.0).abs() < 1e-9);
        assert!((ratio.err - 3.0 * (2.0 * 0.05f64.powi(2)).sqrt()).abs() < 1e-9);
        assert_eq!(
            rows[0].ratio,
            Some(Ratio {
                value: 1.0,
                err: 0.0
            })
        );
        assert!(
            comparison(&r, "missing")
                .iter()
                .all(|row| row.ratio.is_none())
        );
    }
}
