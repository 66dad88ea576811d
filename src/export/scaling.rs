//! Sweeps: ops/s of each bench across runs that differ only in `concurrency`, and the rows/s
//! of each backend across the batch sizes of crud_overhead's insert sweep.

use std::fmt::Write;

use bench_core::catalog::CONCURRENCY;
use bench_core::protocol::results::RunRecord;

use crate::format::ops as fmt_ops;

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Concurrent tasks, across runs that differ only in `concurrency`.
    Concurrency,
    /// Rows per INSERT statement, across the batch benches of one run.
    RowsPerInsert,
}

impl Axis {
    fn title(self) -> &'static str {
        match self {
            Axis::Concurrency => "ops/s by concurrency",
            Axis::RowsPerInsert => "rows/s by rows per INSERT statement",
        }
    }

    fn first(self) -> &'static str {
        match self {
            Axis::Concurrency => "bench",
            Axis::RowsPerInsert => "backend",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    pub target: String,
    /// What the columns vary.
    pub axis: Axis,
    /// The value of each column (concurrency, or rows per statement), ascending.
    pub points: Vec<u64>,
    /// Cores of the machine the runs were measured on.
    pub cores: usize,
    /// Per bench: ops/s at each concurrency (None where it did not finish).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
}

/// The sweep among `runs`, if at least two finished runs of one target differ in concurrency
/// and in nothing else.
pub fn scaling(runs: &[RunRecord]) -> Option<Scaling> {
    let first = runs.iter().find_map(|r| r.start.as_ref())?;
    let same = |r: &&RunRecord| {
        r.start.as_ref().is_some_and(|s| {
            let mut a = s.knobs.clone();
            let mut b = first.knobs.clone();
            a.0.remove(CONCURRENCY.name);
            b.0.remove(CONCURRENCY.name);
            s.target == first.target && a == b
        })
    };
    let mut swept: Vec<&RunRecord> = runs.iter().filter(same).collect();
    swept.sort_by_key(|r| r.start.as_ref().map(|s| s.knobs.count_if(&CONCURRENCY)));
    swept.dedup_by_key(|r| r.start.as_ref().map(|s| s.knobs.count_if(&CONCURRENCY)));
    if swept.len() < 2 {
        return None;
    }
    let points: Vec<u64> = swept
        .iter()
        .filter_map(|r| r.start.as_ref())
        .filter_map(|s| s.knobs.count_if(&CONCURRENCY))
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
        axis: Axis::Concurrency,
        points,
        cores: first.env.cores,
        rows,
    })
}

impl Scaling {
    fn header(&self, c: u64) -> String {
        if self.axis == Axis::RowsPerInsert {
            c.to_string()
        } else if c as usize > self.cores {
            format!("c={c}*")
        } else {
            format!("c={c}")
        }
    }

    fn note(&self) -> Option<String> {
        (self.axis == Axis::Concurrency).then_some(())?;
        self.points
            .iter()
            .any(|c| *c as usize > self.cores)
            .then(|| {
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
        let heads: Vec<String> = self.points.iter().map(|c| self.header(*c)).collect();
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
        let name_w = self
            .rows
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(5)
            .max(5);
        let _ = write!(out, "{:<name_w$}", self.axis.first());
        for c in &self.points {
            let _ = write!(out, "  {:>10}", self.header(*c));
        }
        out.push('\n');
        for (name, cells) in &self.rows {
            let _ = write!(out, "{name:<name_w$}");
            for c in cells {
                let _ = write!(
                    out,
                    "  {:>10}",
                    c.map(fmt_ops).unwrap_or_else(|| "-".into())
                );
            }
            out.push('\n');
        }
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
            .map(|c| self.header(*c).chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        for (name, cells) in &self.rows {
            // Each bench on its own scale: the shape of its scaling (the numbers compare benches).
            let max = cells.iter().flatten().fold(0.0f64, |a, b| a.max(*b));
            let _ = writeln!(out, "{name}");
            for (c, v) in self.points.iter().zip(cells) {
                let bar = match v {
                    Some(v) if max > 0.0 => {
                        "█".repeat(((v / max) * width as f64).round().max(1.0) as usize)
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "  {:>label_w$} {bar} {}",
                    self.header(*c),
                    v.map(fmt_ops).unwrap_or_else(|| "-".into())
                );
            }
        }
        out
    }
}
