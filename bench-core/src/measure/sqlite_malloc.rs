//! SQLite's own allocations, counted with the runner's: SQLite is a C library and allocates with
//! the C library's `malloc` unless told otherwise, so a global allocator alone sees none of its
//! page cache, statements or result buffers. [`count`] hands SQLite memory methods
//! (`sqlite3_config(SQLITE_CONFIG_MALLOC, ...)`) that allocate through Rust's global allocator,
//! where [`super::memory::Counting`] (or the allocator counted [`super::memory::through`]) sees
//! them like any other: the comparison of a driver over SQLite's C library with one written in
//! Rust (turso) then counts both sides' allocations.
//!
//! It must run before SQLite is initialized (the first connection opened initializes it), and
//! takes the binding's own `sqlite3_config`: each runner binary links its own libsqlite3-sys
//! (the harness crates link other versions), and the methods' layout is SQLite's C ABI, the
//! same in every version since 3.6.

use std::alloc::Layout;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// `sqlite3_config` as every libsqlite3-sys binds it (C-variadic).
pub type Config = unsafe extern "C" fn(c_int, ...) -> c_int;

/// `SQLITE_CONFIG_MALLOC` and `SQLITE_OK` (sqlite3.h; stable since SQLite 3.6).
const SQLITE_CONFIG_MALLOC: c_int = 4;
const SQLITE_OK: c_int = 0;

/// Each block starts with its size (SQLite's `xSize` asks for it); the header keeps the
/// block's 16-byte alignment (SQLite needs 8).
const HEADER: usize = 16;
const ALIGN: usize = 16;

/// `struct sqlite3_mem_methods` (sqlite3.h). SQLite copies it in `sqlite3_config`.
#[repr(C)]
struct MemMethods {
    x_malloc: unsafe extern "C" fn(c_int) -> *mut c_void,
    x_free: unsafe extern "C" fn(*mut c_void),
    x_realloc: unsafe extern "C" fn(*mut c_void, c_int) -> *mut c_void,
    x_size: unsafe extern "C" fn(*mut c_void) -> c_int,
    x_roundup: extern "C" fn(c_int) -> c_int,
    x_init: extern "C" fn(*mut c_void) -> c_int,
    x_shutdown: extern "C" fn(*mut c_void),
    app_data: *mut c_void,
}

/// What [`count`] did: nothing (0: not asked, or counting turned off), counted (1), or
/// SQLite's refusal (its result code, negated).
static STATE: AtomicI32 = AtomicI32::new(0);
const COUNTED: i32 = 1;

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, ALIGN).ok()
}

unsafe extern "C" fn x_malloc(n: c_int) -> *mut c_void {
    let Some(layout) = usize::try_from(n).ok().filter(|&n| n > 0).and_then(layout) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the layout's size is at least HEADER, never zero.
    let base = unsafe { std::alloc::alloc(layout) };
    if base.is_null() {
        return base.cast();
    }
    // SAFETY: the block holds HEADER bytes, 16-aligned, before the part handed to SQLite.
    unsafe {
        base.cast::<usize>().write(n as usize);
        base.add(HEADER).cast()
    }
}

/// The block's start and the size SQLite asked for.
///
/// # Safety
/// `p` came from [`x_malloc`] or [`x_realloc`] and was not freed.
unsafe fn block(p: *mut c_void) -> (*mut u8, usize) {
    // SAFETY: per the contract, HEADER bytes before `p` hold its size.
    unsafe {
        let base = p.cast::<u8>().sub(HEADER);
        (base, base.cast::<usize>().read())
    }
}

unsafe extern "C" fn x_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what its xMalloc/xRealloc returned, once.
    unsafe {
        let (base, size) = block(p);
        std::alloc::dealloc(base, layout(size).expect("a size allocated before"));
    }
}

unsafe extern "C" fn x_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    if p.is_null() {
        // SAFETY: as malloc.
        return unsafe { x_malloc(n) };
    }
    let Some(new) = usize::try_from(n).ok().filter(|&n| n > 0) else {
        // SQLite never asks for this; C's realloc frees here.
        // SAFETY: as free.
        unsafe { x_free(p) };
        return std::ptr::null_mut();
    };
    let Some(grown) = layout(new) else {
        return std::ptr::null_mut();
    };
    // SAFETY: `p` is SQLite's block (as free); the new size with its header is a layout's
    // (checked above) of the same alignment.
    unsafe {
        let (base, size) = block(p);
        let moved = std::alloc::realloc(base, layout(size).expect("allocated"), grown.size());
        if moved.is_null() {
            return moved.cast();
        }
        moved.cast::<usize>().write(new);
        moved.add(HEADER).cast()
    }
}

unsafe extern "C" fn x_size(p: *mut c_void) -> c_int {
    if p.is_null() {
        return 0;
    }
    // SAFETY: SQLite asks the size of its own live blocks.
    let (_, size) = unsafe { block(p) };
    size as c_int
}

/// The size xMalloc would give for `n`: the next multiple of 8 (`n` itself where that is past
/// `c_int`'s range; xMalloc then refuses it anyway).
extern "C" fn x_roundup(n: c_int) -> c_int {
    n.checked_add(7).map_or(n, |m| m & !7)
}

extern "C" fn x_init(_: *mut c_void) -> c_int {
    SQLITE_OK
}

extern "C" fn x_shutdown(_: *mut c_void) {}

/// Makes SQLite allocate through Rust's global allocator (so that its allocations are counted),
/// unless counting is turned off ([`super::counting_off::OFF_VAR`]). Call it first thing in a
/// runner's `main`, before any connection is opened, with the binding's `sqlite3_config`
/// (`rusqlite::ffi::sqlite3_config`). True when SQLite took the methods.
pub fn count(config: Config) -> bool {
    if super::counting_off::turned_off() {
        return false;
    }
    let methods = MemMethods {
        x_malloc,
        x_free,
        x_realloc,
        x_size,
        x_roundup,
        x_init,
        x_shutdown,
        app_data: std::ptr::null_mut(),
    };
    // SAFETY: SQLITE_CONFIG_MALLOC takes a pointer to sqlite3_mem_methods, copied before the
    // call returns; SQLite refuses it (SQLITE_MISUSE) once initialized, and the methods
    // allocate through the global allocator, which may be called from any thread.
    let rc = unsafe { config(SQLITE_CONFIG_MALLOC, &methods as *const MemMethods) };
    STATE.store(if rc == SQLITE_OK { COUNTED } else { -rc }, Relaxed);
    rc == SQLITE_OK
}

/// What the run's `memory` setting says of SQLite's allocations; None where the runner links
/// no SQLite (or did not ask).
pub fn described() -> Option<String> {
    match STATE.load(Relaxed) {
        0 => None,
        COUNTED => {
            Some("SQLite's own allocations included (sqlite3_config SQLITE_CONFIG_MALLOC)".into())
        }
        code => Some(format!(
            "SQLite's own allocations not included: sqlite3_config(SQLITE_CONFIG_MALLOC) returned {}",
            -code
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_size_and_alignment_through_realloc_and_free() {
        // SAFETY: the methods are called as SQLite calls them, on their own blocks.
        unsafe {
            let p = x_malloc(24);
            assert!(!p.is_null());
            assert_eq!(p as usize % 8, 0);
            assert_eq!(x_size(p), 24);
            p.cast::<u8>().write_bytes(0xAB, 24);
            let q = x_realloc(p, 4000);
            assert_eq!(x_size(q), 4000);
            assert_eq!(q as usize % 8, 0);
            assert!(
                std::slice::from_raw_parts(q.cast::<u8>(), 24)
                    .iter()
                    .all(|&b| b == 0xAB)
            );
            let r = x_realloc(q, 8);
            assert_eq!(x_size(r), 8);
            assert_eq!(std::slice::from_raw_parts(r.cast::<u8>(), 8), &[0xAB; 8]);
            x_free(r);
            assert_eq!(x_size(std::ptr::null_mut()), 0);
            x_free(std::ptr::null_mut());
            assert!(x_malloc(0).is_null());
            assert!(x_malloc(-1).is_null());
        }
    }

    #[test]
    fn sizes_round_up_to_eight() {
        assert_eq!(
            [0, 1, 7, 8, 9, 4095].map(|n| x_roundup(n)),
            [0, 8, 8, 8, 16, 4096]
        );
        // Never below what was asked: past the last multiple of 8 the size is kept.
        let last = c_int::MAX & !7;
        assert_eq!(x_roundup(last), last);
        assert_eq!(x_roundup(last + 1), last + 1);
        assert_eq!(x_roundup(c_int::MAX), c_int::MAX);
    }
}
