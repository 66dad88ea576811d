//! A bench's history from the results store, in a report: its chart (medians by commit, a
//! line at each step) and its table with the steps under it.

use std::fmt::Write;

use bench_core::units::ns;

use super::charts::Chart;
use crate::history::Series;

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn title(s: &Series) -> String {
    let cpu = s.points.last().map(|p| p.cpu.as_str()).unwrap_or("?");
    format!(
        "{} / {} on {} ({cpu}){}",
        s.target,
        s.bench,
        s.machine,
        if s.build_profile == "release" {
            String::new()
        } else {
            format!(", {} build", s.build_profile)
        }
    )
}

/// A chart per series of at least two points.
pub fn charts(all: &[Series]) -> Vec<Chart> {
    all.iter()
        .filter(|s| s.points.len() >= 2)
        .map(|s| {
            let medians: Vec<(f64, f64)> = s
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (i as f64, p.median))
                .collect();
            let (lo, hi) = medians.iter().fold((f64::INFINITY, 0.0f64), |(l, h), p| {
                (l.min(p.1), h.max(p.1))
            });
            let mut series = vec![("median (ns/op)".to_string(), medians)];
            for st in &s.steps {
                let x = st.index as f64 - 0.5;
                series.push((
                    format!("step {:+.1}% at {}", st.change * 100.0, st.at),
                    vec![(x, lo), (x, hi)],
                ));
            }
            Chart {
                slug: format!("history-{}-{}-{}", s.target, s.bench, s.machine),
                caption: format!("History: {}", title(s)),
                x_label: "commit or label, oldest first".into(),
                y_label: "median, ns per operation".into(),
                // Names under the axis while they fit.
                x_tics: if s.points.len() <= 24 {
                    s.points.iter().map(|p| p.name.clone()).collect()
                } else {
                    Vec::new()
                },
                log_y: false,
                steps: false,
                series,
            }
        })
        .collect()
}

/// The history section: per series its chart (when drawn), its points and its steps.
pub fn markdown(all: &[Series], drawn: &[(String, String)], note: Option<&str>) -> String {
    let mut out = String::from("\n## History\n\n");
    if let Some(n) = note {
        let _ = writeln!(out, "_{n}_\n");
    }
    if all.is_empty() {
        out.push_str("No run of these benches is recorded in the results store yet.\n");
        return out;
    }
    for s in all {
        let t = title(s);
        let _ = writeln!(out, "### {}\n", cell(&t));
        if let Some((caption, file)) = drawn.iter().find(|(c, _)| *c == format!("History: {t}")) {
            let _ = writeln!(out, "![{caption}]({file})\n");
        }
        out.push_str("| # | commit/label | recorded | runs | median | 95% CI | notes |\n");
        out.push_str("|---:|---|---|---:|---:|---|---|\n");
        for (i, p) in s.points.iter().enumerate() {
            let mut notes = p.notes.clone();
            if let Some(st) = s.steps.iter().find(|st| st.index == i) {
                notes.insert(0, format!("◆ step {:+.1}%", st.change * 100.0));
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                i + 1,
                cell(&p.name),
                p.at,
                p.runs,
                ns(p.median),
                if p.ci[0].is_finite() {
                    bench_core::format::ci(p.ci)
                } else {
                    "-".into()
                },
                cell(&notes.join("; "))
            );
        }
        out.push('\n');
        if s.steps.is_empty() {
            let _ = writeln!(out, "No step found over {} points.\n", s.points.len());
        }
        for st in &s.steps {
            let _ = writeln!(
                out,
                "- step {:+.1}% between {} and {} (p = {:.3}){}",
                st.change * 100.0,
                cell(&st.after),
                cell(&st.at),
                st.p_value,
                if st.regression {
                    ": a slowdown beyond noise"
                } else {
                    ""
                }
            );
        }
        out.push('\n');
    }
    out
}
