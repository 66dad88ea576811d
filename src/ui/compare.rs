use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::parts::window;
use super::theme::Theme;
use crate::format;
use crate::format::fit;
use crate::model::{Focus, RunState, RunView, State};
use bench_core::compare::Band;
use bench_core::measure::stats::quick_median;
use bench_core::protocol::results::BenchStatus;

const COL_W: usize = 16;

pub fn draw(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    if state.compare.matrix {
        return super::matrix::draw(state, theme, frame, area);
    }
    let rows = state.compare_rows();
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new("Finished runs stay here as columns, side by side.").style(theme.dim()),
            area,
        );
        return;
    }
    // The detail grows with the panel: cost, memory and a profile's lines under the figures.
    let detail_h = if area.height >= 24 {
        12
    } else if area.height >= 12 {
        5
    } else {
        2
    };
    let [table, detail] =
        Layout::vertical([Constraint::Min(2), Constraint::Length(detail_h)]).areas(area);
    let w = table.width as usize;
    let name_w = (w / 3).clamp(14, 26);
    let cols_fit = (w.saturating_sub(name_w) / COL_W).max(1);
    let runs: Vec<&RunView> = state.target_runs().collect();
    // Runs read from Criterion (no knobs) say where they come from instead.
    let measured: Vec<&RunView> = runs
        .iter()
        .copied()
        .filter(|r| !r.record.from_criterion())
        .collect();
    let varied = varied_knobs(&measured);
    let col_range = window(runs.len(), cols_fit, state.compare.col);
    let focused = state.focus == Focus::Compare;
    let baseline_run = state.baseline_run();

    let mut header = vec![Span::styled(
        format!("{:<name_w$}", fit("bench (* base)", name_w)),
        theme.dim(),
    )];
    for ci in col_range.clone() {
        let r = &runs[ci];
        let base = if baseline_run.is_some_and(|b| b.id == r.id) {
            "*"
        } else {
            ""
        };
        // A finished column is headed by what differs between the runs (a sweep's value).
        let what = if r.record.is_debug() {
            "DEBUG".to_string()
        } else if r.profiled {
            "perf".to_string()
        } else if r.record.from_criterion() {
            r.record
                .start
                .as_ref()
                .map(|s| s.harness.clone())
                .unwrap_or_else(|| "saved".into())
        } else if r.state == RunState::Finished && !varied.is_empty() {
            let named = varied_values(r, &varied, true);
            // Too long to read whole: the values alone (`exclusive`, `20000`).
            if format!("#{}{base} {named}", r.seq).chars().count() < COL_W {
                named
            } else {
                varied_values(r, &varied, false)
            }
        } else {
            short_state(&r.state).to_string()
        };
        let text = format!(
            "{:>COL_W$}",
            fit(&format!("#{}{base} {what}", r.seq), COL_W - 1)
        );
        let mut style = if r.record.is_debug() {
            theme.error()
        } else {
            theme.accent()
        };
        if focused && ci == state.compare.col {
            style = style.add_modifier(Modifier::UNDERLINED);
        }
        header.push(Span::styled(text, style));
    }
    let mut lines = vec![Line::from(header)];
    let body_h = table.height.saturating_sub(1) as usize;
    for ri in window(rows.len(), body_h, state.compare.row) {
        let name = rows[ri];
        let base = if name == state.compare.baseline_bench {
            "*"
        } else {
            " "
        };
        let mut spans = vec![Span::raw(format!(
            "{:<w$}{base}",
            format::fit_name(name, name_w - 1),
            w = name_w - 1
        ))];
        for ci in col_range.clone() {
            let mut style = ratatui::style::Style::default();
            if focused && ri == state.compare.row && ci == state.compare.col {
                style = theme.selected();
            }
            let text = fit(&cell(state, runs[ci], name), COL_W - 1);
            if let Some(band) = band(state, runs[ci], name) {
                style = style.patch(theme.band(band));
            }
            spans.push(Span::styled(format!("{text:>COL_W$}"), style));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), table);
    super::detail::draw_detail(
        state,
        theme,
        frame,
        detail,
        rows.get(state.compare.row).copied(),
        baseline_run,
    );
}

/// The knobs (and trace) whose values differ between the runs shown.
fn varied_knobs(runs: &[&RunView]) -> Vec<&'static str> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = first
        .target
        .knobs
        .iter()
        .map(|k| k.name)
        .filter(|k| runs.iter().any(|r| r.knobs.get(k) != first.knobs.get(k)))
        .collect();
    if runs.iter().any(|r| r.trace != first.trace) {
        out.push("trace");
    }
    out
}

/// A run's values of the varied knobs: `c=4 rows=20000 trace`, or without the names.
fn varied_values(run: &RunView, varied: &[&str], named: bool) -> String {
    varied
        .iter()
        .filter_map(|k| match (*k, named) {
            ("trace", _) => run.trace.then(|| "trace".to_string()),
            ("concurrency", true) => run.knobs.get(k).map(|v| format!("c={v}")),
            (_, true) => run.knobs.get(k).map(|v| format!("{k}={v}")),
            (_, false) => run.knobs.get(k).map(|v| v.to_string()),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn short_state(s: &RunState) -> &'static str {
    match s {
        RunState::Queued => "queued",
        RunState::Running => "running",
        RunState::Finished => "done",
        RunState::Cancelled => "cancel",
        RunState::Superseded => "knobs↻",
        RunState::Failed(_) => "failed",
    }
}

/// How heavy a per-operation overhead is, for benches compared with their own baseline bench
/// (crud_overhead: the same operation on rusqlite).
fn band(state: &State, run: &RunView, bench: &str) -> Option<Band> {
    state.compare.analysis.cell(&run.id, bench)?.band
}

fn cell(state: &State, run: &RunView, bench: &str) -> String {
    if !run.benches.iter().any(|b| b == bench) {
        return String::new();
    }
    let Some(result) = run.record.bench(bench) else {
        return if run.state.is_active() {
            "·".into()
        } else {
            "—".into()
        };
    };
    if let Some(s) = &result.scenario {
        return format!("{:.0}/s {:.0}%", s.reads_per_s, s.write_completion * 100.0);
    }
    match result.status() {
        BenchStatus::Failed => "failed".into(),
        BenchStatus::Skipped => "skipped".into(),
        BenchStatus::Running => match quick_median(&result.samples) {
            Some((m, _)) if run.state == RunState::Running => format!("~{}…", format::ns(m)),
            Some((m, _)) => format!("~{} part", format::ns(m)),
            None => "…".into(),
        },
        BenchStatus::Finished => {
            let s = result.summary.as_ref().expect("finished has a summary");
            let Some(cell) = state.compare.analysis.cell(&run.id, bench) else {
                // Finished since the last analysis (at most a frame ago).
                return format!("{} …", format::ns(s.median));
            };
            let ratio = if bench == cell.base {
                "base".to_string()
            } else {
                cell.ratio
                    .map(|r| format::ratio_short(r.value))
                    .unwrap_or_default()
            };
            let mark = cell
                .change
                .as_ref()
                .map(|c| {
                    let mark = if c.differs.is_empty() {
                        c.verdict.mark()
                    } else {
                        "≠"
                    };
                    format!(" {mark}")
                })
                .unwrap_or_default();
            format!("{} {ratio}{mark}", format::ns(s.median))
        }
    }
}
