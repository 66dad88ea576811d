//! Scenario targets (async_contention): a run's table of what each strategy kept up, and the
//! matrix over runs whose knobs vary (databases x write delay), in the published study's shape.

use bench_core::text::Text;
use std::fmt::Write;

use bench_core::measure::scenario::ScenarioStats;
use bench_core::protocol::results::RunRecord;

use crate::format;

/// Whether a run is of a scenario target.
pub fn is_scenario(run: &RunRecord) -> bool {
    run.start
        .as_ref()
        .and_then(|s| bench_core::workloads::find(s.target.raw()).ok())
        .is_some_and(|t| t.measure == bench_core::catalog::Measure::Scenario)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn p(
    l: Option<bench_core::measure::stats::Percentiles>,
    f: fn(&bench_core::measure::stats::Percentiles) -> u64,
) -> String {
    l.map(|l| format::ns(f(&l) as f64))
        .unwrap_or_else(|| "-".into())
}

/// The mean read latency, the study's read figure ("-" without reads).
fn mean(s: &ScenarioStats) -> String {
    if s.reads > 0 {
        format::ns(s.read_mean_ns)
    } else {
        "-".into()
    }
}

/// The columns of one scenario run.
pub fn cells(run: &RunRecord) -> (Vec<Text>, Vec<Vec<Text>>) {
    let headers = [
        "strategy",
        "backend",
        "reads/s",
        "read mean",
        "read p50",
        "read p99",
        "read max",
        "writes",
        "writes/s",
        "writes kept",
        "canary",
        "canary worst late",
        "CPU/read",
        "measured",
    ]
    .map(Text::from)
    .to_vec();
    let rows = run
        .benches
        .iter()
        .filter_map(|b| {
            let s: &ScenarioStats = b.scenario.as_ref()?;
            let differs = !bench_core::compare::settings_differences(run, b.name.raw()).is_empty();
            let backend = if differs {
                bench_core::text!("{} †", b.backend.raw())
            } else {
                b.backend.clone()
            };
            let figures = vec![
                format!("{:.0}", s.reads_per_s),
                mean(s),
                p(s.read_latency, |l| l.p50),
                p(s.read_latency, |l| l.p99),
                p(s.read_latency, |l| l.max),
                format!("{} / {:.0}", s.writes, s.writes_expected),
                format!("{:.1}", s.writes_per_s()),
                pct(s.write_completion),
                pct(s.canary_ratio),
                format::ns(s.canary_worst_late_ns as f64),
                if s.reads > 0 {
                    format::ns(s.cpu_per_read_ns)
                } else {
                    "-".into()
                },
                format!("{:.1} s", s.elapsed_s),
            ];
            Some(
                [b.name.clone(), backend]
                    .into_iter()
                    .chain(figures.into_iter().map(Text::from))
                    .collect(),
            )
        })
        .collect();
    (headers, rows)
}

/// A titled table: (title, headers, rows).
pub type Table = (Text, Vec<Text>, Vec<Vec<Text>>);

/// One row of a matrix section: the row knob's value and each strategy's figures.
pub type MatrixRow = (String, Vec<(Text, ScenarioStats)>);

/// Runs of one scenario target laid out by the knobs that vary between them.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub target: Text,
    /// The knob of the rows (e.g. databases) and, if two vary, the knob of the sections.
    pub rows_knob: String,
    pub section_knob: Option<String>,
    /// Per section value: per row value: per strategy, the figures.
    pub sections: Vec<(Option<String>, Vec<MatrixRow>)>,
    pub strategies: Vec<Text>,
}

/// The matrix among `runs`, if two or more scenario runs of one target differ in one or two
/// knobs and in nothing else.
pub fn matrix(runs: &[RunRecord]) -> Option<Matrix> {
    let runs: Vec<&RunRecord> = runs.iter().filter(|r| is_scenario(r)).collect();
    let first = runs.first()?.start.as_ref()?;
    let mut varying: Vec<String> = Vec::new();
    for r in &runs {
        let s = r.start.as_ref()?;
        if s.target != first.target {
            return None;
        }
        for (k, v) in &s.knobs.0 {
            if first.knobs.get(k) != Some(v) && !varying.contains(k) {
                varying.push(k.clone());
            }
        }
    }
    if varying.is_empty() || varying.len() > 2 {
        return None;
    }
    // Rows by the knob that varies most (databases before write_delay_ms by name order when
    // they tie), sections by the other.
    let values = |k: &str| {
        let mut v: Vec<&bench_core::knobs::KnobValue> = runs
            .iter()
            .filter_map(|r| r.start.as_ref()?.knobs.get(k))
            .collect();
        v.sort();
        v.dedup();
        v.into_iter().cloned().collect::<Vec<_>>()
    };
    varying.sort_by_key(|k| (std::cmp::Reverse(values(k).len()), k.clone()));
    let rows_knob = varying[0].clone();
    let section_knob = varying.get(1).cloned();
    let mut strategies: Vec<Text> = Vec::new();
    for r in &runs {
        for b in r.benches.iter().filter(|b| b.scenario.is_some()) {
            if !strategies.contains(&b.name) {
                strategies.push(b.name.clone());
            }
        }
    }
    let sections_values: Vec<Option<bench_core::knobs::KnobValue>> = match &section_knob {
        Some(k) => values(k).into_iter().map(Some).collect(),
        None => vec![None],
    };
    let sections = sections_values
        .into_iter()
        .map(|sv| {
            let rows = values(&rows_knob)
                .into_iter()
                .map(|rv| {
                    let cells = runs
                        .iter()
                        .filter(|r| {
                            let k = &r.start.as_ref().expect("filtered").knobs;
                            k.get(&rows_knob) == Some(&rv)
                                && section_knob
                                    .as_ref()
                                    .is_none_or(|sk| k.get(sk) == sv.as_ref())
                        })
                        .flat_map(|r| {
                            r.benches
                                .iter()
                                .filter_map(|b| Some((b.name.clone(), b.scenario.clone()?)))
                        })
                        .collect();
                    (rv.to_string(), cells)
                })
                .collect();
            (sv.map(|v| v.to_string()), rows)
        })
        .collect();
    Some(Matrix {
        target: first.target.clone(),
        rows_knob,
        section_knob,
        sections,
        strategies,
    })
}

impl Matrix {
    /// The tables of each section: the study's two figures (writes/s and the mean read
    /// latency), then writes kept, reads/s and read p99; rows by the row knob, one column per
    /// strategy.
    pub fn tables(&self) -> Vec<Table> {
        let mut out = Vec::new();
        type Figure = fn(&ScenarioStats) -> String;
        type Value = fn(&ScenarioStats) -> f64;
        let figures: [(&str, Figure, Value); 5] = [
            (
                "writes/s",
                |s| format!("{:.1}", s.writes_per_s()),
                |s| s.writes_per_s(),
            ),
            ("read mean", mean, |s| s.read_mean_ns),
            (
                "writes kept",
                |s| pct(s.write_completion),
                |s| s.write_completion,
            ),
            (
                "reads/s",
                |s| format!("{:.0}", s.reads_per_s),
                |s| s.reads_per_s,
            ),
            (
                "read p99",
                |s| p(s.read_latency, |l| l.p99),
                |s| s.read_latency.map_or(-1.0, |l| l.p99 as f64),
            ),
        ];
        // Repeated runs of one set-up: each cell is the median run's figure (of an even
        // count, the lower middle: always a figure one run measured), and the title says so.
        let repeats = self
            .sections
            .iter()
            .flat_map(|(_, rows)| rows)
            .flat_map(|(_, cells)| {
                self.strategies
                    .iter()
                    .map(|s| cells.iter().filter(|(n, _)| n == s).count())
            })
            .max()
            .unwrap_or(0);
        for (section, rows) in &self.sections {
            for (what, figure, value) in figures {
                let of = if repeats > 1 {
                    format!(" (median of {repeats} runs)")
                } else {
                    String::new()
                };
                let title = match (&self.section_knob, section) {
                    (Some(k), Some(v)) => format!("{what}, {k}={v}{of}"),
                    _ => format!("{what}{of}"),
                };
                let mut headers = vec![Text::from(&self.rows_knob)];
                headers.extend(self.strategies.iter().cloned());
                let body = rows
                    .iter()
                    .map(|(rv, cells)| {
                        let mut r = vec![Text::from(rv)];
                        r.extend(self.strategies.iter().map(|s| {
                            let mut of: Vec<&ScenarioStats> = cells
                                .iter()
                                .filter(|(n, _)| n == s)
                                .map(|(_, st)| st)
                                .collect();
                            of.sort_by(|a, b| value(a).total_cmp(&value(b)));
                            match of.len() {
                                0 => "-".into(),
                                n => Text::from(figure(of[(n - 1) / 2])),
                            }
                        }));
                        r
                    })
                    .collect();
                out.push((title.into(), headers, body));
            }
        }
        out
    }

    pub fn text(&self) -> String {
        let mut out = format!("\nmatrix ({})\n", self.target.terminal());
        for (title, headers, rows) in self.tables() {
            let _ = writeln!(out, "{}", title.terminal());
            out.push_str(&super::layout::align(&headers, &rows, 1));
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = format!("\n### Matrix ({})\n", self.target.md_cell());
        for (title, headers, rows) in self.tables() {
            let _ = writeln!(out, "\n**{}**\n", title.md_cell());
            super::layout::md_table(&mut out, &headers, &rows, 1);
        }
        out
    }
}
