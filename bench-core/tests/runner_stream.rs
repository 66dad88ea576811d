//! bench-runner run for real on a tiny dataset; every line it writes is parsed and checked.

use std::process::Command;

use bench_core::catalog::{Harness, ROWS, Shipped, Subject};
use bench_core::dataset::{lookup_ids, lookup_work, row};
use bench_core::measure::trace::Phase;
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::settings::{SqliteSettings, differences};
use bench_core::testing::{check_bench, run_to_end};
use bench_core::workloads::{bulk_insert, multithread, single_row_lookup};

/// A tiny dataset on the stream tests' budget (2 or 3 samples).
fn tiny() -> Vec<&'static str> {
    let dataset = ["--rows", "64", "--lookups", "16", "--concurrency", "2"];
    [&dataset[..], bench_core::testing::STREAM_BUDGET].concat()
}

/// The rusqlite bench, one sample: enough to see what happens to the dataset.
const ONE_SAMPLE: &[&str] = &[
    "single_row_lookup",
    "--bench",
    "rusqlite",
    "--rows",
    "64",
    "--time",
    "0",
    "--warmup",
    "0",
    "--min-samples",
    "1",
    "--samples",
    "1",
];

fn run(args: &[&str], cache: &std::path::Path) -> (Option<i32>, Vec<Event>, String) {
    bench_core::testing::run_runner(env!("CARGO_BIN_EXE_bench-runner"), args, cache)
}

#[test]
fn every_bench_streams_a_valid_sequence() {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec!["single_row_lookup", "--trace"];
    args.extend(tiny());
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "stderr: {stderr}");

    let Event::Start(start) = &events[0] else {
        panic!("first event is not start: {:?}", events[0])
    };
    assert_eq!(start.target, "single_row_lookup");
    assert_eq!(start.knobs.count(&ROWS), 64);
    assert_eq!(
        start.env.profile,
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    assert!(
        start.env.sqlite.raw().starts_with('3'),
        "{:?}",
        start.env.sqlite
    );
    assert!(start.env.timer_ns > 0.0);
    assert!(start.trace);
    let all: Vec<&str> = bench_core::testing::benches_of(single_row_lookup::spec(), Harness::Core);
    assert_eq!(
        start.benches, all,
        "every bench of this harness, none of sqlx's"
    );
    assert_eq!(start.harness, "core");
    assert!(matches!(
        events[1],
        Event::Dataset {
            status: DatasetStatus::Building,
            rows: 64,
            ..
        }
    ));
    assert!(matches!(
        events[2],
        Event::Dataset {
            status: DatasetStatus::Built,
            rows: 64,
            build_ms: Some(_),
            ..
        }
    ));
    assert_eq!(events.last(), Some(&Event::Done));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Error { .. })),
        "{events:?}"
    );

    let ids = lookup_ids(64, single_row_lookup::spec().seed, 16);
    let asked = SqliteSettings::default().expected();
    for bench in all {
        let spec = single_row_lookup::spec().spec(bench).unwrap();
        let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.ops, 16, "{bench}");
        assert!((2..=3).contains(&c.passes.len()), "{bench}: {:?}", c.passes);
        // The work each pass must do, computed here from the dataset, not taken from the
        // runner: a bench that skips its work, or reads other rows, fails.
        let expected = match (spec.phase, bench) {
            (None, _) => lookup_work(&ids),
            (Some(Phase::Checkout), "turso/pool_acquire") => 16,
            (Some(Phase::Checkout), _) | (Some(Phase::Dispatch), _) => 16,
            (Some(Phase::Prepare), "prepare" | "sql-middleware/prepare") => 16,
            (Some(Phase::Prepare), _) => 64,
            (Some(Phase::ExecuteMarshal), _) => ids.iter().map(|i| *i as u64 + 1).sum(),
            (Some(Phase::Decode), _) => 16 * row(ids[0]).checksum(),
            (Some(Phase::Bind), _) => ids.iter().map(|i| *i as u64).sum(),
        };
        assert_eq!(c.work.per_pass, expected, "{bench}: {}", c.work.what);
        let traced = !c.phases.is_empty();
        let path = matches!(
            spec.subject,
            Subject::Middleware(_) | Subject::TursoMiddleware
        ) && spec.phase.is_none();
        assert_eq!(traced, path, "{bench}: phases only for the middleware path");
        if spec.phase.is_none() {
            // One lookup in LATENCY_EVERY timed on its own, at least one a pass.
            let passes: u64 = c.passes.iter().sum();
            assert!(
                c.summary
                    .latency
                    .is_some_and(|l| l.count >= passes && l.count <= 16 * passes),
                "{bench}: per-op latencies recorded"
            );
        }
        for ns_per_op in &c.phases {
            // turso runs on the caller's task: no dispatch phase to report.
            let turso = spec.subject == Subject::TursoMiddleware;
            assert_eq!(ns_per_op.len(), if turso { 5 } else { 6 }, "{bench}");
            assert_eq!(ns_per_op.contains_key(&Phase::Dispatch), !turso);
            assert!(ns_per_op.values().all(|v| *v >= 0.0));
        }
        // Every SQLite connection reads back the run's settings, but what turso cannot do
        // (conversion-only micro-benches have no connection).
        if spec.subject != Subject::MiddlewareValues && spec.phase != Some(Phase::Bind) {
            let differ = differences(&asked, &c.sqlite);
            let turso = matches!(spec.subject, Subject::Turso | Subject::TursoMiddleware);
            let want: Vec<String> = if turso {
                vec![
                    "locking_mode: exclusive (asked normal)".into(),
                    "mmap_size: unsupported (asked 0)".into(),
                ]
            } else if spec.subject == Subject::Crate(Shipped::Diesel) {
                // diesel keeps its connection handle to itself: the mutex cannot be read.
                vec!["mutex: unsupported (asked off)".into()]
            } else {
                vec![]
            };
            assert_eq!(differ, want, "{bench}: {:?}", c.sqlite);
        }
    }

    // Second run reuses the cached dataset.
    let (code, events, _) = run(ONE_SAMPLE, cache.path());
    assert_eq!(code, Some(0));
    assert!(
        matches!(
            events[1],
            Event::Dataset {
                status: DatasetStatus::Reused,
                ..
            }
        ),
        "{:?}",
        events[1]
    );
}

/// Runs `target`'s `benches` in paired rounds of groups of two (six pairs at least: fewer give
/// no interval, so no ratio) and checks what every group run must hold: each bench starts and
/// sums up once; each bench with a baseline (`against`) has one ratio against it, of as many
/// pairs as it has samples. Returns the events.
fn paired_in_groups_of_two(
    target: &str,
    benches: &[&str],
    extra: &[&str],
    against: &dyn Fn(&str) -> Option<String>,
) -> Vec<Event> {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec![target, "--paired", "--paired-group", "2"];
    for b in benches {
        args.extend(["--bench", b]);
    }
    args.extend(extra);
    args.extend([
        "--time",
        "0.02",
        "--warmup",
        "0",
        "--samples",
        "7",
        "--min-samples",
        "6",
    ]);
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let Event::Start(start) = &events[0] else {
        panic!("first event is not start: {:?}", events[0])
    };
    assert!(start.budget.paired);
    assert_eq!(start.budget.group, Some(2));
    for b in benches {
        let of = |f: &dyn Fn(&Event) -> bool| events.iter().filter(|e| f(e)).count();
        let starts = of(&|e| matches!(e, Event::BenchStart { .. }) && e.bench() == Some(b));
        let sums = of(&|e| matches!(e, Event::Summary { .. }) && e.bench() == Some(b));
        assert_eq!((starts, sums), (1, 1), "{b}: {events:?}");
        let paired: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Paired {
                    bench,
                    against,
                    ratio,
                } if bench == b => Some((against.clone(), ratio)),
                _ => None,
            })
            .collect();
        match against(b) {
            Some(base) => {
                assert_eq!(paired.len(), 1, "{b}: {events:?}");
                assert_eq!(paired[0].0, base, "{b}");
                let own = of(&|e| matches!(e, Event::Sample { .. }) && e.bench() == Some(b));
                assert_eq!(
                    paired[0].1.pairs, own,
                    "{b}: one pair per sample of its own"
                );
            }
            None => assert!(paired.is_empty(), "{b}: {paired:?}"),
        }
    }
    events
}

/// The first event about `bench` that `f` picks.
fn first(events: &[Event], bench: &str, f: fn(&Event) -> bool) -> usize {
    events
        .iter()
        .position(|e| f(e) && e.bench() == Some(bench))
        .unwrap_or_else(|| panic!("no such event of {bench}: {events:?}"))
}

/// Paired rounds a group at a time: four benches beside rusqlite take turns two by two,
/// rusqlite in both groups; the second group starts after the first has summed up, and
/// rusqlite's samples shown are those of its first group.
#[test]
fn paired_rounds_take_turns_a_group_at_a_time() {
    let benches = [
        "rusqlite",
        "sqlite3_c",
        "marshalling",
        "middleware/inline",
        "decode",
    ];
    let events = paired_in_groups_of_two(
        "single_row_lookup",
        &benches,
        &["--rows", "64", "--lookups", "16"],
        &|b| (b != "rusqlite").then(|| "rusqlite".to_string()),
    );
    let summary = |e: &Event| matches!(e, Event::Summary { .. });
    let start = |e: &Event| matches!(e, Event::BenchStart { .. });
    let sample = |e: &Event| matches!(e, Event::Sample { .. });
    let second = first(&events, "middleware/inline", start);
    assert!(first(&events, "marshalling", summary) < second);
    assert!(first(&events, "rusqlite", summary) < second);
    assert!(second < first(&events, "decode", summary));
    let last_rusqlite = events
        .iter()
        .rposition(|e| sample(e) && e.bench() == Some("rusqlite"))
        .unwrap();
    assert!(last_rusqlite < second);
}

/// key_value's benches take their ratios against their own case's rusqlite bench: each group
/// takes turns beside the baselines its benches need, and those report once.
#[test]
fn paired_groups_take_the_baselines_their_benches_need() {
    let benches = [
        "bulk_get/memory",
        "bulk_get/rusqlite",
        "bulk_get/diesel",
        "bulk_put/memory",
        "bulk_put/rusqlite",
        "bulk_put/turso",
        "bulk_get/turso",
    ];
    paired_in_groups_of_two("key_value", &benches, &["--knob", "keys=20"], &|b| {
        let (case, subject) = b.split_once('/').unwrap();
        (subject != "rusqlite").then(|| format!("{case}/rusqlite"))
    });
}

#[test]
fn a_corrupt_cache_file_is_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let key = bench_core::dataset::DatasetKey::new(
        "single_row_lookup",
        64,
        single_row_lookup::spec().seed,
    );
    std::fs::write(key.path_in(cache.path()), vec![0xAB; 8192]).unwrap();
    let (code, events, stderr) = run(ONE_SAMPLE, cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Dataset {
            status: DatasetStatus::Built,
            ..
        }
    )));
    assert!(stderr.contains("invalid; rebuilding"), "{stderr}");
}

#[test]
fn bad_knobs_stop_before_anything_starts() {
    let cache = tempfile::tempdir().unwrap();
    for (args, message) in [
        (
            vec!["single_row_lookup", "--rows", "0"],
            "invalid value 0 for knob rows: out of range (allowed: 1..=50000000)",
        ),
        (
            vec!["single_row_lookup", "--concurrency", "-3"],
            "invalid value \"-3\" for knob concurrency: not a whole number (allowed: 1..=1024)",
        ),
        (
            vec!["single_row_lookup", "--knob", "spin_us=fast"],
            "invalid value \"fast\" for knob spin_us: not a whole number (allowed: 0..=100000)",
        ),
        (
            vec!["single_row_lookup", "--time", "-1"],
            "invalid value \"-1\" for --time: expected seconds (allowed: 0..=3600)",
        ),
        (
            vec!["single_row_lookup", "--bench", "nope"],
            "--bench \"nope\" selects nothing in target single_row_lookup",
        ),
    ] {
        let (code, events, stderr) = run(&args, cache.path());
        assert_eq!(code, Some(2), "{args:?}");
        assert_eq!(events.len(), 1, "{args:?}: only the error");
        let Event::Error {
            bench: None,
            message: m,
        } = &events[0]
        else {
            panic!("{:?}", events[0])
        };
        assert!(m.starts_with(message), "{args:?}: {m}");
        assert!(stderr.contains(message), "{stderr}");
    }
    assert_eq!(
        std::fs::read_dir(cache.path()).unwrap().count(),
        0,
        "no dataset was built"
    );
}

/// Every core bench of a target, tiny, every line parsed: bench_start, samples in order, one
/// summary with per-operation latencies where the target records them, then done; each bench's
/// work per pass is what `expected_work` computes from the target's data.
/// Two samples a bench, no warm-up: what the every-bench checks run on.
const TWO_SAMPLES: &[&str] = &[
    "--time",
    "0.01",
    "--warmup",
    "0",
    "--samples",
    "2",
    "--min-samples",
    "2",
];

fn check_target(
    target: &bench_core::catalog::Target,
    knobs: &[&str],
    latencies: bool,
    expected_work: &dyn Fn(&bench_core::catalog::BenchSpec) -> u64,
) {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec![target.name];
    args.extend_from_slice(knobs);
    args.extend_from_slice(TWO_SAMPLES);
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{}: {stderr}", target.name);
    assert_eq!(events.last(), Some(&Event::Done));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Error { .. })),
        "{events:?}"
    );
    let core: Vec<&str> = bench_core::testing::benches_of(target, Harness::Core);
    let postgres = std::env::var("BENCHSCOPE_POSTGRES_URL").is_ok_and(|u| !u.is_empty());
    for bench in core {
        // A PostgreSQL bench without a server is skipped, with the reason (and run and
        // checked like the others where BENCHSCOPE_POSTGRES_URL names one).
        if let [Event::Skipped { reason, .. }] =
            bench_core::testing::events_of(&events, bench).as_slice()
            && !postgres
        {
            assert_eq!(reason, bench_core::mirror::NO_POSTGRES, "{bench}");
            bench_core::testing::skip(
                bench,
                "BENCHSCOPE_POSTGRES_URL is not set (.ci/postgres.sh starts a throwaway server)",
            );
            continue;
        }
        let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.passes.len(), 2, "{bench}");
        assert_eq!(c.summary.latency.is_some(), latencies, "{bench}");
        assert_eq!(
            c.work.per_pass,
            expected_work(target.spec(bench).unwrap()),
            "{bench}: {}",
            c.work.what
        );
    }
}

#[test]
fn multithread_pool_checkout_streams_for_every_core_bench() {
    let ids = lookup_ids(64, multithread::spec().seed, 24);
    check_target(
        multithread::spec(),
        &["--rows", "64", "--lookups", "24", "--concurrency", "3"],
        true,
        &|b| match b.phase {
            Some(Phase::Checkout) => 24,
            _ => lookup_work(&ids),
        },
    );
}

/// The bulk_insert tests, which share the PostgreSQL server's one bench table when a server is
/// given: one at a time.
static ONE_ON_THE_SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn bulk_insert_streams_for_every_core_bench() {
    let _one = ONE_ON_THE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    check_target(
        bulk_insert::spec(),
        &["--rows", "30", "--concurrency", "2"],
        false,
        &|_| 30,
    );
}

/// `method=batch_text`: every core bench runs its batch call and inserts exactly the rows (its
/// work check); PostgreSQL's too where a server is given (`.ci/run` starts one), else skipped
/// for that reason.
#[test]
fn bulk_insert_batch_text_runs_on_every_core_bench() {
    let _one = ONE_ON_THE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let cache = tempfile::tempdir().unwrap();
    let args = [
        &["bulk_insert", "--rows", "30", "--knob", "method=batch_text"][..],
        TWO_SAMPLES,
    ]
    .concat();
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    let server = std::env::var("BENCHSCOPE_POSTGRES_URL").is_ok_and(|u| !u.is_empty());
    let mut ran = 0;
    for b in bench_core::testing::benches_of(bulk_insert::spec(), Harness::Core) {
        if b.ends_with("postgres") && !server {
            let [Event::Skipped { reason, .. }] =
                bench_core::testing::events_of(&events, b).as_slice()
            else {
                panic!("{b} ran without a server: {events:?}");
            };
            assert_eq!(reason, bench_core::mirror::NO_POSTGRES, "{b}");
            continue;
        }
        let c = check_bench(&events, b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.work.per_pass, 30, "{b}");
        assert_eq!(c.passes.len(), 2, "{b}");
        ran += 1;
    }
    // rusqlite, seven strategies, turso, tokio-rusqlite, two r2d2, diesel, sql-middleware, and
    // sql-middleware/postgres with a server.
    assert_eq!(ran, 14 + server as usize, "{events:?}");
}

/// One scenario run of every strategy and crate, tiny: every line checked.
#[test]
fn async_contention_streams_every_strategy() {
    use bench_core::workloads::async_contention;
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "async_contention",
        "--knob",
        "databases=2",
        "--knob",
        "readers=1",
        "--knob",
        "duration=2",
        "--knob",
        "write_delay_ms=50",
        // Direct blocking holds a worker per writer: one more keeps the readers going.
        "--knob",
        "workers=3",
    ];
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(events.last(), Some(&Event::Done));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Error { .. })),
        "{events:?}"
    );
    let asked = SqliteSettings::default().expected();
    // This runner's benches; async-sqlite's run in its harness (its own test).
    let core = bench_core::testing::benches_of(
        async_contention::spec(),
        bench_core::catalog::Harness::Core,
    );
    assert!(!core.contains(&"async-sqlite"), "{core:?}");
    for spec in async_contention::spec()
        .benches
        .iter()
        .filter(|b| core.contains(&b.name))
    {
        let mine = bench_core::testing::events_of(&events, spec.name);
        let Some(Event::BenchStart { sqlite, .. }) = mine.first() else {
            panic!("{}: {mine:?}", spec.name)
        };
        assert!(
            differences(&asked, sqlite).is_empty(),
            "{}: {sqlite:?}",
            spec.name
        );
        let ticks: Vec<f64> = events
            .iter()
            .filter_map(|e| match e {
                Event::Tick { bench, window } if bench == spec.name => Some(window.t_s),
                _ => None,
            })
            .collect();
        assert!(ticks.len() >= 2, "{}: {ticks:?}", spec.name);
        assert!(
            ticks.windows(2).all(|w| w[0] <= w[1]),
            "{}: in order",
            spec.name
        );
        let stats = events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Scenario { bench, stats } if bench == spec.name => Some(stats),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}: no scenario", spec.name));
        // Measured time, not the configured one.
        assert!(stats.elapsed_s >= 2.0 && stats.elapsed_s < 3.0, "{stats:?}");
        assert!(
            stats.reads > 0 && stats.writes > 0,
            "{}: {stats:?}",
            spec.name
        );
        assert!(stats.read_latency.is_some_and(|l| l.count == stats.reads));
        // 2 writers, one write each per 50 ms and a little: about 70 in 2 s.
        assert!(
            stats.writes_expected >= 60.0 && stats.writes_expected <= 80.0,
            "{stats:?}"
        );
    }
}

/// On `pool=slots` (and `pool=thread`) the scenario's strategies run on that pool, say so in
/// their backend, read and write, and a strategy that cannot
/// dispatch there is skipped with the reason.
#[test]
fn async_contention_runs_on_the_pool_the_knob_names() {
    let cache = tempfile::tempdir().unwrap();
    for (pool, label) in [
        ("slots", "lock-free slots"),
        ("thread", "a connection per thread"),
    ] {
        let knob = format!("pool={pool}");
        let args = [
            "async_contention",
            "--bench",
            "spawn_blocking",
            "--bench",
            "block_in_place",
            "--bench",
            "wait_aside",
            "--bench",
            "interact",
            "--knob",
            &knob,
            "--knob",
            "databases=2",
            "--knob",
            "readers=2",
            "--knob",
            "duration=1",
            "--knob",
            "write_delay_ms=50",
        ];
        let (code, events, stderr) = run(&args, cache.path());
        assert_eq!(code, Some(0), "{stderr}");
        for name in ["spawn_blocking", "block_in_place", "wait_aside"] {
            let start = events.iter().find_map(|e| match e {
                Event::BenchStart { bench, backend, .. } if bench == name => Some(backend.clone()),
                _ => None,
            });
            assert_eq!(start.as_deref(), Some(label), "{name}");
            let stats = events
                .iter()
                .find_map(|e| match e {
                    Event::Scenario { bench, stats } if bench == name => Some(stats.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{name} on {pool}: no scenario"));
            assert!(stats.reads > 0 && stats.writes > 0, "{name}: {stats:?}");
        }
        let skipped = events.iter().find_map(|e| match e {
            Event::Skipped { bench, reason } if bench == "interact" => Some(reason.clone()),
            _ => None,
        });
        assert!(
            skipped
                .as_deref()
                .is_some_and(|r| r.contains(&format!("does not dispatch on {label}"))),
            "{skipped:?}"
        );
    }
}

/// The canary reads close to 1 when nothing blocks the runtime, and falls when direct
/// blocking holds its only worker thread. wait_aside runs the writer's closure (its sleep)
/// aside, as a caller's closure, and its own reads in place: the canary stays up.
#[test]
fn the_canary_falls_when_direct_blocking_starves_the_runtime() {
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "async_contention",
        "--bench",
        "inline",
        "--bench",
        "wait_aside",
        "--bench",
        "spawn_blocking",
        "--knob",
        "workers=1",
        "--knob",
        "databases=4",
        "--knob",
        "readers=1",
        "--knob",
        "write_delay_ms=200",
        "--knob",
        "duration=2",
    ];
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    let stats = |name: &str| {
        events
            .iter()
            .find_map(|e| match e {
                Event::Scenario { bench, stats } if bench == name => Some(stats.clone()),
                _ => None,
            })
            .unwrap()
    };
    let (inline, spawn) = (stats("inline"), stats("spawn_blocking"));
    assert!(inline.canary_ratio < 0.5, "{inline:?}");
    assert!(inline.canary_worst_late_ns > 100_000_000, "{inline:?}");
    assert!(spawn.canary_ratio > 0.7, "{spawn:?}");
    assert!(
        spawn.write_completion > inline.write_completion,
        "{spawn:?} {inline:?}"
    );
    let aside = stats("wait_aside");
    assert!(aside.canary_ratio > 0.7, "{aside:?}");
    assert!(
        aside.write_completion > inline.write_completion,
        "{aside:?} {inline:?}"
    );
}

#[test]
fn async_contention_refuses_bad_knobs() {
    let cache = tempfile::tempdir().unwrap();
    for (args, message) in [
        (
            vec!["async_contention", "--knob", "storage=disk"],
            "invalid value \"disk\" for knob storage: not one of the allowed values (allowed: file, memory)",
        ),
        (
            vec!["async_contention", "--knob", "databases=0"],
            "invalid value 0 for knob databases: out of range (allowed: 1..=1000)",
        ),
        (
            vec!["async_contention", "--knob", "writer=fast"],
            "invalid value \"fast\" for knob writer: not one of the allowed values (allowed: sleep, write)",
        ),
    ] {
        let (code, events, _) = run(&args, cache.path());
        assert_eq!(code, Some(2), "{args:?}");
        assert!(
            matches!(&events[..], [Event::Error { bench: None, message: m }] if m == message),
            "{args:?}: {events:?}"
        );
    }
}

/// Every core bench of `target`, tiny, with `knobs` and `storage=<storage>`, run to the end
/// with nothing failed or skipped: each core bench with its checked part of the stream.
fn every_core_bench(
    target: &'static bench_core::catalog::Target,
    knobs: &[&str],
    storage: &str,
) -> Vec<(
    &'static bench_core::catalog::BenchSpec,
    bench_core::testing::BenchCheck,
)> {
    let cache = tempfile::tempdir().unwrap();
    let storage_knob = format!("storage={storage}");
    // The core's SQLite benches (those on the PostgreSQL server are tested with one), less
    // the cases a backend does not have (crud_overhead's select_first on diesel: tested apart).
    let benches: Vec<&'static bench_core::catalog::BenchSpec> = target
        .benches
        .iter()
        .filter(|b| {
            b.harness() == Harness::Core
                && b.subject != Subject::Crate(bench_core::catalog::Shipped::SqlMiddlewarePostgres)
                && (target.name != bench_core::workloads::crud_overhead::NAME
                    || bench_core::workloads::crud_overhead::first_skip(b).is_none())
        })
        .collect();
    let mut args = vec![target.name];
    for b in &benches {
        args.extend(["--bench", b.name]);
    }
    args.extend_from_slice(knobs);
    args.extend_from_slice(&["--knob", &storage_knob]);
    args.extend_from_slice(TWO_SAMPLES);
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{storage}: {stderr}");
    assert_eq!(events.last(), Some(&Event::Done));
    let bad: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Error { .. } | Event::Skipped { .. }))
        .collect();
    assert!(bad.is_empty(), "{storage}: {bad:?}");
    benches
        .into_iter()
        .map(|b| {
            let c = check_bench(&events, b.name).unwrap_or_else(|e| panic!("{storage}: {e}"));
            (b, c)
        })
        .collect()
}

/// Every core bench of crud_overhead, tiny, in files and in memory: each declares the
/// operations and work the model of the table gives, and every sample does exactly that work.
#[test]
fn crud_overhead_streams_every_core_bench_with_the_models_work() {
    use bench_core::workloads::crud_overhead::{self, plan};
    let spec = crud_overhead::spec();
    let steps = plan::steps(60, 10, spec.seed);
    let sweep = plan::sweep_rows(30, spec.seed);
    let knobs = [
        "--knob",
        "ops=60",
        "--knob",
        "batch=10",
        "--knob",
        "sweep_rows=30",
        "--concurrency",
        "2",
    ];
    for storage in ["file", "memory"] {
        let checked = every_core_bench(spec, &knobs, storage);
        for (b, c) in &checked {
            let case = crud_overhead::case_of(b).unwrap();
            let (ops, work) = plan::expected(case, &steps, &sweep);
            assert_eq!(
                (c.ops, c.work.per_pass),
                (ops, work),
                "{storage} {}",
                b.name
            );
            assert_eq!(
                c.summary.latency.is_some(),
                matches!(case, plan::Case::Op(_)),
                "{}: one latency per timed operation",
                b.name
            );
        }
        assert_eq!(
            checked.len(),
            16 * 14 - 1,
            "every case on rusqlite, 7 strategies, turso and 5 crates (async-sqlite is its harness's), but select_first on diesel"
        );
        // Files keep WAL; memdb cannot, and says so in what its connections read back.
        let journal = |bench: &str| {
            checked
                .iter()
                .find(|(b, _)| b.name == bench)
                .and_then(|(_, c)| c.sqlite.get("journal_mode").cloned())
        };
        let want = if storage == "file" { "wal" } else { "memory" };
        assert_eq!(journal("insert/rusqlite").as_deref(), Some(want));
        assert_eq!(journal("insert/middleware/interact").as_deref(), Some(want));
    }
}

/// crud_overhead through sql-middleware's postgres feature on a real server: every case does
/// the work the model of the table gives (BEGIN ... COMMIT held in its `Tx`), and the bench's
/// table is gone when the run ends.
#[test]
fn crud_overhead_runs_sql_middleware_on_postgres_with_the_models_work() {
    use bench_core::workloads::crud_overhead::{self, plan};
    let Some(url) = std::env::var("BENCHSCOPE_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        bench_core::testing::skip(
            "crud_overhead_runs_sql_middleware_on_postgres_with_the_models_work",
            "BENCHSCOPE_POSTGRES_URL is not set (.ci/postgres.sh starts a throwaway server)",
        );
        return;
    };
    let spec = crud_overhead::spec();
    let steps = plan::steps(60, 10, spec.seed);
    let sweep = plan::sweep_rows(30, spec.seed);
    let benches: Vec<&bench_core::catalog::BenchSpec> = spec
        .benches
        .iter()
        .filter(|b| {
            b.subject == Subject::Crate(Shipped::SqlMiddlewarePostgres)
                && crud_overhead::first_skip(b).is_none()
        })
        .collect();
    assert_eq!(benches.len(), 15, "every case but select_first");
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec!["crud_overhead"];
    for b in &benches {
        args.extend(["--bench", b.name]);
    }
    args.extend([
        "--knob",
        "ops=60",
        "--knob",
        "batch=10",
        "--knob",
        "sweep_rows=30",
    ]);
    args.extend_from_slice(TWO_SAMPLES);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench-runner"));
    cmd.args(&args)
        .arg("--cache-dir")
        .arg(cache.path())
        .env("BENCHSCOPE_POSTGRES_URL", &url);
    let out = run_to_end(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for b in benches {
        let c = check_bench(&out.events, b.name).unwrap_or_else(|e| panic!("{e}"));
        let case = crud_overhead::case_of(b).unwrap();
        assert_eq!(
            (c.ops, c.work.per_pass),
            plan::expected(case, &steps, &sweep),
            "{}",
            b.name
        );
    }
    // The bench's table is dropped when each bench ends: none is left on the server.
    let rt = bench_core::measure::drive::runtime(None).unwrap();
    let left = rt.block_on(async {
        use bench_core::backends::crates::{MiddlewareConn, SqlMiddlewarePg};
        let pool = SqlMiddlewarePg::open(&bench_core::secret::PgUrl::parse(&url))
            .await
            .unwrap();
        let mut conn = pool.hold(String::new()).await.unwrap();
        conn.rows(
            "SELECT 1 FROM pg_tables WHERE tablename = 'benchscope_crud'",
            &[],
        )
        .await
        .unwrap()
        .results
        .len()
    });
    assert_eq!(left, 0, "benchscope_crud is left on the server");
}

#[test]
fn crud_overhead_refuses_bad_knobs() {
    let cache = tempfile::tempdir().unwrap();
    for (knob, what) in [
        ("ops=0", "ops"),
        ("batch=x", "batch"),
        ("storage=disk", "storage"),
        ("sweep_rows=2000000", "sweep_rows"),
    ] {
        let (code, events, stderr) = run(&["crud_overhead", "--knob", knob], cache.path());
        assert_eq!(code, Some(2), "{knob}");
        assert!(stderr.contains(what), "{knob}: {stderr}");
        assert!(
            matches!(events.as_slice(), [Event::Error { .. }]),
            "{knob}: {events:?}"
        );
    }
}

/// Every core bench of key_value, tiny, in files and in memory: each declares the operations
/// and work its data gives, and every sample does exactly that work (values compared byte for
/// byte, expired keys absent).
#[test]
fn key_value_streams_every_core_bench_with_checked_values() {
    use bench_core::workloads::key_value::{self, plan};
    let spec = key_value::spec();
    for storage in ["file", "memory"] {
        let checked = every_core_bench(spec, &["--knob", "keys=20"], storage);
        for (b, c) in &checked {
            let case = key_value::case_of(b).unwrap();
            let d = plan::Data::new(case, 20, spec.seed);
            assert_eq!(
                (c.ops, c.work.per_pass),
                (d.ops(case), d.work(case)),
                "{storage} {}",
                b.name
            );
        }
        assert_eq!(
            checked.len(),
            18 * 15,
            "memory, rusqlite, 7 strategies, turso, tokio-rusqlite, r2d2_sqlite x 2, diesel, sql-middleware"
        );
    }
}

/// With `locking_mode=exclusive` a connection keeps the file locked until it closes: each
/// bench must close its connections when it ends, or every later bench finds the file locked.
#[test]
fn exclusive_locking_leaves_the_file_to_the_next_bench() {
    let cache = tempfile::tempdir().unwrap();
    let benches = [
        "rusqlite",
        "sqlite3_c",
        "prepare",
        "marshalling",
        "middleware/spin",
    ];
    let mut args = vec!["single_row_lookup"];
    for b in &benches {
        args.extend(["--bench", b]);
    }
    let mut tiny = tiny();
    let c = tiny.iter().position(|a| *a == "--concurrency").unwrap();
    tiny[c + 1] = "1";
    args.extend(tiny);
    args.extend(["--knob", "locking_mode=exclusive"]);
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(
        !events.iter().any(|e| matches!(e, Event::Error { .. })),
        "{events:?}"
    );
    for b in benches {
        let c = check_bench(&events, b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.sqlite["locking_mode"], "exclusive", "{b}");
    }
}

/// The pool as a second axis: `pool=r2d2` runs the strategies that take any pool's connection
/// on r2d2 (named as the backend, with the run's settings read back and the lookups' work
/// checked) and skips, with the reason, those that dispatch on a pool of their own.
#[test]
fn the_middleware_path_runs_on_the_pool_the_knob_names() {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec!["single_row_lookup", "--knob", "pool=r2d2"];
    for b in [
        "middleware/inline",
        "middleware/spawn_blocking",
        "middleware/block_in_place",
        "middleware/interact",
        "middleware/spin",
    ] {
        args.extend(["--bench", b]);
    }
    args.extend(tiny());
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let ids = lookup_ids(64, single_row_lookup::spec().seed, 16);
    let asked = SqliteSettings::default().expected();
    for bench in [
        "middleware/inline",
        "middleware/spawn_blocking",
        "middleware/block_in_place",
    ] {
        let backend = events.iter().find_map(|e| match e {
            Event::BenchStart {
                bench: b, backend, ..
            } if b == bench => Some(backend.clone()),
            _ => None,
        });
        assert_eq!(backend.as_deref(), Some("r2d2_sqlite"), "{bench}");
        let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.work.per_pass, lookup_work(&ids), "{bench}");
        assert_eq!(
            differences(&asked, &c.sqlite),
            Vec::<String>::new(),
            "{bench}"
        );
    }
    let skipped: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Skipped { bench, reason } => Some((bench.clone(), reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "middleware/interact".to_string(),
                "interact does not dispatch on r2d2_sqlite (pool=r2d2; it runs on deadpool-sqlite)"
                    .to_string()
            ),
            (
                "middleware/spin".to_string(),
                "spin does not dispatch on r2d2_sqlite (pool=r2d2; it runs on rusqlite worker pool)"
                    .to_string()
            ),
        ]
    );
}

/// `values=prepared` runs on `pool=thread` (the lookups' work checked, the backend named, the
/// run's settings read back from a thread's connection) under each strategy that reaches a
/// thread's connection, and is skipped, with the reason, on a pool that cannot hold a
/// statement.
#[test]
fn a_statement_held_per_connection_runs_on_the_thread_pool_alone() {
    let cache = tempfile::tempdir().unwrap();
    let strategies = [
        "middleware/inline",
        "middleware/spawn_blocking",
        "middleware/block_in_place",
    ];
    let ids = lookup_ids(64, single_row_lookup::spec().seed, 16);
    let asked = SqliteSettings::default().expected();
    for pool in ["thread", "slots"] {
        let knob = format!("pool={pool}");
        let mut args = vec![
            "single_row_lookup",
            "--knob",
            &knob,
            "--knob",
            "values=prepared",
            "--knob",
            "lookups_per_checkout=4",
        ];
        for b in strategies {
            args.extend(["--bench", b]);
        }
        args.extend(tiny());
        let (code, events, stderr) = run(&args, cache.path());
        assert_eq!(code, Some(0), "stderr: {stderr}");
        for bench in strategies {
            if pool == "thread" {
                let backend = events.iter().find_map(|e| match e {
                    Event::BenchStart {
                        bench: b, backend, ..
                    } if b == bench => Some(backend.clone()),
                    _ => None,
                });
                assert_eq!(
                    backend.as_deref(),
                    Some("a connection per thread"),
                    "{bench}"
                );
                let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(c.work.per_pass, lookup_work(&ids), "{bench}");
                assert_eq!(
                    differences(&asked, &c.sqlite),
                    Vec::<String>::new(),
                    "{bench}"
                );
            } else {
                let reason = events.iter().find_map(|e| match e {
                    Event::Skipped { bench: b, reason } if b == bench => Some(reason.clone()),
                    _ => None,
                });
                assert_eq!(
                    reason.as_deref(),
                    Some(
                        "values=prepared holds a statement beside its connection, which only pool=thread can (a rusqlite statement cannot leave its thread; pool=slots is lock-free slots)"
                    ),
                    "{bench}"
                );
            }
        }
    }
}

/// The runner counts every allocation: each sample carries its own, the summary has them per
/// operation, the run says so; rusqlite's lookup makes the same count in two runs; turned off,
/// nothing is reported and the run says why.
#[test]
fn the_runner_counts_memory_per_operation_and_says_when_it_does_not() {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec![
        "single_row_lookup",
        "--bench",
        "rusqlite",
        "--bench",
        "sqlite3_c",
    ];
    args.extend(tiny());
    let memory_of = |events: &[Event], bench: &str| {
        events
            .iter()
            .find_map(|e| match e {
                Event::Summary { bench: b, stats } if b == bench => Some(stats.memory),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no summary of {bench}: {events:?}"))
    };
    let said = |events: &[Event]| match &events[0] {
        Event::Start(s) => s
            .env
            .settings
            .get(&bench_core::text::Text::from("memory"))
            .map(|t| t.raw().to_string())
            .unwrap_or_default(),
        e => panic!("{e:?}"),
    };
    let mut counts = Vec::new();
    for _ in 0..2 {
        let (code, events, stderr) = run(&args, cache.path());
        assert_eq!(code, Some(0), "{stderr}");
        assert!(
            said(&events).starts_with("allocations counted"),
            "{}",
            said(&events)
        );
        for e in &events {
            if let Event::Sample { bench, memory, .. } = e {
                assert!(memory.is_some(), "a sample of {bench} without memory");
            }
        }
        let rusqlite = memory_of(&events, "rusqlite").expect("rusqlite's memory");
        let c = memory_of(&events, "sqlite3_c").expect("sqlite3_c's memory");
        // The lookup reads a text column into a String: at least one allocation per lookup;
        // the C API reads into a buffer of its own.
        assert!(rusqlite.allocs_per_op >= 1.0, "{rusqlite:?}");
        assert!(
            c.allocs_per_op < rusqlite.allocs_per_op,
            "{c:?} {rusqlite:?}"
        );
        assert!(rusqlite.bytes_per_op > 0.0 && rusqlite.peak_bytes > 0);
        counts.push(rusqlite.allocs_per_op);
    }
    assert_eq!(
        counts[0], counts[1],
        "rusqlite's count is stable across runs"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_bench-runner"))
        .args(&args)
        .arg("--cache-dir")
        .arg(cache.path())
        .env(bench_core::measure::memory::OFF_VAR, "off")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Event> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| bench_core::protocol::decode(l).unwrap())
        .collect();
    assert_eq!(memory_of(&events, "rusqlite"), None);
    assert!(said(&events).contains("turned off"), "{}", said(&events));
}
