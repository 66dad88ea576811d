//! Fixtures the model, screen and export tests share: a run's start event and the events of a
//! finished bench, as a runner writes them.

use bench_core::knobs::Knobs;
use bench_core::measure::cost::{CostSummary, SampleCost};
use bench_core::measure::memory::{MemorySummary, SampleMemory};
use bench_core::measure::stats::{LatencyHistogram, summarize};
use bench_core::protocol::{Budget, Event, RunEnv, Start};

/// The budget the fixtures' runs declare.
pub const BUDGET: Budget = Budget {
    warmup_s: 0.3,
    time_s: 2.0,
    max_samples: 100,
    min_samples: 10,
    paired: false,
    group: None,
    processes: None,
    times: std::collections::BTreeMap::new(),
};

/// A core harness's start event for `single_row_lookup`, release or debug.
pub fn start(knobs: &Knobs, trace: bool, debug: bool, budget: Budget) -> Event {
    Event::Start(Start {
        run: "fixed".into(),
        target: "single_row_lookup".into(),
        benches: vec![],
        harness: "core".into(),
        knobs: knobs.clone(),
        seed: 0x5EED_1001,
        trace,
        budget,
        env: RunEnv {
            profile: if debug { "debug" } else { "release" }.into(),
            sqlite: "3.53.2".into(),
            crates: [("rusqlite".into(), "0.40.2".into())].into(),
            cpu: "Test CPU".into(),
            cpus: None,
            cores: 2,
            os: "linux x86_64".into(),
            timer_ns: 19.5,
            settings: [("pool".into(), "max_size=8".into())].into(),
        },
    })
}

/// Deterministic samples around `median`, within about ±1.5%.
pub fn samples(median: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| median * (1.0 + ((i * 7919) % 13) as f64 / 400.0 - 0.015))
        .collect()
}

/// A finished bench: `bench_start`, one `sample` per value (ns/op over `ops` operations) and
/// the `summary`; with `latency_scale`, per-operation latencies of each sample times the scale.
pub fn bench_events(
    bench: &str,
    backend: &str,
    ops: u64,
    samples: &[f64],
    latency_scale: Option<f64>,
) -> Vec<Event> {
    let mut events = vec![Event::BenchStart {
        bench: bench.into(),
        backend: backend.into(),
        strategy: bench.strip_prefix("middleware/").map(str::to_string),
        ops,
        work: None,
        sqlite: Default::default(),
    }];
    // What the process spends: deterministic, different per bench (1, 1.5 or 2 cores busy),
    // one voluntary switch per 100 operations.
    let busy = 1.0 + (bench.len() % 3) as f64 * 0.5;
    let mut costs = Vec::new();
    // What it allocates: deterministic, growing with the name (rusqlite 8 a lookup, 64 B each;
    // middleware/spin 16), nothing kept.
    let allocs = bench.len() as u64;
    let mut memory = Vec::new();
    for (i, x) in samples.iter().enumerate() {
        let wall_ns = (x * ops as f64) as u64;
        let cost = SampleCost {
            wall_ns,
            cpu_ns: (wall_ns as f64 * busy) as u64,
            sys_ns: wall_ns / 4,
            voluntary: ops / 100,
            involuntary: 0,
        };
        costs.push((ops, wall_ns, cost));
        let m = SampleMemory {
            allocs: allocs * ops,
            reallocs: ops / 10,
            bytes: allocs * 64 * ops,
            peak: allocs * 64 * 4,
            retained: 0,
        };
        memory.push((ops, m));
        events.push(Event::Sample {
            bench: bench.into(),
            iter: i as u64,
            ops,
            elapsed_ns: wall_ns,
            work: None,
            cost: Some(cost),
            memory: Some(m),
        });
    }
    let latency = latency_scale.and_then(|scale| {
        let mut h = LatencyHistogram::new();
        samples.iter().for_each(|x| h.record((x * scale) as u64));
        h.percentiles()
    });
    let mut stats = summarize(samples, latency).expect("at least one sample");
    stats.cost = CostSummary::of(&costs);
    stats.memory = MemorySummary::of(&memory);
    events.push(Event::Summary {
        bench: bench.into(),
        stats,
    });
    events
}

/// A finished scenario bench: `bench_start`, one `tick` a second for `seconds`, and the
/// `scenario` figures, from its reads a second, the share of writes kept and the canary's.
pub fn scenario_events(
    bench: &str,
    reads_per_s: f64,
    writes_kept: f64,
    canary: f64,
    seconds: u64,
) -> Vec<Event> {
    use bench_core::measure::scenario::{ScenarioStats, Window};
    use bench_core::measure::stats::Percentiles;
    let latency = |scale: f64| Percentiles {
        count: (reads_per_s * scale) as u64,
        p50: (3_000_000.0 / canary.max(0.1)) as u64,
        p90: (5_000_000.0 / canary.max(0.1)) as u64,
        p99: (8_000_000.0 / canary.max(0.1)) as u64,
        p999: (12_000_000.0 / canary.max(0.1)) as u64,
        max: (20_000_000.0 / canary.max(0.1)) as u64,
    };
    let mut events = vec![Event::BenchStart {
        bench: bench.into(),
        backend: "deadpool-sqlite".into(),
        strategy: Some(bench.into()),
        ops: 1,
        work: None,
        sqlite: Default::default(),
    }];
    for t in 1..=seconds {
        let ramp = 0.8 + 0.2 * (t % 3) as f64 / 2.0;
        events.push(Event::Tick {
            bench: bench.into(),
            window: Window {
                t_s: t as f64,
                reads: (reads_per_s * ramp) as u64,
                reads_per_s: reads_per_s * ramp,
                read_latency: (reads_per_s > 0.0).then(|| latency(ramp)),
                writes: (10.0 * writes_kept) as u64,
                write_completion: writes_kept,
                canary_ratio: canary,
                canary_worst_late_ns: (10_000_000.0 / canary.max(0.01)) as u64,
            },
        });
    }
    let reads = (reads_per_s * seconds as f64) as u64;
    events.push(Event::Scenario {
        bench: bench.into(),
        stats: ScenarioStats {
            elapsed_s: seconds as f64,
            reads,
            reads_per_s,
            read_latency: (reads > 0).then(|| latency(seconds as f64)),
            read_mean_ns: 3_500_000.0,
            writes: (10.0 * seconds as f64 * writes_kept) as u64,
            writes_expected: 10.0 * seconds as f64,
            write_completion: writes_kept,
            canary_ticks: (100.0 * seconds as f64 * canary) as u64,
            canary_expected: 100.0 * seconds as f64,
            canary_ratio: canary,
            canary_worst_late_ns: (10_000_000.0 / canary.max(0.01)) as u64,
            cpu_ns: 1_000_000_000,
            cpu_per_read_ns: if reads > 0 { 1e9 / reads as f64 } else { 0.0 },
        },
    });
    events
}

/// A finished crud_overhead run: rusqlite and two other backends on insert, select and
/// select_cached (latencies recorded), and the sweep's batch 1, batch 10 and prepared benches.
pub fn crud_run() -> bench_core::protocol::results::RunRecord {
    let mut knobs = Knobs::default();
    knobs.set("ops", 1000u64);
    knobs.set("sweep_rows", 1000u64);
    let mut r = bench_core::protocol::results::RunRecord::default();
    let mut st = start(&knobs, false, false, BUDGET);
    if let Event::Start(s) = &mut st {
        s.target = "crud_overhead".into();
    }
    r.apply(st);
    for (backend, label, factor) in [
        ("rusqlite", "rusqlite", 1.0),
        ("middleware/spin", "rusqlite worker pool", 1.6),
        ("turso", "turso", 3.2),
        ("sqlx_sqlite", "sqlx-sqlite", 24.0),
    ] {
        for (op, ops, ns) in [
            ("insert", 410, 1500.0),
            ("select", 200, 11000.0),
            ("select_cached", 100, 9000.0),
            ("select_first", 100, 27000.0),
        ] {
            let name = format!("{op}/{backend}");
            for e in bench_events(&name, label, ops, &samples(ns * factor, 12), Some(1.3)) {
                r.apply(e);
            }
        }
        for (case, ns) in [
            ("batch_1", 2000.0),
            ("batch_10", 400.0),
            ("prepared", 600.0),
        ] {
            let name = format!("{case}/{backend}");
            let ns = ns * factor.sqrt();
            for e in bench_events(&name, label, 1000, &samples(ns, 12), None) {
                r.apply(e);
            }
        }
    }
    r.apply(Event::Done);
    r
}

/// A finished key_value run: two backends on a single get, a bulk put and concurrent reads
/// with 1 and 2 tasks.
pub fn kv_run() -> bench_core::protocol::results::RunRecord {
    let mut knobs = Knobs::default();
    knobs.set("keys", 1000u64);
    let mut r = bench_core::protocol::results::RunRecord::default();
    let mut st = start(&knobs, false, false, BUDGET);
    if let Event::Start(s) = &mut st {
        s.target = "key_value".into();
    }
    r.apply(st);
    for (backend, label, get, bulk, c1, c2) in [
        ("memory", "in-memory HashMap", 180.0, 900.0, 170.0, 95.0),
        ("rusqlite", "rusqlite", 2400.0, 3100.0, 2300.0, 1500.0),
    ] {
        for (case, ns, lat) in [
            ("single_get_100b", get, Some(1.2)),
            ("bulk_put", bulk, None),
            ("concurrent_reads_1", c1, None),
            ("concurrent_reads_2", c2, None),
        ] {
            let name = format!("{case}/{backend}");
            for e in bench_events(&name, label, 1000, &samples(ns, 12), lat) {
                r.apply(e);
            }
        }
    }
    r.apply(Event::Done);
    r
}

/// The catalog keys that mark the first bench (rusqlite) and the sqlx bench and run them:
/// a run whose sqlx bench waits for its harness.
pub fn keys_to_run_rusqlite_and_sqlx(state: &crate::model::State) -> Vec<crate::model::keys::Key> {
    use crate::model::keys::Key;
    let sqlx = state
        .catalog_benches()
        .iter()
        .position(|b| b.name == "sqlx")
        .expect("the catalog has sqlx");
    let mut keys = vec![Key::Char(' ')];
    keys.extend(std::iter::repeat_n(Key::Down, sqlx - 1));
    keys.extend([Key::Char(' '), Key::Enter]);
    keys
}

/// A finished `target` run of release benches, each `(name, median ns)` with 12 samples.
pub fn finished_record(
    target: &str,
    benches: &[(&str, f64)],
) -> bench_core::protocol::results::RunRecord {
    let mut r = bench_core::protocol::results::RunRecord::default();
    let mut st = start(&Knobs::default(), false, false, BUDGET);
    if let Event::Start(s) = &mut st {
        s.target = target.into();
    }
    r.apply(st);
    for (name, ns) in benches {
        for e in bench_events(name, name, 1000, &samples(*ns, 12), None) {
            r.apply(e);
        }
    }
    r.apply(Event::Done);
    r
}

/// The number of cases of the property tests over inputs from others (`BENCHSCOPE_PROPTEST_CASES`,
/// else `default`): the long runs set it high.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("BENCHSCOPE_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `doc` (a real document) edited as a fuzzer edits one: bytes and runs of it replaced,
/// dropped or repeated, numbers swapped for ones no document should hold (negative, zero,
/// 1e308, huge integers), strings for markup, control characters and multi-byte text.
pub fn mutated(doc: &'static str) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let edit = prop_oneof![
        (any::<usize>(), any::<char>()).prop_map(|(at, c)| (at, 1usize, c.to_string())),
        (any::<usize>(), 0usize..40).prop_map(|(at, n)| (at, n, String::new())),
        (
            any::<usize>(),
            proptest::sample::select(vec![
                "-1",
                "0",
                "-0.0",
                "1e308",
                "-1e308",
                "18446744073709551616",
                "9223372036854775808",
                "NaN",
                "null",
                "true",
                "\"\"",
                "[]",
                "{}",
                "\"<script>alert(1)</script>\"",
                "\"\\u0000\\u001b[2J\"",
                "\"héllo-ünïcödé\"",
                "\"a\\nb\"",
                "1e-320",
                "4.9e-324",
            ])
        )
            .prop_map(|(at, s)| (at, 0usize, s.to_string())),
    ];
    proptest::collection::vec(edit, 1..6).prop_map(move |edits| {
        let mut s = doc.to_string();
        for (at, len, with) in edits {
            // Edits land between characters; the result stays text, as a file read as UTF-8 is.
            let chars: Vec<char> = s.chars().collect();
            let at = at % (chars.len() + 1);
            let end = (at + len).min(chars.len());
            let mut out: String = chars[..at].iter().collect();
            out.push_str(&with);
            out.extend(&chars[end..]);
            s = out;
        }
        s
    })
}
