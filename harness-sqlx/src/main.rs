//! benchscope's sqlx harness: the sqlx mirrors of the benchmarks, on the same dataset (same rows,
//! same shuffled ids, same cache file), speaking the same event stream through bench-core's
//! runner service.

mod bulk;
mod crud;
mod dataset;
mod kv;
mod lookup;
mod multithread;
mod script;
mod settings;

// SQLite's verdict on a script's statements (bench-core's source), compiled against the
// rusqlite of sqlx's libsqlite3-sys.
#[path = "../../bench-core/src/script/judge.rs"]
mod judge;

use bench_core::catalog::{CONCURRENCY, Harness, SQLX_STATEMENT_CACHE};
use bench_core::mirror::Mirrored;
use bench_core::protocol::RunEnv;
use bench_core::service::args::RunnerArgs;
use bench_core::workload::{Plan, Registry};
use clap::Parser;

/// The targets this harness implements.
const SQLX: Registry = Registry {
    harness: Harness::Sqlx,
    workloads: &[
        &lookup::Lookup,
        &multithread::Multithread,
        &Mirrored(bulk::Bulk),
        &Mirrored(crud::CrudOverhead),
        &Mirrored(kv::KeyValue),
        &script::SCRIPT,
    ],
};

include!(concat!(env!("OUT_DIR"), "/crate_versions.rs"));

/// Counts every allocation of a runner (memory per operation); off until the runner starts
/// measuring.
#[global_allocator]
static ALLOC: bench_core::measure::memory::Counting = bench_core::measure::memory::Counting::SYSTEM;

fn main() {
    // Before any connection opens SQLite: its own allocations are counted with the rest.
    bench_core::measure::sqlite_malloc::count(rusqlite::ffi::sqlite3_config);
    // Then, before any connection opens, the jail: the only VFS this runner's SQLite has.
    {
        use rusqlite::ffi;
        bench_core::service::jail_or_exit(bench_core::sqlite_vfs_api!(ffi));
    }
    bench_core::service::init_logging();
    let args = RunnerArgs::parse();
    std::process::exit(bench_core::service::serve(&args, SQLX, &describe));
}

fn describe(timer_ns: f64, plan: &Plan) -> RunEnv {
    let sqlite = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(bench_core::BenchError::other)
        .and_then(|rt| rt.block_on(dataset::sqlite_version()))
        .unwrap_or_else(|e| format!("unknown ({e})"));
    let mut env = bench_core::protocol::env::collect(&sqlite, timer_ns);
    // This workspace's versions (sqlx's), not the core workspace's bench-core was built with.
    env.crates = bench_core::protocol::env::crates(CRATE_VERSIONS);
    let k = &plan.knobs;
    env.settings.insert(
        "sqlite settings".into(),
        bench_core::settings::SqliteSettings::from_knobs(k)
            .describe()
            .into(),
    );
    match (k.count_if(&CONCURRENCY), k.count_if(&SQLX_STATEMENT_CACHE)) {
        (Some(c), Some(cache)) => {
            env.settings.insert(
                "sqlx pool".into(),
                format!("max_connections={c} statement_cache_capacity={cache}").into(),
            );
        }
        _ => {
            env.settings
                .insert("sqlx".into(), "one connection per bench".into());
        }
    }
    env
}
