//! `script`: your own workload. pgbench-style script files (`--script FILE[@WEIGHT]`, `-D`)
//! over your own SQLite database (`--db`, copied, never written), replayed with one seed
//! through each backend: per-transaction latency and transactions/s as each bench's figures,
//! every statement's latency and the rows each backend returned beside them (see
//! docs/scripts.md and [`crate::script`]).

/// The implementation (`core::Core`, in the registry of `workloads::CORE`).
#[cfg(feature = "middleware")]
pub mod core;
pub mod harness;
#[cfg(feature = "middleware")]
mod paths;
#[cfg(feature = "crates")]
mod pg;
pub mod report;

use std::sync::LazyLock;

use crate::catalog::{BenchSpec, Measure, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::knobs::KnobSpec;
use crate::script::Mix;

pub const NAME: &str = "script";

pub const CLIENTS: KnobSpec = KnobSpec::count(
    "clients",
    Some("BENCH_CLIENTS"),
    1,
    1,
    256,
    "clients replaying the scripts at once (pgbench's -c), each on its own connection or task as the backend does it",
);
pub const TRANSACTIONS: KnobSpec = KnobSpec::count(
    "transactions",
    Some("BENCH_TRANSACTIONS"),
    200,
    1,
    10_000_000,
    "transactions in one sample, shared out among the clients",
);
pub const ON_BUSY: KnobSpec = KnobSpec::choice(
    "on_busy",
    Some("BENCH_ON_BUSY"),
    "retry",
    &["retry", "fail"],
    "a transaction that meets SQLITE_BUSY or SQLITE_LOCKED: rolled back and run again after a backoff (retry), or rolled back and counted as failed (fail); both are counted",
);

const OP: &str = "one transaction (one run of a script of the mix)";

pub fn spec() -> &'static Target {
    static SPEC: LazyLock<Target> = LazyLock::new(|| {
        Target::new(
            NAME,
            "your scripts (--script FILE[@WEIGHT], -D NAME=VALUE) on your database (--db PATH, copied), replayed with one seed through each backend; transactions/s, per-statement latency, rows compared",
            0x5EED_5C41,
            Measure::Throughput,
            "rusqlite",
        )
        .knobs(&[CLIENTS, TRANSACTIONS, ON_BUSY, crate::catalog::POOL, SPIN_US])
        .knobs(&crate::settings::KNOBS)
        .bench(BenchSpec::whole(
            "rusqlite",
            Subject::Rusqlite,
            OP,
            "each client a thread with its own connection; statements prepared once (cached) and run in order",
        ))
        .per_strategy("middleware/", |name, s| {
            BenchSpec::whole(
                name,
                Subject::Middleware(s),
                OP,
                "each client a task on a pool of `clients` connections (the pool knob): one checkout per transaction, one dispatch per statement",
            )
        })
        .per_crate("", |name, c, serve| {
            BenchSpec::whole(name, Subject::Crate(c.id), OP, serve.about(c))
        })
        .bench(BenchSpec::whole(
            "sqlx",
            Subject::SqlxSqlite,
            OP,
            "sqlx (its own harness): each client a task; a connection of its pool of `clients` per transaction, each statement through sqlx::query (cached by sqlx) with its values bound",
        ))
        .bench(BenchSpec::whole(
            "tokio-postgres",
            Subject::Postgres,
            OP,
            "PostgreSQL (--postgres-url) through tokio-postgres: the database copied into a schema of the bench's own, each client a task with its own connection, statements prepared once; one PostgreSQL cannot prepare is skipped with its reason",
        ))
        .bench(BenchSpec::whole(
            "turso",
            Subject::Turso,
            OP,
            "turso: each client a task with its own connection on one Database (on a copy of its own: turso locks its file), statements prepared once and run on the task",
        ))
    });
    &SPEC
}

/// A statement micro-bench's name: `stmt/FILE:LINE`, as the statements table places it.
pub const STATEMENT_PREFIX: &str = "stmt/";

/// Whether `b` is a statement micro-bench (its `op` is the statement's text).
pub fn is_statement(b: &BenchSpec) -> bool {
    b.kind == crate::catalog::BenchKind::Micro && b.name.starts_with(STATEMENT_PREFIX)
}

/// The script target for the run's scripts: the catalog's entry with a micro-bench for each
/// statement (`stmt/FILE:LINE`: that statement alone on rusqlite, its values drawn as the
/// scripts draw them); the catalog's own entry when no script is given or they do not read.
pub fn spec_for(args: &crate::script::ScriptArgs) -> &'static Target {
    use std::sync::Mutex;
    static MADE: Mutex<Vec<(crate::script::ScriptArgs, &'static Target)>> = Mutex::new(Vec::new());
    if args.scripts.is_empty() {
        return spec();
    }
    let Ok(mix) = load_mix(args) else {
        return spec();
    };
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, t)) = made.iter().find(|(a, _)| a == args) {
        return t;
    }
    let mut t = spec().clone();
    for s in mix.statements() {
        if matches!(
            s.kind,
            crate::script::Kind::Begin
                | crate::script::Kind::Commit
                | crate::script::Kind::Rollback
        ) {
            continue;
        }
        let (script, _) = mix.statement(s.index);
        let mut name = format!("{STATEMENT_PREFIX}{}:{}", script.name, s.at.line);
        if t.benches.iter().any(|b| b.name == name) {
            name = format!("{name}:{}", s.at.col);
        }
        // What one operation is: the statement, as the catalog shows it beside the name.
        let mut b = BenchSpec::micro(
            crate::catalog::leak(name),
            Subject::Rusqlite,
            crate::measure::trace::Phase::ExecuteMarshal,
            crate::catalog::leak(s.text.clone()),
        )
        .about(crate::catalog::leak(format!(
            "one run of `{}` alone on rusqlite (cached, values bound as the scripts draw them; a write inside a transaction whose BEGIN and COMMIT are not timed)",
            s.text
        )));
        b.variant = s.index as u16;
        t.benches.push(b);
    }
    let t: &'static Target = Box::leak(Box::new(t));
    made.push((args.clone(), t));
    t
}

/// The run's scripts, read and checked: every problem named with its file, line and column.
pub fn load_mix(args: &crate::script::ScriptArgs) -> Result<Mix, BenchError> {
    if args.scripts.is_empty() {
        return Err(BenchError::Invalid(
            "the script target needs at least one --script FILE[@WEIGHT] (see docs/src/scripts.md; assets/scripts/ has examples)".into(),
        ));
    }
    let mut sources = Vec::new();
    for s in &args.scripts {
        let (path, weight) = crate::script::parse_script_arg(s).map_err(BenchError::Invalid)?;
        let text = crate::script::original::read_text(std::path::Path::new(&path), "--script")?;
        sources.push((path, text, weight));
    }
    let mut defines = Vec::new();
    for d in &args.defines {
        defines.push(crate::script::parse_define(d).map_err(BenchError::Invalid)?);
    }
    Mix::parse(&sources, &defines).map_err(|e| BenchError::Invalid(e.to_string()))
}

/// The replay of `mix` a run's knobs ask for: SQLite's numbered placeholders, the clients,
/// the transactions per sample, `on_busy` and the target's seed. Every runner that runs
/// scripts (the core's and the harnesses') builds it the same way, from a mix SQLite judged.
pub fn replay_for(
    run: &crate::workload::RunContext<'_>,
    mix: Mix,
) -> Result<crate::script::replay::Replay, BenchError> {
    if !mix.judged() {
        return Err(BenchError::Invalid(
            "the scripts were not judged by SQLite before the run: nothing runs unjudged".into(),
        ));
    }
    let k = &run.plan.knobs;
    Ok(crate::script::replay::Replay::new(
        crate::script::replay::Exec::new(mix, k.word(&ON_BUSY) == "retry"),
        k.count(&CLIENTS) as usize,
        k.count(&TRANSACTIONS),
        run.plan.target.seed,
    ))
}

/// Everything a front end checks before a run starts: the scripts read and parsed (SQLite
/// judges them in the runner, on the copy), and a database there is (or one --init builds:
/// where there is no file, or an empty one).
pub fn check_inputs(args: &crate::script::ScriptArgs) -> Result<Mix, BenchError> {
    use crate::script::original::{Found, check_database};
    let mix = load_mix(args)?;
    let Some(db) = &args.db else {
        return Err(BenchError::Invalid(
            "the script target needs --db PATH: your SQLite database (copied, never written), or a new file with --init FILE".into(),
        ));
    };
    let found = check_database(db)?;
    match (found, &args.init) {
        (Found::Database, _) => Ok(mix),
        (Found::Missing, None) => Err(BenchError::Invalid(format!(
            "--db {}: no such file (allowed: an existing SQLite database, or --init FILE to build it)",
            db.display()
        ))),
        (Found::Empty, None) => Err(BenchError::Invalid(format!(
            "--db {}: an empty file (allowed: a SQLite database, or --init FILE to build one there)",
            db.display()
        ))),
        (Found::Missing | Found::Empty, Some(init)) => {
            // An SQL file: a FIFO or a folder there is named as what it is, not a database.
            crate::script::original::read_text(init, "--init")?;
            Ok(mix)
        }
    }
}

/// [`check_inputs`], and SQLite's verdict on every statement where the database is already
/// there (on a copy made in a temporary folder and removed after): what a front end checks
/// before it starts a runner or takes the terminal, so that a refused script is refused as
/// bad input. (A database `--init` builds is judged by the runner, once built; every runner
/// judges again before it runs anything.)
#[cfg(feature = "sqlite")]
pub fn check_and_judge(args: &crate::script::ScriptArgs) -> Result<Mix, BenchError> {
    let mut mix = check_inputs(args)?;
    let db = args.db.as_ref().expect("checked");
    if needs_init(db)? {
        return Ok(mix);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir =
        std::env::temp_dir().join(format!("benchscope-judge-{}-{nanos:x}", std::process::id()));
    let judged = (|| {
        let mode = crate::script::db::SnapshotMode::Rollback;
        let (copy, _) = crate::script::db::snapshot(db, &dir, mode)?;
        crate::script::judge::judge(&copy, &mut mix).map_err(|e| BenchError::Invalid(e.to_string()))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    judged.map(|()| mix)
}

/// Whether `--db` needs `--init` to build it first (no file there, or an empty one).
pub fn needs_init(db: &std::path::Path) -> Result<bool, BenchError> {
    use crate::script::original::{Found, check_database};
    Ok(check_database(db)? != Found::Database)
}
