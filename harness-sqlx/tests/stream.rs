//! harness-sqlx run for real on tiny datasets; every line it writes is parsed with bench-core's
//! reader and checked.

use std::process::Command;

use bench_core::catalog::Harness;
use bench_core::dataset::{BenchRow, DatasetKey, row};
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::testing::run_to_end;
use bench_core::workloads::single_row_lookup;

fn run(args: &[&str], cache: &std::path::Path) -> (Option<i32>, Vec<Event>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness-sqlx"));
    cmd.args(args).arg("--cache-dir").arg(cache);
    let out = run_to_end(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
    (out.code, out.events, out.stderr)
}

const TINY: &[&str] = &[
    "single_row_lookup",
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
    "--trace",
];

#[test]
fn every_sqlx_bench_streams_a_valid_sequence() {
    let cache = tempfile::tempdir().unwrap();
    let (code, events, stderr) = run(TINY, cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    let Event::Start(start) = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(start.harness, "sqlx");
    let mine: Vec<&str> = single_row_lookup::spec()
        .benches
        .iter()
        .filter(|b| b.harness() == Harness::Sqlx)
        .map(|b| b.name)
        .collect();
    assert_eq!(start.benches, mine);
    assert!(
        start
            .env
            .crates
            .get("sqlx")
            .is_some_and(|v| v.starts_with("0.9")),
        "{:?}",
        start.env.crates
    );
    assert!(start.env.sqlite.starts_with('3'), "{}", start.env.sqlite);
    assert!(
        start.env.settings["sqlx pool"].contains("max_connections=2"),
        "{:?}",
        start.env.settings
    );
    assert!(matches!(
        events[1],
        Event::Dataset {
            status: DatasetStatus::Building,
            ..
        }
    ));
    assert!(matches!(
        events[2],
        Event::Dataset {
            status: DatasetStatus::Built,
            ..
        }
    ));
    assert_eq!(events.last(), Some(&Event::Done));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Error { .. })),
        "{events:?}"
    );
    for bench in mine {
        let samples = events
            .iter()
            .filter(|e| matches!(e, Event::Sample { bench: b, ops: 16, .. } if b == bench))
            .count();
        assert!((2..=3).contains(&samples), "{bench}: {samples} samples");
        let summary = events.iter().find_map(|e| match e {
            Event::Summary { bench: b, stats } if b == bench => Some(stats),
            _ => None,
        });
        assert_eq!(summary.expect("a summary").samples, samples, "{bench}");
        let phases: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Phases {
                    bench: b,
                    ns_per_op,
                    ..
                } if b == bench => Some(ns_per_op),
                _ => None,
            })
            .collect();
        if bench == "sqlx" {
            let names: Vec<_> = phases[0].keys().map(|p| p.label()).collect();
            assert_eq!(
                names,
                ["checkout", "bind", "execute+marshal", "decode"],
                "sqlx has no separate prepare or dispatch"
            );
        } else {
            assert!(phases.is_empty(), "{bench}");
        }
    }
}

#[test]
fn the_sqlx_built_dataset_holds_exactly_the_spec_rows() {
    let cache = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(
        &[
            "single_row_lookup",
            "--bench",
            "sqlx/decode",
            "--rows",
            "300",
            "--time",
            "0",
            "--warmup",
            "0",
            "--samples",
            "1",
            "--min-samples",
            "1",
        ],
        cache.path(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let key = DatasetKey {
        workload: "single_row_lookup".into(),
        rows: 300,
        seed: single_row_lookup::spec().seed,
    };
    let path = key.path_in(cache.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rows: Vec<BenchRow> = rt.block_on(async {
        use sqlx::{ConnectOptions, Row};
        let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .connect()
            .await
            .unwrap();
        let rows = sqlx::query("SELECT id, name, score, active FROM test ORDER BY id")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        rows.iter()
            .map(|r| BenchRow {
                id: r.get(0),
                name: r.get(1),
                score: r.get(2),
                active: r.get(3),
            })
            .collect()
    });
    assert_eq!(rows, (1..=300).map(row).collect::<Vec<_>>());
    // A garbage file is replaced, not trusted.
    std::fs::write(&path, vec![7u8; 4096]).unwrap();
    let (code, events, stderr) = run(
        &[
            "single_row_lookup",
            "--bench",
            "sqlx/decode",
            "--rows",
            "300",
            "--time",
            "0",
            "--warmup",
            "0",
            "--samples",
            "1",
            "--min-samples",
            "1",
        ],
        cache.path(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Dataset {
            status: DatasetStatus::Built,
            ..
        }
    )));
}

#[test]
fn bad_knobs_get_the_same_errors_as_bench_core() {
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
            vec!["single_row_lookup", "--knob", "sqlx_statement_cache=0"],
            "invalid value 0 for knob sqlx_statement_cache: out of range (allowed: 1..=100000)",
        ),
        (
            vec!["single_row_lookup", "--bench", "rusqlite"],
            "bench \"rusqlite\" is run by the Core harness, not this one",
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

#[test]
fn multithread_and_bulk_mirrors_stream_valid_events() {
    let cache = tempfile::tempdir().unwrap();
    for (args, benches) in [
        (
            vec![
                "multithread_pool_checkout",
                "--rows",
                "64",
                "--lookups",
                "24",
                "--concurrency",
                "3",
            ],
            vec!["sqlx_parallel_select", "sqlx_pool_checkout"],
        ),
        (
            vec!["bulk_insert", "--rows", "30", "--bench", "sqlx_sqlite"],
            vec!["sqlx_sqlite"],
        ),
    ] {
        let mut args = args;
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
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(events.last(), Some(&Event::Done));
        for bench in benches {
            let samples = events
                .iter()
                .filter(|e| matches!(e, Event::Sample { bench: b, .. } if b == bench))
                .count();
            assert_eq!(samples, 2, "{bench}: {events:?}");
            assert!(
                events
                    .iter()
                    .any(|e| matches!(e, Event::Summary { bench: b, .. } if b == bench)),
                "{bench}"
            );
        }
    }
}
