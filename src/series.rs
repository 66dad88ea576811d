//! A bench's history on one machine as `history` finds it in the results store: its points
//! (the runs of each commit), the steps between them and the shifts within noise. Data only,
//! with the words every view of it uses (the command's table, the HTML report, the explorer's
//! overlay); how it is found from the store is `history`'s.

use bench_core::text::Text;
use serde::Serialize;

/// One point of a series: the runs of one commit (or label, or a run of neither).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Commit {
    /// What the point is called: the label, else the commit's first 12 characters (with
    /// `+changes` when the tree had changes), else the run's time.
    pub name: Text,
    pub commit: Option<String>,
    pub label: Option<String>,
    /// When its first run was recorded.
    pub at: String,
    pub runs: usize,
    /// The median of its runs' medians, ns per operation.
    pub median: f64,
    /// The lowest and highest bound of its runs' 95% intervals of the median.
    pub ci: [f64; 2],
    pub cpu: Text,
    /// What changed here from the point before: the machine's CPU or kernel, the knobs; runs
    /// left out as disturbed.
    pub notes: Vec<Text>,
    /// Every run of it was disturbed: it takes no part in the step search.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// The median of its runs' allocations per operation, where they were counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocs: Option<f64>,
}

/// Where allocations per operation changed between two points that counted them: counts, so
/// any change of `bench_core::compare::ALLOC_STEP` or more is one, no test needed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocStep {
    /// The first point after the change.
    pub index: usize,
    /// The point before (the last that counted) and this one: the commit range.
    pub after: Text,
    pub at: Text,
    pub before_count: f64,
    pub count: f64,
}

impl AllocStep {
    /// More allocations per operation than before.
    pub fn more(&self) -> bool {
        self.count > self.before_count
    }
}

/// A change point of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The first point after the step.
    pub index: usize,
    /// The last point before it and the first after: the commit range the step is in.
    pub after: Text,
    pub at: Text,
    /// Median of the segment after over the segment before, less 1 (0.05: 5% slower).
    pub change: f64,
    pub p_value: f64,
    /// A slowdown beyond the noise threshold.
    pub regression: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub target: Text,
    pub bench: Text,
    pub machine: Text,
    pub machine_id: String,
    pub build_profile: String,
    pub points: Vec<Commit>,
    /// Change points whose size is beyond the noise threshold.
    pub steps: Vec<Step>,
    /// Change points within it: the level moved, by less than the noise threshold (what a
    /// machine drifts by over minutes here); shown, never a step or a regression.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shifts: Vec<Step>,
    /// The noise threshold steps were told apart from shifts by.
    pub noise: f64,
    /// Where allocations per operation changed, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alloc_steps: Vec<AllocStep>,
}

impl Commit {
    /// Its interval as text, `-` when its runs have none.
    pub fn ci_text(&self) -> String {
        if self.ci[0].is_finite() {
            bench_core::format::ci(self.ci)
        } else {
            "-".into()
        }
    }
}

impl Series {
    /// `single_row_lookup / rusqlite on vm-1 (AMD EPYC)`, saying when the build is not release.
    /// What the series is, a text of names from the store (escaped where it is shown).
    pub fn title(&self) -> Text {
        let cpu = self.points.last().map(|p| p.cpu.raw()).unwrap_or("?");
        bench_core::text!(
            "{} / {} on {} ({cpu}){}",
            self.target.raw(),
            self.bench.raw(),
            self.machine.raw(),
            if self.build_profile == "release" {
                String::new()
            } else {
                format!(", {} build: not representative", self.build_profile)
            }
        )
    }

    /// A line per change point, steps first: its size, commits either side, p-value, and
    /// what it is.
    pub fn change_lines(&self) -> Vec<Text> {
        let line = |kind: &str, st: &Step, what: String| {
            bench_core::text!(
                "{kind} {:+.1}% between {} and {} (p = {:.3}): {what}",
                st.change * 100.0,
                st.after.raw(),
                st.at.raw(),
                st.p_value
            )
        };
        let noise = self.noise * 100.0;
        self.steps
            .iter()
            .map(|st| {
                let what = if st.regression {
                    format!("a slowdown beyond the {noise:.1}% noise")
                } else {
                    "faster".into()
                };
                line("step", st, what)
            })
            .chain(self.shifts.iter().map(|st| {
                line(
                    "shift",
                    st,
                    format!("within the {noise:.1}% noise, not a step"),
                )
            }))
            .chain(self.alloc_steps.iter().map(|a| {
                bench_core::text!(
                    "allocations per operation {} → {} between {} and {}: {}",
                    bench_core::format::count(a.before_count),
                    bench_core::format::count(a.count),
                    a.after.raw(),
                    a.at.raw(),
                    if a.more() { "more" } else { "fewer" }
                )
            }))
            .collect()
    }

    /// Whether its newest step is a regression beyond noise, or its newest change of
    /// allocations per operation is to more.
    pub fn regressed(&self) -> bool {
        self.steps.last().is_some_and(|s| s.regression)
            || self.alloc_steps.last().is_some_and(AllocStep::more)
    }
}
