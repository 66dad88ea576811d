//! A bench's history from the results store, in a report: its chart (medians by commit, a
//! line at each step) and its table with the steps under it.

use std::fmt::Write;

use bench_core::units::ns;

use bench_core::text;
use bench_core::text::Text;

use super::charts::Chart;
use crate::series::Series;

/// Text from the store in a markdown table's cell, escaped ([`bench_core::text::md_cell`]).
fn cell(s: &Text) -> String {
    s.md_cell()
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
                    format!("step {:+.1}% at {}", st.change * 100.0, st.at.terminal()),
                    vec![(x, lo), (x, hi)],
                ));
            }
            Chart {
                // The chart's file name keeps only safe characters of these (charts::slug).
                slug: format!(
                    "history-{}-{}-{}",
                    s.target.raw(),
                    s.bench.raw(),
                    s.machine.raw()
                ),
                caption: format!("History: {}", s.title().terminal()),
                x_label: "commit or label, oldest first".into(),
                y_label: "median, ns per operation".into(),
                // Names under the axis while they fit.
                x_tics: if s.points.len() <= 24 {
                    s.points
                        .iter()
                        .map(|p| p.name.terminal().to_string())
                        .collect()
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
        let _ = writeln!(out, "_{}_\n", bench_core::text::md_cell(n));
    }
    if all.is_empty() {
        out.push_str("No run of these benches is recorded in the results store yet.\n");
        return out;
    }
    for s in all {
        let t = s.title();
        let _ = writeln!(out, "### {}\n", cell(&t));
        let caption = format!("History: {}", t.terminal());
        if let Some((caption, file)) = drawn.iter().find(|(c, _)| *c == caption) {
            let _ = writeln!(
                out,
                "![{}]({})\n",
                bench_core::text::md_alt(caption),
                super::layout::link_destination(file)
            );
        }
        out.push_str("| # | commit/label | recorded | runs | median | 95% CI | notes |\n");
        out.push_str("|---:|---|---|---:|---:|---|---|\n");
        for (i, p) in s.points.iter().enumerate() {
            let mut notes = p.notes.clone();
            if let Some(st) = s.steps.iter().find(|st| st.index == i) {
                notes.insert(0, text!("◆ step {:+.1}%", st.change * 100.0));
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                i + 1,
                cell(&p.name),
                bench_core::text::md_cell(&p.at),
                p.runs,
                ns(p.median),
                p.ci_text(),
                notes
                    .iter()
                    .map(Text::md_cell)
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        out.push('\n');
        if s.steps.is_empty() {
            let _ = writeln!(out, "No step found over {} points.\n", s.points.len());
        }
        for line in s.change_lines() {
            let _ = writeln!(out, "- {}", cell(&line));
        }
        out.push('\n');
    }
    out
}

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The history of one bench as the explorer shows it beside a run: per machine a bar per
/// point (the newest `width`), `◆` under each step, the steps, and where `live` (this run's
/// median, ns/op) stands against the newest point.
pub fn text(all: &[Series], live: Option<f64>, width: usize) -> String {
    let mut out = String::new();
    if all.is_empty() {
        out.push_str("no run of this bench is recorded in the results store yet\n");
    }
    for s in all {
        let _ = writeln!(out, "{}", s.title().terminal());
        let from = s.points.len().saturating_sub(width.max(4));
        let shown = &s.points[from..];
        let (lo, hi) = shown.iter().fold((f64::INFINITY, 0.0f64), |(l, h), p| {
            (l.min(p.median), h.max(p.median))
        });
        let bars: String = shown
            .iter()
            .map(|p| {
                let f = if hi > lo {
                    (p.median - lo) / (hi - lo)
                } else {
                    0.5
                };
                BARS[((f * 7.0).round() as usize).min(7)]
            })
            .collect();
        let _ = writeln!(
            out,
            "  {bars}  {} … {} over {} point{}{}",
            ns(lo),
            ns(hi),
            shown.len(),
            if shown.len() == 1 { "" } else { "s" },
            if from > 0 {
                format!(" (the newest of {})", s.points.len())
            } else {
                String::new()
            }
        );
        let marks: String = (from..s.points.len())
            .map(|i| {
                if s.steps.iter().any(|st| st.index == i) {
                    '◆'
                } else {
                    ' '
                }
            })
            .collect();
        if marks.contains('◆') {
            let _ = writeln!(out, "  {}", marks.trim_end());
        }
        for line in s.change_lines() {
            let mark = if line.raw().starts_with("step") {
                "◆ "
            } else {
                ""
            };
            let _ = writeln!(out, "  {mark}{}", line.terminal());
        }
        if let Some(newest) = s.points.last() {
            let _ = write!(
                out,
                "  newest {}: {}",
                newest.name.terminal(),
                ns(newest.median)
            );
            if let Some(v) = live {
                let _ = write!(
                    out,
                    " · this run: {} ({:+.1}%)",
                    ns(v),
                    (v / newest.median - 1.0) * 100.0
                );
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::{Commit, Step};

    fn series() -> Series {
        let points = (0..6)
            .map(|i| Commit {
                name: format!("c{i}").into(),
                commit: None,
                label: Some(format!("c{i}")),
                at: format!("2026-11-25T10:00:0{i}Z"),
                runs: 1,
                median: if i < 3 { 1000.0 } else { 1050.0 },
                ci: [990.0, 1060.0],
                cpu: "EPYC".into(),
                notes: vec![],
                disturbed: false,
                allocs: None,
            })
            .collect();
        Series {
            target: "single_row_lookup".into(),
            bench: "rusqlite".into(),
            machine: "vm-1".into(),
            machine_id: "id".into(),
            build_profile: "release".into(),
            points,
            steps: vec![Step {
                index: 3,
                after: "c2".into(),
                at: "c3".into(),
                change: 0.05,
                p_value: 0.01,
                regression: true,
            }],
            shifts: vec![],
            noise: 0.02,
            alloc_steps: vec![],
        }
    }

    #[test]
    fn the_explorers_view_marks_the_step_and_places_the_live_value() {
        let t = text(&[series()], Some(1039.5), 40);
        assert_eq!(
            t,
            "single_row_lookup / rusqlite on vm-1 (EPYC)\n  ▁▁▁███  1.00 µs … 1.05 µs over 6 points\n     ◆\n  ◆ step +5.0% between c2 and c3 (p = 0.010): a slowdown beyond the 2.0% noise\n  newest c5: 1.05 µs · this run: 1.04 µs (-1.0%)\n"
        );
        assert!(text(&[], None, 40).starts_with("no run of this bench"));
    }

    /// A machine's name that would close the image's text and open a link, and a note that
    /// holds markup, stay text: one image of the chart, no link, emphasis or code of theirs.
    #[test]
    fn names_and_notes_from_the_store_make_no_markup_of_their_own() {
        use pulldown_cmark::{Event, Parser, Tag};
        let mut s = series();
        s.machine = "vm [Download the fixed build".into();
        let all = [s];
        let caption = charts(&all)[0].caption.clone();
        let md = markdown(
            &all,
            &[(caption, "h.svg".into())],
            Some("rows did not read: a *b* [t](h.svg) ![i](h.svg) `x`"),
        );
        let tags: Vec<String> = Parser::new(&md)
            .filter_map(|e| match e {
                Event::Start(t @ (Tag::Link { .. } | Tag::Image { .. } | Tag::Strong)) => {
                    Some(format!("{t:?}").chars().take(5).collect())
                }
                Event::Code(_) => Some("code".into()),
                _ => None,
            })
            .collect();
        assert_eq!(tags, ["Image"], "{md}");
    }

    #[test]
    fn the_reports_section_has_a_chart_a_table_and_the_steps() {
        let all = [series()];
        let charts = charts(&all);
        assert_eq!(charts.len(), 1);
        assert_eq!(
            charts[0].series.len(),
            2,
            "the medians and a line at the step"
        );
        assert_eq!(charts[0].series[1].1, vec![(2.5, 1000.0), (2.5, 1050.0)]);
        let md = markdown(&all, &[(charts[0].caption.clone(), "h.svg".into())], None);
        assert!(
            md.contains("![History: single_row_lookup / rusqlite on vm-1 (EPYC)](h.svg)"),
            "{md}"
        );
        assert!(
            md.contains(
                "| 4 | c3 | 2026-11-25T10:00:03Z | 1 | 1.05 µs | 990 ns – 1.06 µs | ◆ step +5.0% |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "- step +5.0% between c2 and c3 (p = 0.010): a slowdown beyond the 2.0% noise"
            ),
            "{md}"
        );
    }
}
