//! What a workload adds to every view of its runs beyond the comparison: its own tables, notes,
//! a line on each bench and its own figures for the JSON document, made once from a run as
//! data. The front end's formats render them (aligned text, markdown, the explorer's detail)
//! and compute nothing; they find them through the catalog entry (its target's `sections`,
//! `workloads::sections_of(run)`), never by a target's name.

use serde::Serialize;

use crate::protocol::results::RunRecord;
use crate::text::Text;

/// How heavy an overhead against a bench's own baseline is (the same operation on the
/// reference backend): the explorer and the text table colour by it, the exports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    Baseline,
    /// Under 2x rusqlite.
    Light,
    /// 2x to 5x.
    Heavy,
    /// 5x or more.
    Severe,
}

impl Band {
    pub fn of(ratio: f64) -> Band {
        if ratio < 2.0 {
            Band::Light
        } else if ratio < 5.0 {
            Band::Heavy
        } else {
            Band::Severe
        }
    }
}

/// A table: text in cells, the first `left` columns left-aligned. Cells are [`Text`]: they hold
/// names and statements from data beside figures, and each view escapes them for its sink.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Table {
    pub title: String,
    /// What the table shows, a sentence (empty when the title says it all).
    pub about: String,
    pub headers: Vec<Text>,
    pub rows: Vec<Vec<Text>>,
    pub left: usize,
    /// Per row, how heavy its overhead is (terminals colour the row by it); empty when the
    /// rows are not banded.
    pub bands: Vec<Option<Band>>,
}

/// Rows of text cells as a table's [`Text`] cells.
pub fn cells(rows: Vec<Vec<String>>) -> Vec<Vec<Text>> {
    rows.into_iter()
        .map(|r| r.into_iter().map(Text::from).collect())
        .collect()
}

/// Strings as texts (a table's headers, notes).
pub fn texts(v: Vec<String>) -> Vec<Text> {
    v.into_iter().map(Text::from).collect()
}

/// A bar chart of rates: per series a value (per second) at each point, each series on its
/// own scale (the bars show a series' shape, the figures compare series).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Bars {
    pub title: String,
    pub points: Vec<Text>,
    pub series: Vec<(Text, Vec<Option<f64>>)>,
}

/// One section of a run's report: tables, bar charts, then notes under a heading of their own.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Section {
    pub tables: Vec<Table>,
    pub bars: Vec<Bars>,
    /// What the notes are (a heading), and the notes, one line each.
    pub notes_title: String,
    pub notes: Vec<Text>,
}

/// A workload's own views, implemented beside the workload.
pub trait Sections: Sync + Send {
    /// What a run of the workload adds to its report; `None` when the run is not the
    /// workload's or has nothing of it yet.
    fn section(&self, run: &RunRecord) -> Option<Section>;

    /// A line on each bench of the run that has one (by bench name), for the explorer's
    /// detail under its figures: made once for the whole run, as the run's analysis is.
    fn bench_lines(&self, run: &RunRecord) -> std::collections::BTreeMap<Text, Text>;

    /// The workload's own figures in the JSON document, under its target's name: as JSON
    /// text, not a tree of values (a script's statements table can hold many thousand rows
    /// per bench; a tree of them took ten times the text's memory).
    fn json(&self, run: &RunRecord) -> Option<Box<serde_json::value::RawValue>>;
}
