//! `async_contention`: the async-strategies study as a live scenario. Many SQLite databases,
//! each with one slow writer and several readers, all on one tokio runtime with few worker
//! threads; a canary task that only sleeps shows when the runtime's threads are starved.
//! One bench per dispatch strategy and per crate as it ships (tokio-rusqlite, r2d2_sqlite,
//! sql-middleware, async-sqlite in its own harness); each runs for `duration` seconds and streams a window of
//! reads/s, read latency, write completion and the canary's health about once a second.

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;
#[cfg(feature = "middleware")]
mod reach;
pub mod schema;

use std::sync::LazyLock;

use crate::catalog::{BenchSpec, Measure, SPIN_US, Subject, Target};
use crate::knobs::KnobSpec;

pub const NAME: &str = "async_contention";

pub const DATABASES: KnobSpec = KnobSpec::count(
    "databases",
    Some("BENCH_DATABASES"),
    50,
    1,
    1000,
    "databases, each with one writer and `readers` readers",
);
pub const READERS: KnobSpec = KnobSpec::count(
    "readers",
    Some("BENCH_READERS"),
    3,
    1,
    64,
    "reader tasks per database",
);
pub const WRITE_DELAY_MS: KnobSpec = KnobSpec::count(
    "write_delay_ms",
    Some("BENCH_WRITE_DELAY_MS"),
    1000,
    0,
    600_000,
    "writer=sleep: ms each writer holds its connection before it writes (the slow sync)",
);
pub const WORKERS: KnobSpec = KnobSpec::count(
    "workers",
    Some("BENCH_WORKERS"),
    2,
    1,
    256,
    "worker threads of the measured tokio runtime",
);
pub const DURATION: KnobSpec = KnobSpec::count(
    "duration",
    Some("BENCH_DURATION"),
    10,
    1,
    3600,
    "seconds each strategy runs",
);
pub use crate::catalog::STORAGE;
pub const WRITER: KnobSpec = KnobSpec::choice(
    "writer",
    Some("BENCH_WRITER"),
    "sleep",
    &["sleep", "write"],
    "sleep: hold the connection for write_delay_ms, then write; write: a real transaction of write_rows rows instead of the sleep",
);
pub const WRITE_ROWS: KnobSpec = KnobSpec::count(
    "write_rows",
    Some("BENCH_WRITE_ROWS"),
    5000,
    1,
    10_000_000,
    "writer=write: rows of each writer's large transaction",
);

/// The query each reader repeats: recent blocks joined with their transactions.
pub const READ: &str = "SELECT b.id, b.hash, b.timestamp, t.from_account, t.to_account, t.amount \
     FROM blocks b JOIN transactions t ON t.block_id = b.id ORDER BY b.timestamp DESC LIMIT 50";
/// Rows every read returns (the seed holds 500 joined rows).
pub const READ_ROWS: u64 = 50;

const OP: &str = "one read (the JOIN of recent blocks, LIMIT 50, on a cached statement, then 1 ms pause) by every reader, one write (block + 3 transactions) by every writer";

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        Target::new(
            NAME,
            "many databases, a slow writer and several readers each, on few runtime threads; reads/s, latency, writes kept, starvation",
            0x5EED_4004,
            Measure::Scenario,
            "spawn_blocking",
        )
        .knobs(&[
            DATABASES,
            READERS,
            WRITE_DELAY_MS,
            WORKERS,
            DURATION,
            STORAGE,
            WRITER,
            WRITE_ROWS,
            SPIN_US,
            crate::catalog::POOL,
        ])
        .knobs(&crate::settings::KNOBS)
        .per_strategy("", |name, s| {
            BenchSpec::whole(name, Subject::Middleware(s), OP, s.how(NAME))
        })
        .per_crate("", |name, c, serve| {
            BenchSpec::whole(name, Subject::Crate(c.id), OP, serve.about(c))
        })
        // The study's quick mode: 1 and 10 databases at 100 and 1000 ms.
        .quick(&[("databases", "1,10"), ("write_delay_ms", "100,1000")])
    });
    &SPEC
}
