//! Everything `run` checks and plans before anything starts: outputs writable, baselines
//! there, the sweep and repeats within bounds, the interleaved rounds, and one runner request
//! per run. Bad input is an [`Error::Input`] naming the value and what is allowed.

use std::path::PathBuf;

use bench_core::compare::Settings;
use bench_core::knobs::Knobs;
use bench_core::protocol::results::RunRecord;
use bench_core::service::args::{RunnerArgs, Sweep};
use bench_core::workload::Plan;

use super::args::{Error, Format, RunArgs, Side, env_pad};
use crate::messages::{RunRequest, RunSettings};

/// The most runs `--repeat` takes.
pub const MAX_REPEAT: usize = 100;

/// The most runs one `run` command makes (set-ups of a sweep times repeats).
const MAX_RUNS: usize = 200;

/// What a checked command will run, and against what.
pub struct Planned {
    pub verdict_settings: Settings,
    pub baselines_dir: PathBuf,
    /// Runs read from a Criterion folder, shown after the live ones.
    pub imported: Vec<RunRecord>,
    pub against: Option<crate::baseline::Baseline>,
    pub sweep: Sweep,
    pub repeat: usize,
    /// Interleaved rounds: how many, and the baseline's set-up (knobs, trace).
    pub interleave: Option<(usize, (Knobs, bool))>,
    /// Each run in order: its plan, request, repeat or round, and side.
    pub runs: Vec<(Plan, RunRequest, usize, Side)>,
    /// What the `--bench` patterns selected, said before anything runs (none when every
    /// `--bench` was a bench's exact name).
    pub selected: Option<String>,
}

fn repeat_count(text: &str) -> Result<usize, String> {
    count_in(text, "--repeat", 1)
}

/// A whole number from `low` to [`MAX_REPEAT`] given to `flag`.
fn count_in(text: &str, flag: &str, low: usize) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (low..=MAX_REPEAT).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid value {text:?} for {flag}: expected a whole number (allowed: {low}..={MAX_REPEAT})"
        )),
    }
}

/// Interleaved rounds: how many, and the baseline's set-up (knobs, trace).
type Interleave = Option<(usize, (Knobs, bool))>;

/// Each run in order: its plan, request, repeat or round, and side.
type Runs = Vec<(Plan, RunRequest, usize, Side)>;

/// Checks the command and plans its runs; nothing has started when it returns.
pub fn plan(args: &RunArgs) -> Result<Planned, Error> {
    check_settings_and_outputs(args)?;
    // Baselines are checked before anything runs: a bad name or a missing baseline.
    let verdict_settings = args
        .verdicts
        .settings()
        .map_err(|e| Error::Input(e.to_string()))?;
    let baselines_dir = args.verdicts.dir(&args.session.cache_dir());
    let (imported, against) = check_inputs(args, &baselines_dir)?;
    let sweep = bench_core::workloads::find(&args.target)
        .map_err(|e| e.to_string())
        .and_then(|t| args.session.sweep(t).map_err(|e| e.to_string()));
    let (sweep, repeat) = match (sweep, repeat_count(&args.repeat)) {
        (Ok(s), Ok(r)) => (s, r),
        (Err(e), _) | (_, Err(e)) => {
            return Err(Error::Input(e.to_string()));
        }
    };
    let runs = sweep.variants.len().max(1) * repeat;
    if runs > MAX_RUNS {
        return Err(Error::Input(format!(
            "{} set-ups x {repeat} repeats make {runs} runs (allowed: at most {MAX_RUNS} in one command)",
            sweep.variants.len().max(1)
        )));
    }
    let interleave = interleave_of(args, repeat, &sweep, against.as_ref())?;
    let planned = runs_of(args, &sweep, repeat, &interleave)?;
    let selected = planned
        .first()
        .and_then(|(plan, _, _, _)| selected(&args.benches, plan));
    Ok(Planned {
        selected,
        verdict_settings,
        baselines_dir,
        imported,
        against,
        sweep,
        repeat,
        interleave,
        runs: planned,
    })
}

/// The environment's settings, the store's place, the machine's and the outputs' (each file
/// writable, the HTML report's folder, the dataset cache): checked before anything runs.
fn check_settings_and_outputs(args: &RunArgs) -> Result<(), Error> {
    // Settings of the environment, each through its one parser, before anything starts: a
    // value refused is named by its variable (a flag given wins over its variable).
    bench_core::vars::check_environment().map_err(|e| Error::Input(e.to_string()))?;
    args.store
        .check_location()
        .map_err(|e| Error::Input(e.into()))?;
    args.machine.keep_cpus_awake().map_err(Error::Input)?;
    if args.format == Format::Jsonl && args.output.is_some() {
        return Err(Error::Input(
            "--output takes the table, markdown, json or csv format; jsonl is the live event stream on stdout".into(),
        ));
    }
    for (_, p) in args.exports() {
        if let Err(e) = crate::files::check_writable(p) {
            return Err(Error::Input(e.to_string()));
        }
    }
    // The HTML report's folder: made by the run if its parent can take it.
    if let Some(d) = &args.export_html {
        let checked = if d.is_dir() {
            crate::files::check_writable(&d.join("index.html"))
        } else if d.exists() {
            Err(format!(
                "cannot write the HTML report into {}: it is a file, not a folder",
                d.display()
            ))
        } else {
            crate::files::check_writable(d)
        };
        checked.map_err(Error::Input)?;
    }
    if let Err(e) = bench_core::dataset::ensure_cache_dir(&args.session.cache_dir()) {
        return Err(Error::Input(e.to_string()));
    }
    Ok(())
}

/// The command's inputs, checked and read before anything runs: a baseline to save (its
/// name and file), a Criterion folder to import, the baseline to compare against, the
/// flamegraph folder, the script target's files.
fn check_inputs(
    args: &RunArgs,
    baselines_dir: &std::path::Path,
) -> Result<(Vec<RunRecord>, Option<crate::baseline::Baseline>), Error> {
    let baselines_dir = baselines_dir.to_path_buf();
    if let Some(Err(e)) = args.save_baseline.as_deref().map(|name| {
        crate::baseline::check_name(name)?;
        std::fs::create_dir_all(&baselines_dir)
            .map_err(|e| format!("cannot create {}: {e}", baselines_dir.display()))?;
        crate::files::check_writable(&crate::baseline::path(&baselines_dir, name))
    }) {
        return Err(Error::Input(e.to_string()));
    }
    let imported = match args
        .import_criterion
        .as_deref()
        .map(crate::import::criterion)
    {
        Some(Ok(runs)) => runs,
        Some(Err(e)) => {
            return Err(Error::Input(e.to_string()));
        }
        None => Vec::new(),
    };
    let against = match args
        .baseline
        .as_deref()
        .map(|b| crate::baseline::load(&baselines_dir, b))
    {
        Some(Ok(b)) => Some(b),
        Some(Err(e)) => {
            return Err(Error::Input(e.to_string()));
        }
        None => None,
    };
    if let Some(dir) = &args.flamegraph {
        if let Err(e) = crate::profile::check() {
            return Err(Error::Input(e.to_string()));
        }
        if let Err(e) = std::fs::create_dir_all(dir) {
            return Err(Error::Input(format!(
                "cannot create the flamegraph folder {}: {e}",
                dir.display()
            )));
        }
    }
    // The script target's files and database, checked before anything runs; other targets
    // take none of them.
    let script = &args.session.script;
    if args.target == bench_core::workloads::script::NAME {
        if let Err(e) = bench_core::workloads::script::check_and_judge(script) {
            return Err(Error::Input(e.to_string()));
        }
    } else if !script.is_empty() {
        return Err(Error::Input(format!(
            "--script, -D, --db and --init are the script target's; {} takes none of them",
            args.target
        )));
    }
    Ok((imported, against))
}

/// Interleaved rounds (`--interleave`): the baseline's one set-up against this run's one.
fn interleave_of(
    args: &RunArgs,
    repeat: usize,
    sweep: &Sweep,
    against: Option<&crate::baseline::Baseline>,
) -> Result<Interleave, Error> {
    Ok(match args.interleave.as_deref() {
        None => None,
        Some(text) => {
            let checked = count_in(text, "--interleave", 2).and_then(|rounds| {
                if repeat > 1 {
                    return Err(format!(
                        "--interleave {rounds} already runs each side {rounds} times: leave out --repeat {repeat}"
                    ));
                }
                if sweep.variants.len() > 1 {
                    return Err(format!(
                        "--interleave compares one set-up with the baseline's; this run sweeps {} ({} values): run each value on its own",
                        sweep.knobs.join(", "),
                        sweep.variants.len()
                    ));
                }
                let b = against.expect("clap requires --baseline");
                let target = bench_core::workloads::find(&args.target)
                    .map(|t| t.name)
                    .unwrap_or_default();
                Ok((rounds, crate::baseline::setup_of(b, target)?))
            });
            match checked {
                Ok(c) => Some(c),
                Err(e) => {
                    return Err(Error::Input(e.to_string()));
                }
            }
        }
    })
}

/// Every run of the command in order, each planned (checked against the catalog) and made a
/// request: one per value of a sweep and repeat, or both sides of each interleaved round.
fn runs_of(
    args: &RunArgs,
    sweep: &Sweep,
    repeat: usize,
    interleave: &Interleave,
) -> Result<Runs, Error> {
    // One run per value (or pair of values) of a sweep, else one run.
    let variants: Vec<RunArgs> = sweep
        .variants
        .iter()
        .map(|k| {
            let mut a = args.clone();
            a.session.knobs = k.clone();
            a
        })
        .collect();
    // Everything is checked here, before anything starts.
    let mut planned: Runs = Vec::new();
    for (i, a) in variants.iter().enumerate() {
        let runner_args = RunnerArgs {
            target: Some(a.target.clone()),
            request: None,
            benches: a.benches.clone(),
            session: a.session.clone(),
            run_id: None,
            alloc_stacks: None,
        };
        let plan = match runner_args.plan(None) {
            Ok(p) => p,
            Err(e) => {
                return Err(Error::Input(e.to_string()));
            }
        };
        let request = |id: String, knobs, trace, r| {
            let mut request = RunRequest::new(
                format!("{}-{}-{}", plan.target.name, std::process::id(), id),
                plan.target.name,
                plan.benches.iter().map(|b| b.name.to_string()).collect(),
                knobs,
                trace,
                &RunSettings::from_session(&a.session),
            );
            request.env = env_pad(r);
            request.profile = a.flamegraph.clone();
            // Interleaved rounds are fresh runner processes already, each round compared
            // with its partner: a round is one process.
            if interleave.is_some() {
                request.settings.processes = 1;
            }
            request
        };
        match interleave {
            None => {
                for r in 0..repeat {
                    let req = request(
                        format!("{}-{}", i + 1, r + 1),
                        plan.knobs.clone(),
                        plan.trace,
                        r,
                    );
                    planned.push((plan.clone(), req, r, Side::Current));
                }
            }
            // Round r runs both sides with the same environment, the baseline's first in
            // even rounds and second in odd ones, so a steady drift weighs on both alike.
            Some((rounds, (knobs, trace))) => {
                for r in 0..*rounds {
                    // Ids of one length: the runner's arguments take the same room.
                    let base = request(format!("base-{}", r + 1), knobs.clone(), *trace, r);
                    let cur = request(format!("this-{}", r + 1), plan.knobs.clone(), plan.trace, r);
                    let (first, second) = if r % 2 == 0 {
                        ((base, Side::Baseline), (cur, Side::Current))
                    } else {
                        ((cur, Side::Current), (base, Side::Baseline))
                    };
                    for (req, side) in [first, second] {
                        planned.push((plan.clone(), req, r, side));
                    }
                }
            }
        }
    }
    Ok(planned)
}

/// The line naming what `--bench` patterns selected, when one of them was not an exact name.
fn selected(patterns: &[String], plan: &Plan) -> Option<String> {
    let names: Vec<&str> = plan.benches.iter().map(|b| b.name).collect();
    if patterns.iter().all(|p| names.contains(&p.as_str())) {
        return None;
    }
    Some(format!(
        "--bench {} selects {} bench{}: {}",
        patterns
            .iter()
            .map(|p| format!("{p:?}"))
            .collect::<Vec<_>>()
            .join(" "),
        names.len(),
        if names.len() == 1 { "" } else { "es" },
        names.join(", ")
    ))
}
