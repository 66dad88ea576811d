//! `single_row_lookup`: one row by primary key, decoded into `BenchRow`, over shuffled ids;
//! raw rusqlite, the middleware path per dispatch strategy, sqlx, turso, and one micro-bench
//! per phase of each path.

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;

use std::sync::LazyLock;

use crate::catalog::{
    BenchSpec, CONCURRENCY, LOOKUPS, LOOKUPS_PER_CHECKOUT, Measure, ROWS, SPIN_US,
    SQLX_STATEMENT_CACHE, Shipped, Subject, TRACE_EVERY, Target,
};
use crate::measure::trace::Phase;

pub const NAME: &str = "single_row_lookup";
/// The case (`variant`) of `sql-middleware/prepared`: the crate's prepared-statement path
/// beside its query builder.
pub const PREPARED: u16 = 1;

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
                via(s),
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
        .bench(BenchSpec::whole(
            "tokio-rusqlite",
            Crate(Shipped::TokioRusqlite),
            "a call to the next of `concurrency` connections (round robin): prepare_cached, query_row, decode, on its thread",
            Shipped::TokioRusqlite.about(),
        ))
        .bench(BenchSpec::micro(
            "tokio-rusqlite/dispatch",
            Crate(Shipped::TokioRusqlite),
            Dispatch,
            "one call with an empty closure: the hop to the connection's thread and back",
        ))
        .bench(BenchSpec::whole(
            "async-sqlite",
            Crate(Shipped::AsyncSqlite),
            "pool.conn on the next of `concurrency` connections (round robin): prepare_cached, query_row, decode, on its thread",
            Shipped::AsyncSqlite.about(),
        ))
        .bench(BenchSpec::micro(
            "async-sqlite/dispatch",
            Crate(Shipped::AsyncSqlite),
            Dispatch,
            "one pool.conn with an empty closure: the hop to a connection's thread and back",
        ))
        .bench(BenchSpec::whole(
            "r2d2_sqlite/spawn_blocking",
            Crate(Shipped::R2d2SpawnBlocking),
            "spawn_blocking: pool.get() (every lookups_per_checkout lookups), prepare_cached, query_row, decode",
            Shipped::R2d2SpawnBlocking.about(),
        ))
        .bench(BenchSpec::whole(
            "r2d2_sqlite/block_in_place",
            Crate(Shipped::R2d2BlockInPlace),
            "block_in_place: pool.get() (every lookups_per_checkout lookups), prepare_cached, query_row, decode",
            Shipped::R2d2BlockInPlace.about(),
        ))
        .bench(BenchSpec::micro(
            "r2d2_sqlite/pool_acquire",
            Crate(Shipped::R2d2BlockInPlace),
            Checkout,
            "pool.get() and drop in block_in_place",
        ))
        .bench(BenchSpec::whole(
            "diesel",
            Crate(Shipped::Diesel),
            "spawn_blocking: pool.get() (every lookups_per_checkout lookups), test.find(id).get_result, decode",
            Shipped::Diesel.about(),
        ))
        .bench(BenchSpec::micro(
            "diesel/pool_acquire",
            Crate(Shipped::Diesel),
            Checkout,
            "pool.get() and drop in spawn_blocking",
        ))
        .bench(BenchSpec::whole(
            "sql-middleware",
            Crate(Shipped::SqlMiddleware),
            "get_connection (every lookups_per_checkout lookups), query(..).params(..).select() (cached statement, its worker thread), decode",
            Shipped::SqlMiddleware.about(),
        ))
        .bench(
            BenchSpec::whole(
                "sql-middleware/prepared",
                Crate(Shipped::SqlMiddleware),
                "get_connection and prepare_sqlite_statement (every lookups_per_checkout lookups), then per lookup select().params(..).all() with one RowValues buffer reused (its worker thread), decode",
                "sql-middleware's own lookup path, as its bench makes it: a statement prepared once per checkout (the crate keeps its text and runs it from the connection's statement cache), its parameters in a buffer reused",
            )
            .variant(PREPARED),
        )
        .bench(BenchSpec::micro(
            "sql-middleware/prepare",
            Crate(Shipped::SqlMiddleware),
            Prepare,
            "prepare_sqlite_statement on a held connection and drop (statement cache on, as shipped)",
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/marshalling",
            Crate(Shipped::SqlMiddleware),
            ExecuteMarshal,
            "build_result_set on a cached rusqlite statement with the parameters converted before the clock: bind, step, the crate's ResultSet built",
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/pool_acquire",
            Crate(Shipped::SqlMiddleware),
            Checkout,
            "get_connection() and drop (bb8 checks the connection on checkout, as shipped)",
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/dispatch",
            Crate(Shipped::SqlMiddleware),
            Dispatch,
            "with_blocking_sqlite with an empty closure: the hop to the connection's worker thread and back",
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/decode",
            Crate(Shipped::SqlMiddleware),
            Decode,
            "decode one row of its ResultSet (RowValues) into BenchRow",
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/param_convert",
            Crate(Shipped::SqlMiddleware),
            Bind,
            "convert_sql_params of the caller's RowValues into rusqlite parameters",
        ))
        .bench(BenchSpec::whole(
            "sql-middleware/turso",
            Crate(Shipped::SqlMiddlewareTurso),
            "get_connection (every lookups_per_checkout lookups), query(..).params(..).select() on the calling task (statement cache on), decode",
            Shipped::SqlMiddlewareTurso.about(),
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/turso/pool_acquire",
            Crate(Shipped::SqlMiddlewareTurso),
            Checkout,
            "get_connection() and drop (bb8 checks the turso connection on checkout, as shipped)",
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/turso/decode",
            Crate(Shipped::SqlMiddlewareTurso),
            Decode,
            "decode one row of its ResultSet (RowValues) into BenchRow",
        ))
        .bench(BenchSpec::micro(
            "sql-middleware/turso/param_convert",
            Crate(Shipped::SqlMiddlewareTurso),
            Bind,
            "convert_sql_params of the caller's RowValues into turso parameters",
        ))
        .hidden("tokio-rusqlite", Checkout, "no pool: a checkout clones a connection handle, nothing waits")
        .hidden("tokio-rusqlite", Prepare, "prepare, bind, step and decode run inside the call closure as plain rusqlite: the rusqlite micro-benches (prepare, marshalling) measure them")
        .hidden("async-sqlite", Checkout, "its Pool has no checkout: each call goes to the next connection's thread (round robin)")
        .hidden("async-sqlite", Prepare, "prepare, bind, step and decode run inside the conn closure as plain rusqlite (0.41, async-sqlite's): the rusqlite micro-benches measure them on 0.40")
        .hidden("r2d2_sqlite/spawn_blocking", Dispatch, "the hop is tokio's spawn_blocking, measured by interact/spawn_blocking; checkout and query share it")
        .hidden("r2d2_sqlite/spawn_blocking", Prepare, "inside the closure it is plain rusqlite: the rusqlite micro-benches measure prepare and marshalling")
        .hidden("diesel", Prepare, "diesel prepares and caches the statement inside get_result: its public API has no prepare step")
        .hidden("diesel", Bind, "the id is bound inside get_result")
        .hidden("diesel", ExecuteMarshal, "get_result steps the statement and builds the Queryable struct in one call: no public seam between execute and decode")
        .hidden("diesel", Dispatch, "the hop is tokio's spawn_blocking, measured by interact/spawn_blocking")
        .hidden("sql-middleware/turso", Dispatch, "turso runs the query on the calling task: there is no hop to measure")
        .hidden("sql-middleware/turso", Prepare, "select() finds the statement in the connection's cache inside the query")
        .hidden("sql-middleware/turso", ExecuteMarshal, "the result set is built inside select(); its builder needs the crate's own rows")
    });
    &SPEC
}

/// How the middleware path reaches the connection with a strategy, for descriptions.
fn via(s: crate::catalog::Strategy) -> &'static str {
    use crate::catalog::Strategy::*;
    match s {
        Inline => "middleware path, query run on the runtime thread",
        SpawnBlocking => "middleware path through spawn_blocking",
        Interact => "middleware path through deadpool-sqlite interact",
        Worker => "middleware path through a dedicated worker thread",
        Spin => "middleware path through a spin-then-park worker thread",
        BlockInPlace => "middleware path through block_in_place on the runtime thread",
        WaitAside => "middleware path on the runtime thread, waits in block_in_place",
    }
}
