//! The explorer's main loop: one `tokio::select!` over key presses, run events and a fixed
//! render tick. State changes only in `model::update`; drawing only in `ui::render`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{
    Event as TermEvent, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers,
};
use futures::StreamExt;
use tokio::sync::mpsc;

use crate::messages::{RunEvent, RunSettings};
use crate::model::keys::Key;
use crate::model::{Action, State};
use crate::runner::{ProcessRunner, Runner};
use bench_core::service::args::SessionArgs;
use effects::Loop;

mod effects;

/// Ticks per second: how soon a change shows (a key draws at once).
pub const FPS: u64 = 10;

/// While runs stream, the share of one core the explorer may spend drawing: a frame that
/// took `d` to draw is followed by the next streamed one no sooner than `d / DRAW_SHARE`
/// later (and never sooner than [`MIN_STREAM_FRAME`]). Keys and resizes draw at once.
pub const DRAW_SHARE: f64 = 0.0025;
pub const MIN_STREAM_FRAME: Duration = Duration::from_millis(100);
/// However costly a frame, the one streaming shows at least this often.
pub const MAX_STREAM_FRAME: Duration = Duration::from_millis(1000);

/// When the next frame that only shows streamed results may be drawn, given how long the
/// last one took to draw.
pub fn next_stream_frame(drawn_at: Instant, took: Duration) -> Instant {
    drawn_at
        + took
            .div_f64(DRAW_SHARE)
            .clamp(MIN_STREAM_FRAME, MAX_STREAM_FRAME)
}

#[derive(Debug, Clone, clap::Args)]
pub struct TuiArgs {
    /// Target the explorer opens on (the script target when --script is given).
    #[arg(long, default_value = "single_row_lookup")]
    pub target: String,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Where `e` writes snapshots.
    #[arg(long, value_name = "DIR", default_value = "snapshots")]
    pub snapshot_dir: PathBuf,
    #[command(flatten)]
    pub store: crate::store::StoreArgs,
    #[command(flatten)]
    pub machine: crate::runner::machine::MachineArgs,
}

/// Restores the terminal however the loop ends (ratatui's panic hook covers panics).
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

fn key_of(k: KeyEvent) -> Option<Key> {
    if k.kind != KeyEventKind::Press {
        return None;
    }
    Some(match k.code {
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Key::CtrlC,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}

pub fn run(args: TuiArgs, open: Option<&std::path::Path>) -> i32 {
    if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        crate::out::say!(
            "error: TERM=dumb: the explorer draws with cursor movement, which a dumb terminal has not (allowed: any other TERM, e.g. xterm-256color); `benchscope run TARGET` works anywhere"
        );
        return 2;
    }
    // Everything is checked, and the explorer's state made, before the terminal is taken.
    let (mut state, setup) = match prepare(&args, open) {
        Ok(p) => p,
        Err(e) => {
            crate::out::say!("error: {e}");
            return 2;
        }
    };
    let Setup {
        recorder,
        keep_cpus_awake,
        key_log,
        nice,
    } = setup;
    let journal = begin_journal(&mut state);
    let runner = match runner(nice, keep_cpus_awake, &args) {
        Ok(r) => r,
        Err(e) => {
            crate::out::say!("error: cannot find the benchscope executable to start runs: {e}");
            return 1;
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            ratatui::restore();
            crate::out::say!(
                "error: cannot open the terminal: {e} (for scripts use `benchscope run`)"
            );
            return 1;
        }
    };
    let guard = TerminalGuard;
    let logs = Logs { journal, key_log };
    let result = rt.block_on(explore(
        terminal, &mut state, &runner, recorder, logs, &args,
    ));
    drop(guard);
    let result = result.map(|store| {
        if let Some(s) = store
            && !s.finish(Duration::from_secs(15))
        {
            crate::out::say!("the results store did not answer within 15 s: the last runs may not be recorded there (they are in the session journal)");
        }
    });
    let left = state.unexported();
    if let Some(p) = state.session.journal.as_ref().filter(|_| left > 0) {
        crate::out::say!(
            "{left} {} with results no export holds {} kept in {}; benchscope offers to reopen {} at its next start",
            if left == 1 { "run" } else { "runs" },
            if left == 1 { "is" } else { "are" },
            p.display(),
            if left == 1 { "it" } else { "them" }
        );
    }
    match result {
        Ok(()) => 0,
        Err(e) => {
            crate::out::say!("error: {e}");
            1
        }
    }
}

/// What the explorer runs with besides its state, read from its settings before it starts.
struct Setup {
    recorder: Option<crate::store::Recorder>,
    keep_cpus_awake: bool,
    key_log: Option<std::fs::File>,
    nice: i32,
}

/// The environment's settings, each through its one parser: where runs are recorded, whether
/// idle CPUs are kept awake, the key log.
fn checked_settings(
    args: &TuiArgs,
) -> Result<(Option<crate::store::Recorder>, bool, Option<std::fs::File>), String> {
    bench_core::vars::check_environment()
        .map_err(|e| e.to_string())
        .and_then(|()| knob_variables())
        .and_then(|()| {
            let key_log = match bench_core::vars::KEY_LOG
                .read()
                .map_err(|e| e.to_string())?
            {
                Some(p) => Some(
                    bench_core::opener::open_append(&p, bench_core::vars::KEY_LOG.name)
                        .map_err(|e| e.to_string())?,
                ),
                None => None,
            };
            Ok((
                args.store.recorder()?,
                args.machine.keep_cpus_awake()?,
                key_log,
            ))
        })
}

/// The explorer's first state, every input checked: the cache folder, the settings, the
/// saved results it shows (`open`), the script files, its target and knobs (a sweep's first
/// values), its budget and trace; and what it runs with.
fn prepare(args: &TuiArgs, open: Option<&std::path::Path>) -> Result<(State, Setup), String> {
    bench_core::dataset::ensure_cache_dir(&args.session.cache_dir())?;
    let (recorder, keep_cpus_awake, key_log) = checked_settings(args)?;
    // Saved results to show beside new runs.
    let opened = open.map(crate::show::load).transpose()?;
    // The explorer opens on the target of what it shows.
    let first_target = opened
        .as_ref()
        .and_then(|s| s.runs.iter().find_map(|r| r.start.as_ref()))
        .map(|s| s.target.raw().to_string())
        .filter(|t| bench_core::workloads::find(t).is_ok());
    // Script files open the script target.
    let script = &args.session.script;
    let script_view = if script.is_empty() {
        None
    } else {
        bench_core::workloads::script::check_and_judge(script).map_err(|e| e.to_string())?;
        let defines = script
            .defines
            .iter()
            .map(|d| bench_core::script::parse_define(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        Some(crate::model::script::view(
            bench_core::workloads::script::spec_for(script),
            &defines,
        ))
    };
    let target_name = first_target.unwrap_or_else(|| {
        if script.is_empty() {
            args.target.clone()
        } else {
            bench_core::workloads::script::NAME.to_string()
        }
    });
    let target = match bench_core::workloads::find(&target_name).map_err(|e| e.to_string())? {
        t if t.name == bench_core::workloads::script::NAME && script_view.is_some() => {
            script_view.as_ref().expect("checked").target
        }
        t => t,
    };
    // Lists of values (`--concurrency 1,2`) are a sweep, as for `run`: the explorer opens on
    // the first values, and `s` in the catalog queues the sweep.
    let sweep = args.session.sweep(target).map_err(|e| e.to_string())?;
    let variants = sweep
        .variants
        .iter()
        .map(|v| v.resolve(target))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    args.session.budget.resolve().map_err(|e| e.to_string())?;
    let nice = crate::runner::front_end_nice()?;
    let trace = args.session.trace().map_err(|e| e.to_string())?;
    let mut state = State::new(
        target,
        variants[0].clone(),
        trace,
        RunSettings::from_session(&args.session),
    );
    state.script = script_view;
    if !sweep.knobs.is_empty() {
        state.command_line_sweep(sweep.knobs.join(" x "), variants);
    }
    if let (Some(saved), Some(path)) = (opened, open) {
        state.show_saved(saved.runs, saved.run_numbers, &path.display().to_string());
    }
    Ok((
        state,
        Setup {
            recorder,
            keep_cpus_awake,
            key_log,
            nice,
        },
    ))
}

/// The session journal: this session's file, begun; the last session's offered if it left
/// results no export holds.
fn begin_journal(state: &mut State) -> Option<crate::journal::Writer> {
    let dir = crate::journal::sessions_dir(&crate::journal::data_dir());
    let offer = crate::journal::latest(&dir).and_then(|last| match crate::journal::load(&last) {
        Ok(s) => s.worth_offering().then_some(s),
        Err(e) => {
            crate::out::say!("warning: {e}");
            None
        }
    });
    let stamp = crate::format::now_rfc3339().replace([':', '-'], "");
    let path = crate::journal::new_path(&dir, stamp.trim_end_matches('Z'));
    let journal = Some(crate::journal::Writer::new(path.clone()));
    crate::model::update(
        state,
        crate::model::Action::Began {
            journal: path,
            offer,
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        },
        Instant::now(),
    );
    journal
}

/// The explorer's runner: its harnesses building from the start, its runs at `nice` steps
/// below it.
fn runner(nice: i32, keep_cpus_awake: bool, args: &TuiArgs) -> std::io::Result<ProcessRunner> {
    let mut runner = ProcessRunner::new()?;
    // The first run of a harness crate's benches (sqlx, async-sqlite) does not wait minutes for
    // it: the harnesses build from the start, and a run's core benches go while they do.
    runner.overlap_build = true;
    // Keys first: runs and builds yield the cores to the explorer when it has work.
    runner.nice = nice;
    runner.keep_cpus_awake = keep_cpus_awake;
    runner.cpus = args.machine.cpus.clone();
    for l in runner.locators_mut() {
        l.nice = nice;
    }
    Ok(runner)
}

/// The explorer from its first frame to quit: the harness builds watched and started, the
/// results store's thread, the loop; the store's thread handed back to be finished.
async fn explore(
    terminal: ratatui::DefaultTerminal,
    state: &mut State,
    runner: &ProcessRunner,
    recorder: Option<crate::store::Recorder>,
    logs: Logs,
    args: &TuiArgs,
) -> std::io::Result<Option<crate::store::background::Background>> {
    // How each harness build stands, as one stream of actions.
    let (harness_tx, harness) = mpsc::unbounded_channel();
    for l in runner.locators() {
        let (mut rx, tx, which) = (l.watch(), harness_tx.clone(), l.external.harness);
        tokio::spawn(async move {
            while rx.changed().await.is_ok() {
                let b = rx.borrow_and_update().clone();
                if tx.send(Action::Harness(which, b)).is_err() {
                    break;
                }
            }
        });
    }
    let builds: Vec<_> = runner.locators().filter(|l| l.builds()).cloned().collect();
    // One after the other; dropped with the runtime on quit: cargo's whole process group
    // goes with it.
    tokio::spawn(async move {
        for l in builds {
            let _ = l.program(&|_| {}).await;
        }
    });
    // Finished runs go to the results store from a thread of its own; what it cannot
    // record is said on the status line.
    let store_target = recorder.as_ref().map(|r| r.target.clone());
    let store = recorder.map(|rec| {
        let tx = harness_tx.clone();
        crate::store::background::Background::start(rec, move |r| {
            if let Err(e) = r {
                let _ = tx.send(Action::StoreFailed(e));
            }
        })
    });
    event_loop(
        terminal,
        state,
        runner,
        harness,
        logs,
        &args.snapshot_dir,
        effects::StoreLink {
            background: store.as_ref(),
            target: store_target,
            actions: harness_tx.clone(),
        },
    )
    .await
    .map(|()| store)
}

/// Every knob variable of every target of the catalog in this process's environment: the
/// explorer, which switches between targets, refuses a bad value before it starts rather than
/// take a default for it silently when a target that reads it is picked.
fn knob_variables() -> Result<(), String> {
    for t in bench_core::workloads::targets() {
        bench_core::knobs::resolve(&t.knobs, &bench_core::knobs::process_env, &[])
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// What the explorer's loop writes beside the screen: the session journal and, with
/// BENCHSCOPE_KEY_LOG, each key's timings.
struct Logs {
    journal: Option<crate::journal::Writer>,
    key_log: Option<std::fs::File>,
}

async fn event_loop(
    mut terminal: ratatui::DefaultTerminal,
    state: &mut State,
    runner: &dyn Runner,
    mut harness: mpsc::UnboundedReceiver<Action>,
    logs: Logs,
    snapshot_dir: &std::path::Path,
    store: effects::StoreLink<'_>,
) -> std::io::Result<()> {
    let Logs { journal, key_log } = logs;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut lp = Loop {
        runner,
        tx,
        handles: HashMap::new(),
        snapshot_dir,
        perf: None,
        journal,
        store,
    };
    let mut keys = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_millis(1000 / FPS));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    use tokio::signal::unix::{SignalKind, signal};
    let mut sigterm = signal(SignalKind::terminate())?;
    // Closing the terminal window hangs up: quit as on SIGTERM, terminal restored, runs killed.
    let mut sighup = signal(SignalKind::hangup())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    // `dirty`: something the user did or the session said shows at the next tick;
    // `streamed`: run events and progress, shown within the drawing budget.
    let mut dirty = true;
    let mut next_stream = Instant::now();
    // With BENCHSCOPE_KEY_LOG=FILE, each key's time from its arrival to the end of its frame
    // is appended to FILE in microseconds, then the part of it spent in `update`, then the CPU
    // time the loop's thread used meanwhile (less than the first when the thread waited for a
    // core), then the frame's end as Unix time in microseconds (so that a script which noted
    // when it pressed the key also counts the wait before the key reached the loop): what
    // tests/soak/explorer-cpu.sh and explorer-keys.sh read.
    let mut key_log = key_log;
    let mut draw = |state: &State| -> std::io::Result<Instant> {
        let at = Instant::now();
        terminal.draw(|f| crate::ui::render(state, f))?;
        Ok(next_stream_frame(at, at.elapsed()))
    };
    loop {
        tokio::select! {
            ev = keys.next() => match ev {
                Some(Ok(TermEvent::Key(k))) => {
                    if let Some(key) = key_of(k) {
                        let at = Instant::now();
                        let cpu_at = key_log.as_ref().map(|_| thread_cpu());
                        lp.apply(state, Action::Key(key));
                        if state.quit {
                            break;
                        }
                        let applied = at.elapsed();
                        next_stream = draw(state)?;
                        dirty = false;
                        if let Some(log) = key_log.as_mut() {
                            use std::io::Write as _;
                            let _ = writeln!(
                                log,
                                "{} {} {} {}",
                                at.elapsed().as_micros(),
                                applied.as_micros(),
                                (thread_cpu() - cpu_at.unwrap_or_default()).as_micros(),
                                std::time::SystemTime::now()
                                    .duration_since(std::time::UNIX_EPOCH)
                                    .unwrap_or_default()
                                    .as_micros()
                            );
                        }
                    }
                }
                Some(Ok(TermEvent::Resize(..))) => {
                    next_stream = draw(state)?;
                    dirty = false;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => break,
            },
            Some(ev) = rx.recv() => {
                // Every event already waiting in one go: one wake-up, and one journal write,
                // for a runner's batch.
                if let Some(w) = lp.journal.as_mut() {
                    w.hold();
                }
                let mut next = Some(ev);
                while let Some(ev) = next {
                    dirty |= lp.run_event(state, ev);
                    next = rx.try_recv().ok();
                }
                lp.journal(state, |w| w.release());
            }
            _ = tick.tick() => {
                let busy = state.any_active() || state.restart_at.is_some();
                lp.apply(state, Action::Tick);
                if dirty || busy && Instant::now() >= next_stream {
                    next_stream = draw(state)?;
                    dirty = false;
                }
            }
            Some(action) = harness.recv() => {
                lp.apply(state, action);
                dirty = true;
            }
            _ = sigterm.recv() => break,
            _ = sighup.recv() => break,
            _ = sigint.recv() => break,
        }
        if state.quit {
            break;
        }
    }
    // Stop every child and wait until each is reaped (bounded).
    for h in lp.handles.values_mut() {
        h.cancel();
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !lp.handles.is_empty() {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(RunEvent::Exited { run_id, .. })) => {
                lp.handles.remove(&run_id);
                // A run the model had already ended (cancelled just before quitting) gets
                // its end in the journal; one stopped by quitting has none (it stopped
                // with the session).
                if state
                    .runs
                    .iter()
                    .any(|r| r.id == run_id && !r.state.is_active())
                {
                    lp.journal_end(state, &run_id);
                }
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    Ok(())
}

/// CPU time the calling thread has used (for the key log).
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame that took `d` to draw is followed by the next streamed one `d / DRAW_SHARE`
    /// later, within the bounds.
    #[test]
    fn streamed_frames_keep_to_the_drawing_budget() {
        let t = Instant::now();
        let after = |took_us: u64| next_stream_frame(t, Duration::from_micros(took_us)) - t;
        assert_eq!(after(0), MIN_STREAM_FRAME);
        assert_eq!(after(1_000), Duration::from_millis(400));
        assert_eq!(after(2_000), Duration::from_millis(800));
        assert_eq!(after(50_000), MAX_STREAM_FRAME);
    }
}
