//! What a hostile user or a broken harness tries, each answered with a clear error (the value
//! and what is allowed), a non-zero exit, no panic, nothing lost and no process left behind.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bench_core::protocol::{Event, encode};
use common::{QUICK, benchscope, benchscope_std, left_behind, run_json};

/// An executable shell script at `dir/name` with `body`, to stand in for a harness.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// rusqlite (bench-core's runner) and sqlx (the harness given) in one run, tiny.
fn with_harness(cache: &Path, harness: &Path) -> assert_cmd::Command {
    let mut c = run_json(
        "single_row_lookup",
        &["--rows", "100", "--lookups", "20"],
        cache,
        &["rusqlite", "sqlx"],
    );
    c.env("BENCHSCOPE_SQLX_HARNESS", harness)
        .timeout(Duration::from_secs(60));
    c
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The runs' benches that have a summary, from a JSON report on stdout.
fn finished_benches(o: &std::process::Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON report");
    v["runs"][0]["benches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| !b["summary"].is_null())
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

/// A harness that is a script starting a child, then writing nothing: the watchdog stops it,
/// and with it the grandchild that holds its pipes; the run ends promptly with rusqlite's
/// results and the error, and no process of that group is left.
#[test]
fn a_harness_whose_grandchild_holds_its_pipes_is_stopped_whole() {
    let work = tempfile::tempdir().unwrap();
    let marker = format!("98{}", std::process::id() % 10000 + 10000);
    let harness = script(
        work.path(),
        "harness",
        &format!("sleep {marker}1 &\nsleep {marker}2"),
    );
    let started = Instant::now();
    let out = with_harness(&work.path().join("cache"), &harness)
        .env("BENCHSCOPE_SILENCE_S", "2")
        .output()
        .expect("benchscope ends (before, it waited for ever on the grandchild's pipe)");
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no progress for 2 s"), "{err}");
    assert_eq!(finished_benches(&out), ["rusqlite"], "{err}");
    assert!(took < Duration::from_secs(40), "took {took:?}");
    let left = left_behind(&format!("sleep {marker}"));
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A harness that writes 40 MB without a newline is stopped at 16 MiB with what it wrote first.
#[test]
fn a_harness_line_of_40_mb_is_refused_at_16_mib() {
    let work = tempfile::tempdir().unwrap();
    let harness = script(
        work.path(),
        "harness",
        "head -c 40000000 /dev/zero | tr '\\0' x; echo",
    );
    let out = with_harness(&work.path().join("cache"), &harness)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("runner wrote a line of more than 16 MiB (allowed: one event per line"),
        "{err}"
    );
    assert_eq!(finished_benches(&out), ["rusqlite"]);
}

/// A harness that sends valid samples for ever is stopped past the budget's `--samples`.
#[test]
fn a_harness_sending_samples_for_ever_is_stopped() {
    let work = tempfile::tempdir().unwrap();
    let line = encode(&Event::Sample {
        bench: "sqlx".into(),
        iter: 0,
        ops: 10,
        elapsed_ns: 1000,
        work: None,
        cost: None,
        memory: None,
    });
    let line = line.replace("\"iter\":0", "\"iter\":'$i'");
    let harness = script(
        work.path(),
        "harness",
        &format!("i=0\nwhile :; do echo '{line}'; i=$((i+1)); done"),
    );
    let out = with_harness(&work.path().join("cache"), &harness)
        .output()
        .expect("benchscope ends (before, it read samples for ever)");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("sqlx: sample 2 is past the 2 samples the budget allows (--samples)"),
        "{err}"
    );
    assert_eq!(finished_benches(&out), ["rusqlite"]);
}

/// A stdout with no reader (its read end closed before benchscope writes).
fn closed_stdout() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

fn quietly_ended_by_sigpipe(o: &std::process::Output, what: &str) {
    let err = stderr(o);
    assert_eq!(
        o.status.signal(),
        Some(libc::SIGPIPE),
        "{what}: {:?} {err}",
        o.status
    );
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{what}: {err}"
    );
}

/// `list | head -1`, `show`, `compare` and `run` into a closed pipe end as other tools do,
/// and the run still writes its files.
#[test]
fn a_closed_stdout_is_not_a_crash() {
    let work = tempfile::tempdir().unwrap();
    let out = benchscope_std()
        .arg("list")
        .stdout(closed_stdout())
        .output()
        .unwrap();
    quietly_ended_by_sigpipe(&out, "list");

    let report = work.path().join("r.json");
    let out = benchscope_std()
        .args([
            "run",
            "single_row_lookup",
            "--rows",
            "100",
            "--lookups",
            "20",
        ])
        .args(["--bench", "rusqlite", "--cache-dir"])
        .arg(work.path().join("cache"))
        .args(QUICK)
        .args(["--format", "jsonl", "--export-json"])
        .arg(&report)
        .arg("--baseline-dir")
        .arg(work.path())
        .args(["--save-baseline", "b"])
        .stdout(closed_stdout())
        .output()
        .unwrap();
    quietly_ended_by_sigpipe(&out, "run");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(v["runs"][0]["benches"][0]["name"], "rusqlite");
    assert!(work.path().join("b.json").is_file());

    for args in [
        vec!["show".to_string(), report.display().to_string()],
        vec![
            "compare".into(),
            "--baseline-dir".into(),
            work.path().display().to_string(),
            "b".into(),
            "b".into(),
        ],
    ] {
        let out = benchscope_std()
            .args(&args)
            .stdout(closed_stdout())
            .output()
            .unwrap();
        quietly_ended_by_sigpipe(&out, &args[0]);
    }
}

/// An export onto /dev/full fails with the reason and a non-zero exit, and /dev/full is still
/// the device (it was replaced by a regular file before).
#[test]
fn an_export_onto_dev_full_fails_and_leaves_the_device() {
    use std::os::unix::fs::FileTypeExt;
    let full = Path::new("/dev/full");
    if !std::fs::metadata(full).is_ok_and(|m| m.file_type().is_char_device()) {
        bench_core::testing::skip(
            "an_export_onto_dev_full_fails_and_leaves_the_device",
            "/dev/full is not a character device here",
        );
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = run_json(
        "single_row_lookup",
        &["--rows", "100", "--lookups", "20"],
        &work.path().join("cache"),
        &["rusqlite"],
    )
    .args(["-o", "/dev/full"])
    .output()
    .unwrap();
    let err = stderr(&out);
    let still = std::fs::metadata(full).is_ok_and(|m| m.file_type().is_char_device());
    if !still {
        // A build that replaced the device: put it back (as root) before failing.
        let _ = std::fs::remove_file(full);
        let _ = std::process::Command::new("mknod")
            .args(["-m", "666", "/dev/full", "c", "1", "7"])
            .status();
    }
    assert!(still, "/dev/full was replaced by a regular file");
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("cannot write /dev/full") && err.contains("No space left on device"),
        "{err}"
    );
}

/// Saved files that cannot be read as what they claim: each refused with the path and what is
/// allowed, exit 2.
#[test]
fn saved_files_that_cannot_be_read_are_refused_with_what_is_allowed() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let refused = |args: &[&str], want: &str| {
        let out = benchscope().args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    };
    // A baseline and a report from a newer benchscope.
    std::fs::write(
        dir.join("future.json"),
        r#"{"schema":"benchscope.baseline","schema_version":99,"name":"future","saved_at":"","runs":[]}"#,
    )
    .unwrap();
    let d = dir.display().to_string();
    refused(
        &["compare", "--baseline-dir", &d, "future", "future"],
        "benchscope.baseline schema_version 99 is newer than this benchscope reads (allowed: 1 to 1)",
    );
    let report = dir.join("report.json");
    std::fs::write(
        &report,
        r#"{"schema":"benchscope.report","schema_version":7,"runs":[]}"#,
    )
    .unwrap();
    refused(
        &["show", report.to_str().unwrap()],
        "benchscope.report schema_version 7 is newer than this benchscope reads",
    );
    // A report and a baseline that hold no run.
    std::fs::write(
        dir.join("norun.json"),
        r#"{"schema":"benchscope.report","schema_version":1,"runs":[]}"#,
    )
    .unwrap();
    refused(
        &["show", dir.join("norun.json").to_str().unwrap()],
        "norun.json holds no run: nothing to show",
    );
    std::fs::write(
        dir.join("nob.json"),
        r#"{"schema":"benchscope.baseline","schema_version":1,"name":"x","saved_at":"","runs":[]}"#,
    )
    .unwrap();
    refused(
        &["show", dir.join("nob.json").to_str().unwrap()],
        "nob.json holds no run: nothing to show",
    );
    // 100 MB: refused by its size, not read whole.
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    refused(
        &["compare", "--baseline-dir", &d, "big", "big"],
        "big.json: larger than 64 MiB (104857600 bytes or more); allowed: a JSON document of at most 64 MiB",
    );
    // Criterion folders with samples that cannot be.
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion");
    for (sample, want) in [
        (
            r#"{"iters":[1.0,2.0],"times":[100.0,-5.0]}"#,
            "times[1] is -5 (allowed: a finite time in ns above 0)",
        ),
        (
            r#"{"iters":[0.0,2.0],"times":[100.0,200.0]}"#,
            "iters[0] is 0 (allowed: a whole count of iterations from 1)",
        ),
        (
            r#"{"iters":[1.0,2.0],"times":[100.0,null]}"#,
            "sample.json does not read",
        ),
        (
            r#"{"iters":[1.0,2.0,3.0],"times":[100.0,200.0]}"#,
            "3 iteration counts for 2 times",
        ),
    ] {
        let crit = dir.join("criterion");
        let _ = std::fs::remove_dir_all(&crit);
        let new = crit.join("single_row_lookup/rusqlite/new");
        std::fs::create_dir_all(&new).unwrap();
        for f in ["benchmark.json", "estimates.json"] {
            std::fs::copy(
                fixture.join("single_row_lookup/rusqlite/new").join(f),
                new.join(f),
            )
            .unwrap();
        }
        std::fs::write(new.join("sample.json"), sample).unwrap();
        refused(&["show", crit.to_str().unwrap()], want);
    }
}

/// Knob lists that would make a huge matrix are refused before anything runs (900 runs were
/// started one after the other before).
#[test]
fn a_huge_matrix_is_refused_before_anything_runs() {
    let work = tempfile::tempdir().unwrap();
    let list: Vec<String> = (1..=30).map(|n| (n * 10).to_string()).collect();
    let list = list.join(",");
    let out = run_json(
        "single_row_lookup",
        &["--rows", &list, "--lookups", &list],
        &work.path().join("cache"),
        &["rusqlite"],
    )
    .timeout(Duration::from_secs(30))
    .output()
    .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "30 values of rows x 30 values of lookups make 900 runs (allowed: at most 100 in one sweep or matrix"
        ),
        "{err}"
    );
    // A sweep within the bound, repeated past the bound of one command.
    let out = run_json(
        "single_row_lookup",
        &["--rows", "100,200,300", "--repeat", "100"],
        &work.path().join("cache"),
        &["rusqlite"],
    )
    .timeout(Duration::from_secs(30))
    .output()
    .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("3 set-ups x 100 repeats make 300 runs (allowed: at most 200 in one command)"),
        "{err}"
    );
}

/// A cache folder that is a file is refused before anything runs, naming where it came from.
#[test]
fn a_cache_folder_that_is_a_file_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let out = benchscope()
        .args(["run", "single_row_lookup", "--bench", "rusqlite"])
        .env("BENCHSCOPE_CACHE_DIR", &file)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "the dataset cache folder {} is a file (from --cache-dir, BENCHSCOPE_CACHE_DIR",
            file.display()
        )),
        "{err}"
    );
}

/// A folder nothing can be added to (immutable: read-only even for root), undone on drop.
struct Immutable(PathBuf);

impl Immutable {
    fn new(dir: PathBuf) -> Option<Immutable> {
        std::fs::create_dir_all(&dir).unwrap();
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Immutable(dir))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

/// An export or a baseline into a folder that takes no new file is refused before anything
/// is measured (before, the run measured, then could not write what it had measured).
#[test]
fn an_export_into_a_read_only_folder_is_refused_before_measuring() {
    let work = tempfile::tempdir().unwrap();
    let Some(ro) = Immutable::new(work.path().join("ro")) else {
        bench_core::testing::skip(
            "an_export_into_a_read_only_folder_is_refused_before_measuring",
            "chattr +i does not work on this file system (it makes a folder read-only even for root)",
        );
        return;
    };
    let dir = ro.0.display().to_string();
    for (flags, want) in [
        (
            vec!["--export-json".to_string(), format!("{dir}/r.json")],
            format!("cannot write {dir}/r.json: the folder {dir} takes no new file"),
        ),
        (
            vec![
                "--baseline-dir".to_string(),
                dir.clone(),
                "--save-baseline".into(),
                "b".into(),
            ],
            format!("cannot write {dir}/b.json: the folder {dir} takes no new file"),
        ),
    ] {
        let out = run_json(
            "single_row_lookup",
            &["--rows", "100", "--lookups", "20"],
            &work.path().join("cache"),
            &["rusqlite"],
        )
        .args(&flags)
        .output()
        .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(&want), "{flags:?}: {err}");
        assert!(!err.contains("✓ rusqlite"), "measured first: {err}");
    }
    // A file put where a folder should be: said as such.
    let file = work.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let out = run_json(
        "single_row_lookup",
        &["--rows", "100"],
        &work.path().join("cache"),
        &["rusqlite"],
    )
    .arg("--export-csv")
    .arg(file.join("r.csv"))
    .output()
    .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a file, not a folder"), "{err}");
}

/// A session journal with nothing readable in it (cut short, garbage, empty) is refused, not
/// shown as an empty report with exit 0.
#[test]
fn a_journal_with_no_readable_run_is_refused() {
    let work = tempfile::tempdir().unwrap();
    for (name, text, want) in [
        (
            "half.jsonl",
            "{\"kind\":\"run\",\"run_id\":\"x",
            "1 line did not read",
        ),
        ("garbage.jsonl", "garbage\nmore\n", "2 lines did not read"),
        ("empty.jsonl", "", "0 lines did not read"),
    ] {
        let p = work.path().join(name);
        std::fs::write(&p, text).unwrap();
        let out = benchscope().arg("show").arg(&p).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains("a session journal with no run in it") && err.contains(want),
            "{name}: {err}"
        );
    }
}
