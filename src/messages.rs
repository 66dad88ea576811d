//! What front ends and the runner layer say to each other: a request to run, and what happens
//! to a run. The explorer's model and the process runner both speak these; neither owns them.

use std::path::PathBuf;

use bench_core::catalog::Harness;
use bench_core::knobs::Knobs;
use bench_core::protocol::Budget;
use bench_core::protocol::Event;
use bench_core::service::args::{BudgetArgs, ScriptArgs, SessionArgs};
use bench_core::service::request::{self, RunnerRequest};

/// Settings every run of a session shares, whatever its target and knobs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSettings {
    /// The run's budget as asked (the front ends checked it before anything ran): a runner is
    /// given it whole, or its share when the run spans processes ([`RunRequest::budget`]),
    /// typed, in its [`RunnerRequest`].
    pub budget: BudgetArgs,
    /// Runner processes a run measures each bench in, one after another (`--processes`;
    /// 0 or 1: one). Profiled runs and scenarios are one process whatever it says.
    pub processes: usize,
    /// Whether the processes after the second are left out when every bench's processes
    /// agreed within their own intervals: the default count's way; a count asked for
    /// (`--processes`, BENCHSCOPE_PROCESSES) is run whole.
    pub processes_may_stop: bool,
    pub cache_dir: Option<PathBuf>,
    /// Handed to runners in their environment (BENCHSCOPE_POSTGRES_URL), never as an argument.
    pub postgres_url: Option<bench_core::secret::PgUrl>,
    /// The script target's files, variables and database (absolute paths).
    pub script: ScriptArgs,
}

impl RunSettings {
    pub fn from_session(session: &SessionArgs) -> RunSettings {
        RunSettings {
            budget: session.budget.clone(),
            // Checked by the front ends before anything runs (`BudgetArgs::resolve`).
            processes: session.budget.processes().unwrap_or(1),
            processes_may_stop: !session.budget.processes_given(),
            cache_dir: session.cache_dir.clone(),
            postgres_url: session.postgres_url(),
            script: session.script.absolute(),
        }
    }
}

/// What to run: a target, its benches, resolved knobs and the budget; a runner is handed it
/// as one typed [`RunnerRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub run_id: String,
    pub target: String,
    /// The target's catalog entry, looked up once (the script target's with the statements of
    /// the run's scripts); `None` for a name the catalog lacks (the runner names it).
    pub spec: Option<&'static bench_core::catalog::Target>,
    pub benches: Vec<String>,
    /// Every knob of the target, already checked against the catalog.
    pub knobs: Knobs,
    pub trace: bool,
    pub settings: RunSettings,
    /// More variables for the runner's environment (a repeat's padding).
    pub env: Vec<(String, String)>,
    /// Run each bench under perf and write its flamegraph into this folder.
    pub profile: Option<PathBuf>,
    /// The share of the budget this request's runner takes: 1, the whole; n, one of n
    /// processes' ([`RunRequest::one_process`]).
    pub share: usize,
}

impl RunRequest {
    pub fn new(
        run_id: String,
        target: &str,
        benches: Vec<String>,
        knobs: Knobs,
        trace: bool,
        settings: &RunSettings,
    ) -> RunRequest {
        let spec = bench_core::workloads::find(target).ok().map(|t| {
            if t.name == bench_core::workloads::script::NAME {
                bench_core::workloads::script::spec_for(&settings.script)
            } else {
                t
            }
        });
        RunRequest {
            run_id,
            target: target.to_string(),
            spec,
            benches,
            knobs,
            trace,
            settings: settings.clone(),
            env: Vec::new(),
            profile: None,
            share: 1,
        }
    }

    /// The request's benches grouped by the harness that runs them, in catalog order of
    /// harnesses.
    pub fn by_harness(&self) -> Vec<(Harness, Vec<String>)> {
        let harness_of = |b: &str| {
            self.spec
                .and_then(|t| t.spec(b).ok())
                .map(|s| s.harness())
                .unwrap_or(Harness::Core)
        };
        let mut groups: Vec<(Harness, Vec<String>)> = Vec::new();
        for h in Harness::ALL {
            let mine: Vec<String> = self
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

    /// Whether `bench` is one of turso's (run only by a runner built with turso, see
    /// [`bench_core::TURSO`]).
    pub fn needs_turso(&self, bench: &str) -> bool {
        self.spec
            .and_then(|t| t.spec(bench).ok())
            .is_some_and(|s| s.subject.needs_turso())
    }

    /// The runner processes this run measures each bench in: one when profiled (a recording
    /// per bench) or for a scenario (its figures are over its own timeline), else the
    /// session's.
    pub fn processes(&self) -> usize {
        let scenario = self
            .spec
            .is_some_and(|t| t.measure == bench_core::catalog::Measure::Scenario);
        if self.profile.is_some() || scenario {
            1
        } else {
            self.settings.processes.max(1)
        }
    }

    /// The request one of this run's processes is given: its share of the budget.
    pub fn one_process(&self) -> RunRequest {
        let mut r = self.clone();
        r.share = self.processes();
        r
    }

    /// The budget this request's runner is given: the whole, or one process's share; each
    /// bench a `--time-for` pattern selects with its own time. (The front ends checked the
    /// budget before the run started: an error here names what does not read.)
    pub fn budget(&self) -> Result<Budget, String> {
        let target = match self.spec {
            Some(t) => t,
            None => bench_core::workloads::find(&self.target).map_err(|e| e.to_string())?,
        };
        let benches: Vec<_> = self
            .benches
            .iter()
            .filter_map(|b| target.spec(b).ok())
            .collect();
        let whole = bench_core::service::args::budget_for(&self.settings.budget, target, &benches)
            .map_err(|e| e.to_string())?;
        Ok(bench_core::service::args::process_share(&whole, self.share))
    }

    /// What the runner is handed, whole, on its stdin (never the PostgreSQL URL).
    pub fn runner_request(&self) -> Result<RunnerRequest, String> {
        let mut script = self.settings.script.clone();
        // A script variable's knob goes as a define, after the command line's -D (the last one
        // wins): the runner records its variables from its defines alone.
        let mut knobs = self.knobs.clone();
        knobs
            .0
            .retain(|k, _| crate::model::script::variable(k).is_none());
        if self.target == bench_core::workloads::script::NAME {
            for (k, v) in &self.knobs.0 {
                if let Some(var) = crate::model::script::variable(k) {
                    script.defines.push(format!("{var}={v}"));
                }
            }
        }
        Ok(RunnerRequest {
            format: request::FORMAT,
            run_id: self.run_id.clone(),
            target: self.target.clone(),
            benches: self.benches.clone(),
            knobs,
            budget: self.budget()?,
            trace: self.trace,
            // Absolute: a runner may start in another folder.
            cache_dir: self
                .settings
                .cache_dir
                .as_deref()
                .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf())),
            script,
        })
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    /// Stopped on request; what finished is kept.
    Cancelled,
    /// Why the run failed, with a runner's stderr tail.
    Failed(String),
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
    /// Something to tell the user while a run prepares (e.g. building harness-sqlx).
    Note { run_id: String, text: String },
    /// The run ended.
    Exited { run_id: String, outcome: Outcome },
}

/// Where a harness crate's build stands (harness-sqlx, harness-async-sqlite): its benches run
/// only once it is built.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HarnessBuild {
    /// Nothing asked for it yet (or its variable names a binary).
    #[default]
    Idle,
    /// cargo is looking whether it is up to date.
    Checking,
    /// cargo compiles: crates done so far, of about `total` (when cargo metadata could say).
    Building {
        done: usize,
        total: Option<usize>,
        current: String,
    },
    Ready,
    Failed(String),
}

impl HarnessBuild {
    /// Still on its way (checking or compiling).
    pub fn is_busy(&self) -> bool {
        matches!(self, HarnessBuild::Checking | HarnessBuild::Building { .. })
    }

    /// One line for a person: "building the sqlx harness: 112/276 crates (sqlx-core)", for the
    /// harness named `name`.
    pub fn describe(&self, name: &str) -> Option<String> {
        match self {
            HarnessBuild::Idle | HarnessBuild::Ready => None,
            HarnessBuild::Checking => Some(format!("checking the {name} harness is built (cargo)")),
            HarnessBuild::Building {
                done,
                total,
                current,
            } => {
                let of = match total {
                    Some(t) => format!("{done}/{}", t.max(done)),
                    None => done.to_string(),
                };
                let now = if current.is_empty() {
                    String::new()
                } else {
                    format!(" ({current})")
                };
                Some(format!("building the {name} harness: {of} crates{now}"))
            }
            HarnessBuild::Failed(e) => Some(format!(
                "the {name} harness cannot be built: {}",
                e.lines().next().unwrap_or("")
            )),
        }
    }
}

/// The name a build's line gives a harness: its own, or "turso" for the core's (the only core
/// runner ever built is bench-core's with turso, for a benchscope built without it).
pub fn build_name(h: bench_core::catalog::Harness) -> &'static str {
    match h {
        bench_core::catalog::Harness::Core => "turso",
        h => h.name(),
    }
}

/// How the build of each harness crate stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HarnessBuilds(Vec<(bench_core::catalog::Harness, HarnessBuild)>);

impl HarnessBuilds {
    pub fn get(&self, h: bench_core::catalog::Harness) -> &HarnessBuild {
        static IDLE: HarnessBuild = HarnessBuild::Idle;
        self.0
            .iter()
            .find(|(k, _)| *k == h)
            .map(|(_, b)| b)
            .unwrap_or(&IDLE)
    }

    pub fn set(&mut self, h: bench_core::catalog::Harness, build: HarnessBuild) {
        match self.0.iter_mut().find(|(k, _)| *k == h) {
            Some((_, b)) => *b = build,
            None => self.0.push((h, build)),
        }
    }

    /// The line of the harness whose build is under way, else of one that failed, if any.
    pub fn describe(&self) -> Option<String> {
        let busy = self.0.iter().find(|(_, b)| b.is_busy());
        busy.or_else(|| {
            self.0
                .iter()
                .find(|(_, b)| matches!(b, HarnessBuild::Failed(_)))
        })
        .and_then(|(h, b)| b.describe(build_name(*h)))
    }
}
