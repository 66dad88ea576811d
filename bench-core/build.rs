//! Records the resolved versions of the crates a measurement depends on, from the Cargo.lock
//! of the workspace bench-core belongs to (found from its manifest, so wherever the target
//! folder is: CARGO_TARGET_DIR may point anywhere). A harness crate in a workspace of its own
//! records its own lockfile's versions with the same code (`lockfile.rs`).

include!("lockfile.rs");

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let lock = manifest
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.exists())
        .unwrap_or_else(|| manifest.join("Cargo.lock"));
    write_crate_versions(&lock);
    // The harness crates' own lockfiles, beside this one: the catalog names the exact version
    // of a crate that only a harness links (async-sqlite), whichever binary draws it.
    let root = manifest.parent().unwrap_or(&manifest);
    let mut harnesses: Vec<(String, String)> = Vec::new();
    for h in [
        "harness-sqlx",
        "harness-async-sqlite",
        "harness-sql-middleware-turso",
    ] {
        for (n, v) in versions_in(&root.join(h).join("Cargo.lock")) {
            if !harnesses.iter().any(|(f, _)| *f == n) {
                harnesses.push((n, v));
            }
        }
    }
    write_versions(
        "harness_versions.rs",
        "HARNESS_CRATE_VERSIONS",
        "Crate versions resolved in the harness crates' own Cargo.lock files.",
        &harnesses,
    );
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=lockfile.rs");
}
