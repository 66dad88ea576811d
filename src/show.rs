//! `benchscope show FILE`: a saved JSON report (from `run --format json` or the explorer's
//! export) rendered again as a table, markdown or JSON, without running anything.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::export::{self, Report};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    Table,
    Markdown,
    Json,
    Csv,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    /// A JSON report (`benchscope run --format json`, the explorer's export), a baseline, a
    /// session journal (.jsonl) or a Criterion folder (target/criterion).
    pub file: PathBuf,
    #[arg(long, value_enum, default_value_t = ShowFormat::Table)]
    pub format: ShowFormat,
}

pub use crate::export::json::{Saved, read};

/// Reads anything benchscope can show: a report as it was saved (its baseline bench and run
/// numbers kept), or a baseline, a session journal or a Criterion folder as runs.
pub fn load(path: &std::path::Path) -> Result<Saved, String> {
    let saved = load_any(path)?;
    if saved.runs.is_empty() {
        return Err(format!(
            "{} holds no run: nothing to show (allowed: a report, baseline or journal with at least one run)",
            path.display()
        ));
    }
    Ok(saved)
}

fn load_any(path: &std::path::Path) -> Result<Saved, String> {
    if path.is_file() && path.extension().is_some_and(|x| x == "json") {
        let (text, v) = crate::files::read_document(path)?;
        if v["schema"] == "benchscope.report" {
            return read(&text).map_err(|e| format!("{}: {e}", path.display()));
        }
    }
    let runs = crate::sources::open(path)?;
    let baseline = runs
        .iter()
        .find_map(|r| r.start.as_ref())
        .and_then(|s| bench_core::workloads::find(s.target.raw()).ok())
        .map(|t| t.baseline)
        .unwrap_or("rusqlite")
        .to_string();
    Ok(Saved {
        runs,
        baseline,
        generated_at: String::new(),
        run_numbers: None,
    })
}

pub fn run(args: ShowArgs) -> i32 {
    let saved = match load(&args.file) {
        Ok(s) => s,
        Err(e) => {
            crate::out::say!("error: {e}");
            return 2;
        }
    };
    let report = Report {
        run_numbers: saved.run_numbers.as_deref(),
        color: std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        ..Report::new(&saved.runs, &saved.baseline, &saved.generated_at)
    };
    crate::out::print(&match args.format {
        ShowFormat::Table => export::table::render(&report),
        ShowFormat::Markdown => export::markdown::render(&report),
        ShowFormat::Json => export::json::render(&report),
        ShowFormat::Csv => export::csv::render(&report),
    });
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::protocol::results::RunRecord;

    #[test]
    fn a_saved_report_renders_as_it_did() {
        let runs = vec![crate::testing::crud_run()];
        let report = Report::new(&runs, "insert/rusqlite", "2026-11-23T00:00:00Z");
        let saved = read(&export::json::render(&report)).unwrap();
        let names = |r: &[RunRecord]| -> Vec<String> {
            r.iter()
                .flat_map(|r| r.benches.iter().map(|b| b.name.raw().to_string()))
                .collect()
        };
        assert_eq!(names(&saved.runs), names(&runs));
        let again = Report::new(&saved.runs, &saved.baseline, &saved.generated_at);
        assert_eq!(
            export::markdown::render(&again),
            export::markdown::render(&report)
        );
    }

    #[test]
    fn other_files_are_refused_with_the_reason() {
        assert!(read("{").unwrap_err().starts_with("not JSON"));
        assert_eq!(
            read(r#"{"schema": "x"}"#).unwrap_err(),
            "not a benchscope report (schema \"x\"; expected \"benchscope.report\")"
        );
    }
}
