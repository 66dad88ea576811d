//! How long the project's files and functions are (docs/src/architecture.md, "Sizes"): no
//! file's non-test part over 600 lines, no function over 120. Listed by
//! `cargo test -p bench-core --test sizes -- --nocapture`; the parts still over a limit are
//! named below, and the test fails when another goes over or a named one comes under (take
//! it off the list).

#[path = "support/sizes.rs"]
mod sizes;

use std::path::Path;

const FILE_LINES: usize = 600;
const FN_LINES: usize = 120;

/// What is still over a limit: a file (its path from the repository) or a function
/// (`path: name`).
const STILL_OVER: &[&str] = &[
    "bench-core/src/backends/middleware/mod.rs",
    "bench-core/src/compare/verdict.rs: judge_time",
    "bench-core/src/jail.rs",
    "bench-core/src/profile.rs: classify",
    "bench-core/src/script/parse.rs: Parser::statement",
    "bench-core/src/script/replay.rs",
    "bench-core/src/testing.rs",
    "bench-core/src/testing.rs: non_test_code",
    "bench-core/src/workloads/bulk_insert/core.rs: crate_inserts",
    "bench-core/src/workloads/crud_overhead/core.rs: Ctx::bench",
    "bench-core/src/workloads/crud_overhead/report.rs: overview_by",
    "bench-core/src/workloads/key_value/core.rs: Ctx::bench",
    "bench-core/src/workloads/single_row_lookup/core/turso_benches.rs: bench",
    "bench-core/src/workloads/single_row_lookup/mod.rs: spec",
    "src/baseline.rs",
    "src/export/markdown.rs: render",
    "src/export/table.rs: comparison_cells",
    "src/import.rs: criterion_sets",
    "src/model/catalog.rs: on_cmd",
    "src/model/compare.rs: on_cmd",
    "src/model/update.rs: on_key",
    "src/runner/harnesses.rs: resolve",
    "src/tui/effects.rs: Loop::apply",
    "src/tui/mod.rs: event_loop",
    "src/ui/compare.rs: draw",
    "src/ui/live.rs: draw",
    "src/ui/matrix.rs: draw",
];

#[test]
fn files_and_functions_keep_to_their_limits() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let roots: Vec<_> = [
        "bench-core/src",
        "src",
        "harness-sqlx/src",
        "harness-async-sqlite/src",
        "harness-sql-middleware-turso/src",
    ]
    .iter()
    .map(|r| repo.join(r))
    .collect();
    let mut over = Vec::new();
    for f in sizes::sizes(&roots, FN_LINES) {
        let path = f.path.strip_prefix(&repo).unwrap().display().to_string();
        if f.non_test_lines > FILE_LINES {
            println!("{path}: {} lines outside its tests", f.non_test_lines);
            over.push(path.clone());
        }
        for (name, line, n) in f.long_functions {
            println!("{path}:{line}: {name}, {n} lines");
            over.push(format!("{path}: {name}"));
        }
    }
    let listed: Vec<String> = STILL_OVER.iter().map(|s| s.to_string()).collect();
    let new: Vec<_> = over.iter().filter(|o| !listed.contains(o)).collect();
    let gone: Vec<_> = listed.iter().filter(|l| !over.contains(l)).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "over a limit, not listed: {new:#?}\nlisted, no longer over: {gone:#?}"
    );
}
