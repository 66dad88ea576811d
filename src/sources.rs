//! Runs from any file or folder benchscope reads (`show`, `store import`): a Criterion folder
//! ([`crate::import`]), a session journal ([`crate::journal`]), a baseline or a report
//! ([`crate::baseline`]).

use std::path::Path;

use bench_core::protocol::results::RunRecord;

/// Runs from any file or folder benchscope reads: a Criterion folder, a session journal, a
/// baseline or a report. Each run is marked with where it came from.
pub fn open(path: &Path) -> Result<Vec<RunRecord>, String> {
    // A link that leads nowhere or to itself is there: opened, it is refused by what it is.
    if std::fs::symlink_metadata(path).is_err() {
        return Err(format!(
            "cannot read {}: no such file or folder",
            path.display()
        ));
    }
    if path.is_dir() {
        let runs = crate::import::criterion(path)?;
        for r in &runs {
            r.check_figures()
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        return Ok(runs);
    }
    let mut note = String::new();
    let mut runs: Vec<RunRecord> = if path.extension().is_some_and(|x| x == "jsonl") {
        let s = crate::journal::load(path)?;
        if s.runs.is_empty() {
            return Err(format!(
                "{}: a session journal with no run in it ({} line{} did not read; allowed: the JSON lines an explorer writes)",
                path.display(),
                s.bad_lines,
                if s.bad_lines == 1 { "" } else { "s" }
            ));
        }
        if s.bad_lines > 0 {
            note = format!(
                " ({} line{} of it did not read: cut short or not a journal's)",
                s.bad_lines,
                if s.bad_lines == 1 { "" } else { "s" }
            );
        }
        s.runs.into_iter().map(|r| r.record).collect()
    } else {
        crate::baseline::load_file(path)?.runs
    };
    for (i, r) in runs.iter_mut().enumerate() {
        r.check_figures()
            .map_err(|e| format!("{}: run {}: {e}", path.display(), i + 1))?;
        r.source
            .get_or_insert_with(|| format!("{}{note}", path.display()));
    }
    Ok(runs)
}
