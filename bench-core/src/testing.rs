//! Helpers for tests that run a runner for real (bench-core's, harness-sqlx's and benchscope's
//! own tests use them): run it to its end and read every line of its stream.

use crate::protocol::{Event, decode};

/// What a runner process left behind: its exit code, every event it wrote, its stderr.
#[derive(Debug)]
pub struct RunnerOutput {
    pub code: Option<i32>,
    pub events: Vec<Event>,
    pub stderr: String,
}

/// The knob and trace variables a test must not inherit from the calling environment.
pub const INHERITED_VARS: &[&str] = &[
    "BENCH_ROWS",
    "BENCH_LOOKUPS",
    "BENCH_CONCURRENCY",
    "BENCH_TRACE",
];

/// Runs a runner to its end without the knob variables of the calling environment, and
/// decodes every line of its stdout (the first line that is not a valid event is an error).
pub fn run_to_end(command: &mut std::process::Command) -> Result<RunnerOutput, String> {
    for v in INHERITED_VARS {
        command.env_remove(v);
    }
    let out = command
        .output()
        .map_err(|e| format!("cannot start the runner: {e}"))?;
    let stdout =
        String::from_utf8(out.stdout).map_err(|e| format!("runner stdout is not UTF-8: {e}"))?;
    let events = stdout
        .lines()
        .map(|l| decode(l).map_err(|e| format!("bad line {l:?}: {e}")))
        .collect::<Result<_, _>>()?;
    Ok(RunnerOutput {
        code: out.status.code(),
        events,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The events of one bench, in order.
pub fn events_of<'a>(events: &'a [Event], bench: &str) -> Vec<&'a Event> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::BenchStart { .. }
                    | Event::Sample { .. }
                    | Event::Phases { .. }
                    | Event::Summary { .. }
                    | Event::Skipped { .. }
                    | Event::Error { .. }
            ) && e.bench() == Some(bench)
        })
        .collect()
}

/// What one bench's part of a stream holds, once checked.
#[derive(Debug, Clone)]
pub struct BenchCheck {
    /// Operations in one pass.
    pub ops: u64,
    /// The work check the bench declared.
    pub work: crate::protocol::WorkCheck,
    /// Passes of each sample, in order.
    pub passes: Vec<u64>,
    pub summary: crate::measure::stats::Summary,
    /// Each phase window, in order.
    pub phases: Vec<std::collections::BTreeMap<crate::measure::trace::Phase, f64>>,
    /// The SQLite settings its connections read back.
    pub sqlite: std::collections::BTreeMap<String, String>,
}

/// The smallest budget that still gives a bench two or three samples, for the stream tests.
pub const STREAM_BUDGET: &[&str] = &[
    "--time",
    "0.02",
    "--warmup",
    "0",
    "--samples",
    "3",
    "--min-samples",
    "2",
];

/// Runs the runner binary `bin` on `args` with its dataset cache in `cache`, to its end: exit
/// code, events, stderr (a runner that cannot be run fails the test that asked).
pub fn run_runner(
    bin: &str,
    args: &[&str],
    cache: &std::path::Path,
) -> (Option<i32>, Vec<Event>, String) {
    let mut cmd = std::process::Command::new(bin);
    cmd.args(args).arg("--cache-dir").arg(cache);
    let out = run_to_end(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
    (out.code, out.events, out.stderr)
}

/// Checks one bench's events in a stream: one `bench_start` first, with a work check;
/// samples numbered from 0 in order, each a whole number of passes whose work is exactly
/// passes x the declared work per pass; one `summary` last, over those samples; no error.
pub fn check_bench(events: &[Event], bench: &str) -> Result<BenchCheck, String> {
    let mine = events_of(events, bench);
    let Some(Event::BenchStart {
        ops, work, sqlite, ..
    }) = mine.first()
    else {
        return Err(format!(
            "{bench}: the first event is not bench_start: {mine:?}"
        ));
    };
    let work = work
        .clone()
        .ok_or_else(|| format!("{bench}: bench_start declares no work check"))?;
    if *ops == 0 {
        return Err(format!("{bench}: a pass of no operations"));
    }
    let mut passes = Vec::new();
    let mut phases = Vec::new();
    let mut summary = None;
    for (i, e) in mine.iter().enumerate().skip(1) {
        match e {
            Event::Sample {
                iter,
                ops: sample_ops,
                elapsed_ns,
                work: got,
                cost,
                ..
            } => {
                // Linux always reports usage: a sample without it, or spending CPU time
                // without wall time, is a broken reading.
                match cost {
                    Some(c) if c.wall_ns > 0 && c.sys_ns <= c.cpu_ns => {}
                    other => return Err(format!("{bench}: sample {iter} has cost {other:?}")),
                }
                if *iter != passes.len() as u64 {
                    return Err(format!("{bench}: sample {iter} out of order"));
                }
                if sample_ops % ops != 0 || *elapsed_ns == 0 {
                    return Err(format!(
                        "{bench}: sample of {sample_ops} ops in {elapsed_ns} ns (passes of {ops})"
                    ));
                }
                let n = sample_ops / ops;
                let want = work.per_pass.wrapping_mul(n);
                if *got != Some(want) {
                    return Err(format!(
                        "{bench}: sample {iter} did work {got:?}, expected {want} ({n} passes)"
                    ));
                }
                passes.push(n);
            }
            Event::Phases { ns_per_op, .. } => phases.push(ns_per_op.clone()),
            Event::Summary { stats, .. } if i == mine.len() - 1 => summary = Some(stats.clone()),
            other => return Err(format!("{bench}: unexpected {other:?}")),
        }
    }
    let summary = summary.ok_or_else(|| format!("{bench}: no summary last"))?;
    match summary.cost {
        Some(c) if c.cpu_ns_per_op.is_finite() && c.cpu_per_wall >= 0.0 => {}
        other => return Err(format!("{bench}: summary cost {other:?}")),
    }
    if summary.samples != passes.len() || passes.is_empty() {
        return Err(format!(
            "{bench}: summary of {} samples after {} samples",
            summary.samples,
            passes.len()
        ));
    }
    Ok(BenchCheck {
        ops: *ops,
        work,
        passes,
        summary,
        phases,
        sqlite: sqlite.clone(),
    })
}

/// The names of `target`'s benches that `harness` runs, in the catalog's order.
pub fn benches_of(
    target: &crate::catalog::Target,
    harness: crate::catalog::Harness,
) -> Vec<&'static str> {
    target
        .benches
        .iter()
        .filter(|b| b.harness() == harness)
        .map(|b| b.name)
        .collect()
}

/// Checks that each of `expected` (a bench, the work one pass must do) streamed the passes of
/// a run on `STREAM_BUDGET` (2 or 3), each doing exactly that work.
pub fn check_passes(events: &[Event], expected: &[(&str, u64)]) {
    for (bench, per_pass) in expected {
        let c = check_bench(events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert!((2..=3).contains(&c.passes.len()), "{bench}: {:?}", c.passes);
        assert_eq!(c.work.per_pass, *per_pass, "{bench}: {}", c.work.what);
    }
}

/// The files in `dir` whose names start with `prefix` (scratch files a bench should have taken
/// away with it).
pub fn left_in(dir: &std::path::Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// Every file in `dir` by name with its size and SHA-256: what "this folder is as it was"
/// compares (a file added, removed or changed by a single byte shows).
pub fn folder_listing(dir: &std::path::Path) -> Vec<(String, u64, String)> {
    use sha2::Digest as _;
    let mut v: Vec<(String, u64, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            let sum: String = sha2::Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            (
                e.file_name().to_string_lossy().into_owned(),
                bytes.len() as u64,
                sum,
            )
        })
        .collect();
    v.sort();
    v
}

/// Says on the test output that `test` is skipped and why, where `cargo test` shows it: on
/// the process's stderr itself, past the capture that hides a passing test's prints. A test
/// calls it and returns when what it needs (tmux, perf, chromium, a PostgreSQL server) is not
/// there. With `BENCHSCOPE_TEST_NO_SKIP` set (CI's second pass, after it installed all of
/// them) that is a failure instead.
pub fn skip(test: &str, reason: &str) {
    use std::io::Write as _;
    assert!(
        std::env::var_os("BENCHSCOPE_TEST_NO_SKIP").is_none(),
        "{test} cannot run, and BENCHSCOPE_TEST_NO_SKIP is set: {reason}"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
}
