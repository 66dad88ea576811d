//! `key_value`: the key-value benchmark groups of a distributed-actors suite (single
//! operations, batches, concurrent access, key patterns, TTL), run for real on every SQLite
//! backend and on an in-memory HashMap, with the suite's own targets judged pass or fail.

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;
pub mod plan;
pub mod report;

use std::sync::LazyLock;

use crate::catalog::{
    BenchSpec, CONCURRENCY, Measure, SPIN_US, STORAGE, Strategy, Subject, Target, leak,
};
use crate::knobs::KnobSpec;
use plan::Case;

pub const NAME: &str = "key_value";

pub const KEYS: KnobSpec = KnobSpec::count(
    "keys",
    Some("BENCH_KEYS"),
    1000,
    1,
    1_000_000,
    "keys each bench puts, gets or deletes per pass (the suite's batches are 1000)",
);

pub use plan::WORK;

/// What every harness's key_value session starts from.
pub struct Params {
    pub dir: std::path::PathBuf,
    pub keys: u64,
    pub seed: u64,
    pub memory: bool,
    pub settings: crate::settings::SqliteSettings,
}

impl Params {
    pub fn new(run: &crate::workload::RunContext<'_>) -> Result<Params, crate::BenchError> {
        let k = &run.plan.knobs;
        Ok(Params {
            dir: run.scratch_dir()?,
            keys: k.count(&KEYS),
            seed: run.plan.target.seed,
            memory: k.word(&STORAGE) == "memory",
            settings: run.sqlite.clone(),
        })
    }
}

impl crate::mirror::RunParams for Params {
    fn new(run: &crate::workload::RunContext<'_>) -> Result<Params, crate::BenchError> {
        Params::new(run)
    }
    fn ops(&self) -> u64 {
        self.keys
    }
    fn settings(&self) -> &crate::settings::SqliteSettings {
        &self.settings
    }
}

/// The case a bench of this target runs.
pub fn case_of(spec: &BenchSpec) -> Option<Case> {
    Case::from_variant(spec.variant)
}

/// The case a bench of this target runs, or why it is not one of this target's.
pub fn case_for(spec: &BenchSpec) -> Result<Case, crate::BenchError> {
    case_of(spec).ok_or_else(|| {
        crate::catalog::CatalogError::no_implementation(self::spec(), spec, "not a key_value case")
            .into()
    })
}

fn about(subject: Subject) -> &'static str {
    match subject {
        Subject::Memory => {
            "a HashMap behind a RwLock in the runner: what the store costs without a database"
        }
        Subject::Rusqlite => "rusqlite on one connection (one per task), statements from its cache",
        Subject::Middleware(_) => {
            "the middleware: a checkout per operation (per transaction in the bulk cases), the values as generic values, one dispatch per statement"
        }
        Subject::Turso => "turso on one connection (one per task), statements from its cache",
        _ => "sqlx-sqlite on one connection (one per task), statements from its cache",
    }
}

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        let mut t = Target::new(
            NAME,
            "the key-value suite's groups (single, batch, concurrent, key patterns, TTL) on every backend, against its targets",
            0x5EED_6006,
            Measure::PerOp,
            "single_get_100b/rusqlite",
        )
        .knobs(&[KEYS, STORAGE, CONCURRENCY, SPIN_US])
        .knobs(&crate::settings::KNOBS);
        for case in Case::all() {
            let prefix = case.name();
            let vs = leak(format!("{prefix}/rusqlite"));
            let bench = |name: &'static str, subject: Subject| {
                BenchSpec::whole(name, subject, case.about(), about(subject))
                    .case(case.variant(), vs)
            };
            t = t.bench(bench(
                leak(format!("{prefix}/{}", Subject::Memory.slug())),
                Subject::Memory,
            ));
            t = t.bench(bench(vs, Subject::Rusqlite));
            t = t.per_strategy(&format!("{prefix}/middleware/"), |name, s: Strategy| {
                bench(name, Subject::Middleware(s))
            });
            for subject in [Subject::Turso, Subject::SqlxSqlite] {
                t = t.bench(bench(leak(format!("{prefix}/{}", subject.slug())), subject));
            }
            t = t.per_crate(&format!("{prefix}/"), |name, c, serve| {
                BenchSpec::whole(name, Subject::Crate(c.id), case.about(), serve.about(c))
                    .case(case.variant(), vs)
            });
        }
        t
    });
    &SPEC
}
