//! `benchscope history`: per bench and machine, the series of medians by commit (or label, or
//! run when neither is known) read from the results store, with the change points E-Divisive
//! finds in it, each with its commit range and size. A series never spans two machines; where
//! a machine's CPU or a run's knobs change along a series, the point says so.
//!
//! The series model is `crate::series`; `series` and the renderers are pure; `run` reads the store and decides the exit status.

use std::collections::BTreeMap;

use crate::series::{AllocStep, Commit, Series, Step};
use crate::store::{Filter, Location, Point, Store};
use bench_core::knobs::Knobs;
use bench_core::measure::changepoint::{self, Settings};
use bench_core::units::ns;

/// Steps up to 2% are within noise unless told otherwise (as `compare`'s verdicts).
pub const DEFAULT_NOISE: f64 = 0.02;

/// A run whose 95% interval of the median is this many times wider than the series' usual
/// width (and wider than [`DISTURBED_FLOOR`]) was measured while something disturbed the
/// machine: its samples spread far beyond its neighbours'. Such runs are shown, and left out
/// of the step search. On this project's 2-vCPU KVM machines the hypervisor reported no steal
/// during such runs, yet their medians read 3-15% slow (tests/soak/history-steps.sh).
pub const DISTURBED_FACTOR: f64 = 4.0;
/// ±0.5% of the median: narrower intervals are never counted as disturbed.
pub const DISTURBED_FLOOR: f64 = 0.005;
/// When more than this share of a series' runs would be left out, none is: the spread is then
/// the bench's own (a change that made it noisier is a change to find).
pub const DISTURBED_MAX_SHARE: f64 = 0.2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Debug, Clone, clap::Args)]
pub struct HistoryArgs {
    /// Target whose history to show (default: every target in the store).
    pub target: Option<String>,
    /// Benches to show (repeatable; default: all).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// One machine's runs (its name, as history prints it, or its identity).
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// Runs recorded on or after this day or time (2026-11-01, or RFC 3339).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// A step up to this many percent is within noise: the exit status is 3 only when a
    /// series' newest step is a slowdown beyond it.
    #[arg(long, value_name = "PCT", default_value = "2")]
    pub noise: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub location: Location,
}

/// The series of `points` (oldest first), with their steps.
pub fn series(points: &[Point], noise: f64, settings: &Settings) -> Vec<Series> {
    let mut by_key: BTreeMap<(String, String, String, String), Vec<&Point>> = BTreeMap::new();
    for p in points {
        by_key
            .entry((
                p.target.clone(),
                p.bench.clone(),
                p.machine_name.clone(),
                p.build_profile.clone(),
            ))
            .or_default()
            .push(p);
    }
    by_key
        .into_iter()
        .map(|((target, bench, machine, build_profile), ps)| {
            let points = commits(&ps);
            let (steps, shifts) = steps(&points, noise, settings)
                .into_iter()
                .partition(|s| s.change.abs() > noise);
            let alloc_steps = alloc_steps(&points);
            Series {
                target: target.into(),
                bench: bench.into(),
                machine: machine.into(),
                machine_id: ps[0].machine_id.clone(),
                build_profile,
                points,
                steps,
                shifts,
                noise,
                alloc_steps,
            }
        })
        .collect()
}

/// What the store's `cpu_idle` says, in words (runs recorded before it was kept slept).
fn idle_words(state: Option<&str>) -> &'static str {
    bench_core::protocol::CpuIdle::words(state == Some("held"))
}

fn point_name(p: &Point) -> String {
    match (&p.label, &p.commit) {
        (Some(l), _) => l.clone(),
        (None, Some(c)) => format!(
            "{}{}",
            bench_core::format::prefix(c, 12),
            if p.dirty == Some(true) {
                "+changes"
            } else {
                ""
            }
        ),
        (None, None) => p.recorded_at.clone(),
    }
}

/// The half-width of a point's 95% interval of the median, relative to the median.
fn spread(p: &Point) -> f64 {
    (p.ci[1] - p.ci[0]) / 2.0 / p.median
}

/// Which of a series' runs were disturbed (see [`DISTURBED_FACTOR`]), by position, and the
/// series' usual spread.
fn disturbed(ps: &[&Point]) -> (Vec<bool>, f64) {
    let widths: Vec<f64> = ps
        .iter()
        .map(|p| spread(p))
        .filter(|w| w.is_finite())
        .collect();
    if widths.len() < 5 {
        return (vec![false; ps.len()], f64::NAN);
    }
    let usual = median_of(&widths);
    let out: Vec<bool> = ps
        .iter()
        .map(|p| {
            let w = spread(p);
            w.is_finite() && w > DISTURBED_FLOOR && w > DISTURBED_FACTOR * usual
        })
        .collect();
    if out.iter().filter(|d| **d).count() as f64 > DISTURBED_MAX_SHARE * ps.len() as f64 {
        return (vec![false; ps.len()], usual);
    }
    (out, usual)
}

/// Points grouped by commit, in the order each was first recorded.
fn commits(ps: &[&Point]) -> Vec<Commit> {
    let (flags, usual) = disturbed(ps);
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<(&Point, bool)>> = BTreeMap::new();
    for (p, d) in ps.iter().zip(&flags) {
        let name = point_name(p);
        if !groups.contains_key(&name) {
            order.push(name.clone());
        }
        groups.entry(name).or_default().push((p, *d));
    }
    let mut out: Vec<Commit> = Vec::new();
    let mut before: Option<&Point> = None;
    for name in order {
        let all = &groups[&name];
        let kept: Vec<&Point> = all.iter().filter(|(_, d)| !d).map(|(p, _)| *p).collect();
        let left_out = all.len() - kept.len();
        // The median of the runs kept; of all of them when none is.
        let g: Vec<&Point> = if kept.is_empty() {
            all.iter().map(|(p, _)| *p).collect()
        } else {
            kept
        };
        let median = median_of(&g.iter().map(|p| p.median).collect::<Vec<_>>());
        let lo = g.iter().map(|p| p.ci[0]).fold(f64::INFINITY, f64::min);
        let hi = g.iter().map(|p| p.ci[1]).fold(f64::NEG_INFINITY, f64::max);
        let first = g[0];
        let mut notes = Vec::new();
        if let Some(b) = before {
            if b.cpu != first.cpu || b.cores != first.cores {
                notes.push(format!(
                    "machine changed: {} ({} cores) → {} ({} cores)",
                    b.cpu, b.cores, first.cpu, first.cores
                ));
            }
            if b.kernel != first.kernel {
                notes.push(format!("kernel changed: {} → {}", b.kernel, first.kernel));
            }
            if let Some(d) = knob_change(&b.knobs, &first.knobs) {
                notes.push(format!("knobs changed: {d}"));
            }
            if b.cpus != first.cpus {
                let words = bench_core::units::placement;
                notes.push(format!(
                    "runners moved: {} → {}: benches that hand a query to another thread read differently",
                    words(b.cpus.as_deref()),
                    words(first.cpus.as_deref())
                ));
            }
            if idle_words(b.cpu_idle.as_deref()) != idle_words(first.cpu_idle.as_deref()) {
                notes.push(format!(
                    "idle CPUs changed: {} → {}: benches that hand a query to another thread read differently",
                    idle_words(b.cpu_idle.as_deref()),
                    idle_words(first.cpu_idle.as_deref())
                ));
            }
        }
        let last = *g.last().expect("a group has a point");
        // Knobs that differ between this commit's own runs.
        if g.iter().any(|p| p.knobs != first.knobs) {
            notes.push("its runs differ in knobs".into());
        }
        if left_out > 0 {
            let widest = all
                .iter()
                .filter(|(_, d)| *d)
                .map(|(p, _)| spread(p))
                .fold(0.0, f64::max);
            notes.push(format!(
                "{left_out} of its {} run{} disturbed (interval ±{:.1}%, {:.0}x the series' usual): {}",
                all.len(),
                if all.len() == 1 { "" } else { "s" },
                widest * 100.0,
                widest / usual,
                if left_out == all.len() {
                    "left out of the step search"
                } else {
                    "left out of its median and the step search"
                }
            ));
        }
        before = Some(last);
        out.push(Commit {
            name: name.into(),
            commit: first.commit.clone(),
            label: first.label.clone(),
            at: first.recorded_at.clone(),
            runs: all.len(),
            median,
            ci: [lo, hi],
            cpu: first.cpu.clone().into(),
            notes: notes
                .into_iter()
                .map(bench_core::text::Text::from)
                .collect(),
            disturbed: left_out == all.len(),
            allocs: {
                let counted: Vec<f64> = g.iter().filter_map(|p| p.allocs).collect();
                (!counted.is_empty()).then(|| median_of(&counted))
            },
        });
    }
    out
}

/// Where the points' allocations per operation change by `ALLOC_STEP` or more from the last
/// point that counted them (points without a count are passed over).
fn alloc_steps(points: &[Commit]) -> Vec<AllocStep> {
    let mut out = Vec::new();
    let mut before: Option<(&Commit, f64)> = None;
    for (i, p) in points.iter().enumerate() {
        let Some(count) = p.allocs else { continue };
        if let Some((b, before_count)) = before
            && (count - before_count).abs() >= bench_core::compare::ALLOC_STEP
        {
            out.push(AllocStep {
                index: i,
                after: b.name.clone(),
                at: p.name.clone(),
                before_count,
                count,
            });
        }
        before = Some((p, count));
    }
    out
}

/// `a=1 → a=2, b=x → b=y` for the knobs that differ, or None.
fn knob_change(a: &str, b: &str) -> Option<String> {
    if a == b {
        return None;
    }
    let read = |s: &str| serde_json::from_str::<Knobs>(s).unwrap_or_default();
    let (ka, kb) = (read(a), read(b));
    let mut names: Vec<&String> = ka.0.keys().chain(kb.0.keys()).collect();
    names.sort();
    names.dedup();
    let show = |k: &Knobs, n: &str| k.0.get(n).map(|v| v.to_string()).unwrap_or("-".into());
    let parts: Vec<String> = names
        .into_iter()
        .filter(|n| ka.0.get(*n) != kb.0.get(*n))
        .map(|n| format!("{n}={} → {n}={}", show(&ka, n), show(&kb, n)))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The median of `xs` (the comparison model's: the mean of the middle two for an even count).
fn median_of(xs: &[f64]) -> f64 {
    bench_core::compare::median_of(xs.to_vec())
}

/// The change points of a series' medians (its disturbed points left out), each sized by the
/// segments either side of it.
fn steps(points: &[Commit], noise: f64, settings: &Settings) -> Vec<Step> {
    // Positions in `points` of the medians searched.
    let at: Vec<usize> = (0..points.len())
        .filter(|&i| !points[i].disturbed)
        .collect();
    let xs: Vec<f64> = at.iter().map(|&i| points[i].median).collect();
    let found = changepoint::e_divisive(&xs, settings);
    let mut bounds = vec![0];
    bounds.extend(found.iter().map(|c| c.index));
    bounds.push(xs.len());
    found
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let before = median_of(&xs[bounds[k]..bounds[k + 1]]);
            let after = median_of(&xs[bounds[k + 1]..bounds[k + 2]]);
            let change = after / before - 1.0;
            Step {
                index: at[c.index],
                after: points[at[c.index - 1]].name.clone(),
                at: points[at[c.index]].name.clone(),
                change,
                p_value: c.p_value,
                regression: change > noise,
            }
        })
        .collect()
}

/// The series as text: a table per series, its steps under it; where one bench is measured
/// on machines of different CPUs, a line says that their series are not one.
pub fn table(all: &[Series]) -> String {
    let mut out = String::new();
    if all.is_empty() {
        return "no finished runs in the results store match\n".into();
    }
    let mut cpus: BTreeMap<(&str, &str), Vec<(&str, &str)>> = BTreeMap::new();
    for s in all {
        cpus.entry((s.target.raw(), s.bench.raw()))
            .or_default()
            .push((
                s.machine.raw(),
                s.points.last().map(|p| p.cpu.raw()).unwrap_or(""),
            ));
    }
    // Names from the store (labels, commits, machines) escaped for a terminal.
    let shown = |t: &bench_core::text::Text| t.terminal().to_string();
    for s in all {
        out.push_str(&format!("{}\n", s.title().terminal()));
        let width = s
            .points
            .iter()
            .map(|p| shown(&p.name).chars().count())
            .max()
            .unwrap_or(0)
            .max(13);
        // Allocations per operation where some point counted them.
        let counted = s.points.iter().any(|p| p.allocs.is_some());
        let allocs = |p: &Commit| match (counted, p.allocs) {
            (false, _) => String::new(),
            (true, Some(a)) => format!("  {:>9}", bench_core::format::count(a)),
            (true, None) => format!("  {:>9}", "-"),
        };
        out.push_str(&format!(
            "  {:>3}  {}  {:<19}  {:>4}  {:>10}{}  {}\n",
            "#",
            bench_core::format::pad("commit/label", width, true),
            "recorded",
            "runs",
            "median",
            if counted {
                format!("  {:>9}", "allocs/op")
            } else {
                String::new()
            },
            "95% CI"
        ));
        for (i, p) in s.points.iter().enumerate() {
            let step = s.steps.iter().find(|st| st.index == i);
            let alloc_step = s.alloc_steps.iter().find(|a| a.index == i);
            out.push_str(&format!(
                "  {:>3}  {}  {:<19}  {:>4}  {:>10}{}  {}{}{}\n",
                i + 1,
                bench_core::format::pad(&shown(&p.name), width, true),
                bench_core::text::terminal_str(p.at.get(..19).unwrap_or(&p.at)).replace('T', " "),
                p.runs,
                ns(p.median),
                allocs(p),
                p.ci_text(),
                step.map(|st| format!("  ◆ step {:+.1}%", st.change * 100.0))
                    .unwrap_or_default(),
                alloc_step
                    .map(|a| format!("  ◆ allocs {}", if a.more() { "more" } else { "fewer" }))
                    .unwrap_or_default()
            ));
            for n in &p.notes {
                out.push_str(&format!("       ↳ {}\n", n.terminal()));
            }
        }
        if s.steps.is_empty() {
            out.push_str(&format!(
                "  no step found ({} point{})\n",
                s.points.len(),
                if s.points.len() == 1 { "" } else { "s" }
            ));
        }
        for line in s.change_lines() {
            out.push_str(&format!("  {}\n", line.terminal()));
        }
        if let Some(ms) = cpus.get(&(s.target.raw(), s.bench.raw())) {
            let mut distinct: Vec<&str> = ms.iter().map(|m| m.1).collect();
            distinct.sort();
            distinct.dedup();
            if ms.len() > 1 && ms.last().map(|m| m.0) == Some(s.machine.raw()) {
                out.push_str(&format!(
                    "  {} machines measured this bench{}: each has a series of its own\n",
                    ms.len(),
                    if distinct.len() > 1 {
                        format!(" on {} different CPUs", distinct.len())
                    } else {
                        " on the same CPU model".into()
                    }
                ));
            }
        }
        out.push('\n');
    }
    out
}

fn parse_noise(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=50.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!(
            "invalid value {text:?} for --noise: expected a percentage (allowed: 0 to 50, e.g. 2 or 2%)"
        )),
    }
}

/// A day (YYYY-MM-DD, from its start in UTC) or an RFC 3339 time (any offset), as the UTC
/// time the store records runs at (`2026-11-01T11:00:00Z`, whole seconds, rounded down): what
/// `recorded_at` is compared with. A time with an offset compared as written would compare
/// wrong.
fn since_utc(s: &str) -> Result<String, String> {
    use time::format_description::well_known::Rfc3339;
    let day = time::macros::format_description!("[year]-[month]-[day]");
    let at = if let Ok(d) = time::Date::parse(s, &day) {
        Ok(d.midnight().assume_utc())
    } else {
        time::OffsetDateTime::parse(s, &Rfc3339)
    };
    at.ok()
        .and_then(|t| {
            t.to_offset(time::UtcOffset::UTC)
                .replace_nanosecond(0)
                .ok()?
                .format(&Rfc3339)
                .ok()
        })
        .ok_or_else(|| {
            format!(
                "invalid value {s:?} for --since: expected a day (2026-11-01) or an RFC 3339 time (2026-11-01T12:00:00Z)"
            )
        })
}

/// 0 when no series' newest step is a regression, 3 when one is, 2 on bad input, 1 when the
/// store cannot be read.
pub fn run(args: HistoryArgs) -> i32 {
    let checked = parse_noise(&args.noise)
        .and_then(|noise| Ok((noise, args.since.as_deref().map(since_utc).transpose()?)));
    let (noise, since) = match checked {
        Ok(n) => n,
        Err(e) => {
            crate::out::say!("error: {e}");
            return 2;
        }
    };
    let filter = Filter {
        target: args.target.clone(),
        benches: args.benches.clone(),
        machine: args.machine.clone(),
        since,
    };
    let target = args.location.target();
    let points = match Store::read(&target).and_then(|mut s| s.points(&filter)) {
        Ok(p) => p,
        Err(e) => {
            crate::out::say!("error: {e}");
            return 1;
        }
    };
    if let Some(n) = points.note() {
        crate::out::say!("warning: {n}");
    }
    let all = series(&points.rows, noise, &Settings::default());
    match args.format {
        Format::Table => crate::out::print(&table(&all)),
        Format::Json => crate::out::print(&format!("{}\n", bench_core::text::json::pretty(&all))),
    }
    if all.iter().any(Series::regressed) {
        3
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(i: usize, machine: &str, cpu: &str, label: &str, median: f64, knobs: &str) -> Point {
        Point {
            run: i as i64,
            recorded_at: format!("2026-11-25T10:{:02}:{:02}Z", i / 60, i % 60),
            machine_id: format!("id-{machine}"),
            machine_name: machine.into(),
            cpu: cpu.into(),
            cores: 2,
            kernel: "Linux 6.1".into(),
            commit: None,
            dirty: None,
            label: Some(label.into()),
            target: "single_row_lookup".into(),
            knobs: knobs.into(),
            build_profile: "release".into(),
            cpu_idle: None,
            cpus: None,
            bench: "rusqlite".into(),
            median,
            ci: [median * 0.99, median * 1.01],
            allocs: None,
        }
    }

    #[test]
    fn a_step_is_found_at_its_commit_with_its_size_and_machines_stay_apart() {
        // 30 labelled commits on machine a, the 16th and later 5% slower, with a wiggle of
        // ±0.5%; machine b (another CPU) flat.
        let wiggle = |i: usize| 1.0 + 0.005 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
        let mut ps = Vec::new();
        for i in 0..30 {
            let level = if i < 15 { 1000.0 } else { 1050.0 };
            let knobs = if i < 15 {
                r#"{"cache_size":2000}"#
            } else {
                r#"{"cache_size":34}"#
            };
            ps.push(point(
                i,
                "a",
                "EPYC",
                &format!("c{i:02}"),
                level * wiggle(i),
                knobs,
            ));
            ps.push(point(
                i,
                "b",
                "Xeon",
                &format!("c{i:02}"),
                700.0 * wiggle(i + 1),
                "{}",
            ));
        }
        let all = series(&ps, 0.02, &Settings::default());
        assert_eq!(all.len(), 2);
        let a = all.iter().find(|s| s.machine == "a").unwrap();
        assert_eq!(a.points.len(), 30);
        assert_eq!(a.steps.len(), 1, "{:?}", a.steps);
        let st = &a.steps[0];
        assert_eq!((st.after.raw(), st.at.raw()), ("c14", "c15"));
        assert!((st.change - 0.05).abs() < 0.01, "{}", st.change);
        assert!(st.regression && a.regressed());
        assert_eq!(
            a.points[15].notes,
            vec!["knobs changed: cache_size=2000 → cache_size=34"]
        );
        let b = all.iter().find(|s| s.machine == "b").unwrap();
        assert!(b.steps.is_empty());
        let text = table(&all);
        assert!(
            text.contains("single_row_lookup / rusqlite on a (EPYC)"),
            "{text}"
        );
        assert!(text.contains("step +5.0% between c14 and c15"), "{text}");
        // The step's mark is on its point's row alone.
        let marked: Vec<&str> = text.lines().filter(|l| l.contains("◆ step")).collect();
        assert_eq!(marked.len(), 1, "{text}");
        assert!(
            marked[0].contains("  c15  ") && marked[0].ends_with("◆ step +5.0%"),
            "{text}"
        );
        assert!(
            text.contains("2 machines measured this bench on 2 different CPUs"),
            "{text}"
        );
    }

    /// Two steps: whether the series regressed is its newest step's, not any step's.
    #[test]
    fn regressed_is_the_newest_steps_verdict() {
        let wiggle = |i: usize| 1.0 + 0.004 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
        let series_of = |levels: [f64; 3]| {
            let ps: Vec<Point> = (0..45)
                .map(|i| {
                    point(
                        i,
                        "a",
                        "EPYC",
                        &format!("c{i:02}"),
                        levels[i / 15] * wiggle(i),
                        "{}",
                    )
                })
                .collect();
            series(&ps, 0.02, &Settings::default()).remove(0)
        };
        // Slower, then faster again: the newest step is an improvement.
        let back = series_of([1000.0, 1150.0, 1050.0]);
        assert_eq!(back.steps.len(), 2, "{:?}", back.steps);
        assert!(back.steps[0].regression && !back.steps[1].regression);
        assert!(!back.regressed());
        // Faster, then slower: the newest step is a regression.
        let worse = series_of([1150.0, 1000.0, 1100.0]);
        assert_eq!(worse.steps.len(), 2, "{:?}", worse.steps);
        assert!(!worse.steps[0].regression && worse.steps[1].regression);
        assert!(worse.regressed());
    }

    #[test]
    fn runs_of_one_commit_make_one_point_and_a_new_cpu_is_said() {
        let mut ps = vec![
            point(0, "a", "EPYC", "x", 100.0, "{}"),
            point(1, "a", "EPYC", "x", 104.0, "{}"),
            point(2, "a", "EPYC", "x", 102.0, "{}"),
            point(3, "a", "Xeon", "y", 90.0, "{}"),
        ];
        ps[3].kernel = "Linux 6.8".into();
        ps[3].cpu_idle = Some("held".into());
        ps[3].cpus = Some("0".into());
        let all = series(&ps, 0.02, &Settings::default());
        let p = &all[0].points;
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].runs, p[0].median), (3, 102.0));
        assert_eq!(p[0].ci, [99.0, 104.0 * 1.01]);
        assert_eq!(
            p[1].notes,
            vec![
                "machine changed: EPYC (2 cores) → Xeon (2 cores)",
                "kernel changed: Linux 6.1 → Linux 6.8",
                "runners moved: on every CPU → confined to CPU 0: benches that hand a query to another thread read differently",
                "idle CPUs changed: left to sleep → kept polling: benches that hand a query to another thread read differently"
            ]
        );
    }

    #[test]
    fn disturbed_runs_are_shown_but_left_out_of_the_step_search() {
        // Flat at 1000 ns with intervals of ±0.1%, but the first three runs were measured on
        // a disturbed machine: 12% slow, intervals of ±1.5%. Without the rule they make a step.
        let mut ps: Vec<Point> = (0..30)
            .map(|i| {
                point(
                    i,
                    "a",
                    "EPYC",
                    &format!("c{i:02}"),
                    1000.0 + (i % 3) as f64,
                    "{}",
                )
            })
            .collect();
        for p in &mut ps {
            p.ci = [p.median * 0.999, p.median * 1.001];
        }
        for p in &mut ps[..3] {
            p.median = 1120.0;
            p.ci = [1120.0 * 0.985, 1120.0 * 1.015];
        }
        let medians: Vec<f64> = ps.iter().map(|p| p.median).collect();
        let raw = changepoint::e_divisive(&medians, &Settings::default());
        assert_eq!(raw.iter().map(|c| c.index).collect::<Vec<_>>(), [3]);
        let all = series(&ps, 0.02, &Settings::default());
        let s = &all[0];
        assert!(s.steps.is_empty() && s.shifts.is_empty(), "{:?}", s.steps);
        assert!(s.points[..3].iter().all(|p| p.disturbed));
        assert_eq!(
            s.points[0].notes,
            vec![
                "1 of its 1 run disturbed (interval ±1.5%, 15x the series' usual): left out of the step search"
            ]
        );
        // The rule leaves out a few runs, never a bench's own spread: when more than a fifth
        // of the runs are as wide, none is left out (and the step is found).
        for p in &mut ps[3..7] {
            p.median = 1120.0;
            p.ci = [1120.0 * 0.985, 1120.0 * 1.015];
        }
        let all = series(&ps, 0.02, &Settings::default());
        assert!(all[0].points.iter().all(|p| !p.disturbed));
        assert_eq!(all[0].steps.len(), 1, "{:?}", all[0]);
        assert_eq!(all[0].steps[0].at, "c07");
        // A level shift smaller than the noise threshold is a shift, not a step.
        let small: Vec<Point> = (0..30)
            .map(|i| {
                let m = if i < 15 { 1000.0 } else { 1010.0 } + (i % 3) as f64 * 0.5;
                point(i, "a", "EPYC", &format!("c{i:02}"), m, "{}")
            })
            .collect();
        let all = series(&small, 0.02, &Settings::default());
        assert!(all[0].steps.is_empty());
        assert_eq!(all[0].shifts.len(), 1);
        assert!(!all[0].regressed());
        assert!(
            table(&all).contains(
                "shift +1.0% between c14 and c15 (p = 0.005): within the 2.0% noise, not a step"
            ),
            "{}",
            table(&all)
        );
    }

    /// Points of median 1000 ns whose intervals are ±`half` ns each, in order: their spreads
    /// are `half / 1000` exactly.
    fn with_half_widths(half: &[f64]) -> Vec<Point> {
        half.iter()
            .enumerate()
            .map(|(i, h)| {
                let mut p = point(i, "a", "EPYC", &format!("c{i:02}"), 1000.0, "{}");
                p.ci = [1000.0 - h, 1000.0 + h];
                p
            })
            .collect()
    }

    fn flagged(ps: &[Point]) -> Vec<bool> {
        let refs: Vec<&Point> = ps.iter().collect();
        disturbed(&refs).0
    }

    /// The disturbed rule at each of its edges: five runs are enough to judge, a fifth of the
    /// runs may be left out, the floor and the factor are strict.
    #[test]
    fn the_disturbed_rule_holds_at_each_of_its_edges() {
        let one_wide = [false, false, false, false, true];
        // Five runs, one 10x the usual ±0.1%: left out (one of five is a fifth, allowed).
        assert_eq!(
            flagged(&with_half_widths(&[1.0, 1.0, 1.0, 1.0, 10.0])),
            one_wide
        );
        // Four runs with a finite interval are too few to judge, though five are shown.
        let mut ps = with_half_widths(&[1.0, 1.0, 1.0, 10.0, 1.0]);
        ps[4].median = 0.0;
        ps[4].ci = [0.0, 0.0];
        assert!(!spread(&ps[4]).is_finite());
        assert_eq!(flagged(&ps), [false; 5]);
        assert_eq!(
            flagged(&with_half_widths(&[1.0, 1.0, 1.0, 10.0])),
            [false; 4]
        );
        // Exactly at the floor (±0.5%), though 5x the usual: kept.
        assert_eq!(
            flagged(&with_half_widths(&[1.0, 1.0, 1.0, 1.0, 5.0])),
            [false; 5]
        );
        // Exactly 4x the usual (±0.5% against ±2%): kept.
        assert_eq!(
            flagged(&with_half_widths(&[5.0, 5.0, 5.0, 5.0, 20.0])),
            [false; 5]
        );
        // Above the floor but within 4x the usual: kept.
        assert_eq!(
            flagged(&with_half_widths(&[4.0, 4.0, 4.0, 4.0, 10.0])),
            [false; 5]
        );
        // Two of ten: a fifth, left out; three of ten: the bench's own spread, none left out.
        let mut h = [1.0; 10];
        h[2] = 10.0;
        h[7] = 10.0;
        assert_eq!(
            flagged(&with_half_widths(&h))
                .iter()
                .filter(|d| **d)
                .count(),
            2
        );
        h[9] = 10.0;
        assert_eq!(flagged(&with_half_widths(&h)), [false; 10]);
    }

    /// A change of exactly the noise threshold is within it: a shift, not a step, and not a
    /// regression.
    #[test]
    fn a_change_of_exactly_the_noise_is_a_shift() {
        let ps: Vec<Point> = (0..30)
            .map(|i| {
                let m = if i < 15 { 1000.0 } else { 1050.0 };
                point(i, "a", "EPYC", &format!("c{i:02}"), m, "{}")
            })
            .collect();
        let noise = 1050.0 / 1000.0 - 1.0;
        let s = series(&ps, noise, &Settings::default()).remove(0);
        assert!(s.steps.is_empty(), "{:?}", s.steps);
        assert_eq!(s.shifts.len(), 1, "{:?}", s.shifts);
        assert_eq!(s.shifts[0].change, noise);
        assert!(!s.shifts[0].regression && !s.regressed());
        // A hair below the change: a step, a regression.
        let s = series(&ps, noise * 0.999, &Settings::default()).remove(0);
        assert_eq!((s.steps.len(), s.shifts.len()), (1, 0));
        assert!(s.steps[0].regression && s.regressed());
    }

    /// The table counts points in words, and the line on machines of one bench comes once,
    /// under the last machine's series.
    #[test]
    fn the_table_says_points_and_machines_once() {
        let one = series(
            &[point(0, "a", "EPYC", "c00", 1000.0, "{}")],
            0.02,
            &Settings::default(),
        );
        let t = table(&one);
        assert!(t.contains("no step found (1 point)\n"), "{t}");
        assert!(!t.contains("machines measured"), "{t}");
        let ps: Vec<Point> = (0..3)
            .flat_map(|i| {
                [
                    point(i, "a", "EPYC", &format!("c{i:02}"), 1000.0, "{}"),
                    point(i, "b", "EPYC", &format!("c{i:02}"), 900.0, "{}"),
                ]
            })
            .collect();
        let t = table(&series(&ps, 0.02, &Settings::default()));
        assert!(t.contains("no step found (3 points)\n"), "{t}");
        let line = "  2 machines measured this bench on the same CPU model: each has a series of its own\n";
        assert_eq!(t.matches(line).count(), 1, "{t}");
        let b = t.find("single_row_lookup / rusqlite on b").unwrap();
        assert!(
            t.find(line).unwrap() > b,
            "under the last machine's series: {t}"
        );
    }

    /// Records `record` as run `i` of machine vm-1, at 10:00:`i` on 2026-11-25.
    fn record_numbered(
        store: &mut Store,
        i: usize,
        code: &crate::store::Code,
        record: &bench_core::protocol::results::RunRecord,
    ) {
        let machine = crate::store::MachineId {
            id: "m".into(),
            name: "vm-1".into(),
        };
        let run = crate::store::NewRun {
            key: format!("k{i}"),
            recorded_at: format!("2026-11-25T10:00:{i:02}Z"),
            machine: &machine,
            fingerprint: &crate::store::Fingerprint::here(),
            code,
            record,
            source: None,
        };
        assert_eq!(store.record(&[run]).unwrap(), 1);
    }

    /// A store of 30 labelled runs, the 16th and later `step` slower; `history`'s exit status
    /// over it.
    fn exit_status_over_a_store(step: f64) -> i32 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.sqlite");
        let target = crate::store::Target::Sqlite(db.clone());
        let mut store = Store::open(&target).unwrap();
        for i in 0..30 {
            let median = if i < 15 {
                1000.0
            } else {
                1000.0 * (1.0 + step)
            };
            let r = crate::testing::finished_record("single_row_lookup", &[("rusqlite", median)]);
            let code = crate::store::Code {
                label: Some(format!("c{i:02}")),
                ..Default::default()
            };
            record_numbered(&mut store, i, &code, &r);
        }
        run(HistoryArgs {
            target: Some("single_row_lookup".into()),
            benches: vec![],
            machine: Some("vm-1".into()),
            since: Some("2026-11-25".into()),
            noise: "2".into(),
            format: Format::Json,
            location: Location {
                store: Some(db.display().to_string()),
            },
        })
    }

    /// Allocations per operation kept in the store and read back with each point; where the
    /// count changes the series says so, with the commits either side, and a change to more is
    /// what the exit status says when it is the newest, whatever the time did.
    #[test]
    fn allocations_per_operation_have_a_history_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.sqlite");
        let mut store = Store::open(&crate::store::Target::Sqlite(db.clone())).unwrap();
        // Time flat; 8 allocations an operation, 9 from the 11th commit on; the 6th counts
        // nothing (a runner that could not count): passed over.
        for i in 0..15 {
            let mut r =
                crate::testing::finished_record("single_row_lookup", &[("rusqlite", 1000.0)]);
            let m = &mut r.benches[0].summary.as_mut().unwrap().memory;
            match i {
                5 => *m = None,
                10.. => m.as_mut().unwrap().allocs_per_op = 9.0,
                _ => assert_eq!(m.unwrap().allocs_per_op, 8.0),
            }
            let code = crate::store::Code {
                label: Some(format!("c{i:02}")),
                ..Default::default()
            };
            record_numbered(&mut store, i, &code, &r);
        }
        let read = store.points(&crate::store::Filter::default()).unwrap();
        assert_eq!(read.rows[3].allocs, Some(8.0));
        assert_eq!(read.rows[5].allocs, None);
        let all = series(&read.rows, 0.02, &Settings::default());
        let s = &all[0];
        assert!(s.steps.is_empty(), "time is flat: {:?}", s.steps);
        assert_eq!(
            s.alloc_steps,
            vec![AllocStep {
                index: 10,
                after: "c09".into(),
                at: "c10".into(),
                before_count: 8.0,
                count: 9.0,
            }]
        );
        assert!(s.regressed());
        let text = table(&all);
        assert!(text.contains("allocs/op"), "{text}");
        assert!(
            text.contains("allocations per operation 8.00 → 9.00 between c09 and c10: more"),
            "{text}"
        );
        let row = |name: &str| text.lines().find(|l| l.contains(name)).unwrap().to_string();
        assert!(row("c10").contains("◆ allocs more"), "{}", row("c10"));
        assert!(row("c05").contains("        -"), "{}", row("c05"));
        assert_eq!(
            run(HistoryArgs {
                target: Some("single_row_lookup".into()),
                benches: vec![],
                machine: None,
                since: None,
                noise: "2".into(),
                format: Format::Json,
                location: Location {
                    store: Some(db.display().to_string()),
                },
            }),
            3
        );
        // Back to 8: the newest change is to fewer, and the series has not regressed.
        let mut back = s.clone();
        back.alloc_steps.push(AllocStep {
            index: 14,
            after: "c13".into(),
            at: "c14".into(),
            before_count: 9.0,
            count: 8.0,
        });
        assert!(!back.regressed());
    }

    /// What history reads: runs recorded at or after --since (given with an offset, compared
    /// as the time it is), never a profiled run, never a bench that did not finish.
    #[test]
    fn since_profiled_runs_and_unfinished_benches_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let target = crate::store::Target::Sqlite(dir.path().join("s.sqlite"));
        let mut store = Store::open(&target).unwrap();
        for i in 0..30 {
            let mut r = crate::testing::finished_record(
                "single_row_lookup",
                &[("rusqlite", 1000.0), ("sqlx", 9000.0)],
            );
            // Run 20 was profiled; run 21's sqlx failed.
            r.profiled = i == 20;
            if i == 21 {
                r.benches[1].error = Some("broke".into());
                r.benches[1].summary = None;
            }
            record_numbered(&mut store, i, &crate::store::Code::default(), &r);
        }
        let mut read = |since: Option<&str>, bench: &str| -> Vec<String> {
            let f = Filter {
                benches: vec![bench.into()],
                since: since.map(|s| since_utc(s).unwrap()),
                ..Filter::default()
            };
            store
                .points(&f)
                .unwrap()
                .rows
                .into_iter()
                .map(|p| p.recorded_at[17..19].to_string())
                .collect()
        };
        let all: Vec<String> = (0..30)
            .filter(|i| *i != 20)
            .map(|i| format!("{i:02}"))
            .collect();
        assert_eq!(read(None, "rusqlite"), all);
        // 11:00:25 at +01:00 is 10:00:25 UTC: five runs, not none (as text it is later than
        // every one of them).
        assert_eq!(
            read(Some("2026-11-25T11:00:25+01:00"), "rusqlite"),
            ["25", "26", "27", "28", "29"]
        );
        let sqlx = read(Some("2026-11-25T10:00:19Z"), "sqlx");
        assert_eq!(sqlx, ["19", "22", "23", "24", "25", "26", "27", "28", "29"]);
    }

    #[test]
    fn the_exit_status_is_3_when_the_newest_step_is_a_slowdown_beyond_noise() {
        assert_eq!(exit_status_over_a_store(0.05), 3);
        assert_eq!(exit_status_over_a_store(-0.05), 0);
        assert_eq!(exit_status_over_a_store(0.0), 0);
    }

    #[test]
    fn bad_input_names_the_value_and_what_is_allowed() {
        assert!(parse_noise("x").unwrap_err().contains("\"x\" for --noise"));
        assert_eq!(parse_noise("5%").unwrap(), 0.05);
        assert_eq!(parse_noise("0").unwrap(), 0.0);
        assert_eq!(parse_noise("50").unwrap(), 0.5);
        for out in ["50.5", "-1", "NaN", "inf"] {
            let e = parse_noise(out).unwrap_err();
            assert!(e.contains("(allowed: 0 to 50"), "{out}: {e}");
        }
        assert_eq!(since_utc("2026-11-01").unwrap(), "2026-11-01T00:00:00Z");
        assert_eq!(
            since_utc("2026-11-01T12:00:00.75+02:00").unwrap(),
            "2026-11-01T10:00:00Z"
        );
        let e = since_utc("yesterday").unwrap_err();
        assert!(
            e.contains("\"yesterday\" for --since") && e.contains("2026-11-01"),
            "{e}"
        );
    }
}
