use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::parts::window;
use super::theme::Theme;
use crate::format::fit;
use crate::model::{Focus, State};

/// The width a knob's row needs with its allowed values beside it (borders included).
pub fn width_needed(state: &State) -> u16 {
    let widest = state
        .target
        .knobs
        .iter()
        .map(|k| NAME_W + VALUE_W + 2 + k.allowed().chars().count())
        .max()
        .unwrap_or(0);
    (widest + 2) as u16
}

/// The columns of a knob's name and of its value.
const NAME_W: usize = 21;
const VALUE_W: usize = 9;

pub fn draw(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let w = area.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    for (i, spec) in state.target.knobs.iter().enumerate() {
        let here = i == state.knobs.cursor && state.focus == Focus::Knobs;
        let value = match (&state.knobs.editing, &state.knobs.sweep, here) {
            (Some(buf), _, true) => format!("{buf}▏"),
            (None, Some(_), true) => "sweep…".to_string(),
            _ => state
                .knobs
                .values
                .get(spec.name)
                .map(|v| v.to_string())
                .unwrap_or_default(),
        };
        let range = format!("  {}", spec.allowed());
        let name_w = w.saturating_sub(VALUE_W + 1).min(NAME_W);
        let left = format!(
            "{:<name_w$}{:>VALUE_W$}",
            fit(spec.name, name_w.saturating_sub(1)),
            value
        );
        let room = w.saturating_sub(left.chars().count());
        let range = if room >= range.chars().count() {
            range
        } else {
            String::new()
        };
        let mut line = Line::from(vec![Span::raw(left), Span::styled(range, theme.dim())]);
        if here {
            line = line.style(theme.selected());
        }
        lines.push(line);
    }
    let help = match (
        state.focus == Focus::Knobs,
        &state.knobs.editing,
        &state.knobs.sweep,
    ) {
        (true, Some(_), _) => "type a value (20k, 1m), enter to set, esc to cancel".to_string(),
        (true, None, Some(buf)) => format!(
            "sweep {}: {buf}▏ values comma-separated; name=a,b after them makes a matrix; enter queues one run each, esc cancels",
            state.target.knobs[state.knobs.cursor].name
        ),
        (true, None, None) => {
            let k = state.target.knobs[state.knobs.cursor];
            format!("{} ({})", crate::format::plain(k.help), k.allowed())
        }
        _ => String::new(),
    };
    let note = match (&state.knobs.error, &state.knobs.sweep) {
        // The values typed so far stay in view beside why they were refused.
        (Some(err), Some(buf)) => Some(Line::from(vec![
            Span::styled(err.clone(), theme.error()),
            Span::raw(format!(" · sweep: {buf}▏")),
        ])),
        (Some(err), None) => Some(Line::styled(err.clone(), theme.error())),
        (None, _) => (!help.is_empty()).then(|| Line::styled(help, theme.dim())),
    };
    // The knobs scroll to keep the cursor in view; the note below them wraps.
    let note_h = match &note {
        Some(n) => (n.width().div_ceil(w.max(1)) as u16).clamp(1, 3),
        None => 0,
    };
    let list_h = area.height.saturating_sub(note_h).max(1);
    let [list, below] =
        Layout::vertical([Constraint::Length(list_h), Constraint::Min(0)]).areas(area);
    let shown: Vec<Line> = lines
        .drain(window(
            lines.len(),
            list.height as usize,
            state.knobs.cursor,
        ))
        .collect();
    frame.render_widget(Paragraph::new(shown), list);
    if let Some(n) = note {
        frame.render_widget(Paragraph::new(n).wrap(Wrap { trim: false }), below);
    }
}
