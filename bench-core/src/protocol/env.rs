//! What a run was measured on: build profile, library versions, CPU.

use super::RunEnv;

include!(concat!(env!("OUT_DIR"), "/crate_versions.rs"));
include!(concat!(env!("OUT_DIR"), "/harness_versions.rs"));

/// "release" when built with optimisations and without debug assertions, else "debug".
pub fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

fn cpu_model() -> String {
    crate::opener::read_text(
        std::path::Path::new("/proc/cpuinfo"),
        "",
        crate::opener::Kind::Small,
    )
    .ok()
    .and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, m)| m.trim().to_string())
    })
    .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The CPUs this process may run on (its affinity), by number.
pub fn usable_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills a cpu_set_t we own; CPU_ISSET reads it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// The CPUs this process may run on, when they are fewer than the machine's online CPUs.
fn confined_to() -> Option<Vec<usize>> {
    let cpus = usable_cpus();
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    (!cpus.is_empty() && online > 0 && cpus.len() < online as usize).then_some(cpus)
}

/// A build's crate versions (its `CRATE_VERSIONS`) as a run records them.
pub fn crates(
    versions: &[(&str, &str)],
) -> std::collections::BTreeMap<crate::text::Text, crate::text::Text> {
    versions
        .iter()
        .map(|(n, v)| ((*n).into(), (*v).into()))
        .collect()
}

/// The environment of this process. `sqlite` is the linked library's version, if any.
pub fn collect(sqlite: &str, timer_ns: f64) -> RunEnv {
    RunEnv {
        profile: profile().into(),
        sqlite: sqlite.into(),
        crates: crates(CRATE_VERSIONS),
        cpu: cpu_model().into(),
        cpus: confined_to(),
        cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH).into(),
        timer_ns,
        settings: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn knows_the_crates_it_was_built_with() {
        let env = super::collect("3.x", 20.0);
        assert_eq!(
            env.profile,
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
        assert!(env.cores >= 1);
        #[cfg(feature = "sqlite")]
        assert!(
            env.crates
                .get(&crate::text::Text::from("rusqlite"))
                .is_some_and(|v| v.raw().starts_with("0.40")),
            "{:?}",
            env.crates
        );
    }
}
