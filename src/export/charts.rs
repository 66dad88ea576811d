//! SVG charts beside the markdown export: each bench's sample distribution, the phase
//! breakdown of traced benches, a sweep's scaling, and history. What each chart shows is
//! decided here as data ([`Chart`], pure and tested); [`svg`] draws it in Rust (plotters'
//! SVG backend, which escapes every text and attribute it writes), so charts need nothing
//! installed and no interpreter is ever handed text from a run, an import or a store.

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

/// Part of a file name made of `s`: safe characters alone, and at most 120 of them (a name
/// from a store may be thousands long; a longer one keeps its first 100 and a hash of all).
fn slug(s: &str) -> String {
    let safe: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.len() <= 120 {
        return safe;
    }
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    s.hash(&mut h);
    format!("{}-{:016x}", &safe[..100], h.finish())
}

/// Text as a chart shows it: control characters (which no XML file may hold, and which a
/// label from a store or an import can carry) as spaces; plotters escapes the rest.
pub fn chart_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
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
            caption: format!("{}: ops/s at each point of the sweep", sc.target.terminal()),
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
                    (bench.terminal().to_string(), pts)
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
                // plotters escapes what it writes as XML; a name's control characters are
                // shown as escapes, as in a terminal.
                b.name.terminal().to_string(),
                hist.into_iter()
                    .map(|(edge, c)| (edge, c as f64 / total))
                    .collect(),
            )
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    let target = run
        .start
        .as_ref()
        .map_or("?".to_string(), |s| s.target.terminal().to_string());
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
                b.name.terminal().to_string(),
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

const SIZE: (u32, u32) = (960, 540);

/// The points of a series a chart can place: finite, and above 0 on a log scale.
fn placeable(chart: &Chart, pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    pts.iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite() && (!chart.log_y || *y > 0.0))
        .collect()
}

/// A range around `v` with room at both ends (a single value made a range).
fn span(v: impl Iterator<Item = f64>, log: bool) -> std::ops::Range<f64> {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !lo.is_finite() {
        return if log { 1.0..10.0 } else { 0.0..1.0 };
    }
    if log {
        return (lo / 1.5)..(hi * 1.5);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (lo - pad)..(hi + pad)
}

/// `chart` as an SVG document.
pub fn svg(chart: &Chart) -> Result<String, String> {
    use plotters::prelude::*;
    let series: Vec<(String, Vec<(f64, f64)>)> = chart
        .series
        .iter()
        .map(|(n, p)| (chart_text(n), placeable(chart, p)))
        .collect();
    let all = || series.iter().flat_map(|(_, p)| p.iter().copied());
    let mut xs = span(all().map(|p| p.0), false);
    if !chart.x_tics.is_empty() {
        xs = -0.5..(chart.x_tics.len() as f64 - 0.5);
    }
    let ys = span(all().map(|p| p.1), chart.log_y);
    let ys = if chart.log_y {
        ys
    } else {
        ys.start.min(0.0)..ys.end
    };
    let tics: Vec<String> = chart.x_tics.iter().map(|t| chart_text(t)).collect();
    let mut out = String::new();
    let e = |e: DrawingAreaErrorKind<_>| format!("cannot draw the chart {}: {e}", chart.slug);
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(chart_text(&chart.caption), ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(80);
        macro_rules! draw {
            ($ctx:expr) => {{
                let mut c = $ctx;
                let tic = |x: &f64| {
                    let i = x.round();
                    if tics.is_empty() {
                        bench_core::units::ns(*x).replace(" ns", "")
                    } else if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < tics.len() {
                        tics[i as usize].clone()
                    } else {
                        String::new()
                    }
                };
                let x_desc = chart_text(&chart.x_label);
                let y_desc = chart_text(&chart.y_label);
                let mut mesh = c.configure_mesh();
                mesh.x_desc(x_desc).y_desc(y_desc).x_label_formatter(&tic);
                if !tics.is_empty() {
                    mesh.x_labels(tics.len());
                }
                mesh.draw().map_err(e)?;
                for (i, (name, pts)) in series.iter().enumerate() {
                    let color = Palette99::pick(i).to_rgba();
                    let line: Vec<(f64, f64)> = if chart.steps {
                        // gnuplot's steps: across at the point's height, then up or down.
                        pts.windows(2)
                            .flat_map(|w| [w[0], (w[1].0, w[0].1)])
                            .chain(pts.last().copied())
                            .collect()
                    } else {
                        pts.clone()
                    };
                    c.draw_series(LineSeries::new(line, color.stroke_width(2)))
                        .map_err(e)?
                        .label(name.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                        });
                    if !chart.steps {
                        c.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
                            .map_err(e)?;
                    }
                }
                c.configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .draw()
                    .map_err(e)?;
            }};
        }
        if chart.log_y {
            draw!(builder.build_cartesian_2d(xs, ys.log_scale()).map_err(e)?);
        } else {
            draw!(builder.build_cartesian_2d(xs, ys).map_err(e)?);
        }
        root.present().map_err(e)?;
    }
    Ok(out)
}

/// Draws every chart of `report` beside `<dir>/<stem>.md`. Returns the charts drawn (caption,
/// file name) for the markdown to link, or why there are none.
pub fn write_all(
    report: &Report<'_>,
    dir: &Path,
    stem: &str,
) -> Result<Vec<(String, String)>, String> {
    write_charts(&charts(report), dir, stem)
}

/// Draws `all` as `<dir>/<stem>-<slug>.svg`, each written atomically; the charts drawn
/// (caption, file name).
pub fn write_charts(
    all: &[Chart],
    dir: &Path,
    stem: &str,
) -> Result<Vec<(String, String)>, String> {
    let mut drawn = Vec::new();
    for c in all {
        let p = path(dir, stem, c);
        crate::files::write_atomic(&p, &svg(c)?)?;
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

    /// The SVGs are drawn with nothing installed and hold every series by name.
    #[test]
    fn charts_are_drawn_as_svg_holding_their_series() {
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
            // Each series is a drawn line (and a line in the legend).
            let lines = doc
                .descendants()
                .filter(|n| n.has_tag_name("polyline") || n.has_tag_name("path"))
                .count();
            assert!(lines >= 2 * want.len(), "{name}: {lines} lines");
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            5,
            "no temp file left"
        );
    }
}
