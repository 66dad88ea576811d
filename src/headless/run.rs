//! Running what was planned: one runner at a time, progress on stderr, the event stream on
//! stdout with `--format jsonl`, and a signal ending it early with what finished kept.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use bench_core::catalog::CONCURRENCY;
use bench_core::protocol::Event;
use bench_core::protocol::results::RunRecord;
use tokio::sync::mpsc;

use super::args::{Error, Format, RunArgs, Side};
use super::plan::Planned;
use crate::messages::{Outcome, RunEvent, RunRequest};
use crate::runner::{ProcessRunner, Runner};

/// What the runs recorded, in order, each with its repeat or round and side.
pub struct Executed {
    pub records: Vec<RunRecord>,
    pub sides: Vec<(usize, Side)>,
    /// The signal that ended the runs early, if one did.
    pub interrupted: Option<i32>,
    /// The target's baseline bench.
    pub baseline: &'static str,
}

/// Runs every planned run, one after the other, until a signal comes.
pub fn execute(args: &RunArgs, p: &mut Planned) -> Result<Executed, Error> {
    if let Some(line) = &p.selected {
        crate::out::say!("{line}");
    }
    let (sweep, repeat, interleave) = (&p.sweep, p.repeat, &p.interleave);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let runner = match ProcessRunner::new() {
        Ok(r) => ProcessRunner {
            // Checked by the plan.
            keep_cpus_awake: args.machine.keep_cpus_awake().unwrap_or(false),
            cpus: args.machine.cpus.clone(),
            ..r
        },
        Err(e) => {
            return Err(Error::Start(format!(
                "cannot find the benchscope executable to start the runner: {e}"
            )));
        }
    };
    let baseline = p.runs[0].0.target.baseline;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut records = Vec::new();
    let mut signals = match rt.block_on(async { Signals::new() }) {
        Ok(s) => s,
        Err(e) => return Err(Error::Start(format!("cannot handle signals: {e}"))),
    };
    let mut interrupted = None;
    let mut sides = Vec::new();
    for (plan, request, r, side) in std::mem::take(&mut p.runs) {
        match (&interleave, side) {
            (Some((rounds, _)), Side::Baseline) => {
                crate::out::say!("round {}/{rounds}: the baseline's set-up", r + 1)
            }
            (Some((rounds, _)), Side::Current) => {
                crate::out::say!("round {}/{rounds}: this run's set-up", r + 1)
            }
            (None, _) if repeat > 1 => crate::out::say!("repeat {}/{repeat}", r + 1),
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
            crate::out::say!("sweep: {}{over}", values.join(" "));
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
    Ok(Executed {
        records,
        sides,
        interrupted,
        baseline,
    })
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
    let paired = request.settings.budget.paired;
    // Every process measures every bench again.
    let processes = request.processes();
    let mut handle = match runner.start(request, tx) {
        Ok(h) => h,
        Err(e) => {
            record.error = Some(format!("starting the runner: {e}"));
            return (record, None);
        }
    };
    let mut interrupted: Option<i32> = None;
    let mut progress = Progress::new(benches * processes);
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
                                // Paired benches finish with their group: what a cut-short
                                // run keeps is the finished groups and the samples so far.
                                Some(sig) if paired => format!(
                                    "interrupted by {}: paired benches finish with their group, so those of the group measuring had not finished; the finished groups and the samples taken so far are kept",
                                    signal_name(sig)
                                ),
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
    /// Seconds of one bench's turn by the budget (warm-up and time of samples).
    per: f64,
    printed_bench: usize,
    /// Turns a baseline bench takes again, in the later groups of paired rounds.
    again: usize,
    /// When the first bench started.
    measuring: Option<Instant>,
}

/// The turns a paired runner's baseline bench takes again: once in every group after its
/// first (a runner's benches beside one baseline, a group at a time).
fn turns_again(start: &bench_core::protocol::Start) -> usize {
    start.paired_group().map_or(0, |g| {
        start
            .benches
            .len()
            .saturating_sub(1)
            .div_ceil(g.max(1))
            .saturating_sub(1)
    })
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
            per: 0.0,
            printed_bench: 0,
            again: 0,
            measuring: None,
        }
    }

    fn see(&mut self, e: &Event) {
        match e {
            Event::Start(s) => {
                // A bench's turn: its warm-up and its time, on average over the run's benches.
                self.per = s.budget.warmup_s
                    + s.benches.iter().map(|b| s.budget.time_of(b)).sum::<f64>()
                        / s.benches.len().max(1) as f64;
                self.budget = Some(s.budget.clone());
                self.again += turns_again(s);
            }
            Event::Dataset { status, rows, .. } => {
                self.status = format!("dataset {rows} rows: {status:?}").to_lowercase()
            }
            Event::BenchStart { bench, .. } => {
                self.measuring.get_or_insert_with(Instant::now);
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
    /// In paired rounds a group's benches start together and take turns to the end of the
    /// group: what is left is the budget of every turn (the baseline's again in each later
    /// group) less the time since the first bench started.
    fn eta(&self) -> Option<Duration> {
        let b = self.budget.as_ref()?;
        let per = self.per;
        let left = match self.measuring.filter(|_| b.paired) {
            Some(since) => {
                ((self.benches + self.again) as f64 * per - since.elapsed().as_secs_f64()).max(0.0)
            }
            None => {
                self.benches.saturating_sub(self.index) as f64 * per
                    + (per - self.bench_started.elapsed().as_secs_f64()).max(0.0)
            }
        };
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
            self.bar
                .set_message(bench_core::text::terminal_lines(&format!("{what}{eta}")));
            self.bar.tick();
        } else if self.printed_bench != self.index {
            self.printed_bench = self.index;
            let elapsed = self.start.elapsed().as_secs_f64();
            crate::out::say!(
                "[{elapsed:5.1}s] {}/{} {}{eta}",
                self.index,
                self.benches,
                self.bench
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
            self.bar.suspend(|| crate::out::say!("{text}"));
        } else {
            crate::out::say!("{text}");
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
    let warmup = match s.processes.len() {
        0 => warmup,
        k => format!("{warmup} each, {k} processes so far"),
    };
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
    use crate::messages::RunSettings;

    /// A paired runner of 39 benches in groups of eight takes its baseline's turn again in
    /// four groups after the first (38 beside it: five groups); all at once, or unpaired, in
    /// none.
    #[test]
    fn the_baseline_takes_its_turn_again_in_every_later_group() {
        let Event::Start(mut s) = crate::testing::start(
            &Default::default(),
            false,
            false,
            bench_core::protocol::Budget {
                paired: true,
                group: Some(8),
                processes: None,
                ..crate::testing::BUDGET
            },
        ) else {
            unreachable!()
        };
        s.benches = (0..39).map(|i| format!("b{i}")).collect();
        assert_eq!(turns_again(&s), 4);
        s.benches.truncate(9);
        assert_eq!(turns_again(&s), 0, "eight beside the baseline: one group");
        s.benches.push("b9".into());
        assert_eq!(turns_again(&s), 1);
        s.budget.group = None;
        assert_eq!(turns_again(&s), 0);
        s.budget = crate::testing::BUDGET;
        assert_eq!(turns_again(&s), 0);
    }
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
                    memory: None,
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
