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

/// Writes `OUT_DIR/crate_versions.rs` from `lock` (nothing listed when it cannot be read).
fn write_crate_versions(lock: &std::path::Path) {
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
    let body: String = found
        .iter()
        .map(|(n, v)| format!("    ({n:?}, {v:?}),\n"))
        .collect();
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(
        out.join("crate_versions.rs"),
        format!("/// Crate versions resolved in the building workspace's Cargo.lock.\npub const CRATE_VERSIONS: &[(&str, &str)] = &[\n{body}];\n"),
    )
    .unwrap();
}
