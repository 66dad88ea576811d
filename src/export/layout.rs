//! Tables as text: aligned columns for a terminal, pipe tables for markdown. The layout every
//! text export and the baseline comparison share, and how a workload's own sections
//! ([`bench_core::sections`]) read in each; it knows nothing of results.

use std::fmt::Write;

use bench_core::compare::Band;
use bench_core::sections::{Bars, Section};
use bench_core::text::Text;

use crate::format;

/// What a table cell can be: a [`Text`] from data, or text made here (figures, words). Either
/// way the table escapes it for its sink: no cell reaches a terminal or a markdown table as it is.
pub trait Cell {
    fn text(&self) -> &str;

    /// The cell in a markdown table: escaped ([`bench_core::text::md_cell`]).
    fn md(&self) -> String {
        bench_core::text::md_cell(self.text())
    }
}

/// A markdown table's cell: text (escaped as every cell is), or markdown this code made (a link
/// to a file it wrote, its destination percent-encoded), put in the table as it is.
pub enum Md {
    Text(String),
    Link { label: &'static str, to: String },
}

impl Cell for Md {
    fn text(&self) -> &str {
        match self {
            Md::Text(t) => t,
            Md::Link { to, .. } => to,
        }
    }

    fn md(&self) -> String {
        match self {
            Md::Text(t) => bench_core::text::md_cell(t),
            Md::Link { label, to } => format!("[{label}]({})", link_destination(to)),
        }
    }
}

/// A link's destination: what is not a plain path character percent-encoded (no `)`, space or
/// angle bracket can end it, no scheme can be made of it but a relative path's).
pub fn link_destination(to: &str) -> String {
    let mut out = String::new();
    for b in to.bytes() {
        if b.is_ascii_alphanumeric() || b"/._-".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Cell for Text {
    fn text(&self) -> &str {
        self.raw()
    }
}

impl Cell for String {
    fn text(&self) -> &str {
        self
    }
}

impl Cell for &str {
    fn text(&self) -> &str {
        self
    }
}

fn terminal_cell(c: &impl Cell) -> String {
    bench_core::text::terminal_str(c.text())
}

/// Left-aligns text columns, right-aligns the rest, two spaces apart: every cell escaped for a
/// terminal (a name's control characters shown as `\u{..}`, never written).
pub fn align(headers: &[impl Cell], rows: &[Vec<impl Cell>], left: usize) -> String {
    let headers: Vec<String> = headers.iter().map(terminal_cell).collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(terminal_cell).collect())
        .collect();
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
            .map(|(i, c)| format::pad(c, widths[i], i < left))
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = line(&headers);
    out.push('\n');
    for r in &rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

/// A markdown pipe table: text columns left, the rest right-aligned; every cell escaped for a
/// markdown table (a `|` or a line break in a name cannot make another cell or row).
pub fn md_table(out: &mut String, headers: &[impl Cell], rows: &[Vec<impl Cell>], left: usize) {
    fn cells(r: &[impl Cell]) -> String {
        r.iter().map(Cell::md).collect::<Vec<_>>().join(" | ")
    }
    let _ = writeln!(out, "| {} |", cells(headers));
    let rule: Vec<&str> = (0..headers.len())
        .map(|i| if i < left { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", rule.join(" | "));
    for r in rows {
        let _ = writeln!(out, "| {} |", cells(r));
    }
}

/// Rates as bars: per series its name, then a bar and the figure at each point; each series
/// on its own scale (the bars show its shape, the figures compare series).
pub fn bars(points: &[Text], series: &[(Text, Vec<Option<f64>>)], width: usize) -> String {
    let mut out = String::new();
    // Shown in a terminal, or in a markdown code block: escaped for a terminal, and no
    // backtick (three would end the block).
    let shown = |t: &Text| t.terminal().to_string().replace('`', "'");
    let points: Vec<String> = points.iter().map(shown).collect();
    let label_w = points
        .iter()
        .map(|p| p.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    for (name, cells) in series {
        let max = cells.iter().flatten().fold(0.0f64, |a, b| a.max(*b));
        let _ = writeln!(out, "{}", shown(name));
        for (p, v) in points.iter().zip(cells) {
            let bar = match v {
                Some(v) if max > 0.0 => {
                    "█".repeat(((v / max) * width as f64).round().max(1.0) as usize)
                }
                _ => String::new(),
            };
            let figure = v.map(format::ops).unwrap_or_else(|| "-".into());
            let _ = writeln!(out, "  {} {bar} {figure}", format::pad(p, label_w, false));
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
            let _ = writeln!(out, "  {}", line.terminal());
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
            let _ = writeln!(out, "- {}", line.md_line());
        }
    }
    out
}
