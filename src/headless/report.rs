//! What a finished command prints and writes: the report in its format, the verdicts against
//! a baseline, a saved baseline, the export files, and every failure said once.

use std::io::IsTerminal;

use bench_core::protocol::results::RunRecord;

use super::args::{Format, RunArgs, Side, render};
use super::plan::Planned;
use super::run::Executed;
use crate::export::{self, Report};

/// How the command ended, for its exit status.
pub struct Ended {
    pub interrupted: Option<i32>,
    pub failed: bool,
    pub write_failed: bool,
    pub regressed: bool,
}

/// Prints and writes everything the command was asked for.
pub fn report(args: &RunArgs, p: Planned, x: Executed) -> Ended {
    let Planned {
        verdict_settings,
        baselines_dir,
        imported,
        against,
        interleave,
        ..
    } = p;
    let Executed {
        mut records,
        sides,
        interrupted,
        baseline,
    } = x;
    let mut failed = records
        .iter()
        .any(|r| r.error.is_some() || r.benches.iter().any(|b| b.error.is_some()));
    // A run that measured nothing (every bench skipped) must not pass for one that did: a CI
    // job gating on its status would have judged nothing.
    let nothing = nothing_measured(&records);
    // Read-only runs go after the live ones: in the report, never in a baseline or verdict.
    let live = records.len();
    records.extend(imported);
    let generated_at = crate::format::now_rfc3339();
    let report = Report {
        color: std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        ..Report::new(&records, baseline, &generated_at)
    };
    let mut write_failed = false;
    if args.output.is_none() {
        crate::out::print(&render(args.format, &report));
    }
    let mut regressed = false;
    if let Some(b) = &against {
        let live_runs = &records[..live];
        let (text, worse, compared) = verdicts(
            b,
            live_runs,
            &sides,
            interleave.is_some(),
            &verdict_settings,
        );
        regressed = worse;
        if !compared && interrupted.is_none() && nothing.is_none() {
            crate::out::say!(
                "error: nothing compared: baseline {} has no bench of this run's target in common with it (a gate on it would have judged nothing)",
                b.name.terminal()
            );
            failed = true;
        }
        // Beside a table on stdout; on stderr when stdout carries a document.
        if args.format == Format::Table && args.output.is_none() {
            crate::out::print(&format!("\n{text}"));
        } else {
            crate::out::say_line(text.trim_end_matches('\n'));
        }
    }
    if let Some(name) = &args.save_baseline {
        if interrupted.is_some() || failed {
            crate::out::say!("baseline {name} not saved: the run did not complete");
        } else {
            write_failed |= !save_baseline(
                &baselines_dir,
                name,
                &records[..live],
                &sides,
                &generated_at,
            );
        }
    }
    // Files get no colour codes.
    let plain = Report {
        color: false,
        ..report
    };
    write_failed |= !write_exports(args, &plain);
    // Last: a store that is slow or unreachable holds up nothing the run wrote itself.
    // Checked by the plan before anything ran.
    let recorder = args.store.recorder().unwrap_or(None);
    if let Some(recorder) = &recorder {
        let live: Vec<&RunRecord> = records[..live].iter().collect();
        match recorder.record(&live) {
            Ok(line) if line.is_empty() => {}
            Ok(line) => crate::out::say!("{line}"),
            Err(e) => {
                crate::out::say!("error: {e}");
                write_failed = true;
            }
        }
    }
    // The HTML report after the store: its history holds this run.
    if let Some(dir) = &args.export_html {
        write_failed |= !write_html(dir, &records, live, recorder.as_ref(), &plain);
    }
    say_failures(&records);
    if let (Some(why), None) = (&nothing, interrupted) {
        crate::out::say!("error: nothing was measured: {why}");
        failed = true;
    }
    Ended {
        interrupted,
        failed,
        write_failed,
        regressed,
    }
}

/// The verdicts of this run's `live` runs against baseline `b` (or, `interleaved`, of each
/// round's two sides, and how the baseline's set-up moved since it was saved): their text,
/// whether any regressed, and whether any bench was compared at all.
fn verdicts(
    b: &crate::baseline::Baseline,
    live: &[RunRecord],
    sides: &[(usize, Side)],
    interleaved_rounds: bool,
    settings: &bench_core::compare::Settings,
) -> (String, bool, bool) {
    if !interleaved_rounds {
        let rows = crate::baseline::compare(&b.runs, live, settings);
        let text = crate::baseline::text(
            &format!("against baseline {}", b.name.terminal()),
            &rows,
            settings,
        );
        return (
            text,
            crate::baseline::any_regressed(&rows),
            !rows.is_empty(),
        );
    }
    let rounds = interleaved(live, sides);
    let rows = crate::baseline::compare_rounds(&rounds, settings);
    let mut text = crate::baseline::text(
        &format!(
            "against baseline {}, its set-up measured again in {} interleaved rounds",
            b.name.terminal(),
            rounds.len()
        ),
        &rows,
        settings,
    );
    let again: Vec<RunRecord> = rounds.iter().map(|(base, _)| (*base).clone()).collect();
    let moved = crate::baseline::compare(&b.runs, &again, settings);
    text.push_str(&crate::baseline::moved_since(&b.saved_at, &moved));
    (text, crate::baseline::any_regressed(&rows), true)
}

/// Saves this run's set-up's runs (with interleaved rounds, not the baseline's) as baseline
/// `name`, said either way; whether it was written.
fn save_baseline(
    dir: &std::path::Path,
    name: &str,
    live: &[RunRecord],
    sides: &[(usize, Side)],
    generated_at: &str,
) -> bool {
    let mine: Vec<RunRecord> = live
        .iter()
        .zip(sides)
        .filter(|(_, (_, side))| *side == Side::Current)
        .map(|(r, _)| r.clone())
        .collect();
    match crate::baseline::save(dir, name, &mine, generated_at) {
        Ok(p) => {
            crate::out::say!(
                "saved baseline {name} ({} run{}) to {}",
                mine.len(),
                if mine.len() == 1 { "" } else { "s" },
                p.display()
            );
            true
        }
        Err(e) => {
            crate::out::say!("error: {e}");
            false
        }
    }
}

/// Writes each export file (markdown with its SVG charts beside it), said either way; whether
/// every one was written.
fn write_exports(args: &RunArgs, plain: &Report) -> bool {
    let mut all = true;
    for (format, path) in args.exports() {
        // Markdown in a file gets its SVG charts beside it, linked.
        let text = if format == Format::Markdown {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "report".into());
            let charts = export::charts::write_all(plain, dir, &stem);
            match &charts {
                Ok(c) if !c.is_empty() => {
                    crate::out::say!("wrote {} SVG charts beside {}", c.len(), path.display())
                }
                Ok(_) => {}
                Err(e) => crate::out::say!("{e}"),
            }
            render(format, &plain.with_charts(charts))
        } else {
            render(format, plain)
        };
        match crate::files::write_atomic(path, &text) {
            Ok(()) => crate::out::say!("wrote {}", path.display()),
            Err(e) => {
                crate::out::say!("error: {e}");
                all = false;
            }
        }
    }
    all
}

/// Writes the HTML report into `dir`, with the history of this run's `live` runs where they
/// are recorded; whether it was written.
fn write_html(
    dir: &std::path::Path,
    records: &[RunRecord],
    live: usize,
    recorder: Option<&crate::store::Recorder>,
    plain: &Report,
) -> bool {
    let history = match recorder {
        None => Err("no history: runs are not recorded (--no-store)".to_string()),
        Some(rec) => crate::site::history_of(&records[..live], &rec.target),
    };
    let (series, note) = match &history {
        Ok((s, note)) => (s.as_slice(), note.as_deref()),
        Err(e) => (&[][..], Some(e.as_str())),
    };
    let title = format!(
        "benchscope: {}",
        records
            .first()
            .and_then(|r| r.start.as_ref())
            .map(|s| s.target.raw())
            .unwrap_or("report")
    );
    match crate::site::write(dir, &title, plain, series, note) {
        Ok(p) => {
            crate::out::say!("wrote {}", p.display());
            true
        }
        Err(e) => {
            crate::out::say!("error: {e}");
            false
        }
    }
}

/// Every failure of the runs, each said once: a bench's, then its run's.
fn say_failures(records: &[RunRecord]) {
    for r in records {
        for b in &r.benches {
            if let Some(e) = &b.error {
                crate::out::say!(
                    "error: bench {} failed: {}",
                    b.name.terminal(),
                    bench_core::text::terminal_str(e)
                );
            }
        }
        if let Some(e) = &r.error {
            crate::out::say!("error: {e}");
        }
    }
}

/// Why no bench of `records` finished (every one skipped or absent), or `None` when one did.
fn nothing_measured(records: &[RunRecord]) -> Option<String> {
    use bench_core::protocol::results::BenchStatus;
    let benches = || records.iter().flat_map(|r| r.benches.iter());
    if benches().any(|b| b.status() == BenchStatus::Finished) {
        return None;
    }
    let skipped: Vec<String> = benches()
        .filter_map(|b| {
            b.skipped
                .as_ref()
                .map(|why| format!("{} ({why})", b.name.terminal()))
        })
        .collect();
    Some(if skipped.is_empty() {
        "no bench finished".to_string()
    } else {
        format!("every bench was skipped: {}", skipped.join("; "))
    })
}

/// The complete rounds of an interleaved comparison, as `(baseline, current)` runs: both runs
/// of a round finished without a failure of the whole run.
fn interleaved<'a>(
    records: &'a [RunRecord],
    sides: &[(usize, Side)],
) -> Vec<(&'a RunRecord, &'a RunRecord)> {
    let mut rounds = Vec::new();
    for (i, (r, side)) in sides.iter().enumerate() {
        let Some(j) = (i + 1..sides.len()).find(|&j| sides[j].0 == *r) else {
            continue;
        };
        let ok = |k: usize| records.get(k).filter(|x| x.error.is_none());
        if let (Some(a), Some(b)) = (ok(i), ok(j)) {
            rounds.push(match side {
                Side::Baseline => (a, b),
                Side::Current => (b, a),
            });
        }
    }
    rounds
}
