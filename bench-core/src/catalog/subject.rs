//! What a bench measures: a crate as it ships, the middleware on a dispatch strategy and a
//! pool, turso, raw rusqlite; the strategies and pools by name, with what each is.

use std::str::FromStr;

use serde::Serialize;

use crate::error::CatalogError;

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
use crate::knobs::KnobSpec;

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
    /// The middleware's own statements on the runtime thread, like `Inline`, except where
    /// they would wait: SQLite's busy wait for a lock, a blocking pool's checkout and a taken
    /// connection lock wait inside `tokio::task::block_in_place`. A closure the caller hands
    /// in, which may block where no busy handler sees it, runs as `BlockInPlace` runs it. A
    /// long statement still holds the runtime thread for its own work.
    WaitAside,
}

impl Strategy {
    pub const ALL: [Strategy; 7] = [
        Strategy::Inline,
        Strategy::SpawnBlocking,
        Strategy::Interact,
        Strategy::Worker,
        Strategy::Spin,
        Strategy::BlockInPlace,
        Strategy::WaitAside,
    ];
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
    /// deadpool-sqlite (inline, spawn_blocking, interact, block_in_place, wait_aside).
    Deadpool,
    /// Connections owned by dedicated threads, pooled with deadpool (worker, spin).
    Workers,
    /// r2d2 with r2d2_sqlite: a blocking pool with no recycle hop (inline, spawn_blocking,
    /// block_in_place, wait_aside).
    R2d2,
    /// bb8 (the async pool sql-middleware ships on) over rusqlite connections: checks a
    /// connection on checkout, as bb8 does by default (inline, spawn_blocking, block_in_place, wait_aside).
    Bb8,
    /// No pool: `size` connections opened up front, a checkout takes the next one round robin
    /// and locks it while a query runs (inline, spawn_blocking, block_in_place, wait_aside).
    None,
    /// `size` connections opened up front, a slot each with a taken flag: a checkout takes the
    /// lowest free slot (an atomic swap), its drop frees it, a task finding none free waits on
    /// a notification (inline, spawn_blocking, block_in_place, wait_aside).
    Slots,
    /// A connection per thread that uses the pool, opened on its first use, with the lookup's
    /// statement prepared once and held beside it (`values=prepared`); no checkout (inline,
    /// spawn_blocking, block_in_place, wait_aside).
    Thread,
}

impl Pool {
    pub fn label(self) -> &'static str {
        match self {
            Pool::Deadpool => "deadpool-sqlite",
            Pool::Workers => "rusqlite worker pool",
            Pool::R2d2 => "r2d2_sqlite",
            Pool::Bb8 => "bb8",
            Pool::None => "no pool",
            Pool::Slots => "lock-free slots",
            Pool::Thread => "a connection per thread",
        }
    }

    /// Every pool, in the order the `pool` knob lists them.
    pub const ALL: [Pool; 7] = [
        Pool::Deadpool,
        Pool::R2d2,
        Pool::Bb8,
        Pool::None,
        Pool::Slots,
        Pool::Thread,
        Pool::Workers,
    ];

    /// A strategy that checks out of this pool.
    pub fn strategy(self) -> Strategy {
        match self {
            Pool::Deadpool => Strategy::Interact,
            Pool::Workers => Strategy::Worker,
            Pool::R2d2 | Pool::Bb8 | Pool::None | Pool::Slots | Pool::Thread => {
                Strategy::BlockInPlace
            }
        }
    }

    /// Whether `s` dispatches on this pool: interact is deadpool-sqlite's own, worker and spin
    /// are the worker pool's threads, the others take any pool's connection.
    pub fn runs(self, s: Strategy) -> bool {
        match self {
            Pool::Workers => s.uses_workers(),
            Pool::Deadpool => !s.uses_workers(),
            Pool::R2d2 | Pool::Bb8 | Pool::None | Pool::Slots | Pool::Thread => {
                !s.uses_workers() && s != Strategy::Interact
            }
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
            "slots" => Pool::Slots,
            "thread" => Pool::Thread,
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
    &[
        "auto",
        "deadpool-sqlite",
        "r2d2",
        "bb8",
        "none",
        "slots",
        "thread",
        "workers",
    ],
    "the pool under the middleware path: auto takes each strategy's own (deadpool-sqlite for inline, spawn_blocking, interact, block_in_place and wait_aside; the worker pool for worker and spin); r2d2 (no recycle hop), bb8 (checks a connection on checkout: is it out of any transaction), none (connections opened up front, taken round robin), slots (connections opened up front, the lowest free one taken, no lock) and thread (a connection per thread that uses it, nothing to check out; the only pool that can hold a prepared statement, see values) take inline, spawn_blocking, block_in_place and wait_aside",
);

/// The middleware path's value layer, the third axis beside the strategy and the pool.
pub const VALUES: KnobSpec = KnobSpec::choice(
    "values",
    Some("BENCH_VALUES"),
    "generic",
    &["generic", "typed", "prepared"],
    "the middleware path's value layer: generic (the id in a value enum, the row built into a generic result set on the connection's thread, decoded by column name after), typed (the closure binds the id and reads the row into the struct on the connection's thread, as code written against rusqlite does: no value layer; the statement from the connection's cache) or prepared (typed, on a statement prepared once per connection and held beside it; pool=thread only: a rusqlite statement cannot leave its thread, so no other pool can hold one)",
);

/// Why the middleware path with strategy `s` cannot run with the value layer the `values`
/// knob names on the pool the `pool` knob names, if it cannot.
pub fn values_mismatch(pool: &str, values: &str, s: Strategy) -> Option<String> {
    let p = Pool::chosen(pool, s);
    (values == "prepared" && p != Pool::Thread).then(|| {
        format!(
            "values=prepared holds a statement beside its connection, which only pool=thread can (a rusqlite statement cannot leave its thread; pool={pool} is {})",
            p.label()
        )
    })
}

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

    /// Whether the core runner needs bench-core's `turso` feature to run it (see
    /// [`crate::TURSO`]).
    pub fn needs_turso(self) -> bool {
        matches!(self, Subject::Turso | Subject::TursoMiddleware)
    }
}
