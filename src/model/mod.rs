//! The explorer's state and the one place it changes: `update(&mut State, Action, now)`.
//! No I/O and no drawing here: effects are returned for the main loop to carry out.
//!
//! The state is grouped by panel (`catalog`, `knobs`, `live`, `compare`), each with its own
//! keys handled in its own file; what is shared (the target, the runs and their queue, the
//! status line, overlays) lives here.

mod catalog;
mod compare;
pub mod keys;
mod knobs;
mod live;
mod runs;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_core::catalog::{BenchKind, BenchSpec, Target};
use bench_core::knobs::Knobs;
use bench_core::protocol::results::RunRecord;
use bench_core::protocol::{DatasetStatus, Event};

use crate::messages::{HarnessBuild, HarnessBuilds, Outcome, RunEvent, RunRequest, RunSettings};
pub use catalog::CatalogPanel;
pub use compare::ComparePanel;
use keys::{Cmd, Key};
pub use knobs::KnobsPanel;
pub use live::LivePanel;
pub use runs::{RunState, RunView};

/// How long knob edits settle before running benches restart with the new values.
pub const DEBOUNCE: Duration = Duration::from_millis(600);

/// The most runs waiting in the queue at once: random typing cannot queue hundreds.
pub const MAX_QUEUED: usize = 20;

/// Where the explorer's flamegraphs go, under the snapshot folder.
pub const PROFILE_DIR: &str = "flamegraphs";

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

/// A transient message under the panels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    Help,
    /// Runs are going, or results are not exported: quit anyway?
    ConfirmQuit,
    /// The last session left results no export holds: reopen them?
    Reopen,
    /// The scaling table and chart of the target's runs (a sweep or matrix).
    Scaling,
    /// A sweep on top of a long queue: queue it anyway?
    ConfirmSweep,
    /// The distribution of one bench of one run.
    Histogram {
        run_id: String,
        bench: String,
    },
}

/// What the typed line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypedFor {
    /// A path of saved results to open (`o`).
    Open,
    /// The name to save the target's runs under as a baseline (`S`).
    BaselineName,
}

/// A sweep waiting for the user's yes (the queue was already long).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingSweep {
    pub benches: Vec<String>,
    pub runs: Vec<Knobs>,
    /// The status line once queued ("sweep of rows: 5 runs queued (...)").
    pub queued: String,
}

/// From this many waiting runs on, a sweep asks before it adds its own.
pub const LONG_QUEUE: usize = 5;

#[derive(Debug, Clone)]
pub struct State {
    pub target: &'static Target,
    pub focus: Focus,
    pub catalog: CatalogPanel,
    pub knobs: KnobsPanel,
    pub live: LivePanel,
    pub compare: ComparePanel,
    pub trace: bool,
    /// Runs from now on measure in paired rounds (`--paired`).
    pub paired: bool,
    pub runs: Vec<RunView>,
    pub next_seq: usize,
    pub restart_at: Option<Instant>,
    pub status: Option<Status>,
    pub overlay: Option<Overlay>,
    /// What each target's latest run said of its dataset (the header shows the target's own).
    pub datasets: std::collections::BTreeMap<&'static str, String>,
    /// What every run of this session shares (budget, cache folder, PostgreSQL).
    pub settings: RunSettings,
    pub quit: bool,
    /// Whether to draw in colour (off when NO_COLOR is set).
    pub color: bool,
    /// The time of the last action: what progress and ETAs are drawn against.
    pub now: Instant,
    /// Prefix of run ids (the process id in the app; fixed in tests).
    pub id_prefix: String,
    /// How each harness crate's build stands (built in the background from the start).
    pub harness: HarnessBuilds,
    /// Runs an export holds (by id): quitting with others that have results asks first.
    pub exported: std::collections::BTreeSet<String>,
    /// Where this session's journal is written (shown when quitting).
    pub journal: Option<PathBuf>,
    /// The last session, offered for reopening at start.
    pub offer: Option<crate::journal::Session>,
    /// A sweep asked about (see [`LONG_QUEUE`]).
    pub pending_sweep: Option<PendingSweep>,
    /// The line being typed in place of the status line (a path to open after `o`, a baseline
    /// name after `S`), what it is for, and why the last try failed.
    pub typed: Option<String>,
    pub typed_for: TypedFor,
    pub typed_error: Option<String>,
    /// A sweep given on the command line (`--concurrency 1,2`): what `s` in the catalog runs
    /// instead of the concurrency sweep; its knob sets, and what they vary.
    pub cli_sweep: Option<(String, Vec<Knobs>)>,
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
    /// A harness crate's build moved on.
    Harness(bench_core::catalog::Harness, HarnessBuild),
    /// A baseline was saved: where, or why not.
    BaselineSaved(Result<String, String>),
    /// Saved results were read, or why not.
    Opened(Result<OpenedRuns, String>),
}

/// Saved runs read from a file: the runs, their numbers (a report's), and the path.
pub type OpenedRuns = (Vec<RunRecord>, Option<Vec<usize>>, String);

/// What the main loop must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Start(RunRequest),
    Cancel(String),
    Export,
    Quit,
    /// Append to this session's journal.
    Journal(crate::journal::Entry),
    /// Go on writing the reopened session's journal.
    ContinueJournal(PathBuf),
    /// Mark the offered session as declined, in its own journal.
    DismissJournal(PathBuf),
    /// Save the target's runs with results as a named baseline.
    SaveBaseline(String),
    /// Read saved results (a report, baseline, journal or Criterion folder) to show.
    OpenFile(PathBuf),
}

impl State {
    pub fn new(target: &'static Target, knobs: Knobs, trace: bool, settings: RunSettings) -> State {
        State {
            target,
            focus: Focus::Catalog,
            catalog: CatalogPanel::default(),
            knobs: KnobsPanel::new(knobs),
            live: LivePanel::default(),
            compare: ComparePanel::new(target),
            trace,
            paired: settings.budget_args.iter().any(|a| a == "--paired"),
            runs: Vec::new(),
            next_seq: 1,
            restart_at: None,
            status: None,
            overlay: None,
            datasets: Default::default(),
            settings,
            quit: false,
            color: true,
            now: Instant::now(),
            id_prefix: format!("r{}", std::process::id()),
            harness: HarnessBuilds::default(),
            exported: Default::default(),
            journal: None,
            offer: None,
            pending_sweep: None,
            cli_sweep: None,
            typed: None,
            typed_for: TypedFor::Open,
            typed_error: None,
        }
    }

    /// The benches in catalog order: benches first, then micro-benches.
    pub fn catalog_benches(&self) -> Vec<&'static BenchSpec> {
        let mut v: Vec<_> = self
            .target
            .benches
            .iter()
            .filter(|b| b.kind == BenchKind::Bench)
            .collect();
        v.extend(
            self.target
                .benches
                .iter()
                .filter(|b| b.kind == BenchKind::Micro),
        );
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
    /// The sweep (or matrix) among the target's runs, as the exports draw it.
    pub fn scaling(&self) -> Option<&crate::export::scaling::Scaling> {
        self.compare.analysis.scaling()
    }

    pub fn target_runs(&self) -> impl Iterator<Item = &RunView> {
        self.runs
            .iter()
            .filter(|r| r.target.name == self.target.name)
    }

    /// The target's runs a saved baseline is made of (`S`): measured here (not read from a
    /// file), not profiled, with at least one finished bench.
    pub fn baseline_candidates(&self) -> impl Iterator<Item = &RunView> {
        self.target_runs()
            .filter(|r| r.record.source.is_none() && !r.profiled)
            .filter(|r| r.record.benches.iter().any(|b| b.summary.is_some()))
    }

    /// The run verdicts are against, if one is picked.
    pub fn baseline_run(&self) -> Option<&RunView> {
        let id = self.compare.baseline_run.as_ref()?;
        self.runs.iter().find(|r| &r.id == id)
    }

    /// Works out the comparison's figures again if the results or baselines changed
    /// (`urgent`: now; otherwise at most every [`crate::analysis::Analysis::MIN_GAP`]).
    pub fn refresh_analysis(&mut self, now: Instant, urgent: bool) {
        use crate::analysis::{Inputs, Run};
        fn as_run(r: &RunView) -> Run<'_> {
            Run {
                id: &r.id,
                record: &r.record,
            }
        }
        let compare = &mut self.compare;
        let inputs = Inputs {
            runs: self
                .runs
                .iter()
                .filter(|r| r.target.name == self.target.name)
                .map(as_run)
                .collect(),
            bench: compare.baseline_bench,
            baseline_run: compare
                .baseline_run
                .as_ref()
                .and_then(|id| self.runs.iter().find(|r| &r.id == id))
                .map(as_run),
            settings: Default::default(),
        };
        compare.analysis.refresh(&inputs, now, urgent);
    }

    /// The bench the live panel shows: the row selected among the active run's benches.
    /// The run the live panel shows and its selected bench: the run going (whichever target it
    /// measures; the panel names it), else the latest run of the target on screen with results.
    pub fn live_bench(&self) -> Option<(&RunView, &str)> {
        let run = self.active_run().or_else(|| {
            self.target_runs()
                .filter(|r| !r.record.benches.is_empty())
                .last()
        })?;
        let name = run
            .benches
            .get(self.live.row.min(run.benches.len().saturating_sub(1)))?;
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

    /// What an export of the shown target holds: its runs with results, their numbers, and
    /// which of them (by position) is the baseline run.
    pub fn export_runs(&self) -> (Vec<RunRecord>, Vec<usize>, Option<usize>) {
        let shown: Vec<&RunView> = self
            .target_runs()
            .filter(|r| r.record.benches.iter().any(|b| b.summary.is_some()))
            .collect();
        let baseline = self
            .compare
            .baseline_run
            .as_ref()
            .and_then(|id| shown.iter().position(|r| &r.id == id));
        (
            shown.iter().map(|r| r.record.clone()).collect(),
            shown.iter().map(|r| r.seq).collect(),
            baseline,
        )
    }

    /// Runs with results that no export holds.
    pub fn unexported(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| {
                !self.exported.contains(&r.id)
                    && r.record
                        .benches
                        .iter()
                        .any(|b| b.summary.is_some() || b.scenario.is_some())
            })
            .count()
    }

    /// The quit question's two lines.
    pub fn quit_question(&self) -> (String, String) {
        let journal = self.journal.as_ref().map(|p| p.display().to_string());
        if self.any_active() {
            let keep = journal
                .map(|p| format!(" (what finished stays in the session journal {p})"))
                .unwrap_or_default();
            return (
                "Runs are going. Quit and stop them?".into(),
                format!("y quits{keep}, any other key goes back"),
            );
        }
        let n = self.unexported();
        let keep = match journal {
            Some(p) => format!("they stay in the session journal {p}; the next start offers them"),
            None => "no data folder, so they are lost: set BENCHSCOPE_DATA_DIR".into(),
        };
        (
            format!(
                "{n} {} results no export holds. Quit anyway?",
                if n == 1 { "run has" } else { "runs have" }
            ),
            format!("y quits ({keep}), e exports this target's, any other key goes back"),
        )
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
            knobs: self.knobs.values.clone(),
            trace: self.trace,
            benches,
            record: RunRecord::default(),
            state: RunState::Queued,
            started: None,
            current: None,
            previous,
            profiled: false,
            paired: self.paired,
        }
    }

    fn request(&self, run: &RunView) -> RunRequest {
        let mut req = RunRequest::new(
            run.id.clone(),
            run.target.name,
            run.benches.clone(),
            run.knobs.clone(),
            run.trace,
            &self.settings,
        );
        req.profile = run.profiled.then(|| PathBuf::from(PROFILE_DIR));
        let args = &mut req.settings.budget_args;
        args.retain(|a| a != "--paired");
        if run.paired {
            args.push("--paired".into());
        }
        req
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
        self.live.row = 0;
        vec![Effect::Start(self.request(&self.runs[i]))]
    }

    /// How many more runs the queue takes (at most [`MAX_QUEUED`] wait at once).
    fn room(&self) -> usize {
        let waiting = self
            .runs
            .iter()
            .filter(|r| r.state == RunState::Queued)
            .count();
        MAX_QUEUED.saturating_sub(waiting)
    }

    /// Says why `n` more runs are refused, when the queue has no room for them.
    fn refuse_if_full(&mut self, n: usize) -> bool {
        let room = self.room();
        if n <= room {
            return false;
        }
        self.set_status(
            format!(
                "the queue is full: {} runs wait (at most {MAX_QUEUED}); {n} more refused; cancel some or let them run",
                MAX_QUEUED - room
            ),
            true,
        );
        true
    }

    /// Shows the histogram of `bench` in `run`, or says why there is none.
    fn show_histogram(&mut self, run: Option<(String, usize)>, bench: Option<String>) {
        let (Some((run_id, seq)), Some(bench)) = (run, bench) else {
            self.set_status("no bench selected", true);
            return;
        };
        let has = self
            .runs
            .iter()
            .find(|r| r.id == run_id)
            .and_then(|r| r.record.bench(&bench))
            .is_some_and(|b| !b.samples.is_empty());
        if has {
            self.overlay = Some(Overlay::Histogram { run_id, bench });
        } else {
            self.set_status(format!("{bench} has no samples in run {seq} yet"), true);
        }
    }

    /// Adds saved runs (a file's, a Criterion folder's) as finished columns that are shown,
    /// never measured again; runs of targets not in the catalog are left out and said so.
    pub fn show_saved(&mut self, runs: Vec<RunRecord>, numbers: Option<Vec<usize>>, from: &str) {
        let mut left_out = Vec::new();
        let mut n = 0;
        for (i, mut record) in runs.into_iter().enumerate() {
            let Some(target) = record
                .start
                .as_ref()
                .and_then(|s| bench_core::workloads::find(&s.target).ok())
            else {
                left_out.push(
                    record
                        .start
                        .as_ref()
                        .map(|s| s.target.clone())
                        .unwrap_or_else(|| "?".into()),
                );
                continue;
            };
            record.source.get_or_insert_with(|| from.to_string());
            let seq = numbers
                .as_ref()
                .and_then(|ns| ns.get(i).copied())
                .unwrap_or(self.next_seq);
            self.next_seq = self.next_seq.max(seq + 1);
            let start = record.start.as_ref().expect("found above");
            let paired = start.budget.paired;
            let (knobs, trace) = (start.knobs.clone(), start.trace);
            self.runs.push(RunView {
                id: format!("saved-{seq}-{i}"),
                target,
                seq,
                knobs,
                trace,
                benches: record.benches.iter().map(|b| b.name.clone()).collect(),
                state: RunState::Finished,
                started: None,
                current: None,
                previous: None,
                profiled: record.profiled,
                paired,
                record,
            });
            // Shown from a file: nothing to export before quitting.
            self.exported.insert(format!("saved-{seq}-{i}"));
            n += 1;
        }
        self.compare.col = self.target_runs().count().saturating_sub(1);
        let left = if left_out.is_empty() {
            String::new()
        } else {
            left_out.dedup();
            format!(
                " ({} left out: not benchscope targets: {})",
                left_out.len(),
                left_out.join(", ")
            )
        };
        self.set_status(
            format!("{n} saved runs from {from}, read-only{left}"),
            false,
        );
    }

    /// Takes the command line's lists of values as the catalog's sweep, and says so.
    pub fn command_line_sweep(&mut self, varied: String, runs: Vec<Knobs>) {
        self.set_status(
            format!(
                "the command line's lists are a sweep of {varied} ({} runs): mark benches, then s in the catalog queues it",
                runs.len()
            ),
            false,
        );
        self.cli_sweep = Some((varied, runs));
    }

    /// Runs waiting to start.
    pub fn waiting(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.state == RunState::Queued)
            .count()
    }

    /// Queues one run per knob set of a sweep: refused when the queue cannot take them, asked
    /// about when [`LONG_QUEUE`] runs already wait.
    fn queue_sweep(&mut self, sweep: PendingSweep, now: Instant) -> Vec<Effect> {
        if self.refuse_if_full(sweep.runs.len()) {
            return vec![];
        }
        if self.waiting() >= LONG_QUEUE {
            self.pending_sweep = Some(sweep);
            self.overlay = Some(Overlay::ConfirmSweep);
            return vec![];
        }
        let behind = self.active_run().is_some();
        let mut fx = Vec::new();
        for k in sweep.runs {
            fx.extend(self.queue(sweep.benches.clone(), Some(k), now));
        }
        let after = if behind {
            ", after the running one"
        } else {
            ""
        };
        self.set_status(format!("{}{after}", sweep.queued), false);
        fx
    }

    /// Queues a run of `benches` with the current knobs (or `knobs`), and starts it when
    /// nothing else runs (refused when the queue is full).
    fn queue(&mut self, benches: Vec<String>, knobs: Option<Knobs>, now: Instant) -> Vec<Effect> {
        if self.refuse_if_full(1) {
            return vec![];
        }
        let mut run = self.new_run(benches, None);
        if let Some(k) = knobs {
            run.knobs = k;
        }
        self.runs.push(run);
        self.compare.col = self.target_runs().count().saturating_sub(1);
        self.start_next(now)
    }

    /// Cancels the running run, keeping its results, and starts the next queued one.
    fn cancel_running(&mut self, now: Instant) -> Vec<Effect> {
        let Some(run) = self.runs.iter_mut().find(|r| r.state == RunState::Running) else {
            self.set_status("no run is going", false);
            return vec![];
        };
        run.state = RunState::Cancelled;
        let (id, seq) = (run.id.clone(), run.seq);
        self.restart_at = None;
        self.set_status(
            format!("run {seq} cancelled; its results so far are kept"),
            false,
        );
        let mut fx = vec![Effect::Cancel(id)];
        fx.extend(self.start_next(now));
        fx
    }
}

/// Applies one action; returns what the main loop must do.
pub fn update(state: &mut State, action: Action, now: Instant) -> Vec<Effect> {
    state.now = now;
    // A bench finishing while samples stream shows at a later tick (the analysis is worked
    // out at most every MIN_GAP then; a streamed event alone does no analysis at all);
    // everything else (a key, a run ending, a file opened) shows at once.
    let streamed = matches!(action, Action::Run(RunEvent::Event { .. }));
    let urgent = !streamed && action != Action::Tick;
    let fx = apply(state, action, now);
    if !streamed {
        state.refresh_analysis(now, urgent);
    }
    fx
}

fn apply(state: &mut State, action: Action, now: Instant) -> Vec<Effect> {
    match action {
        Action::Key(key) => on_key(state, key, now),
        Action::Run(ev) => on_run_event(state, ev, now),
        Action::Tick => on_tick(state, now),
        Action::Exported(Ok(paths)) => {
            let (_, numbers, _) = state.export_runs();
            let run_ids: Vec<String> = state
                .runs
                .iter()
                .filter(|r| r.target.name == state.target.name && numbers.contains(&r.seq))
                .map(|r| r.id.clone())
                .collect();
            state.exported.extend(run_ids.iter().cloned());
            // Say what the files hold: this target's runs only.
            let others = state
                .runs
                .iter()
                .filter(|r| r.target.name != state.target.name)
                .count();
            let note = if others > 0 {
                format!(
                    " ({} runs only; {others} runs of other targets are not in it)",
                    state.target.name
                )
            } else {
                String::new()
            };
            state.set_status(format!("exported {}{note}", paths.join(" and ")), false);
            vec![Effect::Journal(crate::journal::Entry::Exported { run_ids })]
        }
        Action::Opened(Ok((runs, numbers, path))) => {
            state.typed = None;
            state.typed_error = None;
            state.show_saved(runs, numbers, &path);
            vec![]
        }
        Action::Opened(Err(e)) => {
            // The line stays open with the reason, for another try.
            state.typed_error = Some(e);
            vec![]
        }
        Action::BaselineSaved(Ok(text)) => {
            state.set_status(text, false);
            vec![]
        }
        Action::BaselineSaved(Err(e)) => {
            state.set_status(format!("baseline not saved: {e}"), true);
            vec![]
        }
        Action::Harness(which, h) => {
            if let HarnessBuild::Failed(_) = &h {
                state.set_status(h.describe(which.name()).unwrap_or_default(), true);
            }
            state.harness.set(which, h);
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
            return match key {
                Key::Char('y') | Key::Char('Y') | Key::Char('q') => {
                    state.quit = true;
                    vec![Effect::Quit]
                }
                Key::Char('e') if !state.any_active() => {
                    state.overlay = None;
                    on_global(state, Cmd::Export, now).unwrap_or_default()
                }
                _ => {
                    state.overlay = None;
                    state.set_status("quit cancelled", false);
                    vec![]
                }
            };
        }
        Some(Overlay::ConfirmSweep) => {
            state.overlay = None;
            let Some(sweep) = state.pending_sweep.take() else {
                return vec![];
            };
            if matches!(key, Key::Char('y') | Key::Char('Y')) {
                // Asked once: queued now (the queue's bound still holds).
                let waiting = state.waiting();
                let n = sweep.runs.len();
                if state.refuse_if_full(n) {
                    return vec![];
                }
                let mut fx = Vec::new();
                for k in sweep.runs {
                    fx.extend(state.queue(sweep.benches.clone(), Some(k), now));
                }
                state.set_status(
                    format!("{}, behind {waiting} waiting runs", sweep.queued),
                    false,
                );
                return fx;
            }
            state.set_status(
                format!("sweep not queued ({} runs)", sweep.runs.len()),
                false,
            );
            return vec![];
        }
        Some(Overlay::Reopen) => {
            state.overlay = None;
            let Some(session) = state.offer.take() else {
                return vec![];
            };
            return if matches!(key, Key::Char('y') | Key::Char('Y')) {
                reopen(state, session)
            } else {
                state.set_status(
                    format!(
                        "not reopened; {} stays on disk and is not offered again",
                        session.path.display()
                    ),
                    false,
                );
                vec![Effect::DismissJournal(session.path)]
            };
        }
        Some(Overlay::Help) | Some(Overlay::Scaling) | Some(Overlay::Histogram { .. }) => {
            state.overlay = None;
            return vec![];
        }
        None => {}
    }
    if state.typed.is_some() {
        let max = match state.typed_for {
            TypedFor::Open => 400,
            TypedFor::BaselineName => 64,
        };
        let knobs::Typed::Submitted(text) =
            knobs::type_key(&mut state.typed, &mut state.typed_error, key, max)
        else {
            return vec![];
        };
        let text = text.trim();
        return match state.typed_for {
            TypedFor::Open if !text.is_empty() => vec![Effect::OpenFile(PathBuf::from(text))],
            TypedFor::Open => vec![],
            TypedFor::BaselineName => match crate::baseline::check_name(text) {
                Ok(()) => {
                    state.typed = None;
                    state.typed_error = None;
                    vec![Effect::SaveBaseline(text.to_string())]
                }
                Err(e) => {
                    state.typed_error = Some(e);
                    vec![]
                }
            },
        };
    }
    if state.knobs.editing.is_some() {
        return knobs::on_edit_key(state, key, now);
    }
    if state.knobs.sweep.is_some() {
        return knobs::on_sweep_key(state, key, now);
    }
    let Some(cmd) = keys::lookup(state.focus, key) else {
        return vec![];
    };
    if let Some(fx) = on_global(state, cmd, now) {
        return fx;
    }
    match state.focus {
        Focus::Catalog => catalog::on_cmd(state, cmd, now),
        Focus::Knobs => knobs::on_cmd(state, cmd, now),
        Focus::Live => live::on_cmd(state, cmd, now),
        Focus::Compare => compare::on_cmd(state, cmd),
    }
}

/// The commands that mean the same in every panel; `None` for a panel's own.
fn on_global(state: &mut State, cmd: Cmd, now: Instant) -> Option<Vec<Effect>> {
    match cmd {
        // Cancel works from every panel (the live panel says "c cancels" wherever focus is).
        Cmd::Cancel => return Some(state.cancel_running(now)),
        Cmd::ClearQueue => {
            let before = state.runs.len();
            state.runs.retain(|r| r.state != RunState::Queued);
            let removed = before - state.runs.len();
            state.compare.col = state
                .compare
                .col
                .min(state.target_runs().count().saturating_sub(1));
            state.set_status(
                if removed == 0 {
                    "the queue is empty".to_string()
                } else {
                    format!("queue cleared: {removed} runs that had not started removed")
                },
                false,
            );
        }
        Cmd::NextFocus => state.focus = state.focus.step(1),
        Cmd::PrevFocus => state.focus = state.focus.step(-1),
        Cmd::Help => state.overlay = Some(Overlay::Help),
        Cmd::Quit => {
            if state.any_active() || state.unexported() > 0 {
                state.overlay = Some(Overlay::ConfirmQuit);
            } else {
                state.quit = true;
                return Some(vec![Effect::Quit]);
            }
        }
        Cmd::OpenFile => {
            state.typed = Some(String::new());
            state.typed_for = TypedFor::Open;
            state.typed_error = None;
        }
        Cmd::TogglePaired => {
            state.paired = !state.paired;
            state.set_status(
                if state.paired {
                    "paired rounds on from the next run: its benches take turns sample by sample, ratios pair by pair"
                } else {
                    "paired rounds off from the next run"
                },
                false,
            );
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
            // The export holds the target on screen: none of its runs has a result, no file.
            if state.target_runs().any(|r| {
                r.record
                    .benches
                    .iter()
                    .any(|b| b.summary.is_some() || b.scenario.is_some())
            }) {
                return Some(vec![Effect::Export]);
            }
            state.set_status(
                format!(
                    "nothing to export on {}: no finished bench of it yet",
                    state.target.name
                ),
                true,
            );
        }
        _ => return None,
    }
    Some(vec![])
}

/// Moves a list cursor one step, within `len` rows.
fn move_cursor(cursor: &mut usize, len: usize, down: bool) {
    if len == 0 {
        *cursor = 0;
    } else if down {
        *cursor = (*cursor + 1).min(len - 1);
    } else {
        *cursor = cursor.saturating_sub(1).min(len - 1);
    }
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
    if state.runs[i].knobs == state.knobs.values {
        return vec![];
    }
    state.runs[i].state = RunState::Superseded;
    let old_id = state.runs[i].id.clone();
    // Every bench of the run is measured again with the new knobs; what the old run finished
    // keeps its results in the old column.
    let benches = state.runs[i].benches.clone();
    let run = state.new_run(benches, Some(old_id.clone()));
    let seq = run.seq;
    state.runs.push(run);
    state.set_status(
        format!(
            "knobs changed: run {seq} restarts the benches with {}",
            state.knobs.values
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
                    state.datasets.insert(
                        run.target.name,
                        format!("building the dataset ({rows} rows)…"),
                    );
                }
                Event::Dataset {
                    status,
                    rows,
                    build_ms,
                    ..
                } => {
                    let text = match build_ms {
                        Some(ms) => {
                            format!("dataset {rows} rows {status:?} in {ms:.0} ms").to_lowercase()
                        }
                        None => format!("dataset {rows} rows reused from the cache"),
                    };
                    state.datasets.insert(run.target.name, text);
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
        RunEvent::Exited { run_id, outcome } => {
            let Some(run) = state.runs.iter_mut().find(|r| r.id == run_id) else {
                return vec![];
            };
            run.current = None;
            if run.state == RunState::Running {
                run.state = match outcome {
                    Outcome::Completed => RunState::Finished,
                    Outcome::Cancelled => RunState::Cancelled,
                    Outcome::Failed(e) => RunState::Failed(e),
                };
                let seq = run.seq;
                let text = match &run.state {
                    RunState::Failed(e) => {
                        format!("run {seq} failed: {}", e.lines().next().unwrap_or(""))
                    }
                    RunState::Cancelled => format!("run {seq} cancelled"),
                    _ => format!("run {seq} finished"),
                };
                let failed = matches!(run.state, RunState::Failed(_));
                state.set_status(text, failed);
            }
            state.start_next(now)
        }
    }
}

/// Brings the runs of a journal back as columns (read from disk, measured before): their
/// results, how each ended, and which an export holds.
fn reopen(state: &mut State, session: crate::journal::Session) -> Vec<Effect> {
    let mut n = 0;
    let mut skipped = Vec::new();
    for r in session.runs {
        let Ok(target) = bench_core::workloads::find(&r.target) else {
            skipped.push(r.target);
            continue;
        };
        let run_state = match r.outcome.as_deref() {
            Some(o) => RunState::from_journal(o),
            None => RunState::Failed("interrupted: the explorer stopped while it ran".into()),
        };
        if session.exported.contains(&r.run_id) {
            state.exported.insert(r.run_id.clone());
        }
        state.next_seq = state.next_seq.max(r.seq + 1);
        let paired = r.record.start.as_ref().is_some_and(|s| s.budget.paired);
        state.runs.push(RunView {
            id: r.run_id,
            target,
            seq: r.seq,
            knobs: r.knobs,
            trace: r.trace,
            benches: r.benches,
            record: r.record,
            state: run_state,
            started: None,
            current: None,
            previous: None,
            profiled: r.profiled,
            paired,
        });
        n += 1;
    }
    state.compare.col = state.target_runs().count().saturating_sub(1);
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            " ({} runs of unknown targets left out: {})",
            skipped.len(),
            skipped.join(", ")
        )
    };
    state.set_status(
        format!("reopened {n} runs from {}{skipped}", session.path.display()),
        false,
    );
    state.journal = Some(session.path.clone());
    vec![Effect::ContinueJournal(session.path)]
}

#[cfg(test)]
mod tests;
