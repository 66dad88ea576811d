//! Memory per operation, counted by the allocator a runner installs: exact where the count is
//! known (a bench that allocates a known number of times per operation), retained memory shown
//! and warned of for a bench that leaks on purpose, nothing reported where counting is off.

use bench_core::measure::memory::{self, Counting};
use bench_core::measure::{Bench, Iteration, run};
use bench_core::protocol::{Budget, Event};

#[global_allocator]
static ALLOC: Counting = Counting::SYSTEM;

const OPS: u64 = 50;

fn budget() -> Budget {
    Budget {
        warmup_s: 0.0,
        time_s: 0.05,
        max_samples: 20,
        min_samples: 8,
        paired: false,
        group: None,
        processes: None,
        times: Default::default(),
    }
}

/// A bench of `OPS` operations a pass, each making `allocs` allocations of `size` bytes (freed
/// at once) and leaking `leak` bytes.
fn allocating(allocs: usize, size: usize, leak: usize) -> Bench<'static> {
    Bench::new(
        Box::new(move |_| {
            let mut work = 0u64;
            for _ in 0..OPS {
                for _ in 0..allocs {
                    let b = std::hint::black_box(vec![1u8; size]);
                    work += b.len() as u64;
                }
                if leak > 0 {
                    std::hint::black_box(vec![0u8; leak].leak());
                }
            }
            Ok(Iteration::new(1_000, work))
        }),
        (OPS * (allocs * size) as u64) as _,
        "bytes",
    )
}

/// A bench of `OPS` operations a pass, each `op` adding to the pass's work.
fn each_op(op: fn(&mut u64), per_pass: u64, what: &'static str) -> Bench<'static> {
    Bench::new(
        Box::new(move |_| {
            let mut work = 0;
            for _ in 0..OPS {
                op(&mut work);
            }
            Ok(Iteration::new(1_000, work))
        }),
        per_pass,
        what,
    )
}

/// The operations of every sample in `events`.
fn sampled_ops(events: &[Event]) -> u64 {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Sample { ops, .. } => Some(*ops),
            _ => None,
        })
        .sum()
}

fn measure(bench: &mut Bench<'_>) -> (bench_core::measure::stats::Summary, Vec<Event>) {
    let mut events = Vec::new();
    let s = run(&budget(), "b", OPS, bench, &mut |e| events.push(e)).unwrap();
    (s, events)
}

fn a_bench_that_allocates_a_known_number_of_times_reads_that_number() {
    assert!(memory::start(), "the counting allocator is installed here");
    for (allocs, size) in [(0, 0), (1, 64), (3, 100), (7, 4096)] {
        let (s, events) = measure(&mut allocating(allocs, size, 0));
        let m = s.memory.expect("memory counted");
        assert_eq!(m.allocs_per_op, allocs as f64, "{allocs} x {size}: {m:?}");
        assert_eq!(m.bytes_per_op, (allocs * size) as f64, "{allocs} x {size}");
        assert_eq!(m.reallocs_per_op, 0.0);
        assert_eq!(m.retained_bytes, 0, "nothing kept: {m:?}");
        // One block at a time is live: the peak is one block (nothing else grows meanwhile).
        assert_eq!(m.peak_bytes, if allocs > 0 { size as u64 } else { 0 });
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        // Each sample's own reading is in its event, and they add up to the summary.
        let (ops, allocated): (u64, u64) = events
            .iter()
            .filter_map(|e| match e {
                Event::Sample {
                    ops,
                    memory: Some(m),
                    ..
                } => Some((*ops, m.allocs)),
                _ => None,
            })
            .fold((0, 0), |(o, a), (ops, m)| (o + ops, a + m));
        assert!(ops > 0);
        assert_eq!(allocated, ops * allocs as u64);
    }
}

fn a_bench_that_leaks_shows_what_it_kept_and_is_warned_of() {
    assert!(memory::start());
    // 4 KiB kept per operation: 200 KiB a pass, past the warning's 1 MiB within a few samples.
    let leak = 4096;
    let (s, events) = measure(&mut allocating(1, 16, leak));
    let m = s.memory.unwrap();
    let ops = sampled_ops(&events);
    assert_eq!(m.retained_bytes, (ops * leak as u64) as i64, "{m:?}");
    assert_eq!(m.retained_per_op(ops), leak as f64);
    assert_eq!(m.allocs_per_op, 2.0);
    assert_eq!(m.samples_retaining, m.samples);
    // The peak of a sample is what it kept by its end: a pass's worth at least.
    assert!(m.peak_bytes >= OPS * leak as u64, "{m:?}");
    let w = s
        .warnings
        .iter()
        .find(|w| w.starts_with("memory grows with the work"))
        .unwrap_or_else(|| panic!("no warning: {:?}", s.warnings));
    assert!(w.contains(&format!("over {} samples", m.samples)), "{w}");
}

fn growing_a_block_counts_a_reallocation_and_what_it_grew_by() {
    assert!(memory::start());
    let mut bench = Bench::new(
        Box::new(|_| {
            for _ in 0..OPS {
                let mut v: Vec<u8> = Vec::with_capacity(100);
                v.reserve_exact(300);
                std::hint::black_box(&v);
            }
            Ok(Iteration::new(1_000, 0))
        }),
        0,
        "nothing",
    );
    let m = measure(&mut bench).0.memory.unwrap();
    // 100 bytes allocated, grown to 300 by a reallocation: 300 bytes handed out in all.
    assert_eq!((m.allocs_per_op, m.reallocs_per_op), (1.0, 1.0), "{m:?}");
    assert_eq!(m.bytes_per_op, 300.0);
    assert_eq!(m.retained_bytes, 0);
}

fn nothing_is_reported_when_counting_is_turned_off() {
    // SAFETY (set_var): this file's one test runs its cases in turn; nothing else reads the
    // environment meanwhile.
    // `off` (any case) and `0` turn it off; anything else leaves it on.
    for (value, on) in [("1", true), ("on", true), ("0", false), ("OFF", false)] {
        unsafe { std::env::set_var(memory::OFF_VAR, value) };
        assert_eq!(memory::start(), on, "{}={value}", memory::OFF_VAR);
    }
    unsafe { std::env::set_var(memory::OFF_VAR, "off") };
    let counting = memory::start();
    assert!(!counting);
    assert!(memory::describe(counting).contains("turned off"));
    unsafe { std::env::remove_var(memory::OFF_VAR) };
    let (s, events) = measure(&mut allocating(2, 32, 0));
    assert_eq!(s.memory, None);
    assert!(events.iter().all(|e| !matches!(
        e,
        Event::Sample {
            memory: Some(_),
            ..
        }
    )));
    assert!(memory::start(), "back on for the other tests");
}

/// Three allocations of 48 bytes, made here (not inlined: its name is in the stacks).
#[inline(never)]
fn three_boxes(work: &mut u64) {
    for _ in 0..3 {
        let b = std::hint::black_box(Box::new([7u8; 48]));
        *work += u64::from(b[0]);
    }
}

fn stacks_name_the_code_that_allocated_and_count_every_allocation() {
    assert!(memory::start());
    memory::record_stacks();
    let mut bench = each_op(three_boxes, OPS * 3 * 7, "bytes");
    let (s, events) = measure(&mut bench);
    let ops = sampled_ops(&events);
    // Taking stacks allocates (the table of stacks grows): none of it is the bench's; the
    // bench's own blocks are returned as ever.
    assert_eq!(s.memory.unwrap().allocs_per_op, 3.0);
    assert_eq!(s.memory.unwrap().retained_bytes, 0);
    let folded = memory::folded_stacks();
    let count = |l: &str| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap();
    let mine: u64 = folded
        .lines()
        .filter(|l| l.contains("memory::three_boxes"))
        .map(count)
        .sum();
    assert_eq!(mine, 3 * ops, "{folded}");
    assert_eq!(folded.lines().map(count).sum::<u64>(), 3 * ops, "{folded}");
    for line in folded.lines() {
        // Root first; the profiler's and the allocator's own frames cut from the leaf end.
        let leaf = line.rsplit_once(' ').unwrap().0.rsplit(';').next().unwrap();
        assert!(
            !leaf.contains("take_stack")
                && !leaf.contains("__rust")
                && !leaf.starts_with("alloc::alloc::"),
            "{line}"
        );
        // None of the counting allocator's frames is left anywhere in the stack.
        assert!(!line.contains("bench_core::measure::memory::"), "{line}");
        assert!(
            line.contains("bench_core::measure::Sampler::sample"),
            "{line}"
        );
    }
    // Taken once: the stacks stop, and a second run keeps none.
    measure(&mut allocating(1, 8, 0));
    assert_eq!(memory::folded_stacks(), "");
}

/// A binary whose global allocator is another's reports that allocator's calls: counted as
/// the counting allocator counts, live and peak in the sizes reported.
fn another_allocators_calls_count_the_same_way() {
    use memory::{Reading, through};
    assert!(memory::start());
    let before = Reading::start().unwrap();
    through::alloc(100, 112);
    through::realloc(112, 240);
    through::realloc(240, 64);
    through::alloc(8, 16);
    through::free(64);
    through::free(16);
    let m = Reading::now().unwrap().since(&before);
    assert_eq!((m.allocs, m.reallocs), (2, 2), "{m:?}");
    // Asked for 100 and 8, and one block grew by 128.
    assert_eq!(m.bytes, 236, "{m:?}");
    // At most 240 bytes live at once (the grown block), nothing kept.
    assert_eq!((m.peak, m.retained), (240, 0), "{m:?}");
    // Counting off: the calls made meanwhile are not counted. What is: the 64-byte block, the
    // variable's value read while counting was still on (`off`, 3 bytes) and the allocation
    // `start` makes to see that it counts again (a u64 in a Box).
    let before = Reading::start().unwrap();
    // A block handed out while counting, returned while not: still live, as far as they know.
    let kept = std::hint::black_box(Box::new([0u8; 64]));
    // SAFETY (set_var): this file's one test runs its cases in turn.
    unsafe { std::env::set_var(memory::OFF_VAR, "off") };
    assert!(!memory::start());
    drop(kept);
    unsafe { std::env::remove_var(memory::OFF_VAR) };
    through::alloc(100, 112);
    through::realloc(112, 240);
    through::free(240);
    assert!(memory::start());
    let after = Reading::now().unwrap().since(&before);
    assert_eq!(
        (after.allocs, after.reallocs, after.bytes),
        (3, 0, 75),
        "{after:?}"
    );
    // The two freed at once; the 64 bytes returned while off are not counted returned, and
    // the block mimalloc's calls freed while off was never counted live.
    assert_eq!(after.retained, 64, "{after:?}");
    // While stacks are taken (a profiled runner's sample), returns count as ever.
    memory::record_stacks();
    memory::stacks_while_sampling(true);
    let before = Reading::start().unwrap();
    through::alloc(100, 112);
    through::realloc(112, 200);
    through::free(200);
    let m = Reading::now().unwrap().since(&before);
    memory::stacks_while_sampling(false);
    assert_eq!(
        (m.allocs, m.reallocs, m.bytes, m.retained, m.peak),
        (1, 1, 188, 0, 200),
        "{m:?}"
    );
    assert!(memory::folded_stacks().contains("another_allocators_calls_count_the_same_way"));
    // The run says what it counted through (and then, after "; ", what of SQLite's).
    let how = || {
        memory::describe(true)
            .split("; ")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(how(), "allocations counted in every thread of the runner");
    through::name("a test allocator");
    assert_eq!(
        how(),
        "allocations counted in every thread of the runner, through a test allocator (live and peak bytes in its usable sizes)"
    );
    assert!(memory::describe(false).contains("not counted: this runner's global allocator"));
}

/// A call stack deeper than the deepest kept: cut at its root end, taken all the same.
fn a_stack_deeper_than_the_deepest_kept_is_cut_not_overrun() {
    #[inline(never)]
    fn deep(depth: usize, work: &mut u64) {
        if depth == 0 {
            let b = std::hint::black_box(Box::new(5u64));
            *work += *b;
        } else {
            deep(std::hint::black_box(depth - 1), work);
            std::hint::black_box(&work);
        }
    }
    assert!(memory::start());
    memory::record_stacks();
    let mut bench = each_op(|work| deep(200, work), OPS * 5, "fives");
    let (s, _) = measure(&mut bench);
    assert_eq!(s.memory.unwrap().allocs_per_op, 1.0);
    let folded = memory::folded_stacks();
    let lines: Vec<&str> = folded.lines().collect();
    assert!(!lines.is_empty());
    for l in lines {
        // The innermost frames kept: the recursion, no further than the deepest kept.
        let frames = l.rsplit_once(' ').unwrap().0.split(';').count();
        assert!(frames < 100, "{frames} frames");
        assert!(l.contains("deep"), "{l}");
    }
}

/// The counters are the process's, and a test harness's own thread allocates when it
/// reports: this file has no harness (`harness = false`), and its main runs the cases in turn,
/// alone in the process.
/// SQLite (a C library) allocates through the counting allocator once given its memory methods:
/// a 300 kB blob it makes is counted; after SQLite is initialized it refuses them, and the run's
/// memory setting says so.
#[cfg(feature = "sqlite")]
fn sqlite_s_own_allocations_count_with_the_rest() {
    use bench_core::measure::sqlite_malloc;
    assert!(memory::start());
    assert!(
        bench_core::measure::memory_setting(true).contains("SQLite's own allocations included"),
        "{}",
        bench_core::measure::memory_setting(true)
    );
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    for size in [300_000i64, 1_000_000] {
        let before = memory::Reading::start().unwrap();
        let n: i64 = conn
            .query_row("SELECT length(randomblob(?1))", [size], |r| r.get(0))
            .unwrap();
        let m = memory::Reading::now().unwrap().since(&before);
        assert_eq!(n, size);
        assert!(
            m.allocs >= 1 && m.bytes >= size as u64 && m.peak >= size as u64,
            "{size}: {m:?}"
        );
        // Freed when the statement is done with it: nothing of the blob is kept.
        assert!(m.retained < size, "{size}: {m:?}");
    }
    // A profile charges them to SQLite: the stacks end in SQLite's own functions, the memory
    // methods between it and the allocator cut like the allocator's frames.
    memory::record_stacks();
    memory::stacks_while_sampling(true);
    let _: i64 = conn
        .query_row("SELECT length(randomblob(200000))", [], |r| r.get(0))
        .unwrap();
    memory::stacks_while_sampling(false);
    let folded = memory::folded_stacks();
    let blob = folded
        .lines()
        .find(|l| l.contains("sqlite_s_own_allocations_count_with_the_rest"))
        .unwrap_or_else(|| panic!("no stack of the query: {folded}"));
    let frames: Vec<&str> = blob.rsplit_once(' ').unwrap().0.split(';').collect();
    assert_eq!(
        bench_core::profile::layer_of(&frames),
        bench_core::profile::Layer::Sqlite,
        "{blob}"
    );
    assert!(!folded.contains("sqlite_malloc"), "{folded}");
    // Too late once SQLite has started (SQLITE_MISUSE): said, not hidden.
    assert!(!sqlite_malloc::count(rusqlite::ffi::sqlite3_config));
    let said = bench_core::measure::memory_setting(true);
    assert!(
        said.contains("not included") && said.contains("returned 21"),
        "{said}"
    );
}

fn main() {
    // First, before anything opens SQLite: its memory methods are the counting allocator's.
    #[cfg(feature = "sqlite")]
    assert!(bench_core::measure::sqlite_malloc::count(
        rusqlite::ffi::sqlite3_config
    ));
    #[cfg(feature = "sqlite")]
    let sqlite: [(&str, fn()); 1] = [(
        "SQLite's own allocations count with the rest",
        sqlite_s_own_allocations_count_with_the_rest,
    )];
    #[cfg(not(feature = "sqlite"))]
    let sqlite: [(&str, fn()); 0] = [];
    let cases: [(&str, fn()); 7] = [
        (
            "a bench that allocates a known number of times reads that number",
            a_bench_that_allocates_a_known_number_of_times_reads_that_number,
        ),
        (
            "a bench that leaks shows what it kept and is warned of",
            a_bench_that_leaks_shows_what_it_kept_and_is_warned_of,
        ),
        (
            "growing a block counts a reallocation and what it grew by",
            growing_a_block_counts_a_reallocation_and_what_it_grew_by,
        ),
        (
            "nothing is reported when counting is turned off",
            nothing_is_reported_when_counting_is_turned_off,
        ),
        (
            "stacks name the code that allocated and count every allocation",
            stacks_name_the_code_that_allocated_and_count_every_allocation,
        ),
        (
            "another allocator's calls count the same way",
            another_allocators_calls_count_the_same_way,
        ),
        (
            "a stack deeper than the deepest kept is cut, not overrun",
            a_stack_deeper_than_the_deepest_kept_is_cut_not_overrun,
        ),
    ];
    for (name, case) in cases.into_iter().chain(sqlite) {
        case();
        println!("memory: {name} ... ok");
    }
}
