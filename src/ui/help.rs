use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::theme::Theme;
use crate::model::Focus;
use crate::model::keys::{self, Binding};

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn section<'a>(
    theme: &Theme,
    title: &'a str,
    bindings: &'static [Binding],
    lines: &mut Vec<Line<'a>>,
) {
    lines.push(Line::styled(title, theme.accent()));
    for b in bindings.iter().filter(|b| b.in_help) {
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<10}", b.label), theme.key()),
            Span::raw(b.help),
        ]));
    }
}

/// Every key, generated from the same keymaps `update` uses.
pub fn draw(theme: &Theme, frame: &mut Frame, area: Rect) {
    // Two halves of about the same length (they stand side by side on a short screen).
    let mut left = Vec::new();
    section(theme, "everywhere", keys::GLOBAL, &mut left);
    for f in [Focus::Knobs, Focus::Live] {
        section(theme, f.title(), keys::keymap(f), &mut left);
    }
    let mut right = Vec::new();
    for f in [Focus::Catalog, Focus::Compare] {
        section(theme, f.title(), keys::keymap(f), &mut right);
    }
    let closing = Line::styled("any key closes this help", theme.dim());
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Help ")
        .border_style(theme.title());
    let one_column = left.len() + right.len() + 3;
    if (one_column as u16) <= area.height {
        let mut lines = left;
        lines.extend(right);
        lines.push(closing);
        let popup = centered(area, 70, lines.len() as u16 + 2);
        frame.render_widget(Clear, popup);
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block),
            popup,
        );
    } else {
        // Two columns when the screen is short.
        let rows = left.len().max(right.len()) as u16 + 3;
        let popup = centered(area, area.width.min(110), rows);
        frame.render_widget(Clear, popup);
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        let [cols, foot] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(inner);
        let [l, r] = Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
            .areas(cols);
        frame.render_widget(Paragraph::new(left), l);
        frame.render_widget(Paragraph::new(right), r);
        frame.render_widget(Paragraph::new(closing), foot);
    }
}

pub fn confirm_quit(state: &crate::model::State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let (question, keys) = state.quit_question();
    question_box(theme, frame, area, " Quit ", &question, &keys);
}

/// The line where a path to open or a baseline name is typed, in place of the status line
/// (with the reason the last try failed).
pub fn typed_line(
    state: &crate::model::State,
    text: &str,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let (prompt, hint) = match state.prompt.purpose {
        crate::model::TypedFor::Open => (
            "open",
            "a report, snapshot, baseline, journal (.jsonl) or Criterion folder; enter opens, esc cancels",
        ),
        crate::model::TypedFor::BaselineName => (
            "save baseline",
            "the target's finished runs, under this name; enter saves, esc cancels",
        ),
    };
    let line = Line::from(vec![
        Span::styled(format!("{prompt}: {text}▏ "), theme.accent()),
        match &state.prompt.error {
            Some(e) => Span::styled(e.clone(), theme.error()),
            None => Span::styled(hint, theme.dim()),
        },
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

/// A sweep on top of a long queue.
pub fn confirm_sweep(state: &crate::model::State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(p) = &state.pending_sweep else {
        return;
    };
    let question = format!(
        "{} runs already wait. Queue this sweep's {} runs behind them?",
        state.waiting(),
        p.runs.len()
    );
    let keys = "y queues them, any other key drops the sweep (C clears the queue)";
    question_box(theme, frame, area, " Sweep ", &question, keys);
}

/// The last session's unexported runs, offered at start.
pub fn reopen(state: &crate::model::State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(s) = &state.session.offer else {
        return;
    };
    let open = s.unexported();
    let mut targets: Vec<&str> = open.iter().map(|r| r.target.as_str()).collect();
    targets.dedup();
    let question = format!(
        "The last session left {} with results no export holds ({}). Reopen its {} runs?",
        match open.len() {
            1 => "1 run".to_string(),
            n => format!("{n} runs"),
        },
        targets.join(", "),
        s.runs.len()
    );
    let keys = format!(
        "y reopens them as columns; any other key starts empty ({} stays on disk)",
        s.path.display()
    );
    question_box(theme, frame, area, " Last session ", &question, &keys);
}

/// A centred box with a question and, dimmed, the keys that answer it; wrapped to fit.
fn question_box(
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    title: &str,
    question: &str,
    keys: &str,
) {
    let width = area.width.saturating_sub(4).clamp(30, 72);
    let inner = width.saturating_sub(2).max(1) as usize;
    // Word wrapping loses a little of each row: a tenth more than the characters need.
    let rows = |t: &str| (t.chars().count() * 11 / 10).div_ceil(inner).max(1) as u16;
    let popup = centered(area, width, rows(question) + rows(keys) + 2);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(vec![
            Line::raw(question.to_string()),
            Line::styled(keys.to_string(), theme.dim()),
        ])
        .wrap(ratatui::widgets::Wrap { trim: true })
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(title.to_string())
                .border_style(theme.error()),
        ),
        popup,
    );
}

/// The scaling table and chart of the target's runs, as the exports draw them.
pub fn scaling(state: &crate::model::State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(sc) = state.scaling() else {
        return;
    };
    text_box(theme, frame, area, " Scaling ", &sc.text());
}

/// The distribution of one bench of one run.
pub fn histogram(
    state: &crate::model::State,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    run_id: &str,
    bench: &str,
) {
    let Some(run) = state.runs.iter().find(|r| r.id == run_id) else {
        return;
    };
    let Some(b) = run.record.bench(bench) else {
        return;
    };
    let bar = (area.width as usize).saturating_sub(30).clamp(10, 50);
    let title = format!("{bench} · run {}", run.seq);
    let text = crate::export::histogram::text(&title, b, bar);
    text_box(theme, frame, area, " Distribution ", &text);
}

/// A bench's history from the results store, beside its median in the selected run.
pub fn history(
    state: &crate::model::State,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    run_id: &str,
    bench: &str,
) {
    let live = state
        .runs
        .iter()
        .find(|r| r.id == run_id)
        .and_then(|r| r.record.bench(bench))
        .and_then(|b| b.summary.as_ref())
        .map(|s| s.median);
    let width = (area.width as usize).saturating_sub(40).clamp(8, 60);
    let text = match state.history.as_ref().and_then(|h| h.loaded.as_ref()) {
        None => format!("reading the history of {bench} from the results store…"),
        Some(Err(e)) => e.clone(),
        Some(Ok(all)) => crate::export::history::text(all, live, width),
    };
    text_box(theme, frame, area, " History ", &text);
}

/// A centred box of preformatted text, closed by any key.
fn text_box(theme: &Theme, frame: &mut Frame, area: Rect, title: &str, text: &str) {
    let mut lines: Vec<Line> = text.lines().map(|l| Line::raw(l.to_string())).collect();
    lines.push(Line::styled("any key closes this", theme.dim()));
    let width = lines.iter().map(|l| l.width()).max().unwrap_or(20) as u16 + 2;
    let popup = centered(area, width.max(30), lines.len() as u16 + 2);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title.to_string())
        .border_style(theme.title());
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
