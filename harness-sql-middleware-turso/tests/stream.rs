//! harness-sql-middleware-turso run for real on tiny datasets; every line it writes is parsed
//! with bench-core's reader and checked against the dataset, the catalog and the models of
//! crud_overhead and key_value.

use bench_core::catalog::Harness;
use bench_core::dataset::{lookup_ids, lookup_work};
use bench_core::measure::trace::Phase;
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::testing::check_bench;
use bench_core::workloads::{crud_overhead, key_value, multithread, single_row_lookup};

fn run(args: &[&str], cache: &std::path::Path) -> (Option<i32>, Vec<Event>, String) {
    bench_core::testing::run_runner(
        env!("CARGO_BIN_EXE_harness-sql-middleware-turso"),
        args,
        cache,
    )
}

const BUDGET: &[&str] = bench_core::testing::STREAM_BUDGET;

/// The benches of `target` this harness runs, by the catalog.
fn mine(target: &bench_core::catalog::Target) -> Vec<&'static str> {
    bench_core::testing::benches_of(target, Harness::SqlMiddlewareTurso)
}

/// Runs `args` and checks the stream ends well, with no error.
fn streamed(args: &[&str], cache: &std::path::Path) -> Vec<Event> {
    let mut args = args.to_vec();
    args.extend_from_slice(BUDGET);
    let (code, events, stderr) = run(&args, cache);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(events.last(), Some(&Event::Done));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Error { .. } | Event::Skipped { .. })),
        "{events:?}"
    );
    events
}

#[test]
fn every_lookup_bench_streams_a_valid_sequence_on_the_rows_of_the_spec() {
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "single_row_lookup",
        "--rows",
        "64",
        "--lookups",
        "16",
        "--concurrency",
        "2",
    ];
    let events = streamed(&args, cache.path());
    let Event::Start(start) = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(start.harness, "sql-middleware-turso");
    let benches = mine(single_row_lookup::spec());
    assert_eq!(
        benches,
        [
            "sql-middleware/turso",
            "sql-middleware/turso/pool_acquire",
            "sql-middleware/turso/decode",
            "sql-middleware/turso/param_convert",
        ]
    );
    assert_eq!(start.benches, benches);
    // This harness's own versions: sql-middleware 0.9 on turso 0.6.
    let crates = &start.env.crates;
    assert!(
        crates
            .get(&bench_core::text::Text::from("sql-middleware"))
            .is_some_and(|v| v.raw().starts_with("0.9")),
        "{crates:?}"
    );
    assert!(
        crates
            .get(&bench_core::text::Text::from("turso"))
            .is_some_and(|v| v.raw().starts_with("0.6")),
        "{crates:?}"
    );
    assert!(
        start.env.sqlite.raw().starts_with("turso 0.6"),
        "{:?}",
        start.env.sqlite
    );
    // The dataset built through turso, then found valid by turso.
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
    let ids = lookup_ids(64, single_row_lookup::spec().seed, 16);
    for bench in benches {
        let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.ops, 16, "{bench}");
        let spec = single_row_lookup::spec().spec(bench).unwrap();
        let expected = match spec.phase {
            None | Some(Phase::Decode) => lookup_work(&ids),
            Some(Phase::Checkout) => 16,
            Some(Phase::Bind) => ids.iter().map(|&i| i as u64).sum(),
            other => unreachable!("no {other:?} micro-bench"),
        };
        assert_eq!(c.work.per_pass, expected, "{bench}: {}", c.work.what);
        // What turso takes of the settings, read back; what it has not, said so.
        assert_eq!(c.sqlite["journal_mode"], "wal", "{bench}");
        assert_eq!(c.sqlite["synchronous"], "normal", "{bench}");
        assert_eq!(c.sqlite["mutex"], bench_core::settings::NOT_APPLICABLE);
        assert!(c.phases.is_empty(), "{bench}: the crate hides its phases");
    }
    // Memory counted through turso's allocator (mimalloc, its calls wrapped at link time):
    // the run says so, and the decode micro-bench reads the one String a row's decode makes,
    // as the same bench does on every other driver.
    let said = &start.env.settings[&bench_core::text::Text::from("memory")];
    assert!(said.raw().contains("through mimalloc"), "{said:?}");
    let memory = |bench: &str| {
        events
            .iter()
            .find_map(|e| match e {
                Event::Summary { bench: b, stats } if b == bench => stats.memory,
                _ => None,
            })
            .unwrap_or_else(|| panic!("no memory for {bench}"))
    };
    let decode = memory("sql-middleware/turso/decode");
    assert!((decode.allocs_per_op - 1.0).abs() < 0.01, "{decode:?}");
    assert!(decode.bytes_per_op > 0.0, "{decode:?}");
    let lookup = memory("sql-middleware/turso");
    assert!(
        lookup.allocs_per_op > 1.0 && lookup.peak_bytes > 0,
        "{lookup:?}"
    );
    // A second run finds the file valid and reuses it.
    let again = streamed(&args, cache.path());
    assert!(again.iter().any(|e| matches!(
        e,
        Event::Dataset {
            status: DatasetStatus::Reused,
            ..
        }
    )));
}

#[test]
fn multithread_and_bulk_stream_valid_events() {
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
            vec![
                (
                    "crate_parallel_select/sql-middleware/turso",
                    lookup_work(&ids),
                ),
                ("crate_pool_checkout/sql-middleware/turso", 24),
            ],
        ),
        (
            vec!["bulk_insert", "--rows", "30"],
            vec![("sql-middleware/turso", 30)],
        ),
        (
            vec!["bulk_insert", "--rows", "30", "--knob", "method=batch_text"],
            vec![("sql-middleware/turso", 30)],
        ),
    ] {
        let events = streamed(&args, cache.path());
        let Event::Start(start) = &events[0] else {
            panic!("{:?}", events[0])
        };
        let target = bench_core::workloads::find(args[0]).unwrap();
        assert_eq!(start.benches, mine(target), "{}", args[0]);
        bench_core::testing::check_passes(&events, &benches);
    }
    // The scratch file went with the bench.
    let left = bench_core::testing::left_in(cache.path(), "bulk-");
    assert!(left.is_empty(), "{left:?}");
}

/// Every crud_overhead case, in a file and in turso's memory: each does the work the model of
/// the table gives (the answers of its queries checked by the plan as they come).
#[test]
fn crud_overhead_does_the_models_work_in_files_and_memory() {
    use crud_overhead::plan;
    let spec = crud_overhead::spec();
    let steps = plan::steps(60, 10, spec.seed);
    let sweep = plan::sweep_rows(30, spec.seed);
    for storage in ["file", "memory"] {
        let cache = tempfile::tempdir().unwrap();
        let knob = format!("storage={storage}");
        let args = [
            "crud_overhead",
            "--knob",
            "ops=60",
            "--knob",
            "batch=10",
            "--knob",
            "sweep_rows=30",
            "--knob",
            &knob,
        ];
        let events = streamed(&args, cache.path());
        let benches = mine(spec);
        assert_eq!(benches.len(), 16, "every case");
        for bench in benches {
            let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
            let case = crud_overhead::case_of(spec.spec(bench).unwrap()).unwrap();
            assert_eq!(
                (c.ops, c.work.per_pass),
                plan::expected(case, &steps, &sweep),
                "{storage} {bench}"
            );
        }
    }
}

/// Every key_value case, in a file and in turso's memory: each does the work its data gives
/// (values compared byte for byte, expired keys absent).
#[test]
fn key_value_does_each_cases_work_in_files_and_memory() {
    use key_value::plan;
    let spec = key_value::spec();
    for storage in ["file", "memory"] {
        let cache = tempfile::tempdir().unwrap();
        let knob = format!("storage={storage}");
        let args = ["key_value", "--knob", "keys=20", "--knob", &knob];
        let events = streamed(&args, cache.path());
        let benches = mine(spec);
        assert_eq!(benches.len(), 18, "every case");
        for bench in benches {
            let c = check_bench(&events, bench).unwrap_or_else(|e| panic!("{e}"));
            let case = key_value::case_of(spec.spec(bench).unwrap()).unwrap();
            let d = plan::Data::new(case, 20, spec.seed);
            assert_eq!(
                (c.ops, c.work.per_pass),
                (d.ops(case), d.work(case)),
                "{storage} {bench}"
            );
        }
    }
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
