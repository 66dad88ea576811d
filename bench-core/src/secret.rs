//! A PostgreSQL connection string as a type whose `Display` and `Debug` never show its password:
//! [`PgUrl`]. The text the user gave is kept private and reached only through
//! [`PgUrl::expose`], for the driver; everything benchscope says about the URL (its store's
//! name, its errors) is built from what was parsed out of it, value by value, where only what is
//! known not to be secret is shown: the scheme, user, host, port, database and the query's or
//! the key=value string's known settings. A part the parse cannot read is not shown at all. A
//! driver's error text is scrubbed of every spelling of the password ([`PgUrl::scrub`]) before it
//! is shown, in case the driver echoed it.

use std::fmt;

/// Keys whose values are shown (libpq's names): everything else (the password, a key this list
/// does not know, which might be one misspelt) is shown as `***`.
const SHOWN_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "sslmode",
    "application_name",
    "connect_timeout",
    "target_session_attrs",
    "channel_binding",
    "keepalives",
    "load_balance_hosts",
];

/// A PostgreSQL URL (`postgres://...`, `postgresql://...`, any case) or libpq key=value string.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl {
    raw: String,
    shown: String,
}

impl PgUrl {
    /// Reads `text` (never fails: what cannot be read is kept for the driver, which says what is
    /// wrong with it, and shown as unreadable).
    pub fn parse(text: &str) -> PgUrl {
        PgUrl {
            raw: text.to_string(),
            shown: shown(text),
        }
    }

    /// The text as given, for the driver alone.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// Whether nothing was given.
    pub fn is_empty(&self) -> bool {
        self.raw.trim().is_empty()
    }

    /// `text` (a driver's error, say) with every spelling of this URL's password replaced.
    pub fn scrub(&self, text: &str) -> String {
        crate::redact::scrub(text, &self.secrets())
    }

    /// The password in every spelling it might be echoed in (as written, percent-decoded or
    /// encoded), longest first.
    pub fn secrets(&self) -> Vec<String> {
        let mut s = crate::redact::secrets(&self.raw);
        for p in password_candidates(&self.raw) {
            for v in crate::redact::spellings(&p) {
                if !v.is_empty() && !s.contains(&v) {
                    s.push(v);
                }
            }
        }
        s.sort_by_key(|x| std::cmp::Reverse(x.len()));
        s
    }
}

/// libpq's connection keywords: a key=value text using any of them names a server.
const LIBPQ_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "sslnegotiation",
    "requiressl",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "min_protocol_version",
    "max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// Whether `text` names a PostgreSQL server rather than a file: a URL whose scheme starts with
/// `postgres` in any case (`postgres`, `postgresql`, `postgresql+driver`, or the scheme with a
/// slash missing, `postgres:/u:pw@h`), or a key=value text, read leniently (a quote left open,
/// a word without `=`), whose first key is one of libpq's or with any key holding `password`
/// (a file is never named after a password). (A URL of another
/// scheme is neither: the store refuses it by its `://`, never making a file of it.)
pub fn names_a_server(text: &str) -> bool {
    let t = text.trim_start();
    if t.get(..9)
        .is_some_and(|s| s.eq_ignore_ascii_case("postgres:"))
        || t.get(..11)
            .is_some_and(|s| s.eq_ignore_ascii_case("postgresql:"))
        || t.get(..9)
            .is_some_and(|s| s.eq_ignore_ascii_case("postgres+"))
        || t.get(..11)
            .is_some_and(|s| s.eq_ignore_ascii_case("postgresql+"))
    {
        return true;
    }
    if is_url(t) {
        return false;
    }
    // Spaces around `=` taken out (`dbname = bench`), then the words read as `key=value`.
    let mut joined = String::with_capacity(t.len());
    for part in t.split('=') {
        if !joined.is_empty() {
            joined.truncate(joined.trim_end().len());
            joined.push('=');
            joined.push_str(part.trim_start());
        } else {
            joined.push_str(part);
        }
    }
    let key = |w: &str| w.split_once('=').map(|(k, _)| k.to_ascii_lowercase());
    joined
        .split_whitespace()
        .next()
        .and_then(key)
        .is_some_and(|k| LIBPQ_KEYS.contains(&k.as_str()))
        || joined
            .split_whitespace()
            .any(|w| key(w).is_some_and(|k| k.contains("password")))
}

/// Whether a value of a shown key is shown: not one that holds a URL or an `@` (a host given
/// as `postgres://u:pw@h`, a user as `u:pw@h`), which may carry a password.
fn value_shown(v: &str) -> bool {
    !v.contains("://") && !v.contains('@')
}

impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({})", self.shown)
    }
}

impl std::str::FromStr for PgUrl {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(PgUrl::parse(s))
    }
}

/// Shown text: printable ASCII as is, anything else as an escape (a URL shown must not move the
/// terminal's cursor).
fn visible(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                vec![c]
            } else {
                c.escape_default().collect()
            }
        })
        .collect()
}

fn pct_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Whether `text` is a URL (a scheme before `://`), else a key=value string.
fn is_url(text: &str) -> bool {
    let t = text.trim_start();
    t.find("://").is_some_and(|i| {
        i > 0
            && t[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// The parts of a URL: scheme, userinfo (user and whether a password follows), the rest
/// (host, port, path), and the query.
struct UrlParts<'a> {
    scheme: &'a str,
    user: Option<&'a str>,
    has_password: bool,
    host_path: &'a str,
    query: Option<&'a str>,
}

/// Splits a URL by its shape alone: the userinfo runs to the *last* `@` of the text (a password
/// may hold `@`, `/`, `?`, spaces: whatever comes before the last `@` is never shown as host or
/// path), the query starts at the first `?` after it.
fn url_parts(text: &str) -> UrlParts<'_> {
    let t = text.trim();
    let i = t.find("://").expect("a URL");
    let (scheme, rest) = (&t[..i], &t[i + 3..]);
    let (userinfo, after) = match rest.rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let (user, has_password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((user, _)) => (Some(user), true),
            None => (Some(u), false),
        },
        None => (None, false),
    };
    let (host_path, query) = match after.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (after, None),
    };
    UrlParts {
        scheme,
        user,
        has_password,
        host_path,
        query,
    }
}

/// `key=value` pairs of a query, values of unknown keys hidden; what follows a password in the
/// query is hidden whole (a password with an `&` in it, not encoded, runs on past it).
fn shown_query(q: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some((k, v)) => {
                let key = pct_decode(k).to_ascii_lowercase();
                if SHOWN_KEYS.contains(&key.as_str()) && value_shown(&pct_decode(v)) {
                    out.push(format!("{}={}", visible(k), visible(v)));
                } else {
                    out.push(format!("{}=***", visible(k)));
                    if key == "password" {
                        if pair.len() < q.len() && !q.ends_with(pair) {
                            out.push("***".into());
                        }
                        break;
                    }
                }
            }
            None => out.push("***".into()),
        }
    }
    out.join("&")
}

fn shown(text: &str) -> String {
    if text.trim().is_empty() {
        return String::new();
    }
    if is_url(text) {
        // A `password` key anywhere (a query's, in any case, percent-encoded or not): what
        // follows its `=` is hidden to the end, whatever it holds (an `@`, an `&`), and the
        // rest is read without it.
        let t = text.trim();
        return match password_key_end(t) {
            // An `@` after a password key: the key may stand inside the userinfo's password
            // (`bob:x?password=y@host`) as well as the `@` inside the query's: which part is
            // which cannot be told, so no part is shown.
            Some(cut) if t[cut..].contains('@') => {
                let scheme = &t[..t.find("://").expect("a URL")];
                format!("{}://***", visible(scheme))
            }
            Some(cut) => {
                let head = shown_url(&t[..cut]);
                // A query's password key is shown `password=***` already.
                if head.ends_with("=***") {
                    head
                } else {
                    format!("{head}***")
                }
            }
            None => shown_url(t),
        };
    }
    match keyword_pairs(text) {
        Some(pairs) => pairs
            .iter()
            .map(|(k, v)| {
                if SHOWN_KEYS.contains(&k.to_ascii_lowercase().as_str()) && value_shown(v) {
                    let v = if v.is_empty() || v.contains(char::is_whitespace) {
                        format!("'{}'", visible(v))
                    } else {
                        visible(v)
                    };
                    format!("{}={v}", visible(k))
                } else {
                    format!("{}=***", visible(k))
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        None => "(a connection string that does not read as key=value pairs)".to_string(),
    }
}

/// Where the value of the first `password` key of a URL's text starts (the byte after its `=`):
/// a key is what stands between `?`, `&`, `;` or a space and an `=`, percent-decoded, in any
/// case.
fn password_key_end(t: &str) -> Option<usize> {
    let start = t.find("://")? + 3;
    for (i, _) in t.match_indices('=').filter(|(i, _)| *i >= start) {
        // The character's own length: a space may be more than a byte (U+00A0).
        let key_start = t[..i]
            .char_indices()
            .rev()
            .find(|(_, c)| matches!(c, '?' | '&' | ';') || c.is_whitespace())
            .map_or(start, |(k, c)| (k + c.len_utf8()).max(start));
        if pct_decode(&t[key_start..i]).eq_ignore_ascii_case("password") {
            return Some(i + 1);
        }
    }
    None
}

/// A URL's text shown ([`password_key_end`] cut any password key's value off first).
fn shown_url(text: &str) -> String {
    let p = url_parts(text);
    let mut s = format!("{}://", visible(p.scheme));
    if let Some(u) = p.user {
        s.push_str(&visible(u));
        if p.has_password {
            s.push_str(":***");
        }
        s.push('@');
    }
    s.push_str(&visible(p.host_path));
    if let Some(q) = p.query {
        s.push('?');
        s.push_str(&shown_query(q));
    }
    s
}

/// A libpq key=value string's pairs (values unquoted, `\` escapes taken), or `None` when it does
/// not read as one (an unterminated quote, a key without `=`).
fn keyword_pairs(text: &str) -> Option<Vec<(String, String)>> {
    let (pairs, whole) = crate::redact::read_pairs(text);
    whole.then_some(pairs)
}

/// Every value the text may use as its password: a URL's userinfo after the first `:` (up to
/// the last `@`), each `password=` of its query, each `password` pair of a key=value string
/// (and, where that string does not read, whatever follows a `password` key to the end).
fn password_candidates(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if is_url(text) {
        // Not trimmed at the end: a password may end in (or be) whitespace.
        let t = text.trim_start();
        let rest = &t[t.find("://").expect("a URL") + 3..];
        if let Some(at) = rest.rfind('@')
            && let Some((_, pw)) = rest[..at].split_once(':')
        {
            out.push(pw.to_string());
        }
        if let Some((_, q)) = rest.split_once('?') {
            let mut at = 0;
            for pair in q.split('&') {
                if let Some((k, v)) = pair.split_once('=')
                    && pct_decode(k).eq_ignore_ascii_case("password")
                {
                    out.push(v.to_string());
                    // Read on to the end: a password holding `&`, not encoded.
                    out.push(q[at + k.len() + 1..].to_string());
                }
                at += pair.len() + 1;
            }
        }
    } else {
        match keyword_pairs(text) {
            Some(pairs) => out.extend(
                pairs
                    .into_iter()
                    .filter(|(k, v)| {
                        !SHOWN_KEYS.contains(&k.to_ascii_lowercase().as_str()) || !value_shown(v)
                    })
                    .map(|(_, v)| v),
            ),
            None => {
                if let Some(i) = text.to_ascii_lowercase().find("password") {
                    let v = text[i + "password".len()..]
                        .trim_start()
                        .trim_start_matches('=')
                        .trim();
                    out.push(v.to_string());
                    out.push(v.trim_matches('\'').to_string());
                }
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// A PostgreSQL error named by the URL as it shows ([`PgUrl`]'s Display: no password) and the
/// driver's text with every spelling of the password scrubbed: what every PostgreSQL bench
/// reports.
pub fn pg_error(url: &PgUrl, e: impl std::fmt::Display) -> crate::BenchError {
    crate::BenchError::Driver(format!(
        "PostgreSQL at {url}: {}",
        url.scrub(&e.to_string())
    ))
}

/// [`pg_error`] for an error whose own text leaves out its cause (tokio-postgres says `db error`
/// and keeps the server's message as its source): the text, then each cause's beneath it that
/// it does not already hold, so the reader sees what the server said.
pub fn pg_error_chain(url: &PgUrl, e: &(dyn std::error::Error + 'static)) -> crate::BenchError {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        cause = c.source();
    }
    pg_error(url, text)
}

#[cfg(test)]
mod tests;
