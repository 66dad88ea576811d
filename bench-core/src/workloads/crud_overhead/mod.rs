//! `crud_overhead`: what a layer costs over pure SQLite, per operation. A mixed sequence of
//! INSERT / UPDATE / DELETE / SELECT drawn once from a fixed seed is replayed identically on
//! every backend (rusqlite, the middleware per strategy, turso, sqlx-sqlite, PostgreSQL), each
//! operation timed on its own, each compared with the same operation on rusqlite; plus the
//! batch-insert sweep (multi-row INSERTs of 1 to 1000 rows against prepared single-row inserts).

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;
pub mod plan;
pub mod report;

use std::sync::LazyLock;

use crate::BenchError;
use crate::catalog::{
    BenchSpec, CONCURRENCY, Measure, SPIN_US, STORAGE, Shipped, Strategy, Subject, Target, leak,
};
use crate::knobs::KnobSpec;
use crate::settings::SqliteSettings;
use crate::workload::RunContext;
use plan::{BATCHES, Case, Op, Row, Step};

pub const NAME: &str = "crud_overhead";

pub const OPS: KnobSpec = KnobSpec::count(
    "ops",
    Some("BENCH_OPS"),
    1000,
    1,
    1_000_000,
    "operations of the replayed INSERT / UPDATE / DELETE / SELECT mix",
);
pub const BATCH: KnobSpec = KnobSpec::count(
    "batch",
    Some("BENCH_BATCH"),
    100,
    1,
    1_000_000,
    "operations of the mix per transaction",
);
pub const SWEEP_ROWS: KnobSpec = KnobSpec::count(
    "sweep_rows",
    Some("BENCH_SWEEP_ROWS"),
    1000,
    1,
    1_000_000,
    "rows the batch-insert sweep inserts per pass",
);

/// Every case, in the order the catalog lists them.
pub fn cases() -> Vec<Case> {
    let mut v: Vec<Case> = Op::ALL.iter().map(|o| Case::Op(*o)).collect();
    v.extend(BATCHES.iter().map(|n| Case::Batch(*n)));
    v.push(Case::Prepared);
    v
}

/// What every harness's crud session shares: the mix, the sweep's rows, the settings, where
/// its scratch databases go and the PostgreSQL server.
pub struct Shared {
    pub steps: Vec<Step>,
    pub sweep: Vec<Row>,
    pub memory: bool,
    pub settings: SqliteSettings,
    pub dir: std::path::PathBuf,
    pub postgres_url: Option<crate::secret::PgUrl>,
}

impl crate::mirror::RunParams for Shared {
    fn new(run: &RunContext<'_>) -> Result<Shared, BenchError> {
        Shared::new(run)
    }
    fn ops(&self) -> u64 {
        self.steps.len() as u64
    }
    fn settings(&self) -> &SqliteSettings {
        &self.settings
    }
    fn postgres_url(&self) -> Option<&crate::secret::PgUrl> {
        self.postgres_url.as_ref()
    }
    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        first_skip(bench)
    }
}

/// Why a backend has no `select_first`: no way to run the fixed queries past its statement
/// cache that is not another path altogether.
pub fn first_skip(bench: &BenchSpec) -> Option<String> {
    if case_of(bench) != Some(Case::Op(Op::SelectFirst)) {
        return None;
    }
    match bench.subject {
        Subject::Crate(Shipped::Diesel) => Some(
            "diesel's statements are its query DSL, which diesel caches as it decides: there is no uncached run of the same queries to measure".into(),
        ),
        Subject::SqlxPostgres | Subject::Postgres | Subject::Crate(Shipped::SqlMiddlewarePostgres) => Some(
            "on PostgreSQL a statement's first run is the server's planning, not a client cache: not measured here yet".into(),
        ),
        _ => None,
    }
}

impl Shared {
    pub fn new(run: &RunContext<'_>) -> Result<Shared, BenchError> {
        let k = &run.plan.knobs;
        let seed = run.plan.target.seed;
        Ok(Shared {
            steps: plan::steps(k.count(&OPS), k.count(&BATCH), seed),
            sweep: plan::sweep_rows(k.count(&SWEEP_ROWS), seed),
            memory: k.word(&STORAGE) == "memory",
            settings: run.sqlite.clone(),
            dir: run.scratch_dir()?,
            postgres_url: run.postgres_url.clone(),
        })
    }

    /// The iteration of a bench of `case` on backend `c` with its statements `sql`, `keep`
    /// alive as long as it: `select_cached`'s table filled first, then each pass replays the
    /// plan on `rt`.
    pub fn iteration<'a, C: plan::Crud + 'a>(
        &'a self,
        rt: &'a tokio::runtime::Runtime,
        mut c: C,
        sql: plan::Sql,
        case: Case,
        keep: impl Sized + 'a,
    ) -> Result<crate::measure::IterFn<'a>, crate::BenchError> {
        if matches!(case, Case::Op(Op::SelectCached | Op::SelectFirst)) {
            rt.block_on(plan::fill(&mut c, &sql, &self.steps))?;
        }
        Ok(Box::new(move |hist| {
            let _keep = &keep;
            rt.block_on(plan::pass(
                &mut c,
                &sql,
                case,
                &self.steps,
                &self.sweep,
                hist,
            ))
        }))
    }

    /// The bench around `iter`: its operations and work per pass from the model of the
    /// table, and the settings its connections read back.
    pub fn bench<'a>(
        &self,
        iter: crate::measure::IterFn<'a>,
        case: Case,
        settings: std::collections::BTreeMap<String, String>,
    ) -> crate::measure::Bench<'a> {
        let (ops, work) = plan::expected(case, &self.steps, &self.sweep);
        crate::measure::Bench::new(iter, work, WORK)
            .with_ops(ops)
            .with_settings(settings)
    }
}

/// What the work check of every crud bench sums.
pub const WORK: &str =
    "rows affected, or rows read plus their ids (as a model of the table says they must be)";

/// The case a bench of this target runs.
pub fn case_of(spec: &BenchSpec) -> Option<Case> {
    Case::from_variant(spec.variant)
}

/// The case a bench of this target runs, or why it is not one of this target's.
pub fn case_for(spec: &BenchSpec) -> Result<Case, crate::BenchError> {
    case_of(spec).ok_or_else(|| {
        crate::catalog::CatalogError::no_implementation(
            self::spec(),
            spec,
            "not a crud_overhead case",
        )
        .into()
    })
}

fn op_text(case: Case) -> &'static str {
    match case {
        Case::Op(op) => op.about(),
        Case::Batch(_) => {
            "one row of the sweep, inserted by multi-row INSERTs of the bench's size, each its own transaction"
        }
        Case::Prepared => {
            "one row of the sweep, inserted by a prepared single-row INSERT, all in one transaction"
        }
    }
}

fn about(subject: Subject) -> &'static str {
    match subject {
        Subject::Rusqlite => "rusqlite on one connection, statements from its cache (the baseline)",
        Subject::Middleware(_) => {
            "the middleware: values as generic values, a checkout per transaction (per statement outside one), one dispatch per statement, rows built into a result set and decoded"
        }
        Subject::Turso => "turso on one connection, statements from its cache",
        Subject::SqlxSqlite => "sqlx-sqlite on one connection, statements from its cache",
        _ => {
            "PostgreSQL through sqlx on one connection, statements from its cache (needs --postgres-url or BENCHSCOPE_POSTGRES_URL)"
        }
    }
}

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        let mut t = Target::new(
            NAME,
            "a seeded CRUD mix replayed on every backend, each operation against the same on rusqlite; and the batch-insert sweep",
            0x5EED_5005,
            Measure::PerOp,
            "insert/rusqlite",
        )
        .knobs(&[OPS, BATCH, SWEEP_ROWS, STORAGE, CONCURRENCY, SPIN_US])
        .knobs(&crate::settings::KNOBS);
        for case in cases() {
            let prefix = case.name();
            let vs = leak(format!("{prefix}/rusqlite"));
            let bench = |name: &'static str, subject: Subject| {
                BenchSpec::whole(name, subject, op_text(case), about(subject))
                    .case(case.variant(), vs)
            };
            t = t.bench(bench(vs, Subject::Rusqlite));
            t = t.per_strategy(&format!("{prefix}/middleware/"), |name, s: Strategy| {
                bench(name, Subject::Middleware(s))
            });
            for subject in [Subject::Turso, Subject::SqlxSqlite, Subject::SqlxPostgres] {
                let name = leak(format!("{prefix}/{}", subject.slug()));
                t = t.bench(bench(name, subject));
            }
            t = t.per_crate(&format!("{prefix}/"), |name, c, serve| {
                BenchSpec::whole(name, Subject::Crate(c.id), op_text(case), serve.about(c))
                    .case(case.variant(), vs)
            });
        }
        t
    });
    &SPEC
}
