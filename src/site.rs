//! The HTML report as files: `index.html` and the SVG charts it shows, in one folder, written
//! by `run --export-html DIR` and `benchscope report --html DIR`. The page is the markdown
//! export and the history section (export::html, export::history: pure); drawing and writing
//! are here.

use std::path::{Path, PathBuf};

use bench_core::protocol::results::RunRecord;

use crate::export::{self, Report};
use crate::series::Series;
use crate::store::{Filter, Location, Store, Target};

/// Writes the site into `dir`: the report's tables and charts, then `history` (or `note`,
/// why there is none). Returns the page's path; a chart that cannot be drawn is named in the
/// page.
pub fn write(
    dir: &Path,
    title: &str,
    report: &Report<'_>,
    history: &[Series],
    note: Option<&str>,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let charts = export::charts::write_all(report, dir, "report");
    let history_charts = if history.is_empty() {
        Ok(Vec::new())
    } else {
        export::charts::write_charts(&export::history::charts(history), dir, "report")
    };
    let mut md = export::markdown::render(&report.with_charts(charts));
    let (drawn, why) = match &history_charts {
        Ok(d) => (d.as_slice(), None),
        Err(e) => (&[][..], Some(e.as_str())),
    };
    let note = match (note, why) {
        (Some(n), Some(w)) => Some(format!("{n}; {w}")),
        (Some(n), None) => Some(n.to_string()),
        (None, Some(w)) => Some(w.to_string()),
        (None, None) => None,
    };
    md.push_str(&export::history::markdown(history, drawn, note.as_deref()));
    let page = export::html::page(title, &md);
    let index = dir.join("index.html");
    crate::files::write_atomic(&index, &page)?;
    Ok(index)
}

/// The history of the benches of `runs` from the store at `target`, as history shows it;
/// or why there is none; with a line naming the store's rows that did not read, if any.
pub fn history_of(
    runs: &[RunRecord],
    target: &Target,
) -> Result<(Vec<Series>, Option<String>), String> {
    let mut store = Store::read(target)?;
    let mut targets: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.start.as_ref().map(|s| s.target.raw()))
        .collect();
    targets.sort();
    targets.dedup();
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    for t in targets {
        let benches: Vec<String> = runs
            .iter()
            .filter(|r| r.start.as_ref().is_some_and(|s| s.target == t))
            .flat_map(|r| r.benches.iter().map(|b| b.name.raw().to_string()))
            .collect();
        let read = series_of(&mut store, t, benches)?;
        all.extend(read.rows);
        skipped.extend(read.skipped);
    }
    let note = crate::store::Read::<Series> {
        rows: Vec::new(),
        skipped,
    }
    .note();
    Ok((all, note))
}

/// One bench's history (every machine's series) from the store at `target`, as the
/// explorer's history overlay shows it.
/// (Rows of the store that do not read are left out.)
pub fn bench_history(target: &Target, on: &str, bench: &str) -> Result<Vec<Series>, String> {
    series_of(&mut Store::read(target)?, on, vec![bench.to_string()]).map(|r| r.rows)
}

/// The series of `benches` of target `on`, with the default noise threshold, and the rows
/// of the store left out.
fn series_of(
    store: &mut Store,
    on: &str,
    benches: Vec<String>,
) -> Result<crate::store::Read<Series>, String> {
    let points = store.points(&Filter {
        target: Some(on.to_string()),
        benches,
        ..Filter::default()
    })?;
    Ok(crate::store::Read {
        rows: crate::history::series(
            &points.rows,
            crate::history::DEFAULT_NOISE,
            &Default::default(),
        ),
        skipped: points.skipped,
    })
}

/// `benchscope report --html DIR`: the newest run of each target on each machine from the
/// store, and the history of their benches.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Folder to write the site into (index.html and its SVG charts).
    #[arg(long, value_name = "DIR", required = true)]
    pub html: PathBuf,
    /// Only this target.
    pub target: Option<String>,
    /// Only these benches' history (repeatable).
    #[arg(long = "bench", value_name = "NAME")]
    pub benches: Vec<String>,
    /// Only this machine's runs.
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    #[command(flatten)]
    pub location: Location,
}

pub fn run(args: ReportArgs) -> i32 {
    let target = args.location.target();
    let filter = Filter {
        target: args.target.clone(),
        benches: args.benches.clone(),
        machine: args.machine.clone(),
        since: None,
    };
    let read = Store::read(&target).and_then(|mut s| Ok((s.latest(&filter)?, s.points(&filter)?)));
    let (runs, points) = match read {
        Ok(x) => x,
        Err(e) => {
            crate::out::say!("error: {e}");
            return 1;
        }
    };
    let history = crate::history::series(
        &points.rows,
        crate::history::DEFAULT_NOISE,
        &Default::default(),
    );
    // What of the store did not read is named on the page, and the rest reported.
    let mut skipped = runs.skipped;
    skipped.extend(points.skipped);
    let note = crate::store::Read::<()> {
        rows: Vec::new(),
        skipped,
    }
    .note();
    if let Some(n) = &note {
        crate::out::say!("warning: {n}");
    }
    let runs = runs.rows;
    let at = crate::format::now_rfc3339();
    // Ratios against the first run's target's baseline bench.
    let baseline = runs
        .first()
        .and_then(|r| r.start.as_ref())
        .and_then(|s| bench_core::workloads::find(s.target.raw()).ok())
        .map(|t| t.baseline)
        .unwrap_or("rusqlite");
    let report = Report::new(&runs, baseline, &at);
    match write(
        &args.html,
        &format!("benchscope report: {target}"),
        &report,
        &history,
        note.as_deref(),
    ) {
        Ok(p) => {
            crate::out::say!("wrote {}", p.display());
            0
        }
        Err(e) => {
            crate::out::say!("error: {e}");
            1
        }
    }
}
