//! Standard output that a reader may close under us (`benchscope list | head -1`): writing
//! into a closed pipe is not a crash. Output stops quietly, everything else (files, baselines)
//! is still written, and the process ends as other Unix tools do when their reader goes away:
//! killed by SIGPIPE (status 141 in a shell).

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

const OPEN: u8 = 0;
/// The reader went away (EPIPE).
const GONE: u8 = 1;
/// Writing failed otherwise (a full disk: `> /dev/full`).
const FAILED: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(OPEN);

/// Writes `text` to stdout and flushes it; once the reader has gone, writes nothing more.
/// Any other error writing stdout is said once on stderr.
pub fn print(text: &str) {
    if STATE.load(Ordering::Relaxed) != OPEN {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STATE.store(GONE, Ordering::Relaxed);
        } else {
            STATE.store(FAILED, Ordering::Relaxed);
            let _ = writeln!(std::io::stderr(), "error: writing standard output: {e}");
        }
    }
}

/// Ends the process with `code`; when it would be 0, with 1 if stdout could not be written,
/// or by SIGPIPE if stdout's reader went away meanwhile.
pub fn exit(code: i32) -> ! {
    let state = STATE.load(Ordering::Relaxed);
    if code == 0 && state == FAILED {
        std::process::exit(1);
    }
    if code == 0 && state == GONE {
        // SAFETY: restoring the default action of SIGPIPE and raising it on ourselves.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
    }
    std::process::exit(code)
}

/// Writes a line to stderr, its text through [`bench_core::text::terminal_lines`]: an error or
/// a note quoting a name from data (a Criterion set, a baseline folder, a label, a driver's
/// error) cannot move the cursor or hide what follows. Every line benchscope writes to stderr
/// goes through here (`tests/layers.rs` checks).
pub fn say_line(text: &str) {
    bench_core::text::say(text);
}

/// [`say_line`] of a formatted message: `say!("error: {e}")`.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::out::say_line(&format!($($arg)*))
    };
}
pub(crate) use say;
