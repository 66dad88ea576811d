//! crud_overhead for real through the front end: every backend, the sqlx and async-sqlite harnesses and PostgreSQL
//! (BENCHSCOPE_POSTGRES_URL; `.ci/run` starts a server) included, on a tiny mix; the overview
//! (per-operation overhead, overall, SELECT cached, the sweep) in JSON and markdown.

mod common;

const KNOBS: &[&str] = &[
    "--knob",
    "ops=80",
    "--knob",
    "batch=10",
    "--knob",
    "sweep_rows=40",
    "--concurrency",
    "2",
];

#[test]
fn every_backend_gets_its_overhead_per_operation_and_the_sweep() {
    let cache = tempfile::tempdir().unwrap();
    let pg = common::postgres_url("crud_overhead (its postgres benches)");
    let mut backends = vec![
        "rusqlite",
        "middleware/spin",
        "turso",
        "sqlx_sqlite",
        "async-sqlite",
        "diesel",
    ];
    if pg.is_some() {
        backends.push("postgres");
        backends.push("sql-middleware/postgres");
    }
    let mut benches = Vec::new();
    for case in [
        "create",
        "begin",
        "insert",
        "update",
        "delete",
        "select",
        "commit",
        "select_cached",
        "batch_1",
        "batch_10",
        "prepared",
    ] {
        for b in &backends {
            benches.push(format!("{case}/{b}"));
        }
    }
    // A query's first run, where a backend's statement cache can be left out (diesel and
    // PostgreSQL are skipped, saying why).
    let firsts: Vec<&str> = backends
        .iter()
        .copied()
        .filter(|b| !["diesel", "postgres", "sql-middleware/postgres"].contains(b))
        .collect();
    for b in &firsts {
        benches.push(format!("select_first/{b}"));
    }
    let names: Vec<&str> = benches.iter().map(String::as_str).collect();
    let mut cmd = common::run_json("crud_overhead", KNOBS, cache.path(), &names);
    if let Some(url) = &pg {
        cmd.env("BENCHSCOPE_POSTGRES_URL", url);
    } else {
        cmd.env_remove("BENCHSCOPE_POSTGRES_URL");
    }
    let out = cmd.assert().success().get_output().clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let run = &v["runs"][0];
    for b in run["benches"].as_array().unwrap() {
        assert!(b["error"].is_null() && b["skipped"].is_null(), "{b}");
        // diesel reports its statement cache, the other crates do not: only its benches say.
        let st = &b["statements"];
        if b["backend"].as_str().unwrap().starts_with("diesel") {
            let n = |k: &str| st[k].as_u64().unwrap_or_else(|| panic!("{k} in {b}"));
            assert!(n("run") > 0 && n("ops") > 0, "{b}");
            assert!(n("prepared") + n("text") <= n("run"), "{b}");
        } else {
            assert!(st.is_null(), "{b}");
        }
    }
    let bench = |name: &str| common::bench_of(run, name);
    // The cached SELECTs: one statement an operation, every one from diesel's cache (the
    // warm-up prepared them), none run as text.
    let cached = bench("select_cached/diesel");
    let st = &cached["statements"];
    assert_eq!(st["run"], st["ops"], "{st}");
    assert_eq!(
        (&st["prepared"], &st["text"]),
        (&0.into(), &0.into()),
        "{st}"
    );
    // A transaction's BEGIN: SQL run as text, said so.
    let begin = bench("begin/diesel");
    assert!(begin["statements"]["text"].as_u64().unwrap() > 0, "{begin}");
    // A batch of 10 rows through diesel: its own transaction around them (BEGIN, 10 INSERTs,
    // COMMIT), whose edges are text, not cache hits: at least 2 statements in 12.
    let batch = bench("batch_10/diesel");
    let st = &batch["statements"];
    assert!(
        st["text"].as_u64().unwrap() * 6 >= st["run"].as_u64().unwrap(),
        "{st}"
    );
    let o = &v["crud_overhead"][0];
    let ops = o["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 8 * backends.len() + firsts.len());
    for r in ops {
        if r["backend"] == "rusqlite" {
            assert_eq!(r["band"], "baseline", "{r}");
        } else {
            let x = r["overhead"]["value"].as_f64().unwrap();
            assert!(x > 0.0, "{r}");
            assert!(r["band"].is_string(), "{r}");
        }
        assert!(r["count"].as_u64().unwrap() > 0, "{r}");
    }
    // The mix's counts are the same on every backend (the same seeded sequence).
    let count = |backend: &str, op: &str| {
        ops.iter()
            .find(|r| r["backend"] == backend && r["op"] == op)
            .map(|r| r["count"].as_u64().unwrap())
    };
    for b in &backends {
        for op in ["insert", "update", "delete", "select", "commit"] {
            assert_eq!(count(b, op), count("rusqlite", op), "{b} {op}");
        }
    }
    assert_eq!(count("rusqlite", "commit"), Some(8));
    assert_eq!(count("rusqlite", "select_cached"), Some(100));
    assert_eq!(count("rusqlite", "select_first"), Some(100));
    let first = o["first_vs_cached"].as_object().unwrap();
    assert_eq!(first.len(), firsts.len(), "{first:?}");
    for r in first.values() {
        assert!(r["value"].as_f64().unwrap() > 0.0);
    }
    let overall = o["overall"].as_object().unwrap();
    assert_eq!(
        overall.len(),
        backends.len() - 1,
        "every backend but rusqlite"
    );
    for r in overall.values() {
        assert!(r["value"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(
        o["cached_vs_select"].as_object().unwrap().len(),
        backends.len()
    );
    let sweep = o["sweep"].as_array().unwrap();
    assert_eq!(sweep.len(), backends.len());
    for r in sweep {
        assert_eq!(r["speedup"][0], 1.0, "{r}");
        assert!(r["rows_per_s"][1].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["time_ns"][2].is_null(), "batch_50 did not run: {r}");
    }
    assert_eq!(o["sweep_rows"], 40);
}

#[test]
fn markdown_and_text_show_the_overhead_tables() {
    let cache = tempfile::tempdir().unwrap();
    let benches = [
        "insert/rusqlite",
        "insert/middleware/inline",
        "select/rusqlite",
        "select/middleware/inline",
        "select_cached/rusqlite",
        "select_cached/middleware/inline",
        "select_cached/diesel",
        "batch_1/rusqlite",
        "batch_10/rusqlite",
        "prepared/rusqlite",
    ];
    for (format, want) in [
        ("markdown", "#### Overhead per operation against rusqlite"),
        ("table", "overhead per operation against rusqlite"),
    ] {
        let mut cmd = common::benchscope();
        cmd.args(["run", "crud_overhead"])
            .args(KNOBS)
            .args(common::QUICK)
            .args(["--format", format])
            .arg("--cache-dir")
            .arg(cache.path())
            .env_remove("BENCHSCOPE_POSTGRES_URL")
            .env_remove("NO_COLOR");
        for b in benches {
            cmd.args(["--bench", b]);
        }
        let out = cmd.assert().success().get_output().clone();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(want), "{format}: {text}");
        assert!(text.contains("SELECT cached vs SELECT"), "{text}");
        assert!(text.contains("speedup against 1 row per INSERT"), "{text}");
        assert!(text.contains("vs rusqlite, same op"), "{text}");
        // diesel's statement cache, as its events report it, beside its row.
        assert!(
            text.contains(
                "select_cached/diesel: statement cache (diesel's Instrumentation events): 100.00% hits; "
            ),
            "{text}"
        );
        // Not a terminal: no colour codes, whatever NO_COLOR says.
        assert!(!text.contains('\x1b'), "{text}");
    }
}

/// A saved JSON report renders again with `show`, without running anything; a file that is
/// not one is refused with its reason.
#[test]
fn show_renders_a_saved_report() {
    let cache = tempfile::tempdir().unwrap();
    let out = common::run_json(
        "crud_overhead",
        KNOBS,
        cache.path(),
        &["insert/rusqlite", "insert/middleware/inline"],
    )
    .env_remove("BENCHSCOPE_POSTGRES_URL")
    .assert()
    .success()
    .get_output()
    .clone();
    let file = cache.path().join("saved.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let md = common::benchscope()
        .args(["show", "--format", "markdown"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("| insert | middleware/inline | "), "{md}");
    std::fs::write(&file, "{\"schema\": \"other\"}").unwrap();
    common::benchscope()
        .arg("show")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a benchscope report"));
}

/// In memory: rusqlite, the middleware, turso and sqlx each run the mix on in-memory
/// databases.
#[test]
fn every_sqlite_backend_runs_the_mix_in_memory() {
    let cache = tempfile::tempdir().unwrap();
    let benches = [
        "insert/rusqlite",
        "insert/middleware/spawn_blocking",
        "insert/turso",
        "insert/sqlx_sqlite",
        "select_cached/sqlx_sqlite",
    ];
    let mut knobs = KNOBS.to_vec();
    knobs.extend_from_slice(&["--knob", "storage=memory"]);
    let out = common::run_json("crud_overhead", &knobs, cache.path(), &benches)
        .env_remove("BENCHSCOPE_POSTGRES_URL")
        .assert()
        .success()
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = v["runs"][0]["benches"].as_array().unwrap();
    assert_eq!(run.len(), benches.len());
    for b in run {
        assert!(b["error"].is_null() && b["summary"].is_object(), "{b}");
    }
}
