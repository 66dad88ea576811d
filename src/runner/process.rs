//! What every child process of a run shares: how to start a runner, the process group it runs
//! in (killed whole when dropped) and how the runner layer sends an event of its own.

use std::path::PathBuf;

use bench_core::protocol::{self, Event};
use tokio::sync::mpsc;

use crate::messages::RunEvent;

/// How to start one harness's runner.
#[derive(Debug, Clone)]
pub struct Program {
    pub program: PathBuf,
    pub prefix_args: Vec<String>,
}

/// Starts `command`'s process in a process group of its own (so that every stop kills it
/// whole) and, when `nice` is above 0, `nice` steps below the caller's priority in a session
/// of its own: where the kernel groups a session's threads for scheduling (autogroup), the
/// front end's session then holds the front end alone, and its threads weigh as much as all
/// of the run's together instead of one of hundreds.
pub(crate) fn own_group(command: &mut tokio::process::Command, nice: i32) {
    if nice > 0 {
        // SAFETY: the closure runs in the forked child before exec and makes two system calls
        // (setsid(2), nice(2), both async-signal-safe); it allocates nothing and touches no
        // lock. setsid makes the child the leader of a new process group too.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // A priority that cannot be lowered (an unusual limit) leaves the runner as
                // it is; nothing depends on it but the explorer's latency.
                libc::nice(nice);
                Ok(())
            });
        }
    } else {
        command.process_group(0);
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

/// Sends an event the runner layer writes itself (a watchdog's error, a profile, the machine
/// record, `done`), with its line, as a runner's would be sent.
pub(crate) fn send_event(events: &mpsc::UnboundedSender<RunEvent>, run_id: &str, event: Event) {
    let line = protocol::encode(&event);
    let _ = events.send(RunEvent::Event {
        run_id: run_id.to_string(),
        event,
        line,
    });
}
