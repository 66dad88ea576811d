//! What a page benchscope writes must be, as a browser reads it. Shared by the integration
//! tests and the HTML exporter's unit tests (by `#[path]`).

/// Checks that `html` (a page benchscope wrote) is inert as a browser reads it: every tag, by
/// a WHATWG tokenizer, is one the report's markup uses, with only the attributes it uses,
/// links and images only to plain file names of the report's folder, and no comment. Errs
/// with the first thing that is not.
pub fn html_is_inert(html: &str) -> Result<(), String> {
    use html5gum::{DefaultEmitter, Token, Tokenizer};
    const TAGS: &[&str] = &[
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "p",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "a",
        "img",
        "code",
        "pre",
        "em",
        "strong",
        "ul",
        "ol",
        "li",
        "del",
        "blockquote",
        "hr",
        "br",
        "nav",
    ];
    let own_file = |v: &str| {
        let (file, anchor) = v.split_once('#').unwrap_or((v, ""));
        let plain = |s: &str| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        };
        plain(file) && plain(anchor) && !file.starts_with('.')
    };
    let mut emitter = DefaultEmitter::default();
    // <style> and <title> hold raw text, as a browser reads them.
    emitter.naively_switch_states(true);
    for token in Tokenizer::new_with_emitter(html, emitter).flatten() {
        match token {
            Token::StartTag(tag) => {
                let name = String::from_utf8_lossy(&tag.name).to_ascii_lowercase();
                if !TAGS.contains(&name.as_str()) {
                    return Err(format!("a <{name}> tag"));
                }
                for (k, v) in &tag.attributes {
                    let k = String::from_utf8_lossy(k).to_ascii_lowercase();
                    let v = String::from_utf8_lossy(&v.value).into_owned();
                    let ok = match k.as_str() {
                        "href" | "src" => own_file(&v),
                        "alt" | "title" | "lang" | "charset" | "name" | "content" => true,
                        // pulldown-cmark's aligned table cells.
                        "style" => matches!(
                            v.as_str(),
                            "text-align: left" | "text-align: right" | "text-align: center"
                        ),
                        _ => false,
                    };
                    if !ok {
                        return Err(format!("<{name} {k}={v:?}>"));
                    }
                }
            }
            Token::Comment(c) => {
                return Err(format!("a comment {:?}", String::from_utf8_lossy(&c.value)));
            }
            _ => {}
        }
    }
    Ok(())
}
