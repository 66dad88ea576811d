//! Sweeps: ops/s of each bench across runs of one target that differ in one knob (a sweep) or
//! two (a matrix).

use std::fmt::Write;

use bench_core::catalog::CONCURRENCY;
use bench_core::knobs::KnobValue;
use bench_core::protocol::results::RunRecord;

use crate::format::ops as fmt_ops;

/// One column of a sweep: the values of what varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The varied knobs' values, one per knob.
    pub values: Vec<String>,
    /// More concurrent tasks than the machine has cores.
    pub over_cores: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    pub target: bench_core::text::Text,
    /// The knobs the columns vary (one or two), across runs that differ in those only.
    pub knobs: Vec<String>,
    /// The columns, in the order the runs were made.
    pub points: Vec<Point>,
    /// Cores of the machine the runs were measured on.
    pub cores: usize,
    /// Per bench: ops/s at each point (None where it did not finish).
    pub rows: Vec<(bench_core::text::Text, Vec<Option<f64>>)>,
}

/// The sweep among `runs`: the runs of the first run's target (trace setting and build
/// profile) when they
/// differ in one or two knobs, one column per combination of values (the first run of each).
pub fn scaling<R: std::borrow::Borrow<RunRecord>>(runs: &[R]) -> Option<Scaling> {
    let first = runs.iter().find_map(|r| r.borrow().start.as_ref())?;
    let group: Vec<&RunRecord> = runs
        .iter()
        .map(|r| r.borrow())
        .filter(|r| {
            r.start.as_ref().is_some_and(|s| {
                s.target == first.target
                    && s.trace == first.trace
                    && s.env.profile == first.env.profile
            })
        })
        .collect();
    let knob =
        |r: &RunRecord, name: &str| r.start.as_ref().and_then(|s| s.knobs.get(name).cloned());
    let mut varied: Vec<String> = Vec::new();
    for r in &group {
        for name in r.start.iter().flat_map(|s| s.knobs.0.keys()) {
            if !varied.contains(name) && group.iter().any(|o| knob(o, name) != knob(r, name)) {
                varied.push(name.clone());
            }
        }
    }
    // A scenario target draws its own matrix (see `scenario`).
    if varied.is_empty()
        || varied.len() > 2
        || group.iter().any(|r| super::scenario::is_scenario(r))
    {
        return None;
    }
    // Concurrency first: it is what most matrices are read along.
    varied.sort_by_key(|k| k != CONCURRENCY.name);
    let combo =
        |r: &RunRecord| -> Vec<Option<KnobValue>> { varied.iter().map(|k| knob(r, k)).collect() };
    let mut swept: Vec<&RunRecord> = Vec::new();
    for r in group {
        if !swept.iter().any(|o| combo(o) == combo(r)) {
            swept.push(r);
        }
    }
    if swept.len() < 2 {
        return None;
    }
    let cores = first.env.cores;
    let points = swept
        .iter()
        .map(|r| Point {
            values: combo(r)
                .iter()
                .map(|v| {
                    v.as_ref()
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "-".into())
                })
                .collect(),
            over_cores: r
                .start
                .as_ref()
                .and_then(|s| s.knobs.count_if(&CONCURRENCY))
                .is_some_and(|c| {
                    varied.iter().any(|k| k == CONCURRENCY.name) && c as usize > cores
                }),
        })
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for r in &swept {
        for b in &r.benches {
            if !names.contains(&b.name.raw()) {
                names.push(b.name.raw());
            }
        }
    }
    let rows = names
        .iter()
        .map(|n| {
            let cells = swept
                .iter()
                .map(|r| {
                    r.bench(n)
                        .and_then(|b| b.summary.as_ref())
                        .filter(|s| s.median > 0.0)
                        .map(|s| 1e9 / s.median)
                })
                .collect();
            (bench_core::text::Text::from(*n), cells)
        })
        .collect();
    Some(Scaling {
        target: first.target.clone(),
        knobs: varied,
        points,
        cores,
        rows,
    })
}

impl Scaling {
    /// A column's heading: `c=4` for concurrency (`*` past the cores), the value of a one-knob
    /// sweep, `name=value` pairs for a matrix.
    pub fn header(&self, p: &Point) -> String {
        let star = if p.over_cores { "*" } else { "" };
        let k = &self.knobs;
        k.iter()
            .zip(&p.values)
            .map(|(name, v)| match (name.as_str(), k.len()) {
                (n, _) if n == CONCURRENCY.name => format!("c={v}{star}"),
                (_, 1) => v.clone(),
                (n, _) => format!("{n}={v}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What the sweep shows, `ops/s by rows and concurrency`.
    fn title(&self) -> String {
        format!("ops/s by {}", self.knobs.join(" and "))
    }

    fn note(&self) -> Option<String> {
        self.points.iter().any(|p| p.over_cores).then(|| {
            format!(
                "* more tasks than the {} cores of this machine: they take turns on the cores",
                self.cores
            )
        })
    }

    /// A markdown table of ops/s plus a bar chart per bench.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\n### Scaling: {} ({})\n",
            bench_core::text::md_cell(&self.title()),
            self.target.md_cell()
        );
        let heads: Vec<String> = self
            .points
            .iter()
            .map(|p| bench_core::text::md_cell(&self.header(p)))
            .collect();
        let _ = writeln!(out, "| bench | {} |", heads.join(" | "));
        let _ = writeln!(out, "| --- |{}", " ---: |".repeat(heads.len()));
        for (name, cells) in &self.rows {
            let cells: Vec<String> = cells
                .iter()
                .map(|c| c.map(fmt_ops).unwrap_or_else(|| "-".into()))
                .collect();
            let _ = writeln!(out, "| {} | {} |", name.md_cell(), cells.join(" | "));
        }
        if let Some(n) = self.note() {
            let _ = writeln!(out, "\n{n}");
        }
        let _ = writeln!(out, "\n```text\n{}```", self.chart(40));
        out
    }

    /// Plain text: the same table, aligned, and the chart.
    pub fn text(&self) -> String {
        let mut out = format!(
            "scaling: {} ({})\n",
            bench_core::text::terminal_str(&self.title()),
            self.target.terminal()
        );
        let mut headers = vec!["bench".to_string()];
        headers.extend(self.points.iter().map(|p| self.header(p)));
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|(name, cells)| {
                let mut row = vec![name.raw().to_string()];
                row.extend(
                    cells
                        .iter()
                        .map(|c| c.map(fmt_ops).unwrap_or_else(|| "-".into())),
                );
                row
            })
            .collect();
        out.push_str(&super::layout::align(&headers, &rows, 1));
        if let Some(n) = self.note() {
            let _ = writeln!(out, "{n}");
        }
        out.push_str(&self.chart(40));
        out
    }

    /// Throughput at each point, one block of bars per bench.
    pub fn chart(&self, width: usize) -> String {
        let points: Vec<bench_core::text::Text> =
            self.points.iter().map(|p| self.header(p).into()).collect();
        super::layout::bars(&points, &self.rows, width)
    }
}
