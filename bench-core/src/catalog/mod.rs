//! The catalog's vocabulary: targets, benches with a typed identity, dispatch strategies, and
//! the knobs several targets share. Each target declares its own entry in its workload module
//! (`workloads/<target>`); the list of targets is `workloads::targets()`.
//!
//! - here: targets, benches (their spec and kind), the runner binary each needs, errors;
//! - [`subject`]: what a bench measures (a crate as shipped, the middleware on a strategy and
//!   pool, turso, ...), the dispatch strategies and pools;
//! - [`shared_knobs`]: the knobs several targets share (rows, lookups, concurrency, ...).

use serde::Serialize;

use crate::knobs::KnobSpec;
use crate::measure::trace::Phase;

pub mod shared_knobs;
pub mod subject;
pub mod table;

pub use shared_knobs::{
    CONCURRENCY, LOOKUPS, LOOKUPS_PER_CHECKOUT, ROWS, SPIN_US, SQLX_STATEMENT_CACHE, STORAGE,
    TRACE_EVERY,
};
pub use subject::{
    Harness, POOL, Pool, Shipped, Strategy, Subject, VALUES, pool_mismatch, values_mismatch,
};
pub use table::{CrateDesc, Serve};

/// One word of a catalog filter (the explorer's `/`): a regular expression on a bench's name,
/// as `run --bench` takes one, when it holds one of a pattern's special characters and
/// compiles; else text to find anywhere in what is shown of the bench. Case aside, both.
#[derive(Debug, Clone)]
pub enum FilterWord {
    Text(String),
    Pattern(regex::Regex),
}

impl FilterWord {
    pub fn new(word: &str) -> FilterWord {
        const SPECIAL: &[char] = &[
            '^', '$', '[', ']', '(', ')', '|', '*', '+', '?', '\\', '{', '}',
        ];
        if word.contains(SPECIAL)
            && let Ok(re) = regex::RegexBuilder::new(word)
                .case_insensitive(true)
                .build()
        {
            return FilterWord::Pattern(re);
        }
        FilterWord::Text(word.to_lowercase())
    }

    /// Whether the word matches a bench called `name` that shows `text` (its name, backend,
    /// strategy and phase, lowercased).
    pub fn matches(&self, name: &str, text: &str) -> bool {
        match self {
            FilterWord::Text(w) => text.contains(w.as_str()),
            FilterWord::Pattern(re) => re.is_match(name),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchKind {
    /// A whole operation, end to end.
    Bench,
    /// Isolates one phase of the operation.
    Micro,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchSpec {
    pub name: &'static str,
    pub kind: BenchKind,
    /// What is measured; the harness and backend follow from it.
    pub subject: Subject,
    /// The phase a micro-bench isolates (and, for a checkout fan-out, the phase it stresses).
    pub phase: Option<Phase>,
    /// What one operation is.
    pub op: &'static str,
    pub about: &'static str,
    /// Which of its target's own cases the bench runs (an operation, a batch size), for
    /// targets whose benches differ by more than their subject; 0 otherwise.
    pub variant: u16,
    /// The bench its ratio is taken against, where not the target's baseline (the same
    /// operation on the baseline backend, say).
    pub vs: Option<&'static str>,
}

impl BenchSpec {
    /// A whole-operation bench.
    pub const fn whole(
        name: &'static str,
        subject: Subject,
        op: &'static str,
        about: &'static str,
    ) -> BenchSpec {
        BenchSpec {
            name,
            kind: BenchKind::Bench,
            subject,
            phase: None,
            op,
            about,
            variant: 0,
            vs: None,
        }
    }

    /// A micro-bench isolating `phase`; what one operation is doubles as its description.
    pub const fn micro(
        name: &'static str,
        subject: Subject,
        phase: Phase,
        op: &'static str,
    ) -> BenchSpec {
        BenchSpec {
            name,
            kind: BenchKind::Micro,
            subject,
            phase: Some(phase),
            op,
            about: op,
            variant: 0,
            vs: None,
        }
    }

    pub const fn about(mut self, about: &'static str) -> BenchSpec {
        self.about = about;
        self
    }

    pub const fn phase(mut self, phase: Phase) -> BenchSpec {
        self.phase = Some(phase);
        self
    }

    /// The same bench, running its target's case `variant`, its ratio taken against the
    /// target's baseline.
    pub const fn variant(mut self, variant: u16) -> BenchSpec {
        self.variant = variant;
        self
    }

    /// The same bench, running its target's case `variant`, its ratio taken against `vs`.
    pub const fn case(mut self, variant: u16, vs: &'static str) -> BenchSpec {
        self.variant = variant;
        self.vs = Some(vs);
        self
    }

    pub fn harness(&self) -> Harness {
        self.subject.harness()
    }

    pub fn backend(&self) -> &'static str {
        self.subject.backend()
    }

    pub fn strategy(&self) -> Option<Strategy> {
        self.subject.strategy()
    }
}

impl Serialize for BenchSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("BenchSpec", 9)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("harness", &self.harness())?;
        st.serialize_field("backend", self.backend())?;
        st.serialize_field("strategy", &self.strategy().map(Strategy::name))?;
        st.serialize_field("phase", &self.phase)?;
        st.serialize_field("op", self.op)?;
        st.serialize_field("about", self.about)?;
        if let Some(vs) = self.vs {
            st.serialize_field("vs", vs)?;
        } else {
            st.skip_field("vs")?;
        }
        st.end()
    }
}

/// A bench name made at start-up (per-strategy benches), kept for the life of the process.
pub fn leak(name: String) -> &'static str {
    Box::leak(name.into_boxed_str())
}

/// How a target measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Samples of a repeated operation; the median per operation is the figure.
    PerOp,
    /// Samples time a fan-out of concurrent operations, so ns/op reads as 1 / throughput and
    /// the views lead with ops/s.
    Throughput,
    /// A scenario that runs for a set time and reports a time series (reads/s, latency,
    /// writes, starvation) instead of samples of an operation.
    Scenario,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub name: &'static str,
    pub about: &'static str,
    /// Seed of the target's data (the dataset's id shuffle, generated rows).
    pub seed: u64,
    pub knobs: Vec<KnobSpec>,
    pub benches: Vec<BenchSpec>,
    /// The bench other benches are compared against by default.
    pub baseline: &'static str,
    #[serde(skip)]
    pub measure: Measure,
    /// Kept in the catalog's JSON for readers of `benchscope list --format json`.
    pub throughput: bool,
    /// Phases a subject does not let one measure apart, with why: listed, never faked.
    pub hidden: Vec<Hidden>,
    /// What `--quick` runs of this target: its source suite's reduced matrix, each knob's
    /// values (comma-separated), for every knob of it that nothing else sets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quick: Vec<QuickKnob>,
    /// What `--suite` sets: the knobs as its source suite's own bench sets them up, for every
    /// knob of it that nothing else sets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suite: Vec<QuickKnob>,
}

/// A knob's value (or values) in one of a target's set-ups: its `--quick` matrix, its
/// `--suite` set-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QuickKnob {
    pub knob: &'static str,
    pub values: &'static str,
}

/// A phase of a subject's path that has no micro-bench of its own, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hidden {
    /// The subject's bench (its whole lookup).
    pub bench: &'static str,
    pub phase: &'static str,
    pub reason: &'static str,
}

impl Target {
    pub fn new(
        name: &'static str,
        about: &'static str,
        seed: u64,
        measure: Measure,
        baseline: &'static str,
    ) -> Target {
        Target {
            name,
            about,
            seed,
            knobs: Vec::new(),
            benches: Vec::new(),
            baseline,
            measure,
            throughput: measure == Measure::Throughput,
            hidden: Vec::new(),
            quick: Vec::new(),
            suite: Vec::new(),
        }
    }

    /// The knobs' values `--quick` runs (its source suite's quick mode): a list of values
    /// makes a sweep, two a matrix, as on the command line.
    pub fn quick(mut self, knobs: &[(&'static str, &'static str)]) -> Target {
        self.quick.extend(
            knobs
                .iter()
                .map(|&(knob, values)| QuickKnob { knob, values }),
        );
        self
    }

    /// The knobs' values `--suite` runs: the target as its source suite's own bench is set up.
    pub fn suite(mut self, knobs: &[(&'static str, &'static str)]) -> Target {
        self.suite.extend(
            knobs
                .iter()
                .map(|&(knob, values)| QuickKnob { knob, values }),
        );
        self
    }

    /// Says that `bench`'s path has `phase` but no way to measure it apart, and why.
    pub fn hidden(mut self, bench: &'static str, phase: Phase, reason: &'static str) -> Target {
        self.hidden.push(Hidden {
            bench,
            phase: phase.label(),
            reason,
        });
        self
    }

    pub fn knobs(mut self, knobs: &[KnobSpec]) -> Target {
        self.knobs.extend_from_slice(knobs);
        self
    }

    pub fn bench(mut self, bench: BenchSpec) -> Target {
        self.benches.push(bench);
        self
    }

    /// One bench per dispatch strategy, named `{prefix}{strategy}`.
    pub fn per_strategy(
        mut self,
        prefix: &str,
        bench: impl Fn(&'static str, Strategy) -> BenchSpec,
    ) -> Target {
        for s in Strategy::ALL {
            self.benches
                .push(bench(leak(format!("{prefix}{}", s.name())), s));
        }
        self
    }

    /// One bench per crate the subject table says serves this target, named
    /// `{prefix}{crate's name}` and made by `bench` from how the crate serves it; then the
    /// crate's further benches there and the phases it has no bench of.
    pub fn per_crate(
        mut self,
        prefix: &str,
        bench: impl Fn(&'static str, &'static CrateDesc, &'static Serve) -> BenchSpec,
    ) -> Target {
        for (c, serve) in table::crates::crates_serving(self.name) {
            let name = leak(format!("{prefix}{}", c.name));
            self.benches.push(bench(name, c, serve));
            for m in serve.more {
                let subject = Subject::Crate(c.id);
                self.benches.push(match m.phase {
                    Some(phase) => BenchSpec::micro(m.name, subject, phase, m.op).about(m.about),
                    None => BenchSpec::whole(m.name, subject, m.op, m.about).variant(m.variant),
                });
            }
            for (phase, reason) in serve.hidden {
                self = self.hidden(name, *phase, reason);
            }
        }
        self
    }

    /// The bench named `name`, or an error listing the target's benches.
    pub fn spec(&self, name: &str) -> Result<&BenchSpec, CatalogError> {
        self.benches
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| CatalogError::UnknownBench {
                target: self.name.to_string(),
                name: name.to_string(),
                known: self
                    .benches
                    .iter()
                    .map(|b| b.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The benches `pattern` selects, in catalog order: the bench of that exact name, else every
    /// bench whose name the regular expression matches anywhere (as Criterion's filter does:
    /// `single_put` is every put of one item, `^concurrent_reads_[48]` two of the readers). A
    /// pattern that is no regular expression, or matches nothing, is an error naming the
    /// nearest names.
    pub fn select(&self, pattern: &str) -> Result<Vec<&BenchSpec>, CatalogError> {
        self.select_for("--bench", pattern)
    }

    /// [`Target::select`] for a pattern given with `flag`, which its errors name. An empty
    /// pattern selects nothing (as a regular expression it would select every bench).
    pub fn select_for(
        &self,
        flag: &'static str,
        pattern: &str,
    ) -> Result<Vec<&BenchSpec>, CatalogError> {
        if let Some(b) = self.benches.iter().find(|b| b.name == pattern) {
            return Ok(vec![b]);
        }
        let none = |why: String| CatalogError::NoMatch {
            flag,
            target: self.name.to_string(),
            pattern: pattern.to_string(),
            why,
            near: self.near(pattern),
        };
        if pattern.trim().is_empty() {
            return Err(none(
                "an empty pattern (allowed: a bench's name, or a regular expression; `.` selects every bench)".into(),
            ));
        }
        let re = regex::Regex::new(pattern).map_err(|e| {
            none(format!(
                "it is neither a bench name nor a regular expression ({})",
                e.to_string().lines().last().unwrap_or("").trim()
            ))
        })?;
        let found: Vec<&BenchSpec> = self
            .benches
            .iter()
            .filter(|b| re.is_match(b.name))
            .collect();
        if found.is_empty() {
            return Err(none("no name matches it".into()));
        }
        Ok(found)
    }

    /// The names nearest to `text` (at most five, the nearest first: the longest start in
    /// common, then the closest by Jaro-Winkler), for an error.
    fn near(&self, text: &str) -> String {
        let common = |name: &str| {
            text.chars()
                .zip(name.chars())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let mut scored: Vec<((usize, f64), &str)> = self
            .benches
            .iter()
            .map(|b| ((common(b.name), strsim::jaro_winkler(text, b.name)), b.name))
            .collect();
        scored.sort_by(|a, b| b.0.0.cmp(&a.0.0).then(b.0.1.total_cmp(&a.0.1)));
        let mut near: Vec<&str> = scored.iter().take(5).map(|(_, n)| *n).collect();
        if scored.len() > near.len() {
            near.push("...");
        }
        crate::text::terminal_str(&near.join(", "))
    }

    pub fn is_throughput(&self) -> bool {
        self.measure == Measure::Throughput
    }
}

pub use crate::error::CatalogError;

impl CatalogError {
    /// The error of a bench that a workload's implementation does not handle.
    pub fn no_implementation(target: &Target, bench: &BenchSpec, why: &'static str) -> Self {
        CatalogError::NoImplementation {
            target: target.name.to_string(),
            bench: bench.name.to_string(),
            why,
        }
    }
}

#[cfg(test)]
mod tests;
