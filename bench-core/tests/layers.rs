//! bench-core's files import each other without a cycle: every file's non-test code names
//! (`crate::...`, `super::...`) only files that do not name it back, directly or through
//! others. A cycle would mean two layers that cannot be understood, tested or moved apart
//! (docs/src/architecture.md, "Layers"). How imports are read: `bench_core::testing::import_cycle`.

#[test]
fn no_file_of_bench_core_imports_one_that_imports_it_back() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (edges, cycle) = bench_core::testing::import_cycle(&src);
    assert!(edges.len() > 50, "{} files import others", edges.len());
    if let Some(cycle) = cycle {
        panic!("a cycle of imports: {}", cycle.join(" -> "));
    }
    // The check sees imports at all: the statistics are named by the comparison model, and
    // a file by its folder's `super::`.
    assert!(
        edges["compare"].contains("measure::stats"),
        "{:?}",
        edges.get("compare")
    );
    assert!(
        edges["measure::sqlite_malloc"].contains("measure::counting_off"),
        "{:?}",
        edges.get("measure::sqlite_malloc")
    );
}
