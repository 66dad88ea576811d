//! Records the resolved versions of the crates this harness measures, from its own Cargo.lock.

include!("../bench-core/lockfile.rs");

fn main() {
    write_harness_crate_versions();
    // Memory per operation through turso's allocator (src/counted.rs): the calls the
    // `mimalloc` crate makes into mimalloc's C functions go to this harness's shims, which
    // call the real ones.
    for f in [
        "mi_malloc_aligned",
        "mi_zalloc_aligned",
        "mi_realloc_aligned",
        "mi_free",
    ] {
        println!("cargo:rustc-link-arg=-Wl,--wrap={f}");
    }
}
