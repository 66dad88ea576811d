//! Records the resolved versions of the crates a measurement depends on, read from the
//! Cargo.lock of whichever workspace is building this crate (benchscope's or harness-sqlx's).

use std::path::PathBuf;

const CRATES: &[&str] = &[
    "rusqlite",
    "libsqlite3-sys",
    "deadpool-sqlite",
    "deadpool",
    "tokio",
    "sqlx",
    "sqlx-sqlite",
    "turso",
];

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let lock = out
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.exists());
    let mut found = Vec::new();
    if let Some(lock) = &lock {
        println!("cargo:rerun-if-changed={}", lock.display());
        let text = std::fs::read_to_string(lock).unwrap_or_default();
        let mut name: Option<String> = None;
        for line in text.lines() {
            if let Some(n) = line.strip_prefix("name = ") {
                name = Some(n.trim_matches('"').to_string());
            } else if let Some(v) = line.strip_prefix("version = ")
                && let Some(n) = name.take()
                && CRATES.contains(&n.as_str())
                && !found.iter().any(|(f, _): &(String, String)| *f == n)
            {
                found.push((n, v.trim_matches('"').to_string()));
            }
        }
    }
    let body: String = found
        .iter()
        .map(|(n, v)| format!("    ({n:?}, {v:?}),\n"))
        .collect();
    std::fs::write(
        out.join("crate_versions.rs"),
        format!("/// Crate versions resolved in the building workspace's Cargo.lock.\npub const CRATE_VERSIONS: &[(&str, &str)] = &[\n{body}];\n"),
    )
    .unwrap();
    println!("cargo:rerun-if-changed=build.rs");
}
