//! The runner: measures the benches of one target and writes the event stream on stdout.
//! `bench-runner` and `benchscope runner` are this same entry point.

use std::io::Write;

use clap::Parser;

use crate::catalog::{self, BenchSpec, Harness, Target};
use crate::knobs::{self, Knobs};
use crate::protocol::{Budget, Emitter, Event, Start};

/// Measurement settings shared by every front end, with their bounds.
#[derive(Debug, Clone, clap::Args)]
pub struct BudgetArgs {
    /// Time budget of each bench's timed samples, in seconds.
    #[arg(
        long = "time",
        value_name = "SECONDS",
        default_value = "2",
        allow_hyphen_values = true
    )]
    pub time_s: String,
    /// Warm-up per bench, in seconds.
    #[arg(
        long = "warmup",
        value_name = "SECONDS",
        default_value = "0.3",
        allow_hyphen_values = true
    )]
    pub warmup_s: String,
    /// At most this many samples per bench.
    #[arg(
        long = "samples",
        value_name = "N",
        default_value = "100",
        allow_hyphen_values = true
    )]
    pub max_samples: String,
    /// At least this many samples per bench, even past the time budget.
    #[arg(
        long = "min-samples",
        value_name = "N",
        default_value = "10",
        allow_hyphen_values = true
    )]
    pub min_samples: String,
}

fn parse_seconds(name: &str, text: &str, min: f64, max: f64) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= min && v <= max => Ok(v),
        _ => Err(format!(
            "invalid value {text:?} for --{name}: expected seconds (allowed: {min}..={max})"
        )),
    }
}

fn parse_count(name: &str, text: &str, min: usize, max: usize) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(format!(
            "invalid value {text:?} for --{name}: expected a whole number (allowed: {min}..={max})"
        )),
    }
}

impl Default for BudgetArgs {
    fn default() -> Self {
        BudgetArgs {
            time_s: "2".into(),
            warmup_s: "0.3".into(),
            max_samples: "100".into(),
            min_samples: "10".into(),
        }
    }
}

impl BudgetArgs {
    pub fn resolve(&self) -> Result<Budget, String> {
        let b = Budget {
            time_s: parse_seconds("time", &self.time_s, 0.0, 3600.0)?,
            warmup_s: parse_seconds("warmup", &self.warmup_s, 0.0, 600.0)?,
            max_samples: parse_count("samples", &self.max_samples, 1, 1_000_000)?,
            min_samples: parse_count("min-samples", &self.min_samples, 1, 1_000_000)?,
        };
        if b.min_samples > b.max_samples {
            return Err(format!(
                "--min-samples {} is larger than --samples {} (allowed: min-samples <= samples)",
                b.min_samples, b.max_samples
            ));
        }
        Ok(b)
    }

    /// The same settings as command-line arguments, to pass on to a child runner.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "--time".into(),
            self.time_s.clone(),
            "--warmup".into(),
            self.warmup_s.clone(),
            "--samples".into(),
            self.max_samples.clone(),
            "--min-samples".into(),
            self.min_samples.clone(),
        ]
    }
}

/// Knob settings as flags. Values stay text until checked against the target's specs, so
/// that errors name the knob, the value and the allowed range.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct KnobArgs {
    /// Rows in the dataset (overrides BENCH_ROWS).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub rows: Option<String>,
    /// Operations per sample (overrides BENCH_LOOKUPS; falls back to BENCH_ROWS).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub lookups: Option<String>,
    /// Pool size / tasks (overrides BENCH_CONCURRENCY).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub concurrency: Option<String>,
    /// Any knob of the target, as NAME=VALUE (see `benchscope list`).
    #[arg(long = "knob", value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub knob: Vec<String>,
}

impl KnobArgs {
    pub fn overrides(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for (name, v) in [
            ("rows", &self.rows),
            ("lookups", &self.lookups),
            ("concurrency", &self.concurrency),
        ] {
            if let Some(v) = v {
                out.push((name.to_string(), v.clone()));
            }
        }
        for kv in &self.knob {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("invalid --knob {kv:?}: expected NAME=VALUE"))?;
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
        Ok(out)
    }

    /// Resolves against a target's knob specs and the process environment.
    pub fn resolve(&self, target: &Target) -> Result<Knobs, String> {
        knobs::resolve(target.knobs, &knobs::process_env, &self.overrides()?)
            .map_err(|e| e.to_string())
    }

    pub fn to_args(&self) -> Vec<String> {
        self.overrides()
            .unwrap_or_default()
            .into_iter()
            .flat_map(|(k, v)| ["--knob".to_string(), format!("{k}={v}")])
            .collect()
    }
}

/// What every front end and the runner accept: knobs, budget, tracing and the dataset cache.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SessionArgs {
    #[command(flatten)]
    pub knobs: KnobArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Report per-phase timings of the middleware path (also BENCH_TRACE=1).
    #[arg(long)]
    pub trace: bool,
    /// Dataset cache folder (default: BENCHSCOPE_CACHE_DIR, else ~/.cache/benchscope).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
    /// PostgreSQL for bulk_insert's `postgres` bench (skipped without one). Passed to runners
    /// through the environment, never on a command line.
    #[arg(
        long,
        value_name = "URL",
        env = "BENCHSCOPE_POSTGRES_URL",
        hide_env_values = true
    )]
    pub postgres_url: Option<String>,
}

impl SessionArgs {
    /// The PostgreSQL URL, if one is given and not empty.
    pub fn postgres_url(&self) -> Option<String> {
        self.postgres_url.clone().filter(|u| !u.trim().is_empty())
    }

    /// Tracing asked for by flag or by BENCH_TRACE.
    pub fn trace(&self) -> bool {
        self.trace || trace_from_env()
    }
}

#[derive(Debug, Clone, Parser)]
#[command(
    name = "bench-runner",
    about = "Measures one target's benches and writes benchscope's event stream (JSON lines) on stdout"
)]
pub struct RunnerArgs {
    /// Target to run (see `benchscope list`).
    pub target: String,
    /// Benches to run (default: every bench of the target this harness implements).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Identifier of this run, echoed in the start event.
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
}

/// BENCH_TRACE=1 (or true/yes/on) turns tracing on.
pub fn trace_from_env() -> bool {
    std::env::var("BENCH_TRACE")
        .map(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
        .unwrap_or(false)
}

/// Everything checked before anything starts: target, benches, knobs, budget.
pub struct Plan {
    pub target: &'static Target,
    pub benches: Vec<&'static BenchSpec>,
    pub knobs: Knobs,
    pub budget: Budget,
    pub trace: bool,
}

impl RunnerArgs {
    /// Checks everything before anything starts. With `Some(harness)`, the plan holds only
    /// that harness's benches (and naming another's is an error); with `None`, every harness's.
    pub fn plan(&self, harness: Option<Harness>) -> Result<Plan, String> {
        let target = catalog::target(&self.target).map_err(|e| e.to_string())?;
        let mine = |b: &BenchSpec| harness.is_none_or(|h| b.harness == h);
        let benches = if self.benches.is_empty() {
            target.benches.iter().filter(|b| mine(b)).collect()
        } else {
            let mut v = Vec::new();
            for name in &self.benches {
                let spec = target.bench(name).map_err(|e| e.to_string())?;
                if !mine(spec) {
                    return Err(format!(
                        "bench {name:?} is run by the {:?} harness, not this one",
                        spec.harness
                    ));
                }
                v.push(spec);
            }
            v
        };
        Ok(Plan {
            target,
            benches,
            knobs: self.session.knobs.resolve(target)?,
            budget: self.session.budget.resolve()?,
            trace: self.session.trace(),
        })
    }
}

/// A harness's work once the plan is checked: prepare the dataset, run the benches.
pub type Body<'a> = dyn FnMut(&Plan, &mut dyn FnMut(Event)) -> Result<(), String> + 'a;

/// How a harness prepares a dataset file: `(cache dir, key, on_build)` to a ready file.
pub type Ensure<'a> = dyn Fn(
        &std::path::Path,
        &crate::dataset::DatasetKey,
        &mut dyn FnMut(&std::path::Path),
    ) -> Result<crate::dataset::DatasetReady, String>
    + 'a;

/// What a harness hands to [`serve`]: its name, how to describe its environment, and the body
/// that prepares the dataset and runs the benches.
pub struct Harnessed<'a> {
    pub harness: Harness,
    /// The environment, given the calibrated timer cost in ns.
    pub env: &'a dyn Fn(f64, &Plan) -> crate::protocol::RunEnv,
    pub body: &'a mut Body<'a>,
}

/// The runner protocol around a harness: checks the arguments (exit 2 with an error event if
/// bad), writes `start`, runs the body, and ends with `done` (exit 0) or an error (exit 1).
pub fn serve(args: &RunnerArgs, h: Harnessed<'_>) -> i32 {
    let stdout = std::io::stdout();
    let mut emitter = Emitter::new(stdout.lock());
    let mut emit = |e: Event| {
        if emitter.emit(&e).is_err() {
            // The reader went away: nothing left to report to.
            std::process::exit(3);
        }
    };
    let plan = match args.plan(Some(h.harness)) {
        Ok(p) => p,
        Err(message) => {
            emit(Event::Error {
                bench: None,
                message: message.clone(),
            });
            eprintln!("error: {message}");
            return 2;
        }
    };
    let env = (h.env)(crate::trace::calibrate_timer(), &plan);
    if env.is_debug() {
        tracing::warn!("{}", crate::protocol::DEBUG_WARNING);
    }
    emit(Event::Start(Start {
        run: args
            .run_id
            .clone()
            .unwrap_or_else(|| format!("{}-{}", plan.target.name, std::process::id())),
        target: plan.target.name.to_string(),
        benches: plan.benches.iter().map(|b| b.name.to_string()).collect(),
        harness: format!("{:?}", h.harness).to_lowercase(),
        knobs: plan.knobs.clone(),
        seed: plan.target.seed,
        trace: plan.trace,
        budget: plan.budget,
        env,
    }));
    let result = (h.body)(&plan, &mut emit);
    let _ = std::io::stderr().flush();
    match result {
        Ok(()) => {
            emit(Event::Done);
            0
        }
        Err(message) => {
            emit(Event::Error {
                bench: None,
                message: message.clone(),
            });
            eprintln!("error: {message}");
            1
        }
    }
}

/// Prepares the plan's dataset with `ensure` (any driver), reporting it as `dataset` events.
pub fn dataset_events(
    args: &RunnerArgs,
    plan: &Plan,
    emit: &mut dyn FnMut(Event),
    ensure: &Ensure<'_>,
) -> Result<crate::dataset::DatasetReady, String> {
    use crate::dataset::{self, DatasetKey};
    use crate::protocol::DatasetStatus;
    let rows = plan.knobs.value("rows");
    let key = DatasetKey {
        workload: plan.target.name.to_string(),
        rows,
        seed: plan.target.seed,
    };
    let dir = args
        .session
        .cache_dir
        .clone()
        .unwrap_or_else(dataset::default_cache_dir);
    let ready = ensure(&dir, &key, &mut |path| {
        emit(Event::Dataset {
            status: DatasetStatus::Building,
            rows,
            path: path.display().to_string(),
            build_ms: None,
        })
    })?;
    emit(Event::Dataset {
        status: ready.status,
        rows,
        path: ready.path.display().to_string(),
        build_ms: ready.build_ms,
    });
    Ok(ready)
}

/// The iteration closure of one bench, as the sampling loop runs it.
pub type IterFn<'a> = Box<
    dyn FnMut(&mut crate::stats::LatencyHistogram) -> Result<crate::measure::Iteration, String>
        + 'a,
>;

/// Runs every bench of the plan in order: `bench_start`, its samples and summary, or an
/// `error` for that bench alone (the others go on).
pub fn run_benches<'a>(
    plan: &Plan,
    ops: u64,
    emit: &mut dyn FnMut(Event),
    iteration: &mut dyn FnMut(&BenchSpec) -> Result<IterFn<'a>, String>,
) {
    run_benches_or_skip(plan, ops, emit, &|_| None, iteration)
}

/// [`run_benches`], where `skip` may say why a bench cannot run here (reported as `skipped`,
/// which is not a failure).
pub fn run_benches_or_skip<'a>(
    plan: &Plan,
    ops: u64,
    emit: &mut dyn FnMut(Event),
    skip: &dyn Fn(&BenchSpec) -> Option<String>,
    iteration: &mut dyn FnMut(&BenchSpec) -> Result<IterFn<'a>, String>,
) {
    for spec in &plan.benches {
        if let Some(reason) = skip(spec) {
            emit(Event::Skipped {
                bench: spec.name.to_string(),
                reason,
            });
            continue;
        }
        emit(Event::BenchStart {
            bench: spec.name.to_string(),
            backend: spec.backend.to_string(),
            strategy: spec.strategy.map(str::to_string),
            ops,
        });
        let result = iteration(spec)
            .and_then(|mut it| crate::measure::run(&plan.budget, spec.name, ops, emit, &mut *it));
        if let Err(message) = result {
            tracing::error!(bench = spec.name, %message, "bench failed");
            emit(Event::Error {
                bench: Some(spec.name.to_string()),
                message,
            });
        }
    }
}

/// Runs bench-core's runner with the process arguments. Returns the exit code.
#[cfg(feature = "middleware")]
pub fn main_with(args: RunnerArgs) -> i32 {
    use crate::workloads::bulk_insert as bulk;
    use crate::workloads::multithread as mt;
    use crate::workloads::single_row_lookup as srl;
    let env = |timer_ns: f64, plan: &Plan| {
        let mut env = crate::env::collect(crate::backends::raw::sqlite_version(), timer_ns);
        env.settings.insert(
            "pool".into(),
            format!("max_size={}", plan.knobs.value("concurrency")),
        );
        env
    };
    let mut body = |plan: &Plan, emit: &mut dyn FnMut(Event)| -> Result<(), String> {
        if plan.target.name == crate::catalog::BULK_INSERT.name {
            // No shared dataset: each bench inserts the generated rows into its own scratch file.
            let rows = plan.knobs.value("rows");
            let dir = args
                .session
                .cache_dir
                .clone()
                .unwrap_or_else(crate::dataset::default_cache_dir);
            let ctx = bulk::Ctx::new(dir, crate::bulk::rows(rows, plan.target.seed), &plan.knobs)?;
            run_benches(plan, rows, emit, &mut |spec| bulk::iteration(spec, &ctx));
            return Ok(());
        }
        let ready = dataset_events(&args, plan, emit, &crate::dataset::ensure)?;
        let ids = crate::dataset::lookup_ids(
            plan.knobs.value("rows"),
            plan.target.seed,
            plan.knobs.value("lookups"),
        );
        let ops = ids.len() as u64;
        if plan.target.name == crate::catalog::MULTITHREAD_POOL_CHECKOUT.name {
            let ctx = mt::Ctx::new(ready.path.clone(), ids, &plan.knobs)?;
            run_benches(plan, ops, emit, &mut |spec| mt::iteration(spec, &ctx));
        } else {
            let ctx = srl::Ctx::new(ready.path.clone(), ids, &plan.knobs, plan.trace)?;
            run_benches(plan, ops, emit, &mut |spec| srl::iteration(spec, &ctx));
        }
        Ok(())
    };
    serve(
        &args,
        Harnessed {
            harness: Harness::Core,
            env: &env,
            body: &mut body,
        },
    )
}

/// Logs go to stderr, filtered by RUST_LOG (default: warnings).
pub fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .try_init();
}
