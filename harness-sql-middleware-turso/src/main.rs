//! benchscope's harness of sql-middleware's turso feature: its pool and query builder on the
//! same dataset (same rows, same shuffled ids, same cache file), speaking the same event
//! stream through bench-core's runner service. What benchscope does through sql-middleware's
//! query builder is bench-core's own code, compiled against this build's sql-middleware.

mod bulk;
mod counted;
mod crud;
mod dataset;
mod kv;
mod lookup;
mod multithread;
mod pool;
mod script;

#[path = "../../bench-core/src/on_sql_middleware.rs"]
mod on_sql_middleware;

// SQLite's verdict on a script's statements (bench-core's source), on a bundled SQLite: turso
// runs the statements, SQLite says what they are.
#[path = "../../bench-core/src/script/judge.rs"]
mod judge;

use bench_core::catalog::Harness;
use bench_core::mirror::Mirrored;
use bench_core::protocol::RunEnv;
use bench_core::service::args::RunnerArgs;
use bench_core::workload::{Plan, Registry};
use clap::Parser;

/// The targets this harness implements.
const SQL_MIDDLEWARE_TURSO: Registry = Registry {
    harness: Harness::SqlMiddlewareTurso,
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

// No counting allocator here: turso (through sql-middleware's turso feature) installs mimalloc
// as the global allocator, and a binary has one. Its allocations are counted through it
// (`counted`).
fn main() {
    // Before any connection opens SQLite: its own allocations are counted with the rest.
    bench_core::measure::sqlite_malloc::count(rusqlite::ffi::sqlite3_config);
    // Then, before any connection opens, the jail: the only VFS this runner's SQLite has.
    {
        use rusqlite::ffi;
        bench_core::service::jail_or_exit(bench_core::sqlite_vfs_api!(ffi));
    }
    bench_core::measure::memory::through::name(counted::THROUGH);
    bench_core::service::init_logging();
    let args = RunnerArgs::parse();
    std::process::exit(bench_core::service::serve(
        &args,
        SQL_MIDDLEWARE_TURSO,
        &describe,
    ));
}

fn describe(timer_ns: f64, plan: &Plan) -> RunEnv {
    let turso = CRATE_VERSIONS
        .iter()
        .find(|(n, _)| *n == "turso")
        .map_or("?", |(_, v)| *v);
    let mut env = bench_core::protocol::env::collect(&format!("turso {turso}"), timer_ns);
    // This workspace's versions (sql-middleware's turso), not the core workspace's.
    env.crates = bench_core::protocol::env::crates(CRATE_VERSIONS);
    env.settings.insert(
        "sqlite settings".into(),
        bench_core::settings::SqliteSettings::from_knobs(&plan.knobs)
            .describe()
            .into(),
    );
    env.settings.insert(
        "sql-middleware pool".into(),
        format!(
            "bb8 over turso, at most {} connections (its default), checked on checkout; mimalloc as the allocator (turso's default features)",
            pool::POOL
        )
        .into(),
    );
    env
}
