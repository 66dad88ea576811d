//! Memory per operation: a global allocator that counts what it hands out (allocations,
//! reallocations, bytes, the bytes live and their peak) around the system's, read at sample
//! edges like [`super::cost`]. A binary that runs benches installs it:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: bench_core::measure::memory::Counting = bench_core::measure::memory::Counting::SYSTEM;
//! ```
//!
//! and calls [`start`] before it measures. Every thread of the process counts (a pool's
//! workers, a runtime's blocking threads), so what a bench hands to other threads is its own.
//! Counting is off until [`start`], and where neither this allocator is installed nor another's
//! calls are wrapped ([`through`]); then nothing is reported rather than zeros.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

pub use super::counting_off::{OFF_VAR, turned_off};

static ON: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static REALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
/// Bytes handed out and not yet returned since counting began (below 0 when memory handed
/// out before is returned: only differences are read).
static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

/// Stacks are wanted (a profiled runner: [`record_stacks`]).
static STACKS_WANTED: AtomicBool = AtomicBool::new(false);
/// Stacks are taken now (wanted, and a sample under way: [`stacks_while_sampling`]).
static STACKS_ON: AtomicBool = AtomicBool::new(false);
/// Each call stack that allocated (return addresses, innermost first) and what it allocated.
static STACKS: Mutex<Option<HashMap<Vec<usize>, Site>>> = Mutex::new(None);
/// The deepest stack kept; deeper ones are cut at their root end.
const MAX_FRAMES: usize = 96;

thread_local! {
    /// This thread is in the profiler's own code: what it allocates is not the bench's.
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// What one call stack allocated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Site {
    allocs: u64,
}

/// Whether this thread is in the profiler's own code (or cannot tell: its thread-locals are
/// gone, at its very end).
fn busy() -> bool {
    BUSY.try_with(Cell::get).unwrap_or(true)
}

/// Runs `f` as the profiler's own code on this thread.
fn as_profiler<T>(f: impl FnOnce() -> T) -> T {
    let _ = BUSY.try_with(|b| b.set(true));
    let out = f();
    let _ = BUSY.try_with(|b| b.set(false));
    out
}

/// Takes the stack of the allocation being made into [`STACKS`]. Never inlined:
/// a CPU profile leaves out what is under it by its name (`profile::breakdown`).
#[cold]
#[inline(never)]
fn take_stack() {
    as_profiler(|| {
        let mut ips = [0usize; MAX_FRAMES];
        let mut n = 0;
        // SAFETY: on Linux the unwinder it calls is thread-safe; the crate's lock only
        // serializes dbghelp on Windows, and taking it here could deadlock an allocation made
        // while another thread resolves names.
        unsafe {
            backtrace::trace_unsynchronized(|frame| {
                ips[n] = frame.ip() as usize;
                n += 1;
                n < MAX_FRAMES
            })
        };
        let mut stacks = STACKS.lock().unwrap_or_else(|e| e.into_inner());
        let site = stacks
            .get_or_insert_with(HashMap::new)
            .entry(ips[..n].to_vec())
            .or_default();
        site.allocs += 1;
    })
}

/// An allocation was made: counted, and its stack taken where stacks are. False where it is
/// the profiler's own (then nothing is counted).
#[inline]
fn allocated() -> bool {
    if STACKS_ON.load(Relaxed) {
        if busy() {
            return false;
        }
        take_stack();
    }
    true
}

/// A global allocator that counts around another (the system's: [`Counting::SYSTEM`]).
pub struct Counting<A = System>(pub A);

impl Counting<System> {
    pub const SYSTEM: Counting<System> = Counting(System);
}

#[inline]
fn grew(by: usize) {
    let live = LIVE.fetch_add(by as i64, Relaxed) + by as i64;
    // Most calls stay below the peak: one load, no write.
    if live > PEAK.load(Relaxed) {
        PEAK.fetch_max(live, Relaxed);
    }
}

#[inline]
fn handed_out(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size as u64, Relaxed);
    grew(size);
}

// SAFETY: every call is passed to the inner allocator unchanged; the counting only reads the
// layouts and the returned pointer's nullness.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as it is.
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() && ON.load(Relaxed) && allocated() {
            handed_out(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() && ON.load(Relaxed) && allocated() {
            handed_out(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { self.0.dealloc(ptr, layout) };
        if ON.load(Relaxed) && !(STACKS_ON.load(Relaxed) && busy()) {
            LIVE.fetch_sub(layout.size() as i64, Relaxed);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() && ON.load(Relaxed) && !(STACKS_ON.load(Relaxed) && busy()) {
            REALLOCS.fetch_add(1, Relaxed);
            let old = layout.size();
            if new_size > old {
                BYTES.fetch_add((new_size - old) as u64, Relaxed);
                grew(new_size - old);
            } else {
                LIVE.fetch_sub((old - new_size) as i64, Relaxed);
            }
        }
        p
    }
}

/// Counting for a binary whose global allocator is a driver's own (the sql-middleware turso
/// harness: turso installs mimalloc, and a binary has one global allocator). Its calls into
/// that allocator's C functions are wrapped at link time (`ld --wrap`), and each shim reports
/// here what the call did. Live and peak bytes are then the allocator's usable sizes (what it
/// can tell of a block it frees), bytes handed out the sizes asked for.
pub mod through {
    use super::*;

    /// What counts through: named in the run's `memory` setting.
    static WHAT: Mutex<Option<&'static str>> = Mutex::new(None);

    /// Says what the counts go through (`"mimalloc, turso's global allocator, ..."`).
    pub fn name(what: &'static str) {
        *WHAT.lock().unwrap_or_else(|e| e.into_inner()) = Some(what);
    }

    pub(super) fn named() -> Option<&'static str> {
        *WHAT.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A block of `usable` bytes was handed out for `requested`.
    #[inline]
    pub fn alloc(requested: usize, usable: usize) {
        if ON.load(Relaxed) && allocated() {
            ALLOCS.fetch_add(1, Relaxed);
            BYTES.fetch_add(requested as u64, Relaxed);
            grew(usable);
        }
    }

    /// A block of `usable` bytes was returned.
    #[inline]
    pub fn free(usable: usize) {
        if ON.load(Relaxed) && !(STACKS_ON.load(Relaxed) && busy()) {
            LIVE.fetch_sub(usable as i64, Relaxed);
        }
    }

    /// A block of `old` usable bytes became one of `new`.
    #[inline]
    pub fn realloc(old: usize, new: usize) {
        if ON.load(Relaxed) && !(STACKS_ON.load(Relaxed) && busy()) {
            REALLOCS.fetch_add(1, Relaxed);
            if new > old {
                BYTES.fetch_add((new - old) as u64, Relaxed);
                grew(new - old);
            } else {
                LIVE.fetch_sub((old - new) as i64, Relaxed);
            }
        }
    }
}

/// Turns counting on unless [`OFF_VAR`] says `off`; true when the counting allocator is
/// installed and counts (checked by one allocation of its own).
pub fn start() -> bool {
    if turned_off() {
        ON.store(false, Relaxed);
        return false;
    }
    ON.store(true, Relaxed);
    let before = ALLOCS.load(Relaxed);
    drop(std::hint::black_box(Box::new(0u64)));
    if ALLOCS.load(Relaxed) == before {
        // Another global allocator: nothing counts, and nothing is to be reported.
        ON.store(false, Relaxed);
    }
    ON.load(Relaxed)
}

/// Keeps the call stack of every allocation made during a sample from now on (a profiled
/// runner: where the allocations come from), where allocations are counted.
pub fn record_stacks() {
    STACKS_WANTED.store(counting(), Relaxed);
}

/// Stacks are taken while a sample runs (`true` at its start, `false` at its end), where they
/// are wanted.
pub fn stacks_while_sampling(on: bool) {
    STACKS_ON.store(on && STACKS_WANTED.load(Relaxed), Relaxed);
}

/// Frames that are the counting and the unwinding themselves: a stack keeps what is above the
/// outermost of them (toward its root), so its leaf is what called the allocator.
const PROFILER_FRAMES: &[&str] = &[
    "backtrace::",
    "<backtrace::",
    "bench_core::measure::memory::",
    "<bench_core::measure::memory::",
    // SQLite's memory methods: what called them is SQLite.
    "bench_core::measure::sqlite_malloc::",
    "__rust_alloc",
    "__rust_realloc",
    "__rustc::",
    "__rg_",
];

/// Where frame `i` of a stack (innermost first) was when it was taken: the innermost frame's
/// address is where it was; any other's is a return address, the instruction after its call,
/// so the call is looked up one byte back (a call that is the last instruction of its
/// function returns to the next function's first byte).
fn call_site(i: usize, ip: usize) -> usize {
    if i == 0 { ip } else { ip.wrapping_sub(1) }
}

/// The stacks taken so far as folded lines (`root;...;leaf allocations`), their frames named;
/// the profiler's own frames and the allocator's entry points cut from the leaf end. Taking
/// them stops the taking. Never inlined: a CPU profile leaves out what is under it by name.
#[inline(never)]
pub fn folded_stacks() -> String {
    STACKS_WANTED.store(false, Relaxed);
    STACKS_ON.store(false, Relaxed);
    as_profiler(|| {
        let stacks = STACKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_default();
        let symbols = ExeSymbols::load();
        let mut names: HashMap<usize, String> = HashMap::new();
        let mut folded: std::collections::BTreeMap<String, u64> = Default::default();
        for (ips, site) in stacks {
            // Innermost first.
            let mut frames: Vec<String> = Vec::new();
            for (i, ip) in ips.iter().enumerate() {
                if *ip == 0 {
                    continue;
                }
                let named = names.entry(*ip).or_insert_with(|| {
                    let at = call_site(i, *ip);
                    // The function the address is in, by its full path from the executable's
                    // symbol table; functions inlined into it are left out, as perf's stacks
                    // are read with --no-inline (and a layer needs a path). Outside the
                    // executable (libc), what the debug info or the dynamic symbols say.
                    symbols
                        .as_ref()
                        .and_then(|s| s.name(at))
                        .unwrap_or_else(|| {
                            let mut outer = None;
                            backtrace::resolve(at as *mut std::ffi::c_void, |symbol| {
                                if let Some(name) = symbol.name() {
                                    outer = Some(format!("{name:#}"));
                                }
                            });
                            outer.unwrap_or_else(|| format!("{ip:#x}"))
                        })
                });
                frames.push(named.clone());
            }
            // Cut the profiler's frames and what called into them from the allocator.
            let cut = frames
                .iter()
                .rposition(|f| PROFILER_FRAMES.iter().any(|p| f.starts_with(p)))
                .map_or(0, |i| i + 1);
            let mut stack: Vec<&str> = frames[cut..].iter().map(String::as_str).collect();
            while stack.first().is_some_and(|f| {
                crate::profile::classify(f) == Some(crate::profile::Layer::Allocator)
            }) {
                stack.remove(0);
            }
            stack.reverse();
            if stack.is_empty() {
                continue;
            }
            // Folded lines take `;` as the frame separator and a space before the count.
            let line: Vec<String> = stack.iter().map(|f| f.replace(';', ":")).collect();
            *folded.entry(line.join(";")).or_default() += site.allocs;
        }
        folded
            .into_iter()
            .map(|(stack, n)| format!("{stack} {n}\n"))
            .collect()
    })
}

/// The running executable's functions by address, from its symbol table (`.symtab`), as
/// loaded (its load address added).
struct ExeSymbols {
    bias: u64,
    /// (start, end, demangled name), sorted by start.
    functions: Vec<(u64, u64, String)>,
}

impl ExeSymbols {
    fn load() -> Option<ExeSymbols> {
        use object::{Object, ObjectSymbol, SymbolKind};
        let data = crate::opener::read(
            std::path::Path::new("/proc/self/exe"),
            "",
            crate::opener::Kind::Executable,
        )
        .ok()?;
        let file = object::File::parse(&*data).ok()?;
        let mut functions: Vec<(u64, u64, String)> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
            .filter_map(|s| {
                let name = s.name().ok()?;
                Some((
                    s.address(),
                    s.address() + s.size(),
                    format!("{:#}", rustc_demangle::demangle(name)),
                ))
            })
            .collect();
        functions.sort_by_key(|f| f.0);
        Some(ExeSymbols {
            bias: main_program_bias()?,
            functions,
        })
    }

    /// The function `address` (as loaded) is in.
    fn name(&self, address: usize) -> Option<String> {
        let a = (address as u64).checked_sub(self.bias)?;
        let i = self
            .functions
            .partition_point(|f| f.0 <= a)
            .checked_sub(1)?;
        let (start, end, name) = &self.functions[i];
        (*start <= a && a < *end).then(|| name.clone())
    }
}

/// Where the executable was loaded: the first object `dl_iterate_phdr` reports is it.
fn main_program_bias() -> Option<u64> {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut std::ffi::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `data` is the u64 below.
        unsafe { *(data as *mut u64) = (*info).dlpi_addr };
        1
    }
    let mut bias = u64::MAX;
    // SAFETY: the callback writes one u64 it is given and stops the iteration.
    unsafe { libc::dl_iterate_phdr(Some(first), &mut bias as *mut u64 as *mut std::ffi::c_void) };
    (bias != u64::MAX).then_some(bias)
}

/// What a run says of its memory figures, given what [`start`] returned (SQLite's part is
/// [`super::memory_setting`]'s).
pub fn describe(counting: bool) -> String {
    if counting {
        match through::named() {
            Some(what) => format!(
                "allocations counted in every thread of the runner, through {what} (live and peak bytes in its usable sizes)"
            ),
            None => "allocations counted in every thread of the runner".into(),
        }
    } else if turned_off() {
        "not counted: turned off by BENCHSCOPE_COUNT_ALLOCS".into()
    } else {
        "not counted: this runner's global allocator is its driver's own, not benchscope's counting one".into()
    }
}

/// Whether allocations are being counted.
pub fn counting() -> bool {
    ON.load(Relaxed)
}

/// The counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    allocs: u64,
    reallocs: u64,
    bytes: u64,
    live: i64,
}

impl Reading {
    /// The counters now, and the peak set to what is live now; None while not counting.
    pub fn start() -> Option<Reading> {
        let r = Self::now()?;
        PEAK.store(r.live, Relaxed);
        Some(r)
    }

    /// The counters now; None while not counting.
    pub fn now() -> Option<Reading> {
        counting().then(|| Reading {
            allocs: ALLOCS.load(Relaxed),
            reallocs: REALLOCS.load(Relaxed),
            bytes: BYTES.load(Relaxed),
            live: LIVE.load(Relaxed),
        })
    }

    /// What was handed out between `earlier` (taken with [`Reading::start`]) and this
    /// reading, with the peak reached in between.
    pub fn since(&self, earlier: &Reading) -> SampleMemory {
        SampleMemory {
            allocs: self.allocs.saturating_sub(earlier.allocs),
            reallocs: self.reallocs.saturating_sub(earlier.reallocs),
            bytes: self.bytes.saturating_sub(earlier.bytes),
            peak: (PEAK.load(Relaxed).max(self.live) - earlier.live).max(0) as u64,
            retained: self.live - earlier.live,
        }
    }
}

/// What the runner process allocated during one sample (protocol 1.13, `sample.memory`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleMemory {
    /// Allocations (`alloc` and `alloc_zeroed`), every thread.
    pub allocs: u64,
    /// Reallocations (growing or shrinking a block in place or by moving it).
    pub reallocs: u64,
    /// Bytes handed out: each allocation's size, and what each reallocation grew by.
    pub bytes: u64,
    /// The most bytes live at once during the sample, above what was live at its start.
    pub peak: u64,
    /// Bytes live at the sample's end less those live at its start: memory the sample kept.
    pub retained: i64,
}

/// Memory per operation over every sample of a bench (`summary.stats.memory`, protocol 1.13).
/// Like the cost, the readings cover whole samples, untimed work of a pass included.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// Allocations per operation.
    pub allocs_per_op: f64,
    /// Reallocations per operation.
    pub reallocs_per_op: f64,
    /// Bytes handed out per operation.
    pub bytes_per_op: f64,
    /// The most bytes live at once above a sample's start, over the samples.
    pub peak_bytes: u64,
    /// Bytes the samples kept, all together (what is live at the end of the samples and was
    /// not at their start): a leak or an unbounded cache grows it with the work.
    pub retained_bytes: i64,
    /// The samples whose end had more bytes live than their start.
    pub samples_retaining: usize,
    /// Samples read.
    pub samples: usize,
}

/// Below this, retained memory is not worth a warning whatever its trend (a cache filled
/// once, a runtime's thread started late).
pub const RETAINED_WARN_BYTES: i64 = 1 << 20;

impl MemorySummary {
    /// The summary of samples given as (operations, memory); None without any.
    pub fn of(samples: &[(u64, SampleMemory)]) -> Option<MemorySummary> {
        let ops: u64 = samples.iter().map(|(o, _)| o).sum();
        if ops == 0 {
            return None;
        }
        let per_op = |f: fn(&SampleMemory) -> u64| {
            samples.iter().map(|(_, m)| f(m)).sum::<u64>() as f64 / ops as f64
        };
        Some(MemorySummary {
            allocs_per_op: per_op(|m| m.allocs),
            reallocs_per_op: per_op(|m| m.reallocs),
            bytes_per_op: per_op(|m| m.bytes),
            peak_bytes: samples.iter().map(|(_, m)| m.peak).max().unwrap_or(0),
            retained_bytes: samples.iter().map(|(_, m)| m.retained).sum(),
            samples_retaining: samples.iter().filter(|(_, m)| m.retained > 0).count(),
            samples: samples.len(),
        })
    }

    /// The first figure that cannot be a count per operation (not finite, or below 0), named
    /// with its value: what a run read from a runner, a file or a store is checked against.
    pub fn check(&self) -> Result<(), String> {
        for (what, v) in [
            ("allocations per operation", self.allocs_per_op),
            ("reallocations per operation", self.reallocs_per_op),
            ("bytes per operation", self.bytes_per_op),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{what} is {v} (allowed: a finite number >= 0)"));
            }
        }
        Ok(())
    }

    /// Retained bytes per operation, over `ops` operations.
    pub fn retained_per_op(&self, ops: u64) -> f64 {
        self.retained_bytes as f64 / ops.max(1) as f64
    }

    /// A warning when memory grows with the work: at least [`RETAINED_WARN_BYTES`] kept, and
    /// most samples (three in four) ending with more live than they began with.
    pub fn growth_warning(&self) -> Option<String> {
        (self.retained_bytes >= RETAINED_WARN_BYTES
            && self.samples_retaining * 4 >= self.samples * 3)
            .then(|| {
                format!(
                    "memory grows with the work: {} kept over {} samples, {} of them ending with more live than they began (a leak or an unbounded cache)",
                    crate::units::bytes(self.retained_bytes as f64),
                    self.samples,
                    self.samples_retaining
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of this test binary, to find by its address.
    #[inline(never)]
    fn probe(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(31)
    }

    static NOT_CODE: [u64; 64] = [7; 64];

    #[test]
    fn an_address_is_named_by_the_function_it_falls_in() {
        let s = ExeSymbols {
            bias: 0x1000,
            functions: vec![
                (0x100, 0x180, "a".into()),
                (0x180, 0x200, "b".into()),
                (0x300, 0x310, "c".into()),
            ],
        };
        let name = |a: usize| s.name(a);
        assert_eq!(name(0x1100).as_deref(), Some("a"));
        assert_eq!(name(0x117f).as_deref(), Some("a"));
        assert_eq!(name(0x1180).as_deref(), Some("b"));
        assert_eq!(name(0x11ff).as_deref(), Some("b"));
        // Between functions, past the last, before the first, below the load address: none.
        assert_eq!(name(0x1200), None);
        // A call that is the last instruction of `a` returns to `b`'s first byte: a frame
        // above the innermost is named by its call, the innermost by where it is.
        assert_eq!(name(call_site(1, 0x1180)).as_deref(), Some("a"));
        assert_eq!(name(call_site(0, 0x1180)).as_deref(), Some("b"));
        assert_eq!(name(0x1300).as_deref(), Some("c"));
        assert_eq!(name(0x1310), None);
        assert_eq!(name(0x10ff), None);
        assert_eq!(name(0x0fff), None);
    }

    /// The running executable's own symbol table: its functions, each spanning its size, and
    /// a function found by its address as loaded; data is not a function.
    #[test]
    fn this_executables_functions_are_read_from_its_symbol_table() {
        let s = ExeSymbols::load().expect("the test binary has a symbol table");
        assert!(s.functions.len() > 100, "{}", s.functions.len());
        for (start, end, name) in &s.functions {
            assert!(
                start < end && end - start < 1 << 20,
                "{name}: {start:#x}..{end:#x}"
            );
        }
        let at = probe as fn(u64) -> u64 as usize;
        let named = s.name(at).expect("probe is in the symbol table");
        assert!(named.ends_with("measure::memory::tests::probe"), "{named}");
        assert_eq!(s.name(at + 1).as_deref(), Some(named.as_str()));
        assert_eq!(s.name(std::ptr::addr_of!(NOT_CODE) as usize + 8), None);
        // Read by another reader of the same file (binutils' nm): `probe` starts where nm says,
        // spans the size nm gives, and the difference to where it was loaded is the bias.
        let nm = std::process::Command::new("nm")
            .args(["--defined-only", "-S", "-C"])
            .arg(std::env::current_exe().unwrap())
            .output();
        let Some(nm) = nm.ok().filter(|o| o.status.success()) else {
            return crate::testing::skip(
                "this_executables_functions_are_read_from_its_symbol_table",
                "nm (binutils) is not installed",
            );
        };
        let line = String::from_utf8_lossy(&nm.stdout)
            .lines()
            .find(|l| l.ends_with("measure::memory::tests::probe"))
            .map(String::from)
            .expect("nm lists probe");
        let mut words = line.split_whitespace();
        let mut hex = || u64::from_str_radix(words.next().unwrap(), 16).unwrap();
        let (start, size) = (hex(), hex());
        assert!(
            s.functions
                .iter()
                .any(|(a, b, n)| *a == start && *b == start + size && n.ends_with("probe")),
            "{line}"
        );
        assert_eq!(at as u64 - s.bias, start, "{line}");
    }

    fn sample(allocs: u64, bytes: u64, peak: u64, retained: i64) -> SampleMemory {
        SampleMemory {
            allocs,
            reallocs: allocs / 2,
            bytes,
            peak,
            retained,
        }
    }

    #[test]
    fn a_summary_is_totals_over_operations_with_the_highest_peak_and_the_sum_kept() {
        let m = MemorySummary::of(&[
            (10, sample(20, 640, 300, 0)),
            (30, sample(20, 640, 900, 128)),
        ])
        .unwrap();
        assert_eq!(m.allocs_per_op, 1.0);
        assert_eq!(m.reallocs_per_op, 0.5);
        assert_eq!(m.bytes_per_op, 32.0);
        assert_eq!(m.peak_bytes, 900);
        assert_eq!(m.retained_bytes, 128);
        assert_eq!((m.samples_retaining, m.samples), (1, 2));
        assert_eq!(m.retained_per_op(40), 3.2);
        assert_eq!(MemorySummary::of(&[]), None);
        assert_eq!(MemorySummary::of(&[(0, sample(1, 1, 1, 1))]), None);
    }

    #[test]
    fn a_figure_that_cannot_be_a_count_is_named() {
        let good = MemorySummary::of(&[(4, sample(4, 64, 1, 0))]).unwrap();
        assert_eq!(good.check(), Ok(()));
        for (i, bad) in [f64::NAN, -1.0, f64::INFINITY].into_iter().enumerate() {
            let mut m = good;
            match i {
                0 => m.allocs_per_op = bad,
                1 => m.reallocs_per_op = bad,
                _ => m.bytes_per_op = bad,
            }
            let e = m.check().unwrap_err();
            assert!(e.contains(&format!("is {bad}")), "{e}");
            assert!(e.contains("allowed: a finite number >= 0"), "{e}");
        }
    }

    #[test]
    fn growth_is_a_warning_only_when_large_and_steady() {
        let big = RETAINED_WARN_BYTES / 4;
        let of = |kept: &[i64]| {
            MemorySummary::of(
                &kept
                    .iter()
                    .map(|&k| (1, sample(1, 1, 1, k)))
                    .collect::<Vec<_>>(),
            )
            .unwrap()
        };
        // Four samples each keeping a quarter of the threshold: steady, and enough.
        let w = of(&[big, big, big, big]).growth_warning().unwrap();
        assert!(w.contains("4 of them"), "{w}");
        // Three of four is steady enough; two of four is not.
        assert!(of(&[big * 2, big, big, 0]).growth_warning().is_some());
        assert!(of(&[big * 2, big * 2, 0, 0]).growth_warning().is_none());
        // One byte short of the threshold: no warning.
        assert!(
            of(&[big, big, big, big - 1]).growth_warning().is_none(),
            "below the threshold"
        );
    }
}
