//! The HTML report: the markdown export (comparison tables, workload sections, charts linked
//! as SVG images) and the history section, as one static page. No script and nothing fetched
//! from elsewhere: the page and its SVGs are files, read the same with JavaScript off.
//!
//! The markdown carries text from runs, imports, the shared store and flags (bench and target
//! names, labels, commits, machine names), so the page is made safe where it is built, not by
//! cleaning text: pulldown-cmark's events are rendered by its HTML writer, which escapes every
//! text and attribute, after raw HTML in the markdown has been turned into text, and links and
//! images kept only where they name a file of the report's own folder ([`own_file`]); any other
//! link shows as its text alone.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:80rem;\
padding:0 1rem;color:#1b1b1b;line-height:1.45}table{border-collapse:collapse;margin:.6rem 0;\
font-size:.9rem}th,td{border:1px solid #c8c8c8;padding:.2rem .5rem}th{background:#f0f0f0}\
td{font-variant-numeric:tabular-nums}img{max-width:100%;height:auto;border:1px solid #e0e0e0;\
margin:.4rem 0}code{background:#f4f4f4;padding:0 .2rem}h1,h2,h3{line-height:1.2}\
nav a{margin-right:1rem}";

/// Whether `url` names a file in the report's own folder (`report-run1-phases.svg`), or a
/// place on the page (`#history`): letters, digits, `.`, `-` and `_` only, no scheme, no
/// folder, nothing a browser would read as another place.
pub fn own_file(url: &str) -> bool {
    let (file, anchor) = url.split_once('#').unwrap_or((url, ""));
    let plain = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    plain(file)
        && plain(anchor)
        && !file.starts_with('.')
        && !(file.is_empty() && anchor.is_empty())
}

/// The markdown's events as the page renders them: raw HTML as text, links and images to
/// anything but the report's own files without their link (their text stays).
fn safe_events<'a>(events: impl Iterator<Item = Event<'a>>) -> impl Iterator<Item = Event<'a>> {
    // For each link or image open, whether it was kept.
    let mut open: Vec<bool> = Vec::new();
    events.filter_map(move |e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Some(Event::Text(t)),
        Event::Start(Tag::Link { ref dest_url, .. } | Tag::Image { ref dest_url, .. }) => {
            let keep = own_file(dest_url);
            open.push(keep);
            keep.then_some(e)
        }
        Event::End(TagEnd::Link | TagEnd::Image) => open.pop().unwrap_or(false).then_some(e),
        other => Some(other),
    })
}

/// `text` as HTML text (escaped by the same writer as the page).
fn escaped(text: &str) -> String {
    let mut out = String::new();
    html::push_html(&mut out, std::iter::once(Event::Text(CowStr::from(text))));
    out
}

/// The page: `markdown` rendered, under `title`.
pub fn page(title: &str, markdown: &str) -> String {
    let mut body = String::new();
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    html::push_html(&mut body, safe_events(Parser::new_ext(markdown, opts)));
    let title = escaped(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
}

#[cfg(test)]
#[path = "../../tests/common/html.rs"]
mod inert;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a label, bench, target or machine name from someone else might hold.
    fn hostile() -> impl Strategy<Value = String> {
        let fragments = proptest::sample::select(vec![
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "<svg onload=alert(1)>",
            "[x](javascript:alert(1))",
            "![p](https://tracker.example/p.png)",
            "<https://elsewhere.example>",
            "[y](//evil.example)",
            "[z](../up.html)",
            "<a href='javascript:x'>",
            "<!--",
            "-->",
            "<![CDATA[",
            "</td>",
            "</table>",
            "<style>",
            "</style>",
            "</title>",
            "<iframe srcdoc=x>",
            "java\tscript:",
            "data:text/html,<script>",
            "&lt;",
            "&#60;script",
            "`",
            "|",
            "\n",
            "\r\n",
            "\u{0}",
            "\u{202e}",
            "*",
            "_",
            "[",
            "]",
            "(",
            ")",
            "<",
            ">",
            "\"",
            "'",
            "\\",
            "#",
            "~~",
            "<details open ontoggle=alert(1)>",
            "<math><mi xlink:href=javascript:x>",
        ]);
        prop_oneof![
            proptest::collection::vec(fragments, 1..6).prop_map(|v| v.concat()),
            any::<String>(),
            (
                any::<String>(),
                proptest::collection::vec(
                    proptest::sample::select(vec![
                        "<script>",
                        "](javascript:x)",
                        "<img src=x onerror=y>"
                    ]),
                    1..3,
                )
            )
                .prop_map(|(a, b)| format!("{a}{}", b.concat())),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(
            bench_core::testing::proptest_cases()
        ))]
        /// Any text in a run's names and labels, through the real markdown export and the
        /// page, leaves the page inert: no tag, attribute, link or image of its own.
        #[test]
        fn a_report_of_hostile_names_is_an_inert_page(
            bench in hostile(),
            other in hostile(),
            target in hostile(),
            title in hostile(),
        ) {
            let mut run = crate::testing::finished_record(
                &target,
                &[("rusqlite", 1400.0), (&bench, 2900.0), (&other, 4100.0)],
            );
            run.source = Some(other.clone());
            let runs = [run];
            let report = crate::export::Report::new(&runs, "rusqlite", "now");
            let charts = vec![(other.clone(), "report-run1-distribution.svg".to_string())];
            let md = crate::export::markdown::render(&report.with_charts(Ok(charts)));
            let page = page(&title, &md);
            if let Err(bad) = inert::html_is_inert(&page) {
                return Err(TestCaseError::fail(format!("{bad} in\n{page}")));
            }
        }
    }

    /// The markdown's blocks and inline structure: headings, table rows, list items, quotes,
    /// rules, links, images, HTML, code.
    fn structure(md: &str) -> Vec<String> {
        Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH)
            .filter_map(|e| match e {
                Event::Start(t) => Some(format!("{t:?}").chars().take(12).collect()),
                Event::Html(_) | Event::InlineHtml(_) => Some("html".into()),
                Event::Code(_) => Some("code".into()),
                Event::Rule => Some("rule".into()),
                _ => None,
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(
            bench_core::testing::proptest_cases()
        ))]
        /// Whatever a run read back holds in its environment's words (CPU, OS, SQLite, build,
        /// crates, settings) and its target, the markdown report has the structure of a report
        /// of plain words: no heading, row, list item, link or emphasis of their making.
        #[test]
        fn hostile_environment_words_leave_the_report_as_it_is(
            words in proptest::collection::vec(hostile(), 7),
        ) {
            let plain = crate::testing::finished_record(
                "single_row_lookup",
                &[("rusqlite", 1400.0), ("sqlx", 2900.0)],
            );
            let mut run = plain.clone();
            let s = run.start.as_mut().unwrap();
            s.env.cpu = words[0].as_str().into();
            s.env.os = words[1].as_str().into();
            s.env.sqlite = words[2].as_str().into();
            s.env.profile = words[3].as_str().into();
            s.env.crates.insert(words[4].as_str().into(), words[5].as_str().into());
            s.env.settings.insert(words[5].as_str().into(), words[6].as_str().into());
            s.target = words[6].as_str().into();
            // Knob words are tokens when read back, and a token may still hold `_`, `.`, `:`.
            s.knobs.set("pool", bench_core::knobs::KnobValue::Word(words[0].clone()));
            let mut tame = plain.clone();
            tame.start.as_mut().unwrap().knobs.set("pool", bench_core::knobs::KnobValue::Word("auto".into()));
            let t = tame.start.as_mut().unwrap();
            t.env.profile = "debug".into();
            t.env.crates.insert("x".into(), "y".into());
            t.env.settings.insert("x".into(), "y".into());
            // A build other than "release" is a debug build: compare with one.
            if words[3] == "release" {
                t.env.profile = "release".into();
            }
            let render = |r: bench_core::protocol::results::RunRecord| {
                let runs = [r];
                crate::export::markdown::render(&crate::export::Report::new(&runs, "rusqlite", "now"))
            };
            let (got, want) = (render(run), render(tame));
            prop_assert_eq!(structure(&got), structure(&want), "{}", &got);
        }
    }

    #[test]
    fn markdown_tables_images_and_links_become_html_and_text_is_escaped() {
        let md =
            "# R <1>\n\n| a | b |\n|---|---:|\n| x | 1 |\n\n![c](c.svg)\n\n[more](more.html)\n";
        let p = page("R <1> & co", md);
        assert!(p.starts_with("<!DOCTYPE html>"));
        assert!(p.contains("<title>R &lt;1&gt; &amp; co</title>"), "{p}");
        assert!(p.contains("<table>") && p.contains("<td>x</td>"), "{p}");
        assert!(p.contains("<img src=\"c.svg\" alt=\"c\""), "{p}");
        assert!(p.contains("<a href=\"more.html\">more</a>"), "{p}");
        assert!(p.contains("<h1>R &lt;1&gt;</h1>"), "{p}");
        assert!(!p.contains("<script"), "{p}");
    }

    /// What pulldown-cmark alone passes through, as a label or bench name would bring it.
    #[test]
    fn raw_html_and_foreign_links_in_the_markdown_are_text() {
        let md = "| bench | x |\n|---|---|\n| <script>alert(1)</script> | <img src=x onerror=alert(2)> |\n\n\
                  <script>alert(3)</script>\n\n[run](javascript:alert(4)) and \
                  [there](https://elsewhere.example/x) and <https://elsewhere.example/y> and \
                  ![pixel](https://tracker.example/p.png) and [up](../secret.html) and \
                  [fine](report-run1.svg)\n";
        let p = page("t", md);
        assert!(!p.contains("<script") && !p.contains("<img src=x"), "{p}");
        for attr in ["href", "src"] {
            for to in ["javascript:", "https:", "../"] {
                assert!(!p.contains(&format!("{attr}=\"{to}")), "{attr}={to} in {p}");
            }
        }
        assert!(p.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{p}");
        assert!(p.contains("run and there and"), "{p}");
        assert!(p.contains("<a href=\"report-run1.svg\">fine</a>"), "{p}");
    }

    #[test]
    fn own_files_are_plain_names_in_the_folder() {
        for ok in [
            "report-run1-phases.svg",
            "index.html",
            "#history",
            "a.svg#x",
        ] {
            assert!(own_file(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "java\tscript:alert(1)",
            " javascript:x",
            "JaVaScRiPt:x",
            "data:text/html,x",
            "//evil.example/x",
            "/etc/passwd",
            "../x.svg",
            ".hidden",
            "a/b.svg",
            "a b.svg",
            "x%3Ay",
            "",
            "#",
        ] {
            assert!(!own_file(bad), "{bad:?}");
        }
    }
}
