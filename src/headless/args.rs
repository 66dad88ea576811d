//! What `benchscope run` takes (its arguments, output formats) and what its steps share: the
//! errors that end it, the side of a paired run, how a report is rendered.

use bench_core::service::args::SessionArgs;

use crate::export::{self, Report};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
    Jsonl,
    Csv,
}

#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Target to run (see `benchscope list`).
    pub target: String,
    /// Benches to run (repeatable): a bench's exact name, or else a regular expression matched
    /// anywhere in the names, as Criterion's filter is (`single_put`, `'^concurrent_reads_[48]/'`);
    /// a bench two of them select runs once. Default: all of the target's.
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Runs of each configuration, each in a fresh runner process whose environment is shifted
    /// in size (so memory layout changes between runs): the exports add the spread of each
    /// bench's median between runs.
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub repeat: String,
    /// Run each bench under perf (a runner of its own) and write a flamegraph SVG per bench
    /// into DIR; the outputs add where each bench's CPU goes, by layer. Profiled timings
    /// include the profiler's cost: they are marked, and never compared with unprofiled runs.
    #[arg(long, value_name = "DIR")]
    pub flamegraph: Option<std::path::PathBuf>,
    /// Write the --format output to FILE (atomically) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Also write the markdown export to FILE (atomically), whatever --format is.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<std::path::PathBuf>,
    /// Also write the JSON export to FILE (atomically), whatever --format is.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<std::path::PathBuf>,
    /// Also write an HTML report into DIR: index.html with the tables, the SVG charts, and
    /// the history of the benches that ran from the results store.
    #[arg(long, value_name = "DIR")]
    pub export_html: Option<std::path::PathBuf>,
    /// Also write a CSV of every bench of every run to FILE (atomically).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<std::path::PathBuf>,
    /// Save the runs (every repeat and sweep value) as baseline NAME, replacing one of that
    /// name. Repeats (--repeat 3) let later comparisons measure run-to-run variation.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Compare the runs with baseline NAME (or a baseline or report file) after they finish;
    /// the exit status is 3 when any bench regressed.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// With --baseline: measure the baseline's set-up again in this run, ROUNDS rounds of one
    /// fresh run of its knobs and one of these, in alternating order (A B, B A, ...). The
    /// verdicts compare the two runs of each round by their fastest samples (a paired t-test;
    /// a round that moved far beyond the others is left out as disturbed, and named), so what
    /// moves the machine over minutes moves both alike and cancels; the saved runs are
    /// compared with the new ones of their set-up to show how far the machine moved since.
    #[arg(long, value_name = "ROUNDS", requires = "baseline")]
    pub interleave: Option<String>,
    #[command(flatten)]
    pub verdicts: crate::baseline::VerdictArgs,
    /// Show the results of a Criterion folder (target/criterion or any CRITERION_HOME) beside
    /// the live runs, as read-only runs: each benchmark's raw samples, with Criterion's own
    /// estimates noted.
    #[arg(long, value_name = "DIR")]
    pub import_criterion: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub store: crate::store::StoreArgs,
    #[command(flatten)]
    pub machine: crate::runner::machine::MachineArgs,
}

impl RunArgs {
    /// Every file the run writes its exports to, with its format.
    pub(super) fn exports(&self) -> Vec<(Format, &std::path::Path)> {
        [
            (Format::Markdown, &self.export_markdown),
            (Format::Json, &self.export_json),
            (Format::Csv, &self.export_csv),
        ]
        .into_iter()
        .filter_map(|(f, p)| Some((f, p.as_deref()?)))
        .chain(self.output.as_deref().map(|p| (self.format, p)))
        .collect()
    }
}

/// A report in one format (jsonl is the event stream itself: nothing to render).
pub(super) fn render(format: Format, report: &Report<'_>) -> String {
    match format {
        Format::Table => export::table::render(report),
        Format::Markdown => export::markdown::render(report),
        Format::Json => export::json::render(report),
        Format::Csv => export::csv::render(report),
        Format::Jsonl => String::new(),
    }
}

/// Which side of an interleaved comparison a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The baseline's set-up, measured again.
    Baseline,
    /// What was asked for.
    Current,
}

/// The padding a repeat's runner gets in its environment: repeat `i` carries `i` KiB more.
pub fn env_pad(i: usize) -> Vec<(String, String)> {
    vec![("BENCHSCOPE_ENV_PAD".to_string(), "x".repeat(i * 1024))]
}

/// Why a command stopped before running anything.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: a value, a file or a baseline; nothing ran.
    #[error("{0}")]
    Input(String),
    /// What the runs need could not be set up (the runner executable, signal handling).
    #[error("{0}")]
    Start(String),
}
