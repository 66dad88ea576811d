//! Records the resolved versions of the crates this harness measures, from its own
//! Cargo.lock (bench-core, a path dependency, records the core workspace's).

include!("../bench-core/lockfile.rs");

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    write_crate_versions(&manifest.join("Cargo.lock"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../bench-core/lockfile.rs");
}
