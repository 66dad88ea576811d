//! benchscope's async-sqlite harness: async-sqlite's `Pool` and `Client` on the same dataset
//! (same rows, same shuffled ids, same cache file), speaking the same event stream through
//! bench-core's runner service. Its rusqlite is async-sqlite's (0.41); what benchscope does on a
//! rusqlite connection is bench-core's own code, compiled against it.

mod bulk;
mod contention;
mod crud;
mod kv;
mod lookup;
mod multithread;
mod script;

// bench-core's rusqlite code, compiled against async-sqlite's rusqlite (the dataset's rows read
// back, `read_rows`, serve bench-core's tests; this harness checks them in its own).
#[allow(dead_code)]
#[path = "../../bench-core/src/on_rusqlite/mod.rs"]
mod on_rusqlite;

// SQLite's verdict on a script's statements (bench-core's source), against the same rusqlite.
#[path = "../../bench-core/src/script/judge.rs"]
mod judge;

use bench_core::catalog::{CONCURRENCY, Harness};
use bench_core::mirror::Mirrored;
use bench_core::protocol::RunEnv;
use bench_core::service::args::RunnerArgs;
use bench_core::workload::{Plan, Registry};
use clap::Parser;

/// The targets this harness implements.
const ASYNC_SQLITE: Registry = Registry {
    harness: Harness::AsyncSqlite,
    workloads: &[
        &lookup::Lookup,
        &multithread::Multithread,
        &contention::Contention,
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
    std::process::exit(bench_core::service::serve(&args, ASYNC_SQLITE, &describe));
}

fn describe(timer_ns: f64, plan: &Plan) -> RunEnv {
    let mut env = bench_core::protocol::env::collect(rusqlite::version(), timer_ns);
    // This workspace's versions (async-sqlite's rusqlite), not the core workspace's.
    env.crates = bench_core::protocol::env::crates(CRATE_VERSIONS);
    let k = &plan.knobs;
    env.settings.insert(
        "sqlite settings".into(),
        bench_core::settings::SqliteSettings::from_knobs(k)
            .describe()
            .into(),
    );
    let conns = match k.count_if(&CONCURRENCY) {
        Some(c) => format!("num_conns={c}"),
        None => "one Client per bench".into(),
    };
    env.settings
        .insert("async-sqlite pool".into(), conns.into());
    env
}
