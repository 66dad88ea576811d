use super::*;
use proptest::prelude::*;

#[test]
fn a_name_reads_as_itself_in_every_sink() {
    for name in [
        "rusqlite",
        "middleware/spawn_blocking",
        "r2d2_sqlite/block_in_place",
        "stmt/tpcb.sql:12",
        "sql-middleware",
    ] {
        let t = Text::from(name);
        assert_eq!(t.terminal().to_string(), name);
        assert_eq!(t.md_cell(), name);
        assert_eq!(t.csv_cell(), name);
        assert_eq!(t.html(), name);
    }
    assert_eq!(
        format!("{:<10}|", Text::from("ab").terminal()),
        "ab        |"
    );
}

#[test]
fn what_would_break_a_sink_is_escaped() {
    let t = Text::from("\u{1b}]0;pwned\u{7}\u{1b}[2Jx");
    assert_eq!(t.terminal().to_string(), "\\u{1b}]0;pwned\\u{7}\\u{1b}[2Jx");
    let t = Text::from("x\n| fake | 1 ns |");
    // Rendered, the cell reads `x\u{a}| fake | 1 ns |`: one cell, its newline shown.
    assert_eq!(t.md_cell(), "x\\\\u{a}\\| fake \\| 1 ns \\|");
    assert_eq!(
        Text::from("=HYPERLINK(\"http://e\")").csv_cell(),
        "'=HYPERLINK(\"http://e\")"
    );
    assert_eq!(Text::from("-1+1").csv_cell(), "'-1+1");
    assert_eq!(Text::from("<b>&'\"").html(), "&lt;b&gt;&amp;&#39;&quot;");
    assert_eq!(
        Text::from("[click](http://e) *x* _y_ `z`").md_cell(),
        "\\[click\\](http://e) \\*x\\* \\_y\\_ \\`z\\`"
    );
    // A `[` that begins a name cannot begin a link reference definition (`[a]: url`).
    assert_eq!(Text::from("[a]").md_cell(), "\\[a]");
    assert_eq!(
        Text::from("3.43x [3.36–3.53]").md_cell(),
        "3.43x [3.36–3.53]"
    );
    // An e-mail autolink may start with punctuation (found by the `text` fuzz target).
    assert_eq!(Text::from("<.@vr6>").md_cell(), "\\<.@vr6>");
    assert_eq!(Text::from("< 2x").md_cell(), "< 2x");
    assert_eq!(Text::from("# heading").md_line(), "\\# heading");
    assert_eq!(Text::from("1. item").md_line(), "\\1. item");
    // Indented up to four spaces, a block's mark still begins it: the indent is left out.
    assert_eq!(Text::from("   # heading").md_line(), "\\# heading");
    assert_eq!(Text::from("    code").md_line(), "code");
    assert_eq!(
        Text::from("a\u{202e}b").terminal().to_string(),
        "a\\u{202e}b"
    );
    // An escape in the text cannot pass for one of ours.
    assert_eq!(Text::from("\\u{1b}").terminal().to_string(), "\\\\u{1b}");
}

fn cases() -> u32 {
    crate::testing::proptest_cases()
}

/// Any string, weighted towards what breaks sinks.
fn hostile() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            any::<char>(),
            proptest::char::range('\u{0}', '\u{9f}'),
            prop_oneof![
                Just('|'),
                Just('\n'),
                Just('\r'),
                Just('\\'),
                Just('`'),
                Just('['),
                Just(']'),
                Just(':'),
                Just('('),
                Just('<'),
                Just('='),
                Just('\u{202e}'),
                Just('\u{1b}')
            ],
        ],
        0..40,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Whatever a name holds, a terminal gets no control character or reordering mark, and
    /// the escapes can be read back to the name.
    #[test]
    fn the_terminal_gets_no_control_and_the_name_can_be_read_back(s in hostile()) {
        let shown = Text::from(s.as_str()).terminal().to_string();
        prop_assert!(!shown.chars().any(hidden), "{shown:?}");
        prop_assert_eq!(unescape(&shown), s);
    }

    /// Whatever a name holds, its markdown cell keeps a table row one row with its cells: no
    /// line break, every `|` escaped, and (rendered by a CommonMark parser with tables) the
    /// row has as many cells as the header.
    #[test]
    fn a_markdown_cell_stays_one_cell(s in hostile()) {
        let cell = Text::from(s.as_str()).md_cell();
        prop_assert!(!cell.contains('\n') && !cell.contains('\r'));
        let table = format!("| a | b |\n| --- | --- |\n| {cell} | 1 |\n");
        let rows = table_rows(&table);
        prop_assert_eq!(rows.len(), 2, "{}", table);
        prop_assert_eq!(rows[1].len(), 2, "{}", table);
        prop_assert_eq!(rows[1][1].as_str(), "1");
        // Nothing but text: no link, emphasis, code or HTML made of the name.
        prop_assert!(!rendered_markup(&table), "{table}");
    }

    /// Whatever a name holds, written where a report writes names (a list item's key before
    /// `: value`, a line of its own, a table cell), it defines no link reference that would
    /// make a link of the same name elsewhere in the document.
    #[test]
    fn a_name_defines_no_link_anywhere(s in hostile(), open in any::<bool>(), close in any::<bool>()) {
        // Bracketed as a reference's label often, where a random text seldom is.
        let s = format!("{}{s}{}", if open { "[" } else { "" }, if close { "]" } else { "" });
        let cell = Text::from(s.as_str()).md_cell();
        let line = Text::from(s.as_str()).md_line();
        let md = format!(
            "- {cell}: a\n\n{line}: b\n\n| a | b |\n| --- | --- |\n| {cell} | 1 |\n\n{line}\n"
        );
        prop_assert!(!rendered_markup(&md), "{md}");
    }

    /// Whatever a name holds, after any indent and a block's mark, as a list item's key it
    /// stays that item's text: no heading, quote, code block or list of its own.
    #[test]
    fn a_line_is_one_list_item_of_text(
        s in hostile(),
        indent in 0usize..6,
        mark in proptest::sample::select(vec!["#", ">", "-", "+", "*", "1.", "1)", "```", "    ", ""]),
    ) {
        use pulldown_cmark::{Event, Parser, Tag};
        let name = format!("{}{mark} {s}", " ".repeat(indent));
        let md = format!("- {}: a\n", Text::from(name.as_str()).md_line());
        let blocks: Vec<String> = Parser::new(&md)
            .filter_map(|e| match e {
                Event::Start(Tag::Paragraph) => None,
                Event::Start(t) => Some(format!("{t:?}").chars().take(8).collect()),
                _ => None,
            })
            .collect();
        prop_assert_eq!(blocks, vec!["List(Non".to_string(), "Item".to_string()], "{}", md);
    }

    /// Whatever a caption holds, an image with it as its text is one image of the file named,
    /// with nothing inside made of the caption (no link, image, emphasis, code or HTML).
    #[test]
    fn an_image_text_is_one_image_of_its_file(s in hostile()) {
        use pulldown_cmark::{Event, Parser, Tag};
        let md = format!("![{}](chart.svg)\n", md_alt(&s));
        let starts: Vec<String> = Parser::new(&md)
            .filter_map(|e| match e {
                Event::Start(Tag::Image { dest_url, .. }) => Some(format!("image {dest_url}")),
                Event::Start(Tag::Paragraph) => None,
                Event::Start(t) => Some(format!("{t:?}")),
                Event::Code(_) | Event::Html(_) | Event::InlineHtml(_) => Some("markup".into()),
                _ => None,
            })
            .collect();
        prop_assert_eq!(starts, vec!["image chart.svg".to_string()], "{}", md);
    }

    /// Whatever a name holds, a CSV cell does not start a formula and holds no control
    /// character; the csv crate's quoting keeps it one field.
    #[test]
    fn a_csv_cell_is_no_formula_and_one_field(s in hostile()) {
        let cell = Text::from(s.as_str()).csv_cell();
        prop_assert!(!matches!(cell.chars().next(), Some('=' | '+' | '-' | '@' | '\t' | '\r')));
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([cell.as_str(), "x"]).unwrap();
        let bytes = w.into_inner().unwrap();
        let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(bytes.as_slice());
        let rec = r.records().next().unwrap().unwrap();
        prop_assert_eq!(rec.len(), 2);
        prop_assert_eq!(&rec[0], cell.as_str());
    }
}

/// Reads `\u{..}` and `\\u` escapes back.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('\\') {
            out.push('\\');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("u{") {
            let end = tail.find('}').unwrap();
            let c = char::from_u32(u32::from_str_radix(&tail[..end], 16).unwrap()).unwrap();
            out.push(c);
            rest = &tail[end + 1..];
        } else {
            out.push('\\');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The cells of each row of the (first) table in `md`, as a CommonMark parser with tables reads
/// them (pulldown-cmark, as the HTML report renders markdown).
fn table_rows(md: &str) -> Vec<Vec<String>> {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut rows = Vec::new();
    let mut row: Option<Vec<String>> = None;
    let mut cell: Option<String> = None;
    for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match e {
            Event::Start(Tag::TableHead | Tag::TableRow) => row = Some(Vec::new()),
            Event::End(TagEnd::TableHead | TagEnd::TableRow) => rows.extend(row.take()),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => {
                if let (Some(r), Some(c)) = (row.as_mut(), cell.take()) {
                    r.push(c);
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                }
            }
            _ => {}
        }
    }
    rows
}

/// Whether a parse of `md` makes anything but text in the table: a link, an image, emphasis,
/// code, HTML.
fn rendered_markup(md: &str) -> bool {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    Parser::new_ext(md, Options::ENABLE_TABLES).any(|e| {
        matches!(
            e,
            Event::Start(
                Tag::Link { .. }
                    | Tag::Image { .. }
                    | Tag::Emphasis
                    | Tag::Strong
                    | Tag::Strikethrough
            ) | Event::Code(_)
                | Event::Html(_)
                | Event::InlineHtml(_)
        )
    })
}
