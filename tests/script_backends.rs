//! Every script of assets/scripts, and a read-only one, through every SQLite backend of the
//! script target (the core's, turso's and the harnesses': sqlx, async-sqlite, sql-middleware on
//! turso), on a database in WAL mode and in rollback-journal mode: each bench finishes (turso's
//! are skipped outside WAL, and say so, and fail on FTS5, which turso does not read), and every
//! bench's rows are the same as rusqlite's.
//! A script that only reads runs on the snapshot opened read-only, which each backend must
//! open without trying to write it (its journal mode, its pragmas).

mod common;

use std::path::{Path, PathBuf};

use common::{QUICK, benchscope};

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scripts")
        .join(name)
}

/// Every bench of the script target that runs on SQLite (all but PostgreSQL's), from the
/// catalog.
fn sqlite_benches() -> Vec<&'static str> {
    bench_core::workloads::script::spec()
        .benches
        .iter()
        .filter(|b| b.kind != bench_core::catalog::BenchKind::Micro)
        .filter(|b| b.subject != bench_core::catalog::Subject::Postgres)
        .map(|b| b.name)
        .collect()
}

/// turso's benches run in WAL mode only.
fn turso(name: &str) -> bool {
    name.contains("turso")
}

#[test]
fn every_script_runs_on_every_sqlite_backend_in_either_journal_mode_with_the_same_rows() {
    let benches = sqlite_benches();
    assert!(benches.len() >= 16, "{benches:?}");
    let dir = tempfile::tempdir().unwrap();
    // Each script, its init file and variables; lookup.sql, json.sql and fts.sql only read.
    let cases: [(&str, &str, &[&str]); 5] = [
        ("tpcb.sql", "tpcb-init.sql", &["scale=1"]),
        ("lookup.sql", "lookup-init.sql", &["keys=100000"]),
        ("touch.sql", "lookup-init.sql", &["keys=100000"]),
        ("json.sql", "json-init.sql", &["customers=2000"]),
        ("fts.sql", "fts-init.sql", &["words=500"]),
    ];
    for (script, init, defines) in cases {
        let db = dir.path().join(format!("{init}.db"));
        let mut built: Option<String> = None;
        for mode in ["wal", "delete"] {
            let mut c = benchscope();
            c.args(["run", "script", "--script"])
                .arg(asset(script))
                .args(["--db"])
                .arg(&db)
                .args(["--init"])
                .arg(asset(init))
                .args(["--knob", &format!("journal_mode={mode}")])
                .args(["--transactions", "5", "--format", "json", "--cache-dir"])
                .arg(dir.path().join("cache"))
                .args(QUICK);
            for d in defines {
                c.args(["-D", d]);
            }
            for b in &benches {
                c.args(["--bench", b]);
            }
            // A run with a failed bench exits 1 (turso's on fts.sql in WAL mode).
            let fails = script == "fts.sql" && mode == "wal";
            let out = c
                .timeout(std::time::Duration::from_secs(900))
                .assert()
                .code(if fails { 1 } else { 0 })
                .get_output()
                .stdout
                .clone();
            let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
            let ran = doc["runs"][0]["benches"].as_array().unwrap();
            let case = format!("{script} in {mode} mode");
            for name in &benches {
                let b = ran
                    .iter()
                    .find(|b| b["name"] == *name)
                    .unwrap_or_else(|| panic!("{case}: {name} missing"));
                if mode != "wal" && turso(name) {
                    let why = b["skipped"]
                        .as_str()
                        .unwrap_or_else(|| panic!("{case}: {b}"));
                    assert!(why.contains("WAL mode only"), "{case}: {name}: {why}");
                    continue;
                }
                // turso reads no FTS5 table (a virtual table): the bench fails saying so, the
                // others run (docs/src/scripts.md says it).
                if script == "fts.sql" && turso(name) {
                    let e = b["error"].as_str().unwrap_or_else(|| panic!("{case}: {b}"));
                    assert!(e.contains("no such table: docs"), "{case}: {name}: {e}");
                    continue;
                }
                assert!(
                    b["error"].is_null() && b["summary"]["median"].as_f64().is_some(),
                    "{case}: {name}: {b}"
                );
                let rows = &doc["script"][0][*name]["rows"];
                let want = if *name == "rusqlite" {
                    "reference"
                } else {
                    "same"
                };
                assert_eq!(rows["status"], want, "{case}: {name}: {rows}");
            }
            // A script that only reads ran on the snapshot read-only, one that writes on
            // copies: either way the database given is the bytes it was.
            let sum = bench_core::script::original::sha256(&db, "--db").unwrap();
            assert_eq!(*built.get_or_insert_with(|| sum.clone()), sum, "{case}");
        }
    }
}
