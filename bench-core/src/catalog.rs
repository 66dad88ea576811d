//! The catalog's vocabulary: targets, benches with a typed identity, dispatch strategies, and
//! the knobs several targets share. Each target declares its own entry in its workload module
//! (`workloads/<target>`); the list of targets is `workloads::targets()`.

use std::str::FromStr;
use std::sync::LazyLock;

use serde::Serialize;

use crate::knobs::KnobSpec;
use crate::measure::trace::Phase;

/// Which runner binary produces a bench's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Harness {
    /// bench-core's runner (rusqlite, deadpool-sqlite, the middleware strategies, turso).
    Core,
    /// harness-sqlx (sqlx 0.9 in its own dependency graph).
    Sqlx,
    /// harness-async-sqlite (async-sqlite 0.7 and its rusqlite 0.41 in their own graph).
    #[serde(rename = "async-sqlite")]
    AsyncSqlite,
    /// harness-sql-middleware-turso (sql-middleware's turso feature: turso 0.6, whose default
    /// features make mimalloc the process allocator).
    #[serde(rename = "sql-middleware-turso")]
    SqlMiddlewareTurso,
}

impl Harness {
    pub fn name(self) -> &'static str {
        match self {
            Harness::Core => "core",
            Harness::Sqlx => "sqlx",
            Harness::AsyncSqlite => "async-sqlite",
            Harness::SqlMiddlewareTurso => "sql-middleware-turso",
        }
    }

    /// Every harness, in the order a run's benches are run.
    pub const ALL: [Harness; 4] = [
        Harness::Core,
        Harness::Sqlx,
        Harness::AsyncSqlite,
        Harness::SqlMiddlewareTurso,
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchKind {
    /// A whole operation, end to end.
    Bench,
    /// Isolates one phase of the operation.
    Micro,
}

/// The dispatch strategies of the middleware path: how a query gets from an async task to the
/// thread that owns the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// On the runtime thread itself: blocks the executor for the query's duration.
    Inline,
    /// `tokio::task::spawn_blocking` with the pooled connection moved in.
    SpawnBlocking,
    /// deadpool-sqlite's `Object::interact`.
    Interact,
    /// A dedicated thread per connection, std mpsc in, tokio oneshot out.
    Worker,
    /// A dedicated thread per connection, one-slot mailbox, spin then park on both sides.
    Spin,
    /// `tokio::task::block_in_place` on the runtime thread: blocks it, but tells the runtime to
    /// hand its other tasks to another thread first.
    BlockInPlace,
}

impl Strategy {
    pub const ALL: [Strategy; 6] = [
        Strategy::Inline,
        Strategy::SpawnBlocking,
        Strategy::Interact,
        Strategy::Worker,
        Strategy::Spin,
        Strategy::BlockInPlace,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Inline => "inline",
            Strategy::SpawnBlocking => "spawn_blocking",
            Strategy::Interact => "interact",
            Strategy::Worker => "worker",
            Strategy::Spin => "spin",
            Strategy::BlockInPlace => "block_in_place",
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            Strategy::Inline => "runs the query on the async runtime's own thread (blocks it)",
            Strategy::SpawnBlocking => {
                "tokio::task::spawn_blocking with the pooled connection moved in"
            }
            Strategy::Interact => "deadpool-sqlite Object::interact",
            Strategy::Worker => {
                "a dedicated thread per connection; std mpsc in, tokio oneshot back"
            }
            Strategy::Spin => {
                "a dedicated thread per connection; one-slot hand-off, both sides spin then park"
            }
            Strategy::BlockInPlace => {
                "tokio::task::block_in_place on the runtime thread (its other tasks move away first)"
            }
        }
    }

    /// Whether the connection lives on a dedicated thread (worker pool) or in deadpool-sqlite.
    pub fn uses_workers(self) -> bool {
        matches!(self, Strategy::Worker | Strategy::Spin)
    }

    /// The pool behind the strategy.
    pub fn pool(self) -> Pool {
        if self.uses_workers() {
            Pool::Workers
        } else {
            Pool::Deadpool
        }
    }
}

impl FromStr for Strategy {
    type Err = CatalogError;
    fn from_str(s: &str) -> Result<Self, CatalogError> {
        Strategy::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| CatalogError::UnknownStrategy {
                name: s.to_string(),
                known: Strategy::ALL.map(|x| x.name()).join(", "),
            })
    }
}

/// The pools the middleware path checks connections out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// deadpool-sqlite (inline, spawn_blocking, interact, block_in_place).
    Deadpool,
    /// Connections owned by dedicated threads, pooled with deadpool (worker, spin).
    Workers,
    /// r2d2 with r2d2_sqlite: a blocking pool with no recycle hop (inline, spawn_blocking,
    /// block_in_place).
    R2d2,
    /// bb8 (the async pool sql-middleware ships on) over rusqlite connections: checks a
    /// connection on checkout, as bb8 does by default (inline, spawn_blocking, block_in_place).
    Bb8,
    /// No pool: `size` connections opened up front, a checkout takes the next one round robin
    /// and locks it while a query runs (inline, spawn_blocking, block_in_place).
    None,
}

impl Pool {
    pub fn label(self) -> &'static str {
        match self {
            Pool::Deadpool => "deadpool-sqlite",
            Pool::Workers => "rusqlite worker pool",
            Pool::R2d2 => "r2d2_sqlite",
            Pool::Bb8 => "bb8",
            Pool::None => "no pool",
        }
    }

    /// Every pool, in the order the `pool` knob lists them.
    pub const ALL: [Pool; 5] = [
        Pool::Deadpool,
        Pool::R2d2,
        Pool::Bb8,
        Pool::None,
        Pool::Workers,
    ];

    /// A strategy that checks out of this pool.
    pub fn strategy(self) -> Strategy {
        match self {
            Pool::Deadpool => Strategy::Interact,
            Pool::Workers => Strategy::Worker,
            Pool::R2d2 | Pool::Bb8 | Pool::None => Strategy::BlockInPlace,
        }
    }

    /// Whether `s` dispatches on this pool: interact is deadpool-sqlite's own, worker and spin
    /// are the worker pool's threads, the others take any pool's connection.
    pub fn runs(self, s: Strategy) -> bool {
        match self {
            Pool::Workers => s.uses_workers(),
            Pool::Deadpool => !s.uses_workers(),
            Pool::R2d2 | Pool::Bb8 | Pool::None => !s.uses_workers() && s != Strategy::Interact,
        }
    }

    /// The pool the `pool` knob names for strategy `s` (`auto`: the strategy's own).
    pub fn chosen(knob: &str, s: Strategy) -> Pool {
        match knob {
            "deadpool-sqlite" => Pool::Deadpool,
            "workers" => Pool::Workers,
            "r2d2" => Pool::R2d2,
            "bb8" => Pool::Bb8,
            "none" => Pool::None,
            _ => s.pool(),
        }
    }
}

/// Why the middleware path with strategy `s` cannot run on the pool the `pool` knob names,
/// if it cannot.
pub fn pool_mismatch(knob: &str, s: Strategy) -> Option<String> {
    let p = Pool::chosen(knob, s);
    (!p.runs(s)).then(|| {
        format!(
            "{} does not dispatch on {} (pool={knob}; it runs on {})",
            s.name(),
            p.label(),
            Pool::ALL
                .iter()
                .filter(|q| q.runs(s))
                .map(|q| q.label())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// The pool under the middleware path, the second axis beside the dispatch strategy.
pub const POOL: KnobSpec = KnobSpec::choice(
    "pool",
    Some("BENCH_POOL"),
    "auto",
    &["auto", "deadpool-sqlite", "r2d2", "bb8", "none", "workers"],
    "the pool under the middleware path: auto takes each strategy's own (deadpool-sqlite for inline, spawn_blocking, interact and block_in_place; the worker pool for worker and spin); r2d2 (no recycle hop), bb8 (checks a connection on checkout: is it out of any transaction) and none (connections opened up front, taken round robin) take inline, spawn_blocking and block_in_place",
);

/// A crate people choose between, as it ships, used the way its README shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shipped {
    /// tokio-rusqlite: a background thread per connection, `call`.
    TokioRusqlite,
    /// r2d2 + r2d2_sqlite under `spawn_blocking`.
    R2d2SpawnBlocking,
    /// r2d2 + r2d2_sqlite under `block_in_place`.
    R2d2BlockInPlace,
    /// diesel (sqlite) with its r2d2 pool, under `spawn_blocking`.
    Diesel,
    /// sql-middleware's SQLite pool and query builder.
    SqlMiddleware,
    /// async-sqlite's `Pool` (a background thread per connection), in its own harness.
    AsyncSqlite,
    /// sql-middleware's postgres feature against the PostgreSQL server a URL names.
    SqlMiddlewarePostgres,
    /// sql-middleware's turso feature (its pool over turso 0.6), in its own harness.
    SqlMiddlewareTurso,
}

impl Shipped {
    pub const ALL: [Shipped; 7] = [
        Shipped::TokioRusqlite,
        Shipped::AsyncSqlite,
        Shipped::R2d2SpawnBlocking,
        Shipped::R2d2BlockInPlace,
        Shipped::Diesel,
        Shipped::SqlMiddleware,
        Shipped::SqlMiddlewareTurso,
    ];

    /// Every crate, on SQLite and turso ([`Shipped::ALL`]) and on PostgreSQL.
    pub const EVERY: [Shipped; 8] = [
        Shipped::TokioRusqlite,
        Shipped::AsyncSqlite,
        Shipped::R2d2SpawnBlocking,
        Shipped::R2d2BlockInPlace,
        Shipped::Diesel,
        Shipped::SqlMiddleware,
        Shipped::SqlMiddlewareTurso,
        Shipped::SqlMiddlewarePostgres,
    ];

    /// The bench name's stem.
    pub fn name(self) -> &'static str {
        match self {
            Shipped::TokioRusqlite => "tokio-rusqlite",
            Shipped::R2d2SpawnBlocking => "r2d2_sqlite/spawn_blocking",
            Shipped::R2d2BlockInPlace => "r2d2_sqlite/block_in_place",
            Shipped::Diesel => "diesel",
            Shipped::SqlMiddleware => "sql-middleware",
            Shipped::AsyncSqlite => "async-sqlite",
            Shipped::SqlMiddlewarePostgres => "sql-middleware/postgres",
            Shipped::SqlMiddlewareTurso => "sql-middleware/turso",
        }
    }

    /// The crate, as named in Cargo.lock.
    pub fn krate(self) -> &'static str {
        match self {
            Shipped::TokioRusqlite => "tokio-rusqlite",
            Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => "r2d2_sqlite",
            Shipped::Diesel => "diesel",
            Shipped::SqlMiddleware
            | Shipped::SqlMiddlewarePostgres
            | Shipped::SqlMiddlewareTurso => "sql-middleware",
            Shipped::AsyncSqlite => "async-sqlite",
        }
    }

    /// The crate's exact version as this build resolved it (from the Cargo.lock of the
    /// workspace that builds it: the core's, or its harness's).
    pub fn version(self) -> &'static str {
        self.version_of(self.krate())
    }

    /// The exact version of `krate` in the lockfile of the workspace that builds this crate.
    fn version_of(self, krate: &str) -> &'static str {
        let lock = match self.harness() {
            Harness::Core => crate::protocol::env::CRATE_VERSIONS,
            _ => crate::protocol::env::HARNESS_CRATE_VERSIONS,
        };
        lock.iter()
            .find(|(n, _)| *n == krate)
            .map(|(_, v)| *v)
            .unwrap_or("?")
    }

    /// The crate and its exact version as this build resolved it (`tokio-rusqlite 0.8.0`).
    pub fn label(self) -> &'static str {
        static LABELS: LazyLock<Vec<String>> = LazyLock::new(|| {
            Shipped::EVERY
                .iter()
                .map(|s| match s {
                    // The crate, and the engine under it (another turso than the turso benches').
                    Shipped::SqlMiddlewareTurso => format!(
                        "{} {} on turso {}",
                        s.krate(),
                        s.version(),
                        s.version_of("turso")
                    ),
                    _ => format!("{} {}", s.krate(), s.version()),
                })
                .collect()
        });
        let i = Shipped::EVERY
            .iter()
            .position(|s| *s == self)
            .expect("every crate is in EVERY");
        &LABELS[i]
    }

    /// How it reaches the connection, for descriptions.
    pub fn about(self) -> &'static str {
        match self {
            Shipped::TokioRusqlite => {
                "tokio-rusqlite: a background thread per connection; each query a `call` closure (prepare_cached, query_row) sent to it"
            }
            Shipped::R2d2SpawnBlocking => {
                "r2d2 pool of rusqlite connections; checkout and query in one spawn_blocking closure"
            }
            Shipped::R2d2BlockInPlace => {
                "r2d2 pool of rusqlite connections; checkout and query in block_in_place on the runtime thread"
            }
            Shipped::Diesel => {
                "diesel's query DSL (statement cached by diesel) on its r2d2 pool, in a spawn_blocking closure"
            }
            Shipped::SqlMiddleware => {
                "sql-middleware's SQLite pool (bb8, a worker thread per connection) and query builder, as shipped"
            }
            Shipped::SqlMiddlewarePostgres => {
                "sql-middleware's postgres feature (bb8 over tokio-postgres) against the PostgreSQL server --postgres-url names"
            }
            Shipped::AsyncSqlite => {
                "async-sqlite's Pool: a background thread per connection, each call a closure on the next one (round robin); rusqlite 0.41 with its statement cache"
            }
            Shipped::SqlMiddlewareTurso => {
                "sql-middleware's turso feature: its bb8 pool over turso 0.6 connections (checked on checkout) and query builder on the calling task, statement cache on; mimalloc as the process allocator, as turso 0.6's default features make it"
            }
        }
    }

    /// The harness that links the crate.
    pub fn harness(self) -> Harness {
        match self {
            Shipped::AsyncSqlite => Harness::AsyncSqlite,
            Shipped::SqlMiddlewareTurso => Harness::SqlMiddlewareTurso,
            _ => Harness::Core,
        }
    }
}

/// What a bench measures: the typed identity its implementation is chosen by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// SQLite's C API, through rusqlite's bundled SQLite, on one connection.
    SqliteC,
    /// Raw rusqlite on one connection.
    Rusqlite,
    /// The middleware path over rusqlite, dispatched by a strategy.
    Middleware(Strategy),
    /// A pool's checkout and return, nothing else.
    Pool(Pool),
    /// The middleware's caller-side value code (conversion, decode), no connection involved.
    MiddlewareValues,
    /// turso, raw.
    Turso,
    /// The middleware's value / result-set path over turso.
    TursoMiddleware,
    /// sqlx's SQLite driver.
    SqlxSqlite,
    /// PostgreSQL through sqlx.
    SqlxPostgres,
    /// PostgreSQL through tokio-postgres, the driver beneath sql-middleware's postgres feature.
    Postgres,
    /// An in-process map: what a store costs without a database.
    Memory,
    /// A crate as it ships.
    Crate(Shipped),
}

impl Subject {
    /// The driver or pool shown as the bench's backend.
    pub fn backend(self) -> &'static str {
        match self {
            Subject::SqliteC => "SQLite C API",
            Subject::Rusqlite => "rusqlite",
            Subject::Middleware(s) => s.pool().label(),
            Subject::Pool(p) => p.label(),
            Subject::MiddlewareValues => "middleware",
            Subject::Turso | Subject::TursoMiddleware => "turso",
            Subject::SqlxSqlite => "sqlx-sqlite",
            Subject::SqlxPostgres => "sqlx-postgres",
            Subject::Postgres => "tokio-postgres",
            Subject::Memory => "in-memory HashMap",
            Subject::Crate(c) => c.label(),
        }
    }

    pub fn strategy(self) -> Option<Strategy> {
        match self {
            Subject::Middleware(s) => Some(s),
            _ => None,
        }
    }

    /// The subject as the last part of a bench name (`insert/middleware/spin`, `bulk_get/memory`).
    pub fn slug(self) -> String {
        match self {
            Subject::SqliteC => "sqlite3_c".into(),
            Subject::Rusqlite => "rusqlite".into(),
            Subject::Middleware(s) => format!("middleware/{}", s.name()),
            Subject::Turso => "turso".into(),
            Subject::SqlxSqlite => "sqlx_sqlite".into(),
            Subject::SqlxPostgres => "postgres".into(),
            Subject::Postgres => "tokio-postgres".into(),
            Subject::Memory => "memory".into(),
            Subject::Pool(p) => p.label().into(),
            Subject::MiddlewareValues => "middleware".into(),
            Subject::TursoMiddleware => "middleware/turso".into(),
            Subject::Crate(c) => c.name().into(),
        }
    }

    /// The harness whose runner implements this subject.
    pub fn harness(self) -> Harness {
        match self {
            Subject::SqlxSqlite | Subject::SqlxPostgres => Harness::Sqlx,
            Subject::Crate(c) => c.harness(),
            _ => Harness::Core,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchSpec {
    pub name: &'static str,
    pub kind: BenchKind,
    /// What is measured; the harness and backend follow from it.
    pub subject: Subject,
    /// The phase a micro-bench isolates (and, for a checkout fan-out, the phase it stresses).
    pub phase: Option<Phase>,
    /// What one operation is.
    pub op: &'static str,
    pub about: &'static str,
    /// Which of its target's own cases the bench runs (an operation, a batch size), for
    /// targets whose benches differ by more than their subject; 0 otherwise.
    pub variant: u16,
    /// The bench its ratio is taken against, where not the target's baseline (the same
    /// operation on the baseline backend, say).
    pub vs: Option<&'static str>,
}

impl BenchSpec {
    /// A whole-operation bench.
    pub const fn whole(
        name: &'static str,
        subject: Subject,
        op: &'static str,
        about: &'static str,
    ) -> BenchSpec {
        BenchSpec {
            name,
            kind: BenchKind::Bench,
            subject,
            phase: None,
            op,
            about,
            variant: 0,
            vs: None,
        }
    }

    /// A micro-bench isolating `phase`; what one operation is doubles as its description.
    pub const fn micro(
        name: &'static str,
        subject: Subject,
        phase: Phase,
        op: &'static str,
    ) -> BenchSpec {
        BenchSpec {
            name,
            kind: BenchKind::Micro,
            subject,
            phase: Some(phase),
            op,
            about: op,
            variant: 0,
            vs: None,
        }
    }

    pub const fn about(mut self, about: &'static str) -> BenchSpec {
        self.about = about;
        self
    }

    pub const fn phase(mut self, phase: Phase) -> BenchSpec {
        self.phase = Some(phase);
        self
    }

    /// The same bench, running its target's case `variant`, its ratio taken against `vs`.
    pub const fn case(mut self, variant: u16, vs: &'static str) -> BenchSpec {
        self.variant = variant;
        self.vs = Some(vs);
        self
    }

    pub fn harness(&self) -> Harness {
        self.subject.harness()
    }

    pub fn backend(&self) -> &'static str {
        self.subject.backend()
    }

    pub fn strategy(&self) -> Option<Strategy> {
        self.subject.strategy()
    }
}

impl Serialize for BenchSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("BenchSpec", 9)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("harness", &self.harness())?;
        st.serialize_field("backend", self.backend())?;
        st.serialize_field("strategy", &self.strategy().map(Strategy::name))?;
        st.serialize_field("phase", &self.phase)?;
        st.serialize_field("op", self.op)?;
        st.serialize_field("about", self.about)?;
        if let Some(vs) = self.vs {
            st.serialize_field("vs", vs)?;
        } else {
            st.skip_field("vs")?;
        }
        st.end()
    }
}

/// A bench name made at start-up (per-strategy benches), kept for the life of the process.
pub fn leak(name: String) -> &'static str {
    Box::leak(name.into_boxed_str())
}

/// How a target measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Samples of a repeated operation; the median per operation is the figure.
    PerOp,
    /// Samples time a fan-out of concurrent operations, so ns/op reads as 1 / throughput and
    /// the views lead with ops/s.
    Throughput,
    /// A scenario that runs for a set time and reports a time series (reads/s, latency,
    /// writes, starvation) instead of samples of an operation.
    Scenario,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub name: &'static str,
    pub about: &'static str,
    /// Seed of the target's data (the dataset's id shuffle, generated rows).
    pub seed: u64,
    pub knobs: Vec<KnobSpec>,
    pub benches: Vec<BenchSpec>,
    /// The bench other benches are compared against by default.
    pub baseline: &'static str,
    #[serde(skip)]
    pub measure: Measure,
    /// Kept in the catalog's JSON for readers of `benchscope list --format json`.
    pub throughput: bool,
    /// Phases a subject does not let one measure apart, with why: listed, never faked.
    pub hidden: Vec<Hidden>,
    /// What the workload adds to every view of its runs (its own tables), if anything.
    #[serde(skip)]
    pub sections: crate::sections::Registered,
}

/// A phase of a subject's path that has no micro-bench of its own, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hidden {
    /// The subject's bench (its whole lookup).
    pub bench: &'static str,
    pub phase: &'static str,
    pub reason: &'static str,
}

impl Target {
    pub fn new(
        name: &'static str,
        about: &'static str,
        seed: u64,
        measure: Measure,
        baseline: &'static str,
    ) -> Target {
        Target {
            name,
            about,
            seed,
            knobs: Vec::new(),
            benches: Vec::new(),
            baseline,
            measure,
            throughput: measure == Measure::Throughput,
            hidden: Vec::new(),
            sections: crate::sections::Registered(None),
        }
    }

    /// The workload's own views of its runs ([`crate::sections`]).
    pub fn sections(mut self, sections: &'static dyn crate::sections::Sections) -> Target {
        self.sections = crate::sections::Registered(Some(sections));
        self
    }

    /// Says that `bench`'s path has `phase` but no way to measure it apart, and why.
    pub fn hidden(mut self, bench: &'static str, phase: Phase, reason: &'static str) -> Target {
        self.hidden.push(Hidden {
            bench,
            phase: phase.label(),
            reason,
        });
        self
    }

    pub fn knobs(mut self, knobs: &[KnobSpec]) -> Target {
        self.knobs.extend_from_slice(knobs);
        self
    }

    pub fn bench(mut self, bench: BenchSpec) -> Target {
        self.benches.push(bench);
        self
    }

    /// One bench per dispatch strategy, named `{prefix}{strategy}`.
    pub fn per_strategy(
        mut self,
        prefix: &str,
        bench: impl Fn(&'static str, Strategy) -> BenchSpec,
    ) -> Target {
        for s in Strategy::ALL {
            self.benches
                .push(bench(leak(format!("{prefix}{}", s.name())), s));
        }
        self
    }

    /// One bench per crate of `crates`, named `{prefix}{crate's name}`.
    pub fn per_crate(
        mut self,
        prefix: &str,
        crates: &[Shipped],
        bench: impl Fn(&'static str, Shipped) -> BenchSpec,
    ) -> Target {
        for c in crates {
            self.benches
                .push(bench(leak(format!("{prefix}{}", c.name())), *c));
        }
        self
    }

    /// The bench named `name`, or an error listing the target's benches.
    pub fn spec(&self, name: &str) -> Result<&BenchSpec, CatalogError> {
        self.benches
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| CatalogError::UnknownBench {
                target: self.name.to_string(),
                name: name.to_string(),
                known: self
                    .benches
                    .iter()
                    .map(|b| b.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub fn is_throughput(&self) -> bool {
        self.measure == Measure::Throughput
    }
}

/// Where the databases of a target live.
pub const STORAGE: KnobSpec = KnobSpec::choice(
    "storage",
    Some("BENCH_STORAGE"),
    "file",
    &["file", "memory"],
    "database files (in the run's journal mode) or in-memory databases (memdb; no WAL)",
);
pub const ROWS: KnobSpec = KnobSpec::count(
    "rows",
    Some("BENCH_ROWS"),
    1000,
    1,
    50_000_000,
    "rows in the dataset table",
);
pub const LOOKUPS: KnobSpec = KnobSpec::count(
    "lookups",
    Some("BENCH_LOOKUPS"),
    1000,
    1,
    50_000_000,
    "operations per sample iteration (falls back to BENCH_ROWS)",
)
.fallback("BENCH_ROWS");
pub const CONCURRENCY: KnobSpec = KnobSpec::count(
    "concurrency",
    Some("BENCH_CONCURRENCY"),
    8,
    1,
    1024,
    "pool size (connections, and worker threads for worker strategies)",
);
pub const LOOKUPS_PER_CHECKOUT: KnobSpec = KnobSpec::count(
    "lookups_per_checkout",
    Some("BENCH_LOOKUPS_PER_CHECKOUT"),
    1,
    1,
    50_000_000,
    "middleware lookups made on one borrowed connection (1 = borrow per lookup)",
);
pub const SQLX_STATEMENT_CACHE: KnobSpec = KnobSpec::count(
    "sqlx_statement_cache",
    Some("BENCH_SQLX_STATEMENT_CACHE"),
    100,
    1,
    100_000,
    "sqlx: prepared statements cached per connection",
);
pub const TRACE_EVERY: KnobSpec = KnobSpec::count(
    "trace_every",
    Some("BENCH_TRACE_EVERY"),
    4,
    1,
    1_000_000,
    "with trace on, time the phases of every k-th lookup and checkout (1 = all)",
);
pub const SPIN_US: KnobSpec = KnobSpec::count(
    "spin_us",
    Some("BENCH_SPIN_US"),
    50,
    0,
    100_000,
    "spin strategy: microseconds each side spins before parking",
);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    #[error("unknown target {name:?} (known: {known})")]
    UnknownTarget { name: String, known: String },
    #[error("unknown bench {name:?} in target {target} (known: {known})")]
    UnknownBench {
        target: String,
        name: String,
        known: String,
    },
    #[error("unknown strategy {name:?} (known: {known})")]
    UnknownStrategy { name: String, known: String },
    #[error("bench {bench:?} is run by the {harness:?} harness, not this one")]
    OtherHarness { bench: String, harness: Harness },
    #[error("bench {bench:?} has no implementation in {target} ({why})")]
    NoImplementation {
        target: String,
        bench: String,
        why: &'static str,
    },
}

impl CatalogError {
    /// The error of a bench that a workload's implementation does not handle.
    pub fn no_implementation(target: &Target, bench: &BenchSpec, why: &'static str) -> Self {
        CatalogError::NoImplementation {
            target: target.name.to_string(),
            bench: bench.name.to_string(),
            why,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategy_names_parse() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
        }
        assert_eq!(
            "fast".parse::<Strategy>().unwrap_err().to_string(),
            "unknown strategy \"fast\" (known: inline, spawn_blocking, interact, worker, spin, block_in_place)"
        );
    }

    #[test]
    fn subjects_name_their_backend_and_harness() {
        assert_eq!(
            Subject::Middleware(Strategy::Spin).backend(),
            "rusqlite worker pool"
        );
        assert_eq!(
            Subject::Middleware(Strategy::Inline).backend(),
            "deadpool-sqlite"
        );
        assert_eq!(Subject::Pool(Pool::Deadpool).strategy(), None);
        assert_eq!(Subject::SqlxPostgres.harness(), Harness::Sqlx);
        let spec = BenchSpec::whole("m", Subject::Middleware(Strategy::Worker), "op", "about");
        let json = serde_json::to_value(spec).unwrap();
        assert_eq!(json["backend"], "rusqlite worker pool");
        assert_eq!(json["strategy"], "worker");
        assert_eq!(json["harness"], "core");
    }
}
