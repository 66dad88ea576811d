//! The machine around a run: one measurement at a time on a machine (a lock every benchscope
//! process takes while its runners measure), idle CPUs kept polling meanwhile, and how busy
//! the machine was (load average, the CPU other processes used, steal), recorded with the run.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bench_core::protocol::{CpuIdle, Machine};

const LOCK_VAR: &str = "BENCHSCOPE_MEASURE_LOCK";
const LATENCY_VAR: &str = "BENCHSCOPE_CPU_LATENCY_DEVICE";

/// `what`, and the variable that named its path when one did (an error then says where the
/// path came from).
fn named(what: &str, var: &str) -> String {
    if std::env::var_os(var).is_some() {
        format!("{what} ({var})")
    } else {
        what.to_string()
    }
}

/// The lock file every benchscope on this machine takes while it measures
/// (BENCHSCOPE_MEASURE_LOCK overrides where it is).
pub fn lock_path() -> PathBuf {
    std::env::var_os(LOCK_VAR)
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
    // Opened without waiting (a FIFO or a device there is refused by what it is) and within
    // a time limit: a run never hangs on the lock's file, only waits its turn for the lock.
    let file = bench_core::opener::open_lock(path, &named("the measurement lock", LOCK_VAR))
        .map_err(|e| format!("cannot open {e}"))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(MeasureLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(format!(
            "cannot take the measurement lock {}: {e}",
            path.display()
        )),
    }
}

/// Where the front ends' runners run: on which CPUs, and whether idle CPUs sleep meanwhile.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MachineArgs {
    /// Keep idle CPUs polling instead of sleeping while measuring (a CPU latency limit of
    /// 0 µs, held through /dev/cpu_dma_latency, which is root's): a bench that hands its query
    /// to another thread then pays no wake-up of a sleeping CPU, as on a machine whose CPUs
    /// are never idle. Reports say which it was; comparisons flag runs made the other way.
    /// BENCHSCOPE_KEEP_CPUS_AWAKE (1, true, yes, on; 0, false, no, off) asks the same when the
    /// flag is not given.
    #[arg(long)]
    pub keep_cpus_awake: bool,
    /// Confine the runners (every thread of every bench) to these CPUs, as `taskset -c`
    /// does: `0`, `0,2`, `0-3`. On one CPU a query handed to another thread waits for its
    /// CPU to switch instead of for another CPU to wake: on a small virtual machine such
    /// benches' ratios move far less from run to run (docs/src/numbers.md, "Where runners run").
    /// Reports say it; comparisons flag runs made the other way.
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpus: Option<CpuSet>,
}

impl MachineArgs {
    /// Whether idle CPUs are kept awake: the flag, else BENCHSCOPE_KEEP_CPUS_AWAKE (one parser;
    /// a value it refuses is refused by the variable's name).
    pub fn keep_cpus_awake(&self) -> Result<bool, String> {
        bench_core::vars::KEEP_CPUS_AWAKE
            .resolve(
                self.keep_cpus_awake.then_some("1"),
                &bench_core::vars::process_env,
            )
            .map(|v| v.unwrap_or(false))
            .map_err(|e| e.to_string())
    }
}

/// CPUs by number, as the kernel numbers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSet(pub Vec<usize>);

/// A CPU list (`0`, `0,2`, `1-3`) of CPUs this process may use, or why not.
pub fn parse_cpus(v: &str) -> Result<CpuSet, String> {
    cpus_among(v, &bench_core::protocol::env::usable_cpus())
}

fn cpus_among(v: &str, usable: &[usize]) -> Result<CpuSet, String> {
    let allowed = || {
        format!(
            "allowed: CPUs this process may use, {}, as a list like 0 or 0,1 or 0-1",
            bench_core::units::cpu_list(usable)
        )
    };
    let mut cpus = Vec::new();
    for part in v.split(',') {
        let part = part.trim();
        let number = |x: &str| {
            x.trim()
                .parse::<usize>()
                .map_err(|_| format!("{v:?} is not a CPU list ({})", allowed()))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if lo > hi {
            return Err(format!(
                "{v:?}: the range {part} runs backwards ({})",
                allowed()
            ));
        }
        for c in lo..=hi {
            if !usable.contains(&c) {
                return Err(format!(
                    "{v:?}: CPU {c} is not one this process may use ({})",
                    allowed()
                ));
            }
            if !cpus.contains(&c) {
                cpus.push(c);
            }
        }
    }
    cpus.sort_unstable();
    Ok(CpuSet(cpus))
}

/// Confines `command`'s process (and every thread it starts) to `cpus` from its start.
pub(crate) fn confine(command: &mut tokio::process::Command, cpus: &CpuSet) {
    // SAFETY: CPU_ZERO and CPU_SET write a cpu_set_t we own.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_ZERO(&mut set) };
    for &c in &cpus.0 {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: the closure runs in the forked child before exec and makes one system call
    // (sched_setaffinity(2), async-signal-safe) on a set made before the fork; it allocates
    // nothing and touches no lock.
    unsafe {
        command.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Where the kernel takes a CPU latency limit (PM QoS): while a process holds it open after
/// writing a limit, no CPU enters an idle state slower to leave than that.
/// BENCHSCOPE_CPU_LATENCY_DEVICE names another file.
pub fn latency_device() -> PathBuf {
    std::env::var_os(LATENCY_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/cpu_dma_latency"))
}

/// Held while a run measures: the kernel keeps the limit while the file is open.
pub struct AwakeHold {
    _file: Option<File>,
}

/// Keeps idle CPUs polling until the hold is dropped when `keep_awake`; says which it was.
pub fn keep_cpus_awake(keep_awake: bool) -> (AwakeHold, CpuIdle) {
    if !keep_awake {
        return (AwakeHold { _file: None }, CpuIdle::Slept);
    }
    match hold_latency_at(&latency_device()) {
        Ok(file) => (AwakeHold { _file: Some(file) }, CpuIdle::Held),
        Err(why) => (AwakeHold { _file: None }, CpuIdle::Unavailable { why }),
    }
}

fn hold_latency_at(path: &Path) -> Result<File, String> {
    // Opened without waiting, within a time limit, and only when it is a character device:
    // a FIFO or a file named by BENCHSCOPE_CPU_LATENCY_DEVICE is refused by what it is.
    let mut file =
        bench_core::opener::open_device(path, &named("the CPU latency device", LATENCY_VAR))
            .map_err(|e| e.to_string())?;
    // The device takes the limit in microseconds as a binary 32-bit integer.
    file.write_all(&0i32.to_ne_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(file)
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
    let stat =
        bench_core::opener::read_text(Path::new("/proc/stat"), "", bench_core::opener::Kind::Small)
            .ok()?;
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
    bench_core::opener::read_text(
        Path::new("/proc/loadavg"),
        "",
        bench_core::opener::Kind::Small,
    )
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
pub fn between(a: &Snapshot, b: &Snapshot, waited: Duration, cpu_idle: CpuIdle) -> Machine {
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
        cpu_idle: Some(cpu_idle),
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
        let m = between(&a, &b, Duration::ZERO, CpuIdle::Slept);
        let _ = hog.wait();
        assert!(m.others_cores.is_some(), "{m:?}");
        assert!(m.cores >= 1 && m.load_start >= 0.0);
        // The hog was not ours when b was taken (not reaped): it counts as another process.
        assert!(m.others_cores.unwrap() > 0.3, "{m:?}");
        assert!(m.warnings()[0].starts_with("the machine was busy: other processes used"));
    }

    #[test]
    fn idle_cpus_are_kept_polling_when_asked_and_a_refusal_is_named() {
        let dir = tempfile::tempdir().unwrap();
        // A character device takes the limit (here one that takes any write).
        let held = hold_latency_at(Path::new("/dev/null")).unwrap();
        drop(held);
        // What is not a character device is refused by what it is, at once: a file, a FIFO
        // (which, opened to write with no reader, would wait for ever).
        let device = dir.path().join("cpu_dma_latency");
        std::fs::write(&device, b"").unwrap();
        let e = hold_latency_at(&device).unwrap_err();
        assert!(
            e.ends_with("a regular file; allowed: a character device (or a FIFO a process reads)"),
            "{e}"
        );
        assert_eq!(
            std::fs::read(&device).unwrap(),
            b"",
            "nothing written to it"
        );
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = hold_latency_at(&fifo).unwrap_err();
        assert!(
            e.contains("a FIFO no process reads; allowed: a character device"),
            "{e}"
        );
        // A device that cannot be opened: the run goes on, and the reason names the device.
        let missing = dir.path().join("none").join("cpu_dma_latency");
        let err = hold_latency_at(&missing).unwrap_err();
        assert!(err.contains(&missing.display().to_string()), "{err}");
        assert!(err.contains("No such file"), "{err}");
        // Not asked, nothing is opened.
        let (hold, state) = keep_cpus_awake(false);
        assert!(hold._file.is_none());
        assert_eq!(state, CpuIdle::Slept);
        let m = between(
            &snapshot(),
            &snapshot(),
            Duration::ZERO,
            CpuIdle::Unavailable { why: err.clone() },
        );
        assert!(
            m.warnings().iter().any(|w| w
                .starts_with("idle CPUs could not be kept polling as asked (")
                && w.contains(&err)),
            "{:?}",
            m.warnings()
        );
        assert!(!CpuIdle::Slept.polled() && CpuIdle::Held.polled());
    }

    #[test]
    fn cpu_lists_are_read_and_checked_against_the_usable_cpus() {
        let usable = [0, 1, 2, 3];
        assert_eq!(cpus_among("0", &usable), Ok(CpuSet(vec![0])));
        assert_eq!(cpus_among("3,0-1, 1", &usable), Ok(CpuSet(vec![0, 1, 3])));
        let e = cpus_among("4", &usable).unwrap_err();
        assert_eq!(
            e,
            "\"4\": CPU 4 is not one this process may use (allowed: CPUs this process may use, 0-3, as a list like 0 or 0,1 or 0-1)"
        );
        for bad in ["", "x", "1-", "0,,1", "-1"] {
            let e = cpus_among(bad, &usable).unwrap_err();
            assert!(e.contains("is not a CPU list (allowed: "), "{bad:?}: {e}");
        }
        assert!(
            cpus_among("2-1", &usable)
                .unwrap_err()
                .contains("runs backwards")
        );
    }

    #[tokio::test]
    async fn a_confined_child_runs_on_those_cpus_only() {
        let first = bench_core::protocol::env::usable_cpus()[0];
        let mut command = tokio::process::Command::new("grep");
        command.args(["Cpus_allowed_list", "/proc/self/status"]);
        confine(&mut command, &CpuSet(vec![first]));
        let out = command.output().await.expect("grep runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.split_whitespace().nth(1),
            Some(first.to_string().as_str()),
            "{text}"
        );
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
