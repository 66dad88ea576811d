//! The raw lookup loops of `single_row_lookup` (rusqlite and turso, statement prepared once),
//! measured by Criterion on the same dataset and the same shuffled ids, so benchscope's figures
//! can be checked against another tool's:
//!
//! ```sh
//! cargo bench -p bench-core --bench lookup
//! ```
//!
//! One iteration looks every id up once (`BENCH_LOOKUPS`, default 20000, over `BENCH_ROWS`
//! rows, default 20000); Criterion's time per iteration divided by the ids is the time per
//! lookup, which compares with `benchscope run single_row_lookup --rows 20000 --lookups 20000
//! --bench rusqlite --bench turso_raw`.

use std::hint::black_box;

use bench_core::backends::{raw, turso as t};
use bench_core::dataset::{DatasetKey, lookup_ids, lookup_work};
use bench_core::on_rusqlite::ensure;
use bench_core::settings::SqliteSettings;
use bench_core::workloads::single_row_lookup;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn count(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn lookups(c: &mut Criterion) {
    let rows = count("BENCH_ROWS", 20_000);
    let n = count("BENCH_LOOKUPS", 20_000);
    let seed = single_row_lookup::spec().seed;
    let dir = std::env::var_os("BENCHSCOPE_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(bench_core::dataset::default_cache_dir);
    let key = DatasetKey::new(single_row_lookup::NAME, rows, seed);
    let path = ensure(&dir, &key, &mut |_| {}).expect("dataset").path;
    let ids = lookup_ids(rows, seed, n);
    let work = lookup_work(&ids);

    if std::env::var_os("BENCH_SPARE_THREAD").is_some() {
        // A parked thread: the process is no longer single-threaded.
        std::thread::spawn(std::thread::park);
    }
    let mut group = c.benchmark_group("single_row_lookup");
    group.throughput(Throughput::Elements(ids.len() as u64));

    let conn = raw::open(&path, &SqliteSettings::default()).expect("open");
    let mut stmt = raw::prepare(&conn).expect("prepare");
    group.bench_function("rusqlite", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for &id in &ids {
                sum = sum.wrapping_add(raw::lookup(&mut stmt, black_box(id)).unwrap().checksum());
            }
            assert_eq!(sum, work);
        })
    });

    // The same loop as the runner's, with its one timer read and histogram record per lookup
    // (what gives benchscope its per-lookup percentiles): the difference to the loop above is
    // the cost of measuring each lookup.
    let mut hist = bench_core::measure::stats::LatencyHistogram::new();
    group.bench_function("rusqlite_with_latencies", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            let mut prev = std::time::Instant::now();
            for &id in &ids {
                sum = sum.wrapping_add(raw::lookup(&mut stmt, black_box(id)).unwrap().checksum());
                let t = std::time::Instant::now();
                hist.record(t.saturating_duration_since(prev).as_nanos() as u64);
                prev = t;
            }
            assert_eq!(sum, work);
        })
    });

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let db = rt.block_on(t::open(&path)).expect("turso");
    let tconn = rt
        .block_on(t::connect(&db, &SqliteSettings::default()))
        .expect("connect");
    let mut tstmt = rt
        .block_on(tconn.prepare(bench_core::dataset::SELECT_BY_ID))
        .expect("prepare");
    group.bench_function("turso_raw", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut sum = 0u64;
                for &id in &ids {
                    sum = sum.wrapping_add(
                        t::lookup(&mut tstmt, black_box(id))
                            .await
                            .unwrap()
                            .checksum(),
                    );
                }
                assert_eq!(sum, work);
            })
        })
    });
    group.finish();
}

criterion_group!(benches, lookups);
criterion_main!(benches);
