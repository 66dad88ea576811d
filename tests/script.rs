//! The script target end to end: pgbench-style scripts over a real SQLite file through every
//! backend (the harnesses' and PostgreSQL's included), the rows compared, the original never
//! written, each statement a micro-bench, and bad scripts refused before anything runs.

mod common;

use std::path::{Path, PathBuf};

fn sha256(p: &Path) -> Result<String, bench_core::BenchError> {
    bench_core::script::original::sha256(p, "--db")
}

use common::{QUICK, benchscope};

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/scripts")
        .join(name)
}

fn run_json(args: &[&str], dir: &Path) -> serde_json::Value {
    let out = benchscope()
        .args(["run", "script"])
        .args(args)
        .args(QUICK)
        .args(["--format", "json", "--cache-dir"])
        .arg(dir.join("cache"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// TPC-B on a database built by --init: every backend replays the same transactions and
/// returns the same rows; the file given is the same bytes after the run.
#[test]
fn tpcb_runs_through_each_backend_with_the_same_rows_and_the_original_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bank.db");
    let script = asset("tpcb.sql");
    let init = asset("tpcb-init.sql");
    let doc = run_json(
        &[
            "--script",
            script.to_str().unwrap(),
            "-D",
            "scale=1",
            "--db",
            db.to_str().unwrap(),
            "--init",
            init.to_str().unwrap(),
            "--transactions",
            "20",
            "--bench",
            "rusqlite",
            "--bench",
            "middleware/spawn_blocking",
            "--bench",
            "middleware/worker",
            "--bench",
            "tokio-rusqlite",
            "--bench",
            "r2d2_sqlite/spawn_blocking",
            "--bench",
            "r2d2_sqlite/block_in_place",
            "--bench",
            "sql-middleware",
            "--bench",
            "turso",
            "--bench",
            "sqlx",
            "--bench",
            "async-sqlite",
            "--bench",
            "sql-middleware/turso",
        ],
        dir.path(),
    );
    assert!(db.exists(), "--init built the database");
    let before = sha256(&db).unwrap();
    let run = &doc["runs"][0];
    let benches = run["benches"].as_array().unwrap();
    assert_eq!(benches.len(), 11, "{run}");
    for (i, b) in benches.iter().enumerate() {
        let r = &b["script"];
        assert!(b["summary"]["median"].as_f64().unwrap() > 0.0, "{b}");
        // Every sample ran 20 transactions; none met a busy database with one client.
        assert!(r["transactions"].as_u64().unwrap() >= 40, "{r}");
        assert_eq!(r["busy"], 0);
        // Seven statements, each ran once per transaction.
        let st = r["statements"].as_array().unwrap();
        assert_eq!(st.len(), 7);
        assert!(st.iter().all(|s| s["count"] == r["transactions"]), "{r}");
        assert_eq!(st[2]["at"], "tpcb:11");
        assert_eq!(
            st[2]["rows"], r["transactions"],
            "the SELECT returns one row each time"
        );
        assert_eq!(r["db"], db.display().to_string());
        assert_eq!(r["db_sha256"], before);
        // A transaction takes at least as long as its statements.
        let inside: f64 = st.iter().map(|s| s["mean_ns"].as_f64().unwrap()).sum();
        assert!(r["tx_mean_ns"].as_f64().unwrap() >= inside * 0.99, "{r}");
        // The run's view of the rows: the sqlx, async-sqlite and sql-middleware/turso runners
        // (harnesses of their own) had no rusqlite to compare with; the report compares the hashes of what each
        // kept.
        let rows = &doc["script"][0][b["name"].as_str().unwrap()]["rows"];
        if i == 0 {
            assert_eq!(rows["status"], "reference", "{rows}");
        } else {
            assert_eq!(rows["status"], "same", "{rows}");
            assert_eq!(rows["against"], "rusqlite");
            assert!(rows["transactions"].as_u64().unwrap() >= 40);
        }
    }
    // Two writers on turso (no busy handler: SQLITE_BUSY reaches the script at once), in the
    // core and through sql-middleware's harness: every busy error met is counted and retried,
    // none fails the bench.
    let doc = run_json(
        &[
            "--script",
            script.to_str().unwrap(),
            "-D",
            "scale=1",
            "--db",
            db.to_str().unwrap(),
            "--clients",
            "2",
            "--transactions",
            "40",
            "--bench",
            "turso",
            "--bench",
            "sql-middleware/turso",
        ],
        dir.path(),
    );
    let writers = doc["runs"][0]["benches"].as_array().unwrap();
    let mut names: Vec<&str> = writers
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["sql-middleware/turso", "turso"]);
    for b in writers {
        let r = &b["script"];
        assert_eq!(r["busy"], r["retries"], "{b}");
        assert_eq!(r["failed"], 0, "{b}");
    }
    // The working copies went with the run; the snapshot stays for the next.
    let cache: Vec<String> = std::fs::read_dir(dir.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("script-"))
        .collect();
    assert!(
        cache.iter().all(|n| n.starts_with("script-db-")),
        "{cache:?}"
    );
    // Run again on the database as it is now: the original is never written.
    run_json(
        &[
            "--script",
            script.to_str().unwrap(),
            "-D",
            "scale=1",
            "--db",
            db.to_str().unwrap(),
            "--transactions",
            "10",
            "--bench",
            "rusqlite",
        ],
        dir.path(),
    );
    assert_eq!(sha256(&db).unwrap(), before);
}

/// A read-only mix with two clients, weights and a skewed draw; the markdown carries the
/// statements table.
#[test]
fn a_weighted_mix_with_clients_reports_each_statement() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("items.db");
    let out = benchscope()
        .args(["run", "script", "--script"])
        .arg(format!("{}@9", asset("lookup.sql").display()))
        .arg("--script")
        .arg(format!("{}@1", asset("json.sql").display()))
        .args(["-D", "keys=100000", "-D", "customers=2000", "--db"])
        .arg(&db)
        .arg("--init")
        .arg(asset("lookup-init.sql"))
        .args(["--clients", "2", "--transactions", "40"])
        .args(["--bench", "rusqlite", "--bench", "middleware/worker"])
        .args(QUICK)
        .args(["--format", "markdown", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .assert();
    // lookup-init builds items but not orders: the json script's statement fails, named.
    let err = String::from_utf8(out.get_output().stdout.clone()).unwrap()
        + &String::from_utf8(out.get_output().stderr.clone()).unwrap();
    // SQLite judges every statement before anything runs.
    assert!(
        err.contains("json.sql:5:1: SQLite cannot prepare it here: no such table: orders"),
        "{err}"
    );

    let out = benchscope()
        .args(["run", "script", "--script"])
        .arg(format!("{}@9", asset("lookup.sql").display()))
        .arg("--script")
        .arg(format!("{}@1", asset("lookup.sql").display()))
        .args(["-D", "keys=100000", "--db"])
        .arg(&db)
        .args(["--clients", "2", "--transactions", "40"])
        .args(["--bench", "rusqlite", "--bench", "middleware/worker"])
        .args(["--bench", "tokio-rusqlite", "--bench", "turso"])
        .args(QUICK)
        .args(["--format", "markdown", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .assert()
        .success();
    let md = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(md.contains("Statements"), "{md}");
    assert!(md.contains("lookup:5"), "{md}");
    // A transaction's time outside its statements (the middleware's checkout and return).
    assert!(md.contains("| outside | checkout, return"), "{md}");
    assert_eq!(md.matches("same as rusqlite").count(), 3, "{md}");
    // Allocations per transaction and per statement, where the runner counted them (turso's
    // core bench counts too: the core runner's allocator is the counting one).
    assert!(md.contains("| allocs/tx | allocs/stmt |"), "{md}");
    for bench in ["rusqlite", "middleware/worker", "tokio-rusqlite", "turso"] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {bench} | 2 |")))
            .unwrap_or_else(|| panic!("no transactions row of {bench}: {md}"));
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let n = cells.len();
        let (tx, stmt): (f64, f64) = (cells[n - 2].parse().unwrap(), cells[n - 1].parse().unwrap());
        assert!(tx >= stmt && stmt > 0.0, "{row}");
    }
}

/// pool=thread has no checkout that holds one connection, so a script's transaction (BEGIN,
/// its statements and COMMIT, each a call) could be split between threads' connections: the
/// middleware benches are skipped on it, saying why, and run on a pool that holds one.
#[test]
fn scripts_are_not_run_on_a_pool_without_a_connection_per_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bank.db");
    let script = asset("tpcb.sql");
    let init = asset("tpcb-init.sql");
    let run = |pool: &str| {
        run_json(
            &[
                "--script",
                script.to_str().unwrap(),
                "-D",
                "scale=1",
                "--db",
                db.to_str().unwrap(),
                "--init",
                init.to_str().unwrap(),
                "--transactions",
                "10",
                "--bench",
                "rusqlite",
                "--bench",
                "middleware/block_in_place",
                "--knob",
                &format!("pool={pool}"),
            ],
            dir.path(),
        )
    };
    let doc = run("thread");
    let mw = common::bench_of(&doc["runs"][0], "middleware/block_in_place");
    let why = mw["skipped"].as_str().unwrap_or_else(|| panic!("{mw}"));
    assert!(
        why.contains("which pool=thread may run on different threads"),
        "{why}"
    );
    let doc = run("slots");
    let mw = common::bench_of(&doc["runs"][0], "middleware/block_in_place");
    assert!(mw["skipped"].is_null() && mw["error"].is_null(), "{mw}");
}

/// Bad input is refused before anything runs, with the file, line and column.
#[test]
fn bad_scripts_and_databases_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.sql");
    std::fs::write(
        &bad,
        "\\set x random(1, 10)\nSELECT * FROM t WHERE id = ?;\n",
    )
    .unwrap();
    let db = dir.path().join("x.db");
    let refused = |args: &[&str], wants: &str| {
        let out = benchscope()
            .args(["run", "script"])
            .args(args)
            .args(["--cache-dir"])
            .arg(dir.path().join("cache"))
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(wants), "{args:?}: {text}");
        assert!(!dir.path().join("cache").join("runs").exists());
    };
    refused(
        &[
            "--script",
            bad.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        "bad.sql:2:28: the parameter ?; allowed: :name",
    );
    let good = asset("lookup.sql");
    refused(
        &[
            "--script",
            good.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        "undefined variable :keys",
    );
    refused(
        &[
            "--script",
            good.to_str().unwrap(),
            "-D",
            "keys=10",
            "--db",
            db.to_str().unwrap(),
        ],
        "x.db: no such file",
    );
    std::fs::write(&db, "not a database at all, just text").unwrap();
    refused(
        &[
            "--script",
            good.to_str().unwrap(),
            "-D",
            "keys=10",
            "--db",
            db.to_str().unwrap(),
        ],
        "x.db: not a SQLite database",
    );
    refused(
        &["--db", db.to_str().unwrap()],
        "needs at least one --script",
    );
    refused(
        &["--script", "missing.sql", "--db", db.to_str().unwrap()],
        "--script missing.sql: cannot open it",
    );
    // The script flags belong to the script target alone.
    let out = benchscope()
        .args([
            "run",
            "single_row_lookup",
            "--script",
            good.to_str().unwrap(),
        ])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(
        String::from_utf8(out)
            .unwrap()
            .contains("are the script target's")
    );
}

/// The schemas script runs made on the server and left there.
fn script_schemas(url: &str) -> i64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        c.query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'benchscope_script_%'",
            &[],
        )
        .await
        .unwrap()
        .get(0)
    })
}

/// PostgreSQL: the SQLite database copied into a schema of the bench's own, where TPC-B
/// returns the same rows as rusqlite; a statement PostgreSQL cannot prepare is skipped with
/// the server's reason (and the rows are then not compared); a mix with nothing it can run
/// fails that bench alone; no schema is left behind.
#[test]
fn scripts_run_on_postgres_where_they_are_portable() {
    let Some(url) = common::postgres_url("the script target on PostgreSQL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bank.db");
    let (tpcb, init) = (asset("tpcb.sql"), asset("tpcb-init.sql"));
    let doc = run_json(
        &[
            "--script",
            tpcb.to_str().unwrap(),
            "-D",
            "scale=1",
            "--db",
            db.to_str().unwrap(),
            "--init",
            init.to_str().unwrap(),
            "--transactions",
            "20",
            "--bench",
            "rusqlite",
            "--bench",
            "tokio-postgres",
        ],
        dir.path(),
    );
    let benches = doc["runs"][0]["benches"].as_array().unwrap();
    let pg = &benches[1];
    assert_eq!(pg["name"], "tokio-postgres", "{pg}");
    let rows = &pg["script"]["rows"];
    assert_eq!(rows["status"], "same", "{rows}");
    assert!(rows["transactions"].as_u64().unwrap() >= 40, "{rows}");
    let st = pg["script"]["statements"].as_array().unwrap();
    assert!(
        st.iter()
            .all(|s| s["count"] == pg["script"]["transactions"])
    );

    let mixed = dir.path().join("mixed.sql");
    std::fs::write(
        &mixed,
        "\\set id random(1, 1000)\nSELECT bid, abalance FROM pgbench_accounts WHERE aid = :id;\nSELECT printf('%5d', abalance) FROM pgbench_accounts WHERE aid = :id;\n",
    )
    .unwrap();
    let doc = run_json(
        &[
            "--script",
            mixed.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--transactions",
            "20",
            "--bench",
            "rusqlite",
            "--bench",
            "tokio-postgres",
        ],
        dir.path(),
    );
    let pg = &doc["runs"][0]["benches"][1]["script"];
    assert_eq!(pg["rows"]["status"], "not_compared", "{pg}");
    let reason = pg["rows"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("mixed.sql:3:1") && reason.contains("printf"),
        "{reason}"
    );
    let st = pg["statements"].as_array().unwrap();
    assert_eq!(st[0]["count"], pg["transactions"], "{pg}");
    assert_eq!(st[1]["count"], 0, "the skipped statement never ran: {pg}");

    // Nothing of the mix runs there: that bench fails, rusqlite's result is kept.
    let sqlite_only = dir.path().join("only.sql");
    std::fs::write(
        &sqlite_only,
        "SELECT printf('%d', count(*)) FROM pgbench_branches;\n",
    )
    .unwrap();
    let out = benchscope()
        .args(["run", "script", "--script"])
        .arg(&sqlite_only)
        .arg("--db")
        .arg(&db)
        .args(["--bench", "rusqlite", "--bench", "tokio-postgres"])
        .args(QUICK)
        .args(["--format", "json", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("no statement of the scripts runs on PostgreSQL")
            && text.contains("only.sql:1:1"),
        "{text}"
    );
    assert!(
        text.contains("\"rusqlite\""),
        "rusqlite's result is kept: {text}"
    );
    assert_eq!(script_schemas(&url), 0, "every schema made was dropped");
}

/// Each statement of the run's scripts is a micro-bench of the target (`stmt/FILE:LINE`):
/// a read and a write timed alone on rusqlite; BEGIN and END are not statements one times
/// alone, and an unknown one is refused with the list.
#[test]
fn each_statement_is_a_micro_bench_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bank.db");
    let (tpcb, init) = (asset("tpcb.sql"), asset("tpcb-init.sql"));
    let base = [
        "--script",
        tpcb.to_str().unwrap(),
        "-D",
        "scale=1",
        "--db",
        db.to_str().unwrap(),
        "--init",
        init.to_str().unwrap(),
        "--transactions",
        "20",
    ];
    let mut args = base.to_vec();
    args.extend(["--bench", "stmt/tpcb:10", "--bench", "stmt/tpcb:11"]);
    let doc = run_json(&args, dir.path());
    let benches = doc["runs"][0]["benches"].as_array().unwrap();
    assert_eq!(benches.len(), 2);
    for b in benches {
        assert_eq!(b["backend"], "rusqlite", "{b}");
        assert!(b["summary"]["median"].as_f64().unwrap() > 0.0, "{b}");
        // 20 statements a pass (`transactions`), each with a latency of its own.
        assert_eq!(b["ops"], 20, "{b}");
        let lat = &b["summary"]["latency"]["count"];
        assert_eq!(lat.as_u64().unwrap() % 20, 0, "{b}");
    }
    let before = sha256(&db).unwrap();
    let mut args = base.to_vec();
    args.extend(["--bench", "stmt/tpcb:9"]);
    let out = benchscope()
        .args(["run", "script"])
        .args(&args)
        .args(["--cache-dir"])
        .arg(dir.path().join("cache"))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("--bench \"stmt/tpcb:9\" selects nothing") && text.contains("stmt/tpcb:14"),
        "{text}"
    );
    assert_eq!(sha256(&db).unwrap(), before, "the write ran on a copy");
}

/// Every class of hostile script and database the guards stand in front of: refused by SQLite
/// before anything runs, or run on a copy, and the user's database folder unchanged to the
/// byte, with no file added beside it, whatever hides a statement from a reader (a byte order
/// mark, comments, case, a CTE in front).
#[test]
fn hostile_scripts_never_touch_the_database_or_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    let db = mine.join("bank.db");
    {
        // A WAL database closed cleanly: nothing beside it, which SQLite opening it (even
        // read-only) would add.
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
             INSERT INTO t SELECT i, 'row ' || i FROM n;",
        )
        .unwrap();
    }
    let before = bench_core::testing::folder_listing(&mine);
    assert_eq!(before.len(), 1);
    let scripts = dir.path().join("scripts");
    std::fs::create_dir(&scripts).unwrap();
    let cache = dir.path().join("cache");
    let run = |name: &str, text: &str| {
        let path = scripts.join(format!("{name}.sql"));
        std::fs::write(&path, text).unwrap();
        let out = benchscope()
            .args(["run", "script", "--script"])
            .arg(&path)
            .arg("--db")
            .arg(&db)
            .args(["--transactions", "20", "--bench", "rusqlite"])
            .args(["--bench", "middleware/worker", "--bench", "tokio-rusqlite"])
            .args(QUICK)
            .args(["--format", "json", "--cache-dir"])
            .arg(&cache)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            bench_core::testing::folder_listing(&mine),
            before,
            "{name}: the database's folder changed\n{text}"
        );
        (out.status.code(), text)
    };
    let m = mine.display();
    for (name, text, why) in [
        (
            "bom-attach",
            format!("\u{feff}ATTACH '{m}/bank.db' AS o;\nDELETE FROM o.t;\n"),
            "ATTACH",
        ),
        (
            "comment-attach",
            format!("/* a note */ attach /**/ '{m}/bank.db' AS o;\nDELETE FROM o.t;\n"),
            "ATTACH",
        ),
        (
            "pragma",
            "-- set up\n  pRaGmA\tjournal_mode = delete;\nSELECT 1;\n".to_string(),
            "PRAGMA journal_mode",
        ),
        (
            "vacuum-into",
            format!("SELECT 1;\n/* then */ VACUUM INTO '{m}/copied.db';\n"),
            "VACUUM",
        ),
        (
            "extension",
            "SELECT load_extension('/tmp/nothing.so');\n".to_string(),
            "load_extension",
        ),
    ] {
        let (code, out) = run(name, &text);
        assert_eq!(code, Some(2), "{name}: {out}");
        assert!(
            out.contains(why) && out.contains(&format!("{name}.sql:")),
            "{name}: {out}"
        );
    }
    // A write dressed as a read (a CTE in front, a comment inside) is a write: each bench
    // runs on a fresh copy, and the snapshot later runs read is never written.
    let (code, out) = run(
        "cte-delete",
        "WITH doomed AS (SELECT id FROM t WHERE id > 100) /* only reads? */ DELETE FROM t WHERE id IN doomed;\n",
    );
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run("count", "SELECT count(*) FROM t;\n");
    assert_eq!(code, Some(0), "{out}");
    // Each snapshot in a folder of its own (`script-db-<sum>-<mode>/db.sqlite`).
    let snapshots: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("script-db-") && p.is_dir()
        })
        .map(|p| p.join("db.sqlite"))
        .collect();
    assert!(!snapshots.is_empty());
    for s in snapshots {
        let n: i64 = rusqlite::Connection::open(&s)
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 500, "{}", s.display());
    }
}

/// A FIFO, a folder or a device where a file belongs is refused at once, by name.
#[test]
fn what_is_not_a_regular_file_is_refused_before_anything_waits_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.db");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let started = std::time::Instant::now();
    let out = benchscope()
        .args(["run", "script", "--script"])
        .arg(asset("lookup.sql"))
        .args(["-D", "keys=10", "--db"])
        .arg(&fifo)
        .args(["--cache-dir"])
        .arg(dir.path().join("cache"))
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("pipe.db: a FIFO; allowed: a database file (a regular file)"),
        "{text}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let out = benchscope()
        .args(["run", "script", "--script", "/dev/zero", "--db"])
        .arg(&fifo)
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("--script /dev/zero: a device"), "{text}");
}
