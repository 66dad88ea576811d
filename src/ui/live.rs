use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, LineGauge, Paragraph, Sparkline};

use super::parts::window;
use super::theme::Theme;
use crate::format;
use crate::format::fit;
use crate::model::{Focus, RunState, RunView, State};
use bench_core::measure::stats::quick_median;
use bench_core::measure::trace::Phase;
use bench_core::protocol::results::BenchStatus;

pub fn draw(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some((run, bench)) = state.live_bench() else {
        let mut msg =
            "No run yet. In the catalog: space marks benches, enter runs them.".to_string();
        if let Some(h) = state.harness.describe() {
            msg.push_str(&format!(
                "\n\n{h}: its benches can run once it is built; every other bench runs now."
            ));
        }
        frame.render_widget(
            Paragraph::new(msg)
                .style(theme.dim())
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    };
    let w = area.width as usize;
    let list_h = (run.benches.len() as u16).min((area.height.saturating_sub(2) / 3).max(1));
    let [head, gauge, list, rest] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(list_h),
        Constraint::Min(0),
    ])
    .areas(area);

    let debug = if run.record.is_debug() {
        " · DEBUG BUILD"
    } else {
        ""
    };
    // A run of another target than the one on screen says which.
    let other = if run.target.name != state.target.name {
        format!("{}: ", run.target.name)
    } else {
        String::new()
    };
    let header = format!(
        "{other}run {} · {}{} · {}",
        run.seq,
        run.state.label(),
        debug,
        super::parts::short_knobs(run.target, &run.knobs)
    );
    let style = if run.record.is_debug() {
        theme.error()
    } else {
        theme.accent()
    };
    frame.render_widget(Paragraph::new(Line::styled(fit(&header, w), style)), head);

    let (fraction, eta) = run.progress(state.now);
    let queued = state
        .runs
        .iter()
        .filter(|r| r.state == RunState::Queued)
        .count();
    let queue = if queued > 0 {
        format!(" · {queued} queued, C clears")
    } else {
        String::new()
    };
    let label = match (&run.state, eta) {
        (RunState::Running, Some(eta)) => format!(
            "{:>3.0}% · ETA {:.0} s · c cancels{queue}",
            fraction * 100.0,
            eta.as_secs_f64().ceil()
        ),
        (RunState::Running, None) => {
            format!("{:>3.0}% · c cancels{queue}", fraction * 100.0)
        }
        (s, _) => format!("{:>3.0}% · {}{queue}", fraction * 100.0, s.label()),
    };
    frame.render_widget(
        LineGauge::default()
            .ratio(fraction.clamp(0.0, 1.0))
            .label(label)
            .filled_style(theme.good())
            .unfilled_style(theme.dim()),
        gauge,
    );

    let selected = run.benches.iter().position(|b| b == bench).unwrap_or(0);
    let mut lines = Vec::new();
    for i in window(run.benches.len(), list.height as usize, selected) {
        lines.push(bench_line(
            state,
            theme,
            run,
            &run.benches[i],
            i == selected,
            w,
        ));
    }
    frame.render_widget(Paragraph::new(lines), list);

    // A bench of this run waits for its harness crate: say how far the build is, where the
    // bench's figures will be.
    let build = state.harness.describe().filter(|_| {
        run.state == RunState::Running
            && run
                .benches
                .iter()
                .any(|b| waits_for_harness(run, b).is_some())
    });
    let rest = match build {
        Some(text) if rest.height >= 1 => {
            let [line, below] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(rest);
            frame.render_widget(
                Paragraph::new(Line::styled(fit(&text, w), theme.accent())),
                line,
            );
            below
        }
        _ => rest,
    };
    if rest.height >= 3 {
        let has_phases = run
            .record
            .bench(bench)
            .is_some_and(|b| !b.phase_windows.is_empty());
        if run.target.measure == bench_core::catalog::Measure::Scenario {
            draw_scenario(theme, frame, rest, run, bench);
        } else if has_phases {
            draw_phases(state, theme, frame, rest, run, bench);
        } else {
            draw_chart(state, theme, frame, rest, run, bench);
        }
    }
}

fn bench_line<'a>(
    state: &State,
    theme: &Theme,
    run: &RunView,
    name: &str,
    selected: bool,
    w: usize,
) -> Line<'a> {
    let result = run.record.bench(name);
    let current = run.current.as_ref().is_some_and(|(b, _)| b == name);
    let (glyph, glyph_style) = match result.map(|r| r.status()) {
        Some(BenchStatus::Finished) => ("✓", theme.good()),
        Some(BenchStatus::Failed) => ("✗", theme.error()),
        Some(BenchStatus::Skipped) => ("-", theme.dim()),
        Some(BenchStatus::Running) if current => ("▶", theme.accent()),
        _ => ("·", theme.dim()),
    };
    let estimate = match result {
        Some(r) if r.error.is_some() => "failed".to_string(),
        Some(r) if r.scenario.is_some() || !r.ticks.is_empty() => scenario_line(r),
        Some(r) => match (&r.summary, quick_median(&r.samples)) {
            (Some(s), _) => format!(
                "{} [{}–{}]",
                format::ns(s.median),
                format::ns(s.ci95_median[0]),
                format::ns(s.ci95_median[1])
            ),
            (None, Some((m, [lo, hi]))) => format!(
                "~{} [{}–{}] n={}",
                format::ns(m),
                format::ns(lo),
                format::ns(hi),
                r.samples.len()
            ),
            (None, None) if current => "warming up".to_string(),
            _ => String::new(),
        },
        None => match waits_for_harness(run, name) {
            Some(h) if state.harness.get(h).is_busy() => {
                format!(
                    "waits for the {} harness build",
                    crate::messages::build_name(h)
                )
            }
            _ => String::new(),
        },
    };
    let name_w = 26.min(w.saturating_sub(4));
    let mut line = Line::from(vec![
        Span::styled(format!("{glyph} "), glyph_style),
        Span::raw(format!(
            "{:<name_w$} ",
            crate::format::fit_name(name, name_w)
        )),
        Span::raw(fit(&estimate, w.saturating_sub(name_w + 3))),
    ]);
    if selected && state.focus == Focus::Live {
        line = line.style(theme.selected());
    }
    line
}

/// The build `bench` of `run` waits for, when it has no result yet: its harness crate's, or
/// for a turso bench in a build without turso the core's runner with turso.
fn waits_for_harness(run: &RunView, bench: &str) -> Option<bench_core::catalog::Harness> {
    if run.record.bench(bench).is_some() {
        return None;
    }
    let spec = run.target.spec(bench).ok()?;
    let h = spec.harness();
    let built_apart = !bench_core::TURSO && spec.subject.needs_turso();
    (h != bench_core::catalog::Harness::Core || built_apart).then_some(h)
}

/// A scenario bench in one line: its final figures, or its last window while it runs.
fn scenario_line(r: &bench_core::protocol::results::BenchResult) -> String {
    let p99 = |l: Option<bench_core::measure::stats::Percentiles>| {
        l.map(|l| format::ns(l.p99 as f64))
            .unwrap_or_else(|| "-".into())
    };
    match (&r.scenario, r.ticks.last()) {
        (Some(s), _) => format!(
            "{:.0} reads/s · mean {} · p99 {} · {:.1} writes/s, kept {:.0}% · canary {:.0}%",
            s.reads_per_s,
            format::ns(s.read_mean_ns),
            p99(s.read_latency),
            s.writes_per_s(),
            s.write_completion * 100.0,
            s.canary_ratio * 100.0
        ),
        (None, Some(w)) => format!(
            "~{:.0} reads/s · p99 {} · writes kept {:.0}% · canary {:.0}% · {:.0} s",
            w.reads_per_s,
            p99(w.read_latency),
            w.write_completion * 100.0,
            w.canary_ratio * 100.0,
            w.t_s
        ),
        (None, None) => String::new(),
    }
}

/// A scenario bench over time: reads/s and read p99 per window, and gauges for the writes
/// kept and the canary's health.
fn draw_scenario(theme: &Theme, frame: &mut Frame, area: Rect, run: &RunView, bench: &str) {
    let Some(r) = run.record.bench(bench) else {
        return;
    };
    if r.ticks.is_empty() {
        frame.render_widget(
            Paragraph::new(format!("{bench}: preparing the databases")).style(theme.dim()),
            area,
        );
        return;
    }
    let rows = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .split(area);
    let reads: Vec<u64> = r
        .ticks
        .iter()
        .map(|w| w.reads_per_s.round() as u64)
        .collect();
    let p99: Vec<u64> = r
        .ticks
        .iter()
        .map(|w| w.read_latency.map(|l| l.p99).unwrap_or(0))
        .collect();
    let last = r.ticks.last().expect("not empty");
    let width = area.width as usize;
    let tail = |v: &[u64]| v[v.len().saturating_sub(width)..].to_vec();
    frame.render_widget(
        Paragraph::new(Line::styled(
            fit(
                &format!(
                    "{bench}: reads/s per second (now {:.0}, peak {})",
                    last.reads_per_s,
                    reads.iter().max().copied().unwrap_or(0)
                ),
                width,
            ),
            theme.dim(),
        )),
        rows[0],
    );
    frame.render_widget(
        Sparkline::default().data(tail(&reads)).style(theme.good()),
        rows[1],
    );
    frame.render_widget(
        Paragraph::new(Line::styled(
            fit(
                &format!(
                    "read p99 per second (now {})",
                    last.read_latency
                        .map(|l| format::ns(l.p99 as f64))
                        .unwrap_or_else(|| "no reads".into())
                ),
                width,
            ),
            theme.dim(),
        )),
        rows[2],
    );
    frame.render_widget(
        Sparkline::default().data(tail(&p99)).style(theme.accent()),
        rows[3],
    );
    let (writes, canary) = match &r.scenario {
        Some(s) => (s.write_completion, s.canary_ratio),
        None => (last.write_completion, last.canary_ratio),
    };
    for (row, label, v) in [
        (rows[4], "writes kept", writes),
        (rows[5], "canary", canary),
    ] {
        frame.render_widget(
            LineGauge::default()
                .ratio(v.clamp(0.0, 1.0))
                .label(format!("{label} {:>4.0}%", v * 100.0))
                .filled_style(if v >= 0.9 {
                    theme.good()
                } else {
                    theme.error()
                })
                .unfilled_style(theme.dim()),
            row,
        );
    }
}

/// ns/op of every sample of `bench`, across the runs restarted by knob changes, with a marker
/// where the knobs changed.
fn draw_chart(
    state: &State,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    run: &RunView,
    bench: &str,
) {
    let mut points: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut changes: Vec<f64> = Vec::new();
    let mut x = 0.0;
    for (i, r) in state.lineage(run).into_iter().enumerate() {
        if i > 0 {
            changes.push(x);
        }
        let samples = r
            .record
            .bench(bench)
            .map(|b| b.samples.clone())
            .unwrap_or_default();
        points.push(
            samples
                .iter()
                .map(|v| {
                    x += 1.0;
                    (x, *v)
                })
                .collect(),
        );
    }
    let all = points.iter().flatten();
    let (lo, hi) = all.fold((f64::MAX, 0.0f64), |(lo, hi), (_, y)| {
        (lo.min(*y), hi.max(*y))
    });
    if hi <= 0.0 {
        frame.render_widget(
            Paragraph::new(format!("{bench}: waiting for samples")).style(theme.dim()),
            area,
        );
        return;
    }
    let (lo, hi) = (lo * 0.95, hi * 1.05);
    let change_lines: Vec<Vec<(f64, f64)>> = changes
        .iter()
        .map(|c| vec![(*c + 0.5, lo), (*c + 0.5, hi)])
        .collect();
    let mut datasets: Vec<Dataset> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Dataset::default()
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(if i % 2 == 0 {
                    theme.good()
                } else {
                    theme.accent()
                })
                .data(p)
        })
        .collect();
    for c in &change_lines {
        datasets.push(
            Dataset::default()
                .marker(Marker::Dot)
                .graph_type(GraphType::Line)
                .style(theme.error())
                .data(c),
        );
    }
    let title = if changes.is_empty() {
        format!("{bench}: ns/op per sample")
    } else {
        format!("{bench}: ns/op per sample (red: knobs changed)")
    };
    let chart = Chart::new(datasets)
        .x_axis(Axis::default().bounds([0.0, x.max(1.0)]).style(theme.dim()))
        .y_axis(
            Axis::default()
                .bounds([lo, hi])
                .labels([format::ns(lo), format::ns(hi)])
                .style(theme.dim()),
        )
        .legend_position(None);
    let [t, c] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(
        Paragraph::new(Line::styled(fit(&title, t.width as usize), theme.dim())),
        t,
    );
    frame.render_widget(chart, c);
}

/// One sparkline per phase, on a shared scale so rows compare.
fn draw_phases(
    state: &State,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    run: &RunView,
    bench: &str,
) {
    let _ = state;
    let Some(result) = run.record.bench(bench) else {
        return;
    };
    let windows = &result.phase_windows;
    let max = windows
        .iter()
        .flat_map(|w| w.values())
        .fold(0.0f64, |a, b| a.max(*b))
        .max(1.0);
    // One row each, top down, as many as fit (a layout solver would drop rows anywhere).
    let rows: Vec<Rect> = (0..=Phase::ALL.len() as u16)
        .take_while(|i| *i < area.height)
        .map(|i| Rect {
            y: area.y + i,
            height: 1,
            ..area
        })
        .collect();
    frame.render_widget(
        Paragraph::new(Line::styled(
            fit(
                &format!(
                    "{bench}: ns/op by phase, bars per window 0–{}, figures the mean (as exported)",
                    format::ns(max)
                ),
                area.width as usize,
            ),
            theme.dim(),
        )),
        rows[0],
    );
    for (i, phase) in Phase::ALL.iter().enumerate() {
        let Some(row) = rows.get(i + 1).copied() else {
            break;
        };
        let [label, spark, value] = Layout::horizontal([
            Constraint::Length(16),
            Constraint::Min(0),
            Constraint::Length(10),
        ])
        .areas(row);
        let data: Vec<u64> = windows
            .iter()
            .map(|w| w.get(phase).copied().unwrap_or(0.0).round() as u64)
            .collect();
        // The mean over every traced lookup so far (weighted by ops): the export's figure.
        let mean = result.phases.get(phase).copied().unwrap_or(0.0);
        let shown = &data[data.len().saturating_sub(spark.width as usize)..];
        frame.render_widget(
            Paragraph::new(Span::styled(phase.label(), theme.phase(i))),
            label,
        );
        frame.render_widget(
            Sparkline::default()
                .data(shown.iter().copied())
                .max(max.round() as u64)
                .style(theme.phase(i)),
            spark,
        );
        frame.render_widget(Paragraph::new(format!("{:>10}", format::ns(mean))), value);
    }
}
