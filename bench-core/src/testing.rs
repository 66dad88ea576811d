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
        .filter(|e| match e {
            Event::BenchStart { bench: b, .. }
            | Event::Sample { bench: b, .. }
            | Event::Phases { bench: b, .. }
            | Event::Summary { bench: b, .. }
            | Event::Skipped { bench: b, .. } => b == bench,
            Event::Error { bench: Some(b), .. } => b == bench,
            _ => false,
        })
        .collect()
}
