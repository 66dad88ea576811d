// Shared by the build scripts of bench-core and of each harness crate (`include!`d): the
// resolved versions of the crates a measurement depends on, read from a Cargo.lock, written as
// `crate_versions.rs` in OUT_DIR.

/// The crates whose versions a run records.
const MEASURED_CRATES: &[&str] = &[
    "rusqlite",
    "libsqlite3-sys",
    "deadpool-sqlite",
    "deadpool",
    "tokio",
    "sqlx",
    "sqlx-sqlite",
    "turso",
    "tokio-rusqlite",
    "r2d2",
    "r2d2_sqlite",
    "diesel",
    "sql-middleware",
    "async-sqlite",
];

/// The measured crates' versions in `lock`, in lockfile order (none when it cannot be read).
fn versions_in(lock: &std::path::Path) -> Vec<(String, String)> {
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(lock).unwrap_or_default();
    let mut found: Vec<(String, String)> = Vec::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let Some(v) = line.strip_prefix("version = ")
            && let Some(n) = name.take()
            && MEASURED_CRATES.contains(&n.as_str())
            && !found.iter().any(|(f, _)| *f == n)
        {
            found.push((n, v.trim_matches('"').to_string()));
        }
    }
    found
}

/// Writes `OUT_DIR/{file}` holding `pub const {name}: &[(&str, &str)]` with `found`.
fn write_versions(file: &str, name: &str, doc: &str, found: &[(String, String)]) {
    let body: String = found
        .iter()
        .map(|(n, v)| format!("    ({n:?}, {v:?}),\n"))
        .collect();
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(
        out.join(file),
        format!("/// {doc}\npub const {name}: &[(&str, &str)] = &[\n{body}];\n"),
    )
    .unwrap();
}

/// Writes `OUT_DIR/crate_versions.rs` (`CRATE_VERSIONS`) from `lock`.
fn write_crate_versions(lock: &std::path::Path) {
    write_versions(
        "crate_versions.rs",
        "CRATE_VERSIONS",
        "Crate versions resolved in the building workspace's Cargo.lock.",
        &versions_in(lock),
    );
}

/// A harness crate's build script: its own Cargo.lock's versions (bench-core, a path
/// dependency, records the core workspace's).
#[allow(dead_code)]
fn write_harness_crate_versions() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    write_crate_versions(&manifest.join("Cargo.lock"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../bench-core/lockfile.rs");
}
