//! benchscope driving the harness crates: sqlx side by side with rusqlite and the middleware in
//! one comparison, async-sqlite beside them; the same dataset file whichever harness builds it; a broken harness reported as
//! a failed run with its stderr while the other benches keep their results.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

mod common;

use assert_cmd::Command;
use bench_core::dataset::{self, DatasetKey, row};
use bench_core::workloads::single_row_lookup;

fn tiny(cache: &Path, rows: &str, benches: &[&str]) -> Command {
    common::run_json(
        "single_row_lookup",
        &["--rows", rows, "--lookups", "20", "--concurrency", "2"],
        cache,
        benches,
    )
}

fn json(c: &mut Command) -> serde_json::Value {
    let out = c.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("one JSON document")
}

#[test]
fn sqlx_runs_side_by_side_with_rusqlite_and_the_middleware() {
    let cache = tempfile::tempdir().unwrap();
    let v = json(
        tiny(
            cache.path(),
            "100",
            &["rusqlite", "middleware/spin", "sqlx", "sqlx/decode"],
        )
        .arg("--trace"),
    );
    let rows = v["comparison"][0].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["bench"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["rusqlite", "middleware/spin", "sqlx", "sqlx/decode"]
    );
    for r in rows {
        assert!(r["ratio"]["value"].as_f64().unwrap() > 0.0, "{r}");
    }
    let run = &v["runs"][0];
    assert_eq!(run["done"], true);
    assert_eq!(run["start"]["harness"], "core");
    assert_eq!(run["more_starts"][0]["harness"], "sqlx");
    assert!(
        run["more_starts"][0]["env"]["crates"]["sqlx"]
            .as_str()
            .unwrap()
            .starts_with("0.9")
    );
    let sqlx = common::bench_of(run, "sqlx");
    assert!(
        sqlx["phases"]["execute_marshal"].as_f64().unwrap() > 0.0,
        "{sqlx}"
    );
}

#[test]
fn async_sqlite_runs_in_its_own_harness_beside_rusqlite_and_sqlx() {
    let cache = tempfile::tempdir().unwrap();
    let v = json(&mut tiny(
        cache.path(),
        "100",
        &["rusqlite", "sqlx", "async-sqlite", "async-sqlite/dispatch"],
    ));
    let rows = v["comparison"][0].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["bench"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["rusqlite", "sqlx", "async-sqlite", "async-sqlite/dispatch"]
    );
    for r in rows {
        assert!(r["ratio"]["value"].as_f64().unwrap() > 0.0, "{r}");
    }
    let run = &v["runs"][0];
    assert_eq!(run["done"], true);
    let starts: Vec<&str> = std::iter::once(&run["start"])
        .chain(run["more_starts"].as_array().unwrap())
        .map(|s| s["harness"].as_str().unwrap())
        .collect();
    assert_eq!(starts, ["core", "sqlx", "async-sqlite"]);
    // The harness's own dependency graph: async-sqlite 0.7 on rusqlite 0.41, not the core's 0.40.
    let crates = &run["more_starts"][1]["env"]["crates"];
    assert!(
        crates["async-sqlite"].as_str().unwrap().starts_with("0.7"),
        "{crates}"
    );
    assert!(
        crates["rusqlite"].as_str().unwrap().starts_with("0.41"),
        "{crates}"
    );
    assert!(
        run["start"]["env"]["crates"]["rusqlite"]
            .as_str()
            .unwrap()
            .starts_with("0.40")
    );
    // Every bench names the crate and its exact version as its backend.
    let bench = |name: &str| common::bench_of(run, name);
    let backend = bench("async-sqlite")["backend"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(backend.starts_with("async-sqlite 0.7."), "{backend}");
    assert_eq!(bench("async-sqlite")["sqlite"]["journal_mode"], "wal");
}

fn rows_via_rusqlite(path: &Path) -> Vec<dataset::BenchRow> {
    bench_core::on_rusqlite::read_rows(path).unwrap()
}

fn dataset_status(v: &serde_json::Value) -> String {
    v["runs"][0]["dataset"]["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn both_harnesses_build_and_accept_the_same_dataset() {
    let key = |rows| DatasetKey::new("single_row_lookup", rows, single_row_lookup::spec().seed);
    // sqlx builds, rusqlite checks and reuses.
    let a = tempfile::tempdir().unwrap();
    assert_eq!(
        dataset_status(&json(&mut tiny(a.path(), "257", &["sqlx/decode"]))),
        "built"
    );
    let path = key(257).path_in(a.path());
    bench_core::on_rusqlite::validate(&path, &key(257))
        .expect("rusqlite accepts the sqlx-built file");
    assert_eq!(
        rows_via_rusqlite(&path),
        (1..=257).map(row).collect::<Vec<_>>()
    );
    assert_eq!(
        dataset_status(&json(&mut tiny(a.path(), "257", &["decode"]))),
        "reused"
    );
    // rusqlite builds, sqlx checks and reuses.
    let b = tempfile::tempdir().unwrap();
    assert_eq!(
        dataset_status(&json(&mut tiny(b.path(), "257", &["decode"]))),
        "built"
    );
    assert_eq!(
        dataset_status(&json(&mut tiny(b.path(), "257", &["sqlx/decode"]))),
        "reused"
    );
    // The same bytes of content either way.
    assert_eq!(
        rows_via_rusqlite(&path),
        rows_via_rusqlite(&key(257).path_in(b.path()))
    );
    // And both walk the ids in the same order: each start event names the seed, and the order
    // is a function of rows and seed alone (pinned in bench-core's tests).
    let v = json(&mut tiny(b.path(), "257", &["decode", "sqlx/decode"]));
    assert_eq!(
        v["runs"][0]["start"]["seed"],
        v["runs"][0]["more_starts"][0]["seed"]
    );
    assert_eq!(
        v["runs"][0]["start"]["knobs"],
        v["runs"][0]["more_starts"][0]["knobs"]
    );
}

/// sql-middleware on turso in its own harness beside rusqlite: its versions and allocator
/// said, and one dataset file for both (turso builds it and rusqlite's check accepts it;
/// rusqlite builds it and turso runs on it).
#[test]
fn sql_middleware_on_turso_runs_beside_rusqlite_and_shares_the_dataset() {
    let key = |rows| DatasetKey::new("single_row_lookup", rows, single_row_lookup::spec().seed);
    let a = tempfile::tempdir().unwrap();
    let v = json(&mut tiny(
        a.path(),
        "257",
        &["sql-middleware/turso", "sql-middleware/turso/decode"],
    ));
    assert_eq!(dataset_status(&v), "built");
    let run = &v["runs"][0];
    assert_eq!(run["done"], true);
    assert_eq!(run["start"]["harness"], "sql-middleware-turso");
    let crates = &run["start"]["env"]["crates"];
    assert!(
        crates["turso"].as_str().unwrap().starts_with("0.6"),
        "{crates}"
    );
    assert!(
        run["start"]["env"]["settings"]["sql-middleware pool"]
            .as_str()
            .unwrap()
            .contains("mimalloc")
    );
    let backend = run["benches"][0]["backend"].as_str().unwrap();
    assert!(
        backend.starts_with("sql-middleware 0.9.") && backend.contains("on turso 0.6."),
        "{backend}"
    );
    let path = key(257).path_in(a.path());
    bench_core::on_rusqlite::validate(&path, &key(257))
        .expect("rusqlite accepts the turso-built file");
    assert_eq!(
        rows_via_rusqlite(&path),
        (1..=257).map(row).collect::<Vec<_>>()
    );
    let b = tempfile::tempdir().unwrap();
    assert_eq!(
        dataset_status(&json(&mut tiny(b.path(), "257", &["decode"]))),
        "built"
    );
    let v = json(&mut tiny(
        b.path(),
        "257",
        &["decode", "sql-middleware/turso"],
    ));
    let starts: Vec<&str> = std::iter::once(&v["runs"][0]["start"])
        .chain(v["runs"][0]["more_starts"].as_array().unwrap())
        .map(|s| s["harness"].as_str().unwrap())
        .collect();
    assert_eq!(starts, ["core", "sql-middleware-turso"]);
    let rows = v["comparison"][0].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["bench"].as_str().unwrap()).collect();
    assert_eq!(names, ["decode", "sql-middleware/turso"]);
}

fn fake_harness(dir: &Path, script: &str) -> std::path::PathBuf {
    let p = dir.join("fake-harness");
    std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_broken_harness_fails_its_part_and_the_rest_is_kept() {
    let cache = tempfile::tempdir().unwrap();
    for (script, expect) in [
        (
            "echo 'harness exploded' >&2; echo 'this is not json'; sleep 5",
            "sqlx harness: runner wrote a malformed line",
        ),
        (
            "echo 'early exit' >&2; exit 3",
            "sqlx harness: runner exited with exit status: 3; stderr:\nearly exit",
        ),
        // A harness that stops writing is stopped by the watchdog.
        (
            "exec sleep 30",
            "sqlx harness: no progress for 2 s: the runner wrote nothing in that time and was stopped",
        ),
        // Events nobody asked for, or that cannot be, are not believed.
        (
            r#"echo '{"v":1,"type":"bench_start","bench":"bogus","backend":"x","ops":1}'; sleep 5"#,
            "sqlx harness: runner sent an event that cannot be right: an event for bench \"bogus\", which was not asked for (asked: sqlx)",
        ),
        (
            r#"echo '{"v":1,"type":"bench_start","bench":"sqlx","backend":"x","ops":1}'; echo '{"v":1,"type":"sample","bench":"sqlx","iter":3,"ops":1,"elapsed_ns":5}'; sleep 5"#,
            "sqlx harness: runner sent an event that cannot be right: sqlx: sample 3 came where sample 0 was due",
        ),
    ] {
        let fake = fake_harness(cache.path(), script);
        let out = tiny(cache.path(), "50", &["rusqlite", "sqlx"])
            .env("BENCHSCOPE_SQLX_HARNESS", &fake)
            .env("BENCHSCOPE_SILENCE_S", "2")
            .assert()
            .code(1)
            .get_output()
            .clone();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expect), "{stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = v["comparison"][0].as_array().unwrap();
        assert_eq!(rows.len(), 1, "rusqlite's result is kept: {rows:?}");
        assert_eq!(rows[0]["bench"], "rusqlite");
        assert!(v["runs"][0]["error"].as_str().unwrap().contains(expect));
    }
    let missing = cache.path().join("nope");
    tiny(cache.path(), "50", &["sqlx"])
        .env("BENCHSCOPE_SQLX_HARNESS", &missing)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "BENCHSCOPE_SQLX_HARNESS points to",
        ));
}
