//! harness-async-sqlite run for real on tiny datasets; every line it writes is parsed with
//! bench-core's reader and checked against the dataset and the catalog.

use bench_core::catalog::Harness;
use bench_core::dataset::{DatasetKey, lookup_ids, lookup_work, row};
use bench_core::measure::trace::Phase;
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::settings::SqliteSettings;
use bench_core::testing::check_bench;
use bench_core::workloads::{multithread, single_row_lookup};

fn run(args: &[&str], cache: &std::path::Path) -> (Option<i32>, Vec<Event>, String) {
    bench_core::testing::run_runner(env!("CARGO_BIN_EXE_harness-async-sqlite"), args, cache)
}

const BUDGET: &[&str] = bench_core::testing::STREAM_BUDGET;

/// The benches of `target` this harness runs, by the catalog.
fn mine(target: &bench_core::catalog::Target) -> Vec<&'static str> {
    bench_core::testing::benches_of(target, Harness::AsyncSqlite)
}

#[test]
fn every_lookup_bench_streams_a_valid_sequence_on_the_rows_of_the_spec() {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec![
        "single_row_lookup",
        "--rows",
        "64",
        "--lookups",
        "16",
        "--concurrency",
        "2",
    ];
    args.extend_from_slice(BUDGET);
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    let Event::Start(start) = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(start.harness, "async-sqlite");
    let benches = mine(single_row_lookup::spec());
    assert_eq!(benches, ["async-sqlite", "async-sqlite/dispatch"]);
    assert_eq!(start.benches, benches);
    // This harness's own versions: async-sqlite 0.7 on rusqlite 0.41.
    let crates = &start.env.crates;
    assert!(
        crates
            .get(&bench_core::text::Text::from("async-sqlite"))
            .is_some_and(|v| v.raw().starts_with("0.7")),
        "{crates:?}"
    );
    assert!(
        crates
            .get(&bench_core::text::Text::from("rusqlite"))
            .is_some_and(|v| v.raw().starts_with("0.41")),
        "{crates:?}"
    );
    assert!(
        start.env.sqlite.raw().starts_with('3'),
        "{:?}",
        start.env.sqlite
    );
    assert_eq!(
        start.env.settings[&bench_core::text::Text::from("async-sqlite pool")],
        "num_conns=2"
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
    for bench in benches {
        let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.ops, 16, "{bench}");
        assert!((2..=3).contains(&c.passes.len()), "{bench}: {:?}", c.passes);
        let spec = single_row_lookup::spec().spec(bench).unwrap();
        let expected = match spec.phase {
            None => lookup_work(&ids),
            // is_autocommit, once per id: no transaction is open.
            Some(Phase::Dispatch) => 16,
            other => unreachable!("async-sqlite has no {other:?} micro-bench"),
        };
        assert_eq!(c.work.per_pass, expected, "{bench}: {}", c.work.what);
        assert_eq!(c.sqlite, asked, "{bench}: every setting as asked");
        assert!(c.phases.is_empty(), "{bench}: the crate hides its phases");
    }
    // The dataset async-sqlite's rusqlite built holds exactly the spec's rows.
    let key = DatasetKey::new("single_row_lookup", 64, single_row_lookup::spec().seed);
    let conn = rusqlite::Connection::open(key.path_in(cache.path())).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, name, score, active FROM test ORDER BY id")
        .unwrap();
    let rows: Vec<_> = stmt
        .query_map([], |r| {
            Ok(bench_core::dataset::BenchRow {
                id: r.get(0)?,
                name: r.get(1)?,
                score: r.get(2)?,
                active: r.get(3)?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, (1..=64).map(row).collect::<Vec<_>>());
}

#[test]
fn multithread_and_bulk_stream_valid_events_and_write_the_rows() {
    let cache = tempfile::tempdir().unwrap();
    let ids = lookup_ids(64, multithread::spec().seed, 24);
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
            vec![("crate_parallel_select/async-sqlite", lookup_work(&ids))],
        ),
        (
            vec!["bulk_insert", "--rows", "30"],
            vec![("async-sqlite", 30)],
        ),
        (
            vec!["bulk_insert", "--rows", "30", "--knob", "method=batch_text"],
            vec![("async-sqlite", 30)],
        ),
    ] {
        let mut args = args;
        args.extend_from_slice(BUDGET);
        let (code, events, stderr) = run(&args, cache.path());
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(events.last(), Some(&Event::Done));
        let Event::Start(start) = &events[0] else {
            panic!("{:?}", events[0])
        };
        let target = bench_core::workloads::find(args[0]).unwrap();
        assert_eq!(start.benches, mine(target), "{}", args[0]);
        bench_core::testing::check_passes(&events, &benches);
    }
    // The rows themselves are bench-core's shared rusqlite code (on_rusqlite::bulk_insert_all,
    // checked there against the spec); here, that the scratch file went with the bench.
    let left = bench_core::testing::left_in(cache.path(), "bulk-");
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_bench_of_another_harness_is_refused_with_its_name() {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec!["single_row_lookup", "--bench", "rusqlite"];
    args.extend_from_slice(BUDGET);
    let (code, _, stderr) = run(&args, cache.path());
    assert_ne!(code, Some(0));
    assert!(stderr.contains("rusqlite"), "{stderr}");
}

/// async_contention through async-sqlite: bench-core's scenario (its databases, writers,
/// readers, canary and work check), each task on a `Client` of its own; its windows stream
/// in order and every write its writer counted is in its database.
#[test]
fn async_contention_runs_its_scenario_through_clients_and_keeps_the_writes() {
    use bench_core::workloads::async_contention;
    let cache = tempfile::tempdir().unwrap();
    let benches = mine(async_contention::spec());
    assert_eq!(benches, ["async-sqlite"]);
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
    ];
    let (code, events, stderr) = run(&args, cache.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(events.last(), Some(&Event::Done));
    let Event::Start(start) = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(start.benches, benches);
    let ticks: Vec<f64> = events
        .iter()
        .filter_map(|e| match e {
            Event::Tick { window, .. } => Some(window.t_s),
            _ => None,
        })
        .collect();
    assert!(
        ticks.len() >= 2 && ticks.windows(2).all(|w| w[0] <= w[1]),
        "{ticks:?}"
    );
    let stats = events
        .iter()
        .find_map(|e| match e {
            Event::Scenario { bench, stats } if bench == "async-sqlite" => Some(stats),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no scenario: {events:?}"));
    assert!(stats.elapsed_s >= 2.0 && stats.elapsed_s < 3.0, "{stats:?}");
    assert!(stats.reads > 0 && stats.writes > 0, "{stats:?}");
    assert!(stats.read_latency.is_some_and(|l| l.count == stats.reads));
    // 2 writers, one write each per 50 ms and a little: about 70 in 2 s, every one kept (a
    // thread per connection leaves the runtime's threads free).
    assert!(
        stats.writes_expected >= 60.0 && stats.writes_expected <= 80.0,
        "{stats:?}"
    );
    assert!(stats.write_completion > 0.5, "{stats:?}");
    let left = bench_core::testing::left_in(cache.path(), "async-contention-");
    assert!(
        left.is_empty(),
        "the scenario's folder went with it: {left:?}"
    );
}
