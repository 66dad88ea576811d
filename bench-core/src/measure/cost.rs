//! What a process spends besides wall time: CPU time (user + system, all threads) and context
//! switches (voluntary + involuntary), read with getrusage at sample edges.

/// The process's CPU time so far, user + system, all threads, in ns.
pub fn process_cpu_ns() -> u64 {
    usage().map(|(cpu, _)| cpu).unwrap_or(0)
}

/// (CPU ns, context switches) of the process so far.
pub fn usage() -> Option<(u64, u64)> {
    // SAFETY: getrusage writes a plain struct we own; RUSAGE_SELF covers every thread.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    let cpu = tv(ru.ru_utime) + tv(ru.ru_stime);
    let switches = (ru.ru_nvcsw + ru.ru_nivcsw) as u64;
    Some((cpu, switches))
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows_with_work() {
        let a = super::process_cpu_ns();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed().as_millis() < 30 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
        let b = super::process_cpu_ns();
        assert!(b > a, "{a} {b}");
        assert!(super::usage().is_some());
    }
}
