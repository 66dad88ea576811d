//! The shape every target has: a [`Workload`] declares its catalog entry (benches and knobs) and
//! opens a [`Session`] that supplies the code of each bench. A runner binary finds workloads
//! through its [`Registry`], so adding a target is a module of its own plus one registry line.

use std::path::{Path, PathBuf};

use crate::catalog::{BenchSpec, Harness, Target};
use crate::dataset::{DatasetKey, DatasetReady};
use crate::error::BenchError;
use crate::knobs::Knobs;
use crate::measure::Bench;
use crate::protocol::{Budget, DatasetStatus, Event};
use crate::settings::SqliteSettings;

/// Everything checked before a run starts: the target, its benches, knobs, budget and trace.
#[derive(Debug, Clone)]
pub struct Plan {
    pub target: &'static Target,
    pub benches: Vec<&'static BenchSpec>,
    pub knobs: Knobs,
    pub budget: Budget,
    pub trace: bool,
}

/// What a workload is given to prepare one run.
#[derive(Debug, Clone)]
pub struct RunContext<'a> {
    pub plan: &'a Plan,
    /// Where datasets and scratch files live.
    pub cache_dir: PathBuf,
    /// PostgreSQL, for the benches that need it (they are skipped without one).
    pub postgres_url: Option<crate::secret::PgUrl>,
    /// The SQLite settings every connection of the run opens with.
    pub sqlite: SqliteSettings,
    /// The `script` target's files, variables and database (empty for other targets).
    pub script: crate::script::ScriptArgs,
}

/// How a harness builds or checks a dataset file: `(cache dir, key, on_build)` to a ready file.
pub type Ensure<'a> =
    dyn Fn(&Path, &DatasetKey, &mut dyn FnMut(&Path)) -> Result<DatasetReady, BenchError> + 'a;

impl RunContext<'_> {
    /// The folder this run's scratch databases go in: the runner's own folder in the cache
    /// (`run-<pid>`, made if missing, removed when the runner's service ends), which is also
    /// the jail SQLite reaches a user's data through.
    pub fn scratch_dir(&self) -> Result<PathBuf, BenchError> {
        crate::scratch::Scratch::run_dir(&self.cache_dir)
    }

    /// The target's dataset for `rows` rows, built or reused with `ensure` and reported as
    /// `dataset` events.
    pub fn dataset(
        &self,
        rows: u64,
        emit: &mut dyn FnMut(Event),
        ensure: &Ensure<'_>,
    ) -> Result<DatasetReady, BenchError> {
        let key = DatasetKey {
            wal: self.sqlite.wal(),
            ..DatasetKey::new(self.plan.target.name, rows, self.plan.target.seed)
        };
        let ready = ensure(&self.cache_dir, &key, &mut |path| {
            emit(Event::Dataset {
                status: DatasetStatus::Building,
                rows,
                path: path.display().to_string(),
                build_ms: None,
            })
        })?;
        emit(Event::Dataset {
            status: ready.status,
            rows,
            path: ready.path.display().to_string(),
            build_ms: ready.build_ms,
        });
        Ok(ready)
    }

    /// The shared lookup dataset (`rows` rows of the `test` table, built with `ensure`) and the
    /// ids one pass looks up: the target's shuffled order, `lookups` long.
    pub fn lookup_dataset(
        &self,
        emit: &mut dyn FnMut(Event),
        ensure: &Ensure<'_>,
    ) -> Result<(PathBuf, Vec<i64>), BenchError> {
        use crate::catalog::{LOOKUPS, ROWS};
        let k = &self.plan.knobs;
        let ready = self.dataset(k.count(&ROWS), emit, ensure)?;
        let ids =
            crate::dataset::lookup_ids(k.count(&ROWS), self.plan.target.seed, k.count(&LOOKUPS));
        Ok((ready.path, ids))
    }
}

/// A target: its catalog entry, and how one harness runs its benches.
pub trait Workload: Sync {
    /// The catalog entry: benches, knobs, seed, baseline.
    fn spec(&self) -> &'static Target;

    /// Prepares what the target's benches share for one run (dataset, runtime, pools),
    /// reporting `dataset` events on the way.
    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError>;
}

/// One run's prepared state, from which each bench's code is made.
pub trait Session {
    /// Operations in one pass of every bench (a sample is one or more passes).
    fn ops(&self) -> u64;

    /// Why a bench cannot run here, if it cannot (reported as `skipped`, not a failure).
    fn skip(&self, _bench: &BenchSpec) -> Option<String> {
        None
    }

    /// One bench, ready to measure: its iteration, the work a pass must do, and the SQLite
    /// settings its connections read back.
    fn bench(&self, bench: &BenchSpec) -> Result<Bench<'_>, BenchError>;

    /// What a bench reports of its own once its samples are taken (after its summary).
    fn report(&self, _bench: &BenchSpec) -> Vec<Event> {
        Vec::new()
    }

    /// Prepares one bench of a scenario target (databases, pools, a runtime) to run for its
    /// set time.
    fn scenario(&self, bench: &BenchSpec) -> Result<Box<dyn ScenarioRun + '_>, BenchError> {
        Err(BenchError::Invalid(format!(
            "{} is not a scenario bench",
            bench.name
        )))
    }
}

/// A prepared scenario bench.
pub trait ScenarioRun {
    /// The SQLite settings its connections read back (empty where there are none).
    fn settings(&self) -> std::collections::BTreeMap<String, String>;

    /// What it runs on, where a knob chooses it (the pool under the middleware path); the
    /// bench's own backend otherwise.
    fn backend(&self) -> Option<String> {
        None
    }

    /// Runs it for its set time, streaming `tick` events, and returns its figures.
    fn run(
        self: Box<Self>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<crate::measure::scenario::ScenarioStats, BenchError>;
}

/// The workloads one runner binary implements.
#[derive(Clone, Copy)]
pub struct Registry {
    pub harness: Harness,
    pub workloads: &'static [&'static dyn Workload],
}

impl Registry {
    /// The implementation of `target`, if this harness has one.
    pub fn find(&self, target: &str) -> Option<&'static dyn Workload> {
        self.workloads
            .iter()
            .copied()
            .find(|w| w.spec().name == target)
    }
}
