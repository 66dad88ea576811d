//! Profiling a bench with perf: whether perf can run here (and how to make it), the command
//! that records a runner, and turning the recording into folded stacks, a by-layer breakdown
//! (`bench_core::profile`) and a flamegraph SVG (inferno, no Perl).

use std::path::{Path, PathBuf};
use std::process::Command;

use bench_core::profile::{AllocationProfile, Profile, breakdown};

/// Sampling frequency: prime, so it does not beat with periodic work.
pub const FREQUENCY: &str = "999";

/// What a flamegraph and the breakdown hold, for every view that shows them.
pub const ON_CPU_ONLY: &str = "on-CPU samples only: time a thread spends parked or waiting is not in the flamegraph (see switches/op and CPU/wall in the cost columns)";

/// How many frames the breakdown lists by self time.
pub const TOP_FRAMES: usize = 8;

/// The perf executable (BENCHSCOPE_PERF, else `perf` on the PATH).
pub fn perf() -> PathBuf {
    std::env::var_os("BENCHSCOPE_PERF")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("perf"))
}

/// Checks that perf can record this user's processes, by recording `true`; the error says why
/// not and how to enable it.
pub fn check() -> Result<(), String> {
    check_with(&perf())
}

fn check_with(perf: &Path) -> Result<(), String> {
    let dir = tempfile_dir()?;
    let out = dir.join("probe.data");
    let result = Command::new(perf)
        .args(["record", "-q", "-e", "cpu-clock", "-o"])
        .arg(&out)
        .args(["--", "true"])
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "cannot profile: perf is not installed ({}). Install it from the distribution's packages: `apt-get install linux-perf` (Debian), `apt-get install linux-tools-generic` (Ubuntu), `dnf install perf` (Fedora)",
            perf.display()
        )),
        Err(e) => Err(format!(
            "cannot profile: cannot run {}: {e}",
            perf.display()
        )),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let paranoid = bench_core::opener::read_text(
                Path::new("/proc/sys/kernel/perf_event_paranoid"),
                "",
                bench_core::opener::Kind::Small,
            )
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
            Err(format!(
                "cannot profile: perf may not record here (kernel.perf_event_paranoid = {paranoid}): {}. Run as root, or allow it with `sysctl kernel.perf_event_paranoid=1`; in a container, give it CAP_PERFMON (or --privileged)",
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
    }
}

fn tempfile_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("benchscope-perf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot profile: {}: {e}", dir.display()))?;
    Ok(dir)
}

/// The arguments that make perf record `program args...` into `data`: CPU-clock samples with
/// DWARF call stacks (Rust release builds keep no frame pointers).
pub fn record_args(data: &Path) -> Vec<String> {
    vec![
        "record".into(),
        "-q".into(),
        "-F".into(),
        FREQUENCY.into(),
        "-e".into(),
        "cpu-clock".into(),
        "--call-graph".into(),
        "dwarf,16384".into(),
        "-o".into(),
        data.display().to_string(),
        "--".into(),
    ]
}

/// The file a bench's recording and flamegraph go to in `dir`: `<target>-<bench>-<run>`
/// (`/` in a bench name becomes `-`; a run id that starts with the target is not repeated).
pub fn stem(dir: &Path, target: &str, bench: &str, run_id: &str) -> PathBuf {
    let bench: String = bench
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let run = run_id
        .strip_prefix(target)
        .map(|r| r.trim_start_matches('-'))
        .unwrap_or(run_id);
    dir.join(format!("{target}-{bench}-{run}"))
}

/// Folds a recording into stacks (`root;...;leaf count`, kernel frames marked `_[k]`).
pub fn fold(data: &Path) -> Result<String, String> {
    use inferno::collapse::Collapse;
    // Inlined frames are left out: resolving them runs addr2line over the debug info and
    // takes 50 times longer; each frame is then a real function, as the layers need.
    let script = Command::new(perf())
        .args(["script", "--no-inline", "-i"])
        .arg(data)
        .output()
        .map_err(|e| format!("cannot run perf script: {e}"))?;
    if !script.status.success() {
        return Err(format!(
            "perf script failed: {}",
            String::from_utf8_lossy(&script.stderr).trim()
        ));
    }
    let mut options = inferno::collapse::perf::Options::default();
    options.annotate_kernel = true;
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::from(options)
        .collapse(&script.stdout[..], &mut folded)
        .map_err(|e| format!("cannot fold perf's stacks: {e}"))?;
    String::from_utf8(folded).map_err(|e| format!("folded stacks are not UTF-8: {e}"))
}

/// A flamegraph of folded stacks, as SVG.
pub fn flamegraph(folded: &str, title: &str) -> Result<Vec<u8>, String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.subtitle = Some(ON_CPU_ONLY.to_string());
    options.count_name = "samples".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg)
        .map_err(|e| format!("cannot draw the flamegraph: {e}"))?;
    Ok(svg)
}

/// Where a profiled runner writes its allocations' stacks: `<stem>.alloc.folded`.
pub fn alloc_stacks_path(stem: &Path) -> PathBuf {
    stem.with_extension("alloc.folded")
}

/// What the subtitle of an allocation flamegraph says.
pub const ALLOCATIONS_ONLY: &str = "allocations made during the samples, by the call stack that made them (frames above the allocator); width: allocations";

/// A bench's allocation stacks (`<stem>.alloc.folded`, written by its runner) into their
/// breakdown and flamegraph (`<stem>.alloc.svg`); None where the runner wrote none (it
/// counted no allocations: a driver's own allocator).
pub fn finish_allocations(stem: &Path, title: &str) -> Option<AllocationProfile> {
    let folded = bench_core::opener::read_text(
        &alloc_stacks_path(stem),
        "",
        bench_core::opener::Kind::Document,
    )
    .ok()?;
    let mut a = AllocationProfile::of(&folded, TOP_FRAMES);
    if a.allocs == 0 {
        return Some(a);
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!("{title}: allocations");
    options.subtitle = Some(ALLOCATIONS_ONLY.to_string());
    options.count_name = "allocations".into();
    let mut svg = Vec::new();
    let svg_path = stem.with_extension("alloc.svg");
    match inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg)
        .map_err(|e| format!("cannot draw the allocation flamegraph: {e}"))
        .and_then(|()| crate::files::write_atomic(&svg_path, &svg))
    {
        Ok(()) => a.flamegraph = Some(svg_path.display().to_string()),
        Err(e) => a.error = Some(e),
    }
    Some(a)
}

/// Turns a bench's recording (`<stem>.perf.data`) into its profile: the breakdown, the folded
/// stacks (`<stem>.folded`) and the flamegraph (`<stem>.svg`), written atomically; the
/// recording is removed (it can be tens of MB). Where its runner kept its allocations'
/// stacks, their breakdown and flamegraph too ([`finish_allocations`]).
pub fn finish(stem: &Path, title: &str) -> Profile {
    let mut profile = finish_cpu(stem, title);
    profile.allocations = finish_allocations(stem, title);
    profile
}

fn finish_cpu(stem: &Path, title: &str) -> Profile {
    let data = stem.with_extension("perf.data");
    let result = (|| {
        let folded = fold(&data)?;
        if folded.trim().is_empty() {
            return Err("perf recorded no samples".to_string());
        }
        let mut profile = breakdown(&folded, TOP_FRAMES);
        let svg = flamegraph(&folded, title)?;
        crate::files::write_atomic(&stem.with_extension("folded"), folded.as_bytes())?;
        let svg_path = stem.with_extension("svg");
        crate::files::write_atomic(&svg_path, &svg)?;
        profile.flamegraph = Some(svg_path.display().to_string());
        Ok(profile)
    })();
    let _ = std::fs::remove_file(&data);
    result.unwrap_or_else(Profile::failed)
}

#[cfg(test)]
mod tests {
    use bench_core::profile::Layer;

    const FIXTURE: &str = include_str!("../tests/fixtures/rusqlite.folded");

    /// A profile recorded on the test machine (perf, DWARF stacks, the rusqlite lookup bench):
    /// the rules put most of it in SQLite and the kernel, as the phase trace cannot show.
    #[test]
    fn a_recorded_profile_breaks_down_by_layer() {
        let p = bench_core::profile::breakdown(FIXTURE, super::TOP_FRAMES);
        // More than half a second of CPU sampled.
        assert!(p.cpu_ns > 500_000_000, "{}", p.cpu_ns);
        let kernel = p.share(Layer::Kernel);
        let sqlite = p.share(Layer::Sqlite);
        assert!(kernel > 0.2 && sqlite > 0.2, "{p:?}");
        assert!(p.share(Layer::Other) < 0.2, "{p:?}");
        let shares: f64 = Layer::ALL.iter().map(|l| p.share(*l)).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        assert_eq!(p.top.len(), super::TOP_FRAMES);
        assert!(p.top.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    /// The allocations of sql-middleware's lookup as a profiled runner wrote them (every
    /// allocation of its samples, by call stack): the crate's own share, its top caller, and a
    /// flamegraph drawn beside; no stacks, no allocation profile.
    #[test]
    fn allocation_stacks_break_down_by_layer_with_their_flamegraph() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("single_row_lookup-sql-middleware-1");
        assert_eq!(super::finish_allocations(&stem, "t"), None);
        std::fs::write(
            super::alloc_stacks_path(&stem),
            include_str!("../tests/fixtures/sql-middleware.alloc.folded"),
        )
        .unwrap();
        let a = super::finish_allocations(&stem, "single_row_lookup sql-middleware").unwrap();
        // 20 allocations a lookup over 5,000 lookups, and a few besides.
        assert!((100_000..101_000).contains(&a.allocs), "{}", a.allocs);
        assert!(a.share(Layer::Crate) > 0.7, "{a:?}");
        assert!(a.share(Layer::Driver) > 0.1, "{a:?}");
        assert_eq!(
            a.share(Layer::Allocator),
            0.0,
            "the allocator's frames are cut"
        );
        let shares: f64 = Layer::ALL.iter().map(|l| a.share(*l)).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        assert_eq!(
            a.top[0],
            (
                "sql_middleware::query_utils::extract_column_names".to_string(),
                25_000
            )
        );
        let svg = std::fs::read_to_string(a.flamegraph.as_deref().unwrap()).unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("extract_column_names"));
        assert!(svg.contains("allocations"), "counted in allocations");
        assert_eq!(a.error, None);
    }

    #[test]
    fn a_missing_perf_says_how_to_install_it() {
        let e = super::check_with(std::path::Path::new("/nonexistent/perf")).unwrap_err();
        assert!(
            e.starts_with("cannot profile: perf is not installed (/nonexistent/perf)")
                && e.contains("apt-get install linux-perf"),
            "{e}"
        );
    }

    #[test]
    fn files_are_named_by_target_bench_and_run() {
        let p = super::stem(
            std::path::Path::new("fg"),
            "single_row_lookup",
            "middleware/spin",
            "single_row_lookup-77-1-1",
        );
        assert_eq!(
            p,
            std::path::Path::new("fg/single_row_lookup-middleware-spin-77-1-1")
        );
        assert_eq!(
            p.with_extension("svg"),
            std::path::Path::new("fg/single_row_lookup-middleware-spin-77-1-1.svg")
        );
    }

    #[test]
    fn a_flamegraph_is_drawn_from_folded_stacks() {
        let svg = String::from_utf8(super::flamegraph(FIXTURE, "rusqlite").unwrap()).unwrap();
        assert!(
            svg.starts_with("<?xml") && svg.contains("<svg"),
            "{}",
            &svg[..80]
        );
        assert!(svg.contains("sqlite3_step"));
        assert!(svg.contains("on-CPU samples only"));
    }
}
