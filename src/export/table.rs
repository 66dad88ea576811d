//! The plain-text comparison table printed by `benchscope run`.

use bench_core::protocol::DEBUG_WARNING;
use bench_core::results::{RunRecord, comparison};

use super::{Report, fmt_ci, fmt_ns, fmt_ops};

/// Columns of a comparison, shared by the text and markdown tables. Fan-out targets also
/// show throughput.
pub fn comparison_cells(run: &RunRecord, baseline: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let throughput = run
        .start
        .as_ref()
        .and_then(|s| bench_core::catalog::target(&s.target).ok())
        .is_some_and(|t| t.throughput);
    let mut headers: Vec<String> = [
        "bench",
        "backend",
        "median/op",
        "95% CI (median)",
        "p99/op",
        &format!("vs {baseline}"),
        "samples",
    ]
    .map(String::from)
    .to_vec();
    if throughput {
        headers.insert(2, "ops/s".into());
    }
    let rows = comparison(run, baseline)
        .into_iter()
        .map(|r| {
            let ratio = if r.bench == baseline {
                "baseline".into()
            } else {
                r.ratio.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
            };
            let mut row = vec![
                r.bench.clone(),
                r.backend.clone(),
                fmt_ns(r.median_ns),
                fmt_ci(r.ci95_ns),
                r.p99_ns
                    .map(|p| fmt_ns(p as f64))
                    .unwrap_or_else(|| "-".into()),
                ratio,
                r.samples.to_string(),
            ];
            if throughput {
                row.insert(2, fmt_ops(r.ops_per_s));
            }
            row
        })
        .collect();
    (headers, rows)
}

/// Benches that did not finish, as `name: reason` lines.
pub fn unfinished(run: &RunRecord) -> Vec<String> {
    let mut out: Vec<String> = run
        .benches
        .iter()
        .filter_map(|b| match (&b.error, &b.skipped) {
            (Some(e), _) => Some(format!("{}: failed: {e}", b.name)),
            (None, Some(s)) => Some(format!("{}: skipped: {s}", b.name)),
            _ => None,
        })
        .collect();
    if let Some(e) = &run.error {
        out.push(format!("run failed: {e}"));
    }
    out
}

/// Left-aligns text columns, right-aligns the rest, two spaces apart.
fn align(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([headers[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..headers.len()).map(width).collect();
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < left {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = line(headers);
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

pub fn render(report: &Report<'_>) -> String {
    let mut out = String::new();
    for run in report.runs {
        if run.is_debug() {
            out.push_str(&format!("WARNING: {DEBUG_WARNING}\n"));
        }
        if let Some(s) = &run.start {
            // Each harness links its own SQLite: name them all when there are several.
            let sqlite = if run.more_starts.is_empty() {
                s.env.sqlite.clone()
            } else {
                run.starts()
                    .map(|h| format!("{} {}", h.env.sqlite, h.harness))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push_str(&format!(
                "{}  {}  (SQLite {sqlite}, {} build)\n",
                s.target, s.knobs, s.env.profile
            ));
        }
        let (headers, rows) = comparison_cells(run, report.baseline);
        out.push_str(&align(&headers, &rows, 2));
        for line in unfinished(run) {
            out.push_str(&format!("! {line}\n"));
        }
    }
    if let Some(sc) = super::scaling::scaling(report.runs) {
        out.push('\n');
        out.push_str(&sc.text());
    }
    out
}
