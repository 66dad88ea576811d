//! Any string from data, in every sink: a terminal gets no control or reordering character; a
//! markdown table cell stays one cell of one row with no markup made of it; a CSV cell is no
//! formula and one field.
#![no_main]

use bench_core::text::{Text, hidden};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: String| {
    let t = Text::from(s.as_str());
    let shown = t.terminal().to_string();
    assert!(!shown.chars().any(hidden), "{shown:?}");
    let cell = t.md_cell();
    assert!(!cell.contains('\n') && !cell.contains('\r'));
    let table = format!("| a | b |\n| --- | --- |\n| {cell} | 1 |\n");
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut rows = 0;
    let mut cells = 0;
    let mut last = 0;
    for e in Parser::new_ext(&table, Options::ENABLE_TABLES) {
        match e {
            Event::Start(Tag::TableRow) => {
                rows += 1;
                cells = 0;
            }
            Event::End(TagEnd::TableRow) => last = cells,
            Event::Start(Tag::TableCell) => cells += 1,
            Event::Start(Tag::Link { .. } | Tag::Image { .. } | Tag::Emphasis | Tag::Strong)
            | Event::Code(_)
            | Event::Html(_)
            | Event::InlineHtml(_) => panic!("markup made of {s:?}: {table}"),
            _ => {}
        }
    }
    assert_eq!((rows, last), (1, 2), "{table}");
    let line = t.md_line();
    assert!(!line.contains('\n'));
    let csv_cell = t.csv_cell();
    assert!(!matches!(csv_cell.chars().next(), Some('=' | '+' | '-' | '@' | '\t' | '\r')));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([csv_cell.as_str(), "x"]).unwrap();
    let bytes = w.into_inner().unwrap();
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(bytes.as_slice());
    let rec = r.records().next().unwrap().unwrap();
    assert_eq!((rec.len(), &rec[0]), (2, csv_cell.as_str()));
    let html = t.html();
    assert!(!html.contains('<') && !html.contains('"'));
});
