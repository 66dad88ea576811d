//! `benchscope run`: the headless front end. Spawns the runner, shows progress on stderr,
//! prints the comparison in the chosen format.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use bench_core::catalog::CONCURRENCY;
use bench_core::protocol::Event;
use bench_core::protocol::results::RunRecord;
use bench_core::service::args::{RunnerArgs, SessionArgs};
use tokio::sync::mpsc;

use crate::export::{self, Report};
use crate::messages::{Outcome, RunEvent, RunRequest, RunSettings};
use crate::runner::{ProcessRunner, Runner};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
    Jsonl,
    Csv,
}

#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Target to run (see `benchscope list`).
    pub target: String,
    /// Benches to run (repeatable; default: all of the target's).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Runs of each configuration, each in a fresh runner process whose environment is shifted
    /// in size (so memory layout changes between runs): the exports add the spread of each
    /// bench's median between runs.
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub repeat: String,
    /// Run each bench under perf (a runner of its own) and write a flamegraph SVG per bench
    /// into DIR; the outputs add where each bench's CPU goes, by layer. Profiled timings
    /// include the profiler's cost: they are marked, and never compared with unprofiled runs.
    #[arg(long, value_name = "DIR")]
    pub flamegraph: Option<std::path::PathBuf>,
    /// Write the --format output to FILE (atomically) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Also write the markdown export to FILE (atomically), whatever --format is.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<std::path::PathBuf>,
    /// Also write the JSON export to FILE (atomically), whatever --format is.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<std::path::PathBuf>,
    /// Also write a CSV of every bench of every run to FILE (atomically).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<std::path::PathBuf>,
    /// Save the runs (every repeat and sweep value) as baseline NAME, replacing one of that
    /// name. Repeats (--repeat 3) let later comparisons measure run-to-run variation.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Compare the runs with baseline NAME (or a baseline or report file) after they finish;
    /// the exit status is 3 when any bench regressed.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// With --baseline: measure the baseline's set-up again in this run, ROUNDS rounds of one
    /// fresh run of its knobs and one of these, in alternating order (A B, B A, ...). The
    /// verdicts compare the two runs of each round (a paired t-test), so what moves the
    /// machine over minutes moves both alike and cancels; the saved runs are compared with the
    /// new ones of their set-up to show how far the machine moved since.
    #[arg(long, value_name = "ROUNDS", requires = "baseline")]
    pub interleave: Option<String>,
    #[command(flatten)]
    pub verdicts: crate::baseline::VerdictArgs,
    /// Show the results of a Criterion folder (target/criterion or any CRITERION_HOME) beside
    /// the live runs, as read-only runs: each benchmark's raw samples, with Criterion's own
    /// estimates noted.
    #[arg(long, value_name = "DIR")]
    pub import_criterion: Option<std::path::PathBuf>,
}

impl RunArgs {
    /// Every file the run writes its exports to, with its format.
    fn exports(&self) -> Vec<(Format, &std::path::Path)> {
        [
            (Format::Markdown, &self.export_markdown),
            (Format::Json, &self.export_json),
            (Format::Csv, &self.export_csv),
        ]
        .into_iter()
        .filter_map(|(f, p)| Some((f, p.as_deref()?)))
        .chain(self.output.as_deref().map(|p| (self.format, p)))
        .collect()
    }
}

/// A report in one format (jsonl is the event stream itself: nothing to render).
fn render(format: Format, report: &Report<'_>) -> String {
    match format {
        Format::Table => export::table::render(report),
        Format::Markdown => export::markdown::render(report),
        Format::Json => export::json::render(report),
        Format::Csv => export::csv::render(report),
        Format::Jsonl => String::new(),
    }
}

/// The most runs `--repeat` takes.
pub const MAX_REPEAT: usize = 100;

/// The most runs one `run` command makes (set-ups of a sweep times repeats).
const MAX_RUNS: usize = 200;

fn repeat_count(text: &str) -> Result<usize, String> {
    count_in(text, "--repeat", 1)
}

/// A whole number from `low` to [`MAX_REPEAT`] given to `flag`.
fn count_in(text: &str, flag: &str, low: usize) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (low..=MAX_REPEAT).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid value {text:?} for {flag}: expected a whole number (allowed: {low}..={MAX_REPEAT})"
        )),
    }
}

/// Which side of an interleaved comparison a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The baseline's set-up, measured again.
    Baseline,
    /// What was asked for.
    Current,
}

/// The padding a repeat's runner gets in its environment: repeat `i` carries `i` KiB more.
pub fn env_pad(i: usize) -> Vec<(String, String)> {
    vec![("BENCHSCOPE_ENV_PAD".to_string(), "x".repeat(i * 1024))]
}

pub fn run(args: RunArgs) -> i32 {
    if args.format == Format::Jsonl && args.output.is_some() {
        eprintln!(
            "error: --output takes the table, markdown, json or csv format; jsonl is the live event stream on stdout"
        );
        return 2;
    }
    for (_, p) in args.exports() {
        if let Err(e) = crate::files::check_writable(p) {
            eprintln!("error: {e}");
            return 2;
        }
    }
    if let Err(e) = bench_core::dataset::ensure_cache_dir(&args.session.cache_dir()) {
        eprintln!("error: {e}");
        return 2;
    }
    // Baselines are checked before anything runs: a bad name or a missing baseline.
    let verdict_settings = match args.verdicts.settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let baselines_dir = args.verdicts.dir(&args.session.cache_dir());
    if let Some(Err(e)) = args.save_baseline.as_deref().map(|name| {
        crate::baseline::check_name(name)?;
        std::fs::create_dir_all(&baselines_dir)
            .map_err(|e| format!("cannot create {}: {e}", baselines_dir.display()))?;
        crate::files::check_writable(&crate::baseline::path(&baselines_dir, name))
    }) {
        eprintln!("error: {e}");
        return 2;
    }
    let imported = match args
        .import_criterion
        .as_deref()
        .map(crate::import::criterion)
    {
        Some(Ok(runs)) => runs,
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return 2;
        }
        None => Vec::new(),
    };
    let against = match args
        .baseline
        .as_deref()
        .map(|b| crate::baseline::load(&baselines_dir, b))
    {
        Some(Ok(b)) => Some(b),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return 2;
        }
        None => None,
    };
    if let Some(dir) = &args.flamegraph {
        if let Err(e) = crate::profile::check() {
            eprintln!("error: {e}");
            return 2;
        }
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!(
                "error: cannot create the flamegraph folder {}: {e}",
                dir.display()
            );
            return 2;
        }
    }
    let sweep = bench_core::workloads::find(&args.target)
        .map_err(|e| e.to_string())
        .and_then(|t| args.session.knobs.sweep(t).map_err(|e| e.to_string()));
    let (sweep, repeat) = match (sweep, repeat_count(&args.repeat)) {
        (Ok(s), Ok(r)) => (s, r),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let runs = sweep.variants.len().max(1) * repeat;
    if runs > MAX_RUNS {
        eprintln!(
            "error: {} set-ups x {repeat} repeats make {runs} runs (allowed: at most {MAX_RUNS} in one command)",
            sweep.variants.len().max(1)
        );
        return 2;
    }
    // Interleaved rounds: the baseline's one set-up against this run's one set-up.
    let interleave = match args.interleave.as_deref() {
        None => None,
        Some(text) => {
            let checked = count_in(text, "--interleave", 2).and_then(|rounds| {
                if repeat > 1 {
                    return Err(format!(
                        "--interleave {rounds} already runs each side {rounds} times: leave out --repeat {repeat}"
                    ));
                }
                if sweep.variants.len() > 1 {
                    return Err(format!(
                        "--interleave compares one set-up with the baseline's; this run sweeps {} ({} values): run each value on its own",
                        sweep.knobs.join(", "),
                        sweep.variants.len()
                    ));
                }
                let b = against.as_ref().expect("clap requires --baseline");
                let target = bench_core::workloads::find(&args.target)
                    .map(|t| t.name)
                    .unwrap_or_default();
                Ok((rounds, crate::baseline::setup_of(b, target)?))
            });
            match checked {
                Ok(c) => Some(c),
                Err(e) => {
                    eprintln!("error: {e}");
                    return 2;
                }
            }
        }
    };
    // One run per value (or pair of values) of a sweep, else one run.
    let variants: Vec<RunArgs> = sweep
        .variants
        .iter()
        .map(|k| {
            let mut a = args.clone();
            a.session.knobs = k.clone();
            a
        })
        .collect();
    // Everything is checked here, before anything starts.
    let mut planned = Vec::new();
    for (i, a) in variants.iter().enumerate() {
        let runner_args = RunnerArgs {
            target: a.target.clone(),
            benches: a.benches.clone(),
            session: a.session.clone(),
            run_id: None,
        };
        let plan = match runner_args.plan(None) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        let request = |id: String, knobs, trace, r| {
            let mut request = RunRequest::new(
                format!("{}-{}-{}", plan.target.name, std::process::id(), id),
                plan.target.name,
                plan.benches.iter().map(|b| b.name.to_string()).collect(),
                knobs,
                trace,
                &RunSettings::from_session(&a.session),
            );
            request.env = env_pad(r);
            request.profile = a.flamegraph.clone();
            request
        };
        match &interleave {
            None => {
                for r in 0..repeat {
                    let req = request(
                        format!("{}-{}", i + 1, r + 1),
                        plan.knobs.clone(),
                        plan.trace,
                        r,
                    );
                    planned.push((plan.clone(), req, r, Side::Current));
                }
            }
            // Round r runs both sides with the same environment, the baseline's first in
            // even rounds and second in odd ones, so a steady drift weighs on both alike.
            Some((rounds, (knobs, trace))) => {
                for r in 0..*rounds {
                    // Ids of one length: the runner's arguments take the same room.
                    let base = request(format!("base-{}", r + 1), knobs.clone(), *trace, r);
                    let cur = request(format!("this-{}", r + 1), plan.knobs.clone(), plan.trace, r);
                    let (first, second) = if r % 2 == 0 {
                        ((base, Side::Baseline), (cur, Side::Current))
                    } else {
                        ((cur, Side::Current), (base, Side::Baseline))
                    };
                    for (req, side) in [first, second] {
                        planned.push((plan.clone(), req, r, side));
                    }
                }
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let runner = match ProcessRunner::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot find the benchscope executable to start the runner: {e}");
            return 1;
        }
    };
    let baseline = planned[0].0.target.baseline;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut records = Vec::new();
    let mut signals = match rt.block_on(async { Signals::new() }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot handle signals: {e}");
            return 1;
        }
    };
    let mut interrupted = None;
    let mut sides = Vec::new();
    for (plan, request, r, side) in planned {
        match (&interleave, side) {
            (Some((rounds, _)), Side::Baseline) => {
                eprintln!("round {}/{rounds}: the baseline's set-up", r + 1)
            }
            (Some((rounds, _)), Side::Current) => {
                eprintln!("round {}/{rounds}: this run's set-up", r + 1)
            }
            (None, _) if repeat > 1 => eprintln!("repeat {}/{repeat}", r + 1),
            (None, _) => {}
        }
        if !sweep.knobs.is_empty() && r == 0 {
            let values: Vec<String> = sweep
                .knobs
                .iter()
                .map(|k| {
                    let v = plan.knobs.get(k).map(|v| v.to_string()).unwrap_or_default();
                    format!("{k}={v}")
                })
                .collect();
            let over = match plan.knobs.count_if(&CONCURRENCY) {
                Some(c) if sweep.knobs.contains(&CONCURRENCY.name) && c as usize > cores => {
                    format!(" (more tasks than the {cores} cores)")
                }
                _ => String::new(),
            };
            eprintln!("sweep: {}{over}", values.join(" "));
        }
        let total = request.benches.len();
        let (record, signal) = rt.block_on(collect(
            &runner,
            request,
            total,
            args.format == Format::Jsonl,
            &mut signals,
        ));
        records.push(record);
        sides.push((r, side));
        if signal.is_some() {
            interrupted = signal;
            break;
        }
    }
    let failed = records
        .iter()
        .any(|r| r.error.is_some() || r.benches.iter().any(|b| b.error.is_some()));
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
        let text = match &interleave {
            None => {
                let rows = crate::baseline::compare(&b.runs, &records[..live], &verdict_settings);
                regressed = crate::baseline::any_regressed(&rows);
                crate::baseline::text(
                    &format!("against baseline {}", b.name),
                    &rows,
                    &verdict_settings,
                )
            }
            Some(_) => {
                let rounds = interleaved(&records[..live], &sides);
                let rows = crate::baseline::compare_rounds(&rounds, &verdict_settings);
                regressed = crate::baseline::any_regressed(&rows);
                let mut text = crate::baseline::text(
                    &format!(
                        "against baseline {}, its set-up measured again in {} interleaved rounds",
                        b.name,
                        rounds.len()
                    ),
                    &rows,
                    &verdict_settings,
                );
                let again: Vec<RunRecord> =
                    rounds.iter().map(|(base, _)| (*base).clone()).collect();
                let moved = crate::baseline::compare(&b.runs, &again, &verdict_settings);
                text.push_str(&crate::baseline::moved_since(&b.saved_at, &moved));
                text
            }
        };
        // Beside a table on stdout; on stderr when stdout carries a document.
        if args.format == Format::Table && args.output.is_none() {
            crate::out::print(&format!("\n{text}"));
        } else {
            eprint!("{text}");
        }
    }
    if let Some(name) = &args.save_baseline {
        if interrupted.is_some() || failed {
            eprintln!("baseline {name} not saved: the run did not complete");
        } else {
            // With interleaved rounds, the runs of this run's set-up (not the baseline's).
            // Runs read from elsewhere (after the live ones) are never saved.
            let mine: Vec<RunRecord> = records[..live]
                .iter()
                .zip(&sides)
                .filter(|(_, (_, side))| *side == Side::Current)
                .map(|(r, _)| r.clone())
                .collect();
            match crate::baseline::save(&baselines_dir, name, &mine, &generated_at) {
                Ok(p) => eprintln!(
                    "saved baseline {name} ({} run{}) to {}",
                    mine.len(),
                    if mine.len() == 1 { "" } else { "s" },
                    p.display()
                ),
                Err(e) => {
                    eprintln!("error: {e}");
                    write_failed = true;
                }
            }
        }
    }
    // Files get no colour codes.
    let plain = Report {
        color: false,
        ..report
    };
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
            let charts = export::charts::write_all(&plain, dir, &stem);
            match &charts {
                Ok(c) if !c.is_empty() => {
                    eprintln!("wrote {} SVG charts beside {}", c.len(), path.display())
                }
                Ok(_) => {}
                Err(e) => eprintln!("{e}"),
            }
            render(
                format,
                &Report {
                    charts: Some(charts),
                    ..plain
                },
            )
        } else {
            render(format, &plain)
        };
        match crate::files::write_atomic(path, &text) {
            Ok(()) => eprintln!("wrote {}", path.display()),
            Err(e) => {
                eprintln!("error: {e}");
                write_failed = true;
            }
        }
    }
    for r in &records {
        for b in &r.benches {
            if let Some(e) = &b.error {
                eprintln!("error: bench {} failed: {e}", b.name);
            }
        }
        if let Some(e) = &r.error {
            eprintln!("error: {e}");
        }
    }
    match interrupted {
        // The conventional status of a process ended by a signal, once what finished is out.
        Some(sig) => 128 + sig,
        None if failed || write_failed => 1,
        None if regressed => 3,
        None => 0,
    }
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

/// The signals that end a headless run early: the run in progress is cancelled (its runner
/// stopped and reaped) and what finished is printed before benchscope exits.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal, as its number.
    async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Streams one run to completion. Progress goes to stderr once the run is past one second.
async fn collect(
    runner: &dyn Runner,
    request: RunRequest,
    benches: usize,
    passthrough: bool,
    signals: &mut Signals,
) -> (RunRecord, Option<i32>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut record = RunRecord::default();
    let mut handle = match runner.start(request, tx) {
        Ok(h) => h,
        Err(e) => {
            record.error = Some(format!("starting the runner: {e}"));
            return (record, None);
        }
    };
    let mut interrupted: Option<i32> = None;
    let mut progress = Progress::new(benches);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(RunEvent::Event { event, line, .. }) => {
                    if passthrough {
                        crate::out::print(&format!("{line}\n"));
                    }
                    progress.see(&event);
                    record.apply(event);
                }
                Some(RunEvent::Note { text, .. }) => progress.note(&text),
                Some(RunEvent::Exited { outcome, .. }) => {
                    match outcome {
                        Outcome::Completed => {}
                        Outcome::Cancelled => {
                            let why = match interrupted {
                                Some(sig) => format!(
                                    "interrupted by {}: the benches that finished are kept",
                                    signal_name(sig)
                                ),
                                None => "cancelled".into(),
                            };
                            record.error.get_or_insert(why);
                        }
                        Outcome::Failed(e) => {
                            record.error.get_or_insert(e);
                        }
                    }
                    break;
                }
                None => break,
            },
            _ = tick.tick() => progress.show(),
            sig = signals.recv(), if interrupted.is_none() => {
                // Stop the runner; its exit (reaped by the runner layer) ends the loop.
                interrupted = Some(sig);
                handle.cancel();
            }
        }
    }
    progress.finish();
    (record, interrupted)
}

/// Progress on stderr: on a terminal a bar with the ETA the budget gives (indicatif), silent
/// for the first second; each bench's result as a line when it finishes, terminal or not.
struct Progress {
    start: Instant,
    tty: bool,
    bar: indicatif::ProgressBar,
    benches: usize,
    index: usize,
    bench: String,
    bench_started: Instant,
    samples: u64,
    status: String,
    budget: Option<bench_core::protocol::Budget>,
    printed_bench: usize,
}

impl Progress {
    fn new(benches: usize) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = if tty {
            indicatif::ProgressBar::with_draw_target(
                Some(benches as u64),
                indicatif::ProgressDrawTarget::stderr(),
            )
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template("[{elapsed:>4}] {bar:24} {pos}/{len} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        Progress {
            start: Instant::now(),
            tty,
            bar,
            benches,
            index: 0,
            bench: String::new(),
            bench_started: Instant::now(),
            samples: 0,
            status: "starting".into(),
            budget: None,
            printed_bench: 0,
        }
    }

    fn see(&mut self, e: &Event) {
        match e {
            Event::Start(s) => self.budget = Some(s.budget),
            Event::Dataset { status, rows, .. } => {
                self.status = format!("dataset {rows} rows: {status:?}").to_lowercase()
            }
            Event::BenchStart { bench, .. } => {
                self.index += 1;
                self.bench = bench.clone();
                self.bench_started = Instant::now();
                self.samples = 0;
                self.status = "warming up".into();
                self.bar.set_position(self.index.saturating_sub(1) as u64);
            }
            Event::Sample { .. } => {
                self.samples += 1;
                self.status = format!("sample {}", self.samples);
            }
            Event::Tick { window: w, .. } => {
                self.status = format!(
                    "{:.0} s: {:.0} reads/s, writes kept {:.0}%, canary {:.0}%",
                    w.t_s,
                    w.reads_per_s,
                    w.write_completion * 100.0,
                    w.canary_ratio * 100.0
                );
            }
            Event::Summary { bench, stats } => {
                let line = result_line(bench, stats, self.budget.as_ref());
                self.print(&line);
                self.bar.set_position(self.index as u64);
            }
            Event::Error { bench, message } => {
                let line = format!(
                    "✗ {}: {}",
                    bench.as_deref().unwrap_or("run"),
                    message.lines().next().unwrap_or("")
                );
                self.print(&line);
            }
            _ => {}
        }
    }

    /// The time the rest of the run should take by its budget: warm-up and timed samples of
    /// each bench left, and what is left of the current one (benches may take longer when
    /// they need more time for their minimum of samples).
    fn eta(&self) -> Option<Duration> {
        let b = self.budget?;
        let per = b.warmup_s + b.time_s;
        let left = self.benches.saturating_sub(self.index) as f64 * per
            + (per - self.bench_started.elapsed().as_secs_f64()).max(0.0);
        Some(Duration::from_secs_f64(left))
    }

    fn show(&mut self) {
        if self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        let eta = self
            .eta()
            .map(|d| format!(" · ETA ~{:.0} s", d.as_secs_f64().ceil()))
            .unwrap_or_default();
        if self.tty {
            let what = if self.index == 0 {
                self.status.clone()
            } else {
                format!("{}  {}", self.bench, self.status)
            };
            self.bar.set_message(format!("{what}{eta}"));
            self.bar.tick();
        } else if self.printed_bench != self.index {
            self.printed_bench = self.index;
            let elapsed = self.start.elapsed().as_secs_f64();
            eprintln!(
                "[{elapsed:5.1}s] {}/{} {}{eta}",
                self.index, self.benches, self.bench
            );
        }
    }

    /// A line of its own (a bench's result, cargo building harness-sqlx), always shown, above
    /// the bar.
    fn note(&mut self, text: &str) {
        self.print(text);
    }

    fn print(&self, text: &str) {
        if self.tty {
            self.bar.suspend(|| eprintln!("{text}"));
        } else {
            eprintln!("{text}");
        }
    }

    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// One finished bench, as the anchors print it: median and interval, mean ± sd, range, samples
/// after the warm-up, and any outliers or warnings.
fn result_line(
    bench: &str,
    s: &bench_core::measure::stats::Summary,
    budget: Option<&bench_core::protocol::Budget>,
) -> String {
    use crate::format::ns;
    let o = &s.outliers;
    let outliers = o.total();
    let warmup = budget
        .map(|b| format!(" after {} s warm-up", b.warmup_s))
        .unwrap_or_default();
    let mut line = format!(
        "✓ {bench}: {} [{} – {}] · mean {} ± {} · min {} max {} · {} samples{warmup}",
        ns(s.median),
        ns(s.ci95_median[0]),
        ns(s.ci95_median[1]),
        ns(s.mean),
        ns(s.std_dev),
        ns(s.min),
        ns(s.max),
        s.samples
    );
    if outliers > 0 {
        let kinds: Vec<String> = [
            (o.low_severe, "low severe"),
            (o.low_mild, "low mild"),
            (o.high_mild, "high mild"),
            (o.high_severe, "high severe"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| format!("{n} {k}"))
        .collect();
        line.push_str(&format!(
            " · Tukey outliers: {outliers} of {} ({:.0}%: {})",
            s.samples,
            outliers as f64 * 100.0 / s.samples.max(1) as f64,
            kinds.join(", ")
        ));
    }
    for w in &s.warnings {
        line.push_str(&format!("\n    ! {w}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::FakeRunner;
    use bench_core::measure::stats::summarize;

    fn request() -> RunRequest {
        RunRequest::new(
            "t".into(),
            "single_row_lookup",
            vec![],
            Default::default(),
            false,
            &RunSettings::default(),
        )
    }

    #[tokio::test]
    async fn collects_a_fake_stream() {
        let runner = FakeRunner {
            script: vec![
                Event::BenchStart {
                    bench: "rusqlite".into(),
                    backend: "rusqlite".into(),
                    strategy: None,
                    ops: 4,
                    work: None,
                    sqlite: Default::default(),
                },
                Event::Sample {
                    bench: "rusqlite".into(),
                    iter: 0,
                    ops: 4,
                    elapsed_ns: 400,
                    work: None,
                    cost: None,
                },
                Event::Summary {
                    bench: "rusqlite".into(),
                    stats: summarize(&[100.0], None).unwrap(),
                },
                Event::Done,
            ],
            outcome: Outcome::Completed,
        };
        let mut signals = Signals::new().unwrap();
        let (r, interrupted) = collect(&runner, request(), 1, false, &mut signals).await;
        assert_eq!(interrupted, None);
        assert!(r.done && r.error.is_none());
        assert_eq!(r.bench("rusqlite").unwrap().samples, vec![100.0]);
    }

    #[tokio::test]
    async fn a_failed_child_is_reported_with_its_reason() {
        let runner = FakeRunner {
            script: vec![],
            outcome: Outcome::Failed("runner exited with exit status: 101; stderr:\npanic".into()),
        };
        let mut signals = Signals::new().unwrap();
        let (r, interrupted) = collect(&runner, request(), 1, false, &mut signals).await;
        assert_eq!(interrupted, None);
        assert_eq!(
            r.error.as_deref(),
            Some("runner exited with exit status: 101; stderr:\npanic")
        );
    }
}
