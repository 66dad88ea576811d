//! The explorer's state and the one place it changes: `update(&mut State, Action, now)`.
//! No I/O and no drawing here: effects are returned for the main loop to carry out.

pub mod keys;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use bench_core::catalog::{BenchKind, Target};
use bench_core::knobs::Knobs;
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::results::{BenchStatus, RunRecord};

use crate::runner::{RunEvent, RunRequest};
use keys::{Cmd, Key};

/// How long knob edits settle before running benches restart with the new values.
pub const DEBOUNCE: Duration = Duration::from_millis(600);

/// The concurrency values of a sweep.
pub const SWEEP: [u64; 5] = [1, 2, 4, 8, 16];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Catalog,
    Knobs,
    Live,
    Compare,
}

impl Focus {
    pub const ALL: [Focus; 4] = [Focus::Catalog, Focus::Knobs, Focus::Live, Focus::Compare];

    pub fn title(self) -> &'static str {
        match self {
            Focus::Catalog => "Catalog",
            Focus::Knobs => "Knobs",
            Focus::Live => "Live",
            Focus::Compare => "Comparison",
        }
    }

    fn step(self, by: isize) -> Focus {
        let i = Focus::ALL.iter().position(|f| *f == self).unwrap_or(0) as isize;
        Focus::ALL[(i + by).rem_euclid(Focus::ALL.len() as isize) as usize]
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    Queued,
    Running,
    Finished,
    /// Cancelled by the user; results so far are kept.
    Cancelled,
    /// Restarted with other knobs; results so far are kept.
    Superseded,
    Failed(String),
}

impl RunState {
    pub fn is_active(&self) -> bool {
        matches!(self, RunState::Queued | RunState::Running)
    }

    pub fn label(&self) -> &str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Finished => "finished",
            RunState::Cancelled => "cancelled",
            RunState::Superseded => "knobs changed",
            RunState::Failed(_) => "failed",
        }
    }
}

/// One run: a column of the comparison.
#[derive(Debug, Clone)]
pub struct RunView {
    pub id: String,
    pub target: &'static Target,
    /// Column number shown to the user (1-based).
    pub seq: usize,
    pub knobs: Knobs,
    pub trace: bool,
    pub benches: Vec<String>,
    pub record: RunRecord,
    pub state: RunState,
    pub started: Option<Instant>,
    /// The bench being measured and when it started.
    pub current: Option<(String, Instant)>,
    /// The run this one replaced after a knob change (the live chart continues across it).
    pub previous: Option<String>,
}

impl RunView {
    /// Overall progress in 0..=1 and the estimated time left, from the budget in `start`.
    pub fn progress(&self, now: Instant) -> (f64, Option<Duration>) {
        let total = self.benches.len().max(1) as f64;
        let done = self
            .record
            .benches
            .iter()
            .filter(|b| b.status() != BenchStatus::Running)
            .count() as f64;
        let budget = self.record.start.as_ref().map(|s| s.budget);
        let current = match (&self.current, budget) {
            (Some((name, since)), Some(b)) => {
                let samples = self
                    .record
                    .bench(name)
                    .map(|r| r.samples.len())
                    .unwrap_or(0) as f64;
                let by_count = samples / b.max_samples.max(1) as f64;
                let by_time = now.saturating_duration_since(*since).as_secs_f64()
                    / (b.warmup_s + b.time_s).max(1e-3);
                by_count.max(by_time).min(1.0)
            }
            _ => 0.0,
        };
        let fraction = if self.state == RunState::Finished {
            1.0
        } else {
            ((done + current) / total).min(1.0)
        };
        let eta = self
            .started
            .filter(|_| fraction > 0.02 && self.state == RunState::Running)
            .map(|s| {
                let elapsed = now.saturating_duration_since(s).as_secs_f64();
                Duration::from_secs_f64((elapsed / fraction - elapsed).max(0.0))
            });
        (fraction, eta)
    }
}

/// A transient message under the panels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    Help,
    ConfirmQuit,
}

#[derive(Debug, Clone)]
pub struct State {
    pub target: &'static Target,
    pub focus: Focus,
    pub catalog_cursor: usize,
    pub marked: BTreeSet<&'static str>,
    pub knobs: Knobs,
    pub knob_cursor: usize,
    /// The text being typed into the knob under the cursor.
    pub editing: Option<String>,
    /// Why the last knob value was refused.
    pub knob_error: Option<String>,
    pub trace: bool,
    pub runs: Vec<RunView>,
    pub next_seq: usize,
    pub baseline_bench: &'static str,
    /// Run compared against for verdicts (by id).
    pub baseline_run: Option<String>,
    pub compare_row: usize,
    pub compare_col: usize,
    pub live_row: usize,
    pub restart_at: Option<Instant>,
    pub status: Option<Status>,
    pub overlay: Option<Overlay>,
    pub dataset: Option<String>,
    pub budget_args: Vec<String>,
    pub cache_dir: Option<std::path::PathBuf>,
    pub postgres_url: Option<String>,
    pub quit: bool,
    /// Whether to draw in colour (off when NO_COLOR is set).
    pub color: bool,
    /// The time of the last action: what progress and ETAs are drawn against.
    pub now: Instant,
    /// Prefix of run ids (the process id in the app; fixed in tests).
    pub id_prefix: String,
}

/// What happens to the state. (Actions are moved once into `update`; the size of the run
/// event variant does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Key(Key),
    Run(RunEvent),
    /// Time passes (debounced restarts).
    Tick,
    /// An export finished: the paths written, or why it failed.
    Exported(Result<Vec<String>, String>),
}

/// What the main loop must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Start(RunRequest),
    Cancel(String),
    Export,
    Quit,
}

impl State {
    pub fn new(
        target: &'static Target,
        knobs: Knobs,
        trace: bool,
        budget_args: Vec<String>,
    ) -> State {
        State {
            target,
            focus: Focus::Catalog,
            catalog_cursor: 0,
            marked: BTreeSet::new(),
            knobs,
            knob_cursor: 0,
            editing: None,
            knob_error: None,
            trace,
            runs: Vec::new(),
            next_seq: 1,
            baseline_bench: target.baseline,
            baseline_run: None,
            compare_row: 0,
            compare_col: 0,
            live_row: 0,
            restart_at: None,
            status: None,
            overlay: None,
            dataset: None,
            budget_args,
            cache_dir: None,
            postgres_url: None,
            quit: false,
            color: true,
            now: Instant::now(),
            id_prefix: format!("r{}", std::process::id()),
        }
    }

    /// The benches in catalog order: benches first, then micro-benches.
    pub fn catalog_benches(&self) -> Vec<&'static bench_core::catalog::BenchSpec> {
        let t = bench_core::catalog::target(self.target.name).expect("target in catalog");
        let mut v: Vec<_> = t
            .benches
            .iter()
            .filter(|b| b.kind == BenchKind::Bench)
            .collect();
        v.extend(t.benches.iter().filter(|b| b.kind == BenchKind::Micro));
        v
    }

    pub fn active_run(&self) -> Option<&RunView> {
        self.runs.iter().find(|r| r.state == RunState::Running)
    }

    pub fn any_active(&self) -> bool {
        self.runs.iter().any(|r| r.state.is_active())
    }

    /// Bench names that appear in any run of the current target, in catalog order: the
    /// comparison's rows.
    pub fn compare_rows(&self) -> Vec<&'static str> {
        self.catalog_benches()
            .into_iter()
            .map(|b| b.name)
            .filter(|n| self.target_runs().any(|r| r.benches.iter().any(|b| b == n)))
            .collect()
    }

    /// Runs of the target the explorer shows: the comparison's columns.
    pub fn target_runs(&self) -> impl Iterator<Item = &RunView> {
        self.runs
            .iter()
            .filter(|r| r.target.name == self.target.name)
    }

    /// The benches to run: the marked ones in catalog order, or the one under the cursor.
    fn selected_benches(&self) -> Vec<String> {
        if self.marked.is_empty() {
            vec![self.catalog_benches()[self.catalog_cursor].name.to_string()]
        } else {
            self.catalog_benches()
                .iter()
                .filter(|b| self.marked.contains(b.name))
                .map(|b| b.name.to_string())
                .collect()
        }
    }

    /// Shows another target: its knobs keep the values of knobs of the same name.
    fn switch_target(&mut self, by: isize) {
        let all = bench_core::catalog::TARGETS;
        let i = all
            .iter()
            .position(|t| t.name == self.target.name)
            .unwrap_or(0) as isize;
        let next = &all[(i + by).rem_euclid(all.len() as isize) as usize];
        if next.name == self.target.name {
            return;
        }
        let mut knobs =
            bench_core::knobs::resolve(next.knobs, &bench_core::knobs::process_env, &[])
                .unwrap_or_else(|_| {
                    bench_core::knobs::resolve(next.knobs, &|_| None, &[])
                        .expect("defaults are valid")
                });
        for spec in next.knobs {
            if let Some(v) = self.knobs.get(spec.name) {
                knobs.set(spec.name, v);
            }
        }
        self.target = next;
        self.knobs = knobs;
        self.knob_cursor = 0;
        self.catalog_cursor = 0;
        self.marked.clear();
        self.baseline_bench = next.baseline;
        self.compare_row = 0;
        self.compare_col = self.target_runs().count().saturating_sub(1);
        self.set_status(format!("target {}: {}", next.name, next.about), false);
    }

    /// The bench the live panel shows: the row selected among the active run's benches.
    pub fn live_bench(&self) -> Option<(&RunView, &str)> {
        let run = self.active_run().or_else(|| {
            self.runs
                .iter()
                .rev()
                .find(|r| !r.record.benches.is_empty())
        })?;
        let name = run
            .benches
            .get(self.live_row.min(run.benches.len().saturating_sub(1)))?;
        Some((run, name.as_str()))
    }

    /// The chain of runs ending at `run` (older first), linked by knob-change restarts.
    pub fn lineage<'a>(&'a self, run: &'a RunView) -> Vec<&'a RunView> {
        let mut chain = vec![run];
        let mut cur = run;
        while let Some(prev) = cur
            .previous
            .as_ref()
            .and_then(|p| self.runs.iter().find(|r| &r.id == p))
        {
            chain.push(prev);
            cur = prev;
        }
        chain.reverse();
        chain
    }

    fn set_status(&mut self, text: impl Into<String>, error: bool) {
        self.status = Some(Status {
            text: text.into(),
            error,
        });
    }

    fn new_run(&mut self, benches: Vec<String>, previous: Option<String>) -> RunView {
        let seq = self.next_seq;
        self.next_seq += 1;
        RunView {
            id: format!("{}-{seq}", self.id_prefix),
            target: self.target,
            seq,
            knobs: self.knobs.clone(),
            trace: self.trace,
            benches,
            record: RunRecord::default(),
            state: RunState::Queued,
            started: None,
            current: None,
            previous,
        }
    }

    fn request(&self, run: &RunView) -> RunRequest {
        RunRequest {
            run_id: run.id.clone(),
            target: run.target.name.to_string(),
            benches: run.benches.clone(),
            knobs: run.knobs.0.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            budget_args: self.budget_args.clone(),
            trace: run.trace,
            cache_dir: self.cache_dir.clone(),
            postgres_url: self.postgres_url.clone(),
        }
    }

    /// Starts the oldest queued run if nothing is running (one run at a time, so that runs
    /// never compete for the cores they measure).
    fn start_next(&mut self, now: Instant) -> Vec<Effect> {
        if self.active_run().is_some() {
            return vec![];
        }
        let Some(i) = self.runs.iter().position(|r| r.state == RunState::Queued) else {
            return vec![];
        };
        self.runs[i].state = RunState::Running;
        self.runs[i].started = Some(now);
        self.live_row = 0;
        vec![Effect::Start(self.request(&self.runs[i]))]
    }
}

/// Applies one action; returns what the main loop must do.
pub fn update(state: &mut State, action: Action, now: Instant) -> Vec<Effect> {
    state.now = now;
    match action {
        Action::Key(key) => on_key(state, key, now),
        Action::Run(ev) => on_run_event(state, ev, now),
        Action::Tick => on_tick(state, now),
        Action::Exported(Ok(paths)) => {
            state.set_status(format!("exported {}", paths.join(" and ")), false);
            vec![]
        }
        Action::Exported(Err(e)) => {
            state.set_status(format!("export failed: {e}"), true);
            vec![]
        }
    }
}

fn on_key(state: &mut State, key: Key, now: Instant) -> Vec<Effect> {
    if key == Key::CtrlC {
        state.quit = true;
        return vec![Effect::Quit];
    }
    match state.overlay {
        Some(Overlay::ConfirmQuit) => {
            return if matches!(key, Key::Char('y') | Key::Char('Y') | Key::Char('q')) {
                state.quit = true;
                vec![Effect::Quit]
            } else {
                state.overlay = None;
                state.set_status("quit cancelled", false);
                vec![]
            };
        }
        Some(Overlay::Help) => {
            state.overlay = None;
            return vec![];
        }
        None => {}
    }
    if state.editing.is_some() {
        return on_edit_key(state, key, now);
    }
    let Some(cmd) = keys::lookup(state.focus, key) else {
        return vec![];
    };
    match cmd {
        Cmd::NextFocus => state.focus = state.focus.step(1),
        Cmd::PrevFocus => state.focus = state.focus.step(-1),
        Cmd::Help => state.overlay = Some(Overlay::Help),
        Cmd::Quit => {
            if state.any_active() {
                state.overlay = Some(Overlay::ConfirmQuit);
            } else {
                state.quit = true;
                return vec![Effect::Quit];
            }
        }
        Cmd::ToggleTrace => {
            state.trace = !state.trace;
            state.set_status(
                if state.trace {
                    "trace on: phase timings from the next run"
                } else {
                    "trace off from the next run"
                },
                false,
            );
        }
        Cmd::Export => {
            if state
                .runs
                .iter()
                .any(|r| r.record.benches.iter().any(|b| b.summary.is_some()))
            {
                return vec![Effect::Export];
            }
            state.set_status("nothing to export yet: run a bench first", true);
        }
        Cmd::Up | Cmd::Down => {
            let down = cmd == Cmd::Down;
            let (cursor, len) = match state.focus {
                Focus::Catalog => (&mut state.catalog_cursor, state.target.benches.len()),
                Focus::Knobs => (&mut state.knob_cursor, state.target.knobs.len()),
                Focus::Live => {
                    let n = state
                        .live_bench()
                        .map(|(r, _)| r.benches.len())
                        .unwrap_or(0);
                    (&mut state.live_row, n)
                }
                Focus::Compare => {
                    let n = state.compare_rows().len();
                    (&mut state.compare_row, n)
                }
            };
            move_cursor(cursor, len, down);
        }
        Cmd::Left | Cmd::Right if state.focus == Focus::Catalog => {
            state.switch_target(if cmd == Cmd::Right { 1 } else { -1 });
        }
        Cmd::Left | Cmd::Right => {
            let n = state.target_runs().count();
            move_cursor(&mut state.compare_col, n, cmd == Cmd::Right);
        }
        Cmd::Sweep => {
            let benches = state.selected_benches();
            let knobs = state.knobs.clone();
            let queued_behind = state.active_run().is_some();
            for c in SWEEP {
                let mut run = state.new_run(benches.clone(), None);
                run.knobs = knobs.clone();
                run.knobs.set("concurrency", c);
                state.runs.push(run);
            }
            state.compare_col = state.target_runs().count().saturating_sub(1);
            state.set_status(
                format!(
                    "sweep: {} runs queued, concurrency {}{}",
                    SWEEP.len(),
                    SWEEP.map(|c| c.to_string()).join(", "),
                    if queued_behind {
                        " (after the running one)"
                    } else {
                        ""
                    }
                ),
                false,
            );
            return state.start_next(now);
        }
        Cmd::Mark => {
            let name = state.catalog_benches()[state.catalog_cursor].name;
            if !state.marked.remove(name) {
                state.marked.insert(name);
            }
            move_cursor(&mut state.catalog_cursor, state.target.benches.len(), true);
        }
        Cmd::Run => {
            let benches = state.selected_benches();
            let run = state.new_run(benches, None);
            let queued = state.active_run().is_some();
            state.set_status(
                if queued {
                    format!(
                        "run {} queued: it starts when the running one ends",
                        run.seq
                    )
                } else {
                    format!("run {} started", run.seq)
                },
                false,
            );
            state.runs.push(run);
            state.compare_col = state.target_runs().count() - 1;
            return state.start_next(now);
        }
        Cmd::Increase | Cmd::Decrease => {
            let spec = state.target.knobs[state.knob_cursor];
            let old = state.knobs.value(spec.name);
            let new = spec.stepped(old, cmd == Cmd::Increase);
            if new == old {
                state.knob_error = Some(format!(
                    "{} stays {old} (allowed: {}..={})",
                    spec.name, spec.min, spec.max
                ));
            } else {
                state.knob_error = None;
                return knob_changed(state, spec.name, new, now);
            }
        }
        Cmd::Edit => {
            state.editing = Some(String::new());
            state.knob_error = None;
        }
        Cmd::Cancel => {
            if let Some(run) = state.runs.iter_mut().find(|r| r.state == RunState::Running) {
                run.state = RunState::Cancelled;
                let id = run.id.clone();
                let seq = run.seq;
                state.restart_at = None;
                state.set_status(
                    format!("run {seq} cancelled; its results so far are kept"),
                    false,
                );
                let mut fx = vec![Effect::Cancel(id)];
                fx.extend(state.start_next(now));
                return fx;
            }
            state.set_status("no run is going", false);
        }
        Cmd::BaselineBench => {
            if let Some(name) = state.compare_rows().get(state.compare_row) {
                state.baseline_bench = name;
                state.set_status(format!("ratios are now against {name}"), false);
            }
        }
        Cmd::BaselineRun => {
            let picked = state
                .target_runs()
                .nth(state.compare_col)
                .map(|r| (r.id.clone(), r.seq));
            if let Some((id, seq)) = picked {
                state.baseline_run = Some(id);
                state.set_status(format!("verdicts are now against run {seq}"), false);
            }
        }
    }
    vec![]
}

fn move_cursor(cursor: &mut usize, len: usize, down: bool) {
    if len == 0 {
        *cursor = 0;
    } else if down {
        *cursor = (*cursor + 1).min(len - 1);
    } else {
        *cursor = cursor.saturating_sub(1).min(len - 1);
    }
}

fn on_edit_key(state: &mut State, key: Key, now: Instant) -> Vec<Effect> {
    let buf = state.editing.as_mut().expect("editing");
    match key {
        Key::Esc => {
            state.editing = None;
            state.knob_error = None;
        }
        Key::Backspace => {
            buf.pop();
        }
        Key::Char(c) if buf.len() < 24 => buf.push(c),
        Key::Enter => {
            let spec = state.target.knobs[state.knob_cursor];
            let text = buf.clone();
            match spec.parse(&text) {
                Ok(v) => {
                    state.editing = None;
                    state.knob_error = None;
                    if v != state.knobs.value(spec.name) {
                        return knob_changed(state, spec.name, v, now);
                    }
                }
                Err(e) => state.knob_error = Some(e.to_string()),
            }
        }
        _ => {}
    }
    vec![]
}

fn knob_changed(state: &mut State, name: &str, value: u64, now: Instant) -> Vec<Effect> {
    state.knobs.set(name, value);
    if state.active_run().is_some() {
        state.restart_at = Some(now + DEBOUNCE);
        state.set_status(
            format!("{name}={value}: the running benches restart with it"),
            false,
        );
    } else {
        state.set_status(format!("{name}={value}"), false);
    }
    vec![]
}

fn on_tick(state: &mut State, now: Instant) -> Vec<Effect> {
    let Some(at) = state.restart_at else {
        return vec![];
    };
    if now < at {
        return vec![];
    }
    state.restart_at = None;
    let Some(i) = state.runs.iter().position(|r| r.state == RunState::Running) else {
        return vec![];
    };
    if state.runs[i].knobs == state.knobs {
        return vec![];
    }
    state.runs[i].state = RunState::Superseded;
    let old_id = state.runs[i].id.clone();
    // Restart what had not finished yet; finished benches keep their results in the old column.
    let remaining: Vec<String> = state.runs[i].benches.clone();
    let run = state.new_run(remaining, Some(old_id.clone()));
    let seq = run.seq;
    state.runs.push(run);
    state.set_status(
        format!(
            "knobs changed: run {seq} restarts the benches with {}",
            state.knobs
        ),
        false,
    );
    let mut fx = vec![Effect::Cancel(old_id)];
    fx.extend(state.start_next(now));
    fx
}

fn on_run_event(state: &mut State, ev: RunEvent, now: Instant) -> Vec<Effect> {
    match ev {
        RunEvent::Event { run_id, event, .. } => {
            let Some(run) = state.runs.iter_mut().find(|r| r.id == run_id) else {
                return vec![];
            };
            match &event {
                Event::BenchStart { bench, .. } => run.current = Some((bench.clone(), now)),
                Event::Dataset {
                    status: DatasetStatus::Building,
                    rows,
                    ..
                } => {
                    state.dataset = Some(format!("building the dataset ({rows} rows)…"));
                }
                Event::Dataset {
                    status,
                    rows,
                    build_ms,
                    ..
                } => {
                    state.dataset = Some(match build_ms {
                        Some(ms) => {
                            format!("dataset {rows} rows {status:?} in {ms:.0} ms").to_lowercase()
                        }
                        None => format!("dataset {rows} rows reused from the cache"),
                    });
                }
                Event::Start(s) if s.env.is_debug() => {
                    state.status = Some(Status {
                        text: bench_core::protocol::DEBUG_WARNING.into(),
                        error: true,
                    });
                }
                _ => {}
            }
            run.record.apply(event);
            vec![]
        }
        RunEvent::Note { text, .. } => {
            state.set_status(text, false);
            vec![]
        }
        RunEvent::Exited { run_id, error } => {
            let Some(run) = state.runs.iter_mut().find(|r| r.id == run_id) else {
                return vec![];
            };
            run.current = None;
            if run.state == RunState::Running {
                run.state = match error {
                    None => RunState::Finished,
                    Some(e) => RunState::Failed(e),
                };
                let seq = run.seq;
                let text = match &run.state {
                    RunState::Failed(e) => {
                        format!("run {seq} failed: {}", e.lines().next().unwrap_or(""))
                    }
                    _ => format!("run {seq} finished"),
                };
                let failed = matches!(run.state, RunState::Failed(_));
                state.set_status(text, failed);
            }
            state.start_next(now)
        }
    }
}

#[cfg(test)]
mod tests;
