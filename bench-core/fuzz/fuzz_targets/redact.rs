//! Connection strings of any shape: redaction never panics, and a password written as URL
//! userinfo (`scheme://user:PASSWORD@...`) is never shown.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let secrets = bench_core::redact::secrets(text);
    let shown = bench_core::redact::redact(text);
    let _ = bench_core::redact::scrub(text, &secrets);
    let _ = bench_core::redact::has_scheme(text, "postgres");
    // `postgres://user:PASSWORD@host/...` (no whitespace in it, as a URL has none): the
    // password, however written, is not shown.
    if let Some(rest) = text.strip_prefix("postgres://")
        && let Some((userinfo, after)) = rest.split_once('@')
        && let Some((_, pw)) = userinfo.split_once(':')
        && pw.chars().count() >= 4
        && !userinfo.contains(char::is_whitespace)
        && !after.contains(char::is_whitespace)
        && !"***".contains(pw)
    {
        assert!(!shown.contains(pw), "{text:?} shown as {shown:?}");
    }
});
