//! What a process spends besides wall time: CPU time (user + system, all threads) and context
//! switches (voluntary + involuntary), read with getrusage at sample edges, never inside the
//! timed loop.

use serde::{Deserialize, Serialize};

/// The process's resource usage so far (RUSAGE_SELF: every thread, living or joined).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Voluntary context switches: a thread gave up its core (blocked, parked, slept).
    pub voluntary: u64,
    /// Involuntary context switches: a thread was preempted.
    pub involuntary: u64,
}

impl Usage {
    /// The usage of this process so far, if the kernel reports it.
    pub fn now() -> Option<Usage> {
        // SAFETY: getrusage writes a plain struct we own; RUSAGE_SELF covers every thread.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
            return None;
        }
        Some(Usage {
            user_ns: timeval_ns(ru.ru_utime),
            sys_ns: timeval_ns(ru.ru_stime),
            voluntary: ru.ru_nvcsw as u64,
            involuntary: ru.ru_nivcsw as u64,
        })
    }

    /// What was spent between `earlier` and this reading, over `wall_ns` of wall time.
    pub fn since(&self, earlier: &Usage, wall_ns: u64) -> SampleCost {
        SampleCost {
            wall_ns,
            cpu_ns: (self.user_ns + self.sys_ns).saturating_sub(earlier.user_ns + earlier.sys_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            voluntary: self.voluntary.saturating_sub(earlier.voluntary),
            involuntary: self.involuntary.saturating_sub(earlier.involuntary),
        }
    }
}

/// A `timeval` (seconds and microseconds) in ns.
fn timeval_ns(t: libc::timeval) -> u64 {
    t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000
}

/// The process's CPU time so far, user + system, all threads, in ns.
pub fn process_cpu_ns() -> u64 {
    Usage::now().map(|u| u.user_ns + u.sys_ns).unwrap_or(0)
}

/// What the whole runner process spent during one sample (protocol 1.3, `sample.cost`): from
/// just before its first pass to just after its last, so it includes whatever a pass does
/// untimed (a fresh table, the rest of a replayed mix) and every thread's work (pool workers,
/// spinning threads, the runtime).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleCost {
    /// Wall time between the two readings.
    pub wall_ns: u64,
    /// CPU time, user + system, all threads.
    pub cpu_ns: u64,
    /// The system (kernel) part of `cpu_ns`.
    pub sys_ns: u64,
    /// Voluntary context switches.
    pub voluntary: u64,
    /// Involuntary context switches.
    pub involuntary: u64,
}

impl SampleCost {
    fn add(&mut self, o: &SampleCost) {
        self.wall_ns += o.wall_ns;
        self.cpu_ns += o.cpu_ns;
        self.sys_ns += o.sys_ns;
        self.voluntary += o.voluntary;
        self.involuntary += o.involuntary;
    }
}

/// Cost per operation over every sample of a bench (`summary.stats.cost`, protocol 1.3). The
/// readings cover whole samples, and a pass may do untimed work besides the operations it times
/// (a fresh table, a hand-off to the runtime); so each figure is a rate over the samples' wall
/// time (totals over totals: every operation weighs the same) times the timed wall time of one
/// operation. Where `timed_share` is 1 that is simply the total over the operations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostSummary {
    /// CPU time per operation, user + system, all threads, in ns.
    pub cpu_ns_per_op: f64,
    /// CPU time over wall time: 1.0 is one core busy the whole time, 2.0 two cores.
    pub cpu_per_wall: f64,
    /// The share of the CPU time spent in the kernel (0..1).
    pub sys_share: f64,
    /// Voluntary context switches per operation.
    pub voluntary_per_op: f64,
    /// Involuntary context switches per operation.
    pub involuntary_per_op: f64,
    /// The share of the samples' wall time the bench timed (below 1 where passes do untimed
    /// work; the figures per operation assume the rate of the whole sample).
    pub timed_share: f64,
}

impl CostSummary {
    /// Context switches of both kinds per operation.
    pub fn switches_per_op(&self) -> f64 {
        self.voluntary_per_op + self.involuntary_per_op
    }

    /// The summary of samples given as (operations, timed ns, cost); None without any.
    pub fn of(samples: &[(u64, u64, SampleCost)]) -> Option<CostSummary> {
        let ops: u64 = samples.iter().map(|(o, _, _)| o).sum();
        let timed: u64 = samples.iter().map(|(_, t, _)| t).sum();
        let mut t = SampleCost::default();
        for (_, _, c) in samples {
            t.add(c);
        }
        if ops == 0 || t.wall_ns == 0 {
            return None;
        }
        // Timed wall time can exceed the readings' by the clock's granularity: at most all of it.
        let timed_share = (timed as f64 / t.wall_ns as f64).min(1.0);
        let wall_per_op = t.wall_ns as f64 * timed_share / ops as f64;
        let per_op = |v: u64| v as f64 / t.wall_ns as f64 * wall_per_op;
        Some(CostSummary {
            cpu_ns_per_op: per_op(t.cpu_ns),
            cpu_per_wall: t.cpu_ns as f64 / t.wall_ns as f64,
            sys_share: if t.cpu_ns == 0 {
                0.0
            } else {
                t.sys_ns as f64 / t.cpu_ns as f64
            },
            voluntary_per_op: per_op(t.voluntary),
            involuntary_per_op: per_op(t.involuntary),
            timed_share,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        // Spin until the thread itself has used 30 ms of CPU (by its own clock, so a loaded
        // machine only makes this take longer): the process's reading must have grown as much.
        let thread_cpu = || {
            let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
            // SAFETY: clock_gettime writes the struct we own.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        let a = Usage::now().unwrap();
        let (start, t0) = (std::time::Instant::now(), thread_cpu());
        let mut x = 0u64;
        while thread_cpu() - t0 < 30_000_000 && start.elapsed().as_secs() < 20 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
        let spun = thread_cpu() - t0;
        let b = Usage::now().unwrap();
        let c = b.since(&a, start.elapsed().as_nanos() as u64);
        assert!(
            spun >= 30_000_000,
            "the thread never got 30 ms of CPU: {spun}"
        );
        assert!(c.sys_ns <= c.cpu_ns, "{c:?}");
        // getrusage's times have microsecond resolution; allow 1 ms of it.
        assert!(c.cpu_ns + 1_000_000 >= spun, "{c:?} < {spun}");
        // The process's CPU time is the reading's user + system time, between two readings.
        let (before, p, after) = (
            Usage::now().unwrap(),
            process_cpu_ns(),
            Usage::now().unwrap(),
        );
        assert!(
            before.user_ns + before.sys_ns <= p && p <= after.user_ns + after.sys_ns,
            "{before:?} {p} {after:?}"
        );
        assert!(p >= spun, "{p} < {spun}");
    }

    #[test]
    fn a_timeval_and_a_difference_of_readings_in_ns() {
        let tv = libc::timeval {
            tv_sec: 2,
            tv_usec: 500,
        };
        assert_eq!(timeval_ns(tv), 2_000_500_000);
        let earlier = Usage {
            user_ns: 1_000,
            sys_ns: 500,
            voluntary: 3,
            involuntary: 1,
        };
        let later = Usage {
            user_ns: 4_000,
            sys_ns: 1_500,
            voluntary: 10,
            involuntary: 2,
        };
        assert_eq!(
            later.since(&earlier, 9_000),
            SampleCost {
                wall_ns: 9_000,
                cpu_ns: 4_000,
                sys_ns: 1_000,
                voluntary: 7,
                involuntary: 1,
            }
        );
    }

    #[test]
    fn a_sleeping_thread_switches_voluntarily() {
        let a = Usage::now().unwrap();
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let b = Usage::now().unwrap();
        assert!(b.voluntary >= a.voluntary + 5, "{a:?} {b:?}");
    }

    #[test]
    fn summary_divides_totals_by_operations() {
        let s = |wall_ns, cpu_ns, sys_ns, voluntary, involuntary| SampleCost {
            wall_ns,
            cpu_ns,
            sys_ns,
            voluntary,
            involuntary,
        };
        // Fully timed samples: totals over operations.
        let c = CostSummary::of(&[
            (100, 1000, s(1000, 2000, 500, 10, 0)),
            (300, 3000, s(3000, 6000, 1500, 30, 4)),
        ])
        .unwrap();
        assert_eq!(c.cpu_ns_per_op, 20.0);
        assert_eq!(c.cpu_per_wall, 2.0);
        assert_eq!(c.sys_share, 0.25);
        assert_eq!(c.voluntary_per_op, 0.1);
        assert_eq!(c.involuntary_per_op, 0.01);
        assert_eq!(c.switches_per_op(), 0.11);
        assert_eq!(c.timed_share, 1.0);
        // A quarter of each sample untimed: the per-operation figures are the sample's rate
        // over the timed part only.
        let c = CostSummary::of(&[(100, 750, s(1000, 2000, 0, 40, 0))]).unwrap();
        assert_eq!(c.timed_share, 0.75);
        assert_eq!(c.cpu_ns_per_op, 15.0);
        assert_eq!(c.voluntary_per_op, 0.3);
        assert!(CostSummary::of(&[]).is_none());
        // No operation, or no wall time, gives no rate per operation.
        assert!(CostSummary::of(&[(0, 0, s(1000, 2000, 0, 4, 0))]).is_none());
        assert!(CostSummary::of(&[(10, 0, s(0, 0, 0, 0, 0))]).is_none());
    }
}
