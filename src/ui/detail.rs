//! The comparison's detail line: the figure of the bench under the cursor in the run under
//! it, with its interval, ratio and verdict, its cost and memory, its profile, notes and
//! phases.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::theme::Theme;
use crate::analysis::Cell;
use crate::format;
use crate::model::{RunState, RunView, State};
use bench_core::measure::trace::Phase;
use bench_core::protocol::results::BenchResult;

pub(super) fn draw_detail(
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
    let head = detail_head(state, run, bench, result, cell, baseline_run);
    lines.push(Line::raw(head));
    if let Some(c) = result
        .and_then(|r| r.summary.as_ref())
        .and_then(|s| s.cost.as_ref())
    {
        lines.push(Line::raw(format::cost_line(c)));
    }
    lines.extend(memory_detail(run, bench, result, cell));
    if let Some(p) = result.and_then(|r| r.profile.as_ref()) {
        lines.extend(profile_lines(p, theme, area.width as usize));
    }
    if let Some(line) = cell.and_then(|c| c.workload.as_ref()) {
        lines.push(Line::raw(line.terminal().to_string()));
    }
    let notes = detail_notes(run, bench, result, cell);
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
        lines.extend(phase_lines(r, theme, area.width as usize));
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

/// The detail's first line: the bench's figure in its run (a scenario's, a median with its
/// interval, ratio, verdict), or why it has none.
fn detail_head(
    state: &State,
    run: &RunView,
    bench: &str,
    result: Option<&BenchResult>,
    cell: Option<&Cell>,
    baseline_run: Option<&RunView>,
) -> String {
    if let Some(s) = result.and_then(|r| r.scenario.as_ref()) {
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
    }
}

/// The bench's allocations beside its baseline bench's, or why memory was not counted.
fn memory_detail<'a>(
    run: &RunView,
    bench: &str,
    result: Option<&BenchResult>,
    cell: Option<&Cell>,
) -> Option<Line<'a>> {
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
        Some(Line::raw(line))
    } else {
        run.record
            .starts()
            .find_map(|s| s.env.settings.get(&bench_core::text::Text::from("memory")))
            .filter(|w| w.raw().starts_with("not counted"))
            .map(|why| Line::raw(format!("memory: {}", why.terminal())))
    }
}

/// What the detail notes of the bench in its run: warnings, the machine, hand-offs,
/// statements, settings that differ, the spread across runs with these knobs.
fn detail_notes(
    run: &RunView,
    bench: &str,
    result: Option<&BenchResult>,
    cell: Option<&Cell>,
) -> Vec<String> {
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
    notes
}

/// The phases of a traced bench: their sum against its mean, a bar of their shares filling
/// `width`, and its legend.
fn phase_lines<'a>(r: &BenchResult, theme: &Theme, width: usize) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
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
    lines
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
