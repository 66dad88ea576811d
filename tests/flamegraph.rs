//! `run --flamegraph` for real: perf records each bench's runner, and the run carries a
//! flamegraph SVG and a by-layer breakdown per bench, marked as profiled.

mod common;

use common::benchscope;

/// Whether perf can record here; in CI it must (`.ci/run` installs it).
fn perf_works(test: &str) -> bool {
    let ok = std::process::Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-o",
            "/dev/null",
            "--",
            "true",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        bench_core::testing::skip(
            test,
            "perf cannot record here (apt-get install linux-perf; kernel.perf_event_paranoid)",
        );
    }
    ok
}

#[test]
fn each_bench_gets_a_flamegraph_and_a_breakdown() {
    if !perf_works("each_bench_gets_a_flamegraph_and_a_breakdown") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let fg = work.path().join("fg");
    let out = benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--rows",
            "200",
            "--lookups",
            "100",
            "--concurrency",
            "2",
            "--bench",
            "rusqlite",
            "--bench",
            "middleware/spin",
            "--time",
            "0.3",
            "--warmup",
            "0.05",
            "--format",
            "json",
            "--cache-dir",
        ])
        .arg(work.path().join("cache"))
        .arg("--flamegraph")
        .arg(&fg)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["profiled"], true, "{run}");
    for (i, bench) in ["rusqlite", "middleware/spin"].iter().enumerate() {
        let b = &run["benches"][i];
        assert_eq!(b["name"], *bench);
        assert!(b["summary"]["median"].as_f64().unwrap() > 0.0);
        let p = &b["profile"];
        assert!(p.get("error").is_none(), "{bench}: {p}");
        assert!(p["cpu_ns"].as_u64().unwrap() > 0, "{bench}: {p}");
        let layers: Vec<&str> = p["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l[0].as_str().unwrap())
            .collect();
        // Both look rows up in SQLite.
        assert!(layers.contains(&"sqlite"), "{bench}: {layers:?}");
        let svg = std::path::PathBuf::from(p["flamegraph"].as_str().unwrap());
        assert!(svg.starts_with(&fg), "{}", svg.display());
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("<svg") && text.contains("sqlite3"), "{bench}");
        assert!(svg.with_extension("folded").exists());
        assert!(
            !svg.with_extension("perf.data").exists(),
            "the recording is removed"
        );
    }
    // The spin strategy's own code (the spinning hand-off) shows as the middleware layer.
    let spin = &run["benches"][1]["profile"]["layers"];
    assert!(
        spin.as_array()
            .unwrap()
            .iter()
            .any(|l| l[0] == "middleware"),
        "{spin}"
    );
}

#[test]
fn a_bad_flamegraph_folder_is_refused_before_anything_runs() {
    if !perf_works("a_bad_flamegraph_folder_is_refused_before_anything_runs") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--bench",
            "rusqlite",
            "--flamegraph",
        ])
        .arg(&file)
        .arg("--cache-dir")
        .arg(work.path().join("cache"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "error: cannot create the flamegraph folder {}",
            file.display()
        )));
}
