//! The comparison panel's matrix view (`m`): the selected run on its target's two axes.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::parts::window;
use super::theme::Theme;
use crate::format;
use crate::format::fit;
use crate::model::{Focus, State};
use bench_core::compare::Band;

/// The selected run on its target's two axes: a row per case, a column per backend, each cell
/// its median and ratio against the row's baseline, coloured by band; the selected cell's
/// figures below.
pub fn draw(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let say = |frame: &mut Frame, text: String| {
        frame.render_widget(
            Paragraph::new(text)
                .style(theme.dim())
                .wrap(Wrap { trim: true }),
            area,
        )
    };
    let Some(run) = state.target_runs().nth(state.compare.col) else {
        return say(
            frame,
            "No run yet: the matrix shows the selected run's benches as cases x backends.".into(),
        );
    };
    let Some((_, m, rows)) = state.matrix_view() else {
        return say(
            frame,
            format!("Run {} has no finished bench on the matrix yet.", run.seq),
        );
    };
    let [head, table, detail] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(2),
        Constraint::Length(2),
    ])
    .areas(area);
    let w = table.width as usize;
    let label_w = m
        .rows
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(6, 24)
        + 1;
    let texts: Vec<Vec<String>> = m
        .cells
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| c.as_ref().map_or("-".into(), bench_core::matrix::cell_text))
                .collect()
        })
        .collect();
    // A backend's name over two lines where it has a path (`middleware` over `spawn_blocking`),
    // so that columns are as wide as their figures, not their names.
    let two_lines = m.columns.iter().any(|c| c.contains('/'));
    let parts = |c: &str| -> (String, String) {
        match c.rsplit_once('/') {
            Some((head, tail)) if two_lines => (head.to_string(), tail.to_string()),
            _ if two_lines => (String::new(), c.to_string()),
            _ => (String::new(), c.to_string()),
        }
    };
    let col_w = |j: usize| {
        let (a, b) = parts(&m.columns[j]);
        rows.iter()
            .map(|&i| texts[i][j].chars().count())
            .chain([a.chars().count().min(16), b.chars().count().min(16)])
            .max()
            .unwrap_or(8)
            + 2
    };
    // The columns that fit, the selected one among them.
    let widths: Vec<usize> = (0..m.columns.len()).map(col_w).collect();
    let sel = state
        .compare
        .matrix_col
        .min(m.columns.len().saturating_sub(1));
    let mut first = sel;
    let mut used = label_w + widths[sel];
    while first > 0 && used + widths[first - 1] <= w {
        first -= 1;
        used += widths[first];
    }
    let mut last = sel + 1;
    while last < m.columns.len() && used + widths[last] <= w {
        used += widths[last];
        last += 1;
    }
    let focused = state.focus == Focus::Compare;
    let left = if first > 0 {
        format!("◀ {first} more · ")
    } else {
        String::new()
    };
    let right = match m.columns.len() - last {
        0 => String::new(),
        n => format!("{n} more ▶ · "),
    };
    let title = format!(
        "run {} · {left}{right}case x backend · median, ratio vs the row's base",
        run.seq
    );
    frame.render_widget(Paragraph::new(fit(&title, w)).style(theme.dim()), head);
    let mut upper = vec![Span::raw(" ".repeat(label_w))];
    let mut header = vec![Span::raw(" ".repeat(label_w))];
    for (j, (column, width)) in m.columns.iter().zip(&widths).enumerate() {
        if !(first..last).contains(&j) {
            continue;
        }
        let mut style = theme.accent();
        if focused && j == sel {
            style = style.add_modifier(Modifier::UNDERLINED);
        }
        let (a, b) = parts(column);
        let (a, b) = (fit(&a, width - 2), fit(&b, width - 2));
        upper.push(Span::styled(format!("{a:>width$}"), theme.accent()));
        header.push(Span::styled(format!("{b:>width$}"), style));
    }
    let mut lines = Vec::new();
    if two_lines {
        lines.push(Line::from(upper));
    }
    lines.push(Line::from(header));
    let body_h = table.height.saturating_sub(lines.len() as u16) as usize;
    let cursor = state.compare.matrix_row.min(rows.len().saturating_sub(1));
    for ri in window(rows.len(), body_h, cursor) {
        let i = rows[ri];
        let mut spans = vec![Span::raw(format!(
            "{:<label_w$}",
            fit(&m.rows[i], label_w - 1)
        ))];
        for j in first..last {
            let mut style = ratatui::style::Style::default();
            if let Some(band) = m.cells[i][j].as_ref().and_then(|c| c.band) {
                style = style.patch(theme.band(band));
            }
            if focused && ri == cursor && j == sel {
                style = style.patch(theme.selected());
            }
            spans.push(Span::styled(
                format!("{:>1$}", texts[i][j], widths[j]),
                style,
            ));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), table);
    let picked = rows.get(cursor).and_then(|&i| m.cells[i][sel].as_ref());
    let text = match picked {
        Some(c) => {
            let vs = match (c.band, c.ratio) {
                (Some(Band::Baseline), _) => "the row's baseline".to_string(),
                (_, Some(r)) => format!("{} ({})", format::ratio(&r), format::overhead_pct(&r)),
                (_, None) => "no ratio".into(),
            };
            format!(
                "{} · {} · {vs}",
                c.bench.terminal(),
                format::ns(c.median_ns)
            )
        }
        None => "nothing finished in this cell".into(),
    };
    frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), detail);
}
