//! Folding an event stream into the results of one run: what the TUI, the headless CLI and
//! the exporters all read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{DatasetStatus, Event, Start, WorkCheck};
use crate::measure::stats::Summary;
use crate::measure::trace::Phase;
use crate::text::Text;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BenchResult {
    pub name: Text,
    pub backend: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Text>,
    /// Operations per pass (a sample is one or more passes).
    pub ops: u64,
    /// Operations in each sample (passes x `ops`), as the last sample reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ops_per_sample: u64,
    /// The work check every sample passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<WorkCheck>,
    /// SQLite settings read back from the bench's connections.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sqlite: BTreeMap<String, String>,
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
    /// Its ratio to the baseline bench from paired rounds (`against` names that bench).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<(String, crate::measure::stats::PairedRatio)>,
    /// Where the bench spent its CPU, when it ran under a profiler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::Profile>,
    /// A scenario's windows, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ticks: Vec<crate::measure::scenario::Window>,
    /// A scenario's figures over its measured time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<crate::measure::scenario::ScenarioStats>,
    /// A script bench's own report: transactions, busy errors, statements, rows compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<crate::script::report::ScriptReport>,
    /// What its crate's statement cache did over the measured samples (summed over the runner
    /// processes), where the crate reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements: Option<crate::measure::statements::StatementCache>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl BenchResult {
    pub fn status(&self) -> BenchStatus {
        if self.error.is_some() {
            BenchStatus::Failed
        } else if self.skipped.is_some() {
            BenchStatus::Skipped
        } else if self.summary.is_some() || self.scenario.is_some() {
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
    /// The run's benches ran under a profiler: their timings include its cost, so they are
    /// not compared with unprofiled runs and never serve as a baseline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profiled: bool,
    /// How busy the machine was while the run measured (front ends record it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<super::Machine>,
    /// Where a run read from outside came from (a Criterion folder, a file): such a run is
    /// shown, never measured again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The largest time per operation a figure may hold: 10^15 ns (11.6 days), as a Criterion
/// import's samples may.
pub const MAX_NS: f64 = 1e15;

/// Whether `v` can be a time per operation: finite, above 0, at most [`MAX_NS`].
pub fn plausible_ns(v: f64) -> bool {
    v.is_finite() && v > 0.0 && v <= MAX_NS
}

impl RunRecord {
    /// The first figure of the run that cannot be a time per operation (a sample, a median,
    /// a mean, an interval's end, a minimum or maximum), named with its bench and value, or a
    /// bench named twice (lookups by name would mix their figures): what every run read from a
    /// file, an import or a store is checked against before it is used.
    pub fn check_figures(&self) -> Result<(), String> {
        let mut names: Vec<&Text> = self.benches.iter().map(|b| &b.name).collect();
        names.sort();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!(
                "bench {:?} is named twice (allowed: each bench once in a run)",
                w[0]
            ));
        }
        let allowed = format!("allowed: a finite time in ns above 0 and at most {MAX_NS:e}");
        for b in &self.benches {
            let bad = |what: String, v: f64| {
                Err(format!("bench {:?}: {what} is {v} ({allowed})", b.name))
            };
            for (i, &v) in b.samples.iter().enumerate() {
                if !plausible_ns(v) {
                    return bad(format!("sample {i}"), v);
                }
            }
            if let Some(s) = &b.summary {
                let figures = [
                    ("the median", s.median),
                    ("the mean", s.mean),
                    ("the minimum", s.min),
                    ("the maximum", s.max),
                    ("the median's interval low end", s.ci95_median[0]),
                    ("the median's interval high end", s.ci95_median[1]),
                    ("the mean's interval low end", s.ci95_mean[0]),
                    ("the mean's interval high end", s.ci95_mean[1]),
                ];
                for (what, v) in figures {
                    if !plausible_ns(v) {
                        return bad(what.to_string(), v);
                    }
                }
                if let Some(m) = &s.memory {
                    m.check().map_err(|e| format!("bench {:?}: {e}", b.name))?;
                }
            }
        }
        Ok(())
    }

    /// Whether the run was read from a Criterion folder rather than measured here.
    pub fn from_criterion(&self) -> bool {
        self.start.as_ref().is_some_and(|s| s.from_criterion())
    }

    fn bench_mut(&mut self, name: &str) -> &mut BenchResult {
        if let Some(i) = self.benches.iter().position(|b| b.name == name) {
            return &mut self.benches[i];
        }
        self.benches.push(BenchResult {
            name: name.into(),
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
                work,
                sqlite,
            } => {
                let b = self.bench_mut(&bench);
                b.backend = backend.into();
                b.strategy = strategy.map(Text::from);
                b.ops = ops;
                b.work = work;
                b.sqlite = sqlite;
            }
            Event::Sample {
                bench,
                ops,
                elapsed_ns,
                ..
            } => {
                let b = self.bench_mut(&bench);
                b.ops_per_sample = ops;
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
            Event::Machine { machine } => self.machine = Some(machine),
            Event::Paired {
                bench,
                against,
                ratio,
            } => {
                self.bench_mut(&bench).paired = Some((against, ratio));
            }
            Event::Profile { bench, profile } => {
                self.profiled = true;
                self.bench_mut(&bench).profile = Some(profile);
            }
            Event::Tick { bench, window } => self.bench_mut(&bench).ticks.push(window),
            Event::Scenario { bench, stats } => self.bench_mut(&bench).scenario = Some(stats),
            Event::Script { bench, report } => self.bench_mut(&bench).script = Some(report),
            Event::Statements { bench, cache } => {
                let b = self.bench_mut(&bench);
                b.statements = Some(match &b.statements {
                    Some(before) => before.plus(&cache),
                    None => cache,
                });
            }
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
    /// Benches a runner said it would measure that have no result (nor a failure or skip):
    /// what a cancelled, interrupted or failed run is missing.
    pub fn missing(&self) -> Vec<&str> {
        self.starts()
            .flat_map(|s| s.benches.iter())
            .map(String::as_str)
            .filter(|b| {
                self.bench(b)
                    .is_none_or(|r| r.status() == BenchStatus::Running)
            })
            .collect()
    }

    pub fn starts(&self) -> impl Iterator<Item = &Start> {
        self.start.iter().chain(&self.more_starts)
    }

    pub fn is_debug(&self) -> bool {
        self.starts().any(|s| s.env.is_debug())
    }

    /// What a reader must know of the machine while the run measured: its warnings (busy,
    /// steal, idle CPUs not kept polling as asked) and the CPUs its runners were confined to.
    pub fn machine_notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .machine
            .as_ref()
            .map(|m| m.warnings())
            .unwrap_or_default();
        for note in self.starts().filter_map(|s| s.env.confined()) {
            if !out.contains(&note) {
                out.push(note);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::summarize;

    /// A bench measured in several runner processes: its statement counts are their sum.
    #[test]
    fn statement_counts_add_up_over_processes() {
        let mut r = RunRecord::default();
        let cache = |run, prepared, text, ops| crate::measure::statements::StatementCache {
            by: "diesel".into(),
            run,
            prepared,
            text,
            ops,
        };
        for c in [cache(100, 2, 10, 50), cache(90, 0, 9, 45)] {
            r.apply(Event::Statements {
                bench: "a".into(),
                cache: c,
            });
        }
        assert_eq!(
            r.bench("a").unwrap().statements,
            Some(cache(190, 2, 19, 95))
        );
    }

    #[test]
    fn a_record_whose_memory_cannot_be_counts_is_refused_with_its_bench_and_value() {
        let mut r = RunRecord::default();
        let mut stats = summarize(&[100.0, 110.0], None).unwrap();
        stats.memory = crate::measure::memory::MemorySummary::of(&[(
            10,
            crate::measure::memory::SampleMemory {
                allocs: 10,
                ..Default::default()
            },
        )]);
        r.apply(Event::Summary {
            bench: "a".into(),
            stats,
        });
        let mut twice = r.clone();
        twice.benches.push(twice.benches[0].clone());
        let e = twice.check_figures().unwrap_err();
        assert!(
            e.ends_with("is named twice (allowed: each bench once in a run)"),
            "{e}"
        );
        assert_eq!(r.check_figures(), Ok(()));
        // As a file from elsewhere could say it: a count below 0.
        let text = serde_json::to_string(&r)
            .unwrap()
            .replace("\"bytes_per_op\":0.0", "\"bytes_per_op\":-3.0");
        let bad: RunRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(
            bad.check_figures().unwrap_err(),
            "bench \"a\": bytes per operation is -3 (allowed: a finite number >= 0)"
        );
    }

    #[test]
    fn folds_a_stream() {
        let mut r = RunRecord::default();
        r.apply(Event::BenchStart {
            bench: "a".into(),
            backend: "rusqlite".into(),
            strategy: None,
            ops: 10,
            work: None,
            sqlite: Default::default(),
        });
        r.apply(Event::Sample {
            bench: "a".into(),
            iter: 0,
            ops: 20,
            elapsed_ns: 2000,
            work: None,
            cost: None,
            memory: None,
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
        assert_eq!(
            (a.ops, a.ops_per_sample),
            (10, 20),
            "a sample of two passes"
        );
        assert_eq!(a.phases[&Phase::Decode], 25.0, "weighted by ops");
        assert_eq!(a.phase_windows.len(), 2);
        assert_eq!(a.status(), BenchStatus::Finished);
        assert_eq!(r.bench("b").unwrap().status(), BenchStatus::Failed);
        assert_eq!(r.bench("c").unwrap().status(), BenchStatus::Skipped);
        assert!(r.done);
    }
}
