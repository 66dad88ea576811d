//! bulk_insert for real: every SQLite backend on a tiny row count, and PostgreSQL against a real
//! server (BENCHSCOPE_POSTGRES_URL; `.ci/run` starts one), plus the missing and bad URL paths.

mod common;

use assert_cmd::Command;
use common::{QUICK, benchscope};
use predicates::prelude::*;

fn run(cache: &std::path::Path, benches: &[&str]) -> Command {
    common::run_json(
        "bulk_insert",
        &["--rows", "60", "--concurrency", "2"],
        cache,
        benches,
    )
}

/// What a run printed, stdout then stderr.
fn all_output(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn doc(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn every_sqlite_backend_inserts_and_reports_rows_per_second() {
    let cache = tempfile::tempdir().unwrap();
    let benches = [
        "rusqlite",
        "middleware/inline",
        "middleware/spawn_blocking",
        "middleware/interact",
        "middleware/worker",
        "middleware/spin",
        "turso",
        "sqlx_sqlite",
    ];
    let out = run(cache.path(), &benches)
        .env_remove("BENCHSCOPE_POSTGRES_URL")
        .assert()
        .success()
        .get_output()
        .clone();
    let v = doc(&out);
    let rows = v["comparison"][0].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["bench"].as_str().unwrap()).collect();
    assert_eq!(names, benches);
    for r in rows {
        assert!(r["ops_per_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    let run0 = &v["runs"][0];
    assert_eq!(run0["start"]["knobs"]["rows"], 60);
    assert!(
        run0["benches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["ops"] == 60),
        "one sample inserts every row"
    );
    // Scratch files are cleaned up.
    let left: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().starts_with("bulk-")),
        "{left:?}"
    );
}

#[test]
fn postgres_without_a_url_is_skipped_not_failed() {
    let cache = tempfile::tempdir().unwrap();
    for url in [None, Some("")] {
        let mut c = run(
            cache.path(),
            &["rusqlite", "postgres", "sql-middleware/postgres"],
        );
        match url {
            None => c.env_remove("BENCHSCOPE_POSTGRES_URL"),
            Some(u) => c.env("BENCHSCOPE_POSTGRES_URL", u),
        };
        let out = c.assert().success().get_output().clone();
        let v = doc(&out);
        for name in ["postgres", "sql-middleware/postgres"] {
            let pg = common::bench_of(&v["runs"][0], name);
            assert_eq!(
                pg["skipped"], "no PostgreSQL URL (set --postgres-url or BENCHSCOPE_POSTGRES_URL)",
                "{name}"
            );
            assert!(pg.get("error").is_none(), "{name}");
        }
    }
}

#[test]
fn bad_postgres_urls_fail_clearly_without_the_password() {
    let cache = tempfile::tempdir().unwrap();
    let refused = "postgres://someone:hunter2secret@127.0.0.1:1/postgres";
    let out = run(cache.path(), &["rusqlite", "postgres"])
        .arg("--postgres-url")
        .arg(refused)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let text = all_output(&out);
    assert!(
        text.contains("PostgreSQL at postgres://someone:***@127.0.0.1:1/postgres"),
        "{text}"
    );
    assert!(text.contains("Connection refused"), "{text}");
    assert!(!text.contains("hunter2secret"), "the password never shows");
    let v = doc(&out);
    assert_eq!(
        v["comparison"][0].as_array().unwrap().len(),
        1,
        "rusqlite still ran"
    );
}

/// A password in any form a PostgreSQL connection string can carry never shows: not on
/// stderr, not in the JSON, not in the markdown (the explorer's detail shows the same texts).
#[test]
fn no_form_of_password_shows_anywhere() {
    let cache = tempfile::tempdir().unwrap();
    for (conn, secret) in [
        (
            "postgres://127.0.0.1:1/x?user=u&password=hunter2q",
            "hunter2q",
        ),
        (
            "postgres://127.0.0.1:1/x?user=u&pass%77ord=hunter2e",
            "hunter2e",
        ),
        ("postgres://u:hunter2%40pct@127.0.0.1:1/x", "hunter2@pct"),
        (
            "host=127.0.0.1 port=1 user=u password=hunter2kv dbname=x",
            "hunter2kv",
        ),
        (
            "host=127.0.0.1 port=1 password='hunter2 quoted' dbname=x",
            "hunter2 quoted",
        ),
    ] {
        for format in ["json", "markdown"] {
            let out = benchscope()
                .args(["run", "bulk_insert", "--rows", "20", "--bench", "postgres"])
                .args(["--bench", "sql-middleware/postgres"])
                .args(QUICK)
                .args(["--format", format, "--cache-dir"])
                .arg(cache.path())
                .env("BENCHSCOPE_POSTGRES_URL", conn)
                .assert()
                .code(1)
                .get_output()
                .clone();
            let text = all_output(&out);
            assert!(text.contains("PostgreSQL at "), "{conn}: {text}");
            let encoded: String = secret
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            for spelling in [secret, encoded.as_str()] {
                assert!(
                    !text.contains(spelling),
                    "{conn}: {spelling} shows in {text}"
                );
            }
        }
    }
}

#[test]
fn postgres_bulk_insert_against_a_real_server() {
    let Some(url) = common::postgres_url("bulk_insert's postgres bench") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let out = run(cache.path(), &["postgres", "sql-middleware/postgres"])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = doc(&out);
    let rows = v["comparison"][0].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["bench"].as_str().unwrap()).collect();
    assert_eq!(names, ["sql-middleware/postgres", "postgres"]);
    for row in rows {
        assert!(row["ops_per_s"].as_f64().unwrap() > 0.0, "{row}");
    }
    // sql-middleware's rows are bench-core's (its postgres feature); sqlx's its harness's.
    assert_eq!(v["runs"][0]["start"]["harness"], "core");
    assert_eq!(v["runs"][0]["more_starts"][0]["harness"], "sqlx");
    // method=batch_text: the rows as PostgreSQL's literals, through each crate's batch call
    // (the work check: every row in the table).
    let out = run(cache.path(), &["postgres", "sql-middleware/postgres"])
        .args(["--knob", "method=batch_text"])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = doc(&out);
    for b in v["runs"][0]["benches"].as_array().unwrap() {
        assert!(
            b.get("skipped").is_none() && b.get("error").is_none(),
            "{b}"
        );
        assert_eq!(b["ops"], 60, "{b}");
    }
    assert_eq!(v["comparison"][0].as_array().unwrap().len(), 2, "{v}");
    // A wrong password: a clear error that does not echo it.
    let bad = match url
        .split_once("://")
        .and_then(|(s, rest)| rest.split_once('@').map(|(ui, host)| (s, ui, host)))
    {
        Some((scheme, userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap();
            format!("{scheme}://{user}:definitely-wrong-pw@{host}")
        }
        None => panic!("BENCHSCOPE_POSTGRES_URL has no user: {url}"),
    };
    run(cache.path(), &["postgres", "sql-middleware/postgres"])
        .arg("--postgres-url")
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("password authentication failed")
                .and(predicate::str::contains("definitely-wrong-pw").not()),
        );
}
