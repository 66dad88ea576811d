//! Records the resolved versions of the crates this harness measures, from its own Cargo.lock.

include!("../bench-core/lockfile.rs");

fn main() {
    write_harness_crate_versions();
}
