//! `multithread_pool_checkout`: `concurrency` tasks fan out over the shuffled ids, each on a
//! pooled connection; the whole fan-out is one sample (wall time / operations, so the median
//! reads as throughput), and every task records its operations' latencies.

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;

use std::sync::LazyLock;

use crate::catalog::{
    BenchSpec, CONCURRENCY, LOOKUPS, Measure, Pool, ROWS, SPIN_US, SQLX_STATEMENT_CACHE, Subject,
    Target, leak,
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

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        let mut t = Target::new(
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
            fan_out(name, Subject::Middleware(s), s.how(NAME))
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
        .per_crate("crate_parallel_select/", |name, c, serve| {
            fan_out(name, Subject::Crate(c.id), serve.about(c))
        });
        // A checkout bench for each crate with a pool to check out of.
        for (c, _) in crate::catalog::table::crates::crates_serving(NAME) {
            if let Some(pool) = c.pool {
                t = t.bench(checkout(
                    leak(format!("crate_pool_checkout/{pool}")),
                    Subject::Crate(c.id),
                ));
            }
        }
        t
    });
    &SPEC
}
