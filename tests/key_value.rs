//! key_value for real through the front end, the sqlx and async-sqlite harnesses and the
//! rusqlite-based crates included: every group's table with
//! the suite's targets judged, in JSON and text.

mod common;

#[test]
fn every_group_on_every_backend_with_the_suites_targets() {
    let cache = tempfile::tempdir().unwrap();
    let mut benches = Vec::new();
    for case in [
        "single_get_100b",
        "single_put_10kb",
        "bulk_put",
        "concurrent_reads_1",
        "concurrent_reads_2",
        "prefix_scan_10",
        "expired_read",
    ] {
        for b in [
            "memory",
            "rusqlite",
            "middleware/spin",
            "turso",
            "sqlx_sqlite",
            "tokio-rusqlite",
            "async-sqlite",
            "r2d2_sqlite/block_in_place",
            "sql-middleware",
        ] {
            benches.push(format!("{case}/{b}"));
        }
    }
    let names: Vec<&str> = benches.iter().map(String::as_str).collect();
    let out = common::run_json("key_value", &["--knob", "keys=30"], cache.path(), &names)
        .assert()
        .success()
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for b in v["runs"][0]["benches"].as_array().unwrap() {
        assert!(b["error"].is_null() && b["skipped"].is_null(), "{b}");
    }
    let groups = v["key_value"][0]["groups"].as_array().unwrap();
    let names: Vec<&str> = groups
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "single_operations",
            "batch_operations",
            "concurrent_access",
            "key_patterns",
            "ttl_operations"
        ]
    );
    let rows: Vec<&serde_json::Value> = groups
        .iter()
        .flat_map(|g| g["rows"].as_array().unwrap())
        .collect();
    assert_eq!(rows.len(), benches.len());
    let row = |case: &str, backend: &str| {
        *rows
            .iter()
            .find(|r| r["case"] == case && r["backend"] == backend)
            .unwrap()
    };
    // The in-memory store is judged against the in-memory targets, SQLite against SQLite's.
    assert_eq!(row("single_get_100b", "memory")["target"], "< 1 µs per op");
    assert_eq!(
        row("single_get_100b", "sqlx_sqlite")["target"],
        "< 100 µs per op"
    );
    assert_eq!(row("bulk_put", "rusqlite")["target"], ">= 10K ops/s");
    assert!(row("bulk_put", "rusqlite")["holds"].is_string());
    assert_eq!(
        row("concurrent_reads_2", "turso")["target"],
        "linear: >= 1.6x"
    );
    assert!(
        row("concurrent_reads_2", "turso")["speedup"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(row("expired_read", "sqlx_sqlite")["target"].is_null());
    // The crates find what rusqlite finds: the same work check passed on every sample (no
    // error above), and a row with a figure in every group.
    for backend in [
        "tokio-rusqlite",
        "async-sqlite",
        "r2d2_sqlite/block_in_place",
    ] {
        assert_eq!(
            row("single_get_100b", backend)["target"],
            "< 100 µs per op",
            "{backend}"
        );
        assert!(
            row("concurrent_reads_2", backend)["speedup"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    let text = common::benchscope()
        .args([
            "run",
            "key_value",
            "--knob",
            "keys=10",
            "--bench",
            "bulk_get/memory",
        ])
        .args(["--bench", "bulk_get/rusqlite"])
        .args(common::QUICK)
        .arg("--cache-dir")
        .arg(cache.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("batch_operations"), "{text}");
    assert!(text.contains("suite targets"), "{text}");
    assert!(text.contains("memory: "), "{text}");
}

/// In memory, every backend keeps its store in memory databases; sqlx's in-memory database
/// has no memory map and says so rather than failing.
#[test]
fn every_backend_runs_in_memory() {
    let cache = tempfile::tempdir().unwrap();
    let benches: Vec<String> = [
        "memory",
        "rusqlite",
        "middleware/worker",
        "turso",
        "sqlx_sqlite",
        "async-sqlite",
        "r2d2_sqlite/spawn_blocking",
    ]
    .iter()
    .flat_map(|b| [format!("bulk_get/{b}"), format!("concurrent_reads_2/{b}")])
    .collect();
    let names: Vec<&str> = benches.iter().map(String::as_str).collect();
    let knobs = ["--knob", "keys=30", "--knob", "storage=memory"];
    let out = common::run_json("key_value", &knobs, cache.path(), &names)
        .assert()
        .success()
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &v["runs"][0]["benches"];
    for b in run.as_array().unwrap() {
        assert!(b["error"].is_null() && b["skipped"].is_null(), "{b}");
        assert!(b["summary"].is_object(), "{b}");
    }
    let sqlx = run
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "bulk_get/sqlx_sqlite")
        .unwrap();
    assert_eq!(sqlx["sqlite"]["mmap_size"], "unsupported");
}
