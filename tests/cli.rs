//! The benchscope binary end to end: list, run in every format, and the errors of bad input.

mod common;

use assert_cmd::Command;
use bench_core::protocol;
use bench_core::workloads::single_row_lookup;
use common::{QUICK, benchscope};
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
