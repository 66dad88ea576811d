use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::parts::window;
use super::theme::Theme;
use crate::format;
use crate::format::fit;
use crate::model::{Focus, RunState, RunView, State};
use bench_core::compare::Band;
use bench_core::measure::stats::quick_median;
use bench_core::measure::trace::Phase;
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
    draw_detail(
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

/// A profiled bench: its CPU by layer as a stacked bar with the shares, its top frames by self
/// time, and where the flamegraph is (or why there is none).
fn profile_lines(
    p: &bench_core::profile::Profile,
    theme: &Theme,
    width: usize,
) -> Vec<Line<'static>> {
    use bench_core::profile::Layer;
    if let Some(e) = &p.error {
        return vec![Line::styled(format!("no profile: {e}"), theme.error())];
    }
    const BAR: usize = 30;
    let mut spans = vec![Span::raw("CPU by layer ")];
    let mut legend = Vec::new();
    let mut used = 0usize;
    for (i, layer) in Layer::ALL.iter().enumerate() {
        let share = p.share(*layer);
        if share == 0.0 {
            continue;
        }
        let cells = ((share * BAR as f64).round() as usize).min(BAR - used);
        used += cells;
        let style = if *layer == Layer::Other {
            theme.dim()
        } else {
            theme.phase(i)
        };
        let glyph = theme.phase_glyph(i);
        spans.push(Span::styled(glyph.to_string().repeat(cells), style));
        legend.push(Span::styled(
            format!(" {} {:.0}%", layer.label(), share * 100.0),
            style,
        ));
    }
    spans.extend(legend);
    let top = crate::export::profiles::top_line(p, 3, 40);
    let svg = p.flamegraph.as_deref().unwrap_or("-");
    let mut lines = vec![
        Line::from(spans),
        Line::raw(format::fit(&format!("top: {top}"), width)),
        Line::styled(
            format::fit(&format!("flamegraph {svg} (on-CPU only)"), width),
            theme.dim(),
        ),
    ];
    if let Some(a) = &p.allocations {
        let layers: Vec<String> = Layer::ALL
            .iter()
            .filter(|l| a.share(**l) > 0.0)
            .map(|l| format!("{} {:.0}%", l.label(), a.share(*l) * 100.0))
            .collect();
        lines.push(Line::raw(format::fit(
            &format!("allocations by layer: {}", layers.join(", ")),
            width,
        )));
        lines.push(Line::raw(format::fit(
            &format!(
                "top callers: {}",
                crate::export::profiles::alloc_top_line(a, 3, 40)
            ),
            width,
        )));
        if let Some(svg) = &a.flamegraph {
            lines.push(Line::styled(
                format::fit(&format!("allocation flamegraph {svg}"), width),
                theme.dim(),
            ));
        }
    }
    lines
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

fn draw_detail(
    state: &State,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    bench: Option<&str>,
    baseline_run: Option<&RunView>,
) {
    let (Some(bench), Some(run)) = (bench, state.target_runs().nth(state.compare.col)) else {
        return;
    };
    let mut lines = Vec::new();
    let result = run.record.bench(bench);
    let cell = state.compare.analysis.cell(&run.id, bench);
    let head = if let Some(s) = result.and_then(|r| r.scenario.as_ref()) {
        format!(
            "{bench} · run {}: {:.0} reads/s (mean {}, p50 {}, p99 {}) · writes {} of {:.0} ({:.0}%, {:.1}/s) · canary {:.0}%, worst {} late · CPU/read {} · {:.1} s",
            run.seq,
            s.reads_per_s,
            format::ns(s.read_mean_ns),
            s.read_latency
                .map(|l| format::ns(l.p50 as f64))
                .unwrap_or_else(|| "-".into()),
            s.read_latency
                .map(|l| format::ns(l.p99 as f64))
                .unwrap_or_else(|| "-".into()),
            s.writes,
            s.writes_expected,
            s.write_completion * 100.0,
            s.writes_per_s(),
            s.canary_ratio * 100.0,
            format::ns(s.canary_worst_late_ns as f64),
            format::ns(s.cpu_per_read_ns),
            s.elapsed_s
        )
    } else {
        match result.and_then(|r| r.summary.as_ref()) {
            Some(s) => {
                let mut t = format!(
                    "{bench} · run {}: {} [{}–{}]",
                    run.seq,
                    format::ns(s.median),
                    format::ns(s.ci95_median[0]),
                    format::ns(s.ci95_median[1])
                );
                // Across processes the interval is where a repeat of the run lands.
                if s.processes.len() > 1 {
                    t.push_str(&format!(
                        " (the next run's 95%, across {} processes{})",
                        s.processes.len(),
                        match bench_core::measure::processes::one_process_enough(&s.processes) {
                            Some(true) => ", which agreed within their own intervals",
                            _ => "",
                        }
                    ));
                }
                if let Some(l) = s.latency {
                    t.push_str(&format!(" · p99 {}", format::ns(l.p99 as f64)));
                }
                if let Some(cell) = cell {
                    let base = &cell.base;
                    if bench != base
                        && let Some(r) = &cell.ratio
                    {
                        t.push_str(&format!(
                            " · {} ({}) vs {base}{}",
                            format::ratio(r),
                            format::overhead_pct(r),
                            if cell.unpaired {
                                ", unpaired (its own harness's runner, after the rounds)"
                            } else {
                                ""
                            }
                        ));
                    }
                    if let Some(n) = result
                        .map(|r| r.ops)
                        .filter(|_| base != state.compare.baseline_bench)
                    {
                        t.push_str(&format!(" · {n} per pass"));
                    }
                }
                if let Some(c) = cell.and_then(|c| c.change.as_ref()) {
                    t.push_str(&format!(
                        " · {} vs run {}",
                        format::verdict(c).terminal(),
                        baseline_run.map(|b| b.seq).unwrap_or(0)
                    ));
                    if c.differs.is_empty() && !c.basis.is_empty() {
                        t.push_str(&format!(" ({})", c.basis));
                    }
                }
                t
            }
            None => match (
                result.and_then(|r| r.error.clone()),
                result.and_then(|r| r.skipped.clone()),
            ) {
                (Some(e), _) => format!("{bench} · run {}: failed: {e}", run.seq),
                (None, Some(why)) => format!("{bench} · run {}: skipped: {why}", run.seq),
                (None, None) => format!("{bench} · run {}: no result yet", run.seq),
            },
        }
    };
    lines.push(Line::raw(head));
    if let Some(c) = result
        .and_then(|r| r.summary.as_ref())
        .and_then(|s| s.cost.as_ref())
    {
        lines.push(Line::raw(format::cost_line(c)));
    }
    if let Some(m) = result
        .and_then(|r| r.summary.as_ref())
        .and_then(|s| s.memory.as_ref())
    {
        let mut line = format::memory_line(m);
        // Beside the baseline bench's, as the time is.
        if let Some(cell) = cell.filter(|c| c.base != bench)
            && let Some(base) = run
                .record
                .bench(&cell.base)
                .and_then(|r| r.summary.as_ref()?.memory)
        {
            line.push_str(&format!(
                " · {}: {} allocations, {} per op ({})",
                cell.base,
                format::count(base.allocs_per_op),
                format::bytes(base.bytes_per_op),
                format::memory_vs(&bench_core::compare::MemoryVsBase::of(m, &base)),
            ));
        }
        lines.push(Line::raw(line));
    } else if let Some(why) = run
        .record
        .starts()
        .find_map(|s| s.env.settings.get(&bench_core::text::Text::from("memory")))
        .filter(|w| w.raw().starts_with("not counted"))
    {
        lines.push(Line::raw(format!("memory: {}", why.terminal())));
    }
    if let Some(p) = result.and_then(|r| r.profile.as_ref()) {
        lines.extend(profile_lines(p, theme, area.width as usize));
    }
    if let Some(line) = cell.and_then(|c| c.workload.as_ref()) {
        lines.push(Line::raw(line.terminal().to_string()));
    }
    let mut notes: Vec<String> = Vec::new();
    if let Some(s) = result.and_then(|r| r.summary.as_ref()) {
        notes.extend(s.warnings.iter().cloned());
    }
    notes.extend(run.record.machine_notes());
    if let Some(switches) = result.and_then(crate::export::table::hands_off)
        && crate::export::table::moves_with_hand_offs(&run.record)
    {
        notes.push(format!(
            "hands its query to another thread ({switches:.1} switches/op): on every CPU its ratio moves from run to run with how soon a CPU takes the work (docs/src/numbers.md, \"Where runners run\"); --cpus 0 measures it on one CPU"
        ));
    }
    if let Some(st) = result.and_then(|r| r.statements.as_ref()) {
        notes.push(st.describe());
    }
    let differs = bench_core::compare::settings_differences(&run.record, bench);
    if !differs.is_empty() {
        notes.push(format!(
            "SQLite settings differ: {}",
            bench_core::text::Text::join(&differs, ", ").terminal()
        ));
    }
    // How the median moves between runs made with the same settings.
    if let Some(sp) = cell.and_then(|c| c.spread) {
        let mut note = format!(
            "across {} runs with these knobs: {}–{} ({:.0}% apart)",
            sp.runs,
            format::ns(sp.min),
            format::ns(sp.max),
            sp.relative() * 100.0
        );
        if let Some(r) = cell.and_then(|c| c.ratio_spread) {
            note.push_str(&format!(
                ", its ratio {} ({:.1}% apart)",
                format::ratio_range(&r),
                r.relative() * 100.0
            ));
        }
        notes.push(note);
    }
    if !notes.is_empty() {
        lines.push(Line::styled(notes.join(" · "), theme.accent()));
    }
    if let RunState::Failed(e) = &run.state {
        lines.push(Line::styled(
            format!("run failed: {}", e.lines().next().unwrap_or("")),
            theme.error(),
        ));
    }
    lines.push(Line::styled(
        format!(
            "run {}: {}",
            run.seq,
            super::parts::short_knobs(run.target, &run.knobs)
        ),
        theme.dim(),
    ));
    if let Some(src) = &run.record.source {
        lines.push(Line::styled(
            format!("run {} read from {src}", run.seq),
            theme.dim(),
        ));
    }
    if let Some(r) = result.filter(|r| !r.phases.is_empty()) {
        let total: f64 = r.phases.values().sum();
        if let Some(s) = &r.summary {
            lines.push(Line::styled(
                format!(
                    "phases sum {} · mean {} ({:+.1}%)",
                    format::ns(total),
                    format::ns(s.mean),
                    (total / s.mean - 1.0) * 100.0
                ),
                theme.dim(),
            ));
        }
        let width = area.width as usize;
        let mut bar = Vec::new();
        let mut legend = Vec::new();
        // Cells by cumulative share, so that the bar fills the width exactly (rounding each
        // phase on its own could overflow the line).
        let mut before = 0.0;
        let mut drawn = 0usize;
        for (i, p) in Phase::ALL.iter().enumerate() {
            let v = r.phases.get(p).copied().unwrap_or(0.0);
            before += v;
            let end = ((before / total.max(1.0)) * width as f64).round() as usize;
            let n = end.min(width).saturating_sub(drawn);
            drawn += n;
            bar.push(Span::styled(
                theme.phase_glyph(i).to_string().repeat(n),
                theme.phase(i),
            ));
            legend.push(Span::styled(
                glue(&format!("{} {} ", p.label(), format::ns(v))).replacen(' ', "\u{a0}", 1),
                theme.phase(i),
            ));
        }
        lines.push(Line::from(bar));
        lines.push(Line::from(legend));
    }
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|l| {
            let spans: Vec<Span> = l
                .spans
                .into_iter()
                .map(|sp| Span::styled(glue(&sp.content), sp.style))
                .collect();
            Line::from(spans).style(l.style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}

/// Keeps a figure on one line when the detail wraps: a number with its unit, a ± with its
/// error, a ratio with its interval, "p99" with its value (non-breaking spaces, which the
/// wrapping never splits at and the terminal shows as spaces).
fn glue(text: &str) -> String {
    const NB: &str = "\u{a0}";
    let mut out = text.to_string();
    for unit in ["ns", "µs", "ms", "s", "%", "x", "cores", "switches/op"] {
        for end in [" ", ",", ")", "]", ";", "/"] {
            out = out.replace(&format!(" {unit}{end}"), &format!("{NB}{unit}{end}"));
        }
        if out.ends_with(&format!(" {unit}")) {
            let cut = out.len() - unit.len() - 1;
            out = format!("{}{NB}{unit}", &out[..cut]);
        }
    }
    for (from, to) in [
        (" ± ", "\u{a0}±\u{a0}"),
        ("x [", "x\u{a0}["),
        ("p99 ", "p99\u{a0}"),
        ("CPU ", "CPU\u{a0}"),
    ] {
        out = out.replace(from, to);
    }
    out
}
