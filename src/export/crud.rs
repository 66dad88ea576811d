//! crud_overhead runs: the per-operation overhead table (every backend against rusqlite on the
//! same operation), the overall overhead of the mix, SELECT cached against SELECT, and the
//! batch-insert sweep with its chart. Text (optionally coloured by overhead) and markdown.

use std::fmt::Write;

use bench_core::workloads::crud_overhead::report::{Band, Overview, sweep_columns};

use super::scaling::{Axis, Scaling};
use crate::format;

fn band_label(b: Option<Band>) -> &'static str {
    match b {
        Some(Band::Baseline) => "baseline",
        Some(Band::Light) => "< 2x",
        Some(Band::Heavy) => "2-5x",
        Some(Band::Severe) => ">= 5x",
        None => "-",
    }
}

/// ANSI colour of a band (green, yellow, red), for terminals that take colour.
fn ansi(b: Option<Band>) -> Option<&'static str> {
    match b? {
        Band::Baseline => None,
        Band::Light => Some("\x1b[32m"),
        Band::Heavy => Some("\x1b[33m"),
        Band::Severe => Some("\x1b[31m"),
    }
}

/// A row of cells with the band it is coloured by.
type BandedRow = (Vec<String>, Option<Band>);

/// The per-operation table: headers and rows, with each row's band.
pub fn op_cells(o: &Overview) -> (Vec<String>, Vec<BandedRow>) {
    let headers = [
        "op",
        "backend",
        "count",
        "median/op",
        "95% CI (median)",
        "p99/op",
        "vs rusqlite (95% CI)",
        "overhead",
        "band",
    ]
    .map(String::from)
    .to_vec();
    let rows = o
        .ops
        .iter()
        .map(|r| {
            let (ratio, pct) = match (&r.overhead, r.band) {
                (_, Some(Band::Baseline)) => ("baseline".to_string(), "-".to_string()),
                (Some(x), _) => (format::ratio(x), format::overhead_pct(x)),
                (None, _) => ("-".into(), "-".into()),
            };
            (
                vec![
                    r.op.to_string(),
                    r.backend.clone(),
                    r.count.to_string(),
                    format::ns(r.median_ns),
                    format::ci(r.ci95_ns),
                    r.p99_ns
                        .map(|p| format::ns(p as f64))
                        .unwrap_or_else(|| "-".into()),
                    ratio,
                    pct,
                    band_label(r.band).to_string(),
                ],
                r.band,
            )
        })
        .collect();
    (headers, rows)
}

/// Per backend: the overall overhead of the mix and SELECT cached against SELECT.
pub fn summary_cells(o: &Overview) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = [
        "backend",
        "mix overall vs rusqlite",
        "overhead",
        "SELECT cached vs SELECT",
    ]
    .map(String::from)
    .to_vec();
    let rows = o
        .backends
        .iter()
        .map(|b| {
            let overall = o.overall.get(b);
            let cached = o.cached_vs_select.get(b);
            let base = b == "rusqlite";
            vec![
                b.clone(),
                if base {
                    "baseline".into()
                } else {
                    overall.map(format::ratio).unwrap_or_else(|| "-".into())
                },
                overall
                    .map(format::overhead_pct)
                    .unwrap_or_else(|| "-".into()),
                cached.map(format::ratio).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    (headers, rows)
}

/// The sweep as three grids (time for all rows, rows/s, speedup against batch 1).
pub fn sweep_grids(o: &Overview) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    if o.sweep.is_empty() {
        return Vec::new();
    }
    let mut headers = vec!["backend".to_string()];
    headers.extend(sweep_columns());
    let grid =
        |f: &dyn Fn(&bench_core::workloads::crud_overhead::report::SweepRow) -> Vec<String>| {
            o.sweep
                .iter()
                .map(|r| {
                    let mut row = vec![r.backend.clone()];
                    row.extend(f(r));
                    row
                })
                .collect::<Vec<_>>()
        };
    let dash = || "-".to_string();
    vec![
        (
            format!("time to insert {} rows", o.sweep_rows),
            headers.clone(),
            grid(&|r| {
                r.time_ns
                    .iter()
                    .map(|t| t.map(format::ns).unwrap_or_else(dash))
                    .collect()
            }),
        ),
        (
            "rows/s".to_string(),
            headers.clone(),
            grid(&|r| {
                r.rows_per_s
                    .iter()
                    .map(|t| t.map(format::ops).unwrap_or_else(dash))
                    .collect()
            }),
        ),
        (
            "speedup against 1 row per INSERT".to_string(),
            headers,
            grid(&|r| {
                r.speedup
                    .iter()
                    .map(|t| t.map(format::ratio_short).unwrap_or_else(dash))
                    .collect()
            }),
        ),
    ]
}

/// The sweep as a chart: rows/s per batch size, one block of bars per backend.
pub fn sweep_chart(o: &Overview, target: &str) -> Option<Scaling> {
    if o.sweep.is_empty() {
        return None;
    }
    Some(Scaling {
        target: target.to_string(),
        axis: Axis::RowsPerInsert,
        points: bench_core::workloads::crud_overhead::plan::BATCHES
            .iter()
            .map(|b| super::scaling::Point {
                values: vec![b.to_string()],
                over_cores: false,
            })
            .collect(),
        cores: 0,
        rows: o
            .sweep
            .iter()
            .map(|r| {
                let n = bench_core::workloads::crud_overhead::plan::BATCHES.len();
                (r.backend.clone(), r.rows_per_s[..n].to_vec())
            })
            .collect(),
    })
}

/// Plain text; `color` paints each operation row by its overhead band.
pub fn text(o: &Overview, target: &str, color: bool) -> String {
    let mut out = String::new();
    if !o.ops.is_empty() {
        let (headers, rows) = op_cells(o);
        let cells: Vec<Vec<String>> = rows.iter().map(|(r, _)| r.clone()).collect();
        let table = super::layout::align(&headers, &cells, 2);
        let _ = writeln!(out, "\noverhead per operation against rusqlite");
        for (i, line) in table.lines().enumerate() {
            match (i, color) {
                (1.., true) => match ansi(rows[i - 1].1) {
                    Some(c) => {
                        let _ = writeln!(out, "{c}{line}\x1b[0m");
                    }
                    None => {
                        let _ = writeln!(out, "{line}");
                    }
                },
                _ => {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
        let (headers, rows) = summary_cells(o);
        if !rows.is_empty() {
            out.push('\n');
            out.push_str(&super::layout::align(&headers, &rows, 1));
        }
    }
    for (title, headers, rows) in sweep_grids(o) {
        let _ = writeln!(out, "\nbatch-insert sweep: {title}");
        out.push_str(&super::layout::align(&headers, &rows, 1));
    }
    if let Some(chart) = sweep_chart(o, target) {
        let _ = writeln!(
            out,
            "\nbatch-insert sweep: rows/s by rows per INSERT statement"
        );
        out.push_str(&chart.chart(40));
    }
    out
}

/// Markdown: the same tables, the band named in its own column.
pub fn markdown(o: &Overview, target: &str) -> String {
    let mut out = String::new();
    if !o.ops.is_empty() {
        let _ = writeln!(
            out,
            "\n#### Overhead per operation against rusqlite\n\nEach operation of the seeded mix, timed alone on every backend, against the same operation on rusqlite (bands: under 2x, 2-5x, 5x and over).\n"
        );
        let (headers, rows) = op_cells(o);
        let cells: Vec<Vec<String>> = rows.into_iter().map(|(r, _)| r).collect();
        super::layout::md_table(&mut out, &headers, &cells, 2);
        let (headers, rows) = summary_cells(o);
        if !rows.is_empty() {
            let _ = writeln!(out, "\n#### Overall\n");
            super::layout::md_table(&mut out, &headers, &rows, 1);
        }
    }
    for (title, headers, rows) in sweep_grids(o) {
        let _ = writeln!(out, "\n#### Batch-insert sweep: {title}\n");
        super::layout::md_table(&mut out, &headers, &rows, 1);
    }
    if let Some(chart) = sweep_chart(o, target) {
        let _ = writeln!(out, "\n```text\n{}```", chart.chart(40));
    }
    out
}
