//! The settings every front end and the runner accept on the command line: knobs, the
//! measurement budget, tracing, the dataset cache and PostgreSQL. Values stay text until they
//! are checked, so that errors name the flag or knob, the value and what is allowed.

use std::path::PathBuf;

use clap::Parser;

pub use super::budget::{
    MAX_GROUP, MAX_SAMPLES, MAX_TIME_S, MAX_WARMUP_S, PROCESS_MIN_SAMPLES, process_share,
};
use crate::catalog::Target;
use crate::error::BenchError;
use crate::knobs::{self, Knobs};
use crate::protocol::Budget;

/// Measurement settings shared by every front end, with their bounds.
#[derive(Debug, Clone, PartialEq, clap::Args)]
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
    /// A quick look, as Criterion's `--quick`: 0.05 s of warm-up and 0.2 s of samples per
    /// bench (at least 5), and a scenario (async_contention) 2 s unless its duration is set,
    /// over its study's quick matrix (1 and 10 databases at 100 and 1000 ms) unless those
    /// knobs are set: enough to see that every bench runs and about where it lands, not to tell close figures
    /// apart (the intervals say how wide they are).
    #[arg(long, conflicts_with_all = ["time_s", "warmup_s", "min_samples"])]
    pub quick: bool,
    /// Paired rounds: the benches take turns, one sample each per round, in one runner; each
    /// bench's ratio to the baseline bench is the median of its per-round ratios. The front
    /// ends (`run`, the explorer) pair by default; a runner pairs only when told.
    #[arg(long)]
    pub paired: bool,
    /// One bench after another instead of paired rounds (the front ends' default is paired).
    #[arg(long, conflicts_with = "paired")]
    pub unpaired: bool,
    /// Paired rounds take at most this many benches at a time besides the benches their
    /// ratios are taken against (which take turns in every group); each group is set up,
    /// measured and dropped before the next, so that fewer threads share the CPUs.
    #[arg(
        long = "paired-group",
        value_name = "N",
        default_value = DEFAULT_PAIRED_GROUP,
        allow_hyphen_values = true
    )]
    pub paired_group: String,
    /// Runner processes to measure each bench in, one after another, each with its own
    /// warm-up and a share of the time (`--time`, `--warmup` and `--samples` are the run's
    /// whole): a bench's figure is the geometric mean of its processes' and its 95% interval
    /// says where a repeat of the run lands, from the processes' spread (a hand-off to another
    /// thread costs more in one process than the next; one process's samples cannot see that).
    /// By default, when after two processes every bench's processes agreed within their own
    /// intervals, the rest are not run; a count given here is run whole.
    /// Default 4; 1 with --quick, profiled (--flamegraph), for async_contention's scenario and in each round of --interleave (a round is a fresh process already).
    /// BENCHSCOPE_PROCESSES sets the same when the flag is not given.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub processes: Option<String>,
    /// A time of its own for the benches a pattern selects (an exact name, else a regular
    /// expression, as --bench selects), as Criterion's `measurement_time` per group:
    /// PATTERN=SECONDS, repeatable (the last that selects a bench wins); the others keep
    /// --time. In paired rounds a group's benches take turns for the sum of their times.
    #[arg(long = "time-for", value_name = "PATTERN=SECONDS")]
    pub time_for: Vec<String>,
}

/// Runner processes per run, unless `--processes` says otherwise: measured on a 2-vCPU VM,
/// the intervals of four processes held the next run's ratio for every bench of the lookup
/// (docs/src/numbers.md, "Processes").
pub const DEFAULT_PROCESSES: usize = 4;

/// The most `--processes` takes.
pub const MAX_PROCESSES: usize = crate::vars::MAX_PROCESSES;

/// `--quick`'s time, warm-up and least samples per bench.
const QUICK: (&str, &str, &str) = ("0.2", "0.05", "5");

/// Paired rounds' benches at a time, by default: measured on a 2-vCPU VM, the ratios of
/// benches that hand a query to another thread reproduced best in groups of eight beside
/// their baseline (docs/src/numbers.md, "Where runners run").
pub const DEFAULT_PAIRED_GROUP: &str = "8";

fn parse_seconds(name: &str, text: &str, min: f64, max: f64) -> Result<f64, BenchError> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= min && v <= max => Ok(v),
        _ => Err(BenchError::Invalid(format!(
            "invalid value {text:?} for --{name}: expected seconds (allowed: {min}..={max})"
        ))),
    }
}

fn parse_count(name: &str, text: &str, min: usize, max: usize) -> Result<usize, BenchError> {
    match text.trim().parse::<usize>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(BenchError::Invalid(format!(
            "invalid value {text:?} for --{name}: expected a whole number (allowed: {min}..={max})"
        ))),
    }
}

impl Default for BudgetArgs {
    fn default() -> Self {
        BudgetArgs {
            time_s: "2".into(),
            warmup_s: "0.3".into(),
            max_samples: "100".into(),
            min_samples: "10".into(),
            quick: false,
            paired: false,
            unpaired: false,
            paired_group: DEFAULT_PAIRED_GROUP.into(),
            processes: None,
            time_for: Vec::new(),
        }
    }
}

impl BudgetArgs {
    /// A front end's reading: paired rounds unless `--unpaired` was given.
    pub fn pair_by_default(&mut self) {
        self.paired = !self.unpaired;
    }

    /// The time, warm-up and least samples asked for: `--quick`'s, else the flags'.
    fn times(&self) -> (&str, &str, &str) {
        if self.quick {
            QUICK
        } else {
            (&self.time_s, &self.warmup_s, &self.min_samples)
        }
    }

    pub fn resolve(&self) -> Result<Budget, BenchError> {
        self.processes()?;
        let (time, warmup, min) = self.times();
        let b = Budget {
            time_s: parse_seconds("time", time, 0.0, MAX_TIME_S)?,
            warmup_s: parse_seconds("warmup", warmup, 0.0, MAX_WARMUP_S)?,
            max_samples: parse_count("samples", &self.max_samples, 1, MAX_SAMPLES)?,
            min_samples: parse_count("min-samples", min, 1, MAX_SAMPLES)?,
            paired: self.paired,
            group: self.paired.then_some(parse_count(
                "paired-group",
                &self.paired_group,
                1,
                MAX_GROUP,
            )?),
            // One runner is one process; a front end that runs several says so in the start.
            processes: None,
            // Filled per bench by the plan, which knows the target's benches.
            times: Default::default(),
        };
        self.time_for()?;
        if b.min_samples > b.max_samples {
            return Err(BenchError::Invalid(format!(
                "--min-samples {} is larger than --samples {} (allowed: min-samples <= samples)",
                b.min_samples, b.max_samples
            )));
        }
        Ok(b)
    }

    /// Each `--time-for` as (pattern, seconds), in the order given.
    pub fn time_for(&self) -> Result<Vec<(String, f64)>, BenchError> {
        self.time_for
            .iter()
            .map(|text| {
                let (pattern, seconds) = text
                    .rsplit_once('=')
                    .filter(|(p, _)| !p.trim().is_empty())
                    .ok_or_else(|| {
                        BenchError::Invalid(format!(
                            "invalid value {text:?} for --time-for: expected PATTERN=SECONDS (a bench's name or a regular expression, then its seconds of samples)"
                        ))
                    })?;
                let s = parse_seconds("time-for", seconds, 0.0, MAX_TIME_S).map_err(|_| {
                    BenchError::Invalid(format!(
                        "invalid value {text:?} for --time-for: {seconds:?} is not seconds (allowed: 0..=3600)"
                    ))
                })?;
                Ok((pattern.trim().to_string(), s))
            })
            .collect()
    }

    /// The runner processes asked for: `--processes`, else 1 with `--quick` and
    /// [`DEFAULT_PROCESSES`] without.
    pub fn processes(&self) -> Result<usize, BenchError> {
        // `--processes`, else BENCHSCOPE_PROCESSES, through one parser.
        let asked = crate::vars::PROCESSES
            .resolve(self.processes.as_deref(), &crate::vars::process_env)
            .map_err(|e| BenchError::Invalid(e.to_string()))?;
        Ok(match asked {
            Some(n) => n,
            None if self.quick => 1,
            None => DEFAULT_PROCESSES,
        })
    }

    /// Whether a count of processes was asked for (`--processes` or BENCHSCOPE_PROCESSES): a
    /// count given is run whole.
    pub fn processes_given(&self) -> bool {
        crate::vars::PROCESSES
            .resolve(self.processes.as_deref(), &crate::vars::process_env)
            .is_ok_and(|p| p.is_some())
    }
}

/// The budget a run of `target`'s `benches` is given: the flags' (`--quick`'s times where
/// asked), and each bench a `--time-for` pattern selects its own time.
pub fn budget_for(
    args: &BudgetArgs,
    target: &Target,
    benches: &[&crate::catalog::BenchSpec],
) -> Result<Budget, BenchError> {
    let mut budget = args.resolve()?;
    for (pattern, seconds) in args.time_for()? {
        for b in target.select_for("--time-for", &pattern)? {
            if benches.iter().any(|p| p.name == b.name) {
                budget.times.insert(b.name.into(), seconds);
            }
        }
    }
    Ok(budget)
}

/// Knob settings as flags.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
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
    /// async_contention: databases (overrides BENCH_DATABASES).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub databases: Option<String>,
    /// async_contention: ms each writer holds its connection (overrides BENCH_WRITE_DELAY_MS).
    #[arg(long = "write-delay-ms", value_name = "MS", allow_hyphen_values = true)]
    pub write_delay_ms: Option<String>,
    /// script: clients replaying the scripts at once (overrides BENCH_CLIENTS).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub clients: Option<String>,
    /// script: transactions in one sample (overrides BENCH_TRANSACTIONS).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub transactions: Option<String>,
    /// Any knob of the target, as NAME=VALUE (see `benchscope list`).
    #[arg(long = "knob", value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub knob: Vec<String>,
}

impl KnobArgs {
    /// Every knob given, as (name, text), flags first.
    pub fn overrides(&self) -> Result<Vec<(String, String)>, BenchError> {
        let mut out = Vec::new();
        for (name, v) in [
            ("rows", &self.rows),
            ("lookups", &self.lookups),
            ("concurrency", &self.concurrency),
            ("databases", &self.databases),
            ("write_delay_ms", &self.write_delay_ms),
            ("clients", &self.clients),
            ("transactions", &self.transactions),
        ] {
            if let Some(v) = v {
                out.push((name.to_string(), v.clone()));
            }
        }
        for kv in &self.knob {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                BenchError::Invalid(format!("invalid --knob {kv:?}: expected NAME=VALUE"))
            })?;
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
        Ok(out)
    }

    /// Resolves against a target's knob specs and the process environment.
    pub fn resolve(&self, target: &Target) -> Result<Knobs, BenchError> {
        Ok(knobs::resolve(
            &target.knobs,
            &knobs::process_env,
            &self.overrides()?,
        )?)
    }

    pub fn to_args(&self) -> Vec<String> {
        self.overrides()
            .unwrap_or_default()
            .into_iter()
            .flat_map(|(k, v)| ["--knob".to_string(), format!("{k}={v}")])
            .collect()
    }

    /// The runs a list of values asks for: every knob may take a comma-separated list
    /// (`--rows 1000,10000`, `--knob locking_mode=normal,exclusive`); one list is a sweep, two
    /// make a matrix (every pair). Each value is checked like any knob value, before anything
    /// starts.
    pub fn sweep(&self, target: &Target) -> Result<Sweep, BenchError> {
        let overrides = self.overrides()?;
        let mut fixed = Vec::new();
        let mut lists: Vec<(&'static str, Vec<String>)> = Vec::new();
        for (name, text) in overrides {
            let spec = knobs::find(&target.knobs, &name)?;
            let values: Vec<String> = text.split(',').map(|v| v.trim().to_string()).collect();
            for v in &values {
                spec.parse(v)?;
            }
            if values.len() > 1 {
                lists.retain(|(n, _)| *n != spec.name);
                lists.push((spec.name, values));
            } else {
                fixed.push(format!("{}={}", spec.name, values[0]));
            }
        }
        if lists.len() > 2 {
            return Err(BenchError::Invalid(format!(
                "at most two knobs take lists of values (a matrix); {} do: {}",
                lists.len(),
                lists.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )));
        }
        let runs = lists
            .iter()
            .fold(1u64, |n, (_, v)| n.saturating_mul(v.len() as u64));
        if runs > MAX_SWEEP_RUNS {
            return Err(BenchError::Invalid(format!(
                "{} make {runs} runs (allowed: at most {MAX_SWEEP_RUNS} in one sweep or matrix; split it)",
                lists
                    .iter()
                    .map(|(n, v)| format!("{} values of {n}", v.len()))
                    .collect::<Vec<_>>()
                    .join(" x ")
            )));
        }
        let mut variants = vec![fixed];
        for (name, values) in &lists {
            variants = variants
                .into_iter()
                .flat_map(|base| {
                    values.iter().map(move |v| {
                        let mut k = base.clone();
                        k.push(format!("{name}={v}"));
                        k
                    })
                })
                .collect();
        }
        Ok(Sweep {
            knobs: lists.iter().map(|(n, _)| *n).collect(),
            variants: variants
                .into_iter()
                .map(|knob| KnobArgs {
                    knob,
                    ..Default::default()
                })
                .collect(),
        })
    }
}

/// The most runs one sweep or matrix may make (each is a runner process with its budget).
pub const MAX_SWEEP_RUNS: u64 = 100;

/// The runs of a sweep: which knobs vary, and the knob settings of each run.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub knobs: Vec<&'static str>,
    pub variants: Vec<KnobArgs>,
}

pub use crate::script::ScriptArgs;

impl ScriptArgs {
    /// The same, with every path absolute, for a runner (which may start in another folder).
    pub fn absolute(&self) -> ScriptArgs {
        let abs = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        ScriptArgs {
            scripts: self
                .scripts
                .iter()
                .map(|s| match crate::script::parse_script_arg(s) {
                    Ok((path, weight)) => {
                        format!("{}@{weight}", abs(path.as_ref()).display())
                    }
                    // Left as given, for the runner to name.
                    Err(_) => s.clone(),
                })
                .collect(),
            defines: self.defines.clone(),
            db: self.db.as_deref().map(abs),
            init: self.init.as_deref().map(abs),
        }
    }

    pub fn is_empty(&self) -> bool {
        self == &ScriptArgs::default()
    }
}

/// What every front end and the runner accept: knobs, budget, tracing and the dataset cache.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct SessionArgs {
    #[command(flatten)]
    pub knobs: KnobArgs,
    #[command(flatten)]
    pub script: ScriptArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Report per-phase timings of the middleware path (also BENCH_TRACE=1).
    #[arg(long)]
    pub trace: bool,
    /// Dataset cache folder (default: BENCHSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/benchscope,
    /// else ~/.cache/benchscope).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// PostgreSQL for the benches that need it (skipped without one); BENCHSCOPE_POSTGRES_URL
    /// when not given. Passed to runners through the environment, never on a command line.
    #[arg(long, value_name = "URL")]
    pub postgres_url: Option<crate::secret::PgUrl>,
    /// Set the target up as its source suite's own bench is (bulk_insert: 10 rows, as INSERT
    /// text; single_row_lookup: 1000 lookups a checkout; `list` names each target's), each
    /// knob that a flag, `--knob` or its environment variable sets keeping its value.
    #[arg(long)]
    pub suite: bool,
}

/// The variable that names PostgreSQL when `--postgres-url` is not given.
pub const POSTGRES_URL_VAR: &str = "BENCHSCOPE_POSTGRES_URL";

impl SessionArgs {
    /// The knobs asked for; under `--suite` the target's suite set-up, and under `--quick` its
    /// quick matrix (its source suite's quick mode), for each knob of them that no flag,
    /// `--knob` or environment variable sets.
    pub fn knobs_for(&self, target: &Target) -> Result<KnobArgs, BenchError> {
        let mut k = self.knobs.clone();
        if self.suite && target.suite.is_empty() {
            let with: Vec<&str> = crate::workloads::targets()
                .iter()
                .filter(|t| !t.suite.is_empty())
                .map(|t| t.name)
                .collect();
            return Err(BenchError::Invalid(format!(
                "--suite: {} has no source suite set-up to run; the targets with one: {}",
                target.name,
                with.join(", ")
            )));
        }
        let suite = target.suite.iter().filter(|_| self.suite);
        let quick = target.quick.iter().filter(|_| self.budget.quick);
        for q in suite.chain(quick) {
            let spec = knobs::find(&target.knobs, q.knob)?;
            if !self.sets(spec)?
                && !k
                    .knob
                    .iter()
                    .any(|s| s.split('=').next() == Some(spec.name))
            {
                k.knob.push(format!("{}={}", spec.name, q.values));
            }
        }
        Ok(k)
    }

    /// Whether a flag, `--knob` or the knob's environment variable sets `spec` (else its
    /// default, or what `--quick` gives it, holds).
    pub fn sets(&self, spec: &knobs::KnobSpec) -> Result<bool, BenchError> {
        Ok(self.knobs.overrides()?.iter().any(|(n, _)| n == spec.name)
            || spec.env.is_some_and(|e| std::env::var_os(e).is_some()))
    }

    /// The runs asked for ([`KnobArgs::sweep`] of [`SessionArgs::knobs_for`]).
    pub fn sweep(&self, target: &Target) -> Result<Sweep, BenchError> {
        self.knobs_for(target)?.sweep(target)
    }

    /// The PostgreSQL URL, if one is given and not empty.
    pub fn postgres_url(&self) -> Option<crate::secret::PgUrl> {
        // The variable read here, not by clap: a value that is not UTF-8 then fails the one
        // command that uses it, by the driver's error, not every command at its parse.
        self.postgres_url
            .clone()
            .or_else(|| {
                crate::vars::process_env(POSTGRES_URL_VAR).map(|v| crate::secret::PgUrl::parse(&v))
            })
            .filter(|u| !u.is_empty())
    }

    /// Tracing asked for by `--trace`, else by BENCH_TRACE (one parser: a value neither
    /// reads as is refused, naming the variable).
    pub fn trace(&self) -> Result<bool, BenchError> {
        crate::vars::TRACE
            .resolve(self.trace.then_some("1"), &crate::vars::process_env)
            .map(|t| t.unwrap_or(false))
            .map_err(|e| BenchError::Invalid(e.to_string()))
    }

    /// The dataset cache folder.
    pub fn cache_dir(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(crate::dataset::default_cache_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_is_a_short_budget_passed_on_as_such_and_not_mixed_with_its_flags() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["bench-runner", "single_row_lookup"];
            argv.extend_from_slice(extra);
            RunnerArgs::try_parse_from(argv).map(|a| a.session.budget)
        };
        let quick = parse(&["--quick", "--samples", "50"]).unwrap();
        let b = quick.resolve().unwrap();
        assert_eq!(
            (b.time_s, b.warmup_s, b.min_samples, b.max_samples),
            (0.2, 0.05, 5, 50)
        );
        // A child runner is given the same budget, typed, as its whole share.
        assert_eq!(process_share(&b, 1), b);
        let plain = parse(&[]).unwrap().resolve().unwrap();
        assert_eq!(
            (plain.time_s, plain.warmup_s, plain.min_samples),
            (2.0, 0.3, 10)
        );
        for flag in [["--time", "1"], ["--warmup", "1"], ["--min-samples", "3"]] {
            let e = parse(&[&["--quick"][..], &flag[..]].concat()).unwrap_err();
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ArgumentConflict,
                "{flag:?}"
            );
        }
    }

    #[test]
    fn lists_of_values_make_sweeps_and_matrices() {
        let t = crate::workloads::async_contention::spec();
        let args = KnobArgs {
            databases: Some("1,10,50".into()),
            knob: vec!["write_delay_ms=100,1000".into(), "duration=2".into()],
            ..Default::default()
        };
        let s = args.sweep(t).unwrap();
        assert_eq!(s.knobs, ["databases", "write_delay_ms"]);
        assert_eq!(s.variants.len(), 6);
        assert_eq!(
            s.variants[1].knob,
            ["duration=2", "databases=1", "write_delay_ms=1000"]
        );
        let one = KnobArgs::default().sweep(t).unwrap();
        assert_eq!((one.knobs.len(), one.variants.len()), (0, 1));
        let bad = KnobArgs {
            databases: Some("1,0".into()),
            ..Default::default()
        };
        assert_eq!(
            bad.sweep(t).unwrap_err().to_string(),
            "invalid value 0 for knob databases: out of range (allowed: 1..=1000)"
        );
        let three = KnobArgs {
            databases: Some("1,2".into()),
            knob: vec!["readers=1,2".into(), "workers=1,2".into()],
            ..Default::default()
        };
        assert!(
            three
                .sweep(t)
                .unwrap_err()
                .to_string()
                .starts_with("at most two knobs")
        );
    }

    #[test]
    fn quick_runs_the_suites_quick_matrix_where_nothing_sets_its_knobs() {
        let runs = |target: &str, extra: &[&str]| {
            let mut argv = vec!["bench-runner", target];
            argv.extend_from_slice(extra);
            let a = RunnerArgs::try_parse_from(argv).unwrap();
            let t = crate::workloads::find(target).unwrap();
            let s = a.session.sweep(t).unwrap();
            let v: Vec<Vec<String>> = s.variants.iter().map(|k| k.knob.clone()).collect();
            (s.knobs, v)
        };
        // The study's quick mode: 1 and 10 databases at 100 and 1000 ms.
        let (knobs, v) = runs("async_contention", &["--quick"]);
        assert_eq!(knobs, ["databases", "write_delay_ms"]);
        assert_eq!(
            v,
            [
                ["databases=1", "write_delay_ms=100"],
                ["databases=1", "write_delay_ms=1000"],
                ["databases=10", "write_delay_ms=100"],
                ["databases=10", "write_delay_ms=1000"],
            ]
        );
        // A knob the user sets keeps its value, by flag or --knob, one value or a list.
        let (knobs, v) = runs("async_contention", &["--quick", "--databases", "50"]);
        assert_eq!(knobs, ["write_delay_ms"]);
        assert_eq!(
            v,
            [
                ["databases=50", "write_delay_ms=100"],
                ["databases=50", "write_delay_ms=1000"],
            ]
        );
        let (knobs, v) = runs(
            "async_contention",
            &[
                "--quick",
                "--knob",
                "databases=2",
                "--write-delay-ms",
                "5,6",
            ],
        );
        assert_eq!(knobs, ["write_delay_ms"]);
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|k| k.contains(&"databases=2".to_string())));
        // Without --quick, the defaults; a target without a quick matrix, as asked.
        assert_eq!(runs("async_contention", &[]), (vec![], vec![vec![]]));
        assert_eq!(
            runs("single_row_lookup", &["--quick"]),
            (vec![], vec![vec![]])
        );
    }

    #[test]
    fn suite_sets_the_target_up_as_its_source_suite_where_nothing_sets_its_knobs() {
        let knobs = |target: &str, extra: &[&str]| {
            let mut argv = vec!["bench-runner", target];
            argv.extend_from_slice(extra);
            let a = RunnerArgs::try_parse_from(argv).unwrap();
            let t = crate::workloads::find(target).unwrap();
            a.session.knobs_for(t).map(|k| k.knob)
        };
        // The database_benchmark suite's bulk insert: 10 rows, as INSERT text.
        assert_eq!(
            knobs("bulk_insert", &["--suite"]).unwrap(),
            ["rows=10", "method=batch_text"]
        );
        // A knob the user sets keeps its value (by flag or by --knob).
        assert_eq!(
            knobs("bulk_insert", &["--suite", "--rows", "500"]).unwrap(),
            ["method=batch_text"]
        );
        assert_eq!(
            knobs("bulk_insert", &["--suite", "--knob", "method=prepared"]).unwrap(),
            ["method=prepared", "rows=10"]
        );
        // sql-middleware's lookup bench; and with --quick beside it.
        assert_eq!(
            knobs("single_row_lookup", &["--suite", "--quick"]).unwrap(),
            ["rows=1000", "lookups=1000", "lookups_per_checkout=1000"]
        );
        // Without --suite, as asked; a target without a suite set-up is refused, by name.
        assert!(knobs("bulk_insert", &[]).unwrap().is_empty());
        let e = knobs("key_value", &["--suite"]).unwrap_err().to_string();
        assert!(
            e.contains("--suite: key_value has no source suite set-up to run; the targets with one: single_row_lookup, bulk_insert")
                || e.contains("--suite: key_value has no source suite set-up to run; the targets with one: bulk_insert, single_row_lookup"),
            "{e}"
        );
    }
}

#[derive(Debug, Clone, Parser)]
#[command(
    name = "bench-runner",
    about = "Measures one target's benches and writes benchscope's event stream (JSON lines) on stdout"
)]
pub struct RunnerArgs {
    /// Target to run (see `benchscope list`).
    #[arg(required_unless_present = "request")]
    pub target: Option<String>,
    /// Read the whole run from FILE (`-`: stdin) as a front end writes it (a JSON run
    /// request: target, benches, every knob, the budget), instead of from flags.
    #[arg(long, value_name = "FILE", hide = true, conflicts_with_all = ["target", "benches", "run_id"])]
    pub request: Option<PathBuf>,
    /// Benches to run (repeatable): a bench's exact name, or else a regular expression matched
    /// anywhere in the names, as Criterion's filter is (`single_put`, `'^concurrent_reads_[48]/'`);
    /// a bench two of them select runs once. Default: every bench of the target this harness implements.
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Identifier of this run, echoed in the start event.
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Keep the call stack of every allocation its samples make, and write them to FILE as
    /// folded stacks (weighted by allocations) when the run ends: a profiled run's front end
    /// asks for it (where the allocations come from).
    #[arg(long, value_name = "FILE", hide = true)]
    pub alloc_stacks: Option<std::path::PathBuf>,
}
