//! The runner service: checks a run's arguments into a [`Plan`], finds the target in a harness's
//! [`Registry`], and writes the event stream on stdout while the benches run. `bench-runner`,
//! `benchscope runner` and harness-sqlx are all this one entry point over their own registry.

pub mod args;
pub mod budget;
pub mod request;

use std::io::Write;

use crate::catalog::{BenchSpec, CatalogError, Harness};
use crate::error::BenchError;
use crate::knobs::KnobValue;
use crate::protocol::{Emitter, Event, RunEnv, Start};
use crate::workload::{Plan, Registry, RunContext, Session};
use crate::workloads;
use args::RunnerArgs;

impl RunnerArgs {
    /// Checks everything before anything starts. With `Some(harness)`, the plan holds only
    /// that harness's benches (and naming another's is an error); with `None`, every harness's.
    pub fn plan(&self, harness: Option<Harness>) -> Result<Plan, BenchError> {
        let name = self.target.as_deref().ok_or_else(|| {
            BenchError::Invalid("no target named (allowed: a target of `benchscope list`)".into())
        })?;
        let mut target = workloads::find(name)?;
        // The script target has a micro-bench per statement of the run's scripts.
        if target.name == workloads::script::NAME {
            target = workloads::script::spec_for(&self.session.script);
        }
        let mine = |b: &BenchSpec| harness.is_none_or(|h| b.harness() == h);
        let benches = if self.benches.is_empty() {
            target.benches.iter().filter(|b| mine(b)).collect()
        } else {
            // Each --bench an exact name or a pattern; a bench two of them select runs once.
            let mut v: Vec<&BenchSpec> = Vec::new();
            for pattern in &self.benches {
                let found = target.select(pattern)?;
                let kept: Vec<&BenchSpec> = found.iter().copied().filter(|b| mine(b)).collect();
                if kept.is_empty() {
                    return Err(CatalogError::OtherHarness {
                        bench: found[0].name.to_string(),
                        harness: found[0].harness().name(),
                    }
                    .into());
                }
                for b in kept {
                    if !v.iter().any(|s| s.name == b.name) {
                        v.push(b);
                    }
                }
            }
            v
        };
        let mut knobs = self.session.knobs.resolve(target)?;
        // --quick shortens a scenario as it shortens a sampled bench: its duration, unless a
        // flag, --knob or the environment sets one.
        if self.session.budget.quick
            && let Some(d) = target.knobs.iter().find(|k| k.name == "duration")
            && !self.session.sets(d)?
        {
            knobs.set(d.name, KnobValue::Count(QUICK_SCENARIO_S));
        }
        request::script_variables(target, &self.session.script.defines, &mut knobs);
        // --time-for: the benches of this plan each pattern selects take its seconds.
        let budget = args::budget_for(&self.session.budget, target, &benches)?;
        Ok(Plan {
            target,
            benches,
            knobs,
            budget,
            trace: self.session.trace()?,
        })
    }
}

/// A scenario's seconds under `--quick`.
pub const QUICK_SCENARIO_S: u64 = 2;

/// Describes a harness's environment, given the calibrated timer cost (ns) and the plan.
pub type DescribeEnv<'a> = dyn Fn(f64, &Plan) -> RunEnv + 'a;

/// The runner protocol around a harness: checks the arguments (exit 2 with an error event if
/// bad), writes `start`, opens the target's workload and runs its benches, and ends with
/// `done` (exit 0) or an error (exit 1).
/// A runner ends when the process that started it does (benchscope, or perf recording it),
/// instead of measuring on for nobody: on Linux the kernel sends it SIGTERM.
fn die_with_parent() {
    #[cfg(target_os = "linux")]
    {
        let parent = std::os::unix::process::parent_id();
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and changes nothing else.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
        // The parent may have gone before the call: then it will never signal.
        if std::os::unix::process::parent_id() != parent {
            std::process::exit(3);
        }
    }
}

/// A run as the runner was given it: from a front end's request on stdin, or from flags.
struct Given {
    plan: Plan,
    run_id: Option<String>,
    cache_dir: std::path::PathBuf,
    script: crate::script::ScriptArgs,
}

impl Given {
    fn from(args: &RunnerArgs, harness: Harness) -> Result<Given, BenchError> {
        let Some(source) = &args.request else {
            return Ok(Given {
                plan: args.plan(Some(harness))?,
                run_id: args.run_id.clone(),
                cache_dir: args.session.cache_dir(),
                script: args.session.script.clone(),
            });
        };
        // The request is the whole run: a flag beside it would be silently ignored.
        if args.session != args::SessionArgs::default() {
            return Err(BenchError::Invalid(
                "--request takes no other setting (the run request holds them all; allowed: --request alone, or a target and its flags)".into(),
            ));
        }
        let request = if source.as_os_str() == "-" {
            request::RunnerRequest::read(std::io::stdin().lock())?
        } else {
            let opened = crate::opener::open(source, "--request", crate::opener::Kind::Document)
                .map_err(|e| BenchError::Invalid(e.to_string()))?;
            request::RunnerRequest::read(opened.file)?
        };
        Ok(Given {
            plan: request.plan(Some(harness))?,
            run_id: Some(request.run_id.clone()),
            cache_dir: request
                .cache_dir
                .clone()
                .unwrap_or_else(crate::dataset::default_cache_dir),
            script: request.script,
        })
    }
}

pub fn serve(args: &RunnerArgs, registry: Registry, env: &DescribeEnv<'_>) -> i32 {
    die_with_parent();
    // Memory is counted from here, where the binary counts (`measure::memory`).
    let counting = crate::measure::memory::start();
    if args.alloc_stacks.is_some() {
        crate::measure::memory::record_stacks();
    }
    let stdout = std::io::stdout();
    let mut emitter = Emitter::new(stdout.lock());
    let mut emit = |e: Event| {
        if emitter.emit(&e).is_err() {
            // The reader went away: nothing left to report to.
            std::process::exit(3);
        }
    };
    let planned = Given::from(args, registry.harness).and_then(|given| {
        let workload = registry.find(given.plan.target.name).ok_or_else(|| {
            BenchError::Invalid(format!(
                "target {} has no implementation in the {} harness",
                given.plan.target.name,
                registry.harness.name()
            ))
        })?;
        Ok((given, workload))
    });
    // A run that cannot go on: an error event, the same on stderr, and the exit code.
    let fail = |emit: &mut dyn FnMut(Event), e: BenchError, code: i32| {
        let message = e.to_string();
        crate::text::say(&format!("error: {message}"));
        emit(Event::Error {
            bench: None,
            message,
        });
        code
    };
    let (given, workload) = match planned {
        Ok(p) => p,
        Err(e) => return fail(&mut emit, e, 2),
    };
    let plan = given.plan;
    let timer_ns = crate::measure::trace::calibrate_timer();
    crate::measure::trace::set_timer_cost(timer_ns);
    let mut run_env = env(timer_ns, &plan);
    run_env.settings.insert(
        "memory".into(),
        crate::measure::memory_setting(counting).into(),
    );
    if run_env.is_debug() {
        tracing::warn!("{}", crate::protocol::DEBUG_WARNING);
    }
    emit(Event::Start(Start {
        run: given
            .run_id
            .unwrap_or_else(|| format!("{}-{}", plan.target.name, std::process::id())),
        target: plan.target.name.into(),
        benches: plan.benches.iter().map(|b| b.name.to_string()).collect(),
        harness: registry.harness.name().to_string(),
        knobs: plan.knobs.clone(),
        seed: plan.target.seed,
        trace: plan.trace,
        budget: plan.budget.clone(),
        env: run_env,
    }));
    let run = RunContext {
        plan: &plan,
        cache_dir: given.cache_dir,
        postgres_url: args.session.postgres_url(),
        sqlite: crate::settings::SqliteSettings::from_knobs(&plan.knobs),
        script: given.script,
    };
    // The runner's SQLite reaches the cache folder by default (datasets, the run's folder);
    // a user's data only through the jail of its own folder (`crate::scratch`).
    if crate::jail::process().is_some()
        && let Err(e) = crate::jail::allow(&run.cache_dir)
    {
        return fail(&mut emit, BenchError::Invalid(e.to_string()), 2);
    }
    let result = workload
        .open(&run, &mut emit)
        .map(|session| run_benches(&plan, session.as_ref(), &mut emit));
    crate::scratch::remove_run_dir(&run.cache_dir);
    let _ = std::io::stderr().flush();
    if let Some(path) = &args.alloc_stacks
        && counting
    {
        // Where the allocations came from, for the front end beside perf's recording; a file
        // it cannot write leaves the profile without them, and the run as it was.
        let folded = crate::measure::memory::folded_stacks();
        let tmp = path.with_extension("tmp");
        if let Err(e) = std::fs::write(&tmp, folded).and_then(|()| std::fs::rename(&tmp, path)) {
            tracing::warn!(
                "cannot write the allocations' stacks to {}: {e}",
                path.display()
            );
        }
    }
    match result {
        Ok(()) => {
            emit(Event::Done);
            0
        }
        Err(e) => fail(&mut emit, e, 1),
    }
}

/// Runs every bench of the plan in order: `bench_start`, its samples and summary; `skipped`
/// when the session says it cannot run here; or an `error` for that bench alone (the others
/// go on).
pub fn run_benches(plan: &Plan, session: &dyn Session, emit: &mut dyn FnMut(Event)) {
    if plan.budget.paired
        && plan.target.measure != crate::catalog::Measure::Scenario
        && plan.benches.len() > 1
    {
        return run_paired(plan, session, emit);
    }
    let ops = session.ops();
    for spec in &plan.benches {
        if skipped(session, spec, emit) {
            continue;
        }
        let start = |bench: Option<&crate::measure::Bench<'_>>| bench_start(spec, ops, bench);
        if plan.target.measure == crate::catalog::Measure::Scenario {
            let prepared = session.scenario(spec);
            emit(Event::BenchStart {
                bench: spec.name.to_string(),
                backend: prepared
                    .as_ref()
                    .ok()
                    .and_then(|p| p.backend())
                    .unwrap_or_else(|| spec.backend().to_string()),
                strategy: spec.strategy().map(|s| s.name().to_string()),
                ops,
                work: None,
                sqlite: prepared.as_ref().map(|p| p.settings()).unwrap_or_default(),
            });
            match prepared.and_then(|p| p.run(emit)) {
                Ok(stats) => emit(Event::Scenario {
                    bench: spec.name.to_string(),
                    stats,
                }),
                Err(e) => {
                    let message = e.to_string();
                    tracing::error!(bench = spec.name, %message, "scenario failed");
                    emit(Event::Error {
                        bench: Some(spec.name.to_string()),
                        message,
                    });
                }
            }
            continue;
        }
        let result = match session.bench(spec) {
            Ok(mut bench) => {
                emit(start(Some(&bench)));
                let ops = bench.ops.unwrap_or(ops);
                crate::measure::run(&plan.budget, spec.name, ops, &mut bench, emit)
            }
            Err(e) => {
                emit(start(None));
                Err(e)
            }
        };
        match result {
            Ok(_) => reported(session, spec, emit),
            Err(e) => bench_error(spec.name, &e, emit),
        }
    }
}

/// A bench's own report, once its samples are taken.
fn reported(session: &dyn Session, spec: &crate::catalog::BenchSpec, emit: &mut dyn FnMut(Event)) {
    for e in session.report(spec) {
        emit(e);
    }
}

/// Says `skipped` when the session cannot run `spec` here.
fn skipped(
    session: &dyn Session,
    spec: &crate::catalog::BenchSpec,
    emit: &mut dyn FnMut(Event),
) -> bool {
    let Some(reason) = session.skip(spec) else {
        return false;
    };
    emit(Event::Skipped {
        bench: spec.name.to_string(),
        reason,
    });
    true
}

/// The event that opens a bench.
fn bench_start(
    spec: &crate::catalog::BenchSpec,
    ops: u64,
    bench: Option<&crate::measure::Bench<'_>>,
) -> Event {
    Event::BenchStart {
        bench: spec.name.to_string(),
        backend: bench
            .and_then(|b| b.backend.clone())
            .unwrap_or_else(|| spec.backend().to_string()),
        strategy: spec.strategy().map(|s| s.name().to_string()),
        ops: bench.and_then(|b| b.ops).unwrap_or(ops),
        work: bench.map(|b| crate::protocol::WorkCheck {
            per_pass: b.work.per_pass,
            what: b.work.what.to_string(),
        }),
        sqlite: bench.map(|b| b.settings.clone()).unwrap_or_default(),
    }
}

fn bench_error(name: &str, e: &crate::error::BenchError, emit: &mut dyn FnMut(Event)) {
    let message = e.to_string();
    tracing::error!(bench = name, %message, "bench failed");
    emit(Event::Error {
        bench: Some(name.to_string()),
        message,
    });
}

/// Paired rounds ([`crate::measure::run_paired`]) in groups ([`paired_groups`]): each group's
/// benches are set up together, take turns sample by sample, and are dropped before the next
/// group is set up; each bench gets its ratio to its baseline bench as the median of the
/// per-round ratios (`paired` events after the group's summaries). A baseline bench takes
/// turns in every group that needs it; only its first group's samples and summary are
/// reported (the later ones pair the others' samples and are not shown).
fn run_paired(plan: &Plan, session: &dyn Session, emit: &mut dyn FnMut(Event)) {
    let ops = session.ops();
    let benches: Vec<&BenchSpec> = plan
        .benches
        .iter()
        .copied()
        .filter(|spec| !skipped(session, spec, emit))
        .collect();
    let against = |spec: &BenchSpec| spec.vs.unwrap_or(plan.target.baseline);
    let baselines: Vec<Option<usize>> = benches
        .iter()
        .map(|spec| {
            let name = against(spec);
            (name != spec.name)
                .then(|| benches.iter().position(|b| b.name == name))
                .flatten()
        })
        .collect();
    let size = plan.budget.group.unwrap_or(benches.len());
    for group in paired_groups(&baselines, size) {
        let shown = &group.reports;
        let quiet: Vec<&str> = group
            .turns
            .iter()
            .filter(|i| !shown.contains(i))
            .map(|&i| benches[i].name)
            .collect();
        let mut emit_shown = |e: Event| {
            if e.bench().is_none_or(|b| !quiet.contains(&b)) {
                emit(e)
            }
        };
        let mut ready = Vec::new();
        for &i in &group.turns {
            let spec = benches[i];
            match session.bench(spec) {
                Ok(bench) => {
                    emit_shown(bench_start(spec, ops, Some(&bench)));
                    ready.push((i, bench));
                }
                Err(e) => {
                    emit_shown(bench_start(spec, ops, None));
                    if shown.contains(&i) {
                        bench_error(spec.name, &e, &mut emit_shown);
                    } else {
                        tracing::warn!(bench = spec.name, error = %e, "baseline bench failed to set up again for a later group");
                    }
                }
            }
        }
        let mut turns: Vec<(&str, u64, &mut crate::measure::Bench<'_>)> = ready
            .iter_mut()
            .map(|(i, bench)| (benches[*i].name, bench.ops.unwrap_or(ops), bench))
            .collect();
        let results = crate::measure::run_paired(&plan.budget, &mut turns, &mut emit_shown);
        let mut samples: Vec<(usize, Vec<f64>)> = Vec::new();
        for ((i, _), result) in ready.iter().zip(results) {
            let spec = benches[*i];
            match result {
                Ok((_, xs)) => {
                    if shown.contains(i) {
                        reported(session, spec, &mut emit_shown);
                    }
                    samples.push((*i, xs))
                }
                Err(e) => bench_error(spec.name, &e, &mut emit_shown),
            }
        }
        let of = |i: usize| samples.iter().find(|(j, _)| *j == i).map(|(_, x)| x);
        for &i in shown {
            if let Some(b) = baselines[i]
                && let (Some(num), Some(den)) = (of(i), of(b))
                && let Some(ratio) = crate::measure::stats::paired_ratio(num, den)
            {
                emit(Event::Paired {
                    bench: benches[i].name.to_string(),
                    against: benches[b].name.to_string(),
                    ratio,
                });
            }
        }
        // The group's pools, connections and threads end here, before the next group's.
        drop(ready);
    }
}

/// One group of a paired run, as indices of its benches.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedGroup {
    /// The benches that take turns, in the run's order.
    pub turns: Vec<usize>,
    /// Those whose start, samples, summary and ratio this group reports: its own benches, and
    /// a bench that is only a baseline of others in the first group that needs it.
    pub reports: Vec<usize>,
}

/// The groups a paired run measures in: at most `size` benches a group besides the benches
/// their ratios are taken against (`baselines[i]`), which join every group that needs them.
/// A bench with a ratio of its own, or with no one to pair with, belongs to one group; one
/// that is only a baseline of others is measured in every group that needs it.
pub fn paired_groups(baselines: &[Option<usize>], size: usize) -> Vec<PairedGroup> {
    let needed = |i: usize| baselines.contains(&Some(i));
    let members: Vec<usize> = (0..baselines.len())
        .filter(|&i| baselines[i].is_some() || !needed(i))
        .collect();
    let mut reported = vec![false; baselines.len()];
    members
        .chunks(size.max(1))
        .map(|chunk| {
            let mut turns: Vec<usize> = chunk.to_vec();
            for b in chunk.iter().filter_map(|&i| baselines[i]) {
                if !turns.contains(&b) {
                    turns.push(b);
                }
            }
            turns.sort_unstable();
            let reports = turns
                .iter()
                .copied()
                .filter(|&i| {
                    let mine = chunk.contains(&i) || !members.contains(&i) && !reported[i];
                    reported[i] |= mine;
                    mine
                })
                .collect();
            PairedGroup { turns, reports }
        })
        .collect()
}

/// Puts this process's SQLite in its jail ([`crate::jail::install`]: the jail is the only VFS,
/// reaching what the service allows) or ends the process saying why: a runner never opens a
/// database unjailed. Called by every runner's `main` after `sqlite3_config`, with its own
/// binding's functions.
pub fn jail_or_exit(api: crate::jail::Api) {
    if let Err(e) = crate::jail::install(api) {
        crate::text::say(&format!("error: {e}"));
        std::process::exit(1);
    }
}

/// Logs go to stderr, filtered by RUST_LOG (default: warnings).
pub fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_writer(crate::text::log_line)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .try_init();
}

/// bench-core's runner with the given arguments. Returns the exit code.
#[cfg(feature = "middleware")]
pub fn core_main(args: args::RunnerArgs) -> i32 {
    // Before any connection opens SQLite: its own allocations are counted with the rest.
    crate::measure::sqlite_malloc::count(rusqlite::ffi::sqlite3_config);
    {
        use rusqlite::ffi;
        jail_or_exit(crate::sqlite_vfs_api!(ffi));
    }
    let env = |timer_ns: f64, plan: &crate::workload::Plan| {
        let mut env =
            crate::protocol::env::collect(crate::backends::raw::sqlite_version(), timer_ns);
        if let Some(c) = plan.knobs.count_if(&crate::catalog::CONCURRENCY) {
            env.settings
                .insert("pool".into(), format!("max_size={c}").into());
        }
        env.settings.insert(
            "sqlite settings".into(),
            crate::settings::SqliteSettings::from_knobs(&plan.knobs)
                .describe()
                .into(),
        );
        env
    };
    serve(&args, crate::workloads::CORE, &env)
}

#[cfg(test)]
mod tests {
    use super::{PairedGroup, paired_groups};
    use crate::catalog::Harness;

    #[test]
    fn quick_shortens_a_scenario_unless_its_duration_is_set() {
        use clap::Parser;
        let duration = |argv: &[&str]| {
            let mut a = vec!["bench-runner"];
            a.extend_from_slice(argv);
            let plan = super::RunnerArgs::try_parse_from(a)
                .unwrap()
                .plan(None)
                .unwrap();
            plan.knobs.get("duration").map(|v| v.to_string())
        };
        assert_eq!(
            duration(&["async_contention", "--quick"]).as_deref(),
            Some("2")
        );
        assert_eq!(
            duration(&["async_contention", "--quick", "--knob", "duration=5"]).as_deref(),
            Some("5")
        );
        assert_eq!(duration(&["async_contention"]).as_deref(), Some("10"));
        assert_eq!(duration(&["single_row_lookup", "--quick"]), None);
    }

    #[test]
    fn a_time_for_pattern_gives_the_benches_it_selects_their_own_time() {
        use clap::Parser;
        let parse = |argv: &[&str]| {
            let mut a = vec!["bench-runner", "key_value"];
            a.extend_from_slice(argv);
            super::RunnerArgs::try_parse_from(a).unwrap()
        };
        let times = |argv: &[&str]| {
            parse(argv)
                .plan(None)
                .map(|p| {
                    let mut t: Vec<(String, f64)> = p
                        .budget
                        .times
                        .into_iter()
                        .map(|(k, v)| (k.into_raw(), v))
                        .collect();
                    t.sort_by(|a, b| a.0.cmp(&b.0));
                    (p.budget.time_s, t)
                })
                .map_err(|e| e.to_string())
        };
        // A pattern selects as --bench does; only the plan's benches take it; the last wins.
        let (time, t) = times(&[
            "--bench",
            "bulk_put/memory",
            "--bench",
            "bulk_get/memory",
            "--bench",
            "single_get_100b/memory",
            "--time-for",
            "^bulk_=10",
            "--time-for",
            "bulk_get/memory=4",
        ])
        .unwrap();
        assert_eq!(time, 2.0);
        assert_eq!(
            t,
            [
                ("bulk_get/memory".to_string(), 4.0),
                ("bulk_put/memory".to_string(), 10.0)
            ]
        );
        assert_eq!(times(&[]).unwrap().1, []);
        // A pattern that selects nothing, or text that is not PATTERN=SECONDS, is refused.
        let e = times(&["--time-for", "no_such_bench_anywhere=3"]).unwrap_err();
        assert!(e.contains("no_such_bench_anywhere"), "{e}");
        for bad in ["bulk_put", "=3", "bulk_put=-1", "bulk_put=x"] {
            let e = times(&["--time-for", bad]).unwrap_err();
            assert!(
                e.contains(&format!("{bad:?}")) && e.contains("--time-for"),
                "{e}"
            );
        }
        // Each of several runner processes takes its share, as of --time.
        let a = parse(&["--time", "4", "--time-for", "^bulk_=10"]);
        let t = crate::workloads::find("key_value").unwrap();
        let whole = super::args::budget_for(
            &a.session.budget,
            t,
            &[t.spec("bulk_put/rusqlite").unwrap()],
        )
        .unwrap();
        let per = super::args::process_share(&whole, 4);
        assert_eq!(per.times.values().copied().collect::<Vec<_>>(), [2.5]);
        assert_eq!(per.time_s, 1.0);
        // The least samples: a quarter, but the six a paired ratio needs; the most as many.
        assert_eq!((per.min_samples, per.max_samples), (6, 25));
        assert_eq!(per.warmup_s, 0.1);
    }

    #[test]
    fn bench_patterns_plan_each_bench_once_and_only_the_harness_that_runs_it() {
        use clap::Parser;
        let plan = |h: Option<Harness>, benches: &[&str]| {
            let mut argv = vec!["bench-runner", "key_value"];
            for b in benches {
                argv.extend(["--bench", b]);
            }
            super::RunnerArgs::try_parse_from(argv)
                .unwrap()
                .plan(h)
                .map(|p| p.benches.iter().map(|b| b.name).collect::<Vec<_>>())
                .map_err(|e| e.to_string())
        };
        // Two patterns that both select a bench: it runs once, where it first came.
        assert_eq!(
            plan(
                None,
                &[
                    "^single_get_100b/(memory|rusqlite)$",
                    "single_get_100b/memory",
                    "^bulk_get/m.*/spin"
                ]
            ),
            Ok(vec![
                "single_get_100b/memory",
                "single_get_100b/rusqlite",
                "bulk_get/middleware/spin"
            ])
        );
        // A runner of one harness keeps its own of what a pattern selects...
        let core = plan(Some(Harness::Core), &["^bulk_get/(sqlx_sqlite|memory)$"]);
        assert_eq!(core, Ok(vec!["bulk_get/memory"]));
        let every = plan(None, &["^bulk_get/(sqlx_sqlite|memory)$"]).unwrap();
        assert_eq!(every, ["bulk_get/memory", "bulk_get/sqlx_sqlite"]);
        // ...and a pattern of nothing but another harness's benches is that error.
        let e = plan(Some(Harness::Core), &["bulk_get/sqlx"]).unwrap_err();
        assert!(e.contains("\"bulk_get/sqlx_sqlite\" is run by the"), "{e}");
        let e = plan(None, &["nothing_here"]).unwrap_err();
        assert!(
            e.starts_with("--bench \"nothing_here\" selects nothing"),
            "{e}"
        );
    }

    /// `(turns, reports)` of each group.
    fn groups(baselines: &[Option<usize>], size: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
        paired_groups(baselines, size)
            .into_iter()
            .map(|PairedGroup { turns, reports }| (turns, reports))
            .collect()
    }

    #[test]
    fn paired_groups_hold_their_size_beside_the_baselines_they_need() {
        // Bench 0 is everyone's baseline; five benches in groups of two. The baseline reports
        // in its first group only.
        let one = [None, Some(0), Some(0), Some(0), Some(0), Some(0)];
        assert_eq!(
            groups(&one, 2),
            vec![
                (vec![0, 1, 2], vec![0, 1, 2]),
                (vec![0, 3, 4], vec![3, 4]),
                (vec![0, 5], vec![5]),
            ]
        );
        // A group as large as the run: every bench at once, as without groups.
        let all: Vec<usize> = (0..6).collect();
        assert_eq!(groups(&one, 6), vec![(all.clone(), all)]);
        // Two baselines (a case measured against another case): each group takes the ones
        // its members need. Bench 1 has a ratio of its own (against 0) and is bench 2's
        // and 5's baseline: it reports in its own group, and takes turns in bench 5's
        // without reporting there. Bench 4 has no baseline in the run and is measured too.
        let two = [None, Some(0), Some(1), Some(0), None, Some(1)];
        assert_eq!(
            groups(&two, 2),
            vec![
                (vec![0, 1, 2], vec![0, 1, 2]),
                (vec![0, 3, 4], vec![3, 4]),
                (vec![1, 5], vec![5]),
            ]
        );
        // A bench taking turns as a baseline before its own group reports in its own group.
        let ahead = [None, Some(3), Some(0), Some(0)];
        assert_eq!(
            groups(&ahead, 1),
            vec![
                (vec![1, 3], vec![1]),
                (vec![0, 2], vec![0, 2]),
                (vec![0, 3], vec![3]),
            ]
        );
        assert!(groups(&[], 8).is_empty());
        // A size of 0 is taken as 1.
        assert_eq!(groups(&[None, Some(0)], 0), vec![(vec![0, 1], vec![0, 1])]);
    }
}
