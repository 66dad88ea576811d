//! The panels' own state (what each shows and where its cursor is) and which has the focus:
//! below the explorer's whole state, which holds them, and the keys handled per panel.

use std::collections::BTreeSet;

use bench_core::catalog::{BenchSpec, Target};
use bench_core::knobs::{self, Knobs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Catalog,
    Knobs,
    Live,
    Compare,
}

impl Focus {
    pub const ALL: [Focus; 4] = [Focus::Catalog, Focus::Knobs, Focus::Live, Focus::Compare];

    pub fn title(self) -> &'static str {
        match self {
            Focus::Catalog => "Catalog",
            Focus::Knobs => "Knobs",
            Focus::Live => "Live",
            Focus::Compare => "Comparison",
        }
    }

    pub(super) fn step(self, by: isize) -> Focus {
        let i = Focus::ALL.iter().position(|f| *f == self).unwrap_or(0) as isize;
        Focus::ALL[(i + by).rem_euclid(Focus::ALL.len() as isize) as usize]
    }
}

#[derive(Debug, Clone, Default)]
pub struct CatalogPanel {
    pub cursor: usize,
    pub marked: BTreeSet<&'static str>,
    /// What the catalog and the comparison's rows are narrowed to (`/`): words that must all
    /// be found in a bench's name, backend, strategy or phase.
    pub filter: String,
    /// The filter is being typed: keys go to it.
    pub filtering: bool,
    /// Groups (the first part of bench names: `insert`, `middleware`) shown as one row (`z`).
    pub folded: BTreeSet<&'static str>,
}

/// A bench's group: the first part of its name (`insert` of `insert/middleware/spin`), what
/// `a` marks and `z` folds.
pub fn group_of(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

/// Whether `b` is shown under `filter`: each of its words (case aside) in the bench's name,
/// backend (pool or crate), strategy or phase, or, a word with a pattern's special characters
/// (`^sql-middleware`, `spin|worker`), a regular expression its name matches
/// ([`bench_core::catalog::FilterWord`]).
pub fn shown(b: &BenchSpec, filter: &str) -> bool {
    use bench_core::catalog::FilterWord;
    use std::cell::RefCell;
    // The filter's words, compiled once per filter text (every frame asks for every bench).
    thread_local! {
        static WORDS: RefCell<(String, Vec<FilterWord>)> = const { RefCell::new((String::new(), Vec::new())) };
    }
    if filter.trim().is_empty() {
        return true;
    }
    let mut text = format!("{} {}", b.name, b.backend());
    if let Some(s) = b.strategy() {
        text.push(' ');
        text.push_str(s.name());
    }
    if let Some(p) = b.phase {
        text.push(' ');
        text.push_str(p.label());
    }
    let text = text.to_lowercase();
    WORDS.with(|words| {
        let mut words = words.borrow_mut();
        if words.0 != filter {
            *words = (
                filter.to_string(),
                filter.split_whitespace().map(FilterWord::new).collect(),
            );
        }
        words.1.iter().all(|w| w.matches(b.name, &text))
    })
}

#[derive(Debug, Clone)]
pub struct ComparePanel {
    pub row: usize,
    pub col: usize,
    /// The bench ratios are against.
    pub baseline_bench: &'static str,
    /// The run verdicts are against (by id).
    pub baseline_run: Option<String>,
    /// The figures the panel draws, worked out when the results change.
    pub analysis: crate::analysis::Analysis,
    /// The selected run drawn on its target's two axes (cases x subjects) instead of benches
    /// x runs (`m`), with the matrix's selected row and column.
    pub matrix: bool,
    pub matrix_row: usize,
    pub matrix_col: usize,
}

impl ComparePanel {
    pub fn new(target: &Target) -> ComparePanel {
        ComparePanel {
            row: 0,
            col: 0,
            baseline_bench: target.baseline,
            baseline_run: None,
            analysis: Default::default(),
            matrix: false,
            matrix_row: 0,
            matrix_col: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct KnobsPanel {
    /// The values the next run gets.
    pub values: Knobs,
    pub cursor: usize,
    /// The text being typed into the knob under the cursor.
    pub editing: Option<String>,
    /// The values being typed for a sweep of the knob under the cursor.
    pub sweep: Option<String>,
    /// Why the last value was refused.
    pub error: Option<String>,
}

/// The most runs one sweep queues (a 5 x 5 matrix).
pub const MAX_SWEEP_RUNS: usize = 25;

impl KnobsPanel {
    pub fn new(values: Knobs) -> KnobsPanel {
        KnobsPanel {
            values,
            cursor: 0,
            editing: None,
            sweep: None,
            error: None,
        }
    }

    /// Takes on another target's knobs, keeping the values of knobs of the same name.
    pub fn switch_to(&mut self, next: &Target) {
        let mut values =
            knobs::resolve(&next.knobs, &knobs::process_env, &[]).unwrap_or_else(|_| {
                knobs::resolve(&next.knobs, &|_| None, &[]).expect("defaults are valid")
            });
        for spec in &next.knobs {
            if let Some(v) = self.values.get(spec.name) {
                values.set(spec.name, v.clone());
            }
        }
        *self = KnobsPanel::new(values);
    }
}

#[derive(Debug, Clone, Default)]
pub struct LivePanel {
    /// The selected bench among the shown run's benches.
    pub row: usize,
}
