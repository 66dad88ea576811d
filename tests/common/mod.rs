//! Helpers shared by the CLI-level tests.
#![allow(dead_code)]

use assert_cmd::Command;

/// The benchscope binary with no knob or harness settings inherited from the environment.
pub fn benchscope() -> Command {
    let mut c = Command::cargo_bin("benchscope").unwrap();
    for v in bench_core::testing::INHERITED_VARS {
        c.env_remove(v);
    }
    c.env_remove("BENCHSCOPE_SQLX_HARNESS");
    c.env_remove("BENCHSCOPE_ASYNC_SQLITE_HARNESS");
    c.env_remove("BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS");
    // Runs of tests are not recorded in the user's results store (tests/store.rs records
    // into stores of its own).
    c.env_remove("BENCHSCOPE_STORE");
    c.env("BENCHSCOPE_NO_STORE", "1");
    // One runner process per run, as before runs had several: the tests of several
    // (tests/cli.rs, `a_run_of_three_processes...`) say so.
    c.env("BENCHSCOPE_PROCESSES", "1");
    c
}

/// The same, as a `std::process::Command`: for what assert_cmd does not set (stdout).
pub fn benchscope_std() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_benchscope"));
    for v in bench_core::testing::INHERITED_VARS {
        c.env_remove(v);
    }
    c.env_remove("BENCHSCOPE_SQLX_HARNESS");
    c.env_remove("BENCHSCOPE_ASYNC_SQLITE_HARNESS");
    c.env_remove("BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS");
    // Runs of tests are not recorded in the user's results store (tests/store.rs records
    // into stores of its own).
    c.env_remove("BENCHSCOPE_STORE");
    c.env("BENCHSCOPE_NO_STORE", "1");
    c.env("BENCHSCOPE_PROCESSES", "1");
    c
}

/// The smallest budget that still gives two samples per bench.
pub const QUICK: &[&str] = &[
    "--time",
    "0.01",
    "--warmup",
    "0",
    "--samples",
    "2",
    "--min-samples",
    "2",
];

/// `benchscope run TARGET` with the quick budget, `knobs`, a cache folder, the given benches and
/// JSON output.
pub fn run_json(
    target: &str,
    knobs: &[&str],
    cache: &std::path::Path,
    benches: &[&str],
) -> Command {
    let mut c = benchscope();
    c.args(["run", target])
        .args(knobs)
        .args(QUICK)
        .args(["--format", "json"])
        .arg("--cache-dir")
        .arg(cache);
    for b in benches {
        c.args(["--bench", b]);
    }
    c
}

/// The command lines (arguments joined by spaces) of the processes whose command line holds
/// `needle`, from the process table.
pub fn processes_with(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .collect()
}

/// The processes holding `needle` that are still there 10 s on (an empty list as soon as none
/// is): a process that was stopped may take a moment to go on a busy machine, one left behind
/// stays.
pub fn left_behind(needle: &str) -> Vec<String> {
    still_there(|| processes_with(needle))
}

/// What `find` still finds 10 s on (an empty list as soon as it finds nothing).
fn still_there(find: impl Fn() -> Vec<String>) -> Vec<String> {
    let start = std::time::Instant::now();
    loop {
        let left = find();
        if left.is_empty() || start.elapsed() > std::time::Duration::from_secs(10) {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The runner processes (told to read their run from stdin) whose environment holds `mark`
/// (a variable a test gave the front end that started them, which they inherit).
pub fn runners_marked(mark: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let dir = e.ok()?.path();
            let cmd = String::from_utf8_lossy(&std::fs::read(dir.join("cmdline")).ok()?)
                .replace('\0', " ");
            let env = std::fs::read(dir.join("environ")).ok()?;
            let marked = env.split(|b| *b == 0).any(|v| v == mark.as_bytes());
            (cmd.contains("--request -") && marked).then_some(cmd)
        })
        .collect()
}

/// The runners marked `mark` that are still there 10 s on (an empty list as soon as none is).
pub fn runners_left(mark: &str) -> Vec<String> {
    still_there(|| runners_marked(mark))
}

/// The PostgreSQL server's URL (BENCHSCOPE_POSTGRES_URL; `.ci/run` starts a server), or None
/// with `what` reported as skipped (a failure under BENCHSCOPE_TEST_NO_SKIP).
pub fn postgres_url(what: &str) -> Option<String> {
    let url = std::env::var("BENCHSCOPE_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty());
    if url.is_none() {
        bench_core::testing::skip(
            what,
            "BENCHSCOPE_POSTGRES_URL is not set (.ci/postgres.sh starts a throwaway server)",
        );
    }
    url
}

/// A quick single_row_lookup run (200 rows, 50 lookups) of `benches` as the machine of the
/// data folder `data`, recorded in the results store `store` (none: not recorded).
pub fn small_run(
    data: &std::path::Path,
    cache: &std::path::Path,
    store: Option<&str>,
    benches: &[&str],
) -> Command {
    let mut c = benchscope();
    c.env("BENCHSCOPE_DATA_DIR", data)
        .args([
            "run",
            "single_row_lookup",
            "--rows",
            "200",
            "--lookups",
            "50",
        ])
        .args(QUICK)
        .arg("--cache-dir")
        .arg(cache);
    if let Some(s) = store {
        c.env_remove("BENCHSCOPE_NO_STORE").args(["--store", s]);
    }
    for b in benches {
        c.args(["--bench", b]);
    }
    c
}

// The inert-page check, shared with the HTML exporter's own tests.
pub mod html;
#[allow(unused_imports)]
pub use html::html_is_inert;

/// The bench named `name` among a JSON run's `benches`; a test fails naming it if it is absent.
pub fn bench_of<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    run["benches"]
        .as_array()
        .unwrap_or_else(|| panic!("no benches in {run}"))
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {run}"))
}
