//! Sweeps: ops/s of each bench across runs of one target that differ in one knob (a sweep) or
//! two (a matrix), and the rows/s of each backend across the batch sizes of crud_overhead's
//! insert sweep.

use std::fmt::Write;

use bench_core::catalog::CONCURRENCY;
use bench_core::knobs::KnobValue;
use bench_core::protocol::results::RunRecord;

use crate::format::ops as fmt_ops;

/// What a sweep varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Axis {
    /// One or two knobs, across runs that differ in those knobs only.
    Knobs(Vec<String>),
    /// Rows per INSERT statement, across the batch benches of one run.
    RowsPerInsert,
}

impl Axis {
    fn title(&self) -> String {
        match self {
            Axis::Knobs(k) => format!("ops/s by {}", k.join(" and ")),
            Axis::RowsPerInsert => "rows/s by rows per INSERT statement".into(),
        }
    }

    fn first(&self) -> &'static str {
        match self {
            Axis::Knobs(_) => "bench",
            Axis::RowsPerInsert => "backend",
        }
    }
}

/// One column of a sweep: the values of what varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The varied knobs' values (one per knob of the axis), or the batch size.
    pub values: Vec<String>,
    /// More concurrent tasks than the machine has cores.
    pub over_cores: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    pub target: String,
    /// What the columns vary.
    pub axis: Axis,
    /// The columns, in the order the runs were made.
    pub points: Vec<Point>,
    /// Cores of the machine the runs were measured on.
    pub cores: usize,
    /// Per bench: ops/s at each point (None where it did not finish).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
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
            if !names.contains(&b.name.as_str()) {
                names.push(&b.name);
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
            (n.to_string(), cells)
        })
        .collect();
    Some(Scaling {
        target: first.target.clone(),
        axis: Axis::Knobs(varied),
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
        match &self.axis {
            Axis::RowsPerInsert => p.values.join(" "),
            Axis::Knobs(k) => k
                .iter()
                .zip(&p.values)
                .map(|(name, v)| match (name.as_str(), k.len()) {
                    (n, _) if n == CONCURRENCY.name => format!("c={v}{star}"),
                    (_, 1) => v.clone(),
                    (n, _) => format!("{n}={v}"),
                })
                .collect::<Vec<_>>()
                .join(" "),
        }
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
            self.axis.title(),
            self.target
        );
        let heads: Vec<String> = self.points.iter().map(|p| self.header(p)).collect();
        let _ = writeln!(out, "| {} | {} |", self.axis.first(), heads.join(" | "));
        let _ = writeln!(out, "| --- |{}", " ---: |".repeat(heads.len()));
        for (name, cells) in &self.rows {
            let cells: Vec<String> = cells
                .iter()
                .map(|c| c.map(fmt_ops).unwrap_or_else(|| "-".into()))
                .collect();
            let _ = writeln!(out, "| {name} | {} |", cells.join(" | "));
        }
        if let Some(n) = self.note() {
            let _ = writeln!(out, "\n{n}");
        }
        let _ = writeln!(out, "\n```text\n{}```", self.chart(40));
        out
    }

    /// Plain text: the same table, aligned, and the chart.
    pub fn text(&self) -> String {
        let mut out = format!("scaling: {} ({})\n", self.axis.title(), self.target);
        let mut headers = vec![self.axis.first().to_string()];
        headers.extend(self.points.iter().map(|p| self.header(p)));
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|(name, cells)| {
                let mut row = vec![name.clone()];
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

    /// Throughput against the axis, one block of bars per row.
    pub fn chart(&self, width: usize) -> String {
        let mut out = String::new();
        let label_w = self
            .points
            .iter()
            .map(|p| self.header(p).chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        for (name, cells) in &self.rows {
            // Each bench on its own scale: the shape of its scaling (the numbers compare benches).
            let max = cells.iter().flatten().fold(0.0f64, |a, b| a.max(*b));
            let _ = writeln!(out, "{name}");
            for (p, v) in self.points.iter().zip(cells) {
                let bar = match v {
                    Some(v) if max > 0.0 => {
                        "█".repeat(((v / max) * width as f64).round().max(1.0) as usize)
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "  {:>label_w$} {bar} {}",
                    self.header(p),
                    v.map(fmt_ops).unwrap_or_else(|| "-".into())
                );
            }
        }
        out
    }
}
