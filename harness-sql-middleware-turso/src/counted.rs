//! Memory per operation through turso's allocator. turso (through sql-middleware's turso
//! feature) installs mimalloc as the global allocator, and a binary has one: benchscope's
//! counting allocator cannot be installed here. Instead the calls the `mimalloc` crate makes
//! into mimalloc's C functions are wrapped at link time (`ld --wrap`, see build.rs): each call
//! goes to the shim below, which calls mimalloc (`__real_...`) and reports what it did to
//! bench-core's counters. Calls inside mimalloc's own C code are not wrapped (they resolve
//! within its object), so each allocation of the program is counted once.

use std::ffi::c_void;

unsafe extern "C" {
    fn __real_mi_malloc_aligned(size: usize, alignment: usize) -> *mut c_void;
    fn __real_mi_zalloc_aligned(size: usize, alignment: usize) -> *mut c_void;
    fn __real_mi_realloc_aligned(p: *mut c_void, newsize: usize, alignment: usize) -> *mut c_void;
    fn __real_mi_free(p: *mut c_void);
    fn mi_usable_size(p: *const c_void) -> usize;
}

/// What the counts go through, said in the run's `memory` setting.
pub const THROUGH: &str = "mimalloc, turso's global allocator, by its calls wrapped at link time";

/// # Safety
/// mimalloc's `mi_malloc_aligned` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_mi_malloc_aligned(size: usize, alignment: usize) -> *mut c_void {
    // SAFETY: the caller's contract, passed on.
    let p = unsafe { __real_mi_malloc_aligned(size, alignment) };
    if !p.is_null() {
        // SAFETY: a block mimalloc just handed out.
        bench_core::measure::memory::through::alloc(size, unsafe { mi_usable_size(p) });
    }
    p
}

/// # Safety
/// mimalloc's `mi_zalloc_aligned` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_mi_zalloc_aligned(size: usize, alignment: usize) -> *mut c_void {
    // SAFETY: the caller's contract, passed on.
    let p = unsafe { __real_mi_zalloc_aligned(size, alignment) };
    if !p.is_null() {
        // SAFETY: a block mimalloc just handed out.
        bench_core::measure::memory::through::alloc(size, unsafe { mi_usable_size(p) });
    }
    p
}

/// # Safety
/// mimalloc's `mi_realloc_aligned` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_mi_realloc_aligned(
    p: *mut c_void,
    newsize: usize,
    alignment: usize,
) -> *mut c_void {
    // SAFETY: `p` is a live block of mimalloc's (or null), by the caller's contract.
    let old = if p.is_null() {
        0
    } else {
        unsafe { mi_usable_size(p) }
    };
    // SAFETY: the caller's contract, passed on.
    let q = unsafe { __real_mi_realloc_aligned(p, newsize, alignment) };
    if !q.is_null() {
        // SAFETY: a block mimalloc just handed out.
        bench_core::measure::memory::through::realloc(old, unsafe { mi_usable_size(q) });
    }
    q
}

/// # Safety
/// mimalloc's `mi_free` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_mi_free(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: a live block of mimalloc's, by the caller's contract.
        bench_core::measure::memory::through::free(unsafe { mi_usable_size(p) });
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { __real_mi_free(p) }
}
