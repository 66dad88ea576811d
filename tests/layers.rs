//! benchscope's own files import each other without a cycle, as bench-core's do
//! (bench-core/tests/layers.rs; how imports are read, every path form by a Rust parser:
//! bench-core/tests/support/imports.rs).

#[path = "../bench-core/tests/support/imports.rs"]
mod imports;

#[test]
fn no_file_of_benchscope_imports_one_that_imports_it_back() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = imports::graph(&src, None);
    assert!(edges.values().filter(|t| !t.is_empty()).count() > 50);
    if let Some(cycle) = imports::cycle(&edges) {
        panic!("a cycle of imports: {}", cycle.join(" -> "));
    }
    // The check sees imports at all: what `show` reads comes through `sources`.
    assert!(edges["show"].contains("sources"), "{:?}", edges.get("show"));
}

/// Files benchscope reads that it did not write in this run are read through one module,
/// `bench_core::opener` (regular files only, opened without waiting, bounded; walks that follow
/// no link): code anywhere else in the four workspaces that opens a file for reading fails this
/// test. The allowed exceptions are test support and build scripts, each with its reason.
#[test]
fn reads_go_through_the_opener() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let roots: Vec<_> = [
        "src",
        "bench-core/src",
        "bench-core/build.rs",
        "harness-sqlx/src",
        "harness-async-sqlite/src",
        "harness-sql-middleware-turso/src",
    ]
    .iter()
    .map(|r| root.join(r))
    .filter(|p| p.is_dir())
    .collect();
    let found = bench_core::testing::reads_outside(
        &roots,
        &[
            // The opener itself.
            "bench-core/src/opener.rs",
            // Test support: the helpers tests call (folder listings, the source scans).
            "bench-core/src/testing.rs",
            "src/testing.rs",
            "src/docs_check.rs",
            // Build scripts read the workspace's own Cargo.lock at build time.
            "bench-core/src/protocol/lockfile.rs",
        ],
    );
    assert!(
        found.is_empty(),
        "files opened for reading outside bench_core::opener:\n{}",
        found.join("\n")
    );
}

/// The scan above sees a read: a file that opens one, in any spelling, is found; the same in a
/// test module, a comment or a string is not.
#[test]
fn the_opener_scan_finds_a_read_and_only_a_real_one() {
    let code = r#"
use std::fs;
fn a() { let t = std::fs::read_to_string("x"); }
fn b() { let f = File::open(p); }
fn c() { let d = fs::read_dir(dir); }
fn d() { let f = std::fs::OpenOptions::new()
    .read(true)
    .open(p); }
// File::open in a comment
fn e() { let s = "fs::read(p)"; }
#[cfg(test)]
mod tests {
    fn t() { let _ = std::fs::read("x"); }
}
    #[cfg(test)]
    fn helper() { let _ = std::fs::read("y"); }
"#;
    let (kept, _) = bench_core::testing::non_test_code(code);
    let hits = bench_core::testing::file_reads(&kept);
    let lines: Vec<&str> = hits.iter().map(|h| h.split(':').next().unwrap()).collect();
    assert_eq!(lines, ["3", "4", "5", "7"], "{hits:#?}");
}

/// Every line to stderr goes through one sink, `bench_core::text::say` (benchscope's
/// `out::say!`), which escapes what would move the cursor: no `eprintln!` or `eprint!` in code
/// that is not a test's.
#[test]
fn stderr_lines_go_through_one_sink() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let roots: Vec<_> = [
        "src",
        "bench-core/src",
        "harness-sqlx/src",
        "harness-async-sqlite/src",
        "harness-sql-middleware-turso/src",
    ]
    .iter()
    .map(|r| root.join(r))
    .collect();
    for p in bench_core::testing::rust_files(&roots) {
        if p.ends_with("tests.rs") || p.ends_with("testing.rs") {
            continue;
        }
        let (code, _) = bench_core::testing::non_test_code(&std::fs::read_to_string(&p).unwrap());
        for (n, line) in code.lines().enumerate() {
            if line.contains("eprintln!(") || line.contains("eprint!(") {
                found.push(format!("{}:{}", p.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "stderr written past the sink:\n{}",
        found.join("\n")
    );
}

/// A string from data is a `bench_core::text::Text`, which has no `Display`: printed, it goes
/// through its sink's escape (`.terminal()`, `.md_cell()`, ...). Its raw form (`.raw()`) is for
/// comparing, matching and composing another text (`bench_core::text!`), and never handed to a
/// printing macro: code that does fails this test.
#[test]
fn no_text_from_data_is_printed_raw() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let roots: Vec<_> = ["src", "bench-core/src"]
        .iter()
        .map(|r| root.join(r))
        .collect();
    let found = bench_core::testing::raw_prints_in(&roots);
    assert!(found.is_empty(), "raw text printed:\n{}", found.join("\n"));
    // The scan sees one.
    let code = "fn a(t: &Text) {\n    println!(\n        \"{}\",\n        t.raw()\n    );\n}\nfn b(t: &Text) { eprintln!(\"{}\", t.terminal()); }\n";
    assert_eq!(bench_core::testing::raw_prints(code), ["2: println!("]);
}
