//! Where a profiled bench spends its CPU, by layer: the classification of stack frames (the
//! one place its rules live) and the breakdown of a sampled profile in folded form
//! (`frame;frame;leaf weight`, root first, kernel frames suffixed `_[k]`), as `inferno`'s
//! collapsers write it from perf's samples (the weight of a cpu-clock sample is its period,
//! the ns of CPU time it stands for).

use serde::{Deserialize, Serialize};

/// A layer of the path from a caller to the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The operating system's kernel (system calls, locks, page cache, scheduling).
    Kernel,
    /// SQLite's C library.
    Sqlite,
    /// The driver or engine a bench goes through: rusqlite, sqlx, turso.
    Driver,
    /// The crate under test over the driver, as it ships: tokio-rusqlite, async-sqlite, r2d2
    /// and r2d2_sqlite, diesel, sql-middleware (and bb8, its pool).
    Crate,
    /// The async runtime and thread hand-offs: tokio, parking, futexes, channels.
    Runtime,
    /// benchscope's own code: the middleware path, its strategies, the bench loops.
    Middleware,
    /// The memory allocator.
    Allocator,
    /// Everything else (libc, the standard library, unsymbolized frames).
    Other,
}

impl Layer {
    pub const ALL: [Layer; 8] = [
        Layer::Kernel,
        Layer::Sqlite,
        Layer::Driver,
        Layer::Crate,
        Layer::Runtime,
        Layer::Middleware,
        Layer::Allocator,
        Layer::Other,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Layer::Kernel => "kernel",
            Layer::Sqlite => "SQLite (C)",
            Layer::Driver => "driver",
            Layer::Crate => "crate",
            Layer::Runtime => "runtime",
            Layer::Middleware => "middleware",
            Layer::Allocator => "allocator",
            Layer::Other => "other",
        }
    }
}

/// The layer one frame belongs to, if it marks one (`None`: libc (its locks and system call
/// wrappers too), std, unknown frames, which take the layer of the nearest caller that has one).
pub fn classify(frame: &str) -> Option<Layer> {
    let f = frame;
    // The vDSO (the clock read) runs in user space though perf lists it with the kernel.
    if f.starts_with("__vdso_") {
        return None;
    }
    if f.ends_with("_[k]") {
        return Some(Layer::Kernel);
    }
    // The allocator: glibc's entry points by exact name, its internals and Rust's by prefix.
    const ALLOCATOR: &[&str] = &["malloc", "free", "realloc", "calloc", "cfree"];
    const ALLOCATOR_PREFIX: &[&str] = &[
        "_int_malloc",
        "_int_free",
        "_int_realloc",
        "malloc_consolidate",
        "tcache_",
        "__libc_malloc",
        "__libc_free",
        "__libc_realloc",
        "__rust_alloc",
        "__rust_dealloc",
        "__rust_realloc",
        "__rdl_",
        "alloc::alloc::",
        "alloc::raw_vec::",
    ];
    if ALLOCATOR.contains(&f) || ALLOCATOR_PREFIX.iter().any(|p| f.starts_with(p)) {
        return Some(Layer::Allocator);
    }
    // The crates under test, before the runtime: their channels and pools are theirs.
    const CRATES: &[&str] = &[
        "tokio_rusqlite::",
        "<tokio_rusqlite::",
        "async_sqlite::",
        "<async_sqlite::",
        "r2d2::",
        "<r2d2::",
        "r2d2_sqlite::",
        "<r2d2_sqlite::",
        "diesel::",
        "<diesel::",
        "sql_middleware::",
        "<sql_middleware::",
        "bb8::",
        "<bb8::",
    ];
    if CRATES.iter().any(|p| f.starts_with(p)) {
        return Some(Layer::Crate);
    }
    const RUNTIME: &[&str] = &[
        "tokio::",
        "<tokio::",
        "parking_lot",
        "<parking_lot",
        "std::thread::park",
        "std::sys::sync::",
        "std::sync::mpmc",
        "std::sync::mpsc",
        "crossbeam",
        "<crossbeam",
        "futures_",
        "<futures_",
        "deadpool::",
        "<deadpool::",
        "deadpool_sync::",
        "flume::",
        "<flume::",
        "event_listener",
        "<event_listener",
    ];
    if RUNTIME.iter().any(|p| f.starts_with(p)) {
        return Some(Layer::Runtime);
    }
    const DRIVER: &[&str] = &[
        "rusqlite::",
        "<rusqlite::",
        "sqlx_",
        "<sqlx_",
        "sqlx::",
        "<sqlx::",
        "turso",
        "<turso",
        "deadpool_sqlite::",
        "<deadpool_sqlite::",
        "libsqlite3_sys",
    ];
    if DRIVER.iter().any(|p| f.starts_with(p)) {
        return Some(Layer::Driver);
    }
    if f.starts_with("bench_core::")
        || f.starts_with("<bench_core::")
        || f.starts_with("harness_sqlx::")
        || f.starts_with("<harness_sqlx::")
        || f.starts_with("harness_async_sqlite::")
        || f.starts_with("<harness_async_sqlite::")
    {
        return Some(Layer::Middleware);
    }
    // SQLite's C functions: its API (sqlite3_*), its internals (sqlite3Xxx) and the static
    // functions of its amalgamation that appear in profiles under their own names.
    const SQLITE: &[&str] = &[
        "sqlite3",
        "unix",
        "pager",
        "btree",
        "vdbe",
        "walIndex",
        "walTry",
        "walRead",
        "walFind",
        "readDbPage",
        "getPageNormal",
        "getPageMMap",
        "moveTo",
        "getAndInitPage",
        "pcache",
        "yy_",
        "selectExpander",
        "openDatabase",
        "posixUnlock",
        "robust_",
        "osFcntl",
        "osFstat",
        "osStat",
        "fileHasMoved",
        "hasHotJournal",
        "pagerSharedLock",
        "pagerUnlock",
        "pager_",
        "btreeParseCell",
        "btreeCellSize",
        "cellSize",
        "decodeFlags",
        "columnMem",
        "columnMallocFailure",
        "bindText",
        "vdbeUnbind",
        "serialGet",
        "accessPayload",
        "copyPayload",
        "fetchPayload",
        "lockBtree",
        "newDatabase",
        "setSharedCacheTableLock",
        "querySharedCacheTableLock",
        "invokeProfileCallback",
        "resetAccumulator",
        "allocateCursor",
        "checkSchemaCookie",
    ];
    if SQLITE.iter().any(|p| f.starts_with(p)) {
        return Some(Layer::Sqlite);
    }
    None
}

/// The layer a sample is charged to: kernel when its leaf runs in the kernel, else the layer
/// of the innermost frame that has one (a `memcpy` called by SQLite is SQLite's), else other.
pub fn layer_of(stack: &[&str]) -> Layer {
    stack
        .iter()
        .rev()
        .find_map(|f| classify(f))
        .unwrap_or(Layer::Other)
}

/// Frames that mark work outside the bench (the dataset's build or check before the first
/// sample; a profiled runner taking and naming its allocations' stacks): samples under them
/// are left out of the breakdown.
const SET_UP: &[&str] = &[
    "bench_core::dataset::",
    "harness_sqlx::dataset::",
    "bench_core::measure::memory::take_stack",
    "bench_core::measure::memory::folded_stacks",
];

/// Where one profiled bench spent its CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// On-CPU time sampled, in ns (set-up left out).
    pub cpu_ns: u64,
    /// Sampled ns per layer, in [`Layer::ALL`] order, layers with none left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<(Layer, u64)>,
    /// The frames with the most self time (the leaf of the stack), most first, in ns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<(String, u64)>,
    /// The flamegraph file written for the bench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flamegraph: Option<String>,
    /// Why there is no profile (perf missing, not permitted, the bench failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where its allocations came from, by the same layers (since 1.13), where its runner
    /// counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocations: Option<AllocationProfile>,
}

/// Where a profiled bench's allocations came from: every allocation its samples made, charged
/// to the layer of the innermost frame that has one above the allocator (a `String` that
/// rusqlite makes is the driver's), the call sites that made the most, and their flamegraph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocationProfile {
    /// Allocations taken (set-up left out).
    pub allocs: u64,
    /// Allocations per layer, in [`Layer::ALL`] order, layers with none left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<(Layer, u64)>,
    /// The call sites (the frame that called the allocator) that made the most, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<(String, u64)>,
    /// The allocation flamegraph written for the bench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flamegraph: Option<String>,
    /// Why there is no flamegraph, where drawing or writing it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl AllocationProfile {
    /// The breakdown of folded allocation stacks (`root;...;caller allocations`).
    pub fn of(folded: &str, top: usize) -> AllocationProfile {
        let p = breakdown(folded, top);
        AllocationProfile {
            allocs: p.cpu_ns,
            layers: p.layers,
            top: p.top,
            flamegraph: None,
            error: None,
        }
    }

    /// A layer's share of the allocations (0..1).
    pub fn share(&self, layer: Layer) -> f64 {
        share_of(&self.layers, layer, self.allocs)
    }
}

impl Profile {
    /// A layer's share of the sampled CPU time (0..1).
    pub fn share(&self, layer: Layer) -> f64 {
        share_of(&self.layers, layer, self.cpu_ns)
    }

    /// A frame's share of the sampled CPU time (0..1).
    pub fn frame_share(&self, ns: u64) -> f64 {
        if self.cpu_ns == 0 {
            0.0
        } else {
            ns as f64 / self.cpu_ns as f64
        }
    }

    /// The failed profile of a bench, with the reason.
    pub fn failed(error: impl Into<String>) -> Profile {
        Profile {
            error: Some(error.into()),
            ..Default::default()
        }
    }
}

/// `layer`'s part of `total` (0..1; 0 where the total is).
fn share_of(layers: &[(Layer, u64)], layer: Layer, total: u64) -> f64 {
    let n = layers
        .iter()
        .find(|(l, _)| *l == layer)
        .map_or(0, |(_, n)| *n);
    if total == 0 {
        0.0
    } else {
        n as f64 / total as f64
    }
}

/// The breakdown of folded stacks: time per layer and the `top` frames by self time.
pub fn breakdown(folded: &str, top: usize) -> Profile {
    let mut layers = std::collections::BTreeMap::<Layer, u64>::new();
    let mut leaves = std::collections::HashMap::<&str, u64>::new();
    let mut cpu_ns = 0u64;
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.trim().parse::<u64>() else {
            continue;
        };
        let frames: Vec<&str> = stack.split(';').collect();
        if frames
            .iter()
            .any(|f| SET_UP.iter().any(|s| f.starts_with(s)))
        {
            continue;
        }
        cpu_ns += count;
        *layers.entry(layer_of(&frames)).or_default() += count;
        if let Some(leaf) = frames.last() {
            *leaves.entry(leaf).or_default() += count;
        }
    }
    let mut top_frames: Vec<(String, u64)> = leaves
        .into_iter()
        .map(|(f, n)| (f.to_string(), n))
        .collect();
    top_frames.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top_frames.truncate(top);
    Profile {
        cpu_ns,
        layers: Layer::ALL
            .iter()
            .filter_map(|l| layers.get(l).map(|n| (*l, *n)))
            .collect(),
        top: top_frames,
        flamegraph: None,
        error: None,
        allocations: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profiled runner's own work (taking and naming its allocations' stacks) is not the
    /// bench's: left out of the CPU breakdown as set-up is.
    #[test]
    fn the_allocation_profilers_own_time_is_left_out() {
        let p = breakdown(
            "main;rusqlite::Statement::step;sqlite3_step 60\n\
             main;alloc::alloc::alloc;bench_core::measure::memory::take_stack;_Unwind_Backtrace 30\n\
             main;bench_core::measure::memory::folded_stacks;miniz_oxide::inflate 10\n",
            8,
        );
        assert_eq!(p.cpu_ns, 60);
        assert_eq!(p.share(Layer::Sqlite), 1.0);
    }

    #[test]
    fn frames_fall_into_layers() {
        use Layer::*;
        let cases = [
            ("fcntl_setlk_[k]", Some(Kernel)),
            ("posix_lock_inode_[k]", Some(Kernel)),
            ("sqlite3VdbeExec", Some(Sqlite)),
            ("sqlite3_step", Some(Sqlite)),
            ("unixLock", Some(Sqlite)),
            ("pagerSharedLock", Some(Sqlite)),
            ("readDbPage", Some(Sqlite)),
            ("rusqlite::statement::Statement::query_row", Some(Driver)),
            ("tokio_rusqlite::Connection::call::{{closure}}", Some(Crate)),
            (
                "async_sqlite::client::Client::conn::{{closure}}",
                Some(Crate),
            ),
            ("<r2d2::Pool<M>>::get", Some(Crate)),
            (
                "diesel::sqlite::connection::SqliteConnection::load",
                Some(Crate),
            ),
            (
                "sql_middleware::sqlite::config::SqliteWorker::start::{{closure}}",
                Some(Crate),
            ),
            ("bb8::inner::PoolInner<M>::get", Some(Crate)),
            (
                "<rusqlite::row::Rows as fallible_streaming_iterator::FallibleStreamingIterator>::advance",
                Some(Driver),
            ),
            (
                "sqlx_sqlite::connection::worker::ConnectionWorker::establish",
                Some(Driver),
            ),
            ("turso_core::vdbe::execute::op_column", Some(Driver)),
            (
                "tokio::runtime::scheduler::multi_thread::worker::Context::run",
                Some(Runtime),
            ),
            ("std::thread::park", Some(Runtime)),
            (
                "<flume::IntoIter<T> as core::iter::traits::iterator::Iterator>::next",
                Some(Runtime),
            ),
            ("parking_lot_core::parking_lot::park", Some(Runtime)),
            // libc's primitives take their caller's layer: SQLite's mutex is SQLite's.
            ("pthread_mutex_lock@@GLIBC_2.2.5", None),
            ("syscall", None),
            (
                "bench_core::backends::middleware::workers::spin_worker",
                Some(Middleware),
            ),
            ("malloc", Some(Allocator)),
            ("_int_free", Some(Allocator)),
            ("__rust_dealloc", Some(Allocator)),
            ("__memcpy_avx_unaligned_erms", None),
            ("[unknown]", None),
            ("clock_gettime", None),
            ("__vdso_clock_gettime_[k]", None),
        ];
        for (frame, want) in cases {
            assert_eq!(classify(frame), want, "{frame}");
        }
    }

    #[test]
    fn a_sample_takes_its_innermost_layer() {
        assert_eq!(
            layer_of(&[
                "main",
                "rusqlite::Statement::step",
                "sqlite3_step",
                "__memcpy_avx"
            ]),
            Layer::Sqlite
        );
        assert_eq!(
            layer_of(&["main", "sqlite3_step", "unixLock", "fcntl", "do_fcntl_[k]"]),
            Layer::Kernel
        );
        assert_eq!(layer_of(&["[unknown]", "__memcpy_avx"]), Layer::Other);
    }

    #[test]
    fn breakdown_counts_layers_and_leaves_and_leaves_out_set_up() {
        let folded = "\
benchscope;main;sqlite3_step;unixLock;fcntl;do_fcntl_[k] 40
benchscope;main;sqlite3_step;sqlite3VdbeExec 30
benchscope;main;rusqlite::Rows::next 10
benchscope;main;bench_core::dataset::ensure;sqlite3_step 500
benchscope;main;malloc 20
";
        let p = breakdown(folded, 2);
        assert_eq!(p.cpu_ns, 100);
        assert_eq!(
            p.layers,
            [
                (Layer::Kernel, 40),
                (Layer::Sqlite, 30),
                (Layer::Driver, 10),
                (Layer::Allocator, 20)
            ]
        );
        assert_eq!(p.share(Layer::Kernel), 0.4);
        assert_eq!(
            p.top,
            [
                ("do_fcntl_[k]".to_string(), 40),
                ("sqlite3VdbeExec".to_string(), 30)
            ]
        );
    }
}
