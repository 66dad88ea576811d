//! What differs between two runs: knobs, trace, build, SQLite, CPU; flagged beside a
//! verdict, never silently compared.

use crate::protocol::results::RunRecord;
use crate::text;

/// What differs between two runs beyond their knobs that makes their timings incomparable:
/// trace, profiling, build profile, SQLite versions, CPU model, the CPUs runners were confined
/// to, whether idle CPUs were kept polling.
pub fn setup_differences(a: &RunRecord, b: &RunRecord) -> Vec<crate::text::Text> {
    let mut d = run_differences(a, b);
    if let (Some(x), Some(y)) = (&a.start, &b.start) {
        if x.budget.paired != y.budget.paired {
            d.push(text!(
                "paired rounds {} vs {}",
                if x.budget.paired { "on" } else { "off" },
                if y.budget.paired { "on" } else { "off" }
            ));
        }
        if x.budget.paired && y.budget.paired && x.paired_group() != y.paired_group() {
            let words = |g: Option<usize>| {
                g.map(|g| format!("in groups of {g}"))
                    .unwrap_or_else(|| "all at once".into())
            };
            d.push(text!(
                "paired rounds {} vs {}",
                words(x.paired_group()),
                words(y.paired_group())
            ));
        }
        if x.env.profile != y.env.profile {
            d.push(text!(
                "build {} vs {}",
                x.env.profile.raw(),
                y.env.profile.raw()
            ));
        }
        if x.env.sqlite != y.env.sqlite {
            d.push(text!(
                "SQLite {} vs {}",
                x.env.sqlite.raw(),
                y.env.sqlite.raw()
            ));
        }
        if x.env.cpu != y.env.cpu {
            d.push(text!("CPU {} vs {}", x.env.cpu.raw(), y.env.cpu.raw()));
        }
        if x.env.cpus != y.env.cpus {
            let words = |c: &Option<Vec<usize>>| {
                crate::units::placement(c.as_deref().map(crate::units::cpu_list).as_deref())
            };
            d.push(text!(
                "runners {} vs {}",
                words(&x.env.cpus),
                words(&y.env.cpus)
            ));
        }
    }
    let polled = |r: &RunRecord| {
        r.machine
            .as_ref()
            .and_then(|m| m.cpu_idle.as_ref())
            .is_some_and(crate::protocol::CpuIdle::polled)
    };
    if polled(a) != polled(b) {
        let words = crate::protocol::CpuIdle::words;
        d.push(text!(
            "idle CPUs {} vs {}",
            words(polled(a)),
            words(polled(b))
        ));
    }
    d
}

/// The SQLite settings a bench's connections read back that differ from what its run asked
/// for (`name: got (asked want)`); empty when they match or the bench has no connection.
pub fn settings_differences(run: &RunRecord, bench: &str) -> Vec<crate::text::Text> {
    let (Some(b), Some(start)) = (run.bench(bench), run.start.as_ref()) else {
        return Vec::new();
    };
    if b.sqlite.is_empty() {
        return Vec::new();
    }
    let asked = crate::settings::SqliteSettings::from_knobs(&start.knobs).expected();
    crate::settings::differences(&asked, &b.sqlite)
}

/// Whether two runs measured the same thing the same way: same target, knobs and trace.
/// Returns what differs, or nothing when they are comparable.
pub fn run_differences(a: &RunRecord, b: &RunRecord) -> Vec<crate::text::Text> {
    match (&a.start, &b.start) {
        (Some(x), Some(y)) => {
            let mut d = Vec::new();
            if x.target != y.target {
                d.push(text!("target {} vs {}", x.target.raw(), y.target.raw()));
            }
            if x.trace != y.trace {
                d.push(text!("trace {} vs {}", x.trace, y.trace));
            }
            if a.profiled != b.profiled {
                d.push(text!("profiled {} vs {}", a.profiled, b.profiled));
            }
            d.extend(
                x.knobs
                    .differences(&y.knobs)
                    .into_iter()
                    .map(text::Text::new),
            );
            d
        }
        _ => vec!["a run without a start".into()],
    }
}
