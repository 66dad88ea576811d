use super::*;
use proptest::prelude::*;

#[test]
fn each_spelling_is_shown_without_its_password() {
    let cases = [
        (
            "postgres://bob:pa ss@127.0.0.1:1/db",
            "postgres://bob:***@127.0.0.1:1/db",
        ),
        ("postgres://bob:pa\tss@h/db", "postgres://bob:***@h/db"),
        (
            "POSTGRESQL://bob:p%20w@host:badport/db",
            "POSTGRESQL://bob:***@host:badport/db",
        ),
        (
            "postgres://u@/db?host=/run/postgresql&password=p%20w",
            "postgres://u@/db?host=/run/postgresql&password=***",
        ),
        (
            "postgres://h/db?%70assword=secret1&sslmode=disable",
            "postgres://h/db?%70assword=***",
        ),
        ("postgres://u:a@b@c/db", "postgres://u:***@c/db"),
        // An `@` in a password in the query (found by the `secret` fuzz target): which `@`
        // ends a userinfo cannot be told, nothing after the scheme is shown.
        (
            "postgres://db.example/bench?sslmode=disable&PassWord=@=r='.",
            "postgres://***",
        ),
        // A password key inside the userinfo's password (found by the same).
        (
            "postgres://bob:zz?PassWord=***@db.example:5432/bench",
            "postgres://***",
        ),
        (
            "host=127.0.0.1 port=1 user=u password='p w' dbname=d",
            "host=127.0.0.1 port=1 user=u password=*** dbname=d",
        ),
        ("host=h password=p\\ w", "host=h password=***"),
        (
            "host=h password='unterminated",
            "(a connection string that does not read as key=value pairs)",
        ),
        (
            "postgres://u:pw@h/db?options=-c%20x%3Dsecret",
            "postgres://u:***@h/db?options=***",
        ),
        (
            "postgres://u:pw@h/\x1b[2Jdb",
            "postgres://u:***@h/\\u{1b}[2Jdb",
        ),
    ];
    for (given, want) in cases {
        let u = PgUrl::parse(given);
        assert_eq!(u.to_string(), want, "{given:?}");
        assert_eq!(format!("{u:?}"), format!("PgUrl({want})"));
        assert_eq!(u.expose(), given);
    }
}

#[test]
fn a_password_of_whitespace_at_the_end_is_scrubbed_too() {
    // Found by the `secret` fuzz target: the text's trailing whitespace was the password.
    let pw = "\n".repeat(14);
    let u = PgUrl::parse(&format!(
        "postgres://db.example/bench?sslmode=disable&PassWord={pw}"
    ));
    let echoed = u.scrub(&format!("cannot connect: {pw}"));
    assert!(!echoed.contains(&pw), "{echoed:?}");
}

#[test]
fn a_space_of_more_than_a_byte_before_a_key_is_read() {
    // Found by the `secret` fuzz target: U+00A0 before a key was cut inside the character.
    let text = "b://?ee06=ee=====2==2(~=%0+&0+&3333=1 3333==&333+bO!0=e\u{a0}password=x y";
    let u = PgUrl::parse(text);
    assert!(!format!("{u} {u:?}").contains("x y"));
    let _ = crate::redact::secrets(text);
}

#[test]
fn a_driver_error_that_echoes_the_url_is_scrubbed() {
    let u = PgUrl::parse("postgres://bob:pa ss@h:notaport/db");
    let said = "invalid port in postgres://bob:pa ss@h:notaport/db (pa%20ss, pa+ss)";
    let s = u.scrub(said);
    assert!(
        !s.contains("pa ss") && !s.contains("pa%20ss") && !s.contains("pa+ss"),
        "{s}"
    );
}

/// A password: anything printable and more (spaces, tabs, `@:/?&='\\%`, non-ASCII), six
/// characters at least so that it cannot occur by chance in the rest of the string.
fn password() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            proptest::char::range('!', '~'),
            Just(' '),
            Just('\t'),
            Just('é'),
            Just('\u{1F511}'),
        ],
        6..24,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn cases() -> u32 {
    crate::testing::proptest_cases()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Whatever the password and however it is spelt in the connection string, neither
    /// `Display` nor `Debug` shows it, as written, decoded or encoded.
    #[test]
    fn no_spelling_shows_the_password(pw in password(), form in 0..9usize, port in prop_oneof![Just("5432".to_string()), Just("x y".to_string()), Just(String::new())]) {
        let port = if port.is_empty() { String::new() } else { format!(":{port}") };
        let text = match form {
            0 => format!("postgres://bob:{pw}@db.example{port}/bench"),
            1 => format!("postgresql://bob:{}@db.example{port}/bench", enc(&pw)),
            2 => format!("PostgreS://bob:{pw}@/bench?host=/run/postgresql"),
            3 => format!("postgres://db.example{port}/bench?user=bob&password={}", enc(&pw)),
            4 => format!("postgres://db.example{port}/bench?sslmode=disable&PassWord={pw}"),
            5 => format!("postgres://db.example/bench?%70assword={}", enc(&pw)),
            6 => format!("host=db.example port=1 user=bob password={} dbname=bench", quoted(&pw)),
            7 => format!("  host = db.example password = {}", quoted(&pw)),
            _ => format!("postgres://bob:{pw}@db.example{port}/bench?application_name=x"),
        };
        let u = PgUrl::parse(&text);
        let shown = format!("{u} {u:?}");
        let decoded = pct_decode(&pw);
        for spelling in [pw.clone(), enc(&pw), decoded] {
            prop_assume!(!"postgres://bob@db.example:5432/bench?host=/run/postgresql&user=bob&sslmode=disable&application_name=x port=1 dbname=bench PgUrl() *** (a connection string that does not read as key=value pairs)".contains(spelling.as_str()));
            prop_assert!(!shown.contains(spelling.as_str()), "{text:?} shown as {shown:?}");
        }
        // A driver's echo of the text is scrubbed too.
        let echoed = u.scrub(&format!("cannot connect to {text}: {pw}"));
        prop_assert!(!echoed.contains(pw.as_str()), "{echoed:?}");
    }
}

#[test]
fn any_url_or_libpq_key_names_a_server_never_a_file() {
    for t in [
        "postgres://h/db",
        "  POSTGRESQL://u:p@h/db",
        "postgresql+psycopg://u:p@h/db",
        "host=h dbname=d",
        "keepalives=1 password=secret",
        "target_session_attrs=any password=secret",
        "sslrootcert=/x password='a b'",
        "channel_binding=require user=u",
        "load_balance_hosts=random host=h",
        "mypassword=secret",
        "dbname = bench",
        "my file password=x",
        // Texts that do not read as key=value pairs, and a scheme with a slash missing (found
        // by an attack: each became a file named after the password).
        "host=127.0.0.1 port=1 user=u password=my secret",
        "host=h user=u password='hunter2",
        "postgres:/u:hunter2@127.0.0.1:1/db",
    ] {
        assert!(names_a_server(t), "{t}");
    }
    for t in [
        "results.sqlite",
        "/tmp/a b/results.sqlite",
        "runs=1.sqlite",
        "my host=1.sqlite",
        "./postgres",
        "mysql://u:secret@h/db",
        "",
    ] {
        assert!(!names_a_server(t), "{t}");
    }
}

#[test]
fn a_shown_key_holding_a_url_or_an_at_is_hidden() {
    for (text, pw) in [
        ("host=postgres://u:hunter2@h dbname=d", "hunter2"),
        ("user=u:hunter2@h dbname=d", "hunter2"),
        ("postgres://h/db?host=u:hunter2@h", "hunter2"),
    ] {
        let u = PgUrl::parse(text);
        let shown = format!("{u} {u:?}");
        assert!(!shown.contains(pw), "{text}: {shown}");
        // A driver echoing the text: scrubbed.
        assert!(!u.scrub(&format!("error: {text}")).contains(pw), "{text}");
    }
}
