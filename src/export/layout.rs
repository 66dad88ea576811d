//! Tables as text: aligned columns for a terminal, pipe tables for markdown. The layout every
//! text export and the baseline comparison share, and how a workload's own sections
//! ([`bench_core::sections`]) read in each; it knows nothing of results.

use std::fmt::Write;

use bench_core::sections::Section;

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

/// A workload's section as text: each table under its title, then the notes (headings in
/// lower case, as the text export's).
pub fn section_text(s: &Section) -> String {
    let mut out = String::new();
    for t in &s.tables {
        let _ = writeln!(out, "\n{}", t.title);
        out.push_str(&align(&t.headers, &t.rows, t.left));
    }
    if !s.notes.is_empty() {
        let _ = writeln!(out, "\n{}", s.notes_title.to_lowercase());
        for line in &s.notes {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// A workload's section as markdown: a level-4 heading per table and for the notes.
pub fn section_markdown(s: &Section) -> String {
    let mut out = String::new();
    for t in &s.tables {
        let _ = writeln!(out, "\n#### {}\n", t.title);
        md_table(&mut out, &t.headers, &t.rows, t.left);
    }
    if !s.notes.is_empty() {
        let _ = writeln!(out, "\n#### {}\n", s.notes_title);
        for line in &s.notes {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}
