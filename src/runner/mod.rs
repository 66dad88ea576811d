//! The runner layer: one child process per run, its stdout parsed line by line into events
//! sent on a channel. Behind a trait so that front ends can be tested without processes.

pub mod guard;
pub mod harnesses;
pub mod machine;
mod paced;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;

use bench_core::catalog::Harness;
use bench_core::profile::Profile;
use bench_core::protocol::{self, Event};
use tokio::io::BufReader;
use tokio::process::Command;
use tokio::sync::mpsc;

use crate::messages::{Outcome, RunEvent, RunRequest};

/// Starts runs. `ProcessRunner` spawns real children; tests use a fake.
pub trait Runner {
    fn start(
        &self,
        request: RunRequest,
        events: mpsc::UnboundedSender<RunEvent>,
    ) -> std::io::Result<RunHandle>;
}

/// Kills the child when dropped or cancelled.
pub struct RunHandle {
    kill: Option<tokio::sync::oneshot::Sender<()>>,
}

impl RunHandle {
    #[cfg(test)]
    pub fn detached() -> Self {
        RunHandle { kill: None }
    }

    pub fn cancel(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// How to start one harness's runner.
#[derive(Debug, Clone)]
pub struct Program {
    pub program: PathBuf,
    pub prefix_args: Vec<String>,
}

/// Starts each run as child processes: bench-core's runner (this executable's hidden `runner`
/// subcommand) for the core benches, then each harness crate (harness-sqlx, harness-async-sqlite)
/// for its benches, one after the other, presented as one stream (one `done`, one exit).
pub struct ProcessRunner {
    pub core: Program,
    /// The harness crates, in [`harnesses::EXTERNAL`]'s order.
    pub externals: Vec<harnesses::Locator>,
    /// Start the core benches while a harness crate still builds (the explorer: a first sqlx
    /// run does not sit idle for minutes) instead of building first (headless: nothing is
    /// measured beside a compiler).
    pub overlap_build: bool,
}

impl ProcessRunner {
    pub fn new() -> std::io::Result<Self> {
        Ok(ProcessRunner {
            core: Program {
                program: std::env::current_exe()?,
                prefix_args: vec!["runner".into()],
            },
            externals: harnesses::EXTERNAL
                .into_iter()
                .map(harnesses::Locator::new)
                .collect(),
            overlap_build: false,
        })
    }
}

/// The request's benches grouped by the harness that runs them, in catalog order of harnesses.
pub fn split_by_harness(req: &RunRequest) -> Vec<(Harness, Vec<String>)> {
    let target = bench_core::workloads::find(&req.target).ok();
    let harness_of = |b: &str| {
        target
            .and_then(|t| t.spec(b).ok())
            .map(|s| s.harness())
            .unwrap_or(Harness::Core)
    };
    let mut groups: Vec<(Harness, Vec<String>)> = Vec::new();
    for h in Harness::ALL {
        let mine: Vec<String> = req
            .benches
            .iter()
            .filter(|b| harness_of(b) == h)
            .cloned()
            .collect();
        if !mine.is_empty() {
            groups.push((h, mine));
        }
    }
    groups
}

const STDERR_TAIL: usize = 20;

/// How one child ended, when it did not complete.
enum ChildEnd {
    Cancelled,
    Failed(String),
}

/// Runs one child to its end, forwarding its events (except `done`). Returns whether it said
/// `done`, or why it failed.
async fn run_child(
    program: &Program,
    request: &RunRequest,
    run_id: &str,
    events: &mpsc::UnboundedSender<RunEvent>,
    kill_rx: &mut tokio::sync::oneshot::Receiver<()>,
) -> Result<(), ChildEnd> {
    let args = request.args();
    let env = &request.env;
    let postgres_url = request.settings.postgres_url.as_deref();
    let mut guard = guard::Guard::new(&request.benches, &request.settings.budget_args);
    let secrets = postgres_url
        .map(bench_core::redact::secrets)
        .unwrap_or_default();
    let mut command = Command::new(&program.program);
    match postgres_url {
        Some(url) => command.env("BENCHSCOPE_POSTGRES_URL", url),
        None => command.env_remove("BENCHSCOPE_POSTGRES_URL"),
    };
    command.envs(env.iter().map(|(k, v)| (k, v)));
    // A process group of its own: a runner that is a script, or that starts children of its
    // own, is stopped whole, and no grandchild keeps its pipes open after it.
    let mut child = command
        .args(&program.prefix_args)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            ChildEnd::Failed(format!("cannot start {}: {e}", program.program.display()))
        })?;
    let group = GroupKill(child.id());
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let tail = StderrTail::read(stderr);
    let stdout = paced::PacedPipe::read(stdout).map_err(|e| {
        stop(&mut child, program);
        ChildEnd::Failed(format!("cannot read the runner's output: {e}"))
    })?;
    let mut stdout = BufReader::new(stdout);
    let mut buf = Vec::new();
    let mut failure: Option<String> = None;
    let mut saw_done = false;
    let mut cancelled = false;
    let mut exited: Option<std::io::Result<std::process::ExitStatus>> = None;
    let mut drained = tokio::time::Instant::now();
    let watchdog = guard::Watchdog::new(request);
    let mut silence = watchdog.bound(None);
    let mut deadline = tokio::time::Instant::now() + silence;
    loop {
        tokio::select! {
            line = read_line(&mut stdout, &mut buf, MAX_LINE) => match line {
                Ok(Line::Text(line)) => match protocol::decode(&line) {
                    Ok(Event::Done) => saw_done = true,
                    Ok(event) => {
                        let (event, line) = guard::scrub(event, line, &secrets);
                        if let Err(e) = guard.check(&event) {
                            failure = Some(format!("runner sent an event that cannot be right: {e}"));
                            stop(&mut child, program);
                            break;
                        }
                        silence = watchdog.bound(Some(&event));
                        deadline = tokio::time::Instant::now() + silence;
                        let _ = events.send(RunEvent::Event { run_id: run_id.to_string(), event, line });
                    }
                    Err(e) => {
                        let line = bench_core::redact::scrub(&line, &secrets);
                        failure = Some(format!("runner wrote a malformed line ({e}): {}", truncate(&line, 200)));
                        stop(&mut child, program);
                        break;
                    }
                },
                Ok(Line::TooLong(start)) => {
                    let start = bench_core::redact::scrub(&start, &secrets);
                    failure = Some(format!(
                        "runner wrote a line of more than {} MiB (allowed: one event per line, at most {} MiB): {}",
                        MAX_LINE >> 20, MAX_LINE >> 20, truncate(&start, 200)
                    ));
                    stop(&mut child, program);
                    break;
                }
                Ok(Line::End) => break,
                Err(e) => {
                    failure = Some(format!("reading runner output: {e}"));
                    stop(&mut child, program);
                    break;
                }
            },
            status = child.wait(), if exited.is_none() => {
                // What it wrote before it ended is still read, for a moment: a process it left
                // behind may hold the pipe open for ever.
                exited = Some(status);
                drained = tokio::time::Instant::now() + DRAIN;
            }
            _ = tokio::time::sleep_until(drained), if exited.is_some() => break,
            _ = &mut *kill_rx, if !cancelled => {
                cancelled = true;
                stop(&mut child, program);
            }
            _ = tokio::time::sleep_until(deadline), if !cancelled && exited.is_none() => {
                let what = guard.current.clone();
                let message = format!(
                    "no progress for {} s: the runner wrote nothing in that time and was stopped",
                    silence.as_secs()
                );
                if let Some(bench) = what {
                    send_event(events, run_id, Event::Error { bench: Some(bench), message: message.clone() });
                }
                failure = Some(message);
                stop(&mut child, program);
                break;
            }
        }
    }
    let status = match exited {
        Some(s) => s,
        // Its output ended (or was given up on) before it exited: a moment to exit, then the
        // group is killed.
        None => match tokio::time::timeout(DRAIN, child.wait()).await {
            Ok(s) => s,
            Err(_) => {
                group.kill();
                child.wait().await
            }
        },
    };
    // Whatever the runner left in its group goes with it, and so do its pipes.
    drop(group);
    let tail = bench_core::redact::scrub(&tail.finish().await, &secrets);
    if cancelled {
        return Err(ChildEnd::Cancelled);
    }
    if let Some(f) = failure {
        return Err(ChildEnd::Failed(with_tail(f, &tail)));
    }
    match status {
        Ok(s) if s.success() && saw_done => Ok(()),
        Ok(s) if s.success() => Err(ChildEnd::Failed(with_tail(
            "runner exited before saying done".into(),
            &tail,
        ))),
        Ok(s) => Err(ChildEnd::Failed(with_tail(
            format!("runner exited with {s}"),
            &tail,
        ))),
        Err(e) => Err(ChildEnd::Failed(format!("waiting for the runner: {e}"))),
    }
}

/// The longest line a runner may write (an event is a few KiB at most).
const MAX_LINE: usize = 1 << 20;

/// How long a runner's pipes are still read once it has exited (or its output ended).
const DRAIN: std::time::Duration = std::time::Duration::from_secs(1);

/// One line of a runner's stdout.
enum Line {
    Text(String),
    /// The first bytes of a line longer than allowed.
    TooLong(String),
    End,
}

/// The next line of `r`, read into `buf` but never more than `max` bytes of it (a runner that
/// writes without a newline does not fill the memory). Cancel-safe: a partial line stays in
/// `buf` for the next call.
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    use tokio::io::AsyncBufReadExt as _;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            if buf.is_empty() {
                return Ok(Line::End);
            }
            let line = String::from_utf8_lossy(buf).into_owned();
            buf.clear();
            return Ok(Line::Text(line));
        }
        let (take, newline) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        buf.extend_from_slice(&chunk[..take]);
        r.consume(take);
        if newline {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            let line = String::from_utf8_lossy(buf).into_owned();
            buf.clear();
            return Ok(Line::Text(line));
        }
        if buf.len() > max {
            let start = String::from_utf8_lossy(&buf[..256.min(buf.len())]).into_owned();
            return Ok(Line::TooLong(start));
        }
    }
}

/// The last lines a runner wrote on stderr, read as they come; what a process left behind
/// still writes after the runner ended is not waited for.
struct StderrTail {
    lines: std::sync::Arc<std::sync::Mutex<VecDeque<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl StderrTail {
    fn read(stderr: tokio::process::ChildStderr) -> StderrTail {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(VecDeque::new()));
        let keep = lines.clone();
        let task = tokio::spawn(async move {
            let mut r = BufReader::new(stderr);
            let mut buf = Vec::new();
            while let Ok(line) = read_line(&mut r, &mut buf, MAX_LINE).await {
                let line = match line {
                    Line::Text(l) => l,
                    Line::TooLong(start) => {
                        buf.clear();
                        format!("{start}… (a line of more than {} MiB)", MAX_LINE >> 20)
                    }
                    Line::End => break,
                };
                let mut tail = keep.lock().expect("tail lock");
                if tail.len() == STDERR_TAIL {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        });
        StderrTail { lines, task }
    }

    /// The lines so far, once the pipe has ended or after a short wait.
    async fn finish(self) -> String {
        let mut task = self.task;
        if tokio::time::timeout(DRAIN, &mut task).await.is_err() {
            task.abort();
        }
        let tail = self.lines.lock().expect("tail lock");
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// A process group, killed when dropped (a child that is no longer wanted and whatever it
/// started: a runner's script, cargo and the compilers it runs).
pub(crate) struct GroupKill(pub(crate) Option<u32>);

impl GroupKill {
    /// Kills the group now (SIGKILL); nothing when it has no member left.
    pub(crate) fn kill(&self) {
        if let Some(pgid) = self.0 {
            // SAFETY: kill(2) on the process group our own child leads.
            unsafe { libc::kill(-(pgid as libc::pid_t), libc::SIGKILL) };
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Runner for ProcessRunner {
    fn start(
        &self,
        request: RunRequest,
        events: mpsc::UnboundedSender<RunEvent>,
    ) -> std::io::Result<RunHandle> {
        let (kill_tx, mut kill_rx) = tokio::sync::oneshot::channel::<()>();
        let core = self.core.clone();
        let externals = self.externals.clone();
        let overlap_build = self.overlap_build;
        tokio::spawn(async move {
            let run_id = request.run_id.clone();
            let mut errors = Vec::new();
            let mut cancelled = false;
            // Find (or build) every harness first, so a build never lands between benches and
            // a harness that cannot be had is known before anything is measured; or, when
            // overlapping, let a harness crate build on while the core benches run.
            let groups = split_by_harness(&request);
            let has_core = groups.iter().any(|(h, _)| *h == Harness::Core);
            let mut children = Vec::new();
            for (harness, benches) in groups {
                let locator = externals.iter().find(|l| l.external.harness == harness);
                let program = match locator {
                    None => Pending::Ready(Ok(core.clone())),
                    Some(l) if overlap_build && has_core && !l.is_ready() && l.builds() => {
                        let l = l.clone();
                        let _ = events.send(RunEvent::Note {
                            run_id: run_id.clone(),
                            text: format!("core benches run while the {} harness builds: cargo shares their CPU (the machine line says how much)", harness.name()),
                        });
                        Pending::Building(tokio::spawn(async move { l.program(&|_| {}).await }))
                    }
                    Some(l) => {
                        let note = |text: String| {
                            let _ = events.send(RunEvent::Note {
                                run_id: run_id.clone(),
                                text,
                            });
                        };
                        tokio::select! {
                            p = l.program(&note) => Pending::Ready(p),
                            _ = &mut kill_rx => {
                                let _ = events.send(RunEvent::Exited { run_id, outcome: Outcome::Cancelled });
                                return;
                            }
                        }
                    }
                };
                children.push((harness, benches, program));
            }
            // One measurement at a time on this machine: wait for any other benchscope's.
            let asked = std::time::Instant::now();
            let mut said = false;
            let _lock = loop {
                match machine::try_lock() {
                    Ok(Some(lock)) => break Some(lock),
                    Ok(None) => {
                        if !said {
                            said = true;
                            let _ = events.send(RunEvent::Note {
                                run_id: run_id.clone(),
                                text: format!(
                                    "waiting: another benchscope measurement is running on this machine ({} is taken); this run starts when it ends",
                                    machine::lock_path().display()
                                ),
                            });
                        }
                        tokio::select! {
                            _ = tokio::time::sleep(machine::RETRY) => {}
                            _ = &mut kill_rx => {
                                let _ = events.send(RunEvent::Exited { run_id, outcome: Outcome::Cancelled });
                                return;
                            }
                        }
                    }
                    // A lock that cannot be had at all (a read-only temp folder) does not stop
                    // the run; the machine record says it did not wait.
                    Err(e) => {
                        let _ = events.send(RunEvent::Note {
                            run_id: run_id.clone(),
                            text: format!("{e}: this run does not wait for other measurements"),
                        });
                        break None;
                    }
                }
            };
            let waited = asked.elapsed();
            let before = machine::snapshot();
            // Profiled, every bench is its own child under perf: one recording per bench.
            let children: Vec<(Harness, Vec<String>, Pending)> = if request.profile.is_some() {
                let mut split = Vec::new();
                for (h, benches, p) in children {
                    let Some(p) = p.wait(&mut kill_rx).await else {
                        cancelled = true;
                        break;
                    };
                    split.extend(
                        benches
                            .into_iter()
                            .map(|b| (h, vec![b], Pending::Ready(p.clone()))),
                    );
                }
                split
            } else {
                children
            };
            for (harness, benches, program) in children {
                if cancelled {
                    break;
                }
                let Some(program) = program.wait(&mut kill_rx).await else {
                    cancelled = true;
                    break;
                };
                let stem = request
                    .profile
                    .as_ref()
                    .map(|dir| crate::profile::stem(dir, &request.target, &benches[0], &run_id));
                let part = RunRequest {
                    benches: benches.clone(),
                    ..request.clone()
                };
                let program = match (&stem, program) {
                    (Some(stem), Ok(p)) => Ok(under_perf(&p, stem)),
                    (_, p) => p,
                };
                let result = match program {
                    Ok(p) => run_child(&p, &part, &run_id, &events, &mut kill_rx).await,
                    Err(e) => Err(ChildEnd::Failed(e)),
                };
                if let Some(stem) = stem {
                    let bench = benches[0].clone();
                    let profile = match &result {
                        Ok(()) => {
                            let title = format!("{} {bench}", request.target);
                            let stem = stem.clone();
                            tokio::task::spawn_blocking(move || {
                                crate::profile::finish(&stem, &title)
                            })
                            .await
                            .unwrap_or_else(|e| Profile::failed(format!("profiling: {e}")))
                        }
                        Err(_) => {
                            let _ = std::fs::remove_file(stem.with_extension("perf.data"));
                            Profile::failed("the bench did not finish under the profiler")
                        }
                    };
                    send_event(&events, &run_id, Event::Profile { bench, profile });
                }
                match result {
                    Ok(()) => {}
                    Err(ChildEnd::Cancelled) => {
                        cancelled = true;
                        break;
                    }
                    // One harness failing does not stop the others.
                    Err(ChildEnd::Failed(e)) => {
                        errors.push(format!("{} harness: {e}", harness.name()))
                    }
                }
            }
            let machine = machine::between(&before, &machine::snapshot(), waited);
            send_event(&events, &run_id, Event::Machine { machine });
            let outcome = if cancelled {
                Outcome::Cancelled
            } else if errors.is_empty() {
                send_event(&events, &run_id, Event::Done);
                Outcome::Completed
            } else {
                Outcome::Failed(errors.join("; "))
            };
            let _ = events.send(RunEvent::Exited { run_id, outcome });
        });
        Ok(RunHandle {
            kill: Some(kill_tx),
        })
    }
}

/// A harness's program: known, or still being built in a task of its own.
enum Pending {
    Ready(Result<Program, String>),
    Building(tokio::task::JoinHandle<Result<Program, String>>),
}

impl Pending {
    /// The program once it is there; `None` when the run is cancelled meanwhile.
    async fn wait(
        self,
        kill_rx: &mut tokio::sync::oneshot::Receiver<()>,
    ) -> Option<Result<Program, String>> {
        match self {
            Pending::Ready(p) => Some(p),
            Pending::Building(task) => tokio::select! {
                p = task => Some(p.unwrap_or_else(|e| Err(format!("building a harness crate: {e}")))),
                _ = kill_rx => None,
            },
        }
    }
}

/// Sends an event the runner layer writes itself (a watchdog's error, a profile, the machine
/// record, `done`), with its line, as a runner's would be sent.
fn send_event(events: &mpsc::UnboundedSender<RunEvent>, run_id: &str, event: Event) {
    let line = protocol::encode(&event);
    let _ = events.send(RunEvent::Event {
        run_id: run_id.to_string(),
        event,
        line,
    });
}

/// Stops a child: perf gets SIGTERM, which it passes on to the runner it records (SIGKILL
/// would leave that runner behind; the group is killed once perf has ended); a runner is
/// killed with its whole process group.
fn stop(child: &mut tokio::process::Child, program: &Program) {
    match child.id() {
        Some(pid) if program.program == crate::profile::perf() => {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
        Some(pid) => GroupKill(Some(pid)).kill(),
        None => {}
    }
}

/// The same runner, started by perf recording into `<stem>.perf.data`.
fn under_perf(p: &Program, stem: &std::path::Path) -> Program {
    let mut prefix_args = crate::profile::record_args(&stem.with_extension("perf.data"));
    prefix_args.push(p.program.display().to_string());
    prefix_args.extend(p.prefix_args.iter().cloned());
    Program {
        program: crate::profile::perf(),
        prefix_args,
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn with_tail(msg: String, tail: &str) -> String {
    if tail.trim().is_empty() {
        msg
    } else {
        format!("{msg}; stderr:\n{tail}")
    }
}

/// A runner that replays scripted events, for tests of the front ends.
#[cfg(test)]
pub struct FakeRunner {
    pub script: Vec<Event>,
    pub outcome: Outcome,
}

#[cfg(test)]
impl Runner for FakeRunner {
    fn start(
        &self,
        request: RunRequest,
        events: mpsc::UnboundedSender<RunEvent>,
    ) -> std::io::Result<RunHandle> {
        for event in &self.script {
            let line = protocol::encode(event);
            let _ = events.send(RunEvent::Event {
                run_id: request.run_id.clone(),
                event: event.clone(),
                line,
            });
        }
        let _ = events.send(RunEvent::Exited {
            run_id: request.run_id,
            outcome: self.outcome.clone(),
        });
        Ok(RunHandle::detached())
    }
}
