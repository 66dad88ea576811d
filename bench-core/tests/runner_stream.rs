//! bench-runner run for real on a tiny dataset; every line it writes is parsed and checked.

use std::process::Command;

use bench_core::catalog::{Harness, ROWS};
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::testing::{events_of, run_to_end};
use bench_core::workloads::{bulk_insert, multithread, single_row_lookup};

const TINY: &[&str] = &[
    "--rows",
    "64",
    "--lookups",
    "16",
    "--concurrency",
    "2",
    "--time",
    "0.02",
    "--warmup",
    "0",
    "--samples",
    "3",
    "--min-samples",
    "2",
];

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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench-runner"));
    cmd.args(args).arg("--cache-dir").arg(cache);
    let out = run_to_end(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
    (out.code, out.events, out.stderr)
}

#[test]
fn every_bench_streams_a_valid_sequence() {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec!["single_row_lookup", "--trace"];
    args.extend_from_slice(TINY);
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
    assert!(start.env.sqlite.starts_with('3'), "{}", start.env.sqlite);
    assert!(start.env.timer_ns > 0.0);
    assert!(start.trace);
    let all: Vec<&str> = single_row_lookup::spec()
        .benches
        .iter()
        .filter(|b| b.harness() == Harness::Core)
        .map(|b| b.name)
        .collect();
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

    for bench in all {
        let mine = events_of(&events, bench);
        assert!(
            matches!(mine[0], Event::BenchStart { ops: 16, .. }),
            "{bench}: {mine:?}"
        );
        let samples: Vec<u64> = mine
            .iter()
            .filter_map(|e| {
                if let Event::Sample {
                    iter,
                    ops,
                    elapsed_ns,
                    ..
                } = e
                {
                    assert_eq!(*ops, 16);
                    assert!(*elapsed_ns > 0);
                    Some(*iter)
                } else {
                    None
                }
            })
            .collect();
        assert!((2..=3).contains(&samples.len()), "{bench}: {samples:?}");
        assert_eq!(
            samples,
            (0..samples.len() as u64).collect::<Vec<_>>(),
            "{bench}: samples numbered in order"
        );
        let Some(Event::Summary { stats, .. }) = mine.last() else {
            panic!("{bench}: no summary last")
        };
        assert_eq!(stats.samples, samples.len());
        assert!(stats.min <= stats.median && stats.median <= stats.max);
        let traced = mine.iter().any(|e| matches!(e, Event::Phases { .. }));
        assert_eq!(
            traced,
            bench.starts_with("middleware/"),
            "{bench}: phases only for the middleware path"
        );
        if bench.starts_with("middleware/") || bench == "rusqlite" || bench == "turso_raw" {
            assert!(
                stats.latency.is_some_and(|l| l.count >= 32),
                "{bench}: per-op latencies recorded"
            );
        }
        for e in &mine {
            if let Event::Phases { ns_per_op, .. } = e {
                // turso runs on the caller's task: no dispatch phase to report.
                let expected = if bench == "middleware/turso" { 5 } else { 6 };
                assert_eq!(
                    ns_per_op.len(),
                    expected,
                    "{bench}: every phase it has is reported"
                );
                assert_eq!(
                    ns_per_op.contains_key(&bench_core::measure::trace::Phase::Dispatch),
                    bench != "middleware/turso"
                );
                assert!(ns_per_op.values().all(|v| *v >= 0.0));
            }
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

#[test]
fn a_corrupt_cache_file_is_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let key = bench_core::dataset::DatasetKey {
        workload: "single_row_lookup".into(),
        rows: 64,
        seed: single_row_lookup::spec().seed,
    };
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
            "unknown bench \"nope\" in target single_row_lookup",
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
/// summary with per-operation latencies where the target records them, then done.
fn check_target(target: &bench_core::catalog::Target, knobs: &[&str], latencies: bool) {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec![target.name];
    args.extend_from_slice(knobs);
    args.extend_from_slice(&[
        "--time",
        "0.01",
        "--warmup",
        "0",
        "--samples",
        "2",
        "--min-samples",
        "2",
    ]);
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{}: {stderr}", target.name);
    assert_eq!(events.last(), Some(&Event::Done));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Error { .. })),
        "{events:?}"
    );
    let core: Vec<&str> = target
        .benches
        .iter()
        .filter(|b| b.harness() == Harness::Core)
        .map(|b| b.name)
        .collect();
    for bench in core {
        let starts = events
            .iter()
            .filter(|e| matches!(e, Event::BenchStart { bench: b, .. } if b == bench))
            .count();
        assert_eq!(starts, 1, "{bench}");
        let iters: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                Event::Sample {
                    bench: b,
                    iter,
                    elapsed_ns,
                    ..
                } if b == bench => {
                    assert!(*elapsed_ns > 0);
                    Some(*iter)
                }
                _ => None,
            })
            .collect();
        assert_eq!(iters, vec![0, 1], "{bench}");
        let stats = events.iter().find_map(|e| match e {
            Event::Summary { bench: b, stats } if b == bench => Some(stats),
            _ => None,
        });
        let stats = stats.unwrap_or_else(|| panic!("{bench}: no summary"));
        assert_eq!(stats.latency.is_some(), latencies, "{bench}");
    }
}

#[test]
fn multithread_pool_checkout_streams_for_every_core_bench() {
    check_target(
        multithread::spec(),
        &["--rows", "64", "--lookups", "24", "--concurrency", "3"],
        true,
    );
}

#[test]
fn bulk_insert_streams_for_every_core_bench() {
    check_target(
        bulk_insert::spec(),
        &["--rows", "30", "--concurrency", "2"],
        false,
    );
}
