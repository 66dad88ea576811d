//! The catalog: every target, its benches and micro-benches, and its knobs, declared once.

use serde::Serialize;

use crate::knobs::{KnobSpec, Step};
use crate::trace::Phase;

/// Which runner binary produces a bench's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Harness {
    /// bench-core's runner (rusqlite, deadpool-sqlite, the middleware strategies).
    Core,
    /// harness-sqlx (sqlx 0.9 in its own dependency graph).
    Sqlx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchKind {
    /// A whole operation, end to end.
    Bench,
    /// Isolates one phase of the operation.
    Micro,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BenchSpec {
    pub name: &'static str,
    pub kind: BenchKind,
    pub harness: Harness,
    /// What is being measured: the driver or pool behind the bench.
    pub backend: &'static str,
    /// The dispatch strategy, for middleware benches.
    pub strategy: Option<&'static str>,
    /// The phase a micro-bench isolates.
    pub phase: Option<Phase>,
    /// What one operation is.
    pub op: &'static str,
    pub about: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Target {
    pub name: &'static str,
    pub about: &'static str,
    /// Seed of the dataset's id shuffle (each workload names its own).
    pub seed: u64,
    pub knobs: &'static [KnobSpec],
    pub benches: &'static [BenchSpec],
    /// The bench other benches are compared against by default.
    pub baseline: &'static str,
    /// Samples time a fan-out of concurrent operations, so ns/op reads as 1 / throughput and
    /// the views lead with ops/s.
    pub throughput: bool,
}

/// A workload that the catalog names but no runner implements yet. Listed so the docs and the
/// UI say so instead of hiding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Planned {
    pub name: &'static str,
    pub about: &'static str,
}

pub const ROWS: KnobSpec = KnobSpec {
    name: "rows",
    env: Some("BENCH_ROWS"),
    default: 1000,
    min: 1,
    max: 50_000_000,
    step: Step::Double,
    help: "rows in the dataset table",
};
pub const LOOKUPS: KnobSpec = KnobSpec {
    name: "lookups",
    env: Some("BENCH_LOOKUPS"),
    default: 1000,
    min: 1,
    max: 50_000_000,
    step: Step::Double,
    help: "operations per sample iteration (falls back to BENCH_ROWS)",
};
pub const CONCURRENCY: KnobSpec = KnobSpec {
    name: "concurrency",
    env: Some("BENCH_CONCURRENCY"),
    default: 8,
    min: 1,
    max: 1024,
    step: Step::Double,
    help: "pool size (connections, and worker threads for worker strategies)",
};
pub const LOOKUPS_PER_CHECKOUT: KnobSpec = KnobSpec {
    name: "lookups_per_checkout",
    env: Some("BENCH_LOOKUPS_PER_CHECKOUT"),
    default: 1,
    min: 1,
    max: 50_000_000,
    step: Step::Double,
    help: "middleware lookups made on one borrowed connection (1 = borrow per lookup)",
};
pub const SQLX_STATEMENT_CACHE: KnobSpec = KnobSpec {
    name: "sqlx_statement_cache",
    env: Some("BENCH_SQLX_STATEMENT_CACHE"),
    default: 100,
    min: 1,
    max: 100_000,
    step: Step::Double,
    help: "sqlx: prepared statements cached per connection",
};
pub const TRACE_EVERY: KnobSpec = KnobSpec {
    name: "trace_every",
    env: Some("BENCH_TRACE_EVERY"),
    default: 4,
    min: 1,
    max: 1_000_000,
    step: Step::Double,
    help: "with trace on, time the phases of every k-th lookup and checkout (1 = all)",
};
pub const SPIN_US: KnobSpec = KnobSpec {
    name: "spin_us",
    env: Some("BENCH_SPIN_US"),
    default: 50,
    min: 0,
    max: 100_000,
    step: Step::Double,
    help: "spin strategy: microseconds each side spins before parking",
};

/// The dispatch strategies of the middleware backend, fastest-to-explain first.
pub const STRATEGIES: &[(&str, &str)] = &[
    (
        "inline",
        "runs the query on the async runtime's own thread (blocks it)",
    ),
    (
        "spawn_blocking",
        "tokio::task::spawn_blocking with the pooled connection moved in",
    ),
    ("interact", "deadpool-sqlite Object::interact"),
    (
        "worker",
        "a dedicated thread per connection; std mpsc in, tokio oneshot back",
    ),
    (
        "spin",
        "a dedicated thread per connection; one-slot hand-off, both sides spin then park",
    ),
];

/// The pool behind a dispatch strategy: worker strategies own connections on their threads.
const fn pool_of(strategy: &'static str) -> &'static str {
    if matches!(strategy.as_bytes(), b"worker" | b"spin") {
        "rusqlite worker pool"
    } else {
        "deadpool-sqlite"
    }
}

const fn middleware(name: &'static str, strategy: &'static str, about: &'static str) -> BenchSpec {
    BenchSpec {
        name,
        kind: BenchKind::Bench,
        harness: Harness::Core,
        backend: pool_of(strategy),
        strategy: Some(strategy),
        phase: None,
        op: "one lookup by primary key through the middleware path",
        about,
    }
}

const fn interact(name: &'static str, strategy: &'static str) -> BenchSpec {
    BenchSpec {
        name,
        kind: BenchKind::Micro,
        harness: Harness::Core,
        backend: pool_of(strategy),
        strategy: Some(strategy),
        phase: Some(Phase::Dispatch),
        op: "one round trip to the connection's thread running an empty closure",
        about: "the dispatch hop alone, no SQL",
    }
}

const fn micro(
    name: &'static str,
    backend: &'static str,
    phase: Phase,
    op: &'static str,
) -> BenchSpec {
    BenchSpec {
        name,
        kind: BenchKind::Micro,
        harness: Harness::Core,
        backend,
        strategy: None,
        phase: Some(phase),
        op,
        about: op,
    }
}

const fn sqlx_micro(name: &'static str, phase: Phase, op: &'static str) -> BenchSpec {
    BenchSpec {
        harness: Harness::Sqlx,
        ..micro(name, "sqlx-sqlite", phase, op)
    }
}

pub const SINGLE_ROW_LOOKUP: Target = Target {
    name: "single_row_lookup",
    about: "SELECT one row by primary key, decoded into a struct; shuffled ids",
    seed: 0x5EED_1001,
    knobs: &[
        ROWS,
        LOOKUPS,
        CONCURRENCY,
        LOOKUPS_PER_CHECKOUT,
        SPIN_US,
        TRACE_EVERY,
        SQLX_STATEMENT_CACHE,
    ],
    baseline: "rusqlite",
    throughput: false,
    benches: &[
        BenchSpec {
            name: "rusqlite",
            kind: BenchKind::Bench,
            harness: Harness::Core,
            backend: "rusqlite",
            strategy: None,
            phase: None,
            op: "one lookup by primary key: prepare_cached, query_row, decode",
            about: "raw rusqlite on one connection: the floor",
        },
        middleware(
            "middleware/inline",
            "inline",
            "middleware path, query run on the runtime thread",
        ),
        middleware(
            "middleware/spawn_blocking",
            "spawn_blocking",
            "middleware path through spawn_blocking",
        ),
        middleware(
            "middleware/interact",
            "interact",
            "middleware path through deadpool-sqlite interact",
        ),
        middleware(
            "middleware/worker",
            "worker",
            "middleware path through a dedicated worker thread",
        ),
        middleware(
            "middleware/spin",
            "spin",
            "middleware path through a spin-then-park worker thread",
        ),
        micro(
            "pool_acquire",
            "deadpool-sqlite",
            Phase::Checkout,
            "pool.get() and drop of a deadpool-sqlite connection",
        ),
        micro(
            "pool_acquire/workers",
            "rusqlite worker pool",
            Phase::Checkout,
            "pool.get() and drop of a worker-thread connection",
        ),
        micro(
            "prepare",
            "rusqlite",
            Phase::Prepare,
            "prepare_cached of the lookup statement (cache hit)",
        ),
        interact("interact/inline", "inline"),
        interact("interact/spawn_blocking", "spawn_blocking"),
        interact("interact/interact", "interact"),
        interact("interact/worker", "worker"),
        interact("interact/spin", "spin"),
        micro(
            "marshalling",
            "rusqlite",
            Phase::ExecuteMarshal,
            "execute the lookup and build the generic result set",
        ),
        micro(
            "decode",
            "middleware",
            Phase::Decode,
            "decode one result-set row into BenchRow",
        ),
        micro(
            "param_convert",
            "middleware",
            Phase::Bind,
            "convert the caller's value into a driver parameter",
        ),
        BenchSpec {
            name: "sqlx",
            kind: BenchKind::Bench,
            harness: Harness::Sqlx,
            backend: "sqlx-sqlite",
            strategy: None,
            phase: None,
            op: "one lookup: pool acquire, fetch_one of the statement prepared once, decode",
            about: "sqlx 0.9 (its own worker thread per connection; no dispatch hop visible to callers)",
        },
        sqlx_micro(
            "sqlx/pool_acquire",
            Phase::Checkout,
            "pool.acquire() and drop",
        ),
        sqlx_micro(
            "sqlx/prepare",
            Phase::Prepare,
            "prepare on an acquired connection (statement cache hit)",
        ),
        sqlx_micro(
            "sqlx/marshalling",
            Phase::ExecuteMarshal,
            "fetch_one without decoding (includes sqlx's hop to its worker)",
        ),
        sqlx_micro(
            "sqlx/decode",
            Phase::Decode,
            "decode one fetched SqliteRow into BenchRow",
        ),
        sqlx_micro(
            "sqlx/param_convert",
            Phase::Bind,
            "build the query and bind the id",
        ),
        BenchSpec {
            name: "turso_raw",
            kind: BenchKind::Bench,
            harness: Harness::Core,
            backend: "turso",
            strategy: None,
            phase: None,
            op: "one lookup: statement prepared once, query, next row, decode",
            about: "turso (Rust rewrite of SQLite) on the same file; runs on the caller's task",
        },
        BenchSpec {
            name: "middleware/turso",
            kind: BenchKind::Bench,
            harness: Harness::Core,
            backend: "turso",
            strategy: None,
            phase: None,
            op: "one lookup through the middleware's value / result-set path over turso",
            about: "middleware path over turso: connection per checkout, no dispatch hop",
        },
        micro(
            "turso/pool_acquire",
            "turso",
            Phase::Checkout,
            "Database::connect() and drop (turso has no pool)",
        ),
        micro(
            "turso/prepare",
            "turso",
            Phase::Prepare,
            "prepare_cached of the lookup statement (cache hit)",
        ),
        micro(
            "turso/marshalling",
            "turso",
            Phase::ExecuteMarshal,
            "query the prepared statement and build the result set",
        ),
        micro(
            "turso/decode",
            "turso",
            Phase::Decode,
            "decode one turso Row into BenchRow",
        ),
        micro(
            "turso/param_convert",
            "turso",
            Phase::Bind,
            "convert the caller's value into turso parameters",
        ),
    ],
};

/// A whole-operation bench (not a micro-bench) whose operation is `op`.
const fn whole(
    name: &'static str,
    harness: Harness,
    backend: &'static str,
    strategy: Option<&'static str>,
    op: &'static str,
    about: &'static str,
) -> BenchSpec {
    BenchSpec {
        name,
        kind: BenchKind::Bench,
        harness,
        backend,
        strategy,
        phase: None,
        op,
        about,
    }
}

const fn fan_out(
    name: &'static str,
    harness: Harness,
    backend: &'static str,
    strategy: Option<&'static str>,
    about: &'static str,
) -> BenchSpec {
    let op = "one lookup, as part of a fan-out over `concurrency` tasks (wall time / lookups)";
    whole(name, harness, backend, strategy, op, about)
}

const fn checkout_fan_out(
    name: &'static str,
    harness: Harness,
    backend: &'static str,
) -> BenchSpec {
    BenchSpec {
        op: "one checkout and return, `concurrency` tasks at once (wall time / checkouts)",
        ..fan_out(
            name,
            harness,
            backend,
            None,
            "concurrent checkout and return only",
        )
    }
}

pub const MULTITHREAD_POOL_CHECKOUT: Target = Target {
    name: "multithread_pool_checkout",
    about: "`concurrency` tasks fan out over the shuffled ids, each on a pooled connection; ops/s and latency",
    seed: 0x5EED_2002,
    knobs: &[ROWS, LOOKUPS, CONCURRENCY, SPIN_US, SQLX_STATEMENT_CACHE],
    baseline: "rusqlite_blocking",
    throughput: true,
    benches: &[
        fan_out(
            "rusqlite_blocking",
            Harness::Core,
            "rusqlite",
            None,
            "a plain pool of rusqlite connections, one spawn_blocking per task",
        ),
        fan_out(
            "middleware_parallel_select/inline",
            Harness::Core,
            "deadpool-sqlite",
            Some("inline"),
            "middleware path per task, run on the runtime threads",
        ),
        fan_out(
            "middleware_parallel_select/spawn_blocking",
            Harness::Core,
            "deadpool-sqlite",
            Some("spawn_blocking"),
            "middleware path per task through spawn_blocking",
        ),
        fan_out(
            "middleware_parallel_select/interact",
            Harness::Core,
            "deadpool-sqlite",
            Some("interact"),
            "middleware path per task through interact",
        ),
        fan_out(
            "middleware_parallel_select/worker",
            Harness::Core,
            "rusqlite worker pool",
            Some("worker"),
            "middleware path per task through worker threads",
        ),
        fan_out(
            "middleware_parallel_select/spin",
            Harness::Core,
            "rusqlite worker pool",
            Some("spin"),
            "middleware path per task through spin-then-park workers",
        ),
        checkout_fan_out("middleware_pool_checkout", Harness::Core, "deadpool-sqlite"),
        checkout_fan_out(
            "middleware_pool_checkout/workers",
            Harness::Core,
            "rusqlite worker pool",
        ),
        fan_out(
            "sqlx_parallel_select",
            Harness::Sqlx,
            "sqlx-sqlite",
            None,
            "sqlx: each task acquires, prepares once and fetches its chunk",
        ),
        checkout_fan_out("sqlx_pool_checkout", Harness::Sqlx, "sqlx-sqlite"),
    ],
};

const fn bulk(
    name: &'static str,
    harness: Harness,
    backend: &'static str,
    strategy: Option<&'static str>,
    about: &'static str,
) -> BenchSpec {
    let op = "one row inserted (one transaction of `rows` rows per sample, into a fresh table)";
    whole(name, harness, backend, strategy, op, about)
}

const MIDDLEWARE_BULK: &str = "rows as generic values, one dispatch running the whole transaction";

pub const BULK_INSERT: Target = Target {
    name: "bulk_insert",
    about: "`rows` rows of a 16-column table inserted in one transaction into a fresh table; rows/s",
    seed: 0x5EED_3003,
    knobs: &[ROWS, CONCURRENCY, SPIN_US],
    baseline: "rusqlite",
    throughput: true,
    benches: &[
        bulk(
            "rusqlite",
            Harness::Core,
            "rusqlite",
            None,
            "prepared insert per row inside one transaction",
        ),
        bulk(
            "middleware/inline",
            Harness::Core,
            "deadpool-sqlite",
            Some("inline"),
            MIDDLEWARE_BULK,
        ),
        bulk(
            "middleware/spawn_blocking",
            Harness::Core,
            "deadpool-sqlite",
            Some("spawn_blocking"),
            MIDDLEWARE_BULK,
        ),
        bulk(
            "middleware/interact",
            Harness::Core,
            "deadpool-sqlite",
            Some("interact"),
            MIDDLEWARE_BULK,
        ),
        bulk(
            "middleware/worker",
            Harness::Core,
            "rusqlite worker pool",
            Some("worker"),
            MIDDLEWARE_BULK,
        ),
        bulk(
            "middleware/spin",
            Harness::Core,
            "rusqlite worker pool",
            Some("spin"),
            MIDDLEWARE_BULK,
        ),
        bulk(
            "turso",
            Harness::Core,
            "turso",
            None,
            "turso: prepared insert per row inside one transaction",
        ),
        bulk(
            "sqlx_sqlite",
            Harness::Sqlx,
            "sqlx-sqlite",
            None,
            "sqlx: insert per row inside one transaction",
        ),
        bulk(
            "postgres",
            Harness::Sqlx,
            "sqlx-postgres",
            None,
            "PostgreSQL through sqlx (needs --postgres-url or BENCHSCOPE_POSTGRES_URL)",
        ),
    ],
};

pub const TARGETS: &[Target] = &[SINGLE_ROW_LOOKUP, MULTITHREAD_POOL_CHECKOUT, BULK_INSERT];

/// Workloads named in the design that no runner implements yet.
pub const PLANNED: &[Planned] = &[
    Planned {
        name: "async_contention",
        about: "async dispatch strategies under contention (not implemented yet)",
    },
    Planned {
        name: "crud_overhead",
        about: "CRUD overhead against pure SQLite (not implemented yet)",
    },
    Planned {
        name: "key_value",
        about: "key-value get/put/delete (not implemented yet)",
    },
];

pub fn target(name: &str) -> Result<&'static Target, CatalogError> {
    TARGETS.iter().find(|t| t.name == name).ok_or_else(|| {
        if PLANNED.iter().any(|p| p.name == name) {
            CatalogError::NotImplemented(name.to_string())
        } else {
            CatalogError::UnknownTarget {
                name: name.to_string(),
                known: TARGETS
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        }
    })
}

impl Target {
    pub fn bench(&self, name: &str) -> Result<&'static BenchSpec, CatalogError> {
        // Targets are 'static consts; find via TARGETS to return a 'static reference.
        let me = TARGETS
            .iter()
            .find(|t| t.name == self.name)
            .expect("target in TARGETS");
        me.benches
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| CatalogError::UnknownBench {
                target: self.name.to_string(),
                name: name.to_string(),
                known: me
                    .benches
                    .iter()
                    .map(|b| b.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    #[error("unknown target {name:?} (known: {known})")]
    UnknownTarget { name: String, known: String },
    #[error("target {0:?} is planned but not implemented yet")]
    NotImplemented(String),
    #[error("unknown bench {name:?} in target {target} (known: {known})")]
    UnknownBench {
        target: String,
        name: String,
        known: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_baseline_exists() {
        for t in TARGETS {
            let mut names: Vec<_> = t.benches.iter().map(|b| b.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(
                names.len(),
                t.benches.len(),
                "duplicate bench in {}",
                t.name
            );
            assert!(t.bench(t.baseline).is_ok());
            for k in t.knobs {
                assert!(
                    k.min <= k.default && k.default <= k.max,
                    "{} default out of bounds",
                    k.name
                );
            }
        }
    }

    #[test]
    fn every_strategy_has_a_bench_and_an_interact_micro() {
        for (s, _) in STRATEGIES {
            assert!(SINGLE_ROW_LOOKUP.bench(&format!("middleware/{s}")).is_ok());
            assert!(SINGLE_ROW_LOOKUP.bench(&format!("interact/{s}")).is_ok());
        }
    }

    #[test]
    fn unknown_and_planned_targets_are_told_apart() {
        assert_eq!(
            target("nope").unwrap_err().to_string(),
            "unknown target \"nope\" (known: single_row_lookup, multithread_pool_checkout, bulk_insert)"
        );
        assert!(matches!(
            target("key_value"),
            Err(CatalogError::NotImplemented(_))
        ));
        let e = SINGLE_ROW_LOOKUP.bench("x").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown bench \"x\" in target single_row_lookup (known: rusqlite, "),
            "{e}"
        );
    }
}
