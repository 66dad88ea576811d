//! The event stream every runner writes on stdout: one JSON object per line, each carrying the
//! protocol's major version `v` (see docs/protocol.md); the environment a run records; and the
//! folding of a stream into the results every front end reads.

pub mod env;
pub mod results;

use std::collections::BTreeMap;
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::knobs::Knobs;
use crate::measure::stats::Summary;
use crate::measure::trace::Phase;

/// Major version of the protocol. A reader refuses any other major version.
pub const VERSION: u32 = 1;

/// The environment a run was measured in. Its words are [`Text`](crate::text::Text): a run read
/// back from a store or a report may hold anything there, and every sink escapes them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunEnv {
    /// "release" or "debug"; a debug build's numbers are not representative.
    pub profile: crate::text::Text,
    /// Version of the SQLite library linked into the runner.
    #[serde(default)]
    pub sqlite: crate::text::Text,
    /// Versions of the crates that matter for the measurement.
    #[serde(default)]
    pub crates: BTreeMap<crate::text::Text, crate::text::Text>,
    #[serde(default)]
    pub cpu: crate::text::Text,
    /// The CPUs this runner may run on (its threads' affinity), where they are fewer than
    /// the machine's (`--cpus`; since 1.8). `cores` counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    #[serde(default)]
    pub cores: usize,
    #[serde(default)]
    pub os: crate::text::Text,
    /// Cost of one timer read in ns, calibrated at start.
    #[serde(default)]
    pub timer_ns: f64,
    /// Harness-specific settings worth recording (pool sizes, statement caches...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<crate::text::Text, crate::text::Text>,
}

impl RunEnv {
    pub fn is_debug(&self) -> bool {
        self.profile.raw() != "release"
    }

    /// What a report says of a runner confined to some of the machine's CPUs.
    pub fn confined(&self) -> Option<String> {
        let cpus = self.cpus.as_ref()?;
        let list = crate::units::cpu_list(cpus);
        Some(format!(
            "runners confined to CPU {list} (--cpus): a query handed to another thread runs when one of these CPUs switches to it{}",
            if cpus.len() == 1 {
                ", not on another CPU woken for it; a worker that spins while it waits (the spin strategies) spins against the thread it waits for"
            } else {
                ""
            }
        ))
    }
}

/// The warning shown wherever a debug build's numbers appear.
pub const DEBUG_WARNING: &str = "debug build: numbers are not representative";

/// Measurement budget of each bench in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Warm-up time per bench, seconds.
    pub warmup_s: f64,
    /// Time budget of the timed samples per bench, seconds.
    pub time_s: f64,
    /// Stop after this many samples even if time remains.
    pub max_samples: usize,
    /// Keep sampling past the time budget until this many samples exist.
    pub min_samples: usize,
    /// Paired rounds (since 1.5): the benches take turns, one sample each per round, in one
    /// runner, and each bench's ratio to the baseline bench is the median of its per-round
    /// ratios (machine drift hits both sides of a pair alike).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paired: bool,
    /// Paired rounds take at most this many benches at a time besides the benches their
    /// ratios are taken against, which take turns in every group that needs them (since
    /// 1.9); each group is set up, measured and dropped before the next. Absent in a paired
    /// run: every bench at once (before 1.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<usize>,
    /// Runner processes each bench was measured in, one after another, each with this
    /// budget and its own warm-up (since 1.10; the front end writes it into the run's start,
    /// a runner is one process). Absent: one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<usize>,
    /// Benches given a time of their own (since 1.11, `--time-for`): the seconds of timed
    /// samples of each, in place of `time_s`. In paired rounds a group's benches take turns
    /// for the sum of their times.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub times: BTreeMap<crate::text::Text, f64>,
}

impl Budget {
    /// The runner processes a run's figures are across: those its start names (absent: one).
    pub fn runner_processes(&self) -> usize {
        self.processes.unwrap_or(1).max(1)
    }

    /// The seconds of timed samples `bench` takes.
    pub fn time_of(&self, bench: &str) -> f64 {
        self.times
            .get(&crate::text::Text::from(bench))
            .copied()
            .unwrap_or(self.time_s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// The run's id (never printed: a Criterion import's holds its folder's names).
    pub run: String,
    pub target: crate::text::Text,
    /// The benches this run will measure, in order.
    pub benches: Vec<String>,
    /// Which harness produced the stream ("core" or "sqlx"; a word, checked when read back).
    #[serde(deserialize_with = "crate::knobs::token")]
    pub harness: String,
    pub knobs: Knobs,
    pub seed: u64,
    pub trace: bool,
    pub budget: Budget,
    pub env: RunEnv,
}

/// What a run read from a Criterion folder names as its harness: the exports say its
/// environment, knobs and budget are not recorded.
pub const CRITERION_HARNESS: &str = "criterion";

impl Start {
    /// Whether the run was read from a Criterion folder rather than measured here.
    pub fn from_criterion(&self) -> bool {
        self.harness == CRITERION_HARNESS
    }

    /// The group size a paired run took turns in, when its runner had more benches beside
    /// the baseline bench than a group holds; `None` when every bench took turns at once (or
    /// the run was not paired).
    pub fn paired_group(&self) -> Option<usize> {
        let g = self.budget.group.filter(|_| self.budget.paired)?;
        (self.benches.len() > g + 1).then_some(g)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Start(Start),
    /// The dataset is being built, or is ready (built or reused from the cache).
    Dataset {
        status: DatasetStatus,
        rows: u64,
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        build_ms: Option<f64>,
    },
    /// A bench starts; `ops` operations make up one pass, and a sample is one or more passes.
    BenchStart {
        bench: String,
        backend: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        strategy: Option<String>,
        ops: u64,
        /// The work check every sample must pass (since 1.1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        work: Option<WorkCheck>,
        /// The SQLite settings this bench's connections run with, read back from them
        /// (since 1.1; absent for backends without SQLite settings).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        sqlite: BTreeMap<String, String>,
    },
    /// One timed sample of `ops` operations.
    Sample {
        bench: String,
        iter: u64,
        ops: u64,
        elapsed_ns: u64,
        /// The sample's work checksum (since 1.1): passes x the bench's `work.per_pass`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        work: Option<u64>,
        /// What the runner process spent during the sample (since 1.3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<crate::measure::cost::SampleCost>,
        /// What the runner process allocated during the sample (since 1.13).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory: Option<crate::measure::memory::SampleMemory>,
    },
    /// Mean ns per operation of each phase over the last window of traced samples.
    Phases {
        bench: String,
        /// Sample index the window ends at (inclusive).
        iter: u64,
        ops: u64,
        ns_per_op: BTreeMap<Phase, f64>,
    },
    Summary {
        bench: String,
        stats: Summary,
    },
    /// One window (about a second) of a running scenario (since 1.2).
    Tick {
        bench: String,
        window: crate::measure::scenario::Window,
    },
    /// A scenario's figures over its measured time (since 1.2).
    Scenario {
        bench: String,
        stats: crate::measure::scenario::ScenarioStats,
    },
    /// A bench's ratio to the baseline bench from paired rounds (since 1.5).
    Paired {
        bench: String,
        against: String,
        ratio: crate::measure::stats::PairedRatio,
    },
    /// Where a profiled bench spent its CPU (since 1.4). Written by the front end that ran
    /// the bench's runner under a profiler, after the runner ended; never by a runner.
    Profile {
        bench: String,
        profile: crate::profile::Profile,
    },
    /// How busy the machine was while the run measured (since 1.4). Written by the front end
    /// around each run, after it ended; never by a runner.
    Machine {
        machine: Machine,
    },
    /// A script bench's own report (since 1.6): transactions, busy errors, each statement's
    /// latency and whether its rows matched the other backends'.
    Script {
        bench: String,
        report: crate::script::report::ScriptReport,
    },
    /// What the bench's statement cache did over its measured samples, where its crate
    /// reports it (since 1.12): statements run, prepared into the cache, run as text.
    Statements {
        bench: String,
        cache: crate::measure::statements::StatementCache,
    },
    /// A bench that could not run here, with the reason (not a failure).
    Skipped {
        bench: String,
        reason: String,
    },
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bench: Option<String>,
        message: String,
    },
    Done,
    /// An event type newer than this reader; ignored.
    #[serde(other)]
    Unknown,
}

impl Event {
    /// The bench an event is about, if it is about one.
    pub fn bench(&self) -> Option<&str> {
        match self {
            Event::BenchStart { bench, .. }
            | Event::Sample { bench, .. }
            | Event::Phases { bench, .. }
            | Event::Summary { bench, .. }
            | Event::Tick { bench, .. }
            | Event::Scenario { bench, .. }
            | Event::Paired { bench, .. }
            | Event::Profile { bench, .. }
            | Event::Script { bench, .. }
            | Event::Statements { bench, .. }
            | Event::Skipped { bench, .. } => Some(bench),
            Event::Error { bench, .. } => bench.as_deref(),
            Event::Start(_) | Event::Dataset { .. } | Event::Machine { .. } | Event::Done => None,
            Event::Unknown => None,
        }
    }
}

/// The machine around one run: its load, what other processes used of its CPU, what the
/// hypervisor took, how long the run waited for another measurement to end, and whether its
/// CPUs were kept out of their idle states.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub cores: usize,
    /// 1-minute load average when the run started and when it ended.
    pub load_start: f64,
    pub load_end: f64,
    /// CPU time of every process but this run's over the run's wall time, in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cores: Option<f64>,
    /// The share of the machine's CPU time the hypervisor took (steal), where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal: Option<f64>,
    /// Seconds the run waited for another benchscope measurement on this machine to end.
    #[serde(default)]
    pub waited_s: f64,
    /// Whether idle CPUs polled or slept while the run measured (since 1.8; absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_idle: Option<CpuIdle>,
}

/// What idle CPUs did while a run measured. A thread that hands a query to another thread
/// wakes that thread; when its CPU sleeps (on a virtual machine: the virtual CPU is stopped
/// until the hypervisor runs it again) the wake-up costs what the sleep state and the host
/// make it cost at that moment. Asked to, the kernel keeps every CPU polling instead (a CPU
/// latency limit of 0 µs, as tuned's latency-performance profile sets): the hand-off then
/// costs what it costs on a machine whose CPUs are never idle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CpuIdle {
    /// Left to sleep, as the machine runs (the default).
    Slept,
    /// Kept polling: the front end held a CPU latency limit of 0 µs while the run measured
    /// (`--keep-cpus-awake`).
    Held,
    /// Asked to keep them polling, but the limit could not be set (why: the device and its
    /// error): they slept.
    Unavailable { why: String },
}

impl CpuIdle {
    /// Whether idle CPUs polled.
    pub fn polled(&self) -> bool {
        *self == CpuIdle::Held
    }

    /// Whether idle CPUs polled, in words.
    pub fn words(polled: bool) -> &'static str {
        if polled {
            "kept polling"
        } else {
            "left to sleep"
        }
    }

    /// How a report names it.
    pub fn describe(&self) -> String {
        match self {
            CpuIdle::Slept => "idle CPUs left to sleep".into(),
            CpuIdle::Held => "idle CPUs kept polling (CPU latency limit 0 µs)".into(),
            CpuIdle::Unavailable { why } => {
                format!("idle CPUs left to sleep: they could not be kept polling ({why})")
            }
        }
    }
}

/// Other processes using more than this many cores on average make a run "busy".
pub const BUSY_CORES: f64 = 0.25;
/// A hypervisor taking more than this share of the CPU makes a run "busy".
pub const BUSY_STEAL: f64 = 0.02;

impl Machine {
    /// What a reader must know about the machine before trusting the run's figures.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(o) = self.others_cores.filter(|o| *o > BUSY_CORES) {
            w.push(format!(
                "the machine was busy: other processes used {o:.2} of its {} cores on average while this run measured; its figures may be slower and noisier",
                self.cores
            ));
        }
        if let Some(s) = self.steal.filter(|s| *s > BUSY_STEAL) {
            w.push(format!(
                "the hypervisor took {:.1}% of the CPU (steal) while this run measured",
                s * 100.0
            ));
        }
        if let Some(CpuIdle::Unavailable { why }) = &self.cpu_idle {
            w.push(format!(
                "idle CPUs could not be kept polling as asked ({why}): they slept, and a bench that hands its query to another thread paid for waking one"
            ));
        }
        w
    }
}

/// What every sample of a bench must have read or written, folded into a checksum per pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkCheck {
    pub per_pass: u64,
    pub what: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetStatus {
    Building,
    Built,
    Reused,
}

#[derive(Serialize)]
struct OutLine<'a> {
    v: u32,
    #[serde(flatten)]
    event: &'a Event,
}

#[derive(Deserialize)]
struct InLine {
    #[serde(flatten)]
    event: Event,
}

/// Encodes one event as a line (without the newline).
pub fn encode(event: &Event) -> String {
    crate::text::json::line(&OutLine { v: VERSION, event })
}

#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("not a protocol line (expected one JSON object): {0}")]
    NotJson(String),
    #[error("protocol line has no version field \"v\"")]
    NoVersion,
    #[error(
        "protocol version {found} is not supported by this reader (it reads version {VERSION}); rebuild the runner and benchscope from the same sources"
    )]
    Version { found: u64 },
    #[error("malformed {kind} event: {reason}")]
    Malformed { kind: String, reason: String },
}

/// Parses one line of a runner's stdout.
pub fn decode(line: &str) -> Result<Event, ProtocolError> {
    // A line of this version that reads as an event: one pass, no intermediate value (the
    // front end reads a line per sample). Anything else takes the long way, which says what
    // is wrong.
    #[derive(Deserialize)]
    struct Version {
        v: Option<u64>,
    }
    if serde_json::from_str::<Version>(line).is_ok_and(|h| h.v == Some(VERSION as u64))
        && let Ok(event) = serde_json::from_str::<Event>(line)
    {
        return Ok(event);
    }
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| ProtocolError::NotJson(e.to_string()))?;
    let obj = value
        .as_object()
        .ok_or_else(|| ProtocolError::NotJson("not an object".into()))?;
    let v = obj
        .get("v")
        .and_then(|v| v.as_u64())
        .ok_or(ProtocolError::NoVersion)?;
    if v != VERSION as u64 {
        return Err(ProtocolError::Version { found: v });
    }
    let kind = obj
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("?")
        .to_string();
    serde_json::from_value::<InLine>(value)
        .map(|l| l.event)
        .map_err(|e| ProtocolError::Malformed {
            kind,
            reason: e.to_string(),
        })
}

/// Writes events to stdout, one flushed line each, so a reader sees them as they happen.
pub struct Emitter<W: Write> {
    out: W,
}

impl<W: Write> Emitter<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }

    pub fn emit(&mut self, event: &Event) -> std::io::Result<()> {
        let mut line = encode(event);
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::summarize;

    fn all_events() -> Vec<Event> {
        let mut knobs = Knobs::default();
        knobs.set("rows", 10);
        vec![
            Event::Start(Start {
                run: "r1".into(),
                target: "single_row_lookup".into(),
                benches: vec!["rusqlite".into()],
                harness: "core".into(),
                knobs,
                seed: 7,
                trace: true,
                budget: Budget {
                    warmup_s: 0.1,
                    time_s: 1.0,
                    max_samples: 10,
                    min_samples: 3,
                    paired: false,
                    group: None,
                    processes: None,
                    times: Default::default(),
                },
                env: RunEnv {
                    profile: "release".into(),
                    timer_ns: 21.5,
                    ..Default::default()
                },
            }),
            Event::Dataset {
                status: DatasetStatus::Built,
                rows: 10,
                path: "/x.db".into(),
                build_ms: Some(1.5),
            },
            Event::BenchStart {
                bench: "rusqlite".into(),
                backend: "rusqlite".into(),
                strategy: None,
                ops: 10,
                work: Some(WorkCheck {
                    per_pass: 99,
                    what: "rows".into(),
                }),
                sqlite: [("journal_mode".to_string(), "wal".to_string())].into(),
            },
            Event::Sample {
                bench: "rusqlite".into(),
                iter: 0,
                ops: 10,
                elapsed_ns: 12345,
                work: Some(99),
                cost: Some(crate::measure::cost::SampleCost {
                    wall_ns: 13000,
                    cpu_ns: 25000,
                    sys_ns: 4000,
                    voluntary: 3,
                    involuntary: 1,
                }),
                memory: Some(crate::measure::memory::SampleMemory {
                    allocs: 40,
                    reallocs: 2,
                    bytes: 2560,
                    peak: 1024,
                    retained: -16,
                }),
            },
            Event::Phases {
                bench: "middleware/spin".into(),
                iter: 4,
                ops: 50,
                ns_per_op: [(Phase::Checkout, 10.5), (Phase::ExecuteMarshal, 900.0)]
                    .into_iter()
                    .collect(),
            },
            Event::Summary {
                bench: "rusqlite".into(),
                stats: summarize(&[1.0, 2.0, 3.0], None).unwrap(),
            },
            Event::Statements {
                bench: "select_cached/diesel".into(),
                cache: crate::measure::statements::StatementCache {
                    by: "diesel's Instrumentation events".into(),
                    run: 4000,
                    prepared: 0,
                    text: 0,
                    ops: 4000,
                },
            },
            Event::Skipped {
                bench: "pg".into(),
                reason: "no URL".into(),
            },
            Event::Error {
                bench: None,
                message: "boom".into(),
            },
            Event::Done,
        ]
    }

    #[test]
    fn round_trip_every_event() {
        for e in all_events() {
            let line = encode(&e);
            assert!(line.starts_with("{\"v\":1,\"type\":"), "{line}");
            assert_eq!(decode(&line).unwrap(), e, "{line}");
        }
    }

    /// The `statements` line docs/src/protocol.md shows is what the runner writes.
    #[test]
    fn the_statements_line_reads_as_documented() {
        let doc = include_str!("../../../docs/src/protocol.md");
        let line = doc
            .lines()
            .find(|l| l.contains(r#""type":"statements""#))
            .expect("the docs show a statements line");
        let e = decode(line).unwrap();
        assert!(all_events().contains(&e), "{e:?}");
        assert_eq!(encode(&e), line);
    }

    #[test]
    fn phases_use_snake_case_names() {
        let line = encode(&all_events()[4]);
        assert!(line.contains("\"execute_marshal\":900.0"), "{line}");
    }

    #[test]
    fn refuses_other_major_versions() {
        let e = decode(r#"{"v":2,"type":"done"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "protocol version 2 is not supported by this reader (it reads version 1); rebuild the runner and benchscope from the same sources"
        );
        assert!(matches!(
            decode(r#"{"type":"done"}"#),
            Err(ProtocolError::NoVersion)
        ));
        assert!(matches!(decode("hello"), Err(ProtocolError::NotJson(_))));
        assert!(matches!(decode("[1]"), Err(ProtocolError::NotJson(_))));
    }

    #[test]
    fn ignores_unknown_fields_and_types() {
        let e = decode(r#"{"v":1,"type":"sample","bench":"b","iter":1,"ops":2,"elapsed_ns":3,"new_field":[1]}"#).unwrap();
        assert_eq!(
            e,
            Event::Sample {
                bench: "b".into(),
                iter: 1,
                ops: 2,
                elapsed_ns: 3,
                work: None,
                cost: None,
                memory: None,
            }
        );
        assert_eq!(
            decode(r#"{"v":1,"type":"heartbeat","x":1}"#).unwrap(),
            Event::Unknown
        );
    }

    #[test]
    fn malformed_known_event_names_its_type() {
        let e = decode(r#"{"v":1,"type":"sample","bench":"b"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("malformed sample event: missing field"),
            "{e}"
        );
    }
}
