//! The spread between runs: when a report holds several runs made the same way (same target,
//! knobs and trace; `benchscope run --repeat N`, or runs repeated in the explorer), how far
//! each bench's median moves from run to run, beside the interval one run's samples give.

use std::fmt::Write;

use bench_core::compare::{Spread, groups, run_differences, spread};
use bench_core::protocol::results::RunRecord;
use serde::Serialize;

use crate::format;

/// Runs made the same way, and each bench's spread across them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repeats {
    /// Positions of the runs in the report.
    pub runs: Vec<usize>,
    /// Per bench, in first-seen order: the spread of its median, and the widest interval of a
    /// single run's median relative to that run's median.
    pub benches: Vec<(String, Spread, f64)>,
}

/// Every group of two or more runs made the same way, in report order.
pub fn repeats(runs: &[RunRecord]) -> Vec<Repeats> {
    let mut out = Vec::new();
    for group in groups(runs, |a, b| run_differences(a, b).is_empty()) {
        if group.len() < 2 {
            continue;
        }
        let mut names: Vec<&str> = Vec::new();
        for &j in &group {
            for b in &runs[j].benches {
                if !names.contains(&b.name.as_str()) {
                    names.push(&b.name);
                }
            }
        }
        let benches = names
            .into_iter()
            .filter_map(|n| {
                let s = spread(group.iter().map(|&j| &runs[j]), n)?;
                let within = group
                    .iter()
                    .filter_map(|&j| runs[j].bench(n)?.summary.as_ref())
                    .map(|s| (s.ci95_median[1] - s.ci95_median[0]) / s.median)
                    .fold(0.0, f64::max);
                Some((n.to_string(), s, within))
            })
            .collect();
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
        ]
        .map(String::from)
        .to_vec();
        let rows = self
            .benches
            .iter()
            .map(|(n, s, within)| {
                vec![
                    n.clone(),
                    format::ns(s.median),
                    format::ci([s.min, s.max]),
                    format!("{:.1}%", s.relative() * 100.0),
                    format!("{:.1}%", within * 100.0),
                ]
            })
            .collect();
        (headers, rows)
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
        out
    }

    pub fn markdown(&self, numbers: &dyn Fn(usize) -> usize) -> String {
        let (headers, rows) = self.rows();
        let mut out = String::new();
        let _ = writeln!(out, "\n### {}\n", self.title(numbers));
        super::layout::md_table(&mut out, &headers, &rows, 1);
        let _ = writeln!(
            out,
            "\nA spread wider than the interval within one run means the run-to-run variation (machine state, memory layout) is larger than one run's samples show: compare such benches only across repeated runs."
        );
        out
    }
}
