//! bench-core's files import each other without a cycle: every file's non-test code names
//! only files that do not name it back, directly or through others; and its modules form the
//! layers docs/src/architecture.md lists ("Layers"): no file names a file of a layer above its
//! own. A cycle would mean two layers that cannot be understood, tested or moved apart. How
//! imports are read (every path form, by a Rust parser): `support/imports.rs`.

#[path = "support/imports.rs"]
mod imports;

use std::path::Path;

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_of_bench_core_imports_one_that_imports_it_back() {
    let edges = imports::graph(&src(), Some("bench_core"));
    assert!(edges.values().filter(|t| !t.is_empty()).count() > 50);
    if let Some(cycle) = imports::cycle(&edges) {
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

#[test]
fn bench_core_s_modules_form_the_documented_layers() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/architecture.md"),
    )
    .unwrap();
    let layers = imports::layers(&doc);
    assert!(layers.len() >= 4, "{layers:?}");
    let edges = imports::graph(&src(), Some("bench_core"));
    let wrong = imports::against_layers(&edges, &layers);
    assert!(
        wrong.is_empty(),
        "against the layers of architecture.md:\n{}",
        wrong.join("\n")
    );
    // The check can fail: the dataset naming the rusqlite side again would go up a layer.
    let mut back = edges.clone();
    back.get_mut("dataset")
        .unwrap()
        .insert("on_rusqlite".into());
    assert_eq!(
        imports::against_layers(&back, &layers),
        ["dataset (`dataset`, layer 4) names on_rusqlite (`on_rusqlite`, layer 2)"]
    );
}

/// Every path form the reader must see, in a crate of its own made for the test.
#[test]
fn the_reader_sees_every_path_form() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod e;\npub mod f;\n",
    );
    // A parent's `pub use child::x`, and a child naming its parent's sibling by `super::`.
    write("a/mod.rs", "mod child;\npub use child::x;\n");
    write("a/child.rs", "pub fn x() { super::super::b::y() }\n");
    // The crate's own name, in a group.
    write("b.rs", "use bench_core::{c::{z}};\npub fn y() {}\n");
    // Inside a macro call; a test item indented is left out.
    write(
        "c.rs",
        "pub fn z() { println!(\"{}\", crate::d::w()); }\nmod inner {\n    #[cfg(test)]\n    fn t() { crate::e::v(); }\n}\n",
    );
    // A type path, and `self::`.
    write(
        "d.rs",
        "pub fn w() -> crate::e::V { self::u() }\nfn u() -> crate::e::V { crate::e::V }\n",
    );
    // A test-only statement, and a `cfg(test)` method.
    write(
        "e.rs",
        "pub struct V;\npub fn v() {\n    #[cfg(test)]\n    let _ = crate::f::q();\n}\nimpl V {\n    #[cfg(test)]\n    fn m() { crate::f::q() }\n}\n",
    );
    write("f.rs", "pub fn q() {}\n");
    let edges = imports::graph(src, Some("bench_core"));
    let names = |m: &str| edges[m].iter().cloned().collect::<Vec<_>>();
    assert_eq!(names("a"), ["a::child"]);
    assert_eq!(names("a::child"), ["b"]);
    assert_eq!(names("b"), ["c"]);
    assert_eq!(names("c"), ["d"]);
    assert_eq!(names("d"), ["e"]);
    assert!(names("e").is_empty(), "{:?}", names("e"));
    assert_eq!(imports::cycle(&edges), None);
    // One edge back makes the cycle it closes.
    write("f.rs", "pub fn q() { crate::a::x() }\n");
    write("e.rs", "pub struct V;\npub fn v() { crate::f::q() }\n");
    let edges = imports::graph(src, Some("bench_core"));
    let cycle = imports::cycle(&edges).expect("a cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert!(cycle.contains(&"a::child".to_string()), "{cycle:?}");
    assert!(cycle.contains(&"f".to_string()), "{cycle:?}");
}
