//! The runner layer: one child process per run, its stdout parsed line by line into events
//! sent on a channel. Behind a trait so that front ends can be tested without processes.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;

use bench_core::protocol::{self, Event};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;

/// What to run: a target, its benches, resolved knobs and the budget, as runner arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub run_id: String,
    pub target: String,
    pub benches: Vec<String>,
    /// Every knob of the target, already checked against the catalog.
    pub knobs: Vec<(String, u64)>,
    pub budget_args: Vec<String>,
    pub trace: bool,
    pub cache_dir: Option<PathBuf>,
}

impl RunRequest {
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![self.target.clone(), "--run-id".into(), self.run_id.clone()];
        for b in &self.benches {
            a.extend(["--bench".into(), b.clone()]);
        }
        for (k, v) in &self.knobs {
            a.extend(["--knob".into(), format!("{k}={v}")]);
        }
        a.extend(self.budget_args.iter().cloned());
        if self.trace {
            a.push("--trace".into());
        }
        if let Some(d) = &self.cache_dir {
            a.extend(["--cache-dir".into(), d.display().to_string()]);
        }
        a
    }
}

/// What the runner layer reports about one run. (Events are moved, not copied, so the size of
/// the `Event` variant does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// A parsed event, with the raw line it came from.
    Event {
        run_id: String,
        event: Event,
        line: String,
    },
    /// The child ended. `error` says why the run failed, if it did, with its stderr tail.
    Exited {
        run_id: String,
        error: Option<String>,
    },
}

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

/// Spawns `program args...` (by default this executable's hidden `runner` subcommand).
pub struct ProcessRunner {
    pub program: PathBuf,
    pub prefix_args: Vec<String>,
}

impl ProcessRunner {
    /// bench-core's runner, reached through this executable so it is always built with the
    /// same sources and profile.
    pub fn core() -> std::io::Result<Self> {
        Ok(ProcessRunner {
            program: std::env::current_exe()?,
            prefix_args: vec!["runner".into()],
        })
    }
}

const STDERR_TAIL: usize = 20;

impl Runner for ProcessRunner {
    fn start(
        &self,
        request: RunRequest,
        events: mpsc::UnboundedSender<RunEvent>,
    ) -> std::io::Result<RunHandle> {
        let mut child = Command::new(&self.program)
            .args(&self.prefix_args)
            .args(request.args())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (kill_tx, mut kill_rx) = tokio::sync::oneshot::channel::<()>();
        let run_id = request.run_id.clone();
        tokio::spawn(async move {
            let tail = tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                let mut tail = VecDeque::new();
                while let Ok(Some(l)) = lines.next_line().await {
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(l);
                }
                tail.into_iter().collect::<Vec<_>>().join("\n")
            });
            let mut lines = BufReader::new(stdout).lines();
            let mut failure: Option<String> = None;
            let mut saw_done = false;
            let mut cancelled = false;
            loop {
                tokio::select! {
                    line = lines.next_line() => match line {
                        Ok(Some(line)) => match protocol::decode(&line) {
                            Ok(event) => {
                                saw_done |= matches!(event, Event::Done);
                                let _ = events.send(RunEvent::Event { run_id: run_id.clone(), event, line });
                            }
                            Err(e) => {
                                failure = Some(format!("runner wrote a malformed line ({e}): {}", truncate(&line, 200)));
                                let _ = child.start_kill();
                                break;
                            }
                        },
                        Ok(None) => break,
                        Err(e) => {
                            failure = Some(format!("reading runner output: {e}"));
                            break;
                        }
                    },
                    _ = &mut kill_rx, if !cancelled => {
                        cancelled = true;
                        let _ = child.start_kill();
                    }
                }
            }
            let status = child.wait().await;
            let tail = tail.await.unwrap_or_default();
            let error = if cancelled {
                Some("cancelled".to_string())
            } else if let Some(f) = failure {
                Some(with_tail(f, &tail))
            } else {
                match status {
                    Ok(s) if s.success() && saw_done => None,
                    Ok(s) if s.success() => {
                        Some(with_tail("runner exited before saying done".into(), &tail))
                    }
                    Ok(s) => Some(with_tail(format!("runner exited with {s}"), &tail)),
                    Err(e) => Some(format!("waiting for the runner: {e}")),
                }
            };
            let _ = events.send(RunEvent::Exited { run_id, error });
        });
        Ok(RunHandle {
            kill: Some(kill_tx),
        })
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
    pub error: Option<String>,
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
            error: self.error.clone(),
        });
        Ok(RunHandle::detached())
    }
}
