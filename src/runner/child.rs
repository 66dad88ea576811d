//! One runner child from start to end: its stdout read (paced, one event a line, each line
//! bounded) and checked, its stderr's tail kept for the error, the watchdog, a cancel, and
//! its whole process group stopped however it ends.

use std::collections::VecDeque;
use std::process::Stdio;

use bench_core::protocol::{self, Event};
use tokio::io::BufReader;
use tokio::process::Command;
use tokio::sync::mpsc;

use super::process::{GroupKill, Program, send_event};
use super::{guard, paced};
use crate::messages::{RunEvent, RunRequest};

const STDERR_TAIL: usize = 20;

/// How one child ended, when it did not complete.
pub(super) enum ChildEnd {
    Cancelled,
    Failed(String),
}

/// Where one child's events go and what starts and stops it.
pub(super) struct To<'a> {
    pub run_id: &'a str,
    pub events: &'a mpsc::UnboundedSender<RunEvent>,
    pub kill_rx: &'a mut tokio::sync::oneshot::Receiver<()>,
    /// Steps of nice below the front end.
    pub nice: i32,
    pub cpus: Option<&'a super::machine::CpuSet>,
}

/// Runs one child to its end, forwarding its events (except `done`). Returns whether it said
/// `done`, or why it failed.
pub(super) async fn run_child(
    program: &Program,
    request: &RunRequest,
    to: To<'_>,
) -> Result<(), ChildEnd> {
    let To {
        run_id,
        events,
        kill_rx,
        nice,
        cpus,
    } = to;
    // The whole run, typed, on the runner's stdin.
    let asked = request.runner_request().map_err(ChildEnd::Failed)?;
    let json = serde_json::to_vec(&asked).expect("a run request is JSON");
    let postgres_url = request.settings.postgres_url.as_ref();
    let mut guard = guard::Guard::new(&request.benches, &asked.budget);
    let secrets = postgres_url
        .map(bench_core::secret::PgUrl::secrets)
        .unwrap_or_default();
    let mut child = command(program, request, nice, cpus).spawn().map_err(|e| {
        ChildEnd::Failed(format!("cannot start {}: {e}", program.program.display()))
    })?;
    hand_over(&mut child, json);
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
    let watchdog = guard::Watchdog::new(&asked.budget);
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
    let status = exit_status(&mut child, exited, &group).await;
    // Whatever the runner left in its group goes with it, and so do its pipes.
    drop(group);
    let tail = bench_core::redact::scrub(&tail.finish().await, &secrets);
    if cancelled {
        return Err(ChildEnd::Cancelled);
    }
    ended(status, failure, saw_done, &tail)
}

/// Writes the run request on the child's stdin, then closes it, from a task of its own: a
/// runner that reads it late (or never) holds up nothing here.
fn hand_over(child: &mut tokio::process::Child, json: Vec<u8>) {
    let mut stdin = child.stdin.take().expect("piped stdin");
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let _ = stdin.write_all(&json).await;
    });
}

/// The child's exit, once its output ended (or was given up on): a moment to exit, then its
/// group is killed.
async fn exit_status(
    child: &mut tokio::process::Child,
    exited: Option<std::io::Result<std::process::ExitStatus>>,
    group: &GroupKill,
) -> std::io::Result<std::process::ExitStatus> {
    match exited {
        Some(s) => s,
        None => match tokio::time::timeout(DRAIN, child.wait()).await {
            Ok(s) => s,
            Err(_) => {
                group.kill();
                child.wait().await
            }
        },
    }
}

/// The runner's command: its program, told to read the run from its stdin, the PostgreSQL
/// URL in its environment (never on its command line), a process group of its own at `nice`
/// steps below the front end, confined to `cpus`, its stdout and stderr piped.
fn command(
    program: &Program,
    request: &RunRequest,
    nice: i32,
    cpus: Option<&super::machine::CpuSet>,
) -> Command {
    let mut command = Command::new(&program.program);
    match request.settings.postgres_url.as_ref() {
        Some(url) => command.env("BENCHSCOPE_POSTGRES_URL", url.expose()),
        None => command.env_remove("BENCHSCOPE_POSTGRES_URL"),
    };
    // What the front end has resolved is in the run request (or not at all): a runner does
    // not read it again from the environment it inherits.
    for var in [
        bench_core::vars::PROCESSES.name,
        bench_core::vars::TRACE.name,
    ] {
        command.env_remove(var);
    }
    command.envs(request.env.iter().map(|(k, v)| (k, v)));
    // A process group of its own: a runner that is a script, or that starts children of its
    // own, is stopped whole, and no grandchild keeps its pipes open after it.
    super::process::own_group(&mut command, nice);
    if let Some(cpus) = cpus {
        super::machine::confine(&mut command, cpus);
    }
    command
        .args(&program.prefix_args)
        .args(["--request", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// How a child that was not cancelled ended: the failure seen while reading it, else its exit
/// (success only after it said `done`), each with its stderr's tail.
fn ended(
    status: std::io::Result<std::process::ExitStatus>,
    failure: Option<String>,
    saw_done: bool,
    tail: &str,
) -> Result<(), ChildEnd> {
    if let Some(f) = failure {
        return Err(ChildEnd::Failed(with_tail(f, tail)));
    }
    match status {
        Ok(s) if s.success() && saw_done => Ok(()),
        Ok(s) if s.success() => Err(ChildEnd::Failed(with_tail(
            "runner exited before saying done".into(),
            tail,
        ))),
        Ok(s) => Err(ChildEnd::Failed(with_tail(
            format!("runner exited with {s}"),
            tail,
        ))),
        Err(e) => Err(ChildEnd::Failed(format!("waiting for the runner: {e}"))),
    }
}

/// The longest line a runner may write: an event is a few KiB, but a script's report holds a
/// row per statement (about 200 bytes each; a mix has at most
/// `bench_core::script::MAX_STATEMENTS`).
const MAX_LINE: usize = 16 << 20;

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
