//! `bulk_insert` (the database_benchmark suite): `rows` rows of a 16-column table inserted in one
//! transaction per sample into a freshly created table (created before the clock starts), on
//! every backend: rusqlite, the middleware per strategy, turso, sqlx-sqlite and PostgreSQL.

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;
pub mod rows;

use std::sync::LazyLock;

use crate::catalog::{BenchSpec, CONCURRENCY, Measure, ROWS, SPIN_US, Subject, Target};

pub const NAME: &str = "bulk_insert";

/// How the rows go in.
pub const METHOD: crate::knobs::KnobSpec = crate::knobs::KnobSpec::choice(
    "method",
    Some("BENCH_METHOD"),
    "prepared",
    &["prepared", "batch_text"],
    "how the rows go in: prepared (one prepared INSERT bound and run per row, in one transaction) or batch_text (the rows as INSERT text with literal values, made before the clock, run by the backend's batch call in one transaction, as the database_benchmark suite does)",
);

/// What [`METHOD`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Prepared,
    BatchText,
}

/// What the work check of an insert bench sums, in every harness.
pub const INSERT_WORK: &str = "rows inserted (rows each INSERT reports changed)";

const OP: &str = "one row inserted (one transaction of `rows` rows per sample, into a fresh table)";
const MIDDLEWARE: &str = "rows as generic values, one dispatch running the whole transaction";

fn bulk(name: &'static str, subject: Subject, about: &'static str) -> BenchSpec {
    BenchSpec::whole(name, subject, OP, about)
}

/// What every harness's bulk_insert session starts from: its scratch folder, the rows (made once
/// from the seed), the run's SQLite settings and the PostgreSQL URL, if any.
pub struct Params {
    pub dir: std::path::PathBuf,
    pub rows: std::sync::Arc<Vec<rows::BulkRow>>,
    pub settings: crate::settings::SqliteSettings,
    pub postgres_url: Option<crate::secret::PgUrl>,
    pub method: Method,
    /// The rows as SQLite's INSERT text (`method=batch_text`; empty otherwise), made once; the
    /// PostgreSQL benches make theirs with [`rows::batch_text_postgres`].
    pub batch: std::sync::Arc<String>,
}

impl Params {
    pub fn new(run: &crate::workload::RunContext<'_>) -> Result<Params, crate::BenchError> {
        let rows = rows::rows(run.plan.knobs.count(&ROWS), run.plan.target.seed);
        let method = match run.plan.knobs.word(&METHOD) {
            "batch_text" => Method::BatchText,
            _ => Method::Prepared,
        };
        let batch = match method {
            Method::BatchText => rows::batch_text(&rows),
            Method::Prepared => String::new(),
        };
        Ok(Params {
            dir: run.scratch_dir()?,
            rows: std::sync::Arc::new(rows),
            settings: run.sqlite.clone(),
            postgres_url: run.postgres_url.clone(),
            method,
            batch: std::sync::Arc::new(batch),
        })
    }
}

impl crate::mirror::RunParams for Params {
    fn new(run: &crate::workload::RunContext<'_>) -> Result<Params, crate::BenchError> {
        Params::new(run)
    }
    fn ops(&self) -> u64 {
        self.rows.len() as u64
    }
    fn settings(&self) -> &crate::settings::SqliteSettings {
        &self.settings
    }
    fn postgres_url(&self) -> Option<&crate::secret::PgUrl> {
        self.postgres_url.as_ref()
    }
}

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        Target::new(
            NAME,
            "`rows` rows of a 16-column table inserted in one transaction into a fresh table; rows/s",
            0x5EED_3003,
            Measure::Throughput,
            "rusqlite",
        )
        .knobs(&[ROWS, METHOD, CONCURRENCY, SPIN_US])
        // The database_benchmark suite's bulk insert: its BENCH_ROWS default of 10 rows, as
        // INSERT text through the batch call.
        .suite(&[("rows", "10"), ("method", "batch_text")])
        .knobs(&crate::settings::KNOBS)
        .bench(bulk(
            "rusqlite",
            Subject::Rusqlite,
            "prepared insert per row inside one transaction",
        ))
        .per_strategy("middleware/", |name, s| {
            bulk(name, Subject::Middleware(s), MIDDLEWARE)
        })
        .bench(bulk(
            "turso",
            Subject::Turso,
            "turso: prepared insert per row inside one transaction",
        ))
        .bench(bulk(
            "sqlx_sqlite",
            Subject::SqlxSqlite,
            "sqlx: insert per row inside one transaction",
        ))
        .bench(bulk(
            "postgres",
            Subject::SqlxPostgres,
            "PostgreSQL through sqlx (needs --postgres-url or BENCHSCOPE_POSTGRES_URL)",
        ))
        .per_crate("", |name, c, serve| {
            bulk(name, Subject::Crate(c.id), serve.about(c))
        })
    });
    &SPEC
}
