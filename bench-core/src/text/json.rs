//! JSON as benchscope writes it for a reader (a report, a history, a catalog, a baseline, the
//! event stream): serde_json escapes the control characters below U+0020 and leaves the rest
//! as they are; here every other [`hidden`](super::hidden) character (C1 controls, DEL, the
//! characters that reorder or hide text) is written as a `\u` escape too, so that JSON printed
//! to a terminal cannot move its cursor, and reads back as the same string.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// A formatter that escapes [`hidden`](super::hidden) characters in strings, over `F`.
struct Escaping<F>(F);

fn escaped<W: ?Sized + Write>(w: &mut W, fragment: &str) -> io::Result<()> {
    let mut from = 0;
    for (i, c) in fragment.char_indices() {
        if super::hidden(c) {
            w.write_all(&fragment.as_bytes()[from..i])?;
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                write!(w, "\\u{u:04x}")?;
            }
            from = i + c.len_utf8();
        }
    }
    w.write_all(&fragment.as_bytes()[from..])
}

macro_rules! delegate {
    ($($name:ident $(, $arg:ident: $ty:ty)*;)*) => {
        $(
            fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                self.0.$name(w $(, $arg)*)
            }
        )*
    };
}

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        escaped(w, fragment)
    }

    delegate! {
        begin_array;
        end_array;
        begin_array_value, first: bool;
        end_array_value;
        begin_object;
        end_object;
        begin_object_key, first: bool;
        begin_object_value;
        end_object_value;
    }
}

fn write<T: Serialize + ?Sized, F: Formatter>(value: &T, f: F) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Escaping(f));
    value
        .serialize(&mut ser)
        .expect("benchscope's documents serialize");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// `value` as indented JSON, hidden characters escaped.
pub fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    write(value, PrettyFormatter::new())
}

/// `value` as one line of JSON, hidden characters escaped.
pub fn line<T: Serialize + ?Sized>(value: &T) -> String {
    write(value, CompactFormatter)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// Any string is written with no hidden character, reads back the same, and the rest
        /// of the document is as serde_json writes it.
        #[test]
        fn any_string_is_written_escaped_and_reads_back(s in any::<String>(), n in any::<u32>()) {
            let v = serde_json::json!({ "name": s, "n": n, "list": [s, "x"] });
            for (ours, theirs) in [
                (super::pretty(&v), serde_json::to_string_pretty(&v).unwrap()),
                (super::line(&v), serde_json::to_string(&v).unwrap()),
            ] {
                // The pretty form's own line breaks aside.
                prop_assert!(!ours.chars().any(|c| c != '\n' && crate::text::hidden(c)), "{ours:?}");
                let back: serde_json::Value = serde_json::from_str(&ours).unwrap();
                prop_assert_eq!(&back, &v);
                if !s.chars().any(crate::text::hidden) {
                    prop_assert_eq!(&ours, &theirs, "{:?} vs {:?}", ours, theirs);
                }
            }
        }
    }

    #[test]
    fn a_character_beyond_the_basic_plane_is_a_surrogate_pair() {
        let s = super::line(&"a\u{E0041}b\u{202E}");
        assert_eq!(s, "\"a\\udb40\\udc41b\\u202e\"");
        assert_eq!(
            serde_json::from_str::<String>(&s).unwrap(),
            "a\u{E0041}b\u{202E}"
        );
    }
}
