//! `multithread_pool_checkout`: `concurrency` tasks fan out over the shuffled ids, each on a
//! pooled connection; the whole fan-out is one sample (wall time / operations, so the median
//! reads as throughput), and every task records its operations' latencies.

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;

use std::sync::LazyLock;

use crate::catalog::{
    BenchSpec, CONCURRENCY, LOOKUPS, Measure, Pool, ROWS, SPIN_US, SQLX_STATEMENT_CACHE, Shipped,
    Strategy, Subject, Target,
};
use crate::measure::trace::Phase;

pub const NAME: &str = "multithread_pool_checkout";

const FAN_OUT: &str =
    "one lookup, as part of a fan-out over `concurrency` tasks (wall time / lookups)";
const CHECKOUT: &str =
    "one checkout and return, `concurrency` tasks at once (wall time / checkouts)";

fn fan_out(name: &'static str, subject: Subject, about: &'static str) -> BenchSpec {
    BenchSpec::whole(name, subject, FAN_OUT, about)
}

fn checkout(name: &'static str, subject: Subject) -> BenchSpec {
    BenchSpec::whole(
        name,
        subject,
        CHECKOUT,
        "concurrent checkout and return only",
    )
    .phase(Phase::Checkout)
}

fn via(s: Strategy) -> &'static str {
    match s {
        Strategy::Inline => "middleware path per task, run on the runtime threads",
        Strategy::SpawnBlocking => "middleware path per task through spawn_blocking",
        Strategy::Interact => "middleware path per task through interact",
        Strategy::Worker => "middleware path per task through worker threads",
        Strategy::Spin => "middleware path per task through spin-then-park workers",
        Strategy::BlockInPlace => "middleware path per task through block_in_place",
        Strategy::WaitAside => {
            "middleware path per task on the runtime threads, waits in block_in_place"
        }
    }
}

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        Target::new(
            NAME,
            "`concurrency` tasks fan out over the shuffled ids, each on a pooled connection; ops/s and latency",
            0x5EED_2002,
            Measure::Throughput,
            "rusqlite_blocking",
        )
        .knobs(&[
            ROWS,
            LOOKUPS,
            CONCURRENCY,
            SPIN_US,
            SQLX_STATEMENT_CACHE,
            crate::catalog::POOL,
            crate::catalog::VALUES,
        ])
        .knobs(&crate::settings::KNOBS)
        .bench(fan_out(
            "rusqlite_blocking",
            Subject::Rusqlite,
            "a plain pool of rusqlite connections, one spawn_blocking per task",
        ))
        .per_strategy("middleware_parallel_select/", |name, s| {
            fan_out(name, Subject::Middleware(s), via(s))
        })
        .bench(checkout("middleware_pool_checkout", Subject::Pool(Pool::Deadpool)))
        .bench(checkout(
            "middleware_pool_checkout/workers",
            Subject::Pool(Pool::Workers),
        ))
        .bench(checkout(
            "middleware_pool_checkout/slots",
            Subject::Pool(Pool::Slots),
        ))
        .bench(fan_out(
            "sqlx_parallel_select",
            Subject::SqlxSqlite,
            "sqlx: each task acquires, prepares once and fetches its chunk",
        ))
        .bench(checkout("sqlx_pool_checkout", Subject::SqlxSqlite))
        .per_crate("crate_parallel_select/", &Shipped::ALL, |name, c| {
            fan_out(name, Subject::Crate(c), c.about())
        })
        .bench(checkout(
            "crate_pool_checkout/r2d2_sqlite",
            Subject::Crate(Shipped::R2d2BlockInPlace),
        ))
        .bench(checkout(
            "crate_pool_checkout/diesel",
            Subject::Crate(Shipped::Diesel),
        ))
        .bench(checkout(
            "crate_pool_checkout/sql-middleware",
            Subject::Crate(Shipped::SqlMiddleware),
        ))
        .bench(checkout(
            "crate_pool_checkout/sql-middleware/turso",
            Subject::Crate(Shipped::SqlMiddlewareTurso),
        ))
        .hidden(
            "crate_parallel_select/async-sqlite",
            crate::measure::trace::Phase::Checkout,
            "async-sqlite's Pool has no checkout: each call goes to the next connection's thread (round robin)",
        )
        .hidden(
            "crate_parallel_select/tokio-rusqlite",
            crate::measure::trace::Phase::Checkout,
            "no pool: a task takes the next connection handle (round robin), nothing waits",
        )
    });
    &SPEC
}
