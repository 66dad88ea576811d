//! The markdown snapshot: what a user pastes into a PR.

use std::fmt::Write;

use bench_core::measure::trace::Phase;
use bench_core::protocol::DEBUG_WARNING;
use bench_core::protocol::results::RunRecord;

use super::Report;
use super::layout::md_table;
use super::table::{comparison_cells, notes};
use crate::format;

fn phase_table(out: &mut String, run: &RunRecord) {
    let traced: Vec<_> = run
        .benches
        .iter()
        .filter(|b| !b.phases.is_empty())
        .collect();
    if traced.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nPhase breakdown (mean per lookup over the traced lookups, each phase corrected by the calibrated cost of the timer read at its edge; their sum is a mean, shown beside the measured mean):\n"
    );
    let mut headers = vec!["bench".to_string()];
    headers.extend(Phase::ALL.iter().map(|p| p.label().to_string()));
    headers.push("sum".into());
    headers.push("mean/op".into());
    headers.push("sum vs mean".into());
    let rows: Vec<Vec<String>> = traced
        .iter()
        .map(|b| {
            let mut r = vec![b.name.raw().to_string()];
            r.extend(Phase::ALL.iter().map(|p| {
                b.phases
                    .get(p)
                    .map(|v| format::ns(*v))
                    .unwrap_or_else(|| "-".into())
            }));
            let sum: f64 = b.phases.values().sum();
            r.push(format::ns(sum));
            match &b.summary {
                Some(s) => {
                    r.push(format::ns(s.mean));
                    r.push(format!("{:+.1}%", (sum / s.mean - 1.0) * 100.0));
                }
                None => r.extend(["-".to_string(), "-".to_string()]),
            }
            r
        })
        .collect();
    md_table(out, &headers, &rows, 1);
}

fn environment(out: &mut String, run: &RunRecord) {
    // A profiled run starts a runner per bench: each harness's environment is shown once.
    let mut harnesses: Vec<&str> = Vec::new();
    for s in run.starts() {
        if !harnesses.contains(&s.harness.as_str()) {
            harnesses.push(&s.harness);
        }
    }
    let several = harnesses.len() > 1;
    for h in harnesses {
        if let Some(s) = run.starts().find(|s| s.harness == h) {
            environment_of(out, s, several);
        }
    }
    if let Some(m) = &run.machine {
        let others = m
            .others_cores
            .map(|o| format!("{o:.2} cores used by other processes"))
            .unwrap_or_else(|| "other processes not measured".into());
        let steal = m
            .steal
            .map(|s| format!(", steal {:.1}%", s * 100.0))
            .unwrap_or_default();
        let idle = m
            .cpu_idle
            .as_ref()
            .map(|i| format!("; {}", i.describe()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "- machine while measuring: load average {:.2} at the start, {:.2} at the end; {others}{steal}; waited {:.1} s for another measurement{idle}",
            m.load_start, m.load_end, m.waited_s
        );
    }
}

fn environment_of(out: &mut String, s: &bench_core::protocol::Start, several: bool) {
    let e = &s.env;
    if s.from_criterion() {
        let _ = writeln!(
            out,
            "\nRead from a Criterion folder: its environment, knobs and budget are not recorded there."
        );
        return;
    }
    if several {
        let _ = writeln!(
            out,
            "\nEnvironment ({} harness):\n",
            bench_core::text::md_cell(&s.harness)
        );
    } else {
        let _ = writeln!(out, "\nEnvironment:\n");
    }
    let _ = writeln!(
        out,
        "- build profile: {}{}",
        e.profile.md_cell(),
        if e.is_debug() {
            format!(" (**{DEBUG_WARNING}**)")
        } else {
            String::new()
        }
    );
    let _ = writeln!(out, "- SQLite {}", e.sqlite.md_cell());
    let crates: Vec<String> = e
        .crates
        .iter()
        .map(|(k, v)| format!("{} {}", k.md_cell(), v.md_cell()))
        .collect();
    let _ = writeln!(out, "- crates: {}", crates.join(", "));
    let _ = writeln!(
        out,
        "- CPU: {} ({} cores), {}",
        e.cpu.md_cell(),
        e.cores,
        e.os.md_cell()
    );
    if let Some(c) = &e.cpus {
        let _ = writeln!(
            out,
            "- runners confined to CPU {} (--cpus)",
            bench_core::units::cpu_list(c)
        );
    }
    let _ = writeln!(out, "- timer read: {:.1} ns", e.timer_ns);
    for (k, v) in &e.settings {
        let _ = writeln!(out, "- {}: {}", k.md_line(), v.md_cell());
    }
    let _ = writeln!(
        out,
        "- dataset seed: {:#x}; trace: {}",
        s.seed,
        if s.trace { "on" } else { "off" }
    );
    let b = &s.budget;
    let _ = writeln!(
        out,
        "- budget per bench: {} s warm-up, {} s{}, {}..{} samples",
        b.warmup_s,
        b.time_s,
        super::table::own_times(b).md_cell(),
        b.min_samples,
        b.max_samples
    );
}

pub fn render(report: &Report<'_>) -> String {
    let mut out = String::new();
    let target = report
        .runs
        .iter()
        .find_map(|r| r.start.as_ref())
        .map(|s| s.target.md_cell())
        .unwrap_or_else(|| "?".into());
    let _ = writeln!(out, "## benchscope: {target}\n");
    let processes = report
        .runs
        .iter()
        .map(super::table::processes)
        .max()
        .unwrap_or(1);
    if processes > 1 {
        let _ = writeln!(
            out,
            "Generated {}. Medians per operation and ratios to {}, each the geometric mean over {processes} runner processes, with the 95% interval of where a repeat of the run lands.",
            bench_core::text::md_cell(report.generated_at),
            super::table::baseline_label(report).md_cell()
        );
    } else {
        let _ = writeln!(
            out,
            "Generated {}. Medians per operation with bootstrap 95% CIs; ratios to {} with bootstrap 95% intervals.",
            bench_core::text::md_cell(report.generated_at),
            super::table::baseline_label(report).md_cell()
        );
    }
    let with_cost = report.runs.iter().any(|r| {
        r.benches
            .iter()
            .any(|b| b.summary.as_ref().is_some_and(|s| s.cost.is_some()))
    });
    if with_cost {
        let _ = writeln!(out, "\n{COST_LEGEND}");
    }
    let with_memory = report.runs.iter().any(|r| {
        r.benches
            .iter()
            .any(|b| b.summary.as_ref().is_some_and(|s| s.memory.is_some()))
    });
    if with_memory {
        let _ = writeln!(out, "\n{MEMORY_LEGEND}");
    }
    if let Some(n) = report.baseline_number() {
        let _ = writeln!(
            out,
            "\nChanges are against run {n}: ▼ improved / ▲ regressed / ≈ within noise / ? cannot tell, decided on runs made the same way: with repeats (three runs on a side, or two on each) by the run-to-run variation they measure (Welch's t-test of log medians, or Student's pooled test when a side has one run; alpha 0.01); with one run a side by their samples (Mann-Whitney) and only beyond the {:.0}% a run can move by; never within the {:.0}% noise threshold. ≠ marks runs made differently (knobs, trace, build, SQLite, CPU): the change is shown, not judged.",
            report.settings.single_run_margin * 100.0,
            report.settings.noise * 100.0
        );
    }
    if report.runs.iter().any(|r| r.is_debug()) {
        let _ = writeln!(out, "\n> **WARNING: {DEBUG_WARNING}**");
    }
    for (i, run) in report.runs.iter().enumerate() {
        let knobs = run
            .start
            .as_ref()
            .map(|s| bench_core::text::md_cell(&s.knobs.to_string()))
            .unwrap_or_default();
        let incomplete = if run.done { "" } else { " (incomplete)" };
        let debug = match (run.is_debug(), run.profiled) {
            (true, true) => " (DEBUG build, profiled)",
            (true, false) => " (DEBUG build)",
            (false, true) => " (profiled: timings include perf)",
            (false, false) => "",
        };
        let base = if report.baseline_run == Some(i) {
            " (baseline run)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "\n### Run {}{base}{debug}{incomplete}: {knobs}\n",
            report.number(i)
        );
        let (headers, rows) = if super::scenario::is_scenario(run) {
            super::scenario::cells(run)
        } else {
            comparison_cells(report, i)
        };
        md_table(&mut out, &headers, &rows, 2);
        let problems = notes(run, &report.baselines());
        if !problems.is_empty() {
            let _ = writeln!(out);
            for p in problems {
                let _ = writeln!(out, "- {}", p.md_line());
            }
        }
        if let Some(m) = report.matrix(i) {
            out.push_str(&super::layout::section_markdown(&m));
        }
        if let Some(s) = bench_core::workloads::sections_of(run).and_then(|w| w.section(run)) {
            out.push_str(&super::layout::section_markdown(&s));
        }
        out.push_str(&super::profiles::markdown(run));
        phase_table(&mut out, run);
        environment(&mut out, run);
    }
    if report.runs.len() > 1 && !report.runs.iter().any(super::scenario::is_scenario) {
        side_by_side(&mut out, report);
    }
    if let Some(m) = super::scenario::matrix(report.runs) {
        out.push_str(&m.markdown());
    }
    for r in report.repeats() {
        out.push_str(&r.markdown(&|i| report.number(i)));
    }
    if let Some(sc) = report.scaling() {
        out.push_str(&sc.markdown());
    }
    match &report.charts {
        Some(Ok(charts)) if !charts.is_empty() => {
            let _ = writeln!(out, "\n### Charts\n");
            for (caption, file) in charts {
                let _ = writeln!(
                    out,
                    "![{}]({})\n",
                    bench_core::text::md_alt(caption),
                    super::layout::link_destination(file)
                );
            }
        }
        Some(Err(why)) => {
            let _ = writeln!(out, "\n_{why}_");
        }
        _ => {}
    }
    out
}

/// What the cost columns hold, for readers of an export.
pub const MEMORY_LEGEND: &str = "allocs/op: allocations (alloc and alloc_zeroed) per operation by every thread of the runner process, counted by its global allocator; bytes/op: bytes handed out per operation (each allocation's size, and what each reallocation grew by); peak: the most bytes live at once above a sample's start; allocs vs: allocations per operation over the baseline's (the difference, +n, where the baseline makes none). Counted at sample edges, untimed work of a pass included. SQLite's own allocations are among them (its memory methods allocate through the same allocator; the run's memory setting says where not).";
pub const COST_LEGEND: &str = "CPU/op: CPU time (user + system) of the whole runner process, every thread, per operation; CPU/wall: that CPU time over the wall time of the same samples (2.00 = two cores busy throughout); switches/op: context switches (voluntary + involuntary) per operation. Read with getrusage at sample edges; per operation is the samples' rate over the timed time of one operation.";

/// Medians of every bench across runs, one column per run, with the verdict mark against the
/// baseline run when there is one.
fn side_by_side(out: &mut String, report: &Report<'_>) {
    let runs = report.runs;
    let _ = writeln!(out, "\n### Side by side (median per op)\n");
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        for b in &r.benches {
            if !names.contains(&b.name.raw()) {
                names.push(b.name.raw());
            }
        }
    }
    let mut headers = vec!["bench".to_string()];
    headers.extend((0..runs.len()).map(|i| format!("run {}", report.number(i))));
    let rows: Vec<Vec<String>> = names
        .iter()
        .map(|n| {
            let mut row = vec![n.to_string()];
            row.extend(runs.iter().enumerate().map(|(i, r)| {
                let Some(s) = r.bench(n).and_then(|b| b.summary.as_ref()) else {
                    return "-".into();
                };
                match report.change(i, n) {
                    Some(c) => format!("{} {}", format::ns(s.median), format::change(c)),
                    None => format::ns(s.median),
                }
            }));
            row
        })
        .collect();
    md_table(out, &headers, &rows, 1);
}
