//! Helpers for tests that run a runner for real (bench-core's, harness-sqlx's and benchscope's
//! own tests use them): run it to its end and read every line of its stream.

use crate::protocol::{Event, decode};

/// What a runner process left behind: its exit code, every event it wrote, its stderr.
#[derive(Debug)]
pub struct RunnerOutput {
    pub code: Option<i32>,
    pub events: Vec<Event>,
    pub stderr: String,
}

/// The knob and trace variables a test must not inherit from the calling environment.
pub const INHERITED_VARS: &[&str] = &[
    "BENCH_ROWS",
    "BENCH_LOOKUPS",
    "BENCH_CONCURRENCY",
    "BENCH_TRACE",
];

/// Runs a runner to its end without the knob variables of the calling environment, and
/// decodes every line of its stdout (the first line that is not a valid event is an error).
pub fn run_to_end(command: &mut std::process::Command) -> Result<RunnerOutput, String> {
    for v in INHERITED_VARS {
        command.env_remove(v);
    }
    let out = command
        .output()
        .map_err(|e| format!("cannot start the runner: {e}"))?;
    let stdout =
        String::from_utf8(out.stdout).map_err(|e| format!("runner stdout is not UTF-8: {e}"))?;
    let events = stdout
        .lines()
        .map(|l| decode(l).map_err(|e| format!("bad line {l:?}: {e}")))
        .collect::<Result<_, _>>()?;
    Ok(RunnerOutput {
        code: out.status.code(),
        events,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The events of one bench, in order.
pub fn events_of<'a>(events: &'a [Event], bench: &str) -> Vec<&'a Event> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::BenchStart { .. }
                    | Event::Sample { .. }
                    | Event::Phases { .. }
                    | Event::Summary { .. }
                    | Event::Skipped { .. }
                    | Event::Error { .. }
            ) && e.bench() == Some(bench)
        })
        .collect()
}

/// What one bench's part of a stream holds, once checked.
#[derive(Debug, Clone)]
pub struct BenchCheck {
    /// Operations in one pass.
    pub ops: u64,
    /// The work check the bench declared.
    pub work: crate::protocol::WorkCheck,
    /// Passes of each sample, in order.
    pub passes: Vec<u64>,
    pub summary: crate::measure::stats::Summary,
    /// Each phase window, in order.
    pub phases: Vec<std::collections::BTreeMap<crate::measure::trace::Phase, f64>>,
    /// The SQLite settings its connections read back.
    pub sqlite: std::collections::BTreeMap<String, String>,
}

/// The smallest budget that still gives a bench two or three samples, for the stream tests.
pub const STREAM_BUDGET: &[&str] = &[
    "--time",
    "0.02",
    "--warmup",
    "0",
    "--samples",
    "3",
    "--min-samples",
    "2",
];

/// Runs the runner binary `bin` on `args` with its dataset cache in `cache`, to its end: exit
/// code, events, stderr (a runner that cannot be run fails the test that asked).
pub fn run_runner(
    bin: &str,
    args: &[&str],
    cache: &std::path::Path,
) -> (Option<i32>, Vec<Event>, String) {
    let mut cmd = std::process::Command::new(bin);
    cmd.args(args).arg("--cache-dir").arg(cache);
    let out = run_to_end(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
    (out.code, out.events, out.stderr)
}

/// Checks one bench's events in a stream: one `bench_start` first, with a work check;
/// samples numbered from 0 in order, each a whole number of passes whose work is exactly
/// passes x the declared work per pass; one `summary` last, over those samples; no error.
pub fn check_bench(events: &[Event], bench: &str) -> Result<BenchCheck, String> {
    let mine = events_of(events, bench);
    let Some(Event::BenchStart {
        ops, work, sqlite, ..
    }) = mine.first()
    else {
        return Err(format!(
            "{bench}: the first event is not bench_start: {mine:?}"
        ));
    };
    let work = work
        .clone()
        .ok_or_else(|| format!("{bench}: bench_start declares no work check"))?;
    if *ops == 0 {
        return Err(format!("{bench}: a pass of no operations"));
    }
    let mut passes = Vec::new();
    let mut phases = Vec::new();
    let mut summary = None;
    for (i, e) in mine.iter().enumerate().skip(1) {
        match e {
            Event::Sample {
                iter,
                ops: sample_ops,
                elapsed_ns,
                work: got,
                cost,
                ..
            } => {
                // Linux always reports usage: a sample without it, or spending CPU time
                // without wall time, is a broken reading.
                match cost {
                    Some(c) if c.wall_ns > 0 && c.sys_ns <= c.cpu_ns => {}
                    other => return Err(format!("{bench}: sample {iter} has cost {other:?}")),
                }
                if *iter != passes.len() as u64 {
                    return Err(format!("{bench}: sample {iter} out of order"));
                }
                if sample_ops % ops != 0 || *elapsed_ns == 0 {
                    return Err(format!(
                        "{bench}: sample of {sample_ops} ops in {elapsed_ns} ns (passes of {ops})"
                    ));
                }
                let n = sample_ops / ops;
                let want = work.per_pass.wrapping_mul(n);
                if *got != Some(want) {
                    return Err(format!(
                        "{bench}: sample {iter} did work {got:?}, expected {want} ({n} passes)"
                    ));
                }
                passes.push(n);
            }
            Event::Phases { ns_per_op, .. } => phases.push(ns_per_op.clone()),
            Event::Summary { stats, .. } if i == mine.len() - 1 => summary = Some(stats.clone()),
            other => return Err(format!("{bench}: unexpected {other:?}")),
        }
    }
    let summary = summary.ok_or_else(|| format!("{bench}: no summary last"))?;
    match summary.cost {
        Some(c) if c.cpu_ns_per_op.is_finite() && c.cpu_per_wall >= 0.0 => {}
        other => return Err(format!("{bench}: summary cost {other:?}")),
    }
    if summary.samples != passes.len() || passes.is_empty() {
        return Err(format!(
            "{bench}: summary of {} samples after {} samples",
            summary.samples,
            passes.len()
        ));
    }
    Ok(BenchCheck {
        ops: *ops,
        work,
        passes,
        summary,
        phases,
        sqlite: sqlite.clone(),
    })
}

/// The names of `target`'s benches that `harness` runs, in the catalog's order.
pub fn benches_of(
    target: &crate::catalog::Target,
    harness: crate::catalog::Harness,
) -> Vec<&'static str> {
    target
        .benches
        .iter()
        .filter(|b| b.harness() == harness)
        .map(|b| b.name)
        .collect()
}

/// Checks that each of `expected` (a bench, the work one pass must do) streamed the passes of
/// a run on `STREAM_BUDGET` (2 or 3), each doing exactly that work.
pub fn check_passes(events: &[Event], expected: &[(&str, u64)]) {
    for (bench, per_pass) in expected {
        let c = check_bench(events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert!((2..=3).contains(&c.passes.len()), "{bench}: {:?}", c.passes);
        assert_eq!(c.work.per_pass, *per_pass, "{bench}: {}", c.work.what);
    }
}

/// The files in `dir` whose names start with `prefix` (scratch files a bench should have taken
/// away with it).
pub fn left_in(dir: &std::path::Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// Every file in `dir` by name with its size and SHA-256: what "this folder is as it was"
/// compares (a file added, removed or changed by a single byte shows).
pub fn folder_listing(dir: &std::path::Path) -> Vec<(String, u64, String)> {
    use sha2::Digest as _;
    let mut v: Vec<(String, u64, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            let sum: String = sha2::Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            (
                e.file_name().to_string_lossy().into_owned(),
                bytes.len() as u64,
                sum,
            )
        })
        .collect();
    v.sort();
    v
}

/// Says on the test output that `test` is skipped and why, where `cargo test` shows it: on
/// the process's stderr itself, past the capture that hides a passing test's prints. A test
/// calls it and returns when what it needs (tmux, perf, chromium, a PostgreSQL server) is not
/// there. With `BENCHSCOPE_TEST_NO_SKIP` set (CI's second pass, after it installed all of
/// them) that is a failure instead.
pub fn skip(test: &str, reason: &str) {
    use std::io::Write as _;
    assert!(
        std::env::var_os("BENCHSCOPE_TEST_NO_SKIP").is_none(),
        "{test} cannot run, and BENCHSCOPE_TEST_NO_SKIP is set: {reason}"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
}

/// A task that ticks every `every` and counts its ticks while `counting` is on: how often the
/// runtime let it run (bench-core's unit tests: does a call leave the runtime's other tasks
/// running?). Aborted when dropped.
#[cfg(test)]
pub(crate) struct Ticker {
    pub ticks: std::sync::Arc<std::sync::atomic::AtomicU64>,
    pub counting: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

#[cfg(test)]
impl Ticker {
    /// Spawned on the runtime the caller runs on, counting from the start when `counting`.
    pub(crate) fn spawn(every: std::time::Duration, counting: bool) -> Ticker {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
        let ticks = std::sync::Arc::new(AtomicU64::new(0));
        let counting = std::sync::Arc::new(AtomicBool::new(counting));
        let (t, c) = (ticks.clone(), counting.clone());
        let task = tokio::spawn(async move {
            loop {
                if c.load(SeqCst) {
                    t.fetch_add(1, SeqCst);
                }
                tokio::time::sleep(every).await;
            }
        });
        Ticker {
            ticks,
            counting,
            task,
        }
    }

    /// The ticks counted so far.
    pub(crate) fn ticks(&self) -> u64 {
        self.ticks.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[cfg(test)]
impl Drop for Ticker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---- Hostile SQLite files ----

/// Writes a hot rollback journal beside the database at `db` (`db-journal`) that holds no
/// page but names `super_journal` as its super-journal, byte for byte as SQLite's pager writes
/// one (pager.c: the journal header, then the super-journal record at the journal's end: page
/// number, name, its length and checksum, the magic). SQLite, opening `db`, finds the journal
/// hot; when the super-journal it names exists, it plays the journal back and then deletes the
/// super-journal unless a journal it lists still names it: with any file of the user's named,
/// that file is deleted.
pub fn hot_journal(db: &std::path::Path, page_size: u32, super_journal: &[u8]) {
    const MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];
    const SECTOR: usize = 512;
    let pages = std::fs::metadata(db).map_or(0, |m| m.len()) / u64::from(page_size);
    let mut j = Vec::new();
    j.extend_from_slice(&MAGIC);
    j.extend_from_slice(&0u32.to_be_bytes()); // no page records
    j.extend_from_slice(&0x1234_5678u32.to_be_bytes()); // checksum nonce
    j.extend_from_slice(&u32::try_from(pages).unwrap_or(u32::MAX).to_be_bytes());
    j.extend_from_slice(&(SECTOR as u32).to_be_bytes());
    j.extend_from_slice(&page_size.to_be_bytes());
    j.resize(SECTOR, 0);
    // The super-journal record: its page number is the lock-byte page's (PAGER_SJ_PGNO).
    let sj_pgno = 0x4000_0000 / page_size + 1;
    j.extend_from_slice(&sj_pgno.to_be_bytes());
    j.extend_from_slice(super_journal);
    let sum = super_journal
        .iter()
        .fold(0u32, |s, &b| s.wrapping_add(b as i8 as i32 as u32));
    j.extend_from_slice(&u32::try_from(super_journal.len()).unwrap().to_be_bytes());
    j.extend_from_slice(&sum.to_be_bytes());
    j.extend_from_slice(&MAGIC);
    let mut path = db.as_os_str().to_owned();
    path.push("-journal");
    std::fs::write(path, j).unwrap();
}

// ---- Reads outside the opener ----

/// `text` (Rust source) with comments and the insides of string and char literals blanked and
/// every `#[cfg(test)]` item (a module, a function, an impl; any indentation) blanked, lines
/// kept where they were (so that a byte's line number is its line in the file). Also the
/// names of modules declared `#[cfg(test)] mod name;` (their files are test code).
pub fn non_test_code(text: &str) -> (String, Vec<String>) {
    let b = text.as_bytes();
    let mut out: Vec<u8> = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    // Comments and literals first.
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                let start = i;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                blank(&mut out, start, i);
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let body = i + 2 + hashes;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let end = b[body..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |n| body + n);
                blank(&mut out, body, end);
                i = end + close.len();
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, start, i.min(b.len()));
                i += 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\''), not a lifetime ('a).
                let close = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|n| i + 2 + n)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match close {
                    Some(end) => {
                        blank(&mut out, i + 1, end);
                        i = end + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    // Then `#[cfg(test)]` items, on the blanked text (braces in strings are gone).
    let text = String::from_utf8(out).expect("only ASCII blanked");
    let mut out = text.clone().into_bytes();
    let mut test_mods = Vec::new();
    let mut from = 0;
    // `#[cfg(test)]`, `#[cfg(all(test, ...))]`: an attribute whose condition names `test`
    // outside a `not(...)`.
    let test_attr = |attr: &str| {
        attr.replace(' ', "")
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == "test")
            && !attr.contains("not(")
    };
    while let Some(at) = text[from..].find("#[cfg(").map(|n| from + n) {
        let Some(close) = text[at..].find(")]").map(|n| at + n + 2) else {
            break;
        };
        if !test_attr(&text[at..close]) {
            from = close;
            continue;
        }
        let rest = &text[at..];
        let semi = rest.find(';');
        let brace = rest.find('{');
        let end = match (semi, brace) {
            (Some(s), o) if o.is_none_or(|o| s < o) => {
                let item = &rest[..s];
                if let Some(m) = item.split_whitespace().skip_while(|w| *w != "mod").nth(1) {
                    test_mods.push(m.to_string());
                }
                at + s + 1
            }
            (_, Some(o)) => {
                let mut depth = 0usize;
                let mut j = at + o;
                let tb = text.as_bytes();
                loop {
                    match tb.get(j) {
                        Some(b'{') => depth += 1,
                        Some(b'}') => {
                            depth -= 1;
                            if depth == 0 {
                                break j + 1;
                            }
                        }
                        None => break tb.len(),
                        _ => {}
                    }
                    j += 1;
                }
            }
            (Some(s), None) => at + s + 1,
            (None, None) => text.len(),
        };
        blank(&mut out, at, end);
        from = end;
    }
    (String::from_utf8(out).expect("ASCII"), test_mods)
}

/// What opens a file for reading, as code spells it (outside the opener).
const READS: &[&str] = &[
    "File::open(",
    "fs::read(",
    "fs::read_to_string(",
    "fs::read_dir(",
    "read_dir(",
    "fs::copy(",
    ".read(true)",
    "OpenOptions::new().read(",
];

/// Each place in `code` (from [`non_test_code`]) that opens a file for reading: `line: text`.
pub fn file_reads(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if READS.iter().any(|r| squeezed.contains(r)) {
            found.push(format!("{}: {}", n + 1, line.trim()));
        }
    }
    found
}

/// Every place in the `.rs` files under `roots` that opens a file for reading outside the
/// files `allowed` (paths ending so: the opener itself, test helpers, build scripts), test code
/// left out: `path:line: text`.
pub fn reads_outside(roots: &[std::path::PathBuf], allowed: &[&str]) -> Vec<String> {
    let files = rust_files(roots);
    // Files of modules declared `#[cfg(test)]`: `name.rs` or `name/...` beside the declaring file.
    let mut test_files: Vec<std::path::PathBuf> = Vec::new();
    let mut found = Vec::new();
    let parsed: Vec<(std::path::PathBuf, String)> = files
        .iter()
        .map(|p| {
            let (code, mods) = non_test_code(&std::fs::read_to_string(p).unwrap_or_default());
            let dir = match p.file_stem().and_then(|s| s.to_str()) {
                Some("mod" | "lib" | "main") => p.parent().unwrap().to_path_buf(),
                Some(stem) => p.parent().unwrap().join(stem),
                None => p.parent().unwrap().to_path_buf(),
            };
            for m in mods {
                test_files.push(dir.join(format!("{m}.rs")));
                test_files.push(dir.join(&m));
            }
            (p.clone(), code)
        })
        .collect();
    for (p, code) in parsed {
        let shown = p.display().to_string();
        if allowed.iter().any(|a| shown.ends_with(a))
            || p.file_name().is_some_and(|n| n == "tests.rs")
            || test_files.iter().any(|t| p.starts_with(t))
        {
            continue;
        }
        for hit in file_reads(&code) {
            found.push(format!("{shown}:{hit}"));
        }
    }
    found
}

/// Each place in `code` (from [`non_test_code`]) where a printing macro (`println!`, `print!`,
/// `eprintln!`, `eprint!`, `write!`, `writeln!`) is handed a [`crate::text::Text`]'s raw form:
/// `line: text`. A text from data reaches a sink through its escape for that sink, never raw.
pub fn raw_prints(code: &str) -> Vec<String> {
    const MACROS: &[&str] = &[
        "println!(",
        "print!(",
        "eprintln!(",
        "eprint!(",
        "write!(",
        "writeln!(",
    ];
    let b = code.as_bytes();
    let mut found = Vec::new();
    for m in MACROS {
        let mut from = 0;
        while let Some(at) = code[from..].find(m).map(|n| from + n) {
            from = at + m.len();
            // Not the end of a longer name (`eprintln!` holds `println!`).
            if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
                continue;
            }
            let mut depth = 0usize;
            let mut end = at + m.len() - 1;
            while end < b.len() {
                match b[end] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
            if code[at..end.min(b.len())].contains(".raw()") {
                let line = code[..at].matches('\n').count() + 1;
                found.push(format!(
                    "{line}: {}",
                    code.lines().nth(line - 1).unwrap_or("").trim()
                ));
            }
        }
    }
    found
}

/// [`raw_prints`] over every `.rs` file under `roots`, test code left out: `path:line: text`.
pub fn raw_prints_in(roots: &[std::path::PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for p in rust_files(roots) {
        if p.file_name().is_some_and(|n| n != "tests.rs") {
            let (code, _) = non_test_code(&std::fs::read_to_string(&p).unwrap_or_default());
            for hit in raw_prints(&code) {
                found.push(format!("{}:{hit}", p.display()));
            }
        }
    }
    found
}

/// The `.rs` files under `roots` (each a folder, or a file), sorted; `target` and `tests`
/// folders left out.
pub fn rust_files(roots: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        if dir.extension().is_some_and(|x| x == "rs") && dir.is_file() {
            files.push(dir);
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if p.file_name().is_some_and(|n| n != "target" && n != "tests") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The cases a property test runs: BENCHSCOPE_PROPTEST_CASES, else 256.
pub fn proptest_cases() -> u32 {
    std::env::var("BENCHSCOPE_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}
