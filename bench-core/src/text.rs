//! Text that came from data (a bench's name, a label, a commit, a machine's name, a Criterion
//! id, a store row, an error a runner or a driver wrote) as a type of its own: [`Text`] has no
//! `Display`, so it cannot be printed as it is; its ways out are an escape per sink:
//!
//! - [`Text::terminal`]: control characters (C0, DEL, C1) and the characters that reorder or
//!   hide text (bidirectional overrides, zero-width marks) shown as `\u{..}` escapes, so a
//!   name cannot move the cursor, clear the screen, set a title or hide what follows;
//! - [`Text::md_cell`]: the same, then what a markdown table cell must not hold (`|`, which
//!   ends the cell, a `\` before it), and what markdown would render as something else (links,
//!   emphasis, raw HTML, code spans) backslash-escaped: a name is read as the text it is;
//! - [`Text::csv_cell`]: a cell a spreadsheet reads as text, not a formula (a leading `=`, `+`,
//!   `-`, `@`, tab or carriage return is quoted with `'`); the csv crate quotes the rest
//!   (RFC 4180), and control characters are escaped as for a terminal;
//! - [`Text::html`] and [`Text::svg`]: entities for `&<>"'`; for SVG, control characters
//!   (which XML 1.0 forbids) escaped.
//!
//! [`Text::raw`] gives the text itself for what compares, orders, matches or looks it up, and
//! for JSON (written by [`json`], which escapes every hidden character in a string as serde does
//! the controls below U+0020); `tests/layers.rs` fails when `.raw()` feeds a
//! formatting macro.

/// A [`Text`] made by `format!` from parts: other texts by [`Text::raw`], figures, words. The
/// one place a text's raw form may meet a formatting macro (`tests/layers.rs` checks): what it
/// makes is a `Text` again, escaped at its sink.
#[macro_export]
macro_rules! text {
    ($($arg:tt)*) => {
        $crate::text::Text::new(format!($($arg)*))
    };
}

pub mod json;

use std::fmt;

use serde::{Deserialize, Serialize};

/// A string from data. See the module's documentation.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Text(String);

/// Whether a character may not reach a terminal as it is.
pub fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            // Bidirectional embeddings, overrides and isolates; marks that reorder.
            '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{061C}'
            // Zero-width and invisible characters that hide what is there (or pass for a
            // space): soft hyphen, combining grapheme joiner, Hangul and Mongolian fillers and
            // selectors, word joiner and invisible operators, variation selectors, halfwidth
            // filler, specials, musical formatting, shorthand format controls, tags.
            | '\u{200B}'..='\u{200D}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}'
            | '\u{00AD}' | '\u{034F}' | '\u{115F}'..='\u{1160}' | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}' | '\u{1D173}'..='\u{1D17A}' | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{E0000}'..='\u{E0FFF}'
            // Line and paragraph separators.
            | '\u{2028}' | '\u{2029}')
}

/// A message for a terminal's line-by-line output (an error, a note on stderr), whatever it
/// quotes: every [`hidden`] character but the line breaks it is made of shown as a `\u{..}`
/// escape (a name in an error cannot move the cursor, clear the screen or hide what follows).
pub fn terminal_lines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c != '\n' && hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes `line` to stderr through [`terminal_lines`]: the one way a line reaches stderr
/// (`tests/layers.rs` checks).
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", terminal_lines(line));
}

/// A logger's line on stderr: what one event writes is kept, then written as one line when
/// the writer is dropped, every [`hidden`] character of it (a line break inside a field too)
/// shown as an escape, so no field's text can start a line of its own or move the terminal.
/// The runners' logger writes through it ([`log_line`]).
pub struct LogLine(Vec<u8>);

/// A [`LogLine`] for one event: the logger's `make_writer`.
pub fn log_line() -> LogLine {
    LogLine(Vec::new())
}

impl std::io::Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{}", log_text(&self.0));
        }
    }
}

/// One event's text as a [`LogLine`] writes it: its final line break left out, every
/// [`hidden`] character shown as an escape (a logger's own escapes, `\x1b`, stay as written).
fn log_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.strip_suffix('\n').unwrap_or(&text);
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
#[test]
fn a_log_line_is_one_line_whatever_its_fields_hold() {
    let forged = "WARN cannot read folder=/tmp/a\nerror: FORGED \u{1b}]0;t\u{7}\u{202e}x\n";
    assert_eq!(
        log_text(forged.as_bytes()),
        "WARN cannot read folder=/tmp/a\\u{a}error: FORGED \\u{1b}]0;t\\u{7}\\u{202e}x"
    );
    assert_eq!(log_text(b"plain\n"), "plain");
}

/// `s` with every [`hidden`] character shown as a `\u{..}` escape and `\` as `\\` (so that an
/// escape in the text cannot pass for one of these).
pub fn terminal_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    out
}

/// [`Text::terminal`]'s output.
pub struct Terminal<'a>(&'a str);

impl fmt::Display for Terminal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.chars().any(|c| hidden(c) || c == '\\') {
            f.pad(&terminal_str(self.0))
        } else {
            f.pad(self.0)
        }
    }
}

impl Text {
    pub fn new(s: impl Into<String>) -> Text {
        Text(s.into())
    }

    /// The text itself: to compare, order, match or look up, never to print.
    pub fn raw(&self) -> &str {
        &self.0
    }

    pub fn into_raw(self) -> String {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// For a terminal: hidden characters escaped. Pads as `{:<20}` asks.
    pub fn terminal(&self) -> Terminal<'_> {
        Terminal(&self.0)
    }

    /// For a markdown table cell.
    pub fn md_cell(&self) -> String {
        md_cell(&self.0)
    }

    /// For a line of markdown text (a note, a list item).
    pub fn md_line(&self) -> String {
        md_line(&self.0)
    }

    /// For a CSV cell.
    pub fn csv_cell(&self) -> String {
        csv_cell(&self.0)
    }

    /// For HTML text or an attribute's value.
    pub fn html(&self) -> String {
        html(&self.0)
    }

    /// For SVG text (XML).
    pub fn svg(&self) -> String {
        html(&terminal_str(&self.0))
    }
}

/// [`Text::md_cell`] of any string: inline text of a table cell. Escaped: what ends a cell or a
/// row (`|`, line breaks, shown as for a terminal), what markdown would render as something
/// else inline (`` ` `` code, `*` and `~` emphasis, `&` entities, `_` emphasis where it does not stand inside
/// a word, `<` before anything but a space: HTML, autolinks, e-mail autolinks; `](` and `![`
/// links and images, a `[` that begins the text: a link reference definition), and `\` itself; a figure
/// such as `3.43x [3.36–3.53]` or `+12%` reads as it is.
pub fn md_cell(s: &str) -> String {
    md_escape(s, false)
}

/// An image's text (`![...](file)`) or a link's: [`md_cell`], and every `[` and `]` escaped, so
/// that the text cannot end early and start a link or an image of its own.
pub fn md_alt(s: &str) -> String {
    md_escape(s, true)
}

fn md_escape(s: &str, alt: bool) -> String {
    let t = terminal_str(s);
    let mut out = String::with_capacity(t.len());
    let chars: Vec<char> = t.chars().collect();
    // Where the text begins past its leading whitespace.
    let first = chars.iter().position(|c| !c.is_whitespace());
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<&char>| j.is_some_and(|c| c.is_alphanumeric());
        let next = chars.get(i + 1).copied();
        match c {
            // `&` too: an entity (`&#x202E;`, `&lt;`) would render as another character.
            '|' | '\\' | '`' | '*' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            // HTML, autolinks and e-mail autolinks (`<.a@b>`): `<` before anything but a space
            // (`< 2x` reads as it is).
            '<' if next.is_some_and(|n| !n.is_whitespace()) => {
                out.push_str("\\<");
            }
            '[' | ']' if alt => {
                out.push('\\');
                out.push(c);
            }
            ']' if next == Some('(') => out.push_str("\\]"),
            // A `[` that begins the text could begin a link reference definition
            // (`[label]: url` at a line's start, or a list item's) that turns a shortcut
            // (`[label]`) anywhere in the document into a link.
            '[' if first == Some(i) => out.push_str("\\["),
            '[' if i > 0 && chars[i - 1] == '!' => out.push_str("\\["),
            // Emphasis by underscore only where it does not stand inside a word
            // (`spawn_blocking` reads as it is).
            '_' if !(i > 0 && word(chars.get(i - 1)) && word(chars.get(i + 1))) => {
                out.push_str("\\_");
            }
            _ => out.push(c),
        }
    }
    out
}

/// A line of markdown text (a list item's, a paragraph's): [`md_cell`] without the spaces it
/// starts with, and what would begin a block at a line's start (a heading, a list item, a
/// quote, a rule, a numbered item) escaped.
pub fn md_line(s: &str) -> String {
    // Up to three spaces before a block's mark still begin it (and four, code): the indent
    // says nothing a rendered line would show, and is left out.
    let cell = md_cell(s.trim_start_matches([' ', '\t']));
    let starts_block = cell.starts_with(['#', '+', '-', '=', '>'])
        || cell
            .split_once(['.', ')'])
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    if starts_block {
        format!("\\{cell}")
    } else {
        cell
    }
}

/// [`Text::csv_cell`] of any string.
pub fn csv_cell(s: &str) -> String {
    let t = terminal_str(s);
    match t.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{t}"),
        _ => t,
    }
}

/// HTML entities for `&<>"'`.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug quotes and escapes control characters itself.
        fmt::Debug::fmt(&self.0, f)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(s.to_string())
    }
}

impl Text {
    /// `parts` joined by `sep`: a text still, escaped where it is written. (A text is not a
    /// `str` to `join` on: a joined list would leave its sink unescaped.)
    pub fn join(parts: &[Text], sep: &str) -> Text {
        Text(
            parts
                .iter()
                .map(|p| p.0.as_str())
                .collect::<Vec<_>>()
                .join(sep),
        )
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(s)
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text(s.clone())
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.0
    }
}

#[cfg(test)]
mod tests;
