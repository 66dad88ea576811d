//! The HTML report: the markdown export (comparison tables, workload sections, charts linked
//! as SVG images) and the history section, as one static page. No script and nothing fetched
//! from elsewhere: the page and its SVGs are files, read the same with JavaScript off.

use pulldown_cmark::{Options, Parser, html};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:80rem;\
padding:0 1rem;color:#1b1b1b;line-height:1.45}table{border-collapse:collapse;margin:.6rem 0;\
font-size:.9rem}th,td{border:1px solid #c8c8c8;padding:.2rem .5rem}th{background:#f0f0f0}\
td{font-variant-numeric:tabular-nums}img{max-width:100%;height:auto;border:1px solid #e0e0e0;\
margin:.4rem 0}code{background:#f4f4f4;padding:0 .2rem}h1,h2,h3{line-height:1.2}\
nav a{margin-right:1rem}";

/// The page: `markdown` rendered, under `title`.
pub fn page(title: &str, markdown: &str) -> String {
    let mut body = String::new();
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    html::push_html(&mut body, Parser::new_ext(markdown, opts));
    let mut escaped = String::new();
    for c in title.chars() {
        match c {
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            c => escaped.push(c),
        }
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{escaped}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
