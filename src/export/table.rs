//! The plain-text comparison table printed by `benchscope run`.

use bench_core::compare::settings_differences;
use bench_core::protocol::DEBUG_WARNING;
use bench_core::protocol::results::RunRecord;

use bench_core::text;
use bench_core::text::Text;

use super::Report;
use crate::format;

/// Columns of a comparison, shared by the text and markdown tables. Fan-out targets also
/// show throughput; with a baseline run, every other run shows its change and verdict.
pub fn comparison_cells(report: &Report<'_>, index: usize) -> (Vec<Text>, Vec<Vec<Text>>) {
    let run = &report.runs[index];
    let baselines = report.baselines();
    let against = report
        .baseline_number()
        .filter(|_| report.baseline_run != Some(index));
    let throughput = run
        .start
        .as_ref()
        .and_then(|s| bench_core::workloads::find(s.target.raw()).ok())
        .is_some_and(|t| t.is_throughput());
    // Across processes, an interval says where the next run lands: the header names them.
    let unit = match processes(run) {
        1 => String::new(),
        p => format!(", {p} processes"),
    };
    let mut headers: Vec<String> = [
        "bench",
        "backend",
        "median/op",
        &format!("95% CI (median{unit})"),
        "p99/op",
        "mean ± sd",
        "min … max",
        &format!("vs {} (95% CI{unit})", baseline_label(report).raw()),
        "samples",
    ]
    .map(String::from)
    .to_vec();
    if throughput {
        headers.insert(2, "ops/s".into());
    }
    if let Some(n) = against {
        headers.push(format!("vs run {n}"));
    }
    let compared = report.comparison(index).to_vec();
    // Runs recorded before protocol 1.3 carry no cost: no empty columns for them.
    let with_cost = compared.iter().any(|r| r.cost.is_some());
    let cost_at = headers.iter().position(|h| h == "min … max").unwrap_or(0) + 1;
    if with_cost {
        for (i, h) in format::COST_HEADERS.iter().enumerate() {
            headers.insert(cost_at + i, h.to_string());
        }
    }
    // Runs whose runners did not count allocations (before protocol 1.13, or a driver's own
    // allocator): no memory columns unless some bench has them.
    let with_memory = compared.iter().any(|r| r.memory.is_some());
    let memory_at = cost_at
        + if with_cost {
            format::COST_HEADERS.len()
        } else {
            0
        };
    if with_memory {
        for (i, h) in format::MEMORY_HEADERS.iter().enumerate() {
            headers.insert(memory_at + i, h.to_string());
        }
        headers.insert(
            memory_at + format::MEMORY_HEADERS.len(),
            format!("allocs vs {}", baseline_label(report).raw()),
        );
    }
    let rows = compared
        .into_iter()
        .map(|r| {
            let name = r.bench.raw();
            let ratio = if name == baselines.base_of(run, name) {
                "baseline".into()
            } else {
                let mut mark = String::new();
                if unpaired_in_paired_run(run, name, &baselines) {
                    mark.push_str(" ‡");
                }
                if moves_with_hand_offs(run) && run.bench(name).and_then(hands_off).is_some() {
                    mark.push_str(" ~");
                }
                r.ratio
                    .map(|x| format!("{}{mark}", format::ratio(&x)))
                    .unwrap_or_else(|| "-".into())
            };
            // A bench whose connections could not take the run's SQLite settings is marked.
            let differs = !settings_differences(run, name).is_empty();
            let summary = run.bench(name).and_then(|b| b.summary.as_ref());
            let mut row: Vec<String> = vec![
                format::ns(r.median_ns),
                format::ci(r.ci95_ns),
                r.p99_ns
                    .map(|p| format::ns(p as f64))
                    .unwrap_or_else(|| "-".into()),
                summary
                    .map(|s| format!("{} ± {}", format::ns(s.mean), format::ns(s.std_dev)))
                    .unwrap_or_else(|| "-".into()),
                summary
                    .map(|s| format!("{} … {}", format::ns(s.min), format::ns(s.max)))
                    .unwrap_or_else(|| "-".into()),
                ratio,
                r.samples.to_string(),
            ];
            if throughput {
                row.insert(0, format::ops(r.ops_per_s));
            }
            // The cells are counted from the bench and its backend, made Text below.
            let (cost_at, memory_at) = (cost_at - 2, memory_at - 2);
            if with_cost {
                for (i, c) in format::cost_cells(r.cost.as_ref()).into_iter().enumerate() {
                    row.insert(cost_at + i, c);
                }
            }
            if with_memory {
                let cells = format::memory_cells(r.memory.as_ref());
                let n = cells.len();
                for (i, c) in cells.into_iter().enumerate() {
                    row.insert(memory_at + i, c);
                }
                let vs = if name == baselines.base_of(run, name) && r.memory.is_some() {
                    "baseline".into()
                } else {
                    r.memory_vs_base
                        .map(|v| format::memory_vs(&v))
                        .unwrap_or_else(|| "-".into())
                };
                row.insert(memory_at + n, vs);
            }
            if against.is_some() {
                row.push(
                    r.change
                        .map(|c| {
                            let mut cell = if c.differs.is_empty() {
                                format!("{} {}", format::change(&c), c.verdict.label())
                            } else {
                                format::verdict(&c).raw().to_string()
                            };
                            // A count that changed is said beside the time, either way.
                            if let Some(a) = c
                                .allocs
                                .filter(|a| a.verdict != bench_core::compare::Verdict::WithinNoise)
                            {
                                cell.push_str(&format!(" · {}", format::allocs_change(&a)));
                            }
                            cell
                        })
                        .unwrap_or_else(|| "-".into()),
                );
            }
            let backend = if differs {
                bench_core::text!("{} †", r.backend.raw())
            } else {
                r.backend.clone()
            };
            [r.bench.clone(), backend]
                .into_iter()
                .chain(row.into_iter().map(Text::from))
                .collect()
        })
        .collect();
    (headers.into_iter().map(Text::from).collect(), rows)
}

/// What ratios are taken against: the baseline bench, or for targets whose benches each name
/// their own (crud_overhead), the baseline backend on the same operation.
pub fn baseline_label(report: &Report<'_>) -> Text {
    let target = report
        .runs
        .iter()
        .find_map(|r| r.start.as_ref())
        .and_then(|s| bench_core::workloads::find(s.target.raw()).ok());
    match target.and_then(|t| t.benches.iter().find_map(|b| b.vs)) {
        Some(vs) => {
            let backend = target
                .and_then(|t| t.spec(vs).ok())
                .map(|b| b.backend())
                .unwrap_or(vs);
            bench_core::text!("{backend}, same op")
        }
        None => report.baseline.into(),
    }
}

/// What a reader must know beside a run's table, as `name: what` lines: benches that did not
/// finish, benches whose samples warn (outliers, two modes), and benches (marked †) whose
/// connections run with other SQLite settings than the run asked for.
/// Whether `bench` of a run measured in paired rounds has a ratio that was not: a bench of
/// another harness, measured in its own runner process after the core's.
pub fn unpaired_in_paired_run(
    run: &RunRecord,
    bench: &str,
    baselines: &bench_core::baselines::Baselines<'_>,
) -> bool {
    let base = baselines.base_of(run, bench);
    run.start.as_ref().is_some_and(|s| s.budget.paired)
        && bench != base
        && run.bench(bench).is_some_and(|b| {
            b.summary.is_some() && b.paired.as_ref().is_none_or(|(against, _)| against != base)
        })
}

/// A bench that waits for a voluntary context switch or more per operation hands its query to
/// another thread (a pool's worker, a blocking thread) and waits for it.
pub const HAND_OFF_SWITCHES: f64 = 1.0;

/// Whether `b` hands its query to another thread and waits for it, measured: its switches
/// per operation (`None` without a cost measured).
pub fn hands_off(b: &bench_core::protocol::results::BenchResult) -> Option<f64> {
    b.summary
        .as_ref()
        .and_then(|s| s.cost.as_ref())
        .map(|c| c.voluntary_per_op)
        .filter(|&v| v >= HAND_OFF_SWITCHES)
}

/// Whether the ratios of `run`'s benches that hand off move with how soon a CPU takes the
/// work: measured here, with its runners on every CPU.
pub fn moves_with_hand_offs(run: &RunRecord) -> bool {
    !run.from_criterion() && !run.starts().any(|s| s.env.cpus.is_some())
}

/// When ratios are shown and some of the benches hand their query to another thread with the
/// runner on every CPU: those ratios move with how soon a CPU takes the work, which a small
/// virtual machine varies from run to run; `--cpus` measures them where they move far less.
fn hand_off_note(run: &RunRecord, finished: usize) -> Option<String> {
    if finished < 2 || !moves_with_hand_offs(run) {
        return None;
    }
    let names: Vec<&str> = run
        .benches
        .iter()
        .filter(|b| hands_off(b).is_some())
        .map(|b| b.name.raw())
        .collect();
    if names.is_empty() {
        return None;
    }
    let shown = if names.len() > 4 {
        format!("{} and {} more", names[..4].join(", "), names.len() - 4)
    } else {
        names.join(", ")
    };
    Some(format!(
        "~ hand-offs: {shown} wait for another thread (a context switch or more per operation); with the runner on every CPU their ratios move from run to run with how soon a CPU takes the work (on a small virtual machine by tens of percent: docs/src/numbers.md, \"Where runners run\", gives how far on one; --repeat N measures how far on this one), and --cpus 0 measures them on one CPU, where they move far less"
    ))
}

/// Notes on a run, as `name: what` lines: texts (names, errors and warnings from data in them),
/// escaped by the sink that shows them.
pub fn notes(run: &RunRecord, baselines: &bench_core::baselines::Baselines<'_>) -> Vec<Text> {
    let mut out: Vec<Text> = Vec::new();
    if let Some(src) = &run.source {
        out.push(text!("read from {src}"));
    }
    for b in &run.benches {
        let name = b.name.raw();
        match (&b.error, &b.skipped, &b.summary) {
            (Some(e), _, _) => out.push(text!("{name}: failed: {}", e.trim_end())),
            (None, Some(s), _) => out.push(text!("{name}: skipped: {}", s.trim_end())),
            (None, None, Some(s)) => out.extend(s.warnings.iter().map(|w| text!("{name}: {w}"))),
            _ => {}
        }
        if let Some(st) = &b.statements {
            out.push(text!("{name}: {}", st.describe()));
        }
        let differs = settings_differences(run, name);
        if !differs.is_empty() {
            out.push(text!(
                "{name} †: SQLite settings differ: {}",
                Text::join(&differs, ", ").raw()
            ));
        }
    }
    let mut more: Vec<String> = Vec::new();
    let pairs: Vec<usize> = run
        .benches
        .iter()
        .filter_map(|b| b.paired.as_ref().map(|(_, p)| p.pairs))
        .collect();
    let finished = run.benches.iter().filter(|b| b.summary.is_some()).count();
    let paired_run = run.start.as_ref().is_some_and(|s| s.budget.paired);
    if let (Some(lo), Some(hi)) = (pairs.iter().min(), pairs.iter().max()) {
        let n = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        };
        // More benches than a group holds: say that they took turns a group at a time.
        let groups = run
            .start
            .as_ref()
            .and_then(|s| s.paired_group())
            .map(|g| format!(", at most {g} at a time beside the bench their ratio is taken against (--paired-group)"))
            .unwrap_or_default();
        more.push(match processes(run) {
            1 => format!(
                "paired rounds: the benches took turns sample by sample{groups}; each ratio is the median of {n} per-round ratios, with its 95% interval"
            ),
            p => format!(
                "paired rounds: the benches took turns sample by sample{groups} in each process; each process's ratio is the median of its per-round ratios ({n} rounds in all), and the ratio shown their geometric mean over the {p} processes"
            ),
        });
        if run
            .benches
            .iter()
            .any(|b| unpaired_in_paired_run(run, b.name.raw(), baselines))
        {
            more.push(
                "‡ unpaired: measured in its own harness's runner after the paired rounds, so whatever the machine did in between moves its ratio; its interval is a bootstrap of the two benches' samples".into(),
            );
        }
    } else if finished > 1 && !paired_run && !run.from_criterion() {
        more.push(
            "unpaired ratios: the benches ran one after another, so whatever the machine did in between moves a ratio from run to run (more than its interval says on a noisy machine: docs/src/usage.md, \"Paired rounds\", gives how far on one); paired rounds (the default) measure them in turns, --repeat N shows how far they move".into(),
        );
    }
    more.extend(processes_note(run));
    more.extend(hand_off_note(run, finished));
    if let Some(e) = &run.error {
        more.push(format!("run failed: {e}"));
    }
    let missing = run.missing();
    if !run.done && !missing.is_empty() {
        more.push(format!(
            "incomplete: no result for {} (the run did not finish)",
            missing.join(", ")
        ));
    }
    more.extend(
        run.machine_notes()
            .into_iter()
            .map(|w| format!("machine: {w}")),
    );
    // They name benches and hold runners' words: texts too, escaped where they are shown.
    out.extend(more.into_iter().map(Text::from));
    out
}

/// The runner processes a run measured each bench in: the most any bench's figures are
/// across (a run stops early when its processes agree), else what its start asked (1 before
/// protocol 1.10).
pub fn processes(run: &RunRecord) -> usize {
    let measured = run
        .benches
        .iter()
        .filter_map(|b| b.summary.as_ref())
        .map(|s| s.processes.len())
        .max();
    match measured {
        Some(n) if n > 1 => n,
        Some(_) => 1,
        None => run
            .start
            .as_ref()
            .map_or(1, |s| s.budget.runner_processes()),
    }
}

/// What a run of several processes shows, and for which benches one process would have done
/// (their processes agreed within their own intervals).
pub fn processes_note(run: &RunRecord) -> Option<String> {
    let p = processes(run);
    if p < 2 {
        return None;
    }
    let enough: Vec<&str> = run
        .benches
        .iter()
        .filter(|b| {
            b.summary.as_ref().is_some_and(|s| {
                bench_core::measure::processes::one_process_enough(&s.processes) == Some(true)
            })
        })
        .map(|b| b.name.raw())
        .collect();
    let mut note = format!(
        "{p} runner processes, one after another: each median and ratio is the geometric mean of the processes' own, and its 95% interval says where a repeat of this run lands (from how far the processes differ: docs/src/numbers.md, \"Processes\")"
    );
    if !enough.is_empty() {
        note.push_str(&format!(
            "; one process would have done for {} (its processes agreed within their own intervals)",
            enough.join(", ")
        ));
    }
    Some(note)
}

/// How each bench was sampled: warm-up, time budget and sample bounds, in how many runner
/// processes.
pub fn budget_line(b: &bench_core::protocol::Budget, processes: usize) -> String {
    let each = match processes {
        1 => String::new(),
        p => format!(" in each of {p} runner processes"),
    };
    format!(
        "each bench{each}: {} s warm-up, then samples for {} s{} (at least {}, at most {}); per-op figures are per sample",
        b.warmup_s,
        b.time_s,
        own_times(b).terminal(),
        b.min_samples,
        b.max_samples
    )
}

/// The benches with a time of their own (`--time-for`), grouped by time: `", 10 s for
/// bulk_get, bulk_put"`; empty when every bench takes the budget's.
pub fn own_times(b: &bench_core::protocol::Budget) -> Text {
    let mut by: Vec<(f64, Vec<&str>)> = Vec::new();
    for (bench, s) in &b.times {
        match by.iter_mut().find(|(t, _)| t == s) {
            Some((_, names)) => names.push(bench.raw()),
            None => by.push((*s, vec![bench.raw()])),
        }
    }
    Text::new(
        by.iter()
            .map(|(s, names)| format!(", {s} s for {}", names.join(", ")))
            .collect::<String>(),
    )
}

pub fn render(report: &Report<'_>) -> String {
    let mut out = String::new();
    for (i, run) in report.runs.iter().enumerate() {
        if run.is_debug() {
            out.push_str(&format!("WARNING: {DEBUG_WARNING}\n"));
        }
        if let Some(s) = &run.start {
            // Each harness links its own SQLite: name them all when there are several.
            let mut each: Vec<String> = Vec::new();
            for h in run.starts() {
                let named = format!("{} {}", h.env.sqlite.terminal(), h.harness);
                if !each.contains(&named) {
                    each.push(named);
                }
            }
            let sqlite = if each.len() > 1 {
                each.join(", ")
            } else {
                s.env.sqlite.terminal().to_string()
            };
            let profiled = if run.profiled {
                ", PROFILED: timings include perf"
            } else {
                ""
            };
            if s.from_criterion() {
                out.push_str(&format!(
                    "{}  (Criterion results: knobs, SQLite and budget not recorded)\n",
                    s.target.terminal()
                ));
            } else {
                out.push_str(&format!(
                    "{}  {}  (SQLite {sqlite}, {} build{profiled})\n{}\n",
                    s.target.terminal(),
                    s.knobs,
                    s.env.profile.terminal(),
                    budget_line(&s.budget, processes(run))
                ));
            }
        }
        let (headers, rows) = if super::scenario::is_scenario(run) {
            super::scenario::cells(run)
        } else {
            comparison_cells(report, i)
        };
        out.push_str(&super::layout::align(&headers, &rows, 2));
        for line in notes(run, &report.baselines()) {
            out.push_str(&format!("! {}\n", line.terminal()));
        }
        if let Some(m) = report.matrix(i) {
            out.push_str(&super::layout::section_text(&m, false));
        }
        if let Some(s) = bench_core::workloads::sections_of(run).and_then(|w| w.section(run)) {
            out.push_str(&super::layout::section_text(&s, report.color));
        }
        out.push_str(&super::profiles::text(run));
    }
    for r in report.repeats() {
        out.push_str(&r.text(&|i| report.number(i)));
    }
    if let Some(m) = super::scenario::matrix(report.runs) {
        out.push_str(&m.text());
    }
    if let Some(sc) = report.scaling() {
        out.push('\n');
        out.push_str(&sc.text());
    }
    out
}
