//! The explorer's whole state (the target, the panels, the runs and their queue, the status
//! line, overlays), the actions that change it and the effects it asks for.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_core::catalog::{BenchKind, BenchSpec, Target};
use bench_core::knobs::Knobs;
use bench_core::protocol::results::RunRecord;

use super::keys::Key;
use super::panels::*;
use super::runs::{RunState, RunView};
use crate::messages::{HarnessBuild, HarnessBuilds, RunEvent, RunRequest, RunSettings};

/// How long knob edits settle before running benches restart with the new values.
pub const DEBOUNCE: Duration = Duration::from_millis(600);

/// The most runs waiting in the queue at once: random typing cannot queue hundreds.
pub const MAX_QUEUED: usize = 20;

/// Where the explorer's flamegraphs go, under the snapshot folder.
pub const PROFILE_DIR: &str = "flamegraphs";

/// The concurrency values of a sweep.
pub const SWEEP: [u64; 5] = [1, 2, 4, 8, 16];

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
    /// A bench's history from the results store, beside its value in one run.
    History {
        run_id: String,
        bench: String,
    },
}

/// A bench's history as read from the results store for the history overlay: `None` while
/// it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryView {
    pub bench: String,
    pub loaded: Option<Result<Vec<crate::series::Series>, String>>,
}

/// The line being typed in place of the status line (a path to open after `o`, a baseline
/// name after `S`): its text while it is open, what it is for, and why the last try failed.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub text: Option<String>,
    pub purpose: TypedFor,
    pub error: Option<String>,
}

impl Prompt {
    /// Opens the line with `text` offered, for `purpose`.
    pub fn open(&mut self, text: String, purpose: TypedFor) {
        *self = Prompt {
            text: Some(text),
            purpose,
            error: None,
        };
    }

    /// Closes the line (done or given up).
    pub fn close(&mut self) {
        self.text = None;
        self.error = None;
    }
}

/// What the typed line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TypedFor {
    /// A path of saved results to open (`o`).
    #[default]
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

/// What the explorer's session shares across panels and runs.
#[derive(Debug, Clone)]
pub struct SessionState {
    /// What every run of this session shares (budget, cache folder, PostgreSQL).
    pub settings: RunSettings,
    /// Whether to draw in colour (off when NO_COLOR is set).
    pub color: bool,
    /// Prefix of run ids (the process id in the app; fixed in tests).
    pub id_prefix: String,
    /// Runs an export holds (by id): quitting with others that have results asks first.
    pub exported: std::collections::BTreeSet<String>,
    /// Where this session's journal is written (shown when quitting).
    pub journal: Option<PathBuf>,
    /// The last session, offered for reopening at start.
    pub offer: Option<crate::journal::Session>,
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
    /// What the whole session shares: run settings, colour, run ids, journal, exports.
    pub session: SessionState,
    pub trace: bool,
    /// Runs from now on measure in paired rounds (`--paired`).
    pub paired: bool,
    pub runs: Vec<RunView>,
    pub next_seq: usize,
    pub restart_at: Option<Instant>,
    pub status: Option<Status>,
    pub overlay: Option<Overlay>,
    /// The history the history overlay shows (or is reading).
    pub history: Option<HistoryView>,
    /// What each target's latest run said of its dataset (the header shows the target's own).
    pub datasets: std::collections::BTreeMap<&'static str, String>,
    pub quit: bool,
    /// The time of the last action: what progress and ETAs are drawn against.
    pub now: Instant,
    /// How each harness crate's build stands (built in the background from the start).
    pub harness: HarnessBuilds,
    /// A sweep asked about (see [`LONG_QUEUE`]).
    pub pending_sweep: Option<PendingSweep>,
    /// The line typed in place of the status line.
    pub prompt: Prompt,
    /// A sweep given on the command line (`--concurrency 1,2`): what `s` in the catalog runs
    /// instead of the concurrency sweep; its knob sets, and what they vary.
    pub cli_sweep: Option<(String, Vec<Knobs>)>,
    /// The scripts the explorer was opened with (`--script`): the script target with their
    /// variables as knobs, and their statements.
    pub script: Option<super::script::ScriptView>,
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
    /// The explorer's session began: where its journal is written, the last session if it is
    /// worth offering for reopening, and whether the terminal takes colour.
    Began {
        journal: PathBuf,
        offer: Option<crate::journal::Session>,
        color: bool,
    },
    /// An export finished: the paths written, or why it failed.
    Exported(Result<Vec<String>, String>),
    /// A harness crate's build moved on.
    Harness(bench_core::catalog::Harness, HarnessBuild),
    /// A baseline was saved: where, or why not.
    BaselineSaved(Result<String, String>),
    /// Saved results were read, or why not.
    Opened(Result<OpenedRuns, String>),
    /// The session journal could not be written (the session goes on without one).
    JournalFailed(String),
    /// The last session could not be marked as declined.
    DismissFailed(String),
    /// A finished run could not be recorded in the results store (its results stay here).
    StoreFailed(String),
    /// A bench's history was read from the results store, or why not.
    HistoryLoaded {
        bench: String,
        result: Result<Vec<crate::series::Series>, String>,
    },
}

/// Saved runs read from a file: the runs, their numbers (a report's), and the path.
pub type OpenedRuns = (Vec<RunRecord>, Option<Vec<usize>>, String);

/// What the main loop must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Start(Box<RunRequest>),
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
    /// Read a bench's history from the results store.
    LoadHistory {
        target: String,
        bench: String,
    },
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
            paired: settings.budget.paired,
            runs: Vec::new(),
            next_seq: 1,
            restart_at: None,
            status: None,
            overlay: None,
            history: None,
            datasets: Default::default(),
            session: SessionState {
                settings,
                color: true,
                id_prefix: format!("r{}", std::process::id()),
                exported: Default::default(),
                journal: None,
                offer: None,
            },
            quit: false,
            now: Instant::now(),
            harness: HarnessBuilds::default(),
            pending_sweep: None,
            cli_sweep: None,
            prompt: Prompt::default(),
            script: None,
        }
    }

    /// The catalog's rows: the benches the filter lets through, a folded group by its first
    /// bench alone (drawn as the group).
    pub fn catalog_benches(&self) -> Vec<&'static BenchSpec> {
        let mut seen = std::collections::BTreeSet::new();
        self.filtered_benches()
            .into_iter()
            .filter(|b| {
                let g = group_of(b.name);
                !self.catalog.folded.contains(g) || seen.insert(g)
            })
            .collect()
    }

    /// The benches the filter lets through, in catalog order: benches first, then
    /// micro-benches. What marks, runs and the comparison's rows act on.
    pub fn filtered_benches(&self) -> Vec<&'static BenchSpec> {
        let filter = self.catalog.filter.as_str();
        let of = |kind| {
            self.target
                .benches
                .iter()
                .filter(move |b| b.kind == kind && shown(b, filter))
        };
        of(BenchKind::Bench).chain(of(BenchKind::Micro)).collect()
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
        self.filtered_benches()
            .into_iter()
            .map(|b| b.name)
            .filter(|n| self.target_runs().any(|r| r.benches.iter().any(|b| b == n)))
            .collect()
    }

    /// The matrix view: the selected run, its matrix, and the indices of the matrix's rows the
    /// filter shows (a row with a finished bench the filter lets through).
    pub fn matrix_view(&self) -> Option<(&RunView, &bench_core::matrix::Matrix, Vec<usize>)> {
        let run = self.target_runs().nth(self.compare.col)?;
        let m = self.compare.analysis.matrix(&run.id)?;
        let shown = self.filtered_benches();
        let rows = (0..m.rows.len())
            .filter(|&i| {
                m.cells[i]
                    .iter()
                    .flatten()
                    .any(|c| shown.iter().any(|b| b.name == c.bench))
            })
            .collect();
        Some((run, m, rows))
    }

    /// The matrix view's selected cell: its row and column, kept within the matrix.
    pub fn matrix_cursor(&self) -> Option<(usize, usize)> {
        let (_, m, rows) = self.matrix_view()?;
        let row = *rows.get(self.compare.matrix_row.min(rows.len().checked_sub(1)?))?;
        let col = self.compare.matrix_col.min(m.columns.len().checked_sub(1)?);
        Some((row, col))
    }

    /// The bench of the matrix view's selected cell, if it finished.
    pub fn matrix_bench(&self) -> Option<String> {
        let (_, m, _) = self.matrix_view()?;
        let (i, j) = self.matrix_cursor()?;
        Some(m.cells[i][j].as_ref()?.bench.raw().to_string())
    }

    /// The sweep (or matrix) among the target's runs, as the exports draw it.
    pub fn scaling(&self) -> Option<&crate::export::scaling::Scaling> {
        self.compare.analysis.scaling()
    }

    /// Runs of the target the explorer shows: the comparison's columns.
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
                !self.session.exported.contains(&r.id)
                    && r.record
                        .benches
                        .iter()
                        .any(|b| b.summary.is_some() || b.scenario.is_some())
            })
            .count()
    }

    /// The quit question's two lines.
    pub fn quit_question(&self) -> (String, String) {
        let journal = self
            .session
            .journal
            .as_ref()
            .map(|p| p.display().to_string());
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

    pub(super) fn set_status(&mut self, text: impl Into<String>, error: bool) {
        self.status = Some(Status {
            text: text.into(),
            error,
        });
    }
}

/// Moves a list cursor one step, within `len` rows.
pub(super) fn move_cursor(cursor: &mut usize, len: usize, down: bool) {
    if len == 0 {
        *cursor = 0;
    } else if down {
        *cursor = (*cursor + 1).min(len - 1);
    } else {
        *cursor = cursor.saturating_sub(1).min(len - 1);
    }
}
