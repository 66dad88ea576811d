//! Script files of any content: the lexer splits them or says where it cannot; SQLite judges
//! what it split on a database of the fuzzer's own; and every statement SQLite lets through
//! does no more, when SQLite runs it on a copy, than its verdict says (a read changes no byte;
//! nothing attaches a database or writes a file beside it). Evaluating the `\set`s of a few
//! transactions never panics.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use bench_core::script::{Client, Mix, Placeholders};
use libfuzzer_sys::fuzz_target;

struct Place {
    _dir: tempfile::TempDir,
    template: Vec<u8>,
    work: PathBuf,
}

fn place() -> &'static Place {
    static P: OnceLock<Place> = OnceLock::new();
    P.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("template.db");
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
             CREATE TABLE w(a);
             INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');",
        )
        .unwrap();
        drop(c);
        let template = std::fs::read(&db).unwrap();
        std::fs::remove_file(&db).unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        Place {
            _dir: dir,
            template,
            work,
        }
    })
}

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with("-journal") && !n.ends_with("-wal") && !n.ends_with("-shm"))
        .collect();
    v.sort();
    v
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let defines = [("n".to_string(), bench_core::script::Value::Int(3))];
    let Ok(mut mix) = Mix::parse(&[("f.sql".into(), text, 1)], &defines) else {
        return;
    };
    // A few transactions' worth of \set and \sleep draws (sleeps are not slept here).
    let mut client = Client::new(std::sync::Arc::new(mix.clone()), 7, 0);
    let mut steps = Vec::new();
    for _ in 0..3 {
        if client.next(&mut steps).is_err() {
            break;
        }
    }
    let p = place();
    for e in std::fs::read_dir(&p.work).unwrap() {
        let _ = std::fs::remove_file(e.unwrap().path());
    }
    let db = p.work.join("t.db");
    std::fs::write(&db, &p.template).unwrap();
    if bench_core::script::judge::judge(&db, &mut mix).is_err() {
        return;
    }
    let before = std::fs::read(&db).unwrap();
    let listing = files(&p.work);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.busy_timeout(std::time::Duration::from_millis(10)).unwrap();
    for s in mix.statements() {
        let sql = s.sql(Placeholders::Numbered);
        let Ok(mut st) = c.prepare(&sql) else { continue };
        for i in 1..=st.parameter_count() {
            let _ = st.raw_bind_parameter(i, 1i64);
        }
        let mut rows = st.raw_query();
        for _ in 0..1000 {
            match rows.next() {
                Ok(Some(_)) => {}
                _ => break,
            }
        }
    }
    let attached: i64 = c
        .query_row(
            "SELECT count(*) FROM pragma_database_list WHERE name NOT IN ('main', 'temp')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(attached, 0, "a judged script attached a database");
    drop(c);
    assert_eq!(files(&p.work), listing, "a judged script wrote a file");
    if mix.read_only() {
        assert!(std::fs::read(&db).unwrap() == before, "a read-only mix wrote");
    }
});
