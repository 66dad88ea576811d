//! Drawing only: `render(&State, &mut Frame)` reads the state and draws it. One file per panel.

mod catalog;
mod compare;
mod detail;
mod help;
mod knobs;
mod live;
mod matrix;
mod parts;
pub mod theme;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::model::keys;
use crate::model::{Focus, Overlay, State};
use theme::Theme;

/// Below this the explorer says so instead of drawing.
pub const MIN_SIZE: (u16, u16) = (40, 12);
/// From this size on every panel is on screen at once.
pub const FULL_SIZE: (u16, u16) = (80, 24);

pub fn render(state: &State, frame: &mut Frame) {
    let area = frame.area();
    let theme = Theme {
        color: state.session.color,
    };
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let msg = format!(
            "terminal too small: {}x{} (needs {}x{})",
            area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
        );
        frame.render_widget(
            Paragraph::new(msg)
                .style(theme.error())
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let [title, body, status, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_title(state, &theme, frame, title);
    if area.width >= FULL_SIZE.0 && area.height >= FULL_SIZE.1 {
        // A third of the width; on a wide terminal (120 columns and more) the left column gets
        // the width the catalog's names and details, and the knobs with their allowed values,
        // need, up to 45%.
        let third = (area.width / 3).clamp(30, 44);
        let left_width = if area.width >= 120 {
            catalog::width_needed(state)
                .max(knobs::width_needed(state))
                .clamp(third, area.width * 45 / 100)
        } else {
            third
        };
        let [left, right] =
            Layout::horizontal([Constraint::Length(left_width), Constraint::Min(0)]).areas(body);
        // Every knob and the borders; the line or two of help (or a refused value) only
        // while the panel is focused or has something to say: the catalog keeps those rows.
        let note = if state.focus == Focus::Knobs || state.knobs.error.is_some() {
            2
        } else {
            0
        };
        let knobs_height = (state.target.knobs.len() as u16 + 2 + note).min(left.height / 2);
        let [cat, kn] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(knobs_height)]).areas(left);
        // The comparison gets two thirds of the column while focused (its matrix and detail
        // lines need the rows), half otherwise.
        let cmp_share = if state.focus == Focus::Compare {
            65
        } else {
            50
        };
        let [live, cmp] = Layout::vertical([
            Constraint::Percentage(100 - cmp_share),
            Constraint::Percentage(cmp_share),
        ])
        .areas(right);
        draw_panel(state, &theme, frame, Focus::Catalog, cat);
        draw_panel(state, &theme, frame, Focus::Knobs, kn);
        draw_panel(state, &theme, frame, Focus::Live, live);
        draw_panel(state, &theme, frame, Focus::Compare, cmp);
    } else {
        // Compact: the focused panel alone; tab moves between them.
        draw_panel(state, &theme, frame, state.focus, body);
    }
    if let Some(text) = &state.prompt.text {
        help::typed_line(state, text, &theme, frame, status);
        draw_hints(state, &theme, frame, hints);
        return;
    }
    draw_status(state, &theme, frame, status);
    draw_hints(state, &theme, frame, hints);
    match &state.overlay {
        Some(Overlay::Help) => help::draw(&theme, frame, area),
        Some(Overlay::ConfirmQuit) => help::confirm_quit(state, &theme, frame, area),
        Some(Overlay::Reopen) => help::reopen(state, &theme, frame, area),
        Some(Overlay::ConfirmSweep) => help::confirm_sweep(state, &theme, frame, area),
        Some(Overlay::Histogram { run_id, bench }) => {
            help::histogram(state, &theme, frame, area, run_id, bench)
        }
        Some(Overlay::Scaling) => help::scaling(state, &theme, frame, area),
        Some(Overlay::History { run_id, bench }) => {
            help::history(state, &theme, frame, area, run_id, bench)
        }
        None => {}
    }
}

fn draw_panel(state: &State, theme: &Theme, frame: &mut Frame, panel: Focus, area: Rect) {
    let focused = state.focus == panel;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(focused))
        .title(Span::styled(
            match panel {
                Focus::Catalog | Focus::Compare if !state.catalog.filter.is_empty() => {
                    format!(" {} /{} ", panel.title(), state.catalog.filter)
                }
                _ => format!(" {} ", panel.title()),
            },
            if focused { theme.title() } else { theme.dim() },
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match panel {
        Focus::Catalog => catalog::draw(state, theme, frame, inner),
        Focus::Knobs => knobs::draw(state, theme, frame, inner),
        Focus::Live => live::draw(state, theme, frame, inner),
        Focus::Compare => compare::draw(state, theme, frame, inner),
    }
}

fn draw_title(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut spans = vec![
        Span::styled("benchscope", theme.title()),
        Span::raw(format!(
            " · {} · trace {}{}",
            state.target.name,
            if state.trace { "on" } else { "off" },
            if state.paired { " · paired" } else { "" }
        )),
    ];
    if let Some(d) = state.datasets.get(state.target.name) {
        spans.push(Span::styled(format!(" · {d}"), theme.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_status(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let line = match &state.status {
        Some(s) => Span::styled(
            s.text.clone(),
            if s.error {
                theme.error()
            } else {
                theme.accent()
            },
        ),
        None => Span::styled("mark benches with space, run with enter", theme.dim()),
    };
    frame.render_widget(Paragraph::new(Line::from(line)), area);
}

/// Generated from the focused panel's keymap and the global one; `? help` always shows.
fn draw_hints(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let typing = [
        ("type", "to filter"),
        ("↑↓", "move"),
        ("enter", "keep filter"),
        ("esc", "clear"),
    ];
    let matrix = [
        ("↑↓", "case"),
        ("←→", "backend"),
        ("m", "runs side by side"),
        ("d", "histogram"),
    ];
    let all = if state.catalog.filtering {
        typing.to_vec()
    } else if state.compare.matrix && state.focus == Focus::Compare {
        matrix.to_vec()
    } else {
        // The matrix only for targets that have one.
        let matrix = bench_core::matrix::axes(state.target).is_some();
        keys::hints(state.focus)
            .into_iter()
            .filter(|(k, _)| matrix || *k != "m")
            .collect()
    };
    let tail_len = "? help".len();
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (label, help) in all {
        let w = label.chars().count() + help.chars().count() + 3;
        if used + w + tail_len > area.width as usize {
            break;
        }
        spans.push(Span::styled(label.to_string(), theme.key()));
        spans.push(Span::raw(format!(" {help}  ")));
        used += w;
    }
    spans.push(Span::styled("?", theme.key()));
    spans.push(Span::raw(" help"));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

#[cfg(test)]
mod tests;
