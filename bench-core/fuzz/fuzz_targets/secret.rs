//! Any password in any spelling of a PostgreSQL connection string: `PgUrl`'s Display and Debug
//! never show it (as written, decoded or encoded), and a driver's echo of the text is scrubbed.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Case {
    password: String,
    form: u8,
    rest: String,
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn spelled(form: u8, pw: &str) -> String {
    let q = format!("'{}'", pw.replace('\\', "\\\\").replace('\'', "\\'"));
    match form % 8 {
        0 => format!("postgres://bob:{pw}@db.example:5432/bench"),
        1 => format!("postgresql://bob:{}@db.example/bench", enc(pw)),
        2 => format!("POSTGRES://bob:{pw}@/bench?host=/run/postgresql"),
        3 => format!("postgres://db.example/bench?user=bob&password={}", enc(pw)),
        4 => format!("postgres://db.example/bench?sslmode=disable&PassWord={pw}"),
        5 => format!("postgres://db.example/bench?%70assword={}", enc(pw)),
        6 => format!("host=db.example port=1 user=bob password={q} dbname=bench"),
        _ => format!("postgres://bob:{pw}@db.example:x y/bench"),
    }
}

fuzz_target!(|c: Case| {
    // Any text at all reads, and shows nothing it cannot vouch for.
    let any = bench_core::secret::PgUrl::parse(&c.rest);
    let _ = format!("{any} {any:?}");
    let pw = &c.password;
    if pw.chars().count() < 6 || pw.contains('\0') {
        return;
    }
    let text = spelled(c.form, pw);
    let u = bench_core::secret::PgUrl::parse(&text);
    let shown = format!("{u} {u:?}");
    // What a shown form holds whatever the password (its keys, scheme, host, words): the same
    // form shown with a password of plain letters.
    let plain = bench_core::secret::PgUrl::parse(&spelled(c.form, "Qqqqqqqq"));
    let fixed = format!("{plain} {plain:?} (a connection string that does not read as key=value pairs)");
    let decoded = percent_encoding::percent_decode_str(pw).decode_utf8_lossy().into_owned();
    for spelling in [pw.clone(), enc(pw), decoded] {
        if spelling.chars().count() >= 6 && !fixed.contains(spelling.as_str()) {
            assert!(!shown.contains(spelling.as_str()), "{text:?} shown as {shown:?}");
        }
    }
    let echoed = u.scrub(&format!("cannot connect to {text}: {pw}"));
    assert!(!echoed.contains(pw.as_str()), "{echoed:?}");
});
