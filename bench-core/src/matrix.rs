//! A run laid out on its target's two axes (cases x subjects: crud_overhead's operations x
//! backends, key_value's groups x backends), found from the catalog entry; what the explorer's
//! matrix view and the text and markdown exports draw.

use serde::Serialize;

use crate::compare::Ratio;
use crate::protocol::results::RunRecord;
use crate::sections::{Band, Table};

/// A run laid out on its target's two axes: a row per case (crud_overhead's operations,
/// key_value's groups), a column per subject (backend, strategy or crate), for targets whose
/// benches are each case on each subject. What the explorer's matrix view and the exports
/// draw.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    /// What the rows are (the first part of the bench names) and the columns.
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    /// Per row, per column: the bench there, if the catalog has it and the run finished it.
    pub cells: Vec<Vec<Option<MatrixCell>>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixCell {
    pub bench: crate::text::Text,
    pub median_ns: f64,
    /// Against the bench's own baseline (the same case on the baseline subject).
    pub ratio: Option<Ratio>,
    pub band: Option<Band>,
}

/// The case of a bench on a two-axis target: its name without its subject's part
/// (`insert/middleware/spin` is case `insert` on `middleware/spin`).
fn case_of(b: &crate::catalog::BenchSpec) -> Option<(&'static str, String)> {
    b.vs?;
    let slug = b.subject.slug();
    let case = b.name.strip_suffix(slug.as_str())?.strip_suffix('/')?;
    Some((case, slug))
}

/// The target's two axes (cases and subjects, in catalog order), when its benches are cases
/// on subjects (each with a baseline of its own); `None` otherwise.
pub fn axes(target: &crate::catalog::Target) -> Option<(Vec<&'static str>, Vec<String>)> {
    let mut rows: Vec<&'static str> = Vec::new();
    let mut columns: Vec<String> = Vec::new();
    for b in &target.benches {
        let Some((case, slug)) = case_of(b) else {
            continue;
        };
        if !rows.contains(&case) {
            rows.push(case);
        }
        if !columns.contains(&slug) {
            columns.push(slug);
        }
    }
    (rows.len() > 1 && columns.len() > 1).then_some((rows, columns))
}

/// `run` on its target's axes, each cell with the ratio `ratio` gives for its bench (the view
/// passes the ratios it already holds: nothing is resampled here), keeping the rows and
/// columns it finished a bench in; `None` when the target has no two axes or the run
/// finished nothing on them.
pub fn matrix(
    target: &crate::catalog::Target,
    run: &RunRecord,
    ratio: &dyn Fn(&str) -> Option<Ratio>,
) -> Option<Matrix> {
    let (rows, columns) = axes(target)?;
    let mut cells = vec![vec![None; columns.len()]; rows.len()];
    let mut any = false;
    for b in &target.benches {
        let Some((case, slug)) = case_of(b) else {
            continue;
        };
        let Some(s) = run.bench(b.name).and_then(|r| r.summary.as_ref()) else {
            continue;
        };
        let (Some(i), Some(j)) = (
            rows.iter().position(|r| *r == case),
            columns.iter().position(|c| *c == slug),
        ) else {
            continue;
        };
        let is_base = b.vs == Some(b.name);
        let ratio = if is_base { None } else { ratio(b.name) };
        cells[i][j] = Some(MatrixCell {
            bench: b.name.into(),
            median_ns: s.median,
            band: if is_base {
                Some(Band::Baseline)
            } else {
                ratio.map(|r| Band::of(r.value))
            },
            ratio,
        });
        any = true;
    }
    if !any {
        return None;
    }
    // Only the rows and columns the run has a finished bench in.
    let keep_col: Vec<bool> = (0..columns.len())
        .map(|j| cells.iter().any(|r| r[j].is_some()))
        .collect();
    let mut m = Matrix {
        rows: Vec::new(),
        columns: columns
            .into_iter()
            .zip(&keep_col)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c)
            .collect(),
        cells: Vec::new(),
    };
    for (row, cells) in rows.iter().zip(cells) {
        if cells.iter().any(Option::is_some) {
            m.rows.push(row.to_string());
            m.cells.push(
                cells
                    .into_iter()
                    .zip(&keep_col)
                    .filter(|(_, k)| **k)
                    .map(|(c, _)| c)
                    .collect(),
            );
        }
    }
    Some(m)
}

impl Matrix {
    /// As a table of text for the exports: each cell its median and ratio (`base` for the
    /// baseline subject, `-` where nothing finished).
    pub fn table(&self, title: &str) -> Table {
        let mut headers = vec!["".to_string()];
        headers.extend(self.columns.iter().cloned());
        Table {
            title: title.to_string(),
            about: "Each cell: the median per operation and its ratio against the same row on \
                    the baseline backend."
                .into(),
            headers: crate::sections::texts(headers),
            rows: self
                .rows
                .iter()
                .zip(&self.cells)
                .map(|(row, cells)| {
                    std::iter::once(row.clone())
                        .chain(
                            cells
                                .iter()
                                .map(|c| c.as_ref().map_or("-".into(), cell_text)),
                        )
                        .map(crate::text::Text::from)
                        .collect()
                })
                .collect(),
            left: 1,
            bands: Vec::new(),
        }
    }
}

/// A cell as text: `4.38 µs 2.78x`, `19.2 µs base`.
pub fn cell_text(c: &MatrixCell) -> String {
    let ratio = match (c.band, c.ratio) {
        (Some(Band::Baseline), _) => "base".to_string(),
        (_, Some(r)) => crate::format::ratio_short(r.value),
        (_, None) => "-".into(),
    };
    format!("{} {ratio}", crate::format::ns(c.median_ns))
}
