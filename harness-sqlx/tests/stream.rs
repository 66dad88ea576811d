//! harness-sqlx run for real on tiny datasets; every line it writes is parsed with bench-core's
//! reader and checked.

use bench_core::catalog::Harness;
use bench_core::dataset::{BenchRow, DatasetKey, lookup_ids, lookup_work, row};
use bench_core::measure::trace::Phase;
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::settings::SqliteSettings;
use bench_core::testing::check_bench;
use bench_core::workloads::single_row_lookup;

fn run(args: &[&str], cache: &std::path::Path) -> (Option<i32>, Vec<Event>, String) {
    bench_core::testing::run_runner(env!("CARGO_BIN_EXE_harness-sqlx"), args, cache)
}

/// single_row_lookup traced, on a tiny dataset and the stream tests' budget (2 or 3 samples).
fn tiny() -> Vec<&'static str> {
    let target = [
        "single_row_lookup",
        "--rows",
        "64",
        "--lookups",
        "16",
        "--concurrency",
        "2",
        "--trace",
    ];
    [&target[..], bench_core::testing::STREAM_BUDGET].concat()
}

#[test]
fn every_sqlx_bench_streams_a_valid_sequence() {
    let cache = tempfile::tempdir().unwrap();
    let (code, events, stderr) = run(&tiny(), cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    let Event::Start(start) = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(start.harness, "sqlx");
    let mine: Vec<&str> = bench_core::testing::benches_of(single_row_lookup::spec(), Harness::Sqlx);
    assert_eq!(start.benches, mine);
    assert!(
        start
            .env
            .crates
            .get(&bench_core::text::Text::from("sqlx"))
            .is_some_and(|v| v.raw().starts_with("0.9")),
        "{:?}",
        start.env.crates
    );
    assert!(
        start.env.sqlite.raw().starts_with('3'),
        "{:?}",
        start.env.sqlite
    );
    assert!(
        start.env.settings[&bench_core::text::Text::from("sqlx pool")]
            .raw()
            .contains("max_connections=2"),
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
    let ids = lookup_ids(64, single_row_lookup::spec().seed, 16);
    let asked = SqliteSettings::default().expected();
    for bench in mine {
        let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.ops, 16, "{bench}");
        assert!((2..=3).contains(&c.passes.len()), "{bench}: {:?}", c.passes);
        // The work of a pass, computed here from the dataset.
        let spec = single_row_lookup::spec().spec(bench).unwrap();
        let expected = match spec.phase {
            None => lookup_work(&ids),
            Some(Phase::Checkout) => 16,
            Some(Phase::Prepare) => 64,
            Some(Phase::ExecuteMarshal) => ids.iter().map(|i| *i as u64 + 1).sum(),
            Some(Phase::Decode) => 16 * row(ids[0]).checksum(),
            Some(Phase::Bind) => ids.iter().map(|i| *i as u64).sum(),
            Some(Phase::Dispatch) => unreachable!("sqlx has no dispatch micro-bench"),
        };
        assert_eq!(c.work.per_pass, expected, "{bench}: {}", c.work.what);
        assert_eq!(c.sqlite, asked, "{bench}: sqlx matches every setting");
        let phases = c.phases;
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
    let key = DatasetKey::new("single_row_lookup", 300, single_row_lookup::spec().seed);
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
            "bench \"rusqlite\" is run by the core harness, not this one",
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
            vec![
                (
                    "sqlx_parallel_select",
                    lookup_work(&lookup_ids(
                        64,
                        bench_core::workloads::multithread::spec().seed,
                        24,
                    )),
                ),
                ("sqlx_pool_checkout", 24),
            ],
        ),
        (
            vec!["bulk_insert", "--rows", "30", "--bench", "sqlx_sqlite"],
            vec![("sqlx_sqlite", 30)],
        ),
        (
            vec![
                "bulk_insert",
                "--rows",
                "30",
                "--bench",
                "sqlx_sqlite",
                "--knob",
                "method=batch_text",
            ],
            vec![("sqlx_sqlite", 30)],
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
        for (bench, per_pass) in benches {
            let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(c.passes.len(), 2, "{bench}");
            assert_eq!(c.work.per_pass, per_pass, "{bench}: {}", c.work.what);
        }
    }
}
