//! benchscope's sqlx harness: the sqlx mirrors of the lookup benchmarks, on the same dataset
//! (same rows, same shuffled ids, same cache file), speaking the same event stream.

mod bulk;
mod dataset;
mod lookup;
mod multithread;

use bench_core::catalog::Harness;
use bench_core::protocol::{Event, RunEnv};
use bench_core::runner::{self, Harnessed, Plan, RunnerArgs};
use clap::Parser;

fn main() {
    runner::init_logging();
    let args = RunnerArgs::parse();
    std::process::exit(main_with(args));
}

fn main_with(args: RunnerArgs) -> i32 {
    let rt = match bench_core::drive::runtime(None) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let env = |timer_ns: f64, plan: &Plan| -> RunEnv {
        let sqlite = rt
            .block_on(dataset::sqlite_version())
            .unwrap_or_else(|e| format!("unknown ({e})"));
        let mut env = bench_core::env::collect(&sqlite, timer_ns);
        if let Some(cache) = plan.knobs.get("sqlx_statement_cache") {
            env.settings.insert(
                "sqlx pool".into(),
                format!(
                    "max_connections={} statement_cache_capacity={cache}",
                    plan.knobs.value("concurrency")
                ),
            );
        } else {
            env.settings
                .insert("sqlx".into(), "one connection per bench".into());
        }
        env
    };
    let mut body = |plan: &Plan, emit: &mut dyn FnMut(Event)| -> Result<(), String> {
        if plan.target.name == bench_core::catalog::BULK_INSERT.name {
            let rows = plan.knobs.value("rows");
            let ctx = bulk::Ctx {
                rt: &rt,
                dir: args
                    .session
                    .cache_dir
                    .clone()
                    .unwrap_or_else(bench_core::dataset::default_cache_dir),
                rows: bench_core::bulk::rows(rows, plan.target.seed),
                postgres_url: args.session.postgres_url(),
            };
            std::fs::create_dir_all(&ctx.dir)
                .map_err(|e| format!("cannot create {}: {e}", ctx.dir.display()))?;
            runner::run_benches_or_skip(
                plan,
                rows,
                emit,
                &|spec| bulk::skip(spec, &ctx),
                &mut |spec| bulk::iteration(spec, &ctx),
            );
            return Ok(());
        }
        let ensure = |dir: &std::path::Path,
                      key: &bench_core::dataset::DatasetKey,
                      on_build: &mut dyn FnMut(&std::path::Path)| {
            bench_core::dataset::ensure_with(
                dir,
                key,
                on_build,
                &|p| rt.block_on(dataset::validate(p, key)),
                &|p| rt.block_on(dataset::write(p, key)),
            )
        };
        let ready = runner::dataset_events(&args, plan, emit, &ensure)?;
        let ids = bench_core::dataset::lookup_ids(
            plan.knobs.value("rows"),
            plan.target.seed,
            plan.knobs.value("lookups"),
        );
        let ops = ids.len() as u64;
        let ctx = lookup::Ctx::new(&rt, ready.path, ids, plan)?;
        if plan.target.name == bench_core::catalog::MULTITHREAD_POOL_CHECKOUT.name {
            runner::run_benches(plan, ops, emit, &mut |spec| {
                multithread::iteration(spec, &ctx)
            });
        } else {
            runner::run_benches(plan, ops, emit, &mut |spec| lookup::iteration(spec, &ctx));
        }
        Ok(())
    };
    runner::serve(
        &args,
        Harnessed {
            harness: Harness::Sqlx,
            env: &env,
            body: &mut body,
        },
    )
}
