//! The subject table's crates: one row each, in catalog order.

use std::sync::LazyLock;

use super::serves::*;
use super::{CrateDesc, LOOKUP_PREPARED, More, Serve, micro, serve, serve_as_about};
use crate::catalog::subject::{Harness, Shipped};
use crate::measure::trace::Phase;

/// bulk_insert's words for the crates that run the rusqlite transaction where they run a query.
const BULK_IN_PLACE: &str = "the rusqlite transaction of rows, run where the crate runs queries (its call closure, or a pooled connection in spawn_blocking / block_in_place)";

/// Every crate, in catalog order.
pub static CRATES: [CrateDesc; 8] = [
    CrateDesc {
        id: Shipped::TokioRusqlite,
        name: "tokio-rusqlite",
        krate: "tokio-rusqlite",
        engine: None,
        harness: Harness::Core,
        about: "tokio-rusqlite: a background thread per connection; each query a `call` closure (prepare_cached, query_row) sent to it",
        pool: None,
        serves: &[
            Serve {
                workload: LOOKUP,
                op: Some(
                    "a call to the next of `concurrency` connections (round robin): prepare_cached, query_row, decode, on its thread",
                ),
                how: None,
                more: &[micro(
                    "tokio-rusqlite/dispatch",
                    Phase::Dispatch,
                    "one call with an empty closure: the hop to the connection's thread and back",
                )],
                hidden: &[
                    (
                        Phase::Checkout,
                        "no pool: a checkout clones a connection handle, nothing waits",
                    ),
                    (
                        Phase::Prepare,
                        "prepare, bind, step and decode run inside the call closure as plain rusqlite: the rusqlite micro-benches (prepare, marshalling) measure them",
                    ),
                ],
            },
            Serve {
                hidden: &[(
                    Phase::Checkout,
                    "no pool: a task takes the next connection handle (round robin), nothing waits",
                )],
                ..serve_as_about(MULTITHREAD)
            },
            serve(BULK, BULK_IN_PLACE),
            serve(
                CONTENTION,
                "tokio-rusqlite: a background thread per connection, each call's closure sent to it (the study's third approach, as the crate ships)",
            ),
            serve(
                CRUD,
                "tokio-rusqlite on one connection: each statement (from its cache) one call to its thread",
            ),
            serve(
                KEY_VALUE,
                "tokio-rusqlite, one connection (and thread) per task: each statement (from its cache) one call",
            ),
            serve(
                SCRIPT,
                "tokio-rusqlite as it ships: each client a task with its own Connection (a thread of its own), one call per statement",
            ),
        ],
    },
    CrateDesc {
        id: Shipped::AsyncSqlite,
        name: "async-sqlite",
        krate: "async-sqlite",
        engine: None,
        harness: Harness::AsyncSqlite,
        about: "async-sqlite's Pool: a background thread per connection, each call a closure on the next one (round robin); rusqlite 0.41 with its statement cache",
        pool: None,
        serves: &[
            Serve {
                workload: LOOKUP,
                op: Some(
                    "pool.conn on the next of `concurrency` connections (round robin): prepare_cached, query_row, decode, on its thread",
                ),
                how: None,
                more: &[micro(
                    "async-sqlite/dispatch",
                    Phase::Dispatch,
                    "one pool.conn with an empty closure: the hop to a connection's thread and back",
                )],
                hidden: &[
                    (
                        Phase::Checkout,
                        "its Pool has no checkout: each call goes to the next connection's thread (round robin)",
                    ),
                    (
                        Phase::Prepare,
                        "prepare, bind, step and decode run inside the conn closure as plain rusqlite (0.41, async-sqlite's): the rusqlite micro-benches measure them on 0.40",
                    ),
                ],
            },
            Serve {
                hidden: &[(
                    Phase::Checkout,
                    "async-sqlite's Pool has no checkout: each call goes to the next connection's thread (round robin)",
                )],
                ..serve_as_about(MULTITHREAD)
            },
            serve(BULK, BULK_IN_PLACE),
            serve(
                CONTENTION,
                "async-sqlite: a Client (a connection and its thread) held per task, each call through conn (its own harness)",
            ),
            serve(
                CRUD,
                "an async-sqlite Client: each statement (from its cache) one conn call to its thread",
            ),
            serve(
                KEY_VALUE,
                "async-sqlite, one Client (and thread) per task: each statement (from its cache) one conn call",
            ),
            serve(
                SCRIPT,
                "async-sqlite (its own harness): each client a task with its own Client (a connection on a thread of its own); each statement (from its cache) one conn call",
            ),
        ],
    },
    CrateDesc {
        id: Shipped::R2d2SpawnBlocking,
        name: "r2d2_sqlite/spawn_blocking",
        krate: "r2d2_sqlite",
        engine: None,
        harness: Harness::Core,
        about: "r2d2 pool of rusqlite connections; checkout and query in one spawn_blocking closure",
        pool: None,
        serves: &[
            Serve {
                workload: LOOKUP,
                op: Some(
                    "spawn_blocking: pool.get() (every lookups_per_checkout lookups), prepare_cached, query_row, decode",
                ),
                how: None,
                more: &[],
                hidden: &[
                    (
                        Phase::Dispatch,
                        "the hop is tokio's spawn_blocking, measured by interact/spawn_blocking; checkout and query share it",
                    ),
                    (
                        Phase::Prepare,
                        "inside the closure it is plain rusqlite: the rusqlite micro-benches measure prepare and marshalling",
                    ),
                ],
            },
            serve_as_about(MULTITHREAD),
            serve(BULK, BULK_IN_PLACE),
            serve(
                CONTENTION,
                "r2d2_sqlite: a pooled connection held per task, each call in spawn_blocking",
            ),
            serve(
                CRUD,
                "an r2d2_sqlite connection: each statement (from its cache) one spawn_blocking",
            ),
            serve(
                KEY_VALUE,
                "r2d2_sqlite, one pooled connection held per task: each statement (from its cache) one spawn_blocking",
            ),
            serve(
                SCRIPT,
                "r2d2 + r2d2_sqlite, a pool of `clients` connections: each client a task; a checkout per transaction and each statement (from its cache) one spawn_blocking",
            ),
        ],
    },
    CrateDesc {
        id: Shipped::R2d2BlockInPlace,
        name: "r2d2_sqlite/block_in_place",
        krate: "r2d2_sqlite",
        engine: None,
        harness: Harness::Core,
        about: "r2d2 pool of rusqlite connections; checkout and query in block_in_place on the runtime thread",
        pool: Some("r2d2_sqlite"),
        serves: &[
            Serve {
                workload: LOOKUP,
                op: Some(
                    "block_in_place: pool.get() (every lookups_per_checkout lookups), prepare_cached, query_row, decode",
                ),
                how: None,
                more: &[micro(
                    "r2d2_sqlite/pool_acquire",
                    Phase::Checkout,
                    "pool.get() and drop in block_in_place",
                )],
                hidden: &[],
            },
            serve_as_about(MULTITHREAD),
            serve(BULK, BULK_IN_PLACE),
            serve(
                CONTENTION,
                "r2d2_sqlite: a pooled connection held per task, each call in block_in_place",
            ),
            serve(
                CRUD,
                "an r2d2_sqlite connection: each statement (from its cache) in block_in_place",
            ),
            serve(
                KEY_VALUE,
                "r2d2_sqlite, one pooled connection held per task: each statement (from its cache) in block_in_place",
            ),
            serve(
                SCRIPT,
                "r2d2 + r2d2_sqlite, a pool of `clients` connections: each client a task; a checkout per transaction and each statement (from its cache) in block_in_place",
            ),
        ],
    },
    CrateDesc {
        id: Shipped::Diesel,
        name: "diesel",
        krate: "diesel",
        engine: None,
        harness: Harness::Core,
        about: "diesel's query DSL (statement cached by diesel) on its r2d2 pool, in a spawn_blocking closure",
        pool: Some("diesel"),
        // Not async_contention nor script: diesel's query DSL takes no rusqlite closure.
        serves: &[
            Serve {
                workload: LOOKUP,
                op: Some(
                    "spawn_blocking: pool.get() (every lookups_per_checkout lookups), test.find(id).get_result, decode",
                ),
                how: None,
                more: &[micro(
                    "diesel/pool_acquire",
                    Phase::Checkout,
                    "pool.get() and drop in spawn_blocking",
                )],
                hidden: &[
                    (
                        Phase::Prepare,
                        "diesel prepares and caches the statement inside get_result: its public API has no prepare step",
                    ),
                    (Phase::Bind, "the id is bound inside get_result"),
                    (
                        Phase::ExecuteMarshal,
                        "get_result steps the statement and builds the Queryable struct in one call: no public seam between execute and decode",
                    ),
                    (
                        Phase::Dispatch,
                        "the hop is tokio's spawn_blocking, measured by interact/spawn_blocking",
                    ),
                ],
            },
            serve_as_about(MULTITHREAD),
            serve(
                BULK,
                "diesel: insert_into(..).values(row).execute per row (statement cached by diesel) in one transaction, in spawn_blocking",
            ),
            serve(
                CRUD,
                "diesel on one connection of its r2d2 pool: each operation in its query DSL (statements cached by diesel), BEGIN and COMMIT through its transaction manager, each a spawn_blocking",
            ),
            serve(
                KEY_VALUE,
                "diesel, one connection of its r2d2 pool held per task: each statement in its query DSL (the upsert as on_conflict().do_update(), the TTL as a filter) one spawn_blocking",
            ),
        ],
    },
    CrateDesc {
        id: Shipped::SqlMiddleware,
        name: "sql-middleware",
        krate: "sql-middleware",
        engine: None,
        harness: Harness::Core,
        about: "sql-middleware's SQLite pool (bb8, a worker thread per connection) and query builder, as shipped",
        pool: Some("sql-middleware"),
        serves: &[
            Serve {
                workload: LOOKUP,
                op: Some(
                    "get_connection (every lookups_per_checkout lookups), query(..).params(..).select() (cached statement, its worker thread), decode",
                ),
                how: None,
                more: &[
                    More {
                        name: "sql-middleware/prepared",
                        phase: None,
                        op: "get_connection and prepare_sqlite_statement (every lookups_per_checkout lookups), then per lookup select().params(..).all() with one RowValues buffer reused (its worker thread), decode",
                        about: "sql-middleware's own lookup path, as its bench makes it: a statement prepared once per checkout (the crate keeps its text and runs it from the connection's statement cache), its parameters in a buffer reused",
                        variant: LOOKUP_PREPARED,
                    },
                    micro(
                        "sql-middleware/prepare",
                        Phase::Prepare,
                        "prepare_sqlite_statement on a held connection and drop (statement cache on, as shipped)",
                    ),
                    micro(
                        "sql-middleware/marshalling",
                        Phase::ExecuteMarshal,
                        "build_result_set on a cached rusqlite statement with the parameters converted before the clock: bind, step, the crate's ResultSet built",
                    ),
                    micro(
                        "sql-middleware/pool_acquire",
                        Phase::Checkout,
                        "get_connection() and drop (bb8 checks the connection on checkout, as shipped)",
                    ),
                    micro(
                        "sql-middleware/dispatch",
                        Phase::Dispatch,
                        "with_blocking_sqlite with an empty closure: the hop to the connection's worker thread and back",
                    ),
                    micro(
                        "sql-middleware/decode",
                        Phase::Decode,
                        "decode one row of its ResultSet (RowValues) into BenchRow",
                    ),
                    micro(
                        "sql-middleware/param_convert",
                        Phase::Bind,
                        "convert_sql_params of the caller's RowValues into rusqlite parameters",
                    ),
                ],
                hidden: &[],
            },
            serve_as_about(MULTITHREAD),
            serve(
                BULK,
                "sql-middleware: begin_transaction, one prepared insert run per row with RowValues (a hop to its worker each), commit",
            ),
            serve(
                CONTENTION,
                "sql-middleware: a connection of its bb8 pool held per task, each call through with_blocking_sqlite to its worker (at most 10 connections a database)",
            ),
            serve(
                CRUD,
                "sql-middleware on one connection of its pool: its query builder with RowValues (statement cache on), each statement a hop to its worker",
            ),
            serve(
                KEY_VALUE,
                "sql-middleware, one connection of its pool held per task: its query builder with RowValues (statement cache on), each statement a hop to its worker",
            ),
            serve(
                SCRIPT,
                "sql-middleware as shipped (its SQLite pool of 10): each client a task; a checkout per transaction, each statement through its query builder (select or dml, its statement cache on)",
            ),
        ],
    },
    CrateDesc {
        id: Shipped::SqlMiddlewareTurso,
        name: "sql-middleware/turso",
        krate: "sql-middleware",
        engine: Some("turso"),
        harness: Harness::SqlMiddlewareTurso,
        about: "sql-middleware's turso feature: its bb8 pool over turso 0.6 connections (checked on checkout) and query builder on the calling task, statement cache on; mimalloc as the process allocator, as turso 0.6's default features make it",
        pool: Some("sql-middleware/turso"),
        serves: &[
            Serve {
                workload: LOOKUP,
                op: Some(
                    "get_connection (every lookups_per_checkout lookups), query(..).params(..).select() on the calling task (statement cache on), decode",
                ),
                how: None,
                more: &[
                    micro(
                        "sql-middleware/turso/pool_acquire",
                        Phase::Checkout,
                        "get_connection() and drop (bb8 checks the turso connection on checkout, as shipped)",
                    ),
                    micro(
                        "sql-middleware/turso/decode",
                        Phase::Decode,
                        "decode one row of its ResultSet (RowValues) into BenchRow",
                    ),
                    micro(
                        "sql-middleware/turso/param_convert",
                        Phase::Bind,
                        "convert_sql_params of the caller's RowValues into turso parameters",
                    ),
                ],
                hidden: &[
                    (
                        Phase::Dispatch,
                        "turso runs the query on the calling task: there is no hop to measure",
                    ),
                    (
                        Phase::Prepare,
                        "select() finds the statement in the connection's cache inside the query",
                    ),
                    (
                        Phase::ExecuteMarshal,
                        "the result set is built inside select(); its builder needs the crate's own rows",
                    ),
                ],
            },
            serve_as_about(MULTITHREAD),
            serve(
                BULK,
                "sql-middleware's turso feature: begin_transaction, one prepared insert run per row with RowValues, commit, on the calling task",
            ),
            serve(
                CRUD,
                "sql-middleware's turso feature on one connection of its pool: its query builder with RowValues (statement cache on for queries), on the calling task; BEGIN and COMMIT as its execute_batch",
            ),
            serve(
                KEY_VALUE,
                "sql-middleware's turso feature, one connection of its pool held per task: its query builder with RowValues, on the calling task",
            ),
            serve(
                SCRIPT,
                "sql-middleware on turso (its own harness: turso 0.6 and mimalloc as the allocator, as it ships): each client a task; its pool of 10, a checkout per transaction, each statement through its query builder",
            ),
        ],
    },
    CrateDesc {
        id: Shipped::SqlMiddlewarePostgres,
        name: "sql-middleware/postgres",
        krate: "sql-middleware",
        engine: None,
        harness: Harness::Core,
        about: "sql-middleware's postgres feature (bb8 over tokio-postgres) against the PostgreSQL server --postgres-url names",
        pool: None,
        serves: &[
            serve(
                BULK,
                "sql-middleware's postgres feature: begin_transaction, one prepared insert run per row with RowValues, commit, on the PostgreSQL server (needs --postgres-url or BENCHSCOPE_POSTGRES_URL; its own table, dropped at the end)",
            ),
            serve(
                CRUD,
                "sql-middleware's postgres feature on one connection of its pool: outside a transaction its query builder (which runs each statement in a transaction of its own), inside one its Tx (each statement prepared once per transaction); needs --postgres-url or BENCHSCOPE_POSTGRES_URL",
            ),
        ],
    },
];

/// The crates that serve `workload`, in catalog order, with how each does.
pub fn crates_serving(
    workload: &str,
) -> impl Iterator<Item = (&'static CrateDesc, &'static Serve)> {
    let workload = workload.to_string();
    CRATES
        .iter()
        .filter_map(move |c| c.serving(&workload).map(|s| (c, s)))
}

impl Shipped {
    /// Every crate, on SQLite, turso and PostgreSQL, in catalog order.
    pub fn every() -> impl Iterator<Item = Shipped> {
        CRATES.iter().map(|c| c.id)
    }

    /// Everything the catalog says of it: its row of the subject table.
    pub fn desc(self) -> &'static CrateDesc {
        CRATES
            .iter()
            .find(|d| d.id == self)
            .expect("every crate has a row in the subject table")
    }

    /// The bench name's stem.
    pub fn name(self) -> &'static str {
        self.desc().name
    }

    /// The crate, as named in Cargo.lock.
    pub fn krate(self) -> &'static str {
        self.desc().krate
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

    /// The crate and its exact version as this build resolved it (`tokio-rusqlite 0.8.0`),
    /// and the engine under it where the table names one (`... on turso 0.6.0`).
    pub fn label(self) -> &'static str {
        static LABELS: LazyLock<Vec<String>> = LazyLock::new(|| {
            CRATES
                .iter()
                .map(|d| {
                    let s = d.id;
                    match d.engine {
                        Some(engine) => format!(
                            "{} {} on {engine} {}",
                            s.krate(),
                            s.version(),
                            s.version_of(engine)
                        ),
                        None => format!("{} {}", s.krate(), s.version()),
                    }
                })
                .collect()
        });
        let i = CRATES
            .iter()
            .position(|d| d.id == self)
            .expect("every crate has a row in the subject table");
        &LABELS[i]
    }

    /// How it reaches the connection, for descriptions.
    pub fn about(self) -> &'static str {
        self.desc().about
    }

    /// The harness that links the crate.
    pub fn harness(self) -> Harness {
        self.desc().harness
    }
}
