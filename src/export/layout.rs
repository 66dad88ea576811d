//! Tables as text: aligned columns for a terminal, pipe tables for markdown. The layout every
//! text export and the baseline comparison share, and how a workload's own sections
//! ([`bench_core::sections`]) read in each; it knows nothing of results.

use std::fmt::Write;

use bench_core::compare::Band;
use bench_core::sections::{Bars, Section};

use crate::format;

/// Left-aligns text columns, right-aligns the rest, two spaces apart.
pub fn align(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
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

/// A markdown pipe table: text columns left, the rest right-aligned; `|` in a cell escaped.
pub fn md_table(out: &mut String, headers: &[String], rows: &[Vec<String>], left: usize) {
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let rule: Vec<&str> = (0..headers.len())
        .map(|i| if i < left { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", rule.join(" | "));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// Rates as bars: per series its name, then a bar and the figure at each point; each series
/// on its own scale (the bars show its shape, the figures compare series).
pub fn bars(points: &[String], series: &[(String, Vec<Option<f64>>)], width: usize) -> String {
    let mut out = String::new();
    let label_w = points
        .iter()
        .map(|p| p.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    for (name, cells) in series {
        let max = cells.iter().flatten().fold(0.0f64, |a, b| a.max(*b));
        let _ = writeln!(out, "{name}");
        for (p, v) in points.iter().zip(cells) {
            let bar = match v {
                Some(v) if max > 0.0 => {
                    "█".repeat(((v / max) * width as f64).round().max(1.0) as usize)
                }
                _ => String::new(),
            };
            let figure = v.map(format::ops).unwrap_or_else(|| "-".into());
            let _ = writeln!(out, "  {p:>label_w$} {bar} {figure}");
        }
    }
    out
}

fn bars_of(b: &Bars) -> String {
    bars(&b.points, &b.series, 40)
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

/// A workload's section as text: each table under its title (banded rows coloured when
/// `color`), the bars, then the notes (headings in lower case, as the text export's).
pub fn section_text(s: &Section, color: bool) -> String {
    let lower = |t: &str| {
        let mut c = t.chars();
        c.next()
            .map(|f| f.to_lowercase().chain(c).collect::<String>())
            .unwrap_or_default()
    };
    let mut out = String::new();
    for t in &s.tables {
        let _ = writeln!(out, "\n{}", lower(&t.title));
        let table = align(&t.headers, &t.rows, t.left);
        for (i, line) in table.lines().enumerate() {
            let band = i
                .checked_sub(1)
                .and_then(|r| t.bands.get(r).copied().flatten());
            match ansi(band).filter(|_| color) {
                Some(c) => {
                    let _ = writeln!(out, "{c}{line}\x1b[0m");
                }
                None => {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    for b in &s.bars {
        let _ = writeln!(out, "\n{}", lower(&b.title));
        out.push_str(&bars_of(b));
    }
    if !s.notes.is_empty() {
        let _ = writeln!(out, "\n{}", lower(&s.notes_title));
        for line in &s.notes {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// A workload's section as markdown: a level-4 heading per table (with what it shows under
/// it), the bars in a text block, then the notes under their heading.
pub fn section_markdown(s: &Section) -> String {
    let mut out = String::new();
    for t in &s.tables {
        let _ = writeln!(out, "\n#### {}\n", t.title);
        if !t.about.is_empty() {
            let _ = writeln!(out, "{}\n", t.about);
        }
        md_table(&mut out, &t.headers, &t.rows, t.left);
    }
    for b in &s.bars {
        let _ = writeln!(out, "\n#### {}\n\n```text\n{}```", b.title, bars_of(b));
    }
    if !s.notes.is_empty() {
        let _ = writeln!(out, "\n#### {}\n", s.notes_title);
        for line in &s.notes {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}
