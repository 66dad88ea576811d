//! SVG charts beside the markdown export, drawn by gnuplot through criterion-plot: each
//! bench's sample distribution, the phase breakdown of traced benches, and a sweep's scaling.
//! What each chart shows is decided here as data ([`Chart`], pure and tested); drawing is the
//! one step that needs gnuplot.

use std::path::{Path, PathBuf};

use bench_core::measure::trace::Phase;
use bench_core::protocol::results::RunRecord;

use super::Report;

/// One chart: a title, its axes, and named series of points.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Part of the file name: `<stem>-<slug>.svg`.
    pub slug: String,
    /// What the markdown says above the link.
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    /// Names of the x positions (phases, sweep values), when the x axis is not a number.
    pub x_tics: Vec<String>,
    pub log_y: bool,
    /// The kind of plot: steps (a histogram) or lines with points.
    pub steps: bool,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Text as gnuplot shows it literally: inside its single quotes (criterion-plot writes them
/// as they are) and through its enhanced-text markup (`_` and `^` would be sub- and
/// superscripts).
fn gp(text: &str) -> String {
    text.replace('\'', "’")
        .replace('_', "\\_")
        .replace('^', "\\^")
        .replace('{', "\\{")
        .replace('}', "\\}")
        .replace('@', "\\@")
}

/// Every chart a report calls for.
pub fn charts(report: &Report<'_>) -> Vec<Chart> {
    let mut out = Vec::new();
    for (i, run) in report.runs.iter().enumerate() {
        let n = report.number(i);
        out.extend(distribution(run, n));
        out.extend(phases(run, n));
    }
    if let Some(sc) = report.scaling() {
        let points: Vec<String> = sc.points.iter().map(|p| p.values.join(" ")).collect();
        out.push(Chart {
            slug: "scaling".into(),
            caption: format!("{}: ops/s at each point of the sweep", sc.target),
            x_label: sc.knobs.join(" x "),
            y_label: "ops/s".into(),
            x_tics: points,
            log_y: true,
            steps: false,
            series: sc
                .rows
                .iter()
                .map(|(bench, ys)| {
                    let pts = ys
                        .iter()
                        .enumerate()
                        .filter_map(|(x, y)| y.map(|y| (x as f64, y)))
                        .collect();
                    (bench.clone(), pts)
                })
                .filter(|(_, p): &(String, Vec<(f64, f64)>)| !p.is_empty())
                .collect(),
        });
    }
    out
}

/// Each bench's samples as a histogram (share of samples per bucket of ns/op), one series
/// per bench, on one chart per run.
fn distribution(run: &RunRecord, n: usize) -> Option<Chart> {
    let series: Vec<(String, Vec<(f64, f64)>)> = run
        .benches
        .iter()
        .filter(|b| b.samples.len() >= 2)
        .map(|b| {
            let total = b.samples.len() as f64;
            let hist = super::histogram::buckets(&b.samples, super::histogram::BUCKETS);
            (
                b.name.clone(),
                hist.into_iter()
                    .map(|(edge, c)| (edge, c as f64 / total))
                    .collect(),
            )
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    let target = run.start.as_ref().map(|s| s.target.as_str()).unwrap_or("?");
    Some(Chart {
        slug: format!("run{n}-distribution"),
        caption: format!(
            "Run {n} ({target}): each bench's samples, ns/op (share of samples per bucket)"
        ),
        x_label: "ns/op (upper edge of the bucket)".into(),
        y_label: "share of samples".into(),
        x_tics: Vec::new(),
        log_y: false,
        steps: true,
        series,
    })
}

/// The phase breakdown of the traced benches: ns/op per phase, one series per bench.
fn phases(run: &RunRecord, n: usize) -> Option<Chart> {
    let series: Vec<(String, Vec<(f64, f64)>)> = run
        .benches
        .iter()
        .filter(|b| !b.phases.is_empty())
        .map(|b| {
            (
                b.name.clone(),
                Phase::ALL
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i as f64, b.phases.get(p).copied().unwrap_or(0.0)))
                    .collect(),
            )
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(Chart {
        slug: format!("run{n}-phases"),
        caption: format!("Run {n}: where a lookup's time goes, ns/op per phase"),
        x_label: "phase".into(),
        y_label: "ns/op".into(),
        x_tics: Phase::ALL.iter().map(|p| p.label().to_string()).collect(),
        log_y: false,
        steps: false,
        series,
    })
}

/// The path of a chart beside `<stem>.md`.
pub fn path(dir: &Path, stem: &str, chart: &Chart) -> PathBuf {
    dir.join(format!("{stem}-{}.svg", slug(&chart.slug)))
}

/// Whether gnuplot can draw here (criterion-plot asks `gnuplot --version`).
pub fn gnuplot() -> Result<(), String> {
    criterion_plot::version()
        .map(|_| ())
        .map_err(|e| format!("gnuplot is not available ({e:?}): no SVG charts"))
}

/// Draws `chart` into `path` with gnuplot; waits for it.
pub fn draw(chart: &Chart, path: &Path) -> Result<(), String> {
    use criterion_plot::prelude::*;
    let mut f = Figure::new();
    f.set(Font("Helvetica"))
        .set(FontSize(10.))
        .set(Output(path.to_path_buf()))
        .set(Size(960, 540))
        .set(Title(gp(&chart.caption)))
        .configure(Key, |k| {
            k.set(Boxed::Yes)
                .set(Position::Outside(Vertical::Top, Horizontal::Right))
        });
    let tics: Vec<f64> = (0..chart.x_tics.len()).map(|i| i as f64).collect();
    let escaped: Vec<String> = chart.x_tics.iter().map(|t| gp(t)).collect();
    let labels: Vec<&str> = escaped.iter().map(String::as_str).collect();
    f.configure(Axis::BottomX, |a| {
        a.set(Label(gp(&chart.x_label)));
        if !labels.is_empty() {
            a.set(TicLabels {
                labels: &labels,
                positions: &tics,
            });
        }
        a
    });
    f.configure(Axis::LeftY, |a| {
        a.set(Label(gp(&chart.y_label)));
        if chart.log_y {
            a.set(Scale::Logarithmic);
        }
        a
    });
    for (name, pts) in &chart.series {
        let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let label = Label(gp(name));
        if chart.steps {
            f.plot(Steps { x: &xs, y: &ys }, |s| {
                s.set(label).set(LineWidth(1.5))
            });
        } else {
            f.plot(LinesPoints { x: &xs, y: &ys }, |s| {
                s.set(label).set(PointType::Circle).set(PointSize(0.7))
            });
        }
    }
    let out = f
        .draw()
        .and_then(|c| c.wait_with_output())
        .map_err(|e| format!("gnuplot failed on {}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!(
            "gnuplot failed on {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// Draws every chart of `report` beside `<dir>/<stem>.md`. Returns the charts drawn (caption,
/// file name) for the markdown to link, or one line saying why there are none.
pub fn write_all(
    report: &Report<'_>,
    dir: &Path,
    stem: &str,
) -> Result<Vec<(String, String)>, String> {
    write_charts(&charts(report), dir, stem)
}

/// Draws `all` as `<dir>/<stem>-<slug>.svg`; the charts drawn (caption, file name).
pub fn write_charts(
    all: &[Chart],
    dir: &Path,
    stem: &str,
) -> Result<Vec<(String, String)>, String> {
    if all.is_empty() {
        return Ok(Vec::new());
    }
    gnuplot()?;
    let mut drawn = Vec::new();
    for c in all {
        let p = path(dir, stem, c);
        // gnuplot writes the file itself: into a temp name, renamed once complete.
        let tmp = p.with_extension(format!("svg.tmp{}", std::process::id()));
        draw(c, &tmp)?;
        std::fs::rename(&tmp, &p).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        drawn.push((c.caption.clone(), name));
    }
    Ok(drawn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn traced_run() -> RunRecord {
        let mut r = RunRecord::default();
        let mut k = bench_core::knobs::Knobs::default();
        k.set("rows", 1000u64);
        r.apply(testing::start(&k, true, false, testing::BUDGET));
        for (b, m) in [("rusqlite", 1400.0), ("middleware/spin", 4600.0)] {
            for e in testing::bench_events(b, "b", 1000, &testing::samples(m, 30), None) {
                r.apply(e);
            }
        }
        r.apply(bench_core::protocol::Event::Phases {
            bench: "middleware/spin".into(),
            iter: 0,
            ops: 100,
            ns_per_op: [(Phase::Dispatch, 1500.0), (Phase::ExecuteMarshal, 2100.0)]
                .into_iter()
                .collect(),
        });
        r
    }

    #[test]
    fn a_report_calls_for_a_distribution_and_a_phase_chart_per_run() {
        let runs = [traced_run()];
        let report = Report::new(&runs, "rusqlite", "t");
        let cs = charts(&report);
        let slugs: Vec<&str> = cs.iter().map(|c| c.slug.as_str()).collect();
        assert_eq!(slugs, ["run1-distribution", "run1-phases"]);
        let dist = &cs[0];
        assert_eq!(dist.series.len(), 2);
        let share: f64 = dist.series[0].1.iter().map(|p| p.1).sum();
        assert!((share - 1.0).abs() < 1e-9, "shares add up to one: {share}");
        let ph = &cs[1];
        assert_eq!(ph.series.len(), 1);
        assert_eq!(ph.x_tics.len(), Phase::ALL.len());
        assert_eq!(
            path(Path::new("d"), "r", ph),
            PathBuf::from("d/r-run1-phases.svg")
        );
    }

    /// With gnuplot (CI installs it), the SVGs are drawn and hold every series by name.
    #[test]
    fn charts_are_drawn_as_svg_holding_their_series() {
        if gnuplot().is_err() {
            bench_core::testing::skip(
                "charts_are_drawn_as_svg_holding_their_series",
                "gnuplot is not installed (apt-get install gnuplot-nox)",
            );
            return;
        }
        let mut sweep = Vec::new();
        for rows in [1000u64, 8000] {
            let mut r = traced_run();
            if let Some(s) = &mut r.start {
                s.knobs.set("rows", rows);
            }
            sweep.push(r);
        }
        let report = Report::new(&sweep, "rusqlite", "t");
        let dir = tempfile::tempdir().unwrap();
        let drawn = write_all(&report, dir.path(), "report").unwrap();
        let names: Vec<&str> = drawn.iter().map(|d| d.1.as_str()).collect();
        assert_eq!(
            names,
            [
                "report-run1-distribution.svg",
                "report-run1-phases.svg",
                "report-run2-distribution.svg",
                "report-run2-phases.svg",
                "report-scaling.svg"
            ]
        );
        for (_, name) in &drawn {
            let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
            let doc = roxmltree::Document::parse(&text).unwrap();
            assert_eq!(doc.root_element().tag_name().name(), "svg");
            let texts: Vec<&str> = doc
                .descendants()
                .filter_map(|n| n.text())
                .map(str::trim)
                .collect();
            let want: &[&str] = if name.contains("phases") {
                &["middleware/spin"]
            } else {
                &["rusqlite", "middleware/spin"]
            };
            for w in want {
                assert!(texts.contains(w), "{name} has no series {w}: {texts:?}");
            }
            // Each series is a drawn path.
            assert!(doc.descendants().filter(|n| n.has_tag_name("path")).count() >= want.len());
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            5,
            "no temp file left"
        );
    }
}
