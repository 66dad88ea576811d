//! Where each profiled bench's CPU goes, by layer, with its top frames and flamegraph: a table
//! (text and markdown) under a profiled run.

use std::fmt::Write;

use bench_core::profile::{AllocationProfile, Layer, Profile};
use bench_core::protocol::results::RunRecord;

use bench_core::text::Text;

use super::layout::Md;
use crate::format;

/// The profiles of a run's benches, in bench order (none for an unprofiled run).
fn profiles(run: &RunRecord) -> Vec<(&Text, &Profile)> {
    run.benches
        .iter()
        .filter_map(|b| b.profile.as_ref().map(|p| (&b.name, p)))
        .collect()
}

/// A frame's name inside a markdown code span: escaped for a terminal, and no backtick (which
/// would end the span).
fn code_span(frame: &str, width: usize) -> String {
    format!(
        "`{}`",
        bench_core::text::terminal_str(&format::fit(frame, width)).replace('`', "'")
    )
}

/// Rows of text cells as markdown cells, the last column a link to a flamegraph where `svg` has
/// one.
fn with_links(rows: Vec<Vec<String>>, svgs: Vec<Option<String>>) -> Vec<Vec<Md>> {
    rows.into_iter()
        .zip(svgs)
        .map(|(row, svg)| {
            let last = row.len() - 1;
            row.into_iter()
                .enumerate()
                .map(|(i, c)| match (&svg, i == last) {
                    (Some(to), true) => Md::Link {
                        label: "svg",
                        to: to.clone(),
                    },
                    _ => Md::Text(c),
                })
                .collect()
        })
        .collect()
}

/// The by-layer table: one row per profiled bench, a column per layer (share of its sampled
/// CPU), the CPU sampled and the flamegraph.
pub fn cells(run: &RunRecord) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let profiles = profiles(run);
    if profiles.is_empty() {
        return None;
    }
    let mut headers = vec!["bench".to_string(), "CPU sampled".to_string()];
    headers.extend(Layer::ALL.iter().map(|l| l.label().to_string()));
    headers.push("flamegraph".into());
    let rows = profiles
        .iter()
        .map(|(bench, p)| {
            let mut row = vec![bench.raw().to_string()];
            if let Some(e) = &p.error {
                row.push("-".into());
                row.extend(Layer::ALL.iter().map(|_| "-".to_string()));
                row.push(format!("none: {e}"));
                return row;
            }
            row.push(format::ns(p.cpu_ns as f64));
            row.extend(Layer::ALL.iter().map(|l| pct(p.share(*l))));
            row.push(p.flamegraph.clone().unwrap_or_else(|| "-".into()));
            row
        })
        .collect();
    Some((headers, rows))
}

/// The allocation profiles of a run's benches, in bench order.
fn allocations(run: &RunRecord) -> Vec<(&Text, &AllocationProfile)> {
    profiles(run)
        .into_iter()
        .filter_map(|(b, p)| p.allocations.as_ref().map(|a| (b, a)))
        .collect()
}

/// Where the allocations come from: one row per profiled bench whose runner counted them, a
/// column per layer (its share of the allocations), the allocations taken and the flamegraph.
pub fn allocation_cells(run: &RunRecord) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let all = allocations(run);
    if all.is_empty() {
        return None;
    }
    let mut headers = vec!["bench".to_string(), "allocations".to_string()];
    headers.extend(Layer::ALL.iter().map(|l| l.label().to_string()));
    headers.push("flamegraph".into());
    let rows = all
        .iter()
        .map(|(bench, a)| {
            let mut row = vec![bench.raw().to_string(), a.allocs.to_string()];
            row.extend(Layer::ALL.iter().map(|l| pct(a.share(*l))));
            row.push(match (&a.flamegraph, &a.error) {
                (Some(svg), _) => svg.clone(),
                (None, Some(e)) => format!("none: {e}"),
                (None, None) => "-".into(),
            });
            row
        })
        .collect();
    Some((headers, rows))
}

/// A bench's call sites that allocate most, `site 12.3%, ...`, names cut to `width`.
pub fn alloc_top_line(a: &AllocationProfile, n: usize, width: usize) -> String {
    a.top
        .iter()
        .take(n)
        .map(|(f, k)| {
            let share = if a.allocs == 0 {
                0.0
            } else {
                *k as f64 / a.allocs as f64
            };
            format!("{} {}", format::fit(f, width), pct(share))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

const ALLOC_TITLE: &str = "where the allocations come from (every allocation of the samples, by the layer that asked for it)";

fn pct(share: f64) -> String {
    if share == 0.0 {
        "-".into()
    } else {
        format!("{:.1}%", share * 100.0)
    }
}

/// A bench's top frames by self time, `frame 12.3%, ...`, names cut to `width` characters.
pub fn top_line(p: &Profile, n: usize, width: usize) -> String {
    p.top
        .iter()
        .take(n)
        .map(|(f, ns)| format!("{} {}", format::fit(f, width), pct(p.frame_share(*ns))))
        .collect::<Vec<_>>()
        .join(", ")
}

const TITLE: &str = "where the CPU goes (perf, on-CPU samples, by layer)";

/// Plain text: the table and each bench's top frames.
pub fn text(run: &RunRecord) -> String {
    let Some((headers, rows)) = cells(run) else {
        return String::new();
    };
    let mut out = format!("\n{TITLE}\n");
    out.push_str(&super::layout::align(&headers, &rows, 1));
    for (bench, p) in profiles(run) {
        if p.error.is_none() {
            let _ = writeln!(
                out,
                "{}: top frames {}",
                bench.terminal(),
                bench_core::text::terminal_str(&top_line(p, 5, 60))
            );
        }
    }
    let _ = writeln!(out, "{}", crate::profile::ON_CPU_ONLY);
    if let Some((headers, rows)) = allocation_cells(run) {
        let _ = writeln!(out, "\n{ALLOC_TITLE}");
        out.push_str(&super::layout::align(&headers, &rows, 1));
        for (bench, a) in allocations(run) {
            let _ = writeln!(
                out,
                "{}: top callers {}",
                bench.terminal(),
                bench_core::text::terminal_str(&alloc_top_line(a, 5, 60))
            );
        }
    }
    out
}

/// Markdown: the table (flamegraphs linked) and each bench's top frames.
pub fn markdown(run: &RunRecord) -> String {
    let Some((headers, rows)) = cells(run) else {
        return String::new();
    };
    let svgs = profiles(run)
        .iter()
        .map(|(_, p)| p.flamegraph.clone())
        .collect();
    let rows = with_links(rows, svgs);
    let mut out = format!("\n#### {TITLE}\n\n");
    super::layout::md_table(&mut out, &headers, &rows, 1);
    let _ = writeln!(out);
    for (bench, p) in profiles(run) {
        if p.error.is_none() {
            let _ = writeln!(
                out,
                "- {}: top frames by self time: {}",
                bench.md_line(),
                p.top
                    .iter()
                    .take(TOP)
                    .map(|(f, ns)| format!("{} {}", code_span(f, 80), pct(p.frame_share(*ns))))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let _ = writeln!(out, "\n{}.", crate::profile::ON_CPU_ONLY);
    if let Some((headers, rows)) = allocation_cells(run) {
        let svgs = allocations(run)
            .iter()
            .map(|(_, a)| a.flamegraph.clone())
            .collect();
        let rows = with_links(rows, svgs);
        let _ = writeln!(out, "\n#### {ALLOC_TITLE}\n");
        super::layout::md_table(&mut out, &headers, &rows, 1);
        let _ = writeln!(out);
        for (bench, a) in allocations(run) {
            let _ = writeln!(
                out,
                "- {}: top callers of the allocator: {}",
                bench.md_line(),
                a.top
                    .iter()
                    .take(TOP)
                    .map(|(f, k)| format!(
                        "{} {}",
                        code_span(f, 80),
                        pct(*k as f64 / a.allocs.max(1) as f64)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    out
}

const TOP: usize = 5;
