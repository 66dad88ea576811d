//! The explorer in a real terminal: tmux starts the binary with tiny knobs, keys are sent to
//! mark two benches, run them and export; the pane is captured and the exported files checked.

mod common;

use common::{runners_left, runners_marked};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// tmux on a server of this test process's own (`-L`): sessions get a clean environment, not
/// whatever a tmux server already running on the machine was started with.
fn tmux(args: &[&str]) -> String {
    let socket = format!("benchscope-test-{}", std::process::id());
    let out = Command::new("tmux")
        .args(["-L", &socket])
        .args(args)
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The binary cargo built for this test, in this test's own profile: what the tests expect of
/// it never depends on some other build being there.
fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_benchscope"))
}

/// How a finished column of run 1 is headed: a debug build's column says so instead of its
/// state (the binary is built in this test's profile).
fn run_one_heading(state: &str) -> String {
    if cfg!(debug_assertions) {
        "#1 DEBUG".to_string()
    } else {
        format!("#1 {state}")
    }
}

/// Variables every explorer of these tests starts with: a data folder of the test's own (its
/// session journals), and harness crates that are not there, so that no cargo build of them
/// runs in the background (these tests run no bench of a harness crate).
fn env(work: &Path) -> String {
    format!(
        "BENCHSCOPE_DATA_DIR={} BENCHSCOPE_SQLX_HARNESS=/nonexistent/harness-sqlx \
         BENCHSCOPE_ASYNC_SQLITE_HARNESS=/nonexistent/harness-async-sqlite \
         BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS=/nonexistent/harness-sql-middleware-turso ",
        work.join("data").display()
    )
}

/// Whether tmux is here; without it the test is skipped, except in CI (which installs it).
fn tmux_here(test: &str) -> bool {
    if Command::new("tmux").arg("-V").output().is_ok() {
        return true;
    }
    bench_core::testing::skip(test, "tmux is not installed (apt-get install tmux)");
    false
}

struct Session(String);

/// A detached 120x40 session running `cmd`, killed when the returned guard drops.
fn start(session: &str, cmd: &str) -> Session {
    tmux(&[
        "new-session",
        "-d",
        "-s",
        session,
        "-x",
        "120",
        "-y",
        "40",
        cmd,
    ]);
    Session(session.to_string())
}

impl Drop for Session {
    fn drop(&mut self) {
        tmux(&["kill-session", "-t", &self.0]);
    }
}

fn wait_for(session: &str, what: &str, timeout: Duration) -> String {
    let start = Instant::now();
    loop {
        let pane = tmux(&["capture-pane", "-p", "-t", session]);
        if pane.contains(what) {
            return pane;
        }
        if start.elapsed() > timeout {
            panic!("timed out waiting for {what:?}; the pane shows:\n{pane}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn keys(session: &str, keys: &[&str]) {
    for k in keys {
        tmux(&["send-keys", "-t", session, k]);
        std::thread::sleep(Duration::from_millis(60));
    }
}

#[test]
fn run_two_benches_and_export_in_a_real_terminal() {
    if !tmux_here("run_two_benches_and_export_in_a_real_terminal") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("cache");
    let snaps = work.path().join("snaps");
    let bin = binary();
    let session = format!("benchscope-e2e-{}", std::process::id());
    let cmd = format!(
        "{}{} --rows 300 --lookups 50 --concurrency 2 --time 0.2 --warmup 0 --samples 20 --min-samples 2 \
         --cache-dir {} --snapshot-dir {}; echo EXITED:$?; sleep 60",
        env(work.path()),
        bin.display(),
        cache.display(),
        snaps.display()
    );
    let _s = start(&session, &cmd);
    wait_for(&session, "Catalog", Duration::from_secs(20));
    // Mark rusqlite, move to middleware/spin (catalog order) and mark it, then run both.
    keys(
        &session,
        &[
            "Space", "Down", "Down", "Down", "Down", "Down", "Space", "Enter",
        ],
    );
    let pane = wait_for(&session, "run 1 finished", Duration::from_secs(60));
    assert!(
        pane.contains("middleware/spin") && pane.contains(&run_one_heading("done")),
        "{pane}"
    );
    keys(&session, &["e"]);
    let pane = wait_for(&session, "exported ", Duration::from_secs(10));
    std::fs::write(work.path().join("pane.txt"), &pane).unwrap();
    if let Ok(dir) = std::env::var("BENCHSCOPE_E2E_PANE") {
        std::fs::write(dir, &pane).unwrap();
    }
    // H on the comparison's first row: the bench's history from the results store, where
    // the run was recorded as it finished.
    keys(&session, &["BTab", "H"]);
    let pane = wait_for(&session, "newest ", Duration::from_secs(10));
    assert!(
        pane.contains("single_row_lookup / rusqlite on ") && pane.contains("this run: "),
        "{pane}"
    );
    keys(&session, &["x", "q"]);
    let after = wait_for(&session, "EXITED:0", Duration::from_secs(10));
    assert!(
        !after.contains("Catalog"),
        "the terminal is restored after quitting:\n{after}"
    );
    // The finished run is in the results store of the data folder, its two benches with it.
    let store = rusqlite::Connection::open(work.path().join("data/results.sqlite")).unwrap();
    let (target, benches): (String, i64) = store
        .query_row(
            "SELECT r.target, (SELECT COUNT(*) FROM bench_results b WHERE b.run_id = r.id \
             AND b.status = 'finished') FROM runs r",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!((target.as_str(), benches), ("single_row_lookup", 2));

    let files: Vec<PathBuf> = std::fs::read_dir(&snaps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let md = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .expect("a markdown snapshot");
    let json = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a JSON snapshot");
    let name = md.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("benchscope-single_row_lookup-") && pane.contains(&name),
        "{name} shown in:\n{pane}"
    );
    let text = std::fs::read_to_string(md).unwrap();
    assert!(
        text.contains("| rusqlite |")
            && text.contains("| middleware/spin |")
            && text.contains("rows=300"),
        "{text}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["comparison"][0].as_array().unwrap().len(), 2);
    // Children are reaped: no runner of this session's cache is left.
    let ps = Command::new("ps")
        .args(["-eo", "stat,args"])
        .output()
        .unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    let cache_s = cache.display().to_string();
    let left: Vec<&str> = ps
        .lines()
        .filter(|l| l.contains(&cache_s) && l.contains(" runner "))
        .collect();
    assert!(left.is_empty(), "runner processes left behind: {left:?}");
}

/// SIGTERM or SIGHUP (the terminal window closed) while a run measures: the explorer leaves
/// the alternate screen, exits, and leaves no runner behind.
#[test]
fn a_signal_quits_the_explorer_with_the_terminal_restored_and_no_runner_left() {
    if !tmux_here("a_signal_quits_the_explorer_with_the_terminal_restored_and_no_runner_left") {
        return;
    }
    for sig in ["TERM", "HUP"] {
        let work = tempfile::tempdir().unwrap();
        let bin = binary();
        let snaps = work.path().join("snaps");
        let session = format!("benchscope-sig-{sig}-{}", std::process::id());
        // Its own measurement lock: the other terminal test may be measuring meanwhile.
        let cmd = format!(
            "{}BENCHSCOPE_MEASURE_LOCK={} {} --rows 300 --time 30 --warmup 0 --cache-dir {} --snapshot-dir {}; echo EXITED:$?; sleep 60",
            env(work.path()),
            work.path().join("measure.lock").display(),
            bin.display(),
            work.path().join("cache").display(),
            snaps.display()
        );
        let _s = start(&session, &cmd);
        wait_for(&session, "Catalog", Duration::from_secs(20));
        keys(&session, &["Enter"]);
        wait_for(&session, "running", Duration::from_secs(20));
        let needle = format!("--snapshot-dir {}", snaps.display());
        let explorer: Vec<u32> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| {
                let e = e.ok()?;
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                let cmd = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?)
                    .replace('\0', " ");
                (cmd.starts_with(&bin.display().to_string()) && cmd.contains(&needle))
                    .then_some(pid)
            })
            .collect();
        assert_eq!(explorer.len(), 1, "{sig}: {explorer:?}");
        // Its runners: each inherits the measurement lock's path, this test's own.
        let runners = format!(
            "BENCHSCOPE_MEASURE_LOCK={}",
            work.path().join("measure.lock").display()
        );
        let start = Instant::now();
        while runners_marked(&runners).is_empty() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{sig}: the run never started measuring"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Command::new("kill")
            .args([&format!("-{sig}"), &explorer[0].to_string()])
            .status()
            .unwrap();
        let after = wait_for(&session, "EXITED:", Duration::from_secs(10));
        assert!(
            !after.contains("Catalog"),
            "{sig}: the terminal is restored:\n{after}"
        );
        let left = runners_left(&runners);
        assert!(left.is_empty(), "{sig}: runner left behind: {left:?}");
    }
}

/// Cancel from the catalog, quit with results no export holds (the explorer asks), start again
/// and reopen them from the session journal.
#[test]
fn cancel_from_the_catalog_quit_with_unexported_results_and_reopen_them() {
    if !tmux_here("cancel_from_the_catalog_quit_with_unexported_results_and_reopen_them") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let bin = binary();
    let cmd = format!(
        "{}BENCHSCOPE_MEASURE_LOCK={} {} --rows 300 --lookups 50 --time 2 --warmup 0 --samples 20 --min-samples 2 \
         --unpaired --cache-dir {} --snapshot-dir {}; echo EXITED:$?; sleep 60",
        env(work.path()),
        work.path().join("measure.lock").display(),
        bin.display(),
        work.path().join("cache").display(),
        work.path().join("snaps").display()
    );
    let session = format!("benchscope-journal-{}", std::process::id());
    let s = start(&session, &cmd);
    wait_for(&session, "Catalog", Duration::from_secs(20));
    // Three benches (space marks and moves down), one after another, run; cancel from the
    // catalog once the first has its result.
    keys(&session, &["Space", "Space", "Space", "Enter"]);
    wait_for(&session, "✓ rusqlite", Duration::from_secs(30));
    keys(&session, &["c"]);
    wait_for(&session, "run 1 cancelled", Duration::from_secs(10));
    keys(&session, &["q"]);
    let pane = wait_for(&session, "Quit anyway?", Duration::from_secs(10));
    assert!(pane.contains("1 run has results no export holds"), "{pane}");
    keys(&session, &["y"]);
    let after = wait_for(&session, "EXITED:0", Duration::from_secs(10));
    assert!(
        // The message wraps at the pane's width: read it as one line.
        after.replace('\n', "").contains("is kept in")
            && after
                .replace('\n', "")
                .contains("offers to reopen it at its next start"),
        "{after}"
    );
    drop(s);

    let journals: Vec<PathBuf> = std::fs::read_dir(work.path().join("data/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(journals.len(), 1, "{journals:?}");
    let text = std::fs::read_to_string(&journals[0]).unwrap();
    assert!(
        text.contains(r#""kind":"run""#) && text.contains(r#""outcome":"cancelled""#),
        "{text}"
    );

    let s = start(&session, &cmd);
    let pane = wait_for(&session, "Last session", Duration::from_secs(20));
    assert!(
        pane.contains("1 run with results no export holds"),
        "{pane}"
    );
    keys(&session, &["y"]);
    let pane = wait_for(&session, "reopened 1 runs", Duration::from_secs(10));
    assert!(pane.contains(&run_one_heading("cancel")), "{pane}");
    if let Ok(dir) = std::env::var("BENCHSCOPE_E2E_PANE") {
        std::fs::write(format!("{dir}.reopen"), &pane).unwrap();
    }
    // Still not exported: quitting asks again, and the same journal goes on.
    keys(&session, &["q"]);
    wait_for(&session, "Quit anyway?", Duration::from_secs(10));
    keys(&session, &["y"]);
    wait_for(&session, "EXITED:0", Duration::from_secs(10));
    drop(s);
    assert_eq!(
        std::fs::read_dir(work.path().join("data/sessions"))
            .unwrap()
            .count(),
        1
    );
}

/// TERM=dumb cannot draw the explorer: it says so and exits 2 instead of drawing garbage.
#[test]
fn a_dumb_terminal_is_refused_with_what_is_allowed() {
    if !tmux_here("a_dumb_terminal_is_refused_with_what_is_allowed") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let session = format!("benchscope-dumb-{}", std::process::id());
    let cmd = format!(
        "{}TERM=dumb {} --cache-dir {}; echo EXITED:$?; sleep 60",
        env(work.path()),
        binary().display(),
        work.path().join("cache").display()
    );
    let _s = start(&session, &cmd);
    let pane = wait_for(&session, "EXITED:", Duration::from_secs(20));
    let text = pane.replace('\n', "");
    assert!(
        text.contains("EXITED:2")
            && text.contains("TERM=dumb: the explorer draws with cursor movement"),
        "{pane}"
    );
}

/// The terminal shrunk to 20x5 while a run measures, then grown back: the explorer says it is
/// too small meanwhile, the run goes on, and its results are there afterwards.
#[test]
fn resizing_to_20x5_during_a_run_keeps_the_run() {
    if !tmux_here("resizing_to_20x5_during_a_run_keeps_the_run") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let session = format!("benchscope-resize-{}", std::process::id());
    let cmd = format!(
        "{}BENCHSCOPE_MEASURE_LOCK={} {} --rows 300 --lookups 50 --time 1 --warmup 0 --samples 20 --min-samples 2 \
         --cache-dir {} --snapshot-dir {}; echo EXITED:$?; sleep 60",
        env(work.path()),
        work.path().join("measure.lock").display(),
        binary().display(),
        work.path().join("cache").display(),
        work.path().join("snaps").display()
    );
    let _s = start(&session, &cmd);
    wait_for(&session, "Catalog", Duration::from_secs(20));
    keys(&session, &["Space", "Enter"]);
    wait_for(&session, "running", Duration::from_secs(20));
    tmux(&["resize-window", "-t", &session, "-x", "20", "-y", "5"]);
    wait_for(&session, "terminal too small", Duration::from_secs(5));
    tmux(&["resize-window", "-t", &session, "-x", "120", "-y", "40"]);
    let pane = wait_for(&session, "run 1 finished", Duration::from_secs(60));
    assert!(pane.contains("✓ rusqlite"), "{pane}");
    keys(&session, &["q"]);
    let pane = wait_for(&session, "Quit anyway?", Duration::from_secs(10));
    assert!(pane.contains("1 run has results no export holds"), "{pane}");
    keys(&session, &["y"]);
    wait_for(&session, "EXITED:0", Duration::from_secs(10));
}

/// With no HOME (and no XDG or benchscope data variable) the session is still journaled, in
/// the temp folder: quitting with results no export holds keeps them there.
#[test]
fn without_home_the_session_is_journaled_in_the_temp_folder() {
    if !tmux_here("without_home_the_session_is_journaled_in_the_temp_folder") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let session = format!("benchscope-nohome-{}", std::process::id());
    let cmd = format!(
        "env -u HOME -u XDG_DATA_HOME -u BENCHSCOPE_DATA_DIR TMPDIR={} BENCHSCOPE_SQLX_HARNESS=/nonexistent/harness-sqlx \
         BENCHSCOPE_ASYNC_SQLITE_HARNESS=/nonexistent/harness-async-sqlite \
         BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS=/nonexistent/harness-sql-middleware-turso \
         BENCHSCOPE_MEASURE_LOCK={} {} --rows 300 --lookups 50 --time 0.2 --warmup 0 --samples 5 --min-samples 2 \
         --cache-dir {}; echo EXITED:$?; sleep 60",
        work.path().display(),
        work.path().join("measure.lock").display(),
        binary().display(),
        work.path().join("cache").display()
    );
    let _s = start(&session, &cmd);
    wait_for(&session, "Catalog", Duration::from_secs(20));
    keys(&session, &["Space", "Enter"]);
    wait_for(&session, "run 1 finished", Duration::from_secs(60));
    keys(&session, &["q"]);
    wait_for(&session, "Quit anyway?", Duration::from_secs(10));
    keys(&session, &["y"]);
    wait_for(&session, "EXITED:0", Duration::from_secs(10));
    let sessions = work.path().join("benchscope-data/sessions");
    let journals: Vec<PathBuf> = std::fs::read_dir(&sessions)
        .unwrap_or_else(|e| panic!("{}: {e}", sessions.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(journals.len(), 1, "{journals:?}");
    let text = std::fs::read_to_string(&journals[0]).unwrap();
    assert!(text.contains(r#""kind":"run""#), "{text}");
}

/// `--script` and `--db` open the explorer on the script target: a run of rusqlite and one
/// middleware strategy over a TPC-B database, exported with its statements table.
#[test]
fn a_script_opens_its_target_runs_and_exports_its_statements() {
    if !tmux_here("a_script_opens_its_target_runs_and_exports_its_statements") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scripts");
    let snaps = work.path().join("snaps");
    let session = format!("benchscope-script-{}", std::process::id());
    let cmd = format!(
        "{}{} --script {} -D scale=1 --db {} --init {} --transactions 20 --time 0.2 --warmup 0 \
         --samples 10 --min-samples 2 --cache-dir {} --snapshot-dir {}; echo EXITED:$?; sleep 60",
        env(work.path()),
        binary().display(),
        scripts.join("tpcb.sql").display(),
        work.path().join("bank.db").display(),
        scripts.join("tpcb-init.sql").display(),
        work.path().join("cache").display(),
        snaps.display()
    );
    let _s = start(&session, &cmd);
    let pane = wait_for(&session, "Catalog", Duration::from_secs(20));
    assert!(pane.contains("◀ script ▶"), "{pane}");
    // Its -D variable is a knob; the catalog lists the script's statements as micro-benches,
    // each with its text (at the end of the list: down to them and back).
    assert!(pane.contains(":scale"), "{pane}");
    let down: Vec<&str> = std::iter::repeat_n("Down", 30).collect();
    keys(&session, &down);
    let pane = wait_for(&session, "stmt/tpcb:14", Duration::from_secs(10));
    assert!(pane.contains("stmt/tpcb:11"), "{pane}");
    assert!(pane.contains("SELECT abalance FROM"), "{pane}");
    let up: Vec<&str> = std::iter::repeat_n("Up", 30).collect();
    keys(&session, &up);
    // rusqlite, then middleware/worker (the fifth bench).
    keys(
        &session,
        &["Space", "Down", "Down", "Down", "Down", "Space", "Enter"],
    );
    let pane = wait_for(&session, "run 1 finished", Duration::from_secs(90));
    assert!(pane.contains("middleware/worker"), "{pane}");
    keys(&session, &["e"]);
    wait_for(&session, "exported ", Duration::from_secs(10));
    keys(&session, &["q"]);
    wait_for(&session, "EXITED:0", Duration::from_secs(10));
    let md = std::fs::read_dir(&snaps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .expect("a markdown snapshot");
    let text = std::fs::read_to_string(md).unwrap();
    assert!(
        text.contains("#### Statements") && text.contains("| tpcb:11 |"),
        "{text}"
    );
    assert!(text.contains("same as rusqlite"), "{text}");
    // The run records the variable's value with its knobs.
    assert!(text.contains(":scale=1"), "{text}");
}
