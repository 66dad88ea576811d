//! The results store end to end: real runs recorded in a SQLite store and read back by
//! `history`, imports, an unreachable store, and two "machines" (two data folders) writing to
//! one PostgreSQL store at the same time.

mod common;

use std::path::Path;

use common::benchscope;

/// A quick run of `benches`, recorded in `store` as the machine of `data`, JSON on stdout.
fn recorded_run(data: &Path, cache: &Path, store: &str, benches: &[&str]) -> assert_cmd::Command {
    let mut c = common::small_run(data, cache, Some(store), benches);
    c.args(["--format", "json"]);
    c
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `benchscope ARGS` as the machine of `data`, run to its end.
fn cli(data: &Path, args: &[&str]) -> std::process::Output {
    store_cmd(data).args(args).output().unwrap()
}

fn store_cmd(data: &Path) -> assert_cmd::Command {
    let mut c = benchscope();
    c.env_remove("BENCHSCOPE_NO_STORE")
        .env("BENCHSCOPE_DATA_DIR", data);
    c
}

#[test]
fn runs_are_recorded_and_history_and_imports_read_them() {
    let work = tempfile::tempdir().unwrap();
    let (data, cache) = (work.path().join("data"), work.path().join("cache"));
    let db = work.path().join("results.sqlite");
    let db_s = db.display().to_string();
    for label in ["first", "second"] {
        let o = recorded_run(&data, &cache, &db_s, &["rusqlite", "middleware/spin"])
            .args(["--label", label])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("recorded 1 run in the results store {db_s}"))
                && e.contains(&format!("label {label}")),
            "{e}"
        );
    }
    // --no-store records nothing.
    let o = recorded_run(&data, &cache, &db_s, &["rusqlite"])
        .arg("--no-store")
        .output()
        .unwrap();
    assert!(!o.status.success(), "--store and --no-store conflict");
    // A run with BENCHSCOPE_NO_STORE set (as every test's is) records nothing.
    let o = common::small_run(&data, &cache, None, &["rusqlite"])
        .arg("--export-json")
        .arg(work.path().join("report.json"))
        .args(["--save-baseline", "b1", "--baseline-dir"])
        .arg(work.path().join("baselines"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("recorded"), "{}", stderr(&o));

    let info = cli(&data, &["store", "info", "--store", &db_s]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("schema version 3")
            && text.contains("2 runs from 1 machine, 4 bench results"),
        "{text}"
    );

    // history: one series per bench, a point per label, in the order recorded.
    let o = cli(
        &data,
        &[
            "history",
            "single_row_lookup",
            "--format",
            "json",
            "--store",
            &db_s,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let series = doc.as_array().unwrap();
    let benches: Vec<&str> = series
        .iter()
        .map(|s| s["bench"].as_str().unwrap())
        .collect();
    assert_eq!(benches, ["middleware/spin", "rusqlite"]);
    for s in series {
        let names: Vec<&str> = s["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["first", "second"]);
        assert!(s["points"][0]["median"].as_f64().unwrap() > 0.0);
        // These test binaries are debug builds: said, never mixed with release runs.
        assert_eq!(
            s["build_profile"],
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
    }
    let o = cli(&data, &["history", "--bench", "rusqlite", "--store", &db_s]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("single_row_lookup / rusqlite on ")
            && text.contains("no step found (2 points)"),
        "{text}"
    );

    // Import of a saved report, once however often it is read.
    let report = work.path().join("report.json");
    for (new, already) in [(1, 0), (0, 1)] {
        let o = store_cmd(&data)
            .args(["store", "import", "--label", "imported", "--store", &db_s])
            .arg(&report)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!(
                "imported {new} run{} into the results store {db_s} ({already} already there)",
                if new == 1 { "" } else { "s" }
            )),
            "{e}"
        );
    }
    // The baseline saved by the same run holds the same run: already there. (A session
    // journal is read the same way, by import::open, as `benchscope open` reads it.)
    let o = store_cmd(&data)
        .args(["store", "import", "--label", "imported", "--store", &db_s])
        .arg(work.path().join("baselines/b1.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("imported 0 runs") && stderr(&o).contains("(1 already there)"),
        "{}",
        stderr(&o)
    );
    let o = cli(
        &data,
        &[
            "history", "--bench", "rusqlite", "--format", "json", "--store", &db_s,
        ],
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc[0]["points"][2]["name"], "imported");

    // Bad input: named, with what is allowed; a store that is not there is not made by reading.
    let o = cli(
        &data,
        &["history", "--since", "yesterday", "--store", &db_s],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value \"yesterday\" for --since"),
        "{}",
        stderr(&o)
    );
    let missing = work.path().join("none.sqlite");
    let o = store_cmd(&data)
        .args(["history", "--store"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no results store at"), "{}", stderr(&o));
    assert!(!missing.exists());
    let o = store_cmd(&data)
        .args(["store", "import", "--store", &db_s])
        .arg(work.path().join("nothing.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nothing.json: no such file"),
        "{}",
        stderr(&o)
    );
    // An import whose figures cannot be times is refused, named, and nothing of it stored.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    doc["runs"][0]["benches"][0]["summary"]["median"] = (-5.0).into();
    let bad = work.path().join("negative.json");
    std::fs::write(&bad, doc.to_string()).unwrap();
    let o = store_cmd(&data)
        .args(["store", "import", "--store", &db_s])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("negative.json: run 1: bench \"rusqlite\": the median is -5 (allowed: a finite time in ns above 0"),
        "{}",
        stderr(&o)
    );
    // A store a newer benchscope wrote says so, in words.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) \
             VALUES (99, 'from_the_future', '2027-01-01', '0')",
            [],
        )
        .unwrap();
    let o = cli(&data, &["history", "--store", &db_s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "written by a newer benchscope (schema version 99; this one reads up to 3): read it with that benchscope or a newer one"
        ),
        "{}",
        stderr(&o)
    );
}

/// However the store's URL is spelt (capitals, a Unix socket, a port no parser takes), an
/// unreachable store keeps the run's own outputs, never shows its password, and never becomes
/// a folder named after it.
#[test]
fn an_unreachable_store_keeps_the_runs_own_outputs_and_hides_its_password() {
    for url in [
        // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
        "postgres://bench:s3cret-pw@127.0.0.1:9/none",
        "POSTGRES://bench:s3cret-pw@127.0.0.1:9/none",
        "postgresql://bench:s3cret-pw@/none?host=/nonexistent-socket-folder",
        "postgres://bench:s3cret-pw@127.0.0.1:99999/none",
        "mysql://bench:s3cret-pw@127.0.0.1:9/none",
    ] {
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("out.json");
        let o = recorded_run(
            &work.path().join("data"),
            &work.path().join("cache"),
            url,
            &["rusqlite"],
        )
        .current_dir(work.path())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{url}: {e}");
        assert!(
            e.contains("results store ") && e.contains("the run's own outputs are kept"),
            "{url}: {e}"
        );
        assert!(!e.contains("s3cret-pw"), "{url}: {e}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("s3cret-pw"));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(doc["schema_version"], 1);
        let mut left: Vec<String> = std::fs::read_dir(work.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["cache", "data", "out.json"], "{url}");
    }
}

/// A database of the test's own on the server of BENCHSCOPE_POSTGRES_URL, dropped at the end.
struct Database {
    admin: String,
    name: String,
    url: String,
}

impl Database {
    fn new(admin: &str, name: &str) -> Database {
        let url = match admin.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{name}"),
            None => panic!("BENCHSCOPE_POSTGRES_URL has no database part: {admin}"),
        };
        let d = Database {
            admin: admin.into(),
            name: name.into(),
            url,
        };
        d.sql(&format!("DROP DATABASE IF EXISTS {name}"));
        d.sql(&format!("CREATE DATABASE {name}"));
        d
    }

    fn sql(&self, sql: &str) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&self.admin, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            client.batch_execute(sql).await.unwrap();
        });
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.sql(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

#[test]
fn two_machines_write_twenty_runs_each_to_one_postgres_store_at_once() {
    let Some(admin) = common::postgres_url("two_machines_write_to_one_postgres_store") else {
        return;
    };
    let db = Database::new(&admin, &format!("benchscope_store_{}", std::process::id()));
    let work = tempfile::tempdir().unwrap();
    // Two data folders are two machines; each writes 10 commands of 2 runs (--repeat 2).
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|m| {
            let (data, cache) = (work.path().join(m), work.path().join(format!("cache-{m}")));
            // Each machine its own measurement lock, as two machines have: their runs and
            // writes overlap rather than take turns on one lock.
            let lock = work.path().join(format!("measure-{m}.lock"));
            let url = db.url.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    let o = recorded_run(&data, &cache, &url, &["rusqlite"])
                        .env("BENCHSCOPE_MEASURE_LOCK", &lock)
                        .args(["--repeat", "2", "--label", &format!("{m}-{i:02}")])
                        .output()
                        .unwrap();
                    assert!(o.status.success(), "{}", stderr(&o));
                    assert!(stderr(&o).contains("recorded 2 runs"), "{}", stderr(&o));
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let data = work.path().join("a");
    let o = cli(&data, &["store", "info", "--store", &db.url]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("40 runs from 2 machines, 40 bench results"),
        "{text}{}",
        stderr(&o)
    );
    let o = cli(
        &data,
        &[
            "history",
            "single_row_lookup",
            "--format",
            "json",
            "--store",
            &db.url,
        ],
    );
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(3),
        "{}",
        stderr(&o)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let series = doc.as_array().unwrap();
    assert_eq!(series.len(), 2, "one series per machine");
    let mut names = Vec::new();
    for s in series {
        let machine = s["machine"].as_str().unwrap().to_string();
        let points = s["points"].as_array().unwrap();
        assert_eq!(points.len(), 10);
        // Not mixed: a machine's points are its own labels, two runs each.
        let prefix = points[0]["name"].as_str().unwrap()[..2].to_string();
        for p in points {
            assert!(
                p["name"].as_str().unwrap().starts_with(&prefix),
                "{p} in {machine}"
            );
            assert_eq!(p["runs"], 2);
            // Allocations per operation kept in the shared store and read back: rusqlite's
            // lookup reads its text column into a String, one allocation at least.
            assert!(p["allocs"].as_f64().is_some_and(|a| a >= 1.0), "{p}");
        }
        names.push((prefix, machine));
    }
    names.sort();
    assert_eq!((names[0].0.as_str(), names[1].0.as_str()), ("a-", "b-"));
    assert_ne!(names[0].1, names[1].1);
    let o = cli(&data, &["history", "single_row_lookup", "--store", &db.url]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("2 machines measured this bench on the same CPU model"),
        "{text}"
    );
    // One machine alone.
    let o = store_cmd(&data)
        .args([
            "history",
            "--machine",
            &names[1].1,
            "--format",
            "json",
            "--store",
            &db.url,
        ])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc.as_array().unwrap().len(), 1);
    assert_eq!(doc[0]["machine"], names[1].1.as_str());
}

/// A store many machines write is input from others. Labels and commits that are markup,
/// shell and gnuplot commands, control characters and multi-byte text; figures that cannot
/// be times; rows of the wrong types and records that do not read: `history` and
/// `report --html` read what reads, name what they left out, never panic, run nothing, and
/// write a page that is inert as a browser reads it, with charts that are well-formed SVG.
#[test]
fn a_hostile_shared_store_is_read_as_text_and_figures() {
    let work = tempfile::tempdir().unwrap();
    let (data, cache) = (work.path().join("data"), work.path().join("cache"));
    let db = work.path().join("results.sqlite");
    let db_s = db.display().to_string();
    let pwned = work.path().join("pwned");
    let label = format!(
        "</td><script>alert(1)</script><img src=x onerror=alert(2)>\n\tsystem('touch {}')\u{1}[x](javascript:alert(3))",
        pwned.display()
    );
    // A commit cut at 12 characters used to be cut at 12 bytes, inside a character.
    let commit = "héllo-ünïcödé-ßßß";
    // A label with control characters is refused on the command line; another machine's
    // writer may still put one in the store (below).
    let refused = recorded_run(&data, &cache, &db_s, &["rusqlite"])
        .args(["--label", &label])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("no control characters"),
        "{}",
        stderr(&refused)
    );
    let printable: String = label.chars().filter(|c| !c.is_control()).collect();
    for args in [
        vec!["--label".to_string(), printable],
        vec!["--commit".to_string(), commit.to_string()],
    ] {
        let o = recorded_run(&data, &cache, &db_s, &["rusqlite", "middleware/spin"])
            .args(&args)
            .current_dir(work.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("recorded 1 run"), "{}", stderr(&o));
    }
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        // The label as another writer of the store may have put it, control characters and all.
        c.execute("UPDATE runs SET label = ?1 WHERE id = 1", [&label])
            .unwrap();
        // Copies of the first run whose figures cannot be times, or do not read.
        let copy = |key: &str, record: &str| -> i64 {
            c.execute(
                "INSERT INTO runs (run_key, recorded_at, machine_id, machine_name, cpu, cores, \
                 kernel, commit_sha, dirty, label, target, knobs, build_profile, profiled, record) \
                 SELECT ?1, recorded_at, machine_id, machine_name, cpu, cores, kernel, commit_sha, \
                 dirty, label, target, knobs, build_profile, profiled, ?2 FROM runs WHERE id = 1",
                rusqlite::params![key, record],
            )
            .unwrap();
            c.last_insert_rowid()
        };
        let record: String = c
            .query_row("SELECT record FROM runs WHERE id = 1", [], |r| r.get(0))
            .unwrap();
        let negative = record.replacen("\"median\":", "\"median\":-5.0,\"was\":", 1);
        for (key, rec, median) in [
            (
                "negative",
                negative.as_str(),
                rusqlite::types::Value::Real(-5.0),
            ),
            ("huge", record.as_str(), rusqlite::types::Value::Real(1e308)),
            (
                "text",
                "{not json",
                rusqlite::types::Value::Text("fast".into()),
            ),
        ] {
            let id = copy(key, rec);
            c.execute(
                "INSERT INTO bench_results (run_id, bench, status, median_ns, ci_low_ns, \
                 ci_high_ns, samples) VALUES (?1, 'rusqlite', 'finished', ?2, 1.0, 2.0, 10)",
                rusqlite::params![id, median],
            )
            .unwrap();
        }
    }
    let o = store_cmd(&data)
        .args(["history", "--store", &db_s])
        .current_dir(work.path())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(o.status.code().is_some_and(|c| c == 0 || c == 3), "{e}");
    assert!(
        e.contains("warning: 3 rows of the results store did not read and were left out: run 3 "),
        "{e}"
    );
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(table.contains("héllo-ünïcö"), "{table}");
    let site = work.path().join("site");
    let o = store_cmd(&data)
        .args(["report", "--store", &db_s, "--html"])
        .arg(&site)
        .current_dir(work.path())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("did not read and were left out"), "{e}");
    let page = std::fs::read_to_string(site.join("index.html")).unwrap();
    common::html_is_inert(&page).unwrap_or_else(|bad| panic!("{bad} in\n{page}"));
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("did not read and were left out"), "{page}");
    let mut svgs = 0;
    for f in std::fs::read_dir(&site).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            let text = std::fs::read_to_string(&p).unwrap();
            roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(!text.contains("<script"), "{}", p.display());
            svgs += 1;
        }
    }
    assert!(svgs >= 2, "{svgs} charts");
    assert!(!pwned.exists(), "a label ran a command");
}
