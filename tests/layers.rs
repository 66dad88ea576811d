//! benchscope's own files import each other without a cycle, as bench-core's do
//! (bench-core/tests/layers.rs; how imports are read: `bench_core::testing::import_cycle`).

#[test]
fn no_file_of_benchscope_imports_one_that_imports_it_back() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (edges, cycle) = bench_core::testing::import_cycle(&src);
    assert!(edges.len() > 50, "{} files import others", edges.len());
    if let Some(cycle) = cycle {
        panic!("a cycle of imports: {}", cycle.join(" -> "));
    }
    // The check sees imports at all: what `show` reads comes through `sources`.
    assert!(edges["show"].contains("sources"), "{:?}", edges.get("show"));
}
