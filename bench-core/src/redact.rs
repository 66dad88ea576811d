//! Keeping PostgreSQL passwords out of everything benchscope writes. A connection string can
//! carry a password as URL userinfo (`postgres://u:pw@h/db`), as a query parameter
//! (`?password=pw`), or as a libpq `key=value` pair (`host=h password='p w'`), each possibly
//! percent-encoded; every form is found here, and every text that leaves the process is
//! scrubbed of each secret, encoded or not.
//!
//! The URL forms are found twice over: by the url crate, and by the URL's shape alone
//! ([`shaped`]: whatever stands between `scheme://` and the last `@` after it, past the first
//! `:`, and any `password=` value), so that a URL the parser cannot read (the Unix-socket form
//! `postgres://u:pw@/db?host=/run/postgresql`, a bad port, odd case) still has its password
//! found. Finding too much only hides more; finding too little prints a password.

/// The secrets in a connection string, in every spelling they may be echoed in (as written,
/// percent-decoded, percent-encoded), longest first so that scrubbing replaces whole ones.
pub fn secrets(conn: &str) -> Vec<String> {
    let mut found: Vec<String> = shaped(conn);
    match url::Url::parse(conn.trim()) {
        Ok(u) if u.has_host() || u.scheme().starts_with("postgres") => {
            if let Some(p) = u.password() {
                found.push(p.to_string());
            }
            for (k, v) in u.query_pairs() {
                if k.eq_ignore_ascii_case("password") {
                    found.push(v.into_owned());
                }
            }
            // The raw query as written, for `password=` spelled with percent-encoded letters.
            if let Some(q) = u.query() {
                for pair in q.split('&') {
                    if let Some((k, v)) = pair.split_once('=') {
                        let key = percent_decode(k);
                        if key.eq_ignore_ascii_case("password") {
                            found.push(v.to_string());
                        }
                    }
                }
            }
        }
        _ => found.extend(keyword_passwords(conn)),
    }
    let mut all: Vec<String> = Vec::new();
    for s in found.into_iter().filter(|s| !s.is_empty()) {
        for v in spellings(&s) {
            if !v.is_empty() && !all.contains(&v) {
                all.push(v);
            }
        }
    }
    all.sort_by_key(|s| std::cmp::Reverse(s.len()));
    all
}

/// A secret as written, percent-decoded, and percent-encoded as in a URL (`%20`) and as in a
/// form (`+`): every spelling a driver or a log may echo it in.
pub fn spellings(s: &str) -> Vec<String> {
    let decoded = percent_decode(s);
    let encoded =
        percent_encoding::utf8_percent_encode(&decoded, percent_encoding::NON_ALPHANUMERIC)
            .to_string();
    let form: String = url::form_urlencoded::byte_serialize(decoded.as_bytes()).collect();
    vec![s.to_string(), decoded, encoded, form]
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Whether `text` starts with the scheme `scheme` (`postgres://`), in any case.
pub fn has_scheme(text: &str, scheme: &str) -> bool {
    let t = text.trim_start();
    t.len() >= scheme.len()
        && t.is_char_boundary(scheme.len())
        && t[..scheme.len()].eq_ignore_ascii_case(scheme)
        && t[scheme.len()..].starts_with("://")
}

/// Secrets found by the shape of URLs in `text`, with no URL parser: for every `://`, the
/// part from the first `:` after it to each `@` before the next whitespace (the userinfo's
/// password, whatever characters it holds: an `@` in the password or in the query cannot
/// hide it), and every `password=` value (its key in any case, percent-encoded or not) up to
/// the next `&`, `#` or whitespace.
pub fn shaped(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let after = &rest[i + 3..];
        let end = after.find(char::is_whitespace).unwrap_or(after.len());
        let authority = &after[..end];
        if let Some(colon) = authority.find(':') {
            for (at, _) in authority.match_indices('@').filter(|(at, _)| *at > colon) {
                out.push(authority[colon + 1..at].to_string());
            }
        }
        rest = after;
    }
    for (i, _) in text.match_indices('=') {
        // The character's own length: a space may be more than a byte (U+00A0).
        let key_start = text[..i]
            .char_indices()
            .rev()
            .find(|(_, c)| matches!(c, '?' | '&' | ';') || c.is_whitespace())
            .map_or(0, |(k, c)| k + c.len_utf8());
        if !percent_decode(&text[key_start..i]).eq_ignore_ascii_case("password") {
            continue;
        }
        let value = &text[i + 1..];
        let end = value
            .find(|c: char| matches!(c, '&' | '#') || c.is_whitespace())
            .unwrap_or(value.len());
        out.push(value[..end].trim_matches('\'').to_string());
    }
    out
}

/// The `password` values of a libpq keyword/value string (`k=v k='quoted \' value'`), as far as
/// it reads.
fn keyword_passwords(conn: &str) -> Vec<String> {
    read_pairs(conn)
        .0
        .into_iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("password"))
        .map(|(_, v)| v)
        .collect()
}

/// The pairs of a libpq key=value string as far as they read, and whether the whole text read
/// as pairs: what does not (a word without `=`, a quote left open, a `\` at the end) is passed
/// over, and the reading goes on.
pub(crate) fn read_pairs(text: &str) -> (Vec<(String, String)>, bool) {
    let mut out = Vec::new();
    let mut whole = true;
    let mut chars = text.chars().peekable();
    let skip_space = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
    };
    loop {
        skip_space(&mut chars);
        if chars.peek().is_none() {
            return (out, whole);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        skip_space(&mut chars);
        if chars.peek() != Some(&'=') || key.is_empty() {
            // A word without `=`: passed over.
            whole = false;
            if chars.peek() != Some(&'=') {
                continue;
            }
        }
        chars.next();
        skip_space(&mut chars);
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => match chars.next() {
                        Some(n) => value.push(n),
                        None => whole = false,
                    },
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => {
                        whole = false;
                        break;
                    }
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                if c == '\\' {
                    match chars.next() {
                        Some(n) => value.push(n),
                        None => whole = false,
                    }
                } else {
                    value.push(c);
                }
            }
        }
        if !key.is_empty() {
            out.push((key, value));
        }
    }
}

/// `text` with every secret replaced by `***`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "***");
        }
    }
    out
}

/// A connection string fit to show: the same string with its secrets replaced by `***`.
pub fn redact(conn: &str) -> String {
    scrub(conn, &secrets(conn))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::{PgUrl, pg_error_chain};

    /// An error that says only its kind, its cause kept beneath it (as tokio-postgres's).
    #[derive(Debug)]
    struct Kind(&'static str, Option<Box<Kind>>);
    impl std::fmt::Display for Kind {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Kind {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|k| k as _)
        }
    }

    #[test]
    fn a_postgres_error_says_its_causes_once_and_no_password() {
        let url = &PgUrl::parse("postgres://bob:pw-in-url@db:5432/x");
        let e = Kind(
            "db error",
            Some(Box::new(Kind(
                "ERROR: relation \"t\" does not exist (pw-in-url)",
                Some(Box::new(Kind("does not exist", None))),
            ))),
        );
        assert_eq!(
            pg_error_chain(url, &e).to_string(),
            "PostgreSQL at postgres://bob:***@db:5432/x: db error: ERROR: relation \"t\" does not exist (***)"
        );
        assert_eq!(
            pg_error_chain(url, &Kind("connection closed", None)).to_string(),
            "PostgreSQL at postgres://bob:***@db:5432/x: connection closed"
        );
    }

    #[test]
    fn every_form_of_password_is_found_and_scrubbed() {
        let cases = [
            (
                "postgres://bob:s3cr:et@db:5432/x?sslmode=disable",
                "postgres://bob:***@db:5432/x?sslmode=disable",
            ),
            (
                "postgres://127.0.0.1:1/x?user=u&password=hunter2",
                "postgres://127.0.0.1:1/x?user=u&password=***",
            ),
            (
                "postgresql://db/x?PASSWORD=hunter2&sslmode=require",
                "postgresql://db/x?PASSWORD=***&sslmode=require",
            ),
            (
                "postgres://db/x?pass%77ord=hunter2",
                "postgres://db/x?pass%77ord=***",
            ),
            ("postgres://bob:p%40ss%20w@db/x", "postgres://bob:***@db/x"),
            (
                "postgres://db/x?password=p%26q",
                "postgres://db/x?password=***",
            ),
            (
                "host=db user=bob password=hunter2 dbname=x",
                "host=db user=bob password=*** dbname=x",
            ),
            (
                "host=db password = 'two words' dbname=x",
                "host=db password = '***' dbname=x",
            ),
            (
                r"host=db password='it\'s' dbname=x",
                r"host=db password='it\'s' dbname=x",
            ),
            ("postgres://bob@db/x", "postgres://bob@db/x"),
            ("not a connection string", "not a connection string"),
            // What the URL parser cannot read: the Unix-socket form, a bad port, capitals,
            // a password with the characters a URL reserves.
            (
                "postgres://user:pw1234@/db?host=/run/postgresql",
                "postgres://user:***@/db?host=/run/postgresql",
            ),
            (
                "postgres://user:pw1234@host:99999/db",
                "postgres://user:***@host:99999/db",
            ),
            (
                "POSTGRES://user:pw1234@host/db",
                "POSTGRES://user:***@host/db",
            ),
            (
                "PostgreSQL://user:p/w@d#1@host/db",
                "PostgreSQL://user:***@host/db",
            ),
            (
                "postgresql:///db?host=/tmp&Password=pw1234&user=u",
                "postgresql:///db?host=/tmp&Password=***&user=u",
            ),
        ];
        for (conn, shown) in cases {
            if conn.contains(r"\'") {
                // An escaped quote: the secret is `it's`, echoed unescaped by drivers.
                assert!(secrets(conn).contains(&"it's".to_string()));
                assert_eq!(
                    scrub("auth failed for it's", &secrets(conn)),
                    "auth failed for ***"
                );
                continue;
            }
            assert_eq!(redact(conn), shown, "{conn}");
        }
        // The decoded and encoded spellings are scrubbed too, wherever a driver echoes them.
        let s = secrets("postgres://bob:p%40ss%20w@db/x");
        assert_eq!(
            scrub("password p@ss w or p%40ss%20w rejected", &s),
            "password *** or *** rejected"
        );
        let s = secrets("postgres://db/x?password=p%26q");
        assert_eq!(scrub("bad password p&q", &s), "bad password ***");
    }

    /// Passwords only one of the two finders sees: each finder is needed.
    #[test]
    fn each_finder_covers_what_the_other_misses() {
        // A port the URL parser refuses: only the shape finds the query's password.
        assert_eq!(
            redact("postgres://u@db:99999/x?sslmode=disable&password=hunter2"),
            "postgres://u@db:99999/x?sslmode=disable&password=***"
        );
        // No host, a `+` in the query: only the parser reads it as the space a driver echoes.
        let s = secrets("postgresql:///db?host=/tmp&password=two+words");
        assert_eq!(
            scrub("password two words rejected", &s),
            "password *** rejected"
        );
        // A stray `=` does not end the keyword search: the quoted password after it is whole.
        let s = secrets("host=db = x password='two words' dbname=y");
        assert_eq!(
            scrub("password two words rejected", &s),
            "password *** rejected"
        );
    }

    #[test]
    fn has_scheme_reads_the_scheme_alone() {
        assert!(has_scheme("postgres://db/x", "postgres"));
        assert!(has_scheme("  PostgreSQL://db/x", "postgresql"));
        assert!(!has_scheme("postgresql://db/x", "postgres"));
        assert!(!has_scheme("mysql://db/x", "postgres"));
        assert!(!has_scheme("postgresx://db/x", "postgres"));
        assert!(!has_scheme("mysqlxyz://db/x", "postgres"));
        assert!(!has_scheme("postgres:/db", "postgres"));
        assert!(!has_scheme("postgres", "postgres"));
        // A scheme's length falling inside a character is a mismatch, not a panic.
        assert!(!has_scheme("postgre\u{e9}://db", "postgres"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// However a PostgreSQL URL is spelt (any case, a socket path for a host, a port
        /// the URL parser refuses, a password of any non-space characters, an `@` after
        /// it), neither it nor a driver's message echoing its password shows the password.
        #[test]
        fn a_url_password_is_never_shown(
            scheme in "(?i)postgres(ql)?",
            user in "[a-z]{1,8}",
            pw in "[^\\s*]{4,24}",
            host in "(|[a-z]{1,8}|\\[::1\\])",
            port in "(|:[0-9]{1,6}|:x)",
            tail in "(|\\?host=/run/postgresql|\\?user=a@b|\\?sslmode=disable&application_name=q)",
        ) {
            let url = format!("{scheme}://{user}:{pw}@{host}{port}/db{tail}");
            let s = secrets(&url);
            let shown = redact(&url);
            proptest::prop_assert!(!shown.contains(&pw), "{url} shown as {shown}");
            let message = format!("connecting to {url}: password {pw} rejected for {user}");
            let scrubbed = scrub(&message, &s);
            proptest::prop_assert!(!scrubbed.contains(&pw), "{scrubbed}");
            let decoded = percent_decode(&pw);
            if decoded.len() >= 4 && !decoded.contains('*') {
                let echoed = scrub(&format!("password {decoded} rejected"), &s);
                proptest::prop_assert!(!echoed.contains(&decoded), "{echoed}");
            }
        }
    }
}
