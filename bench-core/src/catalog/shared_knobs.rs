//! The knobs several targets share; each target lists which it takes.

use crate::knobs::KnobSpec;

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
