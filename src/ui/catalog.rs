use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::parts::window;
use super::theme::Theme;
use crate::format::fit;
use crate::model::State;
use bench_core::catalog::BenchKind;

/// What a bench row shows beside its name: its phase, strategy or backend; nothing when the
/// name already says it (`insert/middleware/spin` is spin, `bulk_put/rusqlite` rusqlite), so
/// the width goes to names.
fn detail(b: &bench_core::catalog::BenchSpec) -> String {
    let d = full_detail(b);
    let plain = |s: &str| s.replace('-', "_");
    let said = plain(b.name)
        .split('/')
        .any(|part| part == plain(&d).as_str());
    if said { String::new() } else { d }
}

fn full_detail(b: &bench_core::catalog::BenchSpec) -> String {
    // A script's statement: its text (the catalog lists the scripts' statements this way).
    if bench_core::workloads::script::is_statement(b) {
        return b.op.to_string();
    }
    match (b.phase, b.strategy(), b.subject) {
        (Some(p), _, _) => p.label().to_string(),
        (None, Some(s), _) => s.name().to_string(),
        // The name says the crate; the detail its exact version.
        (None, None, bench_core::catalog::Subject::Crate(c)) => format!("v{}", c.version()),
        (None, None, _) => b.backend().to_string(),
    }
}

/// The width the catalog's rows need to show every name and detail whole (borders included):
/// each row's name, then its detail flush right, one column apart.
pub fn width_needed(state: &State) -> u16 {
    let row = |b: &bench_core::catalog::BenchSpec| {
        // A statement's text is cut to the room there is; it does not widen the panel.
        let detail = if bench_core::workloads::script::is_statement(b) {
            0
        } else {
            detail(b).chars().count()
        };
        // "[ ] " name, the baseline mark, then a space and the detail
        4 + b.name.chars().count() + 1 + if detail > 0 { 1 + detail } else { 0 }
    };
    let widest = state
        .catalog_benches()
        .iter()
        .map(|b| row(b))
        .max()
        .unwrap_or(0);
    // the borders, and a column to spare
    (widest + 2 + 1).max(30) as u16
}

pub fn draw(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let benches = state.catalog_benches();
    let mut lines: Vec<Line> = Vec::new();
    let w = area.width as usize;
    // A name is cut only when it alone does not fit; its detail gets what is left, flush right.
    let name_room = w.saturating_sub(5);
    let mut rows: Vec<(Option<usize>, Line)> = Vec::new();
    let targets = bench_core::workloads::targets();
    let i = targets
        .iter()
        .position(|t| t.name == state.target.name)
        .unwrap_or(0);
    let head = format!("◀ {} ▶ {}/{}", state.target.name, i + 1, targets.len());
    rows.push((None, Line::styled(fit(&head, w), theme.title())));
    rows.push((
        None,
        Line::styled(
            fit(&crate::format::plain(state.target.about), w),
            theme.dim(),
        ),
    ));
    if state.catalog.filtering || !state.catalog.filter.is_empty() {
        let total = state
            .target
            .benches
            .iter()
            .filter(|b| matches!(b.kind, BenchKind::Bench | BenchKind::Micro))
            .count();
        let typing = if state.catalog.filtering { "▏" } else { "" };
        let count = if benches.is_empty() {
            "no bench matches".to_string()
        } else {
            format!("{} of {total}", benches.len())
        };
        let text = format!("/{}{typing} · {count}", state.catalog.filter);
        rows.push((None, Line::styled(fit(&text, w), theme.accent())));
    }
    let mut last_kind = None;
    for (i, b) in benches.iter().enumerate() {
        if last_kind != Some(b.kind) {
            let head = if b.kind == BenchKind::Bench {
                "benches"
            } else {
                "micro-benches (phase)"
            };
            rows.push((None, Line::styled(head, theme.accent())));
            last_kind = Some(b.kind);
        }
        let group = crate::model::group_of(b.name);
        if state.catalog.folded.contains(group) {
            // A folded group: one row, marked as its members are.
            let members: Vec<&str> = state.group_members(b.name).collect();
            let marked = members
                .iter()
                .filter(|n| state.catalog.marked.contains(*n))
                .count();
            let mark = match marked {
                0 => "[ ]",
                m if m == members.len() => "[x]",
                _ => "[~]",
            };
            let text = format!("{mark} ▸ {group}/… ({})", members.len());
            let mut line = Line::styled(fit(&text, w), theme.accent());
            if i == state.catalog.cursor && state.focus == crate::model::Focus::Catalog {
                line = line.style(theme.selected());
            }
            rows.push((Some(i), line));
            continue;
        }
        let mark = if state.catalog.marked.contains(b.name) {
            "[x]"
        } else {
            "[ ]"
        };
        let detail = detail(b);
        let base = if b.name == state.compare.baseline_bench {
            "*"
        } else {
            " "
        };
        let text = format!(
            "{mark} {}{base}",
            crate::format::fit_name(b.name, name_room)
        );
        let left = w.saturating_sub(text.chars().count() + 1);
        let rest = fit(&detail, left);
        let pad = left.saturating_sub(rest.chars().count());
        let mut line = Line::from(vec![
            Span::raw(text),
            Span::raw(" ".repeat(pad + 1)),
            Span::styled(rest, theme.dim()),
        ]);
        if i == state.catalog.cursor && state.focus == crate::model::Focus::Catalog {
            line = line.style(theme.selected());
        }
        rows.push((Some(i), line));
    }
    let cursor_row = rows
        .iter()
        .position(|(i, _)| *i == Some(state.catalog.cursor))
        .unwrap_or(0);
    for (_, line) in rows.drain(window(rows.len(), area.height as usize, cursor_row)) {
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), area);
}
