//! Scenarios: workloads that run for a set time (many tasks at once) and report a time series
//! instead of samples of one operation. The counters every scenario task updates, the windows
//! the runner streams about once a second, and the figures over the measured time.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::stats::{LatencyHistogram, Percentiles};

/// One window of a running scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// End of the window, seconds since the scenario started.
    pub t_s: f64,
    /// Reads that finished in the window.
    pub reads: u64,
    pub reads_per_s: f64,
    /// Read latency percentiles over the window (absent without reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_latency: Option<Percentiles>,
    /// Writes finished in the window.
    pub writes: u64,
    /// Writes finished so far over writes expected so far.
    pub write_completion: f64,
    /// Canary ticks seen in the window over ticks expected in it.
    pub canary_ratio: f64,
    /// The canary's worst lateness in the window, ns.
    pub canary_worst_late_ns: u64,
}

/// A scenario's figures over the measured time (from start to the stop signal, never the
/// configured duration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStats {
    pub elapsed_s: f64,
    pub reads: u64,
    pub reads_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_latency: Option<Percentiles>,
    pub read_mean_ns: f64,
    pub writes: u64,
    /// The writes the delay allows in the measured time (or, for a writer that does real
    /// work, the writes one writer alone manages in it).
    pub writes_expected: f64,
    pub write_completion: f64,
    pub canary_ticks: u64,
    pub canary_expected: f64,
    pub canary_ratio: f64,
    pub canary_worst_late_ns: u64,
    /// CPU time of the whole runner process over the measured time (user + system).
    pub cpu_ns: u64,
    pub cpu_per_read_ns: f64,
}

impl ScenarioStats {
    /// Writes a second over the measured time (the study's write figure).
    pub fn writes_per_s(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.writes as f64 / self.elapsed_s
        } else {
            0.0
        }
    }
}

/// The canary's period.
pub const CANARY_PERIOD: Duration = Duration::from_millis(10);

/// What the scenario's tasks count, shared between them and the runner.
pub struct Counters {
    /// What the canary's deadline is measured from.
    base: Instant,
    /// The canary's next deadline, ns after `base` (0 before it first sleeps).
    canary_deadline: AtomicU64,
    /// Reads, under one lock so that counts and latencies always agree.
    reads: Mutex<Reads>,
    writes: AtomicU64,
    canary_ticks: AtomicU64,
    canary_worst_late: AtomicU64,
}

#[derive(Default)]
struct Reads {
    count: u64,
    sum_ns: u64,
    window: LatencyHistogram,
    total: LatencyHistogram,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            base: Instant::now(),
            canary_deadline: AtomicU64::new(0),
            reads: Mutex::new(Reads::default()),
            writes: AtomicU64::new(0),
            canary_ticks: AtomicU64::new(0),
            canary_worst_late: AtomicU64::new(0),
        }
    }
}

impl Counters {
    /// The canary will sleep until `deadline`.
    fn canary_sleeps_until(&self, deadline: Instant) {
        let ns = deadline.saturating_duration_since(self.base).as_nanos() as u64;
        self.canary_deadline.store(ns.max(1), Ordering::Relaxed);
    }

    /// How late the canary is now, if it is past its deadline and has not woken: a canary that
    /// never gets a thread still shows how long it has waited.
    fn canary_pending_late(&self) -> u64 {
        let d = self.canary_deadline.load(Ordering::Relaxed);
        if d == 0 {
            return 0;
        }
        let now = Instant::now()
            .saturating_duration_since(self.base)
            .as_nanos() as u64;
        now.saturating_sub(d)
    }

    /// A read finished, after `ns`.
    pub fn read(&self, ns: u64) {
        if let Ok(mut r) = self.reads.lock() {
            r.count += 1;
            r.sum_ns += ns;
            r.window.record(ns);
            r.total.record(ns);
        }
    }

    pub fn write(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    /// The canary woke `late_ns` after its deadline.
    pub fn canary(&self, late_ns: u64) {
        self.canary_ticks.fetch_add(1, Ordering::Relaxed);
        self.canary_worst_late.fetch_max(late_ns, Ordering::Relaxed);
    }

    pub fn reads(&self) -> u64 {
        self.reads.lock().map(|r| r.count).unwrap_or(0)
    }

    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }
}

/// Turns the counters into windows and the final figures.
pub struct Meter {
    start: Instant,
    last: Instant,
    last_reads: u64,
    last_writes: u64,
    last_ticks: u64,
    worst_late: u64,
    cpu_start: u64,
    /// How many writers, and how long a write cycle takes one of them alone.
    writers: u64,
    cycle: Duration,
}

impl Meter {
    /// Starts the clock; `writers` each finish a write once per `cycle` when nothing holds
    /// them up.
    pub fn start(writers: u64, cycle: Duration) -> Meter {
        let now = Instant::now();
        Meter {
            start: now,
            last: now,
            last_reads: 0,
            last_writes: 0,
            last_ticks: 0,
            worst_late: 0,
            cpu_start: super::cost::process_cpu_ns(),
            writers,
            cycle,
        }
    }

    /// The writes that could have finished in `t`: each writer's whole cycles (a write lands
    /// at the end of its cycle, so a cycle cut off by the end of the run is not expected, nor
    /// one that would end in the last moment: writers start a little after the clock, a tenth
    /// of a cycle or 50 ms at most).
    pub fn writes_expected(&self, t: Duration) -> f64 {
        if self.cycle.is_zero() {
            return 0.0;
        }
        let grace = (self.cycle / 10).min(Duration::from_millis(50));
        let t = t.saturating_sub(grace);
        (t.as_secs_f64() / self.cycle.as_secs_f64()).floor() * self.writers as f64
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The window since the last one.
    pub fn window(&mut self, c: &Counters) -> Window {
        self.window_at(c, Instant::now())
    }

    /// The window from the last one to `now`.
    fn window_at(&mut self, c: &Counters, now: Instant) -> Window {
        let span = now.duration_since(self.last).as_secs_f64().max(1e-9);
        let t_s = now.duration_since(self.start).as_secs_f64();
        let (reads, read_latency) = c
            .reads
            .lock()
            .map(|mut r| {
                let p = r.window.percentiles();
                r.window = LatencyHistogram::new();
                (r.count, p)
            })
            .unwrap_or((self.last_reads, None));
        let (writes, ticks) = (c.writes(), c.canary_ticks.load(Ordering::Relaxed));
        let late = c
            .canary_worst_late
            .swap(0, Ordering::Relaxed)
            .max(c.canary_pending_late());
        self.worst_late = self.worst_late.max(late);
        let w = Window {
            t_s,
            reads: reads - self.last_reads,
            reads_per_s: (reads - self.last_reads) as f64 / span,
            read_latency,
            writes: writes - self.last_writes,
            write_completion: ratio(
                writes as f64,
                self.writes_expected(now.duration_since(self.start)),
            ),
            canary_ratio: ratio(
                (ticks - self.last_ticks) as f64,
                span / CANARY_PERIOD.as_secs_f64(),
            ),
            canary_worst_late_ns: late,
        };
        (
            self.last,
            self.last_reads,
            self.last_writes,
            self.last_ticks,
        ) = (now, reads, writes, ticks);
        w
    }

    /// The figures from the start to now.
    pub fn finish(&mut self, c: &Counters) -> ScenarioStats {
        self.finish_at(c, Instant::now())
    }

    /// The figures from the start to `now`.
    fn finish_at(&mut self, c: &Counters, now: Instant) -> ScenarioStats {
        // Whatever the last window did not see.
        let late = c
            .canary_worst_late
            .swap(0, Ordering::Relaxed)
            .max(c.canary_pending_late());
        self.worst_late = self.worst_late.max(late);
        let elapsed = now.saturating_duration_since(self.start);
        let elapsed_s = elapsed.as_secs_f64();
        let cpu_ns = super::cost::process_cpu_ns().saturating_sub(self.cpu_start);
        let (reads, sum_ns, read_latency) = c
            .reads
            .lock()
            .map(|r| (r.count, r.sum_ns, r.total.percentiles()))
            .unwrap_or((0, 0, None));
        let writes = c.writes();
        let ticks = c.canary_ticks.load(Ordering::Relaxed);
        let writes_expected = self.writes_expected(elapsed);
        let canary_expected = elapsed_s / CANARY_PERIOD.as_secs_f64();
        ScenarioStats {
            elapsed_s,
            reads,
            reads_per_s: reads as f64 / elapsed_s,
            read_latency,
            read_mean_ns: if reads > 0 {
                sum_ns as f64 / reads as f64
            } else {
                0.0
            },
            writes,
            writes_expected,
            write_completion: ratio(writes as f64, writes_expected),
            canary_ticks: ticks,
            canary_expected,
            canary_ratio: ratio(ticks as f64, canary_expected),
            canary_worst_late_ns: self.worst_late,
            cpu_ns,
            cpu_per_read_ns: if reads > 0 {
                cpu_ns as f64 / reads as f64
            } else {
                0.0
            },
        }
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// Raises the soft limit of open files to the hard one, and says so if even that is too low
/// for the `needed` files a scenario opens (`what` says how they were counted).
pub fn ensure_open_files(needed: u64, what: &str) -> Result<(), crate::error::BenchError> {
    // SAFETY: get/setrlimit read and write a plain struct we own.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(());
    }
    if (lim.rlim_cur as u64) < needed && lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
    if (lim.rlim_cur as u64) < needed {
        return Err(crate::error::BenchError::Invalid(format!(
            "this scenario opens about {needed} files ({what}), more than the open-file limit {} (raise it with ulimit -n, or lower databases or readers)",
            lim.rlim_cur
        )));
    }
    Ok(())
}

/// The canary: a task that only sleeps `CANARY_PERIOD` in a loop, counting its ticks and its
/// worst lateness; when the runtime's threads are blocked, it falls behind.
pub async fn canary(
    c: std::sync::Arc<Counters>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let mut deadline = tokio::time::Instant::now() + CANARY_PERIOD;
    while !stop.load(Ordering::Relaxed) {
        c.canary_sleeps_until(deadline.into_std());
        tokio::time::sleep_until(deadline).await;
        let now = tokio::time::Instant::now();
        c.canary(now.saturating_duration_since(deadline).as_nanos() as u64);
        deadline = now + CANARY_PERIOD;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn too_many_files_for_the_limit_is_refused_saying_how_they_were_counted() {
        // SAFETY: getrlimit writes a plain struct we own.
        let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        if lim.rlim_max == libc::RLIM_INFINITY {
            return; // no count is too many here
        }
        let err = ensure_open_files(u64::MAX, "databases x the runtime's threads x 3 for WAL")
            .expect_err("no limit is that high");
        let msg = err.to_string();
        assert!(msg.contains(&format!("about {} files", u64::MAX)), "{msg}");
        assert!(
            msg.contains("(databases x the runtime's threads x 3 for WAL)"),
            "{msg}"
        );
        assert!(ensure_open_files(16, "a few").is_ok());
    }

    /// A soft limit below what a scenario needs is raised to the hard one, and one that is
    /// enough is left as it is.
    #[test]
    fn the_soft_limit_is_raised_only_when_a_scenario_needs_it() {
        // SAFETY: get/setrlimit read and write a plain struct we own.
        let get = || {
            let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
            assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
            lim
        };
        let set = |lim: &libc::rlimit| {
            assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, lim) }, 0)
        };
        let was = get();
        if was.rlim_max == libc::RLIM_INFINITY || was.rlim_max < 1024 {
            return; // no finite room to lower the soft limit into here
        }
        let hard = was.rlim_max;
        // A little below the hard limit, so that the other tests' files still fit.
        let lowered = libc::rlimit {
            rlim_cur: was.rlim_max - 16,
            rlim_max: was.rlim_max,
        };
        set(&lowered);
        assert!(ensure_open_files(hard - 32, "enough").is_ok());
        assert_eq!(
            get().rlim_cur,
            lowered.rlim_cur,
            "enough already: left as it was"
        );
        assert!(ensure_open_files(lowered.rlim_cur, "exactly").is_ok());
        assert_eq!(
            get().rlim_cur,
            lowered.rlim_cur,
            "just enough: left as it was"
        );
        assert!(ensure_open_files(hard - 8, "more").is_ok());
        assert_eq!(get().rlim_cur, hard, "raised to the hard limit");
        assert!(ensure_open_files(hard, "all").is_ok());
        assert!(ensure_open_files(hard + 1, "one more").is_err());
        set(&was);
    }

    #[test]
    fn windows_and_totals_count_what_the_tasks_did() {
        let c = Counters::default();
        let mut m = Meter::start(1, Duration::from_millis(10));
        for ns in [1000, 2000, 3000] {
            c.read(ns);
        }
        c.write();
        c.write();
        assert_eq!((c.reads(), c.writes()), (3, 2));
        std::thread::sleep(Duration::from_millis(25));
        let w = m.window(&c);
        assert_eq!((w.reads, w.writes), (3, 2));
        assert_eq!(w.read_latency.unwrap().count, 3);
        assert!(w.reads_per_s > 0.0 && w.t_s >= 0.02);
        c.read(4000);
        let w2 = m.window(&c);
        assert_eq!(w2.reads, 1, "a window counts only its own reads");
        assert_eq!(w2.read_latency.unwrap().count, 1);
        let s = m.finish(&c);
        assert_eq!((s.reads, s.writes), (4, 2));
        assert_eq!(s.read_mean_ns, 2500.0);
        assert_eq!(s.read_latency.unwrap().count, 4);
        // One write every 10 ms expected over 20+ ms: two whole cycles or more, two writes done.
        assert!(
            s.writes_expected >= 2.0 && s.write_completion <= 1.0,
            "{s:?}"
        );
        assert_eq!(
            m.writes_expected(Duration::from_millis(35)),
            3.0,
            "whole cycles only"
        );
        assert_eq!(
            m.writes_expected(Duration::from_millis(30)),
            2.0,
            "a cycle that would end in the last moment is not expected"
        );
        assert!(m.elapsed() >= Duration::from_millis(25));
        // Three writers: three writes a cycle.
        let three = Meter::start(3, Duration::from_millis(10));
        assert_eq!(three.writes_expected(Duration::from_millis(35)), 9.0);
    }

    /// On a free runtime the canary ticks once a period, the first a period after it starts:
    /// in 95 ms of (paused, so exact) time, 9 ticks, none late.
    #[test]
    fn the_canary_ticks_once_a_period() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        let c = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let task = rt.spawn(canary(c.clone(), stop.clone()));
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(95)).await });
        stop.store(true, Ordering::Relaxed);
        rt.block_on(task).unwrap();
        assert_eq!(
            c.canary_ticks.load(Ordering::Relaxed),
            10,
            "9 in 95 ms and the one after the stop"
        );
        assert_eq!(c.canary_worst_late.load(Ordering::Relaxed), 0);
    }

    /// A runtime of one worker thread with a canary running on it, its stop flag, and a meter
    /// started with it.
    fn canary_on_one_worker() -> (
        tokio::runtime::Runtime,
        Arc<Counters>,
        Arc<AtomicBool>,
        Meter,
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let c = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let m = Meter::start(0, Duration::ZERO);
        rt.spawn(canary(c.clone(), stop.clone()));
        (rt, c, stop, m)
    }

    /// A canary that never gets a thread again still shows how long it has waited: its
    /// lateness is read from its deadline while it sleeps past it.
    #[test]
    fn a_canary_that_never_wakes_shows_how_late_it_is() {
        let (rt, c, stop, mut m) = canary_on_one_worker();
        let start = Instant::now();
        while c.canary_deadline.load(Ordering::Relaxed) == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the canary never slept"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // The only worker is held past the end of the measurement.
        rt.spawn(async {
            std::thread::sleep(Duration::from_millis(600));
        });
        std::thread::sleep(Duration::from_millis(300));
        let s = m.finish(&c);
        stop.store(true, Ordering::Relaxed);
        // It may have ticked once before the worker was taken.
        assert!(s.canary_ticks <= 1, "{s:?}");
        assert!(
            s.canary_worst_late_ns > 200_000_000,
            "late by {} ns: {s:?}",
            s.canary_worst_late_ns
        );
        rt.shutdown_timeout(Duration::from_millis(100));
    }

    /// Rates over a window's span and over the whole time, by hand: two writers with a 100 ms
    /// cycle are expected to write 2 * floor((t - 10 ms) / 100 ms) times by t; the canary
    /// ticks every 10 ms.
    #[test]
    fn windows_and_totals_are_rates_over_their_spans() {
        let c = Counters::default();
        let mut m = Meter::start(2, Duration::from_millis(100));
        let at = |s: u64| m.start + Duration::from_secs(s);
        let (one, three, four) = (at(1), at(3), at(4));
        for i in 1..=10 {
            c.read(i * 1000);
        }
        for _ in 0..3 {
            c.write();
        }
        for _ in 0..50 {
            c.canary(0);
        }
        let w = m.window_at(&c, one);
        assert_eq!(
            (w.t_s, w.reads, w.reads_per_s, w.writes),
            (1.0, 10, 10.0, 3)
        );
        assert_eq!(w.write_completion, 3.0 / 18.0);
        assert_eq!(w.canary_ratio, 0.5);
        for i in 1..=10 {
            c.read(i * 3000);
        }
        for _ in 0..20 {
            c.canary(0);
        }
        let w = m.window_at(&c, three);
        assert_eq!((w.t_s, w.reads, w.reads_per_s, w.writes), (3.0, 10, 5.0, 0));
        assert_eq!(w.write_completion, 3.0 / 58.0);
        assert_eq!(w.canary_ratio, 0.1);
        let s = m.finish_at(&c, four);
        assert_eq!((s.elapsed_s, s.reads, s.reads_per_s), (4.0, 20, 5.0));
        // (55 + 165) µs over 20 reads.
        assert_eq!(s.read_mean_ns, 11_000.0);
        assert_eq!((s.writes, s.writes_expected), (3, 78.0));
        assert_eq!(s.write_completion, 3.0 / 78.0);
        assert_eq!(
            (s.canary_ticks, s.canary_expected, s.canary_ratio),
            (70, 400.0, 70.0 / 400.0)
        );
        assert_eq!(s.cpu_per_read_ns, s.cpu_ns as f64 / 20.0);
        // Nothing read: no rate per read.
        let idle = Meter::start(0, Duration::ZERO).finish_at(&Counters::default(), four);
        assert_eq!(
            (
                idle.read_mean_ns,
                idle.cpu_per_read_ns,
                idle.write_completion
            ),
            (0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn the_canary_keeps_time_on_a_free_runtime_and_falls_behind_on_a_blocked_one() {
        for blocked in [false, true] {
            let (rt, c, stop, mut m) = canary_on_one_worker();
            if blocked {
                // Another task holds the only worker thread for most of the time.
                rt.spawn(async {
                    std::thread::sleep(Duration::from_millis(250));
                });
            }
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, Ordering::Relaxed);
            let s = m.finish(&c);
            if blocked {
                assert!(s.canary_ratio < 0.5, "{s:?}");
                assert!(s.canary_worst_late_ns > 100_000_000, "{s:?}");
            } else {
                assert!(s.canary_ratio > 0.6, "{s:?}");
            }
            rt.shutdown_timeout(Duration::from_millis(100));
        }
    }
}
