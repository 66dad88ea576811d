//! The benchscope binary end to end: list, run in every format, and the errors of bad input.

mod common;

use assert_cmd::Command;
use bench_core::protocol;
use bench_core::workloads::single_row_lookup;
use common::{QUICK, benchscope, left_behind, runners_left, runners_marked};
use predicates::prelude::*;

fn tiny_run(cache: &std::path::Path, format: &str) -> Command {
    let mut c = benchscope();
    c.args([
        "run",
        "single_row_lookup",
        "--rows",
        "50",
        "--lookups",
        "10",
        "--concurrency",
        "2",
    ])
    .args(QUICK)
    .args(["--format", format])
    .arg("--cache-dir")
    .arg(cache);
    c
}

#[test]
fn list_shows_every_bench_and_knob() {
    let out = benchscope()
        .arg("list")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for b in &single_row_lookup::spec().benches {
        assert!(text.contains(b.name), "{} missing", b.name);
    }
    for k in &single_row_lookup::spec().knobs {
        assert!(text.contains(k.name), "knob {} missing", k.name);
    }
    assert!(text.contains("BENCH_ROWS") && text.contains("[checkout]"));
    for t in bench_core::workloads::targets() {
        assert!(text.contains(t.name), "target {} missing", t.name);
    }
    let json = benchscope()
        .args(["list", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["targets"][0]["name"], "single_row_lookup");
    assert_eq!(v["targets"][0]["knobs"][0]["default"], 1000);
}

/// `list TARGET` shows one target, `--benches` / `--knobs` one part of it, as text or JSON;
/// an unknown target names the known ones.
#[test]
fn list_takes_a_target_and_the_parts_to_show() {
    let text = |args: &[&str]| {
        let out = benchscope().arg("list").args(args).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let kv = text(&["key_value"]);
    assert!(kv.starts_with("key_value  ") && kv.contains("  knobs") && kv.contains("  benches:"));
    assert!(!kv.contains("single_row_lookup") && !kv.contains("dispatch strategies"));
    let knobs = text(&["key_value", "--knobs"]);
    assert!(
        knobs.contains("BENCH_KEYS") && !knobs.contains("  benches:"),
        "{knobs}"
    );
    let benches = text(&["single_row_lookup", "--benches"]);
    assert!(benches.contains("tokio-rusqlite") && !benches.contains("BENCH_ROWS"));
    assert!(benches.contains("phases not measured apart"), "{benches}");
    let v: serde_json::Value = serde_json::from_str(&text(&[
        "single_row_lookup",
        "--benches",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(v["name"], "single_row_lookup");
    assert!(v["benches"].as_array().unwrap().len() > 10 && v.get("knobs").is_none());
    let out = benchscope().args(["list", "nope"]).assert().code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("unknown target \"nope\" (known: single_row_lookup, "),
        "{err}"
    );
}

#[test]
fn no_subcommand_says_what_to_run() {
    benchscope()
        .assert()
        .success()
        .stdout(predicate::str::contains("benchscope run single_row_lookup"));
}

#[test]
fn run_json_is_one_document_with_every_bench() {
    let cache = tempfile::tempdir().unwrap();
    let out = tiny_run(cache.path(), "json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).expect("one JSON document");
    assert_eq!(v["schema"], "benchscope.report");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["baseline"], "rusqlite");
    let rows = v["comparison"][0].as_array().unwrap();
    assert_eq!(
        rows.len(),
        single_row_lookup::spec().benches.len(),
        "core and sqlx benches together"
    );
    for row in rows {
        assert!(row["median_ns"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["ratio"]["value"].as_f64().unwrap() > 0.0, "{row}");
    }
    let base = rows.iter().find(|r| r["bench"] == "rusqlite").unwrap();
    assert!((base["ratio"]["value"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    let run = &v["runs"][0];
    assert_eq!(run["done"], true);
    assert_eq!(run["start"]["knobs"]["rows"], 50);
    assert_eq!(
        run["start"]["env"]["profile"],
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
}

#[test]
fn run_table_and_markdown_flag_debug_builds() {
    let cache = tempfile::tempdir().unwrap();
    let table = String::from_utf8(
        tiny_run(cache.path(), "table")
            .arg("--bench")
            .arg("rusqlite")
            .arg("--bench")
            .arg("middleware/spin")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(
        table.contains("vs rusqlite (95% CI)") && table.contains("middleware/spin"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("rusqlite ") && l.contains("baseline")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("middleware/spin ") && l.contains("x [") && l.ends_with('2')),
        "{table}"
    );
    let md = String::from_utf8(
        tiny_run(cache.path(), "markdown")
            .args([
                "--bench",
                "middleware/spin",
                "--bench",
                "rusqlite",
                "--trace",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(md.contains("| bench | backend | median/op |"), "{md}");
    assert!(md.contains("Phase breakdown"), "{md}");
    let warned = table.contains("debug build: numbers are not representative")
        && md.contains("debug build: numbers are not representative");
    assert_eq!(
        warned,
        cfg!(debug_assertions),
        "debug builds are flagged, release builds are not"
    );
}

/// hyperfine's convention: one run writes markdown, JSON and CSV files beside the table it
/// prints; each bench's result is printed on stderr as it finishes.
#[test]
fn one_run_writes_every_export_and_prints_results_as_they_finish() {
    let cache = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let p = |n: &str| out.path().join(n);
    let run = tiny_run(cache.path(), "table")
        .args(["--bench", "rusqlite", "--bench", "middleware/spin"])
        .arg("--export-markdown")
        .arg(p("r.md"))
        .arg("--export-json")
        .arg(p("r.json"))
        .arg("--export-csv")
        .arg(p("r.csv"))
        .assert()
        .success();
    let o = run.get_output();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stdout.contains("mean ± sd") && stdout.contains("each bench: 0 s warm-up"),
        "{stdout}"
    );
    for b in ["✓ rusqlite: ", "✓ middleware/spin: "] {
        assert!(stderr.contains(b), "{b} in {stderr}");
    }
    assert!(stderr.contains(" samples after 0 s warm-up"), "{stderr}");
    let md = std::fs::read_to_string(p("r.md")).unwrap();
    assert!(md.contains("| middleware/spin |"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("r.json")).unwrap()).unwrap();
    assert_eq!(json["comparison"][0].as_array().unwrap().len(), 2);
    let csv = std::fs::read_to_string(p("r.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("run,target,bench,backend"), "{csv}");
    assert!(
        lines[2].starts_with("1,single_row_lookup,middleware/spin,"),
        "{csv}"
    );
    // --output: the chosen format into a file, nothing on stdout.
    let run = tiny_run(cache.path(), "csv")
        .args(["--bench", "rusqlite", "-o"])
        .arg(p("only.csv"))
        .assert()
        .success();
    assert!(run.get_output().stdout.is_empty());
    assert!(
        std::fs::read_to_string(p("only.csv"))
            .unwrap()
            .contains(",rusqlite,")
    );
    // The markdown's SVG charts beside it (drawn in Rust: nothing to install), linked from it.
    let svgs: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    assert_eq!(svgs, ["r-run1-distribution.svg"], "{svgs:?}");
    assert!(
        md.contains("![Run 1 (single_row_lookup)") && md.contains("(r-run1-distribution.svg)"),
        "{md}"
    );
    assert!(stderr.contains("wrote 1 SVG charts beside"), "{stderr}");
    // Only the files asked for (and the charts), and no temp file left.
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        4 + svgs.len()
    );
}

#[test]
fn run_jsonl_passes_the_stream_through() {
    let cache = tempfile::tempdir().unwrap();
    let out = tiny_run(cache.path(), "jsonl")
        .args(["--bench", "decode"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let events: Vec<_> = text
        .lines()
        .map(|l| protocol::decode(l).expect("valid line"))
        .collect();
    assert!(matches!(events[0], protocol::Event::Start(_)));
    assert_eq!(events.last(), Some(&protocol::Event::Done));
}

/// The explorer reads the knob variables of every target (it switches between them) and the
/// key log before it takes the terminal: a bad value, or a key log that is a FIFO, is refused
/// then, by name, and nothing is drawn.
#[test]
fn the_explorer_refuses_a_bad_setting_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("keys");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (var, value, msg) in [
        (
            "BENCH_CONCURRENCY",
            "lots".to_string(),
            "invalid value \"lots\" in environment variable BENCH_CONCURRENCY",
        ),
        (
            "BENCHSCOPE_KEY_LOG",
            fifo.display().to_string(),
            "BENCHSCOPE_KEY_LOG",
        ),
    ] {
        let o = benchscope()
            .args(["open", "no-such-report.json"])
            .env("TERM", "xterm")
            .env("BENCHSCOPE_DATA_DIR", dir.path().join("data"))
            .env("BENCHSCOPE_STORE", dir.path().join("store.sqlite"))
            .env(var, &value)
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg))
            .get_output()
            .clone();
        assert!(o.stdout.is_empty(), "{var}: drew {:?}", o.stdout);
    }
}

#[test]
fn bad_values_are_refused_with_the_allowed_range() {
    let cache = tempfile::tempdir().unwrap();
    for (args, env, msg) in [
        (
            vec!["--rows", "0"],
            None,
            "invalid value 0 for knob rows: out of range (allowed: 1..=50000000)",
        ),
        (
            vec!["--lookups", "ten"],
            None,
            "invalid value \"ten\" for knob lookups: not a whole number (allowed: 1..=50000000)",
        ),
        (
            vec!["--concurrency", "5000"],
            None,
            "invalid value 5000 for knob concurrency: out of range (allowed: 1..=1024)",
        ),
        (
            vec!["--rows", "99999999999999999999"],
            None,
            "out of range (allowed: 1..=50000000)",
        ),
        (
            vec![],
            Some(("BENCH_ROWS", "-4")),
            "invalid value \"-4\" in environment variable BENCH_ROWS for knob rows",
        ),
        (vec!["--knob", "nope=1"], None, "unknown knob \"nope\""),
        (
            vec!["--samples", "0"],
            None,
            "invalid value \"0\" for --samples: expected a whole number (allowed: 1..=1000000)",
        ),
    ] {
        let mut c = benchscope();
        c.args(["run", "single_row_lookup"])
            .args(&args)
            .arg("--cache-dir")
            .arg(cache.path());
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        c.assert().code(2).stderr(predicate::str::contains(msg));
    }
    benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--export-json",
            "/no/such/dir/r.json",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot write /no/such/dir/r.json: the folder /no/such/dir does not exist",
        ));
    benchscope()
        .args(["run", "no_such_target"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown target \"no_such_target\"",
        ));
    assert_eq!(
        std::fs::read_dir(cache.path()).unwrap().count(),
        0,
        "nothing started"
    );
}

#[test]
fn multithread_target_runs_and_sweeps_concurrency() {
    let cache = tempfile::tempdir().unwrap();
    let out = common::run_json(
        "multithread_pool_checkout",
        &["--rows", "64", "--lookups", "32", "--concurrency", "1,2,4"],
        cache.path(),
        &[
            "rusqlite_blocking",
            "middleware_parallel_select/spin",
            "sqlx_pool_checkout",
        ],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["runs"].as_array().unwrap().len(),
        3,
        "one run per concurrency value"
    );
    assert_eq!(v["scaling"]["concurrency"], serde_json::json!([1, 2, 4]));
    for bench in [
        "rusqlite_blocking",
        "middleware_parallel_select/spin",
        "sqlx_pool_checkout",
    ] {
        let cells = v["scaling"]["ops_per_s"][bench].as_array().unwrap();
        assert!(
            cells.iter().all(|c| c.as_f64().unwrap() > 0.0),
            "{bench}: {cells:?}"
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    assert_eq!(
        stderr.contains("more tasks than the"),
        cores < 4,
        "{stderr}"
    );
    // The same sweep as a table has the scaling table and chart.
    let table = benchscope()
        .args([
            "run",
            "multithread_pool_checkout",
            "--rows",
            "64",
            "--lookups",
            "32",
            "--concurrency",
            "1,2",
        ])
        .args([
            "--time",
            "0.01",
            "--warmup",
            "0",
            "--samples",
            "2",
            "--min-samples",
            "2",
            "--bench",
            "rusqlite_blocking",
        ])
        .arg("--cache-dir")
        .arg(cache.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(table).unwrap();
    assert!(
        table.contains("scaling: ops/s by concurrency")
            && table.contains("ops/s")
            && table.contains("█"),
        "{table}"
    );
    benchscope()
        .args(["run", "multithread_pool_checkout", "--concurrency", "1,0,4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value 0 for knob concurrency: out of range (allowed: 1..=1024)",
        ));
}

/// SIGTERM, SIGHUP or SIGINT on a headless run: the runner is stopped and reaped, what
/// finished is printed, and benchscope exits 128 + the signal, no process left behind.
#[test]
fn a_signal_ends_a_headless_run_with_what_finished() {
    use std::io::BufRead;
    for (sig, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
    ] {
        let cache = tempfile::tempdir().unwrap();
        // A mark its runners inherit, to find them by.
        let mark = format!("BENCHSCOPE_TEST_MARK={name}-{}", std::process::id());
        let (mark_name, mark_value) = mark.split_once('=').unwrap();
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("benchscope"))
            .env("BENCHSCOPE_NO_STORE", "1")
            .env("BENCHSCOPE_PROCESSES", "1")
            .env(mark_name, mark_value)
            .args([
                "run",
                "single_row_lookup",
                "--rows",
                "200",
                "--lookups",
                "50",
                "--bench",
                "rusqlite",
                "--bench",
                "middleware/spin",
                "--unpaired",
                "--time",
                "1",
                "--warmup",
                "0.1",
                "--format",
                "json",
                "--cache-dir",
            ])
            .arg(cache.path())
            .env_remove("BENCHSCOPE_SQLX_HARNESS")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let stderr = child.stderr.take().unwrap();
        // The second bench has started: the first has finished.
        let mut lines = std::io::BufReader::new(stderr).lines();
        let started = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("2/2 middleware/spin"));
        assert!(started, "{name}: the second bench never started");
        // Its runner is there, and found by its mark.
        assert!(!runners_marked(&mark).is_empty(), "{name}: no runner found");
        unsafe { libc::kill(pid as libc::pid_t, sig) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(128 + sig), "{name}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report");
        let run = &doc["runs"][0];
        assert_eq!(run["benches"][0]["name"], "rusqlite");
        assert!(run["benches"][0]["summary"]["median"].as_f64().unwrap() > 0.0);
        assert_eq!(
            run["error"],
            format!("interrupted by {name}: the benches that finished are kept")
        );
        // No runner of this run is left measuring.
        let left = runners_left(&mark);
        assert!(left.is_empty(), "{name}: runner left behind: {left:?}");
    }
}

/// Stopping a run while harness-sqlx is being built stops the whole build: cargo and what it
/// started (here a fake cargo whose compiler is a long sleep), not cargo alone.
#[test]
fn a_stopped_harness_build_leaves_no_compiler_behind() {
    use std::io::BufRead;
    use std::os::unix::fs::PermissionsExt;
    let work = tempfile::tempdir().unwrap();
    let cargo = work.path().join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\necho '   Compiling sqlx' >&2\nsleep 987.25 &\nwait\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("benchscope"))
        .env("BENCHSCOPE_NO_STORE", "1")
        .env("BENCHSCOPE_PROCESSES", "1")
        .args([
            "run",
            "single_row_lookup",
            "--rows",
            "50",
            "--bench",
            "sqlx",
            "--cache-dir",
        ])
        .arg(work.path().join("cache"))
        .env_remove("BENCHSCOPE_SQLX_HARNESS")
        .env("CARGO", &cargo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr).lines();
    assert!(
        lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("harness-sqlx: Compiling sqlx")),
        "the build never started"
    );
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let left = left_behind("sleep 987.25");
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Two measurements at once would slow each other silently: the second waits for the first,
/// says so, and records how long it waited.
#[test]
fn a_second_measurement_waits_for_the_first() {
    let work = tempfile::tempdir().unwrap();
    let lock = work.path().join("measure.lock");
    let start = |time: &str| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("benchscope"))
            .env("BENCHSCOPE_NO_STORE", "1")
            .env("BENCHSCOPE_PROCESSES", "1")
            .args([
                "run",
                "single_row_lookup",
                "--rows",
                "100",
                "--bench",
                "rusqlite",
            ])
            .args([
                "--time",
                time,
                "--warmup",
                "0",
                "--format",
                "json",
                "--cache-dir",
            ])
            .arg(work.path().join("cache"))
            .env("BENCHSCOPE_MEASURE_LOCK", &lock)
            .env_remove("BENCHSCOPE_SQLX_HARNESS")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = start("3");
    // The second starts once the first holds the lock (it takes it once its dataset is there),
    // seen from here as a lock this process cannot take; a free lock is let go at once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock)
            .unwrap();
        match file.try_lock() {
            Err(std::fs::TryLockError::WouldBlock) => break,
            Err(std::fs::TryLockError::Error(e)) => panic!("{e}"),
            Ok(()) => drop(file),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = start("0.1").wait_with_output().unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success() && second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("waiting: another benchscope measurement is running on this machine"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    let waited = doc["runs"][0]["machine"]["waited_s"].as_f64().unwrap();
    assert!(waited > 0.3, "waited {waited} s");
    let first: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    assert!(first["runs"][0]["machine"]["load_start"].as_f64().is_some());
}

/// Asked to (`--keep-cpus-awake`), a run keeps idle CPUs polling while it measures through
/// the kernel's CPU latency device (here /dev/null, and below a FIFO a thread reads, standing
/// for it: the limit written is 0 µs as a 32-bit integer); a device that cannot be opened, or a
/// file that is no device, leaves them to sleep and the output says why (nothing is written to
/// the file); not asked, they sleep and the run says so in its record.
#[test]
fn idle_cpus_are_kept_polling_when_asked_or_the_output_says_why_not() {
    let cache = tempfile::tempdir().unwrap();
    let device = std::path::PathBuf::from("/dev/null");
    let state = |out: &[u8]| -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_slice(out).unwrap();
        doc["runs"][0]["machine"]["cpu_idle"].clone()
    };
    let held = tiny_run(cache.path(), "json")
        .args(["--bench", "rusqlite", "--keep-cpus-awake"])
        .env("BENCHSCOPE_CPU_LATENCY_DEVICE", &device)
        .assert()
        .success();
    assert_eq!(
        state(&held.get_output().stdout),
        serde_json::json!({"state": "held"})
    );
    let plain = cache.path().join("cpu_dma_latency");
    std::fs::write(&plain, b"mine").unwrap();
    let refused = tiny_run(cache.path(), "json")
        .args(["--bench", "rusqlite", "--keep-cpus-awake"])
        .env("BENCHSCOPE_CPU_LATENCY_DEVICE", &plain)
        .assert()
        .success();
    assert_eq!(
        state(&refused.get_output().stdout)["why"],
        format!(
            "the CPU latency device (BENCHSCOPE_CPU_LATENCY_DEVICE) {}: a regular file; allowed: a character device (or a FIFO a process reads)",
            plain.display()
        )
    );
    assert_eq!(std::fs::read(&plain).unwrap(), b"mine");

    let missing = cache.path().join("no-such-folder").join("cpu_dma_latency");
    let table = tiny_run(cache.path(), "table")
        .args(["--bench", "rusqlite", "--keep-cpus-awake"])
        .env("BENCHSCOPE_CPU_LATENCY_DEVICE", &missing)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&table.get_output().stdout).into_owned();
    assert!(
        text.contains(&format!(
            "machine: idle CPUs could not be kept polling as asked (the CPU latency device (BENCHSCOPE_CPU_LATENCY_DEVICE) {}: cannot open it: No such file or directory",
            missing.display()
        )),
        "{text}"
    );

    // The limit holds while the run measures: with a FIFO standing for the device, the
    // limit arrives when measuring starts and the device is closed (the FIFO's end) only once
    // the bench's 1 s budget has been spent, not at once after the write.
    let fifo = cache.path().join("latency-fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut f = std::fs::File::open(&fifo).unwrap();
            let mut limit = [0u8; 4];
            f.read_exact(&mut limit).unwrap();
            let held = std::time::Instant::now();
            let mut rest = Vec::new();
            f.read_to_end(&mut rest).unwrap();
            (limit, held.elapsed(), rest.len())
        })
    };
    let run = benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--rows",
            "50",
            "--lookups",
            "10",
        ])
        .args(["--bench", "rusqlite", "--time", "1", "--warmup", "0"])
        .args(["--keep-cpus-awake", "--format", "json", "--cache-dir"])
        .arg(cache.path())
        .env("BENCHSCOPE_CPU_LATENCY_DEVICE", &fifo)
        .assert()
        .success();
    let (limit, open_for, more) = reader.join().unwrap();
    assert_eq!((limit, more), (0i32.to_ne_bytes(), 0));
    // Held at least as long as the samples took, all of them together (tens of milliseconds
    // at least: a device closed right after the write is held for microseconds).
    let doc: serde_json::Value = serde_json::from_slice(&run.get_output().stdout).unwrap();
    let b = &doc["runs"][0]["benches"][0];
    let per = b["ops_per_sample"].as_f64().unwrap();
    let measured: f64 = b["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() * per)
        .sum();
    assert!(measured > 2e7, "{measured} ns of samples");
    assert!(
        open_for.as_nanos() as f64 >= measured,
        "the device was closed after {open_for:?}, before the {measured} ns of samples were taken"
    );

    let slept = tiny_run(cache.path(), "json")
        .args(["--bench", "rusqlite"])
        .env("BENCHSCOPE_CPU_LATENCY_DEVICE", &missing)
        .assert()
        .success();
    assert_eq!(
        state(&slept.get_output().stdout),
        serde_json::json!({"state": "slept"})
    );
}

/// `--cpus 0` confines every runner thread to CPU 0: the runner itself reads its affinity and
/// records it, and the table says it; a CPU this process may not use is refused by name.
#[test]
fn runners_are_confined_to_the_cpus_given() {
    let cache = tempfile::tempdir().unwrap();
    let out = tiny_run(cache.path(), "json")
        .args([
            "--bench",
            "rusqlite",
            "--bench",
            "middleware/inline",
            "--cpus",
            "0",
        ])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let env = &doc["runs"][0]["start"]["env"];
    let cores = std::thread::available_parallelism().unwrap().get();
    if cores > 1 {
        assert_eq!(env["cpus"], serde_json::json!([0]), "{env}");
        assert_eq!(env["cores"], 1, "{env}");
        let table = tiny_run(cache.path(), "table")
            .args(["--bench", "rusqlite", "--cpus", "0"])
            .assert()
            .success();
        let text = String::from_utf8_lossy(&table.get_output().stdout).into_owned();
        assert!(
            text.contains("machine: runners confined to CPU 0 (--cpus): a query handed to another thread runs when one of these CPUs switches to it"),
            "{text}"
        );
    } else {
        // A machine of one CPU: confined to it is every CPU there is.
        assert!(env.get("cpus").is_none(), "{env}");
    }
    let refused = tiny_run(cache.path(), "table")
        .args(["--bench", "rusqlite", "--cpus", "4096"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        err.contains("\"4096\": CPU 4096 is not one this process may use (allowed: CPUs this process may use, "),
        "{err}"
    );
}

/// A run saved as a baseline, judged against itself (nothing regressed, exit 0) and against a
/// copy of its report whose middleware/spin samples are all twice as slow (regressed, exit 3);
/// bad names and missing baselines are refused before anything runs.
#[test]
fn baselines_are_saved_and_a_regression_fails_the_comparison() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("bl");
    let out = tiny_run(cache.path(), "json")
        .args(["--bench", "rusqlite", "--bench", "middleware/spin"])
        .args(["--save-baseline", "main", "--baseline-dir"])
        .arg(&dir)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("saved baseline main (1 run)"), "{stderr}");
    let mut report: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    for b in report["runs"][0]["benches"].as_array_mut().unwrap() {
        if b["name"] == "middleware/spin" {
            for x in b["samples"].as_array_mut().unwrap() {
                *x = (x.as_f64().unwrap() * 2.0).into();
            }
            let s = &mut b["summary"];
            for k in ["median", "mean", "min", "max"] {
                s[k] = (s[k].as_f64().unwrap() * 2.0).into();
            }
            for i in 0..2 {
                s["ci95_median"][i] = (s["ci95_median"][i].as_f64().unwrap() * 2.0).into();
            }
        }
    }
    let slower = cache.path().join("slower.json");
    std::fs::write(&slower, report.to_string()).unwrap();

    let compare = |current: &std::path::Path| {
        let mut c = benchscope();
        c.args(["compare", "main"])
            .arg(current)
            .arg("--baseline-dir")
            .arg(&dir);
        c
    };
    let same = compare(&dir.join("main.json")).assert().code(0);
    let text = String::from_utf8_lossy(&same.get_output().stdout).into_owned();
    assert!(
        text.contains("0 regressed, 0 improved, 2 within noise"),
        "{text}"
    );
    let worse = compare(&slower).assert().code(3);
    let text = String::from_utf8_lossy(&worse.get_output().stdout).into_owned();
    let spin = text
        .lines()
        .find(|l| l.starts_with("middleware/spin"))
        .unwrap();
    assert!(
        spin.contains("+100.0%") && spin.contains("regressed"),
        "{text}"
    );

    benchscope()
        .args(["run", "single_row_lookup", "--save-baseline", "a/b"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid baseline name \"a/b\""));
    benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--baseline",
            "nope",
            "--baseline-dir",
        ])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no baseline \"nope\"")
                .and(predicate::str::contains("saved: main")),
        );
    benchscope()
        .args([
            "compare",
            "main",
            "main",
            "--noise",
            "abc",
            "--baseline-dir",
        ])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value \"abc\" for --noise",
        ));
}

/// --interleave: the baseline's set-up is measured again beside this one, round by round in
/// alternating order; the verdicts come from the rounds, the saved runs show how far the set-up
/// moved, only this run's set-up is saved; bad combinations are refused before anything runs.
#[test]
fn interleaved_rounds_measure_the_baseline_again_beside_the_run() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("bl");
    tiny_run(cache.path(), "json")
        .args([
            "--bench",
            "rusqlite",
            "--save-baseline",
            "main",
            "--baseline-dir",
        ])
        .arg(&dir)
        .assert()
        .success();
    let out = tiny_run(cache.path(), "json")
        .args(["--bench", "rusqlite", "--knob", "cache_size=500"])
        .args(["--baseline", "main", "--interleave", "3"])
        .args(["--save-baseline", "candidate", "--baseline-dir"])
        .arg(&dir)
        // A round is one fresh process, whatever the processes asked for.
        .env("BENCHSCOPE_PROCESSES", "4")
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    for r in runs {
        assert!(r["start"]["budget"].get("processes").is_none(), "{r}");
    }
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let rounds: Vec<&str> = err.lines().filter(|l| l.starts_with("round ")).collect();
    assert_eq!(
        rounds,
        [
            "round 1/3: the baseline's set-up",
            "round 1/3: this run's set-up",
            "round 2/3: this run's set-up",
            "round 2/3: the baseline's set-up",
            "round 3/3: the baseline's set-up",
            "round 3/3: this run's set-up",
        ],
        "{err}"
    );
    assert!(
        err.contains("against baseline main, its set-up measured again in 3 interleaved rounds"),
        "{err}"
    );
    let row = err.lines().find(|l| l.starts_with("rusqlite ")).unwrap();
    assert!(
        row.contains("3/3")
            && row.contains("3 interleaved rounds by their fastest samples: the change moves"),
        "{row}"
    );
    assert!(
        err.contains("! not made the same way as the baseline (cache_size 2000 vs 500)"),
        "{err}"
    );
    assert!(
        err.contains("since the baseline was saved (")
            && err.contains("its set-up moved: rusqlite"),
        "{err}"
    );
    // The report holds every run of both sides, in the order they ran.
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let cache_sizes: Vec<u64> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["start"]["knobs"]["cache_size"].as_u64().unwrap())
        .collect();
    assert_eq!(cache_sizes, [2000, 500, 500, 2000, 2000, 500]);
    // The saved baseline holds this run's set-up only.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("candidate.json")).unwrap())
            .unwrap();
    let runs = saved["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert!(
        runs.iter()
            .all(|r| r["start"]["knobs"]["cache_size"] == 500)
    );

    let refused = |extra: &[&str], message: &str| {
        benchscope()
            .args(["run", "single_row_lookup", "--bench", "rusqlite"])
            .args(extra)
            .arg("--baseline-dir")
            .arg(&dir)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message.to_string()));
    };
    refused(
        &["--baseline", "main", "--interleave", "1"],
        "invalid value \"1\" for --interleave: expected a whole number (allowed: 2..=100)",
    );
    refused(
        &["--baseline", "main", "--interleave", "3", "--repeat", "2"],
        "--interleave 3 already runs each side 3 times: leave out --repeat 2",
    );
    refused(
        &[
            "--baseline",
            "main",
            "--interleave",
            "3",
            "--rows",
            "50,100",
        ],
        "this run sweeps rows (2 values)",
    );
    refused(&["--interleave", "3"], "--baseline <NAME>");
}

/// --paired: the benches take turns in one runner; each ratio is the median of per-round
/// ratios, carried in the report and used by the comparison.
#[test]
fn paired_rounds_give_each_bench_a_per_round_ratio() {
    let cache = tempfile::tempdir().unwrap();
    let out = benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--rows",
            "50",
            "--lookups",
            "10",
        ])
        .args([
            "--bench",
            "rusqlite",
            "--bench",
            "middleware/spin",
            "--paired",
            "--repeat",
            "2",
        ])
        .args([
            "--time",
            "0.05",
            "--warmup",
            "0",
            "--samples",
            "12",
            "--min-samples",
            "8",
        ])
        .args(["--format", "json", "--cache-dir"])
        .arg(cache.path())
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["start"]["budget"]["paired"], true);
    let spin = &run["benches"][1];
    assert_eq!(spin["name"], "middleware/spin");
    let (against, p) = (&spin["paired"][0], &spin["paired"][1]);
    assert_eq!(against, "rusqlite");
    let pairs = p["pairs"].as_u64().unwrap();
    assert!(pairs >= 8, "{p}");
    // Both benches took the same number of turns.
    let n = |b: &serde_json::Value| b["samples"].as_array().unwrap().len() as u64;
    assert_eq!(n(&run["benches"][0]), n(spin));
    assert_eq!(pairs, n(spin));
    let row = &v["comparison"][0][1];
    assert_eq!(row["ratio"]["value"], p["median"], "{row}");
    assert!(
        run["benches"][0].get("paired").is_none(),
        "the baseline bench has no pair of its own"
    );
    // Two runs made the same way: how far the paired ratio moved between them.
    let second = v["runs"][1]["benches"][1]["paired"][1]["median"]
        .as_f64()
        .unwrap();
    let first = p["median"].as_f64().unwrap();
    let moved = &v["repeats"][0]["benches"][1];
    assert_eq!(moved["bench"], "middleware/spin", "{moved}");
    assert_eq!(moved["ratio"]["runs"], 2, "{moved}");
    assert_eq!(moved["ratio"]["min"].as_f64().unwrap(), first.min(second));
    assert_eq!(moved["ratio"]["max"].as_f64().unwrap(), first.max(second));
    assert!(v["repeats"][0]["benches"][0]["ratio"].is_null());
}

/// A Criterion folder (files of a real `cargo bench` of bench-core's lookup bench) shown on its
/// own and beside a live run of the same benches.
#[test]
fn criterion_results_are_shown_beside_a_live_run() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion");
    let shown = benchscope()
        .args(["show", "--format", "csv"])
        .arg(&fixture)
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&shown.get_output().stdout).into_owned();
    assert!(
        csv.contains("1,single_row_lookup,rusqlite,Criterion,"),
        "{csv}"
    );
    assert!(
        csv.contains("1,single_row_lookup,turso_raw,Criterion,"),
        "{csv}"
    );
    let cache = tempfile::tempdir().unwrap();
    let out = tiny_run(cache.path(), "table")
        .args([
            "--bench",
            "rusqlite",
            "--bench",
            "turso_raw",
            "--save-baseline",
            "live",
            "--import-criterion",
        ])
        .arg(&fixture)
        .assert()
        .success();
    let table = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(table.matches("\nrusqlite ").count(), 2, "{table}");
    assert!(table.contains("! read from Criterion folder"), "{table}");
    // The baseline keeps the live run only: what was read from elsewhere is shown, not saved.
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("saved baseline live (1 run)"), "{err}");
    benchscope()
        .args(["show", "/no/such/criterion"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot read /no/such/criterion: no such file or folder",
        ));
}

/// A gate must not pass on nothing: a run whose every bench was skipped, and a comparison
/// with a baseline that has no bench in common, fail (exit 1) and say why.
#[test]
fn gates_fail_when_nothing_was_measured_or_compared() {
    let cache = tempfile::tempdir().unwrap();
    // PostgreSQL's bench without a server: skipped, so nothing measured.
    let out = benchscope()
        .env_remove("BENCHSCOPE_POSTGRES_URL")
        .args(["run", "bulk_insert", "--bench", "postgres", "--rows", "10"])
        .args(QUICK)
        .arg("--cache-dir")
        .arg(cache.path())
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("error: nothing was measured: every bench was skipped: postgres ("),
        "{err}"
    );
    let dir = cache.path().join("bl");
    tiny_run(cache.path(), "json")
        .args([
            "--bench",
            "rusqlite",
            "--save-baseline",
            "lookup",
            "--baseline-dir",
        ])
        .arg(&dir)
        .assert()
        .success();
    // The same baseline against its own target: compared (exit 0, or 3 when two samples a
    // side on a busy machine read as a regression; never the 1 of nothing compared).
    let same = tiny_run(cache.path(), "table")
        .args([
            "--bench",
            "rusqlite",
            "--baseline",
            "lookup",
            "--baseline-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        matches!(same.status.code(), Some(0 | 3)),
        "{:?}: {}",
        same.status,
        String::from_utf8_lossy(&same.stderr)
    );
    let text = String::from_utf8_lossy(&same.stdout);
    assert!(text.contains("against baseline lookup\n"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("rusqlite ")), "{text}");
    // Against another target's run: nothing in common.
    let out = benchscope()
        .args(["run", "bulk_insert", "--bench", "rusqlite", "--rows", "10"])
        .args(QUICK)
        .args(["--baseline", "lookup", "--baseline-dir"])
        .arg(&dir)
        .arg("--cache-dir")
        .arg(cache.path())
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(
            "error: nothing compared: baseline lookup has no bench of this run's target in common"
        ),
        "{err}"
    );
}

/// A run of three runner processes, through real children: one start naming three processes,
/// each bench's median and paired ratio across them with each process's own kept, and the
/// table's headers naming the unit.
#[test]
fn a_run_of_three_processes_reads_as_one_run_across_them() {
    let cache = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--rows",
            "50",
            "--lookups",
            "10",
        ])
        .args([
            "--bench",
            "rusqlite",
            "--bench",
            "sqlite3_c",
            "--processes",
            "3",
        ])
        // Six pairs a process, the fewest a paired ratio takes.
        .args([
            "--time",
            "0.01",
            "--warmup",
            "0",
            "--samples",
            "18",
            "--min-samples",
            "18",
        ])
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--export-json")
        .arg(&json)
        .arg("--export-csv")
        .arg(out.path().join("r.csv"))
        .assert()
        .success();
    let csv = std::fs::read_to_string(out.path().join("r.csv")).unwrap();
    let mut rows = csv.lines().map(|l| l.split(',').collect::<Vec<_>>());
    let header = rows.next().unwrap();
    let at = header.iter().position(|h| *h == "processes").unwrap();
    for row in rows {
        assert_eq!(row[at], "3", "{csv}");
    }
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    assert!(
        stdout.contains("95% CI (median, 3 processes)")
            && stdout.contains("each bench in each of 3 runner processes")
            && stdout.contains("3 runner processes, one after another"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let r = &v["runs"][0];
    assert_eq!(r["start"]["budget"]["processes"], 3, "{r}");
    for b in r["benches"].as_array().unwrap() {
        let s = &b["summary"];
        let each = s["processes"].as_array().unwrap();
        assert_eq!(each.len(), 3, "{b}");
        // The median is the geometric mean of the processes' own.
        let logs: f64 = each.iter().map(|e| e["value"].as_f64().unwrap().ln()).sum();
        let g = (logs / 3.0).exp();
        assert!(
            (s["median"].as_f64().unwrap() / g - 1.0).abs() < 1e-9,
            "{b}"
        );
        // Every process's samples are the run's.
        assert_eq!(b["samples"].as_array().unwrap().len(), 18, "{b}");
    }
    let paired = &r["benches"][1]["paired"];
    assert_eq!(paired[0], "rusqlite");
    assert_eq!(
        paired[1]["processes"].as_array().unwrap().len(),
        3,
        "{paired}"
    );
}

/// `--time-for`: the benches a pattern selects sample for their own time, the others for
/// `--time`; the run says which took what.
#[test]
fn a_bench_given_its_own_time_samples_for_it_and_the_run_says_so() {
    let cache = tempfile::tempdir().unwrap();
    let run = |format: &str| {
        benchscope()
            .args([
                "run",
                "single_row_lookup",
                "--rows",
                "50",
                "--lookups",
                "10",
            ])
            .args([
                "--bench",
                "rusqlite",
                "--bench",
                "middleware/inline",
                "--unpaired",
            ])
            .args(["--time", "0", "--warmup", "0", "--samples", "100000"])
            .args(["--min-samples", "3", "--time-for", "^rusqlite$=0.3"])
            .args(["--format", format, "--cache-dir"])
            .arg(cache.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let v: serde_json::Value = serde_json::from_slice(&run("json")).unwrap();
    let r = &v["runs"][0];
    assert_eq!(
        r["start"]["budget"]["times"],
        serde_json::json!({"rusqlite": 0.3}),
        "{r}"
    );
    let n = |i: usize| r["benches"][i]["samples"].as_array().unwrap().len();
    assert_eq!(r["benches"][1]["name"], "middleware/inline");
    assert_eq!(n(1), 3, "--time 0: the least samples");
    assert!(n(0) > 3, "0.3 s of 10-lookup samples: {}", n(0));
    let table = String::from_utf8(run("table")).unwrap();
    assert!(
        table.contains("then samples for 0 s, 0.3 s for rusqlite (at least 3"),
        "{table}"
    );
}
