//! The machine around a run: one measurement at a time on a machine (a lock every benchscope
//! process takes while its runners measure), and how busy the machine was meanwhile (load
//! average, the CPU other processes used, steal), recorded with the run.

use std::fs::File;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_core::protocol::Machine;

/// The lock file every benchscope on this machine takes while it measures
/// (BENCHSCOPE_MEASURE_LOCK overrides where it is).
pub fn lock_path() -> PathBuf {
    std::env::var_os("BENCHSCOPE_MEASURE_LOCK")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("benchscope-measure.lock"))
}

/// Held while a run measures; dropping it lets the next one go.
pub struct MeasureLock {
    _file: File,
}

/// Tries to take the machine's measurement lock: `Ok(None)` when another process holds it.
pub fn try_lock() -> Result<Option<MeasureLock>, String> {
    try_lock_at(&lock_path())
}

fn try_lock_at(path: &std::path::Path) -> Result<Option<MeasureLock>, String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .or_else(|_| File::open(path))
        .map_err(|e| format!("cannot open the measurement lock {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(MeasureLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(format!(
            "cannot take the measurement lock {}: {e}",
            path.display()
        )),
    }
}

/// How often a waiting run tries the lock again.
pub const RETRY: Duration = Duration::from_millis(200);

/// CPU time counters of the whole machine, from /proc/stat (in clock ticks).
#[derive(Debug, Clone, Copy, Default)]
struct CpuTimes {
    busy: u64,
    steal: u64,
    total: u64,
}

fn cpu_times() -> Option<CpuTimes> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal ...
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTimes {
        busy: at(0) + at(1) + at(2) + at(5) + at(6),
        steal: at(7),
        total: (0..8).map(at).sum(),
    })
}

fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// CPU time of this process's waited-for children (runners, perf, cargo), in ns.
fn children_cpu_ns() -> u64 {
    // SAFETY: getrusage writes a plain struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return 0;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn own_cpu_ns() -> u64 {
    bench_core::measure::cost::process_cpu_ns()
}

/// The machine's state at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    at: Instant,
    load: f64,
    cpu: Option<CpuTimes>,
    ours_ns: u64,
}

pub fn snapshot() -> Snapshot {
    Snapshot {
        at: Instant::now(),
        load: load1(),
        cpu: cpu_times(),
        ours_ns: children_cpu_ns() + own_cpu_ns(),
    }
}

/// The machine between two snapshots taken around a run (its children reaped by the second).
pub fn between(a: &Snapshot, b: &Snapshot, waited: Duration) -> Machine {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let wall_ns = b.at.duration_since(a.at).as_nanos() as f64;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let (others_cores, steal) = match (a.cpu, b.cpu) {
        (Some(x), Some(y)) if wall_ns > 0.0 => {
            let busy_ns = y.busy.saturating_sub(x.busy) as f64 * 1e9 / hz;
            let ours = b.ours_ns.saturating_sub(a.ours_ns) as f64;
            let total = y.total.saturating_sub(x.total);
            let steal = if total > 0 {
                Some(y.steal.saturating_sub(x.steal) as f64 / total as f64)
            } else {
                None
            };
            // Clock ticks are coarse: a short run's estimate can dip below zero.
            (Some(((busy_ns - ours) / wall_ns).max(0.0)), steal)
        }
        _ => (None, None),
    };
    Machine {
        cores,
        load_start: a.load,
        load_end: b.load,
        others_cores,
        steal,
        waited_s: waited.as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_machine_is_seen_and_said() {
        let a = snapshot();
        // Another process keeps a core busy for 0.4 s.
        let mut hog = std::process::Command::new("sh")
            .args(["-c", "end=$(( $(date +%s%N) + 400000000 )); while [ $(date +%s%N) -lt $end ]; do :; done"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(450));
        let b = snapshot();
        let m = between(&a, &b, Duration::ZERO);
        let _ = hog.wait();
        assert!(m.others_cores.is_some(), "{m:?}");
        assert!(m.cores >= 1 && m.load_start >= 0.0);
        // The hog was not ours when b was taken (not reaped): it counts as another process.
        assert!(m.others_cores.unwrap() > 0.3, "{m:?}");
        assert!(m.warnings()[0].starts_with("the machine was busy: other processes used"));
    }

    #[test]
    fn one_measurement_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let first = try_lock_at(&path).unwrap().expect("free");
        // A second taker (another open file description, as another process has) waits.
        assert!(try_lock_at(&path).unwrap().is_none());
        drop(first);
        assert!(try_lock_at(&path).unwrap().is_some());
    }
}
