//! Tables as text: aligned columns for a terminal, pipe tables for markdown. The layout every
//! text export and the baseline comparison share; it knows nothing of results.

use std::fmt::Write;

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
