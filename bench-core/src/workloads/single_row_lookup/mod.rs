//! `single_row_lookup`: one row by primary key, decoded into `BenchRow`, over shuffled ids;
//! raw rusqlite, the middleware path per dispatch strategy, sqlx, turso, and one micro-bench
//! per phase of each path.

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;

use std::sync::LazyLock;

use crate::catalog::{
    BenchSpec, CONCURRENCY, LOOKUPS, LOOKUPS_PER_CHECKOUT, Measure, ROWS, SPIN_US,
    SQLX_STATEMENT_CACHE, Subject, TRACE_EVERY, Target,
};
use crate::measure::trace::Phase;

pub const NAME: &str = "single_row_lookup";
/// The case (`variant`) of `sql-middleware/prepared`: the crate's prepared-statement path
/// beside its query builder.
pub const PREPARED: u16 = crate::catalog::table::LOOKUP_PREPARED;

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        use Phase::*;
        use Subject::*;
        Target::new(
            NAME,
            "SELECT one row by primary key, decoded into a struct; shuffled ids",
            0x5EED_1001,
            Measure::PerOp,
            "rusqlite",
        )
        .knobs(&[
            ROWS,
            LOOKUPS,
            CONCURRENCY,
            LOOKUPS_PER_CHECKOUT,
            SPIN_US,
            TRACE_EVERY,
            SQLX_STATEMENT_CACHE,
            crate::catalog::POOL,
            crate::catalog::VALUES,
        ])
        // sql-middleware's lookup bench: BENCH_LOOKUPS (else BENCH_ROWS, else 1000) rows and
        // lookups, every lookup of an iteration on the one connection it checked out.
        .suite(&[
            ("rows", "1000"),
            ("lookups", "1000"),
            ("lookups_per_checkout", "1000"),
        ])
        .knobs(&crate::settings::KNOBS)
        .bench(BenchSpec::whole(
            "rusqlite",
            Rusqlite,
            "one lookup on the statement prepared once: bind, step, decode",
            "raw rusqlite on one connection: the baseline",
        ))
        .bench(BenchSpec::whole(
            "sqlite3_c",
            SqliteC,
            "one lookup on the statement prepared once, through SQLite's C API: bind, step, column reads, reset",
            "SQLite's C API on rusqlite's connection: the floor under rusqlite",
        ))
        .per_strategy("middleware/", |name, s| {
            BenchSpec::whole(
                name,
                Middleware(s),
                "checkout (every lookups_per_checkout lookups), prepare_cached, convert and bind, step and build the result set, decode",
                s.how(NAME),
            )
        })
        .bench(BenchSpec::micro(
            "pool_acquire",
            Pool(crate::catalog::Pool::Deadpool),
            Checkout,
            "pool.get() and drop of a deadpool-sqlite connection",
        ))
        .bench(BenchSpec::micro(
            "pool_acquire/workers",
            Pool(crate::catalog::Pool::Workers),
            Checkout,
            "pool.get() and drop of a worker-thread connection",
        ))
        .bench(BenchSpec::micro(
            "pool_acquire/slots",
            Pool(crate::catalog::Pool::Slots),
            Checkout,
            "take and free the lowest free slot of the lock-free pool",
        ))
        .bench(BenchSpec::micro(
            "prepare",
            Rusqlite,
            Prepare,
            "prepare_cached of the lookup statement (a cache hit), as the middleware path does per lookup",
        ))
        .per_strategy("interact/", |name, s| {
            BenchSpec::micro(
                name,
                Middleware(s),
                Dispatch,
                "one round trip to the connection's thread running an empty closure",
            )
            .about("the dispatch hop alone, no SQL")
        })
        .bench(BenchSpec::micro(
            "marshalling",
            Rusqlite,
            ExecuteMarshal,
            "bind the id to the statement prepared once, step, build the generic result set",
        ))
        .bench(BenchSpec::micro(
            "decode",
            MiddlewareValues,
            Decode,
            "decode one result-set row into BenchRow",
        ))
        .bench(BenchSpec::micro(
            "param_convert",
            MiddlewareValues,
            Bind,
            "convert the caller's value into a driver parameter (binding it is part of execute, as for sqlx and turso)",
        ))
        .bench(BenchSpec::whole(
            "sqlx",
            SqlxSqlite,
            "pool acquire (every lookups_per_checkout lookups), fetch_one of the statement prepared once (sqlx finds it in its cache, binds and hops to its worker), decode",
            "sqlx 0.9 (its own worker thread per connection; no dispatch hop visible to callers)",
        ))
        .bench(BenchSpec::micro(
            "sqlx/pool_acquire",
            SqlxSqlite,
            Checkout,
            "pool.acquire() and drop",
        ))
        .bench(BenchSpec::micro(
            "sqlx/prepare",
            SqlxSqlite,
            Prepare,
            "prepare on an acquired connection (statement cache hit)",
        ))
        .bench(BenchSpec::micro(
            "sqlx/marshalling",
            SqlxSqlite,
            ExecuteMarshal,
            "fetch_one without decoding (includes sqlx's hop to its worker)",
        ))
        .bench(BenchSpec::micro(
            "sqlx/decode",
            SqlxSqlite,
            Decode,
            "decode one fetched SqliteRow into BenchRow",
        ))
        .bench(BenchSpec::micro(
            "sqlx/param_convert",
            SqlxSqlite,
            Bind,
            "build the query and bind the id (sqlx holds the argument; the statement is bound inside fetch)",
        ))
        .bench(BenchSpec::whole(
            "turso_raw",
            Turso,
            "one lookup on the statement prepared once: query with the id (binds), next row, decode",
            "turso (Rust rewrite of SQLite) on the same file; runs on the caller's task",
        ))
        .bench(BenchSpec::whole(
            "middleware/turso",
            TursoMiddleware,
            "connect (every lookups_per_checkout lookups; turso has no pool), prepare_cached, convert, query and build the result set, decode",
            "middleware path over turso: connection per checkout, no dispatch hop",
        ))
        .bench(BenchSpec::micro(
            "turso/pool_acquire",
            Turso,
            Checkout,
            "Database::connect() and drop (turso has no pool)",
        ))
        .bench(BenchSpec::micro(
            "turso/prepare",
            Turso,
            Prepare,
            "prepare_cached of the lookup statement (cache hit)",
        ))
        .bench(BenchSpec::micro(
            "turso/marshalling",
            Turso,
            ExecuteMarshal,
            "query the statement prepared once with the id and build the result set",
        ))
        .bench(BenchSpec::micro(
            "turso/decode",
            Turso,
            Decode,
            "decode one turso Row into BenchRow",
        ))
        .bench(BenchSpec::micro(
            "turso/param_convert",
            Turso,
            Bind,
            "convert the caller's value into turso parameters",
        ))
        .per_crate("", |name, c, serve| {
            BenchSpec::whole(
                name,
                Crate(c.id),
                serve.op.expect("a crate's lookup says what its operation is"),
                serve.about(c),
            )
        })
    });
    &SPEC
}
